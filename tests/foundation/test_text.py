"""The one token, cursor and wording of the languages (issue 28)."""

from __future__ import annotations

from typing import NoReturn

import pytest

from xmlevents._foundation.errors import PositionedError
from xmlevents._foundation.text import Cursor, LineIndex, Token, snippet
from xmlevents.algebra import EventGraph, parse, parse_definitions, subscription_type
from xmlevents.cel import parse_query
from xmlevents.rules import parse_rules
from xmlevents.service import parse_expression
from xmlevents.stream import parse_xpath


def _fail(reason: str, offset: int) -> NoReturn:
    raise PositionedError(reason, text="f(a", line=1, column=offset + 1)


def _cursor(tokens: list[Token], *, lazy: bool = False) -> Cursor:
    return Cursor(iter(tokens).__next__, "f(a", _fail, eof="eof", lazy=lazy)


_TOKENS = [Token("name", "f", 1, 1, 0, 1), Token("(", "(", 1, 2, 1, 2),
           Token("name", "a", 1, 3, 2, 3), Token("eof", "", 1, 4, 3, 3)]


def test_cursor_moves_and_stays_at_the_end() -> None:
    """peek/next/accept walk the tokens; the end of input stays current."""
    c = _cursor(list(_TOKENS))
    assert c.peek(2).text == "a" and c.peek().text == "f"
    assert c.accept("(") is None and c.next().text == "f"
    assert c.accept("(") is not None and c.next().text == "a"
    assert c.next().kind == "eof" and c.next().kind == "eof" and c.peek(3).kind == "eof"


def test_lazy_cursor_reads_nothing_ahead() -> None:
    """A lazy cursor pulls a token only when asked (the rules' constructors read between)."""
    c = _cursor(list(_TOKENS), lazy=True)
    assert not c.buffered()
    c.next()
    assert not c.buffered() and c.peek().text == "(" and c.buffered()


def test_unclosed_and_unexpected_wording() -> None:
    """The two errors, placed after the last token at the end of input."""
    c = _cursor(list(_TOKENS))
    c.next()
    opener = c.next()
    c.next()
    with pytest.raises(PositionedError) as caught:
        c.expect_close(")", opener, ")")
    assert caught.value.column == 4
    assert caught.value.reason == ("unclosed '(' (opened at col 2): expected ')' before end "
                                   "of input")
    c = _cursor(list(_TOKENS))
    with pytest.raises(PositionedError) as caught:
        c.expect("(", "'('")
    assert caught.value.reason == "unexpected 'f': expected '('"


def test_lookahead_then_next_keeps_the_mode() -> None:
    """Tokens read ahead (peek(k)) come first; then an eager cursor pulls again, a lazy one
    leaves the token after them unread."""
    c = _cursor(list(_TOKENS))
    assert c.peek(2).text == "a"
    assert [c.next().text for _ in range(3)] == ["f", "(", "a"] and c.current.kind == "eof"
    c = _cursor(list(_TOKENS), lazy=True)
    assert c.peek(1).text == "("
    assert c.next().text == "f" and c.next().text == "(" and not c.buffered()
    assert c.next().text == "a" and c.peek().kind == "eof"


def test_end_of_input_inside_an_opened_bracket_is_unclosed() -> None:
    """Whatever was expected, the input ending inside a bracket a parser opened is
    ``unclosed``; once the bracket is closed it is ``unexpected`` again."""
    c = _cursor(list(_TOKENS))
    c.next()
    opener = c.open(c.next(), ")")
    c.next()
    with pytest.raises(PositionedError) as caught:
        c.expect("name", "an argument")
    assert caught.value.reason.startswith("unclosed '(' (opened at col 2)")
    tokens = [*_TOKENS[:3], Token(")", ")", 1, 4, 3, 4), Token("eof", "", 1, 5, 4, 4)]
    c = Cursor(iter(tokens).__next__, "f(a)", _fail, eof="eof")
    c.next()
    opener = c.open(c.next(), ")")
    c.next()
    c.expect_close(")", opener, ")")
    assert not c.opened
    with pytest.raises(PositionedError) as caught:
        c.expect("name", "an argument")
    assert caught.value.reason == "unexpected end of input: expected an argument"


def _pulls(tokens: list[Token]) -> tuple[list[Token], object]:
    """A pull over ``tokens`` that lists what it pulled (no token may be pulled twice)."""
    pulled: list[Token] = []
    source = iter(tokens)

    def pull() -> Token:
        pulled.append(next(source))
        return pulled[-1]

    return pulled, pull


@pytest.mark.parametrize("lazy", [False, True])
def test_mark_and_reset_read_the_tokens_again(lazy: bool) -> None:
    """reset comes back to the mark: the tokens consumed since (pulled or read ahead before
    the mark) are read again, ``previous`` is the mark's, and nothing is pulled twice."""
    pulled, pull = _pulls(list(_TOKENS))
    c = Cursor(pull, "f(a", _fail, eof="eof", lazy=lazy)  # type: ignore[arg-type]
    c.next()
    assert c.peek(1).text == "a"  # '(' and 'a' read ahead of the mark
    m = c.mark()
    assert [c.next().text, c.next().text, c.next().kind] == ["(", "a", "eof"]
    assert c.previous is not None and c.previous.text == "a"
    c.reset(m)
    assert c.previous is not None and c.previous.text == "f"
    assert [c.next().text, c.next().text] == ["(", "a"] and c.peek().kind == "eof"
    assert [t.text for t in pulled] == ["f", "(", "a", ""]
    # released: the reading is kept, and the next mark starts afresh
    m = c.mark()
    c.next()
    c.release(m)
    assert c.next().kind == "eof" and c.previous is not None and c.previous.text == "a"


def test_reset_at_the_end_of_input_and_nested_marks() -> None:
    """A mark at the end of input comes back to it; an inner reset inside an outer mark, then
    the outer one, read every token again in order."""
    c = _cursor(list(_TOKENS))
    outer = c.mark()
    c.next()
    inner = c.mark()
    assert c.next().text == "(" and c.next().text == "a"
    c.reset(inner)
    assert c.next().text == "(" and c.peek().text == "a"
    c.reset(outer)
    assert [c.next().text for _ in range(3)] == ["f", "(", "a"]
    m = c.mark()
    assert c.next().kind == "eof"
    c.reset(m)
    assert c.current.kind == "eof" and c.previous is not None and c.previous.text == "a"


def test_two_marks_at_one_place_are_two_marks() -> None:
    """Releasing the inner of two marks taken at one place keeps the outer one live."""
    c = _cursor(list(_TOKENS))
    outer = c.mark()
    inner = c.mark()
    c.release(inner)
    assert c.next().text == "f"
    c.reset(outer)
    assert c.next().text == "f" and c.next().text == "("


def test_reset_restores_the_open_brackets() -> None:
    """Brackets opened after the mark are closed again by reset, those closed after it are
    open again: the end of input is ``unclosed`` after the right bracket."""
    tokens = [Token("(", "(", 1, 1, 0, 1), Token("(", "(", 1, 2, 1, 2),
              Token(")", ")", 1, 3, 2, 3), Token("eof", "", 1, 4, 3, 3)]
    c = Cursor(iter(tokens).__next__, "(()", _fail, eof="eof")
    first = c.open(c.next(), ")")
    m = c.mark()
    second = c.open(c.next(), ")")
    assert c.opened == [(first, ")"), (second, ")")]
    c.reset(m)
    assert c.opened == [(first, ")")]
    inner = c.open(c.next(), ")")
    m = c.mark()
    c.expect_close(")", inner, ")")
    assert c.opened == [(first, ")")]
    c.reset(m)
    assert c.opened == [(first, ")"), (inner, ")")]
    c.next()
    with pytest.raises(PositionedError) as caught:
        c.expect("name", "a name")
    assert caught.value.reason.startswith("unclosed '(' (opened at col 2)")


def test_line_index_and_snippet() -> None:
    """Lines end where str.splitlines ends them; the caret sits under the column."""
    assert LineIndex("a\r\nb\x0bc").at(5) == (3, 1)
    assert snippet("ab\ncd", 2, 2) == "  cd\n   ^"


# One unclosed bracket and one unexpected token in each of the five languages (issue 28: the
# same bracket had three messages in graph, cel and query).
_UNCLOSED = [
    ("algebra", lambda: parse_definitions("E := ins(a"), "'(' (opened at col 9)"),
    ("rules", lambda: parse_rules("rule R priority 1 on INSERT document('d')/a[b"),
     "'[' (opened at col 44)"),
    ("cel", lambda: parse_query("SELECT * WHERE (A"), "'(' (opened at col 16)"),
    ("stream", lambda: parse_xpath("//a[b"), "'[' (opened at col 4)"),
    ("service", lambda: parse_expression("SEQ(a, b"), "'(' (opened at col 4)"),
]
# The input ending right after the opener (issue 28: it read "unexpected end of input" in
# every language but CEL's ')' while the same bracket one token later read "unclosed").
_RIGHT_AFTER = [
    ("algebra", lambda: parse_definitions("E := ins("), "'(' (opened at col 9)"),
    ("algebra [", lambda: parse("[1,"), "'[' (opened at col 1)"),
    ("algebra any", lambda: parse("any(2,"), "'(' (opened at col 4)"),
    ("rules", lambda: parse_rules("rule R priority 1 on INSERT document('d')/a["),
     "'[' (opened at col 44)"),
    ("rules document", lambda: parse_rules("rule R priority 1 on INSERT document("),
     "'(' (opened at col 37)"),
    ("cel", lambda: parse_query("SELECT * WHERE ("), "'(' (opened at col 16)"),
    ("cel filter", lambda: parse_query("SELECT * WHERE A FILTER A["), "'[' (opened at col 26)"),
    ("cel set", lambda: parse_query("SELECT * WHERE A FILTER A[x IN {"),
     "'{' (opened at col 32)"),
    ("stream", lambda: parse_xpath("//a["), "'[' (opened at col 4)"),
    ("stream last", lambda: parse_xpath("//a[last("), "'(' (opened at col 9)"),
    ("service", lambda: parse_expression("SEQ("), "'(' (opened at col 4)"),
    ("service params", lambda: parse_expression("a(x="), "'(' (opened at col 2)"),
    ("service path", lambda: parse_expression("ins(/order/item"), "'(' (opened at col 4)"),
]
_UNEXPECTED = [
    ("algebra", lambda: parse("ins(a b)"), "unexpected 'b': expected ')' to close '('"),
    ("rules", lambda: parse_rules("rule R priority x"),
     "unexpected 'x': expected an integer priority"),
    ("cel", lambda: parse_query("SELECT * WHERE (A B"),
     "unexpected 'B': expected ')' to close '('"),
    ("stream", lambda: parse_xpath("//a[b c]"), "unexpected 'c': expected ']' to close '['"),
    ("service", lambda: parse_expression("(a b)"), "unexpected 'b': expected ')' to close '('"),
]


@pytest.mark.parametrize(("language", "run", "opener"), _UNCLOSED,
                         ids=[u[0] for u in _UNCLOSED])
def test_every_language_says_unclosed_alike(language: str, run: object, opener: str) -> None:
    """``unclosed OPENER (opened at ...): expected CLOSER before end of input`` everywhere."""
    with pytest.raises(PositionedError) as caught:
        run()  # type: ignore[operator]
    assert caught.value.reason.startswith(f"unclosed {opener}: expected "), caught.value
    assert caught.value.reason.endswith(" before end of input")


@pytest.mark.parametrize(("language", "run", "opener"), _RIGHT_AFTER,
                         ids=[u[0] for u in _RIGHT_AFTER])
def test_every_language_says_unclosed_right_after_the_opener(language: str, run: object,
                                                             opener: str) -> None:
    """One wording for one situation: nothing after the opener is still an unclosed bracket."""
    with pytest.raises(PositionedError) as caught:
        run()  # type: ignore[operator]
    assert caught.value.reason.startswith(f"unclosed {opener}: expected "), caught.value
    assert caught.value.reason.endswith(" before end of input")


@pytest.mark.parametrize(("language", "run", "reason"), _UNEXPECTED,
                         ids=[u[0] for u in _UNEXPECTED])
def test_every_language_says_unexpected_alike(language: str, run: object, reason: str) -> None:
    """``unexpected FOUND: expected WHAT`` everywhere."""
    with pytest.raises(PositionedError) as caught:
        run()  # type: ignore[operator]
    assert caught.value.reason.startswith(reason), caught.value


# "expected X, got Y" about a token, left outside the cursors, now in the one wording.
_WORDED = [
    ("rules $", lambda: parse_rules("rule R priority 1 on INSERT document('d')/a do DELETE $"),
     "unexpected end of input: expected a variable name after '$'"),
    ("rules end tag", lambda: parse_rules("rule R priority 1 on INSERT document('d')/a do "
                                          "INSERT <a><b></a></b> BELOW $delta"),
     "unexpected '</a': expected </b> to close <b>"),
    ("rules attribute", lambda: parse_rules("rule R priority 1 on INSERT document('d')/a do "
                                            "INSERT <a =/> BELOW $delta"),
     "unexpected '=': expected an attribute name"),
    ("cel -", lambda: parse_query("SELECT * WHERE A FILTER A[x IN {-a}]"),
     "unexpected 'a': expected a number after '-'"),
    ("service", lambda: parse_expression("a(x=X y=Y)"),
     "unexpected 'y': expected ',' or ')' after a parameter"),
    ("service end", lambda: parse_expression("a ; "), "unexpected end of input: expected an "
     "expression"),
]


@pytest.mark.parametrize(("case", "run", "reason"), _WORDED, ids=[w[0] for w in _WORDED])
def test_token_messages_outside_the_cursors(case: str, run: object, reason: str) -> None:
    """The scanners' and the constructors' messages about a token say unexpected ...: expected."""
    with pytest.raises(PositionedError) as caught:
        run()  # type: ignore[operator]
    assert caught.value.reason.startswith(reason), caught.value


# --- names (issue 28: one XML name pattern; identifiers ASCII where the language says so) ----

def test_service_names_are_xml_names() -> None:
    """An event type, a parameter and a variable may be any NCName, as an algebra
    definition's name is (the service took only ASCII); a colon or a keyword is refused."""
    e = parse_expression("Gr\u00f6\u00dfe(x\u00b7y=V\u00e9) ; ins(/a)(id=I)")
    assert str(e) == "SEQ(Gr\u00f6\u00dfe(x\u00b7y=V\u00e9), ins(/a)(id=I))"
    assert parse_expression(str(e)) == e
    for bad in ("a(p:q=X)", "a(x=\u00b7V)", "a(OR=X)"):
        with pytest.raises(PositionedError):
            parse_expression(bad)


def test_a_subscription_names_an_xml_named_definition() -> None:
    """subscribe('a\u00b7b') is the definition a\u00b7b (its bare name was matched with \\w,
    which refused the middle dot, and read as an event type missing its path)."""
    assert subscription_type("a\u00b7b") == "a\u00b7b"
    graph = EventGraph(parse_definitions("a\u00b7b := ins(x/a) ; ins(x/b)"))
    graph.subscribe("a\u00b7b", lambda event: None)


def test_cel_names_stay_ascii_identifiers() -> None:
    """CEQL's names are CORE's ASCII identifiers by design; another letter is told to use
    backquotes, and a backquoted attribute prints back in them."""
    with pytest.raises(PositionedError, match="written in backquotes"):
        parse_query("SELECT * WHERE A FILTER A[caf\u00e9 > 1]")
    q = parse_query("SELECT * WHERE A FILTER A[`caf\u00e9` > 1]")
    assert "`caf\u00e9`" in str(q) and parse_query(str(q)) == q
