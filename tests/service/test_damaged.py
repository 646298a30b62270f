"""Starting ``xmlevents serve`` on a damaged database (issue 31, item 8), with the real
command on real files: one line naming what is wrong, status 3 (docs/cli.md), no traceback;
``--skip-bad-rows`` starts anyway, keeping every good row and reporting the one left out.
Before, a bad log row stopped the start inside uvicorn with a traceback."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from xmlevents.service import DamagedLogError, Service
from xmlevents.service._db import Journal

from .http_server import free_port, served_by

ENVIRONMENT = 3
TOKEN = "s3cret-a"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _serve(db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``xmlevents serve`` that is expected to stop by itself (a database it refuses)."""
    return subprocess.run([sys.executable, "-m", "xmlevents", "serve", "--port",
                           str(free_port()), "--db", str(db), *extra],
                          capture_output=True, text=True, timeout=60, check=False)


def _registration(ident: str, text: str) -> dict[str, object]:
    return {"id": ident, "format": "text", "source": text, "variables": {}, "callback": None,
            "text": text}


def _database(db: Path) -> None:
    """Three registrations (the second's row then damaged by the test) and a signal."""
    journal = Journal(str(db))
    for ident, text in (("x1", "a(x=X)"), ("x2", "b(x=X)"), ("x3", "SEQ(a(x=X), c(x=X))")):
        journal.write([("register", "alice", _registration(ident, text))], [],
                      add=(ident, "alice", _registration(ident, text)))
    journal.write([("signals", "alice", [{"type": "a", "params": {"x": 1}}])], [])
    journal.close()


def test_a_bad_log_row_is_named_and_can_be_skipped(tmp_path: Path) -> None:
    """Row 2 (a registration) is no longer JSON: serve names it on one line and exits 3;
    with --skip-bad-rows it starts, says which row it left out, keeps the other
    registrations and the signal (x3 still holds a(x=1)), and keeps the row in the table
    skipped; the next start is clean."""
    db = tmp_path / "s.db"
    _database(db)
    con = sqlite3.connect(db)
    con.execute("UPDATE log SET body = '{\"id\": \"x2\", \"format\": \"te' WHERE seq = 2")
    con.commit()
    con.close()
    done = _serve(db)
    assert done.returncode == ENVIRONMENT, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"xmlevents: error: --db {db}: log row 2 (register) "
                                  "cannot be replayed: its body is not JSON"), done.stderr
    assert "--skip-bad-rows" in done.stderr

    log = tmp_path / "server.log"
    with served_by(str(db), [f"alice={TOKEN}"], free_port(), log,
                   extra=["--skip-bad-rows"]) as (base, _):
        client = httpx.Client(base_url=base, headers=AUTH)
        listed = [e["id"] for e in client.get("/expressions").json()["expressions"]]
        client.post("/events", json={"type": "c", "params": {"x": 1}}).raise_for_status()
        notes = client.get("/notifications").json()["notifications"]
        client.close()
    err = log.read_text()
    assert "Traceback" not in err, err
    assert ("xmlevents serve: skipped log row 2 (register): its body is not JSON" in err), err
    assert "1 log rows skipped, 3 replayed" in err, err
    assert "expressions left out with their registration: x2" in err, err
    assert listed == ["x1", "x3"]
    assert [(n["expression"], n["bindings"]) for n in notes] == [("x3", {"X": 1})]
    con = sqlite3.connect(db)
    kept = con.execute("SELECT seq, kind, body, reason FROM skipped").fetchall()
    con.close()
    assert [(s, k, b) for s, k, b, _ in kept] == [
        (2, "register", '{"id": "x2", "format": "te')]
    assert "not JSON" in kept[0][3]


def test_a_row_that_no_longer_replays(tmp_path: Path) -> None:
    """A well-formed row the engine refuses (here a signal whose parameter is an object):
    DamagedLogError names it with the reason (in process: the command's line is the error's
    text, as the test above shows); the lock is released."""
    db = tmp_path / "s.db"
    _database(db)
    con = sqlite3.connect(db)
    con.execute("UPDATE log SET body = ? WHERE seq = 4",
                (json.dumps([{"type": "a", "params": {"x": {"deep": 1}}}]),))
    con.commit()
    con.close()
    with pytest.raises(DamagedLogError) as raised:
        Service(str(db))
    assert str(raised.value).startswith("log row 4 (signals) cannot be replayed: a: parameter x")
    assert (raised.value.seq, raised.value.kind) == (4, "signals")
    Service(str(db), skip_bad_rows=True).close()  # the lock was released; skipped now


def test_another_program_s_sqlite_file_is_left_as_it_is(tmp_path: Path) -> None:
    """An SQLite file of another program (tables, none of them the service's) is refused,
    and gets none of the service's tables."""
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    con.commit()
    con.close()
    with pytest.raises(sqlite3.DatabaseError, match="not the service's database: it has no "
                       r"table log, and other tables \(customers\)"):
        Service(str(db))
    con = sqlite3.connect(db)
    tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    con.close()
    assert tables == ["customers"]


def test_a_damaged_page(tmp_path: Path) -> None:
    """A page of the log's table overwritten (a disk error): SQLite cannot read the log past
    some row, and the error names the last row read. ``serve --skip-bad-rows``
    salvages: every readable row copied into a new file (which passes SQLite's integrity
    check), the rows lost numbered in the table skipped, the damaged file kept beside; the
    service starts with the expression and goes on."""
    db = tmp_path / "s.db"
    journal = Journal(str(db))
    text = "a(x=X)"
    journal.write([("register", "alice", _registration("x1", text))], [],
                  add=("x1", "alice", _registration("x1", text)))
    for i in range(400):
        journal.write([("signals", "alice", [{"type": "a", "params": {"x": i, "pad": "p" * 200}}])
                       ], [])
    journal.close()
    size = db.stat().st_size
    page = 4096
    with open(db, "r+b") as f:  # a leaf page in the middle of the log's rows
        f.seek((size // page // 2) * page)
        f.write(b"\xff" * page)
    with pytest.raises(DamagedLogError, match=r"the log cannot be replayed: SQLite cannot read "
                       r"it past row [0-9]+: database disk image is malformed") as raised:
        Service(str(db))  # the command prints this line, status 3 (as in the test above)
    assert raised.value.seq is None
    err = tmp_path / "server.log"
    with served_by(str(db), [f"alice={TOKEN}"], free_port(), err,
                   extra=["--skip-bad-rows"]) as (base, _):
        client = httpx.Client(base_url=base, headers=AUTH)
        listed = [e["id"] for e in client.get("/expressions").json()["expressions"]]
        client.post("/events", json={"type": "a", "params": {"x": "new"}}).raise_for_status()
        notes = client.get("/notifications").json()["notifications"]
        client.close()
    text = err.read_text()
    assert "Traceback" not in text, text
    assert "salvaged the readable rows of a damaged database (" in text, text
    assert f"the damaged file is kept as {db}.damaged" in text, text
    assert (tmp_path / "s.db.damaged").exists()
    assert listed == ["x1"] and [n["bindings"] for n in notes] == [{"X": "new"}]
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    lost = [seq for (seq,) in con.execute("SELECT seq FROM skipped WHERE kind IS NULL")]
    con.close()
    assert lost and all(1 < seq <= 401 for seq in lost), lost
