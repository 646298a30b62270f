"""Event sources (issue 19, item 4): JSON lines, CSV under CORE's stream declarations, the
project's primitive events; a bad line named, the events before it given."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xmlevents.cel import (
    CELSyntaxError,
    Event,
    StreamError,
    _sources,
    compile_query,
    parse_schema,
    read_csv,
    read_jsonl,
    read_primitive,
    reference,
)


def test_json_lines() -> None:
    lines = ['{"type": "T", "id": 0, "temp": 45}', "", '{"type": "H", "time": 3.5}']
    events = list(read_jsonl(lines))
    # positions are line numbers from 0 (the blank line keeps its number)
    assert [(e.position, e.type, e.time) for e in events] == [(0, "T", None), (2, "H", 3.5)]
    assert events[0].attrs == {"id": 0, "temp": 45}
    for bad, words in [("[1]", "JSON object"), ('{"id": 1}', '"type"'),
                       ('{"type": "T", "x": [1]}', "attribute 'x'"), ("{", "line 2")]:
        got: list[Event] = []
        with pytest.raises(StreamError, match=words):
            got.extend(read_jsonl(['{"type": "A"}', bad], source="s.jsonl"))
        assert len(got) == 1


SCHEMA = """-- CORE's declarations
CREATE STREAM S {
  EVENT T { id: int, temp: double, at: primary_time },
  EVENT H { id: long, name: string, ok: boolean }
}"""


def test_schema_and_csv() -> None:
    schema = parse_schema(SCHEMA)
    assert schema == {"T": {"id": "int", "temp": "double", "at": "primary_time"},
                      "H": {"id": "int", "name": "string", "ok": "boolean"}}
    events = list(read_csv(["T,0,45.5,10", "H,1,'x',true", "", 'H,2,"a,b",False'], schema))
    assert [(e.position, e.type, dict(e.attrs), e.time) for e in events] == [
        (0, "T", {"id": 0, "temp": 45.5, "at": 10.0}, 10.0),
        (1, "H", {"id": 1, "name": "'x'", "ok": True}, None),
        (3, "H", {"id": 2, "name": "a,b", "ok": False}, None)]
    for bad, words in [("X,1", "line 2: unknown event type 'X'"),
                       ("T,1,2", "line 2: T has 3 attributes"),
                       ("T,one,2,3", "line 2: attribute 'id' is declared int, got 'one'"),
                       ("H,1,a,yes", "attribute 'ok' is declared boolean")]:
        got: list[Event] = []
        with pytest.raises(StreamError, match=words):
            got.extend(read_csv(["T,0,1,2", bad], schema))
        assert len(got) == 1
    assert parse_schema("DECLARE STREAM S { EVENT A { } }") == {"A": {}}


@pytest.mark.parametrize(("text", "line", "col"), [
    ("CREATE STREAM S { EVENT A { n: float } }", 1, 32),
    ("CREATE STREAM S {\n EVENT A { n: int }\n EVENT B { } }", 3, 2),
    ("CREATE STREAM S { EVENT A {}, EVENT A {} }", 1, 37),
    ("", 1, 1),
])
def test_schema_errors(text: str, line: int, col: int) -> None:
    with pytest.raises(CELSyntaxError) as caught:
        parse_schema(text)
    assert (caught.value.line, caught.value.column) == (line, col), caught.value


PRIMITIVE = [
    '{"id": "e1", "op": "ins", "path": "/order/item", "ids": ["o1", "i1"]}',
    '{"id": "e2", "op": "ins", "path": "/order/item", "ids": ["o1", "i2"]}',
    '{"id": "e3", "op": "upd", "path": "/order/item/price", "ids": ["o1", "i2", "p2"], '
    '"value": "7", "old": "5"}',
    '{"id": "e4", "op": "upd", "path": "/order/item/price", "ids": ["o1", "i1", "p1"], '
    '"value": "9"}',
]


def test_primitive_events_with_path_types_and_projections() -> None:
    events = list(read_primitive(PRIMITIVE))
    assert events[2].type == "upd" and dict(events[2].attrs) == {
        "id": "e3", "ts": 3, "path": "/order/item/price", "ids": "/order[o1]/item[i2]/price[p2]",
        "kind": "element", "value": "7", "old": "5"}
    # an item inserted, then its price updated: the same item (one partition per item)
    q = compile_query("SELECT * FROM S WHERE ins AS i ; upd AS u FILTER i[path MATCHES "
                      "'order/item'] AND u[path MATCHES 'item/price'] "
                      "PARTITION BY [PROJECT(ids, 'order/item')]")
    assert [m.positions for m in reference(q, events)] == [(1, 2), (0, 3)]
    got: list[Event] = []
    with pytest.raises(StreamError, match="line 2"):
        got.extend(read_primitive([PRIMITIVE[0], '{"op": "ins"}']))
    assert len(got) == 1


def _read_as_written(line: str) -> tuple[str, dict[str, object], object] | str:
    """The JSON-lines reader as issue 19 wrote it (a new dict, each attribute checked in
    turn), for one line: the event's type, attributes and time, or the error's text."""
    import json

    obj = json.loads(line)
    where = "s.jsonl, line 1"
    if not isinstance(obj, dict):
        return f"{where}: an event is a JSON object, got {type(obj).__name__}"
    etype = obj.get("type")
    if not isinstance(etype, str) or not etype:
        return f"{where}: an event needs its \"type\", a non-empty string"
    for k, v in obj.items():
        if k != "type" and not isinstance(v, bool | int | float | str):
            return (f"{where}: attribute {k!r} is "
                    f"{'null' if v is None else type(v).__name__}; attributes are strings, "
                    "numbers or booleans")
    attrs = {k: v for k, v in obj.items() if k != "type"}
    time = attrs.get("time")
    return etype, attrs, time if isinstance(time, int | float) and not isinstance(
        time, bool) else None


_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                                   allow_infinity=False) \
    | st.text(max_size=3)
_values = _scalars | st.lists(_scalars, max_size=2) | st.dictionaries(st.text(max_size=2),
                                                                       _scalars, max_size=2)


@contextlib.contextmanager
def _decoder(fast: bool) -> Iterator[None]:
    """The reader with msgspec's decoder first (where the cel extra is installed), or with
    the standard library's only (the fallback)."""
    saved = _sources._fast()
    _sources._FAST = saved if fast else None
    try:
        yield
    finally:
        _sources._FAST = saved


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["type", "time", "id", "a", "b"]), _values,
                       max_size=5) | _values, st.booleans())
def test_json_lines_as_written(obj: object, fast: bool) -> None:
    """Issue 32, item 4: the reader that keeps the decoded object (fewer allocations) accepts
    and refuses exactly what the one that built a new dict did, with the same messages, the
    attributes in the same order — with msgspec's decoder first or the standard library's."""
    import json

    line = json.dumps(obj)
    expected = _read_as_written(line)
    try:
        with _decoder(fast):
            [event] = read_jsonl([line], source="s.jsonl")
    except StreamError as exc:
        assert str(exc) == expected
        return
    assert isinstance(expected, tuple)
    assert (event.type, list(event.attrs.items()), event.time) == (
        expected[0], list(expected[1].items()), expected[2])


@pytest.mark.parametrize("line", [
    '{"type": "A", "a": 1e400}', '{"type": "A", "a": NaN}', '{"type": "A", "a": "\\ud800"}',
    '{"type": "A", "a": "\\u00e9"}', '  {"type": "A", "a": 1}  ', '{"type": "A"} x',
    '{"type": "A", "a": ' + "9" * 4300 + '}', '{"type": "A", "a": ' + "9" * 4301 + '}',
    '{"type": "A", "a": 1, "a": 2.5}', '{"type": "A", "\x01": 1}', "\x0b", "", "[1]",
    '{"type": "A", "time": 5000000000, "a": [1]}', '{"type": "A", "a": -0, "b": 0.1}'])
def test_the_fast_decoder_reads_as_the_standard_one(line: str) -> None:
    """msgspec's decoder (the cel extra) and the standard library's give the same events or
    the same error, on the lines where they differ by themselves (an out-of-range float, NaN,
    escapes, long integers, white space, trailing text, control characters)."""
    def read(fast: bool) -> object:
        try:
            with _decoder(fast):
                return [(e.type, list(e.attrs.items()), e.time)
                        for e in read_jsonl([line], source="s")]
        except StreamError as exc:
            return str(exc)

    assert repr(read(True)) == repr(read(False))  # repr: NaN and inf compare as text
