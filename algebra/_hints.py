"""The end-of-run namespace hint (issue 15, item 1): a definition that matched nothing because
the documents' elements are in a namespace its path types do not name. Here, below every
command that reads events (replay, detect; issue 30, item 5).

A POM's elements are in ``http://maven.apache.org/POM/4.0.0``; ``ins(project/dependencies/
dependency)`` names elements in no namespace, so it never matches, and nothing can say so
before the documents are read. After a replay, :func:`namespace_hints` compares the paths of
the events (each with how many events it has) with the path types of the leaves of every
definition that raised no composite: a leaf that no event matches, while events match it by
local names (``{uri}`` stripped; a relative path type matches the end of a path, ``*`` any
element), gets a :class:`NamespaceHint` naming the namespace, a prefix for it and the path
type written with it — phrased for the command line (:meth:`NamespaceHint.cli`: ``-n
pom=URI``) or for Python (:meth:`NamespaceHint.python`: ``namespaces={'pom': URI}``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from xmlevents._foundation.names import namespaces_named, suggest_prefix

from ._definitions import DefinitionSet, LeafSpec, ResolvedDefinition
from ._events import PrimitiveEventType
from ._paths import Axis, Kind, PathType, Step

__all__ = ["NamespaceWarning", "NamespaceHint", "namespace_hints", "path_type_hints",
           "suggest_prefix"]


class NamespaceWarning(UserWarning):
    """A definition matched no event of a replay, although the documents have events on its
    leaves' paths in a namespace it does not name (issue 15): the message says which prefix to
    bind and how to write the path."""


@dataclass(frozen=True)
class NamespaceHint:
    """Why a definition matched nothing, and the fix.

    Attributes:
        definition: the definition's name.
        leaf: the leaf's path type as written (in the prefixes bound).
        events: how many events are on paths that match it by local names (None: not
            counted, as ``detect`` does not count them).
        bindings: ``(prefix, uri)`` for each namespace of those paths, in step order.
        bound: the prefixes among them that are bound already (only the path needs them).
        rewritten: the leaf's path type written with those prefixes.
        others: how many more leaves of the definition have the same problem.
    """

    definition: str
    leaf: str
    events: int | None
    bindings: tuple[tuple[str, str], ...]
    bound: frozenset[str]
    rewritten: str
    others: int = 0

    def _where(self) -> str:
        uris = [uri for _, uri in self.bindings]
        space = namespaces_named(uris)
        if self.events is None:
            return f"{self.definition} matched no event; events on {self.leaf} are in {space}"
        return (f"{self.definition} matched no event; {self.events:,} "
                f"event{'' if self.events == 1 else 's'} on {self.leaf} "
                f"{'is' if self.events == 1 else 'are'} in {space}")

    def _rest(self) -> str:
        if not self.others:
            return ""
        return f" (and likewise its other {self.others} path{'' if self.others == 1 else 's'})"

    def cli(self) -> str:
        """The hint for the command line: the ``-n P=URI`` flags to pass."""
        flags = " ".join(f"-n {p}={uri}" for p, uri in self.bindings)
        if all(p in self.bound for p, _ in self.bindings):
            return f"{self._where()}: write {self.rewritten} (as {flags} binds){self._rest()}"
        return f"{self._where()}: pass {flags} and write {self.rewritten}{self._rest()}"

    def python(self) -> str:
        """The hint for Python: the ``namespaces=`` argument to give."""
        given = "{" + ", ".join(f"{p!r}: {uri!r}" for p, uri in self.bindings) + "}"
        if all(p in self.bound for p, _ in self.bindings):
            return (f"{self._where()}: write {self.rewritten} (as namespaces={given} binds)"
                    f"{self._rest()}")
        return f"{self._where()}: pass namespaces={given} and write {self.rewritten}{self._rest()}"


def _local(name: str) -> str:
    return name.rpartition("}")[2]


def _uri(name: str) -> str | None:
    return name[1:name.index("}")] if name.startswith("{") else None


def _step_matches(want: Step, got: Step, local: bool) -> bool:
    if want.axis is not got.axis:
        return False
    if want.name is None or got.name is None:
        return want.name == got.name
    if want.is_wildcard:
        return True
    return _local(want.name) == _local(got.name) if local else want.name == got.name


def _matched(leaf: PathType, path: PathType, local: bool) -> tuple[Step, ...] | None:
    """The steps of ``path`` that ``leaf`` matches (all of them for an absolute leaf, its end
    for a relative one), by whole names or by local names; None if it does not match."""
    n = len(leaf.steps)
    if len(path.steps) < n or (leaf.kind is Kind.ABSOLUTE and len(path.steps) != n):
        return None
    end = path.steps[len(path.steps) - n:]
    if all(_step_matches(w, g, local) for w, g in zip(leaf.steps, end, strict=True)):
        return end
    return None


def _uris(steps: tuple[Step, ...]) -> list[str]:
    """The namespaces of ``steps``' names, each once, in step order."""
    return list(dict.fromkeys(u for s in steps if s.name and (u := _uri(s.name))))


def _leaves(d: ResolvedDefinition) -> Iterator[PathType]:
    """The path types of a definition's primitive leaves, each once, left to right."""
    seen: set[PathType] = set()
    for node in d.root.walk():
        if (isinstance(node, LeafSpec) and isinstance(node.et, PrimitiveEventType)
                and node.pt not in seen):
            seen.add(node.pt)
            yield node.pt


def _rewrite(leaf: PathType, steps: tuple[Step, ...], prefix: Mapping[str, str] | None) -> str:
    """``leaf`` with each named step in the namespace of the event step it matched (written
    with ``prefix``'s prefix for it, or in Clark notation without ``prefix``)."""
    parts = []
    for want, got in zip(leaf.steps, steps, strict=True):
        if want.name is None or want.is_wildcard or got.name is None:
            parts.append(str(want))
            continue
        uri = _uri(got.name)
        name = (_local(got.name) if uri is None else got.name if prefix is None
                else f"{prefix[uri]}:{_local(got.name)}")
        parts.append(f"@{name}" if want.axis is Axis.ATTRIBUTE else name)
    body = "/".join(parts)
    return "/" + body if leaf.kind is Kind.ABSOLUTE else body


def namespace_hints(definitions: DefinitionSet | None, namespaces: Mapping[str, str] | None,
                    paths: Mapping[str, int] | Iterable[PathType],
                    composites: Mapping[str, int]
                    ) -> list[NamespaceHint]:
    """The hints of a replay (see the module), one per definition that needs one.

    Args:
        definitions: the definitions replayed (None: no hints).
        namespaces: the prefixes bound (a URI bound already keeps its prefix).
        paths: every event path of the replay (Clark notation, as the ``events`` output's
            ``path``), with how many events it has; or the path types of the events, not
            counted (the hints' ``events`` are then None).
        composites: how many composites each definition raised (a definition with any has
            no hint).
    """
    if definitions is None or not paths:
        return []
    counted = isinstance(paths, Mapping)
    parsed = ([(PathType.parse(p), n) for p, n in paths.items()] if isinstance(paths, Mapping)
              else [(pt, 0) for pt in paths])
    bindings = dict(namespaces or {})  # prefix -> URI, the hints' suggestions added
    by_uri: dict[str, str] = {}
    for p, uri in bindings.items():
        by_uri.setdefault(uri, p)
    given = frozenset(by_uri.values())
    hints = []
    for d in definitions:
        if composites.get(d.name, 0):
            continue
        found: list[tuple[PathType, int, tuple[Step, ...]]] = []
        for leaf in _leaves(d):
            if any(_matched(leaf, pt, local=False) for pt, _ in parsed):
                continue
            near = [(n, steps) for pt, n in parsed
                    if (steps := _matched(leaf, pt, local=True)) is not None]
            if near:
                _, steps = max(near, key=lambda x: x[0])
                found.append((leaf, sum(n for n, _ in near), steps))
        if not found:
            continue
        leaf, events, steps = found[0]
        uris = _uris(steps)
        for uri in uris:
            if uri not in by_uri:
                by_uri[uri] = suggest_prefix(uri, bindings)
                bindings[by_uri[uri]] = uri
        if not uris:  # the leaf names a namespace the events do not have
            continue
        hints.append(NamespaceHint(
            definition=d.name, leaf=leaf.prefixed(namespaces),
            events=events if counted else None,
            bindings=tuple((by_uri[u], u) for u in uris),
            bound=frozenset(by_uri[u] for u in uris if by_uri[u] in given),
            rewritten=_rewrite(leaf, steps, by_uri), others=len(found) - 1))
    return hints


def path_type_hints(wanted: Iterable[str], paths: Iterable[str]) -> list[str]:
    """For each path type of ``wanted`` (a CEL query's ``MATCHES`` and ``PROJECT`` types) that
    no path of ``paths`` (the events' path types, Clark notation) matches while some match it
    by local names, the hint: the namespace and the type written in Clark notation (CEL binds
    no prefixes). Issue 30, item 5: ``xmlevents cel --primitive`` ends with them on no match."""
    parsed = [PathType.parse(p) for p in dict.fromkeys(paths)]
    hints = []
    for text in dict.fromkeys(wanted):
        leaf = PathType.parse(text)
        if any(_matched(leaf, pt, local=False) is not None for pt in parsed):
            continue
        near = [steps for pt in parsed if (steps := _matched(leaf, pt, local=True)) is not None]
        if not near:
            continue
        uris = _uris(near[0])
        if not uris:
            continue
        space = namespaces_named(uris)
        hints.append(f"'{text}' matched no event's path; events on it are in {space}: "
                     f"write '{_rewrite(leaf, near[0], None)}'")
    return hints
