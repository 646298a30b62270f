"""Benchmark watched documents: the cost of reporting lxml mutations as primitive events.

1. Mutations per second on a purchase order of about 10^4 elements (``<order>`` with
   ``<shipment>`` parents, ``--size`` / 200 of them, holding ~2,500 ``<item>`` elements, each
   with ``name``, ``price`` and ``quantity`` children with text). One pre-generated operation
   list (fixed seed, the same for every variant) mixes, about one third each: element
   insertions (``SubElement``: a new ``item`` under a random shipment, or a
   ``price``/``quantity`` under an item inserted earlier, so that about half of the new items
   are completed), text updates (``.text`` of an existing ``price``/``quantity``) and attribute
   changes (``item.set("rev", ...)``). Variants, each on a fresh document per repetition, in
   one process:

   a. raw lxml: parsed with ``hardened_parser(plain=True)`` (lxml's own classes) and lxml's
      original ``SubElement`` (``xmlevents.dom._functions._LXML["SubElement"]``);
   b. wrapped (``xmlevents.fromstring``), nothing listening (no events are built);
   c. wrapped, the paper's Example 10 defined and subscribed:
      ``ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))`` (the callbacks
      are counted and checked against the items the operation list completes);
   d. wrapped, only a ``doc.mutations`` receiver (every primitive event built and delivered);
   e. as b but on a tree that no one watches, parsed with xmlevents' classes installed and
      edited through ``etree.SubElement`` (xmlevents' reporting version once imported): what
      the installed classes cost unwatched lxml code; e2 the same while another document is
      watched (new proxies are then checked for insertion behind the wrapper's back).

   Median of ``--repeat`` runs (time.perf_counter, gc disabled while timing; the variants take
   turns run by run): ops/s, us per op and the slowdown against raw lxml. The timed loop
   dispatches on the operation kind; that overhead is the same in every variant (and included
   in raw lxml's figure). The shipments keep sibling lists short (~50 items): with a listener,
   an insertion's event carries its index, which costs lxml a walk of the parent's children.
2. Against what a user would otherwise write: snapshot the tree (``copy.deepcopy`` of a plain
   lxml tree), make 10 edits (the same mix) to a 1,000-element document, then
   ``xmldiff.main.diff_trees(before, after)`` with default settings (Differ: F=0.5,
   uniqueattrs=[xml:id], ratio_mode="fast", fast_match=False, best_match=False; no formatter,
   so a list of edit actions); versus the wrapped document making the same 10 edits with a
   ``doc.mutations`` receiver collecting the events. Time per round of each and the speed-up;
   both must see changes (non-empty diff, events emitted).
3. For information, tracemalloc's peak and retained bytes of wrapping the 10^4-element
   document (registry records, ids, path instances, and the proxies the registry keeps alive)
   against the Python-side size of the plain parsed tree: just its root's proxy, or every
   element's proxy if held (libxml2's own memory for the tree is not traced).
4. Insertions under a parent that already has 10^3, 10^4, 10^5 children (``--append-sizes``),
   in a watched document with a ``doc.mutations`` receiver, so every insertion's event carries
   its index among the parent's children (issue 13): ``--appends`` insertions each through
   ``append``, ``etree.SubElement``, ``extend`` of one element, ``insert(-1, x)`` and
   ``insert(0, x)``, against raw lxml's ``append`` on a plain tree of the same size; median of
   ``--repeat`` runs, us per insertion. Target: flat in the number of children.

Run: ``python bench/bench_dom.py [--size 10000] [--ops 10000] [--repeat 5]
[--append-sizes 1000,10000,100000] [--appends 1000]``.
Targets (issue 5): wrapped without subscriptions <= 10x raw lxml; the wrapped edits with event
delivery >= 100x faster than snapshot + edit + xmldiff; (issue 13) an insertion's cost with a
listener independent of how many children the parent has.
"""

from __future__ import annotations

import argparse
import collections
import copy
import gc
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lxml import etree
from xmldiff.main import diff_trees

import xmlevents
import xmlevents.dom
from xmlevents.dom import hardened_parser
from xmlevents.dom._functions import _LXML
from xmlevents.dom._registry import NODES

DEFINITION = "ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))"
LXML_SUBELEMENT = _LXML["SubElement"]  # lxml's original
REPORTING_SUBELEMENT = etree.SubElement  # xmlevents' version, installed on import
assert REPORTING_SUBELEMENT is xmlevents.dom.SubElement

# Operation kinds: (kind, target index, value)
INS_ITEM, INS_PRICE, INS_QUANTITY, SET_TEXT, SET_ATTR = range(5)


# --- the document and the operations --------------------------------------------------------

@dataclass(frozen=True)
class Order:
    """A purchase order's XML text and its shape."""

    xml: bytes
    elements: int
    shipments: int
    items: int


def order(size: int) -> Order:
    """An order of about ``size`` elements: shipments of items (name, price, quantity)."""
    shipments = max(1, size // 200)
    items = max(1, (size - 1 - shipments) // 4)
    rng = random.Random(1)
    parts = ["<order>"]
    k = 0
    for s in range(shipments):
        parts.append(f'<shipment n="{s + 1}">')
        count = items // shipments + (1 if s < items % shipments else 0)
        for _ in range(count):
            k += 1
            parts.append(f'<item sku="p{k}"><name>Part {k}</name>'
                         f"<price>{rng.randint(1, 999)}.{rng.randint(0, 99):02d}</price>"
                         f"<quantity>{rng.randint(1, 50)}</quantity></item>")
        parts.append("</shipment>")
    parts.append("</order>")
    return Order("".join(parts).encode(), 1 + shipments + 4 * items, shipments, items)


def operations(doc: Order, count: int, seed: int = 42) -> tuple[list[tuple[int, int, str]], int]:
    """``count`` operations, about a third each insertions, text updates, attribute changes.

    An insertion adds a new item under a random shipment, or, half the time when some new
    item still lacks one, a price or quantity under such an item (about half the new items
    are meant to be completed). Returns the operations and how many items they complete.
    """
    rng = random.Random(seed)
    ops: list[tuple[int, int, str]] = []
    new_items = 0
    pending: dict[int, list[int]] = {}  # new item -> the children it still lacks
    completed = 0
    for i in range(count):
        kind = rng.randrange(3)
        if kind == 0:
            if pending and rng.random() < 0.5:
                item = rng.choice(list(pending))
                missing = pending[item]
                child = missing.pop(rng.randrange(len(missing)))
                ops.append((child, item, ""))
                if not missing:
                    del pending[item]
                    completed += 1
            else:
                ops.append((INS_ITEM, rng.randrange(doc.shipments), ""))
                if rng.random() < 0.5:
                    pending[new_items] = [INS_PRICE, INS_QUANTITY]
                new_items += 1
        elif kind == 1:
            ops.append((SET_TEXT, rng.randrange(2 * doc.items), str(i)))
        else:
            ops.append((SET_ATTR, rng.randrange(doc.items), str(i)))
    return ops, completed


@dataclass
class Targets:
    """The existing nodes operations refer to (collected before timing)."""

    shipments: list[Any]
    leaves: list[Any]  # price and quantity of every original item
    items: list[Any]


def targets(root: Any) -> Targets:
    items = root.findall("shipment/item")
    leaves = [leaf for item in items for leaf in (item[1], item[2])]
    return Targets(root.findall("shipment"), leaves, items)


def apply(ops: list[tuple[int, int, str]], t: Targets, sub_element: Callable[..., Any]
          ) -> list[Any]:
    """Run the operations; returns the new items."""
    shipments, leaves, items = t.shipments, t.leaves, t.items
    new: list[Any] = []
    add = new.append
    for kind, k, value in ops:
        if kind == INS_ITEM:
            add(sub_element(shipments[k], "item"))
        elif kind == SET_TEXT:
            leaves[k].text = value
        elif kind == SET_ATTR:
            items[k].set("rev", value)
        elif kind == INS_PRICE:
            sub_element(new[k], "price")
        else:
            sub_element(new[k], "quantity")
    return new


# --- 1. mutations per second -------------------------------------------------------------------

@dataclass
class Run:
    """A variant, prepared: the root to edit, the SubElement to use, what to do afterwards."""

    root: Any
    sub_element: Callable[..., Any]
    finish: Callable[[], int] = lambda: 0  # returns a count to report (callbacks, events)


def plain_root(xml: bytes) -> Any:
    return etree.fromstring(xml, hardened_parser(plain=True))


def raw_lxml(xml: bytes) -> Run:
    return Run(plain_root(xml), LXML_SUBELEMENT)


def wrapped(xml: bytes) -> Run:
    doc = xmlevents.fromstring(xml)
    return Run(doc.getroot(), REPORTING_SUBELEMENT, lambda: (doc.close(), 0)[1])


def subscribed(xml: bytes) -> Run:
    doc = xmlevents.fromstring(xml)
    doc.define(DEFINITION)
    calls = []
    doc.subscribe("ItemComplete", lambda d, event: calls.append(event))

    def finish() -> int:
        n = len(calls)  # before close, which flushes the graph
        doc.close()
        return n

    return Run(doc.getroot(), REPORTING_SUBELEMENT, finish)


def mutations_only(xml: bytes) -> Run:
    doc = xmlevents.fromstring(xml)
    events: list[Any] = []
    doc.mutations.connect(lambda d, event: events.append(event), weak=False)

    def finish() -> int:
        n = len(events)
        doc.close()
        return n

    return Run(doc.getroot(), REPORTING_SUBELEMENT, finish)


def unwatched(xml: bytes) -> Run:
    return Run(etree.fromstring(xml, hardened_parser()), REPORTING_SUBELEMENT)


def unwatched_beside(xml: bytes) -> Run:
    other = xmlevents.fromstring(b"<other><x/></other>")
    return Run(etree.fromstring(xml, hardened_parser()), REPORTING_SUBELEMENT,
               lambda: (other.close(), 0)[1])


VARIANTS: list[tuple[str, str, Callable[[bytes], Run]]] = [
    ("a", "raw lxml (plain classes, lxml's SubElement)", raw_lxml),
    ("b", "wrapped, nothing listening", wrapped),
    ("c", "wrapped, ItemComplete subscribed", subscribed),
    ("d", "wrapped, doc.mutations receiver only", mutations_only),
    ("e", "unwatched tree, xmlevents classes installed", unwatched),
    ("e2", "as e, another document watched meanwhile", unwatched_beside),
]


def sample(make: Callable[[bytes], Run], xml: bytes, ops: list[tuple[int, int, str]]
           ) -> tuple[float, int]:
    """Seconds per operation on a fresh document of the variant ``make``; its finish count."""
    run = make(xml)
    t = targets(run.root)
    sub_element = run.sub_element
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        apply(ops, t, sub_element)
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    count = run.finish()
    assert not NODES, "a variant left a document open"
    return elapsed / len(ops), count


def mutation_rates(size: int, n_ops: int, repeat: int) -> None:
    doc = order(size)
    ops, completed = operations(doc, n_ops)
    inserted = sum(1 for o in ops if o[0] in (INS_ITEM, INS_PRICE, INS_QUANTITY))
    texts = sum(1 for o in ops if o[0] == SET_TEXT)
    attrs = sum(1 for o in ops if o[0] == SET_ATTR)
    items = sum(1 for o in ops if o[0] == INS_ITEM)
    print(f"1. mutations on a {doc.elements:,}-element order ({doc.shipments} shipments, "
          f"{doc.items:,} items; {doc.elements + inserted:,} elements after the run)")
    print(f"   {len(ops):,} operations, seed 42: {inserted:,} element insertions ({items:,} "
          f"items, {inserted - items:,} prices/quantities under them), {texts:,} text updates, "
          f"{attrs:,} attribute sets; {completed:,} new items completed")
    print(f"   median of {repeat} runs a variant, the variants interleaved run by run")
    # Round-robin over the variants, so that drift of the machine affects them alike.
    samples: dict[str, list[float]] = {key: [] for key, _, _ in VARIANTS}
    counts: dict[str, int] = {}
    for _ in range(repeat):
        for key, _, make in VARIANTS:
            per_op, counts[key] = sample(make, doc.xml, ops)
            samples[key].append(per_op)
    median = {key: statistics.median(s) for key, s in samples.items()}
    raw = median["a"]
    print(f"   {'variant':<48} {'ops/s':>11} {'us/op':>8} {'x raw':>7}")
    for key, label, _ in VARIANTS:
        per_op = median[key]
        print(f"   {key + ') ' + label:<48} {1 / per_op:>11,.0f} {per_op * 1e6:>8.2f} "
              f"{per_op / raw:>7.2f}")
        if key == "c":
            status = "ok" if counts[key] == completed else f"MISMATCH, expected {completed:,}"
            print(f"      ItemComplete callbacks: {counts[key]:,} ({status})")
        elif key == "d":
            print(f"      primitive events delivered: {counts[key]:,}")
    ratio = median["b"] / raw
    print(f"   target: wrapped without subscriptions <= 10x raw lxml: {ratio:.2f}x "
          f"({'met' if ratio <= 10 else 'NOT met'})")
    print()


# --- 2. against snapshot + xmldiff -------------------------------------------------------------

def versus_xmldiff(size: int, edits: int, rounds: int, wrapped_rounds: int) -> None:
    doc = order(size)
    ops, _ = operations(doc, edits, seed=7)
    diff_times, wrap_times = [], []
    actions: list[Any] = []
    for _ in range(rounds):
        root = plain_root(doc.xml)
        tree = root.getroottree()
        t = targets(root)
        gc.collect()
        start = time.perf_counter()
        before = copy.deepcopy(tree)
        apply(ops, t, LXML_SUBELEMENT)
        actions = diff_trees(before, tree)
        diff_times.append(time.perf_counter() - start)
    events: list[Any] = []
    for _ in range(wrapped_rounds):
        wdoc = xmlevents.fromstring(doc.xml)
        events = []
        wdoc.mutations.connect(lambda d, event, events=events: events.append(event),
                               weak=False)
        t = targets(wdoc.getroot())
        gc.collect()
        start = time.perf_counter()
        apply(ops, t, REPORTING_SUBELEMENT)
        wrap_times.append(time.perf_counter() - start)
        wdoc.close()
    diff_t, wrap_t = statistics.median(diff_times), statistics.median(wrap_times)
    print(f"2. {edits} edits to a {doc.elements:,}-element order: snapshot + edits + xmldiff "
          f"vs. wrapped edits with a mutations receiver")
    print("   xmldiff.main.diff_trees(before, after), default settings (F=0.5, "
          "uniqueattrs=[xml:id], ratio_mode='fast', fast_match=False)")
    kinds = collections.Counter(type(a).__name__ for a in actions)
    print(f"   deepcopy + edits + diff_trees: {diff_t * 1e3:>9.2f} ms a round (median of "
          f"{rounds}); {len(actions)} diff actions: "
          + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    ops_seen = collections.Counter(e.op.value for e in events)
    print(f"   wrapped edits + delivery:      {wrap_t * 1e3:>9.3f} ms a round (median of "
          f"{wrapped_rounds}); {len(events)} events: "
          + ", ".join(f"{n} {k}" for k, n in sorted(ops_seen.items())))
    ok = bool(actions) and bool(events)
    print(f"   both saw changes: {'yes' if ok else 'NO'}")
    speedup = diff_t / wrap_t
    print(f"   speed-up {speedup:,.0f}x; target >= 100x: {'met' if speedup >= 100 else 'NOT met'}")
    print()


# --- 3. memory -----------------------------------------------------------------------------------

def traced(fn: Callable[[], Any]) -> tuple[int, int, Any]:
    """Peak and retained traced bytes of ``fn()``, and its result (kept alive)."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    result = fn()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak - base, current - base, result


def memory(size: int) -> None:
    doc = order(size)
    p_peak, p_kept, plain = traced(lambda: plain_root(doc.xml))
    h_peak, h_kept, held = traced(lambda: list(plain.iter()))
    root = etree.fromstring(doc.xml, hardened_parser())
    w_peak, w_kept, wdoc = traced(lambda: xmlevents.wrap(root))
    nodes = len(wdoc.by_id)
    wdoc.close()
    kib = 1024
    print(f"3. memory of the {doc.elements:,}-element order ({len(doc.xml):,} bytes of XML; "
          "tracemalloc: Python allocations only, not libxml2's tree)")
    print(f"   plain parse:                   peak {p_peak / kib:>7,.0f} KiB, retained "
          f"{p_kept / kib:>7,.0f} KiB (the root's proxy)")
    print(f"   plain tree, every proxy held:  peak {h_peak / kib:>7,.0f} KiB, retained "
          f"{h_kept / kib:>7,.0f} KiB ({len(held):,} proxies)")
    print(f"   xmlevents.wrap of the tree:    peak {w_peak / kib:>7,.0f} KiB, retained "
          f"{w_kept / kib:>7,.0f} KiB ({nodes:,} elements registered, "
          f"{w_kept / nodes:,.0f} bytes each, proxies included)")


# --- 4. insertions under a parent with many children ------------------------------------------

APPENDS: list[tuple[str, Callable[[Any, Any], None]]] = [
    ("append(x)", lambda parent, x: parent.append(x)),
    ("etree.SubElement(parent, tag)", lambda parent, x: REPORTING_SUBELEMENT(parent, "c")),
    ("extend([x])", lambda parent, x: parent.extend([x])),
    ("insert(-1, x) (before the last child)", lambda parent, x: parent.insert(-1, x)),
    ("insert(0, x)", lambda parent, x: parent.insert(0, x)),
]


PLAIN_MAKER = hardened_parser(plain=True)  # makes lxml's own elements, for raw lxml
LXML_APPEND = etree._Element.append


def wide(children: int) -> bytes:
    """``<r><p><c/>...</p></r>``: a parent ``p`` with ``children`` children."""
    return b"<r><p>" + b"<c/>" * children + b"</p></r>"


def insertion_time(xml: bytes, appends: int, insert: Callable[[Any, Any], None] | None
                   ) -> float:
    """Seconds per insertion into ``p`` of a fresh document: watched with a mutations receiver
    (``insert``), or plain lxml's ``append`` (None)."""
    if insert is None:
        parent = plain_root(xml)[0]
        new = [PLAIN_MAKER.makeelement("c") for _ in range(appends)]
        insert = LXML_APPEND
        doc = None
    else:
        doc = xmlevents.fromstring(xml)
        events: list[Any] = []
        doc.mutations.connect(lambda d, event: events.append(event), weak=False)
        parent = doc.getroot()[0]
        new = [etree.Element("c") for _ in range(appends)]
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for x in new:
            insert(parent, x)
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    if doc is not None:
        assert len(events) == appends, "one insertion event an insertion"
        doc.close()
    return elapsed / appends


def insertion_costs(sizes: list[int], appends: int, repeat: int) -> None:
    print(f"4. {appends:,} insertions under a parent with N children, a doc.mutations receiver "
          f"listening (us per insertion, median of {repeat})")
    header = "".join(f"{'N = ' + format(n, ','):>14}" for n in sizes)
    print(f"   {'insertion':<38}{header}")
    rows: list[tuple[str, Callable[[Any, Any], None] | None]] = [
        ("raw lxml append (plain tree)", None), *APPENDS]
    for label, insert in rows:
        cells = []
        for n in sizes:
            xml = wide(n)
            per = statistics.median(insertion_time(xml, appends, insert) for _ in range(repeat))
            cells.append(f"{per * 1e6:>14.2f}")
        print(f"   {label:<38}{''.join(cells)}")
    print()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=10000,
                   help="elements in the document of part 1 and 3 (default 10000)")
    p.add_argument("--ops", type=int, default=10000,
                   help="operations a run in part 1 (default 10000)")
    p.add_argument("--repeat", type=int, default=5,
                   help="runs per variant in part 1, rounds of snapshot+diff in part 2 "
                        "(default 5)")
    p.add_argument("--diff-size", type=int, default=1000,
                   help="elements in the document of part 2 (default 1000)")
    p.add_argument("--edits", type=int, default=10, help="edits a round in part 2 (default 10)")
    p.add_argument("--wrapped-rounds", type=int, default=100,
                   help="rounds of wrapped edits in part 2 (default 100)")
    p.add_argument("--append-sizes", default="1000,10000,100000",
                   help="children of the parent in part 4 (default 1000,10000,100000)")
    p.add_argument("--appends", type=int, default=1000,
                   help="insertions a run in part 4 (default 1000)")
    args = p.parse_args(argv)

    print(f"python {sys.version.split()[0]}, lxml {etree.__version__}, "
          f"xmlevents {xmlevents.__version__}\n")
    mutation_rates(args.size, args.ops, args.repeat)
    versus_xmldiff(args.diff_size, args.edits, args.repeat, args.wrapped_rounds)
    memory(args.size)
    print()
    insertion_costs([int(n) for n in args.append_sizes.split(",")], args.appends, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
