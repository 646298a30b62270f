"""``xmlevents replay`` (issue 6, DESIGN sections 6-7): a command like the others since issue
28, returning its status; its progress displays are the command line's (:mod:`.progress`).

Kept apart from the other commands so that ``detect`` and ``graph`` never import lxml,
xmldiff or pyspark: those are imported (through :mod:`xmlevents.replay`, which owns pyspark)
when this command runs. Everything given is checked before any work (definitions, keys, CEL
queries, ``--out``): bad input is status 1; a Spark that cannot start, 3.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlparse

from xmlevents.algebra import XmlEventsError

from ._common import (
    ENVIRONMENT,
    USAGE,
    Failure,
    Streams,
    add_namespace_option,
    check_output_folder,
    name_value,
    parse_namespaces,
    query_text,
    window_argument,
)
from ._definitions import add_definition_options, definition_text
from ._engine import choose_engine

if TYPE_CHECKING:  # imported when the command runs: detect and graph never load lxml
    from xmlevents.replay import DiffOptions, Key, ReplayProgress, ReplayReport

__all__ = ["add_parser", "run"]


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


def _seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0 (a usage error otherwise)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: give a number of seconds above 0")
    return value


def _cel_queries(args: list[str]) -> list[str]:
    """``--cel``'s queries (the text, or ``@FILE`` holding one query), compiled and checked
    as the replay will run them: before the table is read, before Spark starts. A query that
    cannot run is bad input (status 1, as ``cel`` and ``query`` refuse theirs), with its line
    and column."""
    from xmlevents.cel import CELQueryError, CELSyntaxError
    from xmlevents.replay import check_queries

    texts = []
    for arg in args:
        try:
            text = query_text(arg)
        except Failure as exc:
            raise Failure(f"--cel {exc}") from None
        where = f"{arg[1:]}: " if arg.startswith("@") else ""
        try:
            check_queries([text])
        except (CELSyntaxError, CELQueryError) as exc:
            raise Failure(f"--cel {where}{exc}") from None
        texts.append(text)
    return texts


def add_parser(sub: Any) -> None:
    """``replay``'s parser."""
    replay = sub.add_parser(
        "replay", help="diff the versions of documents into events and detect composites",
        description="Read a version table (doc, version, xml) — JSON lines (.jsonl, .gz), "
                    "Parquet, or a folder of DOC/VERSION.xml files — diff each document's "
                    "consecutive versions into primitive events with node ids carried across "
                    "versions, detect the defined composite events per document, run the CEL "
                    "queries (--cel) over each document's events, and write DIR/events, "
                    "DIR/composites, DIR/errors and DIR/cel as Parquet datasets — in this "
                    "process or on Spark, chosen for the input (--engine).")
    replay.add_argument("history", metavar="HISTORY", help="the version table")
    add_definition_options(replay)
    add_namespace_option(replay, "the definitions and --key")
    replay.add_argument("--cel", action="append", default=[],
                        metavar="QUERY",
                        help="a CEL query (CORE's CEQL; @FILE: the query in a file) run by "
                             "the automaton over each document's primitive events (types "
                             "ins/upd/del, attributes id, ts, path, ids, kind, value, old, "
                             "doc; positions from 0 per document); its complex events go to "
                             "DIR/cel, with the query's index from 0 (repeatable)")
    replay.add_argument("--out", "-o", metavar="DIR",
                        help="where to write events/, composites/, errors/ and cel/ "
                             "(replaced; with --checkpoint, their run=N partition; checked "
                             "before any work; required but with --show-keys)")
    replay.add_argument("--engine", choices=("auto", "spark", "local"), default="auto",
                        help="auto (the default): Spark when a Spark option or a configured "
                             "master names it or the input is 256 MB or more, else this "
                             "process (the summary says which and why); spark: an embedded "
                             "local[*] Spark session, or the configured master; local: this "
                             "process alone, no JVM")
    replay.add_argument("--master", metavar="URL",
                        help="Spark master (default: the one Spark's configuration names — "
                             "--conf spark.master, spark-submit's, MASTER, "
                             "PYSPARK_SUBMIT_ARGS, spark-defaults.conf — else an embedded "
                             "local[*] session)")
    replay.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting, e.g. spark.executor.memory=2g; wins over the "
                             "session's defaults (repeatable)")
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
                             "bound by -n), or auto: keys inferred from the history (the "
                             "default when no --key is given; given keys win for their "
                             "elements) (repeatable)")
    replay.add_argument("--no-key", dest="no_key", action="store_true",
                        help="no key at all, none inferred: plain diffing")
    replay.add_argument("--show-keys", action="store_true",
                        help="infer the keys, print them with their evidence, and stop "
                             "(nothing is replayed)")
    replay.add_argument("--no-unique-tags", dest="unique_tags", action="store_false",
                        help="do not match a child whose tag is unique among its siblings in "
                             "both versions to its namesake before similarity (default: do)")
    replay.add_argument("--no-identical-subtrees", dest="identical_subtrees",
                        action="store_false",
                        help="compare unchanged subtrees node by node, as xmldiff alone does, "
                             "instead of matching them whole by their serialisations "
                             "(slower; look-alike siblings aligned by position; default: "
                             "whole; issue 29)")
    # Accepted as before issue 29 made it the default; it changes nothing.
    replay.add_argument("--identical-subtrees", dest="identical_subtrees",
                        action="store_true", help=argparse.SUPPRESS)
    replay.add_argument("--within", type=window_argument, default=None, metavar="TICKS",
                        help="the window of every operator that sets none, in ticks of a "
                             "document's event stream, or a duration such as 30d of the "
                             "versions' times (default: none)")
    replay.add_argument("--show", type=_at_least(0), default=5, metavar="N",
                        help="composite events of each type to print, 0 or more (default: 5)")
    replay.add_argument("--quiet", "-q", action="store_true",
                        help="no progress on stderr and nothing from Spark's JVM: only the "
                             "summary (and warnings)")
    # Continuous replay (issue 29, item 5): HISTORY is the folder new version files arrive
    # in, or kafka://HOST:PORT/TOPIC.
    replay.add_argument("--follow", action="store_true",
                        help="keep replaying: new version rows arriving in the HISTORY folder "
                             "(JSON lines, .gz, Parquet), or from kafka://HOST:PORT/TOPIC, are "
                             "replayed as they come on Spark Structured Streaming, each "
                             "document going on from its state; micro-batch N is written to "
                             "DIR/<output>/batch=N, exactly once across a restart (needs "
                             "--checkpoint; Spark only)")
    replay.add_argument("--checkpoint", metavar="CKPT",
                        help="the checkpoint folder (made if missing; a path or file:// of "
                             "this machine): run after run, only the versions it has not "
                             "read are replayed, each document going on from its state, and "
                             "run N's rows go to DIR/<output>/run=N (replaced on a rerun); "
                             "with --follow, the fingerprint and Spark's checkpointLocation "
                             "with each document's state (CKPT/stream); another set of "
                             "definitions or options is refused")
    replay.add_argument("--checkpoint-reset", action="store_true",
                        help="empty the checkpoint first: the history is replayed from the "
                             "start")
    replay.add_argument("--trigger", type=_seconds, metavar="SECONDS",
                        help="with --follow: a micro-batch every SECONDS (default: the next "
                             "as soon as one ends)")
    replay.add_argument("--available-now", action="store_true",
                        help="with --follow: replay what has arrived, in micro-batches, and "
                             "stop (Spark's Trigger.AvailableNow: for a cron job)")
    replay.add_argument("--max-files", type=_at_least(1), metavar="N",
                        help="with --follow: new files of each kind (JSON lines, Parquet) "
                             "per micro-batch, at least 1 (default: 8)")


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Replay the table; 0, or a :class:`~._common.Failure` (1: bad input, before any work;
    3: Spark cannot start)."""
    _replay(args, streams.out, streams.err)
    return 0


def _keys(args: argparse.Namespace, namespaces: dict[str, str]
          ) -> tuple[tuple[Key, ...], bool]:
    """The ``--key`` declarations as keys, and whether keys are inferred (no ``--key``, or
    ``--key auto``); none with ``--no-key`` (a bad one, or ``--no-key`` with keys: a
    Failure naming it)."""
    from xmlevents.replay import AUTO, DiffOptions, Key, KeySpecError

    specs: list[str] = args.key
    if args.no_key:
        if specs:
            raise Failure(f"--no-key and --key {specs[0]}: give one", USAGE)
        if args.show_keys:
            raise Failure("--no-key and --show-keys: give one", USAGE)
        return (), False
    infer = not specs or any(spec.strip() == AUTO for spec in specs)
    try:
        keys = tuple(Key.parse(spec, namespaces) for spec in specs if spec.strip() != AUTO)
        DiffOptions(keys=keys)  # two keys for one element
    except KeySpecError as exc:
        raise Failure(f"--key: {exc}") from None
    if args.show_keys and not infer:
        raise Failure("--show-keys shows the keys inferred: add --key auto", USAGE)
    return keys, infer


def _spark_conf(pairs: list[str]) -> dict[str, str]:
    """``--conf KEY=VALUE`` as settings (the last of a key wins, as in ``spark-submit``).

    Raises:
        Failure: no ``=``, or a key that is not a Spark setting (``spark.`` ...; Hadoop's are
            ``spark.hadoop.*``), status 1.
    """
    conf: dict[str, str] = {}
    for pair in pairs:
        key, value = name_value("--conf", pair, "spark.executor.memory=2g")
        if not key.startswith("spark."):
            raise Failure(f"--conf {pair!r}: {key!r} is not a Spark setting (those start with "
                          "spark.; Hadoop's are spark.hadoop.*)")
        conf[key] = value
    return conf


def _local_output(args: argparse.Namespace, conf: dict[str, str]) -> bool:
    """Whether ``--out`` is a folder of this machine, checked before Spark starts: always in
    process; on Spark, a path without a scheme for a local master (``--master``, ``--conf
    spark.master``, ``MASTER``, ``PYSPARK_SUBMIT_ARGS``, ``spark-defaults.conf`` or the
    embedded ``local[*]``: :func:`~xmlevents.replay.resolve_master`). Anything else is
    checked on the file system Spark writes it with, once Spark runs
    (:func:`~xmlevents.replay.check_spark_output`)."""
    if args.engine == "local":
        return True
    from xmlevents.replay import resolve_master

    return resolve_master(args.master, conf).local is True and "://" not in args.out


def _check_out(out: str) -> None:
    """``--out`` checked before any work (before the table is read, before Spark starts):
    :func:`~._common.check_output_folder`. A URI other than ``file://`` (``hdfs://...``)
    is left to Spark."""
    if "://" in out:
        if not out.startswith("file://"):
            return
        check_output_folder("--out", urlparse(out).path)
    else:
        check_output_folder("--out", out)


def _replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    started = time.perf_counter()
    if args.out is None and not args.show_keys:
        raise Failure("the following arguments are required: --out/-o", USAGE)
    namespaces = parse_namespaces(args.namespace)
    definitions = definition_text(args, namespaces)  # checked before any work
    keys, infer = _keys(args, namespaces)  # so are the keys
    if args.show_keys:
        from xmlevents.replay import DiffOptions

        if not os.path.exists(args.history):
            raise Failure(f"{args.history}: no such file or folder")
        _show_keys(args, DiffOptions(keys=keys, infer_keys=True), out)
        return
    queries = _cel_queries(args.cel)  # and the CEL queries
    conf = _spark_conf(args.conf)
    _check_follow(args)  # --follow's options: usage errors before any work
    history_named = args.follow and args.history.startswith("kafka://")
    if not history_named and not os.path.exists(args.history):
        raise Failure(f"{args.history}: no such file or folder")
    chosen = choose_engine(args, conf)
    args.engine = chosen.engine
    if args.engine == "local":
        given = [o for o, v in (("--master", args.master), ("--conf", args.conf or None),
                                ("--partitions", args.partitions)) if v is not None]
        if given:
            raise Failure(f"{' and '.join(given)}: Spark's, and --engine local runs "
                               "without Spark: drop them or use --engine spark")
        if "://" in args.out:
            raise Failure(f"--out {args.out}: --engine local writes to a folder of this "
                               "machine: give its path")
    if args.follow and not history_named and not os.path.isdir(args.history):
        raise Failure(f"{args.history}: --follow reads a folder new version files arrive in "
                      "(or kafka://HOST:PORT/TOPIC), not a file")
    if _local_output(args, conf):
        _check_out(args.out)  # so is the output folder (on a cluster: once Spark runs)
    from xmlevents.replay import DiffOptions

    from .progress import progress_for

    options = DiffOptions(fast_match=args.fast_match, uniqueattrs=(
        *DiffOptions().uniqueattrs, *args.unique_attr), keys=keys, infer_keys=infer,
        unique_tags=args.unique_tags, identical_subtrees=args.identical_subtrees)
    if args.follow:
        if "auto" in args.key:
            raise Failure("--key auto and --follow: a follower infers no keys (what would "
                          "it read first?): give the keys (xmlevents replay --show-keys on "
                          "the versions so far prints them)", USAGE)
        options = replace(options, infer_keys=False)
        _run_follow(args, conf, definitions, namespaces, options, queries, out, err)
        return
    progress = progress_for(err, args.quiet)
    try:
        if args.engine == "local":
            report = _run_local(args, definitions, namespaces, options, progress, queries)
        else:
            report = _run_spark(args, conf, definitions, namespaces, options, progress,
                                queries)
    finally:
        progress.close()
    names: list[str] = []
    if definitions is not None:
        from xmlevents.algebra import DefinitionSet

        names = [d.name for d in DefinitionSet.of(definitions, namespaces=namespaces or None)]
    _summary(out, args, report, time.perf_counter() - started, names, chosen.reason)
    # Said after the summary, never fatal: a key that named no element in any version
    # (every element is inserted once, version 0 inserting the whole document), a definition
    # that matched nothing for want of a namespace.
    for key in report.unselected:
        err.write(f"xmlevents replay: warning: {key.nothing_selected()}\n")
    for hint in report.hints:
        err.write(f"xmlevents replay: warning: {hint.cli()}\n")


def _show_keys(args: argparse.Namespace, options: DiffOptions, out: TextIO) -> None:
    """``--show-keys``: the keys inferred from the table (read in process, its sample
    parsed), each with its evidence and its declaration, and those given."""
    from xmlevents.replay import show_keys

    try:
        given, inferred = show_keys(args.history, options)
    except XmlEventsError as exc:
        raise Failure(exc.for_cli()) from None
    out.write(f"keys of {args.history}\n")
    namespaces = parse_namespaces(args.namespace)
    for key in given:
        out.write(f"  {key.label:<30} given: --key {key.declaration(namespaces)}\n")
    for k in inferred:
        out.write(f"  {k.key.label:<30} {k.evidence()}\n"
                  f"  {'':<30} --key {k.key.declaration(namespaces)}\n")
    if not inferred:
        out.write("  none inferred: no element that repeats among its siblings has a field "
                  "present in nearly every one, unique among them and stable\n")


def _run_local(args: argparse.Namespace, definitions: str | None, namespaces: dict[str, str],
               options: DiffOptions, progress: ReplayProgress, queries: list[str]
               ) -> ReplayReport:
    from xmlevents.replay import run_local

    try:
        return run_local(args.history, args.out, definitions, options=options,
                         namespaces=namespaces, within=args.within, show=args.show,
                         progress=progress, queries=queries, checkpoint=args.checkpoint,
                         reset=args.checkpoint_reset)
    except XmlEventsError as exc:  # a version table that cannot be read, ...
        raise Failure(exc.for_cli()) from None
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else f"{args.out}: "
        raise Failure(f"cannot write {where}{exc.strerror or exc}") from None


def _start_spark(stack: contextlib.ExitStack, args: argparse.Namespace,
                 conf: dict[str, str]) -> Any:
    """The command's SparkSession, entered in ``stack`` (a session already running, a
    caller's, is used and left running), and ``--out`` checked on the file system that
    writes it when the master is not local, before any table is read. Quiet: the JVM's
    stderr (its own warnings, the workers') goes to a file, kept and named only if Spark
    cannot start."""
    import tempfile

    from xmlevents.replay import OutputLocationError, check_spark_output, spark_session

    log = None
    if args.quiet:
        fd, log = tempfile.mkstemp(prefix="xmlevents-jvm-", suffix=".log")
        os.close(fd)
    try:
        spark = stack.enter_context(spark_session(args.master, progress=False, jvm_log=log,
                                                  **conf))
    except Exception as exc:  # Java missing, a bad master URL, ...
        kept = f" (the JVM's messages: {log})" if log is not None else ""
        raise Failure(f"cannot start Spark: {_first_line(exc)}{kept}", ENVIRONMENT) from None
    if log is not None:
        stack.callback(_remove, log)
    if not _local_output(args, conf):
        try:
            check_spark_output(spark, args.out)
        except OutputLocationError as exc:
            raise Failure(f"--out {exc}") from None
    return spark


def _run_spark(args: argparse.Namespace, conf: dict[str, str], definitions: str | None,
               namespaces: dict[str, str], options: DiffOptions, progress: ReplayProgress,
               queries: list[str]) -> ReplayReport:
    from xmlevents.replay import resolve_master, run_spark

    choice = resolve_master(args.master, conf)
    progress.stage(f"starting Spark ({choice.url or choice.source})")
    with contextlib.ExitStack() as stack:
        start = time.perf_counter()
        spark = _start_spark(stack, args, conf)
        started = time.perf_counter() - start
        try:
            report = run_spark(spark, args.history, args.out, definitions, options=options,
                               namespaces=namespaces, partitions=args.partitions,
                               within=args.within, show=args.show, progress=progress,
                               queries=queries, checkpoint=args.checkpoint,
                               reset=args.checkpoint_reset)
        except XmlEventsError as exc:  # a version table that cannot be read, ...
            raise Failure(exc.for_cli()) from None
        except Exception as exc:
            if not type(exc).__module__.startswith("py4j"):
                raise
            # The JVM died or dropped the connection mid-job (out of memory, killed): the
            # environment's, in one line.
            raise Failure(f"Spark stopped mid-job: {_first_line(exc)} (if its memory ran "
                          "out, give it more: --conf spark.driver.memory=4g)",
                          ENVIRONMENT) from None
    report.times.insert(0, ("Spark start", started))
    return report


def _check_follow(args: argparse.Namespace) -> None:
    """``--follow`` and its options, checked together (a usage error, status 2)."""
    given = [o for o, v in (("--trigger", args.trigger is not None),
                            ("--available-now", args.available_now),
                            ("--max-files", args.max_files is not None)) if v]
    if not args.follow:
        if given:
            raise Failure(f"{' and '.join(given)}: --follow's; add --follow", USAGE)
        if args.checkpoint_reset and args.checkpoint is None:
            raise Failure("--checkpoint-reset: resets --checkpoint CKPT; give it", USAGE)
        return
    if args.engine == "local":
        raise Failure("--follow runs on Spark Structured Streaming: drop --engine local",
                      USAGE)
    if args.checkpoint is None:
        raise Failure("--follow needs --checkpoint CKPT: where each document's state and "
                      "Spark's progress are kept across restarts", USAGE)
    if args.trigger is not None and args.available_now:
        raise Failure("--trigger and --available-now: give one (a micro-batch every "
                      "SECONDS, or what has arrived and stop)", USAGE)


def _run_follow(args: argparse.Namespace, conf: dict[str, str], definitions: str | None,
                namespaces: dict[str, str], options: DiffOptions, queries: list[str],
                out: TextIO, err: TextIO) -> None:
    """``--follow``: a Structured Streaming query on a session started here, a line per
    micro-batch on stderr (unless ``-q``), until it stops (``--available-now``) or Ctrl-C
    (KeyboardInterrupt: the query stopped first, status 130)."""
    from xmlevents.replay import BatchReport, follow

    if not args.quiet:
        err.write(f"following {args.history} -> {args.out} (checkpoint {args.checkpoint})\n")
    batches: list[BatchReport] = []

    def report(r: BatchReport) -> None:
        batches.append(r)
        if not args.quiet:
            err.write(f"{r.line()}\n")
            err.flush()

    def stopping() -> None:
        err.write("stopping once the micro-batch in flight is written (Ctrl-C again: at "
                  "once, and it runs again at the next start)\n")

    with contextlib.ExitStack() as stack:
        spark = _start_spark(stack, args, conf)
        try:
            follower = follow(spark, args.history, args.out, args.checkpoint, definitions,
                              options=options, namespaces=namespaces, within=args.within,
                              queries=queries, trigger=args.trigger,
                              available_now=args.available_now, max_files=args.max_files or 8,
                              partitions=args.partitions, reset=args.checkpoint_reset)
            follower.run(report, on_stopping=None if args.quiet else stopping)
        except XmlEventsError as exc:  # another checkpoint, no Kafka connector, a failure
            raise Failure(exc.for_cli()) from None
    total = {k: sum(getattr(b, k) for b in batches)
             for k in ("versions", "events", "composites", "errors", "cel")}
    out.write(f"followed {args.history} -> {args.out}: {len(batches):,} micro-batches, "
              f"{total['versions']:,} versions replayed, {total['events']:,} events, "
              f"{total['composites']:,} composites, {total['errors']:,} errors, "
              f"{total['cel']:,} CEL rows\n")


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _first_line(exc: BaseException) -> str:
    """An exception's message up to its first line break; for Py4J's (``An error occurred
    while calling o609.collectToPython.`` and then the Java stack), the Java exception's own
    line after it — what failed, not where (at most 400 characters)."""
    try:
        text = str(exc).strip() or type(exc).__name__
    except Exception:  # a dead JVM cannot say: the type must do
        return type(exc).__name__
    lines = text.splitlines()
    cause = next((line[2:].strip() for line in lines[1:] if line.startswith(": ")), None)
    first = lines[0] if cause is None else f"{lines[0]} {cause}"
    return first if len(first) <= 400 else first[:399] + "…"


def _summary(out: TextIO, args: argparse.Namespace, report: ReplayReport, seconds: float,
             names: list[str] | None = None, reason: str | None = None) -> None:
    # The rows saying which keys were inferred are in the errors table, not errors: the
    # "keys inferred" line says it here.
    errors = [e for e in report.errors if not (e["stage"] == "key" and e["doc"] is None)]
    # Every definition, a zero included: a definition that matched nothing is said, not
    # left out (issue 30, item 5).
    counts = {name: 0 for name in names or ()}
    counts.update(report.composites)
    types = sorted(counts.items())
    parts = ", ".join(f"{name} {s:.1f} s" for name, s in report.times)
    w = out.write
    w(f"replayed {args.history} -> {args.out}\n")
    # The reason, unless the master's source already says it ("from --master").
    said = reason is None or ", from " in report.where
    w(f"  engine            {report.engine} ({report.where})"
      + ("" if said else f", chosen: {reason}") + "\n")
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
    if report.inferred is not None:
        lines = [f"{k.key.label} ({k.evidence()})" for k in report.inferred] or ["none"]
        w("  keys inferred     " + "\n                    ".join(lines) + "\n")
    elif report.reused is not None:
        w("  keys inferred     " + (", ".join(report.reused) or "none")
          + " (by the checkpoint's first run)\n")
    if report.run is not None:
        w(f"  checkpoint        {args.checkpoint}: {report.run.line()}\n")
    w(f"  time              {seconds:.1f} s" + (f" ({parts})\n" if parts else "\n"))
    if report.shown:
        w(f"first {args.show} of each type (doc, version, tick, where):\n")
        for r in report.shown:
            w(f"  {r['type']:<16} {r['doc']}  v{r['version']}  ts {r['ts']}  "
              f"{r['path_prefixed']}[{', '.join(r['ids'])}]\n")
    for e in errors[:20]:
        where = f", line {e['line']}, column {e['column']}" if e["line"] is not None else ""
        version = f" version {e['version']}" if e["version"] is not None else ""
        if e["doc"] is None and not version and not where and str(e["message"]).startswith(
                (args.history, os.path.basename(args.history))):
            w(f"  error: {e['message']}\n")  # it names the file and the place already
        else:
            w(f"  error: {e['doc'] or args.history}{version}{where}: {e['message']}\n")
    if len(errors) > 20:
        w(f"  ... {len(errors) - 20} more in {args.out}/errors\n")
