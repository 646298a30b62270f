"""detect and graph on the command line (issue 15): gzip input, errors that name the file once,
--namespace, hints phrased as flags, and the warning on reused event ids."""

from __future__ import annotations

import gzip
import json
import pathlib
import subprocess
import sys

import pytest

from tests.cli.helpers import EI, line, run
from xmlevents._cli._common import Failure, parse_namespaces

ITEM = [line(id="ei1", op="ins", path="/order/item", ids=["o1", "i1"]),
        line(id="ep1", op="ins", path="/order/item/price", ids=["o1", "i1", "p1"]),
        line(id="eq1", op="ins", path="/order/item/quantity", ids=["o1", "i1", "q1"])]
ITEM_TEXT = "\n".join(ITEM) + "\n"
COMPOSITE = {"ts": 3, "type": "Ei", "path": "/order/item", "ids": ["o1", "i1"],
             "interval": [1, 3], "events": ["ei1", "ep1", "eq1"]}


@pytest.fixture
def here(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The current directory is ``tmp_path``: files are named as a user names them."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def one_error(err: str) -> str:
    """The one line of an error message, checked to be one and to carry no traceback."""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("xmlevents: error: ") and "Traceback" not in err
    return err[len("xmlevents: error: "):-1]


# --- gzip ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["events.jsonl.gz", "EVENTS.JSONL.GZ", "events.gz"])
def test_detect_reads_gzip_by_the_extension(here: pathlib.Path, name: str) -> None:
    """A file whose name ends in .gz is decompressed, as replay reads its tables."""
    (here / name).write_bytes(gzip.compress(ITEM_TEXT.encode()))
    status, out, err = run(["detect", "--define", EI, name])
    assert (status, err) == (0, "")
    assert [json.loads(x) for x in out.splitlines()] == [COMPOSITE]


def test_detect_reads_gzip_in_chunks_across_members(here: pathlib.Path) -> None:
    """Many lines, split over chunks and over two gzip members, give what the plain file gives."""
    lines = []
    for i in range(3000):
        lines += [line(id=f"i{i}", op="ins", path="/order/item", ids=["o1", f"i{i}"]),
                  line(id=f"p{i}", op="ins", path="/order/item/price", ids=["o1", f"i{i}", "p"]),
                  line(id=f"q{i}", op="ins", path="/order/item/quantity",
                       ids=["o1", f"i{i}", "q"])]
    data = ("\n".join(lines) + "\n").encode()
    (here / "plain.jsonl").write_bytes(data)
    half = len(data) // 2
    (here / "two.jsonl.gz").write_bytes(gzip.compress(data[:half]) + gzip.compress(data[half:]))
    _, plain, _ = run(["detect", "--define", EI, "plain.jsonl"])
    status, out, err = run(["detect", "--define", EI, "two.jsonl.gz"])
    assert (status, err) == (0, "") and out == plain and len(out.splitlines()) == 3000


def test_detect_gzip_errors_name_the_file(here: pathlib.Path) -> None:
    """Data that is not gzip, or ends early, is one line naming the file; a .gz name is what
    says gzip, so stdin stays plain."""
    (here / "plain.gz").write_text(ITEM_TEXT, encoding="utf-8")
    status, _, err = run(["detect", "--define", EI, "plain.gz"])
    assert status == 1
    assert one_error(err).startswith("plain.gz: not valid gzip data (Not a gzipped file")
    (here / "cut.jsonl.gz").write_bytes(gzip.compress(ITEM_TEXT.encode())[:-12])
    status, out, err = run(["detect", "--define", EI, "cut.jsonl.gz"])
    assert status == 1
    assert one_error(err) == "cut.jsonl.gz: the compressed data ends early (a truncated file?)"
    status, out, err = run(["detect", "--define", EI, "-"], ITEM_TEXT)
    assert (status, err) == (0, "") and json.loads(out) == COMPOSITE


# --- errors name the file once --------------------------------------------------------------


BAD_LINES = [
    ("{not json", "not valid JSON: Expecting property name enclosed in double quotes at col 2"),
    (line(op="insert", path="/order/item", ids=["o1", "i9"]),
     "op='insert' is not an operation; use 'ins', 'upd' or 'del'"),
    (line(id="x", ts=2, op="ins", path="/order/item", ids=["o1", "i9"]),
     "ts=2 does not come after the previous event's ts=3; ticks must increase"),
]


@pytest.mark.parametrize("bad, reason", BAD_LINES)
def test_detect_errors_name_the_file_once(here: pathlib.Path, bad: str, reason: str) -> None:
    """A malformed line: 'FILE, line N: reason', the file named once; what was detected
    before it is written first."""
    (here / "tiny.jsonl").write_text(ITEM_TEXT + bad + "\n", encoding="utf-8")
    status, out, err = run(["detect", "--define", EI, "tiny.jsonl"])
    assert status == 1 and json.loads(out) == COMPOSITE
    assert one_error(err) == f"tiny.jsonl, line 4: {reason}"
    assert err.count("tiny.jsonl") == 1


def test_detect_bytes_that_are_not_utf8_name_the_file_once(here: pathlib.Path) -> None:
    (here / "tiny.jsonl").write_bytes(ITEM_TEXT.encode().replace(b'"q1"', b'"q\xe91"'))
    status, _, err = run(["detect", "--define", EI, "tiny.jsonl"])
    assert status == 1
    assert one_error(err) == ("tiny.jsonl, line 3: not UTF-8 text: invalid continuation byte "
                              "at byte 82 of the line")


def test_detect_stdin_is_named_once() -> None:
    status, _, err = run(["detect", "--define", EI], ITEM[0] + "\n{not json\n")
    assert status == 1
    assert one_error(err) == ("<stdin>, line 2: not valid JSON: Expecting property name "
                              "enclosed in double quotes at col 2")


def test_detect_unknown_file_is_named_once(here: pathlib.Path) -> None:
    status, _, err = run(["detect", "--define", EI, "missing.jsonl"])
    assert status == 1
    assert one_error(err) == "cannot read missing.jsonl: No such file or directory"
    status, _, err = run(["detect", "--define", EI, "missing.jsonl.gz"])
    assert one_error(err) == "cannot read missing.jsonl.gz: No such file or directory"


def test_detect_an_event_the_graph_refuses_is_named_by_file_and_line(here: pathlib.Path) -> None:
    """An error of the graph (a duration window over an event without a time) names the file
    and the line of the event, which the library's message cannot."""
    (here / "tiny.jsonl").write_text(
        line(id="a", op="ins", path="/a", ids=["a1"], time=5) + "\n\n"
        + line(id="b", op="ins", path="/a", ids=["a1"]) + "\n", encoding="utf-8")
    status, _, err = run(["detect", "--define", "E := ins(a) ; ins(a)", "--within", "30s",
                          "tiny.jsonl"])
    assert status == 1
    message = one_error(err)
    assert message.startswith("tiny.jsonl, line 3: event 'b' (ts=3) carries no time; ")
    assert err.count("tiny.jsonl") == 1


# --- --namespace and hints phrased as flags -------------------------------------------------


def test_graph_unknown_prefix_hint_is_a_flag() -> None:
    """The library's hint says namespaces={...}; the command line says --namespace p=URI."""
    status, out, err = run(["graph", "--define", "E := ins(p:a)"])
    assert (status, out) == (1, "")
    assert "pass --namespace p=URI" in err and "namespaces=" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize("flag", ["-n", "--namespace"])
def test_graph_with_a_namespace(flag: str) -> None:
    status, out, err = run(["graph", flag, "p=urn:x", "--define", "E := ins(p:a/p:b)"])
    assert (status, err) == (0, "")
    assert "ins({urn:x}a/{urn:x}b)" in out


def test_graph_dot_with_namespaces() -> None:
    status, out, _ = run(["graph", "-n", "p=urn:x", "-n", "q=urn:y", "--dot", "--define",
                          "E := ins(p:a) ; ins(p:a/q:b)"])
    assert status == 0 and out.startswith("digraph") and "{urn:y}b" in out


def test_detect_with_a_namespace() -> None:
    """Definitions with prefixes detect events whose paths carry the namespaces (Clark
    notation); without -n the prefix is refused with the flag to pass."""
    events = "\n".join([
        line(id="e1", op="ins", path="/{urn:po}order/{urn:po}item", ids=["o", "i"]),
        line(id="e2", op="ins", path="/{urn:po}order/{urn:po}item/{urn:po}price",
             ids=["o", "i", "p"])]) + "\n"
    definition = "E := ins(po:item) ; ins(po:item/po:price)"
    status, out, err = run(["detect", "-n", "po=urn:po", "--define", definition], events)
    assert (status, err) == (0, "")
    assert json.loads(out)["events"] == ["e1", "e2"]
    status, out, err = run(["detect", "--define", definition], events)
    assert (status, out) == (1, "") and "pass --namespace po=URI" in err
    assert "namespaces=" not in err


def test_detect_condition_hint_is_phrased_for_the_command_line() -> None:
    """when= needs documents: the hint names the replay, not documents=... or xmlevents.wrap."""
    status, _, err = run(["detect", "--define",
                          'E := (ins(a/b) & ins(a/c)) with when="b > 0"'], "")
    assert status == 1
    assert "xmlevents replay" in err and "documents=" not in err


@pytest.mark.parametrize("bad, reason", [
    ("pom", "expected PREFIX=URI"),
    ("=urn:x", "expected PREFIX=URI"),
    ("p=", "expected PREFIX=URI"),
    ("p:q=urn:x", "'p:q' is not a prefix"),
    ("1p=urn:x", "'1p' is not a prefix"),
])
@pytest.mark.parametrize("command", ["detect", "graph"])
def test_bad_namespaces_are_one_line(command: str, bad: str, reason: str) -> None:
    status, out, err = run([command, "-n", bad, "--define", "E := ins(a)"])
    assert (status, out) == (1, "")
    assert one_error(err).startswith(f"--namespace {bad!r}: {reason}")


def test_parse_namespaces() -> None:
    """The one parser of --namespace: pairs in order, a repeated binding allowed, a conflicting
    one refused."""
    assert parse_namespaces([]) == {}
    assert parse_namespaces(["a=urn:a", "b=http://x/y?q=1", "a=urn:a"]) == {
        "a": "urn:a", "b": "http://x/y?q=1"}
    assert parse_namespaces(["_p.x-1=urn:z"]) == {"_p.x-1": "urn:z"}
    with pytest.raises(Failure, match="prefix 'a' is already bound to 'urn:a'"):
        parse_namespaces(["a=urn:a", "a=urn:b"])


# --- reused event ids -----------------------------------------------------------------------


def test_detect_warns_once_on_reused_ids(here: pathlib.Path) -> None:
    """Three events reuse an id, one of them never built (no definition takes /order/note):
    one warning line at the end, naming the first, and the status stays 0."""
    lines = [
        "",
        line(id="e1", op="ins", path="/order/item", ids=["o1", "i1"]),     # line 2
        line(id="e2", op="ins", path="/order/note", ids=["o1", "n1"]),     # line 3
        line(id="e3", op="ins", path="/order/item/price", ids=["o1", "i1", "p1"]),
        "",
        line(id="e2", op="ins", path="/order/note", ids=["o1", "n2"]),     # line 6: reuse
        line(op="ins", path="/order/note", ids=["o1", "n3"]),              # line 7: id "7"
        line(id=7, op="ins", path="/order/note", ids=["o1", "n4"]),        # line 8: reuse
        line(id="e1", op="ins", path="/order/item/quantity", ids=["o1", "i1", "q1"]),  # reuse
    ]
    (here / "dup.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, out, err = run(["detect", "--define", EI, "dup.jsonl"])
    assert status == 0
    assert json.loads(out)["events"] == ["e1", "e3", "e1"]
    assert err == ('xmlevents detect: warning: 3 events reuse an id (first: id "e2" at line 6, '
                   "first seen at line 3); composites name their constituents by id\n")


def test_detect_warns_on_one_reused_id_in_the_singular() -> None:
    text = ITEM_TEXT + line(id="ep1", op="del", path="/order/item", ids=["o1", "i1"]) + "\n"
    status, out, err = run(["detect", "--define", EI], text)
    assert status == 0 and json.loads(out.splitlines()[0]) == COMPOSITE
    assert err == ('xmlevents detect: warning: 1 event reuses an id (id "ep1" at line 4, '
                   "first seen at line 2); composites name their constituents by id\n")


def test_detect_unique_ids_and_default_ids_give_no_warning() -> None:
    text = "".join(line(op="ins", path="/a", ids=["a1"]) + "\n" for _ in range(5))
    status, _, err = run(["detect", "--define", "E := ins(a)"], text)
    assert (status, err) == (0, "")


def test_detect_warning_comes_after_the_output(here: pathlib.Path) -> None:
    """As a process: the output on stdout, the warning on stderr, status 0; and detect,
    reading gzip and taking -n, still loads none of lxml, xmldiff or pyspark."""
    data = (ITEM_TEXT + ITEM[0] + "\n").encode()
    (here / "ev.jsonl.gz").write_bytes(gzip.compress(data))
    code = ("import sys; from xmlevents._cli import main; status = main(sys.argv[1:]); "
            "heavy = sorted(m for m in ('lxml', 'xmldiff', 'pyspark') if m in sys.modules); "
            "print(heavy, file=sys.stderr); sys.exit(status)")
    done = subprocess.run([sys.executable, "-c", code, "detect", "-n", "x=urn:x", "--define", EI,
                           "ev.jsonl.gz"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert [json.loads(x) for x in done.stdout.splitlines()] == [COMPOSITE]
    assert done.stderr.splitlines() == [
        'xmlevents detect: warning: 1 event reuses an id (id "ei1" at line 4, first seen at '
        "line 1); composites name their constituents by id", "[]"]
