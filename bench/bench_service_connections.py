"""Connections that send nothing, or their headers a byte at a time (issue 31, item 6):
``xmlevents serve`` in its own process, N such connections opened at once (half silent, half
trickling a header line every 0.25 s).

Prints how long the server took to close them all (its header timeout, ``--header-timeout``),
what ``GET /health`` got meanwhile (the connection limit's 503 once more than
``--max-connections`` are open, or a reset when the open-file limit is reached first) and
how long it took, and ``GET /health`` once they are gone. ``--soft-files`` starts the server
with that soft open-file limit (the hard one as it is), as a default ``ulimit -n 1024``
would: the server raises it towards the hard limit, so that a flood is refused, not reset.
Before issue 31 such connections were never closed.

    python3 bench/bench_service_connections.py [--connections 4000] [--header-timeout 10]
        [--soft-files N]
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def health(base: str) -> str:
    start = time.perf_counter()
    try:
        status = str(httpx.get(f"{base}/health", timeout=10).status_code)
    except httpx.HTTPError as exc:
        status = type(exc).__name__
    return f"{status} in {time.perf_counter() - start:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=4000)
    parser.add_argument("--header-timeout", type=float, default=10.0)
    parser.add_argument("--soft-files", type=int, default=None)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < args.connections + 64:  # this client's
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.connections + 64), hard))

    def limit_files() -> None:
        if args.soft_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (args.soft_files, hard))

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen(
            [sys.executable, "-m", "xmlevents", "serve", "--port", str(port), "--db",
             os.path.join(folder, "s.db"), "--header-timeout", str(args.header_timeout)],
            stderr=subprocess.DEVNULL, preexec_fn=limit_files)
        try:
            end = time.monotonic() + 60
            while time.monotonic() < end:
                try:
                    httpx.get(f"{base}/health", timeout=1)
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            with open(f"/proc/{server.pid}/limits") as f:
                files = next(line.split()[3] for line in f if line.startswith("Max open files"))
            socks = []
            start = time.monotonic()
            for i in range(args.connections):
                s = socket.create_connection(("127.0.0.1", port))
                s.setblocking(False)
                if i % 2:
                    s.send(b"GET /health HTTP/1.1\r\nHost: x\r\n")
                socks.append(s)
            print(f"{args.connections:,} connections opened in {time.monotonic() - start:.2f} s "
                  f"(server's soft open-file limit {files}; header timeout "
                  f"{args.header_timeout:g} s)")
            print(f"GET /health meanwhile: {', '.join(health(base) for _ in range(3))}")
            open_ = set(range(len(socks)))
            last_trickle = time.monotonic()
            while open_ and time.monotonic() - start < args.header_timeout * 3 + 30:
                trickle = time.monotonic() - last_trickle > 0.25
                if trickle:
                    last_trickle = time.monotonic()
                for i in list(open_):
                    try:
                        if trickle and i % 2:
                            socks[i].send(b"X-Slow: 1\r\n")
                        socks[i].recv(65536)  # the 408 and the end, or the end
                    except BlockingIOError:
                        continue  # still open
                    except OSError:
                        pass  # reset: closed too
                    open_.discard(i)
                time.sleep(0.05)
            took = time.monotonic() - start
            print(f"closed by the server: {len(socks) - len(open_):,} of {len(socks):,}, "
                  f"the last {took:.1f} s after the first was opened")
            for s in socks:
                s.close()
            time.sleep(0.5)
            print(f"GET /health after: {health(base)}")
        finally:
            server.terminate()
            server.wait(30)
    print(f"load: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
