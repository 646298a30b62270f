"""``xmlevents serve``: the detection service over HTTP (issue 18, DESIGN section 9).

Kept apart so that ``detect`` and ``graph`` never import Starlette or uvicorn. What makes the
service unable to start — a ``--db`` that is not the service's database or is locked, an
address that cannot be bound (a busy port) — is found before it listens, and ends the command
with one line and status 3 (an unusable environment), never uvicorn's traceback (issue 28).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ._common import ENVIRONMENT, Failure, Streams, name_value

__all__ = ["add_parser", "run"]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 86_400:
        raise argparse.ArgumentTypeError(f"seconds above 0 (and below a day), got {text!r}")
    return value


#: The limits' defaults as the help shows them: building every command's parser must not
#: import the service (``detect`` starts without it); tests/service/test_limits.py holds
#: them equal to :class:`~xmlevents.service.Limits`' own, which the service applies.
LIMIT_DEFAULTS: dict[str, float] = {
    "header_timeout": 10, "body_timeout": 30, "keep_alive": 5, "max_connections": 900,
    "max_expressions": 1000, "max_events": 10_000, "max_retained": 100_000}


def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) < 2 ** 31:
        raise argparse.ArgumentTypeError(f"a whole number above 0, got {text!r}")
    return int(text)


def _origin(text: str) -> str:
    """A web origin, ``scheme://host[:port]`` as a browser sends it, or ``*``."""
    from urllib.parse import urlsplit

    if text == "*":
        return text
    parts = urlsplit(text)
    if (parts.scheme not in ("http", "https") or not parts.hostname or parts.path
            or parts.query or parts.fragment or parts.username or text.endswith("/")):
        raise argparse.ArgumentTypeError(
            f"an origin is scheme://host[:port] with no path (e.g. https://app.example), or "
            f"*, got {text!r}")
    return text


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {text!r}")
    return int(text)


def add_parser(sub: Any) -> None:
    """``serve``'s parser."""
    serve = sub.add_parser(
        "serve", help="run the detection service (SNOOP-R expressions over HTTP)",
        description="Serve the detection service of Alferes and Tagni: clients register "
                    "event expressions and read their notifications, event providers signal "
                    "atomic events. State lives in an SQLite database and survives restarts.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on "
                       "(default: 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8765, help="port (default: 8765)")
    serve.add_argument("--db", default="xmlevents-service.db",
                       help="the SQLite database (default: xmlevents-service.db here; "
                            "checked before the service listens)")
    serve.add_argument("--token", action="append", default=[], metavar="NAME=SECRET",
                       help="a client and its bearer token (repeat for more clients); "
                            "without any, the service is open to one anonymous client")
    serve.add_argument("--join", choices=["correlate", "paper"], default="correlate",
                       help="how variables shared by operands join: correlate by value "
                            "(default) or the paper's discard on mismatch")
    limits = serve.add_argument_group(
        "limits (issue 31; a refusal names the option that raises it)")
    for option, kind, metavar, text in (
            ("--header-timeout", _seconds, "S", "seconds to send a request's headers"),
            ("--body-timeout", _seconds, "S", "seconds to send a request's body"),
            ("--keep-alive", _seconds, "S", "seconds an idle connection stays open"),
            ("--max-connections", _count, "N", "connections served at once"),
            ("--max-expressions", _count, "N", "expressions a client may register"),
            ("--max-events", _count, "N", "events one POST /events may carry"),
            ("--max-retained", _count, "N", "notifications a client keeps undeleted "
                                            "(beyond, the oldest are discarded)")):
        name = option.removeprefix("--").replace("-", "_")
        limits.add_argument(option, type=kind, metavar=metavar, default=None,
                            help=f"{text} (default: {LIMIT_DEFAULTS[name]:,})")
    serve.add_argument("--allow-private-webhooks", action="store_true",
                       help="accept callback URLs to this machine (localhost, loopback) and "
                            "to private, link-local and unspecified addresses (refused by "
                            "default: a client could make the service POST inside the "
                            "network)")
    serve.add_argument("--skip-bad-rows", action="store_true",
                       help="start even if rows of the database's log cannot be replayed: "
                            "leave each out (moved to the table skipped, reported on "
                            "stderr) and keep every good row")
    serve.add_argument("--committer", choices=("process", "thread"), default="process",
                       help="where changes are committed to the database: a process of "
                            "its own while the writer goes on with the next change "
                            "(default: the second core for SQLite), or the writer thread")
    serve.add_argument("--compaction", choices=("process", "thread"), default=None,
                       help="where the log's compactions look at the engine while it runs: "
                            "a forked child process while the writer goes on (the default "
                            "on Linux: the second core, and for a moment "
                            "the pages the writer changes meanwhile copied), or the writer "
                            "thread")
    serve.add_argument("--cors-origin", action="append", default=[], type=_origin,
                       metavar="ORIGIN", help="a web origin whose pages may call the service "
                       "(scheme://host[:port]; repeat for more; * for any)")


def limits_given(args: argparse.Namespace) -> dict[str, Any]:
    """The limits the command line sets (the others are :class:`Limits`' defaults)."""
    return {name: value for name in LIMIT_DEFAULTS
            if (value := getattr(args, name)) is not None}


def _tokens(pairs: list[str]) -> dict[str, str]:
    tokens: dict[str, str] = {}
    for pair in pairs:
        name, secret = name_value("--token", pair, "alice=s3cret")
        if secret in tokens:
            raise Failure(f"--token {name}: this secret is already another client's")
        tokens[secret] = name
    return tokens


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Serve until stopped: SIGTERM 0, Ctrl-C 130 (open streams ended with a final event);
    bad arguments 1; a database or address the service cannot use 3 (a database another
    service holds among them, its pid named)."""
    import sqlite3

    from xmlevents.service import web_stack_missing

    missing = web_stack_missing()
    if missing is not None:  # the `service` extra is not installed (issue 28): one line, 1
        raise Failure(missing)
    from xmlevents.service import DamagedLogError, Limits, serve

    tokens = _tokens(args.token)
    folder = os.path.dirname(os.path.abspath(args.db))
    if not os.path.isdir(folder):
        raise Failure(f"--db {args.db}: the folder {folder} does not exist")
    if os.path.isdir(args.db):
        raise Failure(f"--db {args.db}: a folder is there, not a database file")
    who = (", ".join(sorted(tokens.values())) if tokens
           else "anyone (open: no --token given, one anonymous client)")

    def report(line: str) -> None:
        streams.err.write(f"xmlevents serve: {line}\n")
        streams.err.flush()

    def ready() -> None:  # the database opened and the address bound
        streams.err.write(f"xmlevents serve: http://{args.host}:{args.port} — database "
                          f"{args.db}; clients: {who}\n")
        streams.err.flush()

    try:
        serve(args.db, tokens, host=args.host, port=args.port, join=args.join, ready=ready,
              limits=Limits(**limits_given(args)),
              cors_origins=args.cors_origin, allow_private_webhooks=args.allow_private_webhooks,
              skip_bad_rows=args.skip_bad_rows, committer=args.committer, report=report,
              **({} if args.compaction is None else {"compaction": args.compaction}))
    except DamagedLogError as exc:  # a row of the log: named; --skip-bad-rows leaves it out
        hint = ("" if exc.seq is None or args.skip_bad_rows
                else "; start with --skip-bad-rows to leave such rows out (kept in the "
                     "table skipped) and keep every good row")
        raise Failure(f"--db {args.db}: {exc}{hint}", ENVIRONMENT) from None
    except sqlite3.Error as exc:  # not an SQLite file, not the service's, locked, read-only
        raise Failure(f"--db {args.db}: cannot use it as the service's database: {exc}",
                      ENVIRONMENT) from None
    except OSError as exc:  # the address is in use, or not this machine's
        raise Failure(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
                      ENVIRONMENT) from None
    return 0
