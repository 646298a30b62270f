"""Every committed version of one XML file in a git repository, as version-table rows (issue 6):
what ``xmlevents history from-git`` exports, so a file's git history can be replayed as events.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import posixpath
import re
import shutil
import subprocess
from collections.abc import Generator, Iterator
from pathlib import PurePath
from typing import IO, Any

from lxml import etree

from ._errors import BadVersion, GitHistoryError
from ._script import parse_plain

__all__ = ["git_history", "decode_xml_bytes"]


# Variables that would make git look at another repository than the one passed with -C (they
# are set inside git hooks, for instance) or reinterpret the pathspec we build.
_GIT_ENV_OVERRIDES = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX",
    "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
)

# The XML declaration is ASCII in every ASCII-compatible encoding; encodings that are not
# (UTF-16/32) are told apart by their byte order mark below, as the XML spec's appendix F does.
_DECLARED_ENCODING = re.compile(
    rb"<\?xml\s[^?>]*?\bencoding\s*=\s*([\"'])([A-Za-z][A-Za-z0-9._\-]*)\1")

# Longest first: the UTF-32 LE mark begins with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def git_history(repo: str | os.PathLike[str], path: str, *,
                doc: str | None = None) -> Iterator[dict[str, Any]]:
    """The committed versions of the file ``path`` (relative to the root of ``repo``), oldest
    first, as version-table rows ``{"doc", "version", "commit", "time", "xml"}``.

    ``doc`` defaults to the (normalised) path. Every commit of ``git log -- path`` reachable from
    HEAD is one version, numbered from 0, even when its content equals the previous one's;
    commits in which the file does not exist (deletions) are skipped without using a number.
    Renames are not followed. ``time`` is the committer time in unix seconds and ``xml`` the
    file's text, decoded as its XML declaration says (UTF-8 without one; a byte order mark wins
    and is stripped).

    The repository and the path are checked, the list of commits read, and the first version
    read and parsed, before this returns: only the first version decides whether the file is
    XML at all (a later version that is not well-formed is a row like any other, which the
    replay reports as an error row). The other versions are read lazily, all through one
    ``git cat-file --batch`` process; closing the iterator (``close()``) ends it early.

    Raises:
        GitHistoryError: if git is not installed, ``repo`` is not a git repository, ``path`` was
            never committed there (or is not a file), its first version is not well-formed
            XML (naming the commit and the parser's line and column), or a version cannot be
            decoded.
    """
    git_path = _normalise(path)
    where = f"{git_path!r} in {os.fspath(repo)!r}"
    git = shutil.which("git")
    if git is None:
        raise GitHistoryError(f"cannot read the history of {where}: git is not installed "
                              "(no 'git' on PATH)")
    base = [git, "-C", os.fspath(repo)]
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_OVERRIDES}

    inside = _run(base + ["rev-parse", "--git-dir"], env)
    if inside.returncode != 0:
        raise GitHistoryError(f"cannot read the history of {where}: not a git repository "
                              f"({_first_line(inside.stderr)})")
    if _run(base + ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], env).returncode != 0:
        raise GitHistoryError(f"{where}: the file was never committed (the repository has no "
                              "commits)")

    # ':(top,literal)' keeps the path relative to the root even when repo is a subdirectory of
    # the work tree, and stops '*' or '?' in a file name from acting as a glob. Config that
    # would follow renames or print signatures into the output is switched off.
    log = _run(base + ["-c", "log.follow=false", "-c", "log.showSignature=false", "log",
                       "--reverse", "--format=%H %ct", "--", f":(top,literal){git_path}"], env)
    if log.returncode != 0:
        raise GitHistoryError(f"cannot read the history of {where}: git log failed "
                              f"({_first_line(log.stderr)})")
    commits = [(sha, int(ct)) for sha, ct in
               (line.split() for line in log.stdout.decode("ascii").splitlines() if line)]
    if not commits:
        raise GitHistoryError(f"{where}: the file was never committed (no commit reachable "
                              "from HEAD touches it)")
    rows = _versions(base, env, git_path, doc or git_path, commits, where)
    try:
        first = next(rows)  # never StopIteration: _versions raises when there is no version
        _check_first(first, base, env, where)
    except BaseException:
        rows.close()  # ends the cat-file process
        raise
    return _Rows(first, rows)


def _check_first(row: dict[str, Any], base: list[str], env: dict[str, str], where: str) -> None:
    """Refuse a file whose first version is not well-formed XML (parsed as the replay parses
    every version): a text file, a JSON file, a truncated first commit. Its history would
    replay as nothing but error rows, after the whole export and a Spark start."""
    try:
        parse_plain(row["xml"])
    except etree.XMLSyntaxError as exc:
        bad = BadVersion.of(row["doc"], 0, exc)
        at = f"line {bad.line}, column {bad.column}: " if bad.line is not None else ""
        raise GitHistoryError(
            f"{where}: the first version (commit {_short(base, env, row['commit'])}) is not "
            f"XML: {at}{bad.message}; a version table holds XML documents") from None


def _short(base: list[str], env: dict[str, str], sha: str) -> str:
    """``sha`` abbreviated as git abbreviates it in this repository (``sha[:7]`` if that fails)."""
    done = _run(base + ["rev-parse", "--short", sha], env)
    short = done.stdout.decode("ascii", "replace").strip()
    return short if done.returncode == 0 and short else sha[:7]


class _Rows(Iterator[dict[str, Any]]):
    """What :func:`git_history` returns: the first row, read and checked before it returned,
    then the others as ``cat-file`` gives them; ``close()`` ends that process, as closing the
    generator would."""

    def __init__(self, first: dict[str, Any],
                 rest: Generator[dict[str, Any], None, None]) -> None:
        self._first: dict[str, Any] | None = first
        self._rest = rest

    def __next__(self) -> dict[str, Any]:
        first = self._first
        if first is not None:
            self._first = None
            return first
        return next(self._rest)

    def close(self) -> None:
        """End the iteration and git's process."""
        self._first = None
        self._rest.close()


def _versions(base: list[str], env: dict[str, str], path: str, doc: str,
              commits: list[tuple[str, int]], where: str
              ) -> Generator[dict[str, Any], None, None]:
    """The rows, reading each commit's blob from one ``cat-file --batch`` process."""
    try:
        proc = subprocess.Popen(base + ["cat-file", "--batch"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    except OSError as exc:
        raise GitHistoryError(f"{where}: cannot run git: {exc}") from exc
    assert proc.stdin is not None and proc.stdout is not None
    version = 0
    try:
        for sha, time in commits:
            # Without --buffer, cat-file flushes after each answer: asking for one blob at a
            # time can never deadlock on full pipes, and nothing is held beyond one version.
            try:
                proc.stdin.write(os.fsencode(f"{sha}:{path}") + b"\n")
                proc.stdin.flush()
            except BrokenPipeError:
                pass  # git has exited: _read_answer reports it with git's own message
            data = _read_answer(proc, proc.stdout, sha, where)
            if data is None:  # the file does not exist at this commit: it was deleted
                continue
            yield {"doc": doc, "version": version, "commit": sha, "time": time,
                   "xml": decode_xml_bytes(data, f"{path} at commit {sha}")}
            version += 1
    finally:
        # Also runs when the consumer stops early (generator closed): never leave git behind.
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        if proc.poll() is None:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
    if version == 0:
        # git log named commits but none holds a blob there (e.g. a submodule's gitlink).
        raise GitHistoryError(f"{where}: the path was never committed as a file")


def _read_answer(proc: subprocess.Popen[bytes], out: IO[bytes], sha: str,
                 where: str) -> bytes | None:
    """One ``cat-file --batch`` answer: the blob's bytes, or None when the path is missing."""
    header = out.readline()
    if not header:
        err = proc.stderr.read() if proc.stderr is not None else b""
        raise GitHistoryError(f"{where}: git cat-file stopped at commit {sha} "
                              f"({_first_line(err) or 'no message'})")
    fields = header.rstrip(b"\n").split(b" ")
    if fields[-1] == b"missing":
        return None
    if len(fields) != 3 or not fields[2].isdigit():
        raise GitHistoryError(f"{where}: unexpected answer from git cat-file at commit {sha}: "
                              f"{header!r}")
    kind, size = fields[1].decode("ascii"), int(fields[2])
    data = out.read(size + 1)  # the content, then the newline cat-file puts after it
    if len(data) != size + 1:
        raise GitHistoryError(f"{where}: git cat-file output ended early at commit {sha}")
    if kind != "blob":
        raise GitHistoryError(f"{where}: not a file at commit {sha} (a {kind})")
    return data[:-1]


def decode_xml_bytes(data: bytes, where: str) -> str:
    """XML bytes as text: by their byte order mark (stripped), else the encoding their XML
    declaration names, else UTF-8. Shared with the folder form of version tables (._tables).

    Raises:
        GitHistoryError: naming ``where`` and the byte offset, if the bytes do not decode.
    """
    skip, encoding = 0, "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            skip, encoding = len(bom), name
            break
    else:
        declared = _DECLARED_ENCODING.match(data)
        if declared is not None:
            encoding = declared.group(2).decode("ascii")
            try:
                family = codecs.lookup(encoding).name
            except LookupError:
                raise GitHistoryError(f"{where}: unknown encoding {encoding!r} in the XML "
                                      "declaration") from None
            # A declaration readable as ASCII cannot be UTF-16/32 without a byte order mark:
            # the label is wrong, and like libxml2 we read the bytes as the UTF-8 they look.
            if family.startswith(("utf-16", "utf-32")):
                encoding = "utf-8"
    try:
        return data[skip:].decode(encoding)
    except UnicodeDecodeError as exc:
        raise GitHistoryError(f"{where}: not valid {encoding} at byte offset "
                              f"{skip + exc.start} ({exc.reason})") from None
    except LookupError as exc:  # a codec that exists but does not decode bytes to text
        raise GitHistoryError(f"{where}: cannot decode with encoding {encoding!r} "
                              f"({exc})") from None


def _normalise(path: str) -> str:
    """``path`` as git names it in a tree: relative to the root, '/'-separated, no './'."""
    pure = PurePath(path)
    text = posixpath.normpath(pure.as_posix()) if path else ""
    if pure.anchor or text in ("", ".", "..") or text.startswith(("/", "../")):
        raise GitHistoryError(f"path {path!r} must name a file relative to the repository "
                              "root")
    if "\n" in text:
        # cat-file --batch reads one request per line.
        raise GitHistoryError(f"path {path!r}: file names containing a newline are not "
                              "supported")
    return text


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(args, capture_output=True, env=env, check=False)
    except OSError as exc:  # git vanished between which() and here, or cannot be executed
        raise GitHistoryError(f"cannot run git: {exc}") from exc


def _first_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else ""
