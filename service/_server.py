"""Running the service: the application on one uvicorn worker (``xmlevents serve``).

Stopping (issue 31, item 2). On SIGTERM or SIGINT uvicorn stops accepting connections and
waits for the open ones to finish; an SSE stream never finishes by itself, so a server with a
client connected never stopped. :class:`Server` ends every stream first, with a final
``shutdown`` event (:meth:`Service.close_streams`), lets requests in flight finish (at most
:data:`GRACE` seconds), closes the database, and does not raise the signal again at the end
(uvicorn does, which killed the process by SIGTERM or raised ``KeyboardInterrupt`` inside its
event loop). A second SIGINT stops the wait for requests in flight, as in uvicorn, but the
application's shutdown still runs. :func:`serve` then returns after SIGTERM — a stop that
was asked for and done cleanly, status 0 for ``xmlevents serve`` — and raises
:class:`KeyboardInterrupt` after SIGINT, so that Ctrl-C ends the command with 130 as it ends
every other command.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import FrameType
from typing import Any

import uvicorn
from starlette.applications import Starlette

from ._app import DEFAULT_COMPACTION, Committer, Compaction, Service, create_app
from ._engine import Join
from ._limits import SPARE_FILES, Limits, open_files
from ._lock import DatabaseLock
from ._protocol import protocol

__all__ = ["serve", "Server", "GRACE", "config"]

#: Seconds the requests in flight get to finish once the server is asked to stop; past them
#: they are cancelled.
GRACE = 10
#: The garbage collector's thresholds while serving. Python's (700, 10, 10) collect the
#: youngest objects every 700 allocations, a request's worth, and walk the whole engine
#: every 100 such; a request's objects are freed by their reference counts, so those
#: collections find little and cost the event loop and the writer
#: (bench/bench_service_load.py; issue 31, item 10).
GC_THRESHOLD = (50_000, 20, 10)
#: The signals that stop the server (uvicorn's, less Windows' SIGBREAK).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Server(uvicorn.Server):
    """uvicorn's server for the service's application: ends the SSE streams when it stops,
    and records the signals that stopped it instead of raising them again (see the
    module)."""

    def __init__(self, config: uvicorn.Config, app: Starlette) -> None:
        super().__init__(config)
        self.app = app
        #: The stopping signals received, in order.
        self.signals: list[int] = []

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Record the signal; uvicorn's handling (a second SIGINT forces the exit)."""
        self.signals.append(sig)
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's, but without raising the signals again when the server has stopped:
        :func:`serve` decides what a signal means for the process."""
        if threading.current_thread() is not threading.main_thread():
            yield  # signals reach the main thread only (a server in a thread, in tests)
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start-up (the application's: the engine rebuilt from the log), then the
        garbage collector set for a server (:data:`GC_THRESHOLD`, issue 31, item 10)."""
        await super().startup(sockets)
        gc.set_threshold(*GC_THRESHOLD)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """End the streams (a final event each), then uvicorn's shutdown: stop listening,
        let requests in flight finish, run the application's shutdown."""
        service: Service | None = getattr(self.app.state, "service", None)
        if service is not None:
            service.close_streams()
        await super().shutdown(sockets)
        if self.force_exit and service is not None:
            # A second Ctrl-C: uvicorn stops waiting for requests in flight and skips the
            # application's shutdown, whose task the event loop then cancels with a logged
            # traceback. The shutdown is quick (the webhook worker, the database): run it.
            await self.lifespan.shutdown()


def config(app: Starlette, limits: Limits | None = None, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration of the service's ``app``: the protocol with the header
    timeout and the connection limit (:mod:`._protocol`), the keep-alive timeout, the
    graceful stop; ``options`` are uvicorn's (host, port, ...)."""
    limits = limits or Limits()
    return uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=GRACE,
                          http=protocol(limits),
                          # uvicorn's annotation says int; it is a delay for call_later
                          timeout_keep_alive=limits.keep_alive,  # type: ignore[arg-type]
                          **options)


def serve(db: str, tokens: Mapping[str, str] | None = None, *, host: str = "127.0.0.1",
          port: int = 8765, join: Join = "correlate",
          ready: Callable[[], None] | None = None, limits: Limits | None = None,
          cors_origins: Sequence[str] = (), allow_private_webhooks: bool = False,
          skip_bad_rows: bool = False, committer: Committer = "process",
          compaction: Compaction = DEFAULT_COMPACTION,
          report: Callable[[str], None] | None = None) -> None:
    """Serve the detection service until stopped by SIGTERM (returns) or SIGINT (raises
    :class:`KeyboardInterrupt` once the server has stopped). One worker: the engine lives in
    the process, and signals must be processed in the order accepted.

    The database's lock is taken, the database opened, its log replayed and the address
    bound before the server starts, so that what makes the service unable to run raises
    here (issue 28: uvicorn logged a traceback, or an error line, and exited with status 3;
    issue 31, item 8: a damaged log row did too); ``ready`` is called once all are done. The
    lock is held until the function returns. ``limits``: the timeouts, connection limit and
    quotas (:mod:`._limits`); ``cors_origins``: the web origins whose pages may call the
    service (:mod:`._web`). ``skip_bad_rows``: log rows that cannot be replayed are left
    out (:mod:`._replay`), each reported as one line to ``report``, as is a compaction of
    the log. ``committer``: SQLite's commits in a process of their own (the default) or in
    the writer thread (:mod:`._commit`); ``compaction``: the log's compactions while it
    runs in a forked child (the default on Linux) or in the writer thread
    (:mod:`._compaction`).

    Raises:
        DatabaseInUse: another process serves ``db`` (an :class:`sqlite3.OperationalError`
            naming its pid).
        DamagedLogError: a row of the log cannot be replayed (naming it), or read.
        sqlite3.Error: ``db`` is not an SQLite database, not the service's, or is locked.
        OSError: the address cannot be bound (a port in use, an address not this machine's).
        KeyboardInterrupt: the server was stopped by SIGINT (Ctrl-C).
    """
    lock = DatabaseLock(db)
    service: Service | None = None
    try:
        limits = limits or Limits()
        service = Service(db, tokens, join=join, lock=lock, limits=limits,
                          allow_private_webhooks=allow_private_webhooks,
                          skip_bad_rows=skip_bad_rows, committer=committer,
                          compaction=compaction)
        if report is not None:
            if service.salvaged is not None:
                report(service.salvaged.summary())
            for row in service.skipped:
                report(f"skipped log row {row.seq} ({row.kind}): {row.reason}; kept in the "
                       f"table skipped")
            if service.dropped:
                report(f"expressions left out with their registration: "
                       f"{', '.join(service.dropped)}")
            if service.skipped:
                report(f"{len(service.skipped)} log rows skipped, {service.replayed} "
                       f"replayed")
            if service.compacted:
                report(f"log compacted to the live state ({len(service.owner)} expressions)")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            sock = socket.create_server((host, port), family=family)
        except BaseException:
            service.close()
            raise
        if ready is not None:
            ready()
        files = open_files(limits)
        if files < limits.max_connections + SPARE_FILES:
            logging.getLogger("xmlevents.service").warning(
                "the open-file limit (%d) leaves no room for --max-connections %d: "
                "connections past it are reset, not refused; raise ulimit -n", files,
                limits.max_connections)
        app = create_app(db, tokens, join=join, lock=lock, limits=limits,
                         cors_origins=cors_origins, service=service)
        server = Server(config(app, limits), app)
        server.run(sockets=[sock])
    finally:
        lock.release()
    if signal.SIGINT in server.signals:
        raise KeyboardInterrupt
