"""Positions in text, and the one token and cursor type of the five languages (issue 28).

The algebra's expression language, the rules' ECA language, CEL's CEQL, the streaming Core
XPath and the service's R3 text form each have their own scanner (their lexical rules differ,
and the algebra's is tuned for speed), but they share what a parser sees: a :class:`Token`
with its line, column and offsets, a :class:`Cursor` over the tokens, and the one wording of
the two errors every parser raises::

    line 1, col 8: unexpected 'x': expected ')' to close '(' (opened at col 4)
    line 1, col 10: unclosed '(' (opened at col 4): expected ')' before end of input

Before issue 28 one unclosed bracket got three different messages in ``xmlevents graph``,
``cel`` and ``query``. :class:`LineIndex` maps offsets to (line, column); lines end where
``str.splitlines`` ends them, so that a line number agrees with the snippet under the message
(:func:`snippet`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Hashable
from typing import NamedTuple, NoReturn

__all__ = ["LINE_BREAK", "LineIndex", "Token", "Cursor", "snippet", "unexpected", "unclosed",
           "opened_at"]

#: The line breaks of ``str.splitlines``, with ``"\r\n"`` as one.
LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class LineIndex:
    """Maps offsets of a text to 1-based (line, column) pairs.

    >>> LineIndex("ab\\ncd").at(4)
    (2, 2)
    """

    __slots__ = ("_starts",)

    def __init__(self, text: str) -> None:
        self._starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]

    @property
    def starts(self) -> list[int]:
        """The offset where each line begins (line 1 at offset 0)."""
        return self._starts

    def at(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of ``offset``."""
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


class Token(NamedTuple):
    """One token: ``line``/``column`` are 1-based, ``start``/``end`` are offsets into the text.

    ``kind`` is the language's own (an enum member or a string: each language names its
    kinds); ``text`` is the source slice, or the decoded value where the language says so (a
    string literal). A named tuple on purpose: immutable as a frozen dataclass, and built in a
    third of the time (a file of 10,000 algebra definitions has 190,000 tokens).
    """

    kind: Hashable
    text: str
    line: int
    column: int
    start: int
    end: int


def snippet(text: str, line: int, column: int) -> str:
    """The offending line of ``text`` with a caret under ``column`` (1-based)."""
    lines = text.splitlines() or [""]
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    # A lone surrogate (the error may be about one) is shown as U+FFFD, one column wide, so
    # that the message can be written out.
    if any("\ud800" <= ch <= "\udfff" for ch in src):
        src = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in src)
    return f"  {src}\n  {' ' * (column - 1)}^"


# --- the one wording --------------------------------------------------------------------------

def opened_at(opener: Token, line: int) -> str:
    """Where ``opener`` stands, said from an error on ``line``: ``col C`` on the same line,
    ``line L, col C`` on another."""
    if opener.line == line:
        return f"col {opener.column}"
    return f"line {opener.line}, col {opener.column}"


def unexpected(found: str, expected: str = "") -> str:
    """The reason of an unexpected token: ``unexpected FOUND[: expected EXPECTED]``.

    >>> unexpected("'x'", "')'")
    "unexpected 'x': expected ')'"
    """
    return f"unexpected {found}: expected {expected}" if expected else f"unexpected {found}"


def unclosed(opener: Token, closer: str, line: int) -> str:
    """The reason of a bracket the input ended inside, said from an error on ``line``.

    >>> unclosed(Token("(", "(", 1, 12, 11, 12), ")", 1)
    "unclosed '(' (opened at col 12): expected ')' before end of input"
    """
    return (f"unclosed {opener.text!r} (opened at {opened_at(opener, line)}): expected "
            f"{closer!r} before end of input")


class _Mark:
    """A place in the tokens (:meth:`Cursor.mark`): the cursor's state then, and how many
    tokens had been recorded. Compared by identity: two marks at one place are two marks."""

    __slots__ = ("ahead", "current", "opened", "previous", "pulled")

    def __init__(self, current: Token, ahead: list[Token], previous: Token | None,
                 opened: list[tuple[Token, str]], pulled: int) -> None:
        self.current = current
        self.ahead = ahead
        self.previous = previous
        self.opened = opened
        self.pulled = pulled


# The current token of a lazy cursor before it is read.
_UNREAD = Token(None, "", 0, 0, 0, 0)


def _unread() -> Token:
    return _UNREAD


class Cursor:
    """A parser's place in a stream of tokens: :meth:`peek`, :meth:`next`, :meth:`accept`,
    :meth:`expect`, and the errors :meth:`unexpected` and :meth:`unclosed` in the one wording.

    Tokens are pulled one at a time from ``pull``, which is not called past the ``eof`` token.
    A ``lazy`` cursor pulls one only when asked for it, so that a language may read part of
    its text another way between two tokens (the rules' element constructors;
    :meth:`buffered` says whether a token was read ahead). ``fail(reason,
    offset)`` raises the language's :class:`~xmlevents._foundation.errors.PositionedError`.
    An error about an end token (``ends``: the end of input, and a language's end of line) is
    placed right after the last token read, where the missing text would go.

    A parser says where a bracket opens (:meth:`open`) and :meth:`expect_close` (or
    :meth:`accept_close`) closes it, so that the input ending anywhere inside a bracket --
    right after ``ins(`` as after ``ins(a`` -- is :meth:`unclosed`, not "unexpected end of
    input" (issue 28: one wording for one situation).

    >>> toks = iter([Token("name", "f", 1, 1, 0, 1), Token("(", "(", 1, 2, 1, 2),
    ...              Token("eof", "", 1, 3, 2, 2)])
    >>> def fail(reason, offset):
    ...     raise ValueError(f"offset {offset}: {reason}")
    >>> c = Cursor(toks.__next__, "f(", fail, eof="eof")
    >>> c.next().text, c.open(c.next(), ")").text
    ('f', '(')
    >>> c.expect("name", "an argument")
    Traceback (most recent call last):
    ValueError: offset 2: unclosed '(' (opened at col 2): expected ')' before end of input
    """

    __slots__ = (
        "_ahead",
        "_fail",
        "_lines",
        "_log",
        "_marks",
        "_pull",
        "_read",
        "_refill",
        "_source",
        "current",
        "ends",
        "eof",
        "lazy",
        "opened",
        "previous",
        "text",
    )

    def __init__(self, pull: Callable[[], Token], text: str,
                 fail: Callable[[str, int], NoReturn], *, eof: Hashable,
                 ends: frozenset[Hashable] = frozenset(), lazy: bool = False) -> None:
        self.text = text
        self._pull = pull
        self._fail = fail
        self.eof = eof
        self.ends = ends | {eof}
        self.lazy = lazy
        # What :meth:`next` makes current: the next token pulled (eager), "unread" (lazy), or
        # while tokens were read ahead, the first of them. One call either way, so that the
        # hot loop of an eager cursor tests no mode (10,000 definitions: 263,000 tokens).
        self._refill: Callable[[], Token] = _unread if lazy else pull
        self._read = self._refill
        #: The current token, read as soon as the one before is consumed, so that a hot
        #: parser (the algebra's) reads it as an attribute; in a ``lazy`` cursor it may be
        #: unread: use :meth:`peek` there.
        self.current: Token = _UNREAD if lazy else pull()
        self._ahead: list[Token] = []
        #: The last token :meth:`next` consumed (None before the first).
        self.previous: Token | None = None
        #: The brackets open here, innermost last: (opener, how its closer is written).
        self.opened: list[tuple[Token, str]] = []
        self._lines: LineIndex | None = None
        # Backtracking (:meth:`mark`): the tokens pulled while a mark is live, and the marks.
        self._source = pull
        self._log: list[Token] = []
        self._marks: list[_Mark] = []

    # --- moving --------------------------------------------------------------------------

    def peek(self, k: int = 0) -> Token:
        """The current token (``k`` = 0) or the ``k``-th after it, without consuming any."""
        cur = self.current
        if cur is _UNREAD:
            cur = self.current = self._fill()
        if not k:
            return cur
        ahead = self._ahead
        while len(ahead) < k:
            # Nothing is pulled past the end of input: it is repeated.
            last = ahead[-1] if ahead else cur
            ahead.append(last if last.kind == self.eof else self._pull())
            self._read = self._from_ahead
        return ahead[k - 1]

    def _from_ahead(self) -> Token:
        """The first token read ahead (:meth:`peek`); the last one restores the mode's read."""
        ahead = self._ahead
        token = ahead.pop(0)
        if not ahead:
            self._read = self._refill
        return token

    def _fill(self) -> Token:
        """The token after the consumed ones, read now (a lazy cursor's unread current)."""
        return self._from_ahead() if self._ahead else self._pull()

    def next(self) -> Token:
        """Consume the current token and return it (the end of input stays current)."""
        token = self.current
        if token is _UNREAD:
            token = self.current = self._fill()
        if token.kind == self.eof:
            return token
        self.previous = token
        self.current = self._read()
        return token

    def buffered(self) -> bool:
        """Whether a token after the consumed ones was already read."""
        return self.current is not _UNREAD or bool(self._ahead)

    def at(self, kind: Hashable, text: str | None = None) -> bool:
        """Whether the current token is of ``kind`` (and has ``text``, if given)."""
        cur = self.current
        if cur is _UNREAD:
            cur = self.current = self._fill()
        return cur.kind == kind and (text is None or cur.text == text)

    def accept(self, kind: Hashable, text: str | None = None) -> Token | None:
        """Consume the current token if it is of ``kind`` (with ``text``); else None."""
        cur = self.current
        if cur is _UNREAD:
            cur = self.current = self._fill()
        if cur.kind == kind and (text is None or cur.text == text):
            return self.next()
        return None

    def expect(self, kind: Hashable, what: str, text: str | None = None) -> Token:
        """Consume the current token, which must be of ``kind`` (with ``text``); else raise
        ``unexpected ...: expected WHAT`` (:meth:`unexpected`)."""
        if not self.at(kind, text):
            self.unexpected(what)
        return self.next()

    # --- backtracking --------------------------------------------------------------------

    def mark(self) -> object:
        """A place to come back to (:meth:`reset`) until :meth:`release`: a parser
        that tries one reading and, if it fails, another (CEL's ``(a + 1) > 2``: a condition
        in parentheses, or an expression).

        While a mark is live every token pulled is recorded, by a wrapper of ``pull`` put
        where the cursor reads (so that an unmarked cursor's hot path is unchanged).

        >>> toks = iter([Token("n", "a", 1, 1, 0, 1), Token("n", "b", 1, 3, 2, 3),
        ...              Token("eof", "", 1, 4, 3, 3)])
        >>> c = Cursor(toks.__next__, "a b", None, eof="eof")
        >>> m = c.mark()
        >>> c.next().text, c.next().text, c.peek().kind
        ('a', 'b', 'eof')
        >>> c.reset(m)
        >>> c.next().text, c.previous.text, c.next().text
        ('a', 'a', 'b')
        """
        if not self._marks:
            source = self._source = self._pull
            log = self._log

            def record() -> Token:
                token = source()
                log.append(token)
                return token

            self._pull = record
            if not self.lazy:
                self._refill = record
            if self._read is source:
                self._read = record
        mark = _Mark(self.current, list(self._ahead), self.previous, list(self.opened),
                     len(self._log))
        self._marks.append(mark)
        return mark

    def reset(self, mark: object) -> None:
        """Come back to ``mark``: the tokens consumed since are read again, the brackets open
        then are open again; ``mark`` (and any taken after it) is released."""
        assert isinstance(mark, _Mark)
        ahead = mark.ahead + self._log[mark.pulled:]
        self.current = mark.current
        self._ahead = ahead
        self._read = self._from_ahead if ahead else self._refill
        self.previous = mark.previous
        self.opened[:] = mark.opened
        self.release(mark)

    def release(self, mark: object) -> None:
        """Forget ``mark`` (and any taken after it): the reading it guarded is kept. The last
        mark released stops the recording."""
        assert isinstance(mark, _Mark)
        marks = self._marks
        del marks[marks.index(mark):]
        if marks:
            return
        record, source = self._pull, self._source
        self._pull = source
        if not self.lazy:
            self._refill = source
        if self._read is record:
            self._read = source
        self._log.clear()

    # --- brackets ------------------------------------------------------------------------

    def open(self, opener: Token, closer: str) -> Token:
        """Say that ``opener`` (consumed) opens a bracket closed by ``closer``; returns it."""
        self.opened.append((opener, closer))
        return opener

    def _close(self, opener: Token) -> None:
        opened = self.opened
        if opened and opened[-1][0] is opener:
            opened.pop()

    def expect_close(self, kind: Hashable, opener: Token, closer: str,
                     text: str | None = None) -> Token:
        """Consume the token of ``kind`` (with ``text``) that closes ``opener``, written
        ``closer``: at the end of input the error is :meth:`unclosed`, at another token
        :meth:`unexpected`."""
        if not self.at(kind, text):
            cur = self.peek()
            if cur.kind == self.eof:
                self.unclosed(opener, closer)
            line = self.position(cur)[0]
            self.unexpected(f"{closer!r} to close {opener.text!r} (opened at "
                            f"{opened_at(opener, line)})")
        self._close(opener)
        return self.next()

    def accept_close(self, kind: Hashable, opener: Token, text: str | None = None
                     ) -> Token | None:
        """Consume the token of ``kind`` (with ``text``) if it closes ``opener`` here (an
        empty list: ``f()``); else None."""
        token = self.accept(kind, text)
        if token is not None:
            self._close(opener)
        return token

    # --- errors --------------------------------------------------------------------------

    def describe(self, token: Token) -> str:
        """How an error names ``token``: ``end of input``, or its source text quoted
        (shortened past 30 characters)."""
        if token.kind == self.eof:
            return "end of input"
        source = self.text[token.start:token.end]
        if len(source) > 30:
            source = source[:27] + "..."
        return repr(source)

    def offset(self, token: Token) -> int:
        """Where an error about ``token`` points: an end token right after the last token
        read (or at the start), any other at its start."""
        if token.kind in self.ends:
            return self.previous.end if self.previous is not None else 0
        return token.start

    def position(self, token: Token) -> tuple[int, int]:
        """The line and column an error about ``token`` points at."""
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines.at(self.offset(token))

    def error(self, reason: str, token: Token | None = None) -> NoReturn:
        """Raise the language's error with ``reason`` at ``token`` (the current one)."""
        self._fail(reason, self.offset(token if token is not None else self.peek()))

    def unexpected(self, expected: str = "", token: Token | None = None,
                   found: str | None = None) -> NoReturn:
        """Raise ``unexpected FOUND: expected EXPECTED`` at ``token`` (the current one);
        ``found`` overrides how the token is named. The end of input inside a bracket
        (:meth:`open`) is :meth:`unclosed` instead, whatever was expected there."""
        token = token if token is not None else self.peek()
        if token.kind == self.eof and self.opened:
            self.unclosed(*self.opened[-1])
        self.error(unexpected(found if found is not None else self.describe(token), expected),
                   token)

    def unclosed(self, opener: Token, closer: str) -> NoReturn:
        """Raise ``unclosed OPENER (opened at ...): expected CLOSER before end of input``,
        placed where the closer is missing."""
        end = self.peek()
        self.error(unclosed(opener, closer, self.position(end)[0]), end)
