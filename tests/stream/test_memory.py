"""Memory follows the depth and the candidates held, not the document (seed 004, section
5.3): on generated documents of 10^5 and 10^6 elements, //a/b holds one candidate at a time
and the process's peak memory does not grow with the size."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# A generated document, produced while it is read (never whole in memory): groups of
# <a id="i"><b/><c/><x><b>text</b></x></a> under one root, five elements each.
_CHILD = r'''
import json, resource, sys
from xmlevents.stream import Query

class Doc:
    def __init__(self, elements):
        self.groups = elements // 5
        self.i = 0
        self.head = b"<r>"
    def read(self, n=-1):
        if self.head:
            out, self.head = self.head, b""
            return out
        if self.i >= self.groups:
            if self.i == self.groups:
                self.i += 1
                return b"</r>"
            return b""
        parts = []
        stop = min(self.groups, self.i + 2000)
        for i in range(self.i, stop):
            parts.append(b'<a id="%d"><b/><c/><x><b>some text %d</b></x></a>\n' % (i, i))
        self.i = stop
        return b"".join(parts)

query = Query(sys.argv[2])
run = query.evaluate(Doc(5))  # warm the automaton and the imports up
list(run)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
run = query.evaluate(Doc(int(sys.argv[1])))
n = sum(1 for _ in run)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"matches": n, "base_kb": base, "peak_kb": peak,
                  "candidates": run.stats.peak_candidates,
                  "elements": run.stats.elements}))
'''


def _measure(elements: int, query: str) -> dict[str, int]:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(elements), query],
                         capture_output=True, text=True, check=True)
    result: dict[str, int] = json.loads(out.stdout)
    return result


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_document() -> None:
    """10x the elements (10^5 -> 10^6): at most 1.2x the peak memory; one candidate held."""
    small = _measure(100_000, "//a/b")
    large = _measure(1_000_000, "//a/b")
    assert large["elements"] >= 1_000_000
    assert small["matches"] == 20_000 and large["matches"] == 200_000
    assert small["candidates"] == large["candidates"] == 1
    assert large["peak_kb"] <= 1.2 * small["peak_kb"], (small, large)
    # what the run itself added over the interpreter, lxml and the compiled query
    grown_small = small["peak_kb"] - small["base_kb"]
    grown_large = large["peak_kb"] - large["base_kb"]
    assert grown_large <= 1.2 * grown_small + 2048, (small, large)


def test_candidates_held_stay_constant_for_a_child_path() -> None:
    """//a/b decides each b at its start tag: never more than one candidate held."""
    from xmlevents.stream import Query
    doc = b"<r>" + b"<a><b/><c/><x><b/></x></a>" * 2000 + b"</r>"
    run = Query("//a/b").evaluate(doc)
    assert sum(1 for _ in run) == 2000
    assert run.stats.peak_candidates == 1 and run.stats.held == 0


def test_a_negated_root_condition_holds_every_node() -> None:
    """/*[not(d)]//* (Example 1's worst case) must hold every node until the root ends."""
    from xmlevents.stream import Query
    doc = b"<r>" + b"<a><b/></a>" * 500 + b"</r>"
    run = Query("/*[not(d)]//*").evaluate(doc)
    assert sum(1 for _ in run) == 1000
    assert run.stats.peak_candidates == 1000
