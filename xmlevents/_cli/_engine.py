"""``xmlevents replay --engine auto`` (issue 30, item 4): the engine chosen for the input.

Spark when the command names Spark (``--master``, ``--conf``, ``--partitions``, ``--follow``,
an ``--out`` on another file system) or Spark's own configuration names a master
(``spark-submit``, ``MASTER``, ``PYSPARK_SUBMIT_ARGS``, ``spark-defaults.conf``: the sources
:func:`~xmlevents.replay.resolve_master` reads); otherwise this process, unless the input is
large (:data:`LARGE` bytes as stored) and pyspark is installed. The local engine holds only
the live state and writes as it goes (issue 29), so size is what Spark is for: spreading many
documents over cores and machines. The reason goes to the summary's engine line.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["LARGE", "EngineChoice", "choose_engine", "input_size"]

# Input bytes (as stored: compressed, Parquet, or a folder's files) from which the automatic
# choice is Spark. Under it, on the 2-core machine of docs/benchmarks.md, the local engine was
# faster at every size measured (no JVM start, no stages, no Arrow between them).
LARGE = 256_000_000


@dataclass(frozen=True)
class EngineChoice:
    """The engine a replay runs on, and why (None: ``--engine`` named it)."""

    engine: str
    reason: str | None = None


def input_size(path: str, stop: int = LARGE) -> int:
    """The bytes of the file ``path``, or of the files under the folder ``path`` (counted up
    to ``stop``: a huge folder is not walked to its end to learn that it is large)."""
    if not os.path.isdir(path):
        return os.path.getsize(path)
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                continue  # gone meanwhile, or a dangling link: the reader says so
            if total >= stop:
                return total
    return total


def _megabytes(size: int) -> str:
    if size < 10**6:
        return f"{size:,} bytes"
    return f"{size / 1e6:,.1f} MB" if size < 10**9 else f"{size / 1e9:,.1f} GB"


def choose_engine(args: argparse.Namespace, conf: Mapping[str, str],
                  environ: Mapping[str, str] | None = None) -> EngineChoice:
    """The engine for ``args`` (``--engine auto``: see the module); the history must exist
    unless it is a Kafka topic (a follower's, on Spark)."""
    if args.engine != "auto":
        return EngineChoice(args.engine)
    named = [flag for flag, given in (("--master", args.master is not None),
                                      ("--conf", bool(conf)),
                                      ("--partitions", args.partitions is not None),
                                      ("--follow", args.follow)) if given]
    if named:
        return EngineChoice("spark", f"{' and '.join(named)} given")
    out = args.out or ""
    if "://" in out and not out.startswith("file://"):
        return EngineChoice("spark", f"--out on {out.split('://')[0]}://")
    from xmlevents.replay import resolve_master

    master = resolve_master(None, {}, environ)
    if master.source:
        return EngineChoice("spark", f"a master from {master.source}")
    size = input_size(args.history)
    if size < LARGE:
        return EngineChoice("local", f"{_megabytes(size)} of input, under "
                                     f"{_megabytes(LARGE)}, and no Spark master configured")
    if importlib.util.find_spec("pyspark") is None:
        return EngineChoice("local", f"{_megabytes(size)} of input, but pyspark is not "
                                     "installed (pip install 'xmlevents[spark]')")
    return EngineChoice("spark", f"{_megabytes(size)} of input, {_megabytes(LARGE)} or more")
