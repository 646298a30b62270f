"""The expression language (DESIGN section 3): tokens, parsing, printing and error positions."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xmlevents._foundation.names import NAME_CHAR, NAME_START_CHAR
from xmlevents.algebra import ast
from xmlevents.algebra._errors import ExpressionSyntaxError
from xmlevents.algebra._events import CompositeEventType, Op, PrimitiveEventType
from xmlevents.algebra._parser import (
    MAX_DEPTH,
    parse,
    parse_definition,
    parse_definitions,
    parse_event_type,
)
from xmlevents.algebra._paths import Axis, Kind, PathType, Step
from xmlevents.algebra._tokens import TokenType, tokenize
from xmlevents.algebra.ast import (
    AnyOf,
    Conj,
    Disj,
    Mode,
    Mult,
    Not,
    Primitive,
    Ref,
    Seq,
    any_op,
    ins,
    ref,
)

FIXTURES = Path(__file__).parent / "fixtures"
IDENTITY = [line for line in (FIXTURES / "identity.txt").read_text(encoding="utf-8").splitlines()
            if line.strip()]

P = PathType.parse


# --- golden fixtures -------------------------------------------------------------------------

@pytest.mark.parametrize("line", IDENTITY, ids=IDENTITY)
def test_identity(line: str) -> None:
    """Each fixture line prints back exactly as written after parsing."""
    assert str(parse(line)) == line


#: Titled input/expected pairs: text that parses but prints in the canonical form.
NORMALISED = [
    ("seq synonym", "seq(ins(a), ins(b))", "ins(a) ; ins(b)"),
    ("and synonym", "and(ins(a), ins(b), ins(c))", "ins(a) & ins(b) & ins(c)"),
    ("or synonym", "or(ins(a), ins(b))", "ins(a) | ins(b)"),
    ("nested synonyms", "or(ins(a), and(ins(b), ins(c)))", "ins(a) | ins(b) & ins(c)"),
    ("synonym inside synonym", "and(and(ins(a), ins(b)), ins(c))", "(ins(a) & ins(b)) & ins(c)"),
    ("synonym with a looser argument", "and(ins(a) | ins(b), ins(c))",
     "(ins(a) | ins(b)) & ins(c)"),
    ("synonym with modifiers", "seq(ins(a), ins(b)) with mode=custom",
     "ins(a) ; ins(b) with mode=custom"),
    ("redundant parentheses", "((ins(a))) & (Ei)", "ins(a) & Ei"),
    ("parenthesised with-node", "(ins(a) & ins(b)) with at=x", "ins(a) & ins(b) with at=x"),
    ("spacing", "  [ 1 , * ]ins( a/b )&upd(c)  ", "[1,*] ins(a/b) & upd(c)"),
    ("text() with a space", "ins(a/text( ))", "ins(a/text())"),
    ("chained with clauses merge", "(ins(a) & ins(b)) with mode=custom with context=recent",
     "ins(a) & ins(b) with mode=custom, context=recent"),
    ("canonical modifier order", "ins(a) | ins(b) with hierarchical=true, at=/o, mode=earliest",
     "ins(a) | ins(b) with mode=earliest, at=/o, hierarchical=true"),
    ("single-quoted string", "ins(a) & ins(b) with when='it\\'s \"x\"'",
     "ins(a) & ins(b) with when=\"it's \\\"x\\\"\""),
    ("json escapes", 'ins(a) & ins(b) with when="\\u00e9\\/\\ud83d\\ude00"',
     'ins(a) & ins(b) with when="é/\U0001F600"'),
    ("continuation lines", "ins(a) &\n  ins(b) with\n mode=custom,\n context=recent\n",
     "ins(a) & ins(b) with mode=custom, context=recent"),
    ("newlines inside brackets", "(ins(a)\n & ins(b)\n)", "ins(a) & ins(b)"),
    ("comment", "ins(a) # the item\n", "ins(a)"),
    ("empty Clark namespace", "ins({}item)", "ins(item)"),
    ("xml prefix", "upd(item/@xml:lang)",
     "upd(item/@{http://www.w3.org/XML/1998/namespace}lang)"),
]


@pytest.mark.parametrize("title, text, expected", NORMALISED, ids=[t for t, _, _ in NORMALISED])
def test_normalised(title: str, text: str, expected: str) -> None:
    """Synonyms, spacing, comments and redundant syntax print in the canonical form."""
    assert str(parse(text)) == expected
    assert parse(expected) == parse(text)


def test_namespace_prefixes_resolve_to_clark_names() -> None:
    """``prefix:name`` steps, also in ``at=``, are resolved through the namespaces mapping."""
    ns = {"po": "urn:po"}
    expr = parse("ins(po:order/po:item) & upd(po:item/@po:id) with at=po:order", ns)
    assert str(expr) == ("ins({urn:po}order/{urn:po}item) & upd({urn:po}item/@{urn:po}id) "
                         "with at={urn:po}order")
    assert parse_definition("Ei := ins(po:item)", ns).expr == ins("{urn:po}item")
    assert parse_event_type("Ei(po:item)", ns) == CompositeEventType("Ei", P("{urn:po}item"))


# --- the paper's expressions (seed 000, Examples 10-18, Figures 1, 3, 4) ---------------------

def _defs(text: str) -> dict[str, ast.Expr]:
    return {d.name: d.expr for d in parse_definitions(text)}


def test_example_10_figure_1() -> None:
    """Example 10: a sequence whose second child is a conjunction, written out or abbreviated."""
    full = _defs("Ei := ins(item) ; (ins(item/price) & ins(item/quantity))")["Ei"]
    assert full == Seq((ins("item"), Conj((ins("item/price"), ins("item/quantity")))))
    defs = _defs("Ei := ins(item)\nEp := ins(item/price)\nEq := ins(item/quantity)\n"
                 "Ec := Ei ; (Ep & Eq)\n")
    assert list(defs) == ["Ei", "Ep", "Eq", "Ec"]
    assert defs["Ec"] == Seq((Ref("Ei"), Conj((Ref("Ep"), Ref("Eq")))))
    assert defs["Ep"] == Primitive(Op.INS, P("item/price"))


def test_example_12() -> None:
    """Example 12: the wildcard operation and an update in one conjunction."""
    expr = parse("*(item/quantity) & upd(item/price)")
    assert expr == Conj((Primitive(Op.ANY, P("item/quantity")), Primitive(Op.UPD, P("item/price"))))


def test_example_13() -> None:
    """Example 13: references with path types under a conjunction with an explicit path type."""
    expr = _defs("Eo := (Ei(item) & Es(shipTo) & Eb(billTo)) with at=order")["Eo"]
    assert isinstance(expr, Conj) and len(expr.children) == 3
    assert expr.children == (ref("Ei", "item"), ref("Es", "shipTo"), ref("Eb", "billTo"))
    assert expr.mods.at == P("order") and expr.mods.mode is None


def test_example_14_figure_3() -> None:
    """Example 14: one address definition reused along two longer path types."""
    defs = _defs("Ea := ins(address) ; (ins(address/street) & ins(address/city))\n"
                 "Es := ins(shipTo) ; Ea(shipTo/address)\n"
                 "Eb := ins(billTo) ; Ea(billTo/address)")
    assert defs["Ea"] == Seq((ins("address"),
                              Conj((ins("address/street"), ins("address/city")))))
    assert defs["Es"] == Seq((ins("shipTo"), Ref("Ea", P("shipTo/address"))))
    assert defs["Eb"] == Seq((ins("billTo"), Ref("Ea", P("billTo/address"))))


def test_examples_15_to_17_figure_4() -> None:
    """Examples 15-17: multiplicity operators, a three-way conjunction and termination modes."""
    defs = _defs("Eq := [1,*] ins(item/quantity)\nEc := [0,1] ins(item/comment)\n"
                 "Eh := ins(item/price) & Eq & Ec\nEi := ins(item) ; Eh")
    assert defs["Eq"] == Mult(1, None, ins("item/quantity"))
    assert defs["Ec"] == Mult(0, 1, ins("item/comment"))
    eh = defs["Eh"]
    assert isinstance(eh, Conj) and eh.children == (ins("item/price"), Ref("Eq"), Ref("Ec"))
    assert defs["Ei"] == Seq((ins("item"), Ref("Eh")))

    modes = _defs("Eh := (ins(item/price) & Eq & Ec) with mode=non-local\n"
                  "Eq := [1,*] ins(item/quantity) with mode=non-local\n"
                  "Ec := [0,1] ins(item/comment) with mode=custom")
    assert modes["Eh"] == Conj(eh.children, ast.Modifiers(mode=Mode.NON_LOCAL))
    assert modes["Eq"] == Mult(1, None, ins("item/quantity"), ast.Modifiers(mode=Mode.NON_LOCAL))
    assert modes["Ec"].mods.mode is Mode.CUSTOM  # type: ignore[attr-defined]


def test_example_18() -> None:
    """Example 18: a termination condition on the inner conjunction only."""
    expr = _defs('Ei := ins(item) ; ((ins(item/price) & ins(item/quantity)) '
                 'with when="price >= 0 and quantity > 0")')["Ei"]
    assert isinstance(expr, Seq) and not expr.mods
    inner = expr.children[1]
    assert isinstance(inner, Conj) and inner.mods.when == "price >= 0 and quantity > 0"
    assert inner.children == (ins("item/price"), ins("item/quantity"))


DESIGN_BLOCK = """\
Ei := ins(item) ; (ins(item/price) & ins(item/quantity))
Eh := *(item/quantity) & upd(item/price)
Eq := [1,*] ins(item/quantity)
Ec := [0,1] ins(item/comment)
Ex := ins(item) ; ((ins(item/price) & Eq & Ec) with mode=non-local, when="price >= 0 and quantity > 0")
Eo := (Ei(item) & Es(shipTo) & Eb(billTo)) with at=order
"""  # noqa: E501


def test_design_block() -> None:
    """The six example lines of DESIGN section 3 parse as one definitions text."""
    definitions = parse_definitions(DESIGN_BLOCK)
    assert [d.name for d in definitions] == ["Ei", "Eh", "Eq", "Ec", "Ex", "Eo"]
    assert [d.pos for d in definitions] == [(i, 1) for i in range(1, 7)]
    assert all(d.source == DESIGN_BLOCK for d in definitions)
    ex = definitions[4].expr
    assert isinstance(ex, Seq)
    inner = ex.children[1]
    assert isinstance(inner, Conj) and len(inner.children) == 3
    assert inner.mods == ast.Modifiers(mode=Mode.NON_LOCAL, when="price >= 0 and quantity > 0")
    for d in definitions:
        assert parse_definition(str(d)) == d


# --- builders and Python operators -----------------------------------------------------------

def test_builders_equal_text() -> None:
    """Builders and the operators &, | and >> give the same trees as the text."""
    assert (ins("item") >> (ins("item/price") & ins("item/quantity"))
            == parse("ins(item) ; (ins(item/price) & ins(item/quantity))"))
    a, b, c = ins("a"), ins("b"), ins("c")
    assert a & b & c == parse("ins(a) & ins(b) & ins(c)")
    assert len((a & b & c).children) == 3
    assert (a | b) | c == parse("ins(a) | ins(b) | ins(c)")
    assert a >> b >> c == parse("ins(a) ; ins(b) ; ins(c)")
    assert ast.conj(ast.conj(a, b), c) == parse("(ins(a) & ins(b)) & ins(c)")
    assert "ins(a)" & b == parse("ins(a) & ins(b)")
    assert ast.conj("ins(a)", "ins(b)", mode="non-local") == parse(
        "ins(a) & ins(b) with mode=non-local")
    assert ast.mult(1, None, "ins(item/quantity)") == parse("[1,*] ins(item/quantity)")
    assert ast.any_of(2, a, b, c, context="recent") == parse(
        "any(2, ins(a), ins(b), ins(c)) with context=recent")
    assert ast.not_(a, "upd(b)", ast.dele("c")) == parse("not(ins(a), upd(b), del(c))")
    assert ast.disj(any_op("x"), ast.wildcard("y"), ref("E", "z"), ref("F")) == parse(
        "*(x) | %(y) | E(z) | F")
    assert ast.seq(a, b, at="/o", hierarchical=False) == parse(
        "ins(a) ; ins(b) with at=/o, hierarchical=false")


def test_builder_with_bad_text_raises_syntax_error() -> None:
    """A builder given bad text reports the parser's error."""
    with pytest.raises(ExpressionSyntaxError):
        ast.conj("ins(a", "ins(b)")


# --- positions -------------------------------------------------------------------------------

def test_positions() -> None:
    """Nodes carry the position of their first operator, keyword, '[' or first token."""
    expr = parse("ins(a) & ins(b) & [1,*] any(1, %(c))\n")
    assert isinstance(expr, Conj)
    assert expr.pos == (1, 8)
    assert [c.pos for c in expr.children] == [(1, 1), (1, 10), (1, 19)]
    mult = expr.children[2]
    assert isinstance(mult, Mult) and mult.child.pos == (1, 25)
    assert isinstance(mult.child, AnyOf) and mult.child.children[0].pos == (1, 32)
    inner = parse("(\n  x ; y)").pos
    assert inner == (2, 5)
    defs = parse_definitions("# header\n\n  Ea := ins(a)\nEb := not(Ea, x, y) with mode=custom")
    assert [d.pos for d in defs] == [(3, 3), (4, 1)]
    assert defs[1].expr.pos == (4, 7)


# --- tokens ----------------------------------------------------------------------------------

def _types(text: str) -> list[str]:
    return [t.kind.name for t in tokenize(text)]


def test_token_fields() -> None:
    """Tokens carry their text, 1-based line and column, and offsets."""
    tokens = tokenize("Ei := ins(item)\n  Ej")
    assert [(t.kind, t.text, t.line, t.column, t.start, t.end) for t in tokens] == [
        (TokenType.NAME, "Ei", 1, 1, 0, 2),
        (TokenType.ASSIGN, ":=", 1, 4, 3, 5),
        (TokenType.NAME, "ins", 1, 7, 6, 9),
        (TokenType.LPAREN, "(", 1, 10, 9, 10),
        (TokenType.NAME, "item", 1, 11, 10, 14),
        (TokenType.RPAREN, ")", 1, 15, 14, 15),
        (TokenType.NEWLINE, "\n", 1, 16, 15, 16),
        (TokenType.NAME, "Ej", 2, 3, 18, 20),
        (TokenType.EOF, "", 2, 5, 20, 20),
    ]


@pytest.mark.parametrize("text, kind", [
    ("item", "NAME"), ("non-local", "NAME"), ("a.b_c-1", "NAME"), ("with", "NAME"),
    ("item/price", "PATH"), ("/order", "PATH"), ("@id", "PATH"), ("{http://x.org/ns}item", "PATH"),
    ("po:item", "PATH"), ("text()", "PATH"), ("a/text( )", "PATH"), ("{u#v w}a/@b", "PATH"),
])
def test_name_or_path(text: str, kind: str) -> None:
    """A plain NCName is a NAME; anything with '/', '@', '{uri}', 'p:' or text() is a PATH."""
    tokens = tokenize(text)
    assert [(t.kind.name, t.text) for t in tokens[:-1]] == [(kind, text)]


def test_assign_is_not_a_prefix() -> None:
    """The ':' of ':=' never joins the name before it into a prefixed path."""
    assert _types("Ei:=x") == ["NAME", "ASSIGN", "NAME", "EOF"]
    assert _types("a=b") == ["NAME", "EQ", "NAME", "EOF"]


def test_punctuation_and_numbers() -> None:
    """Every punctuation token and numbers are recognised."""
    assert _types("[12,*] % & | ; ( ) =") == [
        "LBRACK", "NUMBER", "COMMA", "STAR", "RBRACK", "PERCENT", "AMP", "PIPE", "SEMI",
        "LPAREN", "RPAREN", "EQ", "EOF"]


def test_newlines() -> None:
    """NEWLINE separates lines at depth 0 only, collapses, and is dropped after operators."""
    assert _types("\n\n a\n\n\n b \n") == ["NAME", "NEWLINE", "NAME", "NEWLINE", "EOF"]
    assert _types("a &\n b |\n c ;\n d") == ["NAME", "AMP", "NAME", "PIPE", "NAME", "SEMI",
                                            "NAME", "EOF"]
    assert _types("x :=\n a with\n k =\n v,\n k2=v") == [
        "NAME", "ASSIGN", "NAME", "NAME", "NAME", "EQ", "NAME", "COMMA", "NAME", "EQ", "NAME",
        "EOF"]
    assert _types("(a\n)\n[\n1,2]") == ["LPAREN", "NAME", "RPAREN", "NEWLINE", "LBRACK",
                                          "NUMBER", "COMMA", "NUMBER", "RBRACK", "EOF"]
    assert _types("a\r\nb\rc") == ["NAME", "NEWLINE", "NAME", "NEWLINE", "NAME", "EOF"]


def test_comments() -> None:
    """'#' starts a comment to the end of the line, except inside strings and {uri}."""
    assert _types("# only a comment") == ["EOF"]
    assert _types("a # c & d\nb") == ["NAME", "NEWLINE", "NAME", "EOF"]
    tokens = tokenize('"# not" {u#1}x')
    assert [t.text for t in tokens] == ["# not", "{u#1}x", ""]


def test_strings() -> None:
    """Strings take either quote and the printer's JSON escapes; the token text is the value."""
    tokens = tokenize(r'''"a\"b\\c\nd\te\u00e9\/" 'it\'s "x"' ""''')
    assert [t.text for t in tokens if t.kind is TokenType.STRING] == [
        'a"b\\c\nd\teé/', 'it\'s "x"', ""]
    assert (tokens[0].start, tokens[0].end) == (0, 23)
    multi = tokenize('"line\none" x')
    assert multi[1].line == 2 and multi[1].column == 6


# --- properties ------------------------------------------------------------------------------

# XML names (issue 28: the one pattern of xmlevents._foundation.names), short: ASCII and a
# few characters of each kind beyond it (hypothesis' from_regex on the whole classes spent
# 90 s here; tests/foundation/test_names.py checks the pattern on the whole classes).
_START = string.ascii_letters + "_" + "éΩぁⰀ\U00010000"
_CHAR = _START + string.digits + "-.·\u0300\u203f"
assert re.fullmatch(f"[{NAME_START_CHAR}]+", _START) and re.fullmatch(f"[{NAME_CHAR}]+", _CHAR)
ncnames = st.builds(lambda a, b: a + b, st.sampled_from(_START),
                    st.text(st.sampled_from(_CHAR), max_size=6))
names = ncnames.filter(lambda s: s not in ast.KEYWORDS)
# Text without lone surrogates: the language refuses them, as nothing could write them out.
uris = st.text(st.characters(blacklist_characters="}", blacklist_categories=("Cs",)),
               min_size=1, max_size=10)
qnames = ncnames | st.builds(lambda uri, local: f"{{{uri}}}{local}", uris, ncnames)


@st.composite
def path_types(draw: st.DrawFn) -> PathType:
    """Absolute or relative path types, maybe ending in an attribute or text()."""
    steps = [Step(Axis.CHILD, n) for n in draw(st.lists(qnames, min_size=1, max_size=3))]
    last = draw(st.sampled_from(["child", "attribute", "text", "only text", "only attribute"]))
    if last == "attribute":
        steps[-1] = Step(Axis.ATTRIBUTE, steps[-1].name)
    elif last == "text":
        steps.append(Step(Axis.TEXT))
    elif last == "only text":
        steps = [Step(Axis.TEXT)]
    elif last == "only attribute":
        steps = [Step(Axis.ATTRIBUTE, steps[0].name)]
    return PathType(draw(st.sampled_from(Kind)), tuple(steps))


modifiers = st.builds(
    ast.Modifiers,
    mode=st.none() | st.sampled_from(ast.Mode),
    when=st.none() | st.text(st.characters(blacklist_categories=("Cs",)), min_size=1,
                             max_size=20).filter(str.strip),
    at=st.none() | path_types(),
    context=st.none() | st.sampled_from(ast.Context),
    hierarchical=st.none() | st.booleans(),
    within=st.none() | st.integers(1, 10**6) | st.builds(ast.Duration, st.integers(1, 10**9)),
)
leaves = st.one_of(
    st.builds(Primitive, st.sampled_from(Op), path_types()),
    st.builds(Ref, names, st.none() | path_types()),
    st.builds(Ref, st.none(), path_types()),
)


def _bounds(low: int, extra: int | None) -> tuple[int, int | None]:
    return low, None if extra is None else max(low, 1) + extra


def _operators(children: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    chains = st.lists(children, min_size=2, max_size=4).map(tuple)
    any_of = st.lists(children, min_size=1, max_size=3).flatmap(
        lambda cs: st.builds(AnyOf, st.integers(1, len(cs)), st.just(tuple(cs)), modifiers))
    mult = st.builds(lambda lh, child, mods: Mult(*lh, child, mods),
                     st.builds(_bounds, st.integers(0, 4), st.none() | st.integers(0, 3)),
                     children, modifiers)
    return st.one_of(
        st.builds(Disj, chains, modifiers),
        st.builds(Conj, chains, modifiers),
        st.builds(Seq, chains, modifiers),
        any_of,
        st.builds(Not, st.tuples(children, children, children), modifiers),
        mult,
    )


expressions = st.recursive(leaves, _operators, max_leaves=10)


@given(expressions)
def test_round_trip(expr: ast.Expr) -> None:
    """Printing any tree and parsing the text gives the same tree, and prints the same again."""
    text = str(expr)
    again = parse(text)
    assert again == expr
    assert str(again) == text


@given(names, expressions)
def test_definition_round_trip(name: str, expr: ast.Expr) -> None:
    """A printed definition parses back, alone and among several lines."""
    d = ast.Definition(name, expr)
    assert parse_definition(str(d)) == d
    assert parse_definitions(f"{d}\n\n{d}  # twice\n") == (d, d)


#: Pieces of the language, so that random texts get past the first token.
PIECES = ["ins", "upd", "del", "any", "not", "seq", "and", "or", "with", "mode", "when", "at",
          "context", "hierarchical", "true", "recent", "non-local", "Ei", "item", "a/b", "@x",
          "{u}x", "p:x", "text()", "/", "@", "{", "}", "1", "0", "3", "(", ")", "[", "]", ",",
          "&", "|", ";", "*", "%", ":=", "=", ":", "-", '"', "'", '"s\\"t"', "\\", "#", "$",
          "\n", " ", "é"]
token_soup = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(["", " ", "\n"])),
                      max_size=40).map(lambda parts: "".join(a + b for a, b in parts))
texts = st.text(max_size=60) | token_soup


def _parses_or_raises(function: Callable[[str], Any], text: str) -> Any:
    try:
        return function(text)
    except ExpressionSyntaxError as exc:
        assert exc.line >= 1 and exc.column >= 1
        assert exc.line <= len(text.splitlines()) + 1
        return None


@given(texts)
def test_fuzz(text: str) -> None:
    """Any text either parses or raises ExpressionSyntaxError, and what parses round-trips."""
    expr = _parses_or_raises(parse, text)
    if expr is not None:
        assert parse(str(expr)) == expr
    definitions = _parses_or_raises(parse_definitions, text)
    if definitions:
        assert parse_definitions("\n".join(map(str, definitions))) == definitions
    _parses_or_raises(parse_definition, text)
    event_type = _parses_or_raises(parse_event_type, text)
    if event_type is not None:
        assert parse_event_type(str(event_type)) == event_type


@pytest.mark.parametrize("text", [
    "(" * (MAX_DEPTH + 5) + "ins(a)" + ")" * (MAX_DEPTH + 5),
    "[1,2] " * (MAX_DEPTH + 5) + "ins(a)",
    "and(" * 500 + "x",
])
def test_deep_nesting(text: str) -> None:
    """Too deep nesting is a syntax error, never a RecursionError."""
    with pytest.raises(ExpressionSyntaxError, match="nested"):
        parse(text)


# --- event types -----------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("upd(item/price)", PrimitiveEventType(Op.UPD, P("item/price"))),
    ("*(/order/@id)", PrimitiveEventType(Op.ANY, P("/order/@id"))),
    ("ItemComplete(order/item)", CompositeEventType("ItemComplete", P("order/item"))),
    ("%(item)", CompositeEventType(None, P("item"))),
    ("  del(item)\n", PrimitiveEventType(Op.DEL, P("item"))),
])
def test_parse_event_type(text: str, expected: Any) -> None:
    """Subscriptions name primitive or composite event types with a path type."""
    assert parse_event_type(text) == expected


# --- errors ----------------------------------------------------------------------------------

ERRORS: list[tuple[str, Callable[[str], Any], str, int, int, str]] = [
    ("operator before ')'", parse_definition, "Ei := ins(item ; x", 1, 16,
     "unexpected ';': expected ')' to close '(' (opened at col 10)"),
    ("unclosed '(' at the end", parse, "(ins(a) & ins(b)", 1, 17,
     "unclosed '(' (opened at col 1): expected ')' before end of input"),
    ("unclosed '(' on an earlier line", parse_definitions, "Ea := (ins(a) &\n ins(b)", 2, 8,
     "unclosed '(' (opened at line 1, col 7)"),
    ("unmatched ')'", parse, "ins(a) & ins(b))", 1, 16, "unmatched ')'"),
    ("unclosed '['", parse, "[1,2 ins(a)", 1, 6, "expected ']' to close '['"),
    ("u below l", parse, "[3,1] ins(a)", 1, 4, "u=1 must be an integer >= max(l, 1)"),
    ("zero upper bound", parse, "[0,0] ins(a)", 1, 4, "u=0"),
    ("negative bound", parse, "[-1,2] ins(a)", 1, 2, "numbers cannot be negative"),
    ("missing bound", parse, "[,2] ins(a)", 1, 2, "expected a lower bound"),
    ("multiplicity without operand", parse, "[1,2]", 1, 6, "expected an event type"),
    ("any with n = 0", parse, "any(0, ins(a))", 1, 5, "any: n=0"),
    ("any with n too big", parse, "any(5, ins(a), ins(b))", 1, 5, "any: n=5"),
    ("any without operands", parse, "any(2)", 1, 6, "expected ',' and an operand"),
    ("not with two operands", parse, "not(ins(a), ins(b))", 1, 19, "not needs at least 3"),
    ("not with four operands", parse, "not(a, b, c, d)", 1, 15, "exactly 3 operands"),
    ("and with one operand", parse, "and(ins(a))", 1, 11, "needs at least 2 operands"),
    ("keyword without '('", parse, "ins(a) & seq", 1, 13, "expected '(' after 'seq'"),
    ("unknown modifier", parse, "ins(a) & ins(b) with speed=1", 1, 22,
     "unknown modifier 'speed'; use one of mode, when, at, context, hierarchical"),
    ("bad mode", parse, "ins(a) & ins(b) with mode=fast", 1, 27,
     "mode='fast' is not allowed; use one of earliest, non-local, custom"),
    ("bad context", parse, "ins(a) & ins(b) with context=never", 1, 30, "context='never'"),
    ("bad hierarchical", parse, "ins(a) & ins(b) with hierarchical=yes", 1, 35,
     "expected true or false"),
    ("when needs a string", parse, "ins(a) & ins(b) with when=price", 1, 27,
     "expected a quoted XPath expression"),
    ("blank when", parse, 'ins(a) & ins(b) with when="  "', 1, 27, "when='  '"),
    ("bad at path", parse, "ins(a) & ins(b) with at=a//b", 1, 27, "empty step"),
    ("modifier without '='", parse, "ins(a) & ins(b) with mode custom", 1, 27,
     "expected '=' after 'mode'"),
    ("modifiers without ','", parse, 'ins(a) & ins(b) with when="x" at=a', 1, 31,
     "unexpected 'at': expected ',' between modifiers"),
    ("duplicate modifier", parse, "ins(a) & ins(b) with mode=custom, mode=earliest", 1, 35,
     "modifier 'mode' is set twice"),
    ("duplicate across with clauses", parse,
     '(ins(a) & ins(b) with when="x") with when="y"', 1, 38, "'when' is set twice"),
    ("with on a primitive", parse, "ins(item) with mode=custom", 1, 11,
     "with applies to an operator node; ins(item) is an event type"),
    ("with on a parenthesised reference", parse, "(Ei(item)) with at=order", 1, 12,
     "Ei(item) is an event type"),
    ("with in a function argument", parse, "or(ins(a) & ins(b) with mode=custom, x)", 1, 20,
     "must be parenthesised"),
    ("keyword as definition name", parse_definition, "and := ins(a)", 1, 1,
     "'and' is a keyword and cannot name a definition"),
    ("path as definition name", parse_definition, "a/b := ins(a)", 1, 1,
     "unexpected 'a/b': expected a definition 'Name := expression'"),
    ("missing ':='", parse_definition, "Ei ins(a)", 1, 4, "expected ':=' after the definition"),
    ("'=' for ':='", parse_definition, "Ei = ins(a)", 1, 4, "unexpected '='"),
    ("two definitions", parse_definition, "Ea := x\nEb := y", 2, 1, "after the definition"),
    ("definition given to parse", parse, "Ei := ins(a)", 1, 4, "parse_definition"),
    ("unterminated string", parse, 'ins(a) & ins(b) with when="price > 0', 1, 27,
     "unterminated string"),
    ("unterminated escape", parse, 'x & y with when="a\\', 1, 17, "unterminated string"),
    ("unknown escape", parse, 'x & y with when="a\\qb"', 1, 19, "unknown escape '\\\\q'"),
    ("bad path", parse, "ins(a//b)", 1, 7, "bad path type 'a//b': empty step"),
    ("bad path after a long prefix", parse_definition, "Ei := ins(item) ; upd(item/@id/x)", 1,
     31, "@id can only be the last step"),
    ("unknown prefix", parse, "ins(item/p:price)", 1, 10, "unknown namespace prefix 'p'"),
    ("unterminated Clark name", parse, "ins({urn:x", 1, 5, "unterminated '{'"),
    ("empty path", parse, "ins()", 1, 5, "expected a path type"),
    ("error on line 3", parse_definitions, "Ea := ins(a)\n# comment\nEb := ins(b) ; ; ins(c)",
     3, 16, "expected an event type"),
    ("line continued into the next definition", parse_definitions,
     "Ea := ins(a) ;\nEb := ins(b)", 2, 4, "one definition per line"),
    ("stray character", parse, "ins(a) ? ins(b)", 1, 8, "unexpected character '?'"),
    ("lone colon", parse_definition, "Ei : ins(a)", 1, 4, "did you mean ':='?"),
    ("juxtaposed expressions", parse, "ins(a) ins(b)", 1, 8, "join expressions with &, | or ;"),
    ("two lines given to parse", parse, "ins(a)\nins(b)", 2, 1, "after the expression"),
    ("empty expression", parse, "  \n", 1, 1, "unexpected end of input"),
    ("name without path in a subscription", parse_event_type, "Ei", 1, 3,
     "expected '(' and a path type after 'Ei'"),
    ("operator in a subscription", parse_event_type, "ins(a) & ins(b)", 1, 8,
     "unexpected '&' after the event type"),
    ("keyword in a subscription", parse_event_type, "any(1, x)", 1, 1, "the keyword 'any'"),
]


@pytest.mark.parametrize("title, function, text, line, col, reason", ERRORS,
                         ids=[e[0] for e in ERRORS])
def test_errors(title: str, function: Callable[[str], Any], text: str, line: int, col: int,
                reason: str) -> None:
    """Each error names the line and column of the offending token and says what is wrong."""
    with pytest.raises(ExpressionSyntaxError) as info:
        function(text)
    assert (info.value.line, info.value.column) == (line, col), info.value
    assert reason in info.value.reason
    assert info.value.text == text


def test_error_message_format() -> None:
    """The message starts with the position and ends with the line and a caret under it."""
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_definition("Ei := ins(item ; x")
    assert str(info.value) == (
        "line 1, col 16: unexpected ';': expected ')' to close '(' (opened at col 10)\n"
        "  Ei := ins(item ; x\n"
        "                 ^")


def test_source_labels_errors() -> None:
    """parse_definitions names its source in error messages."""
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_definitions("Ea := ins(a)\nEb := $", source="defs.txt")
    assert str(info.value).startswith("line 2, col 7: defs.txt: unexpected character '$'")
    assert info.value.context == "defs.txt"


def test_errors_come_in_text_order() -> None:
    """The first error in the text is reported, even when a bad character follows it."""
    with pytest.raises(ExpressionSyntaxError) as info:
        parse("ins(a) & & $")
    assert info.value.column == 10 and "expected an event type" in info.value.reason


def test_parse_rejects_non_text() -> None:
    """Passing something other than a string is a TypeError naming the value."""
    with pytest.raises(TypeError, match="text=3"):
        parse(3)  # type: ignore[arg-type]
