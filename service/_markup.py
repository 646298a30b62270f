"""The R3-style XML markup of expressions and results (seed 001, sections 2.3 and 3.3).

Reconstructed from section 2.3's prose and its example (the PDF extraction lost the
``<literal>`` start tags: its ``teral>`` is ``<literal>``). Every expression is an
``<expression>``; which kind it is follows from its attributes::

    <expression operator="OR" language="http://snoop-r.org">          composite: OR, SEQ, ANY,
      <with> declarations </with>                                       ALL (language SNOOP-R's
      <argument name="left"><solve> expression </solve></argument>      or none)
      <argument name="right"><solve> expression </solve></argument>
    </expression>

    <expression operator="ANY" language="http://snoop-r.org">          ANY(2, E1, E2, E3)
      <having><parameter name="n"><literal>2</literal></parameter></having>
      <argument name="arg1"> ... <argument name="arg3"> ...
    </expression>

    <expression operator="newBook" language="http://ecommerce.com">    atomic (any other
      <with>                                                            operator; the language
        <Variable name="X" mode="use"><literal>HTML in 21 days</literal></Variable>
        <Variable name="T" mode="bind"/>                                is optional)
      </with>
      <having>
        <parameter name="title" bindVar="T"/>
        <parameter name="isbn" bindVar="X"/>
        <parameter name="author"><literal>Dan Brown</literal></parameter>
      </having>
    </expression>

    <expression language="http://languages.org/prolog">                opaque (no operator)
      <with><Variable name="L" mode="bind"/></with>
      <literal> ?- newCD(ListOfCDs), member(cd(myCD), ListOfCDs). </literal>
    </expression>

Decisions where the paper is silent:

* **Arguments** are taken in document order whatever their ``name`` (the paper's ``left`` and
  ``right`` are written for two, ``arg1``, ``arg2``… for more); ``SEQ`` has exactly two, ``OR``
  at least two, ``ANY``/``ALL`` at least one. ``<argument><expression/></argument>`` without
  the ``<solve>`` is accepted too.
* **ANY's n** is a parameter of the operator, ``<having><parameter name="n"><literal>2
  </literal></parameter></having>`` (section 2.3: "the operator's parameters if needed"); an
  attribute ``n="2"`` on the ``<expression>`` is accepted as well. ``ALL`` takes every
  argument and needs no ``n`` (``ALL`` with an ``n`` is ``ANY(n, ...)``, as the paper's
  ``ALL(n, E1, …, Em)``); ``to_markup`` writes ``ALL`` when ``n >= m``.
* **Operators** are SNOOP-R's when the language is ``http://snoop-r.org`` or absent: there,
  ``OR``, ``SEQ``, ``ANY``, ``ALL`` (upper case) are the only ones, and any other operator
  under ``http://snoop-r.org`` is refused; without a language, any other operator is an atomic
  event type. An atomic expression's language is kept (``Atomic.language``) but does not
  matter to detection.
* **Literals** are strings, kept exactly (the markup has no types): ``type="number"`` (a JSON
  number) and ``type="boolean"`` (``true``/``false``) give the other parameter values; an
  untyped ``<literal>`` is always a string. ``ANY``'s ``n`` may be either.
* **Variables** (``<Variable>``, also spelled ``<variable>``) are declared in a ``<with>`` of an
  atomic or opaque expression or of a composite one around it (section 2.3 gives composites
  "the variables declaration" too); a ``bindVar`` names a variable declared there — in its
  own expression or an enclosing one — and nowhere else. ``use`` variables, with their
  ``<literal>``, are the registration's inputs: one value and one mode per name throughout. A
  ``bind`` variable of an atomic expression must be bound by one of its parameters, one of a
  composite by something inside it; an opaque expression's ``bind`` variables are its outputs.
* Text outside ``<literal>`` (other than white space) and unknown elements are refused, naming
  the elements allowed there; unknown attributes are ignored; namespaces are ignored.
* The parser resolves no entity, loads no DTD and never uses the network; a DOCTYPE is
  refused. libxml2 limits nesting to 256 elements (about 85 nested expressions).

Every error is a :class:`MarkupError` with the line and column of the element's start tag
(the ``<`` of it), or of the syntax error in malformed XML.

A result (section 3.3: the bindings, the sequence of contributing events, the next
evaluation id) is written in the same style; each event is an atomic ``<expression>`` as the
paper's result writes it (``Literal=<expression operator="newCD"/>``), with the event's id,
tick and time, and a ``next`` attribute only while the expression can occur again::

    <result expression="1" next="1" tick="2">
      <bindings>
        <Variable name="T" mode="bind"><literal>Boy</literal></Variable>
      </bindings>
      <events>
        <expression operator="newCD" id="s1" tick="1" time="10.5">
          <having>
            <parameter name="title"><literal>Boy</literal></parameter>
            <parameter name="artist"><literal>U2</literal></parameter>
          </having>
        </expression>
        ...
      </events>
    </result>
"""

from __future__ import annotations

import bisect
import codecs
import json
import re
from collections.abc import Iterator

from lxml import etree

from xmlevents._foundation.xml import parser as hardened_parser
from xmlevents.algebra import XmlEventsError

from ._engine import Detection, Signal
from ._errors import MarkupError
from .ast import (
    Any,
    Atomic,
    Expression,
    Literal,
    Opaque,
    Or,
    Param,
    Pos,
    Registration,
    Seq,
    Value,
    Var,
    check_value,
)

__all__ = ["SNOOP_R", "parse_markup", "to_markup", "detection_to_xml",
           "parse_detection_xml"]

#: The language URI of SNOOP-R's composite expressions (section 2.3's example).
SNOOP_R = "http://snoop-r.org"
_OPERATORS = ("OR", "SEQ", "ANY", "ALL")
# The characters of XML 1.0 (section 2.2 of the XML recommendation).
_XML_TEXT = re.compile("[\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")
_MAX_BYTES = 10 * 1024 * 1024
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
# Line breaks of str.splitlines() that libxml2 does not count: shown as spaces in messages.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_LXML_WHERE = re.compile(r",? line \d+, column \d+\s*\Z")
_VARIABLE = ("Variable", "variable")


def _parser(encoding: str | None) -> etree.XMLParser:
    # The project's one hardened policy (no entities, no DTD, no network, no huge trees, a
    # resolver that reads nothing): a registration is untrusted input. A DOCTYPE is refused
    # after parsing (_load), before anything is read of the tree.
    return hardened_parser(encoding=encoding, remove_comments=True, remove_pis=True)


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


class _Source:
    """The markup as text (for messages) and the line and column of each element."""

    def __init__(self, text: str) -> None:
        self.text = _OTHER_BREAKS.sub(" ", text)
        self._raw = text
        # keyed by lxml's proxy objects, which the dict keeps alive (and so the same)
        self._where: dict[etree._Element, tuple[int, int]] = {}

    def locate(self, root: etree._Element) -> None:
        """Find each element's start tag: in well-formed XML every ``<`` outside comments,
        CDATA sections and processing instructions opens a tag, so the n-th ``<name`` is the
        n-th element in document order. Lines are counted as libxml2 counts them (``\\n``);
        where they disagree with ``sourceline`` (an encoding this text does not reflect), each
        element is given its ``sourceline`` and column 1."""
        text = self._raw
        offsets: list[int] = []
        i = 0
        while (j := text.find("<", i)) >= 0:
            for opener, closer in (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>")):
                if text.startswith(opener, j):
                    k = text.find(closer, j + len(opener))
                    i = len(text) if k < 0 else k + len(closer)
                    break
            else:
                if j + 1 < len(text) and text[j + 1] not in "/!":
                    offsets.append(j)
                i = j + 1
        elements = list(root.iter(etree.Element))
        if len(elements) != len(offsets):  # pragma: no cover - well-formed XML
            return
        breaks = [m.start() for m in re.finditer("\n", text)]
        where: dict[etree._Element, tuple[int, int]] = {}
        for el, offset in zip(elements, offsets, strict=True):
            line = bisect.bisect_left(breaks, offset)
            col = offset - (breaks[line - 1] + 1 if line else 0) + 1
            # libxml2 gives the line where the start tag ends, which may be a later one
            end = text.find(">", offset)
            if not line + 1 <= (el.sourceline or 0) <= line + 1 + text.count("\n", offset, end):
                return
            where[el] = (line + 1, col)
        self._where = where

    def pos(self, el: etree._Element) -> tuple[int, int]:
        found = self._where.get(el)
        if found is not None:
            return found
        return (el.sourceline or 1, 1)

    def fail(self, reason: str, el: etree._Element) -> MarkupError:
        line, col = self.pos(el)
        return MarkupError(reason, text=self.text, line=line, column=col)


def _decode(data: bytes, encoding: str | None) -> str:
    """``data`` as text: by its byte order mark, else in ``encoding`` (the document's)."""
    for bom, name in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                      (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return data.decode(name, "replace")
    try:
        return data.decode(encoding or "utf-8-sig", "replace")
    except LookupError:  # pragma: no cover - an encoding libxml2 knows and Python does not
        return data.decode("utf-8", "replace")


def _load(markup: str | bytes) -> tuple[etree._Element, _Source]:
    """Parse ``markup`` with the hardened parser; the root and where its elements are."""
    if isinstance(markup, str):
        data = markup.encode("utf-8", "surrogatepass")
        shown = markup
        parser = _parser("utf-8")  # the str's own characters, whatever a declaration says
    elif isinstance(markup, bytes):
        data = markup
        shown = _decode(data, None)
        parser = _parser(None)
    else:
        raise MarkupError(f"markup is a str or bytes, got {type(markup).__name__}",
                          line=None, column=None)
    if len(data) > _MAX_BYTES:
        raise MarkupError(f"the markup is over {_MAX_BYTES:,} bytes", line=None, column=None)
    try:
        tree = etree.fromstring(data, parser).getroottree()
    except etree.XMLSyntaxError as exc:
        line, col = exc.position if exc.position else (1, 1)
        line = max(line or 1, 1)
        lines = data.split(b"\n")
        if 0 < line <= len(lines) and col and b"\x00" not in data:
            # libxml2 counts bytes (of UTF-8 here); count characters
            col = len(lines[line - 1][:col - 1].decode("utf-8", "replace")) + 1
        reason = _LXML_WHERE.sub("", str(exc.msg or exc))
        if "Excessive depth" in reason:
            reason = ("nested deeper than 256 elements (about 85 nested expressions), the "
                      "parser's limit")
        raise MarkupError(f"not well-formed XML: {reason}", text=_OTHER_BREAKS.sub(" ", shown),
                          line=line, column=max(col or 1, 1)) from None
    except ValueError as exc:  # pragma: no cover - lxml's refusals before parsing
        raise MarkupError(f"not well-formed XML: {exc}", line=None, column=None) from None
    if isinstance(markup, bytes):
        shown = _decode(data, tree.docinfo.encoding)
    source = _Source(shown)
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        at = shown.find("<!DOCTYPE")
        line = shown.count("\n", 0, at) + 1 if at >= 0 else 1
        col = at - (shown.rfind("\n", 0, at) + 1) + 1 if at >= 0 else 1
        raise MarkupError("a DOCTYPE is not accepted in markup (no entities, no DTD)",
                          text=source.text, line=line, column=col)
    root = tree.getroot()
    source.locate(root)
    return root, source


class _Reader:
    """Reads one registration's markup: the expression, its inputs, the variables' modes."""

    def __init__(self, source: _Source) -> None:
        self.source = source
        self.inputs: dict[str, Value] = {}
        #: name -> (mode, where it was first declared)
        self.modes: dict[str, tuple[str, tuple[int, int]]] = {}

    def fail(self, reason: str, el: etree._Element) -> MarkupError:
        return self.source.fail(reason, el)

    def children(self, el: etree._Element, allowed: str) -> Iterator[etree._Element]:
        """``el``'s child elements, refusing text around them (outside a ``<literal>``)."""
        if el.text is not None and el.text.strip():
            raise self.fail(f"unexpected text {_clip(el.text)} in <{_local(el)}>: "
                            f"it holds {allowed}", el)
        for child in el:
            if not isinstance(child.tag, str):  # pragma: no cover - comments, PIs removed
                continue
            yield child
            if child.tail is not None and child.tail.strip():
                raise self.fail(f"unexpected text {_clip(child.tail)} after <{_local(child)}>"
                                f" in <{_local(el)}>: it holds {allowed}", child)

    def pos(self, el: etree._Element) -> Pos:
        return self.source.pos(el)

    # -- expressions -----------------------------------------------------------------------

    def expression(self, el: etree._Element, scope: frozenset[str]) -> Expression:
        if _local(el) != "expression":
            raise self.fail(f"unknown element <{_local(el)}>: expected <expression>", el)
        operator = el.get("operator")
        language = el.get("language")
        if operator is None:
            return self.opaque(el, language, scope)
        if language in (None, SNOOP_R):
            if operator in _OPERATORS:
                return self.composite(el, operator, scope)
            if language == SNOOP_R or operator.upper() in _OPERATORS:
                raise self.fail(f"unknown operator {operator!r}: SNOOP-R's operators are "
                                f"{', '.join(_OPERATORS)} (upper case); an atomic event type "
                                f"is written with its own language, or none", el)
        elif operator in _OPERATORS:
            raise self.fail(f"{operator} is a SNOOP-R operator: its language is {SNOOP_R} "
                            f"(or none), not {language!r}", el)
        return self.atomic(el, operator, language, scope)

    def composite(self, el: etree._Element, operator: str, scope: frozenset[str]
                  ) -> Expression:
        many = operator in ("ANY", "ALL")
        allowed = ("<with>, <having> and <argument> elements" if many
                   else "<with> and <argument> elements")
        arg_els: list[etree._Element] = []
        uses: list[str] = []
        binds: list[str] = []
        n: int | None = None
        n_el: etree._Element | None = None
        if el.get("n") is not None:
            if not many:
                raise self.fail(f"{operator} takes no n", el)
            n, n_el = self.count(operator, el.get("n", ""), el), el
        for child in self.children(el, allowed):
            name = _local(child)
            if name == "argument":
                arg_els.append(child)
            elif name == "with":
                declared_uses, declared_binds = self.declarations(child)
                uses += declared_uses
                binds += declared_binds
            elif name == "having" and many:
                for p in self.children(child, "<parameter name=\"n\"> only"):
                    if _local(p) != "parameter" or p.get("name") != "n":
                        raise self.fail(f"{operator} has one parameter, <parameter name=\"n\">"
                                        f", got <{_local(p)}"
                                        + (f" name=\"{p.get('name')}\"" if p.get("name")
                                           else "") + ">", p)
                    if n_el is not None:
                        raise self.fail(f"{operator}'s n is given twice", p)
                    value = self.literal_of(p)
                    n, n_el = self.count(operator, str(value).strip(), p), p
            elif name == "having":
                raise self.fail(f"{operator} has no parameters: <{operator}> holds {allowed}",
                                child)
            else:
                raise self.fail(f"unknown element <{name}> in {operator}: it holds {allowed}",
                                child)
        inner = scope | set(uses) | set(binds)
        args = [self.expression(self.argument(a), inner) for a in arg_els]
        pos = self.pos(el)
        expr: Expression
        if operator == "OR":
            if len(args) < 2:
                raise self.fail(f"OR needs at least 2 arguments, got {len(args)}", el)
            expr = Or(tuple(args), pos=pos)
        elif operator == "SEQ":
            if len(args) != 2:
                raise self.fail(f"SEQ has 2 arguments (left, right), got {len(args)}", el)
            expr = Seq(args[0], args[1], pos=pos)
        else:
            if n is None and operator == "ANY":
                raise self.fail("ANY needs its n: <having><parameter name=\"n\"><literal>2"
                                "</literal></parameter></having>", el)
            if not args:
                raise self.fail(f"{operator} needs at least one argument", el)
            expr = Any(len(args) if n is None else n, tuple(args), pos=pos)
        mentioned = expr.variables
        for b in binds:
            if b not in mentioned:
                raise self.fail(f"output variable {b} is declared 'bind' in {operator} but "
                                "no expression in it binds it", el)
        return expr

    def argument(self, el: etree._Element) -> etree._Element:
        """The ``<expression>`` of an ``<argument><solve>…</solve></argument>``."""
        kids = list(self.children(el, "one <solve>"))
        if len(kids) == 1 and _local(kids[0]) == "expression":
            return kids[0]
        if len(kids) != 1 or _local(kids[0]) != "solve":
            raise self.fail("an <argument> holds one <solve> (with one <expression>), got "
                            + (", ".join(f"<{_local(k)}>" for k in kids) or "nothing"),
                            kids[1] if len(kids) > 1 else kids[0] if kids else el)
        solve = kids[0]
        inner = list(self.children(solve, "one <expression>"))
        if len(inner) != 1:
            raise self.fail(f"a <solve> holds one <expression>, got {len(inner)} elements",
                            inner[1] if len(inner) > 1 else solve)
        return inner[0]

    def count(self, operator: str, text: str, el: etree._Element) -> int:
        if not _INTEGER.match(text.strip()):
            raise self.fail(f"{operator}'s n must be an integer, got {text!r}", el)
        n = int(text)
        if n < 1:
            raise self.fail(f"{operator}'s n must be at least 1, got {n}", el)
        return n

    def atomic(self, el: etree._Element, operator: str, language: str | None,
               scope: frozenset[str]) -> Expression:
        allowed = "<with> and <having>"
        having: etree._Element | None = None
        uses: list[str] = []
        binds: list[str] = []
        for child in self.children(el, allowed):
            name = _local(child)
            if name == "with":
                declared_uses, declared_binds = self.declarations(child)
                uses += declared_uses
                binds += declared_binds
            elif name == "having":
                if having is not None:
                    raise self.fail(f"atomic expression {operator} has one <having>", child)
                having = child
            else:
                raise self.fail(f"unknown element <{name}> in atomic expression {operator}: "
                                f"it holds {allowed}", child)
        visible = scope | set(uses) | set(binds)
        params: list[Param] = []
        seen: set[str] = set()
        bound: set[str] = set()
        params_els = (self.children(having, "<parameter> elements")
                      if having is not None else iter(()))
        for p in params_els:
            pname = p.get("name")
            if _local(p) != "parameter" or not pname:
                raise self.fail("<having> holds <parameter name=...> elements, got "
                                f"<{_local(p)}>", p)
            if pname in seen:
                raise self.fail(f"parameter {pname} of {operator} is given twice", p)
            seen.add(pname)
            var = p.get("bindVar")
            try:
                if var is not None:
                    if any(_local(c) == "literal" for c in p):
                        raise self.fail(f"parameter {pname} has both a bindVar and a <literal>",
                                        p)
                    if var not in visible:
                        raise self.fail(
                            f"parameter {pname}: bindVar {var} is not declared: declare it in "
                            f"a <with> of this expression or of one around it (<Variable "
                            f"name=\"{var}\" mode=\"bind\"/> for an output, mode=\"use\" with a"
                            " <literal> for an input)", p)
                    params.append(Param(pname, Var(var), pos=self.pos(p)))
                    bound.add(var)
                else:
                    params.append(Param(pname, Literal(self.literal_of(p)), pos=self.pos(p)))
            except MarkupError:
                raise
            except XmlEventsError as exc:
                raise self.fail(str(exc), p) from None
        for b in binds:
            if b not in bound:
                raise self.fail(f"output variable {b} is declared 'bind' but no parameter of "
                                f"{operator} binds it (output variables an atomic expression "
                                "never binds)", el)
        try:
            return Atomic(operator, tuple(params), pos=self.pos(el), language=language)
        except XmlEventsError as exc:
            raise self.fail(str(exc), el) from None

    def opaque(self, el: etree._Element, language: str | None, scope: frozenset[str]
               ) -> Expression:
        if not language:
            raise self.fail("an <expression> needs an operator (composite or atomic) or a "
                            "language (opaque: its code in a <literal>)", el)
        allowed = "<with> and one <literal>"
        binds: list[str] = []
        lits: list[etree._Element] = []
        for child in self.children(el, allowed):
            name = _local(child)
            if name == "with":
                binds += self.declarations(child)[1]
            elif name == "literal":
                lits.append(child)
            else:
                raise self.fail(f"unknown element <{name}> in an opaque expression: it holds "
                                f"{allowed}", child)
        if len(lits) != 1:
            raise self.fail("an opaque expression holds its code in one <literal>, got "
                            f"{len(lits)}", lits[1] if len(lits) > 1 else el)
        text = self.literal(lits[0])
        if not isinstance(text, str):
            raise self.fail("an opaque expression's code is text (no type)", lits[0])
        try:
            return Opaque(language, text, tuple(binds), pos=self.pos(el))
        except XmlEventsError as exc:
            raise self.fail(str(exc), el) from None

    # -- variables and literals ------------------------------------------------------------

    def declarations(self, with_: etree._Element) -> tuple[list[str], list[str]]:
        """The ``use`` and ``bind`` variables a ``<with>`` declares; ``use`` values go to the
        inputs, every mode is checked against the other declarations of the name."""
        uses: list[str] = []
        binds: list[str] = []
        for var in self.children(with_, "<Variable> elements"):
            if _local(var) not in _VARIABLE:
                raise self.fail(f"<with> holds <Variable> elements, got <{_local(var)}>", var)
            name = var.get("name")
            mode = var.get("mode")
            if not name:
                raise self.fail("a <Variable> needs a name", var)
            if name in uses or name in binds:
                raise self.fail(f"variable {name} is declared twice in one <with>", var)
            try:
                Var(name)
            except XmlEventsError as exc:
                raise self.fail(str(exc), var) from None
            if mode not in ("use", "bind"):
                raise self.fail(f"variable {name}: mode is 'use' (an input, with a <literal>) "
                                f"or 'bind' (an output), got {mode!r}", var)
            prior = self.modes.get(name)
            if prior is not None and prior[0] != mode:
                raise self.fail(f"variable {name} is declared {mode!r} here and {prior[0]!r} at "
                                f"line {prior[1][0]}, col {prior[1][1]}: a variable is an "
                                "input or an output of the whole expression", var)
            if prior is None:
                self.modes[name] = (mode, self.source.pos(var))
            if mode == "use":
                value = self.literal_of(var)
                given = self.inputs.get(name)
                if given is not None and (given != value or type(given) is not type(value)):
                    raise self.fail(f"variable {name} is given two values: {given!r} and "
                                    f"{value!r}", var)
                self.inputs[name] = value
                uses.append(name)
            else:
                if any(_local(c) == "literal" for c in var):
                    raise self.fail(f"output variable {name} (mode 'bind') has no value: "
                                    "drop the <literal> or declare it 'use'", var)
                binds.append(name)
        return uses, binds

    def literal_of(self, el: etree._Element) -> Value:
        """The value of the one ``<literal>`` in ``el``."""
        what = f"<{_local(el)} name=\"{el.get('name')}\">"
        lits = list(self.children(el, "one <literal>"))
        if len(lits) != 1 or _local(lits[0]) != "literal":
            raise self.fail(f"{what} needs one <literal> with its value, got "
                            + (", ".join(f"<{_local(k)}>" for k in lits) or "none"),
                            lits[0] if len(lits) == 1 else el)
        return self.literal(lits[0])

    def literal(self, lit: etree._Element) -> Value:
        return _literal_value(lit, self.source)


def _literal_value(lit: etree._Element, source: _Source) -> Value:
    if len(lit):
        raise source.fail("a <literal> holds text only (write markup in it as &lt;... or in "
                          "a CDATA section)", lit[0])
    text = lit.text or ""
    kind = lit.get("type", "string")
    if kind == "string":
        return text
    if kind == "number":
        if not _NUMBER.match(text.strip()):
            raise source.fail(f"not a number (a JSON number): {_clip(text)}", lit)
        number = json.loads(text.strip())
        try:
            return check_value(number, "a literal")
        except XmlEventsError as exc:
            raise source.fail(str(exc), lit) from None
    if kind == "boolean" and text.strip() in ("true", "false"):
        return text.strip() == "true"
    raise source.fail(f"a literal's type is string, number or boolean (true/false), got type "
                      f"{kind!r} for {_clip(text)}", lit)


def _clip(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= 40 else text[:37] + "...")


def parse_markup(text: str | bytes) -> Registration:
    """The registration a piece of markup describes (see the module for the markup).

    Raises:
        MarkupError: malformed XML, a DOCTYPE, an unknown element or operator, ANY with n < 1,
            a bindVar naming an undeclared variable, an output variable its atomic expression
            never binds, a use variable without a literal or with two values — with the line
            and column.
    """
    root, source = _load(text)
    reader = _Reader(source)
    expression = reader.expression(root, frozenset())
    try:
        return Registration(expression, reader.inputs)
    except XmlEventsError as exc:  # pragma: no cover - names and values checked as read
        raise source.fail(str(exc), root) from None


# -- writing ---------------------------------------------------------------------------------

def _check_text(value: str, what: str) -> str:
    if not _XML_TEXT.fullmatch(value):
        raise MarkupError(f"{what} {value!r} has characters XML cannot carry; use the text "
                          "form or JSON", line=None, column=None)
    return value


def _add_literal(parent: etree._Element, value: Value, typed: bool = True) -> None:
    lit = etree.SubElement(parent, "literal")
    if isinstance(value, bool):
        lit.set("type", "boolean")
        lit.text = "true" if value else "false"
    elif isinstance(value, int | float):
        if typed:
            lit.set("type", "number")
        lit.text = json.dumps(value)
    else:
        lit.text = _check_text(value, "the value")


def _add_variable(parent: etree._Element, name: str, mode: str, value: Value | None = None
                  ) -> None:
    var = etree.SubElement(parent, "Variable", name=name, mode=mode)
    if value is not None:
        _add_literal(var, value)


def _serialize(root: etree._Element) -> str:
    etree.indent(root)
    return etree.tostring(root, encoding="unicode")


def to_markup(registration: Registration) -> str:
    """The markup of a registration; :func:`parse_markup` gives back an equal one.

    Each atomic expression declares the variables of its parameters (``use`` with the value
    for an input, ``bind`` otherwise); inputs no atomic expression mentions are declared
    ``use`` at the root. An atomic expression whose language is SNOOP-R's is written without
    it (that language names composite operators only).

    Raises:
        MarkupError: a value with characters XML 1.0 cannot carry (use the text form), or an
            opaque expression's output that is also given a value.
    """
    inputs = registration.inputs
    expression = registration.expression
    for node in expression.walk():
        if isinstance(node, Opaque):
            given = sorted(set(node.binds) & set(inputs))
            if given:
                raise MarkupError(f"variable {given[0]} is an output of an opaque expression "
                                  "and is given a value", line=None, column=None)
    unmentioned = [name for name in inputs if name not in expression.variables]
    root: etree._Element | None = None
    # (expression, the <solve> to write it in); iterative over the tree
    stack: list[tuple[Expression, etree._Element | None]] = [(expression, None)]
    while stack:
        expr, parent = stack.pop()
        el = (etree.Element("expression") if parent is None
              else etree.SubElement(parent, "expression"))
        with_: etree._Element | None = None
        if root is None:
            root = el
            if unmentioned:
                with_ = etree.SubElement(el, "with")
                for name in unmentioned:
                    _add_variable(with_, name, "use", inputs[name])
        if isinstance(expr, Atomic):
            el.set("operator", expr.type)
            if expr.language is not None and expr.language != SNOOP_R:
                el.set("language", _check_text(expr.language, "the language"))
            names = [p.term.name for p in expr.params if isinstance(p.term, Var)]
            if names:
                if with_ is None:
                    with_ = etree.SubElement(el, "with")
                for name in dict.fromkeys(names):
                    if name in inputs:
                        _add_variable(with_, name, "use", inputs[name])
                    else:
                        _add_variable(with_, name, "bind")
            if expr.params:
                having = etree.SubElement(el, "having")
                for p in expr.params:
                    pe = etree.SubElement(having, "parameter", name=p.name)
                    if isinstance(p.term, Var):
                        pe.set("bindVar", p.term.name)
                    else:
                        _add_literal(pe, p.term.value)
        elif isinstance(expr, Opaque):
            el.set("language", _check_text(expr.language, "the language"))
            if expr.binds:
                if with_ is None:
                    with_ = etree.SubElement(el, "with")
                for name in expr.binds:
                    _add_variable(with_, name, "bind")
            _add_literal(el, expr.text)
        else:
            children = expr.children
            if isinstance(expr, Or):
                el.set("operator", "OR")
            elif isinstance(expr, Seq):
                el.set("operator", "SEQ")
            else:
                assert isinstance(expr, Any)
                el.set("operator", "ALL" if expr.n >= len(children) else "ANY")
            el.set("language", SNOOP_R)
            if isinstance(expr, Any) and expr.n != len(children):
                having = etree.SubElement(el, "having")
                _add_literal(etree.SubElement(having, "parameter", name="n"), expr.n,
                             typed=False)
            names = (["left", "right"] if len(children) == 2
                     else [f"arg{i + 1}" for i in range(len(children))])
            slots = []
            for name in names:
                arg = etree.SubElement(el, "argument", name=name)
                slots.append(etree.SubElement(arg, "solve"))
            stack.extend(reversed(list(zip(children, slots, strict=True))))
    assert root is not None
    return _serialize(root)


# -- results ---------------------------------------------------------------------------------

def detection_to_xml(detection: Detection) -> str:
    """A notification as a ``<result>`` (see the module); :func:`parse_detection_xml` reads
    it back."""
    root = etree.Element("result", expression=_check_text(detection.expression, "the id"))
    if detection.next is not None:
        root.set("next", _check_text(detection.next, "the id"))
    root.set("tick", str(detection.tick))
    bindings = etree.SubElement(root, "bindings")
    for name, value in detection.bindings.items():
        _add_variable(bindings, name, "bind", value)
    events = etree.SubElement(root, "events")
    for s in detection.events:
        ev = etree.SubElement(events, "expression", operator=_check_text(s.type, "the type"),
                              id=_check_text(s.id, "the id"), tick=str(s.ts))
        if s.time is not None:
            ev.set("time", repr(s.time))
        if s.params:
            having = etree.SubElement(ev, "having")
            for name, value in s.params.items():
                _add_literal(etree.SubElement(having, "parameter",
                                              name=_check_text(name, "the parameter")), value)
    return _serialize(root)


def parse_detection_xml(text: str | bytes) -> Detection:
    """The notification a ``<result>`` (from :func:`detection_to_xml`) describes.

    Raises:
        MarkupError: malformed XML or not a ``<result>`` as :func:`detection_to_xml` writes.
    """
    root, source = _load(text)
    reader = _Reader(source)
    if _local(root) != "result" or root.get("expression") is None:
        raise source.fail("expected <result expression=...>", root)

    def integer(el: etree._Element, attr: str) -> int:
        value = el.get(attr, "")
        if not _INTEGER.match(value):
            raise source.fail(f"{attr} must be an integer, got {value!r}", el)
        return int(value)

    bindings: dict[str, Value] = {}
    signals: list[Signal] = []
    for part in reader.children(root, "<bindings> and <events>"):
        if _local(part) == "bindings":
            for var in reader.children(part, "<Variable> elements"):
                name = var.get("name")
                if _local(var) not in _VARIABLE or not name:
                    raise source.fail("<bindings> holds <Variable name=...> elements", var)
                bindings[name] = reader.literal_of(var)
        elif _local(part) == "events":
            for ev in reader.children(part, "<expression> elements"):
                if _local(ev) != "expression" or ev.get("operator") is None:
                    raise source.fail("<events> holds <expression operator=...> elements", ev)
                params: dict[str, Value] = {}
                for having in reader.children(ev, "one <having>"):
                    if _local(having) != "having":
                        raise source.fail("an event holds one <having>", having)
                    for p in reader.children(having, "<parameter> elements"):
                        pname = p.get("name")
                        if _local(p) != "parameter" or not pname:
                            raise source.fail("<having> holds <parameter name=...> elements", p)
                        params[pname] = reader.literal_of(p)
                time = ev.get("time")
                try:
                    when = None if time is None else float(time)
                except ValueError:
                    raise source.fail(f"time must be a number, got {time!r}", ev) from None
                signals.append(Signal(ev.get("id", ""), ev.get("operator", ""), params,
                                      integer(ev, "tick"), when))
        else:
            raise source.fail(f"unknown element <{_local(part)}> in <result>: it holds "
                              "<bindings> and <events>", part)
    return Detection(root.get("expression", ""), bindings, tuple(signals), root.get("next"),
                     integer(root, "tick"))
