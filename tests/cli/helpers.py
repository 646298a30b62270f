"""What the command-line tests share: running ``main`` in process with a given stdin."""

from __future__ import annotations

import io
import json
import sys

from xmlevents._cli import main

EI = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"


def run(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """``main(argv)`` with ``stdin`` as its input: its status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        status = main(argv, stdout=out, stderr=err)
    finally:
        sys.stdin = old
    return status, out.getvalue(), err.getvalue()


def line(**fields: object) -> str:
    """One event line."""
    return json.dumps(fields)
