"""The namespace hint of ``xmlevents query`` (issue 30, item 5): a query whose names have no
prefix selects elements in no namespace, so on an Atom feed (``xmlns="http://www.w3.org/2005/
Atom"``) ``//entry[link]/title`` finds nothing — and says nothing. When a run ends with no
match, the names the query asks for are looked up among the element tags of the document's
first 64 KiB (where a document declares its namespaces and opens its first elements); a name
found there in a namespace gets the flag to bind it and the query written with it, as
``replay`` and ``detect`` say it for definitions.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import IO, Any

from xmlevents._foundation.names import NCNAME, namespaces_named, suggest_prefix

__all__ = ["HEAD", "Head", "namespace_hint"]

HEAD = 64 * 1024  # bytes of the document kept for the hint

_DECLARATION = re.compile(rf"""\bxmlns(?::({NCNAME}))?\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_TAG = re.compile(rf"<(?:({NCNAME}):)?({NCNAME})[\s/>]")


class Head:
    """The document as the query reads it (``read``), its first :data:`HEAD` bytes kept."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self.head = bytearray()

    def read(self, size: int = -1) -> bytes:
        data = self._f.read(size)
        if len(self.head) < HEAD and isinstance(data, bytes | bytearray):
            self.head += data[:HEAD - len(self.head)]
        return data


def _element_namespaces(head: bytes) -> dict[str, str]:
    """Each local name of an element tag in ``head`` that is in a namespace, and that
    namespace (the first seen; declarations read without their scopes: a hint, not a
    parse)."""
    text = head.decode("utf-8", "replace")
    declared: dict[str | None, str] = {}
    for m in _DECLARATION.finditer(text):
        declared.setdefault(m.group(1), m.group(2) if m.group(2) is not None else m.group(3))
    found: dict[str, str] = {}
    for m in _TAG.finditer(text):
        uri = declared.get(m.group(1))
        if uri:  # xmlns="" undeclares: no namespace
            found.setdefault(m.group(2), uri)
    return found


def _tests(node: Any) -> list[Any]:
    """Every name test of a parsed query (steps, and the paths of its predicates)."""
    found: list[Any] = []
    for step in getattr(node, "steps", ()):
        found.append(step.test)
        for p in step.predicates:
            found += _in_predicate(p)
    return found


def _in_predicate(p: Any) -> list[Any]:
    found: list[Any] = []
    for part in ("left", "right", "operand"):
        if hasattr(p, part):
            found += _in_predicate(getattr(p, part))
    if hasattr(p, "path"):
        found += _tests(p.path)
    return found


def _rewritten(node: Any, names: dict[str, str], prefix_of: dict[str, str]) -> Any:
    """The parsed query with each name ``names`` maps (local name -> URI) written with its
    prefix, and each name already in a namespace written with that namespace's prefix."""
    def test(t: Any) -> Any:
        if t.kind != "name":
            return t
        if t.value.startswith("{"):
            uri, _, local = t.value[1:].partition("}")
            return replace(t, value=f"{prefix_of[uri]}:{local}") if uri in prefix_of else t
        uri = names.get(t.value)
        return t if uri is None else replace(t, value=f"{prefix_of[uri]}:{t.value}")

    def pred(p: Any) -> Any:
        changes = {part: pred(getattr(p, part)) for part in ("left", "right", "operand")
                   if hasattr(p, part)}
        if hasattr(p, "path"):
            changes["path"] = path(p.path)
        return replace(p, **changes) if changes else p

    def path(lp: Any) -> Any:
        return replace(lp, steps=tuple(
            replace(s, test=test(s.test), predicates=tuple(pred(p) for p in s.predicates))
            for s in lp.steps))

    return path(node)


def namespace_hint(text: str, head: bytes, namespaces: dict[str, str]) -> str | None:
    """The hint for a Core XPath query ``text`` that matched nothing in the document whose
    first bytes are ``head`` (``namespaces``: the prefixes bound), or None."""
    from xmlevents.stream import parse_xpath

    try:
        parsed = parse_xpath(text, namespaces)
    except Exception:
        return None
    in_document = _element_namespaces(head)
    wanted = {t.value for t in _tests(parsed) if t.kind == "name" and ":" not in t.value
              and not t.value.startswith("{") and not t.value.startswith("@")}
    names = {n: in_document[n] for n in sorted(wanted) if n in in_document}
    if not names:
        return None
    bound = {uri: p for p, uri in namespaces.items()}
    prefix_of = dict(bound)
    taken = dict(namespaces)
    for uri in dict.fromkeys(names.values()):
        if uri not in prefix_of:
            prefix_of[uri] = suggest_prefix(uri, taken)
            taken[prefix_of[uri]] = uri
    uris = list(dict.fromkeys(names.values()))
    shown = ", ".join(sorted(names))
    space = namespaces_named(uris)
    rewritten = str(_rewritten(parsed, names, prefix_of))
    new = [u for u in uris if u not in bound]
    flags = " ".join(f"-n {prefix_of[u]}={u}" for u in new)
    fix = (f"pass {flags} and write '{rewritten}'" if new
           else f"write '{rewritten}' (the prefixes are bound)")
    return (f"no match; the document's {shown} {'is' if len(names) == 1 else 'are'} in "
            f"{space}, and a name without a prefix selects elements in no namespace: {fix}")
