"""Drivers: lxml's parser over bytes, files and paths, hardened; and iterables of start/end
events (a watched document, a replayed history).

The automaton (:mod:`._poa`) consumes start and end events and knows nothing of lxml; this
module owns the parser (house style: "the driver owns the parser and frees elements").
Queries use :func:`feed_document`: ``XMLParser`` with a parser target whose ``start`` and
``end`` are the run's own handlers, so that libxml2's SAX callbacks reach the run with no
layer, element proxy or tree in between, and there is nothing to free. :func:`xml_events`,
the ``iterparse`` driver that clears each element at its end tag and removes it once its
following sibling has ended, stays for callers that want the elements.

Hardening (DESIGN section 8), the project's one policy (:mod:`xmlevents._foundation.xml`):
entities are not resolved, the network is off, no DTD is loaded,
and a DTD that declares entities is refused before the root element is read (entity bombs,
external entities): :class:`._prolog.Prolog` reads the prolog ahead of libxml2, chunk by
chunk, and refuses a declaration in the internal subset with its line and column (text in
a comment or a CDATA section is no declaration, issue 33). ``huge_tree`` stays off, which
keeps libxml2's limits on entity amplification; text reaches the run only for the queries
whose answer depends on text nodes (``Grammar.texts``), and then as one call per piece
libxml2 reads, so a text node of any size is read in constant memory; the nesting limit of
libxml2's tree builder (256 levels) is kept by the run: memory follows the depth and the
candidates held.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from lxml import etree

from xmlevents._foundation.collector import collector_paused
from xmlevents._foundation.xml import ENTITIES_REFUSED, declares_entities
from xmlevents._foundation.xml import OPTIONS as POLICY
from xmlevents._foundation.xml import parser as hardened_parser

from ._errors import DocumentError
from ._grammar import TEXT
from ._poa import TooDeep
from ._prolog import Prolog

__all__ = ["CHUNK", "MAX_DEPTH", "chunks_of", "feed_document", "xml_events", "plain_events",
           "is_event_source", "document_attributes"]

CHUNK = 1 << 16
#: libxml2's nesting limit without ``huge_tree`` (its tree builder's), kept by the target driver
MAX_DEPTH = 256


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


# The project's one hardened policy (xmlevents._foundation.xml: no entities, DTD or network,
# huge_tree off), and what the run does not need (comments, PIs, ids).
_OPTIONS: dict[str, Any] = dict(
    events=("start", "end"), **POLICY, remove_comments=True, remove_pis=True,
    collect_ids=False)

class _Reader:
    """The chunks as a file for ``iterparse``, reading the prolog for entity declarations
    before libxml2 does (refused before it expands anything)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._prolog = Prolog()
        self.rooted = False

    def read(self, size: int = -1) -> bytes:
        chunk = next(self._chunks, b"")
        if not self._prolog.done:
            self._prolog.feed(chunk, final=not chunk)
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


_TARGET_OPTIONS = {k: v for k, v in _OPTIONS.items() if k != "events" and k not in POLICY}


class _Target:
    """A parser target made of a run's two event handlers. lxml calls ``start(tag,
    attributes)`` and ``end(tag)`` straight from libxml2's SAX callbacks; the target has no
    ``data``, ``comment`` or ``pi``, so text, comments and processing instructions never reach
    Python and no tree is built: nothing needs freeing, and memory follows the depth and the
    candidates held."""

    __slots__ = ("end", "start")

    def __init__(self, start: Callable[..., None], end: Callable[..., None]) -> None:
        self.start = start
        self.end = end

    def close(self) -> None:
        return None


class _TextTarget(_Target):
    """A parser target that also passes on character data, comments and processing
    instructions, to the run's text handler (issue 33): for the queries whose answer depends
    on text nodes (``Grammar.texts``). One Python call per piece of text; the others keep
    text out of Python altogether."""

    __slots__ = ("comment", "data", "pi")

    def __init__(self, start: Callable[..., None], end: Callable[..., None],
                 text: Callable[..., None]) -> None:
        super().__init__(start, end)
        self.data = text
        self.comment = text
        self.pi = text


def feed_document(chunks: Iterable[bytes], start: Callable[..., None],
                  end: Callable[..., None],
                  reread: Callable[[], Iterable[bytes]] | None = None,
                  text: Callable[..., None] | None = None) -> Iterator[None]:
    """Parse the chunks with lxml's ``XMLParser`` and a target that calls ``start(name,
    attributes)`` and ``end(name)`` for each element: the fast driver (a Python call per event
    from libxml2's SAX callbacks, where ``iterparse`` makes an element proxy and an event
    tuple and builds a tree that has to be freed again). Yields after each chunk, so that the
    caller can hand out what the events decided. With ``text``, character data, comments and
    processing instructions are passed to it too (``text(*pieces)``). Each chunk is read by
    :class:`._prolog.Prolog` before libxml2 reads it, until the root element's start tag.

    Hardening as :func:`xml_events`; the two limits of libxml2's tree builder are kept here
    as they were: nesting deeper than :data:`MAX_DEPTH` is refused (``start`` raises
    :class:`TooDeep`; with ``reread``, the input is parsed again up to libxml2's own error, to
    say where), and without ``text`` no text is passed to Python at all.

    Raises:
        DocumentError: malformed XML (line and column), a DTD declaring entities, nesting
            too deep; after every event before the error has been given.
    """
    # lxml's ParserTarget, duck-typed
    target: Any = _Target(start, end) if text is None else _TextTarget(start, end, text)
    options = _TARGET_OPTIONS if text is None else \
        {**_TARGET_OPTIONS, "remove_comments": False, "remove_pis": False}
    parser = hardened_parser(target=target, **options)
    prolog = Prolog()
    fed = False
    try:
        for chunk in chunks:
            fed = True
            if not prolog.done:
                # entity declarations come before the root element: look for them in the
                # prolog before libxml2 reads it
                prolog.feed(chunk)
            _feed(parser, chunk)
            yield
        if not fed:  # an empty file: libxml2 says so, at line 1, column 1
            _feed(parser, b"")
        _feed(parser, None)
    except etree.XMLSyntaxError as exc:
        raise _syntax(exc) from None
    except TooDeep as exc:
        raise _too_deep(exc, reread) from None
    yield


def _feed(parser: Any, chunk: bytes | None) -> None:
    """``parser.feed(chunk)`` (``close()`` for None) with the cyclic garbage collector paused.
    The run allocates a tuple per element and a few objects per match, which start a
    collection of the youngest generation every 700 allocations: a tenth of the time of a
    query with many matches, for nothing, since the run makes no reference cycles (its
    objects are freed by reference counting). Only the handlers run meanwhile; the collector
    is on again before anything else does."""
    with collector_paused():
        if chunk is None:
            parser.close()
        else:
            parser.feed(chunk)


def document_attributes(attrs: Any) -> dict[str, str]:
    """The attributes a parser target is given, decoded as lxml's tree gives them (issue 33).

    With entities not resolved, libxml2 hands a SAX handler every ``&`` of an attribute value
    as the character reference ``&#38;`` (so that a serialiser could write the value back),
    whether the document wrote ``&amp;``, ``&#38;`` or ``&#x26;``; every other reference is
    already replaced. Every ``&`` the target sees therefore begins ``&#38;``, and replacing
    that text gives the value exactly (``tests/stream/test_errors.py`` compares with lxml's
    tree on random values).

    >>> document_attributes({"a": "x&#38;y", "c": "&#38;&#38;#38;"})
    {'a': 'x&y', 'c': '&&#38;'}
    """
    if not attrs:
        return {}
    for v in attrs.values():
        if "&" in v:
            return {k: v.replace("&#38;", "&") if "&" in v else v for k, v in attrs.items()}
    # lxml gives a target a new dict per start tag: kept as it is, the usual case
    return attrs  # type: ignore[no-any-return]


def _too_deep(exc: TooDeep, reread: Callable[[], Iterable[bytes]] | None) -> DocumentError:
    """The error libxml2's tree builder gives for this nesting, with its line and column
    (found by parsing the input again up to it), or without them for a stream."""
    if reread is not None:
        try:
            for _ in xml_events(reread()):
                pass
        except DocumentError as found:
            return found
    return DocumentError(f"not well-formed XML: Excessive depth in document: {exc.args[0]} "
                         f"levels, over {MAX_DEPTH} (huge_tree stays off)")


_ENTITIES = ENTITIES_REFUSED


def _check_dtd(el: Any) -> None:
    if declares_entities(el.getroottree()):
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
    ``("text"[, data])`` (and ``"comment"``/``"pi"``, as ``iterparse`` gives them when asked
    for) is a text node of XPath's data model (issue 33), passed on as
    ``("text", "", None)`` (outside the root element, a sibling of the root).

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
            if name == TEXT:
                raise DocumentError(f"event {count + 1}: {TEXT!r} is not an element name "
                                    "(a text node is the event (\"text\", data))")
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
        elif kind in ("text", "comment", "pi"):
            count += 1
            yield "text", "", None
        else:
            raise DocumentError(f"event {count + 1}: unknown event {kind!r} (start or end)")
    if open_names:
        raise DocumentError(f"the events end inside element {open_names[-1]!r}")
    if not roots:
        raise DocumentError("no element: the events are empty")
