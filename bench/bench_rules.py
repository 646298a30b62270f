"""Benchmark ECA rule execution (seed 002, section 2.6; issue 17, speed).

1. Top-level updates per second on store/product documents (``s.xml``: ``--stores`` stores
   of 5 products each; ``p.xml``: the products with their stores) with 0, 10 and 100 rules
   whose event paths do not match the update: the update inserts a ``<product>`` below a
   store, the rules watch ``INSERT document('s.xml')/stores/store/otherN`` (and ``p.xml``).
   The store indexes rules by the last step of their event path, so none of them is
   evaluated; the issue asks the 100 rules' time to stay within 1.5x of 0 rules'.
2. Firings per second with 10 rules that fire: ten rules on the inserted product, each
   inserting a ``<seenN/>`` below ``log.xml``'s root (instance-level, condition TRUE): one
   update is 1 + 10 steps.

Each figure is the median of ``--repeat`` runs of ``--updates`` updates on a fresh store;
every update is followed by the deletion of what it inserted (not timed separately: an update
and its undo form one timed pair, the same in every variant) so the documents keep their size.

Usage: ``python bench/bench_rules.py [--stores 200] [--updates 300] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from lxml import etree

from xmlevents.rules import Store


def documents(stores: int) -> dict[str, etree._Element]:
    s = etree.Element("stores")
    p = etree.Element("products")
    for i in range(stores):
        store = etree.SubElement(s, "store", id=f"s{i}")
        etree.SubElement(store, "location").text = f"city {i}"
        for j in range(5):
            etree.SubElement(store, "product", id=f"p{(i * 5 + j) % (stores * 2)}")
    for k in range(stores * 2):
        product = etree.SubElement(p, "product", id=f"p{k}")
        etree.SubElement(product, "name").text = f"product {k}"
    return {"s.xml": s, "p.xml": p, "log.xml": etree.Element("log")}


def idle_rules(n: int) -> str:
    return "\n".join(
        f"rule Idle{i} priority {1000 + i}:\n"
        f"on INSERT document('{'s.xml' if i % 2 else 'p.xml'}')/"
        f"{'stores/store' if i % 2 else 'products/product'}/other{i}\n"
        f"if document('p.xml')/products/product[@id=$delta/@id]\n"
        f"do INSERT <x{i}/> BELOW document('log.xml')/log\n"
        for i in range(n))


def firing_rules(n: int) -> str:
    return "\n".join(
        f"rule Fire{i} priority {i + 1}:\n"
        "on INSERT document('s.xml')/stores/store/product\n"
        f"do INSERT <seen{i} id='{{$delta/@id}}'/> BELOW document('log.xml')/log\n"
        for i in range(n))


UPDATE = "INSERT <product id='new'/> BELOW document('s.xml')/stores/store[@id='s7']"
UNDO = "DELETE document('s.xml')/stores/store[@id='s7']/product[@id='new']"
CLEAR = "DELETE document('log.xml')/log/*"


def one_run(stores: int, rules: str, updates: int, clear: bool) -> tuple[float, int]:
    store = Store(documents(stores))
    store.rules(rules)
    steps = 0
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(updates):
            steps += len(store.execute(UPDATE))
            store.execute(UNDO)
            if clear:
                store.execute(CLEAR)
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    return elapsed, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=int, default=200)
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    size = sum(1 for _ in documents(args.stores)["s.xml"].iter())
    print(f"s.xml: {args.stores} stores, {size} elements; {args.updates} updates per run, "
          f"median of {args.repeat} runs")
    variants = [("0 rules", "", False), ("10 non-matching rules", idle_rules(10), False),
                ("100 non-matching rules", idle_rules(100), False)]
    medians: dict[str, float] = {}
    for label, rules, clear in variants:
        times = [one_run(args.stores, rules, args.updates, clear)[0] for _ in range(args.repeat)]
        medians[label] = statistics.median(times)
        # Each timed iteration is the update and its undo: two top-level updates.
        rate = 2 * args.updates / medians[label]
        print(f"{label:>24}: {rate:9.0f} top-level updates/s  "
              f"({medians[label] / args.updates * 1e6:7.1f} us per update+undo)")
    ratio = medians["100 non-matching rules"] / medians["0 rules"]
    print(f"{'100 rules / 0 rules':>24}: {ratio:.2f}x (the issue asks at most 1.5x)")
    runs = [one_run(args.stores, firing_rules(10), args.updates, True)
            for _ in range(args.repeat)]
    elapsed = statistics.median(t for t, _ in runs)
    firings = runs[0][1] - args.updates   # the steps of the rules (not the updates)
    print(f"{'10 rules that fire':>24}: {firings / elapsed:9.0f} firings/s "
          f"({firings} rule actions in {args.updates} updates; each update also undone "
          "and the log cleared in the timed loop)")


if __name__ == "__main__":
    main()
