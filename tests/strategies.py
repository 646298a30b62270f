"""Hypothesis strategies shared by the test packages."""

from __future__ import annotations

from hypothesis import strategies as st

from xmlevents.algebra import Axis, Kind, PathType, Step

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
