"""``xmlevents detect`` writes each composite's line itself rather than through the JSON
encoder (issue 13, speed): the text must be exactly the encoder's, for any ids, names and
documents (quotes, backslashes, control characters, non-ASCII, lone surrogates)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents._cli.detect import _composite_line, _line_encoder
from xmlevents.algebra import EventGraph, Op, PathInstance, PrimitiveEvent

TEXT = st.text(alphabet=st.sampled_from(['a', '"', "\\", "\n", "\x00", "é", "\u2028", "😀",
                                         "\ud800", " ", "/"]), min_size=1, max_size=6)


@settings(max_examples=examples(100), deadline=None)
@given(item=TEXT, ids=st.lists(TEXT, min_size=3, max_size=3), doc=st.none() | TEXT,
       start=st.integers(1, 10**12))
def test_a_composite_line_is_the_encoders(item: str, ids: list[str], doc: str | None,
                                          start: int) -> None:
    graph = EventGraph("Ei := ins(item) ; (ins(item/price) & ins(item/quantity))\n"
                       "Eo := Ei & ins(item/x)")
    dumps = _line_encoder()
    stream = [("/order/item", [], ids[0]), ("/order/item/price", ["p"], ids[1]),
              ("/order/item/x", ["x"], "x1"), ("/order/item/quantity", ["q"], ids[2])]
    raised = []
    for ts, (path, tail, ident) in enumerate(stream, start=start):
        pi = PathInstance.of(path, ["o", item, *tail])
        raised += graph.feed(PrimitiveEvent(ident, ts, Op.INS, pi, doc=doc))
    assert raised
    for c in raised:
        assert _composite_line(c, dumps) == dumps(c.to_dict())
