"""No version-table line kills a replay or reads differently in process and on Spark
(issue 16, item 1): each bad line is one error row naming its line, and reading goes on."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.replay import read_versions, replay_history

GOOD = {"doc": "a.xml", "version": 1, "xml": "<a><b>x</b></a>", "time": 10, "commit": "c1"}
BIG = "9" * 5000

# Each: a line the issue found fatal somewhere, and the words its error row must have.
BAD_LINES = [
    ('{"doc": "a", "version": ' + BIG + ', "xml": "<a/>"}',
     "an integer of more than 4,300 digits"),
    ('{"doc": "a", "version": 1, "time": ' + BIG + ', "xml": "<a/>"}',
     "an integer of more than 4,300 digits"),
    ('{"doc": "a", "version": 1, "xml": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "nested too deeply"),
    ('{"doc": "a", "version": 1, "xml": "<a>\\ud800</a>"}', "a lone surrogate \\ud800 in xml"),
    ('{"doc": "\\udc00", "version": 1, "xml": "<a/>"}', "a lone surrogate \\udc00 in doc"),
    (f'{{"doc": "a", "version": {2**63}, "xml": "<a/>"}}',
     "must be an integer from 0 to 9223372036854775807"),
    (f'{{"doc": "a", "version": 1, "time": {-2**64}, "xml": "<a/>"}}', "a 64-bit column"),
]


def write_table(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def messages(errors: list[dict[str, Any]]) -> list[str]:
    return [e["message"] for e in errors]


def test_each_bad_line_is_one_error_row_and_reading_goes_on(tmp_path: Path) -> None:
    lines = [json.dumps({**GOOD, "version": 0}).encode()]
    for n, (line, _) in enumerate(BAD_LINES, start=1):
        lines.append(line.encode())
        lines.append(json.dumps({**GOOD, "version": n}).encode())
    lines.append(b'{"doc": "a.xml", "version": 99, "xml": "<a>\xff</a>"}')  # not UTF-8
    path = write_table(tmp_path / "t.jsonl", lines)
    errors: list[dict[str, Any]] = []
    rows = list(read_versions(path, errors))
    assert [r["version"] for r in rows] == list(range(len(BAD_LINES) + 1))
    got = messages(errors)
    assert len(got) == len(BAD_LINES) + 1
    for n, ((_, words), message) in enumerate(zip(BAD_LINES, got, strict=False)):
        assert f"line {2 * n + 2}" in message and words in message, message
        assert len(message) < 400  # a 5,000-digit value is not repeated
    assert f"line {len(lines)}, column 44: not UTF-8 text" in got[-1]
    result = replay_history(rows)  # what was read replays
    assert result.versions == len(rows) and not result.errors


def test_a_bare_carriage_return_ends_a_line_as_on_spark(tmp_path: Path) -> None:
    """Spark's text reader ends lines at \\n, \\r\\n and a bare \\r: so does the reader in
    process, so both number the same lines (issue 16)."""
    one = json.dumps({**GOOD, "version": 1}).encode()
    two = json.dumps({**GOOD, "version": 2}).encode()
    path = tmp_path / "t.jsonl"
    path.write_bytes(one + b"\r" + two + b"\r\n" + b'{"doc": "a.xml"\r, "version": 3}\n')
    errors: list[dict[str, Any]] = []
    assert [r["version"] for r in read_versions(path, errors)] == [1, 2]
    assert [m.split(",")[1] for m in messages(errors)] == [" line 3", " line 4"]


def test_a_lone_surrogate_in_a_version_given_in_python_skips_that_version_only() -> None:
    result = replay_history([{"doc": "d", "version": 0, "xml": "<a/>"},
                             {"doc": "d", "version": 1, "xml": "<a>\ud800</a>"},
                             {"doc": "d", "version": 2, "xml": "<a><b/></a>"}])
    assert [(e["version"], e["stage"]) for e in result.errors] == [(1, "parse")]
    assert result.versions == 2


PIECES = ["", "[", "{", "}", '"', ",", ":", BIG, str(2**63), "\\ud800", "\\ud83d\\ude00",
          "null", "-1", "1.5", "true", "\\", "x"]


@st.composite
def mutated_lines(draw: st.DrawFn) -> bytes:
    line = json.dumps({**GOOD, "version": draw(st.integers(0, 10))})
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(line)))
        cut = draw(st.integers(0, 4))
        line = line[:i] + draw(st.sampled_from(PIECES)) + line[i + cut:]
    data = line.encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and data:  # a byte that is not UTF-8, now and then
        i = draw(st.integers(0, len(data) - 1))
        data = data[:i] + b"\xff" + data[i:]
    return data


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(mutated_lines(), min_size=10, max_size=10))
def test_mutated_lines_are_rows_or_error_rows_never_exceptions(tmp_path_factory: Any,
                                                               lines: list[bytes]) -> None:
    """2,000 mutated lines (200 tables of 10): every line is a row or one error row."""
    path = write_table(tmp_path_factory.mktemp("t") / "t.jsonl.gz", [])
    with gzip.open(path, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    errors: list[dict[str, Any]] = []
    rows = list(read_versions(path, errors))
    blank = sum(1 for line in lines if not line.strip())
    assert len(rows) + len(errors) == len(lines) - blank
    for r in rows:
        json.dumps(r, ensure_ascii=False).encode("utf-8")  # what was read can be written


@pytest.mark.slow
def test_the_spark_reader_agrees_line_by_line(tmp_path: Path) -> None:
    """The same 2,000 mutated lines, plus the issue's, read by Spark and in process: the
    same rows and the same error rows (message for message)."""
    from xmlevents.replay import make_session, read_versions_df

    rng = random.Random(16)
    lines = [line.encode() for line, _ in BAD_LINES]
    lines.append(b'{"doc": "a.xml", "version": 99, "xml": "<a>\xff</a>"}')
    lines.append(json.dumps({**GOOD, "version": 7}).encode() + b"\r" + b'{"doc": "a.xml"\r}')
    for _ in range(2000):
        line = json.dumps({**GOOD, "version": rng.randint(0, 10 ** 6)})
        for _ in range(rng.randint(0, 3)):
            i = rng.randint(0, len(line))
            line = line[:i] + rng.choice(PIECES) + line[i + rng.randint(0, 4):]
        data = line.encode("utf-8", "surrogatepass")
        if rng.random() < 0.2:
            i = rng.randint(0, len(data) - 1)
            data = data[:i] + b"\xff" + data[i:]
        lines.append(data)
    path = write_table(tmp_path / "t.jsonl", [line for line in lines if line.strip()])
    errors: list[dict[str, Any]] = []
    local_rows = sorted(json.dumps(r, sort_keys=True) for r in read_versions(path, errors))
    spark = make_session(None, progress=False)
    good, bad = read_versions_df(spark, str(path))
    spark_rows = sorted(json.dumps(r.asDict(), sort_keys=True) for r in good.collect())
    spark_errors = sorted(r["message"] for r in bad.collect())
    assert spark_rows == local_rows
    assert spark_errors == sorted(messages(errors))
