"""A request's batch of events read and checked in one pass of C (issue 31, item 10).

In a long run of batches the event loop's reading of ``POST /events`` — the JSON parsed by the
project's reader, then each event checked in Python — took a fifth of the GIL, time the writer
thread waited for (2.5 ms a batch of 1,000 in the served process). Where msgspec is installed
(the ``service`` extra), the common batch — a non-empty array of objects of exactly ``type``, a
non-empty string, and ``params``, an object of strings — is decoded into checked events by
msgspec alone. Whatever else a body holds (a time, a number, a lone surrogate, NaN, a single
object, malformed JSON) is left to the reader and the checks it always went through, which
give the same events or name the error as before: the fast path never refuses a body, it only
declines it (``tests/service/test_batch.py`` checks both agree on random bodies).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

__all__ = ["read_batch"]

#: An event of a request's batch as the writer takes it: type, parameters, time.
Checked = tuple[str, dict[str, Any], float | None]

_DECODE: Callable[[bytes], list[Any]] | None = None
_ERROR: type[Exception] = Exception
_LOOKED = False  # for msgspec, once: imported at the first batch, not with the service


def _decoder() -> Callable[[bytes], list[Any]] | None:
    """msgspec's decoder of the common batch, or None where msgspec is not installed."""
    global _DECODE, _ERROR, _LOOKED
    if not _LOOKED:
        _LOOKED = True
        try:
            import msgspec
        except ImportError:
            return None

        # made, not declared: the module's annotations are strings msgspec would resolve
        # in the module's namespace, which has no msgspec
        event = msgspec.defstruct("Event", [("type", Annotated[str, msgspec.Meta(min_length=1)]),
                                            ("params", dict[str, str])],
                                  forbid_unknown_fields=True)
        _DECODE = msgspec.json.Decoder(list[event]).decode  # type: ignore[valid-type]
        _ERROR = msgspec.DecodeError  # ValidationError is one
    return _DECODE


def read_batch(raw: bytes) -> list[Checked] | None:
    """The events of the body ``raw`` if it is the common batch (see the module), checked as
    :func:`~._engine.check_signal` would find them; None for any other body (read it the
    long way)."""
    decode = _decoder()
    if decode is None:
        return None
    try:
        events = decode(raw)
    except _ERROR:
        return None
    if not events:
        return None
    return [(e.type, e.params, None) for e in events]
