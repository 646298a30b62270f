"""The service's JSON as it stores and sends it: compact, non-ASCII kept, and written by hand
on the paths that run for every signal (issue 31, item 10).

:data:`dumps` is the reference; every other function here gives the same text for what it
is given (``tests/service/test_writer.py`` checks them against it), at a fraction of its
cost on the shapes the service writes most — an object of string values, a signal — which
made a fifth of the writer's time in batches, and a third of a compaction's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._engine import Signal

__all__ = ["dumps", "tree_json", "string", "object_json", "signal_json"]

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
    if s.time is not None:
        body = s.to_json()
        if not ident:
            del body["id"]
        return tree_json(body)
    head = f'{{"id":{string(s.id)},"type":' if ident else '{"type":'
    return f'{head}{string(s.type)},"params":{object_json(s.params)},"tick":{int(s.ts)!r}}}'
