"""The service's compiled modules and their fallback, the same Python source
(``foundation/compiled.py``, ``setup.py``; issue 31, item 10)."""

from __future__ import annotations

import asyncio
import importlib.machinery
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from xmlevents._foundation import compiled as _compiled

PACKAGE = "xmlevents.service"
MODULES = _compiled.MODULES[PACKAGE]

ROOT = Path(__file__).resolve().parents[2]

EXPRESSIONS = [
    'SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T, artist="U2"))',
    'OR(newBook(title=B, author="Dan Brown"), newCD(title=CDT1, artist=A))',
    'ANY(2, newCD(title=T), newBook(title=T), newMusicDVD(title=T))',
    'SEQ(newCD(title=T, artist=Who), newBook(title=T))',
]

#: this module's workload in a subprocess, with the modules that process imports
_SCRIPT = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from tests.service.test_compiled import compiled_here, served
print(json.dumps({{"served": served(), "compiled": compiled_here()}}))
"""


def _batch(n: int, start: int) -> tuple[list[tuple[str, dict[str, Any], float | None]], str]:
    """``n`` signals checked as the HTTP layer checks them, and their request's JSON."""
    from xmlevents.service import check_signal

    kinds = ("newCD", "newMusicDVD", "newBook")
    found = []
    for i in range(start, start + n):
        params = {"title": f"t{i % 7}", "artist": ("U2", "Bono", "Corrs")[i // 3 % 3],
                  "author": "Dan Brown" if i % 5 == 0 else "é ü"}
        found.append((kinds[i % 3], params, float(i) if i % 2 else None))
    checked = [(t, dict(check_signal(t, p, time)), time) for t, p, time in found]
    raw = json.dumps([{"type": t, "params": p, **({} if time is None else {"time": time})}
                      for t, p, time in found])
    return checked, raw


def served() -> list[Any]:
    """A small served workload: the expressions registered (text, a variable, the three
    operators), two batches of signals (one logged from its request's JSON, one from the
    signals), a restart that replays the log, a third batch; what the service answered and
    stored (notifications, log), which compiled and source modules must agree on."""
    from xmlevents.service import Service
    from xmlevents.service._db import Journal

    async def serve(db: str, batches: list[tuple[list[Any], str]], register: bool) -> Any:
        service = Service(db)
        try:
            if register:
                for source in EXPRESSIONS:
                    await service.register("anonymous", "text", source,
                                           {"Who": "U2"} if "Who" in source else {}, None)
            counts = [await service.signal("anonymous", checked, raw if i % 2 else None)
                      for i, (checked, raw) in enumerate(batches)]
            return counts, service.engine.stats()
        finally:
            await service.stop()

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "s.db")
        first = asyncio.run(serve(db, [_batch(40, 0), _batch(40, 40)], True))
        second = asyncio.run(serve(db, [_batch(40, 80)], False))  # the log replayed
        journal = Journal.reader(db)
        try:
            stored = [n.to_json() for n in journal.notifications("anonymous", None, 10_000)]
            log: list[list[Any]] = [[e.kind, e.client, e.body] for e in journal.log()]
        finally:
            journal.close()
    # as JSON, what the subprocess prints, with the expressions' ids (random) by their order
    text = json.dumps([first, second, stored, log])
    registered = [body["id"] for kind, _, body in log if kind == "register"]
    for n, ident in enumerate(registered):
        text = text.replace(ident, f"e{n}")
    return json.loads(text)  # type: ignore[no-any-return]


def compiled_here() -> list[bool]:
    """Whether each service module of ``MODULES`` was imported compiled in this process."""
    for name in MODULES:
        __import__(f"{PACKAGE}.{name}")
    return [_compiled.compiled(sys.modules[f"{PACKAGE}.{name}"]) for name in MODULES]


def _run(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                          check=True, timeout=120, env={**os.environ, **env})
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_source_runs_where_asked_and_serves_the_same() -> None:
    """With ``XMLEVENTS_PURE_PYTHON=1`` every service module of ``MODULES`` is imported from
    its source, and a served workload (registrations, batches of signals, a restart that
    replays the log) stores the same notifications and log as the compiled modules do."""
    pure = _run({_compiled.ENV: "1"})
    assert pure["compiled"] == [False] * len(MODULES)
    here = served()
    assert pure["served"] == here
    counts, stats = here[0]
    assert counts == [40, 40] and len(stats["expressions"]) == len(EXPRESSIONS)
    # notifications of every expression stored, some after the restart (the third batch)
    assert {n["expression"] for n in here[2]} == {f"e{n}" for n in range(len(EXPRESSIONS))}
    assert any(e["tick"] > 80 for n in here[2] for e in n["events"])


def test_the_compiled_modules_are_imported_where_built() -> None:
    """In this process, each service module of ``MODULES`` that the build compiled (and that
    is not older than its source) is the compiled one."""
    if os.environ.get(_compiled.ENV) == "1":
        pytest.skip(f"{_compiled.ENV}=1: every module runs from its source")
    import xmlevents.service as package

    folder = Path(package.__path__[0])
    built = [name for name in MODULES
             if any((folder / (name + suffix)).exists()
                    for suffix in importlib.machinery.EXTENSION_SUFFIXES)]
    if not built:
        pytest.skip("no compiled service module in this build (no Cython or C compiler)")
    stale = _compiled.stale([str(folder)], MODULES)
    here = dict(zip(MODULES, compiled_here(), strict=True))
    assert {name: here[name] for name in built if name not in stale} == \
        {name: True for name in built if name not in stale}


def test_a_compiled_module_older_than_its_source_is_left_aside(tmp_path: Path) -> None:
    """An editable install builds the modules once: one whose source changed since is
    stale, and the source runs instead (``select``), also for the service's list."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in MODULES:
        (tmp_path / f"{name}.py").write_text("")
    (tmp_path / f"_engine{suffix}").write_text("")
    (tmp_path / f"_json{suffix}").write_text("")
    old = os.path.getmtime(tmp_path / "_engine.py") - 10
    os.utime(tmp_path / f"_engine{suffix}", (old, old))
    assert _compiled.stale([str(tmp_path)], MODULES) == ["_engine"]
