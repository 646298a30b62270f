"""One time model for the algebra and cel (issue 28): durations in whole milliseconds, event
times as given, windows compared exactly where the values are integers (issue 32)."""

from __future__ import annotations

import pytest

from xmlevents._foundation.time import UNITS, Duration, in_ms, is_time, time_of_text
from xmlevents.algebra import Duration as AlgebraDuration
from xmlevents.algebra import InvalidArgumentError
from xmlevents.cel import (
    CELSyntaxError,
    Event,
    compile_query,
    evaluate,
    fits,
    parse_query,
    read_csv,
    reference,
)


def test_the_algebra_and_cel_share_one_duration() -> None:
    """xmlevents.algebra.Duration is the foundation's, and cel's WITHIN reads the same value:
    within=90s and WITHIN 1 MINUTES 30 SECONDS are 90,000 ms."""
    assert AlgebraDuration is Duration
    window = parse_query("SELECT * WHERE A WITHIN 1 MINUTES 30 SECONDS").within
    assert window is not None
    from xmlevents.cel._events import duration

    assert duration(window) == Duration.parse("90s") == Duration(90_000)
    assert duration(parse_query("SELECT * WHERE A WITHIN 0.1 SECONDS").within) == Duration(100)
    assert duration(parse_query("SELECT * WHERE A WITHIN 2 HOURS").within) == \
        Duration.parse("2h")


def test_durations_are_read_exactly() -> None:
    """A duration's amount is read as decimal text: 0.1 s is 100 ms, not 0.1 * 1000 in floats;
    what is not a whole number of milliseconds is refused, in Python and in CEL."""
    assert Duration.of("0.1", UNITS["s"]) == Duration.of(0.1, UNITS["s"]) == Duration(100)
    assert Duration.of("1.5", UNITS["h"]).ms == 5_400_000
    for amount in ("0.0001", "0", "-1", "nan", "x"):
        with pytest.raises(InvalidArgumentError):
            Duration.of(amount, UNITS["s"])
    with pytest.raises(CELSyntaxError, match="whole number of milliseconds"):
        parse_query("SELECT * WHERE A WITHIN 0.0001 SECONDS")


def test_event_times() -> None:
    """A time is an int or a finite float (never a bool); ints stay exact in milliseconds."""
    assert [is_time(v) for v in (1, 1.5, True, float("nan"), float("inf"), "1", None)] == [
        True, True, False, False, False, False, False]
    assert in_ms(1_700_000_000_123) == 1_700_000_000_123_000
    assert time_of_text("1700000000") == 1_700_000_000 and time_of_text("1.5") == 1.5
    for text in ("nan", "inf", "-inf", "x"):
        with pytest.raises(ValueError):
            time_of_text(text)


NS = 1_700_000_000_000_000_000  # a time in nanoseconds: past 2**53, where floats space 256


@pytest.mark.parametrize(("apart", "matched"), [
    (4_999_999_999, True), (5_000_000_000, False), (5_000_000_100, False),
])
def test_attribute_windows_are_exact_on_integers(apart: int, matched: bool) -> None:
    """Issue 32: the measures were floats, so nanosecond times 5,000,000,100 ns apart matched
    WITHIN 5000000000 [time]; integers now compare as integers, in both evaluators (an
    attribute window of n keeps spans under n, CORE's convention: tests/cel)."""
    q = compile_query("SELECT * FROM S WHERE A AS a ; B AS b WITHIN 5000000000 [time]")
    stream = [Event(0, "A", {"time": NS}), Event(1, "B", {"time": NS + apart})]
    expected = [(0, 1)] if matched else []
    assert [m.positions for m in evaluate(q, stream)] == expected
    assert [m.positions for m in reference(q, stream)] == expected
    assert fits(q.within, stream) is matched


@pytest.mark.parametrize(("times", "matched"), [
    ((NS // 10**9, NS // 10**9 + 10), True),
    ((NS // 10**9, NS // 10**9 + 11), False),
    ((0.1, 0.3), True),  # 0.3 - 0.1 is 0.19999999999999998 in floats; in ms, 200 <= 200
])
def test_duration_windows_measure_in_milliseconds(times: tuple[float, float],
                                                  matched: bool) -> None:
    """WITHIN d SECONDS compares times in milliseconds against the duration's: both ends
    included, integers exact, in both evaluators."""
    window = "10 SECONDS" if isinstance(times[0], int) else "0.2 SECONDS"
    q = compile_query(f"SELECT * FROM S WHERE A AS a ; B AS b WITHIN {window}")
    stream = [Event(0, "A", {}, times[0]), Event(1, "B", {}, times[1])]
    expected = [(0, 1)] if matched else []
    assert [m.positions for m in evaluate(q, stream)] == expected
    assert [m.positions for m in reference(q, stream)] == expected


def test_csv_times_and_doubles_follow_the_model() -> None:
    """A CSV primary_time written as an integer stays one; nan and inf are refused as the
    JSON reader refuses NaN."""
    schema = {"T": {"at": "primary_time", "v": "double"}}
    (event,) = read_csv([f"T,{NS},1.5"], schema)
    assert event.time == NS and type(event.time) is int
    for row in ("T,nan,1", "T,1,nan", "T,1,-inf"):
        with pytest.raises(Exception, match="declared"):
            list(read_csv([row], schema))
