"""Parse ECA rules (seed 002, section 2) into the trees of :mod:`xmlevents.rules.ast`.

A rule file holds rules one after another::

    rule R1 priority 2:
    on INSERT document('s.xml')/stores/store/product
    if not(document('p.xml')/products/product[@id=$delta/@id]/store[@id=$delta/../@id])
    do INSERT <store id='{$delta/../@id}'/>
       BELOW document('p.xml')/products/product[@id=$delta/@id] AFTER TRUE

Line breaks are spaces, so a rule may be laid out as the paper lays it out. The colon
after the priority is optional, ``if`` may be left out (the condition is then ``TRUE``),
actions are separated by ``;`` (one more after the last is allowed). Keywords are
case-insensitive; ``TRUE`` after ``BEFORE``/``AFTER`` is the constant when it is the whole
qualifier (``(TRUE)`` is a child element named TRUE).

A recursive-descent parser with one ``_parse_<level>`` method per precedence level, loosest
first: ``or``, ``and``, then ``not``/comparisons and primaries. Chains of one connective
build one n-ary node and parentheses are kept as nesting, as in the expression language.
Paths, chains and rule lists are read in loops; only nesting (qualifiers, parentheses,
constructors) recurses, and more than :data:`MAX_DEPTH` levels are refused. The first error
raises a :class:`RuleSyntaxError` at the offending token; a construct outside the paper's
fragments (section 2.4: only the child, parent, self and descendant-or-self axes, no function
but ``document()``, no variable but ``$delta``; section 2.5: no FLWR expression) is refused
saying what the fragment allows.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, NoReturn, TypeVar

from xmlevents._foundation.errors import ArgumentTypeError
from xmlevents._foundation.text import Cursor

from . import ast
from ._constructors import read_element
from ._errors import RuleSyntaxError
from ._tokens import Lexer, Token, TokenType, is_keyword

__all__ = ["parse_rules", "parse_rule", "parse_path", "parse_condition", "parse_action",
           "MAX_DEPTH"]

T = TypeVar("T")

#: Nesting deeper than this is refused (qualifiers in qualifiers, parentheses, constructors).
MAX_DEPTH = 50

COMPARISONS: dict[TokenType, ast.CompOp] = {
    TokenType.EQ: ast.CompOp.EQ, TokenType.NE: ast.CompOp.NE, TokenType.LT: ast.CompOp.LT,
    TokenType.LE: ast.CompOp.LE, TokenType.GT: ast.CompOp.GT, TokenType.GE: ast.CompOp.GE,
}
#: Connectives: keyword -> node class, for qualifiers and for conditions.
QUALIFIER_CHAINS: dict[str, type[ast.QAnd | ast.QOr]] = {"and": ast.QAnd, "or": ast.QOr}
CONDITION_CHAINS: dict[str, type[ast.And | ast.Or]] = {"and": ast.And, "or": ast.Or}

_STEPS = "a step is a name, *, @name, @*, . or .., joined by / or // (simple XPath, section 2.4)"
_AXES = ("simple XPath has the child, parent, self and descendant-or-self axes only, written "
         "/name, .., . and // (section 2.4)")
_FLWR = frozenset({"for", "let", "some", "every"})
_CLOSERS: dict[Hashable, str] = {TokenType.LPAREN: ")", TokenType.LBRACK: "]",
                                 TokenType.LBRACE: "}"}
_ARITHMETIC = {TokenType.PLUS: "+", TokenType.MINUS: "-", TokenType.STAR: "*"}


class _Cursor(Cursor):
    """The shared cursor, naming a string literal as this language does."""

    __slots__ = ()

    def describe(self, token: Token) -> str:
        found = super().describe(token)
        return f"string {found[1:-1]}" if token.kind is TokenType.STRING else found


class _Parser:
    """Parses one text; tokens are pulled lazily, so that constructors can be read as XML."""

    def __init__(self, text: str, context: str = "") -> None:
        self.text = text
        self.context = context
        self.lexer = Lexer(text, context)
        # Lazy: a constructor's inside is XML, read by ._constructors between two tokens.
        self._tokens = _Cursor(self.lexer.token, text, self._fail, eof=TokenType.EOF,
                               lazy=True)
        self._depth = 0

    # --- token helpers -----------------------------------------------------------------------

    @property
    def cur(self) -> Token:
        return self._tokens.peek()

    def _peek(self) -> Token:
        """The token after :attr:`cur`."""
        return self._tokens.peek(1)

    def _advance(self) -> Token:
        return self._tokens.next()

    def _resume(self, offset: int) -> None:
        """Go on tokenizing at ``offset`` (after XML read by the constructor reader)."""
        assert not self._tokens.buffered(), "a token was read ahead"
        self.lexer.pos = offset

    def _at(self, kind: TokenType) -> bool:
        return self._tokens.at(kind)

    def _at_keyword(self, *words: str) -> bool:
        return any(is_keyword(self.cur, w) for w in words)

    def _expect(self, kind: TokenType, what: str) -> Token:
        return self._tokens.expect(kind, what)

    def _expect_keyword(self, word: str, what: str) -> Token:
        if not self._at_keyword(word):
            self._unexpected(what)
        return self._advance()

    def _open(self, opener: Token) -> Token:
        """``opener`` (consumed) opens a bracket: the input ending inside it is unclosed."""
        return self._tokens.open(opener, _CLOSERS[opener.kind])

    def _expect_close(self, kind: TokenType, opener: Token) -> Token:
        return self._tokens.expect_close(kind, opener, str(kind.value))

    def _describe(self, token: Token) -> str:
        return self._tokens.describe(token)

    def _fail(self, reason: str, offset: int) -> NoReturn:
        self.lexer.fail(reason, offset)

    def _error(self, reason: str, token: Token | None = None) -> NoReturn:
        self._tokens.error(reason, token)

    def _unexpected(self, expected: str, token: Token | None = None) -> NoReturn:
        self._tokens.unexpected(expected, token)

    def _build(self, token: Token, factory: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call an AST constructor, reporting its ValueError/TypeError at ``token``."""
        try:
            return factory(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            self._error(str(exc), token)

    @contextmanager
    def _nested(self, offset: int) -> Iterator[None]:
        """One more level of nesting; past :data:`MAX_DEPTH` an error at ``offset``."""
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                self.lexer.fail(f"nested more than {MAX_DEPTH} levels deep; split the rule or "
                                "simplify the expression", offset)
            yield
        finally:
            self._depth -= 1

    @staticmethod
    def _pos(token: Token) -> ast.Pos:
        return (token.line, token.column)

    # --- entry points ------------------------------------------------------------------------

    def whole(self, parse: Callable[[], T], what: str) -> T:
        """``parse`` followed by the end of the input."""
        result = parse()
        if not self._at(TokenType.EOF):
            self._error(f"unexpected {self._describe(self.cur)} after the {what}")
        return result

    def rules(self) -> ast.RuleSet:
        rules = []
        while not self._at(TokenType.EOF):
            rules.append(self.rule())
        return ast.RuleSet(tuple(rules), source=self.context, text=self.text)

    # --- rules -------------------------------------------------------------------------------

    def rule(self) -> ast.Rule:
        start = self._expect_keyword("rule", "a rule 'rule Name priority N: on ... do ...'")
        name = self.cur
        if name.kind is not TokenType.NAME or ":" in name.text:
            self._unexpected("a rule name such as R1 after 'rule'", name)
        self._advance()
        self._expect_keyword("priority", f"'priority N' after the rule name {name.text}: every "
                             "rule has its own priority (a larger number runs first)")
        priority = self._priority()
        if self._at(TokenType.COLON):
            self._advance()
        self._expect_keyword("on", f"'on' and the event of rule {name.text}")
        event = self._event()
        condition: ast.Condition = ast.TRUE
        if self._at_keyword("if"):
            self._advance()
            condition = self._condition()
        self._expect_keyword("do", f"'do' and the actions of rule {name.text}")
        actions = [self._action()]
        while self._at(TokenType.SEMI):
            self._advance()
            if self._at(TokenType.EOF) or self._at_keyword("rule"):
                break  # a ';' after the last action
            actions.append(self._action())
        if not (self._at(TokenType.EOF) or self._at_keyword("rule")):
            self._unexpected("';' and another action, the next 'rule' or the end")
        return self._build(start, ast.Rule, name.text, priority, event, condition,
                           tuple(actions), pos=self._pos(start))

    def _priority(self) -> int:
        sign = 1
        if self._at(TokenType.MINUS):
            self._advance()
            sign = -1
        token = self.cur
        if token.kind is not TokenType.NUMBER or not token.text.isdigit():
            self._unexpected("an integer priority after 'priority'", token)
        self._advance()
        return sign * int(token.text)

    def _event(self) -> ast.Event | ast.NamedEvent:
        token = self.cur
        if self._at_keyword("insert", "delete"):
            self._advance()
            kind = ast.EventKind(token.text.upper())
            path = self._path(absolute=True, what="the event")
            delta = next((n for n in ast.walk(path) if isinstance(n, ast.Delta)), None)
            if delta is not None:
                self._error_at(delta.pos, "the event defines $delta and cannot use it: start "
                               "its path with document('name') (section 2.1)")
            return self._build(token, ast.Event, kind, path, pos=self._pos(token))
        if self._at_keyword("event"):
            self._advance()
            name = self.cur
            if name.kind is not TokenType.NAME or ":" in name.text:
                self._unexpected("the name of a composite event definition after EVENT", name)
            self._advance()
            return ast.NamedEvent(name.text, pos=self._pos(token))
        self._unexpected("INSERT e, DELETE e or EVENT Name after 'on'", token)

    def _error_at(self, pos: ast.Pos | None, reason: str) -> NoReturn:
        line, col = pos if pos is not None else self._pos(self.cur)
        raise RuleSyntaxError(reason, text=self.text, line=line, column=col, context=self.context)

    # --- conditions (section 2.2) ------------------------------------------------------------

    def _condition(self) -> ast.Condition:
        token = self.cur
        if is_keyword(token, "true"):
            self._advance()
            if self._at_keyword("and", "or"):
                self._error("TRUE stands alone as a condition; leave it out of and/or")
            return ast.TrueCondition(pos=self._pos(token))
        return self._parse_or()

    def _parse_chain(self, operand: Callable[[], Any], table: dict[str, Any]) -> Any:
        """``operand (keyword operand)*`` for one keyword of ``table``: one node per chain."""
        first = operand()
        op = self.cur
        word = op.text.lower() if op.kind is TokenType.NAME else ""
        cls = table.get(word)
        if cls is None:
            return first
        items = [first]
        while is_keyword(self.cur, word):
            self._advance()
            items.append(operand())
        return self._build(op, cls, tuple(items), pos=self._pos(op))

    def _parse_or(self) -> ast.Formula:
        result: ast.Formula = self._parse_chain(self._parse_and, {"or": ast.Or})
        return result

    def _parse_and(self) -> ast.Formula:
        result: ast.Formula = self._parse_chain(self._parse_not, {"and": ast.And})
        return result

    def _parse_not(self) -> ast.Formula:
        token = self.cur
        with self._nested(token.start):
            if is_keyword(token, "not") and self._peek().kind is TokenType.LPAREN:
                self._advance()
                opener = self._open(self._advance())
                item = self._parse_or()
                self._expect_close(TokenType.RPAREN, opener)
                return self._build(token, ast.Not, item, pos=self._pos(token))
            if token.kind is TokenType.LPAREN:
                self._open(self._advance())
                inner = self._parse_or()
                self._expect_close(TokenType.RPAREN, token)
                return inner
            if is_keyword(token, "true"):
                self._error("TRUE stands alone as a condition; leave it out of and/or/not")
            path = self._path(absolute=True, what="a condition")
            if self.cur.kind in COMPARISONS:
                self._error(f"a condition is made of paths; compare inside a qualifier, as in "
                            f"$delta[@id='p1'] (section 2.2), not {self._describe(self.cur)} "
                            "after a path")
            return path

    # --- actions (section 2.3) ---------------------------------------------------------------

    def _action(self) -> ast.Action:
        token = self.cur
        if is_keyword(token, "insert"):
            self._advance()
            content = self._content()
            self._expect_keyword("below", "BELOW and the path of the nodes to insert below")
            below_token = self.cur
            below = self._path(absolute=True, what="BELOW")
            leaf = below.leaf
            if leaf is not None and leaf.kind is ast.StepKind.ATTRIBUTE:
                self._error_at(leaf.pos, f"BELOW selects the elements to insert below; "
                               f"{ast.Step(leaf.sep, leaf.kind, leaf.name)!s} selects attributes")
            position = None
            if self._at_keyword("before", "after"):
                where = self._advance()
                position = ast.Position(ast.Where(where.text.upper()), self._position_test(),
                                        pos=self._pos(where))
            return self._build(below_token, ast.Insert, content, below, position,
                               pos=self._pos(token))
        if is_keyword(token, "delete"):
            self._advance()
            target = self._path(absolute=True, what="DELETE")
            return ast.Delete(target, pos=self._pos(token))
        self._unexpected("an action, INSERT r BELOW e [BEFORE q | AFTER q] or DELETE e",
                         token)

    def _content(self) -> ast.Content:
        token = self.cur
        if token.kind is TokenType.LT:
            self._advance()
            with self._nested(token.start):
                element, end = read_element(self.lexer, token.start, self._enclosed,
                                            self._nested)
            self._resume(end)
            return element
        self._refuse_flwr()
        if not (token.kind is TokenType.VAR or (token.kind is TokenType.NAME
                                                and self._peek().kind is TokenType.LPAREN)):
            self._unexpected("a simple XQuery expression, a path such as $delta/.. or an "
                             "element constructor such as <store id='{$delta/../@id}'/> "
                             "(section 2.5)", token)
        return self._path(absolute=True, what="INSERT")

    def _enclosed(self, offset: int) -> tuple[ast.Path, int]:
        """The simple XPath of an enclosed expression ``{e}`` whose ``{`` ends at ``offset``."""
        self._resume(offset)
        opener = self._open(self.lexer.make(TokenType.LBRACE, "{", offset - 1, offset))
        if self._at(TokenType.RBRACE):
            self._error("an enclosed expression {e} holds a path, as in {$delta/../@id}")
        path = self._path(absolute=True, what="an enclosed expression")
        close = self._expect_close(TokenType.RBRACE, opener)
        return path, close.end  # the text after '}' is XML again

    def _position_test(self) -> ast.TrueCondition | ast.Qualifier:
        token = self.cur
        if is_keyword(token, "true"):
            after = self._peek()
            if after.kind in (TokenType.SEMI, TokenType.EOF) or is_keyword(after, "rule"):
                self._advance()
                return ast.TrueCondition(pos=self._pos(token))
        return self._parse_qor()

    # --- qualifiers (section 2.4) ------------------------------------------------------------

    def _parse_qor(self) -> ast.Qualifier:
        result: ast.Qualifier = self._parse_chain(self._parse_qand, {"or": ast.QOr})
        return result

    def _parse_qand(self) -> ast.Qualifier:
        result: ast.Qualifier = self._parse_chain(self._parse_compare, {"and": ast.QAnd})
        return result

    def _parse_compare(self) -> ast.Qualifier:
        token = self.cur
        with self._nested(token.start):
            if token.kind is TokenType.LPAREN:
                self._open(self._advance())
                inner = self._parse_qor()
                self._expect_close(TokenType.RPAREN, token)
                if self.cur.kind in COMPARISONS:
                    self._error("a parenthesised qualifier is true or false and is not compared; "
                                "compare paths, strings and numbers (section 2.4)")
                return inner
            if is_keyword(token, "not") and self._peek().kind is TokenType.LPAREN:
                self._error("not() is allowed in a rule's condition, not inside a qualifier "
                            "(section 2.4: a qualifier joins paths and comparisons with and, or)")
            left = self._operand()
            op = self.cur
            if op.kind not in COMPARISONS:
                if not isinstance(left, ast.Path):
                    what = "a number alone is a position test" if isinstance(
                        left, ast.Number) else "a string alone is not a test"
                    self._error(f"{what}, which simple XPath does not have; compare it, as in "
                                f"[. = {self.text[token.start:token.end]}]", token)
                return left
            self._advance()
            right = self._operand()
            if self.cur.kind in COMPARISONS:
                self._error("comparisons do not chain; join them with and")
            return ast.Compare(left, COMPARISONS[op.kind], right, pos=self._pos(op))

    def _operand(self) -> ast.Operand:
        token = self.cur
        if token.kind is TokenType.STRING:
            self._advance()
            return ast.Literal(token.text, pos=self._pos(token))
        if token.kind is TokenType.NUMBER:
            self._advance()
            return ast.Number(Decimal(token.text), pos=self._pos(token))
        if token.kind is TokenType.MINUS:
            self._error("negative numbers and arithmetic are outside simple XPath (section 2.4)")
        return self._path(absolute=False, what="a qualifier")

    def _qualifiers(self) -> tuple[ast.Qualifier, ...]:
        found = []
        while self._at(TokenType.LBRACK):
            opener = self._open(self._advance())
            if self._at(TokenType.RBRACK):
                self._error("an empty qualifier []; write a path or a comparison inside")
            found.append(self._parse_qor())
            self._expect_close(TokenType.RBRACK, opener)
        return tuple(found)

    # --- paths (section 2.4) -----------------------------------------------------------------

    def _refuse_flwr(self) -> None:
        token = self.cur
        if (token.kind is TokenType.NAME and token.text in _FLWR
                and self._peek().kind is TokenType.VAR):
            self._error(f"'{token.text}' expressions (FLWR: for, let, where, return) are outside "
                        "simple XQuery, which keeps only the return part: write a path or an "
                        "element constructor (section 2.5)")

    def _refuse_function(self, token: Token) -> NoReturn:
        name = token.text
        if name == "document":
            self._error("document('name') starts a path; it cannot be a step", token)
        self._error(f"function {name}() is outside simple XPath: the only function is "
                    f"document('name'), and {_STEPS}", token)

    def _path(self, *, absolute: bool, what: str) -> ast.Path:
        """A simple XPath expression ``e`` or, unless ``absolute``, a relative path ``p``."""
        token = self.cur
        pos = self._pos(token)
        root: ast.Document | ast.Delta | None
        steps: list[ast.Step] = []
        if token.kind is TokenType.VAR:
            if token.text != "delta":
                self._error(f"variable ${token.text} is outside simple XPath: the only variable "
                            "is $delta (section 2.4)")
            self._advance()
            root = ast.Delta(self._qualifiers(), pos=pos)
        elif (token.kind is TokenType.NAME and token.text == "document"
              and self._peek().kind is TokenType.LPAREN):
            root = self._document()
            if not self._at(TokenType.SLASH) and not self._at(TokenType.DSLASH):
                close = self._tokens.previous
                assert close is not None  # the ')' of document(...)
                self.lexer.fail(f"document({root.name!r}) is followed by / or // and a path, as in "
                                f"document({root.name!r})/name (section 2.4)", close.end)
        else:
            self._refuse_flwr()
            if token.kind in (TokenType.SLASH, TokenType.DSLASH):
                self._error(f"a path starts at document('name') or $delta; a leading "
                            f"{token.text} names no document (section 2.4)")
            if absolute:
                if token.kind is TokenType.NAME and self._peek().kind is TokenType.LPAREN:
                    self._refuse_function(token)
                if token.kind is TokenType.NAME and self._peek().kind is TokenType.AXIS:
                    self._refuse_axis(token)
                self._unexpected(f"a simple XPath expression for {what}, starting with "
            f"document('name') or $delta (section 2.4)", token)
            root = None
            steps.append(self._step(ast.Sep.CHILD))
        while self._at(TokenType.SLASH) or self._at(TokenType.DSLASH):
            sep = ast.Sep(self._advance().text)
            steps.append(self._step(sep))
        self._refuse_after_path()
        return self._build(token, ast.Path, root, tuple(steps), pos=pos)

    def _document(self) -> ast.Document:
        token = self._advance()
        opener = self._open(self._advance())
        name = self.cur
        if name.kind is not TokenType.STRING:
            self._unexpected("the name of a document in quotes after document(, as in "
                             "document('s.xml')", name)
        self._advance()
        if self._at(TokenType.COMMA):
            self._error("document() takes one argument, the document's name")
        self._expect_close(TokenType.RPAREN, opener)
        if self._at(TokenType.LBRACK):
            self._error("document('name') takes no qualifier; qualify the steps after it")
        return self._build(name, ast.Document, name.text, pos=self._pos(token))

    def _refuse_axis(self, token: Token) -> NoReturn:
        axis = token.text
        hint = {"child": "write name for child::name", "parent": "write .. for parent::node()",
                "self": "write . for self::node()",
                "descendant-or-self": "write // for descendant-or-self::node()/",
                "attribute": "write @name for attribute::name"}.get(axis, "")
        self._error(f"axis {axis}:: is outside simple XPath; {_AXES}"
                    + (f"; {hint}" if hint else ""), token)

    def _refuse_after_path(self) -> None:
        token = self.cur
        if token.kind is TokenType.PIPE:
            self._error("the union | is outside simple XPath (section 2.4); write two rules, "
                        "or join qualifiers with or")
        if token.kind in _ARITHMETIC or is_keyword(token, "div") or is_keyword(token, "mod"):
            self._error(f"arithmetic ({self._describe(token)}) is outside simple XPath "
                        "(section 2.4)")
        if token.kind is TokenType.AXIS:
            self._error(f"axes are outside simple XPath; {_AXES}")

    def _step(self, sep: ast.Sep) -> ast.Step:
        token = self.cur
        pos = self._pos(token)
        kind: ast.StepKind
        name: str | None = None
        if token.kind is TokenType.DOT:
            kind = ast.StepKind.SELF
        elif token.kind is TokenType.DOTDOT:
            kind = ast.StepKind.PARENT
        elif token.kind is TokenType.STAR:
            kind, name = ast.StepKind.ELEMENT, "*"
        elif token.kind is TokenType.AT:
            self._advance()
            kind = ast.StepKind.ATTRIBUTE
            attr = self.cur
            if attr.kind is TokenType.STAR:
                name = "*"
            elif attr.kind is TokenType.NAME and self._peek().kind not in (
                    TokenType.LPAREN, TokenType.AXIS):
                name = attr.text
            else:
                self._unexpected("an attribute name or * after '@'", attr)
        elif token.kind is TokenType.NAME:
            after = self._peek().kind
            if after is TokenType.AXIS:
                self._refuse_axis(token)
            if after is TokenType.LPAREN:
                self._refuse_function(token)
            kind, name = ast.StepKind.ELEMENT, token.text
        elif token.kind is TokenType.VAR:
            self._error(f"a variable starts a path; it cannot be a step after {sep.value}")
        else:
            self._unexpected(f"a step after {sep.value!r}: {_STEPS}", token)
        self._advance()
        return self._build(token, ast.Step, sep, kind, name, self._qualifiers(), pos=pos)


def _run(text: str, context: str, action: Callable[[_Parser], T]) -> T:
    if not isinstance(text, str):
        raise ArgumentTypeError(f"text={text!r}: expected the rule text as a str")
    try:
        return action(_Parser(text, context))
    except RecursionError:  # a backstop: MAX_DEPTH normally stops deep nesting first
        raise RuleSyntaxError("rule text nested too deeply; simplify it", text=text, line=1,
                              column=1, context=context) from None


def parse_rules(text: str, *, source: str = "") -> ast.RuleSet:
    """Parse a rule file: zero or more rules, ``#`` comments anywhere.

    ``source`` names where the text came from (a file name) and goes into error messages.

    Raises:
        RuleSyntaxError: at the first offending token, with its line and column.
        RuleError: for a second rule with a name or a priority already used.

    >>> rules = parse_rules('''
    ... rule R1 priority 2:   # section 2.3, Example 1
    ... on INSERT document('s.xml')/stores/store/product
    ... do INSERT <store id='{$delta/../@id}'/> BELOW document('p.xml')/products AFTER TRUE
    ... ''')
    >>> [(r.name, r.priority, str(r.event)) for r in rules]
    [('R1', 2, "INSERT document('s.xml')/stores/store/product")]
    >>> try:
    ...     parse_rules("rule R1 priority 1: on INSERT document('s.xml')/a do DELETE $delta/c()")
    ... except RuleSyntaxError as exc:
    ...     print(exc.line, exc.column, exc.reason.split(":")[0])
    1 68 function c() is outside simple XPath
    """
    return _run(text, source, _Parser.rules)


def parse_rule(text: str) -> ast.Rule:
    """Parse exactly one rule.

    Raises:
        RuleSyntaxError: at the first offending token, with its line and column.
    """
    return _run(text, "", lambda p: p.whole(p.rule, "rule"))


def parse_path(text: str) -> ast.Path:
    """Parse one simple XPath expression ``e`` (section 2.4), or a relative path ``p``.

    Raises:
        RuleSyntaxError: at the first offending token, with its line and column.

    >>> parse_path("$delta/../..[name='Baghdad Cafe']").steps[-1].qualifiers
    (Compare("name='Baghdad Cafe'"),)
    """
    return _run(text, "", lambda p: p.whole(lambda: p._path(absolute=False, what="a path"),
                                            "path"))


def parse_condition(text: str) -> ast.Condition:
    """Parse a condition (section 2.2): ``TRUE``, or paths joined by and, or, not().

    Raises:
        RuleSyntaxError: at the first offending token, with its line and column.
    """
    return _run(text, "", lambda p: p.whole(p._condition, "condition"))


def parse_action(text: str) -> ast.Action:
    """Parse one action (section 2.3), such as a top-level update given by a user.

    Raises:
        RuleSyntaxError: at the first offending token, with its line and column.

    >>> parse_action("DELETE document('s.xml')/stores/store[@id='s1']")
    Delete("DELETE document('s.xml')/stores/store[@id='s1']")
    """
    return _run(text, "", lambda p: p.whole(p._action, "action"))
