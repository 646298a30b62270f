"""What the automaton evaluator's order promises, checked, then the reference's order."""

from __future__ import annotations

from collections.abc import Iterable

from xmlevents.cel import Match


def sorted_found(got: Iterable[Match]) -> list[Match]:
    """``got`` — complex events in the order the automaton gives them: by end position,
    within one in the order of enumeration — checked for that order and for repeats, and
    sorted as the reference evaluator lists them (by end, then positions)."""
    found = list(got)
    ends = [m.end for m in found]
    assert ends == sorted(ends), f"not in order of their end positions: {ends}"
    assert len(set(found)) == len(found), "a complex event given twice"
    return sorted(found)
