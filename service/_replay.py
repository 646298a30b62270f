"""The engine rebuilt from the log at start (issue 31, items 7 and 8): each row replayed in
order, a damaged one named, and the log compacted to the live state.

**Damaged rows.** A row that cannot be replayed — not JSON, an unknown kind, a registration
that no longer parses, a signal with a bad parameter, the unregistration of an unknown id —
stops the start with :class:`DamagedLogError`, one line naming the row (``xmlevents serve``
prints it and exits with status 3). With ``skip_bad_rows`` (``serve --skip-bad-rows``) each
such row is left out instead: moved whole, with the reason, to the table ``skipped`` (so
nothing is thrown away; a registration's expression leaves the ``expressions`` table with
it), reported, and every good row is replayed. A file SQLite cannot read (not a database,
a damaged page) is no row to skip: :class:`DamagedLogError` names the last row read.

**Compaction.** The engine's state is its live registrations and the instances its operator
nodes store (recent context: each node keeps the most recent instance of each child by
grouping key, never consumes one). An instance is made of signals, so the state depends only
on the registrations still live and the signals some stored instance holds: replaying those,
in their order and with their ticks, builds the same state (``tests/service/test_listing.py``
checks it on random programs, both joins, against the engine of the whole history).
:func:`live_log` writes that log — each live registration where it came, the kept signals
between them in ``kept`` rows with their ticks, and a ``clock`` row with the engine's last
tick so that ids go on from there — and the log is replaced with it when it holds
:data:`COMPACT_FACTOR` times the live state's entries and :data:`COMPACT_MIN` more: at start,
and in the writer thread once the log has grown that much since the last look (the service's
``_logged``), so a restart takes time in proportion to the live state, not to the history,
however long the service ran. What the log no longer holds is the history itself: the
notifications it produced are stored apart, and stay.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from xmlevents._foundation.collector import collector_paused
from xmlevents.algebra import XmlEventsError

from ._commit import Writes
from ._db import Journal
from ._engine import Engine, Join, Provider, Signal, check_signal
from ._errors import RegistrationError
from ._json import signal_json
from ._markup import parse_markup
from ._text import parse_expression
from .ast import Registration, check_value

__all__ = ["DamagedLogError", "Replayed", "Skipped", "replay", "live_log", "registration",
           "compact", "look", "grown", "COMPACT_FACTOR"]

#: The log is compacted when it holds more than this many times the entries of the live
#: state, and at least :data:`COMPACT_MIN` more: a smaller log replays in well under a second,
#: and stays the history of what was signalled. A compaction rewrites the live state, so
#: where that state stays large while signals flow (each replacing an older one) its cost
#: an entry is its cost a live entry over ``COMPACT_FACTOR - 1``: at 2, a fifth of the
#: writer's time with 50,000 signals live; at 4, 8% (issue 31, item 10), a restart then
#: replaying at most four times the live state.
COMPACT_FACTOR = 4
COMPACT_MIN = 10_000
#: Kept signals in one row of a compacted log.
KEPT_ROW = 1000


class DamagedLogError(sqlite3.DatabaseError):
    """A row of the service's log cannot be replayed, or the log cannot be read past a row
    (an :class:`sqlite3.DatabaseError`, so that ``xmlevents serve`` reports it as every
    database it cannot use: one line, status 3)."""

    def __init__(self, seq: int | None, kind: str | None, reason: str) -> None:
        where = (f"log row {seq} ({kind})" if seq is not None and kind is not None
                 else "the log")
        super().__init__(f"{where} cannot be replayed: {reason}")
        self.seq = seq
        self.kind = kind
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Skipped:
    """A log row left out by a replay with ``skip_bad_rows``, and why."""

    seq: int
    kind: str
    reason: str


@dataclass(slots=True)
class Replayed:
    """A rebuilt engine and what the service keeps beside it."""

    engine: Engine
    #: expression id -> its client, and -> its callback URL.
    owner: dict[str, str] = field(default_factory=dict)
    callbacks: dict[str, str] = field(default_factory=dict)
    #: expression id -> (the engine's tick when it was registered, client, logged body),
    #: in registration order: what :func:`live_log` needs.
    registered: dict[str, tuple[int, str, dict[str, Any]]] = field(default_factory=dict)
    #: Log rows replayed, and those left out; entries replayed (each signal one).
    rows: int = 0
    entries: int = 0
    #: The live state's entries when :func:`compact` last looked (0: never), and the log's
    #: entries then.
    live: int = 0
    looked: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    #: The expressions taken out of the ``expressions`` table with a skipped registration.
    dropped: list[str] = field(default_factory=list)


def registration(fmt: str, source: str, variables: Mapping[str, Any]) -> Registration:
    """A registration from its logged form: markup, or text with its input variables."""
    if fmt == "xml":
        return parse_markup(source)
    expression = parse_expression(source)
    inputs = {}
    for name, value in variables.items():
        try:
            inputs[name] = check_value(value, f"variable {name}")
        except XmlEventsError as exc:
            raise RegistrationError(str(exc)) from None
    return Registration(expression, inputs)


def _signals(data: Any) -> list[tuple[str, dict[str, Any], float | None]]:
    """A signals row's events, every one checked before any is applied."""
    out = []
    for i, event in enumerate(data if isinstance(data, list) else [data]):
        if not isinstance(event, dict):
            raise ValueError(f"event {i} is not an object")
        at = event.get("time")
        out.append((event["type"], check_signal(event["type"], event["params"], at),
                    None if at is None else float(at)))
    return out


def _apply(state: Replayed, kind: str, client: str, data: object) -> None:
    """Replay one row (raises on a row that cannot be: see :func:`replay`)."""
    engine = state.engine
    if kind == "signals" and isinstance(data, list):
        for etype, params, at in _signals(data):
            engine.signal(etype, params, time=at)
        state.entries += len(data)
        return
    if kind == "kept" and isinstance(data, list):
        # kept signals of a compacted log, each with its own tick: ids and order as they were
        events = _signals(data)
        ticks = [int(event["tick"]) for event in data]
        if any(t <= before for t, before in zip(ticks, [engine.tick, *ticks], strict=False)):
            raise ValueError(f"its ticks do not follow the last, {engine.tick}, in order")
        for (etype, params, at), tick in zip(events, ticks, strict=True):
            engine.tick = tick - 1
            engine.signal(etype, params, time=at)
        state.entries += len(data)
        return
    state.entries += 1
    if not isinstance(data, dict):
        raise ValueError("its body is not a JSON object")
    body: dict[str, Any] = data
    if kind == "register":
        ident = body["id"]
        tick = engine.tick
        engine.register(registration(body["format"], body["source"],
                                     body.get("variables") or {}), ident=ident)
        engine.dead()  # its empty result, if any, is stored already
        state.owner[ident] = client
        if body.get("callback"):
            state.callbacks[ident] = body["callback"]
        state.registered[ident] = (tick, client, body)
    elif kind == "unregister":
        engine.unregister(body["id"])
        state.owner.pop(body["id"], None)
        state.callbacks.pop(body["id"], None)
        state.registered.pop(body["id"], None)
    elif kind in ("signals", "signal"):  # a request's one event, or one of an older log
        for etype, params, at in _signals(body):
            engine.signal(etype, params, time=at)
    elif kind == "clock":
        engine.tick = max(engine.tick, int(body["tick"]))
    else:
        raise ValueError(f"unknown kind {kind!r}")


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"field {exc.args[0]!r} missing"
    if isinstance(exc, json.JSONDecodeError):
        return f"its body is not JSON ({exc})"
    return str(exc) or type(exc).__name__


def replay(journal: Journal, *, join: Join = "correlate",
           providers: Mapping[str, Provider] | None = None, skip_bad_rows: bool = False,
           ) -> Replayed:
    """A new engine rebuilt from ``journal``'s log (the notifications are stored already).
    With ``skip_bad_rows`` the rows that cannot be replayed are left out, moved to the table
    ``skipped`` and listed in :attr:`Replayed.skipped`; without, the first one raises.

    Raises:
        DamagedLogError: a row cannot be replayed (without ``skip_bad_rows``), or the log
            cannot be read past a row (SQLite: "database disk image is malformed").
    """
    state = Replayed(Engine(join=join, providers=providers))
    # The cyclic collector off while the graph is built: it scanned the growing engine again
    # and again (a quarter to a third of a start at 10,000 expressions); what a replay drops
    # is acyclic, freed as it goes.
    with collector_paused(), contextlib.closing(journal.rows()) as rows:
        _replay_rows(state, rows, skip_bad_rows)
    if skip_bad_rows:
        state.dropped = journal.skip(state.skipped, state.registered)
    return state


def _replay_rows(state: Replayed, rows: Iterator[tuple[int, str, str, str]],
                 skip_bad_rows: bool) -> None:
    last: int | None = None
    while True:
        try:
            row = next(rows, None)
        except sqlite3.DatabaseError as exc:
            after = "the first row" if last is None else f"row {last}"
            raise DamagedLogError(None, None, f"SQLite cannot read it past {after}: {exc}"
                                  ) from None
        if row is None:
            break
        seq, kind, client, text = row
        last = seq
        try:
            _apply(state, str(kind), str(client), json.loads(text))
        except (XmlEventsError, ValueError, KeyError, TypeError) as exc:
            if not skip_bad_rows:
                raise DamagedLogError(seq, str(kind), _reason(exc)) from None
            state.skipped.append(Skipped(seq, str(kind), _reason(exc)))
            continue
        state.rows += 1


def _kept(engine: Engine) -> dict[int, Signal]:
    """The signals the engine's stored instances hold, by tick (unordered): what a look at
    the log counts, and a compaction writes (:func:`_oldest_first`)."""
    return {s.ts: s for node in engine.operators for groups in node.storage.values()
            for group in groups.values() for buf in group.bufs for instance in buf
            for s in instance.events}


def _oldest_first(kept: dict[int, Signal]) -> list[Signal]:
    return [kept[t] for t in sorted(kept)]


def kept_signals(engine: Engine) -> list[Signal]:
    """The signals the engine's stored instances hold, oldest first: with the live
    registrations, all its state depends on."""
    return _oldest_first(_kept(engine))


def live_log(state: Replayed, signals: list[Signal] | None = None
             ) -> tuple[list[tuple[str, str, Any]], int]:
    """The log of the live state (see the module): (kind, client, body) rows, the kept
    signals between two registrations in ``kept`` rows of at most :data:`KEPT_ROW` (their
    bodies JSON already, written by hand: encoding is a third of a compaction's cost); and
    the entries it holds (each signal one). ``signals``: :func:`kept_signals`, if known."""
    if signals is None:
        signals = kept_signals(state.engine)
    out: list[tuple[str, str, Any]] = []
    i = 0

    def kept(upto: float) -> None:
        nonlocal i
        end = i
        while end < len(signals) and signals[end].ts <= upto:
            end += 1
        for start in range(i, end, KEPT_ROW):
            row = [signal_json(s, ident=False) for s in signals[start:min(end, start + KEPT_ROW)]]
            out.append(("kept", "", "[" + ",".join(row) + "]"))
        i = end

    for tick, client, body in state.registered.values():
        kept(tick)
        out.append(("register", client, body))
    kept(float("inf"))
    out.append(("clock", "", {"tick": state.engine.tick}))
    return out, len(state.registered) + len(signals)


def grown(state: Replayed) -> bool:
    """Whether the log has grown enough since :func:`compact` last looked to look again: by
    ``COMPACT_FACTOR - 1`` times the live state it saw, and :data:`COMPACT_MIN` (after a
    compaction: to :data:`COMPACT_FACTOR` times the live state). Counted from the last look,
    not from the live state alone: the look walks the engine's stored instances, so it must
    come after as many new entries to cost O(1) an entry. Counted from the live state, a
    log of which half stays live (every signal an initiator kept) was looked at again after
    every change once it held 20,000 signals: a quadratic cost, a fifth of the writer's time
    in batches at 25,000 signals and growing (issue 31, item 10)."""
    return (state.entries - state.looked
            > max((COMPACT_FACTOR - 1) * state.live, COMPACT_MIN))


def look(state: Replayed) -> tuple[int, list[tuple[str, str, Any]] | None]:
    """The live state's entries (registrations and kept signals), and :func:`live_log` if
    the log holds enough more than that to be compacted (:data:`COMPACT_FACTOR` times, and
    :data:`COMPACT_MIN` more), else None: the walk of the stored instances and the writing
    of the rows, which a running service does in a child process (:mod:`._compaction`)."""
    # Counted first, the log of the live state written only to replace the log: most looks
    # do not compact, and writing it was half of a look's cost (issue 31, item 10).
    kept = _kept(state.engine)
    entries = len(state.registered) + len(kept)
    if state.entries <= max(COMPACT_FACTOR * entries, entries + COMPACT_MIN):
        return entries, None
    return entries, live_log(state, _oldest_first(kept))[0]


def compact(journal: Writes, state: Replayed,
            report: Callable[[str], object] | None = None) -> bool:
    """Replace the log with :func:`live_log` when it holds :data:`COMPACT_FACTOR` times
    its entries (registrations, unregistrations, signals); whether it was. Also removes
    acknowledged notifications and folds the quota's discards still marked into ranges (see
    :meth:`Journal.purge`). ``state`` must be the engine of the log as it is (at start, or in
    the writer thread after a commit, ``Service(compaction="thread")``)."""
    journal.purge()
    entries, live = look(state)
    state.live, state.looked = entries, state.entries
    if live is None:
        return False
    journal.replace_log(live)
    replayed, state.entries, state.looked = state.entries, entries, entries
    if report is not None:
        report(f"log compacted: {replayed} entries replayed, {entries} kept "
               f"({len(state.registered)} live expressions)")
    return True
