"""Generate purchase-order event streams: the paper's running example at any size.

An order gets ``items`` items; each item's insertions (the item, its price and its
``quantities`` quantity elements and their text) are interleaved with those of up to
``window - 1`` other open items, in a random but hierarchical order: an element before its
children, a child element before its text. The window keeps the number of unfinished items
bounded, as an editing application would; ``window=1`` inserts every item's subtree
contiguously (the order that the non-local termination mode assumes).

Run ``python bench/po_stream.py ITEMS [--window W] [--quantities Q] [--seed S]`` to print
JSON lines.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator

from xmlevents.algebra import Op, PathInstance, PathType, PrimitiveEvent

ORDER = PathType.parse("/order")
ITEM = PathType.parse("/order/item")
PRICE = PathType.parse("/order/item/price")
QUANTITY = PathType.parse("/order/item/quantity")
PRICE_TEXT = PathType.parse("/order/item/price/text()")
QUANTITY_TEXT = PathType.parse("/order/item/quantity/text()")

EVENTS_PER_ITEM = 5  # with one quantity: see events_per_item


def events_per_item(quantities: int = 1) -> int:
    """The item, its price and its text, and each quantity with its text."""
    return 3 + 2 * quantities


def _item_steps(n: int, rng: random.Random, quantities: int
                ) -> list[list[tuple[PathType, tuple[str, ...], str | None]]]:
    """The insertions of item ``n`` (after the item itself) as chains that stay in order."""
    item = ("o1", f"i{n}")
    price = item + (f"p{n}",)
    value = f"{rng.randint(1, 500)}.{rng.randint(0, 99):02d}"
    chains = [[(PRICE, price, None), (PRICE_TEXT, price + (f"pt{n}",), value)]]
    for k in range(quantities):
        suffix = f"{n}.{k}" if k else f"{n}"
        qty = item + (f"q{suffix}",)
        chains.append([(QUANTITY, qty, None),
                       (QUANTITY_TEXT, qty + (f"qt{suffix}",), str(rng.randint(1, 9)))])
    return chains


def raw_stream(items: int, *, window: int = 20, seed: int = 7, quantities: int = 1
               ) -> Iterator[tuple[PathType, tuple[str, ...], str | None]]:
    """(path type, ids, value) of every insertion: the order, then the items interleaved."""
    rng = random.Random(seed)
    yield ORDER, ("o1",), None
    open_items: list[list[list[tuple[PathType, tuple[str, ...], str | None]]]] = []
    started = 0
    while started < items or open_items:
        if started < items and (not open_items or (len(open_items) < window
                                                    and rng.random() < 0.3)):
            yield ITEM, ("o1", f"i{started}"), None
            open_items.append(_item_steps(started, rng, quantities))
            started += 1
            continue
        i = rng.randrange(len(open_items))
        chains = open_items[i]
        chain = chains[rng.randrange(len(chains))]
        yield chain.pop(0)
        if not chain:
            chains.remove(chain)
        if not chains:
            open_items[i] = open_items[-1]
            open_items.pop()


def events(items: int, *, window: int = 20, seed: int = 7, quantities: int = 1
           ) -> Iterator[PrimitiveEvent]:
    """The stream as primitive events with ticks 1, 2, ...; ids ``e1``, ``e2``, ..."""
    stream = raw_stream(items, window=window, seed=seed, quantities=quantities)
    for ts, (pt, ids, value) in enumerate(stream, 1):
        yield PrimitiveEvent(f"e{ts}", ts, Op.INS, PathInstance(pt, ids), value=value)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("items", type=int)
    p.add_argument("--window", type=int, default=20)
    p.add_argument("--quantities", type=int, default=1)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    out = sys.stdout
    for e in events(args.items, window=args.window, seed=args.seed,
                    quantities=args.quantities):
        out.write(json.dumps(e.to_dict()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
