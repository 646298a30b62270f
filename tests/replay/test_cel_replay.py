"""CEL queries in the replay (issue 19, item 5): ``xmlevents replay HISTORY --cel QUERY --out
DIR`` runs each query per document over its primitive event stream and writes ``DIR/cel``.

The stream of a document is the replay's own ``events`` output for it, in order, positions
from 0: the complex events equal the reference evaluator's on that stream read as
``xmlevents cel --primitive`` reads it; the Spark job writes the in-process rows; a query that
does not parse or that the automaton does not take is refused before any work, with its line
and column (exit status 2 on the command line)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import examples

pytest.importorskip("pyarrow")

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from xmlevents._cli import main
from xmlevents.cel import (
    CELQueryError,
    CELSyntaxError,
    Evaluation,
    Event,
    Match,
    compile_query,
    evaluate,
    read_primitive,
    reference,
)
from xmlevents.replay import (
    CEL_STAGE,
    CEL_TABLE,
    arrow_schema,
    check_queries,
    replay_history,
    run_local,
    write_versions,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "purchase_orders.jsonl.gz"
EXAMPLE_DEFS = ROOT / "examples" / "purchase_orders.xev"

DEFS = "ItemRepriced := ins(item) ; upd(item/price/text())"

# Each item's insertion followed by a change of its price (per item: partitioned by the
# projection on the item, the hierarchical context's "same item").
REPRICED = ("SELECT * FROM S WHERE ins AS i ; upd AS u FILTER i[path MATCHES 'item'] AND "
            "u[path MATCHES 'item/price/text()'] PARTITION BY [PROJECT(ids, 'order/item')]")
QUERIES = [
    REPRICED,
    # every run of price updates ending at an item's removal, the latest explanation
    "SELECT LAST * FROM S WHERE (upd AS u)+ ; del AS d FILTER d[path MATCHES 'item']",
    # an insertion then a deletion within five events, NEXT (skip till next match)
    "SELECT NEXT * FROM S WHERE ins AS a ; del AS b WITHIN 5 EVENTS",
    # contiguous: a text inserted right after its element
    "SELECT * FROM S WHERE ins AS e : ins AS t FILTER e[kind = 'element'] AND "
    "t[kind = 'text' AND value IN {'5', '6', '7'}]",
    # a duration on the versions' times (only b.xml has them: a.xml's events fit no window)
    "SELECT * FROM S WHERE ins AS i ; upd AS u WITHIN 1 SECONDS",
]

ORDER_A = [
    "<order><item><price>5</price></item></order>",
    "<order><item><price>6</price></item><item/></order>",
    "<order><item><price>6</price><quantity>2",  # not well-formed: skipped, no events
    "<order><item><price>7</price></item><item><price>5</price></item></order>",
    "<order><item><price>7</price></item><item><price>6</price></item></order>",  # 2nd's
    "<order><item><price>7</price></item></order>",  # the second removed
]
ORDER_B = [
    "<order><item><price>1</price></item></order>",
    "<order><item><price>2</price></item><note>x</note></order>",
    "<order><note>y</note></order>",
]


def history_rows() -> list[dict[str, Any]]:
    rows = [{"doc": "a.xml", "version": v, "xml": x} for v, x in enumerate(ORDER_A)]
    rows += [{"doc": "b.xml", "version": 10 * v, "xml": x, "commit": f"c{v}", "time": 100 + v}
             for v, x in enumerate(ORDER_B)]
    rows.append({"doc": "b.xml", "version": 10, "xml": "<dup/>"})  # a duplicate version
    return rows


def _line(row: dict[str, Any]) -> str:
    """An ``events`` row as a line of ``xmlevents detect``'s input (what ``xmlevents cel
    --primitive`` reads)."""
    line = {k: row[k] for k in ("id", "ts", "op", "path", "ids", "doc", "value", "old",
                                "index", "time") if row[k] is not None}
    if row["moved"]:
        line["moved"] = True
    return json.dumps(line)


def streams(events: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each document's events, in the order of the ``events`` output, as detect lines."""
    out: dict[str, list[str]] = {}
    for row in events:
        out.setdefault(row["doc"], []).append(_line(row))
    return out


def expected(events: list[dict[str, Any]], queries: list[str], *, oracle: Any = reference
             ) -> list[tuple[str, int, int, tuple[int, ...], list[str]]]:
    """(doc, query, end, positions, ids) of every complex event, by the given evaluator over
    each document's stream read from the events output."""
    found = []
    for doc, lines in streams(events).items():
        stream = list(read_primitive(lines))
        ids = [str(e.attrs["id"]) for e in stream]
        for i, text in enumerate(queries):
            for m in oracle(compile_query(text), stream):
                found.append((doc, i, m.end, m.positions, [ids[p] for p in m.positions]))
    return sorted(found)


def got(cel: list[dict[str, Any]]) -> list[tuple[str, int, int, tuple[int, ...], list[str]]]:
    return sorted((r["doc"], r["query"], r["end"], tuple(r["positions"]), r["ids"])
                  for r in cel)


# --- in process --------------------------------------------------------------------------


def test_the_complex_events_are_the_reference_evaluators_on_each_documents_events() -> None:
    """Per document, over the events output in order (positions from 0, the bad version
    adding nothing), each query's rows are exactly the reference evaluator's complex events,
    with the ids of the events at their positions."""
    result = replay_history(history_rows(), DEFS, queries=QUERIES)
    want = expected(result.events, QUERIES)
    assert got(result.cel) == want
    # every query finds something here: the comparison is not vacuous
    assert {q for _, q, *_ in want} == set(range(len(QUERIES)))
    assert {d for d, *_ in want} == {"a.xml", "b.xml"}
    # the item of a.xml's version 1 repriced at version 4 (version 2 is bad)
    by_version = {(r["doc"], r["version"]) for r in result.cel if r["query"] == 0}
    assert ("a.xml", 4) in by_version and ("a.xml", 2) not in by_version
    for r in result.cel:
        assert not CEL_TABLE.mismatches(r), r
        assert r["text"] == QUERIES[r["query"]]


def test_each_row_says_the_version_commit_and_time_of_its_last_event() -> None:
    result = replay_history(history_rows(), queries=QUERIES)
    origin: dict[tuple[str, int], tuple[int, Any, Any]] = {}
    position: dict[str, int] = {}
    for e in result.events:
        p = position.get(e["doc"], 0)
        position[e["doc"]] = p + 1
        origin[(e["doc"], p)] = (e["version"], e["commit"], e["time"])
        assert e["ts"] == p + 1  # the replay's ticks: one per event, from 1
    assert result.cel
    for r in result.cel:
        assert (r["version"], r["commit"], r["time"]) == origin[(r["doc"], r["end"])]
    assert any(r["commit"] == "c1" and r["time"] == 101.0 for r in result.cel)


def test_the_rows_come_in_the_evaluators_order_query_by_query() -> None:
    """Per document, query 0's rows, then query 1's, each by last position and, within one,
    as the automaton enumerates them (:func:`xmlevents.cel.evaluate`'s order)."""
    result = replay_history(history_rows(), queries=QUERIES)
    for doc in ("a.xml", "b.xml"):
        rows = [(r["query"], r["end"], r["positions"]) for r in result.cel if r["doc"] == doc]
        assert [r[:2] for r in rows] == sorted(r[:2] for r in rows)
        stream = list(read_primitive(streams(result.events)[doc]))
        for i, text in enumerate(QUERIES):
            mine = [tuple(r[2]) for r in rows if r[0] == i]
            assert mine == [m.positions for m in evaluate(compile_query(text), stream)]


def test_queries_change_nothing_else() -> None:
    plain = replay_history(history_rows(), DEFS)
    with_cel = replay_history(history_rows(), DEFS, queries=QUERIES)
    assert (plain.events, plain.composites, plain.errors) == (
        with_cel.events, with_cel.composites, with_cel.errors)
    assert plain.cel == [] and with_cel.cel


def _small_orders() -> st.SearchStrategy[list[str]]:
    item = st.sampled_from(["", "<price>1</price>", "<price>2</price>",
                            "<price>1</price><quantity>3</quantity>"])
    order = st.lists(item, min_size=1, max_size=3).map(
        lambda items: "<order>" + "".join(f"<item>{i}</item>" for i in items) + "</order>")
    return st.lists(order, min_size=2, max_size=6)


RANDOM_QUERIES = [
    REPRICED,
    "SELECT * FROM S WHERE ins AS a ; (upd AS u)+ ; del AS d FILTER a[path MATCHES 'item'] "
    "PARTITION BY [PROJECT(ids, 'order/item')]",
    "SELECT * FROM S WHERE (ins AS x OR del AS x) ; (ins AS y OR upd AS y OR del AS y) "
    "PARTITION BY [PROJECT(ids, 'order/item')] WITHIN 4 EVENTS",
]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(versions=_small_orders(), strategy=st.sampled_from(["ALL", "NEXT", "LAST", "MAX",
                                                           "STRICT"]))
def test_random_histories_give_the_reference_evaluators_complex_events(
        versions: list[str], strategy: str) -> None:
    """Random small histories, each query under each strategy: the replay's rows are the
    reference evaluator's over the replay's own events."""
    queries = [q.replace("SELECT * ", f"SELECT {strategy} * ") for q in RANDOM_QUERIES]
    rows = [{"doc": "d", "version": v, "xml": x} for v, x in enumerate(versions)]
    result = replay_history(rows, queries=queries)
    assert got(result.cel) == expected(result.events, queries)


@pytest.mark.parametrize(("query", "error", "line", "col", "says"), [
    ("SELECT * FROM S WHERE ins AS x ; (upd", CELSyntaxError, 1, 38, "expected ')'"),
    ("SELECT * FROM S\nWHERE ins AS x ; upd AS y FILTER y[value = x.value]", CELQueryError,
     2, 7, "not unary"),
    ("SELECT * FROM S WHERE T", CELQueryError, 1, 23, "unknown event type T"),
    ("SELECT * FROM S WHERE ins FILTER ins[price > 3]", CELQueryError, 1, 34,
     "unknown attribute price"),
    ("SELECT * FROM S WHERE ins AS x ; ins AS x", CELQueryError, 1, None, "x"),
])
def test_a_query_the_replay_cannot_run_is_refused_before_any_work(
        query: str, error: type[Exception], line: int, col: int | None, says: str) -> None:
    def rows() -> Iterator[dict[str, Any]]:
        raise AssertionError("the table was read")
        yield {}

    with pytest.raises(error) as caught:
        replay_history(rows(), queries=[REPRICED, query])
    exc = caught.value
    assert says in str(exc) and "query 1: " in str(exc)  # the second of the two
    assert getattr(exc, "line", None) == line
    if col is not None:
        assert getattr(exc, "column", None) == col
    with pytest.raises(error):
        check_queries([query])


def test_the_spark_job_refuses_a_bad_query_before_it_touches_spark(tmp_path: Path) -> None:
    """run_spark checks the queries before the table is read: the session is never used."""
    pytest.importorskip("pyspark")
    from xmlevents.replay import run_spark

    class NoSpark:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"the session was used: {name}")

    with pytest.raises(CELSyntaxError):
        run_spark(NoSpark(), str(tmp_path / "missing.jsonl"), str(tmp_path / "out"),  # type: ignore[arg-type]
                  queries=["SELECT * FROM S WHERE ins AS x ; (upd"])
    assert not (tmp_path / "out").exists()


def test_a_query_that_fails_on_a_document_is_an_error_row_and_the_rest_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A query that raises on one document's stream: an error row naming the query, at the
    document's last version; its other documents and the other queries are not affected."""
    import xmlevents.replay._cel as cel_module

    target = compile_query(QUERIES[1])

    class Failing(Evaluation):
        """The evaluation of ``target`` raises at a.xml's third event."""

        def matches(self, event: Event) -> Iterator[Match]:
            if self.query == target and event.attrs.get("doc") == "a.xml" \
                    and event.position == 2:
                raise RuntimeError("boom")
            return super().matches(event)

    monkeypatch.setattr(cel_module, "Evaluation", Failing)
    result = replay_history(history_rows(), queries=QUERIES[:2])
    errors = [e for e in result.errors if e["stage"] == CEL_STAGE]
    assert [(e["doc"], e["version"], e["message"]) for e in errors] == [
        ("a.xml", 5, "CEL query 1: RuntimeError: boom")]
    assert {(r["doc"], r["query"]) for r in result.cel} >= {("a.xml", 0), ("b.xml", 1)}
    assert ("a.xml", 1) not in {(r["doc"], r["query"]) for r in result.cel}


def test_run_local_writes_the_cel_dataset_and_counts_per_query(tmp_path: Path) -> None:
    history = tmp_path / "h.jsonl"
    write_versions(history_rows(), history)
    report = run_local(str(history), str(tmp_path / "out"), queries=QUERIES)
    table = pq.read_table(tmp_path / "out" / "cel")
    assert table.schema.remove_metadata().equals(arrow_schema(CEL_TABLE, nullable=True))
    local = replay_history(history_rows(), queries=QUERIES)
    key = json.dumps
    assert sorted(map(key, table.to_pylist())) == sorted(map(key, local.cel))
    assert report.cel == {i: sum(1 for r in local.cel if r["query"] == i)
                          for i in range(len(QUERIES))}
    # without queries: an empty dataset with the schema (never a stale one)
    report = run_local(str(history), str(tmp_path / "out"))
    assert pq.read_table(tmp_path / "out" / "cel").num_rows == 0
    assert report.cel == {}


# --- the command line --------------------------------------------------------------------


def _history(tmp_path: Path) -> Path:
    path = tmp_path / "h.jsonl"
    write_versions(history_rows(), path)
    return path


def test_cli_cel_without_definitions(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    out = tmp_path / "out"
    status = main(["replay", str(_history(tmp_path)), "--engine", "local", "--out", str(out),
                   "--cel", QUERIES[0], "--cel", QUERIES[2], "-q"])
    printed = capsys.readouterr().out
    assert status == 0
    local = replay_history(history_rows(), queries=[QUERIES[0], QUERIES[2]])
    counts = [sum(1 for r in local.cel if r["query"] == i) for i in (0, 1)]
    assert f"  complex events    query 0 {counts[0]}, query 1 {counts[1]} (CEL)" in printed
    assert "  composite events  none defined" in printed
    assert pq.read_table(out / "cel").num_rows == sum(counts) > 0
    assert pq.read_table(out / "composites").num_rows == 0


def test_cli_cel_with_definitions_and_a_query_file(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    query = tmp_path / "repriced.ceql"
    query.write_text("-- each item repriced\n" + REPRICED + "\n", encoding="utf-8")
    out = tmp_path / "out"
    status = main(["replay", str(_history(tmp_path)), "--engine", "local", "--out", str(out),
                   "--define", DEFS, "--cel", f"@{query}", "-q"])
    printed = capsys.readouterr().out
    assert status == 0
    assert "ItemRepriced" in printed and "query 0 " in printed
    rows = pq.read_table(out / "cel").to_pylist()
    assert rows and {r["text"] for r in rows} == {query.read_text(encoding="utf-8")}
    assert pq.read_table(out / "composites").num_rows > 0


@pytest.mark.parametrize(("query", "says"), [
    ("SELECT * FROM S WHERE ins AS x ; upd AS y FILTER y[value = x.value]",
     "line 1, col 23: the filter y[value = x.value] is not unary"),
    ("SELECT * FROM S\nWHERE ins AS x ; (upd", "line 2, col 22: unclosed '(' (opened at col 18)"),
    ("@missing.ceql", "cannot read the query file 'missing.ceql'"),
])
def test_cli_refuses_a_bad_query_before_spark_with_status_1(
        query: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import xmlevents.replay

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Spark was started")

    monkeypatch.setattr(xmlevents.replay, "spark_session", boom)
    monkeypatch.setattr(xmlevents.replay, "read_versions", boom)
    monkeypatch.chdir(tmp_path)
    history = _history(tmp_path)
    status = main(["replay", str(history), "--out", "out", "--cel", REPRICED, "--cel", query])
    err = capsys.readouterr().err
    assert status == 1  # a bad query is bad input, as in cel and query (issue 28)
    assert says in err and "--cel" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_cli_refuses_a_query_in_a_file_naming_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    query = tmp_path / "bad.ceql"
    query.write_text("SELECT * FROM S\nWHERE ins ; T\n", encoding="utf-8")
    status = main(["replay", str(_history(tmp_path)), "--engine", "local", "--out",
                   str(tmp_path / "out"), "--cel", f"@{query}"])
    err = capsys.readouterr().err
    assert status == 1
    assert f"{query}: line 2, col 13: unknown event type T" in err


# --- the example history, in process ------------------------------------------------------


EXAMPLE_QUERY = ("SELECT * FROM S WHERE ins AS i ; upd AS u FILTER i[path MATCHES 'item'] AND "
                 "u[path MATCHES 'item/price/text()'] PARTITION BY [PROJECT(ids, "
                 "'orders/order/item')] WITHIN 200 EVENTS")


def _example_rows() -> list[dict[str, Any]]:
    import gzip

    with gzip.open(EXAMPLE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_the_example_history_gives_the_automatons_complex_events() -> None:
    """The example's 3,401 events: the replay's rows are the automaton's over each
    document's events output (the reference is too slow for these streams, and the automaton
    equals it: tests/cel)."""
    result = replay_history(_example_rows(), queries=[EXAMPLE_QUERY])
    assert len(result.events) == 3401
    want = expected(result.events, [EXAMPLE_QUERY], oracle=evaluate)
    assert got(result.cel) == want and len(want) > 20


# --- on Spark (slow) -----------------------------------------------------------------------


@pytest.mark.slow
def test_spark_writes_the_in_process_rows_on_a_small_history(spark: Any, tmp_path: Path
                                                             ) -> None:
    """replay_frames with queries: the cel frame holds replay_history's rows, in CEL_TABLE's
    schema, and the other outputs are unchanged; empty without queries."""
    from xmlevents.replay import CEL_SCHEMA, read_versions_df, replay_frames

    write_versions(history_rows(), tmp_path / "h.jsonl")
    versions, _ = read_versions_df(spark, str(tmp_path / "h.jsonl"))
    local = replay_history(history_rows(), DEFS, queries=QUERIES)
    frames = replay_frames(spark, versions, DEFS, queries=QUERIES)
    try:
        assert frames.cel is not None
        assert [(f.name, f.dataType) for f in frames.cel.schema.fields] == [
            (f.name, f.dataType) for f in CEL_SCHEMA.fields]
        rows = [r.asDict(recursive=True) for r in frames.cel.collect()]
        assert sorted(map(json.dumps, rows)) == sorted(map(json.dumps, local.cel))
        assert frames.composites.count() == len(local.composites)
    finally:
        frames.unpersist()
    plain = replay_frames(spark, versions)
    try:
        assert plain.cel is not None and plain.cel.count() == 0
    finally:
        plain.unpersist()


@pytest.mark.slow
def test_spark_equals_in_process_on_the_example_history(spark: Any, tmp_path: Path) -> None:
    """run_spark and run_local with the definitions and two queries: the same rows and
    schemas in all four datasets, and the same counts per query."""
    from xmlevents.replay import run_spark

    definitions = EXAMPLE_DEFS.read_text(encoding="utf-8")
    queries = [EXAMPLE_QUERY, QUERIES[1].replace("'item'", "'order/item'")]
    local = run_local(str(EXAMPLE), str(tmp_path / "local"), definitions, queries=queries)
    on_spark = run_spark(spark, str(EXAMPLE), str(tmp_path / "spark"), definitions,
                         queries=queries)
    for name in ("events", "composites", "errors", "cel"):
        a = pq.read_table(tmp_path / "local" / name)
        b = pq.read_table(tmp_path / "spark" / name)
        assert a.schema.remove_metadata().equals(b.schema.remove_metadata()), name
        assert sorted(map(json.dumps, a.to_pylist())) == sorted(map(json.dumps, b.to_pylist())
                                                                ), name
    assert local.cel == on_spark.cel
    assert local.cel[0] > 20 and local.cel[1] > 0
