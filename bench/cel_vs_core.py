"""Development script (not CI): ``xmlevents cel`` side by side with CORE (``pycer`` on CPython
3.13), on the same streams and queries.

Two parts: a differential check — random streams of A, B, C, D (each event carrying its
position as attribute ``n``), the paper's six queries under ``ALL``, ``WITHIN n EVENTS`` and
``LIMIT``, the complex events of both compared as sets of positions — and the time to process
a uniformly random stream with ``LIMIT 1``, so that both write at most one complex event per
position (all of them are exponentially many for the queries with iteration; CORE:
``send_events`` plus ``get_output``; xmlevents: :func:`evaluate`, consumed). Skips with a
message when python3.13 or pycer is missing.

    python3 bench/cel_vs_core.py [--events 100000] [--checks 30]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from xmlevents.cel import Event, compile_query, evaluate

QUERIES = ["A ; B ; C", "A ; B ; C ; D", "(A OR B OR C) ; D", "A+ ; B", "A+ ; B+ ; C",
           "(A+ ; B)+ ; C"]

# Run by python3.13 with pycer: reads the job (JSON) on stdin, prints results as JSON.
CORE_SIDE = r'''
import json, re, sys, time
import pycer
job = json.load(sys.stdin)
out = []
for query in job["queries"]:
    s = pycer.PyOfflineServer()
    info = s.declare_stream("CREATE STREAM S { " + ", ".join(
        "EVENT %s { n:int }" % t for t in "ABCD") + " }")
    ids = {e.name: e.id for e in info.events_info}
    s.add_query(query)
    events = [pycer.PyEvent(ids[t], [pycer.PyIntValue(i)]) for i, t in enumerate(job["stream"])]
    start = time.perf_counter()
    s.send_events(events)
    text = s.get_output()
    elapsed = time.perf_counter() - start
    matches = []
    if job["positions"]:
        for line in text.splitlines():
            found = sorted(int(v) for v in re.findall(r"attributes: \[(-?\d+) \]", line))
            if found:
                matches.append(found)
    out.append({"seconds": elapsed, "lines": text.count("\n"), "matches": matches})
print(json.dumps(out))
'''


def core_python() -> str | None:
    for candidate in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.13*/bin/python"))):
        check = subprocess.run([candidate, "-c", "import pycer"], capture_output=True)
        if check.returncode == 0:
            return candidate
    return None


def run_core(python: str, stream: str, queries: list[str], positions: bool) -> list[dict]:
    job = json.dumps({"stream": stream, "queries": queries, "positions": positions})
    with tempfile.TemporaryDirectory() as tmp:  # pycer writes logs/ in the working folder
        done = subprocess.run([python, "-c", CORE_SIDE], input=job, capture_output=True,
                              text=True, cwd=tmp, check=True)
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--checks", type=int, default=30)
    args = p.parse_args()
    python = core_python()
    if python is None:
        print("skipped: no python3.13 with pycer (pip install pycer under CPython 3.13)")
        return
    rng = random.Random(3)
    print(f"load average {os.getloadavg()[0]:.2f}; CORE from {python}")
    differ = 0
    for _ in range(args.checks):
        stream = "".join(rng.choice("ABCD") for _ in range(rng.randint(1, 12)))
        window = rng.choice([None, 3, 6])
        within = f" WITHIN {window} EVENTS" if window else ""
        limit = rng.choice(["", " LIMIT 1", " LIMIT 2"])
        queries = [f"SELECT ALL * FROM S WHERE {q}{within}{limit}" for q in QUERIES]
        theirs = run_core(python, stream, queries, True)
        events = [Event(i, t, {"n": i}) for i, t in enumerate(stream)]
        for q, core in zip(queries, theirs, strict=True):
            ours = sorted(list(m.positions) for m in evaluate(compile_query(q), events))
            core_found = sorted(core["matches"])
            if limit:  # which n are kept is each engine's order: compare how many per end
                ours = sorted([m[-1]] for m in ours)
                core_found = sorted([m[-1]] for m in core_found)
            if ours != core_found:
                differ += 1
                if differ <= 5:
                    print(f"  differ: {q!r} on {stream!r}: ours {ours}, CORE {core['matches']}")
    print(f"differential check: {args.checks} streams x {len(QUERIES)} queries (ALL, windows "
          "of 3 and 6 events or none, LIMIT 1 or 2 or none: then the number per end), "
          f"{differ} differing")
    stream = "".join(rng.choice("ABCD") for _ in range(args.events))
    events = [Event(i, t, {"n": i}) for i, t in enumerate(stream)]
    queries = [f"SELECT ALL * FROM S WHERE {q} WITHIN 100 EVENTS LIMIT 1" for q in QUERIES]
    theirs = run_core(python, stream, queries, False)
    print(f"throughput on {args.events:,} uniformly random events, WITHIN 100 EVENTS LIMIT 1 "
          "(at most one complex event written per position, both engines):")
    for q, core in zip(queries, theirs, strict=True):
        query = compile_query(q)
        start = time.perf_counter()
        found = sum(1 for _ in evaluate(query, events))
        ours = time.perf_counter() - start
        print(f"  {q[25:-8]:<38} xmlevents {args.events / ours:>10,.0f} ev/s   CORE "
              f"{args.events / core['seconds']:>10,.0f} ev/s   time ratio "
              f"{ours / core['seconds']:5.1f}x  ({found:,} / {core['lines']:,} complex events)")

if __name__ == "__main__":
    sys.exit(main())
