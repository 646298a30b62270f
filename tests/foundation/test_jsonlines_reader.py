"""The one bounded JSON-lines decoder (issue 16): every line decodes or is a JsonLineError."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xmlevents._foundation.jsonlines import JsonLineError, load_line

# Text without lone surrogates: what a JSON line that can be written back may hold; numbers
# without NaN or infinities, which json.dumps writes and the one policy refuses (issue 28).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20)


@given(VALUES, st.booleans())
def test_every_json_value_round_trips(value: Any, ascii_only: bool) -> None:
    assert load_line(json.dumps(value, ensure_ascii=ascii_only)) == value


@given(VALUES, st.data())
def test_a_mutated_line_decodes_or_is_a_json_line_error(value: Any, data: st.DataObject) -> None:
    line = json.dumps(value)
    i = data.draw(st.integers(0, len(line)))
    cut = data.draw(st.integers(0, 3))
    insert = data.draw(st.sampled_from(["", "[", "{", "\\ud800", '"', ",", "9" * 5000, "x"]))
    mutated = line[:i] + insert + line[i + cut:]
    with contextlib.suppress(JsonLineError):  # anything else fails the test
        load_line(mutated)


@pytest.mark.parametrize(("line", "message"), [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"version": ' + "9" * 5000 + "}", "an integer of more than 4,300 digits"),
    ('{"xml": "<a>\\ud800</a>"}', "a lone surrogate \\ud800 in xml"),
    ('{"\\udc00": 1}', "a lone surrogate \\udc00"),
    ('{"a": 1} x', "column 10: not valid JSON: Extra data"),
    ('{"a": ', "column 7: not valid JSON: Expecting value"),
])
def test_what_python_s_decoder_takes_or_fails_on_is_a_reason(line: str, message: str) -> None:
    with pytest.raises(JsonLineError) as info:
        load_line(line)
    assert message in str(info.value)


def test_a_surrogate_pair_is_one_character_and_is_taken() -> None:
    assert load_line('{"v": "\\ud83d\\ude00"}') == {"v": "\U0001f600"}


def test_lines_longer_than_the_limit_are_refused() -> None:
    with pytest.raises(JsonLineError, match="the line is 12 characters long; the limit is 10"):
        load_line('{"a": "xxx"}', max_length=10)


@pytest.mark.parametrize(("text", "col"), [
    ('E := (ins(a) & ins(a/b)) with when="\\ud800"', 37),  # an escape: half a pair
    ('E := (ins(a) & ins(a/b)) with when="\ud800"', 37),  # the character itself
    ("E := ins(a\udc80)", 11),  # undecodable argv bytes, read with surrogateescape
])
def test_definitions_with_a_lone_surrogate_are_refused_and_the_error_can_be_written(
        text: str, col: int) -> None:
    """What the language accepts can always be written out again (issue 16, item 2)."""
    from xmlevents.algebra import ExpressionSyntaxError, parse_definitions

    with pytest.raises(ExpressionSyntaxError) as info:
        parse_definitions(text)
    assert info.value.column == col and "surrogate" in str(info.value)
    str(info.value).encode("utf-8")  # the snippet shows U+FFFD in its place
