"""Operations on watched documents: their extent, and the events they emit (DESIGN 5).

Every mutating method of a watched element runs as an *operation*: lxml's own method does the
change first (so a call lxml refuses changes nothing and reports nothing), then the operation
reports it from the registry's records (the state before) and the live tree (the state after).
Operations nest: the methods of the wrapper call each other, and everything a top-level call
causes is one batch of events, handed to the documents' monitors when it ends; receivers
therefore never run in the middle of an lxml call (issue 5).

Within one operation the removals come first, each removed subtree in the exact reverse of
document order, then the insertions in their final document order; ids survive moves within a
document, never a removal followed by a later insertion.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any, ClassVar

from xmlevents._foundation.subscriptions import raise_collected
from xmlevents.algebra import Axis, Op

from ._errors import WatchError, WatchTypeError
from ._namespaces import repair_namespaces
from ._registry import (
    ATTR,
    NODE,
    NODES,
    TEXT,
    Node,
    attribute_items,
    child_pi,
    declarations,
    node_step,
    own_value,
    preorder,
    tail_pi,
)

__all__ = ["begin", "end", "settle", "ins_tree", "remove_tree", "state", "report_text",
           "report_tail", "report_attr", "structural", "position"]

INS, UPD, DEL = Op.INS, Op.UPD, Op.DEL

# A raw event: (document, op, path instance, value, old, index, moved); the monitor numbers
# it. ``moved``: a removal or insertion of a node that keeps its id (a move, a rename).
Raw = tuple[Any, Op, Any, "str | None", "str | None", "int | None", bool]


class _State:
    """The operation in progress (one per process: lxml trees are not thread-safe either)."""

    depth = 0
    out: ClassVar[list[Raw]] = []
    # Elements etree.SubElement created under watched parents, reported when the next
    # operation starts (see WatchedElement._init).
    strays: ClassVar[list[Any]] = []
    in_init = False


state = _State


def begin() -> list[Raw]:
    """Enter an operation; the outermost one first reports elements created behind our back."""
    s = _State
    s.depth += 1
    if s.depth == 1:
        s.out = []
        if s.strays:
            _absorb()
    return s.out


def end() -> None:
    """Leave an operation; the outermost one hands its events to the monitors."""
    s = _State
    s.depth -= 1
    if s.depth == 0 and s.out:
        raw, s.out = s.out, []
        dispatch(raw)


def settle() -> None:
    """Report elements created behind our back before an operation looks anything up (they
    may be the very nodes it changes): their insertions come first, as an operation of their
    own."""
    if _State.strays and not _State.depth:
        begin()
        end()


def dispatch(raw: list[Raw]) -> None:
    """Give each monitor its documents' events, in order (a move may span two monitors)."""
    first = raw[0][0].monitor
    if all(r[0].monitor is first for r in raw):
        first.take(raw)
        return
    monitors: dict[int, tuple[Any, list[Raw]]] = {}
    for r in raw:
        m = r[0].monitor
        monitors.setdefault(id(m), (m, []))[1].append(r)
    errors: list[BaseException] = []
    for m, events in monitors.values():
        try:
            m.take(events)
        except BaseException as exc:  # every monitor gets its events before anything goes
            errors.append(exc)
    raise_collected(errors)


def _absorb() -> None:
    strays, _State.strays = _State.strays, []
    for e in strays:
        if e in NODES:
            continue
        parent = e.getparent()
        rec = NODES.get(parent) if parent is not None else None
        if rec is not None:
            rec.n_children += 1
            # Strays are absorbed one by one, so a later one may already follow this one and
            # the count does not place it: lxml's walk does (a path behind the wrapper's back).
            ins_tree(rec.doc, e, rec, parent.index(e) if rec.doc.listening() else -1, True)


# --- subtrees --------------------------------------------------------------------------------

def _nsdecl(e: Any) -> str | None:
    """The namespace declarations ``e`` makes as an element insertion's value, or None."""
    own = declarations(e)
    if not own:
        return None
    return " ".join(f'xmlns="{u}"' if p is None else f'xmlns:{p}="{u}"' for p, u in own.items())


def ins_tree(doc: Any, el: Any, parent: Node | None, index: int, with_tail: bool,
             stayed: Any = None) -> None:
    """Register ``el``'s subtree in ``doc`` and report its insertion at ``index``.

    Nodes that already have records of ``doc`` (a move within it, a rename) keep their ids,
    and their insertions say they were moved. Nodes in ``stayed`` (a resync) are only
    registered; of them, only attributes and texts new to the records are reported.
    """
    out = _State.out if doc.listening() else None
    new_id = doc.new_id
    by_id = doc.by_id
    for kind, e, _, k in preorder(el, with_tail, False, index, attributes=False):
        quiet = stayed is not None and e in stayed
        if kind is NODE:
            rec = NODES.get(e)
            moved = rec is not None and rec.doc is doc
            if rec is None or rec.doc is not doc:
                if rec is not None:  # never two documents claiming one node
                    rec.doc.by_id.pop(rec.id, None)
                rec = Node(doc, new_id())
                NODES[e] = rec
                by_id[rec.id] = e
            elif e is el and with_tail and e.tail is None:
                rec.tail_id = rec.tail = None  # moved without its tail (lxml drops it at times)
            p = parent if e is el else NODES[e.getparent()]
            # Children are visited in order after their parent: the last one's index + 1 is
            # the parent's count (el's own parent is counted by the caller).
            rec.n_children = 0
            if e is not el:
                p.n_children = k + 1  # type: ignore[union-attr]  # below el, a parent is registered
            axis, tag = node_step(e)
            rec.pi = child_pi(p.pi if p is not None else None, axis, tag, rec.id)
            if axis is Axis.CHILD:
                value = _nsdecl(e) if out is not None and not quiet else None
            else:
                value = rec.text = own_value(e)
            if out is not None and not quiet:
                out.append((doc, INS, rec.pi, value, None, k if k >= 0 else None, moved))
            if axis is Axis.CHILD:
                _ins_attributes(doc, e, rec, out, quiet)
            continue
        rec = NODES[e]
        if kind is TEXT:
            moved = rec.text_id is not None
            if not moved:
                rec.text_id = new_id()
                quiet = False
            value = rec.text = e.text
            if out is not None and not quiet:
                out.append((doc, INS, child_pi(rec.pi, Axis.TEXT, None, rec.text_id), value,  # type: ignore[arg-type]  # set just above
                            None, 0, moved))
        else:
            moved = rec.tail_id is not None
            if not moved:
                rec.tail_id = new_id()
                quiet = False
            rec.tail = e.tail
            if out is not None and not quiet:
                out.append((doc, INS, tail_pi(rec), rec.tail, None, k, moved))


def _ins_attributes(doc: Any, e: Any, rec: Node, out: list[Raw] | None, quiet: bool) -> None:
    """Register and report element ``e``'s attributes, in lxml's order, right after ``e``.

    Their values are read in one pass (``e.get(name)`` searches libxml2's attribute list:
    quadratic over many attributes). An element with no recorded attribute — a new one, as
    every element of a parsed document is — takes them in one batch: ids, records and events
    without a Python call per attribute (parsing 100,000 attributes: 6-7x lxml -> 2.5-3.9x,
    issue 16).
    """
    names, values = attribute_items(e)
    if not names:
        return
    attrs = rec.attrs
    if not attrs:  # all new: new ids in order, all reported (a resync's too)
        ids = doc.new_ids(len(names))
        rec.attrs = dict(zip(names, zip(ids, values, strict=True), strict=True))
        if out is not None:
            pi = rec.pi
            out.extend((doc, INS, child_pi(pi, Axis.ATTRIBUTE, name, ident), value, None,
                        None, False) for name, ident, value in zip(names, ids, values, strict=True))
        return
    for name, value in zip(names, values, strict=True):
        a = attrs.get(name)
        if a is None:
            ident = doc.new_id()
            loud = True
        else:
            ident = a[0]
            loud = not quiet
        attrs[name] = (ident, value)
        if out is not None and loud:
            out.append((doc, INS, child_pi(rec.pi, Axis.ATTRIBUTE, name, ident), value, None,
                        None, a is not None))


def remove_tree(el: Any, with_tail: bool, keep: Any = None) -> None:
    """Report the removal of ``el``'s subtree (from the records: the state before).

    The records are forgotten unless the subtree stays in document ``keep`` (a move within
    it, a rename), whose insertion then reuses them: then the removals say they were moved
    (but for a tail of ``el`` that lxml dropped in the move: that one is gone).
    """
    rec = NODES[el]
    doc = rec.doc
    if doc.listening():
        out = _State.out
        moved = keep is doc
        items = list(preorder(el, with_tail, True))
        for kind, e, name, _ in reversed(items):
            r = NODES[e]
            if kind is NODE:
                out.append((doc, DEL, r.pi, None, r.text if type(e.tag) is not str else None,
                            None, moved))
            elif kind is ATTR:
                aid, old = r.attrs[name]
                out.append((doc, DEL, child_pi(r.pi, Axis.ATTRIBUTE, name, aid), None, old,
                            None, moved))
            elif kind is TEXT:
                out.append((doc, DEL, child_pi(r.pi, Axis.TEXT, None, r.text_id), None,  # type: ignore[arg-type]  # a text reported has an id
                            r.text, None, moved))
            else:
                out.append((doc, DEL, tail_pi(r), None, r.tail, None,
                            moved and (e is not el or e.tail is not None)))
    if keep is not doc:
        forget(el)


def forget(el: Any) -> None:
    """Drop the records of ``el``'s subtree: its ids are never used again."""
    pop = NODES.pop
    for e in el.iter():
        rec = pop(e, None)
        if rec is not None:
            rec.doc.by_id.pop(rec.id, None)


# --- leaves ----------------------------------------------------------------------------------

def _change(old: str | None, value: str | None) -> Op:
    """The operation that takes a node's value from ``old`` to ``value`` (None: no node)."""
    return INS if old is None else DEL if value is None else UPD


def report_text(rec: Node, value: str | None) -> None:
    """The element's ``.text`` became ``value``: ins, upd or del of its text node."""
    old = rec.text
    if value == old:
        return
    doc = rec.doc
    op = _change(old, value)
    if op is INS:
        rec.text_id = doc.new_id()
    rec.text = value
    tid = rec.text_id
    if value is None:
        rec.text_id = None
    if doc.listening():
        _State.out.append((doc, op, child_pi(rec.pi, Axis.TEXT, None, tid), value, old,  # type: ignore[arg-type]  # a text reported has an id
                           0 if op is INS else None, False))


def report_tail(rec: Node, e: Any, value: str | None) -> None:
    """The node's ``.tail`` became ``value``: ins, upd or del of a text node of its parent."""
    old = rec.tail
    if value == old:
        return
    doc = rec.doc
    op = _change(old, value)
    if op is INS:
        rec.tail_id = doc.new_id()
    rec.tail = value
    if doc.listening():
        if op is INS:
            parent = e.getparent()
            index: int | None = position(NODES[parent], parent, e) + 1
        else:
            index = None
        _State.out.append((doc, op, tail_pi(rec), value, old, index, False))
    if value is None:
        rec.tail_id = None


def report_attr(rec: Node, name: str, value: str | None) -> None:
    """Attribute ``name`` became ``value`` (None: removed)."""
    a = rec.attrs.get(name)
    doc = rec.doc
    if a is None:
        if value is None:
            return
        a = rec.attrs[name] = (doc.new_id(), value)
        op, old = INS, None
    else:
        old = a[1]
        if value == old:
            return
        if value is None:
            del rec.attrs[name]
            op = DEL
        else:
            rec.attrs[name] = (a[0], value)
            op = UPD
    if doc.listening():
        _State.out.append((doc, op, child_pi(rec.pi, Axis.ATTRIBUTE, name, a[0]), value, old,
                           None, False))


def report_own(rec: Node, e: Any) -> None:
    """A comment's text or a PI's target or text changed: an update of the node itself."""
    value = own_value(e)
    old = rec.text
    if value == old:
        return
    rec.text = value
    doc = rec.doc
    if doc.listening():
        _State.out.append((doc, UPD, rec.pi, value, old, None, False))


# --- child lists -----------------------------------------------------------------------------

WATCHED: tuple[type, ...] = ()  # the wrapper's node classes (set by _elements)


def position(prec: Node, parent: Any, e: Any, at: int | None = None) -> int:
    """The index of child ``e`` among ``parent``'s children (``prec``: the parent's record,
    its count up to date); ``at``: the index ``e`` was inserted at with lxml's ``insert``, if
    ``e`` was not a child of ``parent`` before.

    The fast paths of the insertion index, all in constant time: lxml's ``index()`` walks
    every earlier sibling and ``len()`` every sibling (650 us an append under 10^5 children).
    """
    # Appended (append, SubElement, extend, insert(len, x), addnext on the last child):
    # the last of the counted children.
    if e.getnext() is None:
        return prec.n_children - 1
    # insert(at, x) that did not append: lxml put x before the child at ``at`` (counted from
    # the end when negative: -1 is before the last child), which x now replaces in the count.
    if at is not None:
        return at if at >= 0 else prec.n_children - 1 + at
    if e.getprevious() is None:
        return 0
    # Anywhere else (addnext/addprevious beside a middle sibling, item assignment, a rename or
    # a tail there) nothing but a walk knows the position: lxml's, in C.
    return parent.index(e)  # type: ignore[no-any-return]  # lxml's proxies are untyped


def _trailing(parent: Any, placed: dict[int, Any]) -> list[Any] | None:
    """The ``placed`` children in document order if they are ``parent``'s last ones (extend
    at the end), found in as many steps as there are; else None."""
    order: list[Any] = []
    e = parent[-1]
    for _ in range(len(placed)):
        if e is None or id(e) not in placed:
            return None
        order.append(e)
        e = e.getprevious()
    order.reverse()
    return order


def structural(parent: Any, removed: Iterable[Any], inserted: list[Any], call: Any,
               at: Any = None) -> Any:
    """Run ``call()``, an lxml change to ``parent``'s children, and report it.

    ``removed`` are children ``call`` takes away for good (unless also in ``inserted``);
    ``inserted`` are the elements it puts under ``parent``, each moved from wherever it was;
    ``at`` is the index of ``parent.insert(at, x)``.
    """
    settle()
    prec = NODES.get(parent)
    tracked = [e for e in inserted if e in NODES]
    gone = [e for e in removed if e in NODES]
    if prec is None and not tracked and not gone:
        return call()  # nothing watched is involved: plain lxml
    for r in map(NODES.get, tracked):
        if r is not None and len(r.pi.ids) == 1 and r.doc.tree.getroot() is not None:
            raise WatchError(f"this is the root element of watched document {r.doc.name!r}, "
                             "which cannot be moved into another element; insert a copy "
                             "(copy.deepcopy) or close that document first")
    if prec is not None:
        for e in inserted:
            if not isinstance(e, WATCHED):
                raise WatchTypeError(
                    f"{e!r} is a {type(e).__module__}.{type(e).__qualname__}, whose changes "
                    "xmlevents cannot see; insert a copy built with lxml.etree or "
                    "xmlevents.Element instead")
    # Where the watched nodes are before the call: the counts of the parents they leave go
    # down (a failed call leaves the counts to the resync below, which counts again).
    was = {id(e): (e, e.getparent()) for e in (*tracked, *gone)}
    begin()
    try:
        try:
            result = call()
        except Exception:
            # lxml checks some arguments only as it goes (extend, slice assignment): report
            # whatever it did before refusing, then let its error through.
            # Sources first: a node lxml moved must leave its old document's records before
            # its new document takes it in.
            dst = prec.doc if prec is not None else None
            docs = {id(r.doc): r.doc for r in map(NODES.get, tracked + gone)
                    if r is not None and r.doc is not dst}
            for doc in [*docs.values(), *([dst] if dst is not None else [])]:
                doc.resync()
            raise
        for e, before in was.values():
            after = e.getparent()
            if after is not before:
                if before is not None and (r := NODES.get(before)) is not None:
                    r.n_children -= 1
                if after is not None and (r := NODES.get(after)) is not None:
                    r.n_children += 1
        dst = prec.doc if prec is not None else None
        seen: set[int] = set()
        for e in reversed(gone):
            seen.add(id(e))
            remove_tree(e, True, dst if any(x is e for x in inserted) else None)
        for e in reversed(tracked):
            if id(e) not in seen:
                seen.add(id(e))
                remove_tree(e, True, dst)
        if prec is not None:
            placed = {id(e): e for e in inserted if e.getparent() is parent}
            for e in placed.values():
                # lxml's move may leave a prefix shadowed (issue 16, item 7): put right
                # before anything is read, so that the events say what the text says.
                repair_namespaces(e)
            # New nodes join the count here; watched ones did above.
            prec.n_children += sum(1 for k in placed if k not in was)
            doc = prec.doc
            if len(placed) == 1:
                (e,) = placed.values()
                if doc.listening():
                    moved_within = was.get(id(e), (e, None))[1] is parent
                    hint = None if at is None or moved_within else operator.index(at)
                    ins_tree(doc, e, prec, position(prec, parent, e, hint), True)
                else:
                    ins_tree(doc, e, prec, -1, True)
            elif placed:
                # Several: registered in document order (new ids follow it) even when nothing
                # listens. At the end of the children (extend) their indexes follow from the
                # count; elsewhere (slice assignment) lxml's index() places each.
                order = _trailing(parent, placed)
                if order is not None:
                    first = prec.n_children - len(order)
                    indexed = [(first + i, e) for i, e in enumerate(order)]
                else:
                    indexed = sorted(((parent.index(e), e) for e in placed.values()),
                                     key=operator.itemgetter(0))
                for index, e in indexed:
                    ins_tree(doc, e, prec, index, True)
        return result
    finally:
        end()


def clear(el: Any, keep_tail: bool, call: Any) -> None:
    """``el.clear()``: its tail (unless kept), children, text and attributes go, in reverse."""
    settle()
    rec = NODES.get(el)
    if rec is None:
        call()
        return
    children = list(el)
    begin()
    try:
        call()
        rec.n_children = 0
        if not keep_tail and rec.tail_id is not None:
            report_tail(rec, el, None)
        for child in reversed(children):
            remove_tree(child, True)
        report_text(rec, None)
        for name in reversed(list(rec.attrs)):
            report_attr(rec, name, None)
    finally:
        end()


def rename(el: Any, call: Any) -> None:
    """``el.tag = ...``: the subtree is removed and inserted again with its ids (DESIGN 5)."""
    settle()
    rec = NODES.get(el)
    if rec is None:
        call()
        return
    old = el.tag
    begin()
    try:
        call()
        if el.tag == old:
            return
        # The subtree's structure is unchanged, so the recorded walk still holds for it. The
        # tail goes and comes back with the element, as in a move, so that the events replay
        # onto a tree where removing an element takes its tail along.
        remove_tree(el, True, rec.doc)
        parent = el.getparent()
        prec = NODES[parent] if parent is not None else None
        listening = parent is not None and rec.doc.listening()
        index = position(prec, parent, el) if listening else -1  # type: ignore[arg-type]  # a parent has a record
        ins_tree(rec.doc, el, prec, index, True)
    finally:
        end()

