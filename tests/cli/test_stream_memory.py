"""Memory that follows the live state in ``detect`` and ``cel`` (issue 29, item 1): the ids
kept for the reused-id warning and for printing complex events stay bounded by the window,
and a reuse inside it is still found."""

from __future__ import annotations

import json
import pathlib

import pytest

from tests.cli.helpers import EI, line, run
from xmlevents._cli.cel import RELEASE_EVERY, IdMap, _evaluated
from xmlevents.algebra import read_events
from xmlevents.algebra._reused import BATCH, RecentIds
from xmlevents.cel import Evaluation, Event, compile_query


@pytest.fixture
def here(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _stream(n: int, reuse: dict[int, int] | None = None) -> list[str]:
    """``n`` item insertions, one a tick from 1, ids ``e<tick>`` (line ``k`` reusing line
    ``reuse[k]``'s id)."""
    reuse = reuse or {}
    return [line(id=f"e{reuse.get(t, t)}", ts=t, op="ins", path="/order/item",
                 ids=["o1", f"i{t}"]) for t in range(1, n + 1)]


def test_detect_within_warns_a_reuse_inside_the_window_with_its_lines(
        here: pathlib.Path) -> None:
    """With --within 100, an id reused 50 ticks later (lines past a batch) is warned with
    both lines; one reused 5,000 ticks later, which no composite can hold with it, is not."""
    lines = _stream(12_000, {9_050: 9_000, 6_000: 1_000})
    (here / "s.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, _, err = run(["detect", "--within", "100", "--define", EI, "s.jsonl"])
    assert status == 0
    assert err == ('xmlevents detect: warning: 1 event reuses an id (id "e9000" at line 9050, '
                   "first seen at line 9000); composites name their constituents by id\n")


def test_detect_without_window_warns_within_the_recent_events(here: pathlib.Path) -> None:
    """Without a window the last RECENT_IDS events' ids are compared: a reuse 5,000 events
    later is warned, as before."""
    lines = _stream(12_000, {6_000: 1_000})
    (here / "s.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, _, err = run(["detect", "--define", EI, "s.jsonl"])
    assert status == 0
    assert '(id "e1000" at line 6000, first seen at line 1000)' in err


def test_reader_ids_stay_bounded_by_the_tick_horizon() -> None:
    """Reading 100,000 events with a horizon of 100 ticks holds at most two generations of
    about a batch each, whatever the stream's length; blank lines are dropped with them."""
    lines = _stream(100_000)
    lines[50_000:50_000] = [""] * 3
    reader = read_events(lines, check_ids=True, id_horizon=100)
    held = 0
    for _ in reader:
        ids = reader._ids
        assert ids is not None
        held = max(held, len(ids))
    assert held <= 2 * (BATCH + 100) + 2
    assert reader.reused_ids() == (0, None)
    assert len(reader._blank) == 0


def test_recent_ids_by_events_forget_beyond_the_horizon() -> None:
    """Without ticks, a reuse closer than ``events`` events is counted, one further apart is
    not, and the ids held stay under twice the horizon plus a batch."""
    r = RecentIds(events=1_000)
    held = 0
    for k in range(50_000):
        ident = "x" if k in (10, 500, 20_000) else f"e{k}"  # 10->500 inside; ->20,000 not
        r.ids.append(ident)
        r.ts.append(k)
        if len(r.ids) == 100:
            r.step(k)
            held = max(held, len(r))
    r.step(None)
    assert (r.reused, r.first) == (1, ("x", 500, 10))
    assert held <= 2 * (1_000 + 100)


@pytest.mark.parametrize("window", ["WITHIN 50 EVENTS", "WITHIN 20 SECONDS", "WITHIN 30 [t]"])
def test_cel_ids_released_with_every_window_unit(window: str) -> None:
    """The id map holds the window's positions and at most RELEASE_EVERY more, for events,
    durations and attribute windows; the complex events keep their ids."""
    query = compile_query(f"SELECT * FROM S WHERE A ; B {window}")
    ids = IdMap()

    def events() -> object:
        for p in range(30_000):
            ids.add(p, f"e{p}")
            yield Event(p, "AB"[p % 2], {"t": p}, time=p / 2)

    held, found = 0, 0
    for m in _evaluated(Evaluation(query), events(), ids):  # type: ignore[arg-type]
        assert all(p in ids.ids for p in m.positions)
        found += 1
        held = max(held, len(ids))
    assert found > 0
    assert len(ids) <= 60 + RELEASE_EVERY + 1


def test_cel_without_window_keeps_every_id() -> None:
    """Without a window a run may use any earlier event: the horizon is -inf, nothing is
    released."""
    ev = Evaluation(compile_query("SELECT * FROM S WHERE A ; B"))
    for p in range(10):
        ev.push(Event(p, "A"))
    assert ev.horizon == float("-inf")


def test_cel_command_prints_ids_of_a_long_windowed_stream(here: pathlib.Path) -> None:
    """The command line's ids survive the releases: the last complex events of 5,000 events
    under WITHIN 1 EVENTS name their events' ids."""
    text = "\n".join(json.dumps({"type": "AB"[p % 2], "id": f"e{p}"}) for p in range(5_000))
    (here / "s.jsonl").write_text(text + "\n", encoding="utf-8")
    status, out, _ = run(["cel", "SELECT * FROM S WHERE A ; B WITHIN 1 EVENTS", "s.jsonl"])
    assert status == 0
    rows = [json.loads(x) for x in out.splitlines()]
    assert len(rows) == 2_500
    assert rows[-1]["ids"] == ["e4998", "e4999"]
