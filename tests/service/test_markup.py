"""The R3-style markup of section 2.3: the paper's example, round trips, results, bad input."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples
from xmlevents.service import (
    SNOOP_R,
    Any,
    Atomic,
    Engine,
    Expression,
    Literal,
    MarkupError,
    Opaque,
    OpaqueRequest,
    Or,
    Param,
    Registration,
    Seq,
    Value,
    Var,
    detection_to_xml,
    parse_expression,
    parse_markup,
    to_markup,
)
from xmlevents.service._markup import parse_detection_xml

PROLOG = "http://languages.org/prolog"

# Section 2.3's example verbatim, with the <literal> tags the extraction lost restored: its
# "teral>" is "<literal>", and the opaque expression's "</literal>" (lost altogether) is put
# back before its "</expression>".
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
    """An expression as nested tuples, opaque leaves by content (they compare by identity)
    and atomic ones with their language (which ``==`` ignores)."""
    if isinstance(e, Opaque):
        return ("opaque", e.language, e.text, e.binds)
    if isinstance(e, Atomic):
        return ("atomic", e.type, e.params, e.language)
    return (type(e).__name__, getattr(e, "n", None), tuple(shape(c) for c in e.children))


def same(a: Registration, b: Registration) -> bool:
    return shape(a.expression) == shape(b.expression) and a.inputs == b.inputs


# -- the paper's example -------------------------------------------------------------------

def test_the_papers_example() -> None:
    reg = parse_markup(PAPER)
    code = "\n   ?- newCD(ListOfCDs), member(cd(myCD),ListOfCDs).\n   "
    expected = Registration(
        Or((Atomic("newBook", (Param("title", Var("X")),), language="http://ecommerce.com"),
            Opaque(PROLOG, code))),
        {"X": "HTML in 21 days"})
    assert same(reg, expected)
    assert reg.outputs == frozenset()  # X is an input: newBook's title must be that value
    # positions: each expression's start tag
    e = reg.expression
    assert isinstance(e, Or) and e.pos == (1, 1)
    assert [c.pos for c in e.operands if isinstance(c, Atomic | Opaque)] == [(4, 4), (17, 3)]
    # and it registers, given a provider for the opaque language
    asked: list[OpaqueRequest] = []

    def prolog(request: OpaqueRequest) -> str:
        asked.append(request)
        return "eval-1"

    engine = Engine(providers={PROLOG: prolog})
    ident = engine.register(reg)
    assert [(r.language, r.text, dict(r.inputs)) for r in asked] == [
        (PROLOG, code, {"X": "HTML in 21 days"})]
    assert engine.signal("newBook", {"title": "Other"}) == []
    [d] = engine.signal("newBook", {"title": "HTML in 21 days"})
    assert (d.expression, dict(d.bindings), d.next) == (ident, {}, ident)
    [d] = engine.report("eval-1", {})
    assert d.expression == ident
    # and round-trips
    assert same(parse_markup(to_markup(reg)), reg)


def test_the_papers_example_without_a_provider_is_refused_at_registration() -> None:
    with pytest.raises(Exception, match="no provider evaluates the opaque language"):
        Engine().register(parse_markup(PAPER))


# -- the text form and the markup say the same ------------------------------------------------

JOIN_MARKUP = """<expression operator="SEQ" language="http://snoop-r.org">
  <argument name="left"><solve>
    <expression operator="newCD">
      <with><Variable name="T" mode="bind"/></with>
      <having>
        <parameter name="title" bindVar="T"/>
        <parameter name="artist"><literal>U2</literal></parameter>
      </having>
    </expression>
  </solve></argument>
  <argument name="right"><solve>
    <expression operator="newMusicDVD">
      <with><Variable name="T" mode="bind"/></with>
      <having>
        <parameter name="title" bindVar="T"/>
        <parameter name="artist"><literal>U2</literal></parameter>
      </having>
    </expression>
  </solve></argument>
</expression>"""


def test_text_and_markup_give_equal_registrations() -> None:
    text = 'SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T, artist="U2"))'
    assert parse_markup(JOIN_MARKUP) == Registration(parse_expression(text))
    assert parse_markup(to_markup(Registration(parse_expression(text)))) == \
        parse_markup(JOIN_MARKUP)
    # both register as the same expression: the second shares every node of the first
    engine = Engine()
    a = engine.register(text)
    b = engine.register(parse_markup(JOIN_MARKUP))
    engine.signal("newCD", {"title": "Boy", "artist": "U2"})
    got = engine.signal("newMusicDVD", {"title": "Boy", "artist": "U2"})
    assert sorted((d.expression, dict(d.bindings)) for d in got) == [
        (a, {"T": "Boy"}), (b, {"T": "Boy"})]


def test_text_and_markup_with_inputs_numbers_booleans_and_any() -> None:
    text = ('ANY(2, newCD(title=T, artist=A), newMusicDVD(title=T, year=2006), '
            'x(b=true, f=1.5))')
    markup = """<expression operator="ANY" language="http://snoop-r.org">
      <having><parameter name="n"><literal>2</literal></parameter></having>
      <argument name="a"><solve><expression operator="newCD">
        <with><Variable name="T" mode="bind"/>
              <Variable name="A" mode="use"><literal>U2</literal></Variable></with>
        <having><parameter name="title" bindVar="T"/><parameter name="artist" bindVar="A"/>
        </having></expression></solve></argument>
      <argument name="b"><solve><expression operator="newMusicDVD">
        <with><Variable name="T" mode="bind"/></with>
        <having><parameter name="title" bindVar="T"/>
          <parameter name="year"><literal type="number">2006</literal></parameter></having>
      </expression></solve></argument>
      <argument name="c"><solve><expression operator="x"><having>
        <parameter name="b"><literal type="boolean">true</literal></parameter>
        <parameter name="f"><literal type="number">1.5</literal></parameter>
      </having></expression></solve></argument>
    </expression>"""
    assert parse_markup(markup) == Registration(parse_expression(text), {"A": "U2"})


# -- what the paper leaves open: the alternatives accepted ----------------------------------

def atom(name: str, var: str = "T") -> str:
    return (f'<expression operator="{name}"><with><Variable name="{var}" mode="bind"/></with>'
            f'<having><parameter name="p" bindVar="{var}"/></having></expression>')


def test_alternatives() -> None:
    a, b, c = atom("a"), atom("b"), atom("c")
    expected = Any(2, tuple(parse_expression(f"{x}(p=T)") for x in "abc"))
    # n as an attribute, arguments of any name without <solve>, no language
    alt = f'<expression operator="ANY" n="2"><argument>{a}</argument>' \
          f'<argument name="z">{b}</argument><argument name="y">{c}</argument></expression>'
    assert parse_markup(alt).expression == expected
    # ALL takes every argument; with an n it is ANY(n, ...)
    all3 = (f'<expression operator="ALL"><argument><solve>{a}</solve></argument>'
            f'<argument><solve>{b}</solve></argument></expression>')
    assert parse_markup(all3).expression == parse_expression("ALL(a(p=T), b(p=T))")
    # OR with three arguments, in document order
    or3 = (f'<expression operator="OR" language="{SNOOP_R}"><argument name="3"><solve>{c}'
           f'</solve></argument><argument name="1"><solve>{a}</solve></argument>'
           f'<argument name="2"><solve>{b}</solve></argument></expression>')
    assert parse_markup(or3).expression == parse_expression("OR(c(p=T), a(p=T), b(p=T))")
    # <variable> as well as <Variable>, namespaces ignored, comments and PIs dropped
    ns = ('<?xml version="1.0"?><!-- a comment --><r:expression xmlns:r="urn:r3" '
          'operator="a"><r:with><r:variable name="T" mode="bind"/></r:with><?pi x?>'
          '<r:having><r:parameter name="p" bindVar="T"/></r:having></r:expression>')
    assert parse_markup(ns).expression == parse_expression("a(p=T)")
    # bytes, in another encoding than UTF-8
    latin = ('<?xml version="1.0" encoding="ISO-8859-1"?><expression operator="a"><having>'
             '<parameter name="p"><literal>caf\u00e9</literal></parameter></having>'
             '</expression>').encode("latin-1")
    assert parse_markup(latin).expression == parse_expression('a(p="caf\u00e9")')


def test_declarations_in_a_composite_scope_its_arguments() -> None:
    # section 2.3 gives composite expressions "the variables declaration" too
    markup = f"""<expression operator="SEQ" language="{SNOOP_R}">
      <with><Variable name="T" mode="bind"/>
            <Variable name="A" mode="use"><literal>U2</literal></Variable></with>
      <argument><solve><expression operator="newCD"><having>
        <parameter name="title" bindVar="T"/><parameter name="artist" bindVar="A"/>
      </having></expression></solve></argument>
      <argument><solve><expression operator="newMusicDVD"><having>
        <parameter name="title" bindVar="T"/></having></expression></solve></argument>
    </expression>"""
    reg = parse_markup(markup)
    assert reg == Registration(
        parse_expression("SEQ(newCD(title=T, artist=A), newMusicDVD(title=T))"), {"A": "U2"})
    assert reg.outputs == {"T"}


def test_literals_are_kept_exactly() -> None:
    for value in ["  spaced  \n", "", "<&>\"'", "a\r\nb\rc", "\U0001f600", "]]>"]:
        reg = Registration(Atomic("a", (Param("p", Literal(value)),)))
        assert parse_markup(to_markup(reg)) == reg
    cdata = ('<expression operator="a"><having><parameter name="p"><literal>'
             '<![CDATA[x < y && <b/>]]></literal></parameter></having></expression>')
    assert parse_markup(cdata).expression == Atomic("a", (Param("p", Literal("x < y && <b/>")),))
    # an untyped literal is a string, whatever it looks like
    untyped = ('<expression operator="a"><having><parameter name="p"><literal>2006</literal>'
               '</parameter></having></expression>')
    assert parse_markup(untyped).expression == parse_expression('a(p="2006")')
    big = 12345678901234567890123
    reg = Registration(Atomic("a", (Param("p", Literal(big)), Param("q", Literal(-0.25)))))
    assert parse_markup(to_markup(reg)) == reg


# -- round trips -----------------------------------------------------------------------------

NAMES = ["X", "Y", "T", "Title_2"]
xml_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
                   | st.sampled_from("\t\n\r <>&\"']"), max_size=6)
values: st.SearchStrategy[Value] = st.one_of(
    xml_text, st.integers(-10**20, 10**20), st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False))
languages = st.one_of(st.none(), st.sampled_from(["http://ecommerce.com", "urn:x?a=1&b=<2>"]))


def atomics() -> st.SearchStrategy[Expression]:
    term = st.one_of(st.sampled_from(NAMES).map(Var), values.map(Literal))
    params = st.lists(st.tuples(st.sampled_from(["title", "artist", "n", "p.q"]), term),
                      max_size=3, unique_by=lambda p: p[0])
    return st.builds(lambda t, ps, lang: Atomic(t, tuple(Param(n, v) for n, v in ps),
                                                language=lang),
                     st.sampled_from(["newCD", "ins(/order/item)", "e1", "ItemComplete"]),
                     params, languages)


def opaques() -> st.SearchStrategy[Expression]:
    binds = st.lists(st.sampled_from(["L", "M"]), unique=True, max_size=2)
    return st.builds(lambda lang, text, bs: Opaque(lang, text, tuple(bs)),
                     st.sampled_from([PROLOG, "urn:java"]), xml_text, binds)


def expressions() -> st.SearchStrategy[Expression]:
    def extend(children: st.SearchStrategy[Expression]) -> st.SearchStrategy[Expression]:
        kids = st.lists(children, min_size=1, max_size=4)
        return st.one_of(st.builds(lambda cs: Or(tuple(cs)), kids.filter(lambda k: len(k) > 1)),
                         st.builds(lambda cs: Seq(cs[0], cs[-1]),
                                   kids.filter(lambda k: len(k) > 1)),
                         st.builds(lambda n, cs: Any(n, tuple(cs)), st.integers(1, 5), kids))
    return st.recursive(st.one_of(atomics(), atomics(), opaques()), extend, max_leaves=8)


@settings(max_examples=examples(300), deadline=None)
@given(expressions(), st.data())
def test_round_trip(e: Expression, data: st.DataObject) -> None:
    outputs_of_opaques = {b for node in e.walk() if isinstance(node, Opaque) for b in node.binds}
    candidates = sorted(e.variables - outputs_of_opaques) + ["Unused"]
    names = data.draw(st.lists(st.sampled_from(candidates), unique=True))
    reg = Registration(e, {name: data.draw(values) for name in names})
    markup = to_markup(reg)
    back = parse_markup(markup)
    if not any(isinstance(node, Opaque) for node in e.walk()):
        assert back == reg  # opaque leaves compare by identity: by shape below
    assert same(back, reg)
    assert all(type(back.inputs[k]) is type(v) for k, v in reg.inputs.items())
    assert to_markup(back) == markup


def test_any_is_written_as_all_when_it_takes_every_argument() -> None:
    reg = Registration(parse_expression("ANY(3, a, b)"))
    markup = to_markup(reg)
    assert 'operator="ALL"' in markup and "<having>" in markup
    assert parse_markup(markup) == reg
    markup = to_markup(Registration(parse_expression("ANY(2, a, b)")))
    assert 'operator="ALL"' in markup and "<having>" not in markup


# -- results ---------------------------------------------------------------------------------

def test_result_markup_round_trips() -> None:
    engine = Engine()
    engine.register('SEQ(newCD(title=T, artist="U2"), newMusicDVD(title=T))', ident="1")
    engine.signal("newCD", {"title": "Boy", "artist": "U2", "year": 1980, "live": False},
                  time=10.5)
    [d] = engine.signal("newMusicDVD", {"title": "Boy"})
    xml = detection_to_xml(d)
    assert xml.startswith('<result expression="1" next="1" tick="2">')
    assert '<Variable name="T" mode="bind">' in xml and "<literal>Boy</literal>" in xml
    assert '<expression operator="newCD" id="s1" tick="1" time="10.5">' in xml
    assert '<literal type="number">1980</literal>' in xml
    assert parse_detection_xml(xml) == d
    assert parse_detection_xml(xml.encode()) == d


def test_the_papers_or_result() -> None:
    # section 3.3: A = OR(newCD(CDT, "U2"), newBook(BT, "Dan Brown")) registered with ID=1;
    # newCD("Boy", "U2") gives the bindings [<CDT, "Boy">], one event, next id 1
    engine = Engine()
    engine.register('OR(newCD(title=CDT, artist="U2"), newBook(title=BT, author="Dan Brown"))',
                    ident="1")
    [d] = engine.signal("newCD", {"title": "Boy", "artist": "U2"})
    back = parse_detection_xml(detection_to_xml(d))
    assert (dict(back.bindings), [s.type for s in back.events], back.next) == (
        {"CDT": "Boy"}, ["newCD"], "1")


def test_the_empty_result_has_no_next() -> None:
    engine = Engine(providers={PROLOG: lambda request: "eval-1"})
    engine.register(Registration(Opaque(PROLOG, "?- x.")), ident="1")
    [d] = engine.fail("eval-1")
    xml = detection_to_xml(d)
    assert xml == '<result expression="1" tick="0">\n  <bindings/>\n  <events/>\n</result>'
    assert parse_detection_xml(xml) == d and d.next is None


@pytest.mark.parametrize(("markup", "reason"), [
    ("<results expression='1' tick='1'/>", "expected <result"),
    ("<result expression='1' tick='x'/>", "tick must be an integer"),
    ("<result expression='1' tick='1'><other/></result>", "unknown element <other>"),
    ("<result expression='1' tick='1'><events><expression operator='a' tick='1' time='soon'/>"
     "</events></result>", "time must be a number"),
])
def test_bad_result_markup(markup: str, reason: str) -> None:
    with pytest.raises(MarkupError, match=reason):
        parse_detection_xml(markup)


# -- bad input -------------------------------------------------------------------------------

S = f"language='{SNOOP_R}'"
BAD = [
    # malformed XML: the position libxml2 gives, in characters
    ("<expression operator='OR'", "not well-formed", 1, 26),
    ("<expression operator='a'>\n  <having></expression>", "not well-formed", 2, 24),
    ("<expression operator='a'><having><parameter name='p'><literal>\u00e9\u00e9</literal>"
     "</parameter></havin></expression>", "not well-formed", 1, 93),
    ("", "not well-formed", 1, 1),
    ("<expression operator='a'>&ext;</expression>", "not well-formed", 1, 31),
    # unknown elements and operators, saying which are allowed
    ("<expr operator='a'/>", "unknown element <expr>: expected <expression>", 1, 1),
    (f"<expression operator='XOR' {S}/>", "unknown operator 'XOR': SNOOP-R's operators are OR,"
     " SEQ, ANY, ALL", 1, 1),
    ("<expression operator='or'/>", "unknown operator 'or'", 1, 1),
    ("<expression operator='OR' language='http://ecommerce.com'/>",
     "OR is a SNOOP-R operator", 1, 1),
    (f"<expression operator='OR' {S}>\n  <arg/></expression>",
     "unknown element <arg> in OR: it holds <with> and <argument> elements", 2, 3),
    ("<expression operator='a'>\n <with/> <params/></expression>",
     "unknown element <params> in atomic expression a: it holds <with> and <having>", 2, 10),
    ("<expression operator='a'><with>\n <Var name='T' mode='bind'/></with></expression>",
     "<with> holds <Variable> elements, got <Var>", 2, 2),
    ("<expression operator='a'><having>\n <param name='p'/></having></expression>",
     "<having> holds <parameter name=...> elements", 2, 2),
    ("<expression language='urn:j'><with/>\n <code>x</code></expression>",
     "unknown element <code> in an opaque expression", 2, 2),
    ("<expression operator='a'>\n  stray text<having/></expression>", "unexpected text", 1, 1),
    (f"<expression operator='SEQ' {S}>\n<argument><solve/></argument>"
     "<argument/></expression>", "a <solve> holds one <expression>", 2, 11),
    ("<expression/>", "needs an operator", 1, 1),
    # arguments and n
    (f"<expression operator='SEQ' {S}>\n<argument><solve><expression operator='a'/></solve>"
     "</argument></expression>", "SEQ has 2 arguments", 1, 1),
    (f"<expression operator='OR' {S}>\n<argument><solve><expression operator='a'/></solve>"
     "</argument></expression>", "OR needs at least 2 arguments, got 1", 1, 1),
    (f"<expression operator='ANY' {S}>\n  <having><parameter name='n'><literal>0</literal>"
     "</parameter></having></expression>", "ANY's n must be at least 1, got 0", 2, 11),
    ("<expression operator='ANY' n='-1'/>", "ANY's n must be at least 1, got -1", 1, 1),
    (f"<expression operator='ANY' {S}>\n  <having><parameter name='n'><literal>two</literal>"
     "</parameter></having></expression>", "ANY's n must be an integer", 2, 11),
    ("<expression operator='ANY'>\n <argument><solve><expression operator='a'/></solve>"
     "</argument></expression>", "ANY needs its n", 1, 1),
    ("<expression operator='ANY'>\n <having><parameter name='m'><literal>1</literal>"
     "</parameter></having></expression>", "ANY has one parameter", 2, 10),
    ("<expression operator='OR'>\n <having/></expression>", "OR has no parameters", 2, 2),
    # variables
    ("<expression operator='a'>\n<having>\n  <parameter name='x' bindVar='Z'/></having>"
     "</expression>", "bindVar Z is not declared", 3, 3),
    ("<expression operator='a'>\n<with><Variable name='Y' mode='bind'/></with>\n<having>"
     "<parameter name='x'><literal>1</literal></parameter></having></expression>",
     "output variable Y is declared 'bind' but no parameter of a binds it", 1, 1),
    (f"<expression operator='OR' {S}>\n <with><Variable name='Y' mode='bind'/></with>"
     f"<argument>{atom('a')}</argument><argument>{atom('b')}</argument></expression>",
     "output variable Y is declared 'bind' in OR but no expression in it binds it", 1, 1),
    ("<expression operator='a'><with>\n  <Variable name='Y' mode='use'/></with></expression>",
     "<Variable name=\"Y\"> needs one <literal>", 2, 3),
    ("<expression operator='a'><with>\n  <Variable name='Y' mode='use'>U2</Variable></with>"
     "</expression>", "unexpected text 'U2' in <Variable>", 2, 3),
    ("<expression operator='a'><with>\n  <Variable name='Y' mode='out'/></with></expression>",
     "mode is 'use'", 2, 3),
    ("<expression operator='a'><with>\n  <Variable mode='bind'/></with></expression>",
     "needs a name", 2, 3),
    ("<expression operator='a'><with>\n  <Variable name='1x' mode='bind'/></with>"
     "</expression>", "is not a name", 2, 3),
    ("<expression operator='a'><with><Variable name='Y' mode='bind'/>\n"
     "  <Variable name='Y' mode='bind'/></with></expression>", "declared twice", 2, 3),
    ("<expression operator='a'><with>\n  <Variable name='Y' mode='bind'><literal>v</literal>"
     "</Variable></with></expression>", "has no value", 2, 3),
    (f"<expression operator='SEQ' {S}><argument><solve><expression operator='a'><with>"
     "<Variable name='Y' mode='use'><literal>U2</literal></Variable></with><having>"
     "<parameter name='p' bindVar='Y'/></having></expression></solve></argument>\n"
     "<argument><solve><expression operator='b'><with><Variable name='Y' mode='use'>"
     "<literal>REM</literal></Variable></with><having><parameter name='p' bindVar='Y'/>"
     "</having></expression></solve></argument></expression>",
     "variable Y is given two values: 'U2' and 'REM'", 2, 49),
    (f"<expression operator='SEQ' {S}><argument><solve><expression operator='a'><with>"
     "<Variable name='Y' mode='use'><literal>U2</literal></Variable></with><having>"
     "<parameter name='p' bindVar='Y'/></having></expression></solve></argument>\n"
     "<argument><solve><expression operator='b'><with><Variable name='Y' mode='bind'/></with>"
     "<having><parameter name='p' bindVar='Y'/></having></expression></solve></argument>"
     "</expression>", "variable Y is declared 'bind' here and 'use' at line 1, col 106", 2, 49),
    # a bindVar sees the declarations of its own expression and those around it only
    (f"<expression operator='SEQ' {S}><argument>{atom('a', 'T')}</argument><argument><solve>"
     "<expression operator='b'>\n<having><parameter name='p' bindVar='T'/></having>"
     "</expression></solve></argument></expression>", "bindVar T is not declared", 2, 9),
    # parameters and literals
    ("<expression operator='a'><having><parameter name='p'><literal>1</literal></parameter>\n"
     "  <parameter name='p'><literal>1</literal></parameter></having></expression>",
     "parameter p of a is given twice", 2, 3),
    ("<expression operator='a'><having>\n  <parameter name='p'/></having></expression>",
     "<parameter name=\"p\"> needs one <literal>", 2, 3),
    ("<expression operator='a'><having><parameter name='p'>\n  <literal type='number'>1x"
     "</literal></parameter></having></expression>", "not a number", 2, 3),
    ("<expression operator='a'><having><parameter name='p'>\n  <literal type='number'>1e999"
     "</literal></parameter></having></expression>", "not a finite number", 2, 3),
    ("<expression operator='a'><having><parameter name='p'>\n  <literal type='date'>1"
     "</literal></parameter></having></expression>", "a literal's type is string", 2, 3),
    ("<expression operator='a'><having><parameter name='p'><literal>\n  x<b/></literal>"
     "</parameter></having></expression>", "holds text only", 2, 4),
    ("<expression language='urn:j'>\n<literal>a</literal><literal>b</literal></expression>",
     "one <literal>, got 2", 2, 21),
    ("<expression operator='a b'/>", "is not a name", 1, 1),
    # hardening: no DOCTYPE, no entity, nothing read from files or the network
    ("<!DOCTYPE x [<!ENTITY e 'boom'>]>\n<expression operator='a'/>", "DOCTYPE", 1, 1),
    ("<?xml version='1.0'?>\n<!DOCTYPE x SYSTEM 'http://127.0.0.1:9/x.dtd'>"
     "<expression operator='a'/>", "DOCTYPE", 2, 1),
    ("<!DOCTYPE x SYSTEM '/etc/passwd'><expression operator='a'/>", "DOCTYPE", 1, 1),
    ("<!DOCTYPE x [<!ENTITY % e SYSTEM 'file:///etc/passwd'> %e;]><expression operator='a'/>",
     "DOCTYPE", 1, 1),
    ("<!DOCTYPE x [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><expression operator='a'>"
     "<having><parameter name='p'><literal>&e;</literal></parameter></having></expression>",
     "DOCTYPE", 1, 1),
]


@pytest.mark.parametrize(("markup", "reason", "line", "col"), BAD)
def test_bad_markup(markup: str, reason: str, line: int, col: int) -> None:
    with pytest.raises(MarkupError) as caught:
        parse_markup(markup)
    assert reason in caught.value.reason
    assert (caught.value.line, caught.value.column) == (line, col), str(caught.value)


def test_a_billion_laughs_is_refused_without_expanding() -> None:
    laughs = "<!DOCTYPE x [<!ENTITY a 'ha'>" + "".join(
        f"<!ENTITY {chr(98 + i)} '{('&' + chr(97 + i) + ';') * 10}'>" for i in range(9)) + \
        "]><expression operator='a'><having><parameter name='p'><literal>&j;</literal>" \
        "</parameter></having></expression>"
    with pytest.raises(MarkupError, match="DOCTYPE"):
        parse_markup(laughs)


def test_too_deep_and_too_big() -> None:
    deep = "<expression operator='a'/>"
    for _ in range(130):
        deep = (f"<expression operator='SEQ'><argument>{deep}</argument><argument>"
                "<expression operator='b'/></argument></expression>")
    with pytest.raises(MarkupError, match="nested deeper than 256 elements"):
        parse_markup(deep)
    with pytest.raises(MarkupError, match="over"):
        parse_markup(b" " * (10 * 1024 * 1024 + 1))


def test_errors_show_the_line_with_a_caret() -> None:
    with pytest.raises(MarkupError) as caught:
        parse_markup("<expression operator='OR' language='http://snoop-r.org'>\n"
                     "  <argument><solve><expression operator='a'/></solve></argument>\n"
                     "  <argument><solve><expression operator='ANY' n='0'/></solve></argument>\n"
                     "</expression>")
    assert str(caught.value).splitlines() == [
        "line 3, col 20: ANY's n must be at least 1, got 0",
        "    <argument><solve><expression operator='ANY' n='0'/></solve></argument>",
        "                     ^"]


def test_values_xml_cannot_carry_are_refused() -> None:
    with pytest.raises(MarkupError, match="XML cannot carry"):
        to_markup(Registration(parse_expression('a(x="\\u0001")')))
    with pytest.raises(MarkupError, match="output of an opaque expression"):
        to_markup(Registration(Or((Opaque(PROLOG, "x", ("L",)), parse_expression("a(p=L)"))),
                               {"L": 1}))


@settings(max_examples=examples(300), deadline=None)
@given(expressions(), st.data())
def test_damaged_markup_fails_only_with_markup_error(e: Expression, data: st.DataObject) -> None:
    markup = to_markup(Registration(e))
    at = data.draw(st.integers(0, len(markup)))
    cut = data.draw(st.integers(0, 12))
    insert = data.draw(st.sampled_from(["", "<", ">", "/", "x", "'", "\"", "<with>", "</solve>",
                                        "<literal>", "&amp;", "&x;", "<!--", "]]>", "\u00e9"]))
    damaged = markup[:at] + insert + markup[at + cut:]
    try:
        parse_markup(damaged)
    except MarkupError as exc:
        assert exc.line is not None and exc.column is not None and exc.line >= 1 and exc.column >= 1
        assert exc.line <= damaged.count("\n") + 1


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.text(max_size=60), st.binary(max_size=60)))
def test_any_input_fails_only_with_markup_error(text: str | bytes) -> None:
    with contextlib.suppress(MarkupError):
        parse_markup(text)
