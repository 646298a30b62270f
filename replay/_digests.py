"""Unchanged subtrees recognised without comparing them node by node (issue 29, item 2).

Between two versions of a document most subtrees do not change: a catalogue of 2,000 items
where a version changes 1–5 of them. xmldiff matches node by node by similarity over the whole
documents — the longest common subsequence (Myers) of the post-orders, two nodes "equal" when
their similarity ratio reaches ``F``, then a greedy pass over the rest — and its diff phase then
visits every node. Both cost the documents' size, not what changed.

The rule: **an unchanged subtree is matched whole; what is left is xmldiff's.** A node's
*form* is the exclusive canonical form (C14N) of its subtree, without its tail (lxml's, in C:
tag and prefix, the namespace declarations it uses, attributes sorted, texts, the tails
inside, comments), computed once per node and kept. Equal forms are equal subtrees (no hash
that could collide). Canonical, not as serialised: versions are equal when their C14N is
(DESIGN section 5), so a form does not depend on how a tree came to be — the replayed document
(attributes in the order they were set, declarations where they were made) and the parsed
version it equals give every subtree the same form, and the local replay (which diffs against
the document) pairs as Spark's diff stage (which diffs parsed versions) does. Then:

1. *Equal subtrees matched outright.* Among the element children of a pair the pre-matching
   has matched (:func:`~._match.prematch`, top-down from the roots), those not otherwise
   paired whose forms are equal are paired in order — the longest common subsequence of the
   two lists of forms — and nothing inside them is compared or visited again: xmldiff sees
   neither them nor their insides. A keyed or unique-tag pair with equal forms is taken whole
   the same way.
2. *Similar without computing.* On what is left, two elements, or two comments, with equal
   forms inside the same keyed element (or both outside any: :mod:`._match`'s owner rule)
   have xmldiff's ratio ``sqrt((1 + c**2) / 2)`` (equal texts and attributes; ``c`` the share
   of matched children) or 1, never below ``sqrt(1/2)``: where ``F`` is at most that (its
   default is 0.5) the longest common subsequence takes such a pair as equal without
   computing the ratio (:func:`similar`), and makes the choices it would make with the ratio.
   Documents with a processing instruction are left wholly to xmldiff (its ratio fails on
   them, and the script falls back to ``sync``; that failure must stay).
3. *Nothing to do inside.* After the matching, a pair taken whole, or a pair xmldiff matched
   whose forms are equal and whose nodes inside are each matched to their *twin* (the node at
   the same place in the other subtree), is a *twin subtree* (:func:`twin_subtrees`): the
   diff phase visits its root only (moved, its tail updated). Where a matched pair's children
   are out of order, the unchanged ones are kept in place first
   (:meth:`~._match.KeyedDiffer.align_children`): a child that changed moves, not one that
   did not.

What this changes against xmldiff alone: xmldiff's longest common subsequence of the
post-orders, with "similar" as its equality, runs diagonally through look-alike siblings, so
after an insertion, a deletion or a move among them it aligns them by position and rewrites
each one's texts (a catalogue of ~2,000 look-alike items: hundreds of text updates a version
for 1–5 changes). Matched whole, an unchanged item keeps its nodes, and the version's script
is what changed. Where siblings differ enough for xmldiff to tell them apart the scripts are
the same: on every script case of the tests, on the example history, and on the two real pom
histories (the same events, with keys and without). Cost: one serialisation per child of a
matched pair and one comparison of bytes per unchanged subtree, instead of a ratio and a
visit per node; xmldiff's work remains only on what changed.
``--no-identical-subtrees`` (``DiffOptions(identical_subtrees=False)``) is xmldiff node by
node, as before issue 29.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Container, Iterator, Mapping
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
        #: What else is computed once per version, by root: its namespace declarations
        #: (:func:`~._script.diff_script`).
        self.declared: dict[Any, Any] = {}

    def keep(self, root: Any) -> None:
        """Forget what was computed of nodes outside ``root``'s tree (the version diffed
        from)."""
        self._forms = {e: f for e, f in self._forms.items() if e.getroottree().getroot() is root}
        self.declared = {r: d for r, d in self.declared.items() if r is root}

    def of(self, e: Any) -> bytes:
        """``e``'s form: an element's exclusive canonical form (without its tail); a
        comment's or an instruction's serialisation, which is its canonical form (lxml's C14N
        of one of those alone crashes the process)."""
        form = self._forms.get(e)
        if form is None:
            form = self._forms[e] = (
                etree.tostring(e, method="c14n", exclusive=True) if type(e.tag) is str
                else etree.tostring(e, with_tail=False))
        return form


def similar(ratio: Callable[[Any, Any], float], F: float, forms: Forms,
            owner: Callable[[Any], Any] | None = None) -> Callable[[Any, Any], bool]:
    """xmldiff's test of its longest common subsequence, ``ratio(a, b) >= F``, answered
    without the ratio for two elements or two comments with equal forms and one owner (see
    the module; ``owner``: :meth:`~._match.KeyValues.owner`, None without keys)."""
    if F > FLOOR:
        return lambda a, b: ratio(a, b) >= F

    def test(a: Any, b: Any) -> bool:
        tag = a.tag
        if (tag == b.tag and (type(tag) is str or tag is etree.Comment)
                and (owner is None or owner(a) == owner(b))
                and forms.of(a) == forms.of(b)):
            return True
        return ratio(a, b) >= F
    return test


def twin_subtrees(right: Any, r2l: Mapping[int, Any], forms: Forms,
                  identical: Container[Any] = frozenset()) -> set[Any]:
    """Both nodes of every outermost matched pair under ``right`` (the new version's root,
    itself excluded) whose forms are equal and whose nodes inside are each matched to their
    twin, or that were paired whole (in ``identical``, both nodes: their insides are not in
    the map). ``r2l``: xmldiff's map from ``id`` of a new node to the old node matched with
    it."""
    found: set[Any] = set()
    # Not the roots' forms (two canonical forms of the whole documents, which differ but for
    # an unchanged version, where every child is a twin anyway).
    stack = list(right)
    while stack:
        r = stack.pop()
        left = r2l.get(id(r))
        if r in identical or (left is not None and forms.of(left) == forms.of(r)
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
