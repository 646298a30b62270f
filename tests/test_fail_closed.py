"""Choices keyed by an enum fail closed (issue 28, "Fail open"): the contexts' rules, the
modes' terminations, CEL's selection strategies and how the automaton evaluates each are
chosen from tables with an entry for every member, made complete when their modules are
imported. A member without an entry is a ``LookupError`` when the table is made and a
``KeyError`` when it is looked up — never the last case of an if-chain (the unrestricted
context, the ``ALL`` strategy), as it was."""

from __future__ import annotations

import enum
from typing import Any

import pytest

from xmlevents._foundation.tables import complete
from xmlevents.algebra import Context, EventGraph, Group, Mode, select_any, select_seq
from xmlevents.algebra._contexts import ANY, NOT, SEQ, select_not
from xmlevents.algebra._operator import _TERMINATION
from xmlevents.algebra._tree import FEEDERS, Feeder
from xmlevents.cel import Strategy
from xmlevents.cel._cea import NATIVE
from xmlevents.cel._reference import SELECTIONS, select


@pytest.mark.parametrize(("table", "members"), [
    (ANY, Context), (SEQ, Context), (NOT, Context), (_TERMINATION, Mode),
    (SELECTIONS, Strategy), (NATIVE, Strategy), (FEEDERS, Feeder),
], ids=["any", "seq", "not", "termination", "selections", "native", "feeders"])
def test_every_member_has_an_entry(table: dict[Any, Any], members: type[enum.Enum]) -> None:
    assert set(table) == set(members)


class Light(enum.Enum):
    RED = 1
    GREEN = 2


def test_a_table_without_a_member_is_refused_when_made() -> None:
    with pytest.raises(LookupError, match=r"lights: no entry for Light.GREEN"):
        complete(Light, {Light.RED: 0}, "lights")
    with pytest.raises(LookupError, match="not members of Light"):
        complete(Light, {Light.RED: 0, Light.GREEN: 1, "BLUE": 2}, "lights")  # type: ignore[dict-item]  # on purpose


# A context added to the enum but to no table: the functions that take a context raise.
Extended = enum.Enum("Extended", [(c.name, c.value) for c in Context] + [("LATEST", "latest")])


class _E:
    """An occurrence: a tick and an interval."""

    def __init__(self, ts: int) -> None:
        self.ts = self.start = self.end = ts


def _before(a: _E, b: _E) -> bool:
    return a.end < b.start


def test_a_context_without_rules_raises_instead_of_being_unrestricted() -> None:
    """Before: a conjunction in an unknown context gave every combination (unrestricted)."""
    group: Group[Any] = Group(2)
    group.bufs[0].append(_E(1))
    for call in (lambda: select_any(Extended.LATEST, 2, group, 1, _E(2), _before),  # type: ignore[arg-type]  # on purpose
                 lambda: select_seq(Extended.LATEST, group, 1, _E(2), _before),  # type: ignore[arg-type]
                 lambda: select_not(Extended.LATEST, Group(3), 2, _E(2), _before)):  # type: ignore[arg-type]
        with pytest.raises(KeyError):
            call()
    assert group.bufs == [[group.bufs[0][0]], []]  # nothing stored for the refused call


def test_the_tables_give_each_context_its_rules() -> None:
    """The control: the same arrival in two contexts combines as each context says."""
    def conj(ctx: Context) -> int:
        group: Group[Any] = Group(2)
        for ts in (1, 2):
            select_any(ctx, 2, group, 0, _E(ts), _before)
        return len(select_any(ctx, 2, group, 1, _E(3), _before))

    assert conj(Context.UNRESTRICTED) == 2 and conj(Context.CHRONICLE) == 1


def test_a_strategy_without_a_selection_raises_instead_of_being_all() -> None:
    """Before: select() kept every complex event for a strategy its if-chain lacked."""
    strategies = enum.Enum("Strategies",
                           [(s.name, s.value) for s in Strategy] + [("FIRST", "FIRST")])
    with pytest.raises(KeyError):
        select(strategies.FIRST, [frozenset({1, 2})])  # type: ignore[arg-type]  # on purpose
    assert select(Strategy.STRICT, [frozenset({1, 3}), frozenset({2, 3})]) == [frozenset({2, 3})]


@pytest.mark.parametrize(("definition", "feeder"), [
    ("E := ins(item) ; (ins(item/price) & ins(item/quantity))", Feeder.DIRECT),
    ("E := ins(item) ; ((ins(item/price) & [1,*] ins(item/quantity)) with mode=non-local)",
     Feeder.WALK),
    ("E := ins(item) ; (ins(item/price) & ins(item/quantity)) with context=recent",
     Feeder.PROCESS),
], ids=["direct", "walk", "process"])
def test_a_tree_takes_events_by_its_feeder_from_the_table(definition: str, feeder: Feeder
                                                          ) -> None:
    """Each tree's feeder is chosen once, from FEEDERS; a traced tree takes the general one."""
    tree = EventGraph(definition, context="chronicle", hierarchical=True).tree("E")
    assert tree.feeder is feeder
    assert tree.take.__func__ is FEEDERS[feeder]  # type: ignore[attr-defined]  # a bound method
    tree.traced()
    assert tree.feeder is Feeder.PROCESS and tree.take.__func__ is FEEDERS[Feeder.PROCESS]  # type: ignore[attr-defined]
