"""The CEQL parser: CORE's query language (its ``CEQL_QUERY.g4``), with positions.

What is read, after CORE's grammar (``CEQLQueryParser.g4``; keywords in any case; ``--`` and
``/* */`` comments; names plain or in backquotes)::

    query    ::= SELECT [ALL|ANY|NEXT|NXT|LAST|MAX|STRICT] (* | NONE | sel (, sel)*)
                 [FROM name (, name)*] WHERE formula
                 [PARTITION BY [key (, key)*] (, [key (, key)*])*] [WITHIN window]
                 [CONSUME BY (ANY | PARTITION | NONE)] [LIMIT n]
    sel      ::= [stream >] name [ [ attr (, attr)* ] ]      (attributes read, not applied)
    key      ::= attr | PROJECT ( attr , 'path type' )
    formula  ::= formula FILTER filter | formula OR formula | formula : formula
               | formula ; formula | formula :+ | formula + | formula AS name
               | ( formula ) | [stream >] name
    filter   ::= [stream >] name [ condition ] | filter AND filter | filter OR filter
               | ( filter )
    condition::= NOT condition | condition AND|OR condition | ( condition )
               | expr (< | <= | > | >= | = | == | != | <>) expr
               | expr [NOT] IN { value (, value)* } | expr [NOT] IN { [n] .. [n] }
               | expr IN RANGE ( expr , expr ) | expr LIKE 'regex'
               | expr MATCHES 'path type'                     (primitive events; extension)
    expr     ::= number | 'string' | true | false | attr | name . attr   (name.attr: extension)
               | expr (+ | - | * | / | %) expr | (+ | -) expr | ( expr )
    window   ::= n EVENTS | [n HOURS] [n MINUTES] [n SECONDS] | n [ attr ]

Operators bind as CORE's grammar orders them (ANTLR gives the earlier alternative the higher
precedence), tightest first: ``AS``, the postfix ``+`` and ``:+``, ``;``, ``:``, ``OR``,
``FILTER``; in conditions ``NOT`` before ``AND`` before
``OR``. Ranges are inclusive at both ends, as CORE evaluates them (``IN RANGE(a, b)`` is
``a <= e AND e <= b``, and so is ``IN {a..b}``).

Refused, with the reason: CORE's negation ``NOT(T)`` / ``!(T)`` and ``UNLESS`` (not CEL: the
paper's logic has no negation), ``AS`` on anything but an event type (CEL's variables name one
event each), regular expressions written ``<<...>>`` (write them as a quoted string). The core
dialect (``dialect="core"``, issue 32) reads ``AS`` on any formula and ``NOT ( T [FILTER
filter]* )`` as CORE's grammar does, refuses ``x.attr`` (CORE's filters read their own event)
and marks ``/`` and ``%`` as CORE's integer ones; :mod:`._core` translates the result.
"""

from __future__ import annotations

import re
from typing import NoReturn

from xmlevents._foundation.names import ASCII_NAME_CHAR, ASCII_NAME_START
from xmlevents._foundation.text import Cursor, LineIndex, Token
from xmlevents._foundation.time import UNITS as _TIME_UNITS
from xmlevents._foundation.time import Duration
from xmlevents.algebra import PathType, XmlEventsError

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
    PathMatches,
    Predicate,
    VarFilter,
)
from .ast import (
    As,
    ContiguousPlus,
    ContiguousSeq,
    EventType,
    Filter,
    Formula,
    Not,
    Or,
    Plus,
    Query,
    Seq,
    Strategy,
    Window,
)

__all__ = ["parse_query", "parse_formula"]

# Names are CORE's identifiers, not XML names, by design (issue 28): CEQL's grammar
# (CEQL_QUERY.g4's IDENTIFIER) takes ASCII letters, digits and '_', and '-', '.' are its
# operators (x.temp, a - b); any other name is written in backquotes. The foundation's ASCII
# part of an XML name. XML paths (MATCHES, PROJECT) are quoted and read as the algebra's path
# types, whose steps are XML names.
_TOKEN = re.compile(rf"""
    (?P<space>\s+|--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<number>\d+\.\d+(?:[eE]-?\d+)?|\.\d+(?:[eE]-?\d+)?|\d+(?:[eE]-?\d+)?)
  | (?P<name>[{ASCII_NAME_START}][{ASCII_NAME_CHAR}]*|`(?:[^`]|``)*`)
  | (?P<string>'(?:[^']|'')*')
  | (?P<op><<|>>|<=|>=|==|!=|<>|:\+|\.\.|[-<>=+*/%;:,()\[\]{{}}.>!])
""", re.VERBOSE | re.DOTALL)

_KEYWORDS = {"SELECT", "FROM", "WHERE", "PARTITION", "BY", "WITHIN", "CONSUME", "LIMIT",
             "AS", "OR", "AND", "NOT", "FILTER", "IN", "LIKE", "EVENTS", "SECONDS", "MINUTES",
             "HOURS", "ALL", "ANY", "NEXT", "NXT", "LAST", "MAX", "STRICT", "NONE", "TRUE",
             "FALSE", "SECOND", "MINUTE", "HOUR", "UNLESS", "RANGE", "MATCHES", "DISTINCT",
             "EVENT", "STREAM"}
_STRATEGIES = {"ALL": Strategy.ALL, "ANY": Strategy.ANY, "NEXT": Strategy.NEXT,
               "NXT": Strategy.NEXT, "LAST": Strategy.LAST, "MAX": Strategy.MAX,
               "STRICT": Strategy.STRICT}
# CORE's duration units, in milliseconds: the one time model's (xmlevents._foundation.time,
# shared with the algebra's within=30s), so that a window's duration is exact.
_UNITS = {word: _TIME_UNITS[unit] for words, unit in (
    (("SECOND", "SECONDS"), "s"), (("MINUTE", "MINUTES"), "m"), (("HOUR", "HOURS"), "h"))
    for word in words}
_MAX_DEPTH = 150


class _CelCursor(Cursor):
    """The shared cursor (issue 28), saying two things as CEL always has: a token is quoted
    whole (a long string or backquoted name is what to fix), and a query of nothing but
    spaces and comments ends where its text ends (nothing was read to be after)."""

    __slots__ = ()

    def describe(self, token: Token) -> str:
        return "end of input" if token.kind == self.eof else repr(token.text)

    def offset(self, token: Token) -> int:
        if self.previous is None:
            return token.start
        return super().offset(token)


def _word(token: Token) -> str:
    """A name token's text in upper case (keywords are case-insensitive), else ""."""
    return token.text.upper() if token.kind == "name" else ""


class _Parser:
    def __init__(self, text: str, dialect: str = "paper") -> None:
        self.text = text
        self.core = dialect == "core"
        self.lines = LineIndex(text)
        tokens: list[Token] = []
        i = 0
        while i < len(text):
            m = _TOKEN.match(text, i)
            if m is None:
                hint = (": a name outside ASCII letters, digits and _ is written in "
                        "backquotes, as in `caf\u00e9`" if text[i].isalpha() else "")
                raise self.fail(f"unexpected character {text[i]!r}{hint}", i)
            if m.lastgroup != "space":
                line, column = self.lines.at(m.start())
                tokens.append(Token(str(m.lastgroup), m.group(), line, column, m.start(),
                                         m.end()))
            i = m.end()
        line, column = self.lines.at(len(text))
        tokens.append(Token("eof", "", line, column, len(text), len(text)))
        lines = self.lines

        def fail(reason: str, offset: int) -> NoReturn:
            # Not a bound method: the cursor holding the parser would make every parse a
            # reference cycle, left to the garbage collector (a tenth of the parse time).
            line, column = lines.at(offset)
            raise CELSyntaxError(reason, text=text, line=line, column=column)

        self.c: Cursor = _CelCursor(iter(tokens).__next__, text, fail, eof="eof")
        self.depth = 0

    # --- tokens ---------------------------------------------------------------------------

    def fail(self, reason: str, offset: int | None = None) -> CELSyntaxError:
        """The error ``reason`` at ``offset`` (the current token's start)."""
        at = self.c.current.start if offset is None else offset
        line, col = self.lines.at(at)
        return CELSyntaxError(reason, text=self.text, line=line, column=col)

    def pos(self, tok: Token | None = None) -> tuple[int, int]:
        return self.lines.at((tok or self.c.current).start)

    def keyword(self, *words: str) -> bool:
        c = self.c
        if _word(c.current) in words:
            c.next()
            return True
        return False

    def expect_keyword(self, word: str, why: str = "") -> None:
        if not self.keyword(word):
            self.unexpected(f"{word}{why}")

    def op(self, *ops: str) -> str | None:
        c = self.c
        t = c.current
        if t.kind == "op" and t.text in ops:
            c.next()
            return t.text
        return None

    def expect_op(self, op: str, what: str) -> None:
        if self.op(op) is None:
            self.unexpected(what)

    def unexpected(self, expected: str) -> NoReturn:
        """``unexpected X: expected EXPECTED`` at the current token (issue 28's one wording);
        the end of input inside a bracket (:meth:`opens`) is ``unclosed`` instead."""
        self.c.unexpected(expected)

    def opens(self, op: str, closer: str) -> Token | None:
        """The bracket ``op`` if it is the current token, consumed and opened (closed by
        ``closer``); else None."""
        t = self.c.current
        if t.kind == "op" and t.text == op:
            return self.c.open(self.c.next(), closer)
        return None

    def expect_open(self, op: str, closer: str, what: str) -> Token:
        opener = self.opens(op, closer)
        if opener is None:
            self.unexpected(what)
        return opener

    def close(self, op: str, opener: Token) -> None:
        """The ``op`` that closes ``opener``; the input ending first is an unclosed bracket,
        another token ``unexpected ...: expected ')' to close '(' (opened at ...)``."""
        self.c.expect_close("op", opener, op, op)

    def expect_close(self, op: str, opener: Token, what: str) -> None:
        """The ``op`` that closes ``opener``, or ``unexpected ...: expected WHAT``."""
        if self.c.accept_close("op", opener, op) is None:
            self.unexpected(what)

    def name(self, what: str) -> str:
        t = self.c.current
        if t.kind != "name" or _word(t) in _KEYWORDS:
            self.unexpected(f"{what}")
        self.c.next()
        if t.text.startswith("`"):
            return t.text[1:-1].replace("``", "`")
        return t.text

    def integer(self, what: str) -> int:
        t = self.c.current
        if t.kind != "number" or not t.text.isdigit():
            self.unexpected(f"{what} (a whole number)")
        self.c.next()
        return int(t.text)

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.fail(f"nested deeper than {_MAX_DEPTH} levels")

    # --- the query ------------------------------------------------------------------------

    def query(self) -> Query:
        self.expect_keyword("SELECT", " (a query is SELECT ... WHERE ...)")
        strategy = Strategy.ALL
        if _word(self.c.current) in _STRATEGIES and not (
                self.c.peek(1).kind == "op"
                and self.c.peek(1).text in (",", ">", "[")) \
                and _word(self.c.peek(1)) != "FROM":
            strategy = _STRATEGIES[_word(self.c.current)]
            self.c.next()
        variables: tuple[str, ...] | None
        if self.op("*"):
            variables = None
        elif self.keyword("NONE"):
            variables = ()
        else:
            names = [self.selected()]
            while self.op(","):
                names.append(self.selected())
            variables = tuple(names)
        streams: list[str] = []
        if self.keyword("FROM"):
            streams.append(self.name("a stream name"))
            while self.op(","):
                streams.append(self.name("a stream name"))
        self.expect_keyword("WHERE", " and the pattern")
        formula = self.formula()
        partition: list[tuple[str, ...]] = []
        if self.keyword("PARTITION"):
            self.expect_keyword("BY")
            partition.append(self.partition_list())
            while self.op(","):
                partition.append(self.partition_list())
        within = None
        if self.keyword("WITHIN"):
            within = self.window()
        consume = None
        if self.keyword("CONSUME"):
            self.expect_keyword("BY")
            if _word(self.c.current) not in ("ANY", "PARTITION", "NONE"):
                self.unexpected("ANY, PARTITION or NONE after CONSUME BY")
            consume = _word(self.c.current)
            self.c.next()
        limit = None
        if self.keyword("LIMIT"):
            limit = self.integer("how many complex events")
        if self.c.current.kind != "eof":
            self.unexpected("PARTITION BY, WITHIN, CONSUME BY, LIMIT or the end")
        return Query(strategy, variables, tuple(streams), formula, tuple(partition), within,
                     consume, limit)

    def selected(self) -> str:
        """A selected variable (``stream>name`` read as ``name``); CORE's attribute
        projection ``name[a, b]`` is read and not applied: outputs are positions."""
        name = self.name("* or the variables to select")
        if self.op(">"):
            name = self.name("a variable after 'stream>'")
        opener = self.opens("[", "]")
        if opener is not None:
            self.name("an attribute")
            while self.op(","):
                self.name("an attribute")
            self.expect_close("]", opener, "',' or ']'")
        return name

    def partition_list(self) -> tuple[str, ...]:
        opener = self.expect_open("[", "]", "'[' and the attributes to partition by")
        keys = [self.partition_key()]
        while self.op(","):
            keys.append(self.partition_key())
        self.expect_close("]", opener, "',' or ']'")
        return tuple(keys)

    def partition_key(self) -> str:
        if _word(self.c.current) == "PROJECT" and self.c.peek(1).text == "(":
            self.c.next()
            opener = self.c.open(self.c.next(), ")")
            attr = self.name("the attribute holding a path instance (ids)")
            self.expect_op(",", "',' and a quoted path type")
            t = self.c.current
            if t.kind != "string":
                self.unexpected("a quoted path type")
            self.c.next()
            pt = t.text[1:-1].replace("''", "'")
            try:
                PathType.parse(pt)
            except XmlEventsError as exc:
                raise self.fail(f"bad path type {pt!r}: {exc}", t.start) from None
            self.expect_close(")", opener, "')'")
            return f"PROJECT({attr}, {t.text})"
        return self.name("an attribute")

    def window(self) -> Window:
        t = self.c.current
        if t.kind != "number":
            self.unexpected("a window (n EVENTS, n SECONDS, n [attr])")
        self.c.next()
        # a whole number stays an int (exact at any size; issue 32: float(t.text) rounded a
        # window past 2**53)
        size: int | float = int(t.text) if t.text.isdigit() else float(t.text)
        if size <= 0:
            raise self.fail("a window must be positive", t.start)
        if self.keyword("EVENTS"):
            if not t.text.isdigit():
                raise self.fail("a window of events is a whole number", t.start)
            return Window("events", size)
        unit = _word(self.c.current)
        if unit in _UNITS:
            # CORE: [n HOURS] [n MINUTES] [n SECONDS], in that order, added up exactly in
            # whole milliseconds (a Duration: the one time model, docs/semantics.md "Time")
            total = 0
            last = 1 << 62
            while True:
                factor = _UNITS[_word(self.c.current)]
                if factor >= last:
                    raise self.fail("a duration is written hours, then minutes, then seconds")
                last = factor
                self.c.next()
                try:
                    total += Duration.of(t.text, factor).ms if size else 0
                except XmlEventsError:
                    raise self.fail(f"{t.text} {unit}: a duration is a whole number of "
                                    "milliseconds", t.start) from None
                if self.c.current.kind == "number" and _word(self.c.peek(1)) in _UNITS:
                    t = self.c.current
                    size = int(t.text) if t.text.isdigit() else float(t.text)
                    unit = _word(self.c.peek(1))
                    self.c.next()
                    continue
                return Window("seconds", Duration(total).seconds)
        opener = self.opens("[", "]")
        if opener is not None:
            if not t.text.isdigit():
                raise self.fail("a window over an attribute is a whole number", t.start)
            attr = self.name("the attribute the window measures")
            self.expect_close("]", opener, "']'")
            return Window("attribute", size, attr)
        self.unexpected("EVENTS, SECONDS, MINUTES, HOURS or [attr] after the "
            "window's size")

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
        f = self.contiguous()
        while self.keyword("OR"):
            f = Or(f, self.contiguous(), pos=start)
        return f

    def contiguous(self) -> Formula:
        start = self.pos()
        f = self.sequence()
        while self.op(":"):
            f = ContiguousSeq(f, self.sequence(), pos=start)
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
            elif self.op(":+"):
                f = ContiguousPlus(f, pos=start)
            elif _word(self.c.current) == "AS":
                at = self.c.current.start
                self.c.next()
                var = self.name("a variable name after AS")
                if not isinstance(f, EventType) and not self.core:
                    raise self.fail("AS names one event (CEL's variables are positions, "
                                    "section 3 of the paper): write T AS x for an event "
                                    f"type T. CORE reads ({f}) AS {var} as naming every "
                                    f"event of it {var} (a filter on {var} tests each); "
                                    "use --dialect core (dialect=\"core\")", at)
                f = As(f, var, pos=start)
            else:
                return f

    def primary(self) -> Formula:
        c = self.c
        t = c.current
        if t.kind == "op" and t.text == "(":
            opener = c.open(c.next(), ")")
            f = self.formula()
            self.close(")", opener)
            return f
        if self.core and _word(t) == "NOT":
            return self.negation()
        if _word(t) in ("NOT", "UNLESS") or (t.kind == "op" and t.text == "!"):
            hint = (": CORE reads NOT (T FILTER ...) as one event that is not such a T, read "
                    "and not output; use --dialect core (dialect=\"core\")"
                    if _word(t) == "NOT" else "")
            raise self.fail(f"{t.text.upper()} (negation) is not supported: CEL has no "
                            "negation (seed 003, section 3), and the automata and their "
                            f"guarantees are built without it{hint}")
        pos = self.pos()
        name = self.name("an event type or '('")
        if self.op(">"):
            return EventType(self.name("an event type after 'stream>'"), name, pos=pos)
        return EventType(name, pos=pos)

    def negation(self) -> Formula:
        """CORE's ``NOT ( T [FILTER filter]* )`` (its ``atomic_cel_formula``: an event type,
        filtered or not; ``--dialect core``)."""
        c = self.c
        pos = self.pos()
        c.next()
        opener = self.expect_open("(", ")", "'(' and an event type after NOT")
        tpos = self.pos()
        name = self.name("an event type")
        f: Formula = EventType(name, pos=tpos)
        if self.op(">"):
            f = EventType(self.name("an event type after 'stream>'"), name, pos=tpos)
        while self.keyword("FILTER"):
            f = Filter(f, self.filter(), pos=tpos)
        self.expect_close(")", opener, "FILTER or ')' (NOT takes an event type, filtered)")
        return Not(f, pos=pos)

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
        c = self.c
        if c.current.kind == "op" and c.current.text == "(":
            opener = c.open(c.next(), ")")
            p = self.filter()
            self.close(")", opener)
            return p
        pos = self.pos()
        var = self.name("a filtered variable, as in x[temp > 40]")
        if self.op(">"):  # stream>name: the variable is the name
            var = self.name("a filtered variable after 'stream>'")
        opener = self.expect_open("[", "]", f"'[' and a condition on {var}")
        cond = self.condition()
        self.expect_close("]", opener, "']'")
        return VarFilter(var, cond, pos=pos)

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
        if self.c.at("op", "("):
            mark = self.c.mark()
            opener = self.c.open(self.c.next(), ")")
            try:
                c = self.condition()
                self.expect_close(")", opener, "')'")
            except CELSyntaxError:
                self.c.reset(mark)  # it was an arithmetic expression
            else:
                self.c.release(mark)
                return c
        left = self.expr()
        if self.keyword("NOT"):
            self.expect_keyword("IN", " after NOT")
            return self.in_values(left, negated=True)
        if self.keyword("IN"):
            if self.keyword("RANGE"):
                opener = self.expect_open("(", ")", "'(' and the range's bounds")
                low = self.expr()
                self.expect_op(",", "',' and the upper bound")
                high = self.expr()
                self.expect_close(")", opener, "')'")
                return CondAnd(Compare(">=", left, low), Compare("<=", left, high))
            return self.in_values(left, negated=False)
        if self.keyword("MATCHES"):
            t = self.c.current
            if t.kind != "string":
                self.unexpected("a quoted path type after MATCHES")
            self.c.next()
            try:
                return PathMatches(left, t.text[1:-1].replace("''", "'"))
            except XmlEventsError as exc:
                raise self.fail(f"bad path type: {exc}", t.start) from None
        if self.keyword("LIKE"):
            t = self.c.current
            if t.kind == "op" and t.text == "<<":
                raise self.fail("regular expressions in << >> are not read: write the "
                                "expression as a quoted string, LIKE '...'")
            if t.kind != "string":
                self.unexpected("a quoted regular expression after LIKE")
            self.c.next()
            try:
                return Like(left, t.text[1:-1].replace("''", "'"))
            except re.error as exc:
                raise self.fail(f"bad regular expression: {exc}", t.start) from None
        op = self.op("<=", ">=", "==", "!=", "<>", "<", ">", "=")
        if op is None:
            self.unexpected("a comparison (<, <=, >, >=, =, !=), IN or LIKE")
        op = {"==": "=", "<>": "!="}.get(op, op)
        return Compare(op, left, self.expr())

    def in_values(self, left: Expr, negated: bool) -> Condition:
        """``{v, ...}`` or a range ``{a..b}``, ``{a..}``, ``{..b}`` (inclusive)."""
        if self.c.current.text == "{" and (
                self.c.peek(1).text == ".." or self.c.peek(2).text == ".."):
            opener = self.c.open(self.c.next(), "}")
            low = high = None
            if self.op("..") is None:
                low = Const(self.literal())
                self.expect_op("..", "'..'")
            if not (self.c.current.kind == "op" and self.c.current.text == "}"):
                high = Const(self.literal())
            self.expect_close("}", opener, "'}'")
            if low is None and high is None:
                raise self.fail("a range needs a bound")
            parts = ([Compare(">=", left, low)] if low else []) + \
                ([Compare("<=", left, high)] if high else [])
            cond: Condition = parts[0] if len(parts) == 1 else CondAnd(parts[0], parts[1])
            return CondNot(cond) if negated else cond
        return In(left, self.values(), negated=negated)

    def values(self) -> tuple[str | int | float | bool, ...]:
        opener = self.expect_open("{", "}", "'{' and the values")
        out = [self.literal()]
        while self.op(","):
            out.append(self.literal())
        self.expect_close("}", opener, "',' or '}'")
        return tuple(out)

    def literal(self) -> str | int | float | bool:
        negative = self.op("-") is not None
        t = self.c.current
        if t.kind == "number":
            self.c.next()
            n = float(t.text) if any(c in t.text for c in ".eE") else int(t.text)
            return -n if negative else n
        if negative:
            self.unexpected("a number after '-'")
        if t.kind == "string":
            self.c.next()
            return t.text[1:-1].replace("''", "'")
        if _word(t) in ("TRUE", "FALSE"):
            self.c.next()
            return _word(t) == "TRUE"
        self.unexpected("a value")

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
            # CORE divides integers as C++ does (truncating); the paper's CEL exactly
            e = Arith(op, e, self.unary(), core=self.core)
        return e

    def unary(self) -> Expr:
        c = self.c
        t = c.current
        if t.kind == "op":
            if t.text == "-":
                c.next()
                return Neg(self.unary())
            if t.text == "+":
                c.next()
                return self.unary()
            if t.text == "(":
                opener = c.open(c.next(), ")")
                e = self.expr()
                self.close(")", opener)
                return e
        if t.kind in ("number", "string") or _word(t) in ("TRUE", "FALSE"):
            return Const(self.literal())
        name = self.name("an attribute, a number or a 'string'")
        if self.c.at("op", ".") and self.core:
            self.unexpected("a comparison: CORE's filters read their own event's attributes "
                            "only (no x.attr)")
        if self.op("."):
            return Attr(self.name("an attribute after '.'"), name)
        return Attr(name)


def _check(text: object) -> str:
    if not isinstance(text, str):
        raise CELSyntaxError(f"expected the query's text, got {type(text).__name__}",
                             line=None, column=None)
    return text


def _dialect(dialect: str) -> str:
    if dialect not in ("paper", "core"):
        raise ValueError(f"unknown dialect {dialect!r}: 'paper' or 'core'")
    return dialect


def parse_query(text: str, dialect: str = "paper") -> Query:
    """Parse a CEQL query (see the module); ``dialect="core"`` reads CORE's CEQL as CORE's
    repository writes it (``AS`` on any formula, ``NOT``; :mod:`._core` translates it).

    Raises:
        CELSyntaxError: at the first offending token, with its line and column.

    >>> print(parse_query("SELECT NXT * FROM S WHERE T AS x ; H FILTER x[temp > 40]"))
    SELECT NEXT * FROM S WHERE T AS x ; H FILTER x[temp > 40]
    """
    return _Parser(_check(text), _dialect(dialect)).query()


def parse_formula(text: str, dialect: str = "paper") -> Formula:
    """Parse a CEL formula alone (the part after WHERE)."""
    p = _Parser(_check(text), _dialect(dialect))
    f = p.formula()
    if p.c.current.kind != "eof":
        p.unexpected("';', ':', OR, FILTER, '+', AS or the end")
    return f
