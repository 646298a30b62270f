"""The stream package's compiled modules and their fallback, the same Python source
(``stream/_compiled.py``, ``setup.py``; issue 33, item 4)."""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

from xmlevents.stream import Query, _compiled

#: queries and documents whose matches the compiled modules and their source must agree on:
#: lines held to the root's end, a following sibling, a general check, text nodes, `&`
CASES = [
    ("/*[not(nosuch)]//l", b"<TEI><lg><l n='1'>a<p/></l><l n='2'/><l/></lg><lg><l/><x><l/></x>"
                           b"<l/></lg><l/></TEI>"),
    ("/*[not(c)]//l", b"<r><l/><l/><c/><l/></r>"),  # all rejected
    ("//a[following-sibling::z]", b"<r><a x='&amp;1'/><a/><b><a/><z/></b><z/></r>"),
    ("//*[not(following-sibling::q)]", b"<r><a><b/></a><q/><a><b/></a></r>"),
    ("//a[not(b)]//c", b"<r><a><c/><d><c/></d></a><a><c/><b/></a></r>"),
    ("//..", b"<r><a>t</a><a/><a><!-- c --></a><b><?p?></b></r>"),
]

_SCRIPT = """
import json, sys
from xmlevents.stream import Query, _compiled
import xmlevents.stream as package
modules = [sys.modules["xmlevents.stream." + m] for m in _compiled.MODULES]
cases = json.loads(sys.stdin.read())
print(json.dumps({
    "compiled": [_compiled.compiled(m) for m in modules],
    "matches": [[m.to_json() for m in Query(q).evaluate(d.encode())] for q, d in cases]}))
"""


def _run(env: dict[str, str]) -> dict[str, list[object]]:
    cases = [(q, d.decode()) for q, d in CASES]
    done = subprocess.run([sys.executable, "-c", _SCRIPT], input=json.dumps(cases),
                          capture_output=True, text=True, check=True, timeout=60,
                          env={**os.environ, **env})
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_source_runs_where_asked_and_finds_the_same_matches() -> None:
    """With ``XMLEVENTS_PURE_PYTHON=1`` every module of ``MODULES`` is imported from its
    source, and the matches are this process's (compiled modules where they were built)."""
    here = [[m.to_json() for m in Query(q).evaluate(d)] for q, d in CASES]
    pure = _run({_compiled.ENV: "1"})
    assert pure["compiled"] == [False] * len(_compiled.MODULES)
    assert pure["matches"] == here
    assert [bool(found) for found in here] == [True, False, True, True, True, True]


def test_a_compiled_module_older_than_its_source_is_left_aside(tmp_path: Path) -> None:
    """An editable install builds the modules once: one whose source changed since is
    stale, and the source runs instead (``select``)."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in _compiled.MODULES:
        (tmp_path / f"{name}.py").write_text("")
    (tmp_path / f"_poa{suffix}").write_text("")
    (tmp_path / f"_match{suffix}").write_text("")
    old = os.path.getmtime(tmp_path / "_poa.py") - 10
    os.utime(tmp_path / f"_poa{suffix}", (old, old))
    assert _compiled.stale([str(tmp_path)]) == ["_poa"]
