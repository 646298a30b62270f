"""Print rule trees in the text form the parser reads, one function per node type.

The printer writes the paper's notation (section 2) — ``[@id=$delta/@id]`` without spaces
around comparisons, ``'...'`` quotes, ``INSERT``/``DELETE``/``BELOW``/``AFTER``/``TRUE`` in
upper case and ``rule``/``priority``/``on``/``if``/``do`` in lower case as the rule files
write them — and adds only the parentheses the grammar needs, so that
``parse(to_text(x)) == x``: a chain (``and``/``or``) in a chain is parenthesised, since
chains are n-ary and parentheses are kept as nesting.

Strings are written so that they read back exactly: a literal holding both quotes doubles
its quote (``'it''s'``); constructor text escapes ``&``, ``<``, ``{`` and ``}``
(``&amp;``, ``&lt;``, ``{{``, ``}}``) and writes a carriage return as ``&#13;``; text made
only of white space starts with a character reference, since literal white space alone
between tags is boundary whitespace, which the parser drops (section 2.5, as XQuery does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import ast

__all__ = ["to_text", "quote"]

# Binding strength, loosest first, for qualifiers and conditions alike.
_OR, _AND, _ATOM = 1, 2, 3


def quote(value: str) -> str:
    """``value`` as a string literal: in ``'``, or ``"`` if it holds only ``'``; a literal
    holding both doubles its quote.

    >>> quote("Baghdad Cafe"), quote("it's"), quote("it's \\"x\\"")
    ("'Baghdad Cafe'", '"it\\'s"', '\\'it\\'\\'s "x"\\'')
    """
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    return "'" + value.replace("'", "''") + "'"


def _strength(node: ast.Node) -> int:
    if isinstance(node, (ast.Or, ast.QOr)):
        return _OR
    if isinstance(node, (ast.And, ast.QAnd)):
        return _AND
    return _ATOM


def _wrap(node: ast.Node, least: int) -> str:
    """Print ``node``, in parentheses unless it binds at least as tight as ``least``."""
    text = to_text(node)
    return text if _strength(node) >= least else f"({text})"


# --- paths -----------------------------------------------------------------------------------

def _qualifiers(qualifiers: tuple[ast.Qualifier, ...]) -> str:
    return "".join(f"[{to_text(q)}]" for q in qualifiers)


def _test(step: ast.Step) -> str:
    if step.kind is ast.StepKind.ELEMENT:
        assert step.name is not None
        return step.name
    if step.kind is ast.StepKind.ATTRIBUTE:
        return f"@{step.name}"
    return "." if step.kind is ast.StepKind.SELF else ".."


def _step(node: ast.Step) -> str:
    return f"{node.sep.value}{_test(node)}{_qualifiers(node.qualifiers)}"


def _document(node: ast.Document) -> str:
    return f"document({quote(node.name)})"


def _delta(node: ast.Delta) -> str:
    return "$delta" + _qualifiers(node.qualifiers)


def _path(node: ast.Path) -> str:
    parts = [] if node.root is None else [to_text(node.root)]
    for i, step in enumerate(node.steps):
        if i == 0 and node.root is None:  # the first step of a relative path: no separator
            parts.append(_test(step) + _qualifiers(step.qualifiers))
        else:
            parts.append(_step(step))
    return "".join(parts)


# --- qualifiers ------------------------------------------------------------------------------

def _literal(node: ast.Literal) -> str:
    return quote(node.value)


def _number(node: ast.Number) -> str:
    return format(node.value, "f")


def _compare(node: ast.Compare) -> str:
    return f"{to_text(node.left)}{node.op.value}{to_text(node.right)}"


def _qand(node: ast.QAnd | ast.And) -> str:
    return " and ".join(_wrap(item, _ATOM) for item in node.items)


def _qor(node: ast.QOr | ast.Or) -> str:
    return " or ".join(_wrap(item, _AND) for item in node.items)


# --- conditions ------------------------------------------------------------------------------

def _true(node: ast.TrueCondition) -> str:
    return "TRUE"


def _not(node: ast.Not) -> str:
    return f"not({to_text(node.item)})"


# --- simple XQuery ---------------------------------------------------------------------------

_TEXT_ESCAPES = {"&": "&amp;", "<": "&lt;", "{": "{{", "}": "}}", "\r": "&#13;"}
_SPACE_REFS = {" ": "&#32;", "\t": "&#9;", "\n": "&#10;", "\r": "&#13;"}


def _escape(text: str, extra: dict[str, str]) -> str:
    table = {**_TEXT_ESCAPES, **extra}
    return "".join(table.get(ch, ch) for ch in text)


def _text(text: str) -> str:
    escaped = _escape(text, {})
    if not text.strip(" \t\r\n"):
        # Literal white space alone is boundary whitespace; a reference keeps it.
        escaped = _SPACE_REFS[text[0]] + _escape(text[1:], {})
    return escaped


def _attribute(node: ast.Attribute) -> str:
    if isinstance(node.value, str):
        # Attribute values normalise literal tabs and line ends to spaces: write references.
        value = _escape(node.value, {"'": "&apos;", "\t": "&#9;", "\n": "&#10;"})
        return f"{node.name}='{value}'"
    inner = to_text(node.value)
    delimiter = '"' if "'" in inner and '"' not in inner else "'"
    return f"{node.name}={delimiter}{{{inner}}}{delimiter}"


def _content(item: ast.ElementContent) -> str:
    if isinstance(item, str):
        return _text(item)
    if isinstance(item, ast.Path):
        return f"{{{to_text(item)}}}"
    return to_text(item)


def _element(node: ast.Element) -> str:
    attributes = "".join(" " + _attribute(a) for a in node.attributes)
    if not node.contents:
        return f"<{node.name}{attributes}/>"
    body = "".join(_content(item) for item in node.contents)
    return f"<{node.name}{attributes}>{body}</{node.name}>"


# --- actions, events, rules ------------------------------------------------------------------

def _position(node: ast.Position) -> str:
    test = to_text(node.test)
    test_is_name_true = (isinstance(node.test, ast.Path) and node.test.root is None
                         and len(node.test.steps) == 1 and not node.test.steps[0].qualifiers
                         and (node.test.steps[0].name or "").lower() == "true")
    if test_is_name_true:
        test = f"({test})"  # an element named TRUE, not the constant
    return f"{node.where.value} {test}"


def _insert(node: ast.Insert) -> str:
    text = f"INSERT {to_text(node.content)} BELOW {to_text(node.below)}"
    return text if node.position is None else f"{text} {to_text(node.position)}"


def _delete(node: ast.Delete) -> str:
    return f"DELETE {to_text(node.target)}"


def _event(node: ast.Event) -> str:
    return f"{node.kind.value} {to_text(node.path)}"


def _named_event(node: ast.NamedEvent) -> str:
    return f"EVENT {node.name}"


def _rule(node: ast.Rule) -> str:
    actions = ";\n   ".join(to_text(a) for a in node.actions)
    return (f"rule {node.name} priority {node.priority}:\n"
            f"on {to_text(node.event)}\n"
            f"if {to_text(node.condition)}\n"
            f"do {actions}")


def _rule_set(node: ast.RuleSet) -> str:
    return "".join(to_text(rule) + "\n" + ("\n" if i < len(node.rules) - 1 else "")
                   for i, rule in enumerate(node.rules))


_DISPATCH: dict[type, Callable[[Any], str]] = {
    ast.Step: _step,
    ast.Document: _document,
    ast.Delta: _delta,
    ast.Path: _path,
    ast.Literal: _literal,
    ast.Number: _number,
    ast.Compare: _compare,
    ast.QAnd: _qand,
    ast.QOr: _qor,
    ast.TrueCondition: _true,
    ast.And: _qand,
    ast.Or: _qor,
    ast.Not: _not,
    ast.Attribute: _attribute,
    ast.Element: _element,
    ast.Position: _position,
    ast.Insert: _insert,
    ast.Delete: _delete,
    ast.Event: _event,
    ast.NamedEvent: _named_event,
    ast.Rule: _rule,
    ast.RuleSet: _rule_set,
}


def to_text(node: ast.Node) -> str:
    """The text form of ``node``; the parser reads it back as an equal node.

    >>> from xmlevents.rules import parse_condition
    >>> to_text(parse_condition("$delta[.='Mushroom'] and $delta/../..[name='Baghdad Cafe']"))
    "$delta[.='Mushroom'] and $delta/../..[name='Baghdad Cafe']"
    """
    return _DISPATCH[type(node)](node)
