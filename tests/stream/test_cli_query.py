"""``xmlevents query``: JSON lines in detection order, the summary on stderr, exit statuses
0 / 1 (a bad document, after the matches decided before, or a bad query: the one policy of
docs/cli.md since issue 28, where a bad query was 2)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from xmlevents._cli import main
from xmlevents.stream import (
    DocumentError,
    Query,
    QuerySyntaxError,
    UnsupportedQueryError,
    matches,
)

FIG1 = b"<r><a><b/><c/></a><b><d/></b><a><b/><c/></a></r>"


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def fig1(tmp_path: Path) -> str:
    p = tmp_path / "fig1.xml"
    p.write_bytes(FIG1)
    return str(p)


def test_one_json_line_per_match_in_detection_order(fig1: str) -> None:
    """Each match as {"node", "path", "attributes", "detected"}."""
    status, out, err = _run(["query", "//a[c]/b", fig1])
    assert status == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"node": 3, "path": "/r[1]/a[1]/b[1]", "attributes": {},
         "detected": {"event": "start", "node": 4}},
        {"node": 8, "path": "/r[1]/a[2]/b[1]", "attributes": {},
         "detected": {"event": "start", "node": 9}}]
    assert "9 elements read, 2 matches, peak 1 candidates held" in err


def test_count(fig1: str) -> None:
    """--count prints the number of matches only."""
    status, out, _ = _run(["query", "--count", "/*[not(d)]//*", fig1])
    assert (status, out) == (0, "8\n")


def test_grammar_notation(fig1: str, tmp_path: Path) -> None:
    """--grammar reads the paper's notation, here from a file (@FILE)."""
    g = tmp_path / "ex3.g"
    g.write_text("x_T -> *<x_T, x_T> | λ\nx_c -> c<x_T, x_T>\nx_b -> b<x_T, x_c>\n"
                 "x_0 -> a<x_b, x_T> | *<x_0, x_T> | *<x_T, x_0>\nstart x_0\nselect x_b\n",
                 encoding="utf-8")
    status, out, _ = _run(["query", "--grammar", f"@{g}", fig1])
    assert status == 0
    assert [json.loads(line)["node"] for line in out.splitlines()] == [3, 8]


def test_namespaces_and_attributes(tmp_path: Path) -> None:
    """--ns binds the query's prefixes; attributes are printed with Clark names."""
    p = tmp_path / "ns.xml"
    p.write_bytes(b'<r xmlns:x="urn:x"><x:a k="v" x:q="w"><x:b/></x:a></r>')
    status, out, _ = _run(["query", "--ns", "p=urn:x", "//p:a[p:b]", str(p)])
    assert status == 0
    assert json.loads(out) == {"node": 2, "path": "/r[1]/{urn:x}a[1]",
                               "attributes": {"k": "v", "{urn:x}q": "w"},
                               "detected": {"event": "start", "node": 3}}


def test_malformed_document_prints_the_matches_then_the_error(tmp_path: Path) -> None:
    """A document that breaks: the matches decided before, then line and column, exit 1."""
    p = tmp_path / "bad.xml"
    p.write_bytes(b"<r>\n<a><b/></a>\n<a><b/>\n</x></r>\n")
    status, out, err = _run(["query", "//a/b", str(p)])
    assert status == 1
    assert [json.loads(line)["node"] for line in out.splitlines()] == [3, 5]
    assert "line 4, column" in err and "Traceback" not in err


def test_bad_query_exits_1_before_reading(tmp_path: Path) -> None:
    """A query outside the subset: its column and reason, exit 1 (the file is not read)."""
    status, out, err = _run(["query", "//a[@id]", str(tmp_path / "missing.xml")])
    assert (status, out) == (1, "")
    assert "col 5" in err and "attributes are not supported" in err


@pytest.mark.parametrize("option", ["--namespace", "-n", "--ns"])
def test_bad_prefix_argument_exits_1(fig1: str, option: str) -> None:
    """A -n (or the older --ns) that is not PREFIX=URI is bad input (1), as in detect."""
    status, _, err = _run(["query", option, "nonsense", "//a", fig1])
    assert status == 1 and "PREFIX=URI" in err


def test_missing_file_exits_1(tmp_path: Path) -> None:
    """A file that cannot be read is a bad input (1), with no traceback."""
    status, _, err = _run(["query", "//a", str(tmp_path / "missing.xml")])
    assert status == 1 and "cannot read" in err


def test_standard_input_and_entities_refused() -> None:
    """'-' reads standard input; a DTD declaring entities is refused (exit 1)."""
    ok = subprocess.run([sys.executable, "-m", "xmlevents", "query", "//b", "-"],
                        input=FIG1, capture_output=True, check=False)
    assert ok.returncode == 0 and len(ok.stdout.splitlines()) == 3
    bomb = b'<!DOCTYPE r [<!ENTITY e "x">]><r><b>&e;</b></r>'
    bad = subprocess.run([sys.executable, "-m", "xmlevents", "query", "//b", "-"],
                         input=bomb, capture_output=True, check=False)
    assert bad.returncode == 1 and b"declares entities" in bad.stderr


@pytest.mark.parametrize("grammar", [False, True])
def test_unbound_prefix_names_the_command_line_option(fig1: str, grammar: bool) -> None:
    """An unbound prefix asks for ``--namespace x=URI`` on the command line, not for
    Python's ``namespaces=`` (issue 33 item 6); the Python error keeps the keyword."""
    query = "x0 -> x:a<x0, x0> | λ; select x0" if grammar else "//x:a"
    status, out, err = _run(["query", *(["--grammar"] if grammar else []), query, fig1])
    assert (status, out) == (1, "")
    assert "pass --namespace x=URI" in err and "namespaces=" not in err
    with pytest.raises((QuerySyntaxError, UnsupportedQueryError), match="namespaces="):
        Query(query, grammar=grammar)


def test_empty_file_is_reported_at_line_1_column_1(tmp_path: Path) -> None:
    """An empty file is libxml2's "Document is empty" at line 1, column 1 (it was line 0,
    column 0: the parser was closed without having been fed)."""
    empty = tmp_path / "empty.xml"
    empty.write_bytes(b"")
    status, _, err = _run(["query", "//a", str(empty)])
    assert status == 1 and "line 1, column 1" in err and "empty" in err
    with empty.open("rb") as f, pytest.raises(DocumentError) as info:
        list(matches("//a", f))
    assert (info.value.line, info.value.column) == (1, 1)
