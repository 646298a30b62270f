"""``POST /events``' common batch read by msgspec (``service/_batch.py``; issue 31, item 10):
it declines what it does not take, and what it takes is what the long way reads and checks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from xmlevents.service._app import _json, _signals_of
from xmlevents.service._batch import _decoder, read_batch
from xmlevents.service._problem import Problem

pytestmark = pytest.mark.skipif(_decoder() is None, reason="msgspec is not installed (the "
                                "service extra): every body is read the long way")

_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=6)
_value = st.one_of(_text, st.integers(-3, 3), st.floats(allow_nan=False), st.booleans(),
                   st.none())
_event = st.fixed_dictionaries(
    {"type": st.one_of(_text, st.integers(0, 2))},
    optional={"params": st.one_of(st.dictionaries(_text, st.one_of(_text, _value),
                                                  max_size=3), _text, st.none()),
              "time": st.floats(0, 10), "extra": _text})
_common = st.fixed_dictionaries({"type": _text.filter(bool),
                                 "params": st.dictionaries(_text, _text, max_size=3)})


def _long_way(raw: bytes) -> list[Any] | str:
    """The events the reader and the checks give, or the problem's detail."""
    try:
        data = _json(raw)
        if not isinstance(data, list) or not data:
            return "not a batch"
        return _signals_of(data)
    except Problem as exc:
        return exc.detail


@given(st.one_of(st.lists(_event, max_size=4), st.lists(_common, min_size=1, max_size=4),
                 _event, _value))
@example([{"type": "a", "params": {"x": "\ud800"}}])  # a lone surrogate: declined
@example([{"type": "", "params": {}}])
@example([{"type": "a", "params": {"x": "1"}, "time": 1.0}])
def test_what_it_takes_is_what_the_long_way_reads(body: Any) -> None:
    raw = json.dumps(body, ensure_ascii=bool(len(str(body)) % 2)).encode("utf-8",
                                                                         "surrogatepass")
    fast = read_batch(raw)
    if fast is not None:
        assert fast == _long_way(raw)


@given(st.lists(_common, min_size=1, max_size=5), st.sampled_from(["", " ", "\n\t"]))
def test_the_common_batch_is_taken(body: list[dict[str, Any]], space: str) -> None:
    raw = (space + json.dumps(body, ensure_ascii=False) + space).encode()
    assert read_batch(raw) == _long_way(raw)
    assert read_batch(raw) is not None


@pytest.mark.parametrize("raw", [
    b'[{"type":"a","params":{"x":"\\ud800"}}]', b'[{"type":"a","params":{"x":1}}]',
    b'[{"type":"a","params":{}}] x', b'[]', b'{"type":"a","params":{}}',
    b'[{"type":"a","params":{"x":"\xff"}}]', b'[{"type":"a","params":{},"time":1}]',
    b'[{"type":"a","params":{}, "type": ""}]', b'[{"type":"a","params":{"x":NaN}}]',
    b'\x0c[{"type":"a","params":{}}]'])
def test_other_bodies_are_declined(raw: bytes) -> None:
    """A lone surrogate, a number, trailing text, no event, one object, bad UTF-8, a time,
    a duplicate key leaving an empty type, NaN, white space JSON does not have."""
    assert read_batch(raw) is None
