"""What one client or connection may take (issue 31, item 6), against a real uvicorn server
configured as ``xmlevents serve`` configures it: a connection that trickles its headers or
its body, or sends nothing, is answered 408 and closed after the timeout; an idle keep-alive
connection is closed; a request past the connection limit is refused with a problem document;
each quota's refusal names the limit, its value and the option raising it. The limits are
small here so that the tests take about a second each."""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from xmlevents.service import ANONYMOUS, Service
from xmlevents.service._limits import OPEN_FILES, Limits, over_retention

from .http_server import TOKENS, A, B, free_port, served_by, thread_server

TIMEOUTS = Limits(header_timeout=0.4, body_timeout=0.4, keep_alive=0.3, max_connections=4)


@pytest.fixture(scope="module")
def timed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = str(tmp_path_factory.mktemp("limits") / "s.db")
    with thread_server(db, TOKENS, limits=TIMEOUTS) as url:
        yield url


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=5)


def _until_closed(sock: socket.socket, trickle: bytes = b"", every: float = 0.05
                  ) -> tuple[bytes, float]:
    """Send ``trickle`` a byte every ``every`` seconds (nothing: just wait) until the server
    closes the connection; what it answered and after how long."""
    sock.settimeout(every)
    start = time.monotonic()
    got = b""
    i = 0
    while time.monotonic() - start < 5:
        if trickle:
            try:
                sock.sendall(trickle[i % len(trickle):i % len(trickle) + 1])
            except OSError:  # closed by the server
                break
            i += 1
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    return got, time.monotonic() - start


def _problem(raw: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    assert b"application/problem+json" in head.lower() and b"connection: close" in head.lower()
    return status, json.loads(body)


def test_trickling_headers_are_answered_408_and_closed(timed: str) -> None:
    with _connect(timed) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        got, after = _until_closed(sock, b"X-Slow: a\r\n")
    status, body = _problem(got)
    assert status == 408 and body["option"] == "--header-timeout" and body["quota"] == 0.4
    assert 0.35 < after < 3.0


def test_a_silent_connection_is_closed(timed: str) -> None:
    with _connect(timed) as sock:
        got, after = _until_closed(sock)
    assert _problem(got)[0] == 408 and 0.35 < after < 3.0


def test_a_trickling_body_is_answered_408_and_closed(timed: str) -> None:
    with _connect(timed) as sock:
        sock.sendall(b"POST /events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-a\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 200\r\n\r\n")
        got, after = _until_closed(sock, b" " * 200)
    status, body = _problem(got)
    assert status == 408 and body["limit"] == "body timeout"
    assert "--body-timeout" in str(body["detail"]) and 0.35 < after < 3.0


def test_an_idle_keep_alive_connection_is_closed(timed: str) -> None:
    with _connect(timed) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        got, after = _until_closed(sock)
    assert got.startswith(b"HTTP/1.1 200") and b'{"ok":true}' in got  # answered, kept open
    assert 0.25 < after < 3.0  # then closed when idle


def test_a_request_past_the_connection_limit_is_refused(timed: str) -> None:
    with contextlib.ExitStack() as held:  # open streams: connections that stay
        for _ in range(TIMEOUTS.max_connections):
            stream = held.enter_context(httpx.stream("GET", f"{timed}/notifications/stream",
                                                     headers=A, timeout=5))
            assert stream.status_code == 200
        r = httpx.get(f"{timed}/health", timeout=5)
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.json()["option"] == "--max-connections" and r.json()["quota"] == 4
    time.sleep(0.1)
    assert httpx.get(f"{timed}/health", timeout=5).status_code == 200


@pytest.fixture()
def quotas(tmp_path: Path) -> Iterator[str]:
    limits = Limits(max_expressions=2, max_events=3, max_retained=4)
    with thread_server(str(tmp_path / "q.db"), TOKENS, limits=limits) as url:
        yield url


def _register(url: str, auth: dict[str, str], text: str) -> httpx.Response:
    return httpx.post(f"{url}/expressions", headers=auth, json={"expression": text})


def test_the_quotas_refuse_naming_the_limit_and_option(quotas: str) -> None:
    ids = [_register(quotas, A, f"newCD(title=T, n={n})").json()["id"] for n in range(2)]
    r = _register(quotas, A, "newCD(title=T)")
    assert r.status_code == 403 and r.headers["content-type"] == "application/problem+json"
    assert r.json()["limit"] == "expressions per client" and r.json()["quota"] == 2
    assert "xmlevents serve --max-expressions N" in r.json()["detail"]
    assert _register(quotas, B, "newCD(title=T)").status_code == 201  # per client
    assert httpx.delete(f"{quotas}/expressions/{ids[0]}", headers=A).status_code == 204
    assert _register(quotas, A, "newCD(title=T)").status_code == 201

    four = [{"type": "newBook", "params": {"n": n}} for n in range(4)]
    r = httpx.post(f"{quotas}/events", headers=A, json=four)
    assert r.status_code == 413 and r.json()["option"] == "--max-events"
    assert "this one has 4" in r.json()["detail"]
    assert httpx.post(f"{quotas}/events", headers=A, json=four[:3]).status_code == 202


def test_past_the_retention_quota_the_oldest_are_discarded(quotas: str) -> None:
    _register(quotas, A, "newCD(title=T)")
    _register(quotas, B, "newCD(title=T)")
    for batch in ([0, 1, 2], [3, 4], [5]):
        assert httpx.post(f"{quotas}/events", headers=A, json=[
            {"type": "newCD", "params": {"title": f"t{n}"}} for n in batch]).status_code == 202
    for auth in (A, B):  # each client keeps its 4 newest
        got = httpx.get(f"{quotas}/notifications", headers=auth).json()
        assert [n["bindings"]["T"] for n in got["notifications"]] == ["t2", "t3", "t4", "t5"]
        assert got["discarded"] == 2
        first = got["notifications"][0]["cursor"]
        assert httpx.get(f"{quotas}/notifications", headers=auth,
                         params={"after": first}).json()["discarded"] == 0
    # a client that deletes what it read makes room: nothing more is discarded
    last = got["notifications"][-1]["cursor"]
    httpx.delete(f"{quotas}/notifications", headers=B, params={"through": last})
    httpx.post(f"{quotas}/events", headers=A, json=[
        {"type": "newCD", "params": {"title": f"u{n}"}} for n in range(3)])
    got = httpx.get(f"{quotas}/notifications", headers=B, params={"after": last}).json()
    assert [n["bindings"]["T"] for n in got["notifications"]] == ["u0", "u1", "u2"]
    assert got["discarded"] == 0


@given(quota=st.integers(1, 5), retained=st.dictionaries(st.sampled_from("abc"),
                                                         st.integers(0, 5)),
       owners=st.lists(st.sampled_from("abc"), max_size=12))
def test_retention_keeps_the_newest_quota_of_each_client(
        quota: int, retained: dict[str, int], owners: list[str]) -> None:
    retained = {c: min(n, quota) for c, n in retained.items()}  # the invariant before
    new = [(o, i, None, None) for i, o in enumerate(owners)]
    discard, dropped = over_retention(retained, new, Limits(max_retained=quota))
    for client in "abc":
        stored = retained.get(client, 0)
        mine = [i for i, (o, *_) in enumerate(new) if o == client]
        kept_new = [i for i in mine if i not in dropped]
        # at most the quota kept, and nothing discarded while there was room
        assert stored - discard.get(client, 0) + len(kept_new) == min(stored + len(mine),
                                                                         quota)
        assert kept_new == mine[len(mine) - len(kept_new):]  # the newest of the new
        assert discard.get(client, 0) <= stored


def test_serve_raises_the_open_file_limit_for_its_connections() -> None:
    """Past the open-file limit a connection cannot be accepted, so serve makes room for
    ``--max-connections`` and more (here in a child process whose soft limit is lowered
    first)."""
    code = ("import resource\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit("
            "resource.RLIMIT_NOFILE)[1]))\n"
            "from xmlevents.service._limits import Limits, open_files\n"
            "print(open_files(Limits(max_connections=300)),"
            " resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 428:
        pytest.skip(f"the hard open-file limit ({hard}) is below 428")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    expected = OPEN_FILES if hard == resource.RLIM_INFINITY else min(OPEN_FILES, hard)
    assert out == [str(expected)] * 2


def test_the_retention_count_is_read_back_at_start(tmp_path: Path) -> None:
    """The notifications each client keeps are counted from the database when the service
    starts, so the quota holds across a restart."""
    db = str(tmp_path / "r.db")
    limits = Limits(max_retained=2)

    async def signal(service: Service, *titles: str) -> None:
        await service.signal(ANONYMOUS, [("newCD", {"title": t}, None) for t in titles])

    async def run() -> tuple[list[str], int]:
        service = Service(db, limits=limits)
        service.start()
        await service.register(ANONYMOUS, "text", "newCD(title=T)", {}, None)
        await signal(service, "t0", "t1")
        await service.stop()
        service = Service(db, limits=limits)
        service.start()
        try:
            assert service.retained == {ANONYMOUS: 2}
            await signal(service, "t2")
            rows = await service.read(lambda j: j.notifications(ANONYMOUS, None, 10))
            discarded = await service.read(lambda j: j.discarded(ANONYMOUS, None))
        finally:
            await service.stop()
        return [r.body["bindings"]["T"] for r in rows], discarded

    assert asyncio.run(run()) == (["t1", "t2"], 1)


def test_discards_are_logged_once_a_minute_a_client(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A client over its retention quota at every request gets one log line a minute with
    the count discarded since the last one, not one line a request."""
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    limits = Limits(max_retained=2)

    async def run() -> None:
        service = Service(str(tmp_path / "w.db"), limits=limits)
        service.start()
        try:
            await service.register(ANONYMOUS, "text", "newCD(title=T)", {}, None)
            for k in range(4):  # 3 notifications a request: 1, then 3 discarded each time
                await service.signal(ANONYMOUS, [("newCD", {"title": f"t{k}{i}"}, None)
                                                 for i in range(3)])
                now[0] += 20
            now[0] += 60
            await service.signal(ANONYMOUS, [("newCD", {"title": "last"}, None)])
        finally:
            await service.stop()

    with caplog.at_level("WARNING", logger="xmlevents.service"):
        asyncio.run(run())
    lines = [r.getMessage() for r in caplog.records if "retention quota" in r.getMessage()]
    assert lines == [
        "retention quota (2 notifications a client): 1 of anonymous's oldest notifications "
        "discarded",
        # t=1020, 1040 within the minute; t=1060 logs the 3 + 3 + 3 since
        "retention quota (2 notifications a client): 9 of anonymous's oldest notifications "
        "discarded",
        "retention quota (2 notifications a client): 1 of anonymous's oldest notifications "
        "discarded"]


@pytest.mark.slow  # the real command in a subprocess: a second or two
def test_serve_options_reach_the_server(tmp_path: Path) -> None:
    """``xmlevents serve``'s limit and CORS options are the running service's; a bad value is
    a usage error before anything starts."""
    bad = subprocess.run([sys.executable, "-m", "xmlevents", "serve", "--max-events", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--max-events: a whole number above 0" in bad.stderr
    assert "Traceback" not in bad.stderr
    extra = ["--max-events", "2", "--cors-origin", "http://page.example"]
    with served_by(str(tmp_path / "s.db"), ["alice=s3cret-a"], free_port(),
                   tmp_path / "server.log", extra=extra) as (base, _):
        r = httpx.post(f"{base}/events", headers=A, json=[
            {"type": "a", "params": {}} for _ in range(3)])
        assert r.status_code == 413 and r.json()["option"] == "--max-events"
        r = httpx.options(f"{base}/events", headers={
            "Origin": "http://page.example", "Access-Control-Request-Method": "POST"})
        assert r.headers["access-control-allow-origin"] == "http://page.example"


def test_the_help_shows_the_limits_the_service_applies() -> None:
    """``serve --help`` prints the limits' defaults from a table of its own (building every
    command's parser must not import the service): it is the service's :class:`Limits`."""
    from dataclasses import asdict

    from xmlevents._cli.serve import LIMIT_DEFAULTS

    assert asdict(Limits()) == LIMIT_DEFAULTS
