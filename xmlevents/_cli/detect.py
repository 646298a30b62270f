"""``xmlevents detect``: composite events in a stream of primitive events (DESIGN section 6).

Read primitive events (JSON lines: ``-``, ``.gz`` or plain, :func:`~._common.open_input`), write
every composite event raised by the root of a defined tree (JSON lines) as it is found, close
the graph at the end. The reading loop is tuned (issue 13: detect at ~3.5x ``json.loads``):
lines are read in 64 KiB chunks, decoded a chunk at a time and split in C; the output is
collected and written before each read. This module imports the algebra and the standard
library only (tests/cli/test_cli_imports.py).
"""

from __future__ import annotations

import argparse
import functools
import io
import itertools
import json
import operator
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from xmlevents.algebra import (
    CompositeEvent,
    Context,
    EventFormatError,
    EventGraph,
    Op,
    PathType,
    XmlEventsError,
    namespace_hints,
    read_events,
)

from ._common import (
    Failure,
    Streams,
    add_namespace_option,
    input_name,
    open_input,
    parse_namespaces,
    window_argument,
)
from ._definitions import add_definition_options, definitions

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """``detect``'s parser."""
    detect = sub.add_parser(
        "detect", help="detect composite events in a stream of primitive events",
        description="Read primitive events (JSON lines), write every composite event raised "
                    "by the root of a defined tree (JSON lines), closing the graph at the end.")
    add_definition_options(detect)
    add_namespace_option(detect)
    detect.add_argument("events", nargs="?", default="-", metavar="EVENTS.jsonl",
                        help="the primitive events, one JSON object a line ('-' for stdin; "
                             "gzip-compressed if the name ends in .gz)")
    detect.add_argument("--context", choices=[c.value for c in Context], default="chronicle",
                        help="Snoop context of operators that set none (default: chronicle)")
    detect.add_argument("--hierarchical", action=argparse.BooleanOptionalAction, default=True,
                        help="group events by hierarchy (the hierarchical context; default on)")
    detect.add_argument("--semantics", choices=["interval", "detection"], default="interval",
                        help="time semantics of sequences (default: interval)")
    detect.add_argument("--within", type=window_argument, default=None, metavar="TICKS",
                        help="the window of operators that set none: composites span fewer "
                             "ticks, or less than a duration such as 30s of the events' time; "
                             "what cannot complete inside it is dropped (default: none)")


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Detect; 0, or a :class:`~._common.Failure` (status 1) after what was detected before
    a bad line has been written."""
    _detect(args, streams.out, streams.err)
    return 0


def _reading(read1: Callable[[int], bytes], name: str) -> Callable[[int], bytes]:
    """``read1`` with its errors as failures naming the file: a file that cannot be read, or
    compressed data that is not gzip or ends early. (Errors of writing the output, a closed
    pipe among them, stay what they are.)"""
    # The errors of compressed data that is not gzip: a .gz file was opened by open_input,
    # which imported gzip (and with it zlib) for it; no gzip, no such errors (a plain file
    # does not load gzip only to name them).
    gz, zl = sys.modules.get("gzip"), sys.modules.get("zlib")
    bad_data: tuple[type[Exception], ...] = (
        (gz.BadGzipFile, zl.error) if gz is not None and zl is not None else ())

    def read(size: int) -> bytes:
        try:
            return read1(size)
        except EOFError:  # gzip: the stream ends inside a member
            raise Failure(f"{name}: the compressed data ends early (a truncated file?)"
                           ) from None
        except bad_data as exc:
            raise Failure(f"{name}: not valid gzip data ({exc})") from None
        except OSError as exc:
            raise Failure(f"cannot read {name}: {exc.strerror or exc}") from None
    return read


def _line_encoder() -> Callable[[dict[str, Any]], str]:
    """``json.dumps`` for output lines: one encoder for the run, made once (the public
    ``JSONEncoder``: CPython's C encoder behind it is private; it costs 0.6 µs a line more)."""
    return json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "),
                            check_circular=False).encode


# ensure_ascii=False's string encoder, in C: what the encoder above writes a string with.
_text = json.encoder.encode_basestring
_ident = operator.attrgetter("id")  # an event's id, in C (no comprehension a line)


def _composite_line(c: CompositeEvent, dumps: Callable[[dict[str, Any]], str]) -> str:
    """``dumps(c.to_dict())``, written out: the encoder makes its C encoder again for every
    line (detect's output took 13% of its time that way, against 4% this way). The same
    text: keys in ``to_dict``'s order, ``", "`` and ``": "`` between items, strings as the
    encoder writes them, integers as ``repr``. tests/cli/test_detect_output.py compares the
    two."""
    name = c.type.name
    doc = c.doc
    if type(name) is not str or (doc is not None and type(doc) is not str):
        return dumps(c.to_dict())  # not what a graph raises: the encoder decides
    start, end = c.interval
    line = (f'{{"ts": {c.ts!r}, "type": {_text(name)}, "path": {_text(str(c.pi.pt))}, '
            f'"ids": [{", ".join(map(_text, c.pi.ids))}], "interval": [{start!r}, {end!r}], '
            f'"events": [{", ".join(map(_text, map(_ident, c.primitives())))}]')
    return line + "}" if doc is None else f'{line}, "doc": {_text(doc)}}}'


class _Output:
    """The output lines of ``detect``, collected and written to ``out`` in chunks.

    Written line by line, an unbuffered stdout (``PYTHONUNBUFFERED=1``, ``python -u``) costs a
    system call a line: 0.85 s of system time on 100,000 lines. Joined lines go through ``out``
    itself, whose encoding and newline translation give the same bytes as line by line.
    """

    __slots__ = ("lines", "out")

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lines: list[str] = []  # encoded lines, without their newline

    def flush(self) -> None:
        """Write the lines collected so far, and flush ``out`` so that a buffered stdout does
        not hold them back either."""
        lines = self.lines
        if lines:
            lines.append("")  # the last line's newline
            self.out.write("\n".join(lines))
            lines.clear()
            self.out.flush()


# Bytes of input read at a time by detect; the output is written before each read.
_CHUNK = 1 << 16


def _input_lines(read1: Callable[[int], bytes], flush: Callable[[], None],
                 size: int = _CHUNK, *, decode: bool = False) -> Iterator[bytes | str]:
    """The lines of a binary stream, as iterating it gives them, read ``size`` bytes at a time
    with ``read1``; ``flush()`` is called before every read.

    With ``decode``, the lines of a chunk that is UTF-8 come as text, decoded in one call for
    the chunk rather than one a line (detect's reader takes either; 5% of its time); a
    chunk that is not stays bytes, so that the reader names the line of the bad byte.

    The lines of a chunk come from a C iterator (:func:`_split`), and the chunks' iterators
    are chained in C: no Python frame is resumed for a line, only for a chunk.
    """
    return itertools.chain.from_iterable(_chunks(read1, flush, size, decode))


def _chunks(read1: Callable[[int], bytes], flush: Callable[[], None], size: int,
            decode: bool) -> Iterator[Iterator[bytes | str]]:
    """The iterators of the lines of each chunk read (see :func:`_input_lines`), the next
    chunk read when the lines before are all taken."""
    parts: list[bytes] = []  # the start of a line that goes on in the next chunk
    while True:
        # When to write the output: before every read, because a read may wait for input (a
        # pipe, a terminal), and a reader following the output live must then have every
        # composite detected so far, not wait for the end of the input. read1 returns what
        # has arrived (a slow writer's single line), so a line is written as soon as the input
        # pauses after it; a file or a fast writer gives 64 KiB chunks, so the output goes
        # out once per few hundred input lines. That also bounds what is held: the lines
        # raised by one chunk. (A count of lines alone would hold the last ones back while
        # the input is idle.)
        flush()
        chunk = read1(size)
        if not chunk:
            break
        cut = chunk.rfind(b"\n") + 1
        if not cut:  # no line ends in this chunk
            parts.append(chunk)
            continue
        if parts:
            parts.append(chunk[:cut])
            whole = b"".join(parts)
            parts = []
        else:
            whole = chunk[:cut] if cut < len(chunk) else chunk
        # BytesIO splits at b"\n" only and keeps it, as iterating a binary file does; so does
        # StringIO with newline="\n" (a b"\n" byte is never part of a UTF-8 character).
        yield _split(whole, decode)
        if cut < len(chunk):
            parts.append(chunk[cut:])
    if parts:
        yield _split(b"".join(parts), decode)


def _split(data: bytes, decode: bool) -> Iterator[bytes | str]:
    """The lines of ``data`` (see _input_lines): text if ``decode`` and it is UTF-8."""
    if decode:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return iter(io.StringIO(text, newline="\n"))
    return iter(io.BytesIO(data))


def _detect(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    defs = definitions(args, parse_namespaces(args.namespace))
    try:
        graph = EventGraph(defs, context=args.context, hierarchical=args.hierarchical,
                           semantics=args.semantics, within=args.within,
                           detect_aliases=True)  # every definition is written out
    except XmlEventsError as exc:
        raise Failure(exc.for_cli()) from None
    stream, name = open_input(args.events), input_name(args.events)
    dumps = _line_encoder()
    output = _Output(out)
    add = output.lines.append
    read1 = getattr(stream, "read1", None)
    # A text stream (stdin replaced, as in tests) has no read1: it is read as it is, and the
    # output written at the end.
    lines = stream if read1 is None else _input_lines(_reading(read1, name), output.flush,
                                                      decode=True)
    # Events no definition takes are checked but not built (the graph only needs their
    # ticks): most of a document's events concern no definition. No source: the messages
    # below name the file once, themselves.
    # (The graph does not change while detect reads: it is asked once per operation and
    # path type, not once a line.)
    # Reused ids are looked for inside the graph's tick horizon (issue 29): memory follows
    # the window, not the stream.
    # The path types read, for the namespace hint at the end: noted once each, where the
    # reader first asks about them (the answer is cached), never once an event.
    seen: dict[PathType, None] = {}

    def takes(op: Op, pt: PathType) -> bool:
        seen[pt] = None
        return graph.takes(op, pt)

    reader = read_events(lines, keep=functools.lru_cache(maxsize=None)(takes),
                         check_ids=True, id_horizon=_tick_horizon(graph))
    feed = graph.feed
    read_all = False
    raised: set[str | None] = set()
    try:
        for event in reader:
            for c in feed(event):
                raised.add(c.type.name)
                add(_composite_line(c, dumps))
        read_all = True
        if reader.last_ts is not None and reader.last_ts != graph.last_ts:
            graph.advance(reader.last_ts)
        # Composites raised by closing carry the last input tick (DESIGN section 6).
        for c in graph.close():
            raised.add(c.type.name)
            add(_composite_line(c, dumps))
    except Failure:  # the input could not be read: already worded
        raise
    except XmlEventsError as exc:
        raise Failure(_event_failure(exc, name, None if read_all else reader.line)) from None
    finally:
        if args.events != "-":
            stream.close()
        # At the end, and on a bad line before main writes its message: what was detected
        # before it is written first.
        output.flush()
    reused, first = reader.reused_ids()
    if first is not None:
        err.write(_reused_warning(reused, *first))
    # A definition that matched nothing for want of a namespace: the flag that fixes it
    # (issue 30, item 5), as replay says it.
    for hint in namespace_hints(defs, parse_namespaces(args.namespace) or None, list(seen),
                                {n: 1 for n in raised if n is not None}):
        err.write(f"xmlevents detect: warning: {hint.cli()}\n")


def _tick_horizon(graph: EventGraph) -> int | None:
    """The widest tick window of the graph's operators (its shared cores' too) when every
    one has a tick window: two events that many ticks apart share no composite, so a reused
    id further apart is not ambiguous inside one. None (the reader then keeps the last
    ``RECENT_IDS`` events' ids) where an operator has no window or only a duration, and
    where the graph has no operator at all (every composite one event)."""
    widest = 0
    trees = list(graph.trees)
    seen: set[int] = set()
    while trees:
        tree = trees.pop()
        if id(tree) in seen:
            continue
        seen.add(id(tree))
        for node in tree.operators:
            core = getattr(node, "core", None)  # a shared subtree's view: the core's nodes
            if core is not None:
                trees.append(core.tree)
                continue
            if node.window is None:
                return None
            widest = max(widest, node.window)
    return widest or None


def _event_failure(exc: XmlEventsError, name: str, line: int | None) -> str:
    """The message of an error while detecting, naming the file once: ``FILE, line N: ...``
    for a malformed line (the reader's error, ``line N: ...``) and for an event the graph
    refused (``line``: that of the last event read); ``FILE: ...`` otherwise."""
    message = exc.for_cli()
    if isinstance(exc, EventFormatError) and exc.line is not None:
        return f"{name}, {message}"
    if line is not None:
        return f"{name}, line {line}: {message}"
    return f"{name}: {message}"


def _reused_warning(n: int, ident: str, line: int, first: int) -> str:
    """The warning line for ``n`` events whose id an earlier event had, the first of them
    ``ident`` at ``line`` (seen first at ``first``): composites name their constituents by
    id, so such a composite's ``events`` do not say which event they mean."""
    what = (f"{n} events reuse an id (first: id" if n > 1 else "1 event reuses an id (id")
    return (f"xmlevents detect: warning: {what} {json.dumps(ident, ensure_ascii=False)} at "
            f"line {line}, first seen at line {first}); composites name their constituents "
            "by id\n")
