"""uvicorn's HTTP protocol with what it lacks for the service (issue 31, item 6): a timeout
on a request's headers and a connection limit that answers a problem document.

uvicorn closes an idle keep-alive connection (``timeout_keep_alive``), but only after a first
response: a connection that sends nothing, or sends its headers a byte at a time, was held
for ever (4,000 of them were, and 1,100 half-open ones at a 1,024 file limit failed every new
request). Here a connection must complete each request's headers within
:attr:`Limits.header_timeout` of its opening or of the request's first byte; past it the
connection gets a 408 problem document and is closed. The body's timeout is the body
reader's (:func:`._app._body`): once the headers are in, the application is answering.

uvicorn's ``limit_concurrency`` answers ``Service Unavailable`` in plain text; here a request
arriving while more than :attr:`Limits.max_connections` connections are open is answered a
503 problem document naming the limit, with ``Retry-After``, and its connection closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ._limits import Limits, timed_out, too_many_connections
from ._problem import problem_bytes

__all__ = ["protocol"]


def protocol(limits: Limits) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol (``uvicorn.Config(http=...)``) under ``limits``."""

    refused = problem_bytes(too_many_connections(limits))

    async def refuse(scope: Scope, receive: Receive, send: Send) -> None:
        head, _, body = refused.partition(b"\r\n\r\n")
        headers = [(name.lower(), value) for name, _, value in
                   (line.partition(b": ") for line in head.split(b"\r\n")[1:])]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    class Guarded(HttpToolsProtocol):
        """See the module."""

        _headers_due: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            # uvicorn reads self.app here: the refusal stands in for the application
            app: ASGIApp = self.config.loaded_app
            self.app = refuse if len(self.connections) > limits.max_connections else app
            super().on_headers_complete()

        def _arm(self) -> None:
            self._disarm()
            self._headers_due = self.loop.call_later(limits.header_timeout, self._expired)

        def _disarm(self) -> None:
            if self._headers_due is not None:
                self._headers_due.cancel()
                self._headers_due = None

        def _expired(self) -> None:
            self._headers_due = None
            if self.transport.is_closing():
                return
            if self.cycle is None or self.cycle.response_complete:  # no request under way
                self.transport.write(problem_bytes(timed_out(
                    "headers", limits.header_timeout, "header_timeout")))
            self.transport.close()

    return Guarded
