"""The one token, cursor and wording of the languages (issue 28)."""

from __future__ import annotations

from typing import NoReturn

import pytest

from xmlevents._foundation.errors import PositionedError
from xmlevents._foundation.text import Cursor, LineIndex, Token, snippet
from xmlevents.algebra import parse, parse_definitions
from xmlevents.cel import parse_query
from xmlevents.rules import parse_rules
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
]
_UNEXPECTED = [
    ("algebra", lambda: parse("ins(a b)"), "unexpected 'b': expected ')' to close '('"),
    ("rules", lambda: parse_rules("rule R priority x"),
     "unexpected 'x': expected an integer priority"),
    ("cel", lambda: parse_query("SELECT * WHERE (A B"),
     "unexpected 'B': expected ')' to close '('"),
    ("stream", lambda: parse_xpath("//a[b c]"), "unexpected 'c': expected ']' to close '['"),
]


@pytest.mark.parametrize(("language", "run", "opener"), _UNCLOSED,
                         ids=[u[0] for u in _UNCLOSED])
def test_every_language_says_unclosed_alike(language: str, run: object, opener: str) -> None:
    """``unclosed OPENER (opened at ...): expected CLOSER before end of input`` everywhere."""
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
