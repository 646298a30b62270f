"""The service for web pages (issue 31, item 9): stream tickets, CORS, and the ``/docs`` page.

A page's ``EventSource`` cannot send an ``Authorization`` header, so a page asks for a
**stream ticket** with its bearer token (``POST /notifications/stream/ticket``, a ``fetch``
that can send the header) and opens ``GET /notifications/stream?ticket=...``. A ticket is
random (128 bits), scoped to the client that asked, good for one stream opened within
:data:`TICKET_LIFETIME` seconds, and kept in memory only (a restart forgets the tickets not
used). Single use, because a URL is written in logs and browser histories: a ticket seen
there has opened its stream already. A stream dropped is reopened with a new ticket and
``?after=`` its last id (``EventSource`` retries the old URL, which is refused).

CORS is Starlette's middleware for the origins the operator names (``--cors-origin``):
preflights answered for the methods and headers the API uses, ``Location`` and
``Retry-After`` readable by the page; no cookies (the token is a bearer token).

``/docs`` is Swagger UI over ``/openapi.json``, served from the ``swagger-ui-bundle`` package
(PyPI; its assets are in the wheel, so the page needs no network). Without the package the
page says how to install it and links the document.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from ._problem import Problem

if TYPE_CHECKING:
    from ._app import Service

__all__ = ["Tickets", "TICKET_LIFETIME", "post_ticket", "cors", "docs_routes", "docs_page"]

#: Seconds a stream ticket can be used in (once).
TICKET_LIFETIME = 60.0
#: Tickets kept at most (the oldest dropped first): a client asking for tickets in a loop
#: cannot grow the service's memory.
MAX_TICKETS = 10_000


class Tickets:
    """The stream tickets not used yet: ticket -> (client, expiry)."""

    def __init__(self, lifetime: float = TICKET_LIFETIME) -> None:
        self.lifetime = lifetime
        self._open: dict[str, tuple[str, float]] = {}

    def issue(self, client: str) -> str:
        now = time.monotonic()
        for ticket, (_, expiry) in list(self._open.items()):  # oldest first
            if expiry > now and len(self._open) < MAX_TICKETS:
                break
            del self._open[ticket]
        ticket = secrets.token_urlsafe(16)
        self._open[ticket] = (client, now + self.lifetime)
        return ticket

    def redeem(self, ticket: str) -> str:
        """The client a ticket was issued to; the ticket is spent.

        Raises:
            Problem: 401, the ticket is unknown, used or expired.
        """
        client, expiry = self._open.pop(ticket, ("", 0.0))
        if expiry < time.monotonic():
            raise Problem(401, "Unauthorized",
                          "the stream ticket is not valid (unknown, used or older than "
                          f"{self.lifetime:g} s): ask for a new one with POST "
                          "/notifications/stream/ticket")
        return client


async def post_ticket(service: Service, request: Request, client: str) -> Response:
    """``POST /notifications/stream/ticket``: a ticket for one stream of this client."""
    tickets: Tickets = request.app.state.tickets
    return JSONResponse({"ticket": tickets.issue(client), "expires_in": tickets.lifetime},
                        status_code=201, headers={"Cache-Control": "no-store"})


def cors(origins: Sequence[str]) -> list[Middleware]:
    """The CORS middleware for ``origins`` (none: no CORS, a preflight is a 405)."""
    if not origins:
        return []
    return [Middleware(CORSMiddleware, allow_origins=list(origins),
                       allow_methods=["GET", "POST", "DELETE"],
                       allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
                       expose_headers=["Location", "Retry-After"], max_age=600)]


def _swagger_ui() -> str | None:
    """The folder of Swagger UI's assets, if ``swagger-ui-bundle`` is installed."""
    try:
        from swagger_ui_bundle import swagger_ui_path  # type: ignore[import-untyped]
    except ImportError:
        return None
    return str(swagger_ui_path)


# Relative URLs: the page works under a proxy's prefix too.
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>xmlevents detection service: API</title>
<link rel="stylesheet" href="docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({url: "openapi.json", dom_id: "#swagger-ui",
  deepLinking: true});</script>
</body></html>
"""

_NO_UI = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>xmlevents detection service: API</title>
</head><body><h1>xmlevents detection service</h1>
<p>The API is described in <a href="openapi.json">openapi.json</a> (OpenAPI 3.0).
The interactive page needs Swagger UI's assets: <code>pip install swagger-ui-bundle</code>
(in <code>xmlevents[service]</code>) and restart the service.</p></body></html>
"""


async def docs_page(request: Request) -> Response:
    """``GET /docs``: Swagger UI over ``/openapi.json``."""
    return HTMLResponse(_PAGE if _swagger_ui() is not None else _NO_UI)


def docs_routes() -> list[BaseRoute]:
    """``/docs/assets``: Swagger UI's files, where the package is installed."""
    folder = _swagger_ui()
    if folder is None:
        return []
    return [Mount("/docs/assets", StaticFiles(directory=folder), name="docs-assets")]
