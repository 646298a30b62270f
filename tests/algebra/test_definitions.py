"""Definition sets: derived path types, the checks of section 3.1, references and cycles."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import wild_path_types
from xmlevents.algebra import (
    CompositeEventType,
    Definition,
    DefinitionError,
    DefinitionSet,
    EventGraph,
    LeafSpec,
    Op,
    OperatorSpec,
    PathType,
    PrimitiveEventType,
    XmlEventsError,
    conj,
    ins,
    mult,
    parse,
    ref,
    seq,
    wildcard,
)
from xmlevents.algebra._definitions import _Endings, may_match
from xmlevents.algebra._paths import ends, ends_alike

P = PathType.parse


def operators(ds: DefinitionSet, name: str) -> list[OperatorSpec]:
    return [n for n in ds[name].root.walk() if isinstance(n, OperatorSpec)]


def test_example_10_figure_1_derivation() -> None:
    """Example 10: & gets item/price ∩lb item/quantity = item, then ; gets item ∩lb item = item."""
    ds = DefinitionSet.parse("Ec := ins(item) ; (ins(item/price) & ins(item/quantity))")
    conj_node, seq_node = operators(ds, "Ec")
    assert conj_node.expr.symbol == "&" and conj_node.pt == P("item")
    assert seq_node.expr.symbol == ";" and seq_node.pt == P("item")
    assert not conj_node.explicit and not seq_node.explicit
    assert ds["Ec"].event_type == CompositeEventType("Ec", P("item"))


def test_example_10_with_aliases() -> None:
    """The paper's abbreviations Ei, Ep, Eq are aliases: Ec := Ei ; (Ep & Eq) is Figure 1's tree."""
    ds = DefinitionSet.parse("Ei := ins(item)\nEp := ins(item/price)\nEq := ins(item/quantity)\n"
                             "Ec := Ei ; (Ep & Eq)")
    assert ds["Ei"].is_alias and not ds["Ec"].is_alias
    leaves = [str(n.et) for n in ds["Ec"].root.walk() if isinstance(n, LeafSpec)]
    assert leaves == ["ins(item)", "ins(item/price)", "ins(item/quantity)"]
    assert [n.pt for n in operators(ds, "Ec")] == [P("item"), P("item")]
    assert [d.name for d in ds.trees()] == ["Ec"]


def test_at_overrides_the_derived_path_type() -> None:
    """Example 13: `with at=order` gives the conjunction of unrelated types its path type."""
    ds = DefinitionSet.parse(
        "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))\n"
        "Es := ins(shipTo) ; ins(shipTo/street)\nEb := ins(billTo) ; ins(billTo/street)\n"
        "Eo := (Ei(item) & Es(shipTo) & Eb(billTo)) with at=order")
    (node,) = operators(ds, "Eo")
    assert node.pt == P("order") and node.explicit
    assert ds["Eo"].depends_on == ("Ei", "Es", "Eb")


ITEM_ADDED = ("ItemAdded := ins(order/items/item) ; "
              "(ins(item/price/text()) & ins(item/quantity/text()))")


def _pasted(message: str) -> list[str]:
    """The definitions a refusal offers, ready to paste (each between backticks after
    "write")."""
    import re

    return re.findall(r"`([^`]+ := [^`]+)`", message.partition(": write ")[2])


def test_operands_that_meet_in_the_middle_are_refused_with_the_rewrite() -> None:
    """Issue 30, item 3: `order/items/item` and `item/price/text()` have no common start
    (∩lb null) but meet at `item`; the refusal gives the definition with `with at=item`,
    which compiles, and a watched document raises it once per item, at the item."""
    import xmlevents

    with pytest.raises(DefinitionError, match="meet at item: write `ItemAdded := ") as info:
        DefinitionSet.parse(ITEM_ADDED)
    [rewrite] = _pasted(str(info.value))
    assert rewrite == ITEM_ADDED + " with at=item"
    doc = xmlevents.fromstring("<order><items/></order>")
    doc.define(rewrite)
    raised: list[str] = []
    doc.subscribe("ItemAdded", lambda doc, event: raised.append(str(event.pi)))
    for _ in range(2):
        item = xmlevents.SubElement(doc.getroot()[0], "item")
        xmlevents.SubElement(item, "price").text = "5"
        xmlevents.SubElement(item, "quantity").text = "2"
    assert raised == ["/order[n1]/items[n2]/item[n3]", "/order[n1]/items[n2]/item[n8]"]


def test_operands_that_share_no_step_get_no_rewrite() -> None:
    with pytest.raises(DefinitionError, match=r"x ∩lb y is null \(their first steps differ\) "
                                              "and no path type is uniquely contained"):
        DefinitionSet.parse("E := ins(x) ; ins(y)")


_STEPS = st.lists(st.sampled_from(["a", "b", "c", "order", "item"]), min_size=1, max_size=4)


@given(_STEPS, _STEPS, st.sampled_from([";", "&", "|"]))
def test_every_rewrite_offered_compiles_with_its_at(first: list[str], second: list[str],
                                                   op: str) -> None:
    """Whatever two relative types share, each rewrite a refusal offers is accepted, and its
    path type is the one offered; a definition accepted as written is left alone."""
    text = f"E := ins({'/'.join(first)}) {op} upd({'/'.join(second)})"
    try:
        DefinitionSet.parse(text)
    except DefinitionError as exc:
        for rewrite in _pasted(str(exc)):
            [resolved] = DefinitionSet.parse(rewrite)
            assert rewrite.startswith(text + " with at=")
            assert str(resolved.root.pt) == rewrite.rpartition("with at=")[2]


def test_example_13_without_at_is_rejected() -> None:
    """Without at=, item ∩lb shipTo ∩lb billTo is null and the definition is rejected."""
    with pytest.raises(DefinitionError, match=r"cannot derive the operator's path type: "
                                              r"item ∩lb shipTo ∩lb billTo is null"):
        DefinitionSet.parse("Ei := ins(item) ; ins(item/price)\nEs := ins(shipTo) ; "
                            "ins(shipTo/a)\nEb := ins(billTo) ; ins(billTo/a)\n"
                            "Eo := Ei(item) & Es(shipTo) & Eb(billTo)")


def test_example_14_relative_references() -> None:
    """Example 14: Ea(shipTo/address) and Ea(billTo/address) both take events of Ea(address)."""
    ds = DefinitionSet.parse(
        "Ea := ins(address) ; (ins(address/street) & ins(address/city))\n"
        "Es := ins(shipTo) ; Ea(shipTo/address)\nEb := ins(billTo) ; Ea(billTo/address)")
    assert operators(ds, "Es")[0].pt == P("shipTo")
    leaf = [n for n in ds["Eb"].root.walk() if isinstance(n, LeafSpec)][1]
    assert leaf.ref == "Ea" and leaf.et == CompositeEventType("Ea", P("billTo/address"))
    assert ds.names.index("Ea") < ds.names.index("Es")


def test_multiplicity_default_path_type() -> None:
    """[l,u] E defaults to E's path type minus its last step (section 3.2, Figure 4)."""
    ds = DefinitionSet.parse("Eq := [1,*] ins(item/quantity)\nEc := [0,1] ins(item/comment)\n"
                             "Eh := ins(item/price) & Eq & Ec\nEi := ins(item) ; Eh")
    assert operators(ds, "Eq")[0].pt == P("item")
    assert operators(ds, "Eh")[0].pt == P("item")
    assert ds.names == ("Eq", "Ec", "Eh", "Ei")


def test_multiplicity_of_a_single_step_needs_at() -> None:
    """[1,*] ins(quantity) has no step left to derive from: give one with at=."""
    with pytest.raises(DefinitionError, match="single step") as info:
        DefinitionSet.parse("Eq := [1,*] ins(quantity)")
    assert (info.value.line, info.value.column, info.value.definition) == (1, 7, "Eq")
    ds = DefinitionSet.parse("Eq := [1,*] ins(quantity) with at=item")
    assert operators(ds, "Eq")[0].pt == P("item")


def test_multiplicity_of_an_absolute_type() -> None:
    """The default keeps the kind: [1,*] ins(/order/item) has path type /order."""
    ds = DefinitionSet.parse("E := [1,*] ins(/order/item)")
    assert operators(ds, "E")[0].pt == P("/order")


def test_constraint_a_both_absolute() -> None:
    """Section 3.1 (a): absolute operator and absolute child must share a leading step."""
    with pytest.raises(DefinitionError, match=r"section 3.1 \(a\)"):
        DefinitionSet.parse("E := (ins(/order/item) & ins(/order/x)) with at=/cart")


def test_constraint_b_relative_operator_absolute_child() -> None:
    """Section 3.1 (b): a relative operator path type must be contained in an absolute child's."""
    with pytest.raises(DefinitionError, match=r"section 3.1 \(b\)"):
        DefinitionSet.parse("E := (ins(/order/item) & ins(/order/x)) with at=item")
    ds = DefinitionSet.parse("E := (ins(/order/item/a) & ins(/order/item/b)) with at=item")
    assert operators(ds, "E")[0].pt == P("item")


def test_relative_children_are_unconstrained() -> None:
    """A relative child passes any operator path type (a type-cast at run time, section 3.1)."""
    ds = DefinitionSet.parse("E := (ins(price) & ins(quantity)) with at=/order/item")
    assert operators(ds, "E")[0].pt == P("/order/item")


def test_mixed_kinds_derive_absolute() -> None:
    """∩lb of an absolute and a relative type is absolute: /order/item & order/item/x."""
    ds = DefinitionSet.parse("E := ins(/order/item) & ins(order/item/x)")
    assert operators(ds, "E")[0].pt == P("/order/item")


def test_unknown_name_says_where() -> None:
    """An unknown reference names the definition, the node, line and column."""
    text = "Ea := ins(a) ; ins(a/b)\nEb := ins(b) ;\n  Nope(b)"
    with pytest.raises(DefinitionError) as info:
        DefinitionSet.parse(text)
    exc = info.value
    assert (exc.definition, exc.node, exc.line, exc.column) == ("Eb", "Nope(b)", 3, 3)
    assert "unknown definition 'Nope' (defined: Ea)" in str(exc)
    assert isinstance(exc, ValueError) and isinstance(exc, XmlEventsError)


def test_reference_that_can_never_match() -> None:
    """Ea(foo) cannot hold events of Ea(address): their path types do not end alike."""
    with pytest.raises(DefinitionError, match="do not end alike"):
        DefinitionSet.parse("Ea := ins(address) ; ins(address/city)\n"
                            "Eo := (ins(order) & Ea(foo)) with at=order")


def test_alias_takes_no_path() -> None:
    """An alias stands for its event type and cannot be narrowed with a path."""
    with pytest.raises(DefinitionError, match="alias"):
        DefinitionSet.parse("Ep := ins(item/price)\nE := ins(item) ; Ep(price)")


@pytest.mark.parametrize("text, cycle", [
    ("A := ins(a) ; A(a)", "A -> A"),
    ("A := ins(a) ; B(a)\nB := ins(a) ; A(a)", "A -> B -> A"),
    ("A := ins(a) ; B\nB := ins(a) ; C\nC := ins(a) ; A", "A -> B -> C -> A"),
])
def test_named_cycles(text: str, cycle: str) -> None:
    """A definition that depends on itself, directly or indirectly, is rejected with the cycle."""
    with pytest.raises(DefinitionError, match=f"depend on themselves: {cycle}"):
        DefinitionSet.parse(text)


def test_wildcard_cycle() -> None:
    """%(item) in a definition whose own events occur at item depends on itself."""
    with pytest.raises(DefinitionError, match="W -> W") as info:
        DefinitionSet.parse("W := %(item) | ins(item/price)")
    assert info.value.node == "%(item)" and info.value.column == 6


def test_wildcard_dependencies() -> None:
    """%(pt) depends on every definition whose events it can match, and on no other."""
    ds = DefinitionSet.parse("Ei := ins(item) ; ins(item/price)\nEs := ins(shipTo) ; "
                             "ins(shipTo/a)\nW := (%(item) & ins(order/x)) with at=order")
    assert ds["W"].depends_on == ("Ei",)
    assert ds.names.index("Ei") < ds.names.index("W")


def test_duplicate_and_keyword_names() -> None:
    """A name defined twice is rejected at the second definition."""
    with pytest.raises(DefinitionError, match="defined twice") as info:
        DefinitionSet.parse("E := ins(a) & ins(a/b)\nE := ins(a) ; ins(a/b)")
    assert info.value.line == 2


def test_python_built_definitions_have_no_position() -> None:
    """Definitions built in Python are checked too; the message then has no line and column."""
    with pytest.raises(DefinitionError) as info:
        DefinitionSet([Definition("A", conj(ins("a"), ref("Zed")))])
    assert info.value.line is None and str(info.value).startswith("definition A")


def test_of_accepts_text_values_and_lists() -> None:
    """DefinitionSet.of takes text, Definition values, lists and other sets alike."""
    ds = DefinitionSet.of("A := ins(a) & ins(a/b)", [Definition("B", mult(1, None, ins("b/c")))],
                          Definition("C", conj(ref("A"), wildcard("b"), at="/root")))
    assert set(ds.names) == {"A", "B", "C"} and len(ds) == 3
    assert "A" in ds and list(DefinitionSet.of(ds).names) == list(ds.names)
    with pytest.raises(KeyError, match="no definition named 'Z'"):
        ds["Z"]


steps = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=4)


@given(steps, steps, st.booleans(), st.booleans())
def test_may_match_agrees_with_a_witness(s1: list[str], s2: list[str], abs1: bool,
                                         abs2: bool) -> None:
    """may_match holds exactly when some absolute path type equals or ends in both types."""
    p1 = P(("/" if abs1 else "") + "/".join(s1))
    p2 = P(("/" if abs2 else "") + "/".join(s2))
    # Candidate witnesses: the absolute forms of both and of everything one step longer.
    witnesses = {P("/" + "/".join(s)) for s in (s1, s2)}
    witnesses |= {P("/" + "/".join([x] + s)) for s in (s1, s2) for x in "abc"}
    reached = any((w == p1 or ends(p1, w)) and (w == p2 or ends(p2, w)) for w in witnesses)
    assert may_match(p1, p2) == reached


def test_an_error_about_a_modifier_points_at_the_modifier() -> None:
    """The caret of an error a modifier causes is under that modifier, not the operator
    (issue 15): ``at=`` breaking a child constraint, ``when=`` a graph cannot evaluate."""
    text = "E := (ins(/a/b) & ins(/a/c)) with context=recent, at=/x"
    with pytest.raises(DefinitionError) as info:
        DefinitionSet.parse(text)
    assert (info.value.line, info.value.column) == (1, text.index("at=") + 1)
    text = 'E := (ins(a) ; ins(a/b)) with when="count(("'
    with pytest.raises(DefinitionError) as info:
        EventGraph(text)
    assert (info.value.line, info.value.column) == (1, text.index("when") + 1)
    # parsed text keeps where each modifier was; values built in Python have none (the
    # caret then goes under the operator, as before), and positions never change equality
    parsed = parse('(ins(a) ; ins(a/b)) with when="x"')
    assert parsed.mods.pos("when") == (1, 26)
    built = seq(ins("a"), ins("a/b")).with_(when="x")
    assert built.mods.pos("when") is None and built == parsed


@given(st.lists(wild_path_types(), min_size=1, max_size=12), wild_path_types())
def test_the_endings_index_finds_exactly_the_trees_a_wildcard_may_receive(
        trees: list[PathType], wanted: PathType) -> None:
    """The index a wildcard ``%(pt)`` looks its producers up in (issue 16) finds every tree
    whose path type ends like ``pt``'s — the brute force over every tree, as before."""
    roots = {f"D{i}": LeafSpec(PrimitiveEventType(Op.INS, pt), ins(pt))
             for i, pt in enumerate(trees)}
    found = set(_Endings.of(roots).candidates(wanted))
    brute = {name for name, root in roots.items() if ends_alike(root.pt, wanted)}
    assert brute <= found  # nothing missed
    assert {n for n in found if ends_alike(roots[n].pt, wanted)} == brute


@pytest.mark.parametrize("backwards", [False, True])
def test_a_long_chain_of_references_is_checked_without_recursion(backwards: bool) -> None:
    """3,000 definitions each naming the next, listed in either order: resolving a reference
    resolves its target first without a Python frame per definition (issue 16: the forward
    order raised RecursionError at about 200)."""
    lines = [f"D{i} := ins(a) ; D{i + 1}" for i in range(3000)] + ["D3000 := ins(a) ; ins(a/b)"]
    ds = DefinitionSet.parse("\n".join(reversed(lines) if backwards else lines))
    assert ds.names[0] == "D3000" and ds["D0"].depends_on == ("D1",)
    assert str(ds["D0"].root.pt) == "a"


def test_a_cycle_through_a_long_chain_names_it_from_where_resolving_began() -> None:
    lines = [f"D{i} := ins(a) ; D{i + 1}" for i in range(500)] + ["D500 := ins(a) ; D7"]
    with pytest.raises(DefinitionError) as info:
        DefinitionSet.parse("\n".join(lines))
    assert info.value.reason == "definitions depend on themselves: " + " -> ".join(
        f"D{i}" for i in [*range(7, 501), 7])
    assert info.value.line == 501
