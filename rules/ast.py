"""The immutable syntax tree of ECA rules (seed 002, section 2).

A rule is ``on event if condition do actions`` (section 2). Its parts, as the paper defines
them, and the classes that hold them:

* **simple XPath** (section 2.4) — :class:`Path`: a root, :class:`Document` for
  ``document('name')`` or :class:`Delta` for ``$delta`` with its qualifiers, then
  :class:`Step` values, each with its separator (``/`` or ``//``), its test (a name, ``*``,
  ``@name``, ``@*``, ``.`` or ``..``: :class:`StepKind`) and its qualifiers. A path without a
  root is the relative path ``p`` of the grammar; it occurs only inside qualifiers.
* **qualifiers** ``q`` (section 2.4) — a :class:`Path` (true when it selects something), a
  :class:`Compare` of two operands (paths, :class:`Literal` strings, :class:`Number` values),
  and the connectives :class:`QAnd` and :class:`QOr` ("Q" for qualifier).
* **conditions** (section 2.2) — :data:`TRUE`, or simple XPath expressions joined by
  :class:`And`, :class:`Or` and :class:`Not`.
* **simple XQuery** (section 2.5) — an action's content is a :class:`Path` or an
  :class:`Element` constructor whose :class:`Attribute` values and contents may be enclosed
  expressions ``{e}`` (a :class:`Path` in the tree).
* **actions** (section 2.3) — :class:`Insert` (``INSERT r BELOW e [BEFORE | AFTER q]``, the
  placement a :class:`Position`) and :class:`Delete` (``DELETE e``).
* **events** (section 2.1) — :class:`Event` (``INSERT e`` / ``DELETE e``) and, beyond the
  paper, :class:`NamedEvent` (``EVENT Name``: a composite event type of the algebra).
* :class:`Rule` (name, priority, event, condition, actions) and :class:`RuleSet`.

Nodes are frozen, slotted values without parent pointers. ``pos`` (line, column in the source)
is kept for error messages and ignored by ``==``. ``str(node)`` prints the text form, and
parsing it back gives an equal node. Constructors check what the grammar guarantees (a
relative path only where a qualifier is expected, ``TRUE`` never inside ``and``, ...), so a
tree built in Python is as valid as a parsed one.

The data model is the paper's: documents of elements and attributes. A ``.`` or ``..`` step
after ``//`` ranges over elements (section 2.4 types such a step as ``*``), so ``a//.`` is
``a`` and its descendant elements.

The grammars as reconstructed from the extracted text, whose symbols the PDF conversion lost
(``¼`` is ``…``, ``Î`` is ``∈``, ``e¢`` is ``e'``):

* section 2.3: actions are ``action1; …; actionn``; ``q`` is evaluated on each child of each
  ``n ∈ N``.
* section 2.4: ``e ::= 'document(' s ')' ('/' | '//') p | '$delta' ('[' q ']')* (('/' |
  '//') p)?`` — a step after ``document(s)`` is required, after ``$delta`` optional. The
  ``q`` production has neither precedence nor parentheses; XPath 1.0's are used (``or``
  looser than ``and``, looser than a comparison; parentheses group). Comparisons do not chain
  (``(p | e | s) o (p | e | s)``); numbers are added as operands.
* section 2.5: the attribute production lost its ``=``: ``a ::= (n '=' '"' (s | e') '"'
  a)?``, with ``e' ::= '{' e '}'``.

>>> p = Path(Document("s.xml"), (Step(Sep.CHILD, StepKind.ELEMENT, "stores"),
...                              Step(Sep.DESCENDANT, StepKind.ELEMENT, "product")))
>>> str(p)
"document('s.xml')/stores//product"
>>> p.documents, p.uses_delta
(('s.xml',), False)
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from xmlevents._foundation import names as _names
from xmlevents.algebra import ArgumentTypeError, InvalidArgumentError, UnknownNameError

from ._errors import RuleError

if TYPE_CHECKING:
    from ._analysis import Analysis

__all__ = [
    "Pos",
    "Node",
    # paths (section 2.4)
    "Sep",
    "StepKind",
    "Step",
    "Document",
    "Delta",
    "Path",
    # qualifiers
    "CompOp",
    "Literal",
    "Number",
    "Compare",
    "QAnd",
    "QOr",
    "Qualifier",
    "Operand",
    # conditions (section 2.2)
    "TrueCondition",
    "TRUE",
    "And",
    "Or",
    "Not",
    "Formula",
    "Condition",
    # simple XQuery (section 2.5)
    "Element",
    "Attribute",
    "Content",
    "ElementContent",
    # actions (section 2.3)
    "Where",
    "Position",
    "Insert",
    "Delete",
    "Action",
    # events (section 2.1)
    "EventKind",
    "Event",
    "NamedEvent",
    "Trigger",
    # rules
    "Rule",
    "RuleSet",
    # helpers
    "NCNAME",
    "QNAME",
    "is_qname",
    "walk",
]

Pos = tuple[int, int]

#: An XML NCName (a name without a prefix), as a regular expression; a QName:
#: ``prefix:local`` or ``local``. XML 1.0 fifth edition names, the foundation's (issue 28).
NCNAME = _names.NCNAME
QNAME = _names.QNAME
_NCNAME_RE = re.compile(NCNAME)
_QNAME_RE = re.compile(QNAME)


def is_qname(name: object) -> bool:
    """Whether ``name`` is a QName (``local`` or ``prefix:local``), as element names are.

    >>> is_qname("p:product"), is_qname("2nd"), is_qname("a:b:c")
    (True, False, False)
    """
    return isinstance(name, str) and _QNAME_RE.fullmatch(name) is not None


# The characters XML 1.0 allows in a document; text built from others cannot be inserted.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _check_xml_text(where: str, text: str) -> None:
    bad = _NOT_XML.search(text)
    if bad is not None:
        raise InvalidArgumentError(f"{where}: character {bad.group()!r} at index {bad.start()} of "
                                   f"{text!r} cannot occur in XML")


def _check_type(where: str, value: object, types: type | tuple[type, ...], what: str) -> None:
    if not isinstance(value, types):
        raise ArgumentTypeError(f"{where}: {value!r} is not {what}")


def _tuple(where: str, value: Any) -> tuple[Any, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ArgumentTypeError(f"{where}: expected a tuple, got {value!r}")
    return tuple(value)


class Node:
    """Base of every node: ``str()`` prints the text form, ``repr()`` shows it too."""

    __slots__ = ()

    #: Line and column in the source text (None for a tree built in Python); not compared.
    pos: Pos | None

    @property
    def children(self) -> tuple[Node, ...]:
        """The nodes directly below this one, in text order."""
        return ()

    def __str__(self) -> str:
        from ._printer import to_text

        return to_text(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


def walk(node: Node) -> Iterator[Node]:
    """``node`` and every node below it, pre-order in text order (without recursion).

    >>> from xmlevents.rules import parse_path
    >>> [type(n).__name__ for n in walk(parse_path("$delta[@id='p1']/.."))]
    ['Path', 'Delta', 'Compare', 'Path', 'Step', 'Literal', 'Step']
    """
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


# --- paths (section 2.4) ---------------------------------------------------------------------

class Sep(enum.Enum):
    """The separator before a step: ``/`` (child) or ``//`` (descendant-or-self)."""

    CHILD = "/"
    DESCENDANT = "//"


class StepKind(enum.Enum):
    """What a step tests: an element name or ``*``, an attribute ``@name`` or ``@*``, the
    node itself ``.``, or its parent ``..`` — the four axes simple XPath keeps."""

    ELEMENT = "element"
    ATTRIBUTE = "attribute"
    SELF = "."
    PARENT = ".."


@dataclass(frozen=True, slots=True, repr=False)
class Step(Node):
    """One step ``sep test[q]...``; ``name`` is a QName or ``"*"`` for element and attribute
    steps, None for ``.`` and ``..``. The first step of a relative path has ``Sep.CHILD``
    (``a/b`` is ``./a/b``) and prints without it."""

    sep: Sep
    kind: StepKind
    name: str | None = None
    qualifiers: tuple[Qualifier, ...] = ()
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_type("Step", self.sep, Sep, "a Sep (Sep.CHILD or Sep.DESCENDANT)")
        _check_type("Step", self.kind, StepKind, "a StepKind")
        if self.kind in (StepKind.ELEMENT, StepKind.ATTRIBUTE):
            if not (self.name == "*" or is_qname(self.name)):
                raise InvalidArgumentError(f"Step: name={self.name!r}; an {self.kind.value} step "
                                           "needs a QName such as product or p:product, or *")
        elif self.name is not None:
            raise InvalidArgumentError(f"Step: a {self.kind.value} step has no name; got "
                                       f"name={self.name!r}")
        object.__setattr__(self, "qualifiers", _qualifiers("Step", self.qualifiers))

    @property
    def children(self) -> tuple[Node, ...]:
        return self.qualifiers

    @property
    def is_wildcard(self) -> bool:
        """``*`` or ``@*``."""
        return self.name == "*"


def _qualifiers(where: str, value: Any) -> tuple[Qualifier, ...]:
    items = _tuple(f"{where}: qualifiers", value)
    for item in items:
        _check_qualifier(where, item)
    return items


def _check_qualifier(where: str, item: object) -> None:
    _check_type(where, item, (Path, Compare, QAnd, QOr),
                "a qualifier (a Path, Compare, QAnd or QOr)")


@dataclass(frozen=True, slots=True, repr=False)
class Document(Node):
    """The root ``document('name')``: the document node of the store's document ``name``."""

    name: str
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_type("Document", self.name, str, "a document name (a str)")
        if not self.name:
            raise InvalidArgumentError("Document: name=''; give the name of a document of the "
                                       "store, as in document('s.xml')")


@dataclass(frozen=True, slots=True, repr=False)
class Delta(Node):
    """The root ``$delta[q]...``: one instantiation of ``$delta`` (section 2.1), filtered."""

    qualifiers: tuple[Qualifier, ...] = ()
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "qualifiers", _qualifiers("Delta", self.qualifiers))

    @property
    def children(self) -> tuple[Node, ...]:
        return self.qualifiers


@dataclass(frozen=True, slots=True, repr=False)
class Path(Node):
    """A simple XPath expression ``e`` (``root`` set) or a relative path ``p`` (``root``
    None, inside qualifiers only), section 2.4.

    The grammar asks ``document(s)`` for at least one step; ``$delta`` may stand alone.
    """

    root: Document | Delta | None
    steps: tuple[Step, ...] = ()
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.root is not None:
            _check_type("Path", self.root, (Document, Delta), "a root (Document, Delta or None)")
        steps = _tuple("Path: steps", self.steps)
        for step in steps:
            _check_type("Path", step, Step, "a Step")
        object.__setattr__(self, "steps", steps)
        if self.root is None:
            if not steps:
                raise InvalidArgumentError("Path: a relative path needs at least one step")
            if steps[0].sep is not Sep.CHILD:
                raise InvalidArgumentError("Path: a relative path cannot start with //; "
                                           "start it with a step, as in .//name")
        elif isinstance(self.root, Document) and not steps:
            raise InvalidArgumentError(
                f"Path: document({self.root.name!r}) needs a step after it, as in "
                f"document({self.root.name!r})/name (section 2.4)")

    @property
    def children(self) -> tuple[Node, ...]:
        return self.steps if self.root is None else (self.root, *self.steps)

    @property
    def absolute(self) -> bool:
        """Whether this is an expression ``e`` (rooted at a document or ``$delta``)."""
        return self.root is not None

    @property
    def uses_delta(self) -> bool:
        """Whether ``$delta`` occurs anywhere in it, qualifiers included (footnote 2: such an
        action runs once per instantiation)."""
        return any(isinstance(n, Delta) for n in walk(self))

    @property
    def documents(self) -> tuple[str, ...]:
        """The names of the documents it reads, qualifiers included, in text order, once each."""
        return tuple(dict.fromkeys(n.name for n in walk(self) if isinstance(n, Document)))

    @property
    def leaf(self) -> Step | None:
        """The last step (the distinguished leaf's step), or None for a bare ``$delta``."""
        return self.steps[-1] if self.steps else None

    def distinguished(self) -> Path:
        """The distinguished path: this path with every qualifier deleted (section 2.4).

        >>> from xmlevents.rules import parse_path
        >>> str(parse_path("document('p.xml')/products/product[@id=$delta/@id]/store")
        ...     .distinguished())
        "document('p.xml')/products/product/store"
        """
        root = Delta() if isinstance(self.root, Delta) else self.root
        steps = tuple(Step(s.sep, s.kind, s.name) for s in self.steps)
        return Path(root, steps)


def _absolute(where: str, path: object) -> Path:
    _check_type(where, path, Path, "a Path")
    assert isinstance(path, Path)
    if not path.absolute:
        raise InvalidArgumentError(
            f"{where}: the relative path {path} has no document; start it with "
            "document('name') or $delta (a relative path is allowed only in a qualifier)")
    return path


# --- qualifiers ------------------------------------------------------------------------------

class CompOp(enum.Enum):
    """The comparison operators ``o`` of section 2.4 (XPath 1.0 semantics)."""

    EQ = "="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="


@dataclass(frozen=True, slots=True, repr=False)
class Literal(Node):
    """A string literal ``s``."""

    value: str
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_type("Literal", self.value, str, "a str")


@dataclass(frozen=True, slots=True, repr=False)
class Number(Node):
    """A number literal (beyond the paper's grammar, which compares strings: XPath 1.0
    compares numbers too, ``rating > 5``); non-negative and finite, as XPath writes them.

    >>> Number(5) == Number("5.0"), str(Number("2.50"))
    (True, '2.50')
    """

    value: Decimal
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        value: Any = self.value
        if isinstance(value, bool) or not isinstance(value, (int, str, Decimal)):
            raise ArgumentTypeError(f"Number: {value!r} is not a number (int, str or Decimal)")
        try:
            number = Decimal(value)
        except ArithmeticError:
            raise InvalidArgumentError(f"Number: {value!r} is not a number") from None
        if not number.is_finite() or number < 0:
            raise InvalidArgumentError(f"Number: {value!r}; a number literal is finite and not "
                                       "negative")
        object.__setattr__(self, "value", number)


@dataclass(frozen=True, slots=True, repr=False)
class Compare(Node):
    """``left o right`` between paths, expressions and literals: ``@id=$delta/@id``."""

    left: Operand
    op: CompOp
    right: Operand
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for side in (self.left, self.right):
            _check_type("Compare", side, (Path, Literal, Number),
                        "an operand (a Path, Literal or Number)")
        _check_type("Compare", self.op, CompOp, "a CompOp")

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)


def _items(where: str, value: Any, check: Any) -> tuple[Any, ...]:
    items = _tuple(f"{where}: items", value)
    if len(items) < 2:
        raise InvalidArgumentError(f"{where} needs at least 2 operands, got {len(items)}")
    for item in items:
        check(where, item)
    return items


@dataclass(frozen=True, slots=True, repr=False)
class QAnd(Node):
    """``q and q ...`` inside a qualifier; a chain is one node, parentheses nest."""

    items: tuple[Qualifier, ...]
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _items("QAnd", self.items, _check_qualifier))

    @property
    def children(self) -> tuple[Node, ...]:
        return self.items


@dataclass(frozen=True, slots=True, repr=False)
class QOr(Node):
    """``q or q ...`` inside a qualifier."""

    items: tuple[Qualifier, ...]
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _items("QOr", self.items, _check_qualifier))

    @property
    def children(self) -> tuple[Node, ...]:
        return self.items


# --- conditions (section 2.2) ----------------------------------------------------------------

@dataclass(frozen=True, slots=True, repr=False)
class TrueCondition(Node):
    """The constant ``TRUE``: a condition, or the qualifier of ``BEFORE``/``AFTER``."""

    pos: Pos | None = field(default=None, compare=False)


#: The constant ``TRUE``.
TRUE = TrueCondition()


def _check_formula(where: str, item: object) -> None:
    _check_type(where, item, (Path, And, Or, Not),
                "a condition (a Path, And, Or or Not; TRUE stands only alone)")
    if isinstance(item, Path):
        _absolute(where, item)


@dataclass(frozen=True, slots=True, repr=False)
class And(Node):
    """``c and c ...`` in a condition."""

    items: tuple[Formula, ...]
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _items("And", self.items, _check_formula))

    @property
    def children(self) -> tuple[Node, ...]:
        return self.items


@dataclass(frozen=True, slots=True, repr=False)
class Or(Node):
    """``c or c ...`` in a condition."""

    items: tuple[Formula, ...]
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _items("Or", self.items, _check_formula))

    @property
    def children(self) -> tuple[Node, ...]:
        return self.items


@dataclass(frozen=True, slots=True, repr=False)
class Not(Node):
    """``not(c)`` in a condition (not inside qualifiers: section 2.4's ``q`` has no not)."""

    item: Formula
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_formula("Not", self.item)

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.item,)


def _check_condition(where: str, value: object) -> None:
    if not isinstance(value, TrueCondition):
        _check_formula(where, value)


# --- simple XQuery (section 2.5) -------------------------------------------------------------

@dataclass(frozen=True, slots=True, repr=False)
class Attribute(Node):
    """``name="s"`` or ``name="{e}"``: the value is a string or one enclosed expression,
    never a mix (section 2.5's ``a`` production)."""

    name: str
    value: str | Path
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not is_qname(self.name):
            raise InvalidArgumentError(f"Attribute: name={self.name!r} is not a QName")
        if self.name == "xmlns" or self.name.startswith("xmlns:"):
            raise InvalidArgumentError(f"Attribute: {self.name} declares a namespace; bind "
                                       "prefixes with namespaces={...} instead")
        if isinstance(self.value, str):
            _check_xml_text(f"Attribute {self.name}", self.value)
        else:
            _absolute("Attribute", self.value)

    @property
    def children(self) -> tuple[Node, ...]:
        return () if isinstance(self.value, str) else (self.value,)


@dataclass(frozen=True, slots=True, repr=False)
class Element(Node):
    """An element constructor ``<name a="...">t...</name>``; contents are strings, nested
    constructors and enclosed expressions ``{e}`` (a :class:`Path`).

    Adjacent strings are joined and empty ones dropped, so equal text gives equal trees.

    >>> str(Element("store", (Attribute("id", "s1"),), ("a", "b")))
    "<store id='s1'>ab</store>"
    """

    name: str
    attributes: tuple[Attribute, ...] = ()
    contents: tuple[ElementContent, ...] = ()
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not is_qname(self.name):
            raise InvalidArgumentError(f"Element: name={self.name!r} is not a QName")
        attributes = _tuple("Element: attributes", self.attributes)
        seen: set[str] = set()
        for attribute in attributes:
            _check_type("Element", attribute, Attribute, "an Attribute")
            if attribute.name in seen:
                raise InvalidArgumentError(f"Element <{self.name}>: attribute {attribute.name!r} "
                                           "is given twice")
            seen.add(attribute.name)
        contents: list[ElementContent] = []
        for item in _tuple("Element: contents", self.contents):
            if isinstance(item, str):
                _check_xml_text(f"Element <{self.name}>", item)
                if contents and isinstance(contents[-1], str):
                    contents[-1] += item
                elif item:
                    contents.append(item)
            elif isinstance(item, Element):
                contents.append(item)
            else:
                contents.append(_absolute("Element", item))
        object.__setattr__(self, "attributes", attributes)
        object.__setattr__(self, "contents", tuple(contents))

    @property
    def children(self) -> tuple[Node, ...]:
        return (*self.attributes, *(c for c in self.contents if not isinstance(c, str)))


# --- actions (section 2.3) -------------------------------------------------------------------

class Where(enum.Enum):
    """``BEFORE q`` (before the first child where q holds) or ``AFTER q`` (after the last)."""

    BEFORE = "BEFORE"
    AFTER = "AFTER"


@dataclass(frozen=True, slots=True, repr=False)
class Position(Node):
    """``BEFORE q`` or ``AFTER q``; ``test`` is :data:`TRUE` or a qualifier evaluated on each
    child of the node below which the content goes (section 2.3)."""

    where: Where
    test: TrueCondition | Qualifier = TRUE
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_type("Position", self.where, Where, "Where.BEFORE or Where.AFTER")
        if not isinstance(self.test, TrueCondition):
            _check_qualifier("Position", self.test)

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.test,)


@dataclass(frozen=True, slots=True, repr=False)
class Insert(Node):
    """``INSERT content BELOW below [BEFORE | AFTER q]``.

    ``below`` selects the elements under which the content goes, so its last step cannot
    be an attribute; without a position the paper leaves the place open (the executor
    decides and documents it).
    """

    content: Content
    below: Path
    position: Position | None = None
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.content, Element):
            _absolute("Insert: content", self.content)
        below = _absolute("Insert: BELOW", self.below)
        if below.leaf is not None and below.leaf.kind is StepKind.ATTRIBUTE:
            raise InvalidArgumentError(f"Insert: BELOW {below} selects attributes; content goes "
                                       "below elements")
        if self.position is not None:
            _check_type("Insert", self.position, Position, "a Position or None")

    @property
    def children(self) -> tuple[Node, ...]:
        parts: tuple[Node, ...] = (self.content, self.below)
        return parts if self.position is None else (*parts, self.position)


@dataclass(frozen=True, slots=True, repr=False)
class Delete(Node):
    """``DELETE target``: the selected nodes go, with their sub-documents."""

    target: Path
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _absolute("Delete", self.target)

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.target,)


# --- events (section 2.1) --------------------------------------------------------------------

class EventKind(enum.Enum):
    """``INSERT e`` or ``DELETE e``."""

    INSERT = "INSERT"
    DELETE = "DELETE"


@dataclass(frozen=True, slots=True, repr=False)
class Event(Node):
    """``INSERT e`` / ``DELETE e``: triggered when ``e`` selects a new or deleted node.

    ``e`` starts at ``document('name')``: it defines ``$delta`` and cannot use it.
    """

    kind: EventKind
    path: Path
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_type("Event", self.kind, EventKind, "EventKind.INSERT or EventKind.DELETE")
        _absolute("Event", self.path)
        if self.path.uses_delta:
            raise InvalidArgumentError(f"Event: {self.path} uses $delta, which the event defines; "
                                       "start it with document('name')")

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.path,)


@dataclass(frozen=True, slots=True, repr=False)
class NamedEvent(Node):
    """``EVENT Name`` (beyond the paper): raised with each composite event of the algebra's
    definition ``Name``; ``$delta`` is the node at the composite event's path instance."""

    name: str
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or _NCNAME_RE.fullmatch(self.name) is None:
            raise InvalidArgumentError(f"NamedEvent: name={self.name!r}; give the name of a "
                                       "composite event definition, as in EVENT ItemComplete")


# --- rules -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, repr=False)
class Rule(Node):
    """``rule name priority n: on event if condition do action; ...`` (section 2).

    A larger priority runs first (section 2.6); ``condition`` is :data:`TRUE` when the text
    has no ``if``.
    """

    name: str
    priority: int
    event: Trigger
    condition: Condition
    actions: tuple[Action, ...]
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or _NCNAME_RE.fullmatch(self.name) is None:
            raise InvalidArgumentError(f"Rule: name={self.name!r}; a rule name is a name such "
                                       "as R1 or keep-stores")
        if isinstance(self.priority, bool) or not isinstance(self.priority, int):
            raise ArgumentTypeError(f"Rule {self.name}: priority={self.priority!r} is not an "
                                    "integer")
        _check_type(f"Rule {self.name}", self.event, (Event, NamedEvent),
                    "an event (Event or NamedEvent)")
        _check_condition(f"Rule {self.name}: condition", self.condition)
        actions = _tuple(f"Rule {self.name}: actions", self.actions)
        if not actions:
            raise InvalidArgumentError(f"Rule {self.name}: give at least one action")
        for action in actions:
            _check_type(f"Rule {self.name}", action, (Insert, Delete), "an Insert or Delete")
        object.__setattr__(self, "actions", actions)

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.event, self.condition, *self.actions)


@dataclass(frozen=True, slots=True, repr=False)
class RuleSet(Node):
    """Rules with unique names and unique priorities (section 2.6, footnote 5).

    ``source`` (a file name) and ``text`` (the parsed text) serve error messages only.

    Raises:
        RuleError: for a second rule with a name or a priority already used, at its position.
    """

    rules: tuple[Rule, ...] = ()
    source: str = field(default="", compare=False)
    text: str = field(default="", compare=False, repr=False)
    pos: Pos | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        rules = _tuple("RuleSet: rules", self.rules)
        names: dict[str, Rule] = {}
        priorities: dict[int, Rule] = {}
        for rule in rules:
            _check_type("RuleSet", rule, Rule, "a Rule")
            line, col = rule.pos if rule.pos is not None else (None, None)
            where = {"rule": rule.name, "text": self.text, "line": line, "column": col,
                     "context": self.source}
            if rule.name in names:
                raise RuleError(f"a second rule named {rule.name}{_at(names[rule.name])}; "
                                "rule names are unique", **where)
            if rule.priority in priorities:
                other = priorities[rule.priority]
                raise RuleError(f"rule {rule.name} has priority {rule.priority}, as rule "
                                f"{other.name}{_at(other)} has; priorities are unique (a larger "
                                "number runs first)", **where)
            names[rule.name] = rule
            priorities[rule.priority] = rule
        object.__setattr__(self, "rules", rules)

    @property
    def children(self) -> tuple[Node, ...]:
        return self.rules

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __getitem__(self, name: str) -> Rule:
        """The rule named ``name``.

        Raises:
            UnknownNameError: (a ``KeyError``) naming the rules there are.
        """
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise UnknownNameError(f"no rule named {name!r}; the rules are "
                       f"{', '.join(r.name for r in self.rules) or 'none'}")

    def analyse(self, *, strict: bool = False) -> Analysis:
        """The static termination analysis of section 3: triggering and activation graphs
        and a verdict (:func:`xmlevents.rules.analyse`)."""
        from ._analysis import analyse

        return analyse(self, strict=strict)

    def by_priority(self) -> tuple[Rule, ...]:
        """The rules, highest priority first: the order their actions enter the schedule."""
        return tuple(sorted(self.rules, key=lambda r: -r.priority))


def _at(rule: Rule) -> str:
    return f" (line {rule.pos[0]})" if rule.pos is not None else ""


Qualifier = Path | Compare | QAnd | QOr
Operand = Path | Literal | Number
Formula = Path | And | Or | Not
Condition = TrueCondition | Formula
Content = Path | Element
ElementContent = str | Element | Path
Action = Insert | Delete
Trigger = Event | NamedEvent
