"""Development script (not CI): CPU time of ``xmlevents cel`` against CORE (``pycer`` on
CPython 3.13) on the same JSON-lines streams, whole process and engine alone (issue 32, item 4).

The streams: ``tests/cel/core_corpus.py``'s generated stream of each query's schema
(``--events`` events, seed 0, noise 0.15), written once as JSON lines; the queries: CORE's
experiments' (``--queries``, names of the corpus; by default stocks, taxis and crypto ones).
Two parts, each side a fresh process, the sides interleaved ``--repeat`` times, the figure
each side's best user + system CPU time (every thread counted):

* ``whole``: the process reading the file and writing its complex events to a file —
  ``xmlevents cel --dialect core QUERY FILE``, and a CORE script that reads each line with
  ``json.loads``, builds ``pycer.PyEvent``s, ``send_events`` and ``get_output`` (the child's
  ``rusage``);
* ``engine``: the events parsed into memory first on both sides (xmlevents: ``read_jsonl``
  and ``from_nanoseconds``, as the command line reads them; CORE: ``pycer.PyEvent``s), then
  only the engine timed (``time.process_time``): xmlevents' ``evaluate`` consumed, CORE's
  ``send_events`` plus ``get_output``.

    python3 bench/cel_whole_process.py [--events 100000] [--repeat 3] [--core-python PATH]
        [--baseline PYTHON] [--queries NAME,...] [--parts whole,engine]

``--baseline``: an interpreter with another checkout of xmlevents importable (a commit before a
change, e.g. through ``PYTHONPATH``), timed in the same rounds, for a before/after in one
sitting.

Exits 2 with a message without a CPython 3.13 with pycer (``$XMLEVENTS_CORE_PYTHON``, else
``~/.pyenv/versions/3.13*``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.cel.core_corpus import SCHEMAS, corpus, declaration, generate

#: stocks, taxis and crypto queries of CORE's experiments: chains of 3 to 9 filtered events,
#: one with an event that never occurs (q6: nothing output), crypto's contiguous pairs
QUERIES = ["stocks/other-q1_any", "stocks/q1_any", "stocks/q3_any", "stocks/q6_any",
           "taxis/q1_any", "taxis/q3_any", "taxis/q6_any", "crypto/q1"]

# Run by the 3.13 interpreter: argv = part, declaration, query, kinds (JSON), time attribute,
# stream file, output. Prints the engine's CPU seconds (part "engine").
CORE_SIDE = r'''
import json, sys, time
import pycer
part, declaration, query, kinds, time_attr, path, out = sys.argv[1:]
kinds = json.loads(kinds)
server = pycer.PyOfflineServer()
ids = {e.name: e.id for e in server.declare_stream(declaration).events_info}
server.add_query(query)
make = {"int": pycer.PyIntValue, "double": pycer.PyDoubleValue, "string": pycer.PyStringValue}
batch = []
with open(path) as f:
    for line in f:
        obj = json.loads(line)
        t = obj["type"]
        values = [make[k](obj[a]) for a, k in kinds[t]]
        if time_attr:
            batch.append(pycer.PyEvent(ids[t], values, pycer.PyIntValue(obj[time_attr])))
        else:
            batch.append(pycer.PyEvent(ids[t], values))
start = time.process_time()
server.send_events(batch)
text = server.get_output()
cpu = time.process_time() - start
with open(out, "w") as f:
    f.write(text)
print(cpu)
'''

# Run by the interpreter under test: argv = query, stream file. Prints the engine's CPU
# seconds and the number of complex events.
OURS_ENGINE = r'''
import sys, time
from xmlevents.cel import check_automaton, compile_query, evaluate, from_nanoseconds, read_jsonl
text, path = sys.argv[1:]
query = compile_query(text, dialect="core")
check_automaton(query.formula, text)
with open(path, encoding="utf-8") as f:
    events = [from_nanoseconds(e) for e in read_jsonl(f)]
start = time.process_time()
found = sum(1 for _ in evaluate(query, events))
cpu = time.process_time() - start
print(cpu, found)
'''


#: The children run in Python's default environment: without PYTHONUNBUFFERED (a write
#: call a complex event) and PYTHONDONTWRITEBYTECODE (every module compiled at every start),
#: which a shell may set and an installed package's user does not have.
ENV = {k: v for k, v in os.environ.items()
       if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}


def cpu(args: list[str], cwd: str) -> float:
    """User + system CPU seconds of a child process (all its threads)."""
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"cel_whole_process: {args[:3]} failed ({proc.returncode})")
    return usage.ru_utime + usage.ru_stime


def reported(args: list[str], cwd: str) -> list[str]:
    """What a child printed last (its own timing)."""
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=ENV)
    if done.returncode != 0:
        sys.exit(f"cel_whole_process: {args[:3]} failed ({done.returncode}): "
                 f"{done.stderr.strip()[-400:]}")
    return done.stdout.strip().splitlines()[-1].split()


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def figures(name: str, times: list[float]) -> str:
    return f"{name} {min(times):6.3f} s ({', '.join(f'{s:.3f}' for s in times)})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--core-python", default=os.environ.get("XMLEVENTS_CORE_PYTHON"))
    p.add_argument("--baseline", help="an interpreter with another xmlevents, timed alike")
    p.add_argument("--queries", default=",".join(QUERIES),
                   help="names of tests/cel/core_corpus.py's queries, comma-separated")
    p.add_argument("--parts", default="whole,engine", help="whole, engine or both")
    args = p.parse_args()
    core = args.core_python or next(iter(sorted(
        Path.home().glob(".pyenv/versions/3.13*/bin/python"))), None)
    if core is None:
        print("skipped: no CPython 3.13 with pycer (--core-python or $XMLEVENTS_CORE_PYTHON)")
        return 2
    by_name = {q.name: q for q in corpus()}
    unknown = [n for n in args.queries.split(",") if n not in by_name]
    if unknown:
        sys.exit(f"cel_whole_process: no query {', '.join(unknown)} in the corpus")
    parts = args.parts.split(",")
    print(f"load average {load()}; {args.events:,} events a stream; CORE from {core}")
    ratios: dict[str, list[float]] = {part: [] for part in parts}
    first = True
    with tempfile.TemporaryDirectory(prefix="cel-whole-") as tmp:  # pycer writes logs/ here
        ours_out, core_out = os.path.join(tmp, "ours.jsonl"), os.path.join(tmp, "core.txt")
        streams: dict[str, str] = {}
        for name in args.queries.split(","):
            query = by_name[name]
            types, time_attr = SCHEMAS[query.schema]
            if query.schema not in streams:
                path = streams[query.schema] = os.path.join(tmp, f"{query.schema}.jsonl")
                with open(path, "w") as f:
                    for g in generate(query.schema, args.events, random.Random(0), 0.15):
                        f.write(json.dumps({"type": g.type, **g.attrs}) + "\n")
            path = streams[query.schema]
            kinds = {t: [(a, "int" if k == "primary_time" else k) for a, k in attrs]
                     for t, attrs in types.items()}
            text, schema = query.text, declaration(query.schema)

            # xmlevents cel, by the interpreter put first; CORE, the part put first
            cel = ["sh", "-c", '"$0" -m xmlevents cel --dialect core "$1" "$2" > "$3"',
                   text, path, ours_out]
            core_cmd = [core, "-c", CORE_SIDE, schema, text, json.dumps(kinds),
                        time_attr or "", path, core_out]
            engine = [sys.executable, "-c", OURS_ENGINE, text, path]
            print(f"{name}: {' '.join(query.text.split())[:110]}")
            for part in parts:
                ours: list[float] = []
                theirs: list[float] = []
                base: list[float] = []
                found = "?"
                if first:  # a run of each side, untimed: it writes the bytecode
                    first = False
                    for python in [sys.executable, *([args.baseline] if args.baseline else [])]:
                        cpu([*cel[:3], python, *cel[3:]], tmp)
                for _ in range(args.repeat):
                    if part == "whole":
                        if args.baseline:
                            base.append(cpu([*cel[:3], args.baseline, *cel[3:]], tmp))
                        ours.append(cpu([*cel[:3], sys.executable, *cel[3:]], tmp))
                        theirs.append(cpu([*core_cmd[:3], "whole", *core_cmd[3:]], tmp))
                        with open(ours_out) as f:
                            found = str(sum(1 for _ in f))
                    else:
                        if args.baseline:
                            base.append(float(reported([args.baseline, *engine[1:]], tmp)[0]))
                        seconds, found = reported(engine, tmp)
                        ours.append(float(seconds))
                        theirs.append(float(reported(
                            [*core_cmd[:3], "engine", *core_cmd[3:]], tmp)[0]))
                with open(core_out) as f:
                    core_found = sum(1 for line in f if line.startswith("["))
                ratio = min(ours) / min(theirs)
                ratios[part].append(ratio)
                line = (f"  {part:<6} {figures('xmlevents', ours)}  "
                        f"{figures('CORE', theirs)}  ratio {ratio:.2f}x")
                if base:
                    line += (f"  {figures('baseline', base)} ratio "
                             f"{min(base) / min(theirs):.2f}x")
                print(f"{line}  ({found} / {core_found} complex events; load {load()})")
    for part, found_ratios in ratios.items():
        if found_ratios:
            print(f"{part}: xmlevents / CORE {min(found_ratios):.2f}x to "
                  f"{max(found_ratios):.2f}x over {len(found_ratios)} queries")
    print(f"load average {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
