"""The ``xmlevents`` command line (DESIGN section 6).

``main(argv)`` returns the exit status: 0 on success, 1 for bad input (a message naming the
place on stderr, never a traceback), 2 for a usage error.

Start-up is part of every run of a command, so this module imports only what ``detect`` and
``graph`` need: the algebra and the standard library's argparse and json. The other commands
live in their own modules (``_cli_replay``, ``_cli_rules``, ``_cli_serve``, ``_cli_cel``,
``_cli_query``), imported only when the command line names one of them or asks for the list
of commands (see :func:`_parser`); each imports its own system (lxml, the replay, the web
stack, ...) only when it runs. gzip is imported only for a ``.gz`` input, and shutil not at
all (see :func:`_columns`).
tests/cli/test_cli_imports.py checks what a ``detect`` and a ``graph`` process load.
"""

from __future__ import annotations

import argparse
import functools
import io
import itertools
import json
import operator
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, TextIO

from xmlevents.algebra import (
    CompositeEvent,
    Context,
    Definition,
    DefinitionSet,
    EventFormatError,
    EventGraph,
    XmlEventsError,
    parse_definitions,
    read_events,
)

from ._cli_common import ArgumentFailure, CommandError, parse_namespaces, window_argument

if TYPE_CHECKING:
    import gzip

__all__ = ["main", "entry"]


class _Failure(XmlEventsError, ValueError):
    """A bad input already turned into a message for the user."""


def _add_definition_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--define", "-d", action="append", default=[], metavar="DEF",
                   help="a definition 'Name := expression' (repeatable)")
    p.add_argument("--definitions", "-f", action="append", default=[], metavar="FILE",
                   help="a file of definitions, one per line, '#' comments (repeatable)")


def _add_namespace_option(p: argparse.ArgumentParser) -> None:
    # As replay's --namespace: the definitions a user replays can be detected and drawn.
    p.add_argument("--namespace", "-n", action="append", default=[], metavar="P=URI",
                   help="a prefix for the definitions, e.g. "
                        "pom=http://maven.apache.org/POM/4.0.0 (repeatable)")


def _columns() -> int:
    """``shutil.get_terminal_size().columns``, the width argparse's formatter asks for: from
    ``COLUMNS``, else the terminal of stdout, else 80 — without importing shutil, which
    imports zlib, bz2, lzma and fnmatch for its archives (2-3 ms of every command's
    start-up: argparse makes a formatter for every argument added)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    if stdout is None:
        return 80
    try:
        return os.get_terminal_size(stdout.fileno()).columns or 80
    except (ValueError, OSError):  # closed, detached, or not a terminal
        return 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, the same text, its width found by :func:`_columns`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


class _ArgumentParser(argparse.ArgumentParser):
    """A parser whose formatter is :class:`_HelpFormatter` unless told otherwise; its
    subparsers too (argparse makes them of the parser's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


# The commands whose parsers are built here, without importing another command's module.
_OWN_COMMANDS = ("detect", "graph")


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. For a ``command`` of ``detect`` or ``graph`` (the first
    argument), only their subparsers are built: the other commands' modules are not even
    imported (a command line naming one of them parses as in the full parser, whose other
    subparsers play no part in it: a subcommand's arguments go to its own parser). Any other
    first argument (a command, ``--help``, ``--version``, a mistake, none) gets the full
    parser, so that the list of commands and argparse's messages name them all."""
    from xmlevents import __version__

    p = _ArgumentParser(
        prog="xmlevents", description="Composite events for XML documents.")
    p.add_argument("--version", action="version", version=f"xmlevents {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    detect = sub.add_parser(
        "detect", help="detect composite events in a stream of primitive events",
        description="Read primitive events (JSON lines), write every composite event raised "
                    "by the root of a defined tree (JSON lines), closing the graph at the end.")
    _add_definition_options(detect)
    _add_namespace_option(detect)
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

    graph = sub.add_parser(
        "graph", help="print the event trees of definitions with their path types",
        description="Print every definition's event tree with each node's event type and "
                    "path type, as text or as Graphviz DOT.")
    _add_definition_options(graph)
    _add_namespace_option(graph)
    graph.add_argument("--dot", action="store_true", help="print Graphviz DOT instead of text")
    if command in _OWN_COMMANDS:
        return p
    from . import _cli_cel, _cli_query, _cli_replay, _cli_rules, _cli_serve

    _cli_replay.add_parsers(sub, _add_definition_options)
    _cli_rules.add_parsers(sub)
    _cli_serve.add_parsers(sub)
    _cli_cel.add_parsers(sub)
    _cli_query.add_parsers(sub)
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
    """The definitions of ``--definitions`` and ``--define``, parsed with ``namespaces`` (the
    ``--namespace`` prefixes) into one set; a bad one is a failure naming its source, line and
    column, its hints phrased as flags."""
    defs: list[Definition] = []
    if sources is None:
        sources = _definition_sources(args)
    for where, text in sources:
        try:
            defs.extend(parse_definitions(text, namespaces, source=where))
        except XmlEventsError as exc:  # the parser names ``where`` itself
            raise _Failure(exc.for_cli()) from None
    if not defs:
        raise _Failure("no definitions: give --define 'Name := expression' or "
                       "--definitions FILE")
    try:
        return DefinitionSet(defs)
    except XmlEventsError as exc:
        where = next((w for w, text in sources if getattr(exc, "text", None) == text), "")
        message = exc.for_cli()
        raise _Failure(f"{where}: {message}" if where else message) from None


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


def _open_events(path: str) -> tuple[IO[bytes] | IO[str] | gzip.GzipFile, str]:
    """The events' stream and its name for messages: stdin as it is, a file whose name ends
    in ``.gz`` decompressed (as ``replay`` reads its tables), any other file as it is."""
    # Binary, so that the reader decodes line by line and names the line of a bad byte
    # (stdin replaced by a text stream, as in tests, is read as text).
    if path == "-":
        return getattr(sys.stdin, "buffer", sys.stdin), "<stdin>"
    try:
        if path.lower().endswith(".gz"):
            import gzip

            # GzipFile has read1: the chunked reader below works on it unchanged.
            return gzip.open(path, "rb"), path
        return open(path, "rb"), path
    except OSError as exc:
        raise _Failure(f"cannot read {path}: {exc.strerror or exc}") from None


def _reading(read1: Callable[[int], bytes], name: str) -> Callable[[int], bytes]:
    """``read1`` with its errors as failures naming the file: a file that cannot be read, or
    compressed data that is not gzip or ends early. (Errors of writing the output, a closed
    pipe among them, stay what they are.)"""
    # The errors of compressed data that is not gzip: a .gz file was opened by _open_events,
    # which imported gzip (and with it zlib) for it; no gzip, no such errors (a plain file
    # does not load gzip only to name them).
    gz, zl = sys.modules.get("gzip"), sys.modules.get("zlib")
    bad_data: tuple[type[Exception], ...] = (
        (gz.BadGzipFile, zl.error) if gz is not None and zl is not None else ())

    def read(size: int) -> bytes:
        try:
            return read1(size)
        except EOFError:  # gzip: the stream ends inside a member
            raise _Failure(f"{name}: the compressed data ends early (a truncated file?)"
                           ) from None
        except bad_data as exc:
            raise _Failure(f"{name}: not valid gzip data ({exc})") from None
        except OSError as exc:
            raise _Failure(f"cannot read {name}: {exc.strerror or exc}") from None
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
    defs = _definitions(args, parse_namespaces(args.namespace))
    try:
        graph = EventGraph(defs, context=args.context, hierarchical=args.hierarchical,
                           semantics=args.semantics, within=args.within,
                           detect_aliases=True)  # every definition is written out
    except XmlEventsError as exc:
        raise _Failure(exc.for_cli()) from None
    stream, name = _open_events(args.events)
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
    reader = read_events(lines, keep=functools.lru_cache(maxsize=None)(graph.takes),
                         check_ids=True)
    feed = graph.feed
    read_all = False
    try:
        for event in reader:
            for c in feed(event):
                add(_composite_line(c, dumps))
        read_all = True
        if reader.last_ts is not None and reader.last_ts != graph.last_ts:
            graph.advance(reader.last_ts)
        # Composites raised by closing carry the last input tick (DESIGN section 6).
        for c in graph.close():
            add(_composite_line(c, dumps))
    except _Failure:  # the input could not be read: already worded
        raise
    except XmlEventsError as exc:
        raise _Failure(_event_failure(exc, name, None if read_all else reader.line)) from None
    finally:
        if args.events != "-":
            stream.close()
        # At the end, and on a bad line before main writes its message: what was detected
        # before it is written first.
        output.flush()
    reused, first = reader.reused_ids()
    if first is not None:
        err.write(_reused_warning(reused, *first))


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


def _graph(args: argparse.Namespace, out: TextIO) -> None:
    from xmlevents.algebra import render_dot, render_text  # only graph draws (see the module)

    defs = _definitions(args, parse_namespaces(args.namespace))
    try:
        text = render_dot(defs) if args.dot else render_text(defs)
    except XmlEventsError as exc:
        raise _Failure(exc.for_cli()) from None
    out.write(text + "\n")


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
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = _parser(argv[0] if argv else None).parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage or --help/--version
        return int(exc.code or 0)
    try:
        if args.command == "detect":
            _detect(args, out, err)
        elif args.command == "graph":
            _graph(args, out)
        else:  # a command of its own module (imported by _parser already)
            from . import _cli_cel, _cli_query, _cli_replay, _cli_rules, _cli_serve

            if args.command == "rules":
                status = _cli_rules.run(args, out, err)
                out.flush()
                return status
            elif args.command == "serve":
                return _cli_serve.run(args, out, err)
            elif args.command == "cel":
                return _cli_cel.run(args, out, err)
            elif args.command == "query":
                return _cli_query.run(args, out, err)
            else:
                _cli_replay.run(args, out, err, _definition_text)
    except (_Failure, ArgumentFailure, CommandError) as exc:
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
