"""No event line makes ``detect`` print a traceback or write what cannot be read back
(issue 16, item 2): mutated lines are events or one error naming the line."""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents._cli import main
from xmlevents.algebra import EventFormatError, read_events

GOOD = {"id": "e1", "ts": 1, "op": "ins", "path": "/a", "ids": ["a"], "value": "v",
        "index": 0}
BIG = "9" * 5000
PIECES = ["", "[", "{", "}", '"', ",", ":", BIG, str(2**70), "\\ud800", "\\ud83d\\ude00",
          "null", "-1", "1.5", "true", "\\", "x", "/*", "@"]


@pytest.mark.parametrize(("field", "words"), [
    ("ts", "an integer of more than 4,300 digits"),
    ("index", "an integer of more than 4,300 digits"),
    ("id", "an integer of more than 4,300 digits"),
])
def test_huge_integers_are_an_error_at_their_line(field: str, words: str) -> None:
    line = json.dumps(GOOD).replace(f'"{field}": {json.dumps(GOOD[field])}',
                                    f'"{field}": {BIG}')
    with pytest.raises(EventFormatError) as info:
        list(read_events(["", line], source="x.jsonl"))
    assert str(info.value) == f"x.jsonl: line 2: {words}"


def test_a_lone_surrogate_escape_is_refused_and_a_pair_is_one_character() -> None:
    line = json.dumps(GOOD).replace('"v"', '"\\ud800"')
    with pytest.raises(EventFormatError, match=r"line 1: a lone surrogate \\ud800 in value"):
        list(read_events([line]))
    pair = json.dumps(GOOD).replace('"v"', '"\\ud83d\\ude00"')
    assert next(iter(read_events([pair]))).value == "\U0001f600"


@st.composite
def mutated(draw: st.DrawFn) -> str:
    line = json.dumps({**GOOD, "ts": draw(st.integers(1, 5))})
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(line)))
        line = line[:i] + draw(st.sampled_from(PIECES)) + line[i + draw(st.integers(0, 4)):]
    return line


@settings(max_examples=examples(1000), deadline=None)
@given(mutated())
def test_a_mutated_line_is_an_event_or_an_event_format_error(line: str) -> None:
    """2,000 mutated event lines: nothing but an event or an EventFormatError at line 1."""
    try:
        events = list(read_events([line]))
    except EventFormatError as exc:
        assert exc.line == 1
        return
    for e in events:
        json.dumps(e.to_dict(), ensure_ascii=False).encode("utf-8")  # can be written


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(mutated(), min_size=1, max_size=5))
def test_detect_exits_0_or_1_with_one_line_never_a_traceback(lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    stdin: Any = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin  # a fixture cannot be reset between hypothesis' examples
    try:
        sys.stdin = stdin
        status = main(["detect", "-d", "E := ins(a)", "-"], stdout=out, stderr=err)
    finally:
        sys.stdin = old
    assert status in (0, 1)
    if status == 1:
        assert err.getvalue().startswith("xmlevents: error: <stdin>, line ")
        assert "Traceback" not in err.getvalue()
    out.getvalue().encode("utf-8")


@pytest.mark.parametrize("command", ["graph", "detect"])
def test_a_long_chain_of_definitions_listed_backwards_needs_no_recursion(
        command: str, tmp_path: Any) -> None:
    """3,000 definitions each reusing the next, in reverse order: checked and drawn without
    a RecursionError (the issue found one at about 200)."""
    lines = [f"D{i} := ins(a) ; D{i + 1}" for i in range(3000)] + ["D3000 := ins(a)"]
    path = tmp_path / "chain.xev"
    path.write_text("\n".join(reversed(lines)), encoding="utf-8")
    events = tmp_path / "e.jsonl"
    events.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    argv = [command, "-f", str(path)] + ([str(events)] if command == "detect" else [])
    out, err = io.StringIO(), io.StringIO()
    assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
