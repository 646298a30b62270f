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

from xmlevents.algebra import LineIndex, XmlEventsError, parse_event_type

from ._errors import ExpressionTextError
from .ast import (
    Any,
    Atomic,
    Expression,
    Literal,
    Opaque,
    Or,
    Param,
    Pos,
    Seq,
    Term,
    Value,
    Var,
    value_text,
)

__all__ = ["parse_expression", "to_text"]

_DOC_OPS = frozenset({"ins", "upd", "del", "new", "gone"})
_OPERATORS = ("OR", "SEQ", "ANY", "ALL", "OPAQUE")
_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n]+)
  | (?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)
  | (?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<string>["'])
  | (?P<punct>[(),;=])
""", re.VERBOSE)
_MAX_DEPTH = 100
_MAX_TEXT = 1_000_000


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = LineIndex(text)
        self.i = 0
        self.depth = 0

    # --- errors and positions -----------------------------------------------------------

    def pos(self, offset: int | None = None) -> tuple[int, int]:
        return self.lines.at(self.i if offset is None else offset)

    def fail(self, reason: str, offset: int | None = None) -> ExpressionTextError:
        line, col = self.pos(offset)
        return ExpressionTextError(reason, text=self.text, line=line, column=col)

    def describe(self) -> str:
        self.skip()
        if self.i >= len(self.text):
            return "the end of the text"
        m = _TOKEN.match(self.text, self.i)
        if m is None or m.lastgroup == "space":
            return repr(self.text[self.i])
        if m.lastgroup == "string":
            return "a string"
        return repr(m.group())

    # --- tokens ---------------------------------------------------------------------------

    def skip(self) -> None:
        text = self.text
        while self.i < len(text):
            if text[self.i] in " \t\r\n":
                self.i += 1
            elif text[self.i] == "#":  # a comment, to the end of the line
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            else:
                return

    def peek(self, punct: str) -> bool:
        self.skip()
        return self.text.startswith(punct, self.i)

    def take(self, punct: str) -> bool:
        if self.peek(punct):
            self.i += len(punct)
            return True
        return False

    def expect(self, punct: str, what: str) -> None:
        if not self.take(punct):
            raise self.fail(f"expected {what}, got {self.describe()}")

    def name(self, what: str) -> tuple[str, int]:
        self.skip()
        m = _TOKEN.match(self.text, self.i)
        if m is None or m.lastgroup != "name":
            raise self.fail(f"expected {what}, got {self.describe()}")
        self.i = m.end()
        return m.group(), m.start()

    def string(self, what: str) -> str:
        self.skip()
        text = self.text
        if self.i >= len(text) or text[self.i] not in "\"'":
            raise self.fail(f"expected {what} (a quoted string), got {self.describe()}")
        return self._string()

    def _string(self) -> str:
        text, start = self.text, self.i
        if text[start] == '"':
            try:
                value, end = json.JSONDecoder().raw_decode(text, start)
            except json.JSONDecodeError as exc:
                raise self.fail(f"bad string: {exc.msg}", exc.pos) from None
            self.i = end
            return str(value)
        out: list[str] = []
        i = start + 1
        while i < len(text):
            ch = text[i]
            if ch == "\\" and i + 1 < len(text) and text[i + 1] in "'\\":
                out.append(text[i + 1])
                i += 2
            elif ch == "'":
                self.i = i + 1
                return "".join(out)
            else:
                out.append(ch)
                i += 1
        raise self.fail("a string is not closed", start)

    # --- grammar ------------------------------------------------------------------------

    def parse(self) -> Expression:
        e = self.expr()
        self.skip()
        if self.i < len(self.text):
            raise self.fail(f"expected ';' or the end of the text, got {self.describe()}")
        return e

    def expr(self) -> Expression:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.fail(f"expression nested deeper than {_MAX_DEPTH} levels")
        self.skip()
        start = self.pos()
        e = self.primary()
        while self.take(";"):
            e = Seq(e, self.primary(), pos=start)
        self.depth -= 1
        return e

    def list_of(self, parse: Callable[[], Expression]) -> list[Expression]:
        items = [parse()]
        while self.take(","):
            items.append(parse())
        self.expect(")", "',' or ')'")
        return items

    def primary(self) -> Expression:
        self.skip()
        if self.take("("):
            e = self.expr()
            self.expect(")", "')'")
            return e
        at = self.i
        word, _ = self.name("an expression: OR(...), SEQ(...), ANY(n, ...), ALL(...), "
                            "OPAQUE(...) or an event type")
        pos = self.pos(at)
        if word in _OPERATORS:
            self.expect("(", f"'(' after {word}")
            return self.operator(word, pos, at)
        if word.upper() in _OPERATORS and self.peek("("):
            raise self.fail(f"operators are written in upper case: {word.upper()}(...), "
                            f"not {word}(...)", at)
        return self.atomic(word, pos, at)

    def operator(self, word: str, pos: Pos, at: int) -> Expression:
        if word == "OPAQUE":
            language = self.string("the language's URI")
            self.expect(",", "',' and the expression's text")
            text = self.string("the expression's text")
            binds: list[str] = []
            while self.take(","):
                binds.append(self.name("an output variable")[0])
            self.expect(")", "',' or ')'")
            try:
                return Opaque(language, text, tuple(binds), pos=pos)
            except XmlEventsError as exc:
                raise self.fail(str(exc), at) from None
        n: int | None = None
        if word == "ANY" or (word == "ALL" and self._number_next()):
            n = self.count()
            self.expect(",", f"',' and the operands of {word}")
        items = self.list_of(self.expr)
        if word == "OR":
            if len(items) < 2:
                raise self.fail("OR needs at least 2 operands", at)
            return Or(tuple(items), pos=pos)
        if word == "SEQ":
            if len(items) < 2:
                raise self.fail("SEQ needs at least 2 operands", at)
            e = items[0]
            for right in items[1:]:
                e = Seq(e, right, pos=pos)
            return e
        return Any(len(items) if n is None else n, tuple(items), pos=pos)

    def _number_next(self) -> bool:
        self.skip()
        m = _TOKEN.match(self.text, self.i)
        return m is not None and m.lastgroup == "number"

    def count(self) -> int:
        """ANY's ``n`` (ALL's optional one): a positive integer."""
        self.skip()
        m = _TOKEN.match(self.text, self.i)
        if m is None or m.lastgroup != "number":
            raise self.fail(f"expected how many operands must occur (ANY(n, E1, ..., Em)), "
                            f"got {self.describe()}")
        if not re.fullmatch(r"-?[0-9]+", m.group()):
            raise self.fail(f"ANY's n must be an integer, got {m.group()}")
        n = int(m.group())
        if n < 1:
            raise self.fail(f"ANY's n must be at least 1, got {n}")
        self.i = m.end()
        return n

    def atomic(self, word: str, pos: Pos, at: int) -> Expression:
        etype = word
        if word in _DOC_OPS and self.peek("("):
            inner = self._balanced()
            if inner is not None and "=" not in inner[0]:
                etype = f"{word}({inner[0]})"
                try:
                    parse_event_type(etype)
                except XmlEventsError as exc:
                    reason = getattr(exc, "reason", str(exc))
                    raise self.fail(f"bad document event type {etype}: {reason}",
                                    inner[1]) from None
                self.i = inner[2]
        params: list[Param] = []
        if self.take("(") and not self.take(")"):
            while True:
                params.append(self.param())
                if self.take(")"):
                    break
                self.expect(",", "',' or ')' after a parameter")
        seen: set[str] = set()
        for p in params:
            if p.name in seen:
                line, col = p.pos or self.pos(at)
                raise ExpressionTextError(f"parameter {p.name} is given twice", text=self.text,
                                          line=line, column=col)
            seen.add(p.name)
        return Atomic(etype, tuple(params), pos=pos)

    def _balanced(self) -> tuple[str, int, int] | None:
        """The text inside the parenthesis opening here, its offset and the offset after its
        closing one (paths contain ``text()``); None if it is not closed."""
        start = self.i + 1
        depth = 0
        for j in range(self.i, len(self.text)):
            ch = self.text[j]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return self.text[start:j], start, j + 1
        return None

    def param(self) -> Param:
        name, at = self.name("a parameter name (name=Variable or name=\"value\")")
        pos = self.pos(at)
        if not self.take("="):
            raise self.fail(
                f"expected '=' after parameter {name}: parameters are named "
                f"({name}=Variable or {name}=\"value\"), got {self.describe()}")
        return Param(name, self.term(), pos=pos)

    def term(self) -> Term:
        self.skip()
        at = self.i
        pos = self.pos()
        if self.i < len(self.text) and self.text[self.i] in "\"'":
            value = self._string()
            try:
                return Literal(value, pos=pos)
            except XmlEventsError as exc:
                raise self.fail(str(exc), at) from None
        m = _TOKEN.match(self.text, self.i)
        if m is not None and m.lastgroup == "number":
            self.i = m.end()
            number: Value = json.loads(m.group())
            if isinstance(number, float) and number != number:  # pragma: no cover - json
                raise self.fail("not a number", at)
            return Literal(number, pos=pos)
        if m is not None and m.lastgroup == "name":
            self.i = m.end()
            word = m.group()
            if word in ("true", "false"):
                return Literal(word == "true", pos=pos)
            try:
                return Var(word, pos=pos)
            except XmlEventsError as exc:
                raise self.fail(str(exc), at) from None
        raise self.fail(f"expected a variable or a value, got {self.describe()}")


def parse_expression(text: str) -> Expression:
    """Parse the text form of an expression (see the module).

    Raises:
        ExpressionTextError: at the first offending token, with its line and column.

    >>> print(parse_expression('newCD(title=T, artist="U2") ; newMusicDVD(title=T)'))
    SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T))
    """
    if not isinstance(text, str):
        raise ExpressionTextError(f"expected the expression's text, got {type(text).__name__}",
                                  line=None, column=None)
    if len(text) > _MAX_TEXT:
        raise ExpressionTextError(f"the expression is over {_MAX_TEXT:,} characters",
                                  line=None, column=None)
    bad = re.search("[\ud800-\udfff]", text)
    if bad is not None:
        p = _Parser(text)
        raise p.fail("a lone surrogate is not a character", bad.start())
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
