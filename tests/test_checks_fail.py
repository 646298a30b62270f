"""The checks can fail (issue 28): one defect of each kind, planted in a scratch copy.

``.ci/checks`` once built the docs with ``--quiet``, which hid the warnings strict mode counts,
so that step passed whatever the pages said. A check is only worth its run if it fails when it
should, so this test copies the repository (``git ls-files``: tracked files and new ones not
ignored, as they are in the working tree) into a scratch folder once per kind of defect,
plants one defect, and runs there the check that must catch it, all six at once:

========================  ======================================================
defect                    the check that fails
========================  ======================================================
a dead link in the docs   ``.ci/checks docs`` (``mkdocs build --strict``)
the algebra's tests gone  ``.ci/checks coverage`` (its tests under coverage, the floor)
an unused import          ``.ci/checks ruff``
a type error              ``.ci/checks mypy`` (``tools/typecheck.py``)
an upward import          ``.ci/checks layers`` (lint-imports) and tests/test_layers.py
a console example that    tests/test_docs.py (the docs' command blocks)
shows the wrong output
========================  ======================================================

Each must exit non-zero and name the planted defect in its report, so a failure for some
other reason (a broken environment, another finding) does not pass for the defect's.

The copy checks the copy: ``tools/`` and ``docs/hooks.py`` build the link tree under the root
they are in (``build/tree`` of the copy), and the tests run with that tree first on the path
(``PYTHONPATH``) and without the working directory (``PYTHONSAFEPATH``), so ``xmlevents``
imports the copy's sources, not the editable install's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _copy(dest: Path) -> Path:
    """The repository's files as they are in the working tree, copied under ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree, not yet in git
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    return dest


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(text)


def _replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path}: the text to change is gone: {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _dead_link(root: Path) -> None:
    _append(root / "docs" / "index.md", "\nSee [the lost page](no-such-page.md).\n")


def _unused_import(root: Path) -> None:
    _append(root / "algebra" / "ast.py", "\n\ndef _planted() -> None:\n    import os\n")


def _type_error(root: Path) -> None:
    _append(root / "algebra" / "ast.py", '\n\ndef _planted() -> int:\n    return "planted"\n')


def _upward_import(root: Path) -> None:
    _append(root / "algebra" / "ast.py", "\nfrom xmlevents.replay import replay_history  # noqa\n")


def _untested_algebra(root: Path) -> None:
    # The algebra's tests but one small file gone: its coverage falls far under the floor.
    for test in (root / "tests" / "algebra").glob("test_*.py"):
        if test.name != "test_lazy_names.py":
            test.unlink()


def _wrong_example(root: Path) -> None:
    # The tutorial's `xmlevents detect` example: its first composite is at tick 6.
    _replace_once(root / "docs" / "tutorial.md", '{"ts": 6, "type": "ItemComplete"',
                  '{"ts": 7, "type": "ItemComplete"')


def _pytest(*args: str) -> list[str]:
    # pythonpath: the copy's link tree, not its root (where `xmlevents/` alone is the facade
    # without its subpackages, which the editable install would then find in the original)
    # (no marker filter: the docs' command blocks are slow tests; -n 0: one process a copy)
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
            "-o", "pythonpath=build/tree", *args]


# name -> (plant the defect, [(a command that must fail, what its report must name)]).
CASES: dict[str, tuple[Callable[[Path], None], list[tuple[list[str], list[str]]]]] = {
    "dead docs link": (_dead_link, [([".ci/checks", "docs"], ["no-such-page.md"])]),
    "ruff finding": (_unused_import, [([".ci/checks", "ruff"], ["algebra/ast.py", "F401"])]),
    "type error": (_type_error,
                   [([".ci/checks", "mypy"], ["algebra/ast.py", "return-value"])]),
    "upward import": (_upward_import,
                      [([".ci/checks", "layers"], ["xmlevents.algebra.ast", "xmlevents.replay"]),
                       (_pytest("tests/test_layers.py"), ["algebra/ast.py", "xmlevents.replay"])]),
    "untested algebra": (_untested_algebra,
                         [([".ci/checks", "coverage"], ["algebra coverage >= 90%",
                                                        "less than fail-under=90"])]),
    "failing docs example": (_wrong_example,
                             [(_pytest("tests/test_docs.py", "-k",
                                       "command_blocks_run_and_show and tutorial"),
                               ["docs/tutorial.md", '"ts": 7'])]),
}


def _environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_CORE"))}
    env.update(PYTHONPATH=str(root / "build" / "tree"), PYTHONSAFEPATH="1",
               NO_MKDOCS_2_WARNING="1")
    return env


def test_each_check_fails_on_its_planted_defect(tmp_path: Path) -> None:
    """A dead link, an unused import, a type error, an upward import, the algebra's tests
    gone and a wrong example, each in its own copy of the repository, each fails the check
    meant for it, which names it."""
    running = []
    for i, (name, (plant, commands)) in enumerate(CASES.items()):
        root = _copy(tmp_path / f"copy{i}")
        plant(root)
        # the copy's installed layout in links, for the tests' imports (PYTHONPATH)
        subprocess.run([sys.executable, "tools/linktree.py"], cwd=root, check=True,
                       capture_output=True)
        for command, named in commands:
            proc = subprocess.Popen(command, cwd=root, env=_environment(root), text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            running.append((name, command, named, proc))
    failures = []
    for name, command, named, proc in running:
        out, _ = proc.communicate(timeout=900)
        if proc.returncode == 0:
            failures.append(f"{name}: {' '.join(command)} passed\n{out[-3000:]}")
        elif missing := [n for n in named if n not in out]:
            failures.append(f"{name}: {' '.join(command)} failed without naming {missing}\n"
                            f"{out[-3000:]}")
    assert not failures, "\n\n".join(failures)
