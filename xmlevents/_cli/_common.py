"""What every command of the command line shares (issue 28, deliverable 4): the one failure type
and its exit statuses, the streams a command writes to, the one opener of inputs, the one
reader of ``NAME=VALUE`` arguments, the checks of outputs made before any work, and the
argument types and options several commands take.

Kept free of lxml, xmldiff, pyspark and the web stack: ``detect`` and ``graph`` import it.
gzip is imported only for a ``.gz`` input; tempfile only to check an output folder.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TextIO, cast

from xmlevents._foundation.names import NCNAME_RE
from xmlevents.algebra import Duration, XmlEventsError, window

__all__ = [
    # exit statuses and the one failure type
    "OK", "BAD_INPUT", "USAGE", "ENVIRONMENT", "INTERRUPTED", "Failure", "Streams",
    # inputs and outputs
    "open_input", "read_input_text", "input_name", "query_text", "check_output_folder",
    "check_output_file",
    # arguments
    "name_value", "parse_namespaces", "window_argument", "add_namespace_option",
]

#: The exit statuses of every command (docs/cli.md, "Exit statuses").
OK = 0
#: Bad input: data, definitions, queries, files that cannot be read, an output that cannot be
#: written, a check that does not pass (``rules check``: termination not proven).
BAD_INPUT = 1
#: A usage error: argparse's message (an unknown option, a value of the wrong form).
USAGE = 2
#: An unusable environment: a busy port, a ``--db`` that is not the service's database or is
#: locked, a Spark that cannot start.
ENVIRONMENT = 3
#: Interrupted (Ctrl-C), as a shell reports SIGINT (128 + 2).
INTERRUPTED = 130


class Failure(XmlEventsError):
    """A command's failure, already worded for the user, and the exit status it ends with:
    :func:`xmlevents._cli.main` writes ``xmlevents: error: MESSAGE`` (one line, never a
    traceback) and returns ``status``. The one failure type of the command line (issue 28:
    three "already worded" classes before it, each with status 1)."""

    def __init__(self, message: str, status: int = BAD_INPUT) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Streams:
    """Where a command writes: its output and its messages (``main``'s ``stdout`` and
    ``stderr``; standard input is read from :data:`sys.stdin` when it runs)."""

    out: TextIO
    err: TextIO


def input_name(path: str) -> str:
    """How messages name an input: ``<stdin>`` for ``-``, else the path as given."""
    return "<stdin>" if path == "-" else path


def open_input(path: str, what: str = "") -> IO[bytes]:
    """The one opener of inputs for every command that reads events or documents: ``-`` is
    standard input (as it is: never decompressed), a name ending in ``.gz`` is decompressed
    (gzip imported only then), any other file is read as it is. Binary, so that each reader
    decodes and names the line of a bad byte itself. (Standard input replaced by a text
    stream, as in tests, is returned as it is.)

    Raises:
        Failure: the file cannot be opened, naming it (after ``what`` it is, if given), status 1.
    """
    if path == "-":
        stdin = sys.stdin
        return cast("IO[bytes]", stdin.buffer if hasattr(stdin, "buffer") else stdin)
    try:
        if path.lower().endswith(".gz"):
            import gzip

            # GzipFile has read1, as a plain file; it is an IO[bytes] in all but its stubs.
            return cast("IO[bytes]", gzip.open(path, "rb"))
        return open(path, "rb")
    except OSError as exc:
        raise Failure(f"cannot read {what + ' ' if what else ''}{path}: "
                      f"{exc.strerror or exc}") from None


def read_input_text(path: str, what: str = "") -> str:
    """The whole text of an input (``-``, ``.gz`` or plain, :func:`open_input`), UTF-8.

    Raises:
        Failure: it cannot be read, is not valid gzip, or is not UTF-8 (status 1).
    """
    name = f"{what} {path}".strip()
    stream = open_input(path, what)
    try:
        data = stream.read()
    except EOFError:
        raise Failure(f"{name}: the compressed data ends early (a truncated file?)") from None
    except OSError as exc:  # BadGzipFile among them
        raise Failure(f"cannot read {name}: {exc.strerror or exc}") from None
    finally:
        if path != "-":
            stream.close()
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Failure(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def query_text(arg: str) -> str:
    """A query as given on the command line (``cel``, ``query``, ``replay --cel``): the text
    itself, or ``@FILE`` for the text of a file.

    Raises:
        Failure: the file cannot be read, naming it (status 1).
    """
    if not arg.startswith("@"):
        return arg
    try:
        with open(arg[1:], encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise Failure(f"cannot read the query file {arg[1:]!r}: "
                      f"{getattr(exc, 'strerror', None) or exc}") from None


def name_value(option: str, given: str, example: str) -> tuple[str, str]:
    """The one reader of ``NAME=VALUE`` arguments (``--namespace``, ``--token``, ``--doc``):
    split at the first ``=``, both sides non-empty.

    Raises:
        Failure: no ``=``, or an empty side, naming the option and showing ``example``.

    >>> name_value("--doc", "s.xml=stores.xml", "s.xml=stores.xml")
    ('s.xml', 'stores.xml')
    """
    name, eq, value = given.partition("=")
    if not eq or not name or not value:
        raise Failure(f"{option} {given!r}: expected {_upper(option)}, e.g. {example}")
    return name, value


def _upper(option: str) -> str:
    return {"--namespace": "PREFIX=URI", "--token": "NAME=SECRET",
            "--doc": "NAME=FILE"}.get(option, "NAME=VALUE")


def parse_namespaces(pairs: Sequence[str]) -> dict[str, str]:
    """The ``--namespace P=URI`` (``-n``) arguments of a command as a prefix map: the one
    place they are parsed, so that every command takes them alike.

    Raises:
        Failure: for an argument without ``=``, an empty prefix or URI, a prefix that is not
            an XML NCName (XML 1.0 fifth edition, the pattern of every language), or a prefix
            bound to two different URIs (which one was meant cannot be known).

    >>> parse_namespaces(["pom=http://maven.apache.org/POM/4.0.0", "x=urn:x"])
    {'pom': 'http://maven.apache.org/POM/4.0.0', 'x': 'urn:x'}
    """
    namespaces: dict[str, str] = {}
    for pair in pairs:
        prefix, uri = name_value("--namespace", pair, "pom=http://maven.apache.org/POM/4.0.0")
        if not NCNAME_RE.fullmatch(prefix):
            raise Failure(f"--namespace {pair!r}: {prefix!r} is not a prefix (a name such as "
                          "pom, without ':')")
        if namespaces.get(prefix, uri) != uri:
            raise Failure(f"--namespace {pair!r}: prefix {prefix!r} is already bound to "
                          f"{namespaces[prefix]!r}")
        namespaces[prefix] = uri
    return namespaces


def add_namespace_option(p: argparse.ArgumentParser, what: str = "the definitions") -> None:
    """``--namespace/-n P=URI``, as every command whose language takes prefixes has it."""
    p.add_argument("--namespace", "-n", action="append", default=[], metavar="P=URI",
                   help=f"a prefix for {what}, e.g. pom=http://maven.apache.org/POM/4.0.0 "
                        "(repeatable)")


def window_argument(text: str) -> int | Duration:
    """``--within``'s value: a positive number of ticks or a duration (``30s``); argparse
    words the error."""
    try:
        return window(int(text) if text.strip().lstrip("-").isdigit() else text)
    except XmlEventsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def check_output_file(option: str, path: str) -> None:
    """An output file checked before any work: its folder exists and takes a new file, and
    the path is not a folder. Nothing is left behind (the probe is removed).

    Raises:
        Failure: naming the option and the reason (status 1).
    """
    target = os.path.abspath(path)
    if os.path.isdir(target):
        raise Failure(f"{option} {path}: a folder is there, not a file")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise Failure(f"{option} {path}: the folder {folder} does not exist")
    _probe(option, path, folder)


def check_output_folder(option: str, out: str) -> None:
    """An output folder checked before any work: a folder that exists and takes a new file,
    or one that can be created (it is created and removed again, so a run that fails later
    leaves nothing).

    Raises:
        Failure: a file in its place, a folder that cannot be created or written (status 1).
    """
    from pathlib import Path

    path = Path(out).absolute()
    if path.exists() and not path.is_dir():
        raise Failure(f"{option} {out}: a file is there, not a folder")
    missing = []
    existing = path
    while not existing.exists():
        missing.append(existing)
        existing = existing.parent
    if not existing.is_dir():
        raise Failure(f"{option} {out}: {existing} is a file, not a folder")
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except OSError as exc:
                which = "" if folder == path else f" {folder}"
                raise Failure(f"{option} {out}: cannot create the folder{which}: "
                              f"{exc.strerror or exc}") from None
            made.append(folder)
        _probe(option, out, str(path))
    finally:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()


def _probe(option: str, given: str, folder: str) -> None:
    """Whether ``folder`` takes a new file: one is made and removed."""
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".xmlevents-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise Failure(f"{option} {given}: cannot write in {folder}: "
                      f"{exc.strerror or exc}") from None
