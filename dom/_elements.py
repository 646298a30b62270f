"""The element classes of watched documents: lxml's own, with every mutation reported.

Each class subclasses lxml's public base class and overrides the mutating methods and
properties; lxml does the change, :mod:`._ops` reports it. On a node of no watched document
they behave exactly as lxml's, at the cost of a dictionary lookup, which is why they can be
lxml's default classes (:func:`xmlevents.dom.install`): an element built anywhere can then be
inserted into a watched document and stay visible.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping
from typing import Any

from lxml import etree

from . import _ops
from ._errors import WatchError
from ._ops import (
    begin,
    end,
    report_attr,
    report_own,
    report_tail,
    report_text,
    settle,
    structural,
)
from ._registry import NODES

__all__ = ["WatchedElement", "WatchedComment", "WatchedPI", "WatchedAttrib"]

_E = etree._Element
_C = etree._Comment
_P = etree._ProcessingInstruction
_text_get, _text_set = _E.text.__get__, _E.text.__set__  # type: ignore[attr-defined]  # lxml's descriptors; the stubs show properties
_tail_get, _tail_set = _E.tail.__get__, _E.tail.__set__  # type: ignore[attr-defined]  # lxml's descriptors
_tag_get, _tag_set = _E.tag.__get__, _E.tag.__set__  # type: ignore[attr-defined]  # lxml's descriptors
_attrib = _E.attrib.__get__
_ctext_get, _ctext_set = _C.text.__get__, _C.text.__set__  # type: ignore[attr-defined]  # lxml's descriptors
_ptext_get, _ptext_set = _P.text.__get__, _P.text.__set__  # type: ignore[attr-defined]  # lxml's descriptors
_target_get, _target_set = _P.target.__get__, _P.target.__set__  # type: ignore[attr-defined]  # lxml's descriptors
_base_get = _E.base.__get__
_XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"


def _name(key: Any) -> str:
    """An attribute key as lxml stores it (Clark notation)."""
    return key if type(key) is str else etree.QName(key).text


def _set_tail(self: Any, value: Any) -> None:
    settle()
    rec = NODES.get(self)
    if rec is None:
        _tail_set(self, value)
        return
    if _E.getparent(self) is None:
        if value is None:
            return
        raise WatchError("the root element's tail lies outside the watched document (only "
                         "what is inside the root element is reported); it cannot be set")
    begin()
    try:
        try:
            _tail_set(self, value)
        finally:  # as for text: whatever lxml left is reported
            report_tail(rec, self, _tail_get(self))
    finally:
        end()


def _set_text(self: Any, value: Any) -> None:
    settle()
    rec = NODES.get(self)
    if rec is None:
        _text_set(self, value)
        return
    begin()
    try:
        try:
            _text_set(self, value)
        finally:  # lxml drops the old text before refusing a bad value: report what is left
            report_text(rec, _text_get(self))
    finally:
        end()


def _set_tag(self: Any, value: Any) -> None:
    _ops.rename(self, lambda: _tag_set(self, value))


def _refused(e: Any) -> None:
    if e in NODES:
        raise WatchError("nodes before or after the root element (the prolog and epilog) lie "
                         "outside the watched document; insert inside the root instead")


class WatchedElement(etree.ElementBase):
    """An lxml element whose changes become primitive events while it is in a watched document.

    Everything lxml's elements do works unchanged; see :mod:`xmlevents.dom` for the events.
    """

    text = property(_text_get, _set_text, doc=_E.text.__doc__)
    tail = property(_tail_get, _set_tail, doc=_E.tail.__doc__)
    tag = property(_tag_get, _set_tag, doc=_E.tag.__doc__)

    def _init(self) -> None:
        # A new proxy at top level under a watched parent is a node made behind the wrapper's
        # back (etree.SubElement through a name bound before xmlevents was imported): report
        # it when the next operation starts. The wrapper holds every proxy of a watched
        # document, so this costs one lookup per proxy lxml creates for other documents.
        s = _ops.state
        if s.depth or s.in_init or not NODES:
            return
        s.in_init = True
        try:
            parent = _E.getparent(self)
            if parent is not None and parent in NODES:
                s.strays.append(self)
        finally:
            s.in_init = False

    @property
    def attrib(self) -> WatchedAttrib:  # type: ignore[override]  # a reporting view
        return WatchedAttrib(self)

    def _get_base(self) -> str | None:
        base: str | None = _base_get(self)
        return base

    def _set_base(self, value: str | None) -> None:
        if value is None:
            self.attrib.pop(_XML_BASE, None)
        else:
            self.set(_XML_BASE, value)

    base = property(_get_base, _set_base, doc=_E.base.__doc__)

    def set(self, key: Any, value: Any) -> None:
        settle()
        rec = NODES.get(self)
        if rec is None:
            _E.set(self, key, value)
            return
        begin()
        try:
            _E.set(self, key, value)
            name = _name(key)
            report_attr(rec, name, _E.get(self, name))
        finally:
            end()

    def append(self, element: Any) -> None:
        structural(self, (), [element], lambda: _E.append(self, element))

    # lxml's stubs narrow extend() by overloads to their own element classes.
    def extend(self, elements: Iterable[Any]) -> None:  # type: ignore[override]
        items = list(elements)
        structural(self, (), items, lambda: _E.extend(self, items))

    def insert(self, index: int, element: Any) -> None:
        structural(self, (), [element], lambda: _E.insert(self, index, element), at=index)

    def remove(self, element: Any) -> None:
        structural(self, [element], [], lambda: _E.remove(self, element))

    def replace(self, old_element: Any, new_element: Any) -> None:
        structural(self, [old_element], [new_element],
                   lambda: _E.replace(self, old_element, new_element))

    def addnext(self, element: Any) -> None:
        parent = _E.getparent(self)
        if parent is None:
            _refused(self)
            _E.addnext(self, element)
            return
        structural(parent, (), [element], lambda: _E.addnext(self, element))

    def addprevious(self, element: Any) -> None:
        parent = _E.getparent(self)
        if parent is None:
            _refused(self)
            _E.addprevious(self, element)
            return
        structural(parent, (), [element], lambda: _E.addprevious(self, element))

    def __setitem__(self, index: Any, value: Any) -> None:
        items = list(value) if isinstance(index, slice) else [value]
        # lxml (6.1 with libxml2 2.14) loops forever here, where its other methods raise.
        chain = [self, *self.iterancestors()]
        if any(x is a for x in items for a in chain):
            raise WatchError("cannot put an element under itself or its own descendant")
        if isinstance(index, slice):
            structural(self, _E.__getitem__(self, index), items,
                       lambda: _E.__setitem__(self, index, items))
        else:
            old = _E.__getitem__(self, index)
            if old is value:
                return  # already there; lxml (6.1) would read freed memory
            structural(self, [old], [value], lambda: _E.__setitem__(self, index, value))

    def __delitem__(self, index: Any) -> None:
        removed = _E.__getitem__(self, index)
        structural(self, removed if isinstance(index, slice) else [removed], [],
                   lambda: _E.__delitem__(self, index))

    def clear(self, keep_tail: bool = False) -> None:
        _ops.clear(self, keep_tail, lambda: _E.clear(self, keep_tail))


def _set_comment_text(self: Any, value: Any) -> None:
    # lxml's Comment() refuses these but its text setter does not, and then writes XML that
    # does not parse back: refuse them as the factory does, so every snapshot reparses.
    if _has(value, "--") or _has(value, "-", end=True):
        raise WatchError("Comment may not contain '--' or end with '-'")
    _set_own(self, lambda: _ctext_set(self, value))


def _set_pi_text(self: Any, value: Any) -> None:
    if _has(value, "?>"):  # refused by lxml's PI() but not by its text setter, as above
        raise WatchError("PI text must not contain '?>'")
    _set_own(self, lambda: _ptext_set(self, value))


def _has(value: Any, part: str, end: bool = False) -> bool:
    """Whether a str or bytes ``value`` contains (or, with ``end``, ends with) ``part``."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return False
    return value.endswith(part) if end else part in value


def _set_target(self: Any, value: Any) -> None:
    _set_own(self, lambda: _target_set(self, value))


def _set_own(self: Any, call: Any) -> None:
    settle()
    rec = NODES.get(self)
    if rec is None:
        call()
        return
    begin()
    try:
        call()
        report_own(rec, self)
    finally:
        end()


def _clear_leaf(self: Any, keep_tail: bool) -> None:
    """``clear()`` of a comment or PI: lxml removes only its tail."""
    settle()
    rec = NODES.get(self)
    if rec is None:
        _E.clear(self, keep_tail)
        return
    begin()
    try:
        _E.clear(self, keep_tail)
        report_tail(rec, self, _tail_get(self))
    finally:
        end()


class _Leaf:
    """What comments and PIs share: siblings added beside them, and ``clear()``."""

    __slots__ = ()

    def addnext(self, element: Any) -> None:
        WatchedElement.addnext(self, element)  # type: ignore[arg-type]  # shared by comments and PIs

    def addprevious(self, element: Any) -> None:
        WatchedElement.addprevious(self, element)  # type: ignore[arg-type]  # shared by comments and PIs

    def clear(self, keep_tail: bool = False) -> None:
        _clear_leaf(self, keep_tail)


class WatchedComment(_Leaf, etree.CommentBase):
    """An lxml comment whose text and tail changes are reported (as ``comment()`` nodes)."""

    text = property(_ctext_get, _set_comment_text, doc=_C.text.__doc__)
    tail = property(_tail_get, _set_tail, doc=_E.tail.__doc__)


class WatchedPI(_Leaf, etree.PIBase):
    """An lxml processing instruction whose changes are reported (``processing-instruction()``
    nodes, valued ``"target text"``)."""

    text = property(_ptext_get, _set_pi_text, doc=_P.text.__doc__)
    tail = property(_tail_get, _set_tail, doc=_E.tail.__doc__)
    target = property(_target_get, _set_target, doc=_P.target.__doc__)


_ops.WATCHED = (WatchedElement, WatchedComment, WatchedPI)


class WatchedAttrib(MutableMapping[str, str]):
    """``element.attrib`` of a watched element: lxml's attribute mapping, changes reported.

    ``update``, ``pop`` and ``clear`` are one operation each (their events are delivered
    together); ``keys()``, ``values()`` and ``items()`` return lists, as lxml's do.
    """

    __slots__ = ("_element",)

    def __init__(self, element: Any) -> None:
        self._element = element

    def __getitem__(self, key: Any) -> str:
        return _attrib(self._element)[key]  # type: ignore[no-any-return]  # lxml's _Attrib

    def __setitem__(self, key: Any, value: Any) -> None:
        self._element.set(key, value)

    def __delitem__(self, key: Any) -> None:
        el = self._element
        settle()
        rec = NODES.get(el)
        if rec is None:
            del _attrib(el)[key]
            return
        begin()
        try:
            del _attrib(el)[key]
            report_attr(rec, _name(key), None)
        finally:
            end()

    def __iter__(self) -> Iterator[str]:
        return iter(_attrib(self._element))

    def __len__(self) -> int:
        return len(_attrib(self._element))

    def __contains__(self, key: object) -> bool:
        return key in _attrib(self._element)

    def __repr__(self) -> str:
        return repr(_attrib(self._element))

    def get(self, key: Any, default: Any = None) -> Any:
        return _attrib(self._element).get(key, default)

    def keys(self) -> list[str]:  # type: ignore[override]  # lxml's lists, not views
        return _attrib(self._element).keys()  # type: ignore[no-any-return]  # lxml's _Attrib

    def values(self) -> list[str]:  # type: ignore[override]  # lxml's lists, not views
        return _attrib(self._element).values()  # type: ignore[no-any-return]  # lxml's _Attrib

    def items(self) -> list[tuple[str, str]]:  # type: ignore[override]  # lxml's lists, not views
        return _attrib(self._element).items()  # type: ignore[no-any-return]  # lxml's _Attrib

    def has_key(self, key: Any) -> bool:
        return key in self

    def update(self, *args: Any, **kwargs: Any) -> None:
        begin()
        try:
            MutableMapping.update(self, *args, **kwargs)
        finally:
            end()

    def pop(self, key: Any, *default: Any) -> Any:
        if key not in self:
            if default:
                return default[0]
            raise KeyError(key)
        value = self[key]
        del self[key]
        return value

    def clear(self) -> None:
        el = self._element
        settle()
        rec = NODES.get(el)
        if rec is None:
            _attrib(el).clear()
            return
        begin()
        try:
            # One clear, then the removals reported last to first (as deleting them one by
            # one would, without searching libxml2's list once per attribute: quadratic).
            names = list(_attrib(el).keys())
            _attrib(el).clear()
            for name in reversed(names):
                report_attr(rec, name, None)
        finally:
            end()

    def __copy__(self) -> dict[str, str]:
        return dict(self.items())

    def __deepcopy__(self, memo: Any) -> dict[str, str]:
        return dict(self.items())
