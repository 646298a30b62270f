"""Hypothesis strategies shared by the test packages."""

from __future__ import annotations

import os

from hypothesis import strategies as st

from xmlevents.algebra import Axis, Kind, PathType, Step

#: CI (and ``.ci/run``, which sets ``CI``) runs every property with its full count of examples,
#: derandomized; a local run with a quarter of them, new ones each run (issue 28: the fast loop
#: under a minute on 2 cores). tests/conftest.py's profiles follow the same switch.
FULL = bool(os.environ.get("CI"))


def examples(n: int) -> int:
    """The number of examples for a property that asks for ``n`` (see :data:`FULL`)."""
    return n if FULL else max(10, n // 4)


# A small alphabet so that equal steps (and repeated occurrences) happen often.
NAMES = ["a", "b", "c", "{http://x/y}a"]

child_steps = st.sampled_from(NAMES).map(lambda n: Step(Axis.CHILD, n))
last_steps = st.one_of(
    child_steps,
    st.sampled_from(NAMES).map(lambda n: Step(Axis.ATTRIBUTE, n)),
    st.just(Step(Axis.TEXT)),
)
kinds = st.sampled_from([Kind.ABSOLUTE, Kind.RELATIVE])


@st.composite
def path_types(draw: st.DrawFn, kind: Kind | None = None, max_len: int = 5) -> PathType:
    """Path types of either kind over NAMES, with an optional attribute or text() last step."""
    k = draw(kinds) if kind is None else kind
    steps = draw(st.lists(child_steps, min_size=0, max_size=max_len - 1))
    steps.append(draw(last_steps))
    return PathType(k, tuple(steps))


# --- wildcard steps (issue 15) ---------------------------------------------------------------
# New strategies only: the ones above stay wildcard-free, so every test written before the
# wildcard keeps drawing what it drew.

WILDCARD_STEP = Step(Axis.CHILD, "*")

wild_child_steps = st.one_of(child_steps, st.just(WILDCARD_STEP))
wild_last_steps = st.one_of(wild_child_steps, last_steps)


@st.composite
def wild_path_types(draw: st.DrawFn, kind: Kind | None = None, max_len: int = 5,
                    max_wildcards: int = 3) -> PathType:
    """Path types like :func:`path_types` whose element steps may be the wildcard ``*``
    (at most ``max_wildcards`` of them, so that brute force over NAMES stays small)."""
    k = draw(kinds) if kind is None else kind
    steps = draw(st.lists(wild_child_steps, min_size=0, max_size=max_len - 1))
    steps.append(draw(wild_last_steps))
    wild = [i for i, s in enumerate(steps) if s == WILDCARD_STEP]
    for i in wild[max_wildcards:]:
        steps[i] = Step(Axis.CHILD, NAMES[i % len(NAMES)])
    return PathType(k, tuple(steps))


def instantiations(pt: PathType) -> st.SearchStrategy[PathType]:
    """``pt`` with each ``*`` replaced by an element name of NAMES."""
    slots = [i for i, s in enumerate(pt.steps) if s == WILDCARD_STEP]
    names = st.lists(st.sampled_from(NAMES), min_size=len(slots), max_size=len(slots))

    def fill(chosen: list[str]) -> PathType:
        steps = list(pt.steps)
        for i, name in zip(slots, chosen, strict=True):
            steps[i] = Step(Axis.CHILD, name)
        return PathType(pt.kind, tuple(steps))

    return names.map(fill)
