"""Deep path types and instances share their parent's steps and ids (issue 16: a 10,000-deep
chain held a copy of every step and id per node, ~1 GB); they read, compare, hash, print and
pickle as the tuples they stand for."""

from __future__ import annotations

import pickle
import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import xmlevents
from tests.strategies import examples
from xmlevents.algebra import (
    Axis,
    Kind,
    PathInstance,
    PathType,
    Step,
    contained,
    ends,
    intersect_ab,
    intersect_lb,
    project,
    trusted_path_instance,
)
from xmlevents.algebra._paths import SHARE_DEPTH, _Chain

C = Step(Axis.CHILD, "c")


def deep(depth: int, name: str = "c") -> tuple[list[PathType], list[PathInstance]]:
    """The path types and instances of a chain of ``depth`` elements, built as a watched
    document builds them: each from its parent's (``child`` and ``ids + (id,)``)."""
    types: list[PathType] = [PathType(Kind.ABSOLUTE, (Step(Axis.CHILD, name),))]
    pis = [trusted_path_instance(types[0], ("n0",))]
    for i in range(1, depth):
        types.append(types[-1].child(Step(Axis.CHILD, name)))
        pis.append(trusted_path_instance(types[-1], pis[-1].ids + (f"n{i}",)))
    return types, pis


def test_deep_types_and_instances_equal_those_built_from_tuples() -> None:
    types, pis = deep(3 * SHARE_DEPTH)
    for k in (SHARE_DEPTH - 1, SHARE_DEPTH, SHARE_DEPTH + 1, 3 * SHARE_DEPTH - 1):
        pt, pi = types[k], pis[k]
        flat = PathType(Kind.ABSOLUTE, (C,) * (k + 1))
        ids = tuple(f"n{i}" for i in range(k + 1))
        flat_pi = PathInstance(flat, ids)
        assert pt == flat and flat == pt and hash(pt) == hash(flat)
        assert str(pt) == str(flat) == "/c" * (k + 1) and repr(pt) == repr(flat)
        assert pt.steps == flat.steps and tuple(pt.steps) == flat.steps and len(pt) == k + 1
        assert pt.last == C and pt.parent() == PathType(Kind.ABSOLUTE, (C,) * k)
        assert pi == flat_pi and hash(pi) == hash(flat_pi) and str(pi) == str(flat_pi)
        assert pi.ids == ids and ids == pi.ids and list(pi.ids) == list(ids)
        assert pi.ids[-1] == ids[-1] and pi.ids[-2] == ids[-2] and pi.ids[3] == ids[3]
        assert pi.ids[:-1] == ids[:-1] and pi.ids[2:5] == ids[2:5] and pi.ids[::-7] == ids[::-7]
        assert {pi: 1}[flat_pi] == 1 and {flat_pi: 1}[pi] == 1
        assert pickle.loads(pickle.dumps(pi)) == pi and pickle.loads(pickle.dumps(pt)) == pt
        rel = PathType.parse("c/c")
        assert project(rel, pi) is None  # contained more than once: null, as for tuples
        assert contained(rel, pt) is contained(rel, flat)
        assert ends(rel, pt) is ends(rel, flat) is True
        assert intersect_lb(pt, types[5]) == types[5]
        assert intersect_ab(PathType.parse("/c/c"), pt) == intersect_ab(
            PathType.parse("/c/c"), flat)
        assert project(types[5], pi) == PathInstance(types[5], ids[:6])
    assert types[2 * SHARE_DEPTH] != PathType(Kind.ABSOLUTE, (C,) * (2 * SHARE_DEPTH))
    other, _ = deep(3 * SHARE_DEPTH, "d")
    assert types[-1] != other[-1] and hash(types[-1]) != hash(other[-1])


def test_a_deep_child_shares_its_parents_steps_and_ids() -> None:
    types, pis = deep(2 * SHARE_DEPTH)
    pt, pi = types[-1], pis[-1]
    assert type(pt.steps) is _Chain and pt.steps[:-1] is types[-2].steps
    assert type(pi.ids) is _Chain and pi.ids[:-1] is pis[-2].ids
    assert type(types[SHARE_DEPTH - 1].steps) is tuple  # shallow ones stay tuples


def test_memory_grows_with_the_depth_not_its_square() -> None:
    """5,000 levels held 200 MB of steps and ids; now well under 10 MB."""
    tracemalloc.start()
    try:
        kept = deep(5000)
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size < 10_000_000, size
    assert len(kept[1][-1].ids) == 5000


def test_a_watched_document_takes_a_deep_chain_in_linear_memory() -> None:
    """Appending a 5,000-deep chain to a watched document took ~280 MB (issue 16)."""
    from lxml import etree

    doc = xmlevents.fromstring("<r/>")  # (lxml then builds watched elements)
    top = cur = etree.Element("c")
    for _ in range(5000):
        cur = etree.SubElement(cur, "c")
    tracemalloc.start()
    try:
        doc.getroot().append(top)
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size < 50_000_000, size
    deepest: Any = doc.getroot()
    for _ in range(5001):
        deepest = deepest[0]
    pi = doc.path_of(deepest)
    assert len(pi.ids) == 5002 and str(pi.pt) == "/r" + "/c" * 5001
    assert pi.ids[-1] == doc.id_of(deepest) and pi.ids[-2] == doc.id_of(deepest.getparent())


def test_a_deep_chain_feeds_definitions() -> None:
    """Events at deep path instances are grouped and combined as shallow ones are."""
    n = 3 * SHARE_DEPTH
    doc = xmlevents.fromstring("<r/>")
    doc.define(f"A := ins(e{n - 1}) ; ins(e{n - 1}/@x)")
    got: list[Any] = []
    doc.subscribe(f"A(e{n - 1})", lambda doc, event: got.append(event))
    cur = doc.getroot()
    for i in range(n):
        cur = xmlevents.SubElement(cur, f"e{i}")
    cur.set("x", "1")
    assert len(got) == 1 and got[0].pi == doc.path_of(cur)
    assert str(got[0].pi.pt) == "/r/" + "/".join(f"e{i}" for i in range(n))


items = st.lists(st.sampled_from(["a", "b", "c"]), min_size=0, max_size=6)


@settings(max_examples=examples(200), deadline=None)
@given(items, items, items, st.integers(-12, 12), st.integers(-12, 12))
def test_prop_a_chain_reads_as_its_tuple(head: list[str], tail: list[str], other: list[str],
                                        i: int, j: int) -> None:
    chain: Any = tuple(head) + ("x",)
    for item in tail:
        chain = _Chain(chain, item) if type(chain) is _Chain or len(chain) else chain
    if type(chain) is not _Chain:
        chain = _Chain(chain, "y")
    flat = chain.items()
    assert len(chain) == len(flat) and list(chain) == list(flat)
    assert list(reversed(chain)) == list(reversed(flat))
    assert chain[i:j] == flat[i:j] and chain[:j] == flat[:j] and chain[i:] == flat[i:]
    if -len(flat) <= i < len(flat):
        assert chain[i] == flat[i]
    o = tuple(other)
    assert (chain == o) is (flat == o) and (chain != o) is (flat != o)
    assert (chain < o) is (flat < o) and (chain >= o) is (flat >= o)
    assert (o < chain) is (o < flat) and (o >= chain) is (o >= flat)
    assert hash(chain) == hash(flat) and chain + ("z",) == flat + ("z",)
    assert o + chain == o + flat and chain + o == flat + o and repr(chain) == repr(flat)
    assert ("a" in chain) is ("a" in flat)
