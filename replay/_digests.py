"""Unchanged subtrees, recognised without diffing (issue 29, item 2).

Between two versions of a document most subtrees do not change: a catalogue of 2,000 items
where a version changes 1–5 of them. xmldiff matches node by node by similarity over the
whole documents (its longest common subsequence of the post-orders, then a greedy pass), which
costs the documents' size, not what changed. Here, among the children of a matched pair, a
child whose subtree is *identical* to a child's on the other side is matched with it outright,
its whole subtree with it, and xmldiff never sees the nodes inside (:mod:`._match`).

Identical means: equal serialisations without the tail (lxml's own, of the subtree: tag and
prefix, attributes in document order, texts, the tails inside, comments and processing
instructions, the namespace declarations it needs). A subtree's *form* is that serialisation,
computed on first use and kept for the diff: only the children of matched pairs are ever
formed, so a version costs its changed paths and one serialisation of the children around
them, each in C. Equal forms are equal subtrees (no hash that could collide); subtrees equal
but for their attributes' order get other forms and are left to xmldiff, as before.

Pairs among siblings, in two steps (:func:`identical_children`): a form that occurs once among
the element children on each side pairs its two children (wherever they are: a moved item is
a move); the forms that repeat are paired in order along the longest common subsequence of the
remaining forms (difflib's matching blocks), so that of three equal ``<stock>0</stock>`` the
first stays the first.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator, Sequence
from difflib import SequenceMatcher
from typing import Any

from lxml import etree

__all__ = ["Forms", "identical_children", "post_order", "reverse_post_order",
           "breadth_first"]

Pair = tuple[Any, Any]


class Forms:
    """Subtree forms (see the module), computed once per element and kept."""

    def __init__(self) -> None:
        self._forms: dict[Any, bytes] = {}

    def of(self, e: Any) -> bytes:
        """``e``'s form: its serialisation without its tail."""
        form = self._forms.get(e)
        if form is None:
            form = self._forms[e] = etree.tostring(e, with_tail=False)
        return form


def identical_children(lkids: Sequence[Any], rkids: Sequence[Any], forms: Forms
                       ) -> list[Pair]:
    """Pairs (old, new) of children with identical subtrees: a form once on each side
    first, then the repeated forms in order along their longest common subsequence."""
    lforms = [forms.of(c) for c in lkids]
    rforms = [forms.of(c) for c in rkids]
    lcount, rcount = Counter(lforms), Counter(rforms)
    pairs: list[Pair] = []
    rby = {f: c for f, c in zip(rforms, rkids, strict=True) if rcount[f] == 1}
    lrest: list[int] = []
    for i, f in enumerate(lforms):
        if lcount[f] == 1 and f in rby:
            pairs.append((lkids[i], rby[f]))
        elif f in rcount and (lcount[f] > 1 or rcount[f] > 1):
            lrest.append(i)
    if lrest:
        rrest = [j for j, f in enumerate(rforms) if f in lcount
                 and (lcount[f] > 1 or rcount[f] > 1)]
        matcher = SequenceMatcher(None, [lforms[i] for i in lrest],
                                  [rforms[j] for j in rrest], autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            pairs.extend((lkids[lrest[a + k]], rkids[rrest[b + k]]) for k in range(size))
    return pairs


# xmldiff's traversals (xmldiff.utils), passing over the inside of the subtrees in ``skip``
# (identical ones, matched whole): each node of ``skip`` is visited, its descendants are not.
# The order of what is visited is xmldiff's.


def post_order(root: Any, skip: set[Any]) -> Iterator[Any]:
    """Children before their parent, in document order."""
    stack: list[tuple[Any, Iterator[Any] | None]] = [(root, None)]
    while stack:
        node, kids = stack[-1]
        if kids is None:
            kids = iter(()) if node in skip else iter(node)
            stack[-1] = (node, kids)
        child = next(kids, None)
        if child is None:
            stack.pop()
            yield node
        else:
            stack.append((child, None))


def reverse_post_order(root: Any, skip: set[Any]) -> Iterator[Any]:
    """Children (last first) before their parent."""
    stack: list[tuple[Any, Iterator[Any] | None]] = [(root, None)]
    while stack:
        node, kids = stack[-1]
        if kids is None:
            # A copy: the diff deletes nodes as this visits them.
            kids = iter(()) if node in skip else reversed(node.getchildren())
            stack[-1] = (node, kids)
        child = next(kids, None)
        if child is None:
            stack.pop()
            yield node
        else:
            stack.append((child, None))


def breadth_first(root: Any, skip: set[Any]) -> Iterator[Any]:
    """Level by level, each in document order."""
    queue = deque([root])
    while queue:
        node = queue.popleft()
        yield node
        if node not in skip:
            queue.extend(node)
