"""Read simple XQuery element constructors (seed 002, section 2.5) from rule text.

The paper's grammar, with the ``=`` of ``a`` that the extracted text lost restored::

    c  ::= '<' n a ('/>' | ('>' t* '</' n '>'))
    a  ::= (n '=' '"' (s | e') '"' a)?
    t  ::= s | c | e'
    e' ::= '{' e '}'

An attribute value is a string *or* one enclosed expression, never both; either quote may
delimit it (the paper writes ``id='{$delta/../@id}'``). Inside an enclosed expression the
text is a simple XPath again, read by the parser (``enclosed``). As in XQuery: ``{{`` and
``}}`` stand for braces, a doubled delimiter for itself inside an attribute value, the five
predefined entities and character references are decoded, attribute values have their white
space characters normalised to spaces, and *boundary whitespace* — content made only of
literal white space between two tags or enclosed expressions — is dropped (a character
reference such as ``&#32;`` keeps it). Comments, processing instructions, CDATA sections and
namespace declarations are outside the fragment.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import NoReturn

from xmlevents._foundation.text import unexpected

from . import ast
from ._tokens import Lexer

__all__ = ["read_element"]

#: Reads the simple XPath after a ``{`` at the offset given; returns it and the offset
#: after the closing ``}``.
Enclosed = Callable[[int], tuple[ast.Path, int]]
#: Enters one more level of nesting (refused past the parser's limit) at an offset.
Nested = Callable[[int], AbstractContextManager[None]]

_QNAME = re.compile(ast.QNAME)
_SPACE = re.compile(r"[ \t\r\n]*")
_CONTENT_RUN = re.compile(r"[^<{}&]+")
_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_REFERENCE = re.compile(r"&(?:#([0-9]+)|#x([0-9a-fA-F]+)|([A-Za-z][A-Za-z0-9]*));")
_ALLOWED = "a string, an element constructor <name .../> or an enclosed expression {e}"


class _Reader:
    def __init__(self, lexer: Lexer, enclosed: Enclosed, nested: Nested) -> None:
        self.lexer, self.text = lexer, lexer.text
        self.enclosed, self.nested = enclosed, nested

    def fail(self, reason: str, offset: int) -> NoReturn:
        self.lexer.fail(reason, offset)

    def reference(self, i: int) -> tuple[str, int]:
        """Decode the entity or character reference at ``i``."""
        m = _REFERENCE.match(self.text, i)
        if m is None:
            self.fail("a lone '&'; write &amp; for the character (or &lt;, &gt;, &quot;, "
                      "&apos;, &#N;)", i)
        decimal, hexa, name = m.groups()
        if name is not None:
            if name not in _ENTITIES:
                self.fail(f"unknown entity &{name};; XQuery knows &lt;, &gt;, &amp;, &quot; and "
                          "&apos; (or write &#N;)", i)
            return _ENTITIES[name], m.end()
        code = int(decimal) if decimal is not None else int(hexa, 16)
        char = chr(code) if code <= 0x10FFFF else ""
        if not char or not _xml_char(char):
            self.fail(f"character reference {m.group()} is not a character XML allows", i)
        return char, m.end()

    def element(self, start: int) -> tuple[ast.Element, int]:
        """The constructor whose ``<`` is at ``start``; returns it and the offset after it."""
        text = self.text
        i = start + 1
        for opener, what in (("!--", "comments"), ("?", "processing instructions"),
                             ("![CDATA[", "CDATA sections")):
            if text.startswith(opener, i):
                self.fail(f"{what} are outside simple XQuery: content is {_ALLOWED} "
                          "(section 2.5)", start)
        m = _QNAME.match(text, i)
        if m is None:
            self.fail("expected an element name after '<', as in <store id='{$delta/@id}'/>",
                      i)
        name = m.group()
        i = m.end()
        attributes: list[ast.Attribute] = []
        seen: set[str] = set()
        while True:
            j = _SPACE.match(text, i).end()  # type: ignore[union-attr]  # matches ""
            if text.startswith("/>", j):
                return self.build(name, attributes, [], start), j + 2
            if text.startswith(">", j):
                i = j + 1
                break
            m = _QNAME.match(text, j)
            if m is None or j == i:
                found = repr(text[j]) if j < len(text) else "end of input"
                self.fail(unexpected(found, f"an attribute name, '>' or '/>' in <{name}>"), j)
            attr = m.group()
            if attr == "xmlns" or attr.startswith("xmlns:"):
                self.fail(f"namespace declarations are outside simple XQuery; bind the prefix "
                          f"with namespaces={{...}} instead of {attr}=", j)
            if attr in seen:
                self.fail(f"attribute {attr!r} is given twice in <{name}>", j)
            seen.add(attr)
            k = _SPACE.match(text, m.end()).end()  # type: ignore[union-attr]  # matches ""
            if not text.startswith("=", k):
                self.fail(f"expected '=' after the attribute name {attr!r}", k)
            k = _SPACE.match(text, k + 1).end()  # type: ignore[union-attr]  # matches ""
            if k >= len(text) or text[k] not in "'\"":
                self.fail(f"expected a quoted value for attribute {attr!r}, as in "
                          f"{attr}='{{$delta/@id}}' or {attr}='s1'", k)
            value, i = self.attribute_value(k)
            try:
                attributes.append(ast.Attribute(attr, value, pos=self.lexer.lines.at(j)))
            except ValueError as exc:
                self.fail(str(exc), j)
        contents, i = self.contents(name, i, start)
        return self.build(name, attributes, contents, start), i

    def build(self, name: str, attributes: list[ast.Attribute],
              contents: list[ast.ElementContent], start: int) -> ast.Element:
        try:
            return ast.Element(name, tuple(attributes), tuple(contents),
                               pos=self.lexer.lines.at(start))
        except ValueError as exc:
            self.fail(str(exc), start)

    def attribute_value(self, start: int) -> tuple[str | ast.Path, int]:
        """The quoted value at ``start``: a string, or one enclosed expression."""
        text, quote = self.text, self.text[start]
        parts: list[str | ast.Path] = []
        chars: list[str] = []
        i = start + 1
        mixed = "an attribute value is a string or one enclosed expression {e}, not both " \
                "(simple XQuery, section 2.5)"
        while True:
            if i >= len(text):
                self.fail(f"unterminated attribute value; close it with {quote}", start)
            ch = text[i]
            if ch == quote and not text.startswith(quote * 2, i):
                break
            if ch == "{" and not text.startswith("{{", i):
                if chars or parts:
                    self.fail(mixed, i)
                path, i = self.enclosed(i + 1)
                parts.append(path)
                continue
            if parts:
                self.fail(mixed, i)
            if ch == quote:
                chars.append(quote)
                i += 2
            elif text.startswith("{{", i) or text.startswith("}}", i):
                chars.append(ch)
                i += 2
            elif ch == "}":
                self.fail("a lone '}' in an attribute value; write }} for the character", i)
            elif ch == "<":
                self.fail("'<' cannot occur in an attribute value; write &lt;", i)
            elif ch == "&":
                char, i = self.reference(i)
                chars.append(char)
            elif ch in "\t\n\r":
                # Attribute value normalisation: a line end (\r\n too) or tab is one space.
                chars.append(" ")
                i += 2 if text.startswith("\r\n", i) else 1
            else:
                chars.append(ch)
                i += 1
        if parts:
            return parts[0], i + 1
        return "".join(chars), i + 1

    def contents(self, name: str, i: int, start: int) -> tuple[list[ast.ElementContent], int]:
        """The contents after ``<name ...>`` up to and past ``</name>``."""
        text = self.text
        contents: list[ast.ElementContent] = []
        chunk: list[str] = []
        referenced = False  # a reference or brace makes the chunk more than boundary space

        def flush() -> None:
            nonlocal referenced
            value = "".join(chunk)
            if value and (referenced or value.strip(" \t\r\n")):
                contents.append(value)
            chunk.clear()
            referenced = False

        while True:
            if i >= len(text):
                line, col = self.lexer.lines.at(start)
                self.fail(f"<{name}> opened at line {line}, col {col} is not closed; end it "
                          f"with </{name}>", i)
            if text.startswith("</", i):
                flush()
                m = _QNAME.match(text, i + 2)
                if m is None or m.group() != name:
                    found = m.group() if m is not None else ""
                    self.fail(unexpected(f"'</{found}'", f"</{name}> to close <{name}>"), i)
                j = _SPACE.match(text, m.end()).end()  # type: ignore[union-attr]  # matches ""
                if not text.startswith(">", j):
                    self.fail(f"expected '>' to end </{name}", j)
                return contents, j + 1
            ch = text[i]
            if ch == "<":
                flush()
                with self.nested(i):
                    child, i = self.element(i)
                contents.append(child)
            elif text.startswith("{{", i) or text.startswith("}}", i):
                chunk.append(ch)
                referenced = True
                i += 2
            elif ch == "{":
                flush()
                path, i = self.enclosed(i + 1)
                contents.append(path)
            elif ch == "}":
                self.fail("a lone '}' in element content; write }} for the character", i)
            elif ch == "&":
                char, i = self.reference(i)
                chunk.append(char)
                referenced = True
            else:
                m = _CONTENT_RUN.match(text, i)
                assert m is not None  # ch is none of < { } &
                chunk.append(m.group())
                i = m.end()


def _xml_char(char: str) -> bool:
    code = ord(char)
    return (code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
            or 0x10000 <= code <= 0x10FFFF)


def read_element(lexer: Lexer, start: int, enclosed: Enclosed,
                 nested: Nested) -> tuple[ast.Element, int]:
    """Read the element constructor whose ``<`` is at offset ``start`` of ``lexer.text``.

    Returns the constructor and the offset just after it; the caller resumes tokenizing
    there.

    Raises:
        RuleSyntaxError: at the first malformed or out-of-fragment part.
    """
    return _Reader(lexer, enclosed, nested).element(start)
