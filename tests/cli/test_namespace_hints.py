"""No silent zero (issue 30, item 5): ``query`` and ``detect`` say which namespace a query or
definition that matched nothing lacked, and how to write it, as ``replay`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xmlevents._cli import main
from xmlevents._cli._query_hint import HEAD, Head, namespace_hint

ATOM = "http://www.w3.org/2005/Atom"
POM = "http://maven.apache.org/POM/4.0.0"
FEED = (f'<?xml version="1.0"?>\n<feed xmlns="{ATOM}">\n  <title>t</title>\n'
        '  <entry><title>One</title><link href="http://x/1"/></entry>\n'
        '  <entry><title>Two</title></entry>\n</feed>\n')


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_query_without_prefixes_on_an_atom_feed_gets_the_flag_and_the_query(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "atom.xml").write_text(FEED, encoding="utf-8")
    status, out, err = run(["query", "//entry[link]/title", str(tmp_path / "atom.xml")],
                           capsys)
    assert status == 0 and out == ""
    assert err.splitlines()[1] == (
        "xmlevents query: hint: no match; the document's entry, link, title are in namespace "
        f"{ATOM}, and a name without a prefix selects elements in no namespace: pass "
        f"-n atom={ATOM} and write '//atom:entry[atom:link]/atom:title'")
    # ... which, followed, finds the entry
    status, out, err = run(["query", "-n", f"atom={ATOM}", "//atom:entry[atom:link]/atom:title",
                            str(tmp_path / "atom.xml")], capsys)
    assert status == 0 and len(out.splitlines()) == 1 and "hint" not in err


def test_a_bound_prefix_is_reused_and_a_query_that_matches_gets_no_hint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "atom.xml").write_text(FEED, encoding="utf-8")
    _, _, err = run(["query", "-n", f"a={ATOM}", "//a:entry[link]/a:title",
                     str(tmp_path / "atom.xml")], capsys)
    assert err.endswith("write '//a:entry[a:link]/a:title' (the prefixes are bound)\n")
    _, _, err = run(["query", "//nosuch", str(tmp_path / "atom.xml")], capsys)
    assert "hint" not in err  # a name the document does not have: nothing to say
    (tmp_path / "plain.xml").write_text("<feed><entry/></feed>", encoding="utf-8")
    _, _, err = run(["query", "//title", str(tmp_path / "plain.xml")], capsys)
    assert "hint" not in err  # no namespace: the zero is the answer


def test_a_prefixed_document_and_count_mode(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Elements written with the document's own prefix; --count prints 0, the hint on
    stderr."""
    (tmp_path / "p.xml").write_text(
        f'<x:feed xmlns:x="{ATOM}"><x:entry/></x:feed>', encoding="utf-8")
    status, out, err = run(["query", "--count", "/feed/entry", str(tmp_path / "p.xml")],
                           capsys)
    assert status == 0 and out == "0\n"
    assert f"pass -n atom={ATOM} and write '/atom:feed/atom:entry'" in err


def test_the_head_keeps_the_first_bytes_only() -> None:
    import io

    head = Head(io.BytesIO(b"a" * (HEAD + 100)))
    assert len(head.read(HEAD - 10)) == HEAD - 10 and len(head.read()) == 110
    assert bytes(head.head) == b"a" * HEAD
    assert namespace_hint("//a", bytes(head.head), {}) is None


def test_detect_says_which_namespace_a_definition_lacked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "pom.jsonl"
    rows = [{"id": "e1", "ts": 1, "op": "ins", "path": f"/{{{POM}}}project", "ids": ["p1"]},
            {"id": "e2", "ts": 2, "op": "ins",
             "path": f"/{{{POM}}}project/{{{POM}}}dependency", "ids": ["p1", "d1"]}]
    events.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    status, out, err = run(["detect", "--define", "Dep := ins(project/dependency)",
                            str(events)], capsys)
    assert status == 0 and out == ""
    assert err == ("xmlevents detect: warning: Dep matched no event; events on "
                   f"project/dependency are in namespace {POM}: pass -n pom={POM} and "
                   "write pom:project/pom:dependency\n")
    status, out, err = run(["detect", "-n", f"pom={POM}", "--define",
                            "Dep := ins(pom:project/pom:dependency)", str(events)], capsys)
    assert status == 0 and '"type": "Dep"' in out and err == ""


def test_cel_on_primitive_events_says_which_namespace_a_path_type_lacked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """MATCHES and PROJECT types are checked against the events' path types when nothing
    matched; CEL binds no prefixes, so the type is written in Clark notation."""
    events = tmp_path / "pom.jsonl"
    rows = [{"id": "e1", "ts": 1, "op": "ins", "path": f"/{{{POM}}}project", "ids": ["p1"]},
            {"id": "e2", "ts": 2, "op": "ins",
             "path": f"/{{{POM}}}project/{{{POM}}}dependency", "ids": ["p1", "d1"]}]
    events.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    query = "SELECT * FROM S WHERE ins AS x FILTER x[path MATCHES 'project/dependency']"
    status, out, err = run(["cel", "--primitive", query, str(events)], capsys)
    assert status == 0 and out == ""
    assert err == ("xmlevents cel: warning: 'project/dependency' matched no event's path; "
                   f"events on it are in namespace {POM}: write "
                   f"'{{{POM}}}project/{{{POM}}}dependency'\n")
    fixed = query.replace("'project/dependency'", f"'{{{POM}}}project/{{{POM}}}dependency'")
    status, out, err = run(["cel", "--primitive", fixed, str(events)], capsys)
    assert status == 0 and out.count("\n") == 1 and err == ""
    status, out, err = run(["cel", "--primitive", "--count", "SELECT * FROM S WHERE ins AS x "
                            "; ins AS y PARTITION BY [PROJECT(ids, 'project')]", str(events)],
                           capsys)
    assert out == "0\n" and f"'project' matched no event's path; events on it are in " \
        f"namespace {POM}: write '{{{POM}}}project'" in err
