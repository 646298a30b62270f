"""Keys inferred from the history itself (issue 30, item 1): what a person would name an
element by, found without being told.

Which elements: every element name that repeats among the element children of one parent in
some version read (a ``dependency`` among ``dependencies``, an ``item`` in a feed). Which
fields: its attributes, and its child elements that are leaves (text only) and occur once in
it — what :class:`~._keys.Key` can name. A candidate key is one field, or two where no single
field will do. It is kept when, over the versions read, its fields are

- **present** in (nearly) every occurrence: at least :data:`COVERAGE` of them;
- **unique** among siblings: the values differ between the siblings in at least
  :data:`UNIQUE` of the sibling groups (a parent's children of that name, in one version);
- **stable** for elements that otherwise persist: from one version to the next, a value that
  disappears while a new one appears on an element whose other fields are all equal is a
  rename — the field changed, the element stayed (a retitled feed item: its title is no key);
  at most :data:`RENAMED` of the values kept or renamed may be renames.

Of the candidates kept the smallest wins (one field before two), then the most stable, the
most unique, the most present, an attribute before a child, then by name: a total order, so
the same versions give the same keys.

Which versions: inference is a first pass over a sample — for each document (up to
:data:`DOCUMENTS` of them, chosen by a hash of the name), up to :data:`PAIRS` pairs of
consecutive versions spread evenly over its history (stability is measured on consecutive
versions only). What a key decides is measured on those; :class:`InferredKey` carries the
evidence, which the replay's summary and errors table report.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from lxml import etree

from ._keys import Key, KeyField

__all__ = ["InferredKey", "KeyInference", "infer_keys", "sample_plan", "infer_pairs",
           "sample_starts", "sample_documents",
           "COVERAGE", "UNIQUE", "RENAMED", "PAIRS", "DOCUMENTS"]

#: The least share of occurrences that must have every field of a key.
COVERAGE = 0.95
#: The least share of sibling groups whose values must be distinct.
UNIQUE = 0.99
#: The largest share of renames among the values kept or renamed between versions.
RENAMED = 0.05
#: Pairs of consecutive versions read per document.
PAIRS = 16
#: Documents read.
DOCUMENTS = 64
#: Fields tried in pairs (the most present), where no single field will do.
PAIRED_FIELDS = 6

#: A field: ``("@", name)`` for an attribute, ``("", tag)`` for a leaf child's text.
Field = tuple[str, str]


def _key_field(f: Field) -> KeyField:
    return KeyField(attribute=f[1]) if f[0] == "@" else KeyField(steps=(f[1],))


@dataclass(frozen=True)
class InferredKey:
    """A key the history suggests, with its evidence (shares in [0, 1], counts over the
    versions read)."""

    key: Key
    elements: int  # occurrences among repeated siblings
    coverage: float
    groups: int  # sibling groups (a parent's children of that name, in one version)
    unique: float
    kept: int  # values kept from one version to the next, or renamed
    stable: float
    versions: int  # versions read

    def evidence(self) -> str:
        """The evidence in a few words (the summary's)."""
        return (f"{self.coverage:.0%} present, {self.unique:.0%} unique, "
                f"{self.stable:.0%} stable; {self.elements:,} elements in "
                f"{self.versions:,} versions read")

    def message(self) -> str:
        """One line (the errors table's ``message``)."""
        return (f"key {self.key.label} inferred: present in {self.coverage:.0%} of "
                f"{self.elements:,} elements, unique among siblings in {self.unique:.0%} of "
                f"{self.groups:,} groups, kept by {self.stable:.0%} of {self.kept:,} values "
                f"that persist ({self.versions:,} versions read); --key "
                f"{_spec(self.key)} sets it, --no-key turns keys off")


def _spec(key: Key) -> str:
    """The key as a ``--key`` value (Clark names where namespaced: they need no prefix)."""
    return str(key)


@dataclass
class _Occurrences:
    """What the versions read say about one element name."""

    elements: int = 0
    present: Counter[Field] = field(default_factory=Counter)
    # per version read and parent: each sibling's fields
    groups: list[list[dict[Field, str]]] = field(default_factory=list)
    # per pair of consecutive versions: (the old siblings' fields, the new ones')
    pairs: list[tuple[list[dict[Field, str]], list[dict[Field, str]]]] = field(
        default_factory=list)


def _fields(e: Any) -> dict[Field, str]:
    """An element's candidate fields with their (stripped, non-empty) values."""
    found: dict[Field, str] = {}
    for name, value in e.items():
        value = value.strip()
        if value:
            found["@", name] = value
    seen: dict[str, int] = {}
    for c in e:
        tag = c.tag
        if type(tag) is str:
            seen[tag] = seen.get(tag, 0) + 1
    for c in e:
        tag = c.tag
        if type(tag) is not str or seen[tag] != 1:
            continue
        if len(c):  # a leaf has no element child (a comment inside is no field)
            if any(type(g.tag) is str for g in c):
                continue
            text = "".join(c.itertext())
        else:
            text = c.text or ""
        text = text.strip()
        if text:
            found["", tag] = text
    return found


def _repeated(root: Any) -> dict[str, list[list[dict[Field, str]]]]:
    """Per element name that repeats among one parent's children: each such group's fields."""
    found: dict[str, list[list[dict[Field, str]]]] = defaultdict(list)
    for parent in root.iter(tag=etree.Element):
        if len(parent) < 2:
            continue
        tags = [c.tag for c in parent]
        names = set(tags)
        if len(names) == len(tags):
            continue  # no name repeats here (most elements)
        seen: dict[Any, int] = {}
        for t in tags:
            seen[t] = seen.get(t, 0) + 1
        for name, n in seen.items():
            if n > 1 and type(name) is str:
                found[name].append([_fields(c) for c in parent if c.tag == name])
    return found


class KeyInference:
    """The evidence of versions read (:meth:`add`, a document's versions in order, each
    pair of consecutive ones marked), and the keys it supports (:meth:`keys`)."""

    def __init__(self) -> None:
        self._names: dict[str, _Occurrences] = defaultdict(_Occurrences)
        self.versions = 0  # versions read (a version in two pairs counts twice)

    def add_pair(self, old: Any, new: Any) -> None:
        """Two consecutive versions of one document (roots)."""
        before, after = _repeated(old), _repeated(new)
        for root_groups in (before, after):
            for name, groups in root_groups.items():
                occ = self._names[name]
                for group in groups:
                    occ.groups.append(group)
                    occ.elements += len(group)
                    for fields in group:
                        occ.present.update(fields.keys())
        for name in set(before) | set(after):
            occ = self._names[name]
            occ.pairs.append(([f for g in before.get(name, ()) for f in g],
                              [f for g in after.get(name, ()) for f in g]))
        self.versions += 2

    def keys(self, exclude: Iterable[str] = ()) -> list[InferredKey]:
        """The best key of every element name that has one (see the module), by name;
        none for the names in ``exclude`` (keys given explicitly)."""
        skip = set(exclude)
        found = []
        for name in sorted(self._names):
            if name in skip:
                continue
            best = self._best(name, self._names[name])
            if best is not None:
                found.append(best)
        return found

    def _best(self, name: str, occ: _Occurrences) -> InferredKey | None:
        if not occ.elements:
            return None
        fields = sorted((f for f, n in occ.present.items() if n / occ.elements >= COVERAGE),
                        key=lambda f: (-occ.present[f], f))
        candidates: list[tuple[Field, ...]] = [(f,) for f in fields]
        kept = [c for c in (self._measure(name, occ, c) for c in candidates) if c]
        if not kept:
            pairs = list(combinations(sorted(fields[:PAIRED_FIELDS]), 2))
            kept = [c for c in (self._measure(name, occ, p) for p in pairs) if c]
        if not kept:
            return None
        return min(kept, key=lambda k: _rank(k))

    def _measure(self, name: str, occ: _Occurrences, fields: tuple[Field, ...]
                 ) -> InferredKey | None:
        def value(f: dict[Field, str]) -> tuple[str, ...] | None:
            try:
                return tuple(f[x] for x in fields)
            except KeyError:
                return None

        if len(fields) == 1:
            with_all = occ.present[fields[0]]
        else:
            with_all = sum(1 for g in occ.groups for f in g if value(f) is not None)
        coverage = with_all / occ.elements
        if coverage < COVERAGE:
            return None
        # Most candidates fail here, on their first groups: stop once too many repeat.
        allowed = int(len(occ.groups) * (1 - UNIQUE) + 1e-9)
        repeated = 0
        for g in occ.groups:
            values = [v for v in map(value, g) if v is not None]
            if len(values) != len(set(values)):
                repeated += 1
                if repeated > allowed:
                    return None
        unique = 1 - repeated / len(occ.groups)
        persisted = renamed = 0
        for old, new in occ.pairs:
            olds = {v: f for f in old if (v := value(f)) is not None}
            news = {v: f for f in new if (v := value(f)) is not None}
            persisted += len(olds.keys() & news.keys())
            rests = Counter(_rest(f, fields) for v, f in olds.items() if v not in news)
            for v, f in news.items():
                rest = _rest(f, fields)
                if v not in olds and rest and rests[rest] > 0:
                    rests[rest] -= 1
                    renamed += 1
        moved = persisted + renamed
        stable = 1.0 if not moved else persisted / moved
        if 1.0 - stable > RENAMED:
            return None
        key = Key(name, tuple(_key_field(f) for f in fields))
        return InferredKey(key, occ.elements, coverage, len(occ.groups), unique, moved,
                           stable, self.versions)


def _rest(fields: Mapping[Field, str], key: Sequence[Field]) -> tuple[tuple[Field, str], ...]:
    """The fields of an element that are not the key's."""
    return tuple(sorted((f, v) for f, v in fields.items() if f not in key))


def _rank(k: InferredKey) -> tuple[Any, ...]:
    """Smallest first, then the most stable, unique and present, attributes before children,
    then by the fields' names (total: the choice is the same every time)."""
    fields = k.key.fields
    return (len(fields), -k.stable, -k.unique, -k.coverage,
            sum(f.attribute is None for f in fields), [str(f) for f in fields])


def sample_starts(count: int, pairs: int = PAIRS) -> set[int]:
    """Where the pairs read of a document of ``count`` versions begin (positions in its
    versions, in order): up to ``pairs`` of them, spread evenly."""
    n = count - 1
    if n <= 0:
        return set()
    k = min(pairs, n)
    return {round(i * (n - 1) / max(1, k - 1)) for i in range(k)}


def sample_plan(versions: Mapping[str, Sequence[int]], *, pairs: int = PAIRS,
                documents: int = DOCUMENTS) -> dict[str, list[tuple[int, int]]]:
    """The pairs of versions :func:`infer_keys` reads, by document, from each document's
    versions (distinct, in order): what a driver collects (Spark's)."""
    plan = {}
    for doc in sample_documents(versions, documents):
        vs = versions[doc]
        plan[doc] = [(vs[i], vs[i + 1]) for i in sorted(sample_starts(len(vs), pairs))]
    return plan


def infer_pairs(plan: Mapping[str, Sequence[tuple[int, int]]],
                xml: Mapping[tuple[str, int], Any], parse: Any) -> KeyInference:
    """The evidence of the pairs of :func:`sample_plan`, their texts in ``xml`` by (document,
    version): :func:`infer_keys`'s on the same versions."""
    inference = KeyInference()
    for doc, pairs in plan.items():
        for a, b in pairs:
            try:
                old, new = parse(xml[doc, a]), parse(xml[doc, b])
            except Exception:  # not a version: the pair is not read
                continue
            inference.add_pair(old, new)
    return inference


def infer_keys(rows: Iterable[Mapping[str, Any]], counts: Mapping[str, int],
               parse: Any, *, pairs: int = PAIRS, documents: int = DOCUMENTS
               ) -> KeyInference:
    """The evidence of a version table's sample (see the module). ``rows`` come in
    (document, version) order, ``counts`` says how many each document has; only the
    sampled versions are parsed (``parse``: XML text to a root; a version that does not
    parse leaves its pairs out)."""
    chosen = set(sample_documents(counts, documents))
    inference = KeyInference()
    doc, at, starts = None, 0, set()
    previous: Any = None
    for row in rows:
        if row["doc"] != doc:
            doc, at = row["doc"], 0
            starts = sample_starts(counts[doc], pairs) if doc in chosen else set()
            previous = None
        if at in starts or at - 1 in starts:
            try:
                root = parse(row["xml"])
            except Exception:  # not a version: its pairs are not read
                root = None
            if at - 1 in starts and previous is not None and root is not None:
                inference.add_pair(previous, root)
            previous = root
        at += 1
    return inference


def sample_documents(docs: Iterable[str], count: int = DOCUMENTS) -> list[str]:
    """Up to ``count`` of the documents, chosen by a hash of their names (the same choice
    every time, whatever the order they come in)."""
    return sorted(docs, key=lambda d: hashlib.sha1(d.encode("utf-8")).digest())[:count]
