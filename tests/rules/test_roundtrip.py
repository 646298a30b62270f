"""The printer and the parser agree: ``parse(print(x)) == x`` on random rule trees (the
LibCST fuzz test's property), and printing is canonical."""

from __future__ import annotations

from hypothesis import given, settings

from tests.rules.strategies import actions, conditions, paths, relative_paths, rule_sets
from tests.strategies import examples
from xmlevents.rules import ast, parse_action, parse_condition, parse_path, parse_rules, to_text


@given(paths(depth=3))
def test_paths_round_trip(path: ast.Path) -> None:
    """A simple XPath expression prints to text that parses back to it."""
    text = to_text(path)
    assert parse_path(text) == path, text


@given(relative_paths(depth=2))
def test_relative_paths_round_trip(path: ast.Path) -> None:
    """A relative path (as in qualifiers) prints to text that parses back to it."""
    assert parse_path(to_text(path)) == path


@given(conditions)
def test_conditions_round_trip(condition: ast.Condition) -> None:
    """A condition prints to text that parses back to it."""
    assert parse_condition(to_text(condition)) == condition


@given(actions)
def test_actions_round_trip(action: ast.Action) -> None:
    """An action, constructors included, prints to text that parses back to it."""
    text = to_text(action)
    assert parse_action(text) == action, text


@settings(max_examples=examples(50))
@given(rule_sets())
def test_rule_sets_round_trip(rules: ast.RuleSet) -> None:
    """A rule set prints to a rule file that parses back to it, and printing is canonical."""
    text = to_text(rules)
    parsed = parse_rules(text)
    assert parsed == rules
    assert to_text(parsed) == text
