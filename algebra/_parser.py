"""Parse the expression language of DESIGN section 3 into the trees of ``ast``.

A recursive-descent parser with one ``_parse_<level>`` method per precedence level, loosest
first: ``with`` modifiers, ``|``, ``&``, ``;``, the ``[l,u]`` prefix, then primaries.
Chains of one operator build one n-ary node; parentheses are kept as nesting, so
``(a & b) & c`` and ``a & b & c`` differ, as the printer expects. The first error raises an
:class:`ExpressionSyntaxError` with the line and column of the offending token.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, NoReturn, TypeVar

from xmlevents._foundation.text import Cursor

from . import ast
from ._errors import ArgumentTypeError, ExpressionSyntaxError, PathSyntaxError
from ._events import CompositeEventType, EventType, Op
from ._paths import PathType
from ._tokens import LineIndex, Token, TokenType, scan

__all__ = ["parse", "parse_definition", "parse_definitions", "parse_event_type"]

T = TypeVar("T")

#: Nesting deeper than this is refused (each level costs about ten Python frames).
MAX_DEPTH = 50

DISJUNCTION: dict[TokenType, type[ast.Operator]] = {TokenType.PIPE: ast.Disj}
CONJUNCTION: dict[TokenType, type[ast.Operator]] = {TokenType.AMP: ast.Conj}
SEQUENCE: dict[TokenType, type[ast.Operator]] = {TokenType.SEMI: ast.Seq}
#: Functional synonyms of the infix operators.
FUNCTIONS: dict[str, type[ast.Operator]] = {"seq": ast.Seq, "and": ast.Conj, "or": ast.Disj}
EVENT_OPS = {"ins": Op.INS, "upd": Op.UPD, "del": Op.DEL, "new": Op.NEW, "gone": Op.GONE}
_ALLOWED = {"mode": ast.Mode, "context": ast.Context}
_EOF = TokenType.EOF
_ENDS = frozenset({TokenType.EOF, TokenType.NEWLINE})
_LPAREN = TokenType.LPAREN
_RPAREN = TokenType.RPAREN
_COMMA = TokenType.COMMA


class _Cursor(Cursor):
    """The shared cursor, naming a line end and a string literal as this language does."""

    __slots__ = ()

    def next(self) -> Token:
        # Cursor.next for this eager cursor of enum kinds: no unread token to test for, the
        # end of input compared by identity; one call per token (263,000 in 10,000
        # definitions), 2-3% of parse_definitions with the general one.
        token = self.current
        if token.kind is _EOF:
            return token
        self.previous = token
        self.current = self._read()
        return token

    def describe(self, token: Token) -> str:
        if token.kind is TokenType.NEWLINE:
            return "end of line"
        found = super().describe(token)
        return f"string {found[1:-1]}" if token.kind is TokenType.STRING else found


class _Parser:
    """Parses one text; the token stream is pulled lazily so errors come in text order."""

    def __init__(self, text: str, namespaces: Mapping[str, str] | None, context: str = ""):
        self.text = text
        self.namespaces = namespaces
        self.context = context
        self._lines = LineIndex(text)
        self._tokens = _Cursor(scan(text, context=context).__next__, text, self._fail,
                               eof=_EOF, ends=_ENDS)
        self._depth = 0
        # The cursor's next() bound once and its state read as attributes: the parser asks
        # for them several times a token (263,000 tokens in 10,000 definitions), and a call
        # costs more than the test it makes. _at, _accept and _expect below are the cursor's,
        # for this language's kinds (enum members, compared by identity).
        self._advance = self._tokens.next
        self._opened = self._tokens.opened

    # --- token helpers -----------------------------------------------------------------------

    def _at(self, kind: TokenType, text: str | None = None) -> bool:
        cur = self._tokens.current
        return cur.kind is kind and (text is None or cur.text == text)

    def _accept(self, kind: TokenType) -> Token | None:
        return self._advance() if self._tokens.current.kind is kind else None

    def _expect(self, kind: TokenType, what: str) -> Token:
        if self._tokens.current.kind is not kind:
            self._tokens.unexpected(what)
        return self._advance()

    def _open(self, opener: Token) -> Token:
        """``opener`` (consumed) opens a bracket: the end of input before its closer is
        ``unclosed`` (Cursor.open)."""
        self._opened.append((opener, ")" if opener.kind is _LPAREN else "]"))
        return opener

    def _expect_close(self, kind: TokenType, opener: Token) -> Token:
        return self._tokens.expect_close(kind, opener, str(kind.value))

    def _describe(self, token: Token) -> str:
        return self._tokens.describe(token)

    def _fail(self, reason: str, offset: int,
              phrases: tuple[tuple[str, str], ...] = ()) -> NoReturn:
        line, column = self._lines.at(offset)
        error = ExpressionSyntaxError(reason, text=self.text, line=line, column=column,
                                      context=self.context)
        error.cli_phrases = phrases
        raise error

    def _error(self, reason: str, token: Token | None = None, *,
               offset: int | None = None, phrases: tuple[tuple[str, str], ...] = ()
               ) -> NoReturn:
        """Raise at ``token`` (or ``offset``); ``phrases``: the CLI phrasings of the error
        this one reports in its own words (XmlEventsError.for_cli)."""
        if offset is None:
            offset = self._tokens.offset(token or self._tokens.current)
        self._fail(reason, offset, phrases)

    def _build(self, token: Token, factory: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call an AST constructor, reporting its ValueError/TypeError at ``token``."""
        try:
            return factory(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            self._error(str(exc), token)

    def _number(self, token: Token) -> int:
        try:
            return int(token.text)
        except ValueError:  # more digits than int() accepts
            self._error(f"number {token.text[:10]}... is too large", token)

    def _fail_trailing(self, what: str) -> NoReturn:
        token = self._tokens.current
        found = self._describe(token)
        if token.kind is TokenType.ASSIGN and what == "expression":
            self._error("unexpected ':='; this reads one expression: parse a definition "
                        "'Name := expression' with parse_definition")
        if token.kind is TokenType.ASSIGN:
            self._error("unexpected ':='; write one definition per line (a line that ends in an "
                        "operator continues on the next)")
        if token.kind in (TokenType.RPAREN, TokenType.RBRACK):
            self._error(f"unmatched {found}")
        if token.kind in (TokenType.NAME, TokenType.PATH, TokenType.LPAREN, TokenType.LBRACK,
                          TokenType.STAR, TokenType.PERCENT):
            self._error(f"unexpected {found} after the {what}; join expressions with &, | or ;")
        self._error(f"unexpected {found} after the {what}")

    # --- entry points ------------------------------------------------------------------------

    def expression(self) -> ast.Expr:
        return self._parse_whole(self._parse_expr, "expression")

    def definition(self) -> ast.Definition:
        return self._parse_whole(self._parse_definition, "definition")

    def event_type(self) -> EventType:
        return self._parse_whole(self._parse_subscription, "event type")

    def definitions(self) -> tuple[ast.Definition, ...]:
        definitions = []
        tokens, advance, parse = self._tokens, self._advance, self._parse_definition
        newline = TokenType.NEWLINE
        if tokens.current.kind is newline:
            advance()
        while tokens.current.kind is not _EOF:
            definitions.append(parse())
            kind = tokens.current.kind
            if kind is newline:
                advance()
            elif kind is not _EOF:
                self._fail_trailing("definition")
        return tuple(definitions)

    def _parse_whole(self, parse: Callable[[], T], what: str) -> T:
        """``parse`` followed by at most one line end and the end of the input."""
        result = parse()
        self._accept(TokenType.NEWLINE)
        if not self._at(TokenType.EOF):
            self._fail_trailing(what)
        return result

    # --- grammar -----------------------------------------------------------------------------

    def _parse_definition(self) -> ast.Definition:
        name = self._tokens.current
        if name.kind is not TokenType.NAME:
            self._tokens.unexpected("a definition 'Name := expression'")
        if name.text in ast.KEYWORDS:
            self._error(f"{name.text!r} is a keyword and cannot name a definition; choose "
                        "another name")
        self._advance()
        self._expect(TokenType.ASSIGN, f"':=' after the definition name {name.text!r}")
        expr = self._parse_expr()
        return ast.Definition(name.text, expr, pos=(name.line, name.column), source=self.text)

    def _parse_expr(self) -> ast.Expr:
        node = self._parse_disj()
        while self._at(TokenType.NAME, "with"):
            keyword = self._advance()
            if not isinstance(node, ast.Operator):
                self._error(f"with applies to an operator node; {node} is an event type", keyword)
            node = self._parse_modifier(node)
            while self._accept(TokenType.COMMA):
                node = self._parse_modifier(node)
            cur = self._tokens.current
            if cur.kind is TokenType.NAME and cur.text in ast.Modifiers.KEYS:
                self._tokens.unexpected("',' between modifiers")
        return node

    def _parse_modifier(self, node: ast.Operator) -> ast.Operator:
        keys = ", ".join(ast.Modifiers.KEYS)
        key = self._expect(TokenType.NAME, f"a modifier key ({keys})")
        if key.text not in ast.Modifiers.KEYS:
            self._error(f"unknown modifier {key.text!r}; use one of {keys}", key)
        if getattr(node.mods, key.text) is not None:
            self._error(f"modifier {key.text!r} is set twice", key)
        self._expect(TokenType.EQ, f"'=' after {key.text!r}")
        token = self._tokens.current
        value: Any
        if key.text == "when":
            value = self._expect(TokenType.STRING, 'a quoted XPath expression after when=, as '
                                 'in when="price > 0"').text
        elif key.text == "at":
            value = self._parse_path()
        elif key.text == "within":
            number = self._expect(TokenType.NUMBER, "a number of ticks or a duration after "
                                  "within=, as in within=100 or within=30s")
            if int(number.text) < 1:
                self._error(f"within={number.text}: a window holds at least one tick or "
                            "millisecond", number)
            value = int(number.text)
            if (self._at(TokenType.NAME)
                    and self._tokens.current.column == number.column + len(number.text)):
                unit = self._advance()  # 30s: a duration
                if unit.text not in ast.UNITS:
                    self._error(f"unknown unit {unit.text!r} in within={number.text}"
                                f"{unit.text}; use one of {', '.join(ast.UNITS)}", unit)
                value = ast.Duration(value * ast.UNITS[unit.text])
        elif key.text == "hierarchical":
            if not (token.kind is TokenType.NAME and token.text in ("true", "false")):
                self._tokens.unexpected("true or false after hierarchical=")
            value = self._advance().text == "true"
        else:
            allowed = ", ".join(m.value for m in _ALLOWED[key.text])
            value = self._expect(TokenType.NAME, f"one of {allowed} after {key.text}=").text
        node = self._build(token, node.with_, **{key.text: value})
        at = ((key.text, (key.line, key.column)),)
        return replace(node, mods=replace(node.mods, positions=node.mods.positions + at))  # type: ignore[type-var]  # replace() on an Operator subclass

    def _parse_chain(self, operand: Callable[[], ast.Expr],
                     table: Mapping[TokenType, type[ast.Operator]]) -> ast.Expr:
        """``operand (op operand)*`` for the operators in ``table``; one chain is one node."""
        first = operand()
        tokens = self._tokens
        op = tokens.current
        cls = table.get(op.kind)  # type: ignore[call-overload]  # kinds are TokenTypes here
        if cls is None:
            return first
        children = [first]
        kind = op.kind
        advance = self._advance
        while tokens.current.kind is kind:
            advance()
            children.append(operand())
        node: ast.Expr = self._build(op, cls, tuple(children), pos=(op.line, op.column))
        return node

    def _parse_disj(self) -> ast.Expr:
        return self._parse_chain(self._parse_conj, DISJUNCTION)

    def _parse_conj(self) -> ast.Expr:
        return self._parse_chain(self._parse_seq, CONJUNCTION)

    def _parse_seq(self) -> ast.Expr:
        return self._parse_chain(self._parse_unary, SEQUENCE)

    def _parse_unary(self) -> ast.Expr:
        # Every nesting level (parentheses, arguments, prefixes) passes through here.
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                self._error(f"expression nested more than {MAX_DEPTH} levels deep; split it into "
                            "several definitions")
            if self._tokens.current.kind is not TokenType.LBRACK:
                return self._parse_primary()
            opener = self._open(self._advance())
            low = self._number(self._expect(TokenType.NUMBER, "a lower bound l >= 0 in [l,u]"))
            self._expect(TokenType.COMMA, "',' between the bounds of [l,u]")
            high_token = self._tokens.current
            high = None if self._accept(TokenType.STAR) else self._number(
                self._expect(TokenType.NUMBER, "an upper bound u in [l,u]: a number or *"))
            self._expect_close(TokenType.RBRACK, opener)
            child = self._parse_unary()
            return self._build(high_token, ast.Mult, low, high, child,
                               pos=(opener.line, opener.column))
        finally:
            self._depth -= 1

    def _parse_primary(self) -> ast.Expr:
        token = self._tokens.current
        if token.kind is _LPAREN:
            self._open(self._advance())
            node = self._parse_expr()
            self._expect_close(TokenType.RPAREN, token)
            return node
        if token.kind is TokenType.NAME and (token.text == "any" or token.text == "not"
                                             or token.text in FUNCTIONS):
            return self._parse_function()
        return self._parse_event_type(require_path=False)

    def _parse_function(self) -> ast.Operator:
        keyword = self._advance()
        pos = (keyword.line, keyword.column)
        opener = self._open(self._expect(_LPAREN, f"'(' after {keyword.text!r}"))
        if keyword.text == "any":
            n_token = self._expect(TokenType.NUMBER, "the count n of any(n, E1, ..., Em)")
            if not self._at(TokenType.COMMA):
                self._tokens.unexpected("',' and an operand after n in any(n, E1, ..., Em)")
            args = []
            while self._accept(_COMMA):
                args.append(self._parse_arg())
            self._expect_close(_RPAREN, opener)
            return self._build(n_token, ast.AnyOf, self._number(n_token), tuple(args), pos=pos)
        tokens, advance, parse = self._tokens, self._advance, self._parse_arg
        args = [parse()]
        while tokens.current.kind is _COMMA:
            advance()
            args.append(parse())
        close = self._expect_close(_RPAREN, opener)
        cls = ast.Not if keyword.text == "not" else FUNCTIONS[keyword.text]
        return self._build(close, cls, tuple(args), pos=pos)

    def _parse_arg(self) -> ast.Expr:
        node = self._parse_disj()
        if self._at(TokenType.NAME, "with"):
            self._error("a with inside a function argument must be parenthesised: write "
                        "(E with ...)")
        return node

    def _parse_subscription(self) -> EventType:
        leaf = self._parse_event_type(require_path=True)
        if isinstance(leaf, ast.Primitive):
            return leaf.event_type
        assert leaf.path is not None
        return CompositeEventType(leaf.name, leaf.path)

    def _parse_event_type(self, require_path: bool) -> ast.Primitive | ast.Ref:
        tokens = self._tokens
        token = tokens.current
        kind = token.kind
        pos = (token.line, token.column)
        if kind is TokenType.NAME and token.text in EVENT_OPS:
            self._advance()
            return ast.Primitive(EVENT_OPS[token.text], self._parse_path_arg(token), pos=pos)
        if kind is TokenType.STAR:
            self._advance()
            return ast.Primitive(Op.ANY, self._parse_path_arg(token), pos=pos)
        if kind is TokenType.PERCENT:
            self._advance()
            return ast.Ref(None, self._parse_path_arg(token), pos=pos)
        if kind is TokenType.NAME and token.text not in ast.KEYWORDS:
            self._advance()
            if tokens.current.kind is _LPAREN or require_path:
                return ast.Ref(token.text, self._parse_path_arg(token), pos=pos)
            return ast.Ref(token.text, None, pos=pos)
        found = self._describe(token)
        if token.kind is TokenType.NAME:
            found = f"the keyword {found}"
        if require_path:
            self._tokens.unexpected("an event type such as upd(item/price), Name(pt) or %(pt)",
                                    found=found)
        self._tokens.unexpected("an event type such as ins(item), a name, '(' or '['",
                                found=found)

    def _parse_path_arg(self, keyword: Token) -> PathType:
        # Cursor.expect, .open and .expect_close inlined: one in three tokens passes here.
        tokens = self._tokens
        opener = tokens.current
        if opener.kind is not _LPAREN:
            tokens.unexpected(f"'(' and a path type after {keyword.text!r}")
        self._advance()
        opened = self._opened
        opened.append((opener, ")"))
        path = self._parse_path()
        if tokens.current.kind is not _RPAREN:
            self._expect_close(_RPAREN, opener)
        else:
            opened.pop()
            self._advance()
        return path

    def _parse_path(self) -> PathType:
        token = self._tokens.current
        # A lone * where a path type is expected is the wildcard step (ins(*), at=*); the
        # tokenizer makes it part of a path token only next to a slash.
        if token.kind not in (TokenType.NAME, TokenType.PATH, TokenType.STAR):
            self._tokens.unexpected("a path type such as item/price")
        self._advance()
        try:
            return PathType.parse(token.text, self.namespaces)
        except PathSyntaxError as exc:
            self._error(f"bad path type {token.text!r}: {exc.reason}",
                        offset=token.start + (exc.column or 1) - 1, phrases=exc.cli_phrases)
        except (ValueError, TypeError) as exc:
            self._error(f"bad path type {token.text!r}: {exc}", token)


def _run(text: str, namespaces: Mapping[str, str] | None, context: str,
         action: Callable[[_Parser], T]) -> T:
    if not isinstance(text, str):
        raise ArgumentTypeError(f"text={text!r}: expected the expression text as a str")
    try:
        return action(_Parser(text, namespaces, context))
    except RecursionError:  # a backstop: MAX_DEPTH normally stops deep nesting first
        raise ExpressionSyntaxError("expression nested too deeply; split it into several "
                                    "definitions", text=text, context=context) from None


def parse(text: str, namespaces: Mapping[str, str] | None = None) -> ast.Expr:
    """Parse one expression (no ``Name :=``); ``prefix:name`` steps resolve via ``namespaces``.

    Raises:
        ExpressionSyntaxError: at the first offending token, with its line and column.

    >>> parse("ins(item) ; (ins(item/price) & ins(item/quantity))")
    Seq('ins(item) ; (ins(item/price) & ins(item/quantity))')
    >>> try:
    ...     parse("ins(item) ; (ins(item/price)")
    ... except ExpressionSyntaxError as exc:
    ...     print(exc.line, exc.column, exc.reason)
    1 29 unclosed '(' (opened at col 13): expected ')' before end of input
    """
    return _run(text, namespaces, "", _Parser.expression)


def parse_definition(text: str, namespaces: Mapping[str, str] | None = None) -> ast.Definition:
    """Parse exactly one definition ``Name := expression``.

    Raises:
        ExpressionSyntaxError: at the first offending token, with its line and column.

    >>> d = parse_definition("Eq := [1,*] ins(item/quantity)")
    >>> d.name, d.expr, d.pos
    ('Eq', Mult('[1,*] ins(item/quantity)'), (1, 1))
    """
    return _run(text, namespaces, "", _Parser.definition)


def parse_definitions(text: str, namespaces: Mapping[str, str] | None = None, *,
                      source: str = "") -> tuple[ast.Definition, ...]:
    """Parse zero or more definitions, one per line; ``#`` comments and blank lines are allowed.

    A line ending in an operator, ``:=``, ``,``, ``=`` or ``with``, or inside brackets,
    continues on the next. Duplicate names are left to the validator. ``source`` names where
    the text came from (a file name) and prefixes error messages.

    Raises:
        ExpressionSyntaxError: at the first offending token, with its line and column.

    >>> defs = parse_definitions("Ep := ins(item/price)  # price\\n\\nEi := ins(item) ; Ep")
    >>> [(d.name, str(d.expr), d.pos) for d in defs]
    [('Ep', 'ins(item/price)', (1, 1)), ('Ei', 'ins(item) ; Ep', (3, 1))]
    """
    return _run(text, namespaces, source, _Parser.definitions)


def parse_event_type(text: str, namespaces: Mapping[str, str] | None = None) -> EventType:
    """Parse one event type with a path type, as subscriptions name them.

    ``op(pt)`` and ``*(pt)`` give a primitive event type, ``Name(pt)`` and ``%(pt)`` a
    composite one.

    Raises:
        ExpressionSyntaxError: at the first offending token, e.g. for a name without a path.

    >>> str(parse_event_type("upd(item/price)")), str(parse_event_type("%(item)"))
    ('upd(item/price)', '%(item)')
    """
    return _run(text, namespaces, "", _Parser.event_type)
