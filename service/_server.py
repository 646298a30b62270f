"""Running the service: the application on one uvicorn worker (``xmlevents serve``)."""

from __future__ import annotations

from collections.abc import Mapping

import uvicorn

from ._app import create_app
from ._engine import Join

__all__ = ["serve"]


def serve(db: str, tokens: Mapping[str, str] | None = None, *, host: str = "127.0.0.1",
          port: int = 8765, join: Join = "correlate") -> None:
    """Serve the detection service until interrupted. One worker: the engine lives in the
    process, and signals must be processed in the order accepted."""
    uvicorn.run(create_app(db, tokens, join=join), host=host, port=port, log_level="warning",
                workers=1)
