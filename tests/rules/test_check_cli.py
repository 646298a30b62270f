"""``xmlevents rules check RULES [--dot]`` (issue 17, item 4): exit 0 when termination is
proven, 1 when it is not (a check that does not pass; 3 is an unusable environment since issue
28) and for bad input, with one line naming the problem."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "xmlevents", "rules", "check", *args],
                          capture_output=True, text=True, check=False)


def _example1(tmp_path: Path) -> Path:
    text = (FIXTURES / "paper_rules.txt").read_text().split("# Example 2")[0]
    path = tmp_path / "example1.rules"
    path.write_text(text)
    return path


def test_example1_terminates(tmp_path: Path) -> None:
    done = _check(str(_example1(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert "R1 (priority 2)" in done.stdout and "R2 (priority 1)" in done.stdout
    assert "triggering graph:" in done.stdout and "activation graph:" in done.stdout
    assert "R1 -> R2" in done.stdout and "R2 -> R1" in done.stdout
    assert done.stdout.rstrip().endswith("verdict: terminates: the activation graph is acyclic")


def test_loop_may_not_terminate(tmp_path: Path) -> None:
    path = tmp_path / "loop.rules"
    path.write_text("rule L priority 1: on INSERT document('d')//x do INSERT <x/> BELOW $delta\n")
    done = _check(str(path))
    assert done.returncode == 1
    assert "may not terminate: the triggering graph has the cycle L -> L" in done.stdout


def test_dot(tmp_path: Path) -> None:
    done = _check(str(_example1(tmp_path)), "--dot")
    assert done.returncode == 0
    assert done.stdout.startswith('digraph "triggering" {')
    assert 'digraph "activation" {' in done.stdout and '"R1" -> "R2"' in done.stdout


def test_bad_input(tmp_path: Path) -> None:
    missing = _check(str(tmp_path / "nope.rules"))
    assert missing.returncode == 1 and missing.stdout == ""
    assert "cannot read the rule file" in missing.stderr and "nope.rules" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    bad = tmp_path / "bad.rules"
    bad.write_text("rule R priority 1: on INSERT document('d')/a do DELETE $delta/c()\n")
    syntax = _check(str(bad))
    assert syntax.returncode == 1 and "bad.rules" in syntax.stderr
