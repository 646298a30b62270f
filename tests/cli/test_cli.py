"""The command line: detect and graph, their formats, and their errors."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from tests.cli.helpers import EI, line, run

ROOT = pathlib.Path(__file__).resolve().parents[2]


ITEM_LINES = "\n".join([
    line(id="ei1", op="ins", path="/order/item", ids=["o1", "i1"]),
    line(id="ep1", op="ins", path="/order/item/price", ids=["o1", "i1", "p1"]),
    line(id="eq1", op="ins", path="/order/item/quantity", ids=["o1", "i1", "q1"]),
]) + "\n"


def test_detect_writes_the_design_output_format() -> None:
    """A complete item gives exactly the composite line of DESIGN section 6."""
    status, out, err = run(["detect", "--define", EI, "-"], ITEM_LINES)
    assert (status, err) == (0, "")
    assert [json.loads(x) for x in out.splitlines()] == [
        {"ts": 3, "type": "Ei", "path": "/order/item", "ids": ["o1", "i1"],
         "interval": [1, 3], "events": ["ei1", "ep1", "eq1"]}]


def test_detect_reads_a_file_and_definitions_file(tmp_path: pathlib.Path) -> None:
    """--definitions FILE and an events path work like --define and stdin."""
    (tmp_path / "defs.xev").write_text(f"# items\n{EI}\n", encoding="utf-8")
    (tmp_path / "ev.jsonl").write_text(ITEM_LINES, encoding="utf-8")
    status, out, _ = run(["detect", "--definitions", str(tmp_path / "defs.xev"),
                          str(tmp_path / "ev.jsonl")])
    assert status == 0 and json.loads(out)["events"] == ["ei1", "ep1", "eq1"]


def test_detect_defaults_id_and_ts_to_line_numbers() -> None:
    """Without id and ts, both come from the 1-based line number."""
    lines = "".join(json.dumps({k: v for k, v in json.loads(x).items() if k != "id"}) + "\n"
                    for x in ITEM_LINES.splitlines())
    status, out, _ = run(["detect", "--define", EI], lines)
    assert status == 0 and json.loads(out)["events"] == ["1", "2", "3"]


def test_detect_options_reach_the_graph() -> None:
    """--no-hierarchical, --context and --semantics change what is detected (Table 1, S1)."""
    s1 = [("ei1", "/order/item", ["o1", "i1"]), ("ep1", "/order/item/price", ["o1", "i1", "p1"]),
          ("eq1", "/order/item/quantity", ["o1", "i1", "q1"]), ("ei2", "/order/item", ["o1", "i2"]),
          ("ep2", "/order/item/price", ["o1", "i2", "p2"]),
          ("eq2", "/order/item/quantity", ["o1", "i2", "q2"])]
    text = "".join(line(id=i, op="ins", path=p, ids=ids) + "\n" for i, p, ids in s1)
    _, recent, _ = run(["detect", "--define", EI, "--context", "recent", "--no-hierarchical",
                        "--semantics", "detection"], text)
    assert [json.loads(x)["events"] for x in recent.splitlines()] == [
        ["ei1", "ep1", "eq1"], ["eq1", "ei2", "ep2"], ["ei2", "ep2", "eq2"]]  # by tick
    _, hier, _ = run(["detect", "--define", EI, "--context", "recent"], text)
    assert [json.loads(x)["events"] for x in hier.splitlines()] == [
        ["ei1", "ep1", "eq1"], ["ei2", "ep2", "eq2"]]


@pytest.mark.parametrize("bad, where", [
    (line(op="ins", path="/order/item", ids=["o1"]), "line 2"),
    (line(op="insert", path="/order/item", ids=["o1", "i9"]), "line 2"),
    (line(op="ins", path="order/item", ids=["o1", "i9"]), "line 2"),
    (line(op="ins", path="/order/item", ids=["o1", "i9"], ts="5"), "line 2"),
    ("{not json", "line 2"),
])
def test_detect_names_the_bad_line(bad: str, where: str) -> None:
    """A malformed event line fails with its line number, after what came before it."""
    first = line(id="ei1", op="ins", path="/order/item", ids=["o1", "i1"])
    status, _out, err = run(["detect", "--define", EI], first + "\n" + bad + "\n")
    assert status == 1
    assert where in err and "Traceback" not in err


def test_detect_names_the_line_of_a_byte_that_is_not_utf8(tmp_path: pathlib.Path) -> None:
    """A file with a stray Latin-1 byte on line 3 fails at line 3, after lines 1 and 2."""
    data = ITEM_LINES.encode().replace(b'"q1"', b'"q\xe91"')
    (tmp_path / "ev.jsonl").write_bytes(data)
    status, out, err = run(["detect", "--define", EI, str(tmp_path / "ev.jsonl")])
    assert status == 1 and out == ""
    assert "line 3" in err and "UTF-8" in err and "Traceback" not in err


def test_detect_closes_at_end_of_input_with_the_last_tick() -> None:
    """A custom-mode composite is raised by closing, and carries the last input ts."""
    status, out, _ = run(["detect", "--define",
                          "Eh := (ins(item/price) & ins(item/quantity)) with mode=custom", "-"],
                         ITEM_LINES + line(op="ins", path="/order/shipTo", ids=["o1", "s1"]))
    assert status == 0
    assert [(d["ts"], d["events"]) for d in map(json.loads, out.splitlines())] == [
        (4, ["ep1", "eq1"])]


def test_detect_rejects_conditions_it_has_no_documents_for() -> None:
    """A stream of events has no document to test a condition on: a clear error, exit 1."""
    status, out, err = run(["detect", "--define",
                            'E := (ins(a/b) & ins(a/c)) with when="b > 0"', "-"], ITEM_LINES)
    assert (status, out) == (1, "")
    assert "definition E" in err and "documents" in err and "Traceback" not in err


def test_detect_bad_definition_names_the_column() -> None:
    """The issue's example: an unclosed parenthesis is reported with its column."""
    status, out, err = run(["detect", "--define", "Ei := ins(item ; x"], "")
    assert status == 1 and out == ""
    assert "col 16" in err and "--define #1" in err


def test_detect_rejects_definition_errors_before_reading_events() -> None:
    """An unknown name is rejected when the graph is built, not on the first event."""
    status, _, err = run(["detect", "--define", "E := ins(item) ; Nope"], "{broken")
    assert status == 1 and "unknown definition 'Nope'" in err and "line 1, col 18" in err


def test_detect_without_definitions_is_an_error() -> None:
    """Detect needs at least one definition."""
    status, _, err = run(["detect"], "")
    assert status == 1 and "no definitions" in err


def test_detect_missing_file_is_an_error(tmp_path: pathlib.Path) -> None:
    """An unreadable events file is named, without a traceback."""
    status, _, err = run(["detect", "--define", EI, str(tmp_path / "missing.jsonl")])
    assert status == 1 and "missing.jsonl" in err


def test_graph_shows_derived_path_types() -> None:
    """The issue's example: both operator nodes of Example 10 have path type item."""
    status, out, _ = run(["graph", "--define", EI])
    assert status == 0
    operators = [x for x in out.splitlines() if "path type" in x]
    assert len(operators) == 2 and all("path type item " in x for x in operators)
    assert "derived: item/price ∩lb item/quantity" in out


def test_graph_dot_is_a_digraph() -> None:
    """--dot prints one Graphviz digraph with a cluster per tree and dashed reuse edges."""
    defs = [EI, "Eo := (Ei(item) & ins(order/note)) with at=order"]
    status, out, _ = run(["graph", "--dot"] + [a for d in defs for a in ("--define", d)])
    assert status == 0
    assert out.startswith("digraph xmlevents {") and out.rstrip().endswith("}")
    assert out.count("subgraph cluster_") == 2 and "style=dashed" in out


def test_usage_errors_exit_2() -> None:
    """An unknown option is a usage error (status 2)."""
    assert run(["detect", "--bogus"])[0] == 2


def test_console_module_runs_end_to_end() -> None:
    """`python -m xmlevents detect` runs the shipped example and exits 0."""
    proc = subprocess.run(
        [sys.executable, "-m", "xmlevents", "detect", "--definitions",
         str(ROOT / "examples" / "purchase_order.xev"),
         str(ROOT / "examples" / "purchase_order.jsonl")],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    raised = [json.loads(x) for x in proc.stdout.splitlines()]
    assert {r["type"] for r in raised} == {"ItemComplete", "ItemValued", "ItemReady"}
    assert sum(r["type"] == "ItemComplete" for r in raised) == 6


def test_detect_writes_a_single_event_definition_one_line_per_event() -> None:
    """``Removed := del(item)`` is written out (issue 14), also when another definition
    references it."""
    lines = ITEM_LINES + "\n".join([
        line(id="ed1", op="del", path="/order/item", ids=["o1", "i1"]),
        line(id="ed2", op="del", path="/order/item", ids=["o1", "i2"]),
    ]) + "\n"
    defs = "Removed := del(item)\nPrice := ins(item/price)\nEi := ins(item) ; Price"
    status, out, err = run(["detect", "--define", defs, "-"], lines)
    assert (status, err) == (0, "")
    got = [(d["type"], d["events"]) for d in map(json.loads, out.splitlines())]
    assert got == [("Price", ["ep1"]), ("Ei", ["ei1", "ep1"]), ("Removed", ["ed1"]),
                   ("Removed", ["ed2"])]


def test_graph_dot_draws_children_in_their_order() -> None:
    """``ins(a) ; del(a)``: the sequence keeps its in-edges in order (``ordering=in``) and
    lists ``ins(a)``'s edge before ``del(a)``'s, so Graphviz draws E1 left of E2 (issue 15)."""
    status, out, _ = run(["graph", "--dot", "--define", "E := ins(a) ; del(a)"])
    assert status == 0
    ids = {label: ident for ident, label in re.findall(r'(n\d+) \[shape=box, label="([^"]+)"', out)}
    seq = re.search(r'(n\d+) \[shape=ellipse, ordering=in, label="; sequence', out)
    assert seq is not None
    edges = re.findall(rf"(n\d+) -> {seq.group(1)};", out)
    assert edges == [ids["ins(a)"], ids["del(a)"]]
    dot = shutil.which("dot")
    if dot is None:
        return  # the layout itself needs Graphviz
    plain = subprocess.run([dot, "-Tplain"], input=out, capture_output=True, text=True,
                           check=True).stdout
    x = {f.split()[1]: float(f.split()[2]) for f in plain.splitlines() if f.startswith("node ")}
    assert x[ids["ins(a)"]] < x[ids["del(a)"]]


def test_graph_names_a_not_node_once() -> None:
    """The operator label of ``not(...)`` says "not", never "not not" (issue 15)."""
    status, out, _ = run(["graph", "--define", "N := not(ins(a), del(a/b), upd(a/c))"])
    assert status == 0
    assert "\n  not  N(a)  path type a" in out and "not not" not in out


def test_graph_marks_the_operator_a_with_applies_to() -> None:
    """``(a & b with mode=non-local)`` binds to the ``&``: the drawing says so under that
    operator, with what the clause does there, and draws it bold in DOT (issue 15)."""
    defs = "Ei := ins(item) ; ((ins(item/price) & ins(item/quantity)) with mode=non-local)"
    status, out, _ = run(["graph", "--define", defs])
    assert status == 0
    lines = out.splitlines()
    conj = next(i for i, line in enumerate(lines) if "& conjunction" in line)
    assert lines[conj + 1] == (
        "      │ ◆ with mode=non-local: this conjunction holds what it detects until an event "
        "of the document outside its subtree (or a flush), taking in more events meanwhile")
    assert sum("◆" in line for line in lines) == 1  # the sequence has none
    status, out, _ = run(["graph", "--dot", "--define", defs])
    bold = re.findall(r'style=bold, label="([^"]+)"', out)
    assert bold == ["& conjunction\\n(item)\\nderived: item/price ∩lb item/quantity"
                    "\\n◆ with mode=non-local"]
