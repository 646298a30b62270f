"""The event loop's checks of a request's events, made cheaper for batches (issue 31, item
10): an event whose fields are right skips the generic field checks, and an ASCII string
parameter the value check, and the common event of a list is taken as parsed. Same events
and same problems as the checks in full."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.algebra import XmlEventsError
from xmlevents.service._app import _EVENT, _expect, _signal_of, _signals_of
from xmlevents.service._problem import Problem
from xmlevents.service.ast import check_value

_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4),
                     st.floats(allow_nan=False, allow_infinity=False),
                     st.sampled_from(["\ud800", "é", "a\udfffb"]))
_values = st.one_of(_scalars, st.lists(_scalars, max_size=2),
                    st.dictionaries(st.text(max_size=3), _scalars, max_size=2))
_params = st.one_of(st.dictionaries(st.sampled_from(["title", "artist", "n"]), _scalars,
                                    max_size=3), _values)
_events = st.one_of(
    st.fixed_dictionaries({"type": st.just("newCD"), "params": _params},
                          optional={"time": st.one_of(st.booleans(), _scalars)}),
    st.fixed_dictionaries({"type": st.one_of(st.sampled_from(["newCD", ""]), _scalars),
                           "params": _params},
                          optional={"time": _scalars, "extra": _scalars}),
    _values)


def _reference(obj: Any, where: str) -> tuple[str, dict[str, Any], float | None]:
    """The checks in full: every field, then every value with check_value."""
    obj = _expect(obj, _EVENT, {"type", "params"}, where)
    etype, at = obj["type"], obj.get("time")
    if not etype:
        raise Problem(422, "Bad event", f"{where}: an atomic event needs its type, a "
                      "non-empty string")
    out = {}
    for name, value in obj["params"].items():
        try:
            out[name] = check_value(value, f"{etype}: parameter {name}")
        except XmlEventsError as exc:
            raise Problem(422, "Bad event", f"{where}: {exc}") from None
    return etype, out, None if at is None else float(at)


def _outcome(check: Any, obj: Any, where: Any) -> object:
    try:
        return check(obj, where)
    except Problem as problem:
        return problem.status, problem.detail


@settings(max_examples=examples(300), deadline=None)
@given(_events, st.integers(0, 999))
@example({"type": "newCD", "params": {"title": "Boy"}, "time": True}, 1)
@example({"type": "newCD", "params": {"title": "Boy"}, "time": None}, 1)
@example({"type": "newCD", "params": {"title": "Boy"}, "at": 1}, 1)
@example({"type": "newCD", "params": {"title": "\ud800"}}, 1)
@example({"type": "newCD", "params": {"title": "é", "n": 1.5, "b": False}, "time": 2}, 1)
@example({"type": "", "params": {}}, 1)
def test_an_event_is_checked_as_in_full(obj: Any, index: int) -> None:
    assert _outcome(_signal_of, obj, index) == _outcome(_reference, obj, f"event {index}")
    assert _outcome(_signal_of, obj, "the event") == _outcome(_reference, obj, "the event")


def _listed(check: Any, objs: list[Any]) -> object:
    try:
        return check(objs)
    except Problem as problem:
        return problem.status, problem.detail


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.one_of(_events, st.fixed_dictionaries(
    {"type": st.sampled_from(["newCD", "newMusicDVD"]),
     "params": st.dictionaries(st.sampled_from(["title", "artist"]),
                               st.text(max_size=3), max_size=2)})), max_size=6))
@example([{"type": "newCD", "params": {"title": "Boy"}}, {"type": "", "params": {}}])
@example([{"type": "newCD", "params": {"title": "é\ud800"}}])
def test_a_list_of_events_is_checked_as_in_full(objs: list[Any]) -> None:
    """The list's fast path (an event of ASCII string parameters taken as parsed) gives the
    same events, or the same problem for the first bad one, as the checks in full."""
    def reference(objs: list[Any]) -> object:
        return [_reference(obj, f"event {i}") for i, obj in enumerate(objs)]

    assert _listed(_signals_of, objs) == _listed(reference, objs)
