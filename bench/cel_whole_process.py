"""Development script (not CI): whole-process CPU time of ``xmlevents cel`` against CORE
(``pycer`` on CPython 3.13) on the same JSON-lines stream (issue 32, item 4).

The stream: ``tests/cel/core_corpus.py``'s generated stocks stream (``--events`` events, seed 0,
noise 0.15), written once as JSON lines; the query: CORE's ``stocks/other-q1_any`` (a chain of
four, filters on names, ``WITHIN 10000 [stock_time]``). Each side is a fresh process reading
the file and writing its complex events to a file: ``xmlevents cel --dialect core QUERY FILE``,
and a CORE script that reads each line with ``json.loads``, builds ``pycer.PyEvent``s,
``send_events`` and ``get_output``. The sides run interleaved, ``--repeat`` times; the figure is
each side's best user + system CPU time (the child's ``rusage``, every thread counted).

    python3 bench/cel_whole_process.py [--events 100000] [--repeat 3] [--core-python PATH]
        [--baseline PYTHON]

``--baseline``: an interpreter with another checkout of xmlevents installed (a commit before a
change), timed in the same rounds, for a before/after in one sitting.

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

QUERY = "stocks/other-q1_any"

# Run by the 3.13 interpreter: argv = declaration, query, kinds (JSON), stream file, output.
CORE_SIDE = r'''
import json, sys
import pycer
declaration, query, kinds, path, out = sys.argv[1:]
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
        batch.append(pycer.PyEvent(ids[t], [make[k](obj[a]) for a, k in kinds[t]]))
server.send_events(batch)
with open(out, "w") as f:
    f.write(server.get_output())
'''


def cpu(args: list[str], cwd: str) -> float:
    """User + system CPU seconds of a child process (all its threads)."""
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"cel_whole_process: {args[:3]} failed ({proc.returncode})")
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--core-python", default=os.environ.get("XMLEVENTS_CORE_PYTHON"))
    p.add_argument("--baseline", help="an interpreter with another xmlevents, timed alike")
    args = p.parse_args()
    core = args.core_python or next(iter(sorted(
        Path.home().glob(".pyenv/versions/3.13*/bin/python"))), None)
    if core is None:
        print("skipped: no CPython 3.13 with pycer (--core-python or $XMLEVENTS_CORE_PYTHON)")
        return 2
    query = next(q for q in corpus() if q.name == QUERY)
    types, _ = SCHEMAS[query.schema]
    kinds = {t: [(a, "int" if k == "primary_time" else k) for a, k in attrs]
             for t, attrs in types.items()}
    stream = generate(query.schema, args.events, random.Random(0), 0.15)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{args.events:,} events, {QUERY}; CORE from {core}")
    with tempfile.TemporaryDirectory(prefix="cel-whole-") as tmp:  # pycer writes logs/ here
        path = os.path.join(tmp, "stream.jsonl")
        with open(path, "w") as f:
            for g in stream:
                f.write(json.dumps({"type": g.type, **g.attrs}) + "\n")
        ours_out, core_out = os.path.join(tmp, "ours.jsonl"), os.path.join(tmp, "core.txt")
        def cel(python: str) -> list[str]:
            return ["sh", "-c", '"$0" -m xmlevents cel --dialect core "$1" "$2" > "$3"',
                    python, query.text, path, ours_out]

        ours_cmd = cel(sys.executable)
        core_cmd = [core, "-c", CORE_SIDE, declaration(query.schema), query.text,
                    json.dumps(kinds), path, core_out]
        ours, theirs, base = [], [], []
        for _ in range(args.repeat):
            if args.baseline:
                base.append(cpu(cel(args.baseline), tmp))
            ours.append(cpu(ours_cmd, tmp))
            theirs.append(cpu(core_cmd, tmp))
        with open(ours_out) as f:
            found = sum(1 for _ in f)
        with open(core_out) as f:
            core_found = sum(1 for line in f if line.startswith("["))
    print(f"  xmlevents cel  best {min(ours):6.2f} s CPU ({', '.join(f'{s:.2f}' for s in ours)})"
          f"  {args.events / min(ours):>9,.0f} events/s  {found:,} complex events")
    if base:
        print(f"  baseline       best {min(base):6.2f} s CPU "
              f"({', '.join(f'{s:.2f}' for s in base)})  {args.events / min(base):>9,.0f} "
              f"events/s  ratio to CORE {min(base) / min(theirs):.2f}x")
    print(f"  CORE           best {min(theirs):6.2f} s CPU "
          f"({', '.join(f'{s:.2f}' for s in theirs)})  {args.events / min(theirs):>9,.0f} "
          f"events/s  {core_found:,} complex events")
    print(f"  ratio xmlevents / CORE: {min(ours) / min(theirs):.2f}x; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
