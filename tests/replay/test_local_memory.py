"""The local replay holding only the live state (issue 29, item 1): the version index's
ways of reading a table back, the outputs written as produced, the report counted as the
rows pass and :func:`iter_history` — every output equal to the old behaviour's, whatever the
order of the input's rows."""

from __future__ import annotations

import gc
import gzip
import json
import random
import tracemalloc
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.algebra import DefinitionSet
from xmlevents.replay import (
    HistoryResult,
    VersionRows,
    _arrow,
    index_versions,
    iter_history,
    read_versions,
    replay_history,
    run_local,
)
from xmlevents.replay._report import report_of

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "purchase_orders.jsonl.gz"
EXAMPLE_DEFS = EXAMPLE.with_suffix("").with_suffix(".xev")
DEFS = "ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))"
OUTPUTS = ("events", "composites", "errors", "cel")

# Versions of a small order: each later one changes the one before a little; one is not
# well-formed (a parse error row), so that every kind of row comes out.
XML = ["<order><item/></order>",
       "<order><item><price>5</price></item></order>",
       "<order><item><price>5</price><quantity>2</quantity></item></order>",
       "<order><item><price>6</price><quantity>2</quantity></item><item/></order>",
       "<order><item><price>6</price>",
       "<order><item><price>6</price><quantity>3</quantity></item></order>"]


def _key(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True)


def outputs(out: Path) -> dict[str, list[dict[str, Any]]]:
    """The rows of the four datasets, each sorted (a table's row order is not part of it)."""
    return {name: sorted(pq.read_table(out / name).to_pylist(), key=_key) for name in OUTPUTS}


def reference(path: Path, definitions: str | None = None,
              queries: tuple[str, ...] = ()) -> tuple[dict[str, list[dict[str, Any]]],
                                                        HistoryResult, list[dict[str, Any]]]:
    """The old behaviour: every row read into a list, replay_history over them, every output
    row kept; the rows it wrote, sorted as :func:`outputs` sorts them."""
    unreadable: list[dict[str, Any]] = []
    rows = list(read_versions(path, unreadable))
    result = replay_history(rows, definitions, queries=queries)
    got = {"events": result.events, "composites": result.composites,
           "errors": unreadable + result.errors, "cel": result.cel}
    return {k: sorted(v, key=_key) for k, v in got.items()}, result, unreadable


def write_lines(path: Path, lines: list[str]) -> Path:
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


# --- the example history -----------------------------------------------------------------


@pytest.mark.slow
def test_the_example_history_gives_the_old_outputs_and_report(tmp_path: Path) -> None:
    """run_local on the example history (compressed, not in order: its XML spilled and read
    back): every dataset's rows and the report equal those of replay_history over every row
    read, as run_local computed them before."""
    definitions = EXAMPLE_DEFS.read_text(encoding="utf-8")
    # A window: without one, `ins ; del` pairs every insertion with every later deletion
    # (~200,000 rows, 87 s of the suite for nothing more); with it, 251 rows.
    queries = ("SELECT * FROM S WHERE ins ; del WITHIN 5 EVENTS",)
    report = run_local(str(EXAMPLE), str(tmp_path / "out"), definitions, queries=queries)
    expected, result, unreadable = reference(EXAMPLE, definitions, queries)
    assert outputs(tmp_path / "out") == expected
    result.errors[:0] = unreadable
    old = report_of(result, engine="local", where="in process, no JVM",
                    definitions=DefinitionSet.of(definitions), namespaces={}, queries=1)
    old.times = report.times
    assert report == old
    assert report.versions > 300 and report.composites and report.errors


@pytest.mark.slow
def test_iter_history_over_the_index_is_replay_history_step_for_step(tmp_path: Path) -> None:
    """The steps of iter_history over the index, collected, are replay_history's result
    over the rows in memory, row for row and in the same order."""
    definitions = EXAMPLE_DEFS.read_text(encoding="utf-8")
    with index_versions(EXAMPLE, []) as index:
        assert not index.ordered and index.spilled is False
        collected = HistoryResult()
        for step in iter_history(index, definitions):
            assert isinstance(step, VersionRows)
            collected.add(step)
        assert index.spilled
    assert collected == replay_history(list(read_versions(EXAMPLE, [])), definitions)


# --- the ways a table is read back --------------------------------------------------------


def table_rows(seed: int) -> list[dict[str, Any]]:
    """Three documents' versions (with commits and times on some), in (doc, version)
    order."""
    rng = random.Random(seed)
    rows = []
    for doc in ("a.xml", "b/c.xml", "d.xml"):
        for v in range(rng.randint(1, len(XML))):
            row: dict[str, Any] = {"doc": doc, "version": v * 2, "xml": rng.choice(XML)}
            if rng.random() < 0.5:
                row["commit"], row["time"] = f"c{v}", 1000 + v
            rows.append(row)
    return rows


def write_table(path: Path, rows: list[dict[str, Any]], bad: Sequence[str] = ()) -> Path:
    """Rows as a table of the form the name says (bad lines only in JSON lines)."""
    if path.suffix == ".parquet":
        full = [{"doc": r["doc"], "version": r["version"], "xml": r["xml"],
                 "commit": r.get("commit"), "time": r.get("time")} for r in rows]
        pq.write_table(pa.Table.from_pylist(full), path, row_group_size=3)
        return path
    if path.suffix == ".d":
        for r in rows:
            (path / r["doc"]).mkdir(parents=True, exist_ok=True)
            (path / r["doc"] / f"{r['version']}.xml").write_text(r["xml"], encoding="utf-8")
        return path
    lines = [json.dumps(r) for r in rows]
    for n, line in enumerate(bad):
        lines.insert(min(len(lines), 2 * n + 1), line)
    return write_lines(path, lines)


@pytest.mark.parametrize("name", ["h.jsonl", "h.jsonl.gz", "h.parquet"])
@pytest.mark.parametrize("shuffled", [False, True])
def test_each_form_is_read_back_in_order_one_row_at_a_time(
        tmp_path: Path, name: str, shuffled: bool) -> None:
    """The index gives the rows sorted by document and version whichever form and order
    the table has; a plain file is read by line offset, a compressed or Parquet one read
    through again when in order, else spilled (and the spill read back)."""
    rows = table_rows(3)
    given_rows = random.Random(5).sample(rows, len(rows)) if shuffled else rows
    path = write_table(tmp_path / name, given_rows)
    with index_versions(path, []) as index:
        assert index.ordered is not shuffled
        got = list(index)
        assert index.spilled is (shuffled and name != "h.jsonl")
        assert list(index) == got  # read back again, the same
    full = [{"commit": None, "time": None, **r} for r in rows]
    assert got == sorted(full, key=lambda r: (r["doc"], r["version"]))
    assert index.documents == [("a.xml", sum(r["doc"] == "a.xml" for r in rows)),
                               ("b/c.xml", sum(r["doc"] == "b/c.xml" for r in rows)),
                               ("d.xml", sum(r["doc"] == "d.xml" for r in rows))]


def test_a_folder_table_is_read_back_file_by_file(tmp_path: Path) -> None:
    rows = table_rows(4)
    path = write_table(tmp_path / "t.d", rows)
    with index_versions(path, []) as index:
        got = [(r["doc"], r["version"], r["xml"]) for r in index]
    assert got == sorted((r["doc"], r["version"], r["xml"]) for r in rows)


def test_lines_ended_by_a_bare_carriage_return_are_read_back_by_offset(tmp_path: Path) -> None:
    """A line split at a bare \\r (as Spark splits it) is found again at its own offset."""
    one = json.dumps({"doc": "a", "version": 1, "xml": "<a>1</a>"}).encode()
    zero = json.dumps({"doc": "a", "version": 0, "xml": "<a/>"}).encode()
    path = tmp_path / "h.jsonl"
    path.write_bytes(one + b"\r" + zero + b"\r\n\n" + one + b"\n")
    errors: list[dict[str, Any]] = []
    with index_versions(path, errors) as index:
        assert [(r["version"], r["xml"]) for r in index] == [(0, "<a/>"), (1, "<a>1</a>")]
        assert [e["message"] for e in index.duplicates] == [
            "duplicate version: the first row is kept"]
    assert errors == []


def test_unreadable_lines_and_duplicates_are_todays_error_rows(tmp_path: Path) -> None:
    """The index's first pass collects what read_versions collects, and the duplicates
    ordered_versions reports, word for word and in file order."""
    rows = table_rows(6)
    dups = [{**rows[2], "xml": "<dup/>", "commit": "again"}, {**rows[0], "time": 7}]
    bad = ["not json", '{"doc": "a.xml", "version": "one", "xml": "<a/>"}', "[1]"]
    path = write_table(tmp_path / "h.jsonl.gz", rows + dups, bad)
    errors: list[dict[str, Any]] = []
    with index_versions(path, errors) as index:
        duplicates = index.duplicates
    expected: list[dict[str, Any]] = []
    kept = list(read_versions(path, expected))
    assert errors == expected and len(errors) == 3
    assert duplicates == replay_history(kept).errors[:2]
    assert [(d["doc"], d["version"], d["commit"], d["time"]) for d in duplicates] == [
        (rows[2]["doc"], rows[2]["version"], "again", rows[2].get("time")),
        (rows[0]["doc"], rows[0]["version"], rows[0].get("commit"), 7)]


def test_a_document_whose_replay_stops_does_not_eat_the_next_ones_versions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A version that fails other than as bad XML stops its document (an error row, its
    later versions unread); the next document still begins at its own first version, as
    when the rows are in memory."""
    from xmlevents.replay import DocumentHistory

    advance = DocumentHistory.advance

    def failing(self: DocumentHistory, version: int, *args: Any, **kwargs: Any) -> Any:
        if self.name == "a.xml" and version == 2:
            raise RuntimeError("boom")
        return advance(self, version, *args, **kwargs)

    monkeypatch.setattr(DocumentHistory, "advance", failing)
    rows = [{"doc": "a.xml", "version": v, "xml": x} for v, x in enumerate(XML[:4])]
    rows += [{"doc": "b.xml", "version": v, "xml": x} for v, x in enumerate(XML[:2])]
    path = write_table(tmp_path / "h.jsonl.gz", rows)
    with index_versions(path) as index:
        streamed = HistoryResult()
        for step in iter_history(index, DEFS):
            streamed.add(step)
    assert streamed == replay_history(rows, DEFS)
    assert streamed.replayed == [("a.xml", 0), ("a.xml", 1), ("b.xml", 0), ("b.xml", 1)]
    assert [e["message"] for e in streamed.errors] == [
        "RuntimeError: boom; the rest of this document is not replayed"]


# --- outputs equal to the old behaviour, whatever the order ------------------------------


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[int]]:
    """A small table (documents, versions with gaps, XML from :data:`XML`, commits and
    times on some rows, exact duplicates of some rows) and an order to write it in."""
    rows = []
    for doc in draw(st.lists(st.sampled_from(["a", "b", "c/d.xml"]), min_size=1, max_size=3,
                             unique=True)):
        versions = draw(st.lists(st.integers(0, 9), min_size=1, max_size=5, unique=True))
        for v in versions:
            row: dict[str, Any] = {"doc": doc, "version": v, "xml": draw(st.sampled_from(XML))}
            if draw(st.booleans()):
                row["commit"], row["time"] = f"c{v}", draw(st.integers(0, 10**6))
            rows.append(row)
    rows += [dict(r) for r in draw(st.lists(st.sampled_from(rows), max_size=2))]
    return rows, draw(st.permutations(range(len(rows))))


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=tables(), form=st.sampled_from(["h.jsonl", "h.jsonl.gz", "h.parquet"]))
def test_the_outputs_are_the_old_ones_in_any_row_order(
        tmp_path_factory: pytest.TempPathFactory,
        table: tuple[list[dict[str, Any]], list[int]], form: str) -> None:
    """Shuffled, with bad lines and exact duplicates: run_local writes the rows the old
    behaviour wrote for the table as given, and the same rows as for the table in order."""
    rows, order = table
    tmp = tmp_path_factory.mktemp("t")
    bad = ["{", '{"doc": "a", "version": -1, "xml": "<a/>"}'] if form != "h.parquet" else []
    shuffled = write_table(tmp / form, [rows[i] for i in order], bad)
    in_order = write_table(tmp / f"sorted-{form}", rows, bad)
    run_local(str(shuffled), str(tmp / "out"), DEFS, queries=("SELECT * FROM S WHERE ins",))
    got = outputs(tmp / "out")
    expected, _, _ = reference(shuffled, DEFS, ("SELECT * FROM S WHERE ins",))
    assert got == expected
    run_local(str(in_order), str(tmp / "sorted"), DEFS, queries=("SELECT * FROM S WHERE ins",))
    again = outputs(tmp / "sorted")
    # the unreadable lines' messages name the file and line: the rest is the same
    for name in ("events", "composites", "cel"):
        assert again[name] == got[name], name
    assert [e for e in again["errors"] if e["doc"] is not None] == [
        e for e in got["errors"] if e["doc"] is not None]


# --- written as produced -----------------------------------------------------------------


def test_large_outputs_are_written_in_several_row_groups(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With row groups of 10 rows, the events come in several row groups of at most 10
    rows, and the datasets hold the same rows as in one."""
    path = write_table(tmp_path / "h.jsonl", table_rows(3))
    run_local(str(path), str(tmp_path / "one"), DEFS)
    assert pq.ParquetFile(tmp_path / "one" / "events" / _arrow.PART).metadata.num_row_groups == 1
    monkeypatch.setattr(_arrow, "ROW_GROUP_ROWS", 10)
    run_local(str(path), str(tmp_path / "many"), DEFS)
    meta = pq.ParquetFile(tmp_path / "many" / "events" / _arrow.PART).metadata
    assert meta.num_row_groups >= 3
    assert max(meta.row_group(i).num_rows for i in range(meta.num_row_groups)) <= 10
    assert outputs(tmp_path / "many") == outputs(tmp_path / "one")


def test_a_failed_run_leaves_no_truncated_file(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A replay that fails half-way removes the files it was writing: the folders hold no
    Parquet file a reader would take for a whole output."""
    import xmlevents.replay._local as local

    def boom(*args: Any, **kwargs: Any) -> Iterator[VersionRows]:
        yield VersionRows("input", errors=())
        raise KeyboardInterrupt

    monkeypatch.setattr(local, "history_steps", boom)
    path = write_table(tmp_path / "h.jsonl", table_rows(1))
    with pytest.raises(KeyboardInterrupt):
        run_local(str(path), str(tmp_path / "out"))
    for name in OUTPUTS:
        assert list((tmp_path / "out" / name).iterdir()) == []


# --- memory ------------------------------------------------------------------------------


def _long_history(path: Path, versions: int) -> Path:
    """One document of 40 items whose prices change, a few a version: the live state
    stays the same size however long the history."""
    rng = random.Random(29)
    prices = [rng.randint(1, 99) for _ in range(40)]
    lines = []
    for v in range(versions):
        for _ in range(3):
            prices[rng.randrange(40)] = rng.randint(1, 99)
        xml = "<order>" + "".join(f"<item><name>n{i}</name><price>{p}</price></item>"
                                  for i, p in enumerate(prices)) + "</order>"
        lines.append(json.dumps({"doc": "o.xml", "version": v, "xml": xml}))
    return write_lines(path, lines)


def _peak(path: Path, keep: list[Any] | None = None) -> int:
    """tracemalloc's peak while iter_history replays the table, every step dropped (or kept
    in ``keep``). The collector runs every 20 steps: garbage it has not reached yet is no
    state, and how long it waits depends on what the process did before (an xdist worker
    after hundreds of tests let 200 versions' garbage pile up to 1.7x 50 versions' peak)."""
    gc.collect()
    tracemalloc.start()
    try:
        with index_versions(path, []) as index:
            for n, step in enumerate(iter_history(index, DEFS)):
                if keep is not None:
                    keep.append(step)
                del step
                if n % 20 == 19:
                    gc.collect()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_iterating_a_history_four_times_as_long_holds_about_the_same(tmp_path: Path) -> None:
    """The peak of Python allocations while iterating 200 versions is within 1.5x of 50
    versions' (keeping every version or every row, as before, would be ~4x)."""
    short = _peak(_long_history(tmp_path / "short.jsonl.gz", 50))
    long = _peak(_long_history(tmp_path / "long.jsonl.gz", 200))
    assert long < 1.5 * short, (short, long)
    kept: list[Any] = []  # the measure can fail: every step kept goes over
    assert _peak(_long_history(tmp_path / "long.jsonl.gz", 200), kept) > 1.5 * short
