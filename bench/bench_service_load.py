"""The detection service under a real load client (issue 31, item 10): ``xmlevents serve`` in
its own process, 1,000 registered expressions, the database on disk, and **wrk** (Debian's
``wrk``: a C client whose own CPU is small beside the server's) with 64 keep-alive connections.

Prints, each with the machine's load (``uptime``) at the time:

* the floor: ``GET /health`` requests/s (no engine, no database: what uvicorn and loopback
  cost here, whatever the service does);
* single-event ``POST /events`` requests/s (target >= 3,000), latency p50/p99 (target p99 <
  100 ms at 64 connections);
* events/s in batches of 1,000 (target >= 40,000), latency p50/p99: on fresh servers (one a
  run, started first), then on the server of the other runs after them, at 64 and at 4
  connections — by then (at the default ``--seconds``) its client has reached its retention
  quota (100,000 notifications: the bench's client never acknowledges), and each request
  discards as many notifications as it stores, and wrk's titles repeat (each run numbers
  them from 0), so that the live state is steady and the log is compacted as it grows;
* the writer alone: ``Service.signal`` in the bench's process on batches of 1,000 checked
  beforehand, no HTTP: what the one writer gives with a core to itself, the ceiling of
  batches if HTTP and JSON were spread over other processes (run by ``--python``'s
  interpreter, ``--writer-only``);
* for each, the server's CPU: cores used (its user + system time over the run's wall
  time), and the share of it in each of its threads (the event loop, which parses HTTP and
  JSON; the writer, which owns the engine, and the reader) and in its committer process
  (SQLite's commits, ``serve --committer process``, the default).

The machine is shared and its speed changes from minute to minute: compare ratios within one
run (each load is run ``--repeat`` times, and the best is kept). ``--profile FILE`` also
records the server under single-event load with py-spy (if installed) and prints where its
time goes. ``--client aiohttp`` uses aiohttp instead of wrk (its Python client takes a core
of the two itself: figures are lower).

``--long N`` runs instead N batch runs of ``--seconds`` in a row on one server (64
connections): each prints its events/s, the server's CPU an event, the resident memory of
the server and of its committer and the size of the database's files, so that a long-running
server's figures show — its live state grows to a plateau (wrk's titles repeat from one run
to the next), its client stays at its retention quota, compactions and the collector come
round — and whether its memory and its database follow the live state, not the events sent.

``--pin CPU`` runs the server's process (and the writer alone) on that CPU, and wrk and the
committer process on the others: this machine's two cores differ by a fourth in speed, and a
run's figures move with the core the server lands on. ``--committer process|thread`` is
passed to ``xmlevents serve`` (to compare the two in one sitting).

    python3 bench/bench_service_load.py [--expressions 1000] [--connections 64]
        [--seconds 5] [--repeat 2] [--client wrk|aiohttp] [--profile FILE]
        [--python OTHER_VENV/bin/python] [--pin CPU] [--committer process|thread]
        [--writer-only] [--long N]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import httpx
from served import served

TOKEN = "bench"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Result:
    """One load run: requests/s, latency percentiles (ms), the server's CPU."""

    requests: float
    p50: float
    p99: float
    errors: int
    cores: float
    threads: dict[str, float]
    client: float


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def events(tid: int, k: int, n: int) -> list[dict[str, object]]:
    """Events ``k`` to ``k + n`` of client ``tid``, as the wrk script makes them."""
    return [{"type": "newMusicDVD" if i % 2 else "newCD",
             "params": {"title": f"w{tid}-{i // 2}", "artist": f"artist {i // 2 % 7}"}}
            for i in range(k, k + n)]


# --- the server's CPU ------------------------------------------------------------------------

def cpu_times(pid: int) -> dict[str, float]:
    """Seconds of CPU (user + system) of each thread of ``pid``, by thread name, and of its
    child processes: ``committer``, SQLite's process (``serve --committer process``), and
    ``compaction``, the log's compactions forked by the writer (``serve --compaction
    process``), running or ended (the children ``pid`` has reaped: only they end before
    it); ``total``: all of them."""
    out: dict[str, float] = collections.defaultdict(float)
    for child in children(pid):
        seconds = _stat_seconds(f"/proc/{child}")
        if seconds is None:
            continue
        name = "committer" if _is_committer(child) else "compaction"
        out[name] += seconds
        out["total"] += seconds
    reaped = _stat_seconds(f"/proc/{pid}", reaped=True) or 0.0
    out["compaction"] += reaped
    out["total"] += reaped
    for tid in os.listdir(f"/proc/{pid}/task"):
        seconds = _stat_seconds(f"/proc/{pid}/task/{tid}")
        if seconds is None:  # a thread that ended
            continue
        # Python 3.11 gives its threads no OS name: the writer and the reader are "python3"
        name = "event loop" if tid == str(pid) else "writer+reader"
        out[name] += seconds
        out["total"] += seconds
    return out


def children_cpu(pid: int) -> float:
    """Seconds of CPU of ``pid``'s child processes, running or reaped (:func:`cpu_times`)."""
    times = cpu_times(pid)
    return times["committer"] + times["compaction"]


def _stat_seconds(proc: str, *, reaped: bool = False) -> float | None:
    """User + system seconds of the process at ``proc`` (``/proc/PID``), or of the children
    it has reaped (``reaped``); None if it has ended."""
    try:
        with open(f"{proc}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return None
    first = 13 if reaped else 11  # cutime, cstime; or utime, stime
    return (int(fields[first]) + int(fields[first + 1])) / TICK


def committers(pid: int) -> list[int]:
    """The committer processes among ``pid``'s children (:func:`_is_committer`)."""
    return [k for k in children(pid) if _is_committer(k)]


def _is_committer(pid: int) -> bool:
    """Whether the child ``pid`` is the committer process (started with its own command
    line, where a compaction's child is a fork of the server's)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"_commit" in f.read()
    except FileNotFoundError:
        return False


def children(pid: int) -> list[int]:
    """The child processes of ``pid``."""
    found: list[int] = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += map(int, f.read().split())
        except FileNotFoundError:
            continue
    return found


def pin(pid: int, cores: str | None, children_on: str | None) -> None:
    """Run every thread of ``pid`` on ``cores`` and its child processes (the committer) on
    ``children_on`` (``taskset -a -p``): the server's core to itself, SQLite's process beside
    the load client."""
    if cores is None:
        return
    subprocess.run(["taskset", "-a", "-p", "-c", cores, str(pid)], check=True,
                   stdout=subprocess.DEVNULL)
    for child in children(pid):
        subprocess.run(["taskset", "-a", "-p", "-c", children_on or cores, str(child)],
                       check=True, stdout=subprocess.DEVNULL)


def measure(pid: int, run: Callable[[], tuple[float, float, float, int]]) -> Result:
    """``run``'s figures, the server's CPU (cores) and the load client's (the children of
    this process that ended: wrk; an aiohttp client is this process)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, start = cpu_times(pid), time.perf_counter()
    rate, p50, p99, errors = run()
    after, wall = cpu_times(pid), time.perf_counter() - start
    own2 = resource.getrusage(resource.RUSAGE_SELF)
    kids2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    client = sum(b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime
                 for a, b in ((own, own2), (kids, kids2)))
    threads = {k: (after[k] - before.get(k, 0.0)) / wall for k in after if k != "total"}
    return Result(rate, p50, p99, errors, (after["total"] - before["total"]) / wall,
                  {k: v for k, v in threads.items() if v >= 0.01}, client / wall)


# --- the clients -----------------------------------------------------------------------------

_LUA = """
-- Each wrk thread numbers its own events: event k of thread T is a CD (k even) or the DVD
-- of the same title (k odd), so that about one event in two completes a sequence, and the
-- work per event stays the same however long the run (titles never repeat).
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end
local k = 0
local batch = %d
local function event()
  local pair = math.floor(k / 2)
  local kind = (k %% 2 == 0) and "newCD" or "newMusicDVD"
  k = k + 1
  return string.format('{"type":"%%s","params":{"title":"w%%d-%%d","artist":"artist %%d"}}',
                       kind, tid, pair, pair %% 7)
end
wrk.method = "%s"
wrk.headers["Authorization"] = "Bearer %s"
wrk.headers["Content-Type"] = "application/json"
request = function()
  if batch == 0 then return wrk.format() end
  if batch == 1 then return wrk.format(nil, nil, nil, event()) end
  local parts = {}
  for j = 1, batch do parts[j] = event() end
  return wrk.format(nil, nil, nil, "[" .. table.concat(parts, ",") .. "]")
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %%d %%f %%f %%f %%d\\n", summary.requests,
    summary.duration / 1e6, latency:percentile(50) / 1e3, latency:percentile(99) / 1e3,
    summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout))
end
"""


def wrk(url: str, method: str, batch: int, connections: int, seconds: float,
        tmp: str, cores: str | None = None) -> tuple[float, float, float, int]:
    """Requests/s, p50 and p99 (ms) and errors (non-2xx included) of a wrk run posting
    ``batch`` events a request (0: no body); ``cores``: the CPUs wrk may run on."""
    script = os.path.join(tmp, "load.lua")
    with open(script, "w") as f:
        f.write(_LUA % (batch, method, TOKEN))
    pin = [] if cores is None else ["taskset", "-c", cores]
    out = subprocess.run([*pin, "wrk", "-t", "2", "-c", str(connections), "-d",
                          f"{max(1, round(seconds))}s", "--timeout", "10s", "-s", script, url],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"^RESULT (\d+) (\S+) (\S+) (\S+) (\d+)$", out, re.M)
    assert match, out
    n, duration, p50, p99, errors = match.groups()
    return int(n) / float(duration), float(p50), float(p99), int(errors)


def aiohttp_load(url: str, method: str, batch: int, connections: int,
                 seconds: float) -> tuple[float, float, float, int]:
    """As :func:`wrk`, with ``connections`` aiohttp tasks on one keep-alive connection each."""
    import aiohttp

    async def main() -> tuple[float, float, float, int]:
        latencies: list[float] = []
        errors = 0
        end = time.perf_counter() + seconds
        limit = aiohttp.TCPConnector(limit=connections)
        async with aiohttp.ClientSession(connector=limit, headers=HEADERS) as session:
            async def worker(tid: int) -> None:
                nonlocal errors
                k = 0
                while time.perf_counter() < end:
                    body = None
                    if batch:
                        found = events(tid, k, batch)
                        k += batch
                        body = json.dumps(found[0] if batch == 1 else found)
                    t = time.perf_counter()
                    async with session.request(method, url, data=body) as r:
                        await r.read()
                        errors += r.status >= 300
                    latencies.append(time.perf_counter() - t)
            start = time.perf_counter()
            await asyncio.gather(*(worker(t) for t in range(connections)))
            wall = time.perf_counter() - start
        latencies.sort()
        ms = [latencies[int(q * (len(latencies) - 1))] * 1e3 for q in (0.5, 0.99)]
        return len(latencies) / wall, ms[0], ms[1], errors

    return asyncio.run(main())


# --- the profile -----------------------------------------------------------------------------

def profile(pid: int, seconds: float, out: str, go: Callable[[], object]) -> None:
    """py-spy's samples of the server while ``go`` loads it, of the thread that holds the
    GIL (``--gil``: one thread runs Python at a time, so these are the process's Python
    time), summed by thread and by the innermost frame in a module of interest
    (:func:`_where`)."""
    spy = shutil.which("py-spy")
    if spy is None:
        print("  (py-spy is not installed: no profile)")
        return
    rec = subprocess.Popen([spy, "record", "--pid", str(pid), "--duration", str(int(seconds)),
                            "--rate", "200", "--format", "raw", "--threads", "--nonblocking",
                            "--gil", "--output", out], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    go()
    rec.wait()
    where: collections.Counter[str] = collections.Counter()
    threads: collections.Counter[str] = collections.Counter()
    total = 0
    with open(out) as f:
        for line in f:
            stack, _, count = line.rstrip().rpartition(" ")
            frames = stack.split(";")
            n = int(count)
            thread = frames[0]
            if "idle" in stack or _idle(frames):
                continue
            total += n
            name = ("writer" if "writer" in thread else "reader" if "reader" in thread
                    else "event loop" if "MainThread" in thread or "process" in thread
                    else thread)
            threads[name] += n
            where[f"{name}: {_where(frames)}"] += n
    if not total:
        print("  (py-spy recorded nothing: ptrace refused?)")
        return
    print(f"  py-spy, {total:,} samples of the GIL's holder at 200/s (raw stacks in {out}):")
    for name, n in threads.most_common():
        print(f"    {name:<12} {n / total:6.1%} of the samples")
    for name, n in where.most_common(18):
        print(f"      {n / total:6.1%}  {name}")


_IDLE = ("select", "epoll", "_worker (concurrent/futures/thread.py", "wait (threading.py",
         "_run_once", "run_forever")


def _idle(frames: list[str]) -> bool:
    """A sample of a thread waiting (the leaf is a wait: a selector, a queue)."""
    leaf = frames[-1]
    return any(leaf.startswith(k) for k in _IDLE) or leaf.startswith("get (queue.py")


_GROUPS = (("sqlite3", "SQLite (_db.py)", "_db.py"),
           ("engine", "the engine", "service/_engine.py"),
           ("json", "JSON", "json/"),
           ("jsonlines", "JSON (the project's reader)", "jsonlines.py"),
           ("starlette", "Starlette", "starlette/"),
           ("uvicorn", "uvicorn (HTTP)", "uvicorn/"),
           ("asyncio", "asyncio", "asyncio/"),
           ("futures", "threads' hand-over", "concurrent/"),
           ("app", "the service's handlers", "service/_app.py"))


def _where(frames: list[str]) -> str:
    """The innermost frame of a group of :data:`_GROUPS` (a leaf in the standard library
    is charged to the module that called it); the event loop's own frame: uvloop's and
    httptools' C code (sockets, HTTP parsing), which py-spy does not see into."""
    if frames[-1].startswith("Runner.run ("):
        return "uvloop + httptools (C: sockets, HTTP parsing, callbacks)"
    for frame in reversed(frames):
        for _, label, needle in _GROUPS:
            if needle in frame:
                func = frame.split(" (")[0]
                return f"{label}: {func}"
    return frames[-1].split(" (")[0]


# --- the writer alone ---------------------------------------------------------------------

def writer_alone(expressions: int, seconds: float, tmp: str,
                 committer: Literal["process", "thread"],
                 cores: str | None, others: str | None) -> tuple[float, float]:
    """Events/s and µs of CPU an event of ``Service.signal`` in this process (and its
    committer process), batches of 1,000 events checked beforehand, no HTTP: the one
    writer's ceiling with a core to itself, what spreading HTTP and JSON over other processes
    could at best give batches. The garbage collector is set as ``xmlevents serve`` sets it
    (``GC_THRESHOLD``). ``cores``: this process's CPUs, ``others`` its committer's."""
    import gc

    from xmlevents.service import Service
    from xmlevents.service._engine import check_signal
    from xmlevents.service._server import GC_THRESHOLD

    gc.set_threshold(*GC_THRESHOLD)  # as xmlevents serve sets it

    batches = []
    for b in range(max(4, int(seconds * 50))):  # up to 50,000 events a second
        found = events(0, b * 1000, 1000)
        batches.append(([(str(e["type"]), check_signal(e["type"], e["params"], None), None)
                         for e in found], json.dumps(found)))

    async def run() -> tuple[float, float]:
        service = Service(os.path.join(tmp, "alone.db"), committer=committer)
        pin(os.getpid(), cores, others)
        try:
            for i in range(expressions):
                await service.register("anonymous", "text",
                                       f'SEQ(newCD(title=T, artist="artist {i}"), '
                                       f'newMusicDVD(title=T, artist="artist {i}"))', {}, None)
            child = children_cpu(os.getpid())
            n, cpu, start = 0, time.process_time(), time.perf_counter()
            for checked, raw in batches:
                n += await service.signal("anonymous", checked, raw)  # type: ignore[arg-type]
                if time.perf_counter() - start > seconds:
                    break
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            cpu += children_cpu(os.getpid()) - child
            return n / wall, cpu / n * 1e6
        finally:
            await service.stop()

    return asyncio.run(run())


# --- the run ---------------------------------------------------------------------------------

def report(what: str, r: Result, unit: str = "requests", per: int = 1) -> None:
    threads = ", ".join(f"{k} {v:.2f}" for k, v in sorted(r.threads.items(),
                                                          key=lambda kv: -kv[1]))
    rate = f"{r.requests * per:9,.0f} {unit}/s"
    # the server's CPU per request (per event in batches): what the machine's load changes
    # least, and what a core of its own would turn into a rate (1e6 / µs a second)
    cost = r.cores / (r.requests * per) * 1e6 if r.requests else float("nan")
    print(f"  {what:<34} {rate}  {cost:5.0f} µs CPU each  p50 {r.p50:6.1f} ms  "
          f"p99 {r.p99:6.1f} ms  "
          f"server {r.cores:.2f} cores ({threads}), client {r.client:.2f}"
          + (f"  {r.errors} ERRORS" if r.errors else "") + f"  [{load()}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--expressions", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--client", choices=("wrk", "aiohttp"),
                        default="wrk" if shutil.which("wrk") else "aiohttp")
    parser.add_argument("--profile", metavar="FILE", default=None)
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter that runs xmlevents serve (another version's "
                        "venv, to compare two versions in one sitting)")
    parser.add_argument("--writer-only", action="store_true",
                        help="measure the writer alone in this process and print its events/s "
                        "and µs an event as JSON (what the full run starts --python with)")
    parser.add_argument("--committer", choices=("process", "thread"), default=None,
                        help="serve --committer (default: serve's own, process); given, it "
                        "is passed on, so a version without the option cannot be compared")
    parser.add_argument("--compaction", choices=("process", "thread"), default=None,
                        help="serve --compaction (default: serve's own); given, it is "
                        "passed on, so a version without the option cannot be compared")
    parser.add_argument("--pin", metavar="CPU", default=None,
                        help="run the server's process (and the writer alone) on this CPU and "
                        "the load client and the committer process on the others (taskset): "
                        "this machine's two cores differ by a fourth in speed, and a run's "
                        "figures with the core it lands on")
    parser.add_argument("--long", metavar="N", type=int, default=None,
                        help="N batch runs in a row on one server, each with its memory and "
                        "database size (a long-running server)")
    args = parser.parse_args()
    server_cores = client_cores = None
    if args.pin is not None:
        others = sorted(os.sched_getaffinity(0) - {int(args.pin)})
        if not others or int(args.pin) not in os.sched_getaffinity(0):
            parser.error(f"--pin {args.pin}: this machine's CPUs are "
                         f"{sorted(os.sched_getaffinity(0))}, and the client needs another")
        server_cores, client_cores = args.pin, ",".join(map(str, others))
    if args.writer_only:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(writer_alone(args.expressions, args.seconds, tmp,
                                          args.committer or "process", server_cores,
                                          client_cores)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        print(f"server: {args.python}" + ("" if args.pin is None else
                                          f" on CPU {server_cores}, client on {client_cores}"))
        if args.long is not None:
            long_run(args, tmp, server_cores, client_cores)
            return
        # batches on fresh servers first: before any run has filled the client's retention
        # quota (100,000 notifications: the bench's client never acknowledges), which the
        # runs below reach, after which each request discards as many as it stores
        fresh = []
        for _ in range(args.repeat):
            with served(tempfile.mkdtemp(dir=tmp), TOKEN, args.expressions, args.python,
                        serve_args(args)) as (_, base, proc):  # a database of its own
                pin(proc.pid, server_cores, client_cores)
                fresh.append(measure(proc.pid, client(args, tmp, client_cores, base,
                                                      "/events", "POST", 1000,
                                                      args.connections)))
        print(f"{args.expressions:,} expressions registered; client {args.client}, "
              f"{args.connections} connections, best of {args.repeat} runs of "
              f"{args.seconds:g} s; {os.cpu_count()} cores; {load()}")
        report("batches of 1,000 (target 40,000/s)", max(fresh, key=lambda r: r.requests),
               "events", 1000)
        run_on(args, tmp, server_cores, client_cores)


def long_run(args: argparse.Namespace, tmp: str, server_cores: str | None,
             client_cores: str | None) -> None:
    """``--long``: batch runs in a row on one server, each with the server's and the
    committer's resident memory and the database's size after it; the peaks at the end."""
    folder = tempfile.mkdtemp(dir=tmp)
    with served(folder, TOKEN, args.expressions, args.python, serve_args(args)) as (
            _, base, proc):
        pin(proc.pid, server_cores, client_cores)
        print(f"{args.expressions:,} expressions registered; batches of 1,000, "
              f"{args.connections} connections, {args.long} runs of {args.seconds:g} s in a "
              f"row on one server; {os.cpu_count()} cores")
        watch = _ChildMemory(proc.pid)
        for i in range(args.long):
            r = measure(proc.pid, client(args, tmp, client_cores, base, "/events", "POST",
                                         1000, args.connections))
            kids = committers(proc.pid)
            database = sum(os.path.getsize(os.path.join(folder, f))
                           for f in os.listdir(folder) if f.startswith("bench.db"))
            report(f"run {i + 1}", r, "events", 1000)
            print(f"  {'':<34} server {memory(proc.pid, 'VmRSS')} MB, committer "
                  f"{sum(memory(k, 'VmRSS') for k in kids)} MB, database {database >> 20} MB")
        watch.stop()
        committer = committers(proc.pid)
        print(f"  peak resident memory: server {memory(proc.pid, 'VmHWM')} MB, committer "
              f"{sum(memory(k, 'VmHWM') for k in committer)} MB; a compaction's child "
              f"{watch.peak >> 10} MB of its own (copied from the server's pages; "
              f"{watch.seen} children seen)")


class _ChildMemory:
    """Samples, five times a second, the memory the compaction children of ``pid`` hold
    of their own (``Private_Dirty``: the pages copied since the fork, which the server's
    RSS does not count); the peak in kB, and how many children were seen."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._seen = pid, 0, set[int]()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def seen(self) -> int:
        return len(self._seen)

    def _run(self) -> None:
        while not self._done.wait(0.2):
            for child in children(self.pid):
                if _is_committer(child):
                    continue
                self._seen.add(child)
                try:
                    with open(f"/proc/{child}/smaps_rollup") as f:
                        own = sum(int(line.split()[1]) for line in f
                                  if line.startswith("Private_Dirty:"))
                except (FileNotFoundError, ProcessLookupError):
                    continue
                self.peak = max(self.peak, own)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def memory(pid: int, field: str) -> int:
    """``field`` of ``/proc/PID/status`` (``VmRSS``, ``VmHWM``) in MB (0 if it has ended)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) >> 10 for line in f
                         if line.startswith(field + ":")), 0)
    except FileNotFoundError:
        return 0


def serve_args(args: argparse.Namespace) -> list[str]:
    """The options of ``xmlevents serve`` the bench was given (none: the served version's
    defaults)."""
    return ([] if args.committer is None else ["--committer", args.committer]) + (
        [] if args.compaction is None else ["--compaction", args.compaction])


def client(args: argparse.Namespace, tmp: str, cores: str | None, base: str, path: str,
           method: str, batch: int, connections: int
           ) -> Callable[[], tuple[float, float, float, int]]:
    """A run of the load client ``args.client`` (wrk on ``cores``, or aiohttp in this
    process) against ``base + path``."""
    def run() -> tuple[float, float, float, int]:
        if args.client == "wrk":
            return wrk(base + path, method, batch, connections, args.seconds, tmp, cores)
        return aiohttp_load(base + path, method, batch, connections, args.seconds)
    return run


def run_on(args: argparse.Namespace, tmp: str, server_cores: str | None,
           client_cores: str | None) -> None:
    """The runs on one server, in order: the floor, single events, batches at 64 and at 4
    connections; then the writer alone; then ``--profile``'s."""
    with served(tempfile.mkdtemp(dir=tmp), TOKEN, args.expressions, args.python,
                serve_args(args)) as (_, base, proc):
        pin(proc.pid, server_cores, client_cores)

        def go(path: str, method: str, batch: int, connections: int
               ) -> Callable[[], tuple[float, float, float, int]]:
            return client(args, tmp, client_cores, base, path, method, batch, connections)

        def once(run: Callable[[], tuple[float, float, float, int]]) -> Result:
            result = measure(proc.pid, run)
            # the changes a client gave up on still run in the writer: wait for them
            # (GET /graph is a job of the writer) before the next run
            httpx.get(f"{base}/graph", headers=HEADERS, timeout=120)
            return result

        def best(run: Callable[[], tuple[float, float, float, int]]) -> Result:
            return max((once(run) for _ in range(args.repeat)), key=lambda r: r.requests)

        c = args.connections
        report("floor: GET /health", best(go("/health", "GET", 0, c)))
        report("single events (target 3,000/s)", best(go("/events", "POST", 1, c)))
        report("batches, after the runs above",
               best(go("/events", "POST", 1000, c)), "events", 1000)
        report("batches, 4 connections, after",
               best(go("/events", "POST", 1000, 4)), "events", 1000)
        # in a process of the served version's interpreter (--python), on the server's CPU
        alone = subprocess.run([args.python, os.path.abspath(__file__), "--writer-only",
                                "--expressions", str(args.expressions), "--seconds",
                                str(args.seconds), *serve_args(args),
                                *([] if args.pin is None else ["--pin", args.pin])],
                               capture_output=True, text=True, check=True).stdout
        rate, cost = json.loads(alone.splitlines()[-1])
        print(f"  {'the writer alone, in process':<34} {rate:9,.0f} events/s  {cost:5.0f} µs "
              f"CPU each  (Service.signal, batches of 1,000 checked beforehand, no HTTP)  "
              f"[{load()}]")
        if args.profile:
            print("single events:")
            profile(proc.pid, args.seconds, args.profile + ".single",
                    go("/events", "POST", 1, c))
            print("batches of 1,000:")
            profile(proc.pid, args.seconds, args.profile + ".batch",
                    go("/events", "POST", 1000, 4))


if __name__ == "__main__":
    main()
