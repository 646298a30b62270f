"""The layers of DESIGN section 1, read off every import statement of the library's sources.

import-linter (``lint-imports``, run by ``.ci/checks``) checks the layers of the packages that
exist; this test also states the rules it cannot: no module imports another package's private
(``_name``) modules or names, the standard library only in the algebra, the heavy dependencies
each in the one package that owns them, and the places of the packages still to come.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Source folder -> the package it installs as (pyproject.toml's package-dir).
FOLDERS = {"xmlevents": "xmlevents", "algebra": "xmlevents.algebra", "dom": "xmlevents.dom",
           "replay": "xmlevents.replay", "rules": "xmlevents.rules",
           "service": "xmlevents.service", "cel": "xmlevents.cel", "stream": "xmlevents.stream",
           "foundation": "xmlevents._foundation"}

# The foundation under every package (DESIGN section 11): private by name, yet shared by all.
FOUNDATION = "xmlevents._foundation"

# Which other xmlevents packages each package may import (the facade and CLI: all of them).
MAY_USE = {
    FOUNDATION: set(),
    "xmlevents.algebra": {FOUNDATION},
    "xmlevents.cel": {FOUNDATION, "xmlevents.algebra"},
    "xmlevents.stream": {FOUNDATION, "xmlevents.algebra"},
    "xmlevents.dom": {FOUNDATION, "xmlevents.algebra"},
    "xmlevents.replay": {FOUNDATION, "xmlevents.algebra", "xmlevents.dom", "xmlevents.cel"},
    "xmlevents.rules": {FOUNDATION, "xmlevents.algebra", "xmlevents.dom"},
    "xmlevents.service": {FOUNDATION, "xmlevents.algebra", "xmlevents.dom"},
}

# Third-party packages that only one package may import.
OWNED = {"pyspark": "xmlevents.replay", "pandas": "xmlevents.replay",
         "pyarrow": "xmlevents.replay", "py4j": "xmlevents.replay",
         "xmldiff": "xmlevents.replay", "starlette": "xmlevents.service",
         "uvicorn": "xmlevents.service", "fastapi": "xmlevents.service",
         "httpx": "xmlevents.service"}


def _sources() -> list[tuple[str, Path]]:
    found = []
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            found.append((package, path))
    return found


def _module_name(package: str, path: Path, folder: Path) -> str:
    parts = list(path.relative_to(folder).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def _imports(path: Path, module: str) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, names taken from it) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, []) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[:len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            out.append((node.lineno, base, [a.name for a in node.names]))
    return out


def _package_of(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] != "xmlevents":
        return None
    if len(parts) > 1 and f"xmlevents.{parts[1]}" in MAY_USE:
        return f"xmlevents.{parts[1]}"
    return "xmlevents"


def _violations() -> list[str]:
    found = []
    for package, path in _sources():
        folder = ROOT / next(f for f, p in FOLDERS.items() if p == package)
        module = _module_name(package, path, folder)
        where = path.relative_to(ROOT)
        for line, name, names in _imports(path, module):
            top = name.split(".")[0]
            target = _package_of(name)
            if target is not None and target != package:
                if package in MAY_USE and target not in MAY_USE[package]:
                    found.append(f"{where}:{line}: {package} may not import {name}")
                # The foundation's package name is private; its modules are for every package.
                parts = name.split(".")[2:] if target == FOUNDATION else name.split(".")[1:]
                private = [p for p in parts if p.startswith("_")]
                private += [n for n in names if n.startswith("_") and n != "__version__"]
                if private:
                    found.append(f"{where}:{line}: {package} imports private "
                                 f"{', '.join(private)} of {target}")
            elif target is None:
                owner = OWNED.get(top)
                if package in ("xmlevents.algebra", FOUNDATION) \
                        and top not in sys.stdlib_module_names and not (
                            package == FOUNDATION and top == "lxml"):
                    found.append(f"{where}:{line}: the algebra imports {top}, which is not "
                                 "in the standard library")
                elif owner is not None and owner != package:
                    found.append(f"{where}:{line}: {top} belongs to {owner}, not {package}")
    return found


def test_the_layers_hold() -> None:
    """No package imports upward, privately, or a dependency another package owns."""
    assert _violations() == []


@pytest.mark.parametrize(("source", "expected"), [
    ("from xmlevents.algebra._events import x\n", "imports private _events"),
    ("from xmlevents.algebra import _x\n", "imports private _x"),
    ("from xmlevents.replay import y\n", "may not import xmlevents.replay"),
    ("import pyspark.sql\n", "pyspark belongs to xmlevents.replay"),
])
def test_a_violation_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str,
                              expected: str) -> None:
    """The scan reports an upward, private or foreign import written into a dom module."""
    (tmp_path / "dom").mkdir()
    (tmp_path / "dom" / "_bad.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = _violations()
    assert len(found) == 1 and expected in found[0], found


# Inside the algebra: model, then language, then engine (docs/architecture.md).
ALGEBRA_LAYERS = {
    "model": {"_errors", "_paths", "_events", "_reused"},
    "language": {"_tokens", "_parser", "ast", "_printer", "_definitions"},
    "engine": {"_grouping", "_contexts", "_termination", "_window", "_operator",
               "_multiplicity", "_tree", "_sharing", "_graph", "_documents", "_render",
               "_subscriptions", "_hints"},
}


def test_the_algebra_is_model_then_language_then_engine() -> None:
    """An algebra module imports only modules of its own layer or the layers below it."""
    rank = {m: i for i, layer in enumerate(ALGEBRA_LAYERS.values()) for m in layer}
    folder = ROOT / "algebra"
    found = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    assert set(found) == set(rank), "a new algebra module must join a layer here"
    wrong = []
    for stem in found:
        path = folder / f"{stem}.py"
        for line, name, names in _imports(path, f"xmlevents.algebra.{stem}"):
            targets = ([n for n in names if n in rank] if name == "xmlevents.algebra"
                       else [name.rsplit(".", 1)[1]] if name.startswith("xmlevents.algebra.")
                       else [])
            wrong += [f"algebra/{stem}.py:{line} imports {t}" for t in targets
                      if rank[t] > rank[stem]]
    assert wrong == []
