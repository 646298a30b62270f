"""Path types, path instances and their operators (seed 000, section 2.1, Examples 1-7)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.strategies import NAMES, child_steps, kinds, last_steps, path_types  # noqa: F401
from xmlevents.algebra import (
    Axis,
    Kind,
    PathInstance,
    PathSyntaxError,
    PathType,
    Step,
    XmlEventsError,
    contained,
    ends,
    intersect_ab,
    intersect_lb,
    project,
)

P = PathType.parse


def pi(text: str, ids) -> PathInstance:
    """A path instance from a path type's text form and its identifiers."""
    return PathInstance.of(text, ids)


# --- strategies -------------------------------------------------------------------------------

id_text = st.text(alphabet=st.characters(blacklist_characters="[]", blacklist_categories=("Cs",)),
                  max_size=4)


@st.composite
def path_instances(draw, kind=Kind.ABSOLUTE) -> PathInstance:
    """Path instances of absolute (by default) path types with arbitrary bracket-free ids."""
    pt = draw(path_types(kind=kind))
    ids = draw(st.lists(id_text, min_size=len(pt), max_size=len(pt)))
    return PathInstance(pt, tuple(ids))


@st.composite
def related_pairs(draw):
    """(pt1, pt2) where pt1 is often a contiguous slice of pt2, so containment is exercised."""
    pt2 = draw(path_types())
    if draw(st.booleans()):
        return draw(path_types()), pt2
    n = len(pt2)
    i = draw(st.integers(0, n - 1))
    j = draw(st.integers(i + 1, n))
    kind = Kind.ABSOLUTE if (i == 0 and draw(st.booleans())) else Kind.RELATIVE
    return PathType(kind, pt2.steps[i:j]), pt2


def occurrences(pt1: PathType, pt2: PathType) -> list[int]:
    """Every offset c (0-based) at which pt1's steps appear contiguously in pt2's steps."""
    m, n = len(pt1), len(pt2)
    return [c for c in range(n - m + 1) if pt2.steps[c:c + m] == pt1.steps]


def naive_contained(pt1: PathType | None, pt2: PathType | None) -> bool:
    """Reference ⊂, spelled out from the paper's text (section 2.1).

    "pt2 uniquely contains pt1 iff pt1.steps[i] = pt2.steps[c+i] for all i, where c is a
    constant offset and m + c <= n. No c' != c may exist for which the expression above applies
    as well. Additionally, if pt1 and pt2 are both absolute c = 0 and m < n must apply, if both
    are relative only m < n must apply. A relative path type cannot contain an absolute one."

    For two absolute path types the offset is pinned at 0 (an absolute type starts at the
    root), so only c = 0 is a candidate and uniqueness holds trivially; see
    test_absolute_prefix_is_contained_even_if_its_steps_repeat.
    """
    if pt1 is None or pt2 is None:
        return False
    m, n = len(pt1), len(pt2)
    if pt1.kind is Kind.ABSOLUTE and pt2.kind is Kind.RELATIVE:
        return False
    if pt1.kind is Kind.ABSOLUTE:  # both absolute
        return m < n and 0 in occurrences(pt1, pt2)
    offs = occurrences(pt1, pt2)
    if len(offs) != 1:
        return False
    if pt2.kind is Kind.RELATIVE:  # both relative
        return m < n
    return True  # relative in absolute: only m + c <= n


# --- Example 1: equality ------------------------------------------------------------------------

@pytest.mark.parametrize("a, b, equal", [
    ("item/price", "item/price", True),
    ("/order", "/order", True),
    ("order", "/order", False),
])
def test_example_1_equality(a, b, equal):
    """Example 1: item/price = item/price, /order = /order, order ≠ /order."""
    assert (P(a) == P(b)) is equal


def test_equality_compares_steps_by_axis_and_node_test():
    """Steps are equal iff axis and node test are; an attribute and element of one name differ."""
    assert P("item/@partnum") != P("item/partnum")
    assert P("item/text()") != P("item/text")
    assert P("{urn:a}x") != P("{urn:b}x")
    assert P("{urn:a}x") == P("{urn:a}x")


# --- Example 2: containment ---------------------------------------------------------------------

@pytest.mark.parametrize("a, b, expected", [
    ("item/price", "/order/item/price", True),
    ("order/item", "/order/item/price", True),
    ("/order", "order/item", False),
])
def test_example_2_containment(a, b, expected):
    """Example 2: item/price ⊂ /order/item/price, order/item ⊂ it, /order ⊄ order/item."""
    assert contained(P(a), P(b)) is expected


@pytest.mark.parametrize("a, b, expected", [
    ("/order", "/order/item", True),        # both absolute: c = 0 and m < n
    ("/item", "/order/item", False),        # both absolute: c must be 0
    ("/order/item", "/order/item", False),  # both absolute: m < n
    ("order/item", "/order/item", True),    # relative in absolute: m + c <= n suffices
    ("item", "order/item", True),           # both relative: m < n
    ("order/item", "order/item", False),    # both relative: m < n
    ("item", "/order/item/item", False),    # two offsets: not uniquely contained
    ("a/b", "a/b/c/a/b", False),            # two offsets, relative in relative
    ("b", "/a/b/c", True),                  # one offset in the middle
    ("item/@partnum", "/order/item/@partnum", True),
    ("item", "/order/item/@partnum", True),
    ("@partnum", "/order/item/partnum", False),
])
def test_containment_kind_rules(a, b, expected):
    """⊂ follows the paper's offset, uniqueness and kind rules."""
    assert contained(P(a), P(b)) is expected
    assert naive_contained(P(a), P(b)) is expected


def test_absolute_prefix_is_contained_even_if_its_steps_repeat():
    """Two absolute types: the offset is pinned at 0, so /a ⊂ /a/a although `a` occurs twice."""
    # The paper: "if pt1 and pt2 are both absolute c = 0 ∧ m < n must apply". Read literally,
    # the preceding uniqueness clause ("No c' ≠ c may exist for which the expression above
    # applies as well") would reject /a ⊂ /a/a, because the step test also matches at c' = 1;
    # but an absolute path type is anchored at the root, so c' = 1 is no candidate for it. The
    # implementation (and naive_contained) take this reading; it keeps π_/a(/a1/a2) = /a1 for
    # recursive documents.
    assert contained(P("/a"), P("/a/a"))
    assert project(P("/a"), pi("/a/a", ["a1", "a2"])) == pi("/a", ["a1"])


def test_contained_twice_is_not_contained():
    """A relative type occurring at two offsets is not (uniquely) contained."""
    assert not contained(P("a"), P("/a/a"))
    assert not contained(P("a"), P("a/a"))
    assert project(P("a"), pi("/a/a", ["a1", "a2"])) is None


# --- Example 3: ending --------------------------------------------------------------------------

@pytest.mark.parametrize("a, b, expected", [
    ("item/price", "/order/item/price", True),
    ("price", "item/price", True),
    ("order/item", "/order/item/price", False),
])
def test_example_3_ending(a, b, expected):
    """Example 3: item/price ⊂e /order/item/price, price ⊂e item/price, order/item ⊄e the first."""
    assert ends(P(a), P(b)) is expected


@pytest.mark.parametrize("a, b, expected", [
    ("order/item", "/order/item", True),   # m = n allowed when pt2 is absolute
    ("item/price", "item/price", False),   # m = n not allowed when pt2 is relative
    ("/order/item", "/order/item", False),  # pt1 must be relative
    ("/item", "/order/item", False),
    ("price", "/order/item/price", True),
    ("a", "a/a", True),                     # ending does not demand uniqueness
    ("@partnum", "item/@partnum", True),
    ("partnum", "item/@partnum", False),
])
def test_ending_kind_rules(a, b, expected):
    """⊂e: pt1 relative, (m < n or pt2 absolute and m = n), and pt1's steps end pt2's."""
    assert ends(P(a), P(b)) is expected


# --- Example 4: left-bound intersection ---------------------------------------------------------

@pytest.mark.parametrize("a, b, expected", [
    ("order/item", "/order/billTo", "/order"),
    ("item/@partnum", "item", "item"),
    ("order", "item", None),
])
def test_example_4_left_bound_intersection(a, b, expected):
    """Example 4: order/item ∩lb /order/billTo = /order, item/@partnum ∩lb item = item, ... null."""
    result = intersect_lb(P(a), P(b))
    assert result == (None if expected is None else P(expected))


def test_left_bound_intersection_kind():
    """∩lb keeps a common kind and is absolute when the kinds differ."""
    assert intersect_lb(P("/a/b"), P("/a/c")) == P("/a")
    assert intersect_lb(P("a/b"), P("a/c")) == P("a")
    assert intersect_lb(P("/a/b"), P("a/b/c")) == P("/a/b")


def test_left_bound_intersection_stops_at_first_difference():
    """∩lb keeps only the equal steps at the beginning, not equal steps after a difference."""
    assert intersect_lb(P("a/b/c"), P("a/x/c")) == P("a")


def test_left_bound_intersection_mixed_kinds_in_both_orders():
    """∩lb of /order/item and order/item is /order/item in both orders (mixed kinds → absolute)."""
    assert intersect_lb(P("/order/item"), P("order/item")) == P("/order/item")
    assert intersect_lb(P("order/item"), P("/order/item")) == P("/order/item")


# --- Example 5: absolute-path intersection ------------------------------------------------------

@pytest.mark.parametrize("a, b, expected", [
    ("item", "/order/item/price", "/order/item"),
    ("item", "/order", None),
])
def test_example_5_absolute_path_intersection(a, b, expected):
    """Example 5: item ∩ab /order/item/price = /order/item, item ∩ab /order = null."""
    result = intersect_ab(P(a), P(b))
    assert result == (None if expected is None else P(expected))


def test_absolute_path_intersection_is_not_commutative():
    """∩ab is not commutative: /order ∩ab /order/item = /order but /order/item ∩ab /order = null."""
    assert intersect_ab(P("/order"), P("/order/item")) == P("/order")
    assert intersect_ab(P("/order/item"), P("/order")) is None


def test_absolute_path_intersection_cases():
    """∩ab: equal types give pt2, non-unique containment null, else pt2 up to pt1's last step."""
    assert intersect_ab(P("/order/item"), P("/order/item")) == P("/order/item")
    assert intersect_ab(P("order/item"), P("/order/item/price")) == P("/order/item")
    assert intersect_ab(P("item"), P("/order/item/item")) is None
    assert intersect_ab(P("price"), P("/order/item/price")) == P("/order/item/price")


def test_absolute_path_intersection_rejects_relative_pt2():
    """∩ab is defined for an absolute pt2 ("according to absolute path type pt2") only."""
    with pytest.raises(ValueError):
        intersect_ab(P("item"), P("order/item"))


# --- Examples 6 and 7: path instances -----------------------------------------------------------

def test_example_6_path_instance_equality():
    """Example 6: /order1/item1 = /order1/item1."""
    assert pi("/order/item", ["order1", "item1"]) == pi("/order/item", ["order1", "item1"])


def test_path_instance_inequality():
    """Path instances differ when their path types or any identifier differ."""
    base = pi("/order/item", ["o1", "i1"])
    assert base != pi("/order/item", ["o1", "i2"])
    assert base != pi("/order/billTo", ["o1", "i1"])


def test_example_7_projection_on_relative_type():
    """Example 7: π_item(/order1/item1/price1) = item1, a relative instance with ids ("i1",)."""
    r = project(P("item"), pi("/order/item/price", ["o1", "i1", "p1"]))
    assert r is not None
    assert r.pt == P("item") and r.pt.kind is Kind.RELATIVE
    assert r.ids == ("i1",)
    assert str(r) == "item[i1]"


def test_example_7_projection_on_absolute_prefix():
    """Example 7: π_/order(/order1/item1) = /order1."""
    assert project(P("/order"), pi("/order/item", ["o1", "i1"])) == pi("/order", ["o1"])


def test_example_7_projection_null():
    """Example 7: π_item(/order1) = null."""
    assert project(P("item"), pi("/order", ["o1"])) is None


def test_projection_on_own_type_is_identity():
    """π_pt(pi) = pi when pt = pi.pt."""
    p = pi("/order/item", ["o1", "i1"])
    assert project(P("/order/item"), p) == p


def test_projection_on_relative_type_of_equal_steps():
    """π_order/item(/order1/item1) = order1/item1 (relative m = n is contained in absolute)."""
    r = project(P("order/item"), pi("/order/item", ["o1", "i1"]))
    assert r == PathInstance(P("order/item"), ("o1", "i1"))


# --- null arguments -----------------------------------------------------------------------------

@pytest.mark.parametrize("a, b", [(None, "/order"), ("/order", None), (None, None)])
def test_null_arguments(a, b):
    """Any null argument gives null (∩lb, ∩ab, π) or false (⊂, ⊂e)."""
    pa = None if a is None else P(a)
    pb = None if b is None else P(b)
    assert contained(pa, pb) is False
    assert ends(pa, pb) is False
    assert intersect_lb(pa, pb) is None
    assert intersect_ab(pa, pb) is None
    inst = None if b is None else PathInstance(pb, ("o1",))
    assert project(pa, inst) is None


# --- text forms ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "/order/item/price",
    "item/price",
    "order",
    "/order",
    "item/@partnum",
    "/order/item/@partnum",
    "price/text()",
    "/order/comment/text()",
    "{http://a/b}x",
    "/{http://a/b}x/{urn:c}y/@{http://a/b}z",
    "text",
    "_a/b-c/d.e",
])
def test_path_type_text_round_trip(text):
    """str(parse(text)) == text for canonical text forms, and parsing again gives an equal type."""
    pt = P(text)
    assert str(pt) == text
    assert P(str(pt)) == pt


def test_parse_kinds_and_steps():
    """Parsing gives the kind and one Step per step, with its axis and name."""
    pt = P("/order/item/@partnum")
    assert pt.kind is Kind.ABSOLUTE and pt.is_absolute
    assert pt.steps == (Step(Axis.CHILD, "order"), Step(Axis.CHILD, "item"),
                        Step(Axis.ATTRIBUTE, "partnum"))
    rel = P("price/text()")
    assert rel.kind is Kind.RELATIVE and not rel.is_absolute
    assert rel.steps == (Step(Axis.CHILD, "price"), Step(Axis.TEXT))


def test_clark_name_with_slashes_in_uri():
    """A Clark name's URI may contain '/', which does not split steps."""
    pt = P("/{http://a/b}x/y")
    assert pt.steps == (Step(Axis.CHILD, "{http://a/b}x"), Step(Axis.CHILD, "y"))


def test_prefixed_names_resolve_through_namespaces():
    """prefix:name steps become Clark names via the namespaces mapping, also on attributes."""
    ns = {"p": "http://po/ns", "q": "urn:q"}
    pt = PathType.parse("/p:order/p:item/@q:code", ns)
    assert pt == P("/{http://po/ns}order/{http://po/ns}item/@{urn:q}code")
    assert P(str(pt)) == pt


def test_predefined_xml_prefix():
    """The xml: prefix needs no mapping and binds to the XML namespace."""
    pt = P("item/@xml:lang")
    assert pt.last == Step(Axis.ATTRIBUTE, "{http://www.w3.org/XML/1998/namespace}lang")
    assert P(str(pt)) == pt


@pytest.mark.parametrize("text, col", [
    ("", 1),
    ("//", 2),
    ("/", 2),
    ("a//b", 3),
    ("a/", 3),
    ("/order/", 8),
    ("@a/b", 3),
    ("text()/x", 7),
    ("/a/@b/c", 6),
    ("p:x", 1),
    ("/a/p:x", 4),
    ("a b", 2),
    ("a$", 2),
    ("$a", 1),
    ("/order/item]", 12),
])
def test_path_syntax_errors_point_at_column(text, col):
    """Malformed path types raise PathSyntaxError with the 1-based column of the offence."""
    with pytest.raises(PathSyntaxError) as info:
        P(text)
    assert info.value.column == col
    assert f"col {col}" in str(info.value)


def test_path_syntax_error_hierarchy():
    """PathSyntaxError is a ValueError and an XmlEventsError and names the unknown prefix."""
    with pytest.raises(PathSyntaxError) as info:
        P("p:x")
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, XmlEventsError)
    assert "'p'" in str(info.value)


def test_path_instance_text_round_trip():
    """PathInstance.parse(str(pi)) == pi, and str shows each id after its step."""
    p = pi("/order/item/@partnum", ["o1", "i1", "a1"])
    assert str(p) == "/order[o1]/item[i1]/@partnum[a1]"
    assert PathInstance.parse(str(p)) == p
    clark = pi("/{http://a/b}x/text()", ["x/1", "t1"])
    assert PathInstance.parse(str(clark)) == clark


@pytest.mark.parametrize("text", ["/order[o1]/item", "/order/item[i1]",
                                  "/order[o1][x]/item[i1][y][z]"])
def test_path_instance_parse_rejects_id_count_mismatch(text):
    """A path instance needs one [id] per step."""
    with pytest.raises(PathSyntaxError):
        PathInstance.parse(text)


def test_path_instance_needs_one_id_per_step():
    """Constructing a PathInstance with the wrong number of ids is a ValueError."""
    with pytest.raises(ValueError):
        PathInstance(P("/order/item"), ("o1",))


def test_path_type_needs_a_step_and_only_last_may_be_attribute_or_text():
    """PathType rejects empty steps and a non-element step before the last."""
    with pytest.raises(ValueError):
        PathType(Kind.RELATIVE, ())
    with pytest.raises(ValueError):
        PathType(Kind.RELATIVE, (Step(Axis.TEXT), Step(Axis.CHILD, "a")))
    with pytest.raises(ValueError):
        Step(Axis.TEXT, "x")
    with pytest.raises(ValueError):
        Step(Axis.CHILD)


# --- value semantics ----------------------------------------------------------------------------

def test_value_semantics_hashable_and_dict_keys():
    """Path types, steps and instances are hashable and equal values are the same dict key."""
    d = {P("/order/item"): 1, pi("/order", ["o1"]): 2, Step(Axis.CHILD, "a"): 3}
    assert d[PathType(Kind.ABSOLUTE, [Step(Axis.CHILD, "order"), Step(Axis.CHILD, "item")])] == 1
    assert d[PathInstance(P("/order"), ["o1"])] == 2
    assert d[Step(Axis.CHILD, "a")] == 3
    assert hash(P("a/b")) == hash(P("a/b"))
    assert len({P("a"), P("a"), P("/a")}) == 2


def test_value_types_are_frozen():
    """Assigning to a field of a path type, step or instance raises."""
    pt, step, inst = P("/a"), Step(Axis.CHILD, "a"), pi("/a", ["a1"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        pt.kind = Kind.RELATIVE  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.name = "b"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        inst.ids = ("x",)  # type: ignore[misc]


def test_sequences_are_normalised_to_tuples():
    """Lists given as steps or ids are stored as tuples, so equality is by value."""
    pt = PathType(Kind.RELATIVE, [Step(Axis.CHILD, "a")])
    assert isinstance(pt.steps, tuple) and pt == P("a")
    inst = PathInstance(P("/a"), ["a1"])
    assert isinstance(inst.ids, tuple)


# --- properties ---------------------------------------------------------------------------------

@given(path_types())
def test_prop_parse_print_round_trip(pt):
    """parse(str(pt)) == pt for every path type."""
    assert P(str(pt)) == pt


@given(path_instances(kind=Kind.ABSOLUTE) | path_instances(kind=Kind.RELATIVE))
def test_prop_path_instance_round_trip(p):
    """PathInstance.parse(str(pi)) == pi for bracket-free ids."""
    assert PathInstance.parse(str(p)) == p


@given(related_pairs())
@example((P("/a"), P("/a/a")))
@example((P("a"), P("/a/a")))
@example((P("a/a"), P("/a/a")))
def test_prop_contained_agrees_with_naive_reference(pair):
    """contained() agrees with the reference ⊂ spelled out from the paper's text."""
    pt1, pt2 = pair
    assert contained(pt1, pt2) == naive_contained(pt1, pt2)


@given(path_types(), path_types())
def test_prop_contained_agrees_with_naive_reference_on_independent_pairs(pt1, pt2):
    """contained() agrees with the reference ⊂ on independently drawn pairs."""
    assert contained(pt1, pt2) == naive_contained(pt1, pt2)


@given(path_types())
def test_prop_containment_is_irreflexive(pt):
    """pt ⊂ pt is false."""
    assert not contained(pt, pt)


@given(path_types(kind=Kind.ABSOLUTE), path_types(kind=Kind.RELATIVE))
def test_prop_relative_never_contains_absolute(abs_pt, rel_pt):
    """A relative path type never contains an absolute one."""
    assert not contained(abs_pt, rel_pt)


@given(path_instances(), st.data())
def test_prop_projection_slices_ids_at_offset(inst, data):
    """π on a contained (or equal) type gives the ids at the unique offset and carries that type."""
    n = len(inst.pt)
    i = data.draw(st.integers(0, n - 1))
    j = data.draw(st.integers(i + 1, n))
    pt = PathType(Kind.RELATIVE, inst.pt.steps[i:j])
    r = project(pt, inst)
    offs = occurrences(pt, inst.pt)
    if contained(pt, inst.pt):
        assert len(offs) == 1
        c = offs[0]
        assert r == PathInstance(pt, inst.ids[c:c + len(pt)])
        assert r.pt == pt
    else:
        assert len(offs) > 1  # a slice is always there; only non-uniqueness makes it null
        assert r is None


@given(path_instances(), st.data())
def test_prop_projection_on_absolute_prefix(inst, data):
    """π on an absolute prefix (or the type itself) gives the prefix of the ids."""
    k = data.draw(st.integers(1, len(inst.pt)))
    prefix = PathType(Kind.ABSOLUTE, inst.pt.steps[:k])
    assert project(prefix, inst) == PathInstance(prefix, inst.ids[:k])


@given(path_types(), path_instances())
def test_prop_projection_null_iff_not_contained_nor_equal(pt, inst):
    """π_pt(pi) is null exactly when pt ⊄ pi.pt and pt ≠ pi.pt."""
    r = project(pt, inst)
    assert (r is None) == (not contained(pt, inst.pt) and pt != inst.pt)
    if r is not None:
        assert r.pt == pt and len(r.ids) == len(pt)


def test_ending_without_unique_containment():
    """⊂e does not imply ⊂: `a` ends `a/a` and `/a/a` but occurs twice, so is not contained."""
    # The paper: "Path type pt2 uniquely contains path type pt1 iff ... No c' ≠ c may exist for
    # which the expression above applies as well", while ⊂e only asks that "the end of
    # pt2:steps contains pt1:steps". So pt1 ⊂e pt2 ⇒ pt1 ⊂ pt2 holds only when pt1 occurs
    # exactly once in pt2 (see test_prop_ending_implies_containment_when_unique).
    for pt2 in (P("a/a"), P("/a/a"), P("a/b/a/b")):
        pt1 = P("a") if len(pt2) == 2 else P("a/b")
        assert ends(pt1, pt2)
        assert not contained(pt1, pt2)
        assert pt1 != pt2


@given(related_pairs())
def test_prop_ending_implies_containment_when_unique(pair):
    """pt1 ⊂e pt2 and pt1 occurring exactly once in pt2 imply pt1 ⊂ pt2 (or pt1 = pt2)."""
    pt1, pt2 = pair
    if ends(pt1, pt2):
        assert pt1.kind is Kind.RELATIVE
        if len(occurrences(pt1, pt2)) == 1:
            assert contained(pt1, pt2) or pt1 == pt2
        else:
            assert not contained(pt1, pt2)


@given(path_types(), path_types())
def test_prop_ending_matches_definition(pt1, pt2):
    """⊂e holds iff pt1 is relative, (m < n or pt2 absolute and m = n) and pt1's steps end pt2's."""
    m, n = len(pt1), len(pt2)
    expected = (pt1.kind is Kind.RELATIVE
                and (m < n or (pt2.kind is Kind.ABSOLUTE and m == n))
                and pt2.steps[n - m:] == pt1.steps)
    assert ends(pt1, pt2) == expected


@given(related_pairs())
def test_prop_left_bound_intersection_commutative_and_prefix(pair):
    """∩lb is commutative; its result is a prefix of both operands with the paper's kind rule."""
    pt1, pt2 = pair
    r = intersect_lb(pt1, pt2)
    assert r == intersect_lb(pt2, pt1)
    if pt1.steps[0] != pt2.steps[0]:
        assert r is None
        return
    assert r is not None
    k = len(r)
    assert pt1.steps[:k] == r.steps == pt2.steps[:k]
    # maximal: the next steps differ or one operand is exhausted
    assert k == min(len(pt1), len(pt2)) or pt1.steps[k] != pt2.steps[k]
    expected_kind = pt1.kind if pt1.kind is pt2.kind else Kind.ABSOLUTE
    assert r.kind is expected_kind


@given(st.one_of(related_pairs(), st.tuples(path_types(), path_types())).filter(
    lambda p: p[1].kind is Kind.ABSOLUTE))
def test_prop_absolute_path_intersection(pair):
    """∩ab is non-null iff pt1 ⊂ pt2 or pt1 = pt2; it is then an absolute prefix of pt2 with pt1."""
    pt1, pt2 = pair
    r = intersect_ab(pt1, pt2)
    assert (r is not None) == (contained(pt1, pt2) or pt1 == pt2)
    if r is None:
        return
    assert r.kind is Kind.ABSOLUTE
    assert r.steps == pt2.steps[:len(r)]
    assert contained(r, pt2) or r == pt2
    if pt1.kind is Kind.RELATIVE:
        # r ends at the last step where pt2 contains pt1: pt1 both ends r and is (uniquely) in r
        assert ends(pt1, r)
        assert contained(pt1, r)
    else:
        assert r == pt1


def test_a_child_path_type_equals_and_hashes_as_one_parsed_whole() -> None:
    """PathType.child builds from the parent's hash and text (issue 16): the result must be
    indistinguishable from the path type built from all its steps."""
    from xmlevents.algebra import Axis, PathType, Step

    parent = PathType.parse("/order/item")
    for step, text in [(Step(Axis.CHILD, "price"), "/order/item/price"),
                       (Step(Axis.ATTRIBUTE, "partnum"), "/order/item/@partnum"),
                       (Step(Axis.TEXT), "/order/item/text()"),
                       (Step(Axis.CHILD, "*"), "/order/item/*")]:
        child = parent.child(step)
        whole = PathType.parse(text)
        assert child == whole and hash(child) == hash(whole) and str(child) == text
        assert child.has_wildcard == whole.has_wildcard
    with pytest.raises(ValueError, match="can only be the last step"):
        PathType.parse("item/@a").child(Step(Axis.CHILD, "b"))
