"""``xmlevents replay`` and ``xmlevents history from-git`` (issue 6, DESIGN sections 6-7).

Kept apart from the other commands so that ``detect`` and ``graph`` never import lxml,
xmldiff or pyspark: those are imported (through :mod:`xmlevents.replay`, which owns pyspark)
when these commands run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlparse

from xmlevents.algebra import XmlEventsError

from ._cli_common import (
    ArgumentFailure,
    CommandError,
    parse_namespaces,
    query_text,
    window_argument,
)

if TYPE_CHECKING:  # imported when the command runs: detect and graph never load lxml
    from xmlevents.replay import DiffOptions, Key, ReplayProgress, ReplayReport

__all__ = ["CommandError", "add_parsers", "run"]


def _at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``low`` (a usage error otherwise, status 2)."""
    def number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is less than {low}: give {low} or more")
        return value
    return number


def _cel_query(arg: str) -> str:
    """An argparse type: ``--cel``'s query (the text, or ``@FILE`` holding one query),
    compiled and checked as the replay will run it (a usage error otherwise, status 2, with
    the line and column: before the table is read, before Spark starts)."""
    from xmlevents.cel import CELQueryError, CELSyntaxError
    from xmlevents.replay import check_queries

    try:
        text = query_text(arg)
    except ArgumentFailure as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    where = f"{arg[1:]}: " if arg.startswith("@") else ""
    try:
        check_queries([text])
    except (CELSyntaxError, CELQueryError) as exc:
        raise argparse.ArgumentTypeError(f"{where}{exc}") from None
    return text


def add_parsers(sub: Any, add_definition_options: Callable[[argparse.ArgumentParser], None]
                ) -> None:
    replay = sub.add_parser(
        "replay", help="diff the versions of documents into events and detect composites",
        description="Read a version table (doc, version, xml) — JSON lines (.jsonl, .gz), "
                    "Parquet, or a folder of DOC/VERSION.xml files — diff each document's "
                    "consecutive versions into primitive events with node ids carried across "
                    "versions, detect the defined composite events per document, run the CEL "
                    "queries (--cel) over each document's events, and write DIR/events, "
                    "DIR/composites, DIR/errors and DIR/cel as Parquet datasets — on Spark "
                    "(the default), or in this process with --engine local.")
    replay.add_argument("history", metavar="HISTORY", help="the version table")
    add_definition_options(replay)
    replay.add_argument("--namespace", "-n", action="append", default=[], metavar="P=URI",
                        help="a prefix for the definitions, e.g. "
                             "pom=http://maven.apache.org/POM/4.0.0 (repeatable)")
    replay.add_argument("--cel", action="append", default=[], type=_cel_query,
                        metavar="QUERY",
                        help="a CEL query (CORE's CEQL; @FILE: the query in a file) run by "
                             "the automaton over each document's primitive events (types "
                             "ins/upd/del, attributes id, ts, path, ids, kind, value, old, "
                             "doc; positions from 0 per document); its complex events go to "
                             "DIR/cel, with the query's index from 0 (repeatable)")
    replay.add_argument("--out", "-o", required=True, metavar="DIR",
                        help="where to write events/, composites/, errors/ and cel/ "
                             "(replaced; checked before any work)")
    replay.add_argument("--engine", choices=("spark", "local"), default="spark",
                        help="spark: an embedded local[*] Spark session, or --master's "
                             "(default); local: this process alone, no JVM (for a history "
                             "that fits in memory)")
    replay.add_argument("--master", metavar="URL",
                        help="Spark master (default: an embedded local[*] session; under "
                             "spark-submit, the one it was given)")
    replay.add_argument("--partitions", type=_at_least(1), metavar="N",
                        help="partitions of the diff stage, at least 1 (default: 4 per core)")
    replay.add_argument("--unique-attr", action="append", default=[], metavar="NAME",
                        help="an attribute that identifies its element across versions, for "
                             "xmldiff to match by (besides xml:id; Clark notation for a "
                             "namespace: {urn:x}key) (repeatable)")
    replay.add_argument("--no-fast-match", dest="fast_match", action="store_false",
                        help="xmldiff's slower matching, without its first longest-common-"
                             "subsequence pass (default: fast match)")
    replay.add_argument("--key", action="append", default=[], metavar="SPEC",
                        help="how an element is identified across versions, as xs:key: its "
                             "name, then the child or @attribute paths whose values identify "
                             "it, e.g. pom:dependency=pom:groupId,pom:artifactId (prefixes "
                             "bound by -n) (repeatable)")
    replay.add_argument("--no-unique-tags", dest="unique_tags", action="store_false",
                        help="do not match a child whose tag is unique among its siblings in "
                             "both versions to its namesake before similarity (default: do)")
    replay.add_argument("--within", type=window_argument, default=None, metavar="TICKS",
                        help="the window of every operator that sets none, in ticks of a "
                             "document's event stream, or a duration such as 30d of the "
                             "versions' times (default: none)")
    replay.add_argument("--show", type=_at_least(0), default=5, metavar="N",
                        help="composite events of each type to print, 0 or more (default: 5)")
    replay.add_argument("--quiet", "-q", action="store_true",
                        help="no progress on stderr and nothing from Spark's JVM: only the "
                             "summary (and warnings)")

    history = sub.add_parser("history", help="build version tables",
                             description="Build version tables for `xmlevents replay`.")
    hsub = history.add_subparsers(dest="history_command", required=True, metavar="SOURCE")
    git = hsub.add_parser(
        "from-git", help="every committed version of one XML file in a git repository",
        description="Export every committed version of PATH in the git repository REPO, "
                    "oldest first, as a version table (doc, version, commit, time, xml) in "
                    "JSON lines (gzip-compressed if FILE ends in .gz). A FILE of another "
                    "extension, or a PATH whose first version is not XML, is refused before "
                    "anything is written.")
    git.add_argument("repo", metavar="REPO", help="the repository (a working tree or bare)")
    git.add_argument("path", metavar="PATH", help="the file, relative to the repository root")
    git.add_argument("-o", "--output", required=True, metavar="FILE",
                     help="the version table to write, as JSON lines: a name ending in "
                          ".jsonl, .json or .ndjson, then .gz to compress it")
    git.add_argument("--doc", metavar="NAME", help="the document's name (default: PATH)")


def run(args: argparse.Namespace, out: TextIO, err: TextIO,
        definition_text: Callable[[argparse.Namespace, dict[str, str]], str | None]) -> None:
    if args.command == "history":
        _from_git(args, out)
    else:
        _replay(args, out, err, definition_text)


def _from_git(args: argparse.Namespace, out: TextIO) -> None:
    """``history from-git``: refuses an output name it cannot write before git runs, and a
    file whose first version is not XML before the output is created (a failure later
    leaves the output as it was: write_versions replaces it whole)."""
    from xmlevents.replay import git_history, write_versions

    def rows() -> Iterator[dict[str, Any]]:
        # git runs when write_versions asks for the first row: after it has checked the name.
        yield from git_history(args.repo, args.path, doc=args.doc)

    try:
        count = write_versions(rows(), args.output)
    except XmlEventsError as exc:
        raise CommandError(exc.for_cli()) from None
    except OSError as exc:
        raise CommandError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    out.write(f"{count} versions of {args.path} written to {args.output}\n")


def _keys(specs: list[str], namespaces: dict[str, str]) -> tuple[Key, ...]:
    """The ``--key`` declarations as keys (a bad one: a CommandError naming it)."""
    from xmlevents.replay import DiffOptions, Key, KeySpecError

    try:
        keys = tuple(Key.parse(spec, namespaces) for spec in specs)
        DiffOptions(keys=keys)  # two keys for one element
    except KeySpecError as exc:
        raise CommandError(f"--key: {exc}") from None
    return keys


def _local_output(args: argparse.Namespace) -> bool:
    """Whether ``--out`` names a folder of this machine: always in process; on Spark, for an
    embedded session (no ``--master``, or a ``local[...]`` one, and not under
    ``spark-submit``). A cluster resolves a path without a scheme on its own file system
    (HDFS, ...): Spark checks it there."""
    if args.engine == "local":
        return True
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    return not submitted and (args.master is None or args.master.startswith("local"))


def _check_out(out: str) -> None:
    """``--out`` checked before any work (before the table is read, before Spark starts): a
    folder that exists and takes a new file, or one that can be created (it is created and
    removed again, so a run that fails later leaves nothing). A URI (``hdfs://...``) is left
    to Spark."""
    if "://" in out:
        if not out.startswith("file://"):
            return
        out_path = Path(urlparse(out).path)
    else:
        out_path = Path(out)
    path = out_path.absolute()
    if path.exists() and not path.is_dir():
        raise CommandError(f"--out {out}: a file is there, not a folder")
    missing = []
    existing = path
    while not existing.exists():
        missing.append(existing)
        existing = existing.parent
    if not existing.is_dir():
        raise CommandError(f"--out {out}: {existing} is a file, not a folder")
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except OSError as exc:
                which = "" if folder == path else f" {folder}"
                raise CommandError(f"--out {out}: cannot create the folder{which}: "
                                   f"{exc.strerror or exc}") from None
            made.append(folder)
        try:
            import tempfile

            fd, probe = tempfile.mkstemp(dir=path, prefix=".xmlevents-probe-")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise CommandError(f"--out {out}: cannot write in this folder: "
                               f"{exc.strerror or exc}") from None
    finally:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()


def _replay(args: argparse.Namespace, out: TextIO, err: TextIO,
            definition_text: Callable[[argparse.Namespace, dict[str, str]], str | None]
            ) -> None:
    started = time.perf_counter()
    namespaces = parse_namespaces(args.namespace)
    definitions = definition_text(args, namespaces)  # checked before any work
    keys = _keys(args.key, namespaces)  # so are the keys
    if args.engine == "local":
        given = [o for o, v in (("--master", args.master), ("--partitions", args.partitions))
                 if v is not None]
        if given:
            raise CommandError(f"{' and '.join(given)}: Spark's, and --engine local runs "
                               "without Spark: drop them or use --engine spark")
        if "://" in args.out:
            raise CommandError(f"--out {args.out}: --engine local writes to a folder of this "
                               "machine: give its path")
    if not os.path.exists(args.history):
        raise CommandError(f"{args.history}: no such file or folder")
    if _local_output(args):
        _check_out(args.out)  # so is the output folder
    from xmlevents.replay import DiffOptions, progress_for

    options = DiffOptions(fast_match=args.fast_match, uniqueattrs=(
        *DiffOptions().uniqueattrs, *args.unique_attr), keys=keys,
        unique_tags=args.unique_tags)
    progress = progress_for(err, args.quiet)
    try:
        if args.engine == "local":
            report = _run_local(args, definitions, namespaces, options, progress)
        else:
            report = _run_spark(args, definitions, namespaces, options, progress)
    finally:
        progress.close()
    _summary(out, args, report, time.perf_counter() - started)
    # Said after the summary, never fatal: a key that named no element in any version
    # (every element is inserted once, version 0 inserting the whole document), a definition
    # that matched nothing for want of a namespace.
    for key in report.unselected:
        err.write(f"xmlevents replay: warning: {key.nothing_selected()}\n")
    for hint in report.hints:
        err.write(f"xmlevents replay: warning: {hint.cli()}\n")


def _run_local(args: argparse.Namespace, definitions: str | None, namespaces: dict[str, str],
               options: DiffOptions, progress: ReplayProgress) -> ReplayReport:
    from xmlevents.replay import run_local

    try:
        return run_local(args.history, args.out, definitions, options=options,
                         namespaces=namespaces, within=args.within, show=args.show,
                         progress=progress, queries=args.cel)
    except XmlEventsError as exc:  # a version table that cannot be read, ...
        raise CommandError(exc.for_cli()) from None
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else f"{args.out}: "
        raise CommandError(f"cannot write {where}{exc.strerror or exc}") from None


def _run_spark(args: argparse.Namespace, definitions: str | None, namespaces: dict[str, str],
               options: DiffOptions, progress: ReplayProgress) -> ReplayReport:
    progress.stage("starting Spark" + (f" ({args.master})" if args.master else " (local)"))
    import tempfile

    from xmlevents.replay import active_session, make_session, run_spark

    ours = active_session() is None  # a caller's session is left running
    # Quiet: the JVM's stderr (its own warnings, the workers') goes to a file, kept and named
    # only if Spark cannot start.
    log = None
    if args.quiet:
        fd, log = tempfile.mkstemp(prefix="xmlevents-jvm-", suffix=".log")
        os.close(fd)
    start = time.perf_counter()
    try:
        spark = make_session(args.master, progress=False, jvm_log=log)
    except Exception as exc:  # Java missing, a bad master URL, ...
        kept = f" (the JVM's messages: {log})" if log is not None else ""
        raise CommandError(f"cannot start Spark: {_first_line(exc)}{kept}") from None
    started = time.perf_counter() - start
    try:
        report = run_spark(spark, args.history, args.out, definitions, options=options,
                           namespaces=namespaces, partitions=args.partitions,
                           within=args.within, show=args.show, progress=progress,
                           queries=args.cel)
    except XmlEventsError as exc:  # a version table that cannot be read, ...
        raise CommandError(exc.for_cli()) from None
    finally:
        if ours:
            spark.stop()
        if log is not None:
            with contextlib.suppress(OSError):
                os.unlink(log)
    report.times.insert(0, ("Spark start", started))
    return report


def _first_line(exc: BaseException) -> str:
    """An exception's message up to its first line break (Py4J's carry a Java stack)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _summary(out: TextIO, args: argparse.Namespace, report: ReplayReport, seconds: float
             ) -> None:
    errors = report.errors
    types = sorted(report.composites.items())
    parts = ", ".join(f"{name} {s:.1f} s" for name, s in report.times)
    w = out.write
    w(f"replayed {args.history} -> {args.out}\n")
    w(f"  engine            {report.engine} ({report.where})\n")
    w(f"  documents         {report.documents:,}\n")
    w(f"  versions          {report.versions:,} replayed, {len(errors):,} "
      f"error{'' if len(errors) == 1 else 's'}\n")
    w(f"  primitive events  {report.events:,}\n")
    if types:
        w("  composite events  " + ", ".join(f"{t} {c:,}" for t, c in types) + "\n")
    else:
        w("  composite events  none" + (" defined\n" if not args.define and not args.definitions
                                        else "\n"))
    if args.cel:
        w("  complex events    " + ", ".join(f"query {i} {report.cel.get(i, 0):,}"
                                             for i in range(len(args.cel))) + " (CEL)\n")
    w(f"  time              {seconds:.1f} s" + (f" ({parts})\n" if parts else "\n"))
    if report.shown:
        w(f"first {args.show} of each type (doc, version, tick, where):\n")
        for r in report.shown:
            w(f"  {r['type']:<16} {r['doc']}  v{r['version']}  ts {r['ts']}  "
              f"{r['path_prefixed']}[{', '.join(r['ids'])}]\n")
    for e in errors[:20]:
        where = f", line {e['line']}, column {e['column']}" if e["line"] is not None else ""
        version = f" version {e['version']}" if e["version"] is not None else ""
        w(f"  error: {e['doc'] or args.history}{version}{where}: {e['message']}\n")
    if len(errors) > 20:
        w(f"  ... {len(errors) - 20} more in {args.out}/errors\n")
