"""What ``xmlevents detect`` and ``xmlevents graph`` import (issue 13, item 5: start-up is part of
every run): as processes started the way a user starts them, ``python -m xmlevents ...``, they
load the algebra and the standard library, and none of lxml, the other systems (dom, replay,
rules, service, CEL, streaming queries), their dependencies, or the other commands' modules.
``-X importtime`` lists every module a process imports, ``python -m`` and ``site`` included;
what a bare interpreter imports in the same environment (``python -c pass``: a
``sitecustomize``, a coverage hook) is not the command's doing and is left out."""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import pathlib
import subprocess
import sys

import pytest

from xmlevents._cli._main import COMMANDS as TABLE
from xmlevents._cli._main import _parser

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
EVENTS = str(EXAMPLES / "purchase_order.jsonl")
DEFINITIONS = str(EXAMPLES / "purchase_order.xev")

# Third-party packages (and what they bring) that detect and graph never need.
THIRD_PARTY = ("lxml", "pyspark", "py4j", "starlette", "uvicorn", "httpx", "rich", "blinker",
               "xmldiff", "pandas", "pyarrow")
# The systems on the algebra, and the modules of the other commands.
COMMANDS = ("xmlevents._cli.replay", "xmlevents._cli.history", "xmlevents._cli.rules",
            "xmlevents._cli.serve", "xmlevents._cli.cel", "xmlevents._cli.query",
            "xmlevents._cli.progress")
OWN = ("xmlevents.dom", "xmlevents.replay", "xmlevents.rules", "xmlevents.service",
       "xmlevents.cel", "xmlevents.stream", *COMMANDS)
# Standard-library modules only another command uses (serve's database, replay's temporary
# files), or only a .gz input needs; and shutil, which argparse imports for the terminal's
# width (with zlib, bz2 and lzma for its archives): xmlevents._cli finds the width itself.
STDLIB = ("sqlite3", "tempfile", "gzip", "shutil")
# The algebra's modules detect never uses, imported on first use (algebra/__init__.py): the
# drawings of trees (graph draws them), the rows' columns and the checks of subscriptions
# (with difflib, for their hints); and the expression printer (drawings and messages).
DRAWINGS = ("xmlevents.algebra._render", "xmlevents.algebra._printer")
DETECT_NEVER = ("xmlevents._foundation.rows", "xmlevents.algebra._subscriptions",
                "xmlevents._foundation.subscriptions", "difflib")


def _importtime(args: list[str], stdin: str = "") -> set[str]:
    """The modules ``python -X importtime ARGS`` imports (it must succeed)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args],
                          input=stdin, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:")}


@functools.cache
def _bare() -> frozenset[str]:
    """What the interpreter imports before any command: ``python -c pass``."""
    return frozenset(_importtime(["-c", "pass"]))


def imported(args: list[str], stdin: str = "") -> set[str]:
    """The modules ``python -m xmlevents ARGS`` imports beyond a bare interpreter's."""
    modules = _importtime(["-m", "xmlevents", *args], stdin) - _bare()
    assert "xmlevents.algebra" in modules  # the listing is read right
    return modules


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The modules of ``modules`` that are one of ``names`` or inside one of them."""
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize("args", [
    ["detect", "--definitions", DEFINITIONS, EVENTS],
    ["detect", "--context", "recent", "--within", "30", "-n", "x=urn:x",
     "--define", "E := ins(x:a) ; ins(x:a/x:b)"],  # stdin
    ["detect", "--help"],
    ["graph", "--definitions", DEFINITIONS],
    ["graph", "--dot", "--definitions", DEFINITIONS],
], ids=["detect-file", "detect-stdin", "detect-help", "graph", "graph-dot"])
def test_detect_and_graph_import_only_what_they_need(args: list[str]) -> None:
    modules = imported(args, stdin=pathlib.Path(EVENTS).read_text(encoding="utf-8"))
    assert loaded(modules, THIRD_PARTY) == []
    assert loaded(modules, OWN) == []
    assert loaded(modules, STDLIB) == []


def test_detect_of_a_gz_file_imports_gzip_and_nothing_heavier(tmp_path: pathlib.Path) -> None:
    import gzip

    path = tmp_path / "events.jsonl.gz"
    path.write_bytes(gzip.compress(pathlib.Path(EVENTS).read_bytes()))
    modules = imported(["detect", "--definitions", DEFINITIONS, str(path)])
    assert "gzip" in modules
    assert loaded(modules, THIRD_PARTY + OWN) == []


def test_the_other_commands_load_their_modules() -> None:
    """The control: the full parser (the list of commands) imports every command's module,
    and still none of the systems they run."""
    modules = imported(["--help"])
    assert loaded(modules, OWN) == sorted(set(COMMANDS) - {"xmlevents._cli.progress"})
    assert loaded(modules, THIRD_PARTY) == []


def _help(parser: argparse.ArgumentParser, argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return out.getvalue()


@pytest.mark.parametrize("command", ["detect", "graph"])
def test_the_lean_parser_parses_as_the_full_one(command: str) -> None:
    """``_parser("detect")`` builds only detect's subparser (graph's only graph's): the same
    help, the same arguments as the full parser."""
    lean, full = _parser(command), _parser()
    assert _help(lean, [command, "--help"]) == _help(full, [command, "--help"])
    argv = [command, "-d", "E := ins(a)", "-f", "defs.xev", "-n", "p=urn:p"]
    argv += ["--dot"] if command == "graph" else ["--within", "5", "--no-hierarchical",
                                                  "ev.jsonl"]
    assert lean.parse_args(argv) == full.parse_args(argv)


@pytest.mark.parametrize("args", [
    ["detect", "--definitions", DEFINITIONS, EVENTS],
    ["detect", "--within", "30", "--define", "E := ins(a) ; ins(a/b)"],  # stdin
], ids=["detect-file", "detect-stdin"])
def test_detect_leaves_the_algebra_s_drawings_rows_and_subscriptions_alone(
        args: list[str]) -> None:
    modules = imported(args, stdin=pathlib.Path(EVENTS).read_text(encoding="utf-8"))
    assert loaded(modules, DRAWINGS + DETECT_NEVER) == []
    assert "xmlevents.algebra._parser" in modules  # the definitions are parsed, as ever


def test_graph_loads_the_drawings_on_first_use() -> None:
    """The control: graph draws, so it imports the renderer (and the printer it uses)."""
    modules = imported(["graph", "--definitions", DEFINITIONS])
    assert loaded(modules, DRAWINGS) == sorted(DRAWINGS)
    assert loaded(modules, DETECT_NEVER) == []


@pytest.mark.parametrize("command", list(TABLE))
def test_every_command_s_lean_parser_gives_the_same_help(command: str) -> None:
    """Every command of the table: its parser alone (what a command line naming it builds)
    prints the help the full parser prints for it."""
    assert _help(_parser(command), [command, "--help"]) == _help(_parser(), [command, "--help"])
