"""Report changes made behind the wrapper's back by comparing the records with the live tree.

lxml's module-level functions (``etree.strip_tags``, ``strip_elements``, ``indent``, ...) change
trees without calling element methods. The records hold the document as last reported, so the
difference between them and the live tree is exactly what was not reported: it becomes events
here — the xmlevents versions of those functions resync right away, and every flush and close
resyncs, so nothing is lost (issue 5).

The events: first the removals — of attributes, texts and tails of nodes still in place, then
of every node that is gone or has a new path, deepest first — then the updates of values, then
the insertions in document order. A node that moved keeps its ids, like a move made through
the element methods. (The records do not keep sibling order, so removals are ordered by depth
rather than in the exact reverse of document order.)
"""

from __future__ import annotations

from typing import Any

from xmlevents.algebra import Axis, Op

from . import _ops
from ._namespaces import repair_namespaces
from ._ops import begin, end, ins_tree
from ._registry import NODES, Node, attribute_values, child_pi, node_step, own_value, tail_pi

__all__ = ["resync"]


def resync(doc: Any) -> None:
    """Report every difference between ``doc``'s records and its live tree."""
    root = doc.tree.getroot()
    begin()
    try:
        _resync(doc, root)
    finally:
        end()


def _resync(doc: Any, root: Any) -> None:
    live = list(root.iter()) if root is not None else []
    present = set(live)
    changed: set[Any] = set()  # nodes that are new or have a new path
    for e in live:
        rec = NODES.get(e)
        if rec is None or rec.doc is not doc:
            changed.add(e)
            continue
        parent = e.getparent()
        if parent is None:
            ok = len(rec.pi.ids) == 1
        else:
            prec = NODES.get(parent)
            ok = (parent not in changed and prec is not None and prec.doc is doc
                  and rec.pi.ids[:-1] == prec.pi.ids)
        last = rec.pi.pt.last
        if not ok or (last.axis, last.name) != node_step(e):
            changed.add(e)
    for e in live:
        if e in changed and (e.getparent() is None or e.getparent() not in changed):
            # Moved behind the wrapper's back (``strip_tags`` lifts children out as lxml
            # moves them): a prefix may be left shadowed (issue 16, item 7). Put right
            # before anything is read; names do not change, so ``changed`` holds.
            repair_namespaces(e)
    gone = [e for e in doc.by_id.values()
            if e not in present and (r := NODES.get(e)) is not None and r.doc is doc]
    out = _ops.state.out if doc.listening() else None

    # removals: leaves of nodes in place, then whole nodes, deepest first
    stayed = [e for e in live if e not in changed]
    for e in stayed:
        rec = NODES[e]
        if rec.tail_id is not None and e.tail is None:
            _emit(out, doc, Op.DEL, tail_pi(rec), None, rec.tail)
            rec.tail_id = rec.tail = None
        if type(e.tag) is str:
            if rec.text_id is not None and e.text is None:
                _emit(out, doc, Op.DEL, child_pi(rec.pi, Axis.TEXT, None, rec.text_id), None,
                      rec.text)
                rec.text_id = rec.text = None
            for name in reversed(_lost(rec, e)):
                aid, old = rec.attrs.pop(name)
                _emit(out, doc, Op.DEL, child_pi(rec.pi, Axis.ATTRIBUTE, name, aid), None, old)
    moved = [e for e in live if e in changed and NODES.get(e) is not None
             and NODES[e].doc is doc]
    for e in sorted(moved + gone, key=lambda x: -len(NODES[x].pi.ids)):
        _remove_own(out, doc, NODES[e])
    for e in gone:
        rec = NODES.pop(e)
        doc.by_id.pop(rec.id, None)
    for e in moved:
        _prune(NODES[e], e)

    # updates of values that stayed
    for e in stayed:
        rec = NODES[e]
        if rec.tail_id is not None and e.tail != rec.tail:
            _emit(out, doc, Op.UPD, tail_pi(rec), e.tail, rec.tail)
            rec.tail = e.tail
        if type(e.tag) is not str:
            value = own_value(e)
            if value != rec.text:
                _emit(out, doc, Op.UPD, rec.pi, value, rec.text)
                rec.text = value
            continue
        if rec.text_id is not None and e.text != rec.text:
            _emit(out, doc, Op.UPD, child_pi(rec.pi, Axis.TEXT, None, rec.text_id), e.text,
                  rec.text)
            rec.text = e.text
        values = attribute_values(e) if rec.attrs else {}  # not e.get: quadratic
        attrs = rec.attrs
        for name, a in attrs.items():
            now: Any = values.get(name)
            if now != a[1]:
                _emit(out, doc, Op.UPD, child_pi(rec.pi, Axis.ATTRIBUTE, name, a[0]), now, a[1])
                attrs[name] = (a[0], now)

    # insertions, in document order; registering the tree counts every node's children again
    if (root is not None and changed) or any(_has_new(NODES[e], e) for e in stayed):
        ins_tree(doc, root, None, -1, False, stayed=set(stayed))
    elif gone:
        # Only removals: the nodes left lost children the counts still hold.
        for e in stayed:
            NODES[e].n_children = len(e)


def _emit(out: list[Any] | None, doc: Any, op: Op, pi: Any, value: str | None,
          old: str | None) -> None:
    if out is not None:
        out.append((doc, op, pi, value, old, None, False))


def _remove_own(out: list[Any] | None, doc: Any, rec: Node) -> None:
    """The removal of one node's own tail, text, attributes and itself (children apart)."""
    if rec.tail_id is not None:
        _emit(out, doc, Op.DEL, tail_pi(rec), None, rec.tail)
    if rec.text_id is not None:
        _emit(out, doc, Op.DEL, child_pi(rec.pi, Axis.TEXT, None, rec.text_id), None,
              rec.text)
    for name in reversed(list(rec.attrs)):
        aid, old = rec.attrs[name]
        _emit(out, doc, Op.DEL, child_pi(rec.pi, Axis.ATTRIBUTE, name, aid), None, old)
    is_element = rec.pi.pt.last.axis is Axis.CHILD
    _emit(out, doc, Op.DEL, rec.pi, None, None if is_element else rec.text)


def _prune(rec: Node, e: Any) -> None:
    """Forget the ids of a moved node's leaves that are gone; the others move with it."""
    if e.tail is None:
        rec.tail_id = rec.tail = None
    if type(e.tag) is str:
        if e.text is None:
            rec.text_id = rec.text = None
        for name in _lost(rec, e):
            del rec.attrs[name]


def _lost(rec: Node, e: Any) -> list[str]:
    """The recorded attributes element ``e`` no longer has, in the records' order.

    Asked of the set of its names (one walk of libxml2's attribute list), not of ``e.get``,
    which walks the list per name: a snapshot of a 20,000-attribute element took 1.1 s
    (issue 16, item 4)."""
    attrs = rec.attrs
    if not attrs:
        return []
    live = set(e.keys())
    return [n for n in attrs if n not in live]


def _has_new(rec: Node, e: Any) -> bool:
    """Whether a node in place gained an attribute, a text or a tail."""
    if rec.tail_id is None and e.tail is not None:
        return True
    if type(e.tag) is not str:
        return False
    return (rec.text_id is None and e.text is not None) or any(
        n not in rec.attrs for n in e.keys())  # noqa: SIM118 (attribute names, not children)
