"""The ``xmlevents`` command line (DESIGN sections 6 and 11): one table of commands, one parse,
one exit-status policy (issue 28, deliverable 4).

Each command is a module of this package with ``add_parser(sub)``, which adds its parser to
argparse's subparsers, and ``run(args, streams) -> int``, which returns its exit status; the
dispatcher looks the command up in :data:`COMMANDS`. A command that fails raises
:class:`~._common.Failure`, worded for the user, with its status; :func:`main` writes it as
one line. The statuses are :mod:`._common`'s: 0, 1 bad input, 2 usage, 3 an unusable
environment, 130 interrupted (docs/cli.md).

Start-up is part of every run of a command, so only the module of the command named is
imported (and, for the list of commands in ``--help`` or a usage error, every command module
but none of the systems they run): ``detect`` and ``graph`` load the algebra and the standard
library only (tests/cli/test_cli_imports.py checks what their processes load).

Options may come anywhere among a command's positional arguments (``xmlevents query '//a'
--count f.xml``): every parser without subparsers parses intermixed (:class:`_ArgumentParser`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, TextIO

from xmlevents.algebra import XmlEventsError

from ._common import BAD_INPUT, INTERRUPTED, Failure, Streams

__all__ = ["COMMANDS", "main", "entry"]

#: The commands, in the order ``--help`` lists them: name -> module of this package.
COMMANDS: dict[str, str] = {
    "detect": "detect",
    "graph": "graph",
    "replay": "replay",
    "history": "history",
    "rules": "rules",
    "serve": "serve",
    "cel": "cel",
    "query": "query",
}


def command_module(name: str) -> ModuleType:
    """The module of command ``name`` (imported on first use). By ``__import__``, the import
    statement's own path, which ``python -X importtime`` reports (``importlib.import_module``
    bypasses it): tests/cli/test_cli_imports.py reads what a command loads from there."""
    module = f"{__package__}.{COMMANDS[name]}"
    __import__(module)
    return sys.modules[module]


def _columns() -> int:
    """``shutil.get_terminal_size().columns``, the width argparse's formatter asks for: from
    ``COLUMNS``, else the terminal of stdout, else 80 — without importing shutil, which
    imports zlib, bz2, lzma and fnmatch for its archives (2-3 ms of every command's
    start-up: argparse makes a formatter for every argument added)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    if stdout is None:
        return 80
    try:
        return os.get_terminal_size(stdout.fileno()).columns or 80
    except (ValueError, OSError):  # closed, detached, or not a terminal
        return 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, the same text, its width found by :func:`_columns`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


class _ArgumentParser(argparse.ArgumentParser):
    """A parser whose formatter is :class:`_HelpFormatter` unless told otherwise, and whose
    options may follow its positional arguments when it has no subparsers: argparse's
    ``parse_intermixed_args``, which refuses a parser with subparsers, is what a subcommand's
    parser runs when the top parser hands it its arguments (argparse makes subparsers of the
    parser's class). Without it ``xmlevents query '//a' --count f.xml`` took ``--count`` as
    the end of the positionals and refused ``f.xml`` (issue 28)."""

    _intermixing = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        # parse_known_intermixed_args calls parse_known_args itself (twice, on Python 3.11):
        # those calls are the plain parse.
        if self._intermixing or self._subparsers is not None:
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return super().parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. For a ``command`` of the table (the first argument), only
    its subparser is built: the other commands' modules are not even imported (a command line
    naming it parses as in the full parser, whose other subparsers play no part in it). Any
    other first argument (``--help``, ``--version``, a mistake, none) gets the full parser,
    so that the list of commands and argparse's messages name them all."""
    from xmlevents import __version__

    p = _ArgumentParser(prog="xmlevents", description="Composite events for XML documents.",
                        epilog="Exit statuses: 0 success, 1 bad input, 2 usage, 3 an unusable "
                               "environment (a busy port, a locked or foreign --db, Spark "
                               "that cannot start), 130 interrupted.")
    p.add_argument("--version", action="version", version=f"xmlevents {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in [command] if command in COMMANDS else COMMANDS:
        command_module(name).add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Run the command line with ``argv``; return the exit status (docs/cli.md).

    >>> main(["graph", "--define", "E := ins(a/b) & ins(a/c)"])
    E := ins(a/b) & ins(a/c)
      & conjunction  E(a)  path type a (derived: a/b ∩lb a/c)
      ├── ins(a/b)
      └── ins(a/c)
    0
    """
    streams = Streams(stdout or sys.stdout, stderr or sys.stderr)
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = _parser(argv[0] if argv else None).parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage (2) or --help/--version (0)
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    try:
        status: int = command_module(args.command).run(args, streams)
        streams.out.flush()
    except Failure as exc:
        streams.err.write(f"xmlevents: error: {exc}\n")
        return exc.status
    except XmlEventsError as exc:  # bad input a command left to the library to word
        streams.err.write(f"xmlevents: error: {exc.for_cli()}\n")
        return BAD_INPUT
    except BrokenPipeError:  # the reader of the output went away: the output is not written
        return BAD_INPUT
    except KeyboardInterrupt:
        return INTERRUPTED
    return status


def entry() -> None:
    """The console script: exit with :func:`main`'s status (130 on Ctrl-C, even one that
    arrives while Python starts the command)."""
    try:
        status = main()
    except KeyboardInterrupt:
        status = INTERRUPTED
    sys.exit(status)
