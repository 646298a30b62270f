"""Docstring examples are tests: every module's doctests run and pass."""

import doctest
import importlib
import pkgutil

import pytest

import contextlib
import io
import pathlib
import re

import xmlevents
import xmlevents.algebra
import xmlevents.dom


def _modules() -> list[str]:
    names = ["xmlevents", "xmlevents._cli"]
    for package in (xmlevents.algebra, xmlevents.dom):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_doctests(name: str) -> None:
    """The examples in the module's docstrings print what they claim."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


def test_algebra_imports_no_outside_packages() -> None:
    """The algebra layer imports only the standard library (DESIGN section 1)."""
    import subprocess
    import sys

    code = ("import sys, xmlevents.algebra, xmlevents.algebra._graph, xmlevents.algebra._render;"
            "bad = [m for m in ('lxml', 'blinker', 'pyspark') if m in sys.modules];"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "import xmlevents" in b]


@pytest.mark.parametrize("block", _python_blocks(), ids=lambda b: b.splitlines()[0][:40])
def test_readme_python_examples_print_what_their_comments_say(block: str) -> None:
    """A README example runs, and each ``print(...)  # value`` prints that value."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, str(README), "exec"), {})
    expected = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+# (.*)$", block, re.M)]
    assert out.getvalue().split("\n")[:len(expected)] == expected
