"""Split rule text into tokens with line, column and offsets (seed 002, section 2).

The rule language is free-form: line breaks are spaces, ``#`` starts a comment to the end of
the line, rules begin with ``rule`` and actions are separated by ``;``. Names are QNames
(``product``, ``p:product``); ``$name`` is one VAR token; strings are quoted with ``'`` or
``"``, a doubled quote standing for itself inside (``'it''s'``, as in XPath 2.0, since XPath
1.0 has no escapes). Keywords are ordinary NAME tokens: the parser recognises them where it
expects them, in any case, so an element may be called ``rule`` or ``TRUE``.

Element constructors are not tokenized here: their inside is XML, not XPath. The parser reads
them with :mod:`._constructors`, which moves :attr:`Lexer.pos` itself; tokens are made
lazily, one at a time, so that switching between the two readers is exact.
"""

from __future__ import annotations

import enum
import re
from typing import NoReturn

from xmlevents._foundation.names import NCNAME
from xmlevents._foundation.text import LINE_BREAK, LineIndex, Token, unexpected

from ._errors import RuleSyntaxError

__all__ = ["TokenType", "Token", "Lexer", "LineIndex", "tokenize", "is_keyword"]


class TokenType(enum.Enum):
    """The kinds of token; punctuation kinds have their text as value."""

    NAME = "name"
    VAR = "variable"
    STRING = "string"
    NUMBER = "number"
    DSLASH = "//"
    SLASH = "/"
    DOTDOT = ".."
    DOT = "."
    AT = "@"
    STAR = "*"
    LBRACK = "["
    RBRACK = "]"
    LPAREN = "("
    RPAREN = ")"
    LBRACE = "{"
    RBRACE = "}"
    COMMA = ","
    SEMI = ";"
    AXIS = "::"
    COLON = ":"
    NE = "!="
    LE = "<="
    GE = ">="
    EQ = "="
    LT = "<"
    GT = ">"
    PIPE = "|"
    PLUS = "+"
    MINUS = "-"
    EOF = "end of input"


def is_keyword(token: Token, word: str) -> bool:
    """Whether ``token`` is the keyword ``word`` (keywords are case-insensitive)."""
    return token.kind is TokenType.NAME and token.text.lower() == word


# The line breaks of str.splitlines, with "\r\n" as one, so lines agree with the snippet.
_LINE_BREAK = LINE_BREAK
_SPACE = re.compile(r"\s+")
#: A QName; a ':' followed by another ':' is an axis, not a prefix.
_QNAME = re.compile(f"{NCNAME}(?::(?!:){NCNAME})?")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
_PUNCT = sorted((t for t in TokenType if not t.value.isalpha() and t.value != "end of input"),
                key=lambda t: -len(t.value))


class Lexer:
    """Reads tokens from ``text`` one at a time, from :attr:`pos` on.

    Raises:
        RuleSyntaxError: at an unexpected character or an unterminated string.
    """

    def __init__(self, text: str, context: str = "") -> None:
        self.text = text
        self.context = context
        self.lines = LineIndex(text)
        self.pos = 0

    def fail(self, reason: str, offset: int) -> NoReturn:
        """Raise a :class:`RuleSyntaxError` at ``offset``."""
        line, col = self.lines.at(offset)
        raise RuleSyntaxError(reason, text=self.text, line=line, column=col, context=self.context)

    def make(self, kind: TokenType, value: str, start: int, end: int) -> Token:
        line, col = self.lines.at(start)
        return Token(kind, value, line, col, start, end)

    def skip_space(self) -> None:
        """Skip white space and ``#`` comments."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            m = _SPACE.match(text, self.pos)
            if m is not None:
                self.pos = m.end()
            elif text[self.pos] == "#":
                brk = _LINE_BREAK.search(text, self.pos)
                self.pos = brk.start() if brk is not None else n
            else:
                return

    def token(self) -> Token:
        """The next token, moving :attr:`pos` past it (EOF at the end, again and again)."""
        self.skip_space()
        text, start = self.text, self.pos
        if start >= len(text):
            return self.make(TokenType.EOF, "", start, start)
        ch = text[start]
        if ch in "'\"":
            value, end = self._string(start)
        elif ch == "$":
            m = _QNAME.match(text, start + 1)
            if m is None:
                found = repr(text[start + 1]) if start + 1 < len(text) else "end of input"
                self.fail(unexpected(found, "a variable name after '$', as in $delta"),
                          start + 1)
            self.pos = m.end()
            return self.make(TokenType.VAR, m.group(), start, m.end())
        elif (m := _NUMBER.match(text, start)) is not None:
            self.pos = m.end()
            return self.make(TokenType.NUMBER, m.group(), start, m.end())
        elif (m := _QNAME.match(text, start)) is not None:
            self.pos = m.end()
            return self.make(TokenType.NAME, m.group(), start, m.end())
        else:
            kind = next((t for t in _PUNCT if text.startswith(t.value, start)), None)
            if kind is None:
                self.fail(_unexpected(ch), start)
            self.pos = start + len(kind.value)
            return self.make(kind, kind.value, start, self.pos)
        self.pos = end
        return self.make(TokenType.STRING, value, start, end)

    def _string(self, start: int) -> tuple[str, int]:
        """Decode the literal opening at ``start``; a doubled quote stands for one."""
        quote = self.text[start]
        out: list[str] = []
        i = start + 1
        while True:
            close = self.text.find(quote, i)
            if close < 0:
                self.fail(f"unterminated string; close it with {quote}", start)
            out.append(self.text[i:close])
            if self.text.startswith(quote, close + 1):
                out.append(quote)
                i = close + 2
                continue
            return "".join(out), close + 1


def _unexpected(ch: str) -> str:
    if ch == "!":
        return "unexpected character '!'; the comparison is written !="
    if ch == "&":
        return "unexpected character '&'; join conditions with and"
    return f"unexpected character {ch!r}"


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens, ending with an EOF token (constructors are not read here).

    Raises:
        RuleSyntaxError: at an unexpected character or an unterminated string.

    >>> [t.kind.name for t in tokenize("$delta/../@id")]
    ['VAR', 'SLASH', 'DOTDOT', 'SLASH', 'AT', 'NAME', 'EOF']
    """
    lexer = Lexer(text)
    tokens = [lexer.token()]
    while tokens[-1].kind is not TokenType.EOF:
        tokens.append(lexer.token())
    return tokens
