"""The R3-style markup of section 2.3: the paper's example, round trips, bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xmlevents.service import (
    Any,
    Atomic,
    Engine,
    Expression,
    Literal,
    MarkupError,
    Opaque,
    Or,
    Param,
    Registration,
    Seq,
    Var,
    detection_to_xml,
    parse_expression,
    parse_markup,
    to_markup,
)

# Section 2.3's example verbatim, with the <literal> tags the extraction lost restored.
PAPER = """<expression operator="OR" language="http://snoop-r.org">
 <argument name="left">
  <solve>
   <expression operator="newBook"
   language="http://ecommerce.com">
    <with> <Variable name="X" mode="use">
             <literal>HTML in 21 days</literal>
          </Variable>
    </with>
    <having>
       <parameter name="title" bindVar="X"/>
   </having>
   </expression>
  </solve>
 </argument>
 <argument name="right"><solve>
  <expression language="http://languages.org/prolog">
   <literal>
   ?- newCD(ListOfCDs), member(cd(myCD),ListOfCDs).
   </literal>
   </expression></solve></argument>
</expression>"""


def shape(e: Expression) -> object:
    """An expression as nested tuples, opaque leaves by content (they compare by identity)."""
    if isinstance(e, Opaque):
        return ("opaque", e.language, e.text, e.binds)
    if isinstance(e, Atomic):
        return ("atomic", e.type, e.params, e.language)
    return (type(e).__name__, getattr(e, "n", None), tuple(shape(c) for c in e.children))


def test_the_papers_example() -> None:
    reg = parse_markup(PAPER)
    assert reg.inputs == {"X": "HTML in 21 days"}
    e = reg.expression
    assert isinstance(e, Or)
    book, prolog = e.operands
    assert book == Atomic("newBook", (Param("title", Var("X")),))
    assert isinstance(book, Atomic) and book.language == "http://ecommerce.com"
    assert isinstance(prolog, Opaque) and prolog.language == "http://languages.org/prolog"
    assert "member(cd(myCD),ListOfCDs)" in prolog.text
    engine = Engine(providers={"http://languages.org/prolog": lambda request: "eval-1"})
    ident = engine.register(reg)
    # the input filters like a literal: only that title takes it; X is not an output
    assert engine.signal("newBook", {"title": "Other"}) == []
    [d] = engine.signal("newBook", {"title": "HTML in 21 days"})
    assert (d.expression, dict(d.bindings)) == (ident, {})
    again = parse_markup(to_markup(reg))
    assert shape(again.expression) == shape(reg.expression) and again.inputs == reg.inputs


def test_text_and_markup_say_the_same() -> None:
    text = 'SEQ(newCD(title=T, artist="U2"), ANY(1, newMusicDVD(title=T, year=2006), x(b=true)))'
    reg = Registration(parse_expression(text))
    assert parse_markup(to_markup(reg)) == reg


names = st.sampled_from(["X", "Y", "T"])
xml_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\t\n "),
                   max_size=5)
values = st.one_of(xml_text,
                   st.integers(-5, 5), st.booleans())


def atomics() -> st.SearchStrategy[Expression]:
    term = st.one_of(names.map(Var), values.map(Literal))
    params = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), term), max_size=3,
                      unique_by=lambda p: p[0])
    return st.builds(lambda t, ps: Atomic(t, tuple(Param(n, v) for n, v in ps)),
                     st.sampled_from(["newCD", "ins(/order/item)", "e1"]), params)


def expressions() -> st.SearchStrategy[Expression]:
    def extend(children: st.SearchStrategy[Expression]) -> st.SearchStrategy[Expression]:
        kids = st.lists(children, min_size=2, max_size=3)
        return st.one_of(st.builds(lambda cs: Or(tuple(cs)), kids),
                         st.builds(lambda cs: Seq(cs[0], cs[1]), kids),
                         st.builds(lambda n, cs: Any(n, tuple(cs)), st.integers(1, 4), kids))
    return st.recursive(atomics(), extend, max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(expressions(), st.data())
def test_round_trip(e: Expression, data: st.DataObject) -> None:
    used = sorted(e.variables)
    given_inputs = data.draw(st.lists(st.sampled_from(used), unique=True)) if used else []
    inputs = {name: data.draw(values) for name in given_inputs}
    reg = Registration(e, inputs)
    assert parse_markup(to_markup(reg)) == reg


@pytest.mark.parametrize(("markup", "reason", "line"), [
    ("<expression operator='OR'", "not well-formed", 1),
    ("<expression operator='XOR' language='http://snoop-r.org'/>", None, None),
    ("<expression operator='or' language='http://snoop-r.org'/>", "unknown operator", 1),
    ("<expression operator='ANY' language='http://snoop-r.org'>\n<having><parameter name='n'>"
     "<literal>0</literal></parameter></having></expression>", "at least 1", 2),
    ("<expression operator='a'>\n<having><parameter name='x' bindVar='Z'/></having>"
     "</expression>", "not declared", 2),
    ("<expression operator='a'>\n<with><Variable name='Y' mode='bind'/></with>\n<having>"
     "<parameter name='x'><literal>1</literal></parameter></having></expression>",
     "no parameter of a binds it", 1),
    ("<expression operator='a'><with>\n<Variable name='Y' mode='use'/></with></expression>",
     "needs one <literal>", 2),
    ("<!DOCTYPE x [<!ENTITY e 'boom'>]><expression operator='a'/>", "DOCTYPE", 1),
    ("<expression operator='SEQ' language='http://snoop-r.org'>\n<argument><solve>"
     "<expression operator='a'/></solve></argument></expression>", "SEQ has 2", 1),
    ("<expression/>", "language", 1),
])
def test_bad_markup(markup: str, reason: str | None, line: int | None) -> None:
    if reason is None:  # another language's operator named like no SNOOP-R one: atomic
        assert isinstance(parse_markup(markup).expression, Atomic)
        return
    with pytest.raises(MarkupError, match=reason) as caught:
        parse_markup(markup)
    assert caught.value.line == line


def test_values_xml_cannot_carry_are_refused() -> None:
    with pytest.raises(MarkupError, match="XML cannot carry"):
        to_markup(Registration(parse_expression('a(x="\\u0001")')))


def test_result_markup() -> None:
    engine = Engine()
    engine.register('SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T))', ident="1")
    engine.signal("newCD", {"title": "Boy", "artist": "U2"}, time=10.5)
    [d] = engine.signal("newMusicDVD", {"title": "Boy"})
    xml = detection_to_xml(d)
    assert '<result expression="1" tick="2" next="1">' in xml
    assert '<Variable name="T" mode="bind">' in xml and "<literal>Boy</literal>" in xml
    assert '<event operator="newCD" id="s1" tick="1" time="10.5">' in xml
