"""The detection service over HTTP with a real uvicorn server on 127.0.0.1 and httpx clients
(issue 18, item 4)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from xmlevents.service import Engine
from xmlevents.service._db import Journal

from .http_server import TOKENS, A, B, process_server, thread_server

SEQ_T = 'SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T, artist="U2"))'


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with thread_server(str(tmp_path_factory.mktemp("svc") / "s.db"), TOKENS) as url:
        yield url


def cd(title: str, kind: str = "newCD") -> dict[str, Any]:
    return {"type": kind, "params": {"title": title, "artist": "U2"}}


def test_register_signal_and_read_notifications(base: str) -> None:
    with httpx.Client(base_url=base, headers=A) as c:
        r = c.post("/expressions", json={"expression": SEQ_T})
        assert r.status_code == 201
        ident = r.json()["id"]
        assert r.headers["location"] == f"/expressions/{ident}"
        assert c.get(f"/expressions/{ident}").json()["expression"] == SEQ_T
        start = c.get("/notifications").json()["notifications"]
        after = start[-1]["cursor"] if start else 0
        assert c.post("/events", json=cd("Boy")).json() == {"accepted": 1}
        r = c.post("/events", json=[cd("War", "newMusicDVD"), cd("Boy", "newMusicDVD")])
        assert (r.status_code, r.json()) == (202, {"accepted": 2})
        notes = c.get("/notifications", params={"after": after}).json()["notifications"]
        mine = [n for n in notes if n["expression"] == ident]
        assert [(n["bindings"], n["next"]) for n in mine] == [({"T": "Boy"}, ident)]
        assert [e["type"] for e in mine[0]["events"]] == ["newCD", "newMusicDVD"]
        last = mine[0]["cursor"]
        assert c.get("/notifications", params={"after": last}).json()["notifications"] == []
        assert c.delete("/notifications", params={"through": last}).status_code == 204
        assert all(n["cursor"] > last for n in c.get("/notifications").json()["notifications"])
        graph = c.get("/graph").json()
        assert graph["expressions"][ident] == {"nodes": 3, "shared": 0}
        assert graph["nodes"] <= graph["nodes_without_sharing"]
        assert c.delete(f"/expressions/{ident}").status_code == 204
        assert c.get(f"/expressions/{ident}").status_code == 404


def test_clients_see_only_their_own(base: str) -> None:
    a = httpx.post(f"{base}/expressions", headers=A, json={"expression": "x(v=V)"}).json()["id"]
    assert httpx.get(f"{base}/expressions/{a}", headers=B).status_code == 404
    assert httpx.delete(f"{base}/expressions/{a}", headers=B).status_code == 404
    assert a not in [e["id"] for e in
                     httpx.get(f"{base}/expressions", headers=B).json()["expressions"]]
    httpx.post(f"{base}/events", headers=B, json={"type": "x", "params": {"v": 1}})
    bobs = httpx.get(f"{base}/notifications", headers=B).json()["notifications"]
    assert all(n["expression"] != a for n in bobs)
    alices = httpx.get(f"{base}/notifications", headers=A).json()["notifications"]
    assert any(n["expression"] == a for n in alices)
    assert a not in httpx.get(f"{base}/graph", headers=B).json()["expressions"]
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic x"}):
        r = httpx.get(f"{base}/expressions", headers=headers)
        assert r.status_code == 401 and r.headers["content-type"] == "application/problem+json"


def test_markup_registration(base: str) -> None:
    markup = ("<expression operator='newBook' language='http://ecommerce.com'><with>"
              "<Variable name='X' mode='bind'/></with><having><parameter name='title' "
              "bindVar='X'/></having></expression>")
    r = httpx.post(f"{base}/expressions", headers={**A, "Content-Type": "application/xml"},
                   content=markup)
    assert r.status_code == 201
    got = httpx.get(f"{base}/expressions/{r.json()['id']}", headers=A).json()
    assert got["expression"] == "newBook(title=X)" and "markup" in got


@pytest.mark.parametrize(("kwargs", "status", "words"), [
    ({"json": {"expression": "SEQ(a"}}, 400, "expected"),
    ({"json": {"expression": "FOO(a, b"}}, 400, "expected"),
    ({"json": {"expression": "XOR(a(x=X), b)"}}, 400, "expected"),
    ({"content": b"<expression operator='XOR'><expression operator='a'/></expression>",
      "headers": {"Content-Type": "application/xml"}}, 400, "XOR"),
    ({"json": {"expression": "ANY(0, a, b)"}}, 400, "at least 1"),
    ({"json": {"expression": "a(x=X)", "variables": {"Z": 1}}}, 422, "no atomic expression"),
    ({"json": {"expression": "a(x=X)", "variables": {"X": [1]}}}, 422, "got list"),
    ({"json": {"expr": "a"}}, 422, "unknown field"),
    ({"json": ["a"]}, 422, "JSON object"),
    ({"content": b"{not json", "headers": {"Content-Type": "application/json"}}, 400, ""),
    ({"content": b"<expression operator='a'><with><Variable name='Y' mode='bind'/></with>"
                 b"</expression>", "headers": {"Content-Type": "application/xml"}}, 400,
     "no parameter"),
    ({"content": b"x", "headers": {"Content-Type": "text/plain"}}, 415, "application/json"),
    ({"json": {"expression": 'OPAQUE("urn:p", "x")'}}, 422, "no provider"),
])
def test_bad_registrations_are_problems(base: str, kwargs: dict[str, Any], status: int,
                                        words: str) -> None:
    before = httpx.get(f"{base}/graph", headers=A).json()
    headers = {**A, **kwargs.pop("headers", {})}
    r = httpx.post(f"{base}/expressions", headers=headers, **kwargs)
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["status"] == status and words in body["detail"]
    assert httpx.get(f"{base}/graph", headers=A).json() == before


def test_syntax_errors_carry_line_and_column(base: str) -> None:
    r = httpx.post(f"{base}/expressions", headers=A, json={"expression": "OR(a,\n b c)"})
    body = r.json()
    assert (r.status_code, body["line"], body["column"]) == (400, 2, 4)


@pytest.mark.parametrize(("payload", "words"), [
    ({"params": {}}, "'type' is required"),
    ({"type": "a"}, "'params' is required"),
    ({"type": 3, "params": {}}, "wrong JSON type"),
    ({"type": "a", "params": {"x": None}}, "null"),
    ({"type": "a", "params": {"x": {"y": 1}}}, "dict"),
    ({"type": "a", "params": {}, "time": "noon"}, "wrong JSON type"),
    ([{"type": "a", "params": {}}, {"type": "b"}], "event 1"),
    ([], "empty"),
])
def test_bad_signals_are_problems_and_apply_nothing(base: str, payload: Any,
                                                    words: str) -> None:
    ident = httpx.post(f"{base}/expressions", headers=A,
                       json={"expression": "a"}).json()["id"]
    before = httpx.get(f"{base}/notifications", headers=A).json()["notifications"]
    r = httpx.post(f"{base}/events", headers=A, json=payload)
    assert r.status_code == 422 and words in r.json()["detail"], r.text
    after = httpx.get(f"{base}/notifications", headers=A).json()["notifications"]
    assert after == before
    httpx.delete(f"{base}/expressions/{ident}", headers=A)


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/events", rb'{"type": "a\ud800", "params": {}}'),
    ("POST", "/events", rb'[{"type": "a", "params": {"\udc00": 1}}]'),
    ("POST", "/events", rb'{"type": "a", "params": {"x": "\uD83D"}}'),
    ("POST", "/expressions", rb'{"expression": "a", "callback": "http://h/\ud800"}'),
    ("POST", "/expressions", rb'{"expression": "a(x=\"\ud800\")"}'),
])
def test_lone_surrogates_are_malformed_json(base: str, method: str, path: str,
                                            body: bytes) -> None:
    r = httpx.request(method, f"{base}{path}", content=body,
                      headers={**A, "Content-Type": "application/json"})
    assert r.status_code == 400 and r.headers["content-type"] == "application/problem+json"
    assert "surrogate" in r.json()["detail"]


def test_surrogate_pairs_are_characters(base: str) -> None:
    ident = httpx.post(f"{base}/expressions", headers=A,
                       json={"expression": "emoji(x=X)"}).json()["id"]
    r = httpx.post(f"{base}/events", headers={**A, "Content-Type": "application/json"},
                   content=rb'{"type": "emoji", "params": {"x": "\ud83c\udfb5"}}')
    assert r.status_code == 202, r.text
    notes = httpx.get(f"{base}/notifications", headers=A).json()["notifications"]
    assert [n["bindings"] for n in notes if n["expression"] == ident] == [{"X": "\U0001f3b5"}]
    httpx.delete(f"{base}/expressions/{ident}", headers=A)


@pytest.mark.parametrize("url", ["http://[::1", "http://a b/", "mailto:x@y", "http:///p",
                                 "ftp://h/", "/relative"])
def test_bad_callbacks_are_refused(base: str, url: str) -> None:
    r = httpx.post(f"{base}/expressions", headers=A, json={"expression": "a", "callback": url})
    assert r.status_code == 422 and "callback" in r.json()["detail"], r.text


@pytest.mark.parametrize(("method", "path", "headers"), [
    ("GET", "/notifications?after=-1", {}),
    ("GET", "/notifications?after=1.5", {}),
    ("GET", "/notifications?after=99999999999999999999", {}),
    ("GET", "/notifications?after=" + "9" * 5000, {}),
    ("GET", "/notifications?limit=99999999999999999999", {}),
    ("DELETE", "/notifications?through=99999999999999999999", {}),
    ("DELETE", "/notifications", {}),
    ("GET", "/notifications/stream?after=x", {}),
    ("GET", "/notifications/stream", {"Last-Event-ID": "99999999999999999999"}),
])
def test_bad_cursors_are_problems(base: str, method: str, path: str,
                                  headers: dict[str, str]) -> None:
    r = httpx.request(method, f"{base}{path}", headers={**A, **headers})
    assert r.status_code == 400 and r.headers["content-type"] == "application/problem+json"


def test_bodies_over_the_limit(base: str) -> None:
    r = httpx.post(f"{base}/events", headers=A, content=b"[" + b" " * (2 << 20) + b"]")
    assert r.status_code == 413 and r.headers["content-type"] == "application/problem+json"


def test_unknown_routes_are_problems(base: str) -> None:
    r = httpx.get(f"{base}/nothing", headers=A)
    assert r.status_code == 404 and r.headers["content-type"] == "application/problem+json"
    r = httpx.put(f"{base}/events", headers=A)
    assert r.status_code == 405


def test_server_sent_events(base: str) -> None:
    ident = httpx.post(f"{base}/expressions", headers=A,
                       json={"expression": "sse(n=N)"}).json()["id"]
    last = max([n["cursor"] for n in
                httpx.get(f"{base}/notifications", headers=A).json()["notifications"]],
               default=0)
    got: list[dict[str, Any]] = []
    ready = threading.Event()

    def listen() -> None:
        with httpx.stream("GET", f"{base}/notifications/stream", headers={
                **A, "Last-Event-ID": str(last)}, timeout=20) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            ready.set()
            event_id = None
            for line in r.iter_lines():
                if line.startswith("id: "):
                    event_id = int(line[4:])
                elif line.startswith("data: "):
                    note = json.loads(line[6:])
                    assert note["cursor"] == event_id
                    if note["expression"] == ident:
                        got.append(note)
                    if len(got) == 3:
                        return

    t = threading.Thread(target=listen)
    t.start()
    ready.wait(10)
    for n in range(3):
        httpx.post(f"{base}/events", headers=A, json={"type": "sse", "params": {"n": n}})
    t.join(20)
    assert [g["bindings"]["N"] for g in got] == [0, 1, 2]


def test_webhook_retries_until_delivered(base: str) -> None:
    received: list[dict[str, Any]] = []
    attempts = [0]

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            attempts[0] += 1
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if attempts[0] == 1:
                self.send_response(503)  # the first attempt fails
            else:
                received.append(json.loads(body))
                self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    hook = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{hook.server_address[1]}/hook"
        ident = httpx.post(f"{base}/expressions", headers=A,
                           json={"expression": "hooked(v=V)", "callback": url}).json()["id"]
        httpx.post(f"{base}/events", headers=A, json={"type": "hooked", "params": {"v": 7}})
        for _ in range(100):
            if received:
                break
            threading.Event().wait(0.1)
        assert attempts[0] >= 2
        assert [(n["expression"], n["bindings"]) for n in received] == [(ident, {"V": 7})]
        assert "cursor" in received[0]
    finally:
        hook.shutdown()


def test_pending_deliveries_survive_a_restart(tmp_path: Path) -> None:
    """Deliveries pending in the database when the service starts are made (they survive a
    restart); one to a URL httpx refuses (a database written before URLs were checked) is
    dropped, and the webhook worker goes on with the others."""
    db = str(tmp_path / "w.db")
    received: list[dict[str, Any]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    hook = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    hook_url = f"http://127.0.0.1:{hook.server_address[1]}/"
    journal = Journal(db)
    for ident, url in (("xgone", "http://[::1"), ("xkept", hook_url)):
        journal.write([], [("alice", ident, {"expression": ident, "bindings": {"K": ident},
                                             "events": [], "next": ident}, url)])
    journal.close()
    try:
        with thread_server(db, TOKENS) as url:
            httpx.post(f"{url}/expressions", headers=A,
                       json={"expression": "ok(v=V)", "callback": hook_url})
            httpx.post(f"{url}/events", headers=A, json={"type": "ok", "params": {"v": 1}})
            for _ in range(100):
                if len(received) == 2:
                    break
                threading.Event().wait(0.05)
        assert [n["bindings"] for n in received] == [{"K": "xkept"}, {"V": 1}]
        assert [n["cursor"] for n in received] == [2, 3]
        con = sqlite3.connect(db)
        assert con.execute("SELECT COUNT(*) FROM deliveries").fetchone() == (0,)
        con.close()
    finally:
        hook.shutdown()


def test_a_log_of_single_signal_rows_replays(tmp_path: Path) -> None:
    """Databases whose log holds one row per signal (kind ``signal``, before a request's
    body was logged whole) are replayed as well."""
    db = str(tmp_path / "old.db")
    journal = Journal(db)
    journal.write([("register", "alice", {"id": "xold", "format": "text", "source": SEQ_T,
                                          "variables": {}, "callback": None, "text": SEQ_T}),
                   ("signal", "alice", cd("Boy"))], [], add=("xold", "alice", {
                       "format": "text", "source": SEQ_T, "text": SEQ_T}))
    journal.close()
    with thread_server(db, TOKENS) as url:
        httpx.post(f"{url}/events", headers=B, json=cd("Boy", "newMusicDVD"))
        notes = httpx.get(f"{url}/notifications", headers=A).json()["notifications"]
    assert [(n["expression"], n["bindings"], [e["id"] for e in n["events"]])
            for n in notes] == [("xold", {"T": "Boy"}, ["s1", "s2"])]


@pytest.mark.slow
def test_eight_concurrent_clients_get_every_notification_exactly_once(
        tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    tokens = {f"t{i}": f"c{i}" for i in range(8)}
    with thread_server(db, tokens) as url:
        def client(i: int) -> tuple[list[int], int]:
            h = {"Authorization": f"Bearer t{i}"}
            with httpx.Client(base_url=url, headers=h, timeout=30) as c:
                c.post("/expressions", json={"expression": f'ev(k=K, who="c{i}")'})
                seen: list[int] = []
                cursor = 0
                for n in range(40):
                    c.post("/events", json=[{"type": "ev", "params": {"k": n, "who": f"c{j}"}}
                                            for j in range(8)])
                    if n % 7 == 0:
                        for note in c.get("/notifications",
                                          params={"after": cursor}).json()["notifications"]:
                            seen.append(note["cursor"])
                            cursor = note["cursor"]
                return seen, cursor

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(client, range(8)))
        journal = Journal(db)
        log = [(e.kind, e.client, e.body) for e in journal.log()]
        journal.close()
        for i, (seen, cursor) in enumerate(results):
            h = {"Authorization": f"Bearer t{i}"}
            rest = httpx.get(f"{url}/notifications", headers=h,
                             params={"after": cursor}).json()["notifications"]
            everything = httpx.get(f"{url}/notifications", headers=h,
                                   params={"limit": 10000}).json()["notifications"]
            # read by cursor, then the rest: every notification once, none twice
            assert seen + [n["cursor"] for n in rest] == [n["cursor"] for n in everything]
            registered = next(n for n, (k, c, _) in enumerate(log)
                              if k == "register" and c == f"c{i}")
            signals = [b["params"]["k"] for k, _, b in log[registered:]
                       if k == "signal" and b["params"]["who"] == f"c{i}"]
            assert [n["bindings"]["K"] for n in everything] == signals
            assert len(signals) >= 40


@pytest.mark.slow
def test_kill_9_and_restart_loses_nothing(tmp_path: Path) -> None:
    """Killed with SIGKILL while signals stream in, restarted on the same database: the
    notifications are those an uninterrupted engine gives on the signals the log accepted,
    and every acknowledged signal is in the log."""
    db = str(tmp_path / "k.db")
    acked: list[int] = []
    with process_server(db, ["alice=s3cret-a"]) as (url, proc):
        httpx.post(f"{url}/expressions", headers=A, json={"expression": SEQ_T})
        httpx.post(f"{url}/expressions", headers=A,
                   json={"expression": "ANY(2, newCD(title=T), newBook(title=T))"})

        def pump() -> None:
            for n in range(100_000):
                kind = ("newCD", "newMusicDVD", "newBook")[n % 3]
                try:
                    r = httpx.post(f"{url}/events", headers=A, timeout=5, json={
                        "type": kind, "params": {"title": f"t{n // 3 % 5}", "artist": "U2",
                                                 "n": n}})
                except httpx.HTTPError:
                    return
                if r.status_code == 202:
                    acked.append(n)

        t = threading.Thread(target=pump)
        t.start()
        while len(acked) < 150:
            threading.Event().wait(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        t.join(30)
    # the log as the kill left it (the restart compacts it to the live state)
    journal = Journal(db)
    log = [(e.kind, e.body) for e in journal.log()]
    journal.close()
    with process_server(db, ["alice=s3cret-a"]) as (url, _):
        for n in range(3):  # it goes on where it stopped
            httpx.post(f"{url}/events", headers=A, json=cd(f"t{n}", "newMusicDVD"))
            log.append(("signal", cd(f"t{n}", "newMusicDVD")))
        notes = httpx.get(f"{url}/notifications", headers=A, params={"limit": 100000}
                          ).json()["notifications"]
    logged = {b["params"]["n"] for k, b in log if k == "signal" and "n" in b["params"]}
    assert set(acked) <= logged
    engine = Engine()
    want = []
    for kind, body in log:
        if kind == "register":
            engine.register(body["source"], ident=body["id"])
        else:
            want += [(d.expression, d.bindings, [s.id for s in d.events])
                     for d in engine.signal(body["type"], body["params"])]
    got = [(n["expression"], n["bindings"], [e["id"] for e in n["events"]]) for n in notes]
    assert got == want
    assert len(got) > 50
