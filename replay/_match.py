"""Which nodes of two versions are the same node: keys and unique tags first, then xmldiff.

xmldiff's ``Differ`` matches nodes by similarity alone, so on real histories it pairs a
``profiles`` element with a ``contributors`` one, or a dependency with another, and the diff
then invents renames, moves and re-insertions. :class:`KeyedDiffer` is a ``Differ`` whose
:meth:`~KeyedDiffer.match` first *pre-matches* what the documents themselves decide, top-down
from the roots (always matched, as in xmldiff):

1. among the children of a matched pair, keyed elements (:mod:`._keys`) with equal key values,
   where that value is unique among the element siblings on both sides;
2. among the same children, an element whose tag is unique among its element siblings on both
   sides and that is unkeyed on both sides, with its namesake (``unique_tags``; an
   ``xml:id``-like unique attribute that differs vetoes it, as it does in xmldiff);
3. each new pair's children in turn; when no matched pair is left to visit, keyed elements
   still unmatched, document-wide, by key value where the value occurs once in each whole
   version (a dependency moved to another ``dependencies`` block); their children in turn;
4. then unmatched ancestors of keyed pairs that those pairs agree on (walking up both sides
   while the tags are equal; an old ancestor and a new one paired when each only ever meets
   the other): a ``profile`` or a ``plugin``, whose tag repeats among its siblings, is the one
   its keyed dependencies say; their children in turn.

With ``identical_subtrees`` (the default), after 1 and 2 the children left whose subtrees are
equal are paired in order, and a pair with equal subtrees is taken whole: nothing inside it
is pre-matched, compared or visited again (:mod:`._digests`).

Only elements are pre-matched (never a comment or a processing instruction). The other nodes
go through xmldiff's own matching, run here on those nodes only: its fast-match pass (the
longest common subsequence of the post-orders, nodes paired when similar enough) if
``fast_match``, then its greedy pass (each node with the most similar one left). There a node
of a keyed element (the element, or a node inside it) matches only a node of a keyed element
with the same key value (similarity 0 otherwise): a key identifies its whole subtree, so a
dependency whose key changed was removed and another added, the old one's ``groupId`` does not
become the new one's, and no ``plugin`` is renamed into a dependency. Siblings that share a key
value (reported by :func:`key_notes`) are left to similarity. xmldiff's diff phase then makes
the script from the matching: a pre-matched pair under other parents is a move, one out of
order a move among its siblings, a changed text an update.

Written against xmldiff 3.0's ``Differ`` (its ``match``/``node_ratio``/``append_match`` and
the state they keep); the passes are re-implemented here, not copied, so that they run on the
nodes the pre-matching left.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from lxml import etree
from xmldiff import actions, utils
from xmldiff.diff import Differ

from ._digests import (
    Forms,
    breadth_first,
    has_instructions,
    post_order,
    reverse_post_order,
    similar,
    twin_subtrees,
)
from ._errors import EditScriptError
from ._keys import Key, KeyNote, KeyValue

__all__ = ["KeyedDiffer", "KeyValues", "key_values", "key_notes", "prematch",
           "readable_path"]

class _NamespaceChanged(EditScriptError, ValueError):
    """A prefix bound to another URI in the new version, which xmldiff's diff phase cannot
    express (never escapes :func:`~._script.edit_script`, which falls back to ``sync``)."""


#: An element's identity under a key: its key's element name and its key value.
Identity = tuple[str, KeyValue]
Pair = tuple[Any, Any]


def key_values(root: Any, keys: Mapping[str, Key]) -> dict[Any, Identity]:
    """Every keyed element under ``root`` (itself included) with its identity, in document
    order. Keys are the elements themselves (an lxml proxy kept alive keeps its identity)."""
    found: dict[Any, Identity] = {}
    if not keys:
        return found
    for e in root.iter(*keys):
        value = keys[e.tag].value(e)
        if value is not None:
            found[e] = (e.tag, value)
    return found


class KeyValues:
    """The identity of each keyed element, computed when first asked and kept: a diff asks
    only for the elements it has not matched otherwise (an unchanged subtree is matched
    whole first, and a catalogue of 2,000 keyed items with 1–5 changes a version asks for a
    handful). Keys are the elements themselves (proxies kept alive keep their identity)."""

    def __init__(self, keys: Mapping[str, Key]) -> None:
        self.keys = keys
        self._known: dict[Any, Identity | None] = {}

    def __bool__(self) -> bool:
        return bool(self.keys)

    def get(self, e: Any) -> Identity | None:
        """``e``'s identity, None if it is not keyed."""
        known = self._known
        if e in known:
            return known[e]
        key = self.keys.get(e.tag) if type(e.tag) is str else None
        value = None if key is None else key.value(e)
        identity = known[e] = None if value is None else (e.tag, value)
        return identity

    def __contains__(self, e: Any) -> bool:
        return self.get(e) is not None

    def owner(self, node: Any) -> Identity | None:
        """The identity of the innermost keyed element around ``node`` (itself included),
        None outside any: what :meth:`KeyedDiffer.node_ratio` compares."""
        while node is not None:
            identity = self.get(node)
            if identity is not None:
                return identity
            node = node.getparent()
        return None


def _elements(parent: Any) -> list[Any]:
    return [c for c in parent if isinstance(c.tag, str)]


def _same_unique_attrs(left: Any, right: Any, uniqueattrs: Sequence[Any]) -> bool:
    """xmldiff's rule: the first unique attribute (a name, or a (tag, name) pair for that tag
    only) either element has decides."""
    for name in uniqueattrs:
        if not isinstance(name, str):
            tag, name = name
            if tag != left.tag or tag != right.tag:
                continue
        if name in left.attrib or name in right.attrib:
            return bool(left.get(name) == right.get(name))
    return True


def _keyed_children(lkids: list[Any], rkids: list[Any], values: KeyValues
                    ) -> Iterator[Pair]:
    """Children pairs with one key value, once on each side."""
    rby: dict[Identity, list[Any]] = {}
    for c in rkids:
        if (identity := values.get(c)) is not None:
            rby.setdefault(identity, []).append(c)
    lby: dict[Identity, list[Any]] = {}
    for c in lkids:
        if (identity := values.get(c)) is not None:
            lby.setdefault(identity, []).append(c)
    for identity, ls in lby.items():
        rs = rby.get(identity)
        if rs is not None and len(ls) == 1 and len(rs) == 1:
            yield ls[0], rs[0]


def _namesakes(lkids: list[Any], rkids: list[Any], values: KeyValues,
               uniqueattrs: Sequence[Any]) -> Iterator[Pair]:
    """Unkeyed children pairs whose tag is unique among the element children on each side."""
    lcount, rcount = Counter(c.tag for c in lkids), Counter(c.tag for c in rkids)
    rby = {c.tag: c for c in rkids if rcount[c.tag] == 1}
    for c in lkids:
        other = rby.get(c.tag) if lcount[c.tag] == 1 else None
        if (other is not None and c not in values and other not in values
                and _same_unique_attrs(c, other, uniqueattrs)):
            yield c, other


def _document_wide(left: Any, right: Any, values: KeyValues, taken: set[Any]
                   ) -> Iterator[Pair]:
    """Keyed elements paired by an identity that occurs once in each whole version (none
    to look for where every keyed element of a side is matched already)."""
    names = list(values.keys)
    if all(e in taken for e in left.iter(*names)) or all(e in taken for e in right.iter(*names)):
        return

    def once(root: Any) -> dict[Identity, Any]:
        seen: dict[Identity, Any] = {}
        repeated: set[Identity] = set()
        for e in root.iter(*names):
            identity = values.get(e)
            if identity is None:
                continue
            if identity in seen:
                repeated.add(identity)
            seen[identity] = e
        return {i: e for i, e in seen.items() if i not in repeated}

    rights = once(right)
    for identity, e in once(left).items():
        other = rights.get(identity)
        if other is not None:
            yield e, other


def _identical_children(lkids: list[Any], rkids: list[Any], taken: set[Any], forms: Forms
                        ) -> Iterator[Pair]:
    """Children not yet paired whose forms are equal, in order: the longest common
    subsequence of the two lists of forms (equal siblings paired first to first)."""
    ls = [c for c in lkids if c not in taken]
    rs = [c for c in rkids if c not in taken]
    if not ls or not rs:
        return
    lforms, rforms = [forms.of(c) for c in ls], [forms.of(c) for c in rs]
    if len(ls) * len(rs) > 64 and not set(lforms) & set(rforms):
        return  # nothing in common: spare the search
    for i, j in utils.longest_common_subsequence(lforms, rforms):
        yield ls[i], rs[j]


def _alike_leftovers(lkids: list[Any], rkids: list[Any], taken: set[Any], values: KeyValues,
                     forms: Forms) -> Iterator[Pair]:
    """After the identical pairing, the one unkeyed child of a tag left on each side, paired
    when most of its children are unchanged (at least half of the larger side's element
    children paired by equal forms): a plugin that lost its ``version`` among unchanged
    plugins. Unique among the leftovers only, not among all the children, so an item deleted
    and another inserted (whose children differ) stay a deletion and an insertion."""
    # A tag unique among all the children is the namesakes' rule's (after the keys): only
    # a repeated one, left once on each side, is looked at here.
    lall, rall = Counter(c.tag for c in lkids), Counter(c.tag for c in rkids)
    ls = [c for c in lkids if c not in taken and (lall[c.tag] > 1 or rall[c.tag] > 1)]
    rs = [c for c in rkids if c not in taken and (lall[c.tag] > 1 or rall[c.tag] > 1)]
    lcount, rcount = Counter(c.tag for c in ls), Counter(c.tag for c in rs)
    rby = {c.tag: c for c in rs if rcount[c.tag] == 1}
    for c in ls:
        other = rby.get(c.tag) if lcount[c.tag] == 1 else None
        if other is None:
            continue
        lk, rk = _elements(c), _elements(other)
        if forms.of(c) == forms.of(other):
            continue  # an unchanged one out of order: the alignment keeps it in place
        if not lk or not rk or (values and any(
                True for side in (c, other) for _ in side.iter(*values.keys))):
            continue  # what keys hold inside is the keys' to pair (document-wide, later)
        common = len(utils.longest_common_subsequence([forms.of(k) for k in lk],
                                                      [forms.of(k) for k in rk]))
        if 2 * common >= max(len(lk), len(rk)):
            yield c, other


def prematch(left: Any, right: Any, values: KeyValues, *,
             unique_tags: bool = True, uniqueattrs: Sequence[Any] = (),
             forms: Forms | None = None, identical: set[Any] | None = None) -> list[Pair]:
    """The pairs (old, new) that keys, unique tags and (given ``forms``) equal subtrees
    decide, the roots excluded (see the module): top-down from the roots, then document-wide
    by key value, then top-down again. Both nodes of a pair whose subtrees are equal go into
    ``identical`` (given), and the pairing does not go inside them."""
    pairs: list[Pair] = []
    taken: set[Any] = {left, right}
    queue: deque[Pair] = deque([(left, right)])
    same = identical if identical is not None else set()

    def take(candidates: Iterable[Pair], whole: bool = False) -> None:
        for a, b in candidates:
            if a in taken or b in taken:
                continue
            taken.update((a, b))
            pairs.append((a, b))
            if whole or (forms is not None and forms.of(a) == forms.of(b)):
                same.update((a, b))  # nothing inside to pair: its insides are twins
            else:
                queue.append((a, b))

    def drain() -> None:
        while queue:
            parent, namesake = queue.popleft()
            lkids, rkids = _elements(parent), _elements(namesake)
            if not lkids or not rkids:
                continue
            if forms is not None:
                # First (equal forms have equal key values and tags, so neither pairs them
                # otherwise); keys and names are still unique or not among all the children.
                take(_identical_children(lkids, rkids, taken, forms), whole=True)
                if all(c in taken for c in lkids) or all(c in taken for c in rkids):
                    continue
                if unique_tags:
                    take(_alike_leftovers(lkids, rkids, taken, values, forms))
            if values:
                take(_keyed_children(lkids, rkids, values))
            if unique_tags:
                take(_namesakes(lkids, rkids, values, uniqueattrs))

    drain()
    if values:
        take(_document_wide(left, right, values, taken))
        drain()
        # Ancestors the keyed pairs agree on (a profile, a plugin: tags that repeat), then
        # what unique tags and keys decide below them.
        take(_agreed_ancestors(pairs, taken, values, (left, right)))
        drain()
    return pairs


def _agreed_ancestors(pairs: list[Pair], taken: set[Any], values: KeyValues,
                      roots: Pair) -> list[Pair]:
    """Unmatched ancestors of matched keyed elements, paired where every keyed pair below
    them agrees: walking up from each keyed pair, step by step while the two ancestors have
    one tag, an old ancestor votes for the new one at the same height; a pair is taken when
    each of the two only ever gets the other's votes (a dependency's ``profile`` or
    ``plugin``, whose tag repeats among its siblings, is then the profile its dependencies
    say)."""
    votes: dict[Any, set[Any]] = {}
    back: dict[Any, set[Any]] = {}
    partner = dict([roots, *pairs])
    for a, b in pairs:
        pa: Any = a.getparent()
        pb: Any = b.getparent()
        while pa is not None and pb is not None:  # ancestors matched to each other
            if not (pa in partner and partner[pa] is pb):
                break
            pa, pb = pa.getparent(), pb.getparent()
        if pa is None and pb is None:
            continue  # every ancestor matched (the roots are): none to vote for
        if a not in values:
            continue
        a, b = a.getparent(), b.getparent()
        while a is not None and b is not None and a.tag == b.tag:
            if a not in taken and b not in taken:
                votes.setdefault(a, set()).add(b)
                back.setdefault(b, set()).add(a)
            a, b = a.getparent(), b.getparent()
    agreed = [(a, next(iter(bs))) for a, bs in votes.items() if len(bs) == 1]
    return [(a, b) for a, b in agreed if back[b] == {a}]


class KeyedDiffer(Differ):  # type: ignore[misc]  # xmldiff has no type information
    """xmldiff's ``Differ``, matching by keys and unique tags before similarity (see the
    module). ``keys`` and ``unique_tags`` are this class's; the rest is ``Differ``'s."""

    # xmldiff's state, set by match() (typed here: xmldiff has no type information).
    _matches: list[tuple[Any, Any, Any]] | None
    _l2rmap: dict[int, Any]
    _r2lmap: dict[int, Any]
    _inorder: set[Any]
    _text_cache: dict[Any, str]

    def __init__(self, *, keys: Sequence[Key] = (), unique_tags: bool = True,
                 identical_subtrees: bool = True, forms: Forms | None = None,
                 copy_left: bool = True, **differ: Any) -> None:
        super().__init__(**differ)
        self.keys = {k.element: k for k in keys}
        self.unique_tags = unique_tags
        self.identical_subtrees = identical_subtrees
        #: The forms to use and fill (kept by the caller across versions: the new version's
        #: are the next diff's old ones); a new cache per diff if None.
        self.forms = forms
        #: False: the old tree given is a spare the diff may change (xmldiff works on a copy).
        self.copy_left = copy_left
        self.ratio_mode = differ.get("ratio_mode", "fast")
        self._values = KeyValues({})
        self._char_counts: dict[str, Counter[str]] = {}
        #: Both nodes of every pair matched with its whole subtree (:mod:`._digests`).
        self._identical: set[Any] = set()

    def set_trees(self, left: Any, right: Any) -> None:
        """xmldiff's, without its copy of ``left`` where the caller gave a spare."""
        if self.copy_left:
            super().set_trees(left, right)
            return
        self.clear()
        self.left, self.right = left, right  # roots (diff_script's callers)

    def match(self, left: Any = None, right: Any = None) -> list[tuple[Any, Any, Any]]:
        """The matches of the two trees (cached): pre-matches, then xmldiff's on the rest."""
        if left is not None or right is not None:
            self.set_trees(left, right)
        if self._matches is not None:
            return self._matches
        matches: list[tuple[Any, Any, Any]] = []
        self._matches, self._l2rmap, self._r2lmap = matches, {}, {}
        self._inorder, self._text_cache = set(), {}
        self._identical = set()
        values = self._values = KeyValues(self.keys)
        forms = ((self.forms if self.forms is not None else Forms())
                 if self.identical_subtrees and not has_instructions(self.left)
                 and not has_instructions(self.right) else None)
        identical: set[Any] = set()
        for a, b in prematch(self.left, self.right, values, unique_tags=self.unique_tags,
                             uniqueattrs=self.uniqueattrs, forms=forms, identical=identical):
            self.append_match(a, b, 1.0)
        lnodes = self._unmatched(self.left, self._l2rmap, identical)
        rnodes = self._unmatched(self.right, self._r2lmap, identical)
        if self.fast_match:
            lnodes, rnodes = self._fast_match(lnodes, rnodes, forms)
        self._greedy_match(lnodes, rnodes)
        self.append_match(self.left, self.right, 1.0)  # the roots, as xmldiff does
        if forms is not None:
            self._identical = twin_subtrees(self.right, self._r2lmap, forms, identical)
        return matches

    def update_node_attr(self, left: Any, right: Any) -> Iterator[Any]:
        """xmldiff's attribute updates, asked for only where the attributes differ: xmldiff
        computes the node's XPath first, for every matched node, and lxml's ``getpath``
        counts the preceding siblings — quadratic over a wide element (20,000 siblings:
        2 s of a 5 s diff; issue 16)."""
        if self.node_attribs(left) == self.node_attribs(right):
            return
        yield from super().update_node_attr(left, right)

    def update_node_text(self, left: Any, right: Any) -> Iterator[Any]:
        """xmldiff's text updates, asked for only where a text or tail differs (its XPath is
        computed first otherwise, as for attributes)."""
        if left.text == right.text and left.tail == right.tail:
            return
        yield from super().update_node_text(left, right)

    def _unmatched(self, root: Any, matched: Mapping[int, Any], identical: set[Any]
                   ) -> list[Any]:
        """The nodes under ``root`` (in xmldiff's post-order) left to match: not the inside
        of identical pairs."""
        return [n for n in post_order(root, identical)
                if n is not root and id(n) not in matched]

    def _fast_match(self, lnodes: list[Any], rnodes: list[Any], forms: Forms | None = None
                    ) -> tuple[list[Any], list[Any]]:
        """xmldiff's first pass: the longest common subsequence of similar nodes (given
        ``forms``, equal ones are similar without their ratio: :func:`._digests.similar`)."""
        test = (similar(self.node_ratio, self.F, forms,
                        self._values.owner if self._values else None) if forms is not None
                else lambda a, b: self.node_ratio(a, b) >= self.F)
        common = list(utils.longest_common_subsequence(lnodes, rnodes, test))
        for i, j in common:
            self.append_match(lnodes[i], rnodes[j], None)
        lused, rused = {i for i, _ in common}, {j for _, j in common}
        return ([n for i, n in enumerate(lnodes) if i not in lused],
                [n for j, n in enumerate(rnodes) if j not in rused])

    def _greedy_match(self, lnodes: list[Any], rnodes: list[Any]) -> None:
        """xmldiff's second pass: each old node with the most similar new one left (the first
        of equals; a perfect match ends the search), if similar enough."""
        for lnode in lnodes:
            best, ratio = None, 0.0
            for rnode in rnodes:
                r = self.node_ratio(lnode, rnode)
                if r > ratio:
                    best, ratio = rnode, r
                if r == 1.0:
                    break
            if best is not None and ratio >= self.F:
                self.append_match(lnode, best, ratio)
                rnodes.remove(best)

    def diff(self, left: Any = None, right: Any = None) -> Iterator[Any]:
        """xmldiff 3.0's diff phase (its ``Differ.diff``, the same steps in the same order),
        passing over the inside of identical subtrees: there every node is matched to its
        twin under its twin's parent, in order, with its tag, attributes and texts, so xmldiff
        would visit it and find nothing to do (issue 29). The roots of those subtrees are
        visited (moved, their tails updated) as any matched node."""
        if not self._matches:
            self.match(left, right)
        rnsmap, lnsmap = self.right.nsmap, self.left.nsmap
        for k, v in rnsmap.items():
            if k is not None and not utils.RESERVED_NS.match(k):
                etree.register_namespace(k, v)
            if k not in lnsmap:
                yield actions.InsertNamespace(k, v)
            elif lnsmap[k] != v:
                # xmldiff's own refusal (a RuntimeError there); edit_script catches it and
                # lets sync make the whole script.
                raise _NamespaceChanged(f"the namespace URI of prefix {k!r} changes: "
                                        "xmldiff cannot diff that")
        for k, v in lnsmap.items():
            if k is not None and not utils.RESERVED_NS.match(k):
                etree.register_namespace(k, v)
            if k not in rnsmap:
                yield actions.DeleteNamespace(k)

        ltree = self.left.getroottree()
        same = self._identical
        for rnode in breadth_first(self.right, same):
            rparent = rnode.getparent()
            ltarget: Any = self._r2lmap.get(id(rparent))  # None: the roots
            if id(rnode) not in self._r2lmap:  # insert
                pos = self.find_pos(rnode)
                if rnode.tag is etree.Comment:
                    yield actions.InsertComment(utils.getpath(ltarget, ltree), pos, rnode.text)
                    lnode = etree.Comment(rnode.text)
                else:
                    yield actions.InsertNode(utils.getpath(ltarget, ltree), rnode.tag, pos)
                    lnode = ltarget.makeelement(rnode.tag)
                self.append_match(lnode, rnode, 1.0)
                ltarget.insert(pos, lnode)
                self._inorder.add(lnode)
                self._inorder.add(rnode)
                yield from self.update_node_attr(lnode, rnode)
            else:
                lnode = self._r2lmap[id(rnode)]
                lparent = lnode.getparent()
                if ltarget is not lparent:  # move
                    pos = self.find_pos(rnode)
                    yield actions.MoveNode(utils.getpath(lnode, ltree),
                                           utils.getpath(ltarget, ltree), pos)
                    lparent.remove(lnode)
                    ltarget.insert(pos, lnode)
                    self._inorder.add(lnode)
                    self._inorder.add(rnode)
                if rnode in same:
                    # Its tag, attributes, text and children are its twin's: only its tail
                    # (its parent's) may differ.
                    if lnode.tail != rnode.tail:
                        yield from self.update_node_text(lnode, rnode)
                    continue
                yield from self.update_node_tag(lnode, rnode)
                yield from self.update_node_attr(lnode, rnode)
            yield from self.align_children(lnode, rnode)
            lnode = self._r2lmap[id(rnode)]
            yield from self.update_node_text(lnode, rnode)

        for lnode in reverse_post_order(self.left, same):
            if id(lnode) not in self._l2rmap:
                yield actions.DeleteNode(utils.getpath(lnode, ltree))
                lnode.getparent().remove(lnode)

    def align_children(self, left: Any, right: Any) -> Iterator[Any]:
        """xmldiff's alignment of a matched pair's children (those matched among them kept
        in place, the others moved), where the children kept in place are the unchanged ones
        first: the longest common subsequence of the identical pairs, then within each gap
        between two of them that of the other pairs. Without identical pairs among the
        children this is xmldiff's subsequence; with them, a child that changed moves
        rather than an unchanged one (a move is a removal and an insertion: an unchanged
        item moved would be seen inserted again)."""
        l2r, r2l, same = self._l2rmap, self._r2lmap, self._identical
        lkids = [c for c in left.getchildren()
                 if id(c) in l2r and l2r[id(c)].getparent() is right]
        rkids = [c for c in right.getchildren()
                 if id(c) in r2l and r2l[id(c)].getparent() is left]
        if not lkids or not rkids:
            return
        for x, y in self._in_order(lkids, rkids, same):
            self._inorder.add(lkids[x])
            self._inorder.add(rkids[y])
        for lchild in lkids:
            if lchild in self._inorder:
                continue
            rchild = l2r[id(lchild)]
            pos = self.find_pos(rchild)
            ltarget = r2l[id(rchild.getparent())]
            yield actions.MoveNode(utils.getpath(lchild), utils.getpath(ltarget), pos)
            left.remove(lchild)
            ltarget.insert(pos, lchild)
            self._inorder.add(lchild)
            self._inorder.add(rchild)

    def _in_order(self, lkids: list[Any], rkids: list[Any], same: set[Any]
                  ) -> list[tuple[int, int]]:
        """The positions of the children pairs kept in place (see :meth:`align_children`)."""
        l2r = self._l2rmap

        def paired(x: Any, y: Any) -> bool:
            return l2r[id(x)] is y

        li = [i for i, c in enumerate(lkids) if c in same]
        if not li:
            return list(utils.longest_common_subsequence(lkids, rkids, paired))
        ri = [j for j, c in enumerate(rkids) if c in same]
        anchors = [(li[a], ri[b]) for a, b in utils.longest_common_subsequence(
            [lkids[i] for i in li], [rkids[j] for j in ri], paired)]
        kept: list[tuple[int, int]] = []
        lo = ro = 0
        for lend, rend in [*anchors, (len(lkids), len(rkids))]:
            lgap = [i for i in range(lo, lend) if lkids[i] not in same]
            rgap = [j for j in range(ro, rend) if rkids[j] not in same]
            if lgap and rgap:
                kept += [(lgap[a], rgap[b]) for a, b in utils.longest_common_subsequence(
                    [lkids[i] for i in lgap], [rkids[j] for j in rgap], paired)]
            if lend < len(lkids):
                kept.append((lend, rend))
            lo, ro = lend + 1, rend + 1
        return kept

    def leaf_ratio(self, left: Any, right: Any) -> float:
        """xmldiff's similarity of two nodes' own texts; in its default ``fast`` mode
        difflib's ``quick_ratio`` (twice the characters the texts share, as multisets, over
        their total length) computed from a count of each text's characters kept per text,
        the same number without difflib's per-pair set-up (issue 29: most of a changed
        version's ratio time)."""
        if self.ratio_mode != "fast":
            return float(super().leaf_ratio(left, right))
        ltext, rtext = self.node_text(left), self.node_text(right)
        length = len(ltext) + len(rtext)
        if not length:
            return 1.0
        shared = self._counts(ltext) & self._counts(rtext)
        return 2.0 * sum(shared.values()) / length

    def _counts(self, text: str) -> Counter[str]:
        counts = self._char_counts.get(text)
        if counts is None:
            counts = self._char_counts[text] = Counter(text)
        return counts

    def node_ratio(self, left: Any, right: Any) -> float:
        """xmldiff's similarity, but 0 unless both nodes lie in keyed elements with one key
        value (the elements, or nodes inside them), or both outside any: a key identifies its
        whole subtree, and nothing else becomes part of it."""
        values = self._values
        if values and values.owner(left) != values.owner(right):
            return 0.0
        return float(super().node_ratio(left, right))


def readable_path(e: Any) -> str:
    """``/project/dependencies/dependency[3]``: each step the element's name (with its prefix
    in the document, if any) and, among same-named siblings, its 1-based position."""
    steps: list[str] = []
    while e is not None:
        local = etree.QName(e).localname
        name = f"{e.prefix}:{local}" if e.prefix else local
        parent = e.getparent()
        if parent is not None:
            same = [c for c in parent if c.tag == e.tag]
            if len(same) > 1:
                name += f"[{same.index(e) + 1}]"
        steps.append(name)
        e = parent
    return "/" + "/".join(reversed(steps))


def key_notes(root: Any, keys: Sequence[Key], side: str = "new") -> list[KeyNote]:
    """The key values that repeat among element siblings in this version, each once (with
    the paths of the siblings sharing it), in document order."""
    by_element = {k.element: k for k in keys}
    groups: dict[tuple[Any, Identity], list[Any]] = {}
    for e, identity in key_values(root, by_element).items():
        groups.setdefault((e.getparent(), identity), []).append(e)
    return [KeyNote(side, by_element[identity[0]], identity[1],
                    tuple(readable_path(e) for e in same))
            for (_, identity), same in groups.items() if len(same) > 1]
