"""``xmlevents serve``: the detection service over HTTP (issue 18, DESIGN section 9).

Kept apart so that ``detect`` and ``graph`` never import Starlette or uvicorn.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

from ._cli_common import ArgumentFailure

__all__ = ["add_parsers", "run"]


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {text!r}")
    return int(text)


def add_parsers(sub: Any) -> None:
    serve = sub.add_parser(
        "serve", help="run the detection service (SNOOP-R expressions over HTTP)",
        description="Serve the detection service of Alferes and Tagni: clients register "
                    "event expressions and read their notifications, event providers signal "
                    "atomic events. State lives in an SQLite database and survives restarts.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on "
                       "(default: 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8765, help="port (default: 8765)")
    serve.add_argument("--db", default="xmlevents-service.db",
                       help="the SQLite database (default: xmlevents-service.db here)")
    serve.add_argument("--token", action="append", default=[], metavar="NAME=SECRET",
                       help="a client and its bearer token (repeat for more clients); "
                            "without any, the service is open to one anonymous client")
    serve.add_argument("--join", choices=["correlate", "paper"], default="correlate",
                       help="how variables shared by operands join: correlate by value "
                            "(default) or the paper's discard on mismatch")


def _tokens(pairs: list[str]) -> dict[str, str]:
    tokens: dict[str, str] = {}
    for pair in pairs:
        name, sep, secret = pair.partition("=")
        if not sep or not name or not secret:
            raise ArgumentFailure(f"--token {pair!r}: expected NAME=SECRET")
        if secret in tokens:
            raise ArgumentFailure(f"--token {name}: this secret is already another client's")
        tokens[secret] = name
    return tokens


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import sqlite3

    from xmlevents.service import serve

    tokens = _tokens(args.token)
    folder = os.path.dirname(os.path.abspath(args.db))
    if not os.path.isdir(folder):
        raise ArgumentFailure(f"--db {args.db}: the folder {folder} does not exist")
    try:
        sqlite3.connect(args.db).close()
    except sqlite3.Error as exc:
        raise ArgumentFailure(f"--db {args.db}: {exc}") from None
    who = (", ".join(sorted(tokens.values())) if tokens
           else "anyone (open: no --token given, one anonymous client)")
    err.write(f"xmlevents serve: http://{args.host}:{args.port} — database {args.db}; "
              f"clients: {who}\n")
    err.flush()
    serve(args.db, tokens, host=args.host, port=args.port, join=args.join)
    return 0
