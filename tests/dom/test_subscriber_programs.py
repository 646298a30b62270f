"""Random subscriber programs — edits, batches, flushes, closing, receivers that edit or
raise — and the recording always replays to the document (issue 16, item 3)."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

import xmlevents
from tests.strategies import examples

DEFS = ("Done := (ins(item) ; ins(item/price)) with mode=custom\n"
        "Gone := del(item)\nNote := ins(order/note)")
STEPS = st.lists(st.tuples(st.sampled_from(["item", "price", "text", "attr", "remove", "move",
                                            "batch", "flush"]), st.integers(0, 3)),
                 max_size=25)
REACTIONS = st.lists(st.sampled_from(["note", "raise", "stamp", "none"]), min_size=3,
                     max_size=3)


def _receiver(kind: str) -> Any:
    def react(doc: Any, event: Any) -> None:
        root = doc.getroot()
        if root is None:
            return
        if kind == "note" and len(root) < 40:
            etree.SubElement(root, "note").text = event.type.name
        elif kind == "stamp":
            root.set("last", str(event.ts))
        elif kind == "raise":
            raise ValueError(f"receiver of {event.type.name}")
    return react


@settings(max_examples=examples(150), deadline=None)
@given(STEPS, REACTIONS)
def test_the_recording_replays_to_the_document(steps: list[tuple[str, int]],
                                               reactions: list[str]) -> None:
    doc = xmlevents.fromstring("<order><box/></order>")
    doc.define(DEFS)
    for name, kind in zip(("Done", "Gone", "Note"), reactions, strict=True):
        doc.subscribe(name, _receiver(kind))
    with doc.record() as rec:
        items: list[Any] = []
        batch: contextlib.ExitStack | None = None
        for action, k in steps:
            root = doc.getroot()
            live = [i for i in items if i.getparent() is not None]
            target = live[k % len(live)] if live else None
            with contextlib.suppress(ValueError, ExceptionGroup):  # receivers raise
                if action == "item":
                    items.append(etree.SubElement(root, "item"))
                elif action == "price" and target is not None:
                    etree.SubElement(target, "price").text = str(k)
                elif action == "text" and target is not None:
                    target.text = f"t{k}" if k else None
                elif action == "attr" and target is not None:
                    target.set("n", str(k))
                elif action == "remove" and target is not None:
                    target.getparent().remove(target)
                elif action == "move" and target is not None:
                    root.find("box").append(target)
                elif action == "batch":
                    if batch is None:
                        batch = contextlib.ExitStack()
                        batch.enter_context(doc.batch())
                    else:
                        batch, closing = None, batch
                        closing.close()
                elif action == "flush":
                    doc.flush()
        with contextlib.suppress(ValueError, ExceptionGroup):
            if batch is not None:
                batch.close()
        with contextlib.suppress(ValueError, ExceptionGroup):
            doc.close()  # receivers of what closing raises may edit: recorded too
    assert etree.tostring(rec.replay(), method="c14n") == etree.tostring(doc.tree,
                                                                          method="c14n")
