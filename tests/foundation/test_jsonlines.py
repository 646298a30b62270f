"""The one JSON reader and its one policy (issue 28): every reader reads a line alike."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents._cli import main
from xmlevents._foundation.jsonlines import (
    JsonLineError,
    is_blank,
    load_line,
    split_lines,
    text_lines,
)
from xmlevents.algebra import EventFormatError, read_events
from xmlevents.cel import Event, StreamError, compile_query, evaluate, read_jsonl, reference

# Every line break str.splitlines knows besides "\n" (and "\r\n"): none ends a line here.
OTHER_BREAKS = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize(("text", "name", "column"), [
    ('{"time": NaN}', "NaN", 10),
    ('{"time": Infinity}', "Infinity", 10),
    ('{"time": -Infinity}', "-Infinity", 10),
    ('{"a": "NaN", "b": [1, NaN]}', "NaN", 23),
    ('  [Infinity]', "Infinity", 4),
])
def test_nan_and_infinities_are_refused_with_the_column(text: str, name: str,
                                                        column: int) -> None:
    """Python's decoder reads them; the policy refuses them, at the first outside a string."""
    with pytest.raises(JsonLineError) as info:
        load_line(text)
    assert info.value.reason.startswith(f"{name} is not a JSON value")
    assert info.value.column == column and info.value.line is None
    assert load_line('{"a": "NaN"}') == {"a": "NaN"}  # in a string it is text


def test_a_body_of_several_lines_gets_line_and_column() -> None:
    """A whole body (the service's) is one text: its errors say the line too."""
    with pytest.raises(JsonLineError) as info:
        load_line('{"a": 1,\n "time": NaN}')
    assert (info.value.line, info.value.column) == (2, 10)
    with pytest.raises(JsonLineError) as info:
        load_line('{"a": 1,\n "b" 2}')
    assert (info.value.line, info.value.column) == (2, 6)


@pytest.mark.parametrize("space", OTHER_BREAKS[1:] + ["\xa0", "\u3000"])
def test_only_json_white_space_surrounds_a_value(space: str) -> None:
    """A line starting (or ending) with U+000B or another Unicode space is malformed, and a
    line of it alone is not blank (str.strip took them for white space)."""
    with pytest.raises(JsonLineError) as info:
        load_line(space + '{"a": 1}')
    assert info.value.column == 1
    with pytest.raises(JsonLineError):
        load_line('{"a": 1}' + space)
    assert not is_blank(space) and is_blank(" \t\r\n")
    assert load_line(' \t{"a": 1}\r\n') == {"a": 1}


def test_lines_are_split_on_newline_only() -> None:
    """split_lines and text_lines end a line at "\\n" alone, as detect's reader does."""
    text = "".join(f'{{"a": {i}}}{brk}' for i, brk in enumerate(OTHER_BREAKS)) + "\n\n"
    assert list(split_lines(text)) == [text[:-1], "\n"]
    assert list(text_lines(io.BytesIO(text.encode()))) == [text[:-1], "\n"]
    stream = io.BytesIO(b"x\n")
    list(text_lines(stream))
    assert not stream.closed  # the caller's stream stays open


@pytest.mark.parametrize("event_line", [
    '{"op": "ins", "path": "/a", "ids": ["a1"], "time": NaN}',
    '{"op": "ins", "path": "/a", "ids": ["a1"], "time": Infinity}',
    '{"op": "ins", "path": "/a", "ids": ["a1"], "value": "v", "time": -Infinity}',
    '\x0b{"op": "ins", "path": "/a", "ids": ["a1"]}',
    '\x0b',
])
def test_the_event_reader_refuses_what_the_policy_refuses_at_its_line(event_line: str) -> None:
    """detect's reader (its fast path included) refuses a constant or a stray U+000B at the
    line, with the foundation's reason."""
    good = '{"op": "ins", "path": "/a", "ids": ["a1"]}'
    with pytest.raises(EventFormatError) as info:
        list(read_events([good + "\n", event_line + "\n"], source="in.jsonl"))
    with pytest.raises(JsonLineError) as expected:
        load_line(event_line)
    assert info.value.line == 2 and expected.value.reason in str(info.value)


# One object, written as each reader's events: "OBJ" in the fuzzed text.
_FORMS = {"policy": '{"k": 1}', "cel": '{"type": "A"}',
          "detect": '{"op": "ins", "path": "/a", "ids": ["a1"]}'}
_PIECES = st.sampled_from(["OBJ", " ", "\t", "\r", *OTHER_BREAKS, "\n", "NaN", "{}"])


@settings(max_examples=examples(300), derandomize=True, deadline=None)
@given(st.lists(_PIECES, max_size=12))
def test_prop_every_reader_splits_and_refuses_alike(pieces: list[str]) -> None:
    """Fuzzed files (issue 28: 61 of 3,000 took a line starting with U+000B): cel's JSON
    lines, detect's reader and the foundation read each file the same way, line for line:
    the same number of events, or the same first bad line."""
    text = "".join(pieces)

    def policy() -> tuple[str, int] | int:
        count = 0
        for number, line in enumerate(split_lines(text.replace("OBJ", _FORMS["policy"])), 1):
            if is_blank(line):
                continue
            try:
                value = load_line(line)
            except JsonLineError:
                return ("error", number)
            if value != {"k": 1}:
                return ("error", number)  # {} or a number: no event for either reader
            count += 1
        return count

    def cel() -> tuple[str, int] | int:
        count = 0
        try:
            for _ in read_jsonl(split_lines(text.replace("OBJ", _FORMS["cel"]))):
                count += 1
        except StreamError as exc:
            return ("error", int(str(exc).split("line ")[1].split(":")[0]))
        return count

    def detect() -> tuple[str, int] | int:
        count = 0
        try:
            for _ in read_events(split_lines(text.replace("OBJ", _FORMS["detect"]))):
                count += 1
        except EventFormatError as exc:
            return ("error", exc.line or 0)
        return count

    assert cel() == detect() == policy()


def _cel(tmp_path: Path, lines: list[str], *args: str) -> tuple[int, str, str]:
    stream = tmp_path / "s.jsonl"
    stream.write_bytes("".join(lines).encode())
    out, err = io.StringIO(), io.StringIO()
    status = main(["cel", *args, str(stream)], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


NAN_STREAM = ['{"type": "A", "time": 100}\n', '{"type": "A", "time": NaN}\n',
              '{"type": "B", "time": 0}\n', '{"type": "B", "time": 200}\n']


def test_a_nan_time_is_refused_by_the_automaton_and_the_reference_alike(tmp_path: Path
                                                                         ) -> None:
    """Issue 28: with "time": NaN the automaton skipped its ordering check and found
    (1, 2), (0, 2), (1, 3) where --reference found nothing; now both refuse line 2."""
    query = "SELECT * FROM S WHERE A ; B WITHIN 10 SECONDS"
    automaton = _cel(tmp_path, NAN_STREAM, query)
    by_reference = _cel(tmp_path, NAN_STREAM, query, "--reference")
    assert automaton == by_reference
    status, out, err = automaton
    assert status == 1 and out == "" and "line 2" in err and "NaN is not a JSON value" in err


def test_a_nan_built_in_python_is_no_measure_in_either_evaluator() -> None:
    """An Event built with a NaN time (the reader refuses one) is measured by neither
    evaluator: it fits no duration window in both."""
    q = compile_query("SELECT * FROM S WHERE A ; B WITHIN 10 SECONDS")
    stream = [Event(0, "A", {}, 1), Event(1, "A", {}, float("nan")), Event(2, "B", {}, 5)]
    found = sorted(m.positions for m in evaluate(q, stream))
    assert found == sorted(m.positions for m in reference(q, stream)) == [(0, 2)]


def test_cel_splits_the_stream_on_newline_only(tmp_path: Path) -> None:
    """xmlevents cel reads a "\\r" inside a line as detect does (universal newlines made
    two events of it): a malformed line 1."""
    status, _, err = _cel(tmp_path, ['{"type": "A"}\r{"type": "B"}\n'],
                          "SELECT * FROM S WHERE A ; B")
    assert status == 1 and "line 1" in err and "Extra data" in err


def test_the_service_reads_bodies_with_the_same_policy() -> None:
    """The service's JSON bodies: the foundation's reasons, with line and column."""
    pytest.importorskip("starlette")
    from xmlevents.service._app import Problem, _json

    for body in ('{"type": "a", "params": {"x": NaN}}', '\x0b{"type": "a"}',
                 '{"type": "a",\n "params": -Infinity}', '{"type": "a\\ud800"}'):
        with pytest.raises(Problem) as info:
            _json(body.encode())
        with pytest.raises(JsonLineError) as expected:
            load_line(body)
        assert info.value.status == 400 and info.value.detail == expected.value.reason
        if expected.value.column is not None:
            assert info.value.extra == {"line": expected.value.line or 1,
                                        "column": expected.value.column}
    assert _json(b' {"type": "a"} ') == {"type": "a"}
    assert json.loads(json.dumps(_json(b'{"n": 1e308}'))) == {"n": 1e308}
