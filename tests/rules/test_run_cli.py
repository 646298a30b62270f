"""``xmlevents rules run`` end to end (issue 17, item 4): the trace as JSON lines, the
documents written under their names, failed updates rolled back and reported, bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

from lxml import etree

from xmlevents._cli import main

FIXTURES = Path(__file__).parent / "fixtures"
RULES = str(FIXTURES / "paper_rules.txt")
DOCS = [f"--doc={name}={FIXTURES / name}" for name in ("s.xml", "p.xml", "g.xml", "m.xml")]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["rules", "run", *argv], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def c14n(path: Path) -> bytes:
    parser = etree.XMLParser(remove_blank_text=True)
    return etree.tostring(etree.parse(str(path), parser), method="c14n")


def test_example_1_and_2_end_to_end(tmp_path: Path) -> None:
    status, out, err = run(
        RULES, *DOCS, "--out", str(tmp_path),
        "--update", "INSERT <product id='p2'/> BELOW document('s.xml')/stores/store[@id='s2']",
        "--update", "INSERT <ingredient>Mushroom</ingredient> BELOW document('g.xml')/guide/"
                    "restaurant[name='Baghdad Cafe']/entree[ingredient='Tomato']")
    assert (status, err) == (0, "")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(x["update"], x["step"], x["rule"], x["doc"]) for x in lines] == [
        (1, 1, None, "s.xml"), (1, 2, "R1", "s.xml"), (2, 1, None, "g.xml"),
        (2, 2, "Mushrooms", "g.xml")]
    assert set(lines[0]) >= {"update", "step", "rule", "doc", "action", "deltas"}
    assert lines[1]["deltas"][0].startswith("/stores[") and lines[1]["triggered"] == ["R2"]
    assert lines[1]["fired"] == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.xml", "m.xml", "p.xml", "s.xml"]
    assert c14n(tmp_path / "m.xml") == c14n(FIXTURES / "m-after.xml")
    products = etree.parse(str(tmp_path / "p.xml")).getroot()
    assert [s.get("id") for s in products.find("product[@id='p2']").findall("store")] == ["s2"]


def test_a_failed_update_is_rolled_back_and_the_next_goes_on(tmp_path: Path) -> None:
    status, out, err = run(
        RULES, *DOCS, "--out", str(tmp_path),
        "--update", "INSERT <x/> BELOW document('nope.xml')/a",
        "--update", "DELETE document('p.xml')/products/product[@id='p2']/price")
    assert status == 1
    assert err.count("\n") == 1 and "--update 1" in err and "nope.xml" in err
    assert [json.loads(line)["update"] for line in out.splitlines()] == [2]
    products = etree.parse(str(tmp_path / "p.xml")).getroot()
    assert products.find("product[@id='p2']/price") is None


def test_the_step_limit(tmp_path: Path) -> None:
    rules = tmp_path / "loop.txt"
    rules.write_text("rule Ping priority 2: on INSERT document('a')/r/x "
                     "do INSERT <y/> BELOW document('b')/r\n"
                     "rule Pong priority 1: on INSERT document('b')/r/y "
                     "do INSERT <x/> BELOW document('a')/r\n", encoding="utf-8")
    (tmp_path / "a.xml").write_text("<r/>", encoding="utf-8")
    (tmp_path / "b.xml").write_text("<r/>", encoding="utf-8")
    out_dir = tmp_path / "out"
    status, out, err = run(str(rules), f"--doc=a={tmp_path / 'a.xml'}",
                           f"--doc=b={tmp_path / 'b.xml'}", "--max-steps", "10",
                           "--out", str(out_dir), "--update", "INSERT <x/> BELOW document('a')/r")
    assert status == 1 and out == ""
    assert "max_steps=10" in err and "step 11" in err
    assert c14n(out_dir / "a") == b"<r></r>" and c14n(out_dir / "b") == b"<r></r>"


def test_a_document_that_is_not_well_formed(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text("<stores>\n  <store>\n</stores>\n", encoding="utf-8")
    status, out, err = run(RULES, f"--doc=s.xml={bad}", "--update",
                           "DELETE document('s.xml')/stores/store")
    assert (status, out) == (1, "")
    assert "not well-formed" in err and "line 3, column" in err and err.count("\n") == 1


def test_bad_update_syntax_runs_nothing(tmp_path: Path) -> None:
    status, out, err = run(RULES, *DOCS, "--out", str(tmp_path),
                           "--update", "DELETE document('s.xml')/stores/store",
                           "--update", "DELETE document('s.xml')/child::store")
    assert (status, out) == (1, "") and "line 1" in err
    assert list(tmp_path.iterdir()) == []


def test_bad_doc_arguments(tmp_path: Path) -> None:
    assert run(RULES, "--doc", "s.xml")[0] == 1
    assert "cannot read" in run(RULES, f"--doc=s.xml={tmp_path / 'missing.xml'}")[2]
    assert "given twice" in run(RULES, *DOCS, DOCS[0])[2]
    assert "without a directory" in run(RULES, f"--doc=../s.xml={FIXTURES / 's.xml'}",
                                        "--out", str(tmp_path))[2]
