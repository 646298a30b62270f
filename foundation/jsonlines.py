"""The one JSON reader of xmlevents, and its one policy (issues 16 and 28).

Every JSON input goes through here: the event lines of ``xmlevents detect`` and of
``xmlevents cel`` (through the algebra's reader and cel's sources), the version tables of the
replay, and the request bodies of the service. One policy, so that one line is read alike
everywhere:

* **Lines are split on ``\\n`` only.** ``str.splitlines`` and text files opened with
  universal newlines also end a line at ``\\r``, U+000B, U+000C, U+001C-U+001E, U+0085,
  U+2028 and U+2029; then ``{...}\\x0b{...}`` was two events for one reader and a malformed
  line for another (issue 28: 61 of 3,000 fuzzed files). :func:`text_lines` reads a binary
  stream so; :func:`split_lines` splits a text so.
* **White space is JSON's** (space, tab, CR, LF; RFC 8259, section 2) around a value, and a
  line holding nothing else is blank; ``str.strip`` took U+000B and the other Unicode spaces
  for blanks too, so a line starting with U+000B was accepted.
* **No ``NaN``, ``Infinity`` or ``-Infinity``**: not JSON (RFC 8259, section 6), though
  Python's decoder reads them; a ``"time": NaN`` then slipped past every comparison (a NaN is
  neither before nor after anything). Refused with the column, as any other malformed value.
* **Bounded**: a line's length (:data:`MAX_LINE`), nesting (the decoder's ~1,000 levels),
  integers of at most 4,300 digits, and no lone surrogate in any string (``"\\ud800"`` is
  no character and cannot be written as UTF-8). Python's decoder otherwise fails far from
  the input or with bare built-in errors; here each case is a :class:`JsonLineError` with a
  reason and a column, so that every reader reports it at its line and goes on where it can.

The checks cost nothing on ordinary lines: the C scanner (:data:`SCAN`) decodes, calls back
only on a constant, and a string is searched for surrogates only when the line holds a
``\\u`` escape of one. Readers tuned per line (the algebra's event reader) call :data:`SCAN`
themselves and hand whatever it does not take whole to :func:`load_line`, which words the
error.
"""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

from .errors import XmlEventsError

__all__ = [
    "JsonLineError",
    "load_line",
    "check_text",
    "is_blank",
    "split_lines",
    "text_lines",
    "SCAN",
    "JSON_SPACE",
    "MAX_LINE",
    "MAX_INT",
]

#: The longest line read (characters): a version table holds whole documents a line.
MAX_LINE = 1 << 30

#: The largest integer a field bounded to a column may hold: Spark's and Parquet's 64 bits.
MAX_INT = (1 << 63) - 1

#: JSON's white space (RFC 8259, section 2): what may surround a value, and fill a blank line.
JSON_SPACE = " \t\n\r"

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# A string (skipped whole) or one of the constants Python's decoder takes: the first
# constant outside a string is where the scanner stopped.
_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


class JsonLineError(XmlEventsError, ValueError):
    """Text that is not one well-formed, bounded JSON value: ``reason``, and the 1-based
    ``column`` (and ``line``, for text of several lines) where known. Readers of lines add
    the file and the line."""

    def __init__(self, reason: str, column: int | None = None, line: int | None = None
                 ) -> None:
        self.reason = reason
        self.column = column
        self.line = line
        where = (f"line {line}, column {column}: " if line is not None and column is not None
                 else f"column {column}: " if column is not None else "")
        super().__init__(f"{where}{reason}")


class _Constant(ValueError):
    """Raised from inside the scanner on ``NaN``, ``Infinity`` or ``-Infinity``."""


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)


#: The C scanner with the policy's constants refused: ``SCAN(text, index)`` gives ``(value,
#: end)``, raises ``StopIteration`` where no value starts, ``ValueError`` on a malformed or
#: refused one (a constant, an integer too long) and ``RecursionError`` when nested too deep.
SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(  # type: ignore[attr-defined]
    parse_constant=_refuse_constant).scan_once  # (set by JSONDecoder.__init__; untyped)


def load_line(text: str, *, max_length: int = MAX_LINE) -> Any:
    """The JSON value of ``text`` (one line, or a whole body: JSON white space around it).

    Raises:
        JsonLineError: the text is longer than ``max_length``, is not one JSON value, holds
            ``NaN`` or an infinity, nests deeper than the decoder can follow, holds an
            integer of more than 4,300 digits, or a string with a lone surrogate.

    >>> load_line(' {"time": 1.5} ')
    {'time': 1.5}
    >>> load_line('{"time": NaN}')
    Traceback (most recent call last):
    ...
    xmlevents._foundation.jsonlines.JsonLineError: column 10: NaN is not a JSON value (JSON \
has no NaN or infinities; write a number, or null)
    """
    if len(text) > max_length:
        raise JsonLineError(f"the line is {len(text):,} characters long; the limit is "
                            f"{max_length:,}")
    start = len(text) - len(text.lstrip(JSON_SPACE))
    try:
        value, end = SCAN(text, start)
    except (StopIteration, json.JSONDecodeError):
        raise _not_json(text) from None
    except _Constant as exc:
        raise _constant(text, str(exc)) from None
    except RecursionError:
        raise JsonLineError("not valid JSON: nested too deeply (arrays or objects inside each "
                            "other more than the decoder's limit, about 1,000 levels)") from None
    except ValueError:  # int() refuses more than sys.get_int_max_str_digits() digits
        raise JsonLineError(f"an integer of more than {sys.get_int_max_str_digits():,} "
                            "digits") from None
    if end < len(text) and text[end:].strip(JSON_SPACE):
        raise _not_json(text)
    if _SURROGATE_ESCAPE.search(text) is not None:
        check_text(value)
    return value


def _where(text: str, offset: int) -> tuple[int, int | None]:
    """Column (1-based) and, for text of several lines, line of ``offset`` in ``text``."""
    if "\n" not in text.rstrip(JSON_SPACE):
        return offset + 1, None
    line = text.count("\n", 0, offset) + 1
    return offset - (text.rfind("\n", 0, offset) + 1) + 1, line


def _constant(text: str, name: str) -> JsonLineError:
    """The error of a constant the scanner refused, at the first one outside a string."""
    offset = next((m.start(1) for m in _CONSTANT.finditer(text) if m.group(1)), None)
    column, line = _where(text, offset) if offset is not None else (None, None)
    return JsonLineError(f"{name} is not a JSON value (JSON has no NaN or infinities; write "
                         "a number, or null)", column, line)


def _not_json(text: str) -> JsonLineError:
    """The error of text the scanner stopped in, in the words of ``json.loads``."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        several = "\n" in text.rstrip(JSON_SPACE)
        return JsonLineError(f"not valid JSON: {exc.msg}", exc.colno,
                             exc.lineno if several else None)
    except (ValueError, RecursionError):  # pragma: no cover - the scanner failed first
        pass
    return JsonLineError("not valid JSON")


def check_text(value: Any, where: str = "") -> None:
    """Refuse a lone surrogate in any string of ``value`` (keys included).

    Raises:
        JsonLineError: naming the field (``where``, then the keys down to the string).
    """
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:  # no recursion: the value may nest as deep as the decoder went
        v, at = stack.pop()
        if isinstance(v, str):
            m = _SURROGATE.search(v)
            if m is not None:
                name = f" in {at}" if at else ""
                raise JsonLineError(
                    f"a lone surrogate \\u{ord(m.group()):04x}{name} (an escape that is half "
                    "of a UTF-16 pair, not a character: it cannot be written as UTF-8)")
        elif isinstance(v, dict):
            for k, item in v.items():
                stack.append((k, at))
                stack.append((item, f"{at}.{k}" if at else str(k)))
        elif isinstance(v, list):
            stack.extend((item, f"{at}[{i}]") for i, item in enumerate(v))


def is_blank(line: str) -> bool:
    """Whether ``line`` holds nothing but JSON white space: no value, and no error either
    (a line of U+000B is not blank: it is malformed)."""
    return not line.strip(JSON_SPACE)


def split_lines(text: str) -> Iterator[str]:
    """The lines of ``text``, each with its ``\\n``, split there only (see the module).

    >>> list(split_lines('{"a": 1}\\x0b{"a": 2}\\r\\n\\n'))
    ['{"a": 1}\\x0b{"a": 2}\\r\\n', '\\n']
    """
    return iter(io.StringIO(text, newline="\n"))


def text_lines(stream: IO[bytes], *, encoding: str = "utf-8") -> Iterator[str]:
    """The lines of a binary stream decoded as ``encoding``, split on ``\\n`` only (a text
    file opened with ``newline="\\n"``: no other break ends a line, none is translated).

    Raises:
        UnicodeDecodeError: bytes that are not ``encoding``, as the stream's decoder says.
    """
    wrapper = io.TextIOWrapper(stream, encoding=encoding, newline="\n")
    try:
        yield from wrapper
    finally:
        wrapper.detach()  # the stream is the caller's: not closed with the wrapper
