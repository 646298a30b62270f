"""The CEQL parser: CORE's query language (its ``CEQL_QUERY.g4``), with positions.

What is read, after CORE's grammar (keywords in any case; ``--`` and ``/* */`` comments)::

    query    ::= SELECT [ALL|ANY|NEXT|NXT|LAST|MAX|STRICT] (* | name (, name)*)
                 [FROM name (, name)*] WHERE formula
                 [PARTITION BY [attr (, attr)*]] [WITHIN window]
                 [CONSUME BY NONE] [LIMIT n]
    formula  ::= formula FILTER filter | formula OR formula | formula ; formula
               | formula + | formula AS name | ( formula ) | [stream >] name
    filter   ::= name [ condition ] | filter AND filter | filter OR filter | ( filter )
    condition::= NOT condition | condition AND|OR condition | ( condition )
               | expr (< | <= | > | >= | = | == | != | <>) expr
               | expr [NOT] IN { value (, value)* } | expr LIKE 'regex'
    expr     ::= number | 'string' | true | false | attr | name . attr
               | expr (+ | - | * | / | %) expr | - expr | ( expr )
    window   ::= n EVENTS | n (SECONDS | MINUTES | HOURS) | n [ attr ]

Operators bind as CORE's grammar orders them, tightest first: ``AS``, ``+``, ``;``, ``OR``,
``FILTER``; in conditions ``NOT`` before ``AND`` before ``OR``. ``CONSUME BY ANY`` and
``PARTITION`` (consumption policies) are refused: every match is reported.
"""

from __future__ import annotations

import re

from xmlevents.algebra import LineIndex

from ._errors import CELSyntaxError
from ._predicates import (
    Arith,
    Attr,
    Compare,
    CondAnd,
    Condition,
    CondNot,
    CondOr,
    Const,
    Expr,
    FilterAnd,
    FilterOr,
    In,
    Like,
    Neg,
    Predicate,
    VarFilter,
)
from .ast import As, EventType, Filter, Formula, Or, Plus, Query, Seq, Strategy, Window

__all__ = ["parse_query", "parse_formula"]

_TOKEN = re.compile(r"""
    (?P<space>\s+|--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<number>\d+\.\d*(?:[eE]-?\d+)?|\.\d+(?:[eE]-?\d+)?|\d+(?:[eE]-?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*|`(?:[^`]|``)*`)
  | (?P<string>'(?:[^']|'')*')
  | (?P<op><=|>=|==|!=|<>|[-<>=+*/%;,()\[\]{}.>])
""", re.VERBOSE | re.DOTALL)

_KEYWORDS = {"SELECT", "FROM", "WHERE", "PARTITION", "BY", "WITHIN", "CONSUME", "LIMIT",
             "AS", "OR", "AND", "NOT", "FILTER", "IN", "LIKE", "EVENTS", "SECONDS", "MINUTES",
             "HOURS", "ALL", "ANY", "NEXT", "NXT", "LAST", "MAX", "STRICT", "NONE", "TRUE",
             "FALSE", "SECOND", "MINUTE", "HOUR"}
_STRATEGIES = {"ALL": Strategy.ALL, "ANY": Strategy.ANY, "NEXT": Strategy.NEXT,
               "NXT": Strategy.NEXT, "LAST": Strategy.LAST, "MAX": Strategy.MAX,
               "STRICT": Strategy.STRICT}
_UNITS = {"SECOND": 1, "SECONDS": 1, "MINUTE": 60, "MINUTES": 60, "HOUR": 3600,
          "HOURS": 3600}
_MAX_DEPTH = 150


class _Token:
    __slots__ = ("end", "kind", "start", "text")

    def __init__(self, kind: str, text: str, start: int, end: int) -> None:
        self.kind, self.text, self.start, self.end = kind, text, start, end

    @property
    def word(self) -> str:
        return self.text.upper() if self.kind == "name" else ""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = LineIndex(text)
        self.tokens: list[_Token] = []
        i = 0
        while i < len(text):
            m = _TOKEN.match(text, i)
            if m is None:
                raise self.fail(f"unexpected character {text[i]!r}", i)
            if m.lastgroup != "space":
                self.tokens.append(_Token(str(m.lastgroup), m.group(), m.start(), m.end()))
            i = m.end()
        self.tokens.append(_Token("eof", "", len(text), len(text)))
        self.k = 0
        self.depth = 0

    # --- tokens ---------------------------------------------------------------------------

    def fail(self, reason: str, offset: int | None = None) -> CELSyntaxError:
        at = self.tokens[self.k].start if offset is None else offset
        line, col = self.lines.at(at)
        return CELSyntaxError(reason, text=self.text, line=line, col=col)

    @property
    def tok(self) -> _Token:
        return self.tokens[self.k]

    def pos(self, tok: _Token | None = None) -> tuple[int, int]:
        return self.lines.at((tok or self.tok).start)

    def describe(self) -> str:
        t = self.tok
        return "the end of the query" if t.kind == "eof" else repr(t.text)

    def keyword(self, *words: str) -> bool:
        if self.tok.word in words:
            self.k += 1
            return True
        return False

    def expect_keyword(self, word: str, why: str = "") -> None:
        if not self.keyword(word):
            raise self.fail(f"expected {word}{why}, got {self.describe()}")

    def op(self, *ops: str) -> str | None:
        t = self.tok
        if t.kind == "op" and t.text in ops:
            self.k += 1
            return t.text
        return None

    def expect_op(self, op: str, what: str) -> None:
        if self.op(op) is None:
            raise self.fail(f"expected {what}, got {self.describe()}")

    def name(self, what: str) -> str:
        t = self.tok
        if t.kind != "name" or t.word in _KEYWORDS:
            raise self.fail(f"expected {what}, got {self.describe()}")
        self.k += 1
        if t.text.startswith("`"):
            return t.text[1:-1].replace("``", "`")
        return t.text

    def integer(self, what: str) -> int:
        t = self.tok
        if t.kind != "number" or not t.text.isdigit():
            raise self.fail(f"expected {what} (a whole number), got {self.describe()}")
        self.k += 1
        return int(t.text)

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.fail(f"nested deeper than {_MAX_DEPTH} levels")

    # --- the query ------------------------------------------------------------------------

    def query(self) -> Query:
        self.expect_keyword("SELECT", " (a query is SELECT ... WHERE ...)")
        strategy = Strategy.ALL
        if self.tok.word in _STRATEGIES and not (
                self.tokens[self.k + 1].kind == "op" and self.tokens[self.k + 1].text == ","):
            strategy = _STRATEGIES[self.tok.word]
            self.k += 1
        variables: tuple[str, ...] | None
        if self.op("*"):
            variables = None
        else:
            names = [self.name("* or the variables to select")]
            while self.op(","):
                names.append(self.name("a variable"))
            variables = tuple(names)
        streams: list[str] = []
        if self.keyword("FROM"):
            streams.append(self.name("a stream name"))
            while self.op(","):
                streams.append(self.name("a stream name"))
        self.expect_keyword("WHERE", " and the pattern")
        formula = self.formula()
        partition: list[str] = []
        if self.keyword("PARTITION"):
            self.expect_keyword("BY")
            self.expect_op("[", "'[' and the attributes to partition by")
            partition.append(self.name("an attribute"))
            while self.op(","):
                partition.append(self.name("an attribute"))
            self.expect_op("]", "',' or ']'")
        within = None
        if self.keyword("WITHIN"):
            within = self.window()
        if self.keyword("CONSUME"):
            self.expect_keyword("BY")
            if not self.keyword("NONE"):
                raise self.fail(f"CONSUME BY {self.describe()} is not supported: every match "
                                "is reported (CONSUME BY NONE)")
        limit = None
        if self.keyword("LIMIT"):
            limit = self.integer("how many complex events")
        if self.tok.kind != "eof":
            raise self.fail(f"expected PARTITION BY, WITHIN, CONSUME BY, LIMIT or the end, "
                            f"got {self.describe()}")
        return Query(strategy, variables, tuple(streams), formula, tuple(partition), within,
                     limit)

    def window(self) -> Window:
        t = self.tok
        if t.kind != "number":
            raise self.fail(f"expected a window (n EVENTS, n SECONDS, n [attr]), got "
                            f"{self.describe()}")
        self.k += 1
        size = float(t.text)
        if size <= 0:
            raise self.fail("a window must be positive", t.start)
        if self.keyword("EVENTS"):
            if not t.text.isdigit():
                raise self.fail("a window of events is a whole number", t.start)
            return Window("events", size)
        unit = self.tok.word
        if unit in _UNITS:
            self.k += 1
            return Window("seconds", size * _UNITS[unit])
        if self.op("["):
            attr = self.name("the attribute the window measures")
            self.expect_op("]", "']'")
            return Window("attribute", size, attr)
        raise self.fail(f"expected EVENTS, SECONDS, MINUTES, HOURS or [attr] after the "
                        f"window's size, got {self.describe()}")

    # --- formulas -------------------------------------------------------------------------

    def formula(self) -> Formula:
        self.deeper()
        start = self.pos()
        f = self.disjunction()
        while self.keyword("FILTER"):
            f = Filter(f, self.filter(), pos=start)
        self.depth -= 1
        return f

    def disjunction(self) -> Formula:
        start = self.pos()
        f = self.sequence()
        while self.keyword("OR"):
            f = Or(f, self.sequence(), pos=start)
        return f

    def sequence(self) -> Formula:
        start = self.pos()
        f = self.postfix()
        while self.op(";"):
            f = Seq(f, self.postfix(), pos=start)
        return f

    def postfix(self) -> Formula:
        start = self.pos()
        f = self.primary()
        while True:
            if self.op("+"):
                f = Plus(f, pos=start)
            elif self.tok.word == "AS":
                at = self.tok.start
                self.k += 1
                var = self.name("a variable name after AS")
                if not isinstance(f, EventType):
                    raise self.fail("AS names one event (CEL's variables are positions): "
                                    "write T AS x for an event type T", at)
                f = As(f, var, pos=start)
            else:
                return f

    def primary(self) -> Formula:
        if self.op("("):
            f = self.formula()
            self.expect_op(")", "')'")
            return f
        pos = self.pos()
        name = self.name("an event type or '('")
        if self.op(">"):
            return EventType(self.name("an event type after 'stream>'"), name, pos=pos)
        return EventType(name, pos=pos)

    # --- filters --------------------------------------------------------------------------

    def filter(self) -> Predicate:
        self.deeper()
        p = self.filter_and()
        while self.keyword("OR"):
            p = FilterOr(p, self.filter_and())
        self.depth -= 1
        return p

    def filter_and(self) -> Predicate:
        p = self.filter_atom()
        while self.keyword("AND"):
            p = FilterAnd(p, self.filter_atom())
        return p

    def filter_atom(self) -> Predicate:
        if self.op("("):
            p = self.filter()
            self.expect_op(")", "')'")
            return p
        var = self.name("a filtered variable, as in x[temp > 40]")
        self.expect_op("[", f"'[' and a condition on {var}")
        cond = self.condition()
        self.expect_op("]", "']'")
        return VarFilter(var, cond)

    def condition(self) -> Condition:
        self.deeper()
        c = self.cond_and()
        while self.keyword("OR"):
            c = CondOr(c, self.cond_and())
        self.depth -= 1
        return c

    def cond_and(self) -> Condition:
        c = self.cond_not()
        while self.keyword("AND"):
            c = CondAnd(c, self.cond_not())
        return c

    def cond_not(self) -> Condition:
        if self.keyword("NOT"):
            return CondNot(self.cond_not())
        # a parenthesised condition, or an expression in parentheses: try the condition
        if self.tok.kind == "op" and self.tok.text == "(":
            mark = self.k
            self.k += 1
            try:
                c = self.condition()
                self.expect_op(")", "')'")
                return c
            except CELSyntaxError:
                self.k = mark  # it was an arithmetic expression
        left = self.expr()
        if self.keyword("NOT"):
            self.expect_keyword("IN", " after NOT")
            return In(left, self.values(), negated=True)
        if self.keyword("IN"):
            return In(left, self.values())
        if self.keyword("LIKE"):
            t = self.tok
            if t.kind != "string":
                raise self.fail(f"expected a quoted regular expression after LIKE, got "
                                f"{self.describe()}")
            self.k += 1
            try:
                return Like(left, t.text[1:-1].replace("''", "'"))
            except re.error as exc:
                raise self.fail(f"bad regular expression: {exc}", t.start) from None
        op = self.op("<=", ">=", "==", "!=", "<>", "<", ">", "=")
        if op is None:
            raise self.fail(f"expected a comparison (<, <=, >, >=, =, !=), IN or LIKE, got "
                            f"{self.describe()}")
        op = {"==": "=", "<>": "!="}.get(op, op)
        return Compare(op, left, self.expr())

    def values(self) -> tuple[str | int | float | bool, ...]:
        self.expect_op("{", "'{' and the values")
        out = [self.literal()]
        while self.op(","):
            out.append(self.literal())
        self.expect_op("}", "',' or '}'")
        return tuple(out)

    def literal(self) -> str | int | float | bool:
        negative = self.op("-") is not None
        t = self.tok
        if t.kind == "number":
            self.k += 1
            n = float(t.text) if any(c in t.text for c in ".eE") else int(t.text)
            return -n if negative else n
        if negative:
            raise self.fail("expected a number after '-'")
        if t.kind == "string":
            self.k += 1
            return t.text[1:-1].replace("''", "'")
        if t.word in ("TRUE", "FALSE"):
            self.k += 1
            return t.word == "TRUE"
        raise self.fail(f"expected a value, got {self.describe()}")

    def expr(self) -> Expr:
        self.deeper()
        e = self.term()
        while (op := self.op("+", "-")) is not None:
            e = Arith(op, e, self.term())
        self.depth -= 1
        return e

    def term(self) -> Expr:
        e = self.unary()
        while (op := self.op("*", "/", "%")) is not None:
            e = Arith(op, e, self.unary())
        return e

    def unary(self) -> Expr:
        if self.op("-"):
            return Neg(self.unary())
        if self.op("("):
            e = self.expr()
            self.expect_op(")", "')'")
            return e
        t = self.tok
        if t.kind in ("number", "string") or t.word in ("TRUE", "FALSE"):
            return Const(self.literal())
        name = self.name("an attribute, a number or a 'string'")
        if self.op("."):
            return Attr(self.name("an attribute after '.'"), name)
        return Attr(name)


def _check(text: object) -> str:
    if not isinstance(text, str):
        raise CELSyntaxError(f"expected the query's text, got {type(text).__name__}",
                             line=None, col=None)
    return text


def parse_query(text: str) -> Query:
    """Parse a CEQL query (see the module).

    Raises:
        CELSyntaxError: at the first offending token, with its line and column.

    >>> print(parse_query("SELECT NXT * FROM S WHERE T AS x ; H FILTER x[temp > 40]"))
    SELECT NEXT * FROM S WHERE T AS x ; H FILTER x[temp > 40]
    """
    return _Parser(_check(text)).query()


def parse_formula(text: str) -> Formula:
    """Parse a CEL formula alone (the part after WHERE)."""
    p = _Parser(_check(text))
    f = p.formula()
    if p.tok.kind != "eof":
        raise p.fail(f"expected ';', OR, FILTER, '+', AS or the end, got {p.describe()}")
    return f
