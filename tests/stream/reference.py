"""Reference material for the stream tests: random documents and queries of the supported
Core XPath subset, lxml's ``xpath()`` on the whole tree as the oracle, and the definition of
earliest detection location (seed 004, section 2) checked by brute force over bounded right
completions.

Documents have text (issue 33): a child is an element ``(label, children)`` or a piece of
markup that is no element — character data, whitespace, a comment, a CDATA section, a
processing instruction — written as it appears in the XML (a ``str``). Queries walk from
``//`` along every axis (``//..``, ``//following-sibling::b``), where XPath's text nodes
decide the answer."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from functools import cache

from hypothesis import strategies as st
from lxml import etree

from xmlevents.stream import LocationPath, NodeTest, Query, Step, compile_xpath
from xmlevents.stream._xpath import And, Not, Or, PathPred, Position, Pred

Tree = tuple[str, tuple["Tree | str", ...]]
ALPHABET = ("a", "b", "c", "d")
#: the non-element children the documents mix in: text, whitespace, an escaped ampersand,
#: a comment, CDATA (empty too: lxml's xpath() has an empty text node for it), a PI
TEXTS = ("t", "\n  ", " ", "x&amp;y", "<!--c-->", "<![CDATA[d]]>", "<![CDATA[]]>", "<?p i?>")
#: the text node a brute-force completion adds (any one will do: a query tells none apart)
TEXT_LEAF = "t"

# Figure 1, reconstructed from Examples 1-4 (docs/guide/stream.md, "Reconstruction"):
# Example 1 numbers locations so that the root is 1 and its last event is 14, so the root has
# three children (11, 12, 13; 14 is its end tag); 111 is a b whose parent 11 is an a with a
# c child at 112; Example 4 finds the p_xb matches 11 and 1221 (binary), i.e. 111 and 131, each
# a first child b directly followed by a c, detected at 1121 and 122121 (the moments after
# <c> at 112 and 132). /*[not(d)]//* matches every node, so no child of the root is a d; the
# child 12 is a b holding a d, so that d occurs without being the root's child.
FIGURE_1: Tree = ("r", (("a", (("b", ()), ("c", ()))),
                        ("b", (("d", ()),)),
                        ("a", (("b", ()), ("c", ())))))


def to_xml(t: Tree | str) -> bytes:
    if isinstance(t, str):
        return t.encode()
    label, children = t
    inner = b"".join(to_xml(c) for c in children)
    return b"<%s>%s</%s>" % (label.encode(), inner, label.encode()) if children else \
        b"<%s/>" % label.encode()


def events(t: Tree | str) -> list[tuple[str, ...]]:
    """The events of a document: a text child is ``("text", markup)``."""
    if isinstance(t, str):
        return [("text", t)]
    label, children = t
    out: list[tuple[str, ...]] = [("start", label)]
    for c in children:
        out += events(c)
    out.append(("end",))
    return out


def trees(max_depth: int = 6, alphabet: tuple[str, ...] = ALPHABET,
          texts: bool = False) -> st.SearchStrategy[Tree]:
    """Small documents: labels from ``alphabet``, depth at most ``max_depth``; with
    ``texts``, elements have text, whitespace, comments, CDATA and PIs among their children
    (mixed content; up to six children then)."""
    def node(depth: int) -> st.SearchStrategy[Tree]:
        if depth == 1:
            if texts:
                return st.tuples(st.sampled_from(alphabet),
                                 st.lists(st.sampled_from(TEXTS), max_size=1).map(tuple))
            return st.tuples(st.sampled_from(alphabet), st.just(()))
        child: st.SearchStrategy[Tree | str] = node(depth - 1)
        if texts:
            child = st.one_of(child, st.sampled_from(TEXTS))
        return st.tuples(st.sampled_from(alphabet),
                         st.lists(child, max_size=6 if texts else 3).map(tuple))
    return node(max_depth)


def compiles(query: str) -> bool:
    """Whether the query is inside the supported size (too many conditions looked back at
    are refused, see ``MAX_DECIDED``); generated queries outside it are skipped."""
    from xmlevents.stream import UnsupportedQueryError, compile_xpath
    try:
        compile_xpath(query)
    except UnsupportedQueryError as exc:
        assert "conditions that later nodes look back at" in exc.reason, exc
        return False
    return True


def oracle(query: str, xml: bytes, namespaces: dict[str, str] | None = None) -> set[int]:
    """The pre-order indexes (1-based) of the elements lxml's xpath() selects."""
    tree = etree.ElementTree(etree.fromstring(xml))
    # elements only: comments and PIs are _Elements to lxml, but not in the pre-order index
    index = {el: i for i, el in enumerate(tree.iter(etree.Element), 1)}
    found = tree.xpath(query, namespaces=namespaces or {})
    assert isinstance(found, list)
    return {index[el] for el in found if isinstance(el, etree._Element) and el in index}


# random queries of the subset
_AXES = ["child", "child", "child", "descendant", "descendant-or-self", "self", "parent",
         "ancestor", "ancestor-or-self", "following-sibling", "preceding-sibling"]


def _tests(names: tuple[str, ...]) -> st.SearchStrategy[NodeTest]:
    return st.sampled_from([NodeTest("name", x) for x in names] + [NodeTest("any")])


@st.composite
def steps(draw: st.DrawFn, depth: int, lo: int = 1, hi: int = 3,
          absolute: bool = False, stacked: bool = True,
          names: tuple[str, ...] = ALPHABET[:3]) -> tuple[Step, ...]:
    out: list[Step] = []
    n = draw(st.integers(lo, hi))
    for k in range(n):
        kind = draw(st.sampled_from(["step"] * 6 + ["//", ".", ".."]))
        axes = _AXES
        if kind == "//" and (k > 0 or absolute):
            out.append(Step("descendant-or-self", NodeTest("node")))
            # any step after it: //.., //parent::a, //following-sibling::b reach elements
            # through text nodes (issue 33); //a is still the usual case
            kind = draw(st.sampled_from(["step"] * 4 + [".", ".."]))
            axes = ["child"] * 6 + _AXES
        if kind == ".":
            out.append(Step("self", NodeTest("node")))
            continue
        elif kind == "..":
            out.append(Step("parent", NodeTest("node")))
            continue
        axis = "child" if kind == "//" else draw(st.sampled_from(axes))
        test = draw(_tests(names))
        preds: list[Pred] = []
        for _ in range(draw(st.integers(0, 2 if depth > 0 else 0))):
            pred = draw(predicates(depth - 1, axis == "child", stacked=stacked, names=names))
            if stacked or not (isinstance(pred, Position)
                               and any(isinstance(p, Position) for p in preds)):
                preds.append(pred)
        out.append(Step(axis, test, tuple(preds)))
    return tuple(out)


@st.composite
def predicates(draw: st.DrawFn, depth: int, child: bool, top: bool = True,
               stacked: bool = True, names: tuple[str, ...] = ALPHABET[:3]) -> Pred:
    kinds = ["path", "path", "path", "abs"]
    if depth > 0:
        kinds += ["and", "or", "not", "not"]
    if child and top:
        kinds += ["first", "last"]
    kind = draw(st.sampled_from(kinds))
    if kind == "path":
        return PathPred(LocationPath(False, draw(steps(depth, 1, 2, stacked=stacked,
                                                       names=names))))
    if kind == "abs":
        return PathPred(LocationPath(True, draw(steps(depth, 1, 2, absolute=True,
                                                      stacked=stacked, names=names))))
    if kind == "first" or kind == "last":
        return Position(kind == "last")
    if kind == "not":
        return Not(draw(predicates(depth - 1, child, False, stacked, names)))
    left = draw(predicates(depth - 1, child, False, stacked, names))
    right = draw(predicates(depth - 1, child, False, stacked, names))
    return And(left, right) if kind == "and" else Or(left, right)


@st.composite
def queries(draw: st.DrawFn, depth: int = 2, stacked: bool = True,
            names: tuple[str, ...] = ALPHABET[:3]) -> str:
    """Random queries of the supported subset, as text, testing ``names`` (prefixed names
    need a prefix map) and ``*``; without ``stacked``, no step has two positions
    (``b[last()][1]``)."""
    absolute = draw(st.booleans())
    path = LocationPath(absolute, draw(steps(depth, 1, 3, absolute=absolute,
                                             stacked=stacked, names=names)))
    if absolute and all(s.test.kind == "node" and s.axis == "self" for s in path.steps):
        return "/*"  # the document node alone is refused (tests/stream/test_errors.py)
    text = str(path)
    if text in ("", "/") or text.endswith("/"):
        return "//a"
    return text


# earliest detection, by brute force over right completions (section 2)
@cache
def _forests(size: int, alphabet: tuple[str, ...]) -> tuple[tuple[Tree | str, ...], ...]:
    """Every forest of exactly ``size`` nodes; :data:`TEXT_LEAF` in ``alphabet`` stands for a
    text node (a leaf, never two in a row: adjacent text is one node)."""
    if size == 0:
        return ((),)
    out: list[tuple[Tree | str, ...]] = []
    for first in range(1, size + 1):  # nodes in the first tree
        for label in alphabet:
            if label == TEXT_LEAF:
                if first == 1:
                    out.extend((TEXT_LEAF, *rest) for rest in _forests(size - 1, alphabet)
                               if not rest or rest[0] != TEXT_LEAF)
                continue
            for kids in _forests(first - 1, alphabet):
                for rest in _forests(size - first, alphabet):
                    out.append(((label, kids), *rest))
    return tuple(out)


def completions(prefix: list[tuple[str, ...]], budget: int,
                alphabet: tuple[str, ...]) -> Iterator[list[tuple[str, ...]]]:
    """Well-formed event lists extending ``prefix`` by at most ``budget`` new elements; with
    :data:`TEXT_LEAF` in ``alphabet``, also with a comment after the root (its sibling)."""
    depth = _depth(prefix)
    after = [[], [("text", TEXT_LEAF)]] if TEXT_LEAF in alphabet else [[]]
    if depth == 0:
        yield list(prefix)
        if prefix[-1][0] != "text" and len(after) > 1:
            yield list(prefix) + after[1]
        return

    def fill(level: int, left: int) -> Iterator[list[tuple[str, ...]]]:
        if level == 0:
            yield []
            return
        for used in range(left + 1):
            for forest in _forests(used, alphabet):
                here: list[tuple[str, ...]] = [e for t in forest for e in events(t)]
                here.append(("end",))
                for rest in fill(level - 1, left - used):
                    yield here + rest
    for tail in fill(depth, budget):
        for last in after:
            yield list(prefix) + tail + last


def _depth(evs: list[tuple[str, ...]]) -> int:
    return sum(1 if e[0] == "start" else -1 if e[0] == "end" else 0 for e in evs)


def to_doc(evs: list[tuple[str, ...]]) -> bytes:
    out = []
    stack = []
    for e in evs:
        if e[0] == "start":
            out.append(f"<{e[1]}>")
            stack.append(e[1])
        elif e[0] == "end":
            out.append(f"</{stack.pop()}>")
        else:
            text = e[1] if len(e) > 1 else TEXT_LEAF
            # outside the root element a text node can only be a comment (or a PI)
            out.append(text if stack or text.startswith("<") else f"<!--{text}-->")
    return "".join(out).encode()


Matcher = Callable[[list[tuple[str, ...]]], set[int]]


def decided(query: str, prefix: list[tuple[str, ...]], node: int, budget: int,
            alphabet: tuple[str, ...], matches: Matcher | None = None) -> bool:
    """Whether ``node`` is a match in every (bounded) right completion of ``prefix``: by
    lxml's xpath(), or by ``matches`` (the matches of a complete document's events)."""
    if sum(1 for e in prefix if e[0] == "start") < node:
        return False
    m = _matcher(query, matches)
    return all(node in m(c) for c in completions(prefix, budget, alphabet))


def _matcher(query: str, matches: Matcher | None) -> Matcher:
    if matches is not None:
        return matches

    def by_lxml(evs: list[tuple[str, ...]]) -> set[int]:
        return oracle(query, to_doc(evs))
    return by_lxml


def _random_forest(rng: random.Random, size: int,
                   alphabet: tuple[str, ...]) -> tuple[Tree | str, ...]:
    """A random forest of exactly ``size`` nodes (:data:`TEXT_LEAF` a text node)."""
    out: list[Tree | str] = []
    while size > 0:
        k = rng.randint(1, size)
        label = rng.choice(alphabet)
        if label == TEXT_LEAF:
            out.append(TEXT_LEAF)
            size -= 1
            continue
        out.append((label, _random_forest(rng, k - 1, alphabet)))
        size -= k
    return tuple(out)


def random_completions(prefix: list[tuple[str, ...]], count: int, most: int,
                       alphabet: tuple[str, ...],
                       seed: int = 20) -> Iterator[list[tuple[str, ...]]]:
    """``count`` random well-formed completions of ``prefix`` with up to ``most`` new
    elements spread over the open elements (reproducible: a fixed seed)."""
    rng = random.Random(seed)
    depth = _depth(prefix)
    for _ in range(count if depth else 0):
        total = rng.randint(1, most)
        cuts = sorted(rng.randint(0, total) for _ in range(depth - 1))
        tail: list[tuple[str, ...]] = []
        for lo, hi in zip([0, *cuts], [*cuts, total], strict=True):  # innermost level first
            tail += [e for t in _random_forest(rng, hi - lo, alphabet) for e in events(t)]
            tail.append(("end",))
        if TEXT_LEAF in alphabet and rng.random() < 0.5:
            tail.append(("text", TEXT_LEAF))  # a comment after the root
        yield list(prefix) + tail


def to_tree(evs: list[tuple[str, ...]]) -> Tree:
    """The document of a complete list of events."""
    stack: list[tuple[str, list[Tree | str]]] = [("", [])]
    for e in evs:
        if e[0] == "start":
            stack.append((e[1], []))
        elif e[0] == "end":
            label, kids = stack.pop()
            stack[-1][1].append((label, tuple(kids)))
        else:
            stack[-1][1].append(e[1] if len(e) > 1 else TEXT_LEAF)
    root = stack[0][1][0]
    assert not isinstance(root, str)
    return root


def check_earliest(query: str, tree: Tree, found: list[tuple[int, int]], budget: int = 2,
                   alphabet: tuple[str, ...] = (*ALPHABET, "z"),
                   optimal: bool = True, further: int = 4,
                   matches: Matcher | None = None, names: tuple[str, ...] = ALPHABET[:3]) -> None:
    """For each ``(node, event index)`` found (0-based index into the events): the event
    decides the node (never too early), and, if ``optimal``, the event before does not.

    The completions are bounded (``budget`` new elements), so "decided" here can be wrong
    where only a larger completion refutes the match; before calling a detection late, the
    event before is tried again with every completion of up to ``further`` new elements over
    the query's ``names`` and one other (``z``), then with 500 random ones of up to 14.
    Where the query's answer can depend on text nodes, completions add them too."""
    evs = events(tree)
    if matches is None and compile_xpath(query).texts:
        alphabet = (*alphabet, TEXT_LEAF)
        names = (*names, TEXT_LEAF)
    short = (*names, "z")
    m = _matcher(query, matches)
    for node, at in found:
        assert decided(query, evs[:at + 1], node, budget, alphabet, matches), \
            f"{query}: node {node} reported at event {at} but not decided there"
        if optimal and decided(query, evs[:at], node, budget, alphabet, matches):
            assert not decided(query, evs[:at], node, further, short, matches) or any(
                node not in m(c) for c in random_completions(evs[:at], 500, 14, short)), \
                f"{query}: node {node} was already decided before event {at}"


def detections(query: Query, tree: Tree) -> list[tuple[int, int]]:
    """(node, index of the detecting event) for each match of ``query`` on ``tree``, run on
    its events (a detection at ``("text", k)``: the first event of the k-th text node inside
    the root, adjacent text events being one node)."""
    evs = events(tree)
    starts = [i for i, e in enumerate(evs) if e[0] == "start"]
    texts = [i for i, e in enumerate(evs)
             if e[0] == "text" and (i == 0 or evs[i - 1][0] != "text")]
    ends: dict[int, int] = {}
    stack: list[int] = []
    for i, e in enumerate(evs):
        if e[0] == "start":
            stack.append(sum(1 for x in evs[:i + 1] if x[0] == "start"))
        elif e[0] == "end":
            ends[stack.pop()] = i
    out = []
    for m in query.evaluate(evs):
        k = m.detected.node
        at = {"start": starts[k - 1] if k <= len(starts) else -1,
              "text": texts[k - 1] if k <= len(texts) else -1}.get(m.detected.event)
        out.append((m.node, ends[k] if at is None else at))
    return out


__all__ = ["FIGURE_1", "to_xml", "events", "trees", "oracle", "compiles", "queries",
           "check_earliest", "detections", "to_tree", "random_completions",
           "completions", "decided", "itertools"]


# a reference evaluator of regular tree queries, straight from section 3's definitions
def grammar_matches(rules: list[tuple[str, str | None, str | None, str | None]], start: str,
                    selected: set[str], tree: Tree) -> set[int]:
    """``p_x⊙(t)``: the elements ``w`` such that some derivation of the document from
    ``start`` labels ``w`` with a selected variable (rules ``(x, label, x1, x2)``, label None
    for ``*``, ``x1`` None for ``x -> λ``). Computed on the binary encoding by brute force."""
    # binary positions: ("el", label, left, right, node index) or None for λ
    counter = [0]

    def encode(forest: tuple[Tree | str, ...]) -> tuple[object, ...] | None:
        if not forest:
            return None
        first, *rest = forest
        assert not isinstance(first, str), "grammars run on the tree of elements"
        label, kids = first
        counter[0] += 1
        me = counter[0]
        left = encode(kids)
        return ("el", label, left, encode(tuple(rest)), me)

    root = encode((tree,))
    by_var: dict[str, list[tuple[str | None, str | None, str | None]]] = {}
    for x, label, x1, x2 in rules:
        by_var.setdefault(x, []).append((label, x1, x2))
    memo: dict[tuple[str, int], bool] = {}

    def derives(x: str, pos: object) -> bool:
        key = (x, id(pos))
        if key in memo:
            return memo[key]
        memo[key] = False
        if pos is None:
            ok = any(x1 is None for _l, x1, _x2 in by_var.get(x, ()))
        else:
            _, label, left, right, _n = pos  # type: ignore[misc]
            ok = any(x1 is not None and x2 is not None and (lab is None or lab == label)
                     and derives(x1, left) and derives(x2, right)
                     for lab, x1, x2 in by_var.get(x, ()))
        memo[key] = ok
        return ok

    found: set[int] = set()
    if not derives(start, root):
        return found

    def walk(pos: object, xs: set[str]) -> None:
        if pos is None or not xs:
            return
        _, label, left, right, n = pos  # type: ignore[misc]
        if xs & selected:
            found.add(n)
        lefts: set[str] = set()
        rights: set[str] = set()
        for x in xs:
            for lab, x1, x2 in by_var.get(x, ()):
                if x1 is not None and x2 is not None and (lab is None or lab == label) \
                        and derives(x1, left) and derives(x2, right):
                    lefts.add(x1)
                    rights.add(x2)
        walk(left, lefts)
        walk(right, rights)

    walk(root, {start})
    return found


@st.composite
def grammars(draw: st.DrawFn) -> tuple[list[tuple[str, str | None, str | None, str | None]],
                                       str, set[str]]:
    """Small random grammars over the variables x0..x3 and the labels a, b and *."""
    names = ["x0", "x1", "x2", "x3"]
    rules: list[tuple[str, str | None, str | None, str | None]] = []
    for x in names:
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 3)) == 0:
                rules.append((x, None, None, None))
            else:
                rules.append((x, draw(st.sampled_from(["a", "b", None])),
                              draw(st.sampled_from(names)), draw(st.sampled_from(names))))
    selected = set(draw(st.lists(st.sampled_from(names), min_size=1, max_size=2)))
    return rules, "x0", selected


def grammar_text(rules: list[tuple[str, str | None, str | None, str | None]], start: str,
                 selected: set[str]) -> str:
    """The grammar in the paper's notation."""
    lines = [f"{x} -> " + ("λ" if x1 is None else f"{lab or '*'}<{x1}, {x2}>")
             for x, lab, x1, x2 in rules]
    return "\n".join([*lines, f"start {start}", "select " + " ".join(sorted(selected))])
