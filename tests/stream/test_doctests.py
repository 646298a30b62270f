"""The examples in the stream package's docstrings print what they claim."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import xmlevents.stream


def _modules() -> list[str]:
    return ["xmlevents.stream"] + sorted(
        info.name for info in pkgutil.iter_modules(xmlevents.stream.__path__,
                                                   "xmlevents.stream."))


@pytest.mark.parametrize("name", _modules())
def test_doctests(name: str) -> None:
    """Every docstring example of the module runs as shown."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
