"""The general earliest-detection check (stream/_universal.py): minimal types of forests, and
the universality of a union of products of hole languages across the stack, on hand-made
grammars whose answers are worked out below."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.stream.reference import check_earliest, detections, grammar_matches, to_tree
from xmlevents.stream import Query, _universal
from xmlevents.stream._notation import parse_grammar
from xmlevents.stream._universal import Types, label_classes

T = "t -> *<t, t> | λ"  # t: every forest


def _types(text: str, names: str) -> list[list[str]]:
    g = parse_grammar(text)
    ys = frozenset(g.variables.index(v) for v in names)
    return sorted(sorted(g.variables[v] for v in s) for s in Types(g).minimal(ys))


def test_label_classes_include_a_name_no_test_passes() -> None:
    """a, b and a fresh name: three classes (the alphabet is infinite)."""
    g = parse_grammar(f"x -> a<t, t> | b<t, t>; {T}; select x")
    assert len(label_classes(g)) == 3


def test_minimal_types_of_disjoint_and_covering_languages() -> None:
    """e = {λ}, n = the non-empty forests: every forest is in exactly one (types {e}, {n});
    with a = the forests starting with an a instead of n, <c/> is in neither (type {})."""
    g = f"e -> λ; n -> *<t, t>; a -> a<t, t>; {T}; select e"
    assert _types(g, "en") == [["e"], ["n"]]
    assert _types(g, "ea") == [[]]


def test_minimal_types_keep_only_the_smallest() -> None:
    """n (non-empty) contains a (starts with an a): <a/> has type {a, n}, <c/> type {n}, λ
    type {}: the only minimal type is {}; with e it is {e} and {n}, {a, n} not minimal."""
    g = f"e -> λ; n -> *<t, t>; a -> a<t, t>; {T}; select e"
    assert _types(g, "an") == [[]]
    assert _types(g, "ean") == [["e"], ["n"]]


def test_minimal_types_look_inside_the_content() -> None:
    """p: some element has a b child (deep); q: no element at the top level has content.
    <a><b/></a> is p but not q; λ is q but not p; every forest is p or q? No: <a><c/></a>
    is neither, so {} is a minimal type."""
    g = (f"p -> *<s, t> | *<t, p>; s -> b<t, t> | *<t, s>; q -> λ | *<e, q>; e -> λ; {T}; "
         "select p")
    assert _types(g, "pq") == [[]]


def test_universal_variables_are_in_every_type() -> None:
    g = f"e -> λ; n -> *<t, t>; {T}; select e"
    assert _types(g, "etn") == [["e", "t"], ["n", "t"]]


# the union of products across the stack, through runs of hand-made grammars

GUESS = f"""
x0 -> r<y, e>
y -> b<t, e> | b<t, n> | *<t, y>
e -> λ
n -> *<t, t>
{T}
select x0
"""


def _found(grammar: str, tree: tuple[str, tuple[object, ...]]) -> list[tuple[int, int]]:
    return detections(Query(grammar, grammar=True), tree)  # type: ignore[arg-type]


def test_two_guesses_on_the_same_hole_decide_at_the_start_tag() -> None:
    """The root r matches iff it has a b child; the grammar guesses at the b whether siblings
    follow it (n) or not (e). At <b> (event 3) every continuation of r's content after the b
    is λ or not: one of the two guesses derives it, though neither variable is universal
    (Theorem 1 alone waits for the end of r, event 5)."""
    tree = ("r", (("a", ()), ("b", ())))
    found = _found(GUESS, tree)
    assert found == [(1, 3)]
    check_earliest(GUESS, tree, found, matches=_matcher(GUESS), names=("r", "a", "b"))


def test_guesses_that_miss_a_forest_decide_nothing_early() -> None:
    """With a (the siblings after the b start with an a) instead of n, a <c/> after the b is
    derived by no guess: r is decided only at its end (event 5), where no sibling came."""
    g = GUESS.replace("b<t, n>", "b<t, a>").replace("n -> *<t, t>", "a -> a<t, t>")
    tree = ("r", (("a", ()), ("b", ())))
    found = _found(g, tree)
    assert found == [(1, 5)]
    check_earliest(g, tree, found, matches=_matcher(g), names=("r", "a", "b"))


PRODUCT = f"""
x0 -> r<y, e>
y -> b<e, e> | b<n, n> | *<t, y>
e -> λ
n -> *<t, t>
{T}
select x0
"""


def test_a_union_of_products_is_not_the_product_of_unions() -> None:
    """r matches iff some b child is empty and last, or has content and is followed by a
    sibling. At <b> each hole alone is covered (b's content is λ or not, so are its right
    siblings), but an empty b followed by a sibling is derived by neither guess: not decided
    at <b> (event 1). Once the b has content (<a>, event 2), only the second guess is left,
    which the c's start tag (event 5) completes."""
    tree = ("r", (("b", (("a", ()),)), ("c", ())))
    found = _found(PRODUCT, tree)
    assert found == [(1, 5)]
    check_earliest(PRODUCT, tree, found, matches=_matcher(PRODUCT), names=("r", "a", "b"))


def test_products_covering_every_combination_decide_at_the_start_tag() -> None:
    """With all four combinations of (content, right siblings) in {λ, non-empty}², the b's
    start tag decides r (event 1), across two levels of the stack."""
    g = PRODUCT.replace("b<e, e> | b<n, n>", "b<e, e> | b<n, n> | b<e, n> | b<n, e>")
    tree = ("r", (("b", (("a", ()),)), ("c", ())))
    found = _found(g, tree)
    assert found == [(1, 1)]
    check_earliest(g, tree, found, matches=_matcher(g), names=("r", "a", "b"))


def test_a_candidate_marked_below_is_decided_by_guesses_above() -> None:
    """A b inside an a child of r is selected (w); the grammar guesses whether siblings
    follow the a (n) or not (e) — the hole right of the a, a level above the b's own. At the
    b's start tag (event 4) both guesses together cover every continuation; Theorem 1 alone
    waits for the end of r (event 7)."""
    g = f"""
    x0 -> r<y, e>
    y -> a<w, e> | a<w, n> | a<c, e> | a<c, n> | *<t, y>
    c -> *<t, c> | *<t, w>
    w -> b<t, t>
    e -> λ
    n -> *<t, t>
    {T}
    select w
    """
    tree = ("r", (("a", (("c", ()), ("b", ()))),))
    found = _found(g, tree)
    assert found == [(4, 4)]
    check_earliest(g, tree, found, matches=_matcher(g), names=("r", "a", "b"))


def _matcher(grammar: str) -> Callable[[list[tuple[str, ...]]], set[int]]:
    """The matches of a grammar on complete documents, by section 3's definition."""
    rules: list[tuple[str, str | None, str | None, str | None]] = []
    for line in grammar.strip().splitlines():
        line = line.strip()
        if not line or line.startswith(("select", "start")):
            continue
        lhs, rhs = (p.strip() for p in line.split("->"))
        for alt in rhs.split("|"):
            alt = alt.strip()
            if alt == "λ":
                rules.append((lhs, None, None, None))
            else:
                label, rest = alt.split("<")
                left, right = (v.strip() for v in rest.rstrip(">").split(","))
                rules.append((lhs, None if label == "*" else label, left, right))
    select = {v for line in grammar.splitlines() if line.strip().startswith("select")
              for v in line.split()[1:]}
    start = rules[0][0]

    def matches(evs: list[tuple[str, ...]]) -> set[int]:
        return grammar_matches(rules, start, select, to_tree(evs))
    return matches


def test_too_many_types_fall_back_to_theorem_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_TYPES the general check is given up for the query: matches are still all
    found, and never early, as Theorem 1 detects them (here at the end of the root)."""
    monkeypatch.setattr(_universal, "MAX_TYPES", 1)
    q = Query("//b[last()][1]/..")
    tree = ("b", (("a", ()), ("b", (("a", ()),)), ("c", ())))
    found = detections(q, tree)  # type: ignore[arg-type]
    assert q.automaton.general_off
    assert found == [(1, 9)]  # the end of the root, not the start of its b child (event 3)
    check_earliest("//b[last()][1]/..", tree, found, optimal=False)  # type: ignore[arg-type]


def test_a_run_learns_that_the_check_is_needed_from_another_run() -> None:
    """Two runs of one query share its automaton: the first to meet a variable that needs
    the general check turns it on for both, so the other, reading only transitions already
    built, still finds the root of //b[last()][1]/.. at its b's start tag."""
    from xmlevents.stream._poa import Run

    q = Query("//b[last()][1]/..")
    first, second = Run(q.automaton), Run(q.automaton)
    assert not q.automaton.risky
    events = [("start", "r"), ("start", "a"), ("end",), ("start", "b"), ("end",), ("end",)]
    for e in events:
        second.start(e[1]) if e[0] == "start" else second.end()
    assert q.automaton.risky
    found = [[f.node for f in (first.start(e[1]) if e[0] == "start" else first.end())]
             for e in events]
    assert found == [[], [], [], [1], [], []]


def test_a_candidate_is_dropped_when_no_continuation_can_select_it() -> None:
    """//x[not(b)]: an x is a candidate from its start tag; at the start tag of a b child
    no continuation can select it any more, so it is no longer held (before, the stacked
    state kept it until the x ended); an x without b is still found at its end."""
    from xmlevents.stream._poa import Run

    run = Run(Query("//x[not(b)]").automaton)
    held = []
    found = []
    for e in [("start", "r"), ("start", "x"), ("start", "b"), ("end",), ("start", "c"),
              ("end",), ("end",), ("start", "x"), ("start", "c"), ("end",), ("end",), ("end",)]:
        got = run.start(e[1]) if e[0] == "start" else run.end()
        held.append(run.counter.held)
        found += [f.node for f in got]
    assert held == [0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0]
    assert found == [5]


# The slowest first evaluations found among 15,000 random queries of the suite's generator
# (tools/stream_slow_queries.py --seed 1): 7 s and over 20 s (the first), 1.4 s and 1.1 s,
# each on three-element documents, before the general check's closures were bounded
# (issue 33, item 5). The first reaches 3,659 variables of its grammar, all expanded.
SLOWEST_FIRST_EVALUATIONS = [
    "//b[b/ancestor-or-self::a[..][. and ../following-sibling::c]][last()]/b[c[descendant-or-"
    "self::*[parent::b]/ancestor-or-self::c[b][a]]]/..",
    "a[ancestor::b[c/ancestor-or-self::b[self::c/preceding-sibling::b][descendant-or-self::*/"
    "descendant::*]][ancestor::*/b and b/b]//descendant::b[not(preceding-sibling::*/following"
    "-sibling::a)][../c and self::a/b]][c[descendant::a[preceding-sibling::b/.][c/self::*]]/*"
    "[ancestor::a/. and parent::a/.]]",
    "ancestor::*[(ancestor-or-self::*/ancestor::a or descendant-or-self::*/ancestor::b) and b]"
    "[not(not(b))]/descendant-or-self::b[following-sibling::a[ancestor::*][a and c/parent::b]]"
    "[not(descendant-or-self::a) and //ancestor::c[c]]",
]


@pytest.mark.parametrize("query", SLOWEST_FIRST_EVALUATIONS)
def test_the_general_check_expands_a_bounded_part_of_the_grammar(
        monkeypatch: pytest.MonkeyPatch, query: str) -> None:
    """The general check's subset construction expands at most MAX_CLOSURE variables of a
    query's grammar (each first expansion computes their productions for every label class);
    past that it is given up for the query, which is then detected as Theorem 1 allows
    (never early). So the productions the grammar computes stay bounded, whatever the query
    (here with a bound of 100, to keep the test cheap; the first query computed 14,373
    before, its whole closure). The matches are lxml's either way."""
    from tests.stream.reference import oracle

    monkeypatch.setattr(_universal, "MAX_CLOSURE", 100)
    q = Query(query)
    for doc in (b"<a><b/><c/></a>", b"<b><b><a><b/></a><c><b/></c></b></b>"):
        assert sorted(m.node for m in q.evaluate(doc)) == sorted(oracle(query, doc))
    types = q.automaton.universality().types
    assert q.automaton.general_off
    assert len(types.expanded) == 100
    computed = len(q.grammar._memo)  # type: ignore[attr-defined]
    assert computed <= len(types.classes) * (100 + 60), computed
    tree = ("b", (("b", (("a", ()), ("c", ()))), ("b", ())))
    check_earliest(query, tree, detections(q, tree), optimal=False)  # type: ignore[arg-type]


def test_the_slowest_query_stops_expanding_at_the_bound() -> None:
    """With the bound as it is, the slowest query (7-20 s before, on this document) expands
    MAX_CLOSURE variables, then gives the check up: its grammar computed productions for
    those and for the few states the input reached, not for the 3,659 variables it reaches."""
    query = SLOWEST_FIRST_EVALUATIONS[0]
    q = Query(query)
    assert [m.node for m in q.evaluate(b"<a><b/><c/></a>")] == []
    types = q.automaton.universality().types
    assert q.automaton.general_off and len(types.expanded) == _universal.MAX_CLOSURE
    computed = len(q.grammar._memo)  # type: ignore[attr-defined]
    assert computed <= len(types.classes) * (_universal.MAX_CLOSURE + 60), computed
