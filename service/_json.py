"""The service's JSON as it stores and sends it: compact, non-ASCII kept, and written by hand
on the paths that run for every signal (issue 31, item 10).

:data:`dumps` is the reference; every other function here gives the same text for what it
is given (``tests/service/test_writer.py`` checks them against it), at a fraction of its
cost on the shapes the service writes most — an object of string values, a signal — which
made a fifth of the writer's time in batches, and a third of a compaction's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._engine import Signal

__all__ = ["dumps", "tree_json", "string", "object_json", "signal_json", "SignalRow",
           "signal_row", "kept_json"]

#: Compact JSON, as stored.
dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

#: A string's JSON (non-ASCII kept).
string = json.encoder.encode_basestring

# The C encoder :data:`dumps` builds at every call (``JSONEncoder.iterencode``), built once:
# that construction was half the cost of encoding a signal. No circular check (a marker
# dict kept across calls could keep a failed call's ids): only for values the service
# builds itself, trees by construction.
_c_encoder = getattr(json.encoder, "c_make_encoder", None)
_encode = (None if _c_encoder is None else
           _c_encoder(None, None, string, None, ":", ",", False, False, True))


def tree_json(value: dict[str, Any] | list[Any]) -> str:
    """:data:`dumps` of an object or array the service built (acyclic), the same text,
    with the C encoder built once (:data:`dumps` itself where Python has none)."""
    if _encode is None:
        return dumps(value)
    return "".join(_encode(value, 0))


def object_json(values: Mapping[str, Any]) -> str:
    """:data:`dumps` of parameters or bindings: by hand when every value is a string (the
    common case, a third cheaper than the C encoder's call), else :func:`tree_json`."""
    try:
        return "{" + ",".join([string(k) + ":" + string(v) for k, v in values.items()]) + "}"
    except TypeError:  # a number or a boolean (or a key that is no string)
        return tree_json(values if type(values) is dict else dict(values))


def signal_json(s: Signal, *, ident: bool = True) -> str:
    """:data:`dumps` of :meth:`Signal.to_json` (``ident``), or of it without the id (a
    compacted log's kept signal, whose id its tick gives back)."""
    return _signal_text(s.id, s.type, s.params, s.ts, s.time, ident)


def _signal_text(ident: str, etype: str, params: Mapping[str, Any], ts: int,
                 time: float | None, with_id: bool) -> str:
    if time is not None:
        body: dict[str, Any] = {"id": ident, "type": etype, "params": dict(params),
                                "tick": ts, "time": time}
        if not with_id:
            del body["id"]
        return tree_json(body)
    head = f'{{"id":{string(ident)},"type":' if with_id else '{"type":'
    return f'{head}{string(etype)},"params":{object_json(params)},"tick":{int(ts)!r}}}'


# --- a compaction's kept signals, handed on unencoded ---------------------------------------
#
# With ``serve --committer process`` a compaction's log goes to the committer process; its
# kept signals go as tuples (pickled in C, a microsecond each) and are encoded there, so that
# the writer goes on with the next changes meanwhile: encoding 100,000 kept signals took the
# writer 0.35-0.9 s a compaction (issue 31, item 10). The text is :func:`dumps`'s, as before.

#: A signal as it is handed on: (id, type, params, tick, time).
SignalRow = tuple[str, str, dict[str, Any], int, "float | None"]


def signal_row(s: Signal) -> SignalRow:
    """The :data:`SignalRow` of a signal (its parameters a dict, so that it pickles)."""
    params = s.params if type(s.params) is dict else dict(s.params)
    return (s.id, s.type, params, s.ts, s.time)


def kept_json(signals: Sequence[SignalRow]) -> str:
    """A compacted log's ``kept`` row: the signals' JSON without their ids (each tick gives
    it back), as an array."""
    return "[" + ",".join([_signal_text(*s, False) for s in signals]) + "]"
