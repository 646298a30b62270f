"""Drivers: lxml's iterparse over bytes, files and paths, hardened and freeing what it has
read; and iterables of start/end events (a watched document, a replayed history).

The automaton (:mod:`._poa`) consumes start and end events and knows nothing of lxml; this
module owns the parser (house style: "the driver owns iterparse and frees elements").

Hardening (DESIGN section 8): entities are not resolved, the network is off, no DTD is loaded,
and a DTD that declares entities is refused before the root element is read (entity bombs,
external entities). ``huge_tree`` stays off on purpose: libxml2 then refuses a text node over
10 MB and keeps its limits on entity amplification, so one text node cannot hold more than
that; text is never kept by the run, and every element is cleared at its end tag and removed
once its following sibling has ended, so memory follows the depth and the candidates held.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import IO, Any

from lxml import etree

from ._errors import DocumentError

__all__ = ["CHUNK", "chunks_of", "xml_events", "plain_events", "is_event_source"]

CHUNK = 1 << 16


def chunks_of(source: object) -> Iterator[bytes] | None:
    """The bytes of a path, bytes or binary file object, in chunks; None for anything else."""
    if isinstance(source, str) and source.lstrip().startswith("<"):
        raise DocumentError("source: a str is a path, and this one looks like XML text; pass "
                            "the document as bytes (text.encode())")
    if isinstance(source, str | os.PathLike):
        return _file_chunks(os.fspath(source))
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        return (data[i:i + CHUNK] for i in range(0, max(len(data), 1), CHUNK))
    read = getattr(source, "read", None)
    if callable(read):
        return _stream_chunks(source)  # type: ignore[arg-type]
    return None


def _file_chunks(path: str) -> Iterator[bytes]:
    with open(path, "rb") as f:
        yield from _stream_chunks(f)


def _stream_chunks(f: IO[bytes]) -> Iterator[bytes]:
    while True:
        data = f.read(CHUNK)
        if not data:
            return
        if isinstance(data, str):
            raise DocumentError("the file object gives text; open it in binary mode ('rb')")
        yield data


_OPTIONS: dict[str, Any] = dict(
    events=("start", "end"), resolve_entities=False, no_network=True, load_dtd=False,
    dtd_validation=False, huge_tree=False, remove_comments=True, remove_pis=True,
    collect_ids=False)

_ENTITY = b"<!ENTITY"


class _Reader:
    """The chunks as a file for ``iterparse``, looking for entity declarations in what comes
    before the root element (refused before libxml2 expands anything)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._tail = b""
        self.rooted = False

    def read(self, size: int = -1) -> bytes:
        chunk = next(self._chunks, b"")
        if not self.rooted and chunk:
            seen = self._tail + chunk
            if _ENTITY in seen:
                raise DocumentError(_ENTITIES)
            self._tail = seen[-len(_ENTITY):]
        return chunk


def xml_events(chunks: Iterable[bytes]) -> Iterator[tuple[str, Any]]:
    """``("start", element)`` and ``("end", element)`` from lxml's ``iterparse``; each
    element is freed (cleared, its preceding siblings removed) when the consumer asks for the
    event after its end tag, having read what it needs.

    Raises:
        DocumentError: malformed XML (line and column), a DTD declaring entities; after every
            event before the error has been given.
    """
    reader = _Reader(chunks)
    try:
        for event, el in etree.iterparse(reader, **_OPTIONS):
            if event == "start":
                if not reader.rooted:
                    reader.rooted = True
                    _check_dtd(el)
                yield event, el
            else:
                yield event, el
                el.clear(keep_tail=False)
                parent = el.getparent()
                if parent is not None:
                    while el.getprevious() is not None:
                        del parent[0]
    except etree.XMLSyntaxError as exc:
        raise _syntax(exc) from None


_ENTITIES = ("the document's DTD declares entities, which are refused (entity expansion "
             "bombs, external entities)")


def _check_dtd(el: Any) -> None:
    dtd = el.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise DocumentError(_ENTITIES, line=el.sourceline)


def _syntax(exc: etree.XMLSyntaxError) -> DocumentError:
    line, column = exc.position if exc.position else (exc.lineno, 0)
    msg = exc.msg or str(exc)
    # lxml appends "(<string>, line n)" or "line n, column m"; the fields say where
    for tail in (f", line {line}, column {column}", " (<string>, line"):
        cut = msg.find(tail)
        if cut > 0:
            msg = msg[:cut]
    if "Attempt to load network entity" in msg:  # pragma: no cover - libxml2 versions
        msg += " (the network is off: a DTD or entity by URL is not fetched)"
    if "huge text node" in msg or "Text node too long" in msg:
        msg += " (text nodes over 10 MB are refused: huge_tree stays off)"
    return DocumentError(f"not well-formed XML: {msg}", line=line, column=column)


def is_event_source(source: object) -> bool:
    """Whether ``source`` is an iterable of events rather than a document."""
    return not isinstance(source, str | bytes | bytearray | memoryview | os.PathLike) and \
        not callable(getattr(source, "read", None)) and isinstance(source, Iterable)


def plain_events(events: Iterable[Any]) -> Iterator[tuple[str, str, Any]]:
    """Normalise start/end events: ``("start", name[, attributes])``, ``("end"[, name])``,
    or ``(event, element)`` pairs as ``iterparse`` gives them; checks that they nest.

    Raises:
        DocumentError: an end without a start, an end naming another element, a second
            root, an unknown event or input ending inside an element.
    """
    open_names: list[str] = []
    roots = 0
    count = 0
    for item in events:
        try:
            kind = item[0]
            rest = item[1:]
        except (TypeError, IndexError, KeyError):
            raise DocumentError(f"event {count + 1}: expected a tuple (\"start\", name) or "
                                f"(\"end\",), found {item!r}") from None
        if kind == "start":
            if not rest:
                raise DocumentError(f"event {count + 1}: a start event needs a name")
            first = rest[0]
            attrs: Any
            if isinstance(first, str):
                name, attrs = first, rest[1] if len(rest) > 1 else None
            else:
                tag = getattr(first, "tag", None)
                if not isinstance(tag, str):
                    raise DocumentError(f"event {count + 1}: {first!r} is not an element")
                name, attrs = tag, getattr(first, "attrib", None)
            if not open_names:
                roots += 1
                if roots > 1:
                    raise DocumentError(f"event {count + 1}: a second root element {name!r}"
                                        " (a document has one)")
            open_names.append(name)
            count += 1
            yield "start", name, attrs
        elif kind == "end":
            if not open_names:
                raise DocumentError(f"event {count + 1}: an end event with no open element")
            name = open_names.pop()
            if rest:
                given = rest[0] if isinstance(rest[0], str) else getattr(rest[0], "tag", None)
                if given is not None and given != name:
                    raise DocumentError(f"event {count + 1}: end of {given!r} while "
                                        f"{name!r} is open")
            count += 1
            yield "end", name, None
        else:
            raise DocumentError(f"event {count + 1}: unknown event {kind!r} (start or end)")
    if open_names:
        raise DocumentError(f"the events end inside element {open_names[-1]!r}")
    if not roots:
        raise DocumentError("no element: the events are empty")
