"""``xmlevents graph``: the event trees of definitions with their path types, as text or DOT.

Imports the algebra only; its drawings are loaded when the command runs (PEP 562).
"""

from __future__ import annotations

import argparse
from typing import Any

from xmlevents.algebra import XmlEventsError

from ._common import Failure, Streams, add_namespace_option, parse_namespaces
from ._definitions import add_definition_options, definitions

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """``graph``'s parser."""
    graph = sub.add_parser(
        "graph", help="print the event trees of definitions with their path types",
        description="Print every definition's event tree with each node's event type and "
                    "path type, as text or as Graphviz DOT.")
    add_definition_options(graph)
    # As replay's --namespace: the definitions a user replays can be detected and drawn.
    add_namespace_option(graph)
    graph.add_argument("--dot", action="store_true", help="print Graphviz DOT instead of text")


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Draw the definitions' trees; 0, or a :class:`~._common.Failure` (status 1)."""
    from xmlevents.algebra import render_dot, render_text  # only graph draws

    defs = definitions(args, parse_namespaces(args.namespace))
    try:
        text = render_dot(defs) if args.dot else render_text(defs)
    except XmlEventsError as exc:
        raise Failure(exc.for_cli()) from None
    streams.out.write(text + "\n")
    return 0
