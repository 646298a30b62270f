"""A real uvicorn server for the HTTP tests: in a thread of the test process, or as
``xmlevents serve`` in a subprocess (for kills)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from xmlevents.service import create_app
from xmlevents.service._limits import Limits
from xmlevents.service._server import Server, config

#: Two clients' tokens, and the Authorization headers of alice (``A``) and bob (``B``).
TOKENS = {"s3cret-a": "alice", "s3cret-b": "bob"}
A = {"Authorization": "Bearer s3cret-a"}
B = {"Authorization": "Bearer s3cret-b"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(base: str, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if httpx.get(f"{base}/health", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise RuntimeError(f"the server at {base} did not start")


@contextmanager
def thread_server(db: str, tokens: dict[str, str] | None = None,
                  join: str = "correlate", *, limits: Limits | None = None,
                  cors_origins: Sequence[str] = (), allow_private_webhooks: bool = True
                  ) -> Iterator[str]:
    """A server on 127.0.0.1 in a thread, configured as ``serve`` configures it; yields its
    base URL. Callbacks to this machine are allowed unless ``allow_private_webhooks`` is
    False (the tests' receivers are local)."""
    port = free_port()
    app = create_app(db, tokens, join=join, limits=limits,  # type: ignore[arg-type]
                     cors_origins=cors_origins, allow_private_webhooks=allow_private_webhooks)
    # the service's server: it ends open streams when it stops
    server = Server(config(app, limits, host="127.0.0.1", port=port), app)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(base)
        yield base
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def process_server(db: str, tokens: list[str], port: int | None = None
                   ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``xmlevents serve`` as a subprocess; yields its base URL and the process."""
    port = port or free_port()
    args = [sys.executable, "-m", "xmlevents", "serve", "--port", str(port), "--db", db]
    for t in tokens:
        args += ["--token", t]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(base)
        yield base, proc
    finally:
        _stop(proc, 10)
        if proc.stderr is not None:
            proc.stderr.close()


def _stop(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM, then SIGKILL if it has not stopped within ``grace`` seconds."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait()


@contextmanager
def served_by(db: str, tokens: list[str], port: int, log: Path, *,
              python: str | None = None, extra: Sequence[str] = ()
              ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``xmlevents serve`` run by ``python`` (default: this interpreter), its stderr in the
    file ``log`` (a pipe nobody reads would block a server that writes much); yields the
    base URL and the process, which is stopped with SIGTERM (then SIGKILL) at the end."""
    args = [python or sys.executable, "-m", "xmlevents", "serve", "--port", str(port),
            "--db", db, *extra]
    for t in tokens:
        args += ["--token", t]
    with open(log, "wb") as err:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(base, 60.0)
        yield base, proc
    finally:
        _stop(proc, 15)
