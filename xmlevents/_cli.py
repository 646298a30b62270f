"""The ``xmlevents`` command line (DESIGN section 6).

``main(argv)`` returns the exit status: 0 on success, 1 for bad input (a message naming the
place on stderr, never a traceback), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, TextIO

from xmlevents.algebra import (
    Context,
    Definition,
    DefinitionSet,
    EventGraph,
    XmlEventsError,
    parse_definitions,
    read_events,
    render_dot,
    render_text,
)

from . import _cli_replay
from ._cli_common import window_argument

__all__ = ["main", "entry"]


class _Failure(XmlEventsError, ValueError):
    """A bad input already turned into a message for the user."""


def _add_definition_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--define", "-d", action="append", default=[], metavar="DEF",
                   help="a definition 'Name := expression' (repeatable)")
    p.add_argument("--definitions", "-f", action="append", default=[], metavar="FILE",
                   help="a file of definitions, one per line, '#' comments (repeatable)")


def _parser() -> argparse.ArgumentParser:
    from xmlevents import __version__

    p = argparse.ArgumentParser(
        prog="xmlevents", description="Composite events for XML documents.")
    p.add_argument("--version", action="version", version=f"xmlevents {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    detect = sub.add_parser(
        "detect", help="detect composite events in a stream of primitive events",
        description="Read primitive events (JSON lines), write every composite event raised "
                    "by the root of a defined tree (JSON lines), closing the graph at the end.")
    _add_definition_options(detect)
    detect.add_argument("events", nargs="?", default="-", metavar="EVENTS.jsonl",
                        help="the primitive events, one JSON object a line ('-' for stdin)")
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

    graph = sub.add_parser(
        "graph", help="print the event trees of definitions with their path types",
        description="Print every definition's event tree with each node's event type and "
                    "path type, as text or as Graphviz DOT.")
    _add_definition_options(graph)
    graph.add_argument("--dot", action="store_true", help="print Graphviz DOT instead of text")
    _cli_replay.add_parsers(sub, _add_definition_options)
    return p


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise _Failure(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise _Failure(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _definitions(args: argparse.Namespace, namespaces: dict[str, str] | None = None,
                 sources: list[tuple[str, str]] | None = None) -> DefinitionSet:
    defs: list[Definition] = []
    if sources is None:
        sources = _definition_sources(args)
    for where, text in sources:
        try:
            defs.extend(parse_definitions(text, namespaces, source=where))
        except XmlEventsError as exc:  # the parser names ``where`` itself
            raise _Failure(str(exc)) from None
    if not defs:
        raise _Failure("no definitions: give --define 'Name := expression' or "
                       "--definitions FILE")
    try:
        return DefinitionSet(defs)
    except XmlEventsError as exc:
        where = next((w for w, text in sources if getattr(exc, "text", None) == text), "")
        raise _Failure(f"{where}: {exc}" if where else str(exc)) from None


def _definition_sources(args: argparse.Namespace) -> list[tuple[str, str]]:
    sources = [(f"--definitions {path}", _read_text(path)) for path in args.definitions]
    return sources + [(f"--define #{i}", text) for i, text in enumerate(args.define, start=1)]


def _definition_text(args: argparse.Namespace, namespaces: dict[str, str]) -> str | None:
    """The definitions of ``replay`` as one text (for the workers), checked here; or None."""
    if not args.define and not args.definitions:
        return None
    sources = _definition_sources(args)
    _definitions(args, namespaces, sources)
    return "\n".join(text for _, text in sources)


def _open_events(path: str) -> tuple[IO[bytes] | IO[str], str]:
    # Binary, so that the reader decodes line by line and names the line of a bad byte
    # (stdin replaced by a text stream, as in tests, is read as text).
    if path == "-":
        return getattr(sys.stdin, "buffer", sys.stdin), "<stdin>"
    try:
        return open(path, "rb"), path
    except OSError as exc:
        raise _Failure(f"cannot read {path}: {exc.strerror}") from None


def _line_encoder() -> Callable[[dict[str, Any]], str]:
    """``json.dumps`` for output lines: one encoder for the run, made once (the public
    ``JSONEncoder``: CPython's C encoder behind it is private; it costs 0.6 µs a line more)."""
    return json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "),
                            check_circular=False).encode


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
                 size: int = _CHUNK) -> Iterator[bytes]:
    """The lines of a binary stream, as iterating it gives them, read ``size`` bytes at a time
    with ``read1``; ``flush()`` is called before every read."""
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
        # BytesIO splits at b"\n" only and keeps it, as iterating a binary file does.
        yield from io.BytesIO(whole)
        if cut < len(chunk):
            parts.append(chunk[cut:])
    if parts:
        yield b"".join(parts)


def _detect(args: argparse.Namespace, out: TextIO) -> None:
    defs = _definitions(args)
    try:
        graph = EventGraph(defs, context=args.context, hierarchical=args.hierarchical,
                           semantics=args.semantics, within=args.within,
                           detect_aliases=True)  # every definition is written out
    except XmlEventsError as exc:
        raise _Failure(str(exc)) from None
    stream, name = _open_events(args.events)
    dumps = _line_encoder()
    output = _Output(out)
    add = output.lines.append
    read1 = getattr(stream, "read1", None)
    # A text stream (stdin replaced, as in tests) has no read1: it is read as it is, and the
    # output written at the end.
    lines = stream if read1 is None else _input_lines(read1, output.flush)
    try:
        # Events no definition takes are checked but not built (the graph only needs their
        # ticks): most of a document's events concern no definition.
        reader = read_events(lines, source=name, keep=graph.takes)
        for event in reader:
            for c in graph.feed(event):
                add(dumps(c.to_dict()))
        if reader.last_ts is not None and reader.last_ts != graph.last_ts:
            graph.advance(reader.last_ts)
        # Composites raised by closing carry the last input tick (DESIGN section 6).
        for c in graph.close():
            add(dumps(c.to_dict()))
    except XmlEventsError as exc:
        raise _Failure(str(exc)) from None
    finally:
        if args.events != "-":
            stream.close()
        # At the end, and on a bad line before main writes its message: what was detected
        # before it is written first.
        output.flush()


def _graph(args: argparse.Namespace, out: TextIO) -> None:
    defs = _definitions(args)
    out.write((render_dot(defs) if args.dot else render_text(defs)) + "\n")


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Run the command line with ``argv``; return the exit status.

    >>> main(["graph", "--define", "E := ins(a/b) & ins(a/c)"])
    E := ins(a/b) & ins(a/c)
      & conjunction  E(a)  path type a (derived: a/b ∩lb a/c)
      ├── ins(a/b)
      └── ins(a/c)
    0
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage or --help/--version
        return int(exc.code or 0)
    try:
        if args.command == "detect":
            _detect(args, out)
        elif args.command == "graph":
            _graph(args, out)
        else:
            _cli_replay.run(args, out, err, _definition_text)
    except (_Failure, _cli_replay.CommandError) as exc:
        err.write(f"xmlevents: error: {exc}\n")
        return 1
    except BrokenPipeError:
        return 1
    out.flush()
    return 0


def entry() -> None:
    """The console script: exit with :func:`main`'s status."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
