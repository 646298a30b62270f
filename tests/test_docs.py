"""Docstring examples are tests: every module's doctests run and pass."""

import doctest
import importlib
import pkgutil

import pytest

import xmlevents
import xmlevents.algebra


def _modules() -> list[str]:
    names = ["xmlevents", "xmlevents._cli"]
    for info in pkgutil.iter_modules(xmlevents.algebra.__path__, "xmlevents.algebra."):
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
