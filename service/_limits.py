"""What one client or one connection may take of the service (issue 31, item 6): timeouts,
a connection limit and per-client quotas, set by ``xmlevents serve``'s options.

Measured before them: 4,000 trickling connections were never closed, and 1,100 half-open
ones at a 1,024 file limit failed every new request; 1,000 copies of one expression turned a
200-event request into 200,000 notifications (4 s during which ``/health`` waited, 84 MB).
Each refusal is a problem document naming the limit (``limit``), its value (``quota``) and
the ``serve`` option that raises it (``option``), so a client can tell its operator what to
change.

The notifications a client keeps are a retention, not a refusal: once a client has
:attr:`Limits.max_retained` notifications it has not deleted, the oldest are discarded as
new ones are stored, and its listings say how many were (``discarded``): their rows are
deleted and their cursors kept as ranges (:meth:`~._db.Journal.discard_oldest`), so that the
database follows what clients keep, not what they were sent. Refusing the events instead
would let one client that never reads stop detection for every other client.
"""

from __future__ import annotations

import resource
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields
from operator import itemgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the web stack is imported when a problem is made: the command line
    from ._problem import Problem  # reads the defaults without it

__all__ = ["Limits", "too_many_expressions", "too_many_events", "OPTIONS", "open_files",
           "SPARE_FILES", "OPEN_FILES"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of one service (the defaults are ``serve``'s)."""

    #: Seconds a connection has to send a request's headers, from its opening or from the
    #: request's first byte (408, then closed): a trickling client cannot hold a socket.
    header_timeout: float = 10.0
    #: Seconds a request has to send its whole body once its headers are in (408, closed).
    body_timeout: float = 30.0
    #: Seconds an idle keep-alive connection stays open between requests (uvicorn's
    #: ``timeout_keep_alive``).
    keep_alive: float = 5.0
    #: Connections served at once (SSE streams included); a request on one more is answered
    #: 503 with ``Retry-After`` and its connection closed. Below the usual 1,024 open files.
    max_connections: int = 900
    #: Expressions a client may have registered at once (403 beyond).
    max_expressions: int = 1000
    #: Events one ``POST /events`` may carry (413 beyond): a request is one job of the one
    #: writer (about 0.4 s at 36 µs an event), which every other change waits behind.
    max_events: int = 10_000
    #: Notifications a client keeps undeleted; beyond, the oldest are discarded.
    max_retained: int = 100_000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not value > 0:
                raise ValueError(f"{f.name} must be positive, got {value!r}")


#: The ``serve`` option that sets each limit.
OPTIONS = {"header_timeout": "--header-timeout", "body_timeout": "--body-timeout",
           "keep_alive": "--keep-alive", "max_connections": "--max-connections",
           "max_expressions": "--max-expressions", "max_events": "--max-events",
           "max_retained": "--max-retained"}


def _quota(status: int, title: str, detail: str, limit: str, quota: float, name: str,
           **extra: Any) -> Problem:
    from ._problem import Problem

    option = OPTIONS[name]
    return Problem(status, title, f"{detail}; the operator raises it with xmlevents serve "
                   f"{option} N", limit=limit, quota=quota, option=option, **extra)


def too_many_expressions(client: str, limits: Limits) -> Problem:
    """403 for a registration past :attr:`Limits.max_expressions`."""
    n = limits.max_expressions
    return _quota(403, "Quota exceeded",
                  f"{client} has {n:,} expressions registered, the most a client may have: "
                  "unregister one (DELETE /expressions/{id}) first",
                  "expressions per client", n, "max_expressions")


def too_many_events(count: int, limits: Limits) -> Problem:
    """413 for a ``POST /events`` past :attr:`Limits.max_events`."""
    n = limits.max_events
    return _quota(413, "Content Too Large",
                  f"a request may carry {n:,} events, this one has {count:,}: send them in "
                  "several requests", "events per request", n, "max_events")


def timed_out(what: str, seconds: float, name: str) -> Problem:
    """408 for a request whose headers or body did not arrive in time."""
    return _quota(408, "Request Timeout", f"the request's {what} did not arrive within "
                  f"{seconds:g} s", f"{what} timeout", seconds, name)


def too_many_connections(limits: Limits) -> Problem:
    """503 for a request on a connection past :attr:`Limits.max_connections`."""
    n = limits.max_connections
    return _quota(503, "Service Unavailable",
                  f"the service has {n:,} connections open, the most it serves at once: "
                  "retry later", "connections", n, "max_connections",
                  headers={"Retry-After": "1"})


def over_retention(retained: dict[str, int], new: Sequence[tuple[str, Any, Any, Any]],
                   limits: Limits) -> tuple[dict[str, int], list[int]]:
    """Which notifications to keep when ``new`` ones (owner first) are stored beside
    ``retained`` (undeleted, per client): how many of each client's oldest stored ones to
    discard, and the indexes in ``new`` that are themselves past the quota (the oldest of a
    request producing more than it for one client)."""
    per = Counter(map(itemgetter(0), new))
    discard: dict[str, int] = {}
    skip_first: dict[str, int] = {}
    for owner, count in per.items():
        excess = retained.get(owner, 0) + count - limits.max_retained
        if excess > 0:
            stored = retained.get(owner, 0)
            if stored:
                discard[owner] = min(excess, stored)
            if excess > stored:
                skip_first[owner] = excess - stored
    dropped: list[int] = []
    if not skip_first:  # the common case: no new notification past the quota itself
        return discard, dropped
    for i, (owner, *_) in enumerate(new):
        if skip_first.get(owner, 0) > 0:
            skip_first[owner] -= 1
            dropped.append(i)
    return discard, dropped


#: Files the service opens besides its connections (the database, its WAL and lock, the
#: listening socket, uvicorn's and the event loop's).
SPARE_FILES = 128
#: The open files :func:`open_files` asks for (where the hard limit allows).
OPEN_FILES = 65_536


def open_files(limits: Limits) -> int:
    """Raise the process's soft limit of open files towards its hard limit (at most
    :data:`OPEN_FILES`), so that :attr:`Limits.max_connections` connections fit with
    :data:`SPARE_FILES` more, and so do the connections a flood opens past them until they
    are refused or timed out; returns the limit now. Past that limit a connection cannot
    even be accepted: the client gets a reset, not the limit's 503 (measured: at ``ulimit -n
    1024``, 1,100 connections made every new request fail until the header timeout closed
    them)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(limits.max_connections + SPARE_FILES, OPEN_FILES)
    if soft == resource.RLIM_INFINITY or soft >= want:
        return soft
    raised = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if raised > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    return max(raised, soft)
