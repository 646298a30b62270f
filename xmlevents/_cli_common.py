"""What the command line's subcommands share: argument types, ``--namespace`` parsing, and the
wording of the library's errors for the command line.

Kept free of lxml, xmldiff and pyspark, like :mod:`xmlevents._cli`: ``detect`` and ``graph``
import it.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from xmlevents.algebra import Duration, XmlEventsError, window

__all__ = ["ArgumentFailure", "CommandError", "window_argument", "parse_namespaces",
           "query_text"]


class ArgumentFailure(XmlEventsError, ValueError):
    """A command-line value that does not mean anything, already worded for the user: the
    command exits with status 1 and the message (``xmlevents: error: ...``)."""


class CommandError(XmlEventsError, ValueError):
    """A bad input or environment of ``replay`` or ``history``, already worded for the user
    (exit status 1); a ``ValueError`` like the other commands' failures. Defined here, not in
    ``_cli_replay``, so that :func:`xmlevents._cli.main` catches it without importing that
    module for every command."""


def window_argument(text: str) -> int | Duration:
    """``--within``'s value: a positive number of ticks or a duration (``30s``); argparse
    words the error."""
    try:
        return window(int(text) if text.strip().lstrip("-").isdigit() else text)
    except XmlEventsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# A prefix as a path type's ``prefix:name`` step can use it: a name as the path types' own
# pattern takes it (an XML NCName: a letter or '_', then letters, digits, '.', '-', '·').
_PREFIX = re.compile(r"[^\W\d][\w.\-\u00B7]*")


def parse_namespaces(pairs: Sequence[str]) -> dict[str, str]:
    """The ``--namespace P=URI`` (``-n``) arguments of a command as a prefix map for the
    definitions (and ``replay``'s keys): the one place they are parsed, so that every command
    takes them alike.

    Raises:
        ArgumentFailure: for an argument without ``=``, an empty prefix or URI, a prefix that
            is not a name a path step can use, or a prefix bound to two different URIs (which
            one a definition meant cannot be known).

    >>> parse_namespaces(["pom=http://maven.apache.org/POM/4.0.0", "x=urn:x"])
    {'pom': 'http://maven.apache.org/POM/4.0.0', 'x': 'urn:x'}
    """
    namespaces: dict[str, str] = {}
    for pair in pairs:
        prefix, eq, uri = pair.partition("=")
        if not eq or not prefix or not uri:
            raise ArgumentFailure(f"--namespace {pair!r}: expected PREFIX=URI, e.g. "
                                  "pom=http://maven.apache.org/POM/4.0.0")
        if not _PREFIX.fullmatch(prefix):
            raise ArgumentFailure(f"--namespace {pair!r}: {prefix!r} is not a prefix (a name "
                                  "such as pom, without ':')")
        if namespaces.get(prefix, uri) != uri:
            raise ArgumentFailure(f"--namespace {pair!r}: prefix {prefix!r} is already bound "
                                  f"to {namespaces[prefix]!r}")
        namespaces[prefix] = uri
    return namespaces


def query_text(arg: str) -> str:
    """A query as given on the command line (``cel``, ``query``, ``replay --cel``): the text
    itself, or ``@FILE`` for the text of a file.

    Raises:
        ArgumentFailure: the file cannot be read, naming it.
    """
    if not arg.startswith("@"):
        return arg
    try:
        with open(arg[1:], encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ArgumentFailure(f"cannot read the query file {arg[1:]!r}: "
                              f"{getattr(exc, 'strerror', None) or exc}") from None
