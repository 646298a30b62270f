"""Simple XPath, conditions and constructors evaluated on the documents of the paper's
Examples 1 and 2 (seed 002, sections 2.2-2.5), written out in ``fixtures/``."""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Any

import pytest
from lxml import etree

import xmlevents.dom
from xmlevents.algebra import ArgumentTypeError, InvalidArgumentError, UnknownNameError
from xmlevents.rules import (
    RuleError,
    UnknownDocumentError,
    ast,
    compile_condition,
    compile_content,
    compile_path,
    compile_qualifier,
    parse_action,
    parse_rules,
    string_value,
)

FIXTURES = FilePath(__file__).parent / "fixtures"
RULES = parse_rules((FIXTURES / "paper_rules.txt").read_text(encoding="utf-8"))


def load(name: str) -> etree._Element:
    parser = etree.XMLParser(remove_blank_text=True)
    return etree.parse(str(FIXTURES / name), parser).getroot()


@pytest.fixture
def docs() -> dict[str, etree._Element]:
    """The stores and products of Example 1 and the guide and view of Example 2."""
    return {name: load(name) for name in ("s.xml", "p.xml", "g.xml", "m.xml")}


def tags(nodes: list[Any]) -> list[str]:
    return [n.tag if isinstance(n, etree._Element) else f"@{n.attrname}={n}" for n in nodes]


def insert_of(rule: str) -> ast.Insert:
    action = RULES[rule].actions[0]
    assert isinstance(action, ast.Insert)
    return action


# --- Example 1 -------------------------------------------------------------------------------

def test_the_event_path_selects_the_products_of_every_store(docs: dict[str, Any]) -> None:
    """INSERT document('s.xml')/stores/store/product selects the $delta candidates."""
    event = RULES["R1"].event
    assert isinstance(event, ast.Event)
    products = compile_path(event.path)(docs)
    assert [(p.getparent().get("id"), p.get("id")) for p in products] == [
        ("s1", "p1"), ("s1", "p2"), ("s2", "p1")]


def test_rule_1s_condition_compares_across_documents(docs: dict[str, Any]) -> None:
    """not(p.xml's product[@id=$delta/@id]/store[@id=$delta/../@id]) with $delta a product
    of s.xml: true only where p.xml lacks the store (p2 in s1)."""
    condition = compile_condition(RULES["R1"].condition)
    s1_p1, s1_p2, s2_p1 = docs["s.xml"].findall("store/product")
    assert condition.uses_delta and condition.documents == ("p.xml",)
    assert [condition(docs, d) for d in (s1_p1, s1_p2, s2_p1)] == [False, True, False]


def test_rule_1s_constructor_builds_the_store(docs: dict[str, Any]) -> None:
    """<store id='{$delta/../@id}'/> builds <store id="s1"/> for a product of store s1."""
    s1_p2 = docs["s.xml"].findall("store/product")[1]
    [built] = compile_content(insert_of("R1").content)(docs, s1_p2)
    assert isinstance(built, etree._Element)
    assert etree.tostring(built) == b'<store id="s1"/>' and built.getparent() is None


def test_rule_1s_below_selects_the_product_of_the_other_document(docs: dict[str, Any]) -> None:
    """BELOW document('p.xml')/products/product[@id=$delta/@id] gives p.xml's product."""
    s1_p2 = docs["s.xml"].findall("store/product")[1]
    below = compile_path(insert_of("R1").below)
    [product] = below.elements(docs, s1_p2)
    assert product is docs["p.xml"][1]  # the node itself, not a copy


def test_rule_2_reads_the_other_way(docs: dict[str, Any]) -> None:
    """Rule 2's condition is false for p.xml's stores, which s.xml already lists."""
    condition = compile_condition(RULES["R2"].condition)
    stores = docs["p.xml"].findall("product/store")
    assert [condition(docs, store) for store in stores] == [False, False]
    [built] = compile_content(insert_of("R2").content)(docs, stores[1])
    assert isinstance(built, etree._Element) and etree.tostring(built) == b'<product id="p1"/>'


# --- Example 2 -------------------------------------------------------------------------------

def add_ingredient(docs: dict[str, Any], restaurant: str, entree: int, value: str) -> Any:
    place = docs["g.xml"].xpath(f"restaurant[name='{restaurant}']/entree")[entree]
    added = etree.SubElement(place, "ingredient")
    added.text = value
    return added


def test_example_2s_condition(docs: dict[str, Any]) -> None:
    """$delta[.='Mushroom'] and $delta/../..[name='Baghdad Cafe']: true only for a mushroom
    added to an entree of the Baghdad Cafe."""
    condition = compile_condition(RULES["Mushrooms"].condition)
    assert condition.documents == ()
    mushroom = add_ingredient(docs, "Baghdad Cafe", 1, "Mushroom")
    tomato = add_ingredient(docs, "Baghdad Cafe", 1, "Tomato")
    elsewhere = add_ingredient(docs, "Eats", 0, "Mushroom")
    assert [condition(docs, d) for d in (mushroom, tomato, elsewhere)] == [True, False, False]


def test_example_2s_update_gives_the_papers_view(docs: dict[str, Any]) -> None:
    """INSERT $delta/.. BELOW document('m.xml')/entrees AFTER TRUE: the whole entree is
    copied in after the last child, giving the m.xml the paper prints."""
    mushroom = add_ingredient(docs, "Baghdad Cafe", 1, "Mushroom")
    action = insert_of("Mushrooms")
    copies = compile_content(action.content)(docs, mushroom)
    [entrees] = compile_path(action.below).elements(docs, mushroom)
    for part in copies:
        assert isinstance(part, etree._Element)
        entrees.append(part)
    expected = load("m-after.xml")
    assert etree.tostring(docs["m.xml"], method="c14n") == etree.tostring(expected,
                                                                          method="c14n")
    assert copies[0] is not mushroom.getparent()  # a copy: g.xml keeps its entree
    assert len(mushroom.getparent()) == 2


# --- paths -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "expected"), [
    ("document('g.xml')//ingredient",
     ["ingredient", "ingredient", "ingredient", "ingredient", "ingredient"]),
    ("document('g.xml')/guide/restaurant/*", ["name", "rating"] * 2 + ["entree"] * 2
     + ["name", "rating"] + ["entree"] * 2),
    ("document('s.xml')/stores/store/@*", ["@id=s1", "@id=s2"]),
    ("document('s.xml')//product/@id", ["@id=p1", "@id=p2", "@id=p1"]),
    ("document('g.xml')/guide/restaurant[rating > 5]/name", ["name"]),
    ("document('g.xml')/guide/restaurant[rating <= 5 or name = 'Eats']/rating",
     ["rating", "rating"]),
    ("document('g.xml')/guide/restaurant[rating != 9 and entree]/name", ["name"]),
    ("document('m.xml')/entrees//.", ["entrees", "entree", "name", "ingredient"]),
    ("document('m.xml')/entrees/entree//..", ["entrees", "entree"]),
    ("document('m.xml')/entrees/entree/./name/..", ["entree"]),
    ("document('m.xml')/entrees/..", []),
    ("document('m.xml')/entrees/../entrees", ["entrees"]),
    ("document('m.xml')/entrees/.[entree]", ["entrees"]),
    ("document('m.xml')/entrees/entree/..[entree/name='Beef Stew']", ["entrees"]),
    ("document('p.xml')/products/product[store/@id = document('s.xml')/stores/store/@id]"
     "/@id", ["@id=p1"]),
    ("document('g.xml')/guide/restaurant['Baghdad Cafe' = name]/rating", ["rating"]),
])
def test_paths_select_what_xpath_would(docs: dict[str, Any], path: str,
                                       expected: list[str]) -> None:
    """//, *, @*, ., .., comparisons with strings and numbers, and/or, across documents;
    the nodes selected are the documents' own, not copies."""
    selected = compile_path(path)(docs)
    assert tags(selected) == expected
    for node in selected:
        element = node if isinstance(node, etree._Element) else node.getparent()
        assert any(element.getroottree().getroot() is d for d in docs.values())


def test_delta_paths(docs: dict[str, Any]) -> None:
    """$delta with qualifiers, .., // and @* from an element instantiation."""
    s1 = docs["s.xml"][0]
    assert compile_path("$delta/..")(docs, s1)[0] is docs["s.xml"]
    assert tags(compile_path("$delta//@id")(docs, s1)) == ["@id=s1", "@id=p1", "@id=p2"]
    assert tags(compile_path("$delta[@id='s1']/product[@id='p2']")(docs, s1)) == ["product"]
    assert compile_path("$delta[@id='s2']/product")(docs, s1) == []
    assert compile_path("$delta/@*").strings(docs, s1) == ["s1"]
    assert compile_path("$delta").boolean(docs, s1)


def test_an_attribute_delta(docs: dict[str, Any]) -> None:
    """$delta may be an attribute as lxml selects one: .. is its element, . its value."""
    [s1_p2_id] = compile_path("document('s.xml')//product[@id='p2']/@id")(docs)
    [product] = compile_path("$delta/..")(docs, s1_p2_id)
    assert product is docs["s.xml"][0][3]
    assert compile_path("$delta/../../@id").strings(docs, s1_p2_id) == ["s1"]
    assert compile_path("$delta[.='p2']").strings(docs, s1_p2_id) == ["p2"]
    assert compile_path("$delta[.='p1']")(docs, s1_p2_id) == []
    condition = compile_condition("document('p.xml')/products/product[@id=$delta]")
    assert condition(docs, s1_p2_id)


def test_strings_with_both_quotes(docs: dict[str, Any]) -> None:
    """A literal holding ' and " is compared as written."""
    docs["s.xml"][0].set("note", "it's \"fine\"")
    path = compile_path("document('s.xml')/stores/store[@note='it''s \"fine\"']/@id")
    assert path.strings(docs) == ["s1"] and "concat(" in path.xpath


def test_the_translation_to_xpath_1() -> None:
    """.. with qualifiers is parent::node(), //. and //.. range over elements, and document()
    is a variable bound to the document's root element."""
    assert compile_path("$delta/../..[name='x']").xpath == (
        "$delta/../parent::node()[name = 'x']")
    assert compile_path("document('m.xml')//.").xpath == "$doc0/../descendant-or-self::*"
    assert compile_path("document('a')/b//..[c]").xpath == (
        "$doc0/../b/descendant-or-self::*/parent::node()[c]")
    condition = compile_condition("not($delta/a) and (document('a')/b or document('c')/d)")
    assert condition.xpath == "(not(boolean($delta/a)) and (boolean($doc0/../b) or " \
                              "boolean($doc1/../d)))"
    assert condition.documents == ("a", "c")


# --- conditions and positions ----------------------------------------------------------------

def test_conditions(docs: dict[str, Any]) -> None:
    """TRUE, paths, and, or and not() give booleans, with or without $delta."""
    assert compile_condition(ast.TRUE)(docs)
    assert compile_condition("document('s.xml')/stores/store")(docs)
    assert not compile_condition("document('s.xml')/stores/shop")(docs)
    assert compile_condition("document('s.xml')/stores/shop or not(document('p.xml')/x)")(docs)
    assert not compile_condition("document('s.xml')/stores and document('p.xml')/x")(docs)


def test_position_qualifiers_test_each_child(docs: dict[str, Any]) -> None:
    """AFTER q / BEFORE q evaluate q with a child as the context node (section 2.3)."""
    product = docs["p.xml"][0]
    action = parse_action("INSERT <store id='s3'/> BELOW $delta "
                          "AFTER @id=$delta/store[@id='s2']/@id")
    assert isinstance(action, ast.Insert) and action.position is not None
    test = compile_qualifier(action.position.test)
    assert [test(child, docs, product) for child in product] == [False] * 4 + [True]
    always = compile_qualifier(ast.TRUE)
    assert all(always(child, docs) for child in product) and not always.uses_delta


# --- constructors ----------------------------------------------------------------------------

def test_constructors_copy_nodes_and_join_strings(docs: dict[str, Any]) -> None:
    """Example 4's <a><b>{$delta/..}</b><c/></a>, text around enclosed strings, and an
    attribute from several nodes (their values joined by spaces)."""
    ingredient = docs["m.xml"][0][1]
    action = parse_action("INSERT <a all='{document(\"s.xml\")//product/@id}'><b>{$delta/..}</b>"
                          "<c/>id {$delta/../../entree/name} and {document('s.xml')//@id}"
                          "</a> BELOW $delta")
    assert isinstance(action, ast.Insert)
    [built] = compile_content(action.content)(docs, ingredient)
    assert isinstance(built, etree._Element)
    assert etree.tostring(built).decode() == (
        '<a all="p1 p2 p1"><b><entree><name>Beef Stew</name><ingredient>Mushroom</ingredient>'
        "</entree></b><c/>id <name>Beef Stew</name> and s1 p1 p2 s2 p1</a>")


def test_namespaces(docs: dict[str, Any]) -> None:
    """Prefixes resolve through the mapping given; an unbound one is refused where written."""
    docs["n.xml"] = etree.fromstring("<x:a xmlns:x='urn:x'><x:b x:c='1'/></x:a>")
    ns = {"y": "urn:x"}
    assert compile_path("document('n.xml')/y:a/y:b/@y:c", ns).strings(docs) == ["1"]
    assert compile_path("document('n.xml')/a/b")(docs) == []
    action = parse_action("INSERT <y:d y:e='{document(\"n.xml\")//@y:c}'>t</y:d> BELOW $delta")
    assert isinstance(action, ast.Insert)
    [built] = compile_content(action.content, ns)(docs)
    assert isinstance(built, etree._Element)
    assert (built.tag, dict(built.attrib)) == ("{urn:x}d", {"{urn:x}e": "1"})
    with pytest.raises(RuleError) as caught:
        compile_path(ast.Path(ast.Document("n.xml"), (ast.Step(
            ast.Sep.CHILD, ast.StepKind.ELEMENT, "z:a", pos=(1, 15)),)))
    assert (caught.value.line, caught.value.column) == (1, 15)
    assert "prefix 'z' of z:a is not bound" in caught.value.reason
    with pytest.raises(RuleError, match="prefix 'q'"):
        compile_content(ast.Element("q:a"))
    with pytest.raises(InvalidArgumentError, match="no default namespace"):
        compile_path("$delta", {"": "urn:x"})


# --- the documents and $delta ----------------------------------------------------------------

def test_documents_by_mapping_function_tree_and_watched_document(docs: dict[str, Any]) -> None:
    """The lookup is a mapping or a function; a document is an element, tree or watched
    document, and any element of it stands for its root."""
    path = compile_path("document('s.xml')/stores/store/@id")
    assert path.strings(lambda name: docs[name]) == ["s1", "s2"]
    assert path.strings({"s.xml": docs["s.xml"].getroottree()}) == ["s1", "s2"]
    assert path.strings({"s.xml": docs["s.xml"][1][2]}) == ["s1", "s2"]
    watched = xmlevents.dom.fromstring(etree.tostring(docs["s.xml"]), name="s.xml")
    assert path.strings({"s.xml": watched}) == ["s1", "s2"]
    with pytest.raises(ArgumentTypeError, match=r"document 's\.xml' is 42"):
        path({"s.xml": 42})


def test_an_unknown_document_is_named(docs: dict[str, Any]) -> None:
    """document('x') with no such document raises UnknownDocumentError naming it, and the
    known names when the lookup is a mapping; a function says so by KeyError or None."""
    path = compile_path("document('s.xml')/stores[document('q.xml')/x]")
    with pytest.raises(UnknownDocumentError) as caught:
        path(docs)
    exc = caught.value
    assert isinstance(exc, UnknownNameError) and isinstance(exc, KeyError)
    assert (exc.document, exc.known) == ("q.xml", ("g.xml", "m.xml", "p.xml", "s.xml"))
    assert str(exc).startswith("unknown document 'q.xml' in document('q.xml'); the documents "
                               "are 'g.xml', 'm.xml'")
    with pytest.raises(UnknownDocumentError, match=r"unknown document 'q\.xml'"):
        path(docs.__getitem__)
    with pytest.raises(UnknownDocumentError, match=r"unknown document 'q\.xml'"):
        path(docs.get)
    assert str(UnknownDocumentError("a", rule="R1")) == (
        "rule R1: unknown document 'a' in document('a')")


def test_delta_must_be_given_and_be_a_node(docs: dict[str, Any]) -> None:
    """A tree using $delta needs one; a string or a text node is not one."""
    with pytest.raises(InvalidArgumentError, match=r"uses \$delta; pass delta="):
        compile_path("$delta/..")(docs)
    with pytest.raises(InvalidArgumentError, match=r"uses \$delta"):
        compile_condition("$delta")(docs)
    with pytest.raises(InvalidArgumentError, match=r"uses \$delta"):
        compile_content(ast.Element("a", (), (ast.Path(ast.Delta()),)))(docs)
    with pytest.raises(ArgumentTypeError, match="delta='x'"):
        compile_path("$delta")(docs, "x")  # type: ignore[arg-type]
    [text] = docs["m.xml"].xpath("//name/text()")
    with pytest.raises(ArgumentTypeError, match="is an element or an attribute"):
        compile_path("$delta")(docs, text)
    with pytest.raises(InvalidArgumentError, match="not a simple XPath expression"):
        compile_path(ast.Path(None, (ast.Step(ast.Sep.CHILD, ast.StepKind.ELEMENT, "a"),)))


def test_string_value_and_reprs(docs: dict[str, Any]) -> None:
    """string_value is XPath's; compiled forms show their source."""
    assert string_value(docs["m.xml"][0]) == "Beef StewMushroom"
    assert string_value(docs["s.xml"][0].xpath("@id")[0]) == "s1"
    assert repr(compile_path("$delta")) == "CompiledPath('$delta')"
    assert repr(compile_condition("$delta")) == "CompiledCondition('$delta')"
    assert repr(compile_qualifier(ast.TRUE)) == "CompiledQualifier('TRUE')"
    assert repr(compile_content(ast.Element("a"))) == "CompiledContent('<a/>')"
