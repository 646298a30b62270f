"""Unchanged subtrees recognised without comparing them node by node (issue 29, item 2).

Between two versions of a document most subtrees do not change: a catalogue of 2,000 items
where a version changes 1–5 of them. xmldiff matches node by node by similarity over the whole
documents — the longest common subsequence (Myers) of the post-orders, two nodes "equal" when
their similarity ratio reaches ``F``, then a greedy pass over the rest — and its diff phase then
visits every node. Both cost the documents' size, not what changed.

The rule: **the matching is xmldiff's, exactly; only how it is computed changes.** A node's
*form* is the serialisation of its subtree without its tail (lxml's own, in C: tag and prefix,
the namespace declarations it needs, attributes in document order, texts, the tails inside,
comments), computed on first use and kept. Equal forms are equal subtrees (no hash that could
collide). Then:

1. *Similar without computing.* Two elements, or two comments, with equal forms inside the same
   keyed element (or both outside any: :mod:`._match`'s owner rule) have xmldiff's ratio
   ``sqrt((1 + c**2) / 2)`` (equal texts and attributes; ``c`` the share of matched children)
   or 1, never below ``sqrt(1/2)``: where ``F`` is at most that (its default is 0.5) the
   longest common subsequence takes such a pair as equal without computing the ratio
   (:func:`similar`). Every other pair gets xmldiff's ratio, so the subsequence — its trimming
   of the common prefix and suffix, its snakes, its tie-breaking — is the one xmldiff computes,
   and so is the greedy pass after it, which is unchanged. Documents with a processing
   instruction are left wholly to xmldiff (its ratio fails on them, and the script falls back
   to ``sync``; that failure must stay).
2. *Nothing to do inside.* After the matching, a matched pair whose forms are equal and whose
   nodes inside are each matched to their *twin* (the node at the same place in the other
   subtree) is a *twin subtree* (:func:`twin_subtrees`): xmldiff's diff phase would visit
   every node inside and find nothing to change (same tags, attributes, texts, children in
   order), so :class:`~._match.KeyedDiffer` visits its root only (moved, its tail updated).

Hence the events are the plain diff's for every pair of versions (a property of
``tests/replay/test_digests.py``): what changes is the cost. Equal forms are compared instead of
ratios along the unchanged stretches (one serialisation per node, in C), and the diff phase
visits the changed paths and the roots of unchanged subtrees beside them. What stays is
xmldiff's own work where it compares nodes that differ — the edges of the changes, and the
diagonals its longest-common-subsequence search tries around them.

An earlier version of this module (session 12) paired identical children *before* xmldiff,
wherever they were; that is faster still, but it changes the matching: where xmldiff aligns
look-alike siblings by position, pairing the identical ones makes a reordering a move (a third
``ItemComplete`` on the Spark tests' history), and nodes it takes out of xmldiff's greedy pass
make that pass pair the rest differently (69 of commons-csv's 545 version pairs differed).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lxml import etree

__all__ = ["Forms", "similar", "twin_subtrees", "has_instructions", "post_order",
           "reverse_post_order", "breadth_first"]

#: The lowest ratio xmldiff gives two nodes with equal forms: equal texts, no child matched
#: (computed as xmldiff computes it, ``sqrt((1**2 + 0**2) / 2)``).
FLOOR = math.sqrt((1.0**2 + 0.0**2) / 2)


class Forms:
    """Subtree forms (see the module), computed once per node and kept."""

    def __init__(self) -> None:
        self._forms: dict[Any, bytes] = {}

    def of(self, e: Any) -> bytes:
        """``e``'s form: its serialisation without its tail."""
        form = self._forms.get(e)
        if form is None:
            form = self._forms[e] = etree.tostring(e, with_tail=False)
        return form


def similar(ratio: Callable[[Any, Any], float], F: float, forms: Forms,
            owners: Mapping[Any, Any]) -> Callable[[Any, Any], bool]:
    """xmldiff's test of its longest common subsequence, ``ratio(a, b) >= F``, answered
    without the ratio for two elements or two comments with equal forms and one owner (see
    the module; ``owners``: :func:`~._match.key_owners`)."""
    if F > FLOOR:
        return lambda a, b: ratio(a, b) >= F

    def test(a: Any, b: Any) -> bool:
        tag = a.tag
        if (tag == b.tag and (type(tag) is str or tag is etree.Comment)
                and (not owners or owners.get(a) == owners.get(b))
                and forms.of(a) == forms.of(b)):
            return True
        return ratio(a, b) >= F
    return test


def twin_subtrees(right: Any, r2l: Mapping[int, Any], forms: Forms) -> set[Any]:
    """Both nodes of every outermost matched pair under ``right`` (the new version's root,
    itself included) whose forms are equal and whose nodes inside are each matched to their
    twin. ``r2l``: xmldiff's map from ``id`` of a new node to the old node matched with it."""
    found: set[Any] = set()
    stack = [right]
    while stack:
        r = stack.pop()
        left = r2l.get(id(r))
        if (left is not None and forms.of(left) == forms.of(r)
                and all(r2l.get(id(b)) is a for a, b in zip(left.iter(), r.iter(), strict=True))):
            found.update((left, r))
        else:
            stack.extend(r)
    return found


def has_instructions(root: Any) -> bool:
    """Whether a processing instruction lies under ``root`` (xmldiff's ratio fails on one)."""
    return next(root.iter(etree.ProcessingInstruction), None) is not None


# xmldiff's traversals (xmldiff.utils), passing over the inside of the subtrees in ``skip``
# (twin subtrees, which the diff phase visits at their roots only): each node of ``skip`` is
# visited, its descendants are not. The order of what is visited is xmldiff's.


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
