"""(a helper) ``xmlevents serve`` started for a benchmark, with expressions registered.

The HTTP benchmarks (``bench_service_http.py``, ``bench_service_load.py``) measure a real
server in its own process: this starts it on a free port with a database in ``folder``,
waits until it answers, registers ``expressions`` SEQ expressions each waiting for a
different artist (what a leaf's index is for), and stops it with SIGTERM at the end.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(folder: str, token: str, expressions: int, python: str = sys.executable,
           options: Sequence[str] = ()) -> Iterator[tuple[int, str, subprocess.Popen[bytes]]]:
    """The server's port, base URL and process, ``expressions`` registered by the client
    whose bearer token is ``token``; ``python`` runs it (another version's environment);
    ``options``: more of ``xmlevents serve``'s."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([python, "-m", "xmlevents", "serve", "--port", str(port), "--db",
                             os.path.join(folder, "bench.db"), "--token", f"bench={token}",
                             *options], stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                httpx.get(f"{base}/health", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        with httpx.Client(base_url=base,
                          headers={"Authorization": f"Bearer {token}"}) as c:
            for i in range(expressions):
                c.post("/expressions", json={"expression":
                       f'SEQ(newCD(title=T, artist="artist {i}"), '
                       f'newMusicDVD(title=T, artist="artist {i}"))'}).raise_for_status()
        yield port, base, proc
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(10)
