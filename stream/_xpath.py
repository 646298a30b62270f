"""The Core XPath subset (seed 004, section 1: Core XPath, "location paths and filters using
location paths"): tokens with positions, a parser with one function per precedence level, an
immutable AST and its printer.

Supported: absolute and relative location paths, ``/``, ``//``, ``.``, ``..``; the axes
``child``, ``descendant``, ``descendant-or-self``, ``self``, ``parent``, ``ancestor``,
``ancestor-or-self``, ``following-sibling``, ``preceding-sibling``; the node tests ``*``,
names, ``prefix:name`` and ``prefix:*`` (with a prefix map) and Clark names ``{uri}local``;
predicates with ``and``, ``or``, ``not(...)``, parentheses and nested (relative or absolute)
paths; ``[1]``, ``[last()]``, ``[position()=1]`` and ``[position()=last()]`` on child steps.
Everything else (attributes, text, functions, other positions, ``|``, the ``following`` and
``preceding`` axes) is refused with its column and the reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from xmlevents._foundation.names import NCNAME
from xmlevents._foundation.text import Cursor, LineIndex, Token, unexpected

from ._errors import QuerySyntaxError, UnsupportedQueryError

__all__ = ["NodeTest", "Step", "LocationPath", "Or", "And", "Not", "PathPred", "Position",
           "Pred", "parse_xpath", "AXES"]

AXES = ("child", "descendant", "descendant-or-self", "self", "parent", "ancestor",
        "ancestor-or-self", "following-sibling", "preceding-sibling")


@dataclass(frozen=True, slots=True)
class NodeTest:
    """``kind``: ``"name"`` (``value`` a Clark name), ``"ns"`` (``value`` a URI: ``p:*``),
    ``"any"`` (``*``) or ``"node"`` (``node()``, only from ``.``, ``..`` and ``//``)."""

    kind: str
    value: str = ""

    def __str__(self) -> str:
        if self.kind == "name":
            return self.value
        if self.kind == "ns":
            return "{" + self.value + "}*"
        return "*" if self.kind == "any" else "node()"


@dataclass(frozen=True, slots=True)
class Step:
    """``axis::test[p1][p2]...``; ``col`` is where it starts in the query (1-based)."""

    axis: str
    test: NodeTest
    predicates: tuple[Pred, ...] = ()
    col: int = field(default=0, compare=False)

    def __str__(self) -> str:
        if self.axis == "self" and self.test.kind == "node" and not self.predicates:
            return "."
        if self.axis == "parent" and self.test.kind == "node" and not self.predicates:
            return ".."
        if self.axis == "descendant-or-self" and self.test.kind == "node":
            return ""  # between two slashes: the abbreviation //
        axis = "" if self.axis == "child" else self.axis + "::"
        return f"{axis}{self.test}" + "".join(f"[{p}]" for p in self.predicates)


@dataclass(frozen=True, slots=True)
class LocationPath:
    """A location path: ``absolute`` ones start at the document node."""

    absolute: bool
    steps: tuple[Step, ...]
    col: int = field(default=0, compare=False)

    def __str__(self) -> str:
        body = "/".join(str(s) for s in self.steps)
        return "/" + body if self.absolute else body


@dataclass(frozen=True, slots=True)
class Or:
    """``left or right``."""

    left: Pred
    right: Pred

    def __str__(self) -> str:
        return f"{_wrap(self.left, Or)} or {_wrap(self.right, Or)}"


@dataclass(frozen=True, slots=True)
class And:
    """``left and right``."""

    left: Pred
    right: Pred

    def __str__(self) -> str:
        return f"{_wrap(self.left, And)} and {_wrap(self.right, And)}"


@dataclass(frozen=True, slots=True)
class Not:
    """``not(operand)``."""

    operand: Pred

    def __str__(self) -> str:
        return f"not({self.operand})"


@dataclass(frozen=True, slots=True)
class PathPred:
    """A location path used as a condition: some node is reached."""

    path: LocationPath

    def __str__(self) -> str:
        return str(self.path)


@dataclass(frozen=True, slots=True)
class Position:
    """``[1]`` (``last`` False) or ``[last()]``; ``col`` for errors."""

    last: bool
    col: int = field(default=0, compare=False)

    def __str__(self) -> str:
        return "last()" if self.last else "1"


Pred = Or | And | Not | PathPred | Position


def _wrap(p: Pred, within: type) -> str:
    if isinstance(p, Or | And) and not isinstance(p, within):
        return f"({p})"
    return str(p)


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<dslash>//)
  | (?P<slash>/)
  | (?P<dcolon>::)
  | (?P<ddot>\.\.)
  | (?P<number>\d+(?:\.\d*)?|\.\d+)
  | (?P<dot>\.)
  | (?P<clark>\{[^}]*\}(?:NCNAME|\*))
  | (?P<name>NCNAME(?::(?:NCNAME|\*))?)
  | (?P<punct>\*|\[|\]|\(|\)|=|@|\||,)
  | (?P<string>"[^"]*"|'[^']*')
  | (?P<op>!=|<=|>=|[<>+\-$])
""".replace("NCNAME", NCNAME), re.X)  # XML names (issue 28): query '//a·b' reads a·b


class _Parser:
    def __init__(self, text: str, namespaces: Mapping[str, str] | None) -> None:
        self.text = text
        self.ns = dict(namespaces or {})
        self.lines = LineIndex(text)
        toks: list[Token] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                self.fail(pos, unexpected(repr(text[pos])), syntax=True)
            if m.lastgroup != "ws":
                line, column = self.lines.at(pos)
                toks.append(Token(m.lastgroup or "", m.group(), line, column, pos, m.end()))
            pos = m.end()
        line, column = self.lines.at(len(text))
        toks.append(Token("end", "", line, column, len(text), len(text)))
        self.tokens = Cursor(iter(toks).__next__, text, self._syntax_error, eof="end")

    # helpers
    def fail(self, pos: int, reason: str, *, syntax: bool = False,
             phrases: tuple[tuple[str, str], ...] = ()) -> NoReturn:
        """Raise the error at ``pos``; ``phrases`` pair a hint worded for Python with its
        command-line wording (:meth:`~xmlevents.algebra.XmlEventsError.for_cli`)."""
        line, col = self.lines.at(pos)
        cls = QuerySyntaxError if syntax else UnsupportedQueryError
        error = cls(reason, text=self.text, line=line, column=col, context="query")
        for python, cli in phrases:
            error.phrased(python, cli)
        raise error

    def _syntax_error(self, reason: str, pos: int) -> NoReturn:
        self.fail(pos, reason, syntax=True)

    def col(self, pos: int) -> int:
        return self.lines.at(pos)[1]

    @property
    def tok(self) -> Token:
        return self.tokens.peek()

    def peek(self, k: int = 1) -> Token:
        return self.tokens.peek(k)

    def take(self) -> Token:
        return self.tokens.next()

    def expect(self, text: str, opener: Token | None = None) -> Token:
        """The token ``text`` (which closes ``opener``, if given)."""
        if self.tok.text != text and (self.tok.kind in ("op", "string", "number")
                                      or self.tok.text in ("=", "@", "|")):
            self.refuse_token(self.tok)
        if opener is not None:
            return self.tokens.expect_close("punct", opener, text, text)
        if self.tok.text != text:
            self.tokens.unexpected(repr(text))
        return self.take()

    def open(self, token: Token) -> Token:
        """``token`` (consumed) opens a bracket: the input ending inside it is unclosed."""
        return self.tokens.open(token, ")" if token.text == "(" else "]")

    def refuse_token(self, t: Token) -> NoReturn:
        if t.kind == "end":
            self.tokens.unexpected()
        if t.text == "@":
            self.fail(t.start, "attributes are not supported: the query model is the tree of "
                             "elements (seed 004, section 2); select elements")
        if t.kind == "string":
            self.fail(t.start, "string literals are not supported: Core XPath compares no "
                             "data values (seed 004, section 1)")
        if t.text == "|":
            self.fail(t.start, "unions ('|') are not supported: run one query per path")
        if t.kind in ("op", "number") or t.text == "=":
            self.fail(t.start, f"{t.text!r}: arithmetic and comparisons are not supported; a "
                             "predicate is a path, and, or, not(...), [1] or [last()]")
        self.tokens.unexpected(token=t)

    # grammar
    def parse(self) -> LocationPath:
        path = self.path()
        if self.tok.kind != "end":
            self.refuse_token(self.tok)
        return path

    def path(self) -> LocationPath:
        start = self.tok.start
        steps: list[Step] = []
        absolute = False
        if self.tok.kind == "slash":
            absolute = True
            self.take()
            if not self._step_starts():
                return LocationPath(True, (), self.col(start))
        elif self.tok.kind == "dslash":
            absolute = True
            t = self.take()
            steps.append(Step("descendant-or-self", NodeTest("node"), (), self.col(t.start)))
        steps.append(self.step())
        while self.tok.kind in ("slash", "dslash"):
            t = self.take()
            if t.kind == "dslash":
                steps.append(Step("descendant-or-self", NodeTest("node"), (), self.col(t.start)))
            steps.append(self.step())
        return LocationPath(absolute, tuple(steps), self.col(start))

    def _step_starts(self) -> bool:
        t = self.tok
        return t.kind in ("dot", "ddot", "name", "clark") or t.text in ("*", "@")

    def step(self) -> Step:
        t = self.tok
        col = self.col(t.start)
        if t.kind == "dot":
            self.take()
            return Step("self", NodeTest("node"), (), col)
        if t.kind == "ddot":
            self.take()
            return Step("parent", NodeTest("node"), (), col)
        axis = "child"
        if t.kind == "name" and self.peek().kind == "dcolon":
            axis = t.text
            if axis not in AXES:
                if axis in ("following", "preceding"):
                    self.fail(t.start, f"the {axis} axis is not supported; use "
                                     f"ancestor-or-self::*/{axis}-sibling::*/"
                                     "descendant-or-self::*")
                if axis in ("attribute", "namespace"):
                    self.fail(t.start, f"the {axis} axis is not supported: the query model is "
                                     "the tree of elements")
                self.fail(t.start, f"unknown axis {axis!r}", syntax=True)
            self.take()
            self.take()
        test = self.node_test()
        preds = []
        while self.tok.text == "[":
            opener = self.open(self.take())
            preds.append(self.predicate())
            self.expect("]", opener)
        return Step(axis, test, tuple(preds), col)

    def node_test(self) -> NodeTest:
        t = self.tok
        if t.text == "*":
            self.take()
            return NodeTest("any")
        if t.kind == "clark":
            self.take()
            if t.text.endswith("}*"):
                return NodeTest("ns", t.text[1:-2])
            return NodeTest("name", t.text)
        if t.kind == "name":
            if self.peek().text == "(":
                if t.text == "node":
                    self.fail(t.start, "node() is not supported as a node test: the matches "
                                     "are elements (use *); text nodes are reached only "
                                     "through //, . and ..")
                self.fail(t.start, f"{t.text}() is not supported as a step: the matches are "
                                 "elements")
            self.take()
            prefix, colon, local = t.text.partition(":")
            if not colon:
                return NodeTest("name", t.text)
            uri = self.ns.get(prefix)
            if uri is None:
                python = f"pass namespaces={{{prefix!r}: URI}}"
                self.fail(t.start, f"prefix {prefix!r} is not bound: {python}",
                          phrases=((python, f"pass --namespace {prefix}=URI"),))
            return NodeTest("ns", uri) if local == "*" else NodeTest("name", f"{{{uri}}}{local}")
        self.refuse_token(t)

    def predicate(self) -> Pred:
        t = self.tok
        if t.kind == "number":
            self.take()
            if t.text != "1":
                self.fail(t.start, f"position [{t.text}] is not supported: only [1] and "
                                 "[last()] (a position n would need counting up to n "
                                 "siblings; not implemented)")
            return Position(False, self.col(t.start))
        if t.text in ("last", "position") and self.peek().text == "(":
            return self.position()
        return self.or_expr()

    def position(self) -> Position:
        t = self.take()
        self.expect(")", self.open(self.expect("(")))
        if t.text == "last":
            return Position(True, self.col(t.start))
        if self.tok.text != "=":
            self.fail(t.start, "position() only as position()=1 or position()=last()")
        self.take()
        v = self.tok
        if v.text == "1":
            self.take()
            return Position(False, self.col(t.start))
        if v.text == "last" and self.peek().text == "(":
            self.take()
            self.expect(")", self.open(self.expect("(")))
            return Position(True, self.col(t.start))
        self.fail(v.start, "position() only as position()=1 or position()=last()")

    def or_expr(self) -> Pred:
        left = self.and_expr()
        while self.tok.kind == "name" and self.tok.text == "or":
            self.take()
            left = Or(left, self.and_expr())
        return left

    def and_expr(self) -> Pred:
        left = self.unary()
        while self.tok.kind == "name" and self.tok.text == "and":
            self.take()
            left = And(left, self.unary())
        return left

    def unary(self) -> Pred:
        t = self.tok
        if t.text == "(":
            self.open(self.take())
            inner = self.or_expr()
            self.expect(")", t)
            return inner
        if t.kind == "name" and self.peek().text == "(":
            if t.text == "not":
                self.take()
                opener = self.open(self.take())
                inner = self.or_expr()
                self.expect(")", opener)
                return Not(inner)
            if t.text in ("last", "position"):
                self.fail(t.start, f"{t.text}() only as a whole predicate: [1], [last()], "
                                 "[position()=1] or [position()=last()]")
            if t.text in ("true", "false"):
                self.fail(t.start, f"{t.text}() is not supported; write a path or not(...)")
            self.fail(t.start, f"function {t.text}() is not supported: Core XPath predicates "
                             "are paths with and, or and not(...)")
        if t.kind in ("slash", "dslash") or self._step_starts():
            return PathPred(self.path())
        self.refuse_token(t)


def parse_xpath(text: str, namespaces: Mapping[str, str] | None = None) -> LocationPath:
    """Parse a query of the supported Core XPath subset.

    Raises:
        QuerySyntaxError: the text is not XPath (line and column).
        UnsupportedQueryError: XPath outside the subset (column and reason).

    >>> str(parse_xpath("//a[c and not(d)]/b"))
    '//a[c and not(d)]/b'
    >>> try:
    ...     parse_xpath("//a[@id]")
    ... except UnsupportedQueryError as exc:
    ...     print(exc.column, exc.reason[:28])
    5 attributes are not supported
    """
    if not text.strip():
        raise QuerySyntaxError("the query is empty", text=text, line=1, column=1, context="query")
    return _Parser(text, namespaces).parse()


from typing import NoReturn  # noqa: E402  (used in annotations above)
