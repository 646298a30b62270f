"""Memory follows the depth and the candidates held, not the document (seed 004, section
5.3): on generated documents of 10^5 and 10^6 elements, //a/b holds one candidate at a time
and the process's peak memory does not grow with the size."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


_row = st.tuples(st.integers(1, 10**6), st.booleans(), st.integers(1, 9),
                 st.dictionaries(st.sampled_from("xyz"), st.text(max_size=3), max_size=2))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["start", "end", "text"]), st.integers(1, 99),
                          st.lists(_row, max_size=30, unique_by=lambda r: r[0])),
                max_size=5),
       st.integers(1, 8))
def test_a_large_report_is_handed_out_a_slice_at_a_time(
        reports: list[tuple[str, int, list[tuple[int, bool, int, dict[str, str]]]]],
        slice_size: int) -> None:
    """The matches of a run's reports, made a slice at a time (issue 33, item 4: a report can
    hold every line of a document): no slice over ``SLICE``, together the matches made at
    once, in the same order (a report's nodes are distinct pre-order indexes) — held rows
    (path less position, position) with their paths made — and the run's reports taken at
    once."""
    import xmlevents.stream._query as q
    from xmlevents.stream._match import matches_of

    def rows(found: list[tuple[int, bool, int, dict[str, str]]]) -> list[tuple[Any, ...]]:
        return [(n, "/r[1]/{u}l", pos, attrs) if held else (n, f"/r[1]/{{u}}l[{pos}]", attrs)
                for n, held, pos, attrs in found]

    expected = matches_of([(e, at, rows(found)) for e, at, found in reports])
    given_reports = [(e, at, rows(found)) for e, at, found in reports]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(q, "SLICE", slice_size)
        slices = list(q.Evaluation._out(given_reports))  # type: ignore[arg-type]
    assert given_reports == []
    assert all(len(s) <= slice_size for s in slices)
    assert [m for s in slices for m in s] == expected
