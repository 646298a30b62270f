"""Inputs that used to cost quadratic time (issue 16, item 4), against plain lxml in one run.

Prints, for each case, the seconds of xmlevents and of the same work in plain lxml (where
there is one) and their ratio. The machine is shared: compare the ratios, not the seconds.

    python3 bench/bench_hardening.py [--attributes 100000] [--depth 10000] \
        [--definitions 10000] [--dot 4000] [--wide 100000]
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable
from typing import Any

from lxml import etree

import xmlevents
from xmlevents.algebra import DefinitionSet, render_dot
from xmlevents.replay import replay_history


def seconds(work: Callable[[], Any], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def row(case: str, ours: float, lxml: float | None = None) -> None:
    if lxml is None:
        print(f"  {case:<46} {ours:8.3f} s")
    else:
        print(f"  {case:<46} {ours:8.3f} s   lxml {lxml:8.3f} s   {ours / lxml:6.1f}x")


def _plain() -> Any:
    """A parser building lxml's own classes (xmlevents installs its watched ones)."""
    parser = etree.XMLParser()
    parser.set_element_class_lookup(etree.ElementDefaultClassLookup())
    return parser


def attributes(n: int) -> None:
    text = "<r><a " + " ".join(f'a{i}="v{i}"' for i in range(n)) + "/></r>"
    row(f"parse an element of {n:,} attributes", seconds(lambda: xmlevents.fromstring(text), 3),
        seconds(lambda: etree.fromstring(text, _plain()), 3))
    doc = xmlevents.fromstring(text)
    # A snapshot (what every ``doc.record()`` starts with) resyncs: it compares the records
    # with the live attributes (it was quadratic: 40,000 took 16 s and 100,000 105 s).
    row(f"snapshot an element of {n:,} attributes", seconds(doc.snapshot))
    doc.define("A := del(a/@a1)")  # so that the removals are reported
    plain = etree.fromstring(text, _plain())
    row(f"clear {n:,} attributes", seconds(lambda: doc.getroot()[0].attrib.clear()),
        seconds(lambda: plain[0].attrib.clear()))


def chain(depth: int) -> None:
    def build() -> Any:
        root = etree.Element("c")  # (watched classes: appended to a watched document)
        cur = root
        for _ in range(depth):
            cur = etree.SubElement(cur, "c")
        return root

    def watched() -> None:
        doc = xmlevents.fromstring("<r/>")
        doc.getroot().append(build())

    def plain() -> None:
        etree.fromstring("<r/>").append(build())

    row(f"build and append a {depth:,}-deep chain", seconds(watched), seconds(plain))


def definitions(n: int, dot: int) -> None:
    text = "\n".join(f"E{i} := ins(x{i}) ; (ins(x{i}/p) & ins(x{i}/q))" for i in range(n))
    row(f"check {n:,} definitions", seconds(lambda: DefinitionSet.parse(text), 3))
    wild = "\n".join(f"E{i} := ins(a{i}/b/c) ; ins(a{i}/b/c/p)" if i % 2 == 0 else
                     f"W{i} := ins(a{i - 1}/b) & %(a{i - 1}/b/c)" for i in range(n))
    row(f"check {n:,} definitions, half of them wildcards",
        seconds(lambda: DefinitionSet.parse(wild), 3))
    drawn = DefinitionSet.parse("\n".join(text.splitlines()[:dot]))
    row(f"graph --dot of {dot:,} definitions", seconds(lambda: render_dot(drawn)))


def wide(n: int) -> None:
    xml = "<r>" + "<e/>" * n + "</r>"
    rows = [{"doc": "d", "version": 0, "xml": xml},
            {"doc": "d", "version": 1, "xml": xml.replace("<e/>", "<f/>", 10)}]
    row(f"replay 2 versions of a {n:,}-wide element", seconds(lambda: replay_history(rows)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--attributes", type=int, default=100_000)
    p.add_argument("--depth", type=int, default=10_000)
    p.add_argument("--definitions", type=int, default=10_000)
    p.add_argument("--dot", type=int, default=4_000)
    p.add_argument("--wide", type=int, default=100_000)
    args = p.parse_args()
    print(f"bench_hardening (load average {os.getloadavg()[0]:.2f})")
    # Checking definitions first: it is what a fresh ``xmlevents graph``/``detect`` does, and
    # the rows after it leave a large heap whose garbage collections it would pay for.
    definitions(args.definitions, args.dot)
    attributes(args.attributes)
    chain(args.depth)
    wide(args.wide)


if __name__ == "__main__":
    main()
