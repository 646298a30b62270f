"""Truth across kinds of history (issue 30, item 2): what each real history's versions add and
remove, computed from the versions by the key a person would name an entry by, without a diff.

:mod:`tests.replay.pom_truth` does this for a POM's dependencies; this module does it for five
kinds of XML history taken from public repositories with ``xmlevents history from-git``
(``bench/data/README.md`` says where each comes from): a Maven POM, an RSS feed committed by a
bot, an Android manifest, an Android string resource file, and a chapter of documentation with
``xml:id``\\ s (the TEI Guidelines' bibliography). For each kind, :class:`Kind` gives

* ``entries``: the entries of one version as a multiset of keys — an RSS ``item`` by its
  ``link``, a manifest's ``activity``, ``service``, ``receiver``, ``provider`` and
  ``uses-permission`` by ``android:name``, a ``string`` resource by its ``name``, a ``bibl``
  by its ``xml:id``, a POM ``dependency`` by its parent, ``groupId`` and ``artifactId``;
* ``definitions``: composite events written as a user would, one ``...Added`` and one
  ``...Removed`` per entry element (``Added := ins(item) ; ins(item/link)``, ``Removed :=
  del(item/link) ; del(item)``: an element inserted then its key; its key removed then the
  element — a removal emits the subtree's events in reverse document order);
* ``expert``: the key an expert would give ``--key`` (``item=link``, ``string=@name``, ...).

A version adds the keys it has that the previous well-formed version lacks and removes those
it lacks that the previous one had (multisets; versions that do not parse are skipped, as the
replay skips them; the first well-formed version adds everything it has). One implementation,
shared by ``bench/bench_truth.py --kinds`` and ``tests/replay/test_truth_kinds.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.replay.pom_truth import DEFINITIONS as POM_DEFINITIONS
from tests.replay.pom_truth import NAMESPACES as POM_NAMESPACES
from tests.replay.pom_truth import dependency_keys, good_versions

__all__ = ["ANDROID", "TEI", "XML_ID", "Kind", "KindTruth", "KINDS", "truth", "count",
           "DATA"]

ROOT = Path(__file__).resolve().parents[2]
#: Where the histories are: ``bench/data`` of this repository.
DATA = ROOT / "bench" / "data"

ANDROID = "http://schemas.android.com/apk/res/android"
TEI = "http://www.tei-c.org/ns/1.0"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"

#: The manifest's entries counted: application components and the permissions used.
MANIFEST_TAGS = ("activity", "service", "receiver", "provider", "uses-permission")


@dataclass(frozen=True)
class Kind:
    """One kind of history: where it is, how its entries are keyed, what is defined."""

    name: str  # the kind: pom, rss, manifest, strings, tei
    file: str  # the version table, under :data:`DATA`
    source: str  # repository and file, for the tables
    entries: Callable[[Any], Counter[Hashable]]  # the keys of one version's root
    definitions: str  # ...Added and ...Removed composite events
    namespaces: Mapping[str, str]
    expert: tuple[str, ...]  # key specs as --key takes them

    @property
    def path(self) -> Path:
        return DATA / self.file


@dataclass(frozen=True)
class KindTruth:
    """What one well-formed version adds and removes, against the previous one."""

    version: int
    added: int
    removed: int
    entries: int


def truth(rows: Iterable[Mapping[str, Any]], kind: Kind) -> list[KindTruth]:
    """Per well-formed version, in order, the entries it adds and removes (by key)."""
    out: list[KindTruth] = []
    before: Counter[Hashable] = Counter()
    for version, _, root in good_versions(rows):
        now = kind.entries(root)
        out.append(KindTruth(version, (now - before).total(), (before - now).total(),
                             now.total()))
        before = now
    return out


def count(composites: Iterable[Mapping[str, Any]]) -> tuple[Counter[int], Counter[int]]:
    """The replay's additions and removals per version: composites whose type ends in
    ``Added``, and in ``Removed``."""
    added: Counter[int] = Counter()
    removed: Counter[int] = Counter()
    for c in composites:
        if c["type"].endswith("Added"):
            added[int(c["version"])] += 1
        elif c["type"].endswith("Removed"):
            removed[int(c["version"])] += 1
    return added, removed


def _text(element: Any) -> str:
    return (element.text or "").strip() if element is not None else ""


def pom_entries(root: Any) -> Counter[Hashable]:
    """A dependency by (parent path, groupId, artifactId): :mod:`tests.replay.pom_truth`."""
    return Counter(dependency_keys(root))


def rss_entries(root: Any) -> Counter[Hashable]:
    """An RSS item by its link (the channel's own link is no item's)."""
    return Counter(_text(item.find("link")) for item in root.iter("item"))


def manifest_entries(root: Any) -> Counter[Hashable]:
    """A component or permission by its tag and ``android:name``."""
    name = f"{{{ANDROID}}}name"
    return Counter((e.tag, e.get(name)) for tag in MANIFEST_TAGS for e in root.iter(tag))


def strings_entries(root: Any) -> Counter[Hashable]:
    """A string resource by its ``name``."""
    return Counter(e.get("name") for e in root.iter("string"))


def tei_entries(root: Any) -> Counter[Hashable]:
    """A bibliographic entry by its ``xml:id`` (entries without one are not counted: the
    definitions need the id too)."""
    return Counter(e.get(XML_ID) for e in root.iter(f"{{{TEI}}}bibl") if e.get(XML_ID))


def _added_removed(element: str, key: str, name: str) -> str:
    return (f"{name}Added := ins({element}) ; ins({element}/{key})\n"
            f"{name}Removed := del({element}/{key}) ; del({element})\n")


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("pom", "commons-csv-pom.jsonl.gz", "apache/commons-csv pom.xml", pom_entries,
         POM_DEFINITIONS, POM_NAMESPACES, ("pom:dependency=pom:groupId,pom:artifactId",)),
    Kind("rss", "google-ai-feed.jsonl.gz", "Olshansk/rss-feeds feeds/feed_google_ai.xml",
         rss_entries, _added_removed("item", "link", "Item"), {}, ("item=link",)),
    Kind("manifest", "home-assistant-manifest.jsonl.gz",
         "home-assistant/android app/src/main/AndroidManifest.xml", manifest_entries,
         "".join(_added_removed(tag, "@android:name", tag.title().replace("-", ""))
                 for tag in MANIFEST_TAGS),
         {"android": ANDROID}, tuple(f"{tag}=@android:name" for tag in MANIFEST_TAGS)),
    Kind("strings", "home-assistant-strings.jsonl.gz",
         "home-assistant/android common/src/main/res/values/strings.xml", strings_entries,
         _added_removed("string", "@name", "String"), {}, ("string=@name",)),
    Kind("tei", "tei-bibliography.jsonl.gz",
         "TEIC/TEI P5/Source/Guidelines/en/BIB-Bibliography.xml", tei_entries,
         _added_removed("tei:bibl", "@xml:id", "Bibl"), {"tei": TEI}, ("tei:bibl=@xml:id",)),
)}
