"""One bounded, validating reader of JSON lines, for every JSON-lines input (issue 16).

The event lines of ``xmlevents detect`` and the version tables of the replay, in process and
on Spark, are JSON objects one a line. Python's decoder takes things that later fail far from
the input — an escape ``"\\ud800"`` gives a string that cannot be written as UTF-8, an integer
of 5,000 digits a number no column holds — and fails with bare built-in errors on others
(JSON nested 100,000 deep, integers over 4,300 digits). :func:`load_line` decodes one line
and turns every such case into a :class:`JsonLineError` with a reason and a column, so that
each reader reports it at its line (or as an error row) and goes on where it can.

The checks cost nothing on ordinary lines: the C scanner decodes, and a string is searched
for surrogates only when the line holds a ``\\u`` escape of one.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from ._errors import XmlEventsError

__all__ = ["JsonLineError", "load_line", "check_text", "MAX_LINE", "MAX_INT"]

#: The longest line read (characters): a version table holds whole documents a line.
MAX_LINE = 1 << 30

#: The largest integer a field may hold: Spark's and Parquet's 64-bit integers.
MAX_INT = (1 << 63) - 1

_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonLineError(XmlEventsError, ValueError):
    """A line that is not one well-formed, bounded JSON value; ``column`` is 1-based where
    known. Readers add the file and line."""

    def __init__(self, reason: str, column: int | None = None) -> None:
        self.reason = reason
        self.column = column
        super().__init__(f"column {column}: {reason}" if column is not None else reason)


def load_line(line: str, *, max_length: int = MAX_LINE) -> Any:
    """The JSON value of one line (surrounding white space allowed).

    Raises:
        JsonLineError: the line is longer than ``max_length``, is not one JSON value, nests
            deeper than the decoder can follow, holds an integer of more than 4,300 digits,
            or a string with a lone surrogate (``\\ud800``: not a character, so it could not
            be written out again).
    """
    if len(line) > max_length:
        raise JsonLineError(f"the line is {len(line):,} characters long; the limit is "
                            f"{max_length:,}")
    start = len(line) - len(line.lstrip())
    try:
        value, end = _SCAN(line, start)
    except (StopIteration, json.JSONDecodeError):
        raise _not_json(line) from None
    except RecursionError:
        raise JsonLineError("not valid JSON: nested too deeply (arrays or objects inside each "
                            "other more than the decoder's limit, about 1,000 levels)") from None
    except ValueError:  # int() refuses more than sys.get_int_max_str_digits() digits
        raise JsonLineError(f"an integer of more than {sys.get_int_max_str_digits():,} "
                            "digits") from None
    rest = line[end:]
    if rest and not rest.isspace():
        raise _not_json(line)
    if _SURROGATE_ESCAPE.search(line) is not None:
        check_text(value)
    return value


def _not_json(line: str) -> JsonLineError:
    """The error of a line the scanner stopped in, in the words of ``json.loads``."""
    try:
        json.loads(line)
    except json.JSONDecodeError as exc:
        return JsonLineError(f"not valid JSON: {exc.msg}", exc.colno)
    except (ValueError, RecursionError):  # pragma: no cover - the scanner failed first
        pass
    return JsonLineError("not valid JSON")


def check_text(value: Any, where: str = "") -> None:
    """Refuse a lone surrogate in any string of ``value`` (keys included).

    Raises:
        JsonLineError: naming the field (``where``, then the keys down to the string).
    """
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:  # no recursion: the value may nest as deep as the decoder went
        v, at = stack.pop()
        if isinstance(v, str):
            m = _SURROGATE.search(v)
            if m is not None:
                name = f" in {at}" if at else ""
                raise JsonLineError(
                    f"a lone surrogate \\u{ord(m.group()):04x}{name} (an escape that is half "
                    "of a UTF-16 pair, not a character: it cannot be written as UTF-8)")
        elif isinstance(v, dict):
            for k, item in v.items():
                stack.append((k, at))
                stack.append((item, f"{at}.{k}" if at else str(k)))
        elif isinstance(v, list):
            stack.extend((item, f"{at}[{i}]") for i, item in enumerate(v))
