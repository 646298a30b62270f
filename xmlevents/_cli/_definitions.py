"""The definitions of ``detect``, ``graph`` and ``replay``: ``--define`` and ``--definitions``
(each file ``-``, ``.gz`` or plain, as every input), parsed with ``--namespace``'s prefixes into
one set; a bad one is a :class:`~._common.Failure` naming its source, line and column, its
hints phrased as flags."""

from __future__ import annotations

import argparse

from xmlevents.algebra import Definition, DefinitionSet, XmlEventsError, parse_definitions

from ._common import Failure, read_input_text

__all__ = ["add_definition_options", "definitions", "definition_sources", "definition_text"]


def add_definition_options(p: argparse.ArgumentParser) -> None:
    """``--define/-d DEF`` and ``--definitions/-f FILE``, both repeatable."""
    p.add_argument("--define", "-d", action="append", default=[], metavar="DEF",
                   help="a definition 'Name := expression' (repeatable)")
    p.add_argument("--definitions", "-f", action="append", default=[], metavar="FILE",
                   help="a file of definitions, one per line, '#' comments ('-': standard "
                        "input; .gz: compressed) (repeatable)")


def definition_sources(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(where, text) of every definition given: the files first, then ``--define``'s."""
    sources = [(f"--definitions {path}", read_input_text(path, "--definitions"))
               for path in args.definitions]
    return sources + [(f"--define #{i}", text) for i, text in enumerate(args.define, start=1)]


def definitions(args: argparse.Namespace, namespaces: dict[str, str] | None = None,
                sources: list[tuple[str, str]] | None = None) -> DefinitionSet:
    """The definitions given, parsed with ``namespaces`` into one set.

    Raises:
        Failure: none given, or a bad one, naming its source (status 1).
    """
    defs: list[Definition] = []
    if sources is None:
        sources = definition_sources(args)
    for where, text in sources:
        try:
            defs.extend(parse_definitions(text, namespaces, source=where))
        except XmlEventsError as exc:  # the parser names ``where`` itself
            raise Failure(exc.for_cli()) from None
    if not defs:
        raise Failure("no definitions: give --define 'Name := expression' or "
                      "--definitions FILE")
    try:
        return DefinitionSet(defs)
    except XmlEventsError as exc:
        where = next((w for w, text in sources if getattr(exc, "text", None) == text), "")
        message = exc.for_cli()
        raise Failure(f"{where}: {message}" if where else message) from None


def definition_text(args: argparse.Namespace, namespaces: dict[str, str]) -> str | None:
    """The definitions of ``replay`` as one text (for the workers), checked here; or None."""
    if not args.define and not args.definitions:
        return None
    sources = definition_sources(args)
    definitions(args, namespaces, sources)
    return "\n".join(text for _, text in sources)
