"""The rule language of seed 002 (section 2): parsing, printing, the fragments' limits, and
the errors with their line and column."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path as FilePath
from typing import Any

import pytest

from xmlevents.algebra import ArgumentTypeError, InvalidArgumentError, UnknownNameError
from xmlevents.rules import (
    MAX_DEPTH,
    RuleError,
    RuleSyntaxError,
    ast,
    parse_action,
    parse_condition,
    parse_path,
    parse_rule,
    parse_rules,
    to_text,
)
from xmlevents.rules._tokens import TokenType, tokenize
from xmlevents.rules.ast import (
    TRUE,
    Attribute,
    Compare,
    CompOp,
    Delete,
    Delta,
    Document,
    Element,
    Event,
    EventKind,
    Insert,
    Literal,
    NamedEvent,
    Not,
    Number,
    Path,
    Position,
    QAnd,
    Rule,
    RuleSet,
    Sep,
    Step,
    StepKind,
    Where,
)

FIXTURES = FilePath(__file__).parent / "fixtures"
PAPER = (FIXTURES / "paper_rules.txt").read_text(encoding="utf-8")
PRINTED = (FIXTURES / "printed_rules.txt").read_text(encoding="utf-8")


def step(name: str, *qualifiers: ast.Qualifier, sep: Sep = Sep.CHILD) -> Step:
    if name == ".":
        return Step(sep, StepKind.SELF, None, qualifiers)
    if name == "..":
        return Step(sep, StepKind.PARENT, None, qualifiers)
    if name.startswith("@"):
        return Step(sep, StepKind.ATTRIBUTE, name[1:], qualifiers)
    return Step(sep, StepKind.ELEMENT, name, qualifiers)


def rel(*names: str) -> Path:
    return Path(None, tuple(step(n) for n in names))


def delta(*names: str) -> Path:
    return Path(Delta(), tuple(step(n) for n in names))


# --- the paper's rules -----------------------------------------------------------------------

def test_the_papers_rules_parse_into_the_expected_trees() -> None:
    """Example 1's first rule reads as the tree the paper's text describes (sections 2.1-2.5)."""
    rules = parse_rules(PAPER, source="paper_rules.txt")
    assert [r.name for r in rules] == ["R1", "R2", "Mushrooms"]
    r1 = rules["R1"]
    same_product = Compare(rel("@id"), CompOp.EQ, delta("@id"))
    below = Path(Document("p.xml"), (step("products"), step("product", same_product)))
    assert r1 == Rule(
        "R1", 2,
        Event(EventKind.INSERT, Path(Document("s.xml"), (step("stores"), step("store"),
                                                          step("product")))),
        Not(Path(Document("p.xml"), (
            step("products"), step("product", same_product),
            step("store", Compare(rel("@id"), CompOp.EQ, delta("..", "@id")))))),
        (Insert(Element("store", (Attribute("id", delta("..", "@id")),)), below,
                Position(Where.AFTER, TRUE)),))
    assert r1.pos == (6, 1) and r1.event.pos == (7, 4)


def test_example_2s_rule_parses() -> None:
    """Example 2's condition is a conjunction of two $delta paths; its content is $delta/.."""
    rule = parse_rules(PAPER)["Mushrooms"]
    assert rule.condition == ast.And((
        Path(Delta((Compare(rel("."), CompOp.EQ, Literal("Mushroom")),))),
        Path(Delta(), (step(".."), step("..", Compare(rel("name"), CompOp.EQ,
                                                      Literal("Baghdad Cafe")))))))
    action = rule.actions[0]
    assert isinstance(action, Insert) and action.content == delta("..")


def test_the_papers_rules_print_in_the_canonical_form() -> None:
    """The printer writes each rule on four lines, the paper's notation otherwise."""
    rules = parse_rules(PAPER)
    assert to_text(rules) == PRINTED
    assert parse_rules(PRINTED) == rules


def test_the_issue_example_parses_on_one_line_per_part() -> None:
    """The form of issue 17 (one line each for rule, on, if, do) parses as the paper's."""
    assert parse_rules(PRINTED.split("\n\n")[0]) == RuleSet((parse_rules(PAPER)["R1"],))


IDENTITY = [line.split(": ", 1) for line in
            (FIXTURES / "identity.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
PARSERS: dict[str, Callable[[str], ast.Node]] = {
    "path": parse_path, "condition": parse_condition, "action": parse_action}


@pytest.mark.parametrize(("kind", "text"), IDENTITY, ids=[t for _, t in IDENTITY])
def test_identity(kind: str, text: str) -> None:
    """Each fixture line prints back exactly as written after parsing."""
    assert to_text(PARSERS[kind](text)) == text


#: Titled input/expected pairs: text that parses but prints in the canonical form.
NORMALISED = [
    ("keywords in any case",
     "rule R priority 1: ON insert document('a')/b If TRUE Do delete $delta",
     "rule R priority 1:\non INSERT document('a')/b\nif TRUE\ndo DELETE $delta"),
    ("no if, no colon, a last ;", "rule R priority 1 on INSERT document('a')/b do DELETE $delta;",
     "rule R priority 1:\non INSERT document('a')/b\nif TRUE\ndo DELETE $delta"),
    ("negative priority, two actions",
     "rule R priority -3: on DELETE document('a')/b do DELETE $delta; DELETE $delta/..",
     "rule R priority -3:\non DELETE document('a')/b\nif TRUE\ndo DELETE $delta;\n"
     "   DELETE $delta/.."),
    ("composite event", "rule R priority 1: on EVENT ItemComplete do DELETE $delta/@x",
     "rule R priority 1:\non EVENT ItemComplete\nif TRUE\ndo DELETE $delta/@x"),
]


@pytest.mark.parametrize(("title", "text", "printed"), NORMALISED,
                         ids=[t for t, _, _ in NORMALISED])
def test_normalised_rules(title: str, text: str, printed: str) -> None:
    """Accepted variants print in the canonical form."""
    assert to_text(parse_rule(text)) == printed


@pytest.mark.parametrize(("text", "printed"), [
    ("document(\"s.xml\")/a[ @id = 'x' ]", "document('s.xml')/a[@id='x']"),
    ("$delta[. = \"it's\"]", "$delta[.=\"it's\"]"),
    ("$delta[.='it''s']", "$delta[.=\"it's\"]"),
    ("$delta[. != 5.0]", "$delta[.!=5.0]"),
    ("$delta[a AND b Or c]", "$delta[a and b or c]"),
    ("$delta # a comment\n /a", "$delta/a"),
])
def test_normalised_paths(text: str, printed: str) -> None:
    """Spaces, quotes, keyword case and comments do not survive printing."""
    assert to_text(parse_path(text)) == printed


def test_constructor_text_follows_xquery() -> None:
    """Boundary whitespace goes, references and doubled braces decode, attribute values have
    their white space normalised, and whitespace from a reference stays (section 2.5)."""
    action = parse_action("INSERT <a  b = 'x\ny'\n  c=\"it''s &quot;q&quot;\">\n  <c/>\n"
                          "  t &#x41;&#66;&lt;{{x}}\n  <d>&#32;</d>\n</a> BELOW $delta")
    assert isinstance(action, Insert)
    assert action.content == Element(
        "a", (Attribute("b", "x y"), Attribute("c", "it''s \"q\"")),
        (Element("c"), "\n  t AB<{x}\n  ", Element("d", (), (" ",))))


def test_a_doubled_delimiter_stands_for_itself_in_an_attribute_value() -> None:
    """'it''s' in an attribute delimited by ' is it's."""
    action = parse_action("INSERT <a b='it''s'/> BELOW $delta")
    assert isinstance(action, Insert) and action.content == Element("a", (Attribute("b",
                                                                                    "it's"),))


def test_an_enclosed_expression_may_quote_with_the_attributes_delimiter() -> None:
    """Inside {e} the path is read as a path, whatever quote delimits the attribute."""
    action = parse_action("INSERT <a b='{document('x')/y}'>{document(\"x\")/z}</a> BELOW $delta")
    assert isinstance(action, Insert)
    assert action.content == Element(
        "a", (Attribute("b", Path(Document("x"), (step("y"),))),),
        (Path(Document("x"), (step("z"),)),))


def test_true_after_a_position_is_the_constant_only_alone() -> None:
    """AFTER TRUE is the constant; AFTER TRUE/x and AFTER (TRUE) test elements named TRUE."""
    def position(text: str) -> ast.Position:
        action = parse_action(f"INSERT <x/> BELOW $delta AFTER {text}")
        assert isinstance(action, Insert) and action.position is not None
        return action.position

    assert position("true").test == TRUE
    assert position("(TRUE)").test == rel("TRUE")
    assert position("TRUE/x").test == rel("TRUE", "x")
    assert position("TRUE='y'").test == Compare(rel("TRUE"), CompOp.EQ, Literal("y"))
    rules = parse_rules("rule A priority 1: on INSERT document('a')/b do INSERT <x/> BELOW "
                        "$delta AFTER TRUE rule B priority 2: on INSERT document('a')/c do "
                        "DELETE $delta")
    first = rules["A"].actions[0]
    assert len(rules) == 2 and isinstance(first, Insert) and first.position is not None
    assert first.position.test == TRUE


def test_positions_are_kept_out_of_equality() -> None:
    """The same rule at other positions is equal, and positions point at the source."""
    one = parse_path("$delta/a")
    two = parse_path("\n\n   $delta/a")
    assert one == two and hash(one) == hash(two)
    assert (one.pos, two.pos, two.steps[0].pos) == ((1, 1), (3, 4), (3, 11))


def test_numbers_are_decimals() -> None:
    """Number literals keep their digits and compare by value."""
    path = parse_path("$delta[. > 2.50]")
    assert path.root == Delta((Compare(rel("."), CompOp.GT, Number(Decimal("2.5"))),))
    assert to_text(path) == "$delta[.>2.50]"


def test_tokens_carry_positions() -> None:
    """Tokens know their type, text, line and column; strings are decoded."""
    tokens = tokenize("$delta\n  [@id != 'a''b']")
    assert [(t.kind, t.text, t.line, t.column) for t in tokens] == [
        (TokenType.VAR, "delta", 1, 1), (TokenType.LBRACK, "[", 2, 3),
        (TokenType.AT, "@", 2, 4), (TokenType.NAME, "id", 2, 5), (TokenType.NE, "!=", 2, 8),
        (TokenType.STRING, "a'b", 2, 11), (TokenType.RBRACK, "]", 2, 17),
        (TokenType.EOF, "", 2, 18)]


# --- the fragments' limits (sections 2.4, 2.5) -----------------------------------------------

RULE = """rule R priority 1:
on INSERT document('s.xml')/stores/store/product
if {condition}
do {action}"""


def rule_error(condition: str = "TRUE", action: str = "DELETE $delta") -> RuleSyntaxError:
    with pytest.raises(RuleSyntaxError) as caught:
        parse_rules(RULE.format(condition=condition, action=action), source="r.rules")
    return caught.value


#: (title, condition, action, line, column, words the reason must hold)
REFUSED: list[tuple[str, str, str, int, int, list[str]]] = [
    ("another axis", "$delta/following-sibling::product", "DELETE $delta", 3, 11,
     ["axis following-sibling::", "child, parent, self and descendant-or-self"]),
    ("child axis", "TRUE", "DELETE $delta/child::a", 4, 18,
     ["axis child::", "write name for child::name"]),
    ("axis at the start", "TRUE", "DELETE ancestor::a", 4, 11, ["axis ancestor::"]),
    ("axis inside a qualifier", "$delta[preceding::a]", "DELETE $delta", 3, 11,
     ["axis preceding::"]),
    ("a function in a qualifier", "$delta[count(a) > 1]", "DELETE $delta", 3, 11,
     ["function count()", "the only function is document('name')"]),
    ("text()", "TRUE", "DELETE $delta/text()", 4, 18, ["function text()"]),
    ("a function as a condition", "contains($delta, 'x')", "DELETE $delta", 3, 4,
     ["function contains()"]),
    ("document() as a step", "TRUE", "DELETE $delta/document('a')", 4, 18,
     ["document('name') starts a path"]),
    ("another variable", "$x/a", "DELETE $delta", 3, 4,
     ["variable $x", "the only variable is $delta"]),
    ("another variable in a qualifier", "$delta[@id=$id]", "DELETE $delta", 3, 15,
     ["variable $id"]),
    ("for", "TRUE", "INSERT for $x in document('p.xml')/a return $x BELOW $delta", 4, 11,
     ["FLWR", "simple XQuery"]),
    ("let", "TRUE", "INSERT let $x := 1 return <a/> BELOW $delta", 4, 11, ["FLWR"]),
    ("union", "$delta/a | $delta/b", "DELETE $delta", 3, 13, ["union |"]),
    ("arithmetic", "$delta[a + 1 = 2]", "DELETE $delta", 3, 13, ["arithmetic"]),
    ("a position test", "$delta/a[1]", "DELETE $delta", 3, 13, ["a position test"]),
    ("a string alone", "$delta/a['x']", "DELETE $delta", 3, 13, ["a string alone"]),
    ("not() in a qualifier", "$delta[not(a)]", "DELETE $delta", 3, 11,
     ["not() is allowed in a rule's condition"]),
    ("a path from the root", "/stores/store", "DELETE $delta", 3, 4,
     ["a leading / names no document"]),
    ("a relative condition", "store/product", "DELETE $delta", 3, 4,
     ["starting with document('name') or $delta"]),
    ("a comparison as a condition", "$delta/@id = 'p1'", "DELETE $delta", 3, 15,
     ["compare inside a qualifier"]),
    ("TRUE in a conjunction", "TRUE and $delta", "DELETE $delta", 3, 9, ["TRUE stands alone"]),
    ("comparisons chained", "$delta[a = b = c]", "DELETE $delta", 3, 17, ["do not chain"]),
    ("a compared parenthesis", "$delta[(a or b) = c]", "DELETE $delta", 3, 20,
     ["not compared"]),
    ("document() without a step", "document('p.xml')", "DELETE $delta", 3, 21,
     ["followed by / or //"]),
    ("document() with two arguments", "document('p.xml', 'x')/a", "DELETE $delta", 3, 20,
     ["one argument"]),
    ("document() of a path", "document($delta)/a", "DELETE $delta", 3, 13,
     ["name of a document in quotes"]),
    ("an empty qualifier", "$delta[]", "DELETE $delta", 3, 11, ["empty qualifier"]),
    ("a mixed attribute value", "TRUE", "INSERT <a id='x{$delta/@id}'/> BELOW $delta", 4, 19,
     ["a string or one enclosed expression"]),
    ("two enclosed expressions", "TRUE", "INSERT <a id='{$delta/@a}{$delta/@b}'/> BELOW $delta",
     4, 29, ["a string or one enclosed expression"]),
    ("a comment in a constructor", "TRUE", "INSERT <a><!-- x --></a> BELOW $delta", 4, 14,
     ["comments are outside simple XQuery"]),
    ("a namespace declaration", "TRUE", "INSERT <a xmlns:p='u'/> BELOW $delta", 4, 14,
     ["namespace declarations"]),
    ("a mismatched end tag", "TRUE", "INSERT <a><b></a></b> BELOW $delta", 4, 17,
     ["expected </b> to close <b>"]),
    ("an unclosed constructor", "TRUE", "INSERT <a>text", 4, 18, ["<a> opened at line 4"]),
    ("a lone brace", "TRUE", "INSERT <a>}</a> BELOW $delta", 4, 14, ["a lone '}'"]),
    ("an unknown entity", "TRUE", "INSERT <a>&nbsp;</a> BELOW $delta", 4, 14,
     ["unknown entity &nbsp;"]),
    ("an empty enclosed expression", "TRUE", "INSERT <a>{}</a> BELOW $delta", 4, 15,
     ["holds a path"]),
    ("a relative path enclosed", "TRUE", "INSERT <a>{b}</a> BELOW $delta", 4, 15,
     ["starting with document('name') or $delta"]),
    ("a repeated attribute", "TRUE", "INSERT <a x='1' x='2'/> BELOW $delta", 4, 20,
     ["given twice"]),
    ("BELOW an attribute", "TRUE", "INSERT <a/> BELOW $delta/@id", 4, 29,
     ["BELOW selects the elements"]),
    ("a string as content", "TRUE", "INSERT 'x' BELOW $delta", 4, 11,
     ["expected a simple XQuery expression"]),
    ("no BELOW", "TRUE", "INSERT <a/> document('s.xml')/x", 4, 16, ["expected BELOW"]),
    ("an unknown action", "TRUE", "UPDATE $delta", 4, 4, ["expected an action"]),
    ("an unterminated string", "$delta[.='x]", "DELETE $delta", 3, 13,
     ["unterminated string"]),
    ("an unexpected character", "$delta[. ! 'x']", "DELETE $delta", 3, 13,
     ["the comparison is written !="]),
    ("an unclosed qualifier", "$delta[a", "DELETE $delta", 4, 1,
     ["unexpected 'do': expected ']' to close '[' (opened at line 3, col 10)"]),
]


@pytest.mark.parametrize(("title", "condition", "action", "line", "col", "words"), REFUSED,
                         ids=[r[0] for r in REFUSED])
def test_outside_the_fragment_is_refused_with_line_and_column(
        title: str, condition: str, action: str, line: int, col: int, words: list[str]) -> None:
    """Each construct outside the grammar is refused where it starts, saying what is allowed."""
    exc = rule_error(condition, action)
    assert (exc.line, exc.column) == (line, col), str(exc)
    for word in words:
        assert word in exc.reason, exc.reason
    assert str(exc).startswith(f"line {line}, col {col}: r.rules: ")
    assert str(exc).endswith("\n" + " " * (col + 1) + "^")


def test_the_event_cannot_use_delta() -> None:
    """$delta is defined by the event, so the event's path cannot use it (section 2.1)."""
    with pytest.raises(RuleSyntaxError) as caught:
        parse_rules("rule R priority 1:\non INSERT document('a')/b[@id=$delta/@id]\n"
                    "do DELETE $delta")
    assert (caught.value.line, caught.value.column) == (2, 31)
    assert "the event defines $delta" in caught.value.reason
    with pytest.raises(RuleSyntaxError, match="the event defines"):
        parse_rules("rule R priority 1: on INSERT $delta/a do DELETE $delta")


@pytest.mark.parametrize(("text", "line", "col", "words"), [
    ("rule R on INSERT document('a')/b do DELETE $delta", 1, 8, "'priority N'"),
    ("rule R priority 1.5: on INSERT document('a')/b do DELETE $delta", 1, 17, "integer"),
    ("rule R priority x: on INSERT document('a')/b do DELETE $delta", 1, 17, "integer"),
    ("rule p:R priority 1: on INSERT document('a')/b do DELETE $delta", 1, 6, "rule name"),
    ("rule R priority 1: INSERT document('a')/b do DELETE $delta", 1, 20, "'on'"),
    ("rule R priority 1: on UPDATE document('a')/b do DELETE $delta", 1, 23,
     "INSERT e, DELETE e or EVENT Name"),
    ("rule R priority 1: on EVENT 'x' do DELETE $delta", 1, 29, "composite event definition"),
    ("rule R priority 1: on INSERT document('a')/b DELETE $delta", 1, 46, "'do'"),
    ("rule R priority 1: on INSERT document('a')/b do DELETE $delta DELETE $delta", 1, 63,
     "expected ';'"),
    ("on INSERT document('a')/b do DELETE $delta", 1, 1, "'rule Name priority N"),
])
def test_malformed_rules_are_refused_with_line_and_column(text: str, line: int, col: int,
                                                           words: str) -> None:
    """The rule frame (rule, priority, on, if, do, ;) is checked token by token."""
    with pytest.raises(RuleSyntaxError) as caught:
        parse_rules(text)
    assert (caught.value.line, caught.value.column) == (line, col), str(caught.value)
    assert words in caught.value.reason


def test_duplicate_names_and_priorities_are_refused() -> None:
    """Names and priorities are unique in a rule set (footnote 5), reported at the second."""
    text = ("rule A priority 1: on INSERT document('a')/b do DELETE $delta\n"
            "rule B priority 2: on INSERT document('a')/b do DELETE $delta\n"
            "rule {name} priority {priority}: on INSERT document('a')/b do DELETE $delta\n")
    with pytest.raises(RuleError) as caught:
        parse_rules(text.format(name="A", priority=3), source="x.rules")
    exc = caught.value
    assert (exc.line, exc.column, exc.rule) == (3, 1, "A")
    assert "a second rule named A (line 1)" in exc.reason
    assert str(exc).startswith("line 3, col 1: x.rules: ")
    with pytest.raises(RuleError, match=r"rule C has priority 2, as rule B \(line 2\) has"):
        parse_rules(text.format(name="C", priority=2))
    rules = (Rule("A", 1, NamedEvent("E"), TRUE, (Delete(delta()),)),
             Rule("B", 1, NamedEvent("E"), TRUE, (Delete(delta()),)))
    with pytest.raises(RuleError) as built:
        RuleSet(rules)
    assert built.value.line is None and str(built.value).startswith("rule B has priority 1")


def test_deep_nesting_is_refused_and_long_input_is_read() -> None:
    """Nesting stops at MAX_DEPTH with an error; long paths, chains and files parse without
    running out of stack."""
    deep = "$delta" + "[a" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    with pytest.raises(RuleSyntaxError, match=f"nested more than {MAX_DEPTH} levels"):
        parse_path(deep)
    nested = "<a>" * (MAX_DEPTH + 1) + "</a>" * (MAX_DEPTH + 1)
    with pytest.raises(RuleSyntaxError, match="nested more than"):
        parse_action(f"INSERT {nested} BELOW $delta")
    parens = "(" * (MAX_DEPTH + 1) + "$delta" + ")" * (MAX_DEPTH + 1)
    with pytest.raises(RuleSyntaxError, match="nested more than"):
        parse_condition(parens)
    assert parse_path("$delta" + "[a" * 20 + "]" * 20).uses_delta
    long_path = parse_path("document('a')" + "/b" * 20_000)
    assert len(long_path.steps) == 20_000 and parse_path(to_text(long_path)) == long_path
    chain = parse_condition(" or ".join(["$delta/a"] * 5_000))
    assert isinstance(chain, ast.Or) and len(chain.items) == 5_000
    many = "".join(f"rule R{i} priority {i}: on INSERT document('a')/b do DELETE $delta\n"
                   for i in range(2_000))
    assert len(parse_rules(many)) == 2_000


def test_text_must_be_a_string() -> None:
    """A non-str text is a type error naming it."""
    with pytest.raises(ArgumentTypeError, match="expected the rule text as a str"):
        parse_rules(b"rule")  # type: ignore[arg-type]


# --- the tree built in Python ----------------------------------------------------------------

@pytest.mark.parametrize(("build", "message"), [
    (lambda: Step(Sep.CHILD, StepKind.ELEMENT, "2a"), "needs a QName"),
    (lambda: Step(Sep.CHILD, StepKind.SELF, "a"), "has no name"),
    (lambda: Step("/", StepKind.SELF), "is not a Sep"),  # type: ignore[arg-type]
    (lambda: Path(None, ()), "needs at least one step"),
    (lambda: Path(None, (step("a", sep=Sep.DESCENDANT),)), "cannot start with //"),
    (lambda: Path(Document("a")), "needs a step after it"),
    (lambda: Document(""), "give the name of a document"),
    (lambda: Number(-1), "not negative"),
    (lambda: Number("x"), "is not a number"),
    (lambda: Number(True), "is not a number"),  # type: ignore[arg-type]
    (lambda: QAnd((rel("a"),)), "at least 2 operands"),
    (lambda: ast.And((TRUE, delta())), "TRUE stands only alone"),  # type: ignore[arg-type]
    (lambda: Not(rel("a")), "has no document"),
    (lambda: Element("a", (Attribute("x", "1"), Attribute("x", "2"))), "given twice"),
    (lambda: Element("a", (), ("\x01",)), "cannot occur in XML"),
    (lambda: Attribute("xmlns:p", "u"), "declares a namespace"),
    (lambda: Insert(Element("a"), delta("@id")), "selects attributes"),
    (lambda: Insert(rel("a"), delta()), "has no document"),
    (lambda: Event(EventKind.INSERT, delta("a")), "uses $delta"),
    (lambda: NamedEvent("a b"), "composite event definition"),
    (lambda: Rule("R", 1, NamedEvent("E"), TRUE, ()), "at least one action"),
    (lambda: Rule("R", True, NamedEvent("E"), TRUE, (Delete(delta()),)), "not an integer"),
    (lambda: Rule("1R", 1, NamedEvent("E"), TRUE, (Delete(delta()),)), "rule name"),
    (lambda: Step(Sep.CHILD, StepKind.SELF, None, "ab"), "expected a tuple"),
])
def test_invalid_trees_are_refused(build: Callable[[], Any], message: str) -> None:
    """Constructors check what the grammar guarantees, naming the argument."""
    with pytest.raises((InvalidArgumentError, ArgumentTypeError), match=message.replace(
            "$", r"\$").replace("(", r"\(")):
        build()


def test_element_contents_are_normalised() -> None:
    """Adjacent strings join and empty ones go, so equal text gives equal trees."""
    element = Element("a", (), ("x", "", "y", Element("b"), "", "z"))
    assert element.contents == ("xy", Element("b"), "z")


def test_tree_helpers() -> None:
    """walk, uses_delta, documents, leaf, distinguished and rule-set lookups."""
    path = parse_path("document('p.xml')/products/product[@id=$delta/@id]"
                      "[document('q.xml')/x]/store")
    assert path.uses_delta and path.documents == ("p.xml", "q.xml")
    assert path.leaf == step("store")
    assert to_text(path.distinguished()) == "document('p.xml')/products/product/store"
    assert to_text(parse_path("$delta[.='x']/../..[name='y']").distinguished()) == (
        "$delta/../..")
    assert parse_path("$delta").leaf is None
    kinds = [type(n).__name__ for n in ast.walk(parse_action("INSERT <a x='{$delta}'>t</a> "
                                                             "BELOW $delta AFTER @id"))]
    assert kinds == ["Insert", "Element", "Attribute", "Path", "Delta", "Path", "Delta",
                     "Position", "Path", "Step"]
    rules = parse_rules(PAPER)
    assert [r.name for r in rules.by_priority()] == ["Mushrooms", "R1", "R2"]
    with pytest.raises(UnknownNameError, match="no rule named 'X'; the rules are R1, R2"):
        rules["X"]
    assert repr(parse_path("$delta/..")) == "Path('$delta/..')"
