"""Problem documents (RFC 9457): every error the service answers, from the handlers, the
quotas (:mod:`._limits`) and the connection guard (:mod:`._protocol`) alike."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse

__all__ = ["Problem", "PROBLEM_TYPE", "problem_bytes"]

#: The media type of a problem document.
PROBLEM_TYPE = "application/problem+json"


class Problem(Exception):
    """An error answered as a problem document (RFC 9457)."""

    def __init__(self, status: int, title: str, detail: str, *,
                 headers: Mapping[str, str] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.title = title
        self.detail = detail
        self.headers = dict(headers or {})
        self.extra = extra

    def closing(self) -> Problem:
        """This problem, answered with ``Connection: close`` (a request whose body is
        left unread cannot be followed by another on its connection)."""
        self.headers["Connection"] = "close"
        return self

    def body(self) -> dict[str, Any]:
        return {"type": "about:blank", "title": self.title, "status": self.status,
                "detail": self.detail, **self.extra}

    def response(self) -> JSONResponse:
        headers = dict(self.headers)
        if self.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        return JSONResponse(self.body(), status_code=self.status, media_type=PROBLEM_TYPE,
                            headers=headers or None)


def problem_bytes(problem: Problem) -> bytes:
    """A whole HTTP/1.1 response carrying ``problem``, closing the connection: what the
    connection guard writes on a socket with no application behind it."""
    body = json.dumps(problem.body()).encode()
    reason = problem.title.encode("ascii", "replace")
    head = [f"HTTP/1.1 {problem.status} ".encode() + reason,
            f"content-type: {PROBLEM_TYPE}".encode(),
            f"content-length: {len(body)}".encode(), b"connection: close",
            *(f"{k}: {v}".encode() for k, v in problem.headers.items())]
    return b"\r\n".join(head) + b"\r\n\r\n" + body
