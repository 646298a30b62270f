"""Salvage of a database with pages SQLite cannot read (issue 31, item 8): every readable row
copied into a new file, which takes the damaged file's place.

A damaged page (a disk error, a file overwritten in part) makes SQLite fail every query that
reaches it ("database disk image is malformed"), so a start that reads the whole log stops
there. ``serve --skip-bad-rows`` then salvages: each of the service's tables is read in
ranges of rowids, a range that fails is halved down to single rows, and what can be read is
written with its rowid into a fresh database of the service's schema; the log rows that
cannot be read are recorded in the table ``skipped`` (their numbers, no content), and the
damaged file is kept beside as ``FILE.damaged`` (with its ``-wal`` and ``-shm``), never
deleted. If the newest notification is lost, a deleted placeholder keeps its cursor, so
cursors are never given twice.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from ._db import Journal

__all__ = ["Salvaged", "salvage", "TABLES"]

#: The tables salvaged, and the rows read at once.
TABLES = ("log", "expressions", "notifications", "deliveries", "discards", "skipped")
_RANGE = 1024


@dataclass(slots=True)
class Salvaged:
    """What a salvage kept and lost, by table, and where the damaged file went."""

    kept: dict[str, int] = field(default_factory=dict)
    lost: dict[str, list[int]] = field(default_factory=dict)
    damaged: str = ""

    def summary(self) -> str:
        """One line: rows lost by table, and where the damaged file is kept."""
        lost = ", ".join(f"{len(rows)} of {table}" for table, rows in self.lost.items() if rows)
        return (f"salvaged the readable rows of a damaged database ({lost or 'no row'} lost; "
                f"the log rows lost are in the table skipped); the damaged file is kept as "
                f"{self.damaged}")


def _rows(src: sqlite3.Connection, table: str, columns: str, low: int, high: int,
          lost: list[int]) -> Iterator[tuple[object, ...]]:
    """The readable rows of ``table`` with rowids in [low, high]; the rowids that cannot be
    read go to ``lost``."""
    try:
        rows = src.execute(f"SELECT rowid, {columns} FROM {table} "
                           "WHERE rowid BETWEEN ? AND ? ORDER BY rowid", (low, high)).fetchall()
    except sqlite3.DatabaseError:
        if low == high:
            lost.append(low)
            return
        middle = (low + high) // 2
        yield from _rows(src, table, columns, low, middle, lost)
        yield from _rows(src, table, columns, middle + 1, high, lost)
        return
    yield from rows


def salvage(db: str) -> Salvaged:
    """Copy every readable row of ``db``'s tables into a new database, keep ``db`` as
    ``db.damaged`` and put the copy in its place (see the module). The caller holds the
    database's lock and has no connection open on it.

    Raises:
        sqlite3.DatabaseError: not even the tables' list or extent can be read.
    """
    out = Salvaged()
    fresh = db + ".salvage"
    for leftover in (fresh, fresh + "-wal", fresh + "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(leftover)
    src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        present = {row[0] for row in src.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        dst = Journal(fresh)
        try:
            dst._db.execute("BEGIN")  # one transaction for the whole copy
            for table in TABLES:
                if table not in present:
                    continue
                # the columns of our schema the damaged file has (names of ours, quoted)
                theirs = {row[1] for row in src.execute(f"PRAGMA table_info({table})")}
                names = [row[1] for row in dst._db.execute(f"PRAGMA table_info({table})")
                         if row[1] in theirs]
                columns = ", ".join(f'"{name}"' for name in names)
                high = src.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0
                lost: list[int] = []
                rows = [row for low in range(1, int(high) + 1, _RANGE)
                        for row in _rows(src, table, columns, low, low + _RANGE - 1, lost)]
                marks = ", ".join("?" * (len(names) + 1))
                dst._db.executemany(
                    f"INSERT OR REPLACE INTO {table} (rowid, {columns}) VALUES ({marks})",
                    rows)
                out.kept[table] = len(rows)
                out.lost[table] = lost
            now = time.time()
            dst._db.executemany(
                "INSERT OR IGNORE INTO skipped (seq, reason, at) VALUES (?, ?, ?)",
                [(seq, "unreadable: a damaged page of the database", now)
                 for seq in out.lost.get("log", [])])
            newest = max(out.lost.get("notifications", []), default=0)
            if newest > int(dst.last_cursor()):  # its cursor must not be given again
                dst._db.execute("INSERT INTO notifications (cursor, client, expression, body, "
                                "deleted) VALUES (?, '', '', '{}', 1)", (newest,))
            dst._db.execute("COMMIT")
        finally:
            dst.close()
    finally:
        src.close()
    out.damaged = db + ".damaged"
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(db + suffix, out.damaged + suffix)
    os.replace(fresh, db)
    return out
