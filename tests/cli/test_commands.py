"""The command line as one table with one exit-status policy (issue 28, deliverable 4): the
dispatcher is the table, one failure type carries its status, options come anywhere, every
command that reads events or documents takes ``-`` and ``.gz``, ``NAME=VALUE`` is read once,
outputs are checked before any work, and an unusable environment is one line and status 3."""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import types
from pathlib import Path

import pytest

from xmlevents._cli import _main, main
from xmlevents._cli._common import BAD_INPUT, ENVIRONMENT, INTERRUPTED, Failure, Streams

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
EVENTS = EXAMPLES / "purchase_order.jsonl"
DOC = b"<r><a><b/><c/></a><b><d/></b><a><b/><c/></a></r>"
RULES = "rule L priority 1: on INSERT document('d')//x do INSERT <x/> BELOW $delta\n"


def run(argv: list[str], stdin: str | None = None,
        monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def process(*argv: str, stdin: bytes = b"", timeout: float = 60
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "xmlevents", *argv], input=stdin.decode(),
                          capture_output=True, text=True, timeout=timeout, check=False)


# --- the table and the failure type ---------------------------------------------------------


@pytest.fixture
def fake_command(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A command module added to the table: what it raises or returns is what main does."""
    module = types.ModuleType("xmlevents._cli.fake")

    def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        p = sub.add_parser("fake", help="a command of the test")
        p.add_argument("what")
        p.add_argument("--status", type=int, default=0)

    def run_(args: argparse.Namespace, streams: Streams) -> int:
        if args.what == "fail":
            raise Failure("it failed", *([args.status] if args.status else []))
        if args.what == "interrupt":
            raise KeyboardInterrupt
        streams.out.write(f"ran {args.what}\n")
        return args.status

    module.add_parser = add_parser  # type: ignore[attr-defined]
    module.run = run_  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "xmlevents._cli.fake", module)
    monkeypatch.setitem(_main.COMMANDS, "fake", "fake")
    return module


def test_the_dispatcher_is_the_table(fake_command: types.ModuleType) -> None:
    """A module added to the table is a command: parsed, run, its status returned."""
    assert run(["fake", "x", "--status", "4"]) == (4, "ran x\n", "")


def test_one_failure_type_carries_its_status(fake_command: types.ModuleType) -> None:
    """A Failure is one line on stderr and its own status; KeyboardInterrupt is 130."""
    assert run(["fake", "fail"]) == (BAD_INPUT, "", "xmlevents: error: it failed\n")
    assert run(["fake", "fail", "--status", "3"])[0] == ENVIRONMENT
    assert run(["fake", "interrupt"])[0] == INTERRUPTED


def test_every_command_has_a_parser_and_a_run() -> None:
    """Each module of the table has add_parser and run, and its parser is named as it is."""
    for name in _main.COMMANDS:
        module = _main.command_module(name)
        assert callable(module.add_parser) and callable(module.run)
        assert name in _main._parser(name)._subparsers._group_actions[0].choices  # type: ignore[union-attr]


def test_ctrl_c_is_130_without_a_traceback() -> None:
    """A real SIGINT to a command waiting for its input ends it with 130, no traceback."""
    # As a shell starts a command in the foreground: SIGINT at its default, whatever this
    # process has (a suite started in the background by a non-interactive shell, `.ci/run &`,
    # ignores SIGINT, and an ignored signal stays ignored across exec: the command then read
    # on to the end of its input and exited 0).
    proc = subprocess.Popen([sys.executable, "-m", "xmlevents", "detect", "-d", "E := ins(a)"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # One event in, its composite out: the command is past its start-up (a Ctrl-C during
        # the interpreter's own imports is Python's, not ours) and reading its input. A fixed
        # sleep was not enough under coverage at load 2.5 (issue 28's CI run).
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write('{"id": "e1", "ts": 1, "op": "ins", "path": "/a", "ids": ["a1"]}\n')
        proc.stdin.flush()
        assert proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == INTERRUPTED, err
    assert "Traceback" not in err


# --- one status for one kind of mistake ----------------------------------------------------


def test_an_unclosed_bracket_is_status_1_in_graph_cel_and_query(tmp_path: Path) -> None:
    """graph -d, cel and query each refuse an unclosed bracket with status 1 (was 1/1/2)."""
    doc = tmp_path / "d.xml"
    doc.write_bytes(DOC)
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"type": "A"}\n', encoding="utf-8")
    statuses = [run(["graph", "-d", "E := (ins(a) ; ins(b)"])[0],
                run(["cel", "SELECT * FROM S WHERE (A ; B", str(stream)])[0],
                run(["query", "//a[b", str(doc)])[0]]
    assert statuses == [1, 1, 1]


# --- options anywhere -----------------------------------------------------------------------


def test_options_after_positionals(tmp_path: Path) -> None:
    """`query '//a' --count f.xml` (refused before: "unrecognized arguments: f.xml"), and the
    same shape for cel, detect and rules run."""
    doc = tmp_path / "d.xml"
    doc.write_bytes(DOC)
    assert run(["query", "//a", "--count", str(doc)])[:2] == (0, "2\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"type": "A"}\n{"type": "B"}\n', encoding="utf-8")
    assert run(["cel", "SELECT * FROM S WHERE A ; B", "--count", str(stream)])[:2] == (0, "1\n")
    status, out, _ = run(["detect", str(EVENTS), "-d", "E := ins(order/item)"])
    assert status == 0 and out.count("\n") > 0
    rules = tmp_path / "r.rules"
    rules.write_text(RULES, encoding="utf-8")
    assert run(["rules", "check", str(rules), "--dot"])[1].startswith("digraph")


# --- --namespace, '-' and .gz ---------------------------------------------------------------


def test_query_takes_namespace_and_keeps_ns_hidden(tmp_path: Path) -> None:
    """query binds prefixes with -n/--namespace as every command does; --ns still works but
    --help no longer lists it."""
    doc = tmp_path / "ns.xml"
    doc.write_bytes(b'<r xmlns:x="urn:x"><x:a/></r>')
    for option in ("-n", "--namespace", "--ns"):
        assert run(["query", "//p:a", option, "p=urn:x", "--count", str(doc)])[:2] == (0, "1\n")
    shown = process("query", "--help").stdout
    assert "--namespace" in shown and "--ns" not in shown


def gz(path: Path, data: bytes) -> Path:
    target = path.with_name(path.name + ".gz")
    target.write_bytes(gzip.compress(data))
    return target


def test_cel_primitive_reads_gz_as_detect_does(tmp_path: Path) -> None:
    """cel --primitive reads the .gz that detect reads (it refused it before)."""
    packed = gz(tmp_path / "events.jsonl", EVENTS.read_bytes())
    status, out, err = run(["cel", "SELECT * FROM S WHERE ins", "--primitive", "--count",
                            str(packed)])
    plain = run(["cel", "SELECT * FROM S WHERE ins", "--primitive", "--count", str(EVENTS)])
    assert status == 0, err
    assert out == plain[1] and int(out) > 0


def test_query_and_rules_read_gz_and_stdin(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """query's document, rules' rule file and --doc: '-' and .gz as every input."""
    packed = gz(tmp_path / "d.xml", DOC)
    assert run(["query", "//b", "--count", str(packed)])[:2] == (0, "3\n")
    done = process("query", "//b", "--count", "-", stdin=DOC)
    assert (done.returncode, done.stdout) == (0, "3\n")
    rules = gz(tmp_path / "r.rules", RULES.encode())
    assert "may not terminate" in run(["rules", "check", str(rules)])[1]
    done = process("rules", "check", "-", stdin=RULES.encode())
    assert done.returncode == 1 and "may not terminate" in done.stdout
    doc = gz(tmp_path / "d0.xml", b"<r/>")
    status, _, err = run(["rules", "run", str(tmp_path / "r.rules.gz"), "--doc", f"d={doc}",
                          "--out", str(tmp_path / "out")])
    assert status == 0, err
    assert (tmp_path / "out" / "d").read_bytes().startswith(b"<?xml")


def test_definitions_files_read_gz(tmp_path: Path) -> None:
    """--definitions FILE.gz, as every input."""
    defs = gz(tmp_path / "d.xev", b"E := ins(a/b) & ins(a/c)\n")
    status, out, _ = run(["graph", "-f", str(defs)])
    assert status == 0 and out.startswith("E := ins(a/b) & ins(a/c)")


# --- NAME=VALUE, read once ------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "expected"), [
    (["detect", "-n", "nope", "-d", "E := ins(a)", str(EVENTS)], "expected PREFIX=URI"),
    (["query", "-n", "=urn:x", "//a", str(EVENTS)], "expected PREFIX=URI"),
    (["serve", "--token", "alice", "--db", "/nonexistent/x.db"], "expected NAME=SECRET"),
    (["rules", "run", "RULES", "--doc", "s.xml"], "expected NAME=FILE"),
])
def test_name_value_arguments_are_read_alike(argv: list[str], expected: str,
                                             tmp_path: Path) -> None:
    """--namespace, --token and --doc: one reader, one wording, status 1."""
    rules = tmp_path / "r.rules"
    rules.write_text(RULES, encoding="utf-8")
    status, _, err = run([str(rules) if a == "RULES" else a for a in argv])
    assert status == 1 and expected in err and err.count("\n") == 1


# --- outputs checked before any work --------------------------------------------------------


def test_rules_run_out_is_checked_before_anything_runs(tmp_path: Path) -> None:
    """rules run --out /proc/x: one line, status 1, no trace printed (a traceback after the
    work before)."""
    rules = tmp_path / "r.rules"
    rules.write_text(RULES, encoding="utf-8")
    doc = tmp_path / "d.xml"
    doc.write_bytes(b"<r/>")
    status, out, err = run(["rules", "run", str(rules), "--doc", f"d={doc}", "--update",
                            "INSERT <x/> BELOW document('d')/r", "--out", "/proc/x"])
    assert (status, out) == (1, "")
    assert err.startswith("xmlevents: error: --out /proc/x: cannot create the folder")
    assert err.count("\n") == 1


def test_history_output_is_checked_before_git_runs(tmp_path: Path) -> None:
    """history from-git -o in a folder that does not exist: refused before git runs (the
    repository does not exist either: the output is named, not the repository)."""
    status, _, err = run(["history", "from-git", str(tmp_path / "no-repo"), "doc.xml",
                          "-o", str(tmp_path / "missing" / "h.jsonl")])
    assert status == 1 and "-o " in err and "does not exist" in err


# --- serve: an unusable environment is one line and status 3 -------------------------------


def serve(*argv: str) -> subprocess.CompletedProcess[str]:
    return process("serve", "--port", str(_free_port()), *argv, timeout=60)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_refuses_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    """serve --db notxml.txt: one line, status 3, no traceback (a traceback before)."""
    db = tmp_path / "notxml.txt"
    db.write_text("hello, not a database\n" * 100, encoding="utf-8")
    done = serve("--db", str(db))
    assert done.returncode == ENVIRONMENT
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"xmlevents: error: --db {db}: ")
    assert done.stderr.count("\n") == 1


def test_serve_refuses_another_program_s_database(tmp_path: Path) -> None:
    """An SQLite database whose tables are not the service's: refused before serving (3)."""
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE log (id INTEGER, line TEXT)")
    done = serve("--db", str(db))
    assert done.returncode == ENVIRONMENT and "not the service's database" in done.stderr
    assert done.stderr.count("\n") == 1


def test_serve_refuses_a_busy_port(tmp_path: Path) -> None:
    """A port another socket listens on: one line, status 3 (uvicorn's log line and 3,
    undocumented, before)."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = process("serve", "--port", str(port), "--db", str(tmp_path / "s.db"),
                       timeout=60)
    assert done.returncode == ENVIRONMENT
    assert done.stderr.startswith(f"xmlevents: error: cannot listen on 127.0.0.1:{port}: "
                                  f"{os.strerror(98)}")
    assert done.stderr.count("\n") == 1


# --- replay: the CLI's displays are the CLI's -----------------------------------------------


def test_replay_exports_no_cli_plumbing() -> None:
    """xmlevents.replay no longer exports the command line's progress displays or its
    session check; importing it and running in process loads no rich."""
    import xmlevents.replay as replay

    for name in ("progress_for", "active_session", "StageLines", "RichProgress"):
        assert name not in replay.__all__
    code = ("import sys, xmlevents.replay as r; r.ReplayProgress; r.run_local; "
            "print('rich' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


def test_replay_run_returns_its_status(tmp_path: Path) -> None:
    """replay is a command like the others: run returns the status (0), no callbacks."""
    history = tmp_path / "h.jsonl"
    rows = [{"doc": "d", "version": v, "xml": x} for v, x in enumerate(["<r/>", "<r><a/></r>"])]
    history.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    module = _main.command_module("replay")
    args = _main._parser("replay").parse_args(
        ["replay", str(history), "--engine", "local", "-q", "--out", str(tmp_path / "out")])
    out, err = io.StringIO(), io.StringIO()
    assert module.run(args, Streams(out, err)) == 0
    assert "versions          2 replayed" in out.getvalue()
