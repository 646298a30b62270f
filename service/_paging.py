"""Listings in pages (issue 31, item 7): ``GET /expressions?limit=N&after=CURSOR``.

A page is at most ``limit`` rows (default :data:`DEFAULT_LIMIT`, at most :data:`MAX_LIMIT`)
after the cursor; its answer carries ``next``, the URL of the following page (also as a
``Link: <...>; rel="next"`` header), or null on the last page. The cursor is the position of
the page's last row in the database, which only grows: a registration or a deletion between
two pages neither repeats nor skips a row that was there before and still is. Before, the
listing was the client's every expression in one answer (1.6 MB at 10,000), and
``GET /expressions/{id}`` parsed all of them to find one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar
from urllib.parse import urlencode

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "limit_of", "Page"]

#: Rows of a page when the request gives no ``limit``, and the most it may ask.
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000

R = TypeVar("R")


def limit_of(text: str | None) -> int:
    """The page size a ``limit`` query value asks for.

    Raises:
        ValueError: not an integer from 1 to :data:`MAX_LIMIT` (the message says so).
    """
    if text is None:
        return DEFAULT_LIMIT
    if not (text.isascii() and text.isdigit()) or len(text) > 7 or not (
            1 <= int(text) <= MAX_LIMIT):
        raise ValueError(f"limit must be an integer from 1 to {MAX_LIMIT:,}, got {text!r}")
    return int(text)


class Page(Generic[R]):
    """One page of a listing: read ``limit + 1`` rows, keep ``limit``; the one more says
    whether a next page exists without a count."""

    def __init__(self, rows: Sequence[tuple[int, R]], limit: int, path: str) -> None:
        self.items = [item for _, item in rows[:limit]]
        more = len(rows) > limit
        self.cursor = rows[limit - 1][0] if more else None
        #: The next page's URL, or None on the last page.
        self.next = (None if self.cursor is None
                     else f"{path}?{urlencode({'limit': limit, 'after': self.cursor})}")

    def headers(self) -> dict[str, str]:
        """``Link: <next>; rel="next"`` (RFC 8288) when there is a next page."""
        return {} if self.next is None else {"Link": f'<{self.next}>; rel="next"'}
