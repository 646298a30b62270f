"""Stopping and starting ``xmlevents serve`` as an operator does (issue 31, items 2 and 5):
SIGTERM and Ctrl-C with streams open end every stream with a final event, finish or refuse
the requests in flight, and exit with the status docs/cli.md gives (SIGTERM 0, SIGINT 130)
without a traceback; a second ``serve`` on the same database is refused with one line naming
the first one's pid (status 3). Each test but the last runs the real command in a subprocess
(slow: a few seconds a start on two shared cores)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from xmlevents.service._db import Journal
from xmlevents.service._lock import DatabaseInUse, DatabaseLock

from .http_server import free_port, served_by, wait_up

TOKEN = "s3cret-a"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
#: Seconds a stopped server may take to exit (two shared cores, the suite running beside).
STOP = 15.0


class StreamReader:
    """An SSE stream read in a thread: its lines, whether the server ended it, and a way to
    wait for a line."""

    def __init__(self, base: str) -> None:
        self.lines: list[str] = []
        self.ended = threading.Event()
        self.error: BaseException | None = None
        self.connected = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(base,), daemon=True)
        self._thread.start()
        assert self.connected.wait(STOP), "the stream did not open"

    def _read(self, base: str) -> None:
        try:
            with httpx.stream("GET", f"{base}/notifications/stream", headers=AUTH,
                              timeout=httpx.Timeout(5.0, read=60.0)) as r:
                assert r.status_code == 200
                self.connected.set()
                for line in r.iter_lines():
                    self.lines.append(line)
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.connected.set()
            self.ended.set()

    def wait_for(self, text: str, timeout: float = STOP) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.lines:
                return
            time.sleep(0.02)
        raise AssertionError(f"no line {text!r} in {self.lines}")


def _stop(proc: subprocess.Popen[bytes], *signals: signal.Signals) -> int:
    for sig in signals:
        proc.send_signal(sig)
        time.sleep(0.05)
    try:
        return proc.wait(STOP)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"the server was still running {STOP} s after "
                             f"{[s.name for s in signals]}") from None


@pytest.mark.slow  # real servers started and stopped: seconds each
@pytest.mark.parametrize(("signals", "status"), [
    ((signal.SIGTERM,), 0),
    ((signal.SIGINT,), 130),
    ((signal.SIGINT, signal.SIGINT), 130),  # an impatient second Ctrl-C
], ids=["SIGTERM", "SIGINT", "SIGINT-twice"])
def test_a_signal_stops_the_server_with_streams_open(
        tmp_path: Path, signals: tuple[signal.Signals, ...], status: int) -> None:
    """Three open streams, one of which has received a notification: the signal ends each
    with the final ``shutdown`` event, the process exits promptly with the documented status
    and writes no traceback, and the database is whole (a restart serves the notification
    again from its cursor)."""
    db = str(tmp_path / "s.db")
    log = tmp_path / "server.log"
    port = free_port()
    with served_by(db, [f"alice={TOKEN}"], port, log) as (base, proc):
        readers = [StreamReader(base) for _ in range(3)]
        assert httpx.post(f"{base}/expressions", headers=AUTH,
                          json={"expression": "tick(n=N)"}).status_code == 201
        assert httpx.post(f"{base}/events", headers=AUTH,
                          json={"type": "tick", "params": {"n": 1}}).status_code == 202
        for reader in readers:
            reader.wait_for("id: 1")
        started = time.monotonic()
        assert _stop(proc, *signals) == status
        took = time.monotonic() - started
        for reader in readers:
            assert reader.ended.wait(STOP)
            assert reader.error is None, reader.error
            assert reader.lines[-3:] == ["event: shutdown", reader.lines[-2], ""], reader.lines
            assert reader.lines[-4] == "retry: 5000"
            assert json.loads(reader.lines[-2].removeprefix("data: "))["detail"]
    err = log.read_text()
    assert "Traceback" not in err and "Error" not in err, err
    assert err.count("\n") == 1, err  # the line that says where it serves, and no other
    assert took < 5.0, f"{took:.1f} s to stop"
    with served_by(db, [f"alice={TOKEN}"], free_port(), tmp_path / "again.log") as (base, _):
        notes = httpx.get(f"{base}/notifications", headers=AUTH).json()["notifications"]
        assert [n["cursor"] for n in notes] == [1]


@pytest.mark.slow  # real servers started and stopped: seconds each
def test_a_request_in_flight_is_finished_or_refused(tmp_path: Path) -> None:
    """A batch of 3,000 events sent just before SIGTERM: the server either answers 202 and
    has stored all of them, or closes the connection without an answer and has stored none;
    never an answer for what it did not keep."""
    db = str(tmp_path / "s.db")
    port = free_port()
    batch = json.dumps([{"type": "tick", "params": {"n": i}} for i in range(3000)]).encode()
    with served_by(db, [f"alice={TOKEN}"], port, tmp_path / "server.log") as (base, proc):
        assert httpx.post(f"{base}/expressions", headers=AUTH,
                          json={"expression": "tick(n=N)"}).status_code == 201
        with socket.create_connection(("127.0.0.1", port), timeout=STOP) as s:
            s.sendall(b"POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      + f"Authorization: Bearer {TOKEN}\r\n".encode()
                      + f"Content-Length: {len(batch)}\r\n\r\n".encode() + batch)
            time.sleep(0.02)
            proc.send_signal(signal.SIGTERM)
            answer = b""
            try:
                while chunk := s.recv(65536):
                    answer += chunk
            except ConnectionResetError:
                pass
        assert proc.wait(STOP) == 0
    stored = Journal(db)
    try:
        kept = len(stored.notifications("alice", 0, 10_000))
    finally:
        stored.close()
    if answer:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 202"), answer[:200]
        assert json.loads(body) == {"accepted": 3000}
        assert kept == 3000
    else:
        assert kept == 0


@pytest.mark.slow  # real servers started and stopped: seconds each
def test_a_second_server_on_the_same_database_is_refused(tmp_path: Path) -> None:
    """While one ``xmlevents serve`` runs, another on the same database (by another path to
    it) exits with status 3 and one line naming the first's pid, before it listens; once the
    first has stopped, the database can be served again."""
    db = tmp_path / "s.db"
    with served_by(str(db), [], free_port(), tmp_path / "first.log") as (base, proc):
        port = free_port()
        second = subprocess.run(
            [sys.executable, "-m", "xmlevents", "serve", "--port", str(port), "--db",
             str(tmp_path / "." / "s.db")], capture_output=True, text=True, timeout=60)
        assert second.returncode == 3
        assert second.stderr.count("\n") == 1, second.stderr
        assert second.stderr.startswith("xmlevents: error: --db "), second.stderr
        assert f"pid {proc.pid}" in second.stderr
        assert "one process per database" in second.stderr
        with pytest.raises(httpx.ConnectError):  # it never listened
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2.0)
        assert httpx.get(f"{base}/health").status_code == 200  # the first is untouched
    with served_by(str(db), [], free_port(), tmp_path / "again.log") as (base, _):
        wait_up(base)


def test_the_lock_names_its_holder_and_is_released(tmp_path: Path) -> None:
    """In one process: a second lock on the database is refused naming this pid (flock
    locks belong to open files), an sqlite3.OperationalError as the CLI expects; released,
    the database can be locked again; the lock file stays beside the database."""
    db = str(tmp_path / "s.db")
    first = DatabaseLock(db)
    with pytest.raises(DatabaseInUse) as refused:
        DatabaseLock(db)
    assert refused.value.pid is not None and str(refused.value.pid) in str(refused.value)
    assert refused.value.pid == os.getpid()
    assert isinstance(refused.value, sqlite3.OperationalError)
    first.release()
    first.release()  # a second release does nothing
    assert not first.held
    again = DatabaseLock(db)
    assert again.held and Path(db + ".lock").read_text() == f"{os.getpid()}\n"
    again.release()
