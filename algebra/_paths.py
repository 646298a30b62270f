"""Path types and path instances, and the operators on them (seed 000, section 2.1).

A *path type* names nodes of a document by type: ``/order/item/price`` (absolute) or
``item/price`` (relative). A *path instance* names one node by the identifiers of the nodes
from the root down to it. The operators follow the paper's definitions literally, including
its notion of *unique* containment (a path type contained at two offsets is not contained);
``None`` stands for the paper's ``null`` in arguments and results.

Reconstruction notes (the extracted text garbles the symbols):

* ``contained(pt1, pt2)`` is the paper's ``pt1 ⊂ pt2`` ("pt2 uniquely contains pt1").
  For a relative ``pt1`` in an absolute ``pt2`` the text only asks ``m + c <= n``, so
  ``order/item ⊂ /order/item`` holds; two relative or two absolute types need ``m < n``.
* ``ends(pt1, pt2)`` is ``pt1 ⊂e pt2``.
* A path instance produced by projecting on a *relative* path type carries that relative type
  (Example 7: ``π_item(/order1/item1/price1) = item1``); every other instance is absolute.

The wildcard step ``*`` (issue 15; not in the paper) stands for any one child element, never an
attribute or a text node: ``properties/*/text()``, ``/order/*/price``, ``item/*``. A path type
with ``*`` names the nodes of all its *instantiations* (each ``*`` replaced by an element name).
The operators compare steps through two relations instead of equality: a step *covers* another
if they are equal or it is ``*`` and the other an element step (``⊂``, ``⊂e``, ``π``, ``∩ab``,
and ``=`` where ``π`` and ``∩ab`` accept ``pt1 = pt2``); the *meet* of two steps is the more
specific one (``∩lb``). On path types without ``*`` both are equality, and the operators take
their old code path unchanged. A path instance names concrete nodes, so it never has ``*``: a
projection on a path type with ``*`` carries the names of the instance it was taken from.
docs/semantics.md, "The wildcard step", gives the reasoning and the refused cases.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast, overload

from xmlevents._foundation.lazy import LazyPattern
from xmlevents._foundation.names import NCNAME

from ._errors import InvalidArgumentError, PathSyntaxError

__all__ = [
    "Axis",
    "Kind",
    "Step",
    "PathType",
    "PathInstance",
    "contained",
    "ends",
    "intersect_lb",
    "intersect_ab",
    "project",
    "subsumes",
    "ends_alike",
    "derivation_problem",
    "WILDCARD",
    "XML_NAMESPACE",
]

XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"

#: The name of the wildcard step ``*``: any one child element (no QName is ``*``).
WILDCARD = "*"


class Axis(enum.Enum):
    """The axis of a step: a child element, an attribute, a text, comment or PI node.

    Comments and processing instructions are nodes of the documents the DOM wrapper watches
    (so that edits to them are reported and replayed); the paper's model has only elements,
    attributes and text, and its examples never name the other two.
    """

    # Members are singletons: identity hashing is valid and, unlike Enum's, runs in C; path
    # types are hashed on every event the engine groups.
    __hash__ = object.__hash__

    CHILD = "child"
    ATTRIBUTE = "attribute"
    TEXT = "text"
    COMMENT = "comment"
    PI = "processing-instruction"


class Kind(enum.Enum):
    """Whether a path type starts at the document root."""

    __hash__ = object.__hash__

    ABSOLUTE = "absolute"
    RELATIVE = "relative"


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a path type: axis plus node test (a Clark-notation QName, or none for text()).

    >>> str(Step(Axis.ATTRIBUTE, "partnum"))
    '@partnum'
    """

    axis: Axis
    name: str | None = None

    def __post_init__(self) -> None:
        if (self.axis in _NAMELESS) != (self.name is None):
            raise InvalidArgumentError(
                f"Step {self.axis.value!r}: name={self.name!r}; text(), comment() "
                "and processing-instruction() steps have no name and element or "
                "attribute steps need one")
        if self.name == WILDCARD and self.axis is not Axis.CHILD:
            raise InvalidArgumentError(
                f"Step {self.axis.value!r}: name='*'; the wildcard * stands for one child "
                "element only: name the attribute")

    @property
    def is_wildcard(self) -> bool:
        """Whether this is the wildcard step ``*``: any one child element (issue 15)."""
        return self.name == WILDCARD

    def __str__(self) -> str:
        if self.axis in _NAMELESS:
            return f"{self.axis.value}()"
        if self.axis is Axis.ATTRIBUTE:
            return f"@{self.name}"
        return str(self.name)


_NAMELESS = frozenset((Axis.TEXT, Axis.COMMENT, Axis.PI))
# An XML NCName (XML 1.0 fifth edition; issue 28: one pattern for every language).
_NCNAME = NCNAME
# (compiled on first use, as the others built of XML names: foundation's LazyPattern)
_STEP_RE = LazyPattern(
    rf"(?P<star>\*)|(?P<text>(?:text|comment|processing-instruction)\(\s*\))|(?P<at>@)?(?:\{{(?P<uri>[^}}]*)\}}(?P<local>{_NCNAME})"
    rf"|(?P<prefix>{_NCNAME}):(?P<plocal>{_NCNAME})|(?P<name>{_NCNAME}))"
)


def _parse_steps(text: str, namespaces: Mapping[str, str] | None) -> tuple[Kind, tuple[Step, ...]]:
    if not text.strip():
        raise PathSyntaxError("empty path type; write e.g. /order/item or item/price", text=text)
    pos = 0
    kind = Kind.RELATIVE
    if text.startswith("/"):
        kind = Kind.ABSOLUTE
        pos = 1
    steps: list[Step] = []
    while True:
        if text.startswith("/", pos):
            raise PathSyntaxError("empty step ('//' and a trailing '/' are not path types)",
                                  text=text, column=pos + 1)
        m = _STEP_RE.match(text, pos)
        if m is None:
            _refuse_wildcard_forms(text, pos)
            raise PathSyntaxError(
                "expected a step: a name, @name, {uri}name, text(), comment() or "
                "processing-instruction()", text=text, column=pos + 1)
        if m["star"]:
            steps.append(_WILDCARD_STEP)
        elif m["text"]:
            steps.append(Step(Axis(m["text"].partition("(")[0])))
        else:
            axis = Axis.ATTRIBUTE if m["at"] else Axis.CHILD
            if m["local"] is not None:
                name = f"{{{m['uri']}}}{m['local']}" if m["uri"] else m["local"]
            elif m["prefix"] is not None:
                prefix = m["prefix"]
                uri = (namespaces or {}).get(prefix)
                if uri is None and prefix == "xml":
                    uri = XML_NAMESPACE
                if uri is None:
                    python = f"pass namespaces={{{prefix!r}: uri}}"
                    raise PathSyntaxError(
                        f"unknown namespace prefix {prefix!r}; {python} "
                        f"or write {{uri}}{m['plocal']}", text=text, column=m.start("prefix") + 1
                    ).phrased(python, f"pass --namespace {prefix}=URI")
                name = f"{{{uri}}}{m['plocal']}"
            else:
                name = m["name"]
            steps.append(Step(axis, name))
        pos = m.end()
        if pos == len(text):
            break
        if text[pos] != "/":
            if text.startswith(":*", pos):
                _refuse_wildcard_forms(text, m.start())
            raise PathSyntaxError(f"unexpected {text[pos]!r} after step {str(steps[-1])!r}",
                                  text=text, column=pos + 1)
        if steps[-1].axis is not Axis.CHILD:
            raise PathSyntaxError(f"{steps[-1]!s} can only be the last step",
                                  text=text, column=pos + 1)
        pos += 1
        if pos == len(text):
            raise PathSyntaxError("empty step ('//' and a trailing '/' are not path types)",
                                  text=text, column=pos + 1)
    return kind, tuple(steps)


_WILDCARD_STEP = Step(Axis.CHILD, WILDCARD)
_NAMED_WILDCARD = LazyPattern(rf"(@?)(?:\{{[^}}]*\}}|({_NCNAME}):)\*")


def _refuse_wildcard_forms(text: str, pos: int) -> None:
    """Raise for the wildcard forms of XPath that ``*`` does not stand for: ``@*`` (any
    attribute), ``prefix:*`` and ``{uri}*`` (any element of one namespace)."""
    if text.startswith("@*", pos):
        raise PathSyntaxError(
            "@* is not a step: * stands for one child element, never an attribute; name the "
            "attribute, as in item/@partnum", text=text, column=pos + 1)
    m = _NAMED_WILDCARD.match(text, pos)
    if m is not None:
        ns = f"{m[2]}:*" if m[2] else "{uri}*"
        if m[1]:
            raise PathSyntaxError(
                f"@{ns} (any attribute of one namespace) is not a step: * stands for one child "
                "element, never an attribute; name the attribute", text=text, column=pos + 1)
        raise PathSyntaxError(
            f"{ns} (any element of one namespace) is not a step: * stands for one child "
            "element of any namespace; write * or name the element", text=text, column=pos + 1)


_T = TypeVar("_T")

#: Path types and instances deeper than this share their parent's steps and ids (a link to
#: them plus the last one, :class:`_Chain`) rather than copy them: a chain of 10,000 nested
#: elements would otherwise hold 50 million steps and as many ids (issue 16).
SHARE_DEPTH = 64


class _Chain(Sequence[_T]):
    """An immutable sequence: ``head`` (a tuple or another chain) plus one item, ``last``.

    A deep node's steps and ids, sharing its parent's, so that memory grows with the depth,
    not with its square. It reads, compares, hashes and orders as the tuple of its items
    (:meth:`items` builds that tuple each time: keeping it would bring the square back);
    ``[-1]``, ``len`` and prefixes (``[:k]``, ``[:-1]``) walk the links without building it.
    Only path types and instances make chains, beyond :data:`SHARE_DEPTH`.
    """

    __slots__ = ("_head", "_last", "_len")

    def __init__(self, head: tuple[_T, ...] | _Chain[_T], last: _T) -> None:
        self._head = head
        self._last = last
        self._len = len(head) + 1

    def items(self) -> tuple[_T, ...]:
        """The items as a tuple (built afresh: O(length))."""
        lasts: list[_T] = []
        node: tuple[_T, ...] | _Chain[_T] = self
        while type(node) is _Chain:
            lasts.append(node._last)
            node = node._head
        lasts.reverse()
        return cast(tuple[_T, ...], node) + tuple(lasts)

    def _prefix(self, k: int) -> tuple[_T, ...] | _Chain[_T]:
        """The first ``k`` items: the shared link of that length (no copy), or a tuple."""
        node: tuple[_T, ...] | _Chain[_T] = self
        while type(node) is _Chain and node._len > k:
            node = node._head
        if type(node) is _Chain:
            return node if k > SHARE_DEPTH else node.items()[:k]
        return cast(tuple[_T, ...], node)[:k]

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[_T]: ...

    def __getitem__(self, index: int | slice) -> _T | Sequence[_T]:
        n = self._len
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if start == 0 and step == 1:
                return self._prefix(stop) if stop < n else self
            return self.items()[index]
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            return self.items()[index]  # raises the tuple's IndexError
        node: tuple[_T, ...] | _Chain[_T] = self
        while type(node) is _Chain:
            if node._len - 1 == i:
                return node._last
            node = node._head
        return cast(tuple[_T, ...], node)[i]

    def __iter__(self) -> Iterator[_T]:
        return iter(self.items())

    def __reversed__(self) -> Iterator[_T]:
        return reversed(self.items())

    def __contains__(self, item: object) -> bool:
        return item in self.items()

    def __eq__(self, other: object) -> bool:
        if type(other) is tuple:
            return self._len == len(other) and self.items() == other
        if type(other) is not _Chain:
            return NotImplemented
        a: Any = self
        b: Any = other
        while a is not b:  # walk both while they are links: shared heads end the walk
            if type(a) is not _Chain or type(b) is not _Chain:
                return bool(_items(a) == _items(b))
            if a._len != b._len or a._last != b._last:
                return False
            a, b = a._head, b._head
        return True

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __lt__(self, other: object) -> bool:
        result: bool = self.items() < _items(other)  # as tuples compare
        return result

    def __le__(self, other: object) -> bool:
        result: bool = self.items() <= _items(other)  # as tuples compare
        return result

    def __gt__(self, other: object) -> bool:
        result: bool = self.items() > _items(other)  # as tuples compare
        return result

    def __ge__(self, other: object) -> bool:
        result: bool = self.items() >= _items(other)  # as tuples compare
        return result

    def __hash__(self) -> int:
        return hash(self.items())  # equal to its tuple, so dicts find either

    def __add__(self, other: tuple[_T, ...]) -> tuple[_T, ...] | _Chain[_T]:
        if type(other) is tuple and len(other) == 1:
            return _Chain(self, other[0])  # a child's ids: shared
        return self.items() + tuple(other)

    def __radd__(self, other: tuple[_T, ...]) -> tuple[_T, ...]:
        return tuple(other) + self.items()

    def __repr__(self) -> str:
        return repr(self.items())

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple, (self.items(),)  # pickled as its tuple (no deep recursion)


def _items(value: Any) -> Any:
    """A chain's items as a tuple; anything else as it is."""
    return value.items() if type(value) is _Chain else value


def _extend(items: tuple[_T, ...], last: _T) -> tuple[_T, ...]:
    """``items + (last,)``, sharing ``items`` beyond :data:`SHARE_DEPTH` (typed as the tuple
    it reads as)."""
    if len(items) < SHARE_DEPTH:
        return items + (last,)
    return cast(tuple[_T, ...], _Chain(items, last))


def _shared(items: tuple[_T, ...]) -> tuple[_T, ...]:
    """A long tuple as a chain, so that its children's extensions share it."""
    if type(items) is tuple and len(items) > SHARE_DEPTH:
        return cast(tuple[_T, ...], _Chain(items[:-1], items[-1]))
    return items


@dataclass(frozen=True, slots=True)
class PathType:
    """A path type ``<kind, steps>``: a restricted XPath naming nodes by type (section 2.1).

    Only the last step may be an attribute, ``text()``, ``comment()`` or
    ``processing-instruction()``, and a path type has at least one step
    (the paper's valid event trees need non-empty path types). A step ``*`` is any one
    child element (issue 15).

    >>> pt = PathType.parse("/order/item/price")
    >>> pt.is_absolute, len(pt), str(pt)
    (True, 3, '/order/item/price')
    >>> str(PathType.parse("item/@partnum")), str(PathType.parse("price/text()"))
    ('item/@partnum', 'price/text()')
    >>> PathType.parse("properties/*/text()").has_wildcard
    True
    """

    kind: Kind
    steps: tuple[Step, ...]
    _hash: int = field(init=False, repr=False, compare=False, default=0)
    _text: str = field(init=False, repr=False, compare=False, default="")
    _wild: bool = field(init=False, repr=False, compare=False, default=False)

    def __post_init__(self) -> None:
        given: Any = self.steps
        steps = given if type(given) is _Chain else tuple(given)
        object.__setattr__(self, "steps", steps)
        if not steps:
            raise InvalidArgumentError("PathType: steps=(); a path type needs at least one step")
        for step in steps[:-1]:
            if step.axis is not Axis.CHILD:
                raise InvalidArgumentError(f"PathType: {step} can only be the last step")
        # Path types key every group of the hierarchical context and name every output
        # line: hash and print them once. The hash folds step by step, so that a child's
        # (:meth:`child`) follows from its parent's in one step.
        h = hash(self.kind)
        for step in steps:
            h = hash((h, step))
        object.__setattr__(self, "_hash", h)
        body = "/".join(str(s) for s in steps)
        object.__setattr__(self, "_text", "/" + body if self.kind is Kind.ABSOLUTE else body)
        # a * in the text is rare outside wildcard steps ({uri} may hold one): test it first
        object.__setattr__(self, "_wild",
                           "*" in body and any(s.name == WILDCARD for s in steps))

    def __hash__(self) -> int:
        return self._hash

    def child(self, step: Step) -> PathType:
        """This path type with ``step`` appended, built from this one's checks, hash and
        text rather than again from every step: a watched document makes one per node type,
        and a chain of 10,000 nested elements would otherwise check and hash 50 million
        steps (issue 16).

        Raises:
            InvalidArgumentError: this path type ends in a step that cannot have children.
        """
        if self.steps[-1].axis is not Axis.CHILD:
            raise InvalidArgumentError(f"PathType: {self.steps[-1]} can only be the last step")
        pt: PathType = object.__new__(PathType)
        setattr_ = object.__setattr__
        setattr_(pt, "kind", self.kind)
        steps = _extend(self.steps, step)
        setattr_(pt, "steps", steps)
        setattr_(pt, "_hash", hash((self._hash, step)))
        # A deep type's text is written when asked for (it would be as long as the type).
        setattr_(pt, "_text", f"{self._text}/{step}" if len(steps) <= SHARE_DEPTH else "")
        setattr_(pt, "_wild", self._wild or step.name == WILDCARD)
        return pt

    @classmethod
    def parse(cls, text: str, namespaces: Mapping[str, str] | None = None) -> PathType:
        """Parse the text form; ``prefix:name`` steps are resolved through ``namespaces``.

        Raises:
            PathSyntaxError: naming the column of the first offending character.

        >>> PathType.parse("p:item", {"p": "urn:po"})
        PathType('{urn:po}item')
        """
        if namespaces is None and cls is PathType:
            # Streams repeat a handful of paths: parse each once (bounded, so hostile input
            # cannot grow it without limit).
            cached = _PARSED.get(text)
            if cached is None:
                cached = _WILD.get(text)
                if cached is None:
                    cached = _simple(text)
                    if cached is None:
                        kind, steps = _parse_steps(text, None)
                        cached = cls(kind, steps)
                    cached._store(text)
            return cached
        if cls is PathType and (simple := _simple(text)) is not None:
            return simple  # no prefix, so namespaces do not matter
        kind, steps = _parse_steps(text, namespaces)
        return cls(kind, steps)

    @classmethod
    def _trusted(cls, kind: Kind, steps: tuple[Step, ...], text: str | None = None
                 ) -> PathType:
        """A path type from steps known to be valid (``text``: its text form, if known),
        built without checking them again: the parser makes one per path of a definition."""
        pt: PathType = object.__new__(PathType)
        setattr_ = object.__setattr__
        setattr_(pt, "kind", kind)
        setattr_(pt, "steps", steps)
        h = hash(kind)
        for step in steps:
            h = hash((h, step))
        setattr_(pt, "_hash", h)
        if text is None:
            body = "/".join(str(s) for s in steps)
            text = "/" + body if kind is Kind.ABSOLUTE else body
            wild = "*" in body and any(s.name == WILDCARD for s in steps)
        else:
            wild = "*" in text and any(s.name == WILDCARD for s in steps)
        setattr_(pt, "_text", text)
        setattr_(pt, "_wild", wild)
        return pt

    @classmethod
    def of(cls, value: str | PathType) -> PathType:
        """Accept a path type or its text form, as every API that takes a path does."""
        return value if isinstance(value, PathType) else cls.parse(value)

    def _store(self, text: str) -> PathType:
        """Remember this path type as the parse of ``text``; returns it. Types with ``*`` go
        to a table of their own: the event reader's fast path looks paths up in ``_PARSED``
        and must never build an event at a path with ``*`` (no node has that path)."""
        table = _WILD if self._wild else _PARSED
        if len(table) >= _PARSED_LIMIT:
            table.clear()
        table[text] = self
        return self

    @property
    def is_absolute(self) -> bool:
        return self.kind is Kind.ABSOLUTE

    @property
    def has_wildcard(self) -> bool:
        """Whether a step is the wildcard ``*`` (issue 15)."""
        return self._wild

    @property
    def last(self) -> Step:
        return self.steps[-1]

    def interned(self) -> PathType:
        """The one object the parser uses for this path type (this one, if none yet): dicts
        keyed by path types then find their keys by identity, never calling ``__eq__``
        (an operator's composites occur at path types it computes, equal to parsed ones)."""
        if not self._text:
            return self  # a deep type (no parser wrote it; dicts then compare it by value)
        found = (_WILD if self._wild else _PARSED).get(self._text)  # one text per path type
        return found if found is not None else self._store(self._text)

    def prefixed(self, namespaces: Mapping[str, str] | None) -> str:
        """The text form with each namespace URI bound in ``namespaces`` written as its
        prefix (the first bound to it), as a user who binds ``-n pom=...`` reads paths;
        unbound URIs stay in Clark notation.

        >>> PathType.parse("/{urn:po}order/{urn:po}item/@{urn:x}id").prefixed({"po": "urn:po"})
        '/po:order/po:item/@{urn:x}id'
        """
        text = str(self)
        if not namespaces or "{" not in text:
            return text
        prefix: dict[str, str] = {}
        for p, uri in namespaces.items():
            prefix.setdefault(uri, p)
        return _CLARK.sub(lambda m: f"{prefix[m[1]]}:" if m[1] in prefix else m[0], text)

    def parent(self) -> PathType | None:
        """The path type without its last step, or ``None`` when that leaves no step.

        This is the multiplicity operator's default path type (section 3.2).
        """
        if len(self.steps) == 1:
            return None
        return PathType(self.kind, self.steps[:-1])

    def __len__(self) -> int:
        return len(self.steps)

    def __str__(self) -> str:
        if self._text:
            return self._text
        body = "/".join(str(s) for s in self.steps)  # a deep type: written, not kept
        return "/" + body if self.kind is Kind.ABSOLUTE else body

    def __repr__(self) -> str:
        return f"PathType({str(self)!r})"


_CLARK = re.compile(r"\{([^}]*)\}")
# A path type of element names only, the common case, is read with one match and a split.
_SIMPLE = LazyPattern(rf"/?{_NCNAME}(?:/{_NCNAME})*")
_CHILD_STEPS: dict[str, Step] = {}


def _simple(text: str) -> PathType | None:
    """``text`` as a path type if it is a plain one (``/a/b``, ``a/b``: element names, no
    prefix, ``*`` or other axis), else None for :func:`_parse_steps` to read."""
    if _SIMPLE.fullmatch(text) is None:
        return None
    absolute = text[0] == "/"
    steps = []
    for name in (text[1:] if absolute else text).split("/"):
        step = _CHILD_STEPS.get(name)
        if step is None:
            if len(_CHILD_STEPS) >= _PARSED_LIMIT:
                _CHILD_STEPS.clear()
            step = _CHILD_STEPS[name] = Step(Axis.CHILD, name)
        steps.append(step)
    return PathType._trusted(Kind.ABSOLUTE if absolute else Kind.RELATIVE, tuple(steps), text)


_PARSED: dict[str, PathType] = {}
_WILD: dict[str, PathType] = {}  # the parsed path types with ``*``
_PARSED_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class PathInstance:
    """A path instance ``<pt, ids>``: one node identifier per step of ``pt`` (section 2.1).

    >>> pi = PathInstance.of("/order/item", ["o1", "i1"])
    >>> str(pi)
    '/order[o1]/item[i1]'
    >>> PathInstance.parse(str(pi)) == pi
    True
    """

    pt: PathType
    ids: tuple[str, ...]

    def __post_init__(self) -> None:
        given: Any = self.ids
        ids = given if type(given) is _Chain else _shared(tuple(given))
        object.__setattr__(self, "ids", ids)
        if self.pt._wild:
            raise InvalidArgumentError(
                f"PathInstance: {self.pt} has the wildcard step *, but a path instance names "
                "one node and each of its steps one element: write the element's name")
        if len(ids) != len(self.pt.steps):
            raise InvalidArgumentError(
                f"PathInstance: ids={list(ids)!r} has {len(ids)} identifiers but "
                f"{self.pt} has {len(self.pt.steps)} steps; give one id per step")

    @classmethod
    def of(cls, pt: str | PathType, ids: Iterable[str]) -> PathInstance:
        return cls(PathType.of(pt), tuple(ids))

    @classmethod
    def parse(cls, text: str, namespaces: Mapping[str, str] | None = None) -> PathInstance:
        """Parse ``/order[o1]/item[i1]``: every step directly followed by its id in brackets.

        Raises:
            PathSyntaxError: naming the column in ``text`` of the first offending character.
        """
        plain: list[str] = []
        ids: list[str] = []
        offsets: list[int] = []  # where each character of the plain path stands in ``text``
        pos = 0
        for m in re.finditer(r"\[([^\[\]]*)\]", text):
            segment = text[pos:m.start()]
            if not segment or segment.endswith("/"):
                raise PathSyntaxError("an [id] must follow a step, as in /order[o1]/item[i1]",
                                      text=text, column=m.start() + 1)
            if plain and not segment.startswith("/"):
                raise PathSyntaxError("expected '/' between steps", text=text, column=pos + 1)
            plain.append(segment)
            offsets.extend(range(pos, m.start()))
            ids.append(m.group(1))
            pos = m.end()
        if pos != len(text) or not ids:
            raise PathSyntaxError("every step needs an [id], as in /order[o1]/item[i1]",
                                  text=text, column=pos + 1)
        joined = "".join(plain)
        try:
            pt = PathType.parse(joined, namespaces)
        except PathSyntaxError as exc:
            at = (exc.column or 1) - 1
            col = offsets[at] + 1 if at < len(offsets) else len(text) + 1
            raise PathSyntaxError(exc.reason, text=text, column=col) from None
        if pt.has_wildcard:
            at = 0  # where the first * step starts in the plain path
            for segment, step in zip(plain, pt.steps, strict=False):
                if step.is_wildcard:
                    at += segment.startswith("/")
                    break
                at += len(segment)
            raise PathSyntaxError("* is not a step of a path instance: an instance names one "
                                  "node, so write the element's name, as in /order[o1]/item[i1]",
                                  text=text, column=offsets[at] + 1)
        if len(ids) != len(pt.steps):
            raise PathSyntaxError(f"{len(pt.steps)} steps but {len(ids)} [id] groups; write an id "
                                  "after every step, e.g. /order[o1]/item[i1]", text=text)
        return cls(pt, tuple(ids))

    def __str__(self) -> str:
        body = "/".join(f"{s}[{i}]" for s, i in zip(self.pt.steps, self.ids, strict=False))
        return "/" + body if self.pt.is_absolute else body


# --- operators -------------------------------------------------------------------------------
#
# Each operator keeps the paper's code for path types without ``*`` (one flag test more) and
# takes a wildcard-aware branch otherwise, in which two step relations replace equality:
# ``_covers(a, b)``, a names every node b names (a = b, or a is * and b an element step), and
# ``_meet(a, b)``, the more specific of two steps that can name one node (or None).

def _covers(a: Step, b: Step) -> bool:
    """Step ``a`` covers step ``b``: they are equal, or ``a`` is ``*`` and ``b`` an element."""
    return a == b or (a.name == WILDCARD and b.axis is Axis.CHILD)


def _meet(a: Step, b: Step) -> Step | None:
    """The more specific of two steps that can name one node: equal steps, or ``*`` and an
    element step (``*`` with ``*`` is ``*``); None if no node is named by both."""
    if a == b:
        return a
    if a.axis is Axis.CHILD and b.axis is Axis.CHILD:
        if a.name == WILDCARD:
            return b
        if b.name == WILDCARD:
            return a
    return None


def _wild_offset(pt1: PathType, pt2: PathType, whole: bool) -> int | None:
    """``_offset`` where either type has ``*``: the unique offset at which ``pt1``'s steps
    cover ``pt2``'s under the paper's rules for ``⊂``; with ``whole``, also 0 where ``pt1``
    covers all of ``pt2`` (same kind and length: the wildcard form of ``pt1 = pt2``)."""
    s1, s2 = pt1.steps, pt2.steps
    m, n = len(s1), len(s2)
    if pt1.kind is Kind.ABSOLUTE:
        if pt2.kind is Kind.RELATIVE or m > n or (m == n and not whole):
            return None
        return 0 if all(map(_covers, s1, s2)) else None
    if pt2.kind is Kind.RELATIVE and m == n and not whole:
        return None
    found = None
    for c in range(n - m + 1):
        if all(map(_covers, s1, s2[c:c + m])):
            if found is not None:
                return None  # contained twice: the paper demands uniqueness
            found = c
    return found


def _offset(pt1: PathType, pt2: PathType) -> int | None:
    """The unique offset ``c`` at which ``pt2`` contains ``pt1`` (section 2.1), else None.

    This is where ``π_pt1`` finds its ids in instances of ``pt2``; the callers test
    ``pt1 = pt2`` first. Where ``pt1`` has ``*`` it is also 0 when ``pt1`` covers ``pt2``
    whole (the same kind and length, ``*`` over an element step): the wildcard form of
    ``pt1 = pt2`` (``π_/order/*`` of ``/order1/item1`` is ``/order1/item1``).
    """
    if pt1._wild or pt2._wild:
        return _wild_offset(pt1, pt2, True)
    s1, s2 = pt1.steps, pt2.steps
    m, n = len(s1), len(s2)
    if pt1.kind is Kind.ABSOLUTE:
        if pt2.kind is Kind.RELATIVE or m >= n:
            return None
        return 0 if s2[:m] == s1 else None
    if pt2.kind is Kind.RELATIVE and m >= n:
        return None
    found = None
    for c in range(n - m + 1):
        if s2[c:c + m] == s1:
            if found is not None:
                return None  # contained twice: the paper demands uniqueness
            found = c
    return found


def contained(pt1: PathType | None, pt2: PathType | None) -> bool:
    """``pt1 ⊂ pt2``: ``pt2`` uniquely contains ``pt1`` (section 2.1, Example 2).

    With ``*``: at exactly one offset each step of ``pt1`` covers ``pt2``'s (equal, or ``*``
    over an element step), so every node ``pt2`` names lies on a path ``pt1`` contains.

    >>> contained(PathType.parse("item/price"), PathType.parse("/order/item/price"))
    True
    >>> contained(PathType.parse("/order"), PathType.parse("order/item"))
    False
    >>> contained(PathType.parse("*/price"), PathType.parse("/order/item/price"))
    True
    >>> contained(PathType.parse("*"), PathType.parse("/order/item"))  # at two offsets
    False
    """
    if pt1 is None or pt2 is None:
        return False
    if pt1._wild or pt2._wild:
        return _wild_offset(pt1, pt2, False) is not None
    return _offset(pt1, pt2) is not None


def ends(pt1: PathType | None, pt2: PathType | None) -> bool:
    """``pt1 ⊂e pt2``: relative ``pt1`` ends the more special ``pt2`` (section 2.1, Example 3).

    With ``*``: each of ``pt1``'s last steps covers ``pt2``'s (``item/*`` ends
    ``/order/item/price``; ``item/price`` does not end ``order/*/price``: a node of
    ``order/gift/price`` is not an ``item``'s).

    >>> ends(PathType.parse("price"), PathType.parse("item/price"))
    True
    >>> ends(PathType.parse("order/item"), PathType.parse("/order/item/price"))
    False
    >>> ends(PathType.parse("item/*"), PathType.parse("/order/item/price"))
    True
    """
    if pt1 is None or pt2 is None or pt1.kind is not Kind.RELATIVE:
        return False
    m, n = len(pt1.steps), len(pt2.steps)
    if not (m < n or (pt2.kind is Kind.ABSOLUTE and m == n)):
        return False
    if pt1._wild or pt2._wild:
        return all(map(_covers, pt1.steps, pt2.steps[n - m:]))
    return pt2.steps[n - m:] == pt1.steps


def subsumes(pt1: PathType | None, pt2: PathType | None) -> bool:
    """``pt1`` names every node ``pt2`` names, with the same kind and length: ``pt1 = pt2``,
    or ``pt1`` has ``*`` where ``pt2`` has element steps (issue 15). Without ``*`` in
    ``pt1`` this is the paper's ``pt1 = pt2``; it is that equality's wildcard form wherever an
    operator accepts ``pt1 = pt2`` (``⪰``, ``π``, ``∩ab``).

    >>> subsumes(PathType.parse("/order/*/price"), PathType.parse("/order/item/price"))
    True
    >>> subsumes(PathType.parse("/order/item/price"), PathType.parse("/order/*/price"))
    False
    """
    if pt1 is None or pt2 is None:
        return False
    if pt1 == pt2:
        return True
    return (pt1._wild and pt1.kind is pt2.kind and len(pt1.steps) == len(pt2.steps)
            and all(map(_covers, pt1.steps, pt2.steps)))


def ends_alike(pt1: PathType, pt2: PathType) -> bool:
    """Whether some node's path type can equal or end in both ``pt1`` and ``pt2``: their
    last steps pair off as equal steps or ``*`` and an element step; an absolute type must be
    the longer one (both absolute: the same length). Symmetric.

    This decides statically whether the events one path type describes can be taken by a
    leaf of another (``⪰``, section 2.2): a definition's composites occur at absolute path
    types ending in its path type.

    >>> ends_alike(PathType.parse("address"), PathType.parse("shipTo/address"))
    True
    >>> ends_alike(PathType.parse("/order/*"), PathType.parse("item"))
    True
    >>> ends_alike(PathType.parse("/order/item"), PathType.parse("billTo"))
    False
    """
    a, b = pt1.steps, pt2.steps
    m, n = len(a), len(b)
    if pt1.kind is Kind.ABSOLUTE and pt2.kind is Kind.ABSOLUTE:
        if m != n:
            return False
    elif (pt1.kind is Kind.ABSOLUTE and n > m) or (pt2.kind is Kind.ABSOLUTE and m > n):
        return False
    k = min(m, n)
    if not (pt1._wild or pt2._wild):
        return a[m - k:] == b[n - k:]
    return all(_meet(x, y) is not None for x, y in zip(a[m - k:], b[n - k:], strict=True))


def intersect_lb(pt1: PathType | None, pt2: PathType | None) -> PathType | None:
    """``pt1 ∩lb pt2``: the equal steps at the start of both (section 2.1, Example 4).

    Commutative; the result is absolute unless both are relative. With ``*``: the steps at
    the start that can name one node, each the more specific of the two (``*`` and ``item``
    give ``item``; ``*`` and ``*`` give ``*``), so ``a/* ∩lb a/*/@x = a/*``.

    >>> intersect_lb(PathType.parse("order/item"), PathType.parse("/order/billTo"))
    PathType('/order')
    >>> intersect_lb(PathType.parse("order"), PathType.parse("item")) is None
    True
    >>> intersect_lb(PathType.parse("*/item/price"), PathType.parse("order/*/quantity"))
    PathType('order/item')
    """
    if pt1 is None or pt2 is None:
        return None
    if pt1._wild or pt2._wild:
        return _wild_intersect_lb(pt1, pt2)
    s1, s2 = pt1.steps, pt2.steps
    if s1[0] != s2[0]:
        return None
    j = 1
    limit = min(len(s1), len(s2))
    while j < limit and s1[j] == s2[j]:
        j += 1
    kind = pt1.kind if pt1.kind is pt2.kind else Kind.ABSOLUTE
    if j == len(s1) and kind is pt1.kind:
        return pt1  # (equal to what the slice would build)
    if j == len(s2) and kind is pt2.kind:
        return pt2
    return PathType._trusted(kind, s1[:j])  # a prefix of a valid path type is valid


def _wild_intersect_lb(pt1: PathType, pt2: PathType) -> PathType | None:
    """``intersect_lb`` where either type has ``*``: the meets of the steps at the start."""
    met: list[Step] = []
    for a, b in zip(pt1.steps, pt2.steps, strict=False):
        step = _meet(a, b)
        if step is None:
            break
        met.append(step)
    if not met:
        return None
    return PathType(pt1.kind if pt1.kind is pt2.kind else Kind.ABSOLUTE, tuple(met))


def intersect_ab(pt1: PathType | None, pt2: PathType | None) -> PathType | None:
    """``pt1 ∩ab pt2``: ``pt1`` made absolute along the absolute ``pt2`` (section 2.1, Example 5).

    Not commutative. The result runs along ``pt2`` up to the last step where it contains
    ``pt1``; it is null unless ``pt1 ⊂ pt2`` or ``pt1 = pt2``. With ``*``, the steps are
    still ``pt2``'s, so along the path type of an event the result names its elements
    (``item/* ∩ab /order/item/price/text() = /order/item/price``), and ``pt1 = pt2`` reads
    :func:`subsumes`.

    Raises:
        ValueError: if ``pt2`` is a relative path type (the operator is defined for absolute
            ones only).

    >>> intersect_ab(PathType.parse("item"), PathType.parse("/order/item/price"))
    PathType('/order/item')
    """
    if pt1 is None or pt2 is None:
        return None
    if pt2.kind is not Kind.ABSOLUTE:
        raise InvalidArgumentError(f"intersect_ab: pt2={str(pt2)!r} must be an absolute path type")
    if pt1 == pt2:
        return pt2
    c = _offset(pt1, pt2)
    if c is None:
        return None
    k = c + len(pt1.steps)
    if pt1._wild and k == len(pt2.steps):
        return pt2  # pt1 covers pt2 at its end: pt2 itself, as for pt1 = pt2
    return PathType(Kind.ABSOLUTE, pt2.steps[:k])


def project(pt: PathType | None, pi: PathInstance | None) -> PathInstance | None:
    """``π_pt(pi)``: the part of ``pi`` that ``pt`` covers (section 2.1, Example 7).

    With ``*``, the ids are those ``π`` takes on ``pt`` with each ``*`` named as in ``pi``,
    and so is the result's path type: an instance names concrete nodes (it keeps ``pt``'s
    kind, as Example 7 does).

    >>> pi = PathInstance.of("/order/item/price", ["o1", "i1", "p1"])
    >>> str(project(PathType.parse("item"), pi))
    'item[i1]'
    >>> project(PathType.parse("item"), PathInstance.of("/order", ["o1"])) is None
    True
    >>> str(project(PathType.parse("order/*"), pi))
    'order[o1]/item[i1]'
    """
    if pt is None or pi is None:
        return None
    if pt == pi.pt:
        return pi
    c = _offset(pt, pi.pt)
    if c is None:
        return None
    k = c + len(pt.steps)
    if pt._wild:  # the instance's names where pt has *
        if c == 0 and k == len(pi.pt.steps) and pt.kind is pi.pt.kind:
            return pi
        pt = PathType(pt.kind, pi.pt.steps[c:k]).interned()
    return PathInstance(pt, pi.ids[c:k])


def derivation_problem(pt: PathType, operands: Sequence[PathType] = ()) -> str | None:
    """Why ``pt`` cannot be an operator node's path type once ``*`` is in play, or None.

    The paper's derivation ``c1.pt ∩lb c2.pt ∩lb ...`` (section 3.1) yields a type on which
    every operand's events project: it consists of steps the operands share. Two wildcard
    cases break that rule, and a definition that has them is refused (issue 15):

    * ``pt`` is relative and every step is ``*`` (``ins(*) ; del(*)`` derives ``*``): unique
      containment (section 2.1) then holds only in paths with exactly as many elements as
      ``pt`` has steps, so the operator would only ever combine events that deep (``*``: the
      root element's), the rest having a null projection.
    * given the ``operands`` it was derived from, ``∩lb`` met a ``*`` of one operand with a
      named step of another (``item/*`` and ``item/price/text()`` give ``item/price``): the
      first operand's events at every other element would project to null and never combine,
      although an operand with that element's name in place of ``*`` would derive the
      shorter type and combine them.

    The reason says what to write instead (a path type given with ``with at=...``).

    >>> print(derivation_problem(PathType.parse("item/price"),
    ...                          [PathType.parse("item/*"), PathType.parse("item/price/text()")]))
    ... # doctest: +NORMALIZE_WHITESPACE
    item/* has * at step 2 where item/price/text() has price, so their left-bound
    intersection item/price would drop the events of item/* at every other element (they
    would never be combined); give the path type: `with at=item` (one group per item) or
    `with at=item/price` if only price elements are meant
    """
    if not pt._wild and not any(o._wild for o in operands):
        return None  # the paper's derivation, untouched
    if pt.kind is Kind.RELATIVE and all(s.name == WILDCARD for s in pt.steps):
        m = len(pt.steps)
        which = "the root element" if m == 1 else f"elements at depth {m}"
        return (f"the path type {pt} is relative and has only * steps: it is contained once "
                f"(section 2.1's unique containment) only in paths with exactly {m} "
                f"element{'s' if m > 1 else ''}, so the operator would combine only the events "
                f"of {which} (and their attributes and text) and every other event would "
                "project to null; name a step (as in ins(item) ; upd(item/@x)), or write "
                f"`with at=/{pt}` if {which} {'is' if m == 1 else 'are'} meant")
    for k, step in enumerate(pt.steps):
        if step.name == WILDCARD:
            continue
        for wild in operands:
            if k >= len(wild.steps) or wild.steps[k].name != WILDCARD:
                continue
            named = next(o for o in operands if k < len(o.steps) and o.steps[k] == step)
            shorter = PathType(pt.kind, pt.steps[:k]) if k else None
            offer = f"`with at={shorter}` (one group per {shorter.last}) or " if shorter else ""
            return (f"{wild} has * at step {k + 1} where {named} has {step}, so their left-bound "
                    f"intersection {pt} would drop the events of {wild} at every other element "
                    f"(they would never be combined); give the path type: {offer}`with "
                    f"at={pt}` if only {step} elements are meant")
    return None
