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
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

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
    "XML_NAMESPACE",
]

XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"


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

    def __str__(self) -> str:
        if self.axis in _NAMELESS:
            return f"{self.axis.value}()"
        if self.axis is Axis.ATTRIBUTE:
            return f"@{self.name}"
        return str(self.name)


_NAMELESS = frozenset((Axis.TEXT, Axis.COMMENT, Axis.PI))
_NCNAME = r"[^\W\d][\w.\-\u00B7]*"
_STEP_RE = re.compile(
    rf"(?P<text>(?:text|comment|processing-instruction)\(\s*\))|(?P<at>@)?(?:\{{(?P<uri>[^}}]*)\}}(?P<local>{_NCNAME})"
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
                                  text=text, col=pos + 1)
        m = _STEP_RE.match(text, pos)
        if m is None:
            raise PathSyntaxError(
                "expected a step: a name, @name, {uri}name, text(), comment() or "
                "processing-instruction()", text=text, col=pos + 1)
        if m["text"]:
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
                        f"or write {{uri}}{m['plocal']}", text=text, col=m.start("prefix") + 1
                    ).phrased(python, f"pass --namespace {prefix}=URI")
                name = f"{{{uri}}}{m['plocal']}"
            else:
                name = m["name"]
            steps.append(Step(axis, name))
        pos = m.end()
        if pos == len(text):
            break
        if text[pos] != "/":
            raise PathSyntaxError(f"unexpected {text[pos]!r} after step {str(steps[-1])!r}",
                                  text=text, col=pos + 1)
        if steps[-1].axis is not Axis.CHILD:
            raise PathSyntaxError(f"{steps[-1]!s} can only be the last step",
                                  text=text, col=pos + 1)
        pos += 1
        if pos == len(text):
            raise PathSyntaxError("empty step ('//' and a trailing '/' are not path types)",
                                  text=text, col=pos + 1)
    return kind, tuple(steps)


@dataclass(frozen=True, slots=True)
class PathType:
    """A path type ``<kind, steps>``: a restricted XPath naming nodes by type (section 2.1).

    Only the last step may be an attribute, ``text()``, ``comment()`` or
    ``processing-instruction()``, and a path type has at least one step
    (the paper's valid event trees need non-empty path types).

    >>> pt = PathType.parse("/order/item/price")
    >>> pt.is_absolute, len(pt), str(pt)
    (True, 3, '/order/item/price')
    >>> str(PathType.parse("item/@partnum")), str(PathType.parse("price/text()"))
    ('item/@partnum', 'price/text()')
    """

    kind: Kind
    steps: tuple[Step, ...]
    _hash: int = field(init=False, repr=False, compare=False, default=0)
    _text: str = field(init=False, repr=False, compare=False, default="")

    def __post_init__(self) -> None:
        steps = tuple(self.steps)
        object.__setattr__(self, "steps", steps)
        if not steps:
            raise InvalidArgumentError("PathType: steps=(); a path type needs at least one step")
        for step in steps[:-1]:
            if step.axis is not Axis.CHILD:
                raise InvalidArgumentError(f"PathType: {step} can only be the last step")
        # Path types key every group of the hierarchical context and name every output
        # line: hash and print them once.
        object.__setattr__(self, "_hash", hash((self.kind, steps)))
        body = "/".join(str(s) for s in steps)
        object.__setattr__(self, "_text", "/" + body if self.kind is Kind.ABSOLUTE else body)

    def __hash__(self) -> int:
        return self._hash

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
                if len(_PARSED) >= _PARSED_LIMIT:
                    _PARSED.clear()
                kind, steps = _parse_steps(text, None)
                cached = _PARSED[text] = cls(kind, steps)
            return cached
        kind, steps = _parse_steps(text, namespaces)
        return cls(kind, steps)

    @classmethod
    def of(cls, value: str | PathType) -> PathType:
        """Accept a path type or its text form, as every API that takes a path does."""
        return value if isinstance(value, PathType) else cls.parse(value)

    @property
    def is_absolute(self) -> bool:
        return self.kind is Kind.ABSOLUTE

    @property
    def last(self) -> Step:
        return self.steps[-1]

    def interned(self) -> PathType:
        """The one object the parser uses for this path type (this one, if none yet): dicts
        keyed by path types then find their keys by identity, never calling ``__eq__``
        (an operator's composites occur at path types it computes, equal to parsed ones)."""
        found = _PARSED.get(self._text)  # the text form is one per path type
        if found is None:
            if len(_PARSED) >= _PARSED_LIMIT:
                _PARSED.clear()
            found = _PARSED[self._text] = self
        return found

    def prefixed(self, namespaces: Mapping[str, str] | None) -> str:
        """The text form with each namespace URI bound in ``namespaces`` written as its
        prefix (the first bound to it), as a user who binds ``-n pom=...`` reads paths;
        unbound URIs stay in Clark notation.

        >>> PathType.parse("/{urn:po}order/{urn:po}item/@{urn:x}id").prefixed({"po": "urn:po"})
        '/po:order/po:item/@{urn:x}id'
        """
        if not namespaces or "{" not in self._text:
            return self._text
        prefix: dict[str, str] = {}
        for p, uri in namespaces.items():
            prefix.setdefault(uri, p)
        return _CLARK.sub(lambda m: f"{prefix[m[1]]}:" if m[1] in prefix else m[0], self._text)

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
        return self._text

    def __repr__(self) -> str:
        return f"PathType({self._text!r})"


_CLARK = re.compile(r"\{([^}]*)\}")
_PARSED: dict[str, PathType] = {}
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
        ids = tuple(self.ids)
        object.__setattr__(self, "ids", ids)
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
                                      text=text, col=m.start() + 1)
            if plain and not segment.startswith("/"):
                raise PathSyntaxError("expected '/' between steps", text=text, col=pos + 1)
            plain.append(segment)
            offsets.extend(range(pos, m.start()))
            ids.append(m.group(1))
            pos = m.end()
        if pos != len(text) or not ids:
            raise PathSyntaxError("every step needs an [id], as in /order[o1]/item[i1]",
                                  text=text, col=pos + 1)
        joined = "".join(plain)
        try:
            pt = PathType.parse(joined, namespaces)
        except PathSyntaxError as exc:
            at = (exc.col or 1) - 1
            col = offsets[at] + 1 if at < len(offsets) else len(text) + 1
            raise PathSyntaxError(exc.reason, text=text, col=col) from None
        if len(ids) != len(pt.steps):
            raise PathSyntaxError(f"{len(pt.steps)} steps but {len(ids)} [id] groups; write an id "
                                  "after every step, e.g. /order[o1]/item[i1]", text=text)
        return cls(pt, tuple(ids))

    def __str__(self) -> str:
        body = "/".join(f"{s}[{i}]" for s, i in zip(self.pt.steps, self.ids, strict=False))
        return "/" + body if self.pt.is_absolute else body


# --- operators -------------------------------------------------------------------------------

def _offset(pt1: PathType, pt2: PathType) -> int | None:
    """The unique offset ``c`` at which ``pt2`` contains ``pt1`` (section 2.1), else None."""
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

    >>> contained(PathType.parse("item/price"), PathType.parse("/order/item/price"))
    True
    >>> contained(PathType.parse("/order"), PathType.parse("order/item"))
    False
    """
    if pt1 is None or pt2 is None:
        return False
    return _offset(pt1, pt2) is not None


def ends(pt1: PathType | None, pt2: PathType | None) -> bool:
    """``pt1 ⊂e pt2``: relative ``pt1`` ends the more special ``pt2`` (section 2.1, Example 3).

    >>> ends(PathType.parse("price"), PathType.parse("item/price"))
    True
    >>> ends(PathType.parse("order/item"), PathType.parse("/order/item/price"))
    False
    """
    if pt1 is None or pt2 is None or pt1.kind is not Kind.RELATIVE:
        return False
    m, n = len(pt1.steps), len(pt2.steps)
    if not (m < n or (pt2.kind is Kind.ABSOLUTE and m == n)):
        return False
    return pt2.steps[n - m:] == pt1.steps


def intersect_lb(pt1: PathType | None, pt2: PathType | None) -> PathType | None:
    """``pt1 ∩lb pt2``: the equal steps at the start of both (section 2.1, Example 4).

    Commutative; the result is absolute unless both are relative.

    >>> intersect_lb(PathType.parse("order/item"), PathType.parse("/order/billTo"))
    PathType('/order')
    >>> intersect_lb(PathType.parse("order"), PathType.parse("item")) is None
    True
    """
    if pt1 is None or pt2 is None:
        return None
    s1, s2 = pt1.steps, pt2.steps
    if s1[0] != s2[0]:
        return None
    j = 1
    limit = min(len(s1), len(s2))
    while j < limit and s1[j] == s2[j]:
        j += 1
    kind = pt1.kind if pt1.kind is pt2.kind else Kind.ABSOLUTE
    return PathType(kind, s1[:j])


def intersect_ab(pt1: PathType | None, pt2: PathType | None) -> PathType | None:
    """``pt1 ∩ab pt2``: ``pt1`` made absolute along the absolute ``pt2`` (section 2.1, Example 5).

    Not commutative. The result runs along ``pt2`` up to the last step where it contains
    ``pt1``; it is null unless ``pt1 ⊂ pt2`` or ``pt1 = pt2``.

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
    return PathType(Kind.ABSOLUTE, pt2.steps[:c + len(pt1.steps)])


def project(pt: PathType | None, pi: PathInstance | None) -> PathInstance | None:
    """``π_pt(pi)``: the part of ``pi`` that ``pt`` covers (section 2.1, Example 7).

    >>> pi = PathInstance.of("/order/item/price", ["o1", "i1", "p1"])
    >>> str(project(PathType.parse("item"), pi))
    'item[i1]'
    >>> project(PathType.parse("item"), PathInstance.of("/order", ["o1"])) is None
    True
    """
    if pt is None or pi is None:
        return None
    if pt == pi.pt:
        return pi
    c = _offset(pt, pi.pt)
    if c is None:
        return None
    return PathInstance(pt, pi.ids[c:c + len(pt.steps)])
