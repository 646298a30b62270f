"""The registry of watched nodes stays bounded: 2·10^4 insertions and removals leak nothing.

Every node of an open watched document has a record in ``xmlevents.dom._registry.NODES`` (which
keeps its lxml proxy alive) and an entry in ``doc.by_id``. A node that leaves the document, by
any API, must lose both, or a long-running document grows without bound. Closing a document
releases all of its records.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from contextlib import nullcontext
from typing import Any

import pytest
from lxml import etree

import xmlevents
from xmlevents.dom import _ops
from xmlevents.dom._functions import _LXML
from xmlevents.dom._registry import NODES

# 2·10^4 rounds: the second half's 10^4 under tracemalloc. What they may leave allocated is
# a fixed amount (caches, and ~0.6 MB under coverage), not a share per round: a leak of 100
# bytes a round (less than one node's record or proxy) already exceeds it.
N = 20_000
RETAINED = 1_000_000
START = '<r a="1"><box/>tail<keep x="y">t<!--c--><?pi d?></keep></r>'


def _records_of(doc: Any) -> int:
    return sum(1 for r in NODES.values() if r.doc is doc)


def _listen(doc: Any, listener: str) -> list[int]:
    """Attach what makes the document build events (a mutations receiver and a subscriber);
    returns the counts of their calls."""
    calls = [0, 0]

    def mutation(sender: Any, event: Any) -> None:
        calls[0] += 1

    def subscribed(sender: Any, event: Any) -> None:
        calls[1] += 1

    if listener == "listening":
        doc.mutations.connect(mutation, weak=False)
        doc.subscribe("ins(box/item)", subscribed)
    else:
        assert listener == "none"
    return calls


def _new_item(box: Any, i: int) -> Any:
    """An item (an attribute, a child with text) put at the end of ``box``, made in turns by
    building it elsewhere and appending it, by ``xmlevents.SubElement``, and by lxml's own
    ``SubElement`` (caught when the next operation starts)."""
    way = i % 3
    if way == 0:
        item = etree.Element("item", a=str(i))
        etree.SubElement(item, "child").text = "c"
        box.append(item)
    elif way == 1:
        item = xmlevents.SubElement(box, "item", {"a": str(i)})
        xmlevents.SubElement(item, "child").text = "c"
    else:
        item = _LXML["SubElement"](box, "item", {"a": str(i)})
        child = _LXML["SubElement"](item, "child")
        child.text = "c"
    return item


def _remove_item(box: Any, item: Any, scratch: Any, i: int) -> None:
    """Take the item out again: ``remove``, ``del box[-1]``, ``clear`` of its parent, or a move
    to an unwatched tree (emptied at once, so that only the registry could keep it)."""
    way = (i // 3) % 4  # every way of removing meets every way of making
    if way == 0:
        box.remove(item)
    elif way == 1:
        del box[-1]
    elif way == 2:
        box.clear(keep_tail=True)
    else:
        scratch.append(item)
        scratch.clear()


def _churn(doc: Any, start: int, stop: int) -> None:
    box = doc.getroot()[0]
    scratch = etree.Element("scratch")
    for i in range(start, stop):
        item = _new_item(box, i)
        _remove_item(box, item, scratch, i)
        assert len(box) == 0
    del item, box, scratch


# With events built, the run takes ~20 s (most of it under tracemalloc): marked slow.
@pytest.mark.slow
@pytest.mark.parametrize("listener", ["none", "listening"])
def test_insert_remove_churn_keeps_registry_bounded(listener: str) -> None:
    """2·10^4 times: put an item in and take it out again, by every API; the registry and
    ``by_id`` end where they began and the second half leaves (almost) nothing allocated."""
    base_nodes = len(NODES)
    doc = xmlevents.fromstring(START)
    try:
        root = doc.getroot()
        calls = _listen(doc, listener)
        assert doc.listening() is (listener != "none")
        nodes_before, ids_before = len(NODES), len(doc.by_id)
        assert nodes_before == base_nodes + len(list(root.iter())) == base_nodes + ids_before
        before = etree.tostring(doc.tree)

        _churn(doc, 0, N // 2)
        gc.collect()
        assert (len(NODES), len(doc.by_id)) == (nodes_before, ids_before)

        # the second half under tracemalloc: what it leaves allocated is what leaks
        tracemalloc.start()
        try:
            gc.collect()
            start_mem = tracemalloc.get_traced_memory()[0]
            _churn(doc, N // 2, N)
            gc.collect()
            growth = tracemalloc.get_traced_memory()[0] - start_mem
        finally:
            tracemalloc.stop()
        assert growth < RETAINED, (
            f"{growth} bytes retained by {N // 2} insert/remove rounds")

        assert (len(NODES), len(doc.by_id)) == (nodes_before, ids_before)
        assert _records_of(doc) == ids_before
        assert not _ops.state.strays
        assert etree.tostring(doc.tree) == before
        # every item was built: the receivers saw them all
        if listener == "listening":
            assert calls[0] == 8 * N  # ins and del of item, @a, child, child's text() a round
            assert calls[1] == N
        else:
            assert calls == [0, 0]

        # what remains in the document is exactly what the registry adds
        kept = xmlevents.SubElement(root[0], "item", {"a": "kept"})
        xmlevents.SubElement(kept, "child").text = "c"
        assert len(NODES) == nodes_before + 2
        assert len(doc.by_id) == ids_before + 2
        live = list(root.iter())
        assert sorted(doc.by_id) == sorted(doc.id_of(e) for e in live)
        assert all(doc.by_id[doc.id_of(e)] is e for e in live)
    finally:
        doc.close()
    assert len(NODES) == base_nodes
    assert _records_of(doc) == 0


@pytest.mark.parametrize("listener", ["none", "listening"])
def test_close_releases_every_node(listener: str) -> None:
    base_nodes = len(NODES)
    doc = xmlevents.fromstring(START)
    _listen(doc, listener)
    with doc.record() if listener != "none" else nullcontext():
        _churn(doc, 0, 1_000)
    root = doc.getroot()
    # nodes added by every API, moved, renamed; some left behind unreported until close
    box, keep = root[0], root[1]
    box.append(keep)
    xmlevents.SubElement(box, "new", {"b": "2"}).text = "t"
    _LXML["SubElement"](keep, "stray")  # reported when the document is flushed or closed
    keep.tag = "kept"
    nodes = list(root.iter())
    assert len(NODES) > base_nodes
    doc.close()
    assert doc.closed
    assert not any(e in NODES for e in nodes), "closed document's nodes still registered"
    assert _records_of(doc) == 0
    assert doc.by_id == {}
    assert len(NODES) == base_nodes
    assert not _ops.state.strays
    # the tree is left to lxml: changes are no longer tracked
    root.append(etree.Element("after"))
    assert len(NODES) == base_nodes and doc.id_of(root) is None


def test_closing_one_of_two_documents_releases_only_its_nodes() -> None:
    base_nodes = len(NODES)
    one = xmlevents.fromstring(START, name="one")
    two = xmlevents.fromstring(START, name="two", monitor=one.monitor)
    n_two = len(two.by_id)
    # an element moved from one to two belongs to two alone
    two.getroot().append(one.getroot()[1])
    moved = len(list(two.getroot()[-1].iter()))
    assert _records_of(two) == n_two + moved == len(two.by_id)
    one.close()
    assert _records_of(one) == 0 and one.by_id == {}
    assert len(NODES) == base_nodes + len(two.by_id)
    assert all(two.id_of(e) is not None for e in two.getroot().iter())
    two.close()
    assert len(NODES) == base_nodes


def test_dropping_a_removed_subtree_frees_it() -> None:
    """A removed item is not kept alive by the registry: once the caller lets go, it is gone."""
    doc = xmlevents.fromstring(START)
    try:
        doc.mutations.connect(lambda sender, event: None, weak=False)
        box = doc.getroot()[0]
        item = xmlevents.SubElement(box, "item", {"a": "1"})
        child = xmlevents.SubElement(item, "child")
        refs = [weakref.ref(item), weakref.ref(child)]
        box.remove(item)
        assert item not in NODES and child not in NODES
        del item, child
        gc.collect()
        assert all(r() is None for r in refs)
    finally:
        doc.close()
