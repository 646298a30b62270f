"""The R3-style XML markup of expressions and results (seed 001, sections 2.3 and 3.3).

Reconstructed from section 2.3's prose and example (the extraction lost the ``<literal>`` tags:
its ``teral>`` is ``<literal>``)::

    <expression operator="OR" language="http://snoop-r.org">           composite: OR, SEQ,
      <argument name="left"><solve> expression </solve></argument>      ANY, ALL
      <argument name="right"><solve> expression </solve></argument>
    </expression>

    <expression operator="newBook" language="http://ecommerce.com">    atomic
      <with>
        <Variable name="X" mode="use"><literal>HTML in 21 days</literal></Variable>
        <Variable name="T" mode="bind"/>
      </with>
      <having>
        <parameter name="title" bindVar="X"/>
        <parameter name="author"><literal>Dan Brown</literal></parameter>
      </having>
    </expression>

    <expression language="http://languages.org/prolog">                  opaque (no operator)
      <with><Variable name="L" mode="bind"/></with>
      <literal> ?- newCD(ListOfCDs), member(cd(myCD), ListOfCDs). </literal>
    </expression>

Decisions where the paper is silent: the arguments of ``OR`` and ``ANY`` are taken in document
order whatever their names (``left``/``right`` are written for two, ``arg1``... for more); ``SEQ``
has exactly two; ``ANY``'s ``n`` is a parameter ``<parameter name="n"><literal>2</literal>
</parameter>`` in a ``<having>`` (``ALL`` needs none); the markup has no types, so literals are
strings unless ``type="number"`` or ``type="boolean"`` says otherwise; a composite's language is
``http://snoop-r.org`` (another language with an SNOOP-R operator name is an atomic event).
``use`` variables of every expression are the registration's inputs (one value each); ``bind``
declarations must be bound by a parameter of their atomic expression.

A result (section 3.3: the bindings, the contributing events, the next evaluation id)::

    <result expression="e1" next="e1" tick="3">
      <bindings><Variable name="T" mode="bind"><literal>Boy</literal></Variable></bindings>
      <events>
        <event operator="newCD" id="s1" tick="1">
          <parameter name="title"><literal>Boy</literal></parameter> ...
        </event> ...
      </events>
    </result>
"""

from __future__ import annotations

import re

from lxml import etree

from xmlevents.algebra import XmlEventsError

from ._engine import Detection
from ._errors import MarkupError
from .ast import (
    Any,
    Atomic,
    Expression,
    Literal,
    Opaque,
    Or,
    Param,
    Registration,
    Seq,
    Value,
    Var,
)

__all__ = ["SNOOP_R", "parse_markup", "to_markup", "detection_to_xml"]

#: The language URI of SNOOP-R's composite expressions (section 2.3's example).
SNOOP_R = "http://snoop-r.org"
_OPERATORS = ("OR", "SEQ", "ANY", "ALL")
# The characters of XML 1.0 (section 2.2 of the XML recommendation).
_XML_TEXT = re.compile("[\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")
_MAX_BYTES = 10 * 1024 * 1024


def _parser() -> etree.XMLParser:
    # No entities, no DTD, no network: a registration is untrusted input.
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           huge_tree=False, remove_comments=True, remove_pis=True)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.inputs: dict[str, Value] = {}

    def fail(self, reason: str, el: etree._Element | None = None) -> MarkupError:
        line = el.sourceline if el is not None and el.sourceline else None
        col = 1 if line is not None else None
        return MarkupError(reason, text=self.text if line else "", line=line, col=col)

    def children(self, el: etree._Element) -> list[etree._Element]:
        out = []
        for child in el:
            if not isinstance(child.tag, str):
                continue
            out.append(child)
        return out

    def expression(self, el: etree._Element) -> Expression:
        # Iterative over nested <expression>s would need an explicit stack; the depth is
        # bounded by lxml's own nesting limit (256 without huge_tree), far below Python's.
        if _local(el) != "expression":
            raise self.fail(f"expected <expression>, got <{_local(el)}>", el)
        operator = el.get("operator")
        language = el.get("language")
        pos = (el.sourceline or 0, 1) if el.sourceline else None
        if operator is None:
            return self.opaque(el, language, pos)
        if operator in _OPERATORS and (language in (None, SNOOP_R)):
            return self.composite(el, operator, pos)
        if operator.upper() in _OPERATORS and language in (None, SNOOP_R):
            raise self.fail(f"unknown operator {operator!r}: SNOOP-R's are "
                            f"{', '.join(_OPERATORS)} (upper case)", el)
        return self.atomic(el, operator, language, pos)

    def composite(self, el: etree._Element, operator: str,
                  pos: tuple[int, int] | None) -> Expression:
        args: list[Expression] = []
        n: int | None = None
        for child in self.children(el):
            name = _local(child)
            if name == "argument":
                solves = self.children(child)
                if len(solves) != 1 or _local(solves[0]) != "solve":
                    raise self.fail("an <argument> holds one <solve>", child)
                inner = self.children(solves[0])
                if len(inner) != 1:
                    raise self.fail("a <solve> holds one <expression>", solves[0])
                args.append(self.expression(inner[0]))
            elif name == "having" and operator in ("ANY", "ALL"):
                for p in self.children(child):
                    if _local(p) != "parameter" or p.get("name") != "n":
                        raise self.fail(f"{operator} has one parameter, n", p)
                    value = self.literal_of(p)
                    try:
                        n = int(str(value))
                    except ValueError:
                        raise self.fail(f"{operator}'s n must be an integer, got {value!r}",
                                        p) from None
                    if n < 1:
                        raise self.fail(f"{operator}'s n must be at least 1, got {n}", p)
            elif name == "with":
                raise self.fail(f"variables are declared with atomic and opaque expressions, "
                                f"not with {operator}", child)
            else:
                raise self.fail(f"unexpected <{name}> in {operator}: expected <argument>"
                                + (" or <having>" if operator in ("ANY", "ALL") else ""), child)
        try:
            if operator == "OR":
                if len(args) < 2:
                    raise self.fail("OR needs at least 2 arguments", el)
                return Or(tuple(args), pos=pos)
            if operator == "SEQ":
                if len(args) != 2:
                    raise self.fail(f"SEQ has 2 arguments (left, right), got {len(args)}", el)
                return Seq(args[0], args[1], pos=pos)
            if operator == "ANY" and n is None:
                raise self.fail("ANY needs its n: <having><parameter name=\"n\"><literal>2"
                                "</literal></parameter></having>", el)
            if not args:
                raise self.fail(f"{operator} needs at least one argument", el)
            return Any(len(args) if n is None else n, tuple(args), pos=pos)
        except MarkupError:
            raise
        except XmlEventsError as exc:
            raise self.fail(str(exc), el) from None

    def declarations(self, el: etree._Element) -> tuple[list[str], etree._Element | None]:
        """The ``bind`` variables declared in ``el``'s ``<with>`` (``use`` ones go to the
        inputs), and its ``<having>``."""
        binds: list[str] = []
        having = None
        for child in self.children(el):
            name = _local(child)
            if name == "with":
                for var in self.children(child):
                    if _local(var) != "Variable":
                        raise self.fail(f"<with> holds <Variable> elements, got <{_local(var)}>",
                                        var)
                    vname = var.get("name")
                    mode = var.get("mode")
                    if not vname:
                        raise self.fail("a <Variable> needs a name", var)
                    if mode == "use":
                        value = self.literal_of(var)
                        prior = self.inputs.get(vname)
                        if prior is not None and prior != value:
                            raise self.fail(f"variable {vname} is given two values: "
                                            f"{prior!r} and {value!r}", var)
                        self.inputs[vname] = value
                    elif mode == "bind":
                        binds.append(vname)
                    else:
                        raise self.fail(f"variable {vname}: mode is 'use' or 'bind', got "
                                        f"{mode!r}", var)
            elif name == "having":
                having = child
        return binds, having

    def literal_of(self, el: etree._Element) -> Value:
        lits = [c for c in self.children(el) if _local(c) == "literal"]
        if len(lits) != 1:
            raise self.fail(f"<{_local(el)} name=\"{el.get('name')}\"> needs one <literal> "
                            "with its value", el)
        lit = lits[0]
        text = lit.text or ""
        kind = lit.get("type", "string")
        if kind == "string":
            return text
        if kind == "number":
            try:
                number = float(text)
            except ValueError:
                raise self.fail(f"not a number: {text!r}", lit) from None
            return int(number) if number.is_integer() and "." not in text else number
        if kind == "boolean" and text.strip() in ("true", "false"):
            return text.strip() == "true"
        raise self.fail(f"a literal's type is string, number or boolean (true/false), got "
                        f"{kind!r} for {text!r}", lit)

    def atomic(self, el: etree._Element, operator: str, language: str | None,
               pos: tuple[int, int] | None) -> Expression:
        binds, having = self.declarations(el)
        params: list[Param] = []
        bound: set[str] = set()
        for child in self.children(el):
            if _local(child) not in ("with", "having"):
                raise self.fail(f"unexpected <{_local(child)}> in atomic expression "
                                f"{operator}: expected <with> and <having>", child)
        for p in self.children(having) if having is not None else []:
            if _local(p) != "parameter" or not p.get("name"):
                raise self.fail("<having> holds <parameter name=...> elements", p)
            var = p.get("bindVar")
            try:
                if var is not None:
                    if var not in binds and var not in self.inputs:
                        raise self.fail(f"parameter {p.get('name')}: bindVar {var} is not "
                                        "declared in <with>", p)
                    params.append(Param(str(p.get("name")), Var(var)))
                    bound.add(var)
                else:
                    params.append(Param(str(p.get("name")), Literal(self.literal_of(p))))
            except MarkupError:
                raise
            except XmlEventsError as exc:
                raise self.fail(str(exc), p) from None
        unbound = [b for b in binds if b not in bound]
        if unbound:
            raise self.fail(f"output variable {unbound[0]} is declared 'bind' but no parameter "
                            f"of {operator} binds it", el)
        try:
            return Atomic(operator, tuple(params), pos=pos, language=language)
        except XmlEventsError as exc:
            raise self.fail(str(exc), el) from None

    def opaque(self, el: etree._Element, language: str | None,
               pos: tuple[int, int] | None) -> Expression:
        if not language:
            raise self.fail("an opaque expression (no operator) needs its language's URI", el)
        binds, having = self.declarations(el)
        if having is not None:
            raise self.fail("an opaque expression has no <having>", having)
        lits = [c for c in self.children(el) if _local(c) == "literal"]
        if len(lits) != 1:
            raise self.fail("an opaque expression holds its text in one <literal>", el)
        try:
            return Opaque(language, lits[0].text or "", tuple(binds), pos=pos)
        except XmlEventsError as exc:
            raise self.fail(str(exc), el) from None


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def parse_markup(text: str | bytes) -> Registration:
    """The registration a piece of markup describes (see the module).

    Raises:
        MarkupError: malformed XML, an unknown element or operator, ANY with n < 1, a bindVar
            or output variable not declared or never bound, with its line.
    """
    if isinstance(text, str):
        data = text.encode("utf-8", "surrogatepass")
        shown = text
    else:
        data = text
        shown = text.decode("utf-8", "replace")
    if len(data) > _MAX_BYTES:
        raise MarkupError(f"the markup is over {_MAX_BYTES:,} bytes", line=None, col=None)
    reader = _Reader(shown)
    if b"<!ENTITY" in data or b"<!DOCTYPE" in data:
        raise MarkupError("a DOCTYPE is not accepted in markup (no entities, no DTD)",
                          text=shown, line=1, col=1)
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        line, col = exc.position if exc.position else (1, 1)
        raise MarkupError(f"not well-formed XML: {exc.msg}", text=shown, line=line or 1,
                          col=(col or 0) + 1) from None
    except ValueError as exc:
        raise MarkupError(f"not well-formed XML: {exc}", line=None, col=None) from None
    expression = reader.expression(root)
    try:
        return Registration(expression, reader.inputs)
    except XmlEventsError as exc:
        raise MarkupError(str(exc), line=None, col=None) from None


def _literal(parent: etree._Element, value: Value) -> None:
    if isinstance(value, str) and not _XML_TEXT.fullmatch(value):
        raise MarkupError(f"the value {value!r} has characters XML cannot carry; use the "
                          "text form or JSON", line=None, col=None)
    lit = etree.SubElement(parent, "literal")
    if isinstance(value, bool):
        lit.set("type", "boolean")
        lit.text = "true" if value else "false"
    elif isinstance(value, int | float):
        lit.set("type", "number")
        lit.text = repr(value)
    else:
        lit.text = value


def _variable(parent: etree._Element, name: str, mode: str, value: Value | None = None
              ) -> None:
    var = etree.SubElement(parent, "Variable", name=name, mode=mode)
    if value is not None:
        _literal(var, value)


def to_markup(registration: Registration) -> str:
    """The markup of a registration; :func:`parse_markup` gives back an equal one."""
    inputs = registration.inputs
    root: etree._Element | None = None
    # (expression, parent element to append to); iterative over the tree
    stack: list[tuple[Expression, etree._Element | None]] = [(registration.expression, None)]
    while stack:
        expr, parent = stack.pop()
        el = (etree.Element("expression") if parent is None
              else etree.SubElement(parent, "expression"))
        if root is None:
            root = el
        if isinstance(expr, Atomic):
            el.set("operator", expr.type)
            if expr.language is not None:
                el.set("language", expr.language)
            names = [p.term.name for p in expr.params if isinstance(p.term, Var)]
            if names:
                with_ = etree.SubElement(el, "with")
                for name in dict.fromkeys(names):
                    if name in inputs:
                        _variable(with_, name, "use", inputs[name])
                    else:
                        _variable(with_, name, "bind")
            if expr.params:
                having = etree.SubElement(el, "having")
                for p in expr.params:
                    pe = etree.SubElement(having, "parameter", name=p.name)
                    if isinstance(p.term, Var):
                        pe.set("bindVar", p.term.name)
                    else:
                        _literal(pe, p.term.value)
        elif isinstance(expr, Opaque):
            el.set("language", expr.language)
            if expr.binds:
                with_ = etree.SubElement(el, "with")
                for name in expr.binds:
                    _variable(with_, name, "bind")
            _literal(el, expr.text)
        else:
            el.set("language", SNOOP_R)
            if isinstance(expr, Or):
                el.set("operator", "OR")
            elif isinstance(expr, Seq):
                el.set("operator", "SEQ")
            else:
                assert isinstance(expr, Any)
                el.set("operator", "ANY")
                having = etree.SubElement(el, "having")
                _literal(etree.SubElement(having, "parameter", name="n"), expr.n)
            children = expr.children
            names = (["left", "right"] if len(children) == 2
                     else [f"arg{i + 1}" for i in range(len(children))])
            slots = []
            for name in names:
                arg = etree.SubElement(el, "argument", name=name)
                slots.append(etree.SubElement(arg, "solve"))
            stack.extend(reversed(list(zip(children, slots, strict=True))))
    assert root is not None
    etree.indent(root)
    return etree.tostring(root, encoding="unicode")


def detection_to_xml(detection: Detection) -> str:
    """A notification as a ``<result>`` (see the module)."""
    root = etree.Element("result", expression=detection.expression, tick=str(detection.tick))
    if detection.next is not None:
        root.set("next", detection.next)
    bindings = etree.SubElement(root, "bindings")
    for name, value in detection.bindings.items():
        _variable(bindings, name, "bind", value)
    events = etree.SubElement(root, "events")
    for s in detection.events:
        ev = etree.SubElement(events, "event", operator=s.type, id=s.id, tick=str(s.ts))
        if s.time is not None:
            ev.set("time", repr(s.time))
        for name, value in s.params.items():
            _literal(etree.SubElement(ev, "parameter", name=name), value)
    etree.indent(root)
    return etree.tostring(root, encoding="unicode")

