"""How `xmlevents detect` writes: in chunks, byte for byte as line by line, and live."""

from __future__ import annotations

import io
import json
import os
import pathlib
import select
import subprocess
import sys
from typing import IO, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xmlevents._cli import main
from xmlevents._cli.detect import _input_lines

EI = "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))"
TIMEOUT = 60  # seconds a live line may take: the interpreter's start-up on a busy machine


def item_lines(n: int, ts: int = 1) -> str:
    """The insertions of item ``n`` (its price and quantity): one Ei composite, ids not
    ASCII so that the output's encoding shows."""
    item = ["ö1", f"ï{n}"]
    events = [("/order/item", item), ("/order/item/price", [*item, f"p{n}"]),
              ("/order/item/quantity", [*item, f"q{n}"])]
    return "".join(json.dumps({"id": f"é{ts + k}", "ts": ts + k, "op": "ins", "path": p,
                               "ids": ids}) + "\n" for k, (p, ids) in enumerate(events))


def expected_line(n: int, ts: int = 1) -> bytes:
    """Ei's output line for ``item_lines(n, ts)``, encoded as DESIGN section 6 writes it."""
    row = {"ts": ts + 2, "type": "Ei", "path": "/order/item", "ids": ["ö1", f"ï{n}"],
           "interval": [ts, ts + 2], "events": [f"é{ts}", f"é{ts + 1}", f"é{ts + 2}"]}
    return (json.dumps(row, ensure_ascii=False) + "\n").encode()


def detect(args: list[str], *, unbuffered: bool = True, **kwargs: Any
           ) -> subprocess.Popen[bytes]:
    """`python -m xmlevents detect ARGS`, its stdout a pipe, unbuffered or not."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.Popen([sys.executable, "-m", "xmlevents", "detect", "--define", EI,
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, **kwargs)


def read_line(stream: IO[bytes]) -> bytes:
    """One line from ``stream``, failing if none comes within TIMEOUT."""
    ready, _, _ = select.select([stream], [], [], TIMEOUT)
    assert ready, f"no output within {TIMEOUT} s while the input is held open"
    return stream.readline()


def test_output_through_an_unbuffered_pipe_is_byte_for_byte_line_by_line(
        tmp_path: pathlib.Path) -> None:
    """Over more than one 64 KiB chunk of input, the piped unbuffered output is exactly the
    lines written one by one, and the same as in process."""
    items = 1500  # about 300 KiB of input: lines cross the chunks read
    path = tmp_path / "ev.jsonl"
    path.write_text("".join(item_lines(n, 3 * n + 1) for n in range(items)), encoding="utf-8")
    assert path.stat().st_size > 4 * 65536
    proc = detect([str(path)])
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (0, b"")
    assert out == b"".join(expected_line(n, 3 * n + 1) for n in range(items))
    text = io.StringIO()
    assert main(["detect", "--define", EI, str(path)], stdout=text) == 0
    assert text.getvalue().encode() == out


@pytest.mark.parametrize("unbuffered", [True, False], ids=["unbuffered", "buffered"])
def test_output_arrives_while_the_input_is_held_open(unbuffered: bool) -> None:
    """A reader following the output gets each composite once its input has arrived, long
    before the input ends, whether stdout is buffered or not."""
    proc = detect(["-"], unbuffered=unbuffered, stdin=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(item_lines(1).encode())
        proc.stdin.flush()
        assert read_line(proc.stdout) == expected_line(1)
        proc.stdin.write(item_lines(2, 4).encode())
        proc.stdin.flush()
        assert read_line(proc.stdout) == expected_line(2, 4)
        proc.stdin.close()
        assert proc.wait(timeout=TIMEOUT) == 0
        assert proc.stdout.read() == b""
    finally:
        proc.kill()
        proc.wait()


def test_what_came_before_a_bad_line_is_written_before_the_error() -> None:
    """The composite detected before a malformed line is in the output (flushed), and the
    error names the line and exits 1."""
    proc = detect(["-"], stdin=subprocess.PIPE)
    out, err = proc.communicate(item_lines(1).encode() + b"{not json\n", timeout=120)
    assert proc.returncode == 1
    assert out == expected_line(1)
    assert b"line 4" in err and b"Traceback" not in err
    text, errors = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = io.StringIO(item_lines(1) + "{not json\n")
    try:
        assert main(["detect", "--define", EI], stdout=text, stderr=errors) == 1
    finally:
        sys.stdin = old
    assert text.getvalue().encode() == expected_line(1) and "line 4" in errors.getvalue()


@given(data=st.lists(st.sampled_from([b"a", b"\n", b"\r", b"\r\n", b"\xc3\xa9", b" "]),
                     max_size=40).map(b"".join),
       size=st.integers(min_value=1, max_value=9))
def test_input_lines_are_the_lines_of_the_stream(data: bytes, size: int) -> None:
    """Read in chunks of any size, the lines are exactly those iterating the stream gives,
    and the output is flushed before every read."""
    stream = io.BytesIO(data)
    log: list[str] = []

    def read1(n: int) -> bytes:
        log.append("read")
        return stream.read1(n)

    lines = list(_input_lines(read1, lambda: log.append("flush"), size))
    assert lines == list(io.BytesIO(data))
    assert log == ["flush", "read"] * (len(log) // 2)
