"""Split expression-language text (DESIGN section 3) into tokens with line, column and offsets.

Path types are single tokens: anything built from names, ``/``, ``@``, ``{uri}``,
``prefix:``, ``text()``, ``comment()``, ``processing-instruction()`` and the wildcard step
``*`` is read greedily, so that a malformed path such as ``a//b`` reaches
``PathType.parse`` whole and its error can point inside it. A ``*`` belongs to a path where
it follows ``/`` (``a/*``, ``/*``), ``@``, ``:`` or ``}`` (refused by ``PathType.parse`` with a
hint), or starts one before ``/`` (``*/price``); anywhere else it is the punctuation of the
wildcard operation ``*(pt)`` or of ``[l,*]``, and the parser reads a lone ``*`` where a path
type is expected (``ins(*)``) as the path type ``*``. A line ends wherever
``str.splitlines`` ends one, so line numbers agree with the error snippet.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from typing import NoReturn

from xmlevents._foundation.lazy import LazyPattern
from xmlevents._foundation.names import NAME_START_CHAR, NCNAME
from xmlevents._foundation.text import LINE_BREAK, LineIndex, Token

from ._errors import ExpressionSyntaxError

__all__ = ["TokenType", "Token", "tokenize", "scan", "LineIndex"]


class TokenType(enum.Enum):
    """The kinds of token; punctuation kinds have their text as value."""

    # Members are singletons: identity hashing is valid and, unlike Enum's, runs in C (the
    # scanner looks kinds up in sets once a token).
    __hash__ = object.__hash__

    NAME = "name"
    PATH = "path"
    NUMBER = "number"
    STRING = "string"
    LPAREN = "("
    RPAREN = ")"
    LBRACK = "["
    RBRACK = "]"
    COMMA = ","
    AMP = "&"
    PIPE = "|"
    SEMI = ";"
    STAR = "*"
    PERCENT = "%"
    ASSIGN = ":="
    EQ = "="
    NEWLINE = "newline"
    EOF = "end of input"


# The line breaks of str.splitlines, with "\r\n" as one.
_LINE_BREAK = LINE_BREAK
_BREAK_CHARS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_SPACE = re.compile(r"[ \t]+")
# (compiled on first use: foundation's LazyPattern)
_NAME_START = LazyPattern(f"[{NAME_START_CHAR}]")
_NCNAME_RE = LazyPattern(NCNAME)
# Lenient on purpose: steps and slashes in any order, validated later by PathType.parse.
_PATH = LazyPattern(rf"(?:\*(?=/))?(?:/|@|(?<=[/@:}}])\*|(?:text|comment|processing-instruction)"
                   rf"\([ \t]*\)|\{{[^}}]*\}}|{NCNAME}(?::(?=[{NAME_START_CHAR}]|\*))?)+")
_NUMBER = re.compile(r"[0-9]+")
_PUNCT = {
    ":=": TokenType.ASSIGN, "(": TokenType.LPAREN, ")": TokenType.RPAREN,
    "[": TokenType.LBRACK, "]": TokenType.RBRACK, ",": TokenType.COMMA, "&": TokenType.AMP,
    "|": TokenType.PIPE, ";": TokenType.SEMI, "*": TokenType.STAR, "%": TokenType.PERCENT,
    "=": TokenType.EQ,
}
# After these a line break does not end the definition: the expression goes on.
_CONTINUES = frozenset({TokenType.AMP, TokenType.PIPE, TokenType.SEMI, TokenType.ASSIGN,
                        TokenType.COMMA, TokenType.EQ, TokenType.NEWLINE})
_OPENERS = frozenset({TokenType.LPAREN, TokenType.LBRACK})
_CLOSERS = frozenset({TokenType.RPAREN, TokenType.RBRACK})
# Dispatch of the scanner on a token's first character.
_SINGLE = {ch: kind for ch, kind in _PUNCT.items() if len(ch) == 1 and ch != "*"}
_PATH_START = frozenset("/@{_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NAME = TokenType.NAME
_PATH_KIND = TokenType.PATH
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n",
            "r": "\r", "t": "\t"}
_STRING_CHUNK = {'"': re.compile(r'[^"\\]*'), "'": re.compile(r"[^'\\]*")}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _hex_escape(text: str, i: int) -> int | None:
    """The code unit of a ``\\uXXXX`` escape at offset ``i``, or None if there is none."""
    if text.startswith("\\u", i) and _HEX4.fullmatch(text, i + 2, i + 6):
        return int(text[i + 2:i + 6], 16)
    return None


def _read_string(text: str, start: int, fail: _Fail) -> tuple[str, int]:
    """Decode the string literal opening at ``start``; return its value and end offset.

    Accepts the escapes the printer's ``json.dumps`` produces, plus ``\\'``.
    """
    quote = text[start]
    chunk = _STRING_CHUNK[quote]
    out: list[str] = []
    i = start + 1
    while True:
        m = chunk.match(text, i)
        assert m is not None  # the pattern matches the empty string
        out.append(m.group())
        i = m.end()
        if i < len(text) and text[i] == quote:
            return "".join(out), i + 1
        esc = text[i + 1:i + 2]  # text[i] is a backslash, or the text has ended
        if not esc:
            fail(f"unterminated string; close it with {quote}", start)
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 2
        elif (code := _hex_escape(text, i)) is not None:
            i += 6
            # A UTF-16 surrogate pair written as two escapes is one character, as in JSON.
            low = _hex_escape(text, i)
            if 0xD800 <= code < 0xDC00 and low is not None and 0xDC00 <= low < 0xE000:
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            elif 0xD800 <= code < 0xE000:  # half a pair: no character, nothing to write out
                fail(f"the escape \\u{code:04x} is half of a UTF-16 surrogate pair, not a "
                     "character; write the character, or both halves of its pair", i - 6)
            out.append(chr(code))
        else:
            fail(f"unknown escape {text[i:i + 2]!r} in a string; use \\\\, \\\", \\', \\n, \\t or "
                 "\\uXXXX", i)


class _Fail:
    """Raises ExpressionSyntaxError at an offset of the text being scanned."""

    def __init__(self, text: str, lines: LineIndex, context: str) -> None:
        self.text, self.lines, self.context = text, lines, context

    def __call__(self, reason: str, offset: int) -> NoReturn:
        line, col = self.lines.at(offset)
        raise ExpressionSyntaxError(reason, text=self.text, line=line, column=col,
                                    context=self.context)


def _unexpected(text: str, pos: int) -> str:
    ch = text[pos]
    reason = f"unexpected character {ch!r}"
    if ch == "-" and text[pos + 1:pos + 2].isdigit():
        return reason + ": numbers cannot be negative"
    if ch == ":":
        return reason + "; did you mean ':='?"
    if ch == "{":
        return "unterminated '{' in a path type; write {uri}name"
    return reason


def scan(text: str, *, context: str = "") -> Iterator[Token]:
    """Yield the tokens of ``text`` lazily, ending with EOF, so errors come in text order.

    Raises:
        ExpressionSyntaxError: at an unexpected character or an unterminated string.
    """
    lines = LineIndex(text)
    fail = _Fail(text, lines, context)
    bad = _SURROGATE.search(text)
    if bad is not None:  # what was read cannot be written back (issue 16)
        fail(f"the text holds the lone surrogate \\u{ord(bad.group()):04x}, which is not a "
             "character (bytes that were not UTF-8, read with surrogateescape?)", bad.start())
    pos, depth, n = 0, 0, len(text)
    last_kind: TokenType | None = None
    last_text = ""
    # Tokens come in text order, so their line is found by walking the line starts forward
    # (no search per token: a file of 10,000 definitions has 190,000 tokens). ``line_end`` is
    # where the line of the last token ends (the next line's start).
    starts = lines.starts
    count = len(starts)
    k = 0
    line_start, line_end = 0, starts[1] if count > 1 else n + 1
    space = _SPACE.match
    line_break = _LINE_BREAK.match
    path = _PATH.match
    ncname = _NCNAME_RE.fullmatch
    number = _NUMBER.match
    single = _SINGLE
    name_start = _NAME_START.match
    kind: TokenType
    while pos < n:
        ch = text[pos]
        start = pos
        # One branch per kind of token; each sets kind, value and pos (the token's end), or
        # continues for what is no token. The branches test disjoint first characters.
        if ch == " " or ch == "\t":  # the common white space, skipped as a run
            pos = space(text, pos).end()  # type: ignore[union-attr]  # matches at a space
            continue
        if (punct := single.get(ch)) is not None:  # ( ) [ ] , & | ; % =
            kind = punct
            if kind in _OPENERS:
                depth += 1
            elif kind in _CLOSERS and depth:
                depth -= 1
            value = ch
            pos += 1
        elif ch in _PATH_START:
            m = path(text, pos)
            if m is None:
                fail(_unexpected(text, pos), pos)
            value = m.group()
            kind = _NAME if ncname(value) else _PATH_KIND
            pos = m.end()
        elif ch == "*":
            if text.startswith("/", pos + 1):  # a path type such as */price
                m = path(text, pos)
                assert m is not None  # "*/" always starts one
                kind, value, pos = _PATH_KIND, m.group(), m.end()
            else:
                kind, value, pos = TokenType.STAR, ch, pos + 1
        elif ch == ":" and text.startswith("=", pos + 1):
            kind, value, pos = TokenType.ASSIGN, ":=", pos + 2
        elif ch in _BREAK_CHARS:
            brk = line_break(text, pos)
            assert brk is not None  # ch is a line break
            pos = brk.end()
            if (depth or last_kind is None or last_kind in _CONTINUES
                    or (last_kind is _NAME and last_text == "with")):
                continue
            kind, value = TokenType.NEWLINE, brk.group()
        elif ch.isspace():
            pos += 1
            continue
        elif ch == "#":
            brk = _LINE_BREAK.search(text, pos)
            pos = brk.start() if brk is not None else n
            continue
        elif ch == '"' or ch == "'":
            value, pos = _read_string(text, pos, fail)
            kind = TokenType.STRING
        elif ch.isdigit() and (m := number(text, pos)) is not None:
            kind, value, pos = TokenType.NUMBER, m.group(), m.end()
        elif ch > "\x7f" and name_start(ch):  # a name that starts with a letter beyond ASCII
            m = path(text, pos)
            if m is None:
                fail(_unexpected(text, pos), pos)
            value = m.group()
            kind = _NAME if ncname(value) else _PATH_KIND
            pos = m.end()
        else:
            fail(_unexpected(text, pos), pos)
        if start >= line_end:
            while k + 1 < count and starts[k + 1] <= start:
                k += 1
            line_start = starts[k]
            line_end = starts[k + 1] if k + 1 < count else n + 1
        last_kind, last_text = kind, value
        yield Token(kind, value, k + 1, start - line_start + 1, start, pos)
    while k + 1 < count and starts[k + 1] <= n:
        k += 1
    yield Token(TokenType.EOF, "", k + 1, n - starts[k] + 1, n, n)


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens, ending with an EOF token.

    NEWLINE tokens separate definitions: they are left out inside brackets, after a binary
    operator, ``:=``, ``,``, ``=`` or ``with``, and runs of them collapse into one.

    Raises:
        ExpressionSyntaxError: at an unexpected character or an unterminated string.

    >>> [(t.kind.name, t.text) for t in tokenize("ins(a/b)")]
    [('NAME', 'ins'), ('LPAREN', '('), ('PATH', 'a/b'), ('RPAREN', ')'), ('EOF', '')]
    """
    return list(scan(text))
