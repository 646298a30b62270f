"""The packages' optional compiled modules, and the switch that leaves them aside (issue 33,
item 4, for the stream; issue 31, item 10, for the service's writer).

``setup.py`` compiles the modules of :data:`MODULES` with Cython where it can: the same Python
source, built as C extension modules that Python imports in place of the ``.py`` files (the
interpreter's loop and its frame per call gone from the stream's handlers, which lxml calls
twice per element, and from the service's writer, whose per-event Python work shares the GIL
with the HTTP loop). Where they are not built (no C compiler), the packages run from their
source as before: the one code, compiled or not. ``XMLEVENTS_PURE_PYTHON=1`` in the
environment imports these modules from their source even where compiled ones exist: the
fallback the tests exercise (``tests/stream/test_compiled.py``,
``tests/service/test_compiled.py``). A compiled module older than its source (edited since it
was built, as an editable install builds them once) is left aside too: the source is what
runs until the next install builds it anew.

This module stays pure Python and imports only the standard library: it chooses how the
others are imported, and ``setup.py`` executes it from its file, before anything is installed.
Each package of :data:`MODULES` calls :func:`select` first, before importing any of its
modules.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["ENV", "MODULES", "compiled", "select", "stale"]

#: the modules ``setup.py`` compiles, by package: the stream's run, its driver and the making
#: of matches (issue 33); the service's engine, its JSON and the replay of its log, which the
#: writer thread runs per event (issue 31)
MODULES: dict[str, tuple[str, ...]] = {
    "xmlevents.stream": ("_match", "_poa", "_query", "_source"),
    "xmlevents.service": ("_engine", "_json", "_replay"),
}
#: the environment variable that imports them from their source (``1``)
ENV = "XMLEVENTS_PURE_PYTHON"


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules' Python source, ahead of the path's finders (which take a
    compiled module over a ``.py`` file of the same name)."""

    def __init__(self, package: str, path: Sequence[str], names: Sequence[str]) -> None:
        self._names = {f"{package}.{m}": m for m in names}
        self._path = list(path)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        name = self._names.get(fullname)
        if name is None:
            return None
        for folder in self._path:
            source = os.path.join(folder, name + ".py")
            if os.path.exists(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def stale(path: Sequence[str], names: Sequence[str]) -> list[str]:
    """The modules of ``names`` whose compiled file in the folders ``path`` is older than
    their source."""
    found = []
    for name in names:
        for folder in path:
            source = os.path.join(folder, name + ".py")
            if not os.path.exists(source):
                continue
            built = [os.path.join(folder, name + suffix)
                     for suffix in importlib.machinery.EXTENSION_SUFFIXES]
            if any(os.path.exists(b) and os.path.getmtime(b) < os.path.getmtime(source)
                   for b in built):
                found.append(name)
            break
    return found


def select(package: str, path: Sequence[str], names: Sequence[str] | None = None) -> None:
    """From now on, import from their source the modules ``names`` of ``package`` (whose
    folders are ``path``; by default its modules in :data:`MODULES`) that are compiled but
    stale, or all of them with :data:`ENV` set to ``1``."""
    names = MODULES[package] if names is None else names
    chosen = list(names) if os.environ.get(ENV) == "1" else stale(path, names)
    if chosen:
        sys.meta_path.insert(0, _SourceFinder(package, path, chosen))


def compiled(module: ModuleType) -> bool:
    """Whether ``module`` was imported as a compiled extension module."""
    origin = getattr(module, "__file__", None) or ""
    return origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
