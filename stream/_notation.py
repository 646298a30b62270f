"""The paper's grammar notation (seed 004, section 3, Example 3), as text.

One production a line (or separated by ``;``), alternatives with ``|``::

    x_T -> *<x_T, x_T> | λ
    x_c -> c<x_T, x_T>
    x_b -> b<x_T, x_c>
    x_0 -> a<x_b, x_T> | *<x_0, x_T> | *<x_T, x_0>
    start x_0
    select x_b

``λ`` (also ``()`` or ``lambda``) is the empty tree; a label is a name, ``prefix:name`` (with
a prefix map), ``{uri}name`` or ``*``. ``start`` names ``x0`` (default: the first production's
variable) and ``select`` the distinguished variables (required). ``#`` starts a comment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NoReturn

from xmlevents._foundation.text import LineIndex

from ._errors import QuerySyntaxError
from ._grammar import ExplicitGrammar, ExplicitRule

__all__ = ["parse_grammar"]

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+|\#[^\n]*)
  | (?P<nl>[\n;])
  | (?P<arrow>->|→)
  | (?P<lambda>λ|\(\s*\)|lambda\b)
  | (?P<clark>\{[^}]*\}[^\W\d][\w.\-]*)
  | (?P<name>[^\W\d][\w.\-]*(?::[^\W\d][\w.\-]*)?)
  | (?P<star>\*)
  | (?P<punct>[<>,|])
""", re.X)


def parse_grammar(text: str, namespaces: Mapping[str, str] | None = None) -> ExplicitGrammar:
    """Parse a grammar in the paper's notation.

    Raises:
        QuerySyntaxError: with line and column, for text that does not follow the notation, a
            variable used but never defined, a missing ``select``, or an unknown prefix.

    >>> g = parse_grammar("x -> a<y, x> | *<x, x> | λ; y -> λ; select y")
    >>> g.variables, sorted(g.name(v) for v in g.distinguished)
    (('x', 'y'), ['y'])
    """
    lines = LineIndex(text)
    toks: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            _fail(text, lines, pos, f"unexpected {text[pos]!r}")
            raise AssertionError  # _fail raised
        kind = m.lastgroup or ""
        if kind != "ws":
            toks.append((kind, m.group(), pos))
        pos = m.end()
    toks.append(("nl", "", len(text)))
    rules: list[ExplicitRule] = []
    start: str | None = None
    select: list[str] = []
    used: dict[str, int] = {}
    i = 0

    def expect(kinds: tuple[str, ...], what: str) -> tuple[str, str, int]:
        nonlocal i
        tok = toks[i]
        if tok[0] not in kinds and not (tok[0] == "punct" and tok[1] in kinds):
            found = repr(tok[1]) if tok[1] else "the end of the line"
            _fail(text, lines, tok[2], f"expected {what}, found {found}")
        i += 1
        return tok

    def label(tok: tuple[str, str, int]) -> str | None:
        kind, value, at = tok
        if kind == "star":
            return None
        if kind == "clark":
            return value
        prefix, colon, local = value.partition(":")
        if not colon:
            return value
        uri = (namespaces or {}).get(prefix)
        if uri is None:
            python = f"pass namespaces={{{prefix!r}: URI}}"
            _fail(text, lines, at, f"prefix {prefix!r} is not bound: {python}",
                  ((python, f"pass --namespace {prefix}=URI"),))
            raise AssertionError  # _fail raised
        return "{" + uri + "}" + local

    while i < len(toks):
        kind, value, at = toks[i]
        if kind == "nl":
            i += 1
            continue
        if kind == "name" and value in ("start", "select") and toks[i + 1][0] == "name":
            i += 1
            names = []
            while toks[i][0] == "name":
                names.append(toks[i][1])
                used.setdefault(toks[i][1], toks[i][2])
                i += 1
                if toks[i] == ("punct", ",", toks[i][2]):
                    i += 1
            expect(("nl",), "the end of the line")
            if value == "start":
                if len(names) != 1:
                    _fail(text, lines, at, "start names one variable")
                start = names[0]
            else:
                select.extend(names)
            continue
        lhs = expect(("name",), "a variable")[1]
        expect(("arrow",), "'->'")
        while True:
            tok = toks[i]
            if tok[0] == "lambda":
                i += 1
                rules.append(ExplicitRule(lhs, None, None, None))
            else:
                lab = label(expect(("name", "clark", "star"), "a label, '*' or 'λ'"))
                expect(("<",), "'<'")
                left = expect(("name",), "a variable")
                expect((",",), "','")
                right = expect(("name",), "a variable")
                expect((">",), "'>'")
                used.setdefault(left[1], left[2])
                used.setdefault(right[1], right[2])
                rules.append(ExplicitRule(lhs, lab, left[1], right[1]))
            if toks[i][0] == "punct" and toks[i][1] == "|":
                i += 1
                continue
            expect(("nl",), "'|' or the end of the line")
            break
    if not rules:
        _fail(text, lines, 0, "a grammar needs at least one production")
    defined = {r.lhs for r in rules}
    for name, at in used.items():
        if name not in defined:
            _fail(text, lines, at, f"variable {name!r} has no production")
    if not select:
        _fail(text, lines, len(text), "no distinguished variable: add 'select x' naming the "
                                      "variable whose nodes are the matches")
    return ExplicitGrammar(rules, start=start or rules[0].lhs, distinguished=set(select))


def _fail(text: str, lines: LineIndex, offset: int, reason: str,
          phrases: tuple[tuple[str, str], ...] = ()) -> NoReturn:
    """Raise the error at ``offset``; ``phrases`` pair a hint worded for Python with its
    command-line wording (:meth:`~xmlevents.algebra.XmlEventsError.for_cli`)."""
    line, col = lines.at(min(offset, max(len(text) - 1, 0)) if text else 0)
    error = QuerySyntaxError(reason, text=text, line=line, column=col, context="grammar")
    for python, cli in phrases:
        error.phrased(python, cli)
    raise error
