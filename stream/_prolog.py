"""Entity declarations found where they are declarations: in a DOCTYPE's internal subset
(issue 33, item 3; DESIGN section 8: a DTD that declares entities is refused before the
root element is read).

The drivers used to look for the bytes ``<!ENTITY`` anywhere in the first chunks, so that
the text in a comment or a CDATA section was refused as a declaration, and the same text
after the first 64 KiB was not (the search stopped at a chunk boundary). :class:`Prolog`
reads the prolog as XML 1.0 lays it out (section 2.8: comments, processing instructions,
the document type declaration with its quoted identifiers, and in its internal subset the
markup declarations with their quoted literals) one chunk at a time, keeping the state
across chunks and the few characters of a token a chunk cut in two, and stops at the root
element's start tag. Only ``<!ENTITY`` in the internal subset, outside comments, PIs and
literals, is a declaration; it is refused with its line and column.

The bytes are decoded as XML's appendix F detects the encoding without a declaration: a
byte order mark, UTF-16 or UTF-32 either way round by the zeros around ``<``, EBCDIC by
``<?xm``; anything else is ASCII-compatible and read as UTF-8 with replacement (the markup
characters are ASCII in every such encoding, and columns count characters in UTF-8).
"""

from __future__ import annotations

import codecs
import re

from xmlevents._foundation.xml import ENTITIES_REFUSED

from ._errors import DocumentError

__all__ = ["Prolog"]

# (first bytes, codec): XML 1.0 appendix F, longest patterns first
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\x00<", "utf-32-be"), (b"<\x00\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xfe\xff", "utf-16"), (b"\xff\xfe", "utf-16"),
    (b"\x00<", "utf-16-be"), (b"<\x00", "utf-16-le"), (b"\x4c\x6f\xa7\x94", "cp037"),
)

_PROLOG, _PI, _COMMENT, _DOCTYPE, _SUBSET, _DECL, _QUOTE, _DONE = range(8)
_IN_DOCTYPE = re.compile(r"[\[>\"']")  # the subset opens, the declaration ends, or a literal
_IN_DECL = re.compile(r"[>\"']")
_IN_SUBSET = re.compile(r"[<\]]")
# what may follow "<!" and is worth waiting for when a chunk ends inside it
_TOKENS = ("<!--", "<!DOCTYPE", "<!ENTITY")


class Prolog:
    """The prolog of one document, fed chunk by chunk until :attr:`done` (the root element's
    start tag is reached).

    Raises (from :meth:`feed`):
        DocumentError: an entity declaration in the internal subset, with line and column.

    >>> p = Prolog()
    >>> p.feed(b"<!-- <!ENTITY no> --><!DOCTYPE r [<!-- <!ENTITY no> -->")
    >>> p.feed(b'<!ATTLIST r a CDATA "<!ENTITY no>">\\n <!ENTI')
    >>> try:
    ...     p.feed(b'TY e "x">]><r/>')
    ... except DocumentError as refused:
    ...     print(refused.line, refused.column)
    2 2
    """

    def __init__(self) -> None:
        self.done = False
        self._head = b""
        self._decoder: codecs.IncrementalDecoder | None = None
        self._buf = ""
        self._state = _PROLOG
        self._back = _PROLOG  # where a comment, PI or literal returns to
        self._quote = ""
        self._line = 1  # of the buffer's first character
        self._col = 1

    def feed(self, chunk: bytes, final: bool = False) -> None:
        """Read the next chunk (``final``: the input ends after it)."""
        if self.done:
            return
        if self._decoder is None:
            self._head += chunk
            if len(self._head) < 4 and not final:
                return
            chunk, self._head = self._head, b""
            codec = next((c for sig, c in _SIGNATURES if chunk.startswith(sig)), "utf-8")
            self._decoder = codecs.getincrementaldecoder(codec)(errors="replace")
        self._buf += self._decoder.decode(chunk, final)
        self._scan(final)

    def _scan(self, final: bool) -> None:
        buf = self._buf
        n = len(buf)
        i = 0
        keep = n  # the index from which the buffer is kept for the next chunk
        while i < n:
            state = self._state
            if state in (_PROLOG, _SUBSET):
                if state == _PROLOG:
                    j = buf.find("<", i)
                else:
                    m = _IN_SUBSET.search(buf, i)
                    j = -1 if m is None else m.start()
                if j < 0:
                    break
                if buf[j] == "]":  # the internal subset ends; the declaration's ">" follows
                    self._state = _DOCTYPE
                    i = j + 1
                    continue
                if j + 1 >= n:
                    keep = j if not final else n
                    break
                nxt = buf[j + 1]
                if nxt == "?":
                    self._state, self._back, i = _PI, state, j + 2
                    continue
                if nxt != "!":
                    if state == _PROLOG:  # the root element's start tag
                        self._state = _DONE
                        self.done = True
                        break
                    self._state, i = _DECL, j + 1  # malformed: libxml2 says where
                    continue
                if buf.startswith("<!--", j):
                    self._state, self._back, i = _COMMENT, state, j + 4
                    continue
                if buf.startswith("<!ENTITY", j):
                    line, col = self._where(buf, j)
                    raise DocumentError(ENTITIES_REFUSED, line=line, column=col)
                if state == _PROLOG and buf.startswith("<!DOCTYPE", j):
                    self._state, i = _DOCTYPE, j + 9
                    continue
                if not final and any(t.startswith(buf[j:]) for t in _TOKENS):
                    keep = j  # a token cut by the chunk's end: wait for the rest
                    break
                if state == _PROLOG:  # "<![CDATA[" before the root: malformed
                    self._state = _DONE
                    self.done = True
                    break
                self._state, i = _DECL, j + 2
            elif state in (_PI, _COMMENT):
                end = "?>" if state == _PI else "-->"
                k = buf.find(end, i)
                if k < 0:
                    keep = max(i, n - len(end) + 1)
                    break
                self._state, i = self._back, k + len(end)
            elif state in (_DOCTYPE, _DECL):
                m = (_IN_DOCTYPE if state == _DOCTYPE else _IN_DECL).search(buf, i)
                if m is None:
                    break
                c = m.group()
                i = m.end()
                if c == "[":
                    self._state = _SUBSET
                elif c == ">":
                    self._state = _PROLOG if state == _DOCTYPE else _SUBSET
                else:
                    self._state, self._back, self._quote = _QUOTE, state, c
            elif state == _QUOTE:
                k = buf.find(self._quote, i)
                if k < 0:
                    break
                self._state, i = self._back, k + 1
            else:  # pragma: no cover - _DONE returns above
                break
        if self.done:
            self._buf = ""
            return
        self._line, self._col = self._where(buf, keep)
        self._buf = buf[keep:]

    def _where(self, buf: str, at: int) -> tuple[int, int]:
        """The line and column of ``buf[at]``."""
        newlines = buf.count("\n", 0, at)
        if not newlines:
            return self._line, self._col + at
        return self._line + newlines, at - buf.rfind("\n", 0, at)
