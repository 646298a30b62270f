"""``xmlevents rules check`` and ``xmlevents rules run`` (issue 17, DESIGN section 11).

Kept apart from the other commands so that ``detect`` and ``graph`` never import lxml:
:mod:`xmlevents.rules` is imported when these commands run. ``run`` returns the exit status:
0; 1 for bad input (a message naming the place), and for a ``check`` that cannot prove
termination (a check that does not pass, as a linter's findings: the one policy of
docs/cli.md; it was 3, the status of an unusable environment, before issue 28).
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from ._common import (
    BAD_INPUT,
    OK,
    Failure,
    Streams,
    check_output_folder,
    name_value,
    open_input,
    read_input_text,
)

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """``rules``' parser, with its actions ``check`` and ``run``."""
    rules = sub.add_parser("rules", help="ECA rules on XML documents: check and run them",
                           description="ECA rules after Bailey, Poulovassilis and Wood "
                                       "(WWW 2002): static termination analysis, and runs "
                                       "of top-level updates with their rule cascades.")
    rsub = rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")
    check = rsub.add_parser(
        "check", help="print each rule, the triggering and activation graphs and the verdict",
        description="Analyse a rule file: the triggering graph, the activation graph and a "
                    "verdict — terminates (naming the acyclic graph that proves it) or may "
                    "not terminate (naming a cycle). Exit 0 when termination is proven, 1 "
                    "when it is not or for bad input.")
    check.add_argument("rules", metavar="RULES",
                       help="the rule file ('-': standard input; .gz: compressed)")
    check.add_argument("--dot", action="store_true",
                       help="print the two graphs as Graphviz DOT")
    run_ = rsub.add_parser(
        "run", help="apply top-level updates to documents, with their rule cascades",
        description="Load the documents under the names the rules use, apply each top-level "
                    "update with its rule cascade (a failed update is rolled back and "
                    "reported; the next one goes on), print the trace as JSON lines and "
                    "write the resulting documents into DIR.")
    run_.add_argument("rules", metavar="RULES",
                      help="the rule file ('-': standard input; .gz: compressed)")
    run_.add_argument("--doc", action="append", default=[], metavar="NAME=FILE",
                      help="a document under the name the rules use, e.g. s.xml=stores.xml "
                           "(FILE '-': standard input; .gz: compressed) (repeatable)")
    run_.add_argument("--update", action="append", default=[], metavar="ACTION",
                      help="a top-level update: INSERT r BELOW e [BEFORE|AFTER q] or "
                           "DELETE e (repeatable, applied in order)")
    run_.add_argument("--out", metavar="DIR",
                      help="write each resulting document as DIR/NAME (checked before "
                           "any work)")
    run_.add_argument("--max-steps", type=int, default=1000, metavar="N",
                      help="the longest rule cascade of one update (default: 1000)")


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Run ``rules check`` or ``rules run``; the exit status (errors: a
    :class:`~._common.Failure`, one line, status 1)."""
    action = _ACTIONS[args.rules_command]
    return action(args, streams.out, streams.err)


def _rule_text(path: str) -> str:
    return read_input_text(path, "the rule file")


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``rules check RULES [--dot]``: the rules, both graphs and the verdict (seed 002,
    section 3); 0 when termination is proven, 1 when it is not."""
    from xmlevents.rules import analyse, parse_rules

    analysis = analyse(parse_rules(_rule_text(args.rules), source=args.rules))
    out.write((analysis.to_dot() if args.dot else analysis.to_text()) + "\n")
    if args.dot:
        out.write(f"// verdict: {analysis.verdict}\n")
    return OK if analysis.verdict.terminates else BAD_INPUT


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``rules run``: load the documents and the rules, apply each ``--update`` with its
    cascade (seed 002, section 2.6), print the trace as JSON lines, write the documents.

    Everything given is checked before anything runs (the rule file, every ``--doc``, every
    ``--update``'s syntax, ``--out``): bad input is one line on stderr, status 1, nothing
    written. An update that does not finish is rolled back and reported on stderr (one
    line), and the next one goes on; its steps are not printed. The status is then 1 (0 when
    every update finished), and the documents are written all the same.
    """
    import json
    import os

    import xmlevents.dom as dom
    from xmlevents.rules import Store, UpdateError, parse_action, parse_rules

    if args.out is not None:
        check_output_folder("--out", args.out)
    ruleset = parse_rules(_rule_text(args.rules), source=args.rules)
    updates = [parse_action(u) for u in args.update]
    monitor = dom.Monitor()
    documents: dict[str, Any] = {}
    for given in args.doc:
        name, path = name_value("--doc", given, "s.xml=stores.xml")
        if name in documents:
            raise Failure(f"--doc {given}: document {name!r} is given twice")
        if args.out is not None and (os.path.basename(name) != name or name in (".", "..")):
            raise Failure(f"--doc {given}: {name!r} cannot be written as a file of --out; "
                          "give a name without a directory")
        stream = open_input(path)
        try:
            documents[name] = dom.parse(stream, name=name, monitor=monitor)
        except dom.XMLSyntaxError as exc:
            where = f"line {exc.line}, column {exc.column}: " if exc.line else ""
            raise Failure(f"--doc {name}={path}: not well-formed XML: {where}{exc.reason}"
                          ) from None
        except (OSError, EOFError) as exc:
            reason = (getattr(exc, "strerror", None) or str(exc)
                      or "the compressed data ends early")
            raise Failure(f"--doc {name}={path}: cannot read it: {reason}") from None
        finally:
            if path != "-":
                stream.close()
    store = Store(documents, max_steps=args.max_steps, monitor=monitor)
    store.rules(ruleset)
    failed = False
    for number, update in enumerate(updates, 1):
        try:
            steps = store.execute(update)
        except UpdateError as exc:
            # Reported, not fatal: the update is rolled back and the next one goes on.
            failed = True
            err.write(f"xmlevents: error: --update {number}: {exc.for_cli()}\n")
            continue
        for step in steps:
            out.write(json.dumps(step.to_dict(), ensure_ascii=False) + "\n")
    if args.out is not None:
        try:
            os.makedirs(args.out, exist_ok=True)
            for name, doc in store.documents.items():
                with open(os.path.join(args.out, name), "wb") as f:
                    f.write(doc.tostring(xml_declaration=True, encoding="UTF-8") + b"\n")
        except OSError as exc:  # the disk filled, the folder went away meanwhile
            raise Failure(f"--out {args.out}: cannot write {exc.filename or ''}: "
                          f"{exc.strerror or exc}") from None
    return BAD_INPUT if failed else OK


_ACTIONS = {"check": _check, "run": _run}
