"""Subscriptions on watched documents: definitions, delivery order, cascades, batches, errors,
several documents, conditions on the live document, flush and close (issue 5)."""

from __future__ import annotations

import gc

import pytest
from lxml import etree

import xmlevents
from xmlevents import CascadeError, Monitor
from xmlevents.dom._registry import NODES

EI = "ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))"


def item(price: str | None = "5", quantity: str | None = "2", partnum: str = "1") -> etree._Element:
    """An item built outside any document, as an application would before inserting it."""
    e = etree.Element("item", partnum=partnum)
    if price is not None:
        etree.SubElement(e, "price").text = price
    if quantity is not None:
        etree.SubElement(e, "quantity").text = quantity
    return e


def recording(doc, key: str = "ItemComplete") -> list:
    seen: list = []
    doc.subscribe(key, lambda d, event: seen.append((d, event)))
    return seen


def test_purchase_order_total_is_recomputed_when_an_item_is_complete():
    """The README example: the paper's purchase order (seed 000, Example 10)."""
    doc = xmlevents.fromstring("<order><total>0</total></order>")
    doc.define(EI)

    @doc.subscribe("ItemComplete")
    def recompute(doc, event):
        order = doc.getroot()
        total = sum(float(i.findtext("price")) * int(i.findtext("quantity"))
                    for i in order.iter("item"))
        order.find("total").text = f"{total:.2f}"

    order = doc.getroot()
    order.append(item("2.50", "4"))
    assert order.findtext("total") == "10.00"
    half = etree.SubElement(order, "item")   # complete only once both children are in
    etree.SubElement(half, "price").text = "1.25"
    assert order.findtext("total") == "10.00"
    with doc.batch():
        etree.SubElement(half, "quantity").text = "2"
    assert order.findtext("total") == "12.50"


def test_receivers_run_after_the_whole_operation_with_the_document_as_sender():
    doc = xmlevents.fromstring("<order/>")
    doc.define(EI)
    seen = []

    @doc.subscribe("ItemComplete")
    def check(sender, event):
        # The whole append is applied: the quantity's text already exists.
        seen.append((sender, sender.getroot()[0].findtext("quantity"), event.to_dict()))

    doc.getroot().append(item())
    [(sender, quantity, d)] = seen
    assert sender is doc and quantity == "2"
    assert d["type"] == "ItemComplete" and d["path"] == "/order/item"
    assert d["doc"] == doc.name and len(d["events"]) == 3


def test_delivery_order_mutations_then_primitive_then_composite_per_tick():
    doc = xmlevents.fromstring("<order/>")
    doc.define(EI)
    calls: list[str] = []
    doc.mutations.connect(lambda d, event: calls.append(f"m{event.ts}"), weak=False)
    doc.subscribe("ins(item/quantity)", lambda d, event: calls.append(f"p{event.ts}"))
    doc.subscribe("ItemComplete", lambda d, event: calls.append(f"c{event.ts}"))
    doc.subscribe("ins(quantity)", lambda d, event: calls.append(f"q{event.ts}"))
    doc.getroot().append(item())
    # ts: 1 item, 2 @partnum, 3 price, 4 price text, 5 quantity, 6 quantity text
    assert calls == ["m1", "m2", "m3", "m4", "m5", "p5", "q5", "c5", "m6"]


def test_primitive_subscriptions_match_by_compatibility():
    doc = xmlevents.fromstring("<order><item><price>1</price></item></order>")
    ups = recording(doc, "upd(item/price/text())")
    anys = recording(doc, "*(price/text())")
    doc.getroot()[0][0].text = "2"
    doc.getroot()[0][0].text = None
    assert [(e.op.value, e.value, e.old) for _, e in ups] == [("upd", "2", "1")]
    assert [e.op.value for _, e in anys] == ["upd", "del"]


def test_subscribe_before_define_and_decorator_returns_the_function():
    doc = xmlevents.fromstring("<order/>")

    def fn(d, event):
        seen.append(event)

    seen: list = []
    assert doc.subscribe("ItemComplete", fn) is fn
    doc.define(EI)
    doc.getroot().append(item())
    assert len(seen) == 1
    doc.unsubscribe("ItemComplete", fn)
    doc.getroot().append(item())
    assert len(seen) == 1


def test_weak_receivers_go_away_with_their_owner():
    doc = xmlevents.fromstring("<order/>")
    doc.define(EI)
    seen: list = []

    class Owner:
        def on(self, d, event):
            seen.append(event)

    owner = Owner()
    doc.subscribe("ItemComplete", owner.on, weak=True)
    doc.getroot().append(item())
    del owner
    gc.collect()
    doc.getroot().append(item())
    assert len(seen) == 1


def test_a_receiver_that_raises_does_not_stop_the_others_nor_break_the_graph():
    doc = xmlevents.fromstring("<order/>")
    doc.define(EI)
    seen: list = []

    def bad(d, event):
        raise RuntimeError("receiver failed")

    doc.subscribe("ItemComplete", bad)
    doc.subscribe("ItemComplete", lambda d, event: seen.append(event.pi))
    with pytest.raises(RuntimeError, match="receiver failed"):
        doc.getroot().append(item())
    assert len(doc.getroot()) == 1  # the edit stands
    assert len(seen) == 1
    with pytest.raises(RuntimeError):
        doc.getroot().append(item())
    assert len(seen) == 2  # detection went on with a whole graph


def test_several_failing_receivers_raise_an_exception_group():
    doc = xmlevents.fromstring("<order/>")
    doc.define(EI)
    for message in ("one", "two"):
        def bad(d, event, message=message):
            raise ValueError(message)
        doc.subscribe("ItemComplete", bad)
    with pytest.raises(ExceptionGroup) as info:
        doc.getroot().append(item())
    assert sorted(str(e) for e in info.value.exceptions) == ["one", "two"]


def test_cascade_events_are_processed_after_the_current_ones():
    doc = xmlevents.fromstring("<order><count>0</count></order>")
    doc.define(EI)
    order = doc.getroot()
    calls: list[str] = []

    @doc.subscribe("ItemComplete")
    def count(d, event):
        calls.append(f"complete {event.ts}")
        counter = order.find("count")
        counter.text = str(int(counter.text) + 1)

    doc.subscribe("upd(count/text())", lambda d, event: calls.append(f"count {event.value}"))
    order.append(item())
    assert order.findtext("count") == "1"
    assert calls == ["complete 5", "count 1"]


def test_a_runaway_rule_loop_ends_with_a_cascade_error():
    m = Monitor(cascade_limit=10)
    doc = xmlevents.fromstring("<order><n>0</n></order>", monitor=m)
    rounds: list[int] = []

    @doc.subscribe("upd(n/text())")
    def again(d, event):
        rounds.append(int(event.value))
        d.getroot()[0].text = str(int(event.value) + 1)

    with pytest.raises(CascadeError, match="cascade_limit"):
        doc.getroot()[0].text = "1"
    assert rounds == list(range(1, 11))
    assert doc.getroot()[0].text == "11"  # the last change was made, its callback dropped
    rounds.clear()
    doc.unsubscribe("upd(n/text())", again)
    doc.getroot()[0].text = "0"  # the monitor works on
    assert rounds == []


def test_batch_defers_receivers_but_not_detection():
    doc = xmlevents.fromstring("<order/>")
    doc.define(EI)
    seen = recording(doc)
    with doc.batch():
        doc.getroot().append(item())
        assert seen == []
        assert doc.monitor.graph.last_ts == 6
        doc.getroot().append(item(partnum="2"))
    assert [e.pi.ids[1] for _, e in seen] == [doc.id_of(i) for i in doc.getroot()]


def test_one_monitor_watches_several_documents_whose_events_never_combine():
    m = Monitor(EI)
    a = xmlevents.fromstring("<order/>", monitor=m, name="a")
    b = xmlevents.fromstring("<order/>", monitor=m, name="b")
    everything: list = []
    m.subscribe("ItemComplete", lambda d, event: everything.append((d.name, event.doc)))
    only_b = recording(b)
    # An item in a, its price and quantity in b under an item with the same ids' shape.
    ia = etree.SubElement(a.getroot(), "item")
    ib = etree.SubElement(b.getroot(), "item")
    etree.SubElement(ib, "price")
    etree.SubElement(ia, "quantity")
    assert everything == []  # each document lacks one part
    etree.SubElement(ia, "price")
    assert everything == [("a", "a")]
    etree.SubElement(ib, "quantity")
    assert everything == [("a", "a"), ("b", "b")]
    assert [d.name for d, _ in only_b] == ["b"]
    with pytest.raises(ValueError, match="already watched"):
        xmlevents.fromstring("<x/>", monitor=m, name="a")


def test_termination_conditions_see_the_live_document():
    """Example 18 (section 3.3) on a watched document: values decide, not operations."""
    doc = xmlevents.fromstring("<order/>")
    doc.define('Ei := (ins(item) ; (ins(item/price) & ins(item/quantity))) '
               'with when="price >= 0 and quantity > 0"')
    seen = recording(doc, "Ei")
    it = etree.SubElement(doc.getroot(), "item")
    price = etree.SubElement(it, "price")
    quantity = etree.SubElement(it, "quantity")
    price.text = "abc"
    assert seen == []
    price.text = "3"
    quantity.text = "0"
    assert seen == []
    quantity.text = "2"
    assert [str(e.pi.pt) for _, e in seen] == ["/order/item"]


def test_flush_raises_what_non_local_operators_hold_and_close_releases_the_nodes():
    doc = xmlevents.fromstring("<order/>")
    doc.define("Eh := (ins(item/price) & [1,*] ins(item/quantity)) with mode=non-local")
    seen = recording(doc, "Eh")
    it = etree.SubElement(doc.getroot(), "item")
    etree.SubElement(it, "price")
    etree.SubElement(it, "quantity")
    etree.SubElement(it, "quantity")
    assert seen == []
    raised = doc.flush()
    assert len(raised) == 1 and len(seen) == 1
    assert len(raised[0].primitives()) == 3
    nodes = len(doc.by_id)
    before = len(NODES)
    doc.close()
    assert doc.closed and len(NODES) == before - nodes
    doc.getroot().append(item())  # plain lxml now: no events, no error
    assert len(seen) == 1


def test_changes_made_with_lxml_functions_bound_before_import_are_reported_at_flush():
    from xmlevents.dom._functions import _LXML

    doc = xmlevents.fromstring("<order><item><b>x</b>y</item></order>")
    log: list = []
    doc.mutations.connect(lambda d, event: log.append(event), weak=False)
    _LXML["strip_tags"](doc.getroot(), "b")
    assert log == []
    doc.flush()
    # b's tail is a text node of item; b goes, its text and tail merge into item's text
    assert [(e.op.value, str(e.pi.pt), e.value, e.old) for e in log] == [
        ("del", "/order/item/text()", None, "y"),
        ("del", "/order/item/b/text()", None, "x"),
        ("del", "/order/item/b", None, None),
        ("ins", "/order/item/text()", "xy", None),
    ]


def test_define_errors_keep_the_previous_definitions():
    doc = xmlevents.fromstring("<order/>")
    doc.define(EI)
    with pytest.raises(xmlevents.XmlEventsError):
        doc.define("Bad := ins(item) ;")
    assert doc.monitor.definitions.names == ("ItemComplete",)


def test_events_are_built_only_for_listeners():
    doc = xmlevents.fromstring("<order/>")
    doc.getroot().append(item())
    assert doc.monitor.graph is None and not doc.listening()
    with doc.record() as rec:
        doc.getroot()[0].set("partnum", "9")
    assert [(e.op.value, str(e.pi.pt)) for e in rec.events] == [("upd", "/order/item/@partnum")]
    assert etree.tostring(rec.replay()) == etree.tostring(doc.tree)


def test_a_single_event_definition_detects_through_a_subscription():
    """``Removed := del(item)`` raises one composite per deleted item (issue 14); an alias
    another definition references detects once it is subscribed to, even before it exists."""
    doc = xmlevents.fromstring("<order><item/><item/><note/></order>")
    early = recording(doc, "Priced")  # subscribed before it is defined
    doc.define("Removed := del(item)\nPriced := ins(item/price)\n" + EI.replace(
        "ins(item/price)", "Priced"))
    removed = recording(doc, "Removed")
    order = doc.getroot()
    for it in order.findall("item"):
        order.remove(it)
    order.remove(order.find("note"))
    assert [e.type.name for _, e in removed] == ["Removed", "Removed"]
    assert len({e.pi.ids for _, e in removed}) == 2
    order.append(item())
    assert [e.type.name for _, e in early] == ["Priced"]


def test_a_single_event_definition_delivers_what_changed():
    """``Repriced := upd(item/price/text())``: the natural callback asks the event for the
    old and the new price (issue 30, item 3): a composite of one primitive answers with that
    primitive's op, value and old; a composite of several says it has no one value."""
    doc = xmlevents.fromstring("<order><item><price>5</price><quantity>2</quantity></item>"
                               "</order>")
    doc.define("Repriced := upd(item/price/text())")
    doc.define(EI)
    changes: list = []

    @doc.subscribe("Repriced")
    def repriced(doc, event):
        changes.append((event.op.value, event.old, event.value, event.sole().pi.ids))

    doc.getroot().find("item/price").text = "6"
    assert [c[:3] for c in changes] == [("upd", "5", "6")]
    complete = recording(doc)
    doc.getroot().append(item("1", "1"))
    event = complete[0][1]
    assert len(event.primitives()) == 3
    with pytest.raises(AttributeError, match="ItemComplete is a composite of 3 primitive "
                                             "events, so it has no one old"):
        _ = event.old
