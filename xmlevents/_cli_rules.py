"""``xmlevents rules check`` and ``xmlevents rules run`` (issue 17, DESIGN section 11).

Kept apart from the other commands so that ``detect`` and ``graph`` never import lxml:
:mod:`xmlevents.rules` is imported when these commands run. ``run`` returns the exit status:
0, 1 for bad input (a message naming the place), 3 when ``check`` cannot prove termination.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from xmlevents.algebra import XmlEventsError

from ._cli_common import ArgumentFailure

__all__ = ["add_parsers", "run"]


def add_parsers(sub: Any) -> None:
    rules = sub.add_parser("rules", help="ECA rules on XML documents: check and run them",
                           description="ECA rules after Bailey, Poulovassilis and Wood "
                                       "(WWW 2002): static termination analysis, and runs "
                                       "of top-level updates with their rule cascades.")
    rsub = rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")
    check = rsub.add_parser(
        "check", help="print each rule, the triggering and activation graphs and the verdict",
        description="Analyse a rule file: the triggering graph, the activation graph and a "
                    "verdict — terminates (naming the acyclic graph that proves it) or may "
                    "not terminate (naming a cycle). Exit 0 when termination is proven, 3 "
                    "when it is not, 1 for bad input.")
    check.add_argument("rules", metavar="RULES", help="the rule file")
    check.add_argument("--dot", action="store_true",
                       help="print the two graphs as Graphviz DOT")
    run_ = rsub.add_parser(
        "run", help="apply top-level updates to documents, with their rule cascades",
        description="Load the documents under the names the rules use, apply each top-level "
                    "update with its rule cascade (a failed update is rolled back and "
                    "reported; the next one goes on), print the trace as JSON lines and "
                    "write the resulting documents into DIR.")
    run_.add_argument("rules", metavar="RULES", help="the rule file")
    run_.add_argument("--doc", action="append", default=[], metavar="NAME=FILE",
                      help="a document under the name the rules use, e.g. s.xml=stores.xml "
                           "(repeatable)")
    run_.add_argument("--update", action="append", default=[], metavar="ACTION",
                      help="a top-level update: INSERT r BELOW e [BEFORE|AFTER q] or "
                           "DELETE e (repeatable, applied in order)")
    run_.add_argument("--out", metavar="DIR",
                      help="write each resulting document as DIR/NAME")
    run_.add_argument("--max-steps", type=int, default=1000, metavar="N",
                      help="the longest rule cascade of one update (default: 1000)")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``rules check`` or ``rules run``; the exit status (errors: one line, status 1)."""
    try:
        if args.rules_command == "check":
            return _check(args, out)
        return _run(args, out, err)
    except XmlEventsError as exc:
        err.write(f"xmlevents: error: {exc.for_cli()}\n")
        return 1


def _check(args: argparse.Namespace, out: TextIO) -> int:
    """``rules check RULES [--dot]``: the rules, both graphs and the verdict (seed 002,
    section 3); 0 when termination is proven, 3 when it is not."""
    from xmlevents.rules import analyse, parse_rules

    try:
        with open(args.rules, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ArgumentFailure(f"cannot read the rule file {args.rules!r}: {reason}") from None
    analysis = analyse(parse_rules(text, source=args.rules))
    out.write((analysis.to_dot() if args.dot else analysis.to_text()) + "\n")
    if args.dot:
        out.write(f"// verdict: {analysis.verdict}\n")
    return 0 if analysis.verdict.terminates else 3


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``rules run``: load the documents and the rules, apply each ``--update`` with its
    cascade (seed 002, section 2.6), print the trace as JSON lines, write the documents.

    Everything given is checked before anything runs (the rule file, every ``--doc``, every
    ``--update``'s syntax): bad input is one line on stderr, status 1, nothing written. An
    update that does not finish is rolled back and reported on stderr (one line), and the
    next one goes on; its steps are not printed. The status is then 1 (0 when every update
    finished), and the documents are written all the same.
    """
    import json
    import os

    import xmlevents.dom as dom
    from xmlevents.rules import Store, UpdateError, parse_action, parse_rules

    try:
        with open(args.rules, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        err.write(f"xmlevents: error: {args.rules}: cannot read the rule file: {exc}\n")
        return 1
    ruleset = parse_rules(text, source=args.rules)
    updates = [parse_action(u) for u in args.update]
    monitor = dom.Monitor()
    documents: dict[str, Any] = {}
    for given in args.doc:
        name, eq, path = given.partition("=")
        if not eq or not name or not path:
            err.write(f"xmlevents: error: --doc {given}: give NAME=FILE, e.g. "
                      "--doc s.xml=stores.xml\n")
            return 1
        if name in documents:
            err.write(f"xmlevents: error: --doc {given}: document {name!r} is given twice\n")
            return 1
        if args.out is not None and (os.path.basename(name) != name or name in (".", "..")):
            err.write(f"xmlevents: error: --doc {given}: {name!r} cannot be written as a file "
                      "of --out; give a name without a directory\n")
            return 1
        try:
            documents[name] = dom.parse(path, name=name, monitor=monitor)
        except dom.XMLSyntaxError as exc:
            where = f"line {exc.line}, column {exc.column}: " if exc.line else ""
            err.write(f"xmlevents: error: --doc {name}={path}: not well-formed XML: "
                      f"{where}{exc.reason}\n")
            return 1
        except OSError as exc:
            err.write(f"xmlevents: error: --doc {name}={path}: cannot read it: "
                      f"{exc.strerror or exc}\n")
            return 1
    store = Store(documents, max_steps=args.max_steps, monitor=monitor)
    store.rules(ruleset)
    failed = False
    for number, update in enumerate(updates, 1):
        try:
            steps = store.execute(update)
        except UpdateError as exc:
            failed = True
            err.write(f"xmlevents: error: --update {number}: {exc.for_cli()}\n")
            continue
        for step in steps:
            out.write(json.dumps(step.to_dict(), ensure_ascii=False) + "\n")
    if args.out is not None:
        os.makedirs(args.out, exist_ok=True)
        for name, doc in store.documents.items():
            with open(os.path.join(args.out, name), "wb") as f:
                f.write(doc.tostring(xml_declaration=True, encoding="UTF-8") + b"\n")
    return 1 if failed else 0
