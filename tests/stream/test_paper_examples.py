"""The paper's examples on the reconstructed Figure 1 (seed 004, Examples 1-4)."""

from __future__ import annotations

from tests.stream.reference import FIGURE_1, events, to_xml
from xmlevents.stream import (
    Automaton,
    Query,
    Run,
    binary_locations,
    dewey_to_binary,
    matches,
    parse_grammar,
)

DOC = to_xml(FIGURE_1)
# Pre-order indexes of Figure 1's nodes (Example 1's locations): r=1 a=11 b=111 c=112 b=12
# d=121 a=13 b=131 c=132.
NODE = {"1": 1, "11": 2, "111": 3, "112": 4, "12": 5, "121": 6, "13": 7, "131": 8, "132": 9}

EXAMPLE_3 = """
x_T -> *<x_T, x_T>   # (1)
x_T -> λ             # (2)
x_c -> c<x_T, x_T>   # (3)
x_b -> b<x_T, x_c>   # (4)
x_0 -> a<x_b, x_T>   # (5)
x_0 -> *<x_0, x_T>   # (6)
x_0 -> *<x_T, x_0>   # (7)
start x_0
select x_b
"""


def _found(query: str) -> list[tuple[int, str, int]]:
    return [(m.node, m.detected.event, m.detected.node) for m in matches(query, DOC)]


def test_figure_1_document() -> None:
    """The reconstruction: the root has three children; 111 is a b under an a with a c."""
    assert DOC == b"<r><a><b/><c/></a><b><d/></b><a><b/><c/></a></r>"
    assert dewey_to_binary("111") == "11" and dewey_to_binary("131") == "1221"


def test_example_1_child_path_detected_at_the_node() -> None:
    """//a/b: 111 is detected at its own start tag (Example 2)."""
    assert _found("//a/b") == [(NODE["111"], "start", NODE["111"]),
                               (NODE["131"], "start", NODE["131"])]


def test_example_1_sibling_condition_detected_at_the_c() -> None:
    """//a[c]/b: 111 is remembered until 112 and reported there (Examples 1-2)."""
    assert _found("//a[c]/b") == [(NODE["111"], "start", NODE["112"]),
                                  (NODE["131"], "start", NODE["132"])]


def test_example_1_negation_holds_every_node_until_the_end() -> None:
    """/*[not(d)]//*: no early detection location; all matches at the last event, the end of
    the root (location 14), and every node is held until then (Example 2)."""
    q = Query("/*[not(d)]//*")
    run = q.evaluate(DOC)
    found = [(m.node, m.detected.event, m.detected.node) for m in run]
    assert found == [(n, "end", 1) for n in range(2, 10)]
    assert run.stats.peak_candidates == 8


def test_example_1_negation_fails_with_a_d_child() -> None:
    """Adding a d child to the root, the same query matches nothing, and the candidates are
    dropped at the d's start tag."""
    q = Query("/*[not(d)]//*")
    run = q.evaluate(b"<r><a><b/></a><d/><a/></r>")
    assert list(run) == []
    assert run.stats.held == 0


def test_example_3_grammar_with_the_run_of_example_4() -> None:
    """Example 3's grammar locates b elements that are a first child of an a and directly
    followed by a c; Example 4's run recognises binary node 11 at 1121 in the mapping
    q_1121(x_T, x_T) = (t, {11}), and 1221 at 122121."""
    g = parse_grammar(EXAMPLE_3)
    run = Run(Automaton(g))
    evs = events(FIGURE_1)
    locations = list(binary_locations([e[0] for e in evs]))
    found: dict[str, str] = {}
    binary_of = {NODE[d]: dewey_to_binary(d) for d in NODE}
    states: dict[str, list[tuple[str, str, bool, frozenset[int]]]] = {}
    for e, where in zip(evs, locations, strict=True):
        reported = run.start(e[1]) if e[0] == "start" else run.end()
        states[where] = run.entries()
        for c in reported:
            found[binary_of[c.node]] = where
    assert found == {"11": "1121", "1221": "122121"}
    assert ("x_T", "x_T", True, frozenset()) in states["1121"]
    assert ("x_T", "x_T", True, frozenset()) in states["122121"]
    # between 11 and 112 the candidate is held in the entry (x_c, x_b): b's next sibling must
    # be a c (production (4))
    assert ("x_c", "x_b", True, frozenset({NODE["111"]})) in states["112"]


def test_example_3_grammar_through_the_query_api() -> None:
    """The same grammar through Query(grammar=True) gives the two matches with their paths."""
    q = Query(EXAMPLE_3, grammar=True)
    assert [(m.path, m.detected.to_json()) for m in q.evaluate(DOC)] == [
        ("/r[1]/a[1]/b[1]", {"event": "start", "node": 4}),
        ("/r[1]/a[2]/b[1]", {"event": "start", "node": 9})]


def test_universal_variables_of_example_3() -> None:
    """Univ_G of Example 3 is {x_T} (productions (1) and (2))."""
    g = parse_grammar(EXAMPLE_3)
    assert sorted(g.name(x) for x in range(len(g.variables)) if g.universal(x)) == ["x_T"]
