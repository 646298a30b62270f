"""Starting ``xmlevents serve`` on a damaged database (issue 31, item 8), with the real
command on a real damaged file: one line naming what is wrong, status 3 (docs/cli.md), no
traceback; ``--skip-bad-rows`` starts anyway, keeping every good row and reporting what it
left out. Before, a bad log row stopped the start inside uvicorn with a traceback. The
command runs twice in all (each start costs seconds); the other cases run in process."""

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


def _database(db: Path, padding: int = 0) -> None:
    """Three registrations (the second's row then damaged by the tests), a signal that x3
    holds, two notifications of alice's that the retention quota discarded (one kept as a
    range of cursors, the newest marked), and ``padding`` signals no expression takes (rows
    for a damaged page to hit)."""
    journal = Journal(str(db))
    journal.write([], [("alice", "x1", {"old": i}, None) for i in range(2)])
    journal.begin()
    journal.discard_oldest("alice", 2)
    journal._db.execute("COMMIT")
    for ident, text in (("x1", "a(x=X)"), ("x2", "b(x=X)"), ("x3", "SEQ(a(x=X), c(x=X))")):
        journal.write([("register", "alice", _registration(ident, text))], [],
                      add=(ident, "alice", _registration(ident, text)))
    journal.write([("signals", "alice", [{"type": "a", "params": {"x": 1}}])], [])
    for i in range(padding):
        journal.write([("signals", "alice", [{"type": "pad", "params": {"i": i,
                                                                        "p": "p" * 200}}])], [])
    journal.close()


def _bad_row(db: Path) -> None:
    """Row 2, x2's registration, no longer JSON."""
    con = sqlite3.connect(db)
    con.execute("UPDATE log SET body = '{\"id\": \"x2\", \"format\": \"te' WHERE seq = 2")
    con.commit()
    con.close()


def _bad_page(db: Path) -> None:
    """A page in the middle of the file overwritten (a disk error): padding rows of the log."""
    page = 4096
    with open(db, "r+b") as f:
        f.seek((db.stat().st_size // page // 2) * page)
        f.write(b"\xff" * page)


def test_a_damaged_database_with_the_real_command(tmp_path: Path) -> None:
    """Row 2 is no longer JSON and a page of the log cannot be read. serve names row 2 on
    one line and exits 3. With --skip-bad-rows it salvages the readable rows into a new file
    (which passes SQLite's integrity check; the damaged one kept beside), skips row 2 (kept
    in the table skipped with the rows lost, x2 out of the listing), says so, and serves
    the good rows: x3 still holds a(x=1) and completes with c(x=1)."""
    db = tmp_path / "s.db"
    _database(db, padding=400)
    _bad_row(db)
    _bad_page(db)
    done = _serve(db)
    assert done.returncode == ENVIRONMENT, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"xmlevents: error: --db {db}: log row 2 (register) "
                                  "cannot be replayed: its body is not JSON"), done.stderr
    assert "start with --skip-bad-rows" in done.stderr

    log = tmp_path / "server.log"
    with served_by(str(db), [f"alice={TOKEN}"], free_port(), log,
                   extra=["--skip-bad-rows"]) as (base, _):
        client = httpx.Client(base_url=base, headers=AUTH)
        listed = [e["id"] for e in client.get("/expressions").json()["expressions"]]
        client.post("/events", json={"type": "c", "params": {"x": 1}}).raise_for_status()
        listing = client.get("/notifications").json()
        notes = listing["notifications"]
        client.close()
    assert listing["discarded"] == 2  # the table of ranges salvaged too
    err = log.read_text()
    assert "Traceback" not in err, err
    assert "xmlevents serve: salvaged the readable rows of a damaged database (" in err, err
    assert f"the damaged file is kept as {db}.damaged" in err, err
    assert "xmlevents serve: skipped log row 2 (register): its body is not JSON" in err, err
    assert "expressions left out with their registration: x2" in err, err
    assert (tmp_path / "s.db.damaged").exists()
    assert listed == ["x1", "x3"]
    assert [(n["expression"], n["bindings"]) for n in notes] == [("x3", {"X": 1})]
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    skipped = con.execute("SELECT seq, kind, body FROM skipped ORDER BY seq").fetchall()
    con.close()
    assert skipped[0] == (2, "register", '{"id": "x2", "format": "te')
    lost = [seq for seq, kind, _ in skipped[1:] if kind is None]
    assert lost and len(lost) == len(skipped) - 1 and all(4 < seq <= 404 for seq in lost)


def test_a_row_that_no_longer_replays(tmp_path: Path) -> None:
    """A well-formed row the engine refuses (here a signal whose parameter is an object):
    DamagedLogError names it with the reason (the command prints its text on one line, as
    above); the lock is released; skipped, the next start is clean."""
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
    skipping = Service(str(db), skip_bad_rows=True)
    assert [(s.seq, s.kind) for s in skipping.skipped] == [(4, "signals")]
    skipping.close()
    Service(str(db)).close()


def test_a_damaged_page_is_named(tmp_path: Path) -> None:
    """A page SQLite cannot read: the error names the last row read (no row to skip: the
    salvage of the test above mends it)."""
    db = tmp_path / "s.db"
    _database(db, padding=400)
    _bad_page(db)
    with pytest.raises(DamagedLogError, match=r"the log cannot be replayed: SQLite cannot read "
                       r"it past row [0-9]+: database disk image is malformed") as raised:
        Service(str(db))
    assert raised.value.seq is None


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
