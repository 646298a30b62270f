"""What ``pip install -e .`` gives, in a real fresh virtual environment (issue 28, "Surfaces"):
``detect``, ``graph``, ``cel``, ``query``, ``rules``, a watched document and ``replay`` (its
engine chosen: local) work without any extra (xmldiff and pyarrow are core dependencies); the
web stack is the ``service`` extra, and ``serve`` without it says in one line what to install
and exits 1.

A venv made with ``--system-site-packages`` would see this machine's packages and prove
nothing, so the venv is made bare and the package installed into it from the index pip is
configured with (minutes: marked slow). The pure parts — the dependency tables and the
service's hint — are checked in the fast loop below too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
WEB_STACK = {"starlette", "uvicorn", "httpx", "uvloop", "httptools"}


def _names(requirements: list[str]) -> set[str]:
    """The distribution names of requirement strings (no versions, markers or extras)."""
    out = set()
    for r in requirements:
        name = r.split(";")[0]
        for sep in "<>=!~[ ":
            name = name.split(sep)[0]
        out.add(name.strip().lower())
    return out


def _project() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_dependency_tables() -> None:
    """Core has what the commands need without Spark or the service; the extras split the
    rest; test and dev include both extras."""
    project = _project()
    core = _names(project["dependencies"])
    extras = project["optional-dependencies"]
    assert {"lxml", "blinker", "rich", "xmldiff", "pyarrow"} <= core
    assert not core & (WEB_STACK | {"pyspark", "pandas"})
    assert _names(extras["service"]) >= WEB_STACK
    assert {"pyspark", "pandas", "pyarrow"} <= _names(extras["spark"])
    assert {"xmlevents[spark]", "xmlevents[service]"} <= set(extras["test"])
    assert "xmlevents[test]" in extras["dev"]


def test_the_service_says_what_to_install() -> None:
    """``web_stack_missing`` names the extra when a package of the web stack is missing (here
    simulated: a name that no environment has), and is None when all are there."""
    import xmlevents.service as service

    assert service.web_stack_missing() is None  # the test extra installs the web stack
    saved = service.WEB_STACK
    try:
        service.WEB_STACK = ("starlette", "no_such_package_xmlevents")
        message = service.web_stack_missing()
    finally:
        service.WEB_STACK = saved
    assert message is not None and "no_such_package_xmlevents" in message
    assert "pip install 'xmlevents[service]'" in message and "\n" not in message


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare venv with ``pip install -e ROOT`` (no extras)."""
    where = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    # nothing compiled (setup.py): the commands are what is checked here, and an editable
    # install would build the compiled modules (the stream's, the service's) anew into this
    # checkout while other tests import them; the checkout's own, for this interpreter, are used
    subprocess.run([str(where / "bin" / "pip"), "install", "-q", "-e", str(ROOT)], check=True,
                   timeout=1800, env={**os.environ, "XMLEVENTS_PURE_PYTHON": "1"})
    return where


def _run(venv: Path, args: list[str], stdin: str = "", cwd: Path | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(venv / "bin" / "xmlevents"), *args], input=stdin, text=True,
                          capture_output=True, env=env, cwd=cwd, timeout=600, check=False)


@pytest.mark.slow
def test_a_fresh_install_runs_every_command_but_serve(venv: Path, tmp_path: Path) -> None:
    """Each system's command runs from a plain ``pip install -e .``."""
    listed = subprocess.run([str(venv / "bin" / "pip"), "list", "--format=freeze"],
                            capture_output=True, text=True, check=True).stdout.lower()
    installed = {line.split("==")[0] for line in listed.splitlines()}
    assert not installed & (WEB_STACK | {"pyspark", "pandas"})  # truly without the extras
    defs, events = EXAMPLES / "purchase_order.xev", EXAMPLES / "purchase_order.jsonl"
    runs = {
        "detect": _run(venv, ["detect", "--definitions", str(defs), str(events)]),
        "graph": _run(venv, ["graph", "--definitions", str(defs)]),
        "cel": _run(venv, ["cel", "SELECT * FROM S WHERE T AS x ; H FILTER x[temp > 40]"],
                    stdin='{"type":"T","temp":45}\n{"type":"H"}\n'),
        "query": _run(venv, ["query", "//a[c]/b", "-"], stdin="<r><a><b/><c/></a></r>"),
        "rules": _run(venv, ["rules", "check", str(EXAMPLES / "rules" / "stores_products.rules")]),
        "replay": _run(venv, ["replay", str(EXAMPLES / "purchase_orders.jsonl.gz"),
                              "--definitions", str(EXAMPLES / "purchase_orders.xev"),
                              "--out", str(tmp_path / "o")]),
    }
    for name, done in runs.items():
        assert done.returncode == 0, (name, done.stderr[-2000:])
    assert '"type": "ItemComplete"' in runs["detect"].stdout
    assert "ItemComplete :=" in runs["graph"].stdout
    assert '"events": [0, 1]' in runs["cel"].stdout
    assert '"/r[1]/a[1]/b[1]"' in runs["query"].stdout
    assert "R1" in runs["rules"].stdout
    assert {"events", "composites", "errors"} <= {p.name for p in (tmp_path / "o").iterdir()}
    # no --engine: chosen for a small input, which needs no pyspark (issue 30, item 4)
    assert "  engine            local (in process, no JVM), chosen: " in runs["replay"].stdout
    watched = subprocess.run([str(venv / "bin" / "python"), "-c", """
import xmlevents
doc = xmlevents.fromstring('<order/>')
doc.define('Ei := ins(item) ; ins(item/price)')
doc.subscribe('Ei', lambda doc, event: print('raised', event.pi))
item = xmlevents.SubElement(doc.getroot(), 'item')
xmlevents.SubElement(item, 'price').text = '5'
"""], capture_output=True, text=True, check=False)
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout == "raised /order[n1]/item[n2]\n"


@pytest.mark.slow
def test_serve_without_the_extra_says_what_to_install(venv: Path, tmp_path: Path) -> None:
    """One line naming the extra, status 1, no traceback, no database made."""
    done = _run(venv, ["serve", "--db", str(tmp_path / "s.db")])
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "pip install 'xmlevents[service]'" in done.stderr
    assert not (tmp_path / "s.db").exists()
