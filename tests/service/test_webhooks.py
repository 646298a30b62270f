"""Webhook deliveries (issue 31, item 4): a queue per client, so that alice's receiver that
never answers does not delay bob's; callbacks to this machine and private networks refused
unless the operator allows them. Real receivers on 127.0.0.1 and a real uvicorn server."""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from xmlevents.service._db import Journal
from xmlevents.service._webhooks import TIMEOUT, refusal

from .http_server import TOKENS, A, B, thread_server


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8080/hook", "http://127.9.9.9/", "http://localhost/",
    "http://localhost./", "http://LOCALHOST:1/", "http://api.localhost/",
    "http://169.254.169.254/latest/meta-data/", "http://10.0.0.5/", "http://172.16.3.4/",
    "http://192.168.1.1/", "http://100.64.0.1/", "http://0.0.0.0:80/", "http://[::1]:9/",
    "http://[::]/", "http://[fe80::1]/", "http://[fe80::1%25eth0]/", "http://[fd00::1]/", "http://[::ffff:127.0.0.1]/",
    "http://2130706433/", "http://0x7f.1/", "http://127.1/", "https://224.0.0.1/"])
def test_private_callbacks_are_refused_unless_allowed(url: str) -> None:
    why = refusal(url, allow_private=False)
    assert why is not None and "--allow-private-webhooks" in why, why
    assert refusal(url, allow_private=True) is None


@pytest.mark.parametrize("url", ["http://example.com/hook", "https://hooks.example.org:8443/x",
                                 "http://93.184.216.34/", "http://[2606:4700::1111]/"])
def test_public_callbacks_are_accepted(url: str) -> None:
    assert refusal(url, allow_private=False) is None


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A server that refuses private callbacks, as ``serve`` does by default: its URL and
    database."""
    db = str(tmp_path_factory.mktemp("strict") / "s.db")
    with thread_server(db, TOKENS, allow_private_webhooks=False) as base:
        yield base, db


def test_a_private_callback_is_a_problem_document(strict: tuple[str, str]) -> None:
    """Registration answers 422 naming the address and the option; nothing is registered."""
    base, _ = strict
    r = httpx.post(f"{base}/expressions", headers=A, json={
        "expression": "a(x=X)", "callback": "http://169.254.169.254/latest"})
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert "link-local" in r.json()["detail"]
    assert "--allow-private-webhooks" in r.json()["detail"]
    listed = httpx.get(f"{base}/expressions", headers=A).json()["expressions"]
    assert all(e["callback"] != "http://169.254.169.254/latest" for e in listed)


class _Silent:
    """A receiver that accepts connections (the kernel completes them) and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"

    def close(self) -> None:
        self.sock.close()


class _Receiver:
    """A receiver that answers 204 and records each notification with its arrival time."""

    def __init__(self) -> None:
        got = self.got = []  # type: list[tuple[float, dict[str, Any]]]

        class Hook(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                got.append((time.monotonic(), json.loads(body)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receivers() -> Iterator[tuple[_Silent, _Receiver]]:
    silent, answering = _Silent(), _Receiver()
    yield silent, answering
    silent.close()
    answering.close()


def test_a_silent_receiver_does_not_delay_another_client(
        tmp_path: Path, receivers: tuple[_Silent, _Receiver]) -> None:
    """alice's receiver never answers (each attempt waits TIMEOUT seconds); her three
    notifications are due before bob's, yet bob's arrive without waiting for any of her
    attempts (one queue for every client made bob wait 3 x TIMEOUT). alice's stay pending,
    retried, in the database."""
    silent, answering = receivers
    db = str(tmp_path / "s.db")
    with thread_server(db, TOKENS) as base:
        httpx.post(f"{base}/expressions", headers=A,
                   json={"expression": "a(x=X)", "callback": silent.url}).raise_for_status()
        bobs = httpx.post(f"{base}/expressions", headers=B,
                          json={"expression": "b(x=X)", "callback": answering.url}).json()
        httpx.post(f"{base}/events", headers=A,
                   json=[{"type": "a", "params": {"x": i}} for i in range(3)]
                   ).raise_for_status()
        time.sleep(0.3)  # alice's queue is in its first attempt
        sent = time.monotonic()
        httpx.post(f"{base}/events", headers=B,
                   json=[{"type": "b", "params": {"x": i}} for i in range(3)]
                   ).raise_for_status()
        end = sent + TIMEOUT
        while len(answering.got) < 3 and time.monotonic() < end:
            time.sleep(0.02)
        assert [n["bindings"] for _, n in answering.got] == [{"X": 0}, {"X": 1}, {"X": 2}]
        assert {n["expression"] for _, n in answering.got} == {bobs["id"]}
        assert max(t for t, _ in answering.got) - sent < TIMEOUT
        # bob's last delivery row is removed once his receiver has answered, a moment after
        # it got the notification: read until it is gone (or TIMEOUT), alice's stay pending
        end = time.monotonic() + TIMEOUT
        while True:
            con = sqlite3.connect(db)
            pending = con.execute("SELECT client, COUNT(*) FROM deliveries GROUP BY client"
                                  ).fetchall()
            con.close()
            if pending == [("alice", 3)] or time.monotonic() > end:
                break
            time.sleep(0.02)
        assert pending == [("alice", 3)]


def test_deliveries_of_an_older_database_get_their_client(tmp_path: Path) -> None:
    """A database written before deliveries named their client: its pending deliveries are
    given their notification's client when it is opened, and are delivered."""
    db = str(tmp_path / "old.db")
    answering = _Receiver()
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE log (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, client TEXT NOT NULL,
                          body TEXT NOT NULL);
        CREATE TABLE notifications (cursor INTEGER PRIMARY KEY, client TEXT NOT NULL,
                                    expression TEXT NOT NULL, body TEXT NOT NULL,
                                    deleted INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE deliveries (cursor INTEGER PRIMARY KEY, url TEXT NOT NULL,
                                 attempts INTEGER NOT NULL DEFAULT 0, due REAL NOT NULL);
    """)
    note = {"expression": "x1", "bindings": {"K": 1}, "events": [], "next": "x1"}
    con.execute("INSERT INTO notifications VALUES (1, 'bob', 'x1', ?, 0)", (json.dumps(note),))
    con.execute("INSERT INTO deliveries VALUES (1, ?, 0, 0)", (answering.url,))
    con.commit()
    con.close()
    journal = Journal(db)
    assert journal.delivery_queues() == [("bob", 0.0)]
    journal.close()
    try:
        with thread_server(db, TOKENS):
            end = time.monotonic() + 10
            while not answering.got and time.monotonic() < end:
                time.sleep(0.02)
        assert [n["bindings"] for _, n in answering.got] == [{"K": 1}]
    finally:
        answering.close()


def _loopback_name() -> str | None:
    """This machine's name if it resolves to loopback addresses only (``vm`` here)."""
    name = socket.gethostname()
    try:
        found = {info[4][0] for info in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)}
    except OSError:
        return None
    return name if found and all(a.startswith("127.") or a == "::1" for a in found) else None


def test_a_name_that_resolves_inside_is_refused_at_delivery(strict: tuple[str, str]) -> None:
    """A callback named by a host name passes registration (a name says nothing), but the
    name resolves to 127.0.0.1: the delivery is refused before any connection and given up,
    and the receiver listening there gets nothing."""
    name = _loopback_name()
    if name is None:
        pytest.skip("this machine's name does not resolve to loopback only")
    answering = _Receiver()
    base, db = strict
    try:
        url = answering.url.replace("127.0.0.1", name)
        r = httpx.post(f"{base}/expressions", headers=A,
                       json={"expression": "a(x=X)", "callback": url})
        assert r.status_code == 201, r.text
        httpx.post(f"{base}/events", headers=A, json={"type": "a", "params": {"x": 1}})
        end = time.monotonic() + 10
        while time.monotonic() < end:
            con = sqlite3.connect(db)
            (pending,) = con.execute("SELECT COUNT(*) FROM deliveries").fetchone()
            con.close()
            if not pending:
                break
            time.sleep(0.05)
        assert not pending
        assert answering.got == []
    finally:
        answering.close()
