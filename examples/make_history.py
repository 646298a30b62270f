"""Generate ``examples/purchase_orders.jsonl.gz``: the version history that ``xmlevents replay``
runs on in the README.

A purchase-order application keeps one XML document per batch of orders
(``orders/2026-11-a.xml``, ``-b``, ``-c``) and saves the whole document after every edit
session. Each saved version is one row of a *version table*, a gzip file of JSON lines::

    {"doc": "orders/2026-11-a.xml", "version": 0, "time": 1793606400, "xml": "<?xml ...>"}

(``version`` counts from 0 per document; ``time`` is in unix seconds and increases over the
whole table, the rows of the three documents interleaved as the sessions happened). Replaying
the table diffs consecutive versions of each document into primitive events, over which the
definitions of ``examples/purchase_orders.xev`` detect composite events.

An order (``<order id=... status=...>``) has a ``<customer>``, a ``<shipTo>``, a ``<billTo>``
and ``<item xml:id=... partnum=...>`` children holding a ``<productName>``, a ``<price>``, a
``<quantity>`` and at times a ``<comment>``. Version 0 of a document holds complete items;
every later version makes one to three edits, each on a different item (or on an order's
status): an item added complete; an item added bare (a product name only) and given its
price and its quantity in later versions -- some bare items are *stalled* and get at most one
of the two; a price or a quantity changed; an order's last item removed; a comment added or
removed; an order's status changed. Versions are pretty-printed (``lxml.etree.indent``).

Three choices keep the replay's diff (xmldiff with ``DiffOptions()``) true to these edits,
so that what is detected is what was done:

- every item carries its order line as ``xml:id`` (``PO-0101.3``), the attribute xmldiff
  matches elements by; without it xmldiff pairs items by similarity, and all items look
  alike: an item added or removed shifts its neighbours' children (``@partnum``,
  ``productName``, ``price`` updated, whole children moved between items);
- only an order's *last* item is removed: removing one in the middle, xmldiff (fast match)
  still pairs the removed item's children with the next item's, equal in tag and similar in
  text, and moves them over, even with the ``xml:id``;
- a version that removes something inserts nothing, and the other way round: xmldiff pairs a
  deleted ``price`` (or ``comment``, ...) with one inserted elsewhere in the same version and
  moves it, with a text update.

``--free-edits`` drops all three (the kinds and rates of edits stay): the history an
application without line ids would write. Its diffs misattribute about a quarter of the
versions, and the counts detected no longer equal the counts printed.

Exactly one version (of ``orders/2026-11-b.xml``) is a truncated write: not well-formed, so
the replay reports it with its line and column and skips it. Its edits are lost; the next
version is well-formed again and continues from the last good content.

The generator counts what it did (every item that got complete, every price and quantity
change, ...) and prints those counts: they are what the definitions must detect (the
comment at the end of ``purchase_orders.xev`` copies them). Everything is drawn from one
seeded ``random.Random``, and the gzip header carries no name or time, so the output is the
same bytes on every run.

Run ``python3 examples/make_history.py [-o examples/purchase_orders.jsonl.gz] [--seed N]
[--free-edits]``.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import io
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

SEED = 2026
START = 1793606400  # 2026-11-02 08:00:00 UTC (a Monday)
DEFAULT_OUT = Path(__file__).resolve().parent / "purchase_orders.jsonl.gz"

# (document, orders in it, share of the edit sessions)
DOCUMENTS = [("orders/2026-11-a.xml", 2, 0.40),
             ("orders/2026-11-b.xml", 1, 0.30),
             ("orders/2026-11-c.xml", 2, 0.30)]
SESSIONS = 350          # versions after version 0, over all documents (the bad one included)
BAD_DOC, BAD_AT = "orders/2026-11-b.xml", 0.55  # the truncated write: where, how far in

PRODUCTS = [
    ("Lawnmower", 148.95), ("Baby Monitor", 39.98), ("Garden Hose", 24.50),
    ("Wheelbarrow", 89.00), ("Leaf Blower", 129.99), ("Hedge Trimmer", 74.25),
    ("Watering Can", 12.40), ("Pruning Shears", 18.75), ("Compost Bin", 56.10),
    ("Bird Feeder", 21.30), ("Patio Umbrella", 99.00), ("Folding Chair", 34.60),
    ("Picnic Table", 215.00), ("Solar Lamp", 16.95), ("Rain Barrel", 68.40),
    ("Seed Tray", 7.85), ("Potting Soil", 11.20), ("Rake", 19.90), ("Shovel", 27.35),
    ("Sprinkler", 22.80), ("Tool Shed", 649.00), ("Fire Pit", 179.50),
    ("Hammock", 84.99), ("Garden Gloves", 9.45), ("Trellis", 31.15),
    ("Flower Pot", 6.70), ("Lawn Edger", 45.00), ("Gas Grill", 389.00),
    ("Outdoor Rug", 59.95), ("Planter Box", 43.20), ("Kneeling Pad", 14.60),
    ("Insect Net", 8.90), ("Thermometer", 13.75), ("Door Mat", 17.40),
]
PEOPLE = [("Alice Smith", "123 Maple Street", "Mill Valley", "CA", "90952"),
          ("Robert Smith", "8 Oak Avenue", "Old Town", "PA", "95819"),
          ("Helen Zoe", "47 Eden Street", "Cambridge", "MA", "02139"),
          ("Jonas Berg", "9 Harbor Road", "Portland", "ME", "04101"),
          ("Maria Lopez", "210 Mesa Drive", "Tucson", "AZ", "85701"),
          ("Wei Chen", "77 Lake Shore", "Chicago", "IL", "60611")]
COMMENTS = ["Confirm the colour with the customer", "Gift wrap, please",
            "Deliver to the back door", "Customer asked for the green one",
            "Leave with the neighbour if absent", "Check stock before shipping",
            "Fragile: pack with care"]
STATUSES = ["open", "confirmed", "on-hold", "open", "confirmed"]


@dataclass
class Counts:
    """What the generator did, in the units the definitions count."""

    complete: int = 0        # items inserted that got a price and a quantity (ItemComplete)
    complete_v0: int = 0     # ... of which were already in version 0
    complete_later: int = 0  # ... of which were added bare and completed in later versions
    price_changes: int = 0
    quantity_changes: int = 0
    removed: int = 0         # items removed (ItemRemoved)
    repriced: int = 0        # complete items whose price changed afterwards (ItemRepriced)
    bare: int = 0            # items added bare
    never_complete: int = 0  # bare items still missing a price or a quantity at the end
    removed_bare: int = 0    # bare items removed before they got complete
    edits: Counter[str] = field(default_factory=Counter)


@dataclass
class Item:
    partnum: str
    complete: bool = False   # got both a price and a quantity
    repriced: bool = False   # its price changed after it was complete
    stalled: bool = False    # a bare item that will get at most one of price and quantity


XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
INSERTING = {"add_complete", "add_bare", "give_price", "give_quantity", "add_comment"}
REMOVING = {"remove_item", "remove_comment"}


class Document:
    """One document's current content and the items the generator knows about.

    With ``free=True`` items have no ``xml:id``, any item can be removed, and removals and
    insertions mix in one version (see ``--free-edits``).
    """

    def __init__(self, name: str, orders: int, rng: random.Random, counts: Counts,
                 serial: int, free: bool = False) -> None:
        self.name, self.rng, self.counts, self.free = name, rng, counts, free
        self.lines: Counter[str] = Counter()  # line numbers given per order
        self.version = -1
        self.partnums: set[str] = set()
        self.items: dict[str, Item] = {}
        self.root = etree.Element("orders", month="2026-11")
        for k in range(orders):
            self.root.append(self._order(f"PO-{serial:02d}{k + 1:02d}"))

    # --- building ----------------------------------------------------------------------------

    def _address(self, tag: str, person: tuple[str, ...]) -> etree._Element:
        el = etree.Element(tag, country="US")
        for name, value in zip(("name", "street", "city", "state", "zip"), person, strict=True):
            etree.SubElement(el, name).text = value
        return el

    def _order(self, order_id: str) -> etree._Element:
        rng = self.rng
        order = etree.Element("order", id=order_id, orderDate=f"2026-11-{rng.randint(1, 9):02d}",
                              status="open")
        person = rng.choice(PEOPLE)
        customer = etree.SubElement(order, "customer", number=str(rng.randint(10000, 99999)))
        customer.text = person[0]
        order.append(self._address("shipTo", person))
        order.append(self._address("billTo", rng.choice(PEOPLE) if rng.random() < 0.3
                                   else person))
        for _ in range(rng.randint(3, 5)):
            self._new_item(order, price=True, quantity=True, initial=True)
        return order

    def _partnum(self) -> str:
        while True:
            p = f"{self.rng.randint(100, 999)}-{self.rng.choice('ABCDEFGHJKLMNPRSTUVWXYZ')}" \
                f"{self.rng.choice('ABCDEFGHJKLMNPRSTUVWXYZ')}"
            if p not in self.partnums:
                self.partnums.add(p)
                return p

    def _price(self, base: float) -> str:
        return f"{base * self.rng.uniform(0.8, 1.25):.2f}"

    def _new_item(self, order: etree._Element, *, price: bool, quantity: bool,
                  initial: bool = False) -> Item:
        rng = self.rng
        name, base = rng.choice(PRODUCTS)
        item = Item(self._partnum())
        el = etree.SubElement(order, "item")
        if not self.free:  # the order's line number: stable, never reused
            self.lines[order.get("id")] += 1
            el.set(XML_ID, f"{order.get('id')}.{self.lines[order.get('id')]}")
        el.set("partnum", item.partnum)
        etree.SubElement(el, "productName").text = name
        if price:
            etree.SubElement(el, "price").text = self._price(base)
        if quantity:
            etree.SubElement(el, "quantity").text = str(rng.randint(1, 12))
        if price and quantity:
            item.complete = True
            self.counts.complete += 1
            if initial:
                self.counts.complete_v0 += 1
            if rng.random() < 0.2:
                etree.SubElement(el, "comment").text = rng.choice(COMMENTS)
        else:
            item.stalled = rng.random() < 0.4
            self.counts.bare += 1
        self.items[item.partnum] = item
        return item

    # --- looking up ----------------------------------------------------------------------------

    def orders(self) -> list[etree._Element]:
        return list(self.root.iter("order"))

    def item_elements(self) -> list[etree._Element]:
        return list(self.root.iter("item"))

    @staticmethod
    def _base(el: etree._Element) -> float:
        return dict(PRODUCTS)[el.findtext("productName")]

    # --- one version -----------------------------------------------------------------------------

    def edit(self) -> list[str]:
        """Make one to three edits, each on a different item or order; returns their kinds.

        A version that removes something inserts nothing, and the other way round."""
        rng = self.rng
        touched: set[str] = set()
        done: list[str] = []
        for _ in range(rng.choice((1, 1, 2, 2, 3))):
            for _attempt in range(20):
                kind = self._pick_kind()
                if not self.free and ((kind in INSERTING and REMOVING.intersection(done))
                                      or (kind in REMOVING and INSERTING.intersection(done))):
                    continue
                if getattr(self, "_" + kind)(touched):
                    done.append(kind)
                    break
        return done

    def _pick_kind(self) -> str:
        n = len(self.item_elements())
        per_order = n / len(self.orders())
        add = 2.0 if per_order < 5 else 1.0 if per_order < 9 else 0.3
        remove = 0.3 if per_order < 5 else 0.8 if per_order < 9 else 2.0
        kinds = {"add_complete": add, "add_bare": add, "give_price": 2.0,
                 "give_quantity": 2.0, "change_price": 2.2, "change_quantity": 1.8,
                 "remove_item": remove, "add_comment": 0.6, "remove_comment": 0.4,
                 "change_status": 0.6}
        names = list(kinds)
        return self.rng.choices(names, weights=[kinds[k] for k in names])[0]

    def _free(self, candidates: list[etree._Element], touched: set[str]
              ) -> etree._Element | None:
        """A random candidate not edited yet in this version (marked as edited now)."""
        free = [c for c in candidates if self._key(c) not in touched]
        if not free:
            return None
        el = self.rng.choice(free)
        touched.add(self._key(el))
        return el

    @staticmethod
    def _key(el: etree._Element) -> str:
        """An item's partnum or an order's id (lxml's proxies are no stable identity)."""
        return el.get("partnum") or el.get("id")  # type: ignore[no-any-return]

    def _add_complete(self, touched: set[str]) -> bool:
        order = self._free(self.orders(), touched)
        if order is None:
            return False
        self._new_item(order, price=True, quantity=True)
        touched.add(self._key(order[-1]))
        return True

    def _add_bare(self, touched: set[str]) -> bool:
        order = self._free(self.orders(), touched)
        if order is None:
            return False
        self._new_item(order, price=False, quantity=False)
        touched.add(self._key(order[-1]))
        return True

    def _give(self, touched: set[str], tag: str) -> bool:
        def wants(el: etree._Element) -> bool:
            item = self.items[el.get("partnum")]
            if el.find(tag) is not None:
                return False
            other = "quantity" if tag == "price" else "price"
            return not (item.stalled and el.find(other) is not None)
        el = self._free([e for e in self.item_elements() if wants(e)], touched)
        if el is None:
            return False
        child = etree.Element(tag)
        child.text = self._price(self._base(el)) if tag == "price" \
            else str(self.rng.randint(1, 12))
        # price right after productName; quantity after the price (or productName)
        anchor = el.find("price") if tag == "quantity" and el.find("price") is not None \
            else el.find("productName")
        anchor.addnext(child)
        item = self.items[el.get("partnum")]
        if el.find("price") is not None and el.find("quantity") is not None:
            item.complete = True
            self.counts.complete += 1
            self.counts.complete_later += 1
        return True

    def _give_price(self, touched: set[str]) -> bool:
        return self._give(touched, "price")

    def _give_quantity(self, touched: set[str]) -> bool:
        return self._give(touched, "quantity")

    def _change_price(self, touched: set[str]) -> bool:
        el = self._free([e for e in self.item_elements() if e.find("price") is not None],
                        touched)
        if el is None:
            return False
        price = el.find("price")
        old = float(price.text)
        new = old
        while f"{new:.2f}" == price.text:  # a sale, a correction, a surcharge
            new = old * self.rng.choice((0.85, 0.9, 0.95, 1.05, 1.1)) \
                if self.rng.random() < 0.7 else self.rng.uniform(0.8, 1.25) * self._base(el)
        price.text = f"{new:.2f}"
        self.counts.price_changes += 1
        item = self.items[el.get("partnum")]
        if item.complete and not item.repriced:
            item.repriced = True
            self.counts.repriced += 1
        return True

    def _change_quantity(self, touched: set[str]) -> bool:
        el = self._free([e for e in self.item_elements() if e.find("quantity") is not None],
                        touched)
        if el is None:
            return False
        qty = el.find("quantity")
        qty.text = str(self.rng.choice([q for q in range(1, 13) if str(q) != qty.text]))
        self.counts.quantity_changes += 1
        return True

    def _remove_item(self, touched: set[str]) -> bool:
        # the last item of an order (the customer drops what was added last); an order keeps
        # at least two items
        el = self._free([e for e in self.item_elements()
                         if len(e.getparent().findall("item")) > 2
                         and (self.free or e.getnext() is None)], touched)
        if el is None:
            return False
        el.getparent().remove(el)
        item = self.items.pop(el.get("partnum"))
        self.counts.removed += 1
        self.counts.removed_bare += not item.complete
        return True

    def _add_comment(self, touched: set[str]) -> bool:
        el = self._free([e for e in self.item_elements() if e.find("comment") is None], touched)
        if el is None:
            return False
        etree.SubElement(el, "comment").text = self.rng.choice(COMMENTS)
        return True

    def _remove_comment(self, touched: set[str]) -> bool:
        el = self._free([e for e in self.item_elements() if e.find("comment") is not None],
                        touched)
        if el is None:
            return False
        el.remove(el.find("comment"))
        return True

    def _change_status(self, touched: set[str]) -> bool:
        order = self._free(self.orders(), touched)
        if order is None:
            return False
        order.set("status", self.rng.choice([s for s in STATUSES if s != order.get("status")]))
        return True

    # --- output ----------------------------------------------------------------------------------

    def text(self, root: etree._Element | None = None) -> str:
        root = copy.deepcopy(self.root if root is None else root)
        etree.indent(root, space="  ")
        body = etree.tostring(root, encoding="unicode")
        return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


def truncated(text: str, rng: random.Random) -> str:
    """A write cut off part-way: in the middle of a price, past half the document."""
    cuts = [i + len("<price>") + 1 for i in range(len(text) // 2, len(text))
            if text.startswith("<price>", i)]
    return text[:rng.choice(cuts)]


def generate(seed: int = SEED, free: bool = False
             ) -> tuple[list[dict[str, object]], Counts]:
    """The version table's rows (ordered by time) and what the edits were."""
    rng = random.Random(seed)
    counts = Counts()
    docs = [Document(name, orders, rng, counts, serial=k + 1, free=free)
            for k, (name, orders, _share) in enumerate(DOCUMENTS)]
    weights = [share for _name, _orders, share in DOCUMENTS]
    rows: list[dict[str, object]] = []
    time = START

    def save(doc: Document, xml: str) -> None:
        doc.version += 1
        rows.append({"doc": doc.name, "version": doc.version, "time": time, "xml": xml})

    for doc in docs:
        save(doc, doc.text())
        time += rng.randint(60, 900)
    bad_session = int(SESSIONS * BAD_AT)
    bad_done = False
    for session in range(SESSIONS):
        # edit sessions come minutes to hours apart, overnight gaps on every 25th
        time += rng.randint(8 * 3600, 14 * 3600) if session % 25 == 24 else rng.randint(120, 5400)
        doc = rng.choices(docs, weights=weights)[0]
        if not bad_done and session >= bad_session and doc.name == BAD_DOC:
            # the application crashed while saving: the edits never reach a good version
            lost = copy.deepcopy(doc.root)
            saved_root, saved_items = doc.root, copy.deepcopy(doc.items)
            saved_counts = copy.deepcopy(counts)
            doc.root = lost
            doc.edit()
            xml = truncated(doc.text(), rng)
            doc.root, doc.items = saved_root, saved_items
            counts.__dict__.update(saved_counts.__dict__)
            save(doc, xml)
            bad_done = True
            continue
        for kind in doc.edit():
            counts.edits[kind] += 1
        save(doc, doc.text())
    for doc in docs:
        counts.never_complete += sum(not i.complete for i in doc.items.values())
    return rows, counts


def write(rows: list[dict[str, object]], out: Path) -> None:
    buf = io.BytesIO()
    # no file name and mtime 0 in the gzip header: the same bytes on every run
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        for row in rows:
            gz.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buf.getvalue())


def summary(rows: list[dict[str, object]], counts: Counts) -> str:
    """The counts the definitions of ``purchase_orders.xev`` must detect, and their sources."""
    per_doc = Counter(str(r["doc"]) for r in rows)
    c = counts
    added_complete = c.complete - c.complete_v0 - c.complete_later
    docs = ", ".join(f"{d} {n}" for d, n in sorted(per_doc.items()))
    edits = ", ".join(f"{k} {n}" for k, n in sorted(c.edits.items()))
    return "\n".join([
        f"{len(rows)} versions of {len(per_doc)} documents: {docs}",
        f"edits: {edits}",
        (f"ItemComplete  {c.complete}  (in version 0: {c.complete_v0}, added complete later: "
         f"{added_complete}, added bare and completed later: {c.complete_later}; bare items: "
         f"{c.bare}, removed before complete: {c.removed_bare}, still incomplete at the end: "
         f"{c.never_complete})"),
        (f"ValueChanged  {c.price_changes + c.quantity_changes}  (price changes: "
         f"{c.price_changes}, quantity changes: {c.quantity_changes})"),
        f"ItemRemoved   {c.removed}",
        f"ItemRepriced  {c.repriced}  (complete items whose price changed afterwards)",
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT,
                    help=f"the gzip JSON-lines file to write (default: {DEFAULT_OUT.name} here)")
    ap.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    ap.add_argument("--free-edits", action="store_true",
                    help="items without xml:id, removed anywhere, removals mixed with "
                         "insertions: the diff no longer recovers every edit (see the "
                         "module docstring)")
    args = ap.parse_args(argv)
    rows, counts = generate(args.seed, args.free_edits)
    write(rows, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    print(summary(rows, counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
