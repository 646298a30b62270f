"""Regular tree queries written as grammars: the automaton's matches equal the definition of
section 3 evaluated by brute force, each reported once, at its earliest detection location."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.strategies import examples
from tests.stream.reference import (
    check_earliest,
    detections,
    grammar_matches,
    grammar_text,
    grammars,
    to_tree,
    to_xml,
    trees,
)
from xmlevents.stream import Query


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammars(), trees(max_depth=4, alphabet=("a", "b", "c")))
def test_grammar_queries_match_the_definition(grammar: tuple[object, ...],
                                              tree: object) -> None:
    """On random grammars and documents, the matches are p_x⊙(t) of section 3."""
    _same_as_definition(grammar, tree)


def _same_as_definition(grammar: tuple[object, ...], tree: object) -> None:
    rules, start, selected = grammar
    q = Query(grammar_text(rules, start, selected), grammar=True)  # type: ignore[arg-type]
    found = [m.node for m in q.evaluate(to_xml(tree))]  # type: ignore[arg-type]
    assert len(found) == len(set(found)), "a match reported twice"
    assert set(found) == grammar_matches(rules, start, selected, tree)  # type: ignore[arg-type]


@pytest.mark.slow
@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammars(), trees(max_depth=5, alphabet=("a", "b", "c")))
def test_grammar_queries_match_the_definition_more_examples(grammar: tuple[object, ...],
                                                            tree: object) -> None:
    """The same on more and deeper cases."""
    _same_as_definition(grammar, tree)


def _earliest(grammar: tuple[object, ...], tree: object) -> None:
    rules, start, selected = grammar
    text = grammar_text(rules, start, selected)  # type: ignore[arg-type]

    def matches(evs: list[tuple[str, ...]]) -> set[int]:
        return grammar_matches(rules, start, selected, to_tree(evs))  # type: ignore[arg-type]
    found = detections(Query(text, grammar=True), tree)  # type: ignore[arg-type]
    check_earliest(text, tree, found, alphabet=("a", "b", "c", "z"),  # type: ignore[arg-type]
                   matches=matches, names=("a", "b"))


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammars(), trees(max_depth=3, alphabet=("a", "b", "c")))
def test_grammar_matches_at_their_earliest_detection_location(grammar: tuple[object, ...],
                                                              tree: object) -> None:
    """On random grammars, each match is reported at the first event after which every
    continuation of the document keeps it a match (brute force over the completions)."""
    _earliest(grammar, tree)


@pytest.mark.slow
@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammars(), trees(max_depth=4, alphabet=("a", "b", "c")))
def test_grammar_earliest_detection_more_examples(grammar: tuple[object, ...],
                                                  tree: object) -> None:
    """The same on more and deeper cases."""
    _earliest(grammar, tree)
