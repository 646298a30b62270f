"""``xmlevents cel`` (issue 19): JSON lines in, one JSON line per complex event out."""

from __future__ import annotations

import io
import json
from pathlib import Path

from xmlevents._cli import main

QUERY = "SELECT * FROM S WHERE T AS x ; H AS y FILTER x[temp > 40]"
LINES = ['{"type": "T", "temp": 45}', '{"type": "X"}', '{"type": "H"}',
         '{"type": "T", "temp": 10}', '{"type": "H"}']


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_reference_prints_complex_events(tmp_path: Path) -> None:
    stream = tmp_path / "s.jsonl"
    stream.write_text("\n".join(LINES) + "\n")
    status, out, err = run("cel", QUERY, str(stream), "--reference")
    assert status == 0 and err == ""
    assert [json.loads(line) for line in out.splitlines()] == [
        {"end": 2, "events": [0, 2]}, {"end": 4, "events": [0, 4]}]
    assert run("cel", QUERY, str(stream), "--reference", "--count")[1] == "2\n"


def test_a_bad_line_after_matches(tmp_path: Path) -> None:
    stream = tmp_path / "s.jsonl"
    stream.write_text("\n".join(LINES[:3] + ['{"temp": 1}']) + "\n")
    status, out, err = run("cel", QUERY, str(stream), "--reference")
    assert status == 1 and json.loads(out) == {"end": 2, "events": [0, 2]}
    assert "line 4" in err and "Traceback" not in err


def test_the_automaton_by_default(tmp_path: Path) -> None:
    stream = tmp_path / "s.jsonl"
    stream.write_text("\n".join(LINES) + "\n")
    assert run("cel", QUERY, str(stream)) == run("cel", QUERY, str(stream), "--reference")
    assert run("cel", QUERY, str(stream), "--count")[1] == "2\n"
    (tmp_path / "q.ceql").write_text(QUERY)
    assert run("cel", f"@{tmp_path / 'q.ceql'}", str(stream))[1].count("\n") == 2


def test_bad_queries(tmp_path: Path) -> None:
    status, _, err = run("cel", "SELECT * WHERE T AS x ; T AS x", "-", "--reference")
    assert status == 1 and "not safe" in err and "col" in err
    stream = tmp_path / "s.jsonl"
    stream.write_text(LINES[0] + "\n")
    status, _, err = run("cel", "SELECT * WHERE H AS x ; T AS y FILTER y[id = x.id]",
                         str(stream))
    assert status == 1 and "not unary" in err and "Traceback" not in err
    status, out, _ = run("cel", "SELECT * WHERE H AS x ; T AS y FILTER y[id = x.id]",
                         str(stream), "--reference")
    assert status == 0 and out == ""


def test_ids_csv_and_primitive_events(tmp_path: Path) -> None:
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"type": "T", "id": "a", "temp": 45}\n{"type": "H", "id": "b"}\n')
    status, out, _ = run("cel", "SELECT * WHERE T ; H", str(stream), "--reference")
    assert status == 0 and json.loads(out) == {"end": 1, "events": [0, 1], "ids": ["a", "b"]}
    schema = tmp_path / "s.ceql"
    schema.write_text("CREATE STREAM S { EVENT T { temp: int }, EVENT H { hum: int } }")
    csv = tmp_path / "s.csv"
    csv.write_text("T,45\nH,20\nH,x\n")
    status, out, err = run("cel", "SELECT * FROM S WHERE T AS t ; H FILTER t[temp > 40]",
                           str(csv), "--schema", str(schema), "--reference")
    assert status == 1 and json.loads(out) == {"end": 1, "events": [0, 1]}
    assert "line 3" in err and "declared int" in err
    status, _, err = run("cel", "SELECT * WHERE T AS t ; H FILTER t[hum > 40]", str(csv),
                         "--schema", str(schema), "--reference")
    assert status == 1 and "unknown attribute hum of t" in err
    prim = tmp_path / "p.jsonl"
    prim.write_text('{"id": "e1", "op": "ins", "path": "/o/i", "ids": ["o1", "i1"]}\n'
                    '{"id": "e2", "op": "upd", "path": "/o/i", "ids": ["o1", "i1"]}\n')
    status, out, _ = run("cel", "SELECT * WHERE ins ; upd PARTITION BY [PROJECT(ids, 'i')]",
                         str(prim), "--primitive", "--reference")
    assert status == 0 and json.loads(out)["ids"] == ["e1", "e2"]
