"""Generate XMark-like auction documents and protein-like documents of a requested size.

Two kinds, both written streaming (in chunks of about 4 MB) so that a 1 GB document costs no
more memory than a 10 MB one, and both deterministic: the same kind, size and seed give the
same bytes.

``xmark``
    An auction site after the XMark benchmark's schema: ``site`` with ``regions`` (``africa``,
    ``asia``, ``australia``, ``europe``, ``namerica``, ``samerica``, each with ``item``
    elements: ``location``, ``quantity``, ``name``, ``payment``, ``description`` (a ``text``
    with ``keyword``/``bold``/``emph`` inside, or a ``parlist`` of ``listitem``), ``shipping``,
    ``incategory``, ``mailbox``/``mail``), ``categories``/``category``, ``catgraph``/``edge``,
    ``people``/``person`` (``name``, ``emailaddress``, optional ``phone``, ``address``,
    ``homepage``, ``creditcard``, ``profile`` with ``interest``, ``watches``/``watch``),
    ``open_auctions``/``open_auction`` (``initial``, ``reserve``, ``bidder`` with ``date``,
    ``time``, ``personref``, ``increase``, ``current``, ``itemref``, ``seller``, an
    ``annotation`` that about a third of the auctions lack, ``quantity``, ``type``,
    ``interval``) and ``closed_auctions``/``closed_auction``. The sections take the byte
    shares of an XMark document (items about half, people a fifth, auctions a quarter).

``protein``
    A ``ProteinDatabase`` of ``ProteinEntry`` elements after the PIR Protein Sequence
    Database's XML: ``header`` (``uid``, ``accession``, dates), ``protein``/``name``,
    ``organism``/``source``, one to four ``reference`` (``refinfo`` with
    ``authors``/``author``, ``citation``, ``title``, ``year``, ``xrefs``; an ``accinfo`` in
    half of them), ``genetics`` in about 40% of the entries, ``classification``, ``keywords``,
    ``feature`` with ``description``, ``summary`` and the ``sequence`` text.

The size is met within one entry (a few KB) of the request. Sizes are decimal (``10MB`` is
10,000,000 bytes; ``KiB``/``MiB``/``GiB`` are binary). The text is ASCII.

    python3 bench/xmlgen.py {xmark,protein} SIZE OUT [--seed N]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

KINDS = ("xmark", "protein")
CHUNK = 4 << 20  # bytes gathered before each write

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "k": 10**3, "m": 10**6,
          "g": 10**9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}


def parse_size(text: str) -> int:
    """``10MB`` -> 10,000,000; ``1GiB`` -> 2**30; a bare number is bytes."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not found or found.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (say 10MB, 100MB, 1GB, 512KiB)")
    return int(float(found.group(1)) * _UNITS[found.group(2).lower()])


def format_size(size: int) -> str:
    """The inverse of ``parse_size`` for round decimal sizes: 10**8 -> ``100MB``."""
    for unit, factor in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


@dataclass
class Generated:
    """What ``generate`` wrote."""

    kind: str
    path: Path
    requested: int
    size: int
    elements: int
    seconds: float


class _Words:
    """A fixed vocabulary and pools of sentences drawn from it (deterministic from the seed)."""

    def __init__(self, rng: random.Random) -> None:
        syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pra", "sto", "qua",
                     "ber", "dan", "fel", "gor", "hin", "jul", "mar", "nor", "pel", "ros",
                     "tan", "wil", "an", "el", "is", "on", "ur", "est"]
        words: list[str] = []
        while len(words) < 800:
            word = "".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
            if word not in words:
                words.append(word)
        self.words = words
        self.sentences = [
            " ".join(rng.choice(words) for _ in range(rng.randint(4, 16))) + "."
            for _ in range(4096)]
        self.phrases = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))
                        for _ in range(2048)]
        self.first = [w.capitalize() for w in words[:200]]
        self.last = [w.capitalize() for w in words[200:600]]


def _pick(r: Callable[[], float], pool: list[str]) -> str:
    return pool[int(r() * len(pool))]


def _text(r: Callable[[], float], w: _Words) -> str:
    """Mixed content for a ``text`` element: sentences with keyword/bold/emph inside."""
    sentences, phrases = w.sentences, w.phrases
    parts = [sentences[int(r() * 4096)]]
    for _ in range(int(r() * 4)):
        x = r()
        phrase = phrases[int(r() * 2048)]
        if x < 0.45:
            parts.append(f" <keyword>{phrase}</keyword> ")
        elif x < 0.75:
            parts.append(f" <bold>{phrase}</bold> ")
        else:
            parts.append(f" <emph>{phrase}</emph> ")
        parts.append(sentences[int(r() * 4096)])
    return "".join(parts)


def _date(r: Callable[[], float]) -> str:
    return f"{1 + int(r() * 12):02d}/{1 + int(r() * 28):02d}/{1998 + int(r() * 4)}"


# XMark's shares of a document, by section (regions split as XMark's item counts)
_REGIONS = (("africa", 0.025), ("asia", 0.092), ("australia", 0.101), ("europe", 0.276),
            ("namerica", 0.460), ("samerica", 0.046))
_SHARES = (("regions", 0.50), ("categories", 0.035), ("catgraph", 0.005), ("people", 0.20),
           ("open_auctions", 0.16), ("closed_auctions", 0.10))
_COUNTRIES = ["United States", "Germany", "Kenya", "Japan", "Brazil", "Australia", "France",
              "Egypt", "Canada", "Chile", "India", "Italy", "Mexico", "Norway"]
_PAYMENTS = ["Creditcard", "Money order", "Personal Check", "Cash",
             "Money order, Creditcard", "Creditcard, Personal Check, Cash"]
_EDUCATION = ["High School", "College", "Graduate School", "Other"]


class _XMark:
    """The entities of an auction site; each method returns one entity's markup."""

    def __init__(self, rng: random.Random, size: int) -> None:
        self.r = rng.random
        self.w = _Words(rng)
        # counts estimated from the byte shares, for the references to later sections
        self.categories = max(1, int(size * 0.035 / 700))
        self.open_auctions = max(1, int(size * 0.16 / 1200))
        self.items = 0
        self.categories_written = 0
        self.people = 0
        self.opened = 0
        self.closed = 0

    def _name(self) -> str:
        r, w = self.r, self.w
        return f"{_pick(r, w.first)} {_pick(r, w.last)}"

    def _description(self) -> str:
        r, w = self.r, self.w
        if r() < 0.7:
            return f"<description><text>{_text(r, w)}</text></description>"
        items = []
        for _ in range(2 + int(r() * 3)):
            if r() < 0.15:
                inner = "".join(f"<listitem><text>{_text(r, w)}</text></listitem>"
                                for _ in range(1 + int(r() * 2)))
                items.append(f"<listitem><parlist>{inner}</parlist></listitem>")
            else:
                items.append(f"<listitem><text>{_text(r, w)}</text></listitem>")
        return f"<description><parlist>{''.join(items)}</parlist></description>"

    def item(self) -> str:
        r, w = self.r, self.w
        n = self.items
        self.items += 1
        featured = ' featured="yes"' if r() < 0.1 else ""
        cats = "".join(f'<incategory category="category{int(r() * self.categories)}"/>'
                       for _ in range(1 + int(r() * 3)))
        mails = "".join(
            f"<mail><from>{self._name()} mailto:{_pick(r, w.words)}@{_pick(r, w.words)}.com"
            f"</from><to>{self._name()} mailto:{_pick(r, w.words)}@{_pick(r, w.words)}.com"
            f"</to><date>{_date(r)}</date><text>{_text(r, w)}</text></mail>"
            for _ in range(int(r() * 4)))
        return (f'<item id="item{n}"{featured}><location>{_pick(r, _COUNTRIES)}</location>'
                f"<quantity>{1 + int(r() * 2)}</quantity><name>{_pick(r, w.phrases)}</name>"
                f"<payment>{_pick(r, _PAYMENTS)}</payment>{self._description()}"
                f"<shipping>{_pick(r, w.sentences)}</shipping>{cats}"
                f"<mailbox>{mails}</mailbox></item>\n")

    def category(self) -> str:
        r, w = self.r, self.w
        n = self.categories_written
        self.categories_written += 1
        return (f'<category id="category{n}"><name>{_pick(r, w.phrases)}</name>'
                f"{self._description()}</category>\n")

    def edge(self) -> str:
        r = self.r
        return (f'<edge from="category{int(r() * self.categories)}" '
                f'to="category{int(r() * self.categories)}"/>\n')

    def person(self) -> str:
        r, w = self.r, self.w
        n = self.people
        self.people += 1
        name = self._name()
        parts = [f'<person id="person{n}"><name>{name}</name>'
                 f"<emailaddress>mailto:{name.replace(' ', '.')}@{_pick(r, w.words)}.com"
                 "</emailaddress>"]
        if r() < 0.5:
            parts.append(f"<phone>+{int(r() * 99)} ({int(r() * 999)}) {int(r() * 9999999)}"
                         "</phone>")
        if r() < 0.5:
            province = f"<province>{_pick(r, w.last)}</province>" if r() < 0.3 else ""
            parts.append(f"<address><street>{int(r() * 99)} {_pick(r, w.last)} St</street>"
                         f"<city>{_pick(r, w.last)}</city><country>{_pick(r, _COUNTRIES)}"
                         f"</country>{province}<zipcode>{int(r() * 99999)}</zipcode></address>")
        if r() < 0.5:
            parts.append(f"<homepage>http://www.{_pick(r, w.words)}.com/~{_pick(r, w.words)}"
                         "</homepage>")
        if r() < 0.5:
            parts.append(f"<creditcard>{int(r() * 9999)} {int(r() * 9999)} {int(r() * 9999)} "
                         f"{int(r() * 9999)}</creditcard>")
        if r() < 0.5:
            interests = "".join(f'<interest category="category{int(r() * self.categories)}"/>'
                                for _ in range(int(r() * 5)))
            education = f"<education>{_pick(r, _EDUCATION)}</education>" if r() < 0.5 else ""
            gender = f"<gender>{'male' if r() < 0.5 else 'female'}</gender>" if r() < 0.5 \
                else ""
            age = f"<age>{18 + int(r() * 50)}</age>" if r() < 0.5 else ""
            parts.append(f'<profile income="{int(r() * 100000)}.{int(r() * 100):02d}">'
                         f"{interests}{education}{gender}<business>"
                         f"{'Yes' if r() < 0.5 else 'No'}</business>{age}</profile>")
        if r() < 0.5:
            watches = "".join(
                f'<watch open_auction="open_auction{int(r() * self.open_auctions)}"/>'
                for _ in range(int(r() * 6)))
            parts.append(f"<watches>{watches}</watches>")
        parts.append("</person>\n")
        return "".join(parts)

    def _annotation(self) -> str:
        r = self.r
        return (f'<annotation><author person="person{int(r() * max(1, self.people))}"/>'
                f"{self._description()}<happiness>{1 + int(r() * 10)}</happiness>"
                "</annotation>")

    def open_auction(self) -> str:
        r = self.r
        n = self.opened
        self.opened += 1
        people = max(1, self.people)
        initial = 1 + r() * 200
        parts = [f'<open_auction id="open_auction{n}"><initial>{initial:.2f}</initial>']
        if r() < 0.4:
            parts.append(f"<reserve>{initial * (1 + r()):.2f}</reserve>")
        current = initial
        for _ in range(int(r() * 7)):
            increase = 1.5 * (1 + int(r() * 20))
            current += increase
            parts.append(f"<bidder><date>{_date(r)}</date><time>{int(r() * 24):02d}:"
                         f"{int(r() * 60):02d}:{int(r() * 60):02d}</time>"
                         f'<personref person="person{int(r() * people)}"/>'
                         f"<increase>{increase:.2f}</increase></bidder>")
        parts.append(f"<current>{current:.2f}</current>")
        if r() < 0.3:
            parts.append(f"<privacy>{'Yes' if r() < 0.5 else 'No'}</privacy>")
        parts.append(f'<itemref item="item{int(r() * max(1, self.items))}"/>'
                     f'<seller person="person{int(r() * people)}"/>')
        if r() < 0.65:
            parts.append(self._annotation())
        parts.append(f"<quantity>{1 + int(r() * 2)}</quantity><type>"
                     f"{'Regular' if r() < 0.7 else 'Featured'}</type><interval><start>"
                     f"{_date(r)}</start><end>{_date(r)}</end></interval></open_auction>\n")
        return "".join(parts)

    def closed_auction(self) -> str:
        r = self.r
        self.closed += 1
        people = max(1, self.people)
        annotation = self._annotation() if r() < 0.8 else ""
        return (f'<closed_auction><seller person="person{int(r() * people)}"/>'
                f'<buyer person="person{int(r() * people)}"/>'
                f'<itemref item="item{int(r() * max(1, self.items))}"/>'
                f"<price>{1 + r() * 500:.2f}</price><date>{_date(r)}</date>"
                f"<quantity>{1 + int(r() * 2)}</quantity>"
                f"<type>{'Regular' if r() < 0.7 else 'Featured'}</type>{annotation}"
                "</closed_auction>\n")


class _Sink:
    """Buffered output that knows how many bytes it has taken (ASCII: one a character)."""

    def __init__(self, f: TextIO) -> None:
        self.f = f
        self.buffered: list[str] = []
        self.pending = 0
        self.flushed = 0
        self.elements = 0

    @property
    def size(self) -> int:
        return self.flushed + self.pending

    def put(self, markup: str) -> None:
        self.buffered.append(markup)
        self.pending += len(markup)
        if self.pending >= CHUNK:
            self.flush()

    def flush(self) -> None:
        chunk = "".join(self.buffered)
        self.elements += chunk.count("</") + chunk.count("/>")
        self.f.write(chunk)
        self.flushed += self.pending
        self.buffered.clear()
        self.pending = 0


def _fill(sink: _Sink, entity: Callable[[], str], target: int) -> None:
    """Entities until the output reaches ``target`` bytes (at least one)."""
    put = sink.put
    put(entity())
    while sink.flushed + sink.pending < target:
        put(entity())


def _xmark(rng: random.Random, sink: _Sink, size: int) -> None:
    g = _XMark(rng, size)
    sink.put('<?xml version="1.0" encoding="UTF-8"?>\n<site>\n')
    reached = 0.0
    for section, share in _SHARES:
        sink.put(f"<{section}>\n")
        if section == "regions":
            for region, part in _REGIONS:
                sink.put(f"<{region}>\n")
                reached += share * part
                _fill(sink, g.item, int(reached * size))
                sink.put(f"</{region}>\n")
        else:
            reached += share
            # what is left to close: the section and the site
            target = int(reached * size) - len(f"</{section}>\n") \
                - (len("</site>\n") if section == "closed_auctions" else 0)
            entity: Callable[[], str] = {
                "categories": g.category, "catgraph": g.edge, "people": g.person,
                "open_auctions": g.open_auction, "closed_auctions": g.closed_auction}[section]
            _fill(sink, entity, target)
        sink.put(f"</{section}>\n")
    sink.put("</site>\n")


_AMINO = "ACDEFGHIKLMNPQRSTVWY"
_MOL_TYPES = ["protein", "mRNA", "DNA", "genomic RNA"]
_SUPERFAMILIES = ["cytochrome c", "ferredoxin", "globin", "kinase", "protease inhibitor",
                  "zinc finger", "hemoglobin", "iron-sulfur protein", "ribosomal protein"]
_FEATURES = ["binding site", "active site", "domain", "disulfide bonds", "modified site",
             "region", "cleavage site"]


class _Protein:
    """The entries of a protein database; ``entry`` returns one entry's markup."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng.random
        self.w = _Words(rng)
        self.sequence = "".join(rng.choice(_AMINO) for _ in range(1 << 16))
        self.entries = 0

    def _author(self) -> str:
        r, w = self.r, self.w
        return f"<author>{_pick(r, w.last)}, {_pick(r, w.first)[0]}.</author>"

    def _reference(self, n: int, k: int) -> str:
        r, w = self.r, self.w
        authors = "".join(self._author() for _ in range(1 + int(r() * 8)))
        title = f"<title>{_pick(r, w.sentences)}</title>" if r() < 0.8 else ""
        volume = (f"<volume>{1 + int(r() * 300)}</volume><pages>{1 + int(r() * 900)}-"
                  f"{1000 + int(r() * 900)}</pages>" if r() < 0.7 else "")
        xrefs = "".join(f"<xref><db>{'MUID' if r() < 0.5 else 'PMID'}</db><uid>"
                        f"{int(r() * 99999999)}</uid></xref>" for _ in range(int(r() * 3)))
        xrefs = f"<xrefs>{xrefs}</xrefs>" if xrefs else ""
        refinfo = (f'<refinfo refid="A{n}.{k}"><authors>{authors}</authors><citation>'
                   f"{_pick(r, w.phrases).title()}</citation>{title}<year>"
                   f"{1970 + int(r() * 36)}</year>{volume}{xrefs}</refinfo>")
        accinfo = ""
        if r() < 0.5:
            accinfo = (f'<accinfo label="{_pick(r, w.words)[:4].upper()}"><accession>'
                       f"{chr(65 + int(r() * 26))}{int(r() * 99999):05d}</accession>"
                       f"<mol-type>{_pick(r, _MOL_TYPES)}</mol-type><seq-spec>1-"
                       f"{10 + int(r() * 900)}</seq-spec></accinfo>")
        note = f"<note>{_pick(r, w.sentences)}</note>" if r() < 0.2 else ""
        return f"<reference>{refinfo}{accinfo}{note}</reference>"

    def entry(self) -> str:
        r, w = self.r, self.w
        n = self.entries
        self.entries += 1
        accessions = "".join(f"<accession>{chr(65 + int(r() * 26))}{int(r() * 99999):05d}"
                             "</accession>" for _ in range(1 + int(r() * 2)))
        alt = f"<alt-name>{_pick(r, w.phrases)}</alt-name>" if r() < 0.3 else ""
        common = f"<common>{_pick(r, w.words)}</common>" if r() < 0.6 else ""
        parts = [f'<ProteinEntry id="E{n}"><header><uid>P{n:07d}</uid>{accessions}'
                 f"<created_date>{_date(r)}</created_date><seq-rev_date>{_date(r)}"
                 f"</seq-rev_date><txt-rev_date>{_date(r)}</txt-rev_date></header>"
                 f"<protein><name>{_pick(r, w.phrases)}</name>{alt}</protein><organism>"
                 f"<source>{_pick(r, w.last)} {_pick(r, w.words)}</source>{common}<formal>"
                 f"{_pick(r, w.last)} {_pick(r, w.words)}</formal></organism>"]
        parts.extend(self._reference(n, k) for k in range(1 + int(r() * 4)))
        if r() < 0.4:
            codon = f"<codon>{_pick(r, w.words)}</codon>" if r() < 0.3 else ""
            introns = f"<introns>{int(r() * 300)}/{int(r() * 3)}</introns>" if r() < 0.4 \
                else ""
            parts.append(f"<genetics><gene><uid>{_pick(r, w.words).upper()}</uid></gene>"
                         f"{codon}{introns}</genetics>")
        parts.append(f"<classification><superfamily>{_pick(r, _SUPERFAMILIES)}</superfamily>"
                     "</classification>")
        if r() < 0.7:
            keywords = "".join(f"<keyword>{_pick(r, w.phrases)}</keyword>"
                               for _ in range(1 + int(r() * 4)))
            parts.append(f"<keywords>{keywords}</keywords>")
        for _ in range(int(r() * 4)):
            parts.append(f"<feature><feature-type>{_pick(r, _FEATURES)}</feature-type>"
                         f"<description>{_pick(r, w.phrases)}</description><seq-spec>"
                         f"{1 + int(r() * 300)}</seq-spec></feature>")
        length = 40 + int(r() * 260) + int(r() * 260)
        start = int(r() * ((1 << 16) - length))
        parts.append(f"<summary><length>{length}</length><type>"
                     f"{'complete' if r() < 0.8 else 'fragment'}</type></summary><sequence>"
                     f"{self.sequence[start:start + length]}</sequence></ProteinEntry>\n")
        return "".join(parts)


def _protein(rng: random.Random, sink: _Sink, size: int) -> None:
    g = _Protein(rng)
    sink.put('<?xml version="1.0" encoding="UTF-8"?>\n<ProteinDatabase>\n')
    _fill(sink, g.entry, size - len("</ProteinDatabase>\n"))
    sink.put("</ProteinDatabase>\n")


def generate(kind: str, size: int, out: str | Path, *, seed: int = 1) -> Generated:
    """Write a ``kind`` document of about ``size`` bytes to ``out`` (deterministic)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    start = time.perf_counter()
    rng = random.Random(f"{kind}:{seed}")
    path = Path(out)
    with path.open("w", encoding="ascii", newline="\n") as f:
        sink = _Sink(f)
        (_xmark if kind == "xmark" else _protein)(rng, sink, size)
        sink.flush()
    return Generated(kind, path, size, sink.size, sink.elements, time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("size", type=parse_size, help="10MB, 100MB, 1GB, 512KiB, ...")
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    done = generate(args.kind, args.size, args.out, seed=args.seed)
    print(f"{done.path}: {done.kind}, {done.size:,} bytes ({done.size / done.requested:.2%} of "
          f"{done.requested:,}), {done.elements:,} elements, {done.seconds:.1f} s "
          f"({done.size / done.seconds / 1e6:.0f} MB/s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
