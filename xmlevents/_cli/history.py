"""``xmlevents history from-git``: build version tables for ``xmlevents replay`` (issue 6).

Kept apart so that ``detect`` and ``graph`` never import lxml: :mod:`xmlevents.replay` is
imported when the command runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from xmlevents.algebra import XmlEventsError

from ._common import Failure, Streams, check_output_file

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """``history``'s parser, with its source ``from-git``."""
    history = sub.add_parser("history", help="build version tables",
                             description="Build version tables for `xmlevents replay`.")
    hsub = history.add_subparsers(dest="history_command", required=True, metavar="SOURCE")
    git = hsub.add_parser(
        "from-git", help="every committed version of one XML file in a git repository",
        description="Export every committed version of PATH in the git repository REPO, "
                    "oldest first, as a version table (doc, version, commit, time, xml) in "
                    "JSON lines (gzip-compressed if FILE ends in .gz). A FILE of another "
                    "extension or in a folder that cannot be written, or a PATH whose first "
                    "version is not XML, is refused before anything is written.")
    git.add_argument("repo", metavar="REPO", help="the repository (a working tree or bare)")
    git.add_argument("path", metavar="PATH", help="the file, relative to the repository root")
    git.add_argument("-o", "--output", required=True, metavar="FILE",
                     help="the version table to write, as JSON lines: a name ending in "
                          ".jsonl, .json or .ndjson, then .gz to compress it (checked before "
                          "git runs)")
    git.add_argument("--doc", metavar="NAME", help="the document's name (default: PATH)")


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Run the source named (``from-git``, the only one); 0, or a
    :class:`~._common.Failure`."""
    return _SOURCES[args.history_command](args, streams)


def _from_git(args: argparse.Namespace, streams: Streams) -> int:
    """``history from-git``: refuses an output it cannot write before git runs, and a file
    whose first version is not XML before the output is created (a failure later leaves the
    output as it was: write_versions replaces it whole)."""
    from xmlevents.replay import git_history, write_versions

    check_output_file("-o", args.output)

    def rows() -> Iterator[dict[str, Any]]:
        # git runs when write_versions asks for the first row: after it has checked the name.
        yield from git_history(args.repo, args.path, doc=args.doc)

    try:
        count = write_versions(rows(), args.output)
    except XmlEventsError as exc:
        raise Failure(exc.for_cli()) from None
    except OSError as exc:
        raise Failure(f"cannot write {args.output}: {exc.strerror or exc}") from None
    streams.out.write(f"{count} versions of {args.path} written to {args.output}\n")
    return 0


_SOURCES = {"from-git": _from_git}
