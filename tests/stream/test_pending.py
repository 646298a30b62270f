"""Work per event independent of the candidates pending (issue 33, item 4): candidates that
nothing can tell apart any more are merged into one group, and candidate sets are merged as
bags of chunks (Bentley and Saxe's logarithmic method), not copied whole, so a query holding n
candidates runs in time near-linear in n, not quadratic."""

from __future__ import annotations

import importlib.util
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from lxml import etree

from tests.strategies import examples
from tests.stream.reference import (
    check_earliest,
    compiles,
    detections,
    events,
    oracle,
    queries,
    to_xml,
    trees,
)
from xmlevents.stream import Query, _compiled, _poa
from xmlevents.stream._poa import SMALL, Bag, Candidate, Counter, _merge


def _candidates(n: int) -> list[Candidate]:
    counter = Counter()
    return [Candidate(i, f"/r[1]/a[{i}]", {}, counter) for i in range(1, n + 1)]


def test_adding_candidates_one_by_one_copies_each_a_logarithmic_number_of_times() -> None:
    """Chunks stay at most half of the previous one's size (so at most log2(n) + 1 of them),
    every candidate is held once, and the largest chunk, once past ``SMALL`` (below which a
    union is one frozenset made in C), is rebuilt only when it doubles."""
    cands = _candidates(5000)
    bag = _merge([frozenset(cands[:1])], cands[1])
    largest_changes = 0
    largest = None
    for c in cands[2:]:
        bag = _merge([bag], c)
        chunks = bag.chunks if isinstance(bag, Bag) else (bag,)
        assert all(len(a) >= 2 * len(b) for a, b in pairwise(chunks))
        if chunks[0] is not largest and len(chunks[0]) > SMALL:
            largest, largest_changes = chunks[0], largest_changes + 1
    assert sorted(c.node for c in bag) == list(range(1, 5001))
    assert len(bag.chunks if isinstance(bag, Bag) else (bag,)) <= 13
    assert largest_changes <= 7  # log2(5000 / 64): past SMALL each rebuild doubles it


def test_merging_bags_that_share_chunks_keeps_each_chunk_once() -> None:
    """Sets routed apart and merged again share their chunks: each chunk is taken once, and
    every candidate is found."""
    cands = _candidates(100)
    base = frozenset(cands[:64])
    left = _merge([base], cands[64])
    right = _merge([base], cands[65])
    both = _merge([left, right], None)
    assert {c.node for c in both} == set(range(1, 67))
    chunks = both.chunks if isinstance(both, Bag) else (both,)
    assert sum(len(ch) for ch in chunks) <= 66 + 1  # the shared 64 counted once


@pytest.mark.parametrize(("query", "doc"), [
    ("/*[not(nosuch)]//*", lambda n: b"<r>" + b"<a><b/><c/></a>" * (n // 3) + b"</r>"),
    ("//a[following-sibling::z]", lambda n: b"<r>" + b"<a/>" * n + b"<z/></r>"),
])
def test_a_query_holding_every_candidate_matches_them_all(query: str, doc: object) -> None:
    """The probes of the issue: every element (every a) is held until the end, then each is
    reported once."""
    found = [m.node for m in Query(query).evaluate(doc(3000))]  # type: ignore[operator]
    assert len(found) == len(set(found)) == 3000


@pytest.mark.slow
@pytest.mark.parametrize(("query", "doc"), [
    ("/*[not(nosuch)]//*", lambda n: b"<r>" + b"<a><b/><c/></a>" * (n // 3) + b"</r>"),
    ("//a[following-sibling::z]", lambda n: b"<r>" + b"<a/>" * n + b"<z/></r>"),
])
def test_time_grows_linearly_with_the_candidates_held(query: str, doc: object) -> None:
    """Four times the candidates take well under sixteen times as long (quadratic: 16; the
    bound, 8, leaves room for a shared machine; it was 14-20 before the bags)."""
    def seconds(n: int) -> float:
        data = doc(n)  # type: ignore[operator]
        best = float("inf")
        for _ in range(3):
            t = time.process_time()
            for _m in Query(query).evaluate(data):
                pass
            best = min(best, time.process_time() - t)
        return best
    small, large = seconds(15_000), seconds(60_000)
    assert large < 8 * small, (small, large)


def test_reported_candidates_do_not_stay_in_the_sets() -> None:
    """Candidates reported while others wait stay in the sets only until they outnumber
    those held (then the sets are compacted): the sets never hold more than the candidates
    held plus the slack, however long the document (``//*[not(following-sibling::q)]``
    reports the inner elements at each end tag while the root's children wait)."""
    from xmlevents.stream import Automaton, Run
    from xmlevents.stream._poa import SLACK

    run = Run(Automaton(Query("//*[not(following-sibling::q)]").grammar))
    run.start("r")
    most = 0
    for _ in range(5000):
        run.start("a")
        run.start("b")
        run.end()
        run.end()
        _shape, sets, stack = run._view()
        kept: set[int] = set()
        for level in [*(f[1] for f in stack), sets]:
            for p in level or ():
                kept.update(id(c) for c in p)
        most = max(most, len(kept) - run.counter.held)
    assert run.counter.held == 5000  # the root's children, until the root ends
    assert most <= SLACK + 2
    assert len(run.end()) == 5000  # the root itself was decided at its start tag


def test_candidates_waiting_for_an_ancestor_are_held_as_one_group() -> None:
    """Where every line waits for the root's end (``/*[not(nosuch)]//l``), the lines marked
    in one element's content are merged into one group (``Candidate.more``): the sets of the
    stack hold one object however many lines wait, so an event moves no more than that
    (issue 33, item 4: the bags of chunks held every line, copied a logarithmic number of
    times each). Rejecting the group (a ``nosuch`` child of the root) drops every line."""
    from xmlevents.stream import Automaton, Run

    run = Run(Automaton(Query("/*[not(nosuch)]//l").grammar))
    run.start("TEI")
    most = 0
    for _ in range(200):
        run.start("lg")
        for _ in range(5):
            run.start("l")
            run.start("p")
            run.end()
            run.end()
            _shape, sets, stack = run._view()
            most = max(most, sum(len(p) for level in [*(f[1] for f in stack), sets]
                                 for p in level or ()))
        run.end()
    assert run.counter.held == 1000
    assert most <= 2
    assert run.start("nosuch") == ()
    assert run.counter.held == 0
    run.end()
    assert run.end() == ()


def test_a_group_is_reported_whole_and_once() -> None:
    """The root's end reports every line of the group, each once, in document order."""
    data = b"<TEI><lg>" + b"<l><p/></l>" * 50 + b"</lg>" + b"<note><l/></note>" * 20 + b"</TEI>"
    found = [m.node for m in Query("/*[not(nosuch)]//l").evaluate(data)]
    assert found == sorted(oracle("/*[not(nosuch)]//l", data)) and len(found) == 70


@settings(max_examples=examples(80), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(trees(max_depth=3, alphabet=("a", "b", "c"), texts=True), queries(depth=2))
def test_compacting_after_every_report_changes_nothing(monkeypatch: pytest.MonkeyPatch,
                                                       tree: object, query: str) -> None:
    """With no slack, the sets are compacted after every report: the matches are still
    lxml's, and each is still detected at its earliest location (a frame compacted to
    nothing under a view that counted on its candidates once broke the general check)."""
    assume(compiles(query))
    monkeypatch.setattr(_poa, "SLACK", -1)
    found = [m.node for m in Query(query).evaluate(to_xml(tree))]  # type: ignore[arg-type]
    assert sorted(found) == sorted(oracle(query, to_xml(tree)))  # type: ignore[arg-type]
    check_earliest(query, tree, detections(Query(query), tree))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["feed.atom", "tei.xml", "docbook.xml"])
@pytest.mark.parametrize("query", ["//*[last()]", "//*[not(following-sibling::*)]/..",
                                   "//*[1][last()]"])
def test_compacting_on_the_corpus_changes_nothing(monkeypatch: pytest.MonkeyPatch, name: str,
                                                  query: str) -> None:
    """The same on the real-shaped files, where a compaction once emptied a frame whose
    candidates the general check's view still named (``//*[last()]`` on the Atom feed)."""
    data = (Path(__file__).parent / "corpus" / name).read_bytes()
    ns = {"p": etree.QName(etree.fromstring(data)).namespace or ""}
    monkeypatch.setattr(_poa, "SLACK", -1)
    found = sorted(m.node for m in Query(query, namespaces=ns).evaluate(data))
    assert found == sorted(oracle(query, data, ns))


def _poem(n: int) -> bytes:
    """A TEI-like document in small: ``n`` poems of two line groups of lines, a note."""
    line = b'<l n="1">arma <persName>Aeneas</persName>,</l>'
    poem = b"<div><head>h</head><lg>" + line * 3 + b"</lg><lg>" + line * 3 + \
        b"</lg><note>cf. <ref/></note></div>"
    return b"<TEI><text><body>" + poem * n + b"</body></text></TEI>"


def _detector_calls(patch: pytest.MonkeyPatch, method: str, query: str,
                    documents: list[bytes]) -> list[int]:
    """The calls of the general check's ``method`` while ``query`` evaluates each of
    ``documents``, whose matches must be lxml's."""
    from xmlevents.stream._universal import Detector

    calls = 0
    real = getattr(Detector, method)

    def counted(self: Detector, *args: object) -> object:
        nonlocal calls
        calls += 1
        return real(self, *args)

    patch.setattr(Detector, method, counted)
    counts = []
    for data in documents:
        calls = 0
        found = [m.node for m in Query(query).evaluate(data)]
        assert sorted(found) == sorted(oracle(query, data))
        counts.append(calls)
    return counts


@pytest.mark.parametrize("query", ["/*[not(nosuch)]//l", "/*[not(nosuch)]//*"])
def test_the_general_check_is_not_run_per_event_where_it_can_find_nothing(
        monkeypatch: pytest.MonkeyPatch, query: str) -> None:
    """Where every line waits for the root's end (the TEI-like probe of the benchmark), the
    general check could decide nothing at any shape, whatever the sets hold: it runs a
    bounded number of times (as the shapes and views are first met), not at every event
    while candidates are pending (issue 33, item 4: a fifth of that file's time)."""
    counts = _detector_calls(monkeypatch, "check", query, [_poem(n) for n in (10, 40)])
    assert counts[1] == counts[0] < 40, counts


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(trees(max_depth=3, alphabet=("a", "b", "c"), texts=True), queries(depth=2))
def test_flagged_universal_entries_never_hold_candidates(tree: object, query: str) -> None:
    """What the general check's skip rests on (``Universality.holding``): after every event,
    an entry whose ``b`` is true and variable universal holds no pending candidate (Theorem 1
    reports them at the transition that makes them)."""
    from xmlevents.stream import Automaton, Run
    from xmlevents.stream._source import plain_events

    assume(compiles(query))
    q = Query(query)
    run = Run(Automaton(q.grammar))
    u = run.automaton.universality()
    for event, name, _attrs in plain_events(events(tree)):  # type: ignore[arg-type]
        if event == "start":
            run.start(name)
        elif event == "end":
            run.end()
        elif q.grammar.texts:
            run.text()
        shape, sets, stack = run._view()
        if sets is None or not stack:
            continue
        for k, s in enumerate(sets):
            if k not in u.holding(shape):
                assert not any(not c.reported for c in s), (query, k, shape.entries)


def test_lines_waiting_for_an_ancestor_join_its_group_at_their_start_tag() -> None:
    """A line whose fate is its entry's (``_Enter.hold``: ``/*[not(nosuch)]//l``) joins the
    group of the lines before it in the same content at its own start tag, as a row: its
    frame holds no candidate, and its end tag passes the sets on as they are (issue 33,
    item 4: the candidate, route and view per held line were most of the difference from
    ``//l``). The first line of each line group has no group to join yet."""
    from xmlevents.stream import Automaton, Run

    run = Run(Automaton(Query("/*[not(nosuch)]//l").grammar))
    run.start("TEI")
    for g in range(3):
        run.start("lg")
        for k in range(4):
            run.start("l", {"n": str(k)})
            stack = run._view()[2]
            frame = stack[-1]
            assert (frame[2] is None) == (k > 0) and bool(frame[7]) == (k > 0)
            run.start("p")
            run.end()
            run.end()
            _shape, after, stack = run._view()
            if k > 0:
                assert after is frame[1]  # passed on as it was
            (group,) = [c for p in after or () for c in p]
            assert len(group.rows or ()) == k
            assert run.counter.held == 4 * g + k + 1
        run.end()
    found = sorted(run.end())  # one event's matches (Evaluation sorts them by node)
    assert [m.node for m in found] == sorted(oracle(
        "/*[not(nosuch)]//l", b"<TEI>" + (b"<lg>" + b'<l n="0"><p/></l>' * 4 + b"</lg>") * 3
        + b"</TEI>"))
    assert [m.attributes for m in found][:2] == [{"n": "0"}, {"n": "1"}]
    assert run.counter.held == 0


def test_a_held_line_is_rejected_with_its_group() -> None:
    """A ``nosuch`` child of the root rejects the held rows with their group."""
    data = b"<TEI><lg>" + b"<l><p/></l>" * 5 + b"</lg><nosuch/></TEI>"
    evaluation = Query("/*[not(nosuch)]//l").evaluate(data)
    assert list(evaluation) == []
    assert evaluation.stats.held == 0 and evaluation.stats.peak_candidates == 5


#: queries whose lines (``//*``, ``//c``, ...) wait for an ancestor's condition and take the
#: held path of ``_Enter.hold`` on the trees below
HELD = ["/*[not(c)]//*", "//a[not(b)]//c", "//b[not(following-sibling::c)]//a",
        "/*[not(c)]//a//b", "//a[not(b)]//*"]


@pytest.mark.parametrize("query", HELD)
def test_the_held_path_is_taken(query: str) -> None:
    """Each query of :data:`HELD` holds some element in its entry's group on this
    document, and some by the last held element's case (so that the property below tests
    both paths)."""
    Automaton, Run = _from_source()

    def el(label: str, *children: object) -> tuple[str, tuple[object, ...]]:
        return (label, children)

    doc = el("r", el("a", el("a", el("c"), el("b", el("a"), el("c", el("a"))), el("a"),
                             el("a"))),
             el("b", *[el("a")] * 5), el("a", el("c")),
             el("a", el("c"), el("c"), el("a", el("b"), el("b"))),
             el("a", *[el("c")] * 5), el("a", *[el("b")] * 5))
    run = Run(Automaton(Query(query).grammar))
    held = cased = 0
    for event in events(doc):  # type: ignore[arg-type]
        if event[0] == "start":
            case = _hold_case(run)
            run.start(event[1])
            held += bool(run._view()[2][-1][7])
            # the next line of the same group joined by the last one's case (see below)
            cased += case is not None and _hold_case(run) is case and \
                bool(run._view()[2][-1][7])
        elif event[0] == "end":
            run.end()
    assert held > 0 and cased > 0


def _from_source() -> tuple[Any, Any]:
    """``Automaton`` and ``Run`` as their Python source makes them: :func:`_hold_case` reads
    the handlers' closure cells, which a compiled ``_poa`` has not (``stream/_compiled.py``);
    the source is then loaded again as a module of its own."""
    if not _compiled.compiled(_poa):
        return _poa.Automaton, _poa.Run
    name = "xmlevents.stream._poa_source"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(
            name, Path(_poa.__file__).with_name("_poa.py"))
        assert spec is not None and spec.loader is not None
        module = sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.Automaton, module.Run


def _hold_case(run: object) -> object:
    """The run's last held line's case (``hold_case`` in ``Run._machine``), read from the
    start handler's closure."""
    start = run.start_event  # type: ignore[attr-defined]
    names = start.__code__.co_freevars
    return start.__closure__[names.index("hold_case")].cell_contents


def test_the_next_held_line_joins_by_the_last_ones_case(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """After a held line that needed no check at its start tag, the next line in the same
    state, under the same parent and view, joins the same group with one test of that case
    (``hold_case``: issue 33, item 4), and only then: a line after another element's
    content, or in another line group, is tested as before; the matches and the general
    check's calls are as they were."""
    Automaton, Run = _from_source()

    run = Run(Automaton(Query("/*[not(nosuch)]//l").grammar))
    run.start("TEI")
    run.start("lg")
    seen = []
    for k in range(5):
        run.start("l", {"n": str(k)})
        seen.append(_hold_case(run))
        run.end()
    # a new automaton: the second line runs the check once (its shape then quiet), the
    # third needs none and leaves its case, by which the others join
    case = seen[2]
    assert seen[:2] == [None, None] and case is not None and seen[3:] == [case] * 2
    (group,) = [c for p in run._view()[1] or () for c in p]
    assert case[4] is group and len(group.rows or ()) == 4  # type: ignore[index]
    run.start("x")  # its end routes the sets anew: the case no longer applies
    run.start("l")
    run.end()
    run.end()
    run.start("l")
    assert _hold_case(run) is not case and bool(run._view()[2][-1][7])
    run.end()
    run.end()
    run.start("lg")
    run.start("l")
    run.end()
    run.start("l")
    assert bool(run._view()[2][-1][7])
    run.end()
    run.end()
    assert sorted(m.node for m in run.end()) == sorted(oracle(
        "/*[not(nosuch)]//l", b"<TEI><lg>" + b"<l/>" * 5 + b"<x><l/></x><l/></lg>"
        b"<lg><l/><l/></lg></TEI>"))
    # the general check as before: a bounded number of calls, whatever the lines
    counts = _detector_calls(monkeypatch, "check", "/*[not(nosuch)]//l",
                             [_poem(n) for n in (10, 40)])
    assert counts[1] == counts[0] < 40, counts


@settings(max_examples=examples(80), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(trees(max_depth=4, alphabet=("a", "b", "c"), texts=True), st.sampled_from(HELD))
def test_held_candidates_are_lxmls_matches_at_their_earliest_detection(
        tree: object, query: str) -> None:
    """Candidates held in their entry's group are reported as lxml's matches, each at its
    earliest detection location (the brute-force check), and rejected with the group."""
    found = [m.node for m in Query(query).evaluate(to_xml(tree))]  # type: ignore[arg-type]
    assert sorted(found) == sorted(oracle(query, to_xml(tree)))  # type: ignore[arg-type]
    check_earliest(query, tree, detections(Query(query), tree))  # type: ignore[arg-type]


def test_the_views_are_kept_when_the_check_turns_on_at_the_root(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The general check turns on while the root's start tag is read (the first hole
    variable that needs it is met there): the views of the stack are made once, and each
    frame keeps its parent's, so that the end tags do not make them again (a frame pushed
    just then once kept none, and every end tag of the root's children ran the check)."""
    counts = _detector_calls(monkeypatch, "views", "//*[not(following-sibling::q)]",
                             [b"<r>" + b"<a><b/></a>" * n + b"</r>" for n in (20, 200)])
    assert counts[0] == counts[1] <= 2, counts
