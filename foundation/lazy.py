"""Names a package imports on first use (PEP 562), one implementation for every package.

The algebra, the replay, the service and the ``xmlevents`` facade each load their public
names only when one is first read, so that importing one system loads none of the others
(``import xmlevents.stream`` no engine module, ``xmlevents detect`` no lxml, the service's
names no web stack; issue 28). :func:`lazy_names` makes a package's ``__getattr__`` and
``__dir__`` from a table of where each name lives.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names", "LazyPattern"]


def lazy_names(package: str, namespace: dict[str, Any],
               modules: Mapping[str, Iterable[str]], *,
               renamed: Mapping[str, tuple[str, str]] | None = None,
               missing: Callable[[str, ModuleNotFoundError], None] | None = None,
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose globals are ``namespace``.

    ``modules`` maps a module (``"._graph"``, relative to the package, or absolute
    ``"xmlevents.algebra"``) to the names it defines; ``renamed`` maps a name to the module
    and the attribute it is there (the facade's ``parse_expression`` is the algebra's
    ``parse``). A name read is imported, kept in ``namespace`` (so the next read is a plain
    global) and returned; ``missing(name, exc)`` may annotate the error of a module that
    cannot be imported before it propagates (which extra to install).

    >>> ns = {}
    >>> getattr_, dir_ = lazy_names("pkg", ns, {"json": ("dumps",)})
    >>> getattr_("dumps")({"a": 1}), "dumps" in ns, dir_()
    ('{"a": 1}', True, ['dumps'])
    """
    table: dict[str, tuple[str, str]] = {
        name: (package + module if module.startswith(".") else module, name)
        for module, names in modules.items() for name in names}
    for name, (module, attribute) in (renamed or {}).items():
        table[name] = (package + module if module.startswith(".") else module, attribute)

    def __getattr__(name: str) -> Any:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = where
        # __import__, not importlib.import_module: the import statement's own machinery,
        # which ``python -X importtime`` reports (tests/cli/test_cli_imports.py reads it).
        try:
            __import__(module)
        except ModuleNotFoundError as exc:
            if missing is not None:
                missing(name, exc)
            raise
        value = getattr(sys.modules[module], attribute)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *table})

    return __getattr__, __dir__


class LazyPattern:
    """A regular expression compiled on its first use, not when its module is imported
    (issue 32, item 4): the patterns of XML names hold the whole Unicode classes of XML's
    ``NameStartChar`` and cost 7-25 ms each to compile, some 60 ms of every command's start
    even where no name is ever matched (``xmlevents cel`` on JSON events). Once compiled,
    :attr:`match` and :attr:`fullmatch` are the compiled pattern's own methods (no call in
    between on the paths that match a name an event).

    >>> p = LazyPattern("[a-z]+")
    >>> p.fullmatch("abc") is not None, p.match("1a") is None, p.match("a1", 1) is None
    (True, True, True)
    """

    __slots__ = ("_compiled", "flags", "fullmatch", "match", "pattern")

    match: Callable[..., re.Match[str] | None]
    fullmatch: Callable[..., re.Match[str] | None]

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        self.match = self._match_first
        self.fullmatch = self._fullmatch_first

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now, the first time)."""
        found = self._compiled
        if found is None:
            found = self._compiled = re.compile(self.pattern, self.flags)
            self.match, self.fullmatch = found.match, found.fullmatch
        return found

    def _match_first(self, string: str, pos: int = 0, endpos: int = sys.maxsize
                     ) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def _fullmatch_first(self, string: str, pos: int = 0, endpos: int = sys.maxsize
                         ) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)
