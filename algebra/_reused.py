"""Reused event ids, found in memory that follows a horizon, not the stream (issue 29).

Composites name their constituents by id (DESIGN section 6), so two events with one id are
ambiguous where a composite could hold both. The event reader (``read_events(...,
check_ids=True)``) used to keep every id of the stream and compare them at the end: 496 MB
for 4·10^6 events, and a ``detect`` on a live pipe grew until the kernel killed it. This
keeps only the ids of a *horizon*:

- ``ticks=H``: the events of the last ``H`` ticks. With every operator of a graph windowed
  (``--within H`` ticks), a composite spans fewer than ``H`` ticks, so two events further
  apart can never share one (``xmlevents detect`` passes the graph's widest tick window).
- otherwise the last ``events`` events (:data:`RECENT_IDS` by default): a fixed-size
  structure, for graphs without a window or with a duration window (whose number of
  events is unbounded).

A reuse whose events lie inside the horizon (tick difference below ``H``; index difference
below ``events``) is always counted, with both lines; one outside it is not. The ids are
kept in two generations, each spanning at least the horizon, filled a batch at a time in C
(``dict(zip(...))``, ``isdisjoint``): the reader pays two list appends a line, and only a
batch with a reuse is scanned in Python. So at most about twice the horizon plus a batch
of ids is held.
"""

from __future__ import annotations

__all__ = ["BATCH", "RECENT_IDS", "RecentIds"]

#: The horizon in events where none in ticks is given: 2^16 events, about 7 MB of ids.
RECENT_IDS = 1 << 16
#: Events read between two looks at the batch (the reader's ``step``).
BATCH = 4096


class RecentIds:
    """The ids of the events of a horizon, and the reuses found among them so far.

    The reader appends every event's id to :attr:`ids` and its tick to :attr:`ts` (bound
    ``append`` methods: they stay valid, the lists are cleared in place) and calls
    :meth:`step` every :data:`BATCH` lines or so and before reporting.

    >>> r = RecentIds(ticks=10)
    >>> for ident, ts in [("a", 1), ("b", 2), ("a", 5), ("b", 30)]:
    ...     r.ids.append(ident); r.ts.append(ts)
    >>> r.step(30); r.reused, r.first
    (1, ('a', 2, 0))
    """

    __slots__ = ("_cur", "_cur_first", "_cur_ts", "_old", "_old_first", "_old_ts", "base",
                 "events", "first", "ids", "reused", "ticks", "ts")

    def __init__(self, ticks: int | None = None, events: int = RECENT_IDS) -> None:
        self.ticks = ticks
        self.events = events
        #: The batch being read: ids (as text) and ticks, one entry an event.
        self.ids: list[str] = []
        self.ts: list[int] = []
        #: The index (from 0, over the events with an id entry) of ``ids[0]``.
        self.base = 0
        #: How many events reuse an id inside the horizon, and (id, index, earlier index)
        #: of the first of them.
        self.reused = 0
        self.first: tuple[str, int, int] | None = None
        # Two generations of id -> index of its latest event, with their ticks (by index
        # from their first): a lookup goes to the newer first.
        self._cur: dict[str, int] = {}
        self._cur_ts: list[int] = []
        self._cur_first = 0
        self._old: dict[str, int] = {}
        self._old_ts: list[int] = []
        self._old_first = 0

    def __len__(self) -> int:
        """How many ids are held (the batch and both generations)."""
        return len(self.ids) + len(self._cur) + len(self._old)

    @property
    def oldest(self) -> int:
        """The index of the oldest event whose id may still be held."""
        return self._old_first if self._old else self._cur_first

    def step(self, now: int | None) -> None:
        """Compare the batch with itself and the generations, then add it; ``now`` is the
        tick of the last event read (kept or not; None: none yet)."""
        ids, ts = self.ids, self.ts
        n = len(ids)
        if n:
            base = self.base
            batch = dict(zip(ids, range(base, base + n), strict=True))
            keys = batch.keys()
            if (len(batch) != n or not keys.isdisjoint(self._cur.keys())
                    or not keys.isdisjoint(self._old.keys())):
                self._scan(ids, ts, base)
            self._cur.update(batch)
            self._cur_ts += ts
            ids.clear()
            ts.clear()
            self.base = base + n
        self._turn(now)

    def _turn(self, now: int | None) -> None:
        """A new generation once the current one spans the horizon: the old one then lies
        wholly outside it (its last event is older than the current one's first)."""
        cur_ts = self._cur_ts
        if not cur_ts:
            return
        if self.ticks is not None:
            full = now is not None and now - cur_ts[0] >= self.ticks
        else:
            full = self.base - self._cur_first >= self.events
        if full:
            self._old, self._old_ts, self._old_first = self._cur, cur_ts, self._cur_first
            self._cur, self._cur_ts, self._cur_first = {}, [], self.base

    def _tick(self, index: int, batch_ts: list[int], base: int) -> int:
        """The tick of the event at ``index`` (held in the batch or a generation)."""
        if index >= base:
            return batch_ts[index - base]
        if index >= self._cur_first:
            return self._cur_ts[index - self._cur_first]
        return self._old_ts[index - self._old_first]

    def _scan(self, ids: list[str], ts: list[int], base: int) -> None:
        """The batch event by event (it has a reuse somewhere): count those inside the
        horizon against the latest earlier event with the id."""
        seen: dict[str, int] = {}
        cur, old, ticks = self._cur, self._old, self.ticks
        for k, ident in enumerate(ids):
            index = base + k
            earlier = seen.get(ident)
            if earlier is None:
                earlier = cur.get(ident)
                if earlier is None:
                    earlier = old.get(ident)
            seen[ident] = index
            if earlier is None:
                continue
            if ticks is not None:
                inside = ts[k] - self._tick(earlier, ts, base) < ticks
            else:
                inside = index - earlier < self.events
            if inside:
                self.reused += 1
                if self.first is None:
                    self.first = (ident, index, earlier)
