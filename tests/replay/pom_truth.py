"""What a pom.xml history really changed, computed from the versions by key (issue 14, item 6).

The replay (:func:`xmlevents.replay.replay_history`) finds dependencies added and removed by
diffing consecutive versions and detecting composite events over the primitive events; this
module computes the same changes without any diff, so the replay can be measured against them:
a dependency is identified by its key, and a version adds the keys it has that the previous
good version lacks. One implementation, shared by ``tests/replay/test_truth.py`` and
``bench/bench_truth.py`` (which imports it through ``sys.path``; tests never import bench).

Choices (documented in ``docs/benchmarks.md``, "Truth on real histories"):

* A dependency's key is ``(parent, groupId, artifactId)``: the whitespace-stripped texts of its
  ``groupId`` and ``artifactId`` children (None where absent) and the path of its parent.
* The parent path is the local names of the elements from the root to the ``dependencies``
  element, e.g. ``project/dependencies``; a ``profile`` step carries the profile's ``id`` and a
  ``plugin`` step its ``groupId:artifactId`` (Maven's ``org.apache.maven.plugins`` where the
  groupId is left out), e.g. ``project/profiles/profile[benchmark]/dependencies``: the same
  coordinates in two profiles or under two plugins are two dependencies, which is what a person
  reading the POM would say. (On the two histories measured no profile or plugin with
  dependencies is renamed, so steps named by their tag alone give the same counts.)
* Keys are counted as a multiset: two equal dependencies under one parent count twice.
* "Added" (under a parent): keys present now and absent in the previous good version, so a
  dependency moved to another parent is a removal plus an addition. "Added anywhere": the same
  over ``(groupId, artifactId)`` without the parent, so a move is neither. The replay keyed
  among siblings sees the first; one keyed document-wide would see the second.
* Versions that are not well-formed are skipped, as the replay skips them: the next good version
  is compared with the last good one. Version 0 (the first good one) adds everything it has.
"""

from __future__ import annotations

import difflib
import gzip
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree

from xmlevents.replay import parse_version

__all__ = ["POM", "NAMESPACES", "DEFINITIONS", "DependencyKey", "VersionTruth", "read_rows",
           "good_versions", "dependency_keys", "truth", "changed_lines"]

#: The POM namespace, and the prefix the definitions use for it.
POM = "http://maven.apache.org/POM/4.0.0"
NAMESPACES = {"pom": POM}

#: The two composite events measured (the issue's definitions, as the language parses them).
DEFINITIONS = """\
DependencyAdded := ins(pom:dependency) ; (ins(pom:dependency/pom:groupId) & \
ins(pom:dependency/pom:artifactId))
DependencyRemoved := del(pom:dependency/pom:groupId) & del(pom:dependency/pom:artifactId)
"""

_NS = f"{{{POM}}}"
_DEFAULT_PLUGIN_GROUP = "org.apache.maven.plugins"

#: ``(parent path, groupId, artifactId)``.
DependencyKey = tuple[str, str | None, str | None]


@dataclass(frozen=True)
class VersionTruth:
    """The dependencies one good version adds and removes, against the previous good one."""

    version: int
    added: int  # keys (parent, groupId, artifactId) new in this version
    removed: int  # keys gone since the previous good version
    added_anywhere: int  # (groupId, artifactId) new anywhere in the document
    removed_anywhere: int  # (groupId, artifactId) gone from the whole document
    dependencies: int  # dependency elements in this version


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """A version table in JSON lines (gzip-compressed if the name ends in ``.gz``)."""
    opener: Any = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def good_versions(rows: Iterable[Mapping[str, Any]]) -> Iterator[tuple[int, str, Any]]:
    """``(version, xml, root)`` of every well-formed version in version order (one document:
    the histories measured have one); versions that do not parse are left out."""
    for row in sorted(rows, key=lambda r: int(r["version"])):
        try:
            root = parse_version(row["xml"])
        except etree.XMLSyntaxError:
            continue
        yield int(row["version"]), row["xml"], root


def _text(parent: Any, name: str) -> str | None:
    child = parent.find(_NS + name)
    if child is None:
        return None
    return (child.text or "").strip()


def _step(element: Any) -> str:
    """One step of a parent path: the local name, with the identity of a profile or plugin."""
    name = etree.QName(element).localname
    if element.tag == _NS + "profile":
        return f"{name}[{_text(element, 'id')}]"
    if element.tag == _NS + "plugin":
        group = _text(element, "groupId") or _DEFAULT_PLUGIN_GROUP
        return f"{name}[{group}:{_text(element, 'artifactId')}]"
    return name


def dependency_keys(root: Any) -> Counter[DependencyKey]:
    """The keys of every ``dependency`` element (POM namespace) under ``root``, counted."""
    keys: Counter[DependencyKey] = Counter()
    for dep in root.iter(_NS + "dependency"):
        steps = [_step(a) for a in dep.iterancestors()]
        steps.reverse()
        keys["/".join(steps), _text(dep, "groupId"), _text(dep, "artifactId")] += 1
    return keys


def _anywhere(keys: Counter[DependencyKey]) -> Counter[tuple[str | None, str | None]]:
    out: Counter[tuple[str | None, str | None]] = Counter()
    for (_, group, artifact), n in keys.items():
        out[group, artifact] += n
    return out


def truth(rows: Iterable[Mapping[str, Any]]) -> list[VersionTruth]:
    """Per good version, in order, the dependencies it adds and removes (see the module)."""
    out: list[VersionTruth] = []
    before: Counter[DependencyKey] = Counter()
    for version, _, root in good_versions(rows):
        now = dependency_keys(root)
        here, there = _anywhere(now), _anywhere(before)
        out.append(VersionTruth(
            version=version,
            added=(now - before).total(), removed=(before - now).total(),
            added_anywhere=(here - there).total(), removed_anywhere=(there - here).total(),
            dependencies=now.total()))
        before = now
    return out


def changed_lines(rows: Iterable[Mapping[str, Any]]) -> dict[int, int]:
    """Per good version, the lines ``difflib.unified_diff`` marks ``+`` or ``-`` against the
    previous good version (all of its lines for the first): the size of the change as a
    person reviewing the commit sees it, prolog and comments included. Counted from the
    opcodes of the matcher ``unified_diff`` uses (``SequenceMatcher(None, a, b)``, autojunk on),
    which is what it prints, rather than by reading its output, where a removed line ``-->``
    would read as a ``---`` header."""
    out: dict[int, int] = {}
    before: Sequence[str] = []
    for version, xml, _ in good_versions(rows):
        lines = xml.splitlines()
        matcher = difflib.SequenceMatcher(None, before, lines)
        out[version] = sum(i2 - i1 + j2 - j1 for tag, i1, i2, j1, j2 in matcher.get_opcodes()
                           if tag != "equal")
        before = lines
    return out
