"""The text form of SNOOP-R expressions: a parser with positions and its printer.

The paper writes expressions as ``SEQ(newCD(CDT1, "U2"), newMusicDVD(MT, "2006"))``: parameters
by position, whose names only the markup's ``<parameter name=...>`` gives. Signals here carry
named parameters, so the text form names them too (the markup and the text say the same)::

    expr    ::= primary (';' primary)*                     -- ';' is SEQ, left-associative
    primary ::= 'OR' '(' expr (',' expr)+ ')'
              | 'SEQ' '(' expr (',' expr)+ ')'             -- SEQ(a, b, c) = SEQ(SEQ(a, b), c)
              | 'ANY' '(' INT (',' expr)+ ')'
              | 'ALL' '(' [INT ','] expr (',' expr)* ')'   -- ANY(m, E1, …, Em)
              | 'OPAQUE' '(' STRING ',' STRING (',' NAME)* ')'  -- language, text, outputs
              | '(' expr ')'
              | type ['(' [param (',' param)*] ')']
    type    ::= NAME | OP '(' path ')'                     -- OP: ins upd del new gone
    param   ::= NAME '=' (NAME | STRING | NUMBER | 'true' | 'false')

A parameter's NAME value is a variable; strings are JSON strings (or single-quoted, with
``\\'``). ``OP(path)`` is a primitive document event type of the algebra (``ins(/order/item)``);
a NAME is a signalled type or a composite type of the algebra's definitions. Operator keywords
are upper case, as the paper writes them; ``or``/``seq``/``any``/``all`` are refused with a
hint rather than taken for event types.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import NoReturn

from xmlevents._foundation.names import NCNAME
from xmlevents._foundation.text import Cursor, LineIndex, Token, unclosed
from xmlevents.algebra import XmlEventsError, parse_event_type

from ._errors import ExpressionTextError
from .ast import (
    Any,
    Atomic,
    Expression,
    Literal,
    Opaque,
    Or,
    Param,
    Seq,
    Term,
    Value,
    Var,
    value_text,
)

__all__ = ["parse_expression", "to_text"]

_DOC_OPS = frozenset({"ins", "upd", "del", "new", "gone"})
_OPERATORS = ("OR", "SEQ", "ANY", "ALL", "OPAQUE")
# Spaces and '#' comments (to the end of the line) between tokens.
_SPACE = re.compile(r"(?:[ \t\r\n]+|#[^\n]*)*")
# A name is an XML name (the foundation's NCName, issue 28): an event type may be a composite
# type of the algebra's definitions, whose names are NCNames, and parameters and variables are
# the markup's attribute values (<parameter name=...>, <Variable name=...>) under the same rule.
# The tokens of kind "(", ")", ",", ";" and "=" are their own kinds; any other character is a
# token of kind "char", which the parser names in its error.
_TOKEN = re.compile(rf"""
    (?P<name>{NCNAME})
  | (?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<string>["'])
  | (?P<punct>[(),;=])
""", re.VERBOSE)
_EOF = "eof"
#: One decoder for every string literal (making one per string was a tenth of a restart's
#: parsing).
_JSON = json.JSONDecoder()
_MAX_DEPTH = 100
_MAX_TEXT = 1_000_000


class _Lexer:
    """The tokens of one text, read one at a time from :attr:`pos` (the parser reads a
    document event type's path between two tokens: ``ins(/order/item)``)."""

    def __init__(self, text: str, fail: Callable[[str, int], NoReturn]) -> None:
        self.text = text
        self.pos = 0
        self.lines = LineIndex(text)
        self.fail = fail

    def token(self) -> Token:
        text = self.text
        start = _SPACE.match(text, self.pos).end()  # type: ignore[union-attr]  # matches ""
        if start >= len(text):
            kind, value, end = _EOF, "", len(text)
        else:
            m = _TOKEN.match(text, start)
            if m is None:
                kind, value, end = "char", text[start], start + 1
            elif m.lastgroup == "string":
                kind = "string"
                value, end = self._string(start)
            else:
                end = m.end()
                value = m.group()
                kind = value if m.lastgroup == "punct" else str(m.lastgroup)
        self.pos = end
        line, column = self.lines.at(start)
        return Token(kind, value, line, column, start, end)

    def _string(self, start: int) -> tuple[str, int]:
        """The value of the string opening at ``start`` (JSON, or single-quoted with ``\\'``)
        and the offset after it."""
        text = self.text
        if text[start] == '"':
            try:
                value, end = _JSON.raw_decode(text, start)
            except json.JSONDecodeError as exc:
                self.fail(f"bad string: {exc.msg}", exc.pos)
            return str(value), end
        out: list[str] = []
        i = start + 1
        while i < len(text):
            ch = text[i]
            if ch == "\\" and i + 1 < len(text) and text[i + 1] in "'\\":
                out.append(text[i + 1])
                i += 2
            elif ch == "'":
                return "".join(out), i + 1
            else:
                out.append(ch)
                i += 1
        self.fail("a string is not closed", start)


class _Cursor(Cursor):
    """The shared cursor, naming a string literal as the algebra's and the rules' do."""

    __slots__ = ()

    def describe(self, token: Token) -> str:
        if token.kind == "string":
            return f"string {self.text[token.start:token.end]}"
        return super().describe(token)


class _Parser:
    """Parses one text on the shared cursor (issue 28: its tokens, and the one wording of
    ``unexpected``/``unclosed``); lazy, so that a path is read between two tokens."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lexer = _Lexer(text, self.fail)
        self.tokens = _Cursor(self.lexer.token, text, self.fail, eof=_EOF, lazy=True)
        self.depth = 0

    # --- errors -----------------------------------------------------------------------------

    def fail(self, reason: str, offset: int) -> NoReturn:
        line, column = self.lexer.lines.at(offset)
        raise ExpressionTextError(reason, text=self.text, line=line, column=column)

    def close(self, opener: Token, what: str = "',' or ')'") -> None:
        """The ``)`` that closes ``opener``, where a ``,`` could also come (``what``)."""
        if self.tokens.accept_close(")", opener) is None:
            self.tokens.unexpected(what)

    def name(self, what: str) -> Token:
        return self.tokens.expect("name", what)

    def string(self, what: str) -> str:
        return self.tokens.expect("string", f"{what} (a quoted string)").text

    # --- grammar ------------------------------------------------------------------------

    def parse(self) -> Expression:
        e = self.expr()
        if not self.tokens.at(_EOF):
            self.tokens.unexpected("';' or end of input")
        return e

    def expr(self) -> Expression:
        self.depth += 1
        first = self.tokens.peek()
        if self.depth > _MAX_DEPTH:
            self.tokens.error(f"expression nested deeper than {_MAX_DEPTH} levels")
        start = (first.line, first.column)
        e = self.primary()
        while self.tokens.accept(";"):
            e = Seq(e, self.primary(), pos=start)
        self.depth -= 1
        return e

    def list_of(self, opener: Token) -> list[Expression]:
        items = [self.expr()]
        while self.tokens.accept(","):
            items.append(self.expr())
        self.close(opener)
        return items

    def primary(self) -> Expression:
        tokens = self.tokens
        paren = tokens.accept("(")
        if paren is not None:
            tokens.open(paren, ")")
            e = self.expr()
            tokens.expect_close(")", paren, ")")
            return e
        word = self.name("an expression: OR(...), SEQ(...), ANY(n, ...), ALL(...), "
                         "OPAQUE(...) or an event type")
        if word.text in _OPERATORS:
            opener = tokens.open(tokens.expect("(", f"'(' after {word.text}"), ")")
            return self.operator(word, opener)
        if word.text.upper() in _OPERATORS and tokens.at("("):
            tokens.error(f"operators are written in upper case: {word.text.upper()}(...), "
                         f"not {word.text}(...)", word)
        return self.atomic(word)

    def operator(self, word: Token, opener: Token) -> Expression:
        pos = (word.line, word.column)
        if word.text == "OPAQUE":
            language = self.string("the language's URI")
            self.tokens.expect(",", "',' and the expression's text")
            text = self.string("the expression's text")
            binds: list[str] = []
            while self.tokens.accept(","):
                binds.append(self.name("an output variable").text)
            self.close(opener)
            try:
                return Opaque(language, text, tuple(binds), pos=pos)
            except XmlEventsError as exc:
                self.tokens.error(str(exc), word)
        n: int | None = None
        if word.text == "ANY" or (word.text == "ALL" and self.tokens.at("number")):
            n = self.count()
            self.tokens.expect(",", f"',' and the operands of {word.text}")
        items = self.list_of(opener)
        if word.text in ("OR", "SEQ") and len(items) < 2:
            self.tokens.error(f"{word.text} needs at least 2 operands", word)
        if word.text == "OR":
            return Or(tuple(items), pos=pos)
        if word.text == "SEQ":
            e = items[0]
            for right in items[1:]:
                e = Seq(e, right, pos=pos)
            return e
        return Any(len(items) if n is None else n, tuple(items), pos=pos)

    def count(self) -> int:
        """ANY's ``n`` (ALL's optional one): a positive integer."""
        token = self.tokens.expect("number", "how many operands must occur "
                                   "(ANY(n, E1, ..., Em))")
        # Messages about the value, not the token: "got" the value.
        if not re.fullmatch(r"-?[0-9]+", token.text):
            self.tokens.error(f"ANY's n must be an integer, got {token.text}", token)
        n = int(token.text)
        if n < 1:
            self.tokens.error(f"ANY's n must be at least 1, got {n}", token)
        return n

    def atomic(self, word: Token) -> Expression:
        tokens = self.tokens
        etype = word.text
        if word.text in _DOC_OPS and tokens.at("("):
            paren: Token | None = tokens.next()
            assert paren is not None and not tokens.buffered()
            inner = self._balanced(paren.start)
            if inner is None:  # no ')' anywhere after it
                end = len(self.text.rstrip())
                self.fail(unclosed(paren, ")", self.lexer.lines.at(end)[0]), end)
            if "=" not in inner[0]:
                etype = f"{word.text}({inner[0]})"
                try:
                    parse_event_type(etype)
                except XmlEventsError as exc:
                    reason = getattr(exc, "reason", str(exc))
                    self.fail(f"bad document event type {etype}: {reason}", inner[1])
                self.lexer.pos = inner[2]  # the path is read: go on after its ')'
                paren = tokens.accept("(")
        else:
            paren = tokens.accept("(")
        params: list[Param] = []
        if paren is not None:
            tokens.open(paren, ")")
            if tokens.accept_close(")", paren) is None:
                while True:
                    params.append(self.param())
                    if tokens.accept_close(")", paren):
                        break
                    tokens.expect(",", "',' or ')' after a parameter")
        seen: set[str] = set()
        for p in params:
            if p.name in seen:
                line, col = p.pos or (word.line, word.column)
                raise ExpressionTextError(f"parameter {p.name} is given twice", text=self.text,
                                          line=line, column=col)
            seen.add(p.name)
        return Atomic(etype, tuple(params), pos=(word.line, word.column))

    def _balanced(self, start: int) -> tuple[str, int, int] | None:
        """The text inside the parenthesis opening at ``start``, its offset and the offset
        after its closing one (paths contain ``text()``); None if it is not closed."""
        depth = 0
        text = self.text
        for j in range(start, len(text)):
            ch = text[j]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return text[start + 1:j], start + 1, j + 1
        return None

    def param(self) -> Param:
        name = self.name("a parameter name (name=Variable or name=\"value\")")
        if not self.tokens.accept("="):
            self.tokens.unexpected(
                f"'=' after parameter {name.text}: parameters are named ({name.text}=Variable "
                f"or {name.text}=\"value\")")
        term = self.term()
        try:
            return Param(name.text, term, pos=(name.line, name.column))
        except XmlEventsError as exc:
            self.tokens.error(str(exc), name)

    def term(self) -> Term:
        token = self.tokens.peek()
        pos = (token.line, token.column)
        try:
            if token.kind == "string":
                self.tokens.next()
                return Literal(token.text, pos=pos)
            if token.kind == "number":
                self.tokens.next()
                number: Value = json.loads(token.text)
                return Literal(number, pos=pos)
            if token.kind == "name":
                self.tokens.next()
                if token.text in ("true", "false"):
                    return Literal(token.text == "true", pos=pos)
                return Var(token.text, pos=pos)
        except XmlEventsError as exc:
            self.tokens.error(str(exc), token)
        self.tokens.unexpected("a variable or a value")


def parse_expression(text: str) -> Expression:
    """Parse the text form of an expression (see the module).

    Raises:
        ExpressionTextError: at the first offending token, with its line and column.

    >>> print(parse_expression('newCD(title=T, artist="U2") ; newMusicDVD(title=T)'))
    SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T))
    >>> try:
    ...     parse_expression("SEQ(newCD(title=T), ")
    ... except ExpressionTextError as exc:
    ...     print(exc.reason)
    unclosed '(' (opened at col 4): expected ')' before end of input
    """
    if not isinstance(text, str):
        raise ExpressionTextError(f"expected the expression's text, got {type(text).__name__}",
                                  line=None, column=None)
    if len(text) > _MAX_TEXT:
        raise ExpressionTextError(f"the expression is over {_MAX_TEXT:,} characters",
                                  line=None, column=None)
    bad = re.search("[\ud800-\udfff]", text)
    if bad is not None:
        _Parser(text).fail("a lone surrogate is not a character", bad.start())
    return _Parser(text).parse()


def _params(params: tuple[Param, ...]) -> str:
    return "(" + ", ".join(str(p) for p in params) + ")" if params else ""


def to_text(e: Expression) -> str:
    """The text form of ``e``; :func:`parse_expression` gives back an equal expression (an
    opaque one apart: two opaque expressions are never equal)."""
    # Iterative: a registered expression may nest deeply (a long chain of ';').
    out: list[str] = []
    stack: list[Expression | str] = [e]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Atomic):
            out.append(item.type + _params(item.params))
        elif isinstance(item, Opaque):
            parts = [value_text(item.language), value_text(item.text), *item.binds]
            out.append("OPAQUE(" + ", ".join(parts) + ")")
        else:
            if isinstance(item, Or):
                head, children = "OR(", list(item.operands)
            elif isinstance(item, Seq):
                head, children = "SEQ(", [item.left, item.right]
            else:
                assert isinstance(item, Any)
                head, children = f"ANY({item.n}, ", list(item.operands)
            pieces: list[Expression | str] = [head]
            for i, child in enumerate(children):
                if i:
                    pieces.append(", ")
                pieces.append(child)
            pieces.append(")")
            stack.extend(reversed(pieces))
    return "".join(out)
