"""The differential suite against CORE (issue 32, item 3): CORE's own queries, generated streams
of their schemas, and both engines' complex events compared per end position.

The queries (``data/core_queries.json``) are every query of CORE's repository (commit
cedb3e11, 2026-06-27) on one stream: its experiments' (stocks, smart homes, taxis, crypto,
Bluesky: ``src/targets/experiments/*/queries``) and its evaluation unit tests'
(``src/tests/unit_tests/.../evaluation_algorithm``, the ones on two streams left out: pycer's
offline server sends on one). Each runs under ``--dialect core`` here and in CORE (``pycer``
on PyPI, CPython 3.13 only: run in a subprocess of that interpreter, one per query, since
pycer cannot be reused after ``get_output`` — a second ``send_events`` segfaults).

The streams are random but built from each query's constants (names, households, zones
follow the queries' chains with some noise), with times that make windows' boundaries occur:
every event carries ``n`` (its position) as a first attribute added to CORE's declaration,
so CORE's printed complex events name their positions, and a strictly increasing time (a
multiple of 1/8 s, exact in both engines), given to CORE as its primary time, so each printed
end time names its end position.

Where CORE departs from its own documentation, the difference is expected and named
(:data:`KNOWN`): its selection strategies are parsed and never applied (``select.hpp``'s
strategy is read nowhere in evaluation), so ``SELECT LAST`` is compared as ``ALL`` too.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import random
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xmlevents.cel import Event, Strategy, check_automaton, compile_query, evaluate
from xmlevents.cel.ast import Query

ENV = "XMLEVENTS_CORE_PYTHON"
LOCK = Path(tempfile.gettempdir()) / "xmlevents-pycer.lock"

#: schema -> (CORE's declaration of its event types, as its repository writes them (the unit
#: tests' Stock with every attribute they filter), with n:int added last to each; the
#: attribute CORE takes as primary time, if any)
SCHEMAS: dict[str, tuple[dict[str, list[tuple[str, str]]], str | None]] = {
    "stock": ({t: [("name", "string"), ("price", "int"), ("quantity", "int"), ("part", "int"),
                   ("stock_time", "int"), ("time", "primary_time"), ("n", "int")]
               for t in ("SELL", "BUY")}, "time"),
    "stocks": ({t: [("id", "int"), ("name", "string"), ("volume", "int"), ("price", "double"),
                    ("stock_time", "int"), ("n", "int")] for t in ("BUY", "SELL")}, None),
    "smart_homes": ({"LOAD": [("id", "int"), ("plug_timestamp", "int"), ("value", "double"),
                              ("plug_id", "int"), ("household_id", "int"), ("n", "int")]},
                    None),
    "taxis": ({"TRIP": [("id", "int"), ("medallion", "string"), ("hack_license", "string"),
                        ("pickup_datetime", "int"), ("dropoff_datetime", "int"),
                        ("long_time_in_secs", "int"), ("trip_distance", "double"),
                        ("pickup_zone", "string"), ("dropoff_zone", "string"),
                        ("payment_type", "string"), ("fare_amount", "double"),
                        ("surcharge", "double"), ("mta_tax", "double"),
                        ("tip_amount", "double"), ("tolls_amount", "double"),
                        ("total_amount", "double"), ("n", "int")]}, None),
    "crypto": ({t: [("product_id", "string"), ("price", "double"), ("open24h", "double"),
                    ("volume_24h", "double"), ("low_24h", "double"), ("high_24h", "double"),
                    ("volume_30d", "double"), ("best_bid", "double"),
                    ("best_bid_size", "double"), ("best_ask", "double"),
                    ("best_ask_size", "double"), ("last_size", "double"),
                    ("time", "primary_time"), ("n", "int")] for t in ("Buy", "Sell")}, "time"),
    "bluesky": ({t: [("did", "string"), ("kind", "string"), ("time", "primary_time"),
                     ("time_str", "string"), ("cid", "string"), ("operation", "string"),
                     ("record_type", "string"), ("n", "int")]
                 for t in ("CreatePost", "CreateFollow", "CreateLike", "CreateRepost")},
                "time"),
}
STREAM_NAME = {"stock": "Stock", "stocks": "S", "smart_homes": "S", "taxis": "S",
               "crypto": "TICKER", "bluesky": "Bluesky"}

#: CORE's selection strategies are parsed and never applied: ``SELECT LAST`` is ``ALL``.
KNOWN = "CORE applies no selection strategy (select.hpp: parsed, read nowhere): LAST is ALL"
#: ``LIMIT n`` keeps n complex events per end; which ones is each engine's order (CORE's: its
#: enumeration's, unspecified; xmlevents': the most recent), so the counts are compared.
KNOWN_LIMIT = "LIMIT keeps n per end in each engine's own order: compared by count per end"

#: the stocks queries' chain (q1-q10: SELL, BUY, BUY, ... over these names, twice), and
#: other-q1-q6's (SELL MSFT, BUY ORCL, BUY CSCO, SELL AMAT)
STOCK_CHAIN = ["INTC", "RIMM", "QQQ", "IPIX", "AMAT", "CSCO", "YHOO", "DELL", "ORCL", "MSFT",
               "INTC", "RIMM"]
OTHER_CHAIN = [("SELL", "MSFT"), ("BUY", "ORCL"), ("BUY", "CSCO"), ("SELL", "AMAT")]
HOUSE_CHAIN = [0, 2, 4, 6, 9, 10, 12, 14, 15, 4, 9, 10]
#: the taxis queries' chain of trips (pickup, dropoff), loc1 to loc12
TRIPS = [("East Harlem North", "Midwood"), ("Midwood", "Gravesend"),
         ("Gravesend", "West Brighton"), ("West Brighton", "Lincoln Square West"),
         ("Lincoln Square West", "Sutton Place/Turtle Bay North"),
         ("Sutton Place/Turtle Bay North", "East Concourse/Concourse Village"),
         ("East Concourse/Concourse Village", "East Harlem North"),
         ("East Harlem North", "East Harlem North"), ("East Harlem North", "Gravesend"),
         ("Gravesend", "Midwood"), ("Midwood", "Midwood"), ("Midwood", "Gravesend")]
ZONES = ["East Harlem North", "Midwood", "Gravesend", "West Brighton", "Lincoln Square West",
         "Sutton Place/Turtle Bay North", "East Concourse/Concourse Village"]


@dataclass(frozen=True)
class CoreQuery:
    name: str
    source: str
    schema: str
    text: str


def corpus() -> list[CoreQuery]:
    """Every query of the suite, in the data file's order."""
    data = json.loads((Path(__file__).parent / "data" / "core_queries.json").read_text())
    return [CoreQuery(**q) for q in data]


def declaration(schema: str) -> str:
    types, _ = SCHEMAS[schema]
    events = ", ".join(f"EVENT {t} {{ " + ", ".join(f"{a}:{k}" for a, k in attrs) + " }"
                       for t, attrs in types.items())
    return f"CREATE STREAM {STREAM_NAME[schema]} {{ {events} }}"


@dataclass(frozen=True)
class Generated:
    type: str
    attrs: dict[str, Any]
    eighths: int  # the time, in eighths of a second


def generate(schema: str, size: int, rng: random.Random, noise: float = 0.15
             ) -> list[Generated]:
    """A random stream of ``schema``: values from the queries' constants, following their
    chains except for a share ``noise`` of events (the long chains of 24 match only with
    little), and times whose gaps hit the queries' windows' edges (fewer gaps with less
    noise). ``noise`` 0: the chains exactly, each round of 24 followed by the "not exists"
    event, an eighth of a second apart (within CORE's default second, 8 events)."""
    out: list[Generated] = []
    t = 0
    clock = 0  # the attribute a window measures
    # the stocks stream follows other-q*'s chain instead (with noise only: the long chains
    # want the other one)
    other = noise >= 0.1 and rng.random() < 0.5

    def gap(*choices: int) -> int:
        return 0 if rng.random() > 2 * noise else rng.choice(choices)

    exact = noise == 0
    for n in range(size):
        t += 1 if exact else rng.choice([1, 1, 2, 4, 8, 9, 40, 80, 81])
        follow = rng.random() >= noise
        # some events are the "not exists" one that ends the queries measuring no output
        absent = n % 25 == 24 if exact else rng.random() < (0.08 if noise >= 0.1 else 0.03)
        i = n % 25 if exact else n  # the place in the chains
        if schema == "stock":
            # the unit tests' chain: SELL MSFT, SELL INTL, SELL or BUY AMZN
            name = ["MSFT", "INTL", "AMZN"][i % 3] if follow else rng.choice(
                ["MSFT", "INTL", "AMZN", "OTHER"])
            etype = "SELL" if follow and name != "AMZN" and noise < 0.1 else rng.choice(
                ["SELL", "BUY"])
            clock += gap(1, 2, 4, 5, 6, 500)
            attrs: dict[str, Any] = {
                "name": name,
                "price": rng.choice([50, 100, 101, 1999, 2000, 2500]),
                "quantity": rng.choice([60, 100, 120, 7]), "part": rng.choice([1, 2]),
                "stock_time": clock}
        elif schema == "stocks":
            etype, name = (OTHER_CHAIN[i % 4] if other else (["SELL", "BUY", "BUY"][i % 3],
                                                            STOCK_CHAIN[i % 12]))
            if not follow:
                etype, name = rng.choice(["SELL", "BUY"]), rng.choice(
                    STOCK_CHAIN + ["NotExists"])
            clock += gap(1, 1000, 5000, 9999, 10000)
            if absent:
                etype, name = "BUY", "NotExists"
            attrs = {"id": n, "name": name, "volume": 1 if exact else rng.choice([1, 2]),
                "price": rng.choice([11.0, 11.14, 18.92, 26.0, 30.5]), "stock_time": clock}
        elif schema == "smart_homes":
            etype = "LOAD"
            clock += gap(1, 9, 10)
            attrs = {"id": n, "plug_timestamp": clock,
                     "value": 80.0 if rng.random() >= noise else rng.choice(
                         [50.0, 76.0, 77.0]),
                     "household_id": 1000 if absent else HOUSE_CHAIN[i % 12] if follow
                     else rng.choice(HOUSE_CHAIN)}
        elif schema == "taxis":
            etype = "TRIP"
            clock += gap(10, 100, 999, 1000)
            pickup, dropoff = TRIPS[i % len(TRIPS)] if follow else (
                rng.choice(ZONES), rng.choice(ZONES))
            if absent:
                pickup = rng.choice(["NotExists", "Not Exist"])
            attrs = {"id": n, "pickup_zone": pickup, "dropoff_zone": dropoff,
                     "dropoff_datetime": clock}
        elif schema == "crypto":
            etype = rng.choice(["Buy", "Sell"])
            attrs = {"product_id": rng.choice(["ETH-USD", "ETH-USD", "BTC-USD"]),
                     "price": rng.choice([1.0, 2.0])}
        else:
            etype = rng.choice(["CreatePost", "CreatePost", "CreatePost", "CreateLike",
                                "CreateFollow"])
            attrs = {"did": rng.choice(["a", "b"])}
        types, time_attr = SCHEMAS[schema]
        if time_attr is not None:
            attrs[time_attr] = t * 125_000_000  # CORE's primary time, in nanoseconds
        attrs["n"] = n
        for a, kind in types[etype]:  # what no query reads: a constant of its type
            attrs.setdefault(a, {"int": 0, "double": 0.5, "string": "x"}.get(kind, 0))
        out.append(Generated(etype, attrs, t))
    return out


def events(stream: Sequence[Generated]) -> list[Event]:
    """The stream for xmlevents: times in seconds (eighths: exact floats)."""
    return [Event(i, g.type, g.attrs, g.eighths / 8) for i, g in enumerate(stream)]


# --- xmlevents ---------------------------------------------------------------------------------

Found = dict[int, set[tuple[int, ...]]]  # end position -> the complex events ending there


def ours(query: Query, stream: Sequence[Generated]) -> Found:
    out: Found = {}
    for m in evaluate(query, events(stream)):
        out.setdefault(m.end, set()).add(m.positions)
    return out


def compile_core(text: str) -> Query:
    """``text`` under ``--dialect core``, checked as the command line checks it."""
    query = compile_query(text, dialect="core")
    check_automaton(query.formula, text)
    return query


def as_all(query: Query) -> Query:
    return Query(Strategy.ALL, query.variables, query.streams, query.formula,
                 query.partition_by, query.within, query.consume, query.limit)


# --- CORE, under CPython 3.13 with pycer --------------------------------------------------------

# Run by the 3.13 interpreter: a job (JSON) on stdin, one query on one stream; prints JSON.
CORE_CHILD = r'''
import json, re, sys
import pycer
job = json.load(sys.stdin)
server = pycer.PyOfflineServer()
info = server.declare_stream(job["declaration"])
ids = {e.name: e.id for e in info.events_info}
try:
    server.add_query(job["query"])
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
    sys.exit(0)
make = {"int": pycer.PyIntValue, "primary_time": pycer.PyIntValue,
        "double": pycer.PyDoubleValue, "string": pycer.PyStringValue}
kinds = job["kinds"]
batch = [pycer.PyEvent(ids[t], [make[kinds[t][a]](v) for a, v in attrs],
                       pycer.PyIntValue(ns)) for t, attrs, ns in job["stream"]]
server.send_events(batch)
text = server.get_output()
found = []
for line in text.splitlines():
    m = re.match(r"\[(\d+),(\d+)\], ", line)
    if m:
        ns = sorted({int(v) for v in re.findall(r" (-?\d+) \]\)", line)})
        found.append([int(m.group(2)), ns])
print(json.dumps({"found": found}))
'''


def core_python() -> tuple[str | None, str]:
    """The CPython 3.13 with pycer (``$XMLEVENTS_CORE_PYTHON``, else pyenv's 3.13), or None
    and why not."""
    named = os.environ.get(ENV)
    candidates = [named] if named else sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/3.13*/bin/python")))
    for candidate in candidates:
        try:
            done = subprocess.run([candidate, "-c", "import pycer"], capture_output=True,
                                  timeout=60)
        except OSError:
            continue
        if done.returncode == 0:
            return candidate, ""
    where = f"${ENV} ({named})" if named else "~/.pyenv/versions/3.13*"
    return None, (f"no CPython 3.13 with pycer at {where}: pycer ships wheels for CPython "
                  f"3.13 only (pip install pycer there, or set {ENV})")


def run_core(python: str, query: CoreQuery, stream: Sequence[Generated],
             by_last: bool = False) -> Found | str:
    """CORE's complex events of ``query`` over ``stream``, per end position; or, where CORE
    refuses the query or crashes, what it said."""
    types, _ = SCHEMAS[query.schema]
    kinds = {t: dict(attrs) for t, attrs in types.items()}
    job = {"declaration": declaration(query.schema), "query": query.text, "kinds": kinds,
           "stream": [[g.type, [[a, g.attrs[a]] for a, _ in types[g.type]],
                       g.eighths * 125_000_000] for g in stream]}
    # pycer's offline server binds ZMQ ports from 6000 up in every process, so two at once
    # (the script beside the tests, two test workers) collide: one CORE at a time
    with tempfile.TemporaryDirectory() as tmp, open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
        done = subprocess.run([python, "-c", CORE_CHILD], input=json.dumps(job),
                              capture_output=True, text=True, cwd=tmp, timeout=300)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return f"CORE crashed (exit {done.returncode}): {done.stderr.strip()[-300:]}"
    result = json.loads(lines[-1])
    if "error" in result:
        return f"CORE refused it: {result['error']}"
    # CORE prints a complex event's [start, end] in what its window counts: the primary time
    # under a duration window or none (times here are at least 125,000,000 ns, far more than
    # positions), the stream position under an events window, the attribute's value under an
    # attribute window — there the last event's position is taken, which is the end where
    # every event is output (each query of the corpus with such a window selects *)
    at = {g.eighths * 125_000_000: i for i, g in enumerate(stream)}
    out: Found = {}
    for end, positions in result["found"]:
        where = positions[-1] if by_last else at.get(end, end)
        out.setdefault(where, set()).add(tuple(positions))
    return out


def differences(mine: Found, theirs: Found) -> Iterator[str]:
    """The end positions where the two differ, described."""
    for end in sorted(set(mine) | set(theirs)):
        a, b = mine.get(end, set()), theirs.get(end, set())
        if a != b:
            yield (f"end {end}: xmlevents only {sorted(a - b)[:3]}, "
                   f"CORE only {sorted(b - a)[:3]}")


def _counts(found: Found) -> Found:
    return {end: {(len(cs),)} for end, cs in found.items()}


@dataclass(frozen=True)
class Verdict:
    query: CoreQuery
    agrees: bool
    note: str
    outputs: int


def compare(python: str, query: CoreQuery, stream: Sequence[Generated]) -> Verdict:
    """``query`` over ``stream`` in both engines: whether they agree, and on what."""
    try:
        mine_q = compile_core(query.text)
    except Exception as exc:
        return Verdict(query, False, f"xmlevents refused it: {exc}", 0)
    by_last = mine_q.within is not None and mine_q.within.kind == "attribute"
    assert not by_last or mine_q.variables is None, query.name
    theirs = run_core(python, query, stream, by_last)
    if isinstance(theirs, str):
        return Verdict(query, False, theirs, 0)
    mine = ours(mine_q, stream)
    outputs = sum(map(len, theirs.values()))
    diff = list(differences(mine, theirs))
    if not diff:
        return Verdict(query, True, "", outputs)
    if mine_q.limit is not None and not list(differences(_counts(mine), _counts(theirs))):
        return Verdict(query, True, KNOWN_LIMIT, outputs)
    if mine_q.strategy not in (Strategy.ALL, Strategy.ANY) and \
            not list(differences(ours(as_all(mine_q), stream), theirs)):
        return Verdict(query, True, KNOWN, outputs)
    return Verdict(query, False, "; ".join(diff[:3]), outputs)
