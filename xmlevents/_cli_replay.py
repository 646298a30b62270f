"""``xmlevents replay`` and ``xmlevents history from-git`` (issue 6, DESIGN sections 6-7).

Kept apart from the other commands so that ``detect`` and ``graph`` never import lxml,
xmldiff or pyspark: those are imported (through :mod:`xmlevents.replay`, which owns pyspark)
when these commands run.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from xmlevents.algebra import XmlEventsError

from ._cli_common import window_argument

if TYPE_CHECKING:  # imported when the command runs: detect and graph never load lxml
    from xmlevents.replay import Key

__all__ = ["CommandError", "add_parsers", "run"]


class CommandError(XmlEventsError, ValueError):
    """A bad input or environment, already worded for the user (exit status 1); a
    ``ValueError`` like the other commands' failures."""


def add_parsers(sub: Any, add_definition_options: Callable[[argparse.ArgumentParser], None]
                ) -> None:
    replay = sub.add_parser(
        "replay", help="diff the versions of documents into events and detect composites",
        description="Read a version table (doc, version, xml) — JSON lines (.jsonl, .gz), "
                    "Parquet, or a folder of DOC/VERSION.xml files — diff each document's "
                    "consecutive versions into primitive events with node ids carried across "
                    "versions, detect the defined composite events per document, and write "
                    "DIR/events, DIR/composites and DIR/errors as Parquet datasets (on Spark).")
    replay.add_argument("history", metavar="HISTORY", help="the version table")
    add_definition_options(replay)
    replay.add_argument("--namespace", "-n", action="append", default=[], metavar="P=URI",
                        help="a prefix for the definitions, e.g. "
                             "pom=http://maven.apache.org/POM/4.0.0 (repeatable)")
    replay.add_argument("--out", "-o", required=True, metavar="DIR",
                        help="where to write events/, composites/ and errors/ (replaced)")
    replay.add_argument("--master", metavar="URL",
                        help="Spark master (default: an embedded local[*] session; under "
                             "spark-submit, the one it was given)")
    replay.add_argument("--partitions", type=int, metavar="N",
                        help="partitions of the diff stage (default: 4 per core)")
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
    replay.add_argument("--show", type=int, default=5, metavar="N",
                        help="composite events of each type to print (default: 5)")
    replay.add_argument("--quiet", "-q", action="store_true",
                        help="no progress on stderr, only the summary")

    history = sub.add_parser("history", help="build version tables",
                             description="Build version tables for `xmlevents replay`.")
    hsub = history.add_subparsers(dest="history_command", required=True, metavar="SOURCE")
    git = hsub.add_parser(
        "from-git", help="every committed version of one XML file in a git repository",
        description="Export every committed version of PATH in the git repository REPO, "
                    "oldest first, as a version table (doc, version, commit, time, xml) in "
                    "JSON lines (gzip-compressed if FILE ends in .gz).")
    git.add_argument("repo", metavar="REPO", help="the repository (a working tree or bare)")
    git.add_argument("path", metavar="PATH", help="the file, relative to the repository root")
    git.add_argument("-o", "--output", required=True, metavar="FILE",
                     help="the version table to write (.jsonl or .jsonl.gz)")
    git.add_argument("--doc", metavar="NAME", help="the document's name (default: PATH)")


def run(args: argparse.Namespace, out: TextIO, err: TextIO,
        definition_text: Callable[[argparse.Namespace, dict[str, str]], str | None]) -> None:
    if args.command == "history":
        _from_git(args, out)
    else:
        _replay(args, out, err, definition_text)


def _from_git(args: argparse.Namespace, out: TextIO) -> None:
    from xmlevents.replay import git_history, write_versions

    try:
        count = write_versions(git_history(args.repo, args.path, doc=args.doc), args.output)
    except XmlEventsError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write {args.output}: {exc.strerror}") from None
    out.write(f"{count} versions of {args.path} written to {args.output}\n")


def _namespaces(pairs: list[str]) -> dict[str, str]:
    namespaces = {}
    for pair in pairs:
        prefix, eq, uri = pair.partition("=")
        if not eq or not prefix or not uri:
            raise CommandError(f"--namespace {pair!r}: expected PREFIX=URI")
        namespaces[prefix] = uri
    return namespaces


def _keys(specs: list[str], namespaces: dict[str, str]) -> tuple[Key, ...]:
    """The ``--key`` declarations as keys (a bad one: a CommandError naming it)."""
    from xmlevents.replay import DiffOptions, Key, KeySpecError

    try:
        keys = tuple(Key.parse(spec, namespaces) for spec in specs)
        DiffOptions(keys=keys)  # two keys for one element
    except KeySpecError as exc:
        raise CommandError(f"--key: {exc}") from None
    return keys


class _Progress:
    """Stage lines on stderr, each with the time since the start."""

    def __init__(self, err: TextIO, quiet: bool) -> None:
        self.err, self.quiet, self.start = err, quiet, time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def __call__(self, message: str) -> None:
        if not self.quiet:
            self.err.write(f"[{self.elapsed():6.1f} s] {message}\n")
            self.err.flush()


def _replay(args: argparse.Namespace, out: TextIO, err: TextIO,
            definition_text: Callable[[argparse.Namespace, dict[str, str]], str | None]
            ) -> None:
    namespaces = _namespaces(args.namespace)
    definitions = definition_text(args, namespaces)  # checked before Spark starts
    keys = _keys(args.key, namespaces)  # so are the keys
    if not os.path.exists(args.history):
        raise CommandError(f"{args.history}: no such file or folder")
    progress = _Progress(err, args.quiet)
    progress("starting Spark" + (f" ({args.master})" if args.master else " (local)"))
    from xmlevents.replay import (
        DiffOptions,
        active_session,
        make_session,
        read_versions_df,
        replay_frames,
        write_frames,
    )

    ours = active_session() is None  # a caller's session is left running
    try:
        spark = make_session(args.master, progress=not args.quiet)
    except Exception as exc:  # Java missing, a bad master URL, ...
        raise CommandError(f"cannot start Spark: {exc}") from None
    frames = None
    try:
        versions, unreadable = read_versions_df(spark, args.history)  # VersionTableError
        progress(f"reading {args.history}; checking, diffing and replaying its versions")
        options = DiffOptions(fast_match=args.fast_match, uniqueattrs=(
            *DiffOptions().uniqueattrs, *args.unique_attr), keys=keys,
            unique_tags=args.unique_tags)
        frames = replay_frames(spark, versions, definitions, options=options,
                               namespaces=namespaces or None, partitions=args.partitions,
                               within=args.within)
        tagged = frames.tagged
        assert tagged is not None  # replay_frames always returns the table it split
        counts = tagged.groupBy("record", "type").count().collect()  # runs the job
        progress(f"writing {args.out}/events, composites, errors")
        write_frames(frames, args.out, unreadable)
        # Read back: computing them again would read the input again (duplicates, bad lines).
        error_rows = spark.read.parquet(f"{args.out}/errors").orderBy("doc", "version").collect()
        shown = frames.first_composites(args.show)
        # A key that named no element in any version: said, never fatal (every element is
        # inserted once, version 0 inserting the whole document).
        for key in frames.unselected(keys):
            err.write(f"xmlevents replay: warning: {key.nothing_selected()}\n")
        documents = tagged.where("record = 'version'").select("doc").distinct().count()
    except XmlEventsError as exc:  # a version table that cannot be read, ...
        raise CommandError(str(exc)) from None
    finally:
        if frames is not None:
            frames.unpersist()
        if ours:
            spark.stop()
    seconds = progress.elapsed()
    _summary(out, args, counts, documents, error_rows, shown, seconds)


def _summary(out: TextIO, args: argparse.Namespace, counts: list[Any], documents: int,
             errors: list[Any], shown: list[Any], seconds: float) -> None:
    by = {(r["record"], r["type"]): r["count"] for r in counts}
    versions = sum(c for (rec, _), c in by.items() if rec == "version")
    events = sum(c for (rec, _), c in by.items() if rec == "event")
    types = sorted((t, c) for (rec, t), c in by.items() if rec == "composite")
    w = out.write
    w(f"replayed {args.history} -> {args.out}\n")
    w(f"  documents         {documents:,}\n")
    w(f"  versions          {versions:,} replayed, {len(errors):,} "
      f"error{'' if len(errors) == 1 else 's'}\n")
    w(f"  primitive events  {events:,}\n")
    if types:
        w("  composite events  " + ", ".join(f"{t} {c:,}" for t, c in types) + "\n")
    else:
        w("  composite events  none" + (" defined\n" if not args.define and not args.definitions
                                        else "\n"))
    w(f"  time              {seconds:.1f} s\n")
    if shown:
        w(f"first {args.show} of each type (doc, version, tick, where):\n")
        for r in shown:
            w(f"  {r['type']:<16} {r['doc']}  v{r['version']}  ts {r['ts']}  "
              f"{r['path_prefixed']}[{', '.join(r['ids'])}]\n")
    for e in errors[:20]:
        where = f", line {e['line']}, column {e['column']}" if e["line"] is not None else ""
        version = f" version {e['version']}" if e["version"] is not None else ""
        w(f"  error: {e['doc'] or args.history}{version}{where}: {e['message']}\n")
    if len(errors) > 20:
        w(f"  ... {len(errors) - 20} more in {args.out}/errors\n")

