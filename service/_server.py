"""Running the service: the application on one uvicorn worker (``xmlevents serve``)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping

import uvicorn

from ._app import create_app
from ._db import Journal
from ._engine import Join

__all__ = ["serve"]


def serve(db: str, tokens: Mapping[str, str] | None = None, *, host: str = "127.0.0.1",
          port: int = 8765, join: Join = "correlate",
          ready: Callable[[], None] | None = None) -> None:
    """Serve the detection service until interrupted. One worker: the engine lives in the
    process, and signals must be processed in the order accepted.

    The database is opened and the address bound before the server starts, so that what
    makes the service unable to run raises here (issue 28: uvicorn logged a traceback, or an
    error line, and exited with status 3); ``ready`` is called once both are done.

    Raises:
        sqlite3.Error: ``db`` is not an SQLite database, not the service's, or is locked.
        OSError: the address cannot be bound (a port in use, an address not this machine's).
    """
    Journal(db).close()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family)
    if ready is not None:
        ready()
    config = uvicorn.Config(create_app(db, tokens, join=join), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])
