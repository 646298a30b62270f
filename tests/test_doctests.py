"""Every docstring example runs, once (issue 28: doctests were collected three ways, the rules'
twice, the replay's and the foundation's never).

One collector walks every module of every package — the facade and its command line, the
foundation and the seven systems — and runs each module's doctests once. A second test reads
the sources: a module whose text holds an example (``>>> ``) and that the walk did not collect
fails it, so a new package or a new folder cannot fall outside the collector unseen.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The packages whose modules are walked (subpackages included).
PACKAGES = ("xmlevents", "xmlevents._foundation", "xmlevents.algebra", "xmlevents.dom",
            "xmlevents.replay", "xmlevents.rules", "xmlevents.service", "xmlevents.cel",
            "xmlevents.stream")
_EXAMPLE = re.compile(r"^\s*>>> ", re.MULTILINE)
#: ``python -m xmlevents``: importing it runs the command line (it has no examples; the
#: source scan below would say if it had).
_PROGRAMS = frozenset(("xmlevents.__main__",))


def _walk() -> list[str]:
    names: set[str] = set()
    for name in PACKAGES:
        package = importlib.import_module(name)
        names.add(name)
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            names.add(info.name)
    return sorted(names - _PROGRAMS)


MODULES = _walk()


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    """The examples in the module's docstrings print what they claim."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


def _sources() -> dict[str, Path]:
    """Every module of the installed layout and its source, from pyproject's package-dir."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-dir"]
    out: dict[str, Path] = {}
    for package, folder in mapping.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


def test_every_module_with_an_example_is_collected() -> None:
    """A module whose source holds ``>>> `` is among the modules the doctests run on."""
    sources = _sources()
    with_examples = {name for name, path in sources.items()
                     if _EXAMPLE.search(path.read_text(encoding="utf-8"))}
    assert len(with_examples) > 20  # the scan reads the sources (not vacuously empty)
    assert sorted(with_examples - set(MODULES)) == []


def test_the_walk_reaches_every_package_and_subpackage() -> None:
    """The control: the walk holds the modules of each package, a subpackage's too."""
    for name in ("xmlevents._foundation.tables", "xmlevents.replay._history",
                 "xmlevents.stream._xpath", "xmlevents.algebra._contexts"):
        assert name in MODULES
    assert any(m.startswith("xmlevents._cli.") for m in MODULES)
