"""The wildcard step ``*`` in path types (issue 15, item 6) and the operators of section 2.1
extended to it.

A path type with ``*`` names the nodes of all its *instantiations* (each ``*`` an element
name). The properties below hold the operators to that reading, by brute force over the small
alphabet of ``tests.strategies.NAMES`` (every name a drawn path can have), and hold them to
their behaviour before the wildcard on path types without ``*`` (an oracle copied from the
operators as they were). The reasoning is in docs/semantics.md, "The wildcard step".
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import hypothesis
import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st
from lxml import etree

import xmlevents
from tests.strategies import (
    NAMES,
    WILDCARD_STEP,
    child_steps,
    instantiations,
    kinds,
    path_types,
    wild_path_types,
)
from xmlevents.algebra import (
    Axis,
    CompositeEvent,
    CompositeEventType,
    EventGraph,
    InvalidArgumentError,
    Kind,
    Op,
    PathInstance,
    PathSyntaxError,
    PathType,
    PrimitiveEvent,
    PrimitiveEventType,
    Step,
    compatible,
    contained,
    ends,
    intersect_ab,
    intersect_lb,
    project,
)
from xmlevents.algebra._definitions import DefinitionSet, may_match
from xmlevents.algebra._events import matches
from xmlevents.algebra._parser import parse, parse_event_type
from xmlevents.algebra._paths import (
    _PARSED,
    WILDCARD,
    derivation_problem,
    ends_alike,
    subsumes,
)

P = PathType.parse


# --- oracle: the operators before the wildcard (algebra/_paths.py, as of issue 14) ---------

def old_offset(pt1: PathType, pt2: PathType) -> int | None:
    s1, s2 = pt1.steps, pt2.steps
    m, n = len(s1), len(s2)
    if pt1.kind is Kind.ABSOLUTE:
        if pt2.kind is Kind.RELATIVE or m >= n:
            return None
        return 0 if s2[:m] == s1 else None
    if pt2.kind is Kind.RELATIVE and m >= n:
        return None
    found = None
    for c in range(n - m + 1):
        if s2[c:c + m] == s1:
            if found is not None:
                return None
            found = c
    return found


def old_ends(pt1: PathType, pt2: PathType) -> bool:
    if pt1.kind is not Kind.RELATIVE:
        return False
    m, n = len(pt1.steps), len(pt2.steps)
    if not (m < n or (pt2.kind is Kind.ABSOLUTE and m == n)):
        return False
    return pt2.steps[n - m:] == pt1.steps


def old_intersect_lb(pt1: PathType, pt2: PathType) -> PathType | None:
    s1, s2 = pt1.steps, pt2.steps
    if s1[0] != s2[0]:
        return None
    j = 1
    limit = min(len(s1), len(s2))
    while j < limit and s1[j] == s2[j]:
        j += 1
    kind = pt1.kind if pt1.kind is pt2.kind else Kind.ABSOLUTE
    return PathType(kind, s1[:j])


def old_intersect_ab(pt1: PathType, pt2: PathType) -> PathType | None:
    if pt1 == pt2:
        return pt2
    c = old_offset(pt1, pt2)
    return None if c is None else PathType(Kind.ABSOLUTE, pt2.steps[:c + len(pt1.steps)])


def old_project(pt: PathType, pi: PathInstance) -> PathInstance | None:
    if pt == pi.pt:
        return pi
    c = old_offset(pt, pi.pt)
    return None if c is None else PathInstance(pt, pi.ids[c:c + len(pt.steps)])


def old_path_compatible(et1_pt: PathType, et2_pt: PathType) -> bool:
    return et2_pt == et1_pt or old_ends(et2_pt, et1_pt)


# --- brute force over instantiations ------------------------------------------------------------

def every_instantiation(pt: PathType) -> Iterator[PathType]:
    """``pt`` with its ``*`` steps named in every way NAMES allows."""
    slots = [i for i, s in enumerate(pt.steps) if s.is_wildcard]
    for names in itertools.product(NAMES, repeat=len(slots)):
        steps = list(pt.steps)
        for i, name in zip(slots, names, strict=True):
            steps[i] = Step(Axis.CHILD, name)
        yield PathType(pt.kind, tuple(steps))


def occurrences(pt1: PathType, pt2: PathType) -> set[int]:
    """Every offset at which pt1's steps appear contiguously in pt2's (no kind rules)."""
    m, n = len(pt1), len(pt2)
    return {c for c in range(n - m + 1) if pt2.steps[c:c + m] == pt1.steps}


def by_instantiations_contained(w: PathType, q: PathType) -> bool:
    """``w ⊂ q`` for ``q`` without ``*``, read as "exactly one offset at which some
    instantiation of ``w`` occurs in ``q``", under the paper's kind and length rules."""
    m, n = len(w), len(q)
    offsets = set().union(*(occurrences(i, q) for i in every_instantiation(w)))
    if w.kind is Kind.ABSOLUTE:
        return q.kind is Kind.ABSOLUTE and m < n and 0 in offsets
    if len(offsets) != 1:
        return False
    return m < n if q.kind is Kind.RELATIVE else True


def instantiated_along(w: PathType, q: PathType, c: int) -> PathType:
    """``w`` with each ``*`` named as the step of ``q`` it lies on at offset ``c``."""
    return PathType(w.kind, tuple(q.steps[c + i] if s.is_wildcard else s
                                  for i, s in enumerate(w.steps)))


@st.composite
def wild_and_concrete(draw: st.DrawFn, kind: Kind | None = None
                      ) -> tuple[PathType, PathType]:
    """(w, q): a wildcard path type and one without (of ``kind`` if given), q often holding
    an instantiation of w with steps before or after it."""
    w = draw(wild_path_types(max_len=4))
    if draw(st.booleans()):
        return w, draw(path_types(kind=kind))
    inner = draw(instantiations(w))
    absolute = inner.kind is Kind.ABSOLUTE
    before = [] if absolute else draw(st.lists(child_steps, max_size=2))
    after = draw(st.lists(child_steps, max_size=2)) if inner.steps[-1].axis is Axis.CHILD else []
    if kind is None:
        kind = Kind.ABSOLUTE if absolute else draw(kinds)
    elif kind is Kind.RELATIVE and absolute:
        kind = Kind.ABSOLUTE  # an absolute instantiation only lies at the start of an absolute q
    return w, PathType(kind, (*before, *inner.steps, *after))


@st.composite
def wild_and_instance(draw: st.DrawFn) -> tuple[PathType, PathInstance]:
    """(w, pi): a wildcard path type and a path instance, often of a path through w."""
    w, q = draw(wild_and_concrete(Kind.ABSOLUTE))
    return w, PathInstance(q, tuple(f"n{i}" for i in range(len(q))))


# --- parsing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["properties/*/text()", "/order/*/price", "item/*", "*", "/*",
                                  "*/price", "a/*/@x", "*/*", "/{urn:x}a/*"])
def test_wildcard_paths_parse_and_print(text: str) -> None:
    pt = P(text)
    assert str(pt) == text
    assert pt.has_wildcard
    assert any(s == Step(Axis.CHILD, WILDCARD) and s.is_wildcard for s in pt.steps)
    assert P(text) is pt  # cached like any parsed path type
    assert pt.interned() is pt


def test_wildcard_types_stay_out_of_the_fast_paths_table() -> None:
    """The event reader's fast path builds events at the paths of ``_PARSED``: none has *."""
    pt = P("/order/*/price")
    assert "/order/*/price" not in _PARSED
    assert PathType(pt.kind, pt.steps).interned() is pt


@given(path_types())
def test_paths_without_wildcard_report_none(pt: PathType) -> None:
    assert not pt.has_wildcard
    assert not any(s.is_wildcard for s in pt.steps)


@pytest.mark.parametrize("text, col, reason", [
    ("a/@*", 3, "@* is not a step: * stands for one child element, never an attribute"),
    ("@*", 1, "@* is not a step"),
    ("p:*", 1, "p:* (any element of one namespace) is not a step"),
    ("a/{urn:x}*", 3, "{uri}* (any element of one namespace) is not a step"),
    ("a/@p:*", 3, "@p:* (any attribute of one namespace) is not a step"),
    ("a/*b", 4, "unexpected 'b' after step '*'"),
    ("**", 2, "unexpected '*' after step '*'"),
    ("a//*", 3, "empty step"),
    ("a/*/", 5, "empty step"),
])
def test_wildcard_forms_that_are_not_steps(text: str, col: int, reason: str) -> None:
    with pytest.raises(PathSyntaxError) as info:
        P(text)
    assert info.value.column == col
    assert reason in info.value.reason


def test_a_wildcard_is_an_element_step_only() -> None:
    with pytest.raises(InvalidArgumentError, match="one child element only"):
        Step(Axis.ATTRIBUTE, WILDCARD)


def test_a_path_instance_names_concrete_nodes() -> None:
    with pytest.raises(InvalidArgumentError, match="write the element's name"):
        PathInstance.of("/order/*", ["o1", "i1"])
    with pytest.raises(PathSyntaxError) as info:
        PathInstance.parse("/order[o1]/*[i1]/price[p1]")
    assert info.value.column == 12  # under the *
    assert "* is not a step of a path instance" in info.value.reason


# --- the expression language --------------------------------------------------------------------

@pytest.mark.parametrize("text, op, path", [
    ("*(a/*/b)", Op.ANY, "a/*/b"),       # the wildcard operation on a path with *
    ("ins(a/*)", Op.INS, "a/*"),
    ("ins(*)", Op.INS, "*"),            # a lone * where a path type is expected
    ("*(*)", Op.ANY, "*"),
    ("del(*/price)", Op.DEL, "*/price"),
    ("upd(/*/@x)", Op.UPD, "/*/@x"),
])
def test_star_inside_a_path_type_parses_unambiguously(text: str, op: Op, path: str) -> None:
    et = parse_event_type(text)
    assert et == PrimitiveEventType(op, P(path))
    assert str(parse(text)) == text  # printed back as written


def test_star_in_references_multiplicity_and_at() -> None:
    assert parse_event_type("%(*)") == CompositeEventType(None, P("*"))
    assert parse_event_type("E(order/*)") == CompositeEventType("E", P("order/*"))
    mult = parse("[1,*] ins(item/*)")
    assert str(mult) == "[1,*] ins(item/*)"
    conj = parse("(ins(a/x) & ins(a/y)) with at=/a/*")
    assert str(conj.mods.at) == "/a/*"  # type: ignore[attr-defined]


def test_namespaced_wildcard_in_an_expression_points_at_the_step() -> None:
    with pytest.raises(xmlevents.algebra.ExpressionSyntaxError) as info:
        parse("ins(order/p:*)")
    assert info.value.column == 11
    assert "p:* (any element of one namespace) is not a step" in str(info.value)


# --- nothing changes without * ------------------------------------------------------------------

@st.composite
def related_pairs(draw: st.DrawFn) -> tuple[PathType, PathType]:
    """(pt1, pt2) without *, pt1 often a slice of pt2 (as in test_paths.py)."""
    pt2 = draw(path_types())
    if draw(st.booleans()):
        return draw(path_types()), pt2
    n = len(pt2)
    i = draw(st.integers(0, n - 1))
    j = draw(st.integers(i + 1, n))
    kind = Kind.ABSOLUTE if (i == 0 and draw(st.booleans())) else Kind.RELATIVE
    return PathType(kind, pt2.steps[i:j]), pt2


@given(related_pairs())
def test_without_wildcards_the_operators_are_unchanged(pair: tuple[PathType, PathType]) -> None:
    pt1, pt2 = pair
    assert contained(pt1, pt2) is (old_offset(pt1, pt2) is not None)
    assert ends(pt1, pt2) is old_ends(pt1, pt2)
    assert intersect_lb(pt1, pt2) == old_intersect_lb(pt1, pt2)
    assert subsumes(pt1, pt2) is (pt1 == pt2)
    assert ends_alike(pt1, pt2) is may_match(pt1, pt2)
    assert compatible(PrimitiveEventType(Op.INS, pt2), PrimitiveEventType(Op.INS, pt1)) \
        is old_path_compatible(pt2, pt1)
    if pt2.kind is Kind.ABSOLUTE:
        assert intersect_ab(pt1, pt2) == old_intersect_ab(pt1, pt2)
        pi = PathInstance(pt2, tuple(f"n{i}" for i in range(len(pt2))))
        assert project(pt1, pi) == old_project(pt1, pi)
    d = intersect_lb(pt1, pt2)
    assert d is None or derivation_problem(d, [pt1, pt2]) is None


# --- * against the instantiations ---------------------------------------------------------------

@given(wild_path_types(), path_types(kind=Kind.ABSOLUTE), st.sampled_from([Op.INS, Op.ANY]))
def test_an_event_matches_a_wildcard_type_iff_it_matches_an_instantiation(
        w: PathType, q: PathType, op: Op) -> None:
    """A concrete event type is compatible with op(w) iff with op(i) for an instantiation i
    of w's *s (⪰, section 2.2): brute force over every naming."""
    event = PrimitiveEventType(Op.INS, q)
    expected = any(compatible(event, PrimitiveEventType(op, i)) for i in every_instantiation(w))
    assert compatible(event, PrimitiveEventType(op, w)) is expected
    hypothesis.event(f"compatible: {expected}")
    e = PrimitiveEvent("e1", 1, Op.INS, PathInstance(q, tuple("x" * len(q))))
    assert matches(e, PrimitiveEventType(op, w)) is expected
    named = CompositeEventType("E", q)
    assert compatible(named, CompositeEventType(None, w)) is expected


@given(wild_and_concrete())
def test_ending_and_subsumption_by_instantiations(pair: tuple[PathType, PathType]) -> None:
    w, q = pair
    assert ends(w, q) is any(ends(i, q) for i in every_instantiation(w))
    event(f"ends: {ends(w, q)}, subsumes: {subsumes(w, q)}")
    assert subsumes(w, q) is (q in set(every_instantiation(w)))


@given(wild_and_concrete())
def test_containment_by_instantiations(pair: tuple[PathType, PathType]) -> None:
    """w ⊂ q: one offset at which some instantiation of w occurs in q (unique containment);
    and then w instantiated with q's names there is contained in q there."""
    w, q = pair
    assert contained(w, q) is by_instantiations_contained(w, q)
    event(f"contained: {contained(w, q)}")
    if contained(w, q) and w.kind is Kind.RELATIVE:
        (c,) = set().union(*(occurrences(i, q) for i in every_instantiation(w)))
        assert contained(instantiated_along(w, q, c), q)


@given(wild_and_instance())
def test_projection_takes_the_ids_of_the_instantiation_at_its_step(
        pair: tuple[PathType, PathInstance]) -> None:
    """π on a * type gives the ids π gives on the type with each * replaced by the instance's
    name at that step; the result names concrete nodes."""
    w, pi = pair
    r = project(w, pi)
    event("null" if r is None else "an instance")
    if r is None:
        # null: no instantiation of w is in pi's path type at exactly one offset
        offsets = set().union(*(occurrences(i, pi.pt) for i in every_instantiation(w)))
        whole = subsumes(w, pi.pt)
        assert not whole
        assert len(offsets) != 1 or w.kind is Kind.ABSOLUTE
        return
    assert not r.pt.has_wildcard
    assert r.pt.kind is w.kind
    assert subsumes(w, r.pt)  # r.pt is w, named along pi
    assert project(r.pt, pi) == r
    c = next(c for c in range(len(pi.pt)) if pi.ids[c:c + len(r.ids)] == r.ids)
    assert r.pt == instantiated_along(w, pi.pt, c)


@given(wild_and_instance())
def test_absolute_intersection_runs_along_the_concrete_type(
        pair: tuple[PathType, PathInstance]) -> None:
    w, pi = pair
    q = pi.pt
    r = intersect_ab(w, q)
    p = project(w, pi)
    assert (r is None) is (p is None)  # one offset rule for both (section 3.1 uses the pair)
    if r is not None and p is not None:
        assert not r.has_wildcard
        assert r.steps == q.steps[:len(r)]
        assert r.steps[len(r) - len(p.pt):] == p.pt.steps
        assert intersect_ab(p.pt, q) == r


@given(wild_path_types(max_wildcards=2), wild_path_types(max_wildcards=2))
def test_left_bound_intersection_is_the_longest_start_of_instantiations(
        w1: PathType, w2: PathType) -> None:
    """Commutative, as the paper's; a * meets a name in the name and * meets * in *. Its
    length is the longest ∩lb of any two instantiations, and those are its instantiations."""
    r = intersect_lb(w1, w2)
    assert r == intersect_lb(w2, w1)
    best = 0
    for i1 in every_instantiation(w1):
        for i2 in every_instantiation(w2):
            s = intersect_lb(i1, i2)
            if s is not None:
                best = max(best, len(s))
                if r is not None and len(s) == len(r):
                    assert subsumes(r, s)
    assert best == (0 if r is None else len(r))


@given(wild_path_types(max_wildcards=2), wild_path_types(max_wildcards=2))
def test_ends_alike_by_instantiations(w1: PathType, w2: PathType) -> None:
    expected = any(ends_alike(i1, i2) for i1 in every_instantiation(w1)
                   for i2 in every_instantiation(w2))
    event(f"ends alike: {expected}")
    assert ends_alike(w1, w2) is expected
    assert ends_alike(w2, w1) is expected


@given(wild_path_types())
def test_reflexive_forms(pt: PathType) -> None:
    """pt = pt; ⊂ stays strict as in the paper (/order/item ⊄ /order/item), while π and ∩ab
    accept pt = pt and ∩lb gives pt back."""
    assert pt == P(str(pt))
    assert subsumes(pt, pt)
    assert not contained(pt, pt)
    assert intersect_lb(pt, pt) == pt
    if pt.is_absolute:
        assert intersect_ab(pt, pt) is pt


@given(wild_path_types(), st.data())
def test_a_type_subsumes_its_instantiations(w: PathType, data: st.DataObject) -> None:
    i = data.draw(instantiations(w))
    assert subsumes(w, i)
    assert not i.has_wildcard
    assert subsumes(i, w) is (i == w)


# --- the operators on the examples ------------------------------------------------------

@pytest.mark.parametrize("op, a, b, expected", [
    (contained, "*/price", "/order/item/price", True),
    (contained, "item/*", "/order/item/price", True),
    (contained, "*", "/order/item", False),       # two offsets: not uniquely contained
    (contained, "*", "/order", True),             # relative in absolute: m + c <= n
    (contained, "/order/*", "/order/item/price", True),
    (contained, "/order/*", "/order/item", False),  # both absolute: m < n; π accepts it
    (contained, "item", "/order/*/price", False),   # * may be another element than item
    (contained, "*/@partnum", "/order/item/@partnum", True),
    (contained, "*", "/order/@x", True),
    (ends, "item/*", "/order/item/price", True),
    (ends, "*/text()", "/order/item/text()", True),
    (ends, "*", "item/@x", False),                # * is an element, never an attribute
    (ends, "item/price", "order/*/price", False),
    (ends, "*/price", "order/*/price", True),
    (subsumes, "/order/*/price", "/order/gift/price", True),
    (subsumes, "/order/*/price", "order/gift/price", False),
])
def test_boolean_operators_on_examples(op: Any, a: str, b: str, expected: bool) -> None:
    assert op(P(a), P(b)) is expected


@pytest.mark.parametrize("a, b, expected", [
    ("a/*", "a/*/@x", "a/*"),
    ("item/*", "item/price/text()", "item/price"),
    ("*/item", "order/*", "order/item"),
    ("/order/*/price", "order/item/*", "/order/item/price"),
    ("*", "@x", None),
    ("*", "text()", None),
    ("/*", "*", "/*"),
])
def test_left_bound_intersection_examples(a: str, b: str, expected: str | None) -> None:
    r = intersect_lb(P(a), P(b))
    assert (None if r is None else str(r)) == expected


def test_projection_and_absolute_intersection_examples() -> None:
    pi = PathInstance.of("/order/item/price", ["o1", "i1", "p1"])
    assert str(project(P("item/*"), pi)) == "item[i1]/price[p1]"
    assert str(project(P("/order/*"), pi)) == "/order[o1]/item[i1]"
    assert project(P("/order/*/price"), pi) is pi  # the wildcard form of pt = pi.pt
    assert project(P("*"), pi) is None  # two offsets
    assert intersect_ab(P("*/price"), pi.pt) == P("/order/item/price")
    assert intersect_ab(P("/order/*"), pi.pt) == P("/order/item")
    assert intersect_ab(P("/order/*/price"), pi.pt) is pi.pt
    assert intersect_ab(P("billTo/*"), pi.pt) is None


# --- derived path types (section 3.1) -----------------------------------------------------------

def test_a_definition_with_wildcards_derives_its_path_types() -> None:
    ds = DefinitionSet.parse("E := ins(a/*) ; upd(a/*/@x)\n"
                             "F := ins(/order/*/price) & ins(/order/*/quantity)\n"
                             "G := [1,*] ins(item/*)")
    assert [str(n.pt) for n in ds["E"].root.walk()] == ["a/*", "a/*/@x", "a/*"]
    assert str(ds["F"].root.pt) == "/order/*"
    assert str(ds["G"].root.pt) == "item"


@pytest.mark.parametrize("pt, operands, says", [
    ("*", ["*", "*/@x"], "is relative and has only * steps"),
    ("*/*", [], "exactly 2 elements"),
    ("item/price", ["item/*", "item/price/text()"],
     "item/* has * at step 2 where item/price/text() has price"),
    ("/a/b", ["/a/*", "a/b"], "`with at=/a` (one group per a) or `with at=/a/b`"),
])
def test_derivations_that_would_drop_events_are_explained(pt: str, operands: list[str],
                                                          says: str) -> None:
    reason = derivation_problem(P(pt), [P(o) for o in operands])
    assert reason is not None and says in reason


@pytest.mark.parametrize("pt, operands", [
    ("a/*", ["a/*", "a/*/@x"]), ("/order/*", ["/order/*/price", "/order/*/quantity"]),
    ("item", ["item/*", "item"]), ("*/@x", ["*/@x", "*/@x"]), ("/*", []),
])
def test_derivations_that_keep_every_operand(pt: str, operands: list[str]) -> None:
    assert derivation_problem(P(pt), [P(o) for o in operands]) is None


@given(wild_path_types(max_wildcards=2), wild_path_types(max_wildcards=2))
def test_a_derivation_without_problem_covers_both_operands_start(w1: PathType,
                                                                 w2: PathType) -> None:
    """Where derivation_problem lets ∩lb through, each operand's start is covered by it, so
    every operand event can project on it (as the paper's prefix guarantees)."""
    r = intersect_lb(w1, w2)
    assume(r is not None)
    assert r is not None
    if derivation_problem(r, [w1, w2]) is None:
        for w in (w1, w2):
            assert all(a in (b, WILDCARD_STEP) for a, b in zip(r.steps, w.steps,
                                                               strict=False))


# --- end to end ---------------------------------------------------------------------------------

def ev(ts: int, op: Op, path: str, ids: str) -> PrimitiveEvent:
    return PrimitiveEvent(f"e{ts}", ts, op, PathInstance.of(path, list(ids)))


def test_event_graph_combines_by_the_element_a_wildcard_stands_for() -> None:
    """``ins(/order/*/price) & ins(/order/*/quantity)`` derives /order/*: a price and a
    quantity combine when they are children of one element, whatever its name."""
    g = EventGraph("E := ins(/order/*/price) & ins(/order/*/quantity)")
    stream = [ev(1, Op.INS, "/order/item/price", "oip"),
              ev(2, Op.INS, "/order/gift/price", "ogr"),
              ev(3, Op.INS, "/order/gift/quantity", "ogq"),
              ev(4, Op.INS, "/order/note", "on"),
              ev(5, Op.INS, "/order/item/quantity", "oiq")]
    raised: list[CompositeEvent] = [c for e in stream for c in g.feed(e)]
    assert [(str(c.pi), str(c.type), [x.id for x in c.constituents]) for c in raised] == [
        ("/order[o]/gift[g]", "E(/order/gift)", ["e2", "e3"]),
        ("/order[o]/item[i]", "E(/order/item)", ["e1", "e5"]),
    ]


def test_event_graph_sequence_over_wildcard_paths() -> None:
    g = EventGraph("E := ins(order/*/price) ; upd(order/*/price/text())")
    stream = [ev(1, Op.INS, "/order/item/price", "oip"),
              ev(2, Op.INS, "/order/gift/price", "ogr"),
              ev(3, Op.UPD, "/order/gift/price/text()", "ogrt"),
              ev(4, Op.UPD, "/order/item/quantity/text()", "oiqt")]
    raised = [c for e in stream for c in g.feed(e)]
    assert [(str(c.pi), [x.id for x in c.constituents]) for c in raised] == [
        ("/order[o]/gift[g]/price[r]", ["e2", "e3"])]


def test_watched_document_with_wildcard_definitions_and_subscriptions() -> None:
    doc = xmlevents.fromstring("<order><item><price>1</price></item></order>")
    doc.define("PriceSet := ins(order/*/price) ; upd(order/*/price/text())")
    seen: list[str] = []
    doc.subscribe("PriceSet", lambda d, event: seen.append(f"name {event.pi}"))
    doc.subscribe("PriceSet(/order/*/price)", lambda d, event: seen.append(f"typed {event.pi}"))
    doc.subscribe("upd(/order/*/price/text())", lambda d, event: seen.append(f"upd {event.pi}"))
    root = doc.getroot()
    box = etree.SubElement(root, "box")
    price = etree.SubElement(box, "price")
    price.text = "3"  # an insertion of the text
    price.text = "4"  # its update
    root[0][0].text = "9"  # the item's price was there before the definition
    assert seen == [
        "upd /order[n1]/box[n5]/price[n6]/text()[n7]",
        "name /order[n1]/box[n5]/price[n6]",
        "typed /order[n1]/box[n5]/price[n6]",
        "upd /order[n1]/item[n2]/price[n3]/text()[n4]",
    ]
