"""The examples in the rules package's docstrings print what they claim."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import xmlevents.rules

MODULES = sorted(["xmlevents.rules", *(info.name for info in pkgutil.iter_modules(
    xmlevents.rules.__path__, "xmlevents.rules."))])


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    """Every docstring example of the module runs as written."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
