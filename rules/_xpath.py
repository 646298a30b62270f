"""Evaluate simple XPath, conditions and simple XQuery constructors on lxml documents
(seed 002, sections 2.2-2.5).

Each tree is translated once into an XPath 1.0 expression and compiled with
``lxml.etree.XPath``; evaluating it binds XPath variables, so one compiled expression serves
every call:

* ``document('name')`` becomes ``$docN/..``: ``$docN`` is bound, at each call, to the root
  element of the document the *documents* lookup gives for ``name``, and ``..`` climbs to its
  document node, which ``document()`` denotes. Every name a tree uses is looked up before it
  runs, so an unknown name fails the same way whichever branch of an ``or`` would have read
  it (:class:`UnknownDocumentError`, naming the document). Variables rather than an extension
  function: nothing is registered in lxml's global function namespaces, and the lookup is
  per call rather than per process.
* A path is evaluated with a node of its own document as the context node (its root's
  document, or ``$delta``'s): lxml hands back nodes of any other document as copies, and
  ``BELOW e`` and ``DELETE e`` need the nodes themselves. Qualifiers read other documents
  freely, since they only compare.
* ``$delta`` is bound to the instantiation given (section 2.1): an element, or an attribute
  as lxml returns one (a string with ``getparent()`` and ``attrname``). XPath variables
  cannot hold attribute nodes, so for an attribute ``$delta`` is written as the attribute of
  its element with its name, a second compiled variant made on first use.
* ``.`` and ``..`` are written ``self::node()`` and ``parent::node()`` where they carry
  qualifiers (XPath 1.0 has no ``..[q]``); after ``//`` they range over elements, as the
  paper's typing has it (section 2.4: such a step is ``*``): ``a//.`` is
  ``a/descendant-or-self::*``.
* Comparisons keep XPath 1.0's semantics (a node set compares true when some node does);
  string literals with both quotes become ``concat()``.

A condition is XPath's ``boolean()`` of its paths joined by ``and``, ``or``, ``not()``
(section 2.2). A ``BEFORE``/``AFTER`` qualifier is evaluated with a child as the context
node (section 2.3). A constructor builds new lxml elements (section 2.5): an enclosed
expression in an attribute value gives the string values of the nodes it selects, joined by
single spaces; in contents, selected elements are deep-copied in (without their tails), and
attribute values become text.

Namespace prefixes in names resolve through the ``namespaces`` mapping given when compiling
(XPath 1.0 has no default namespace: an unprefixed name is in no namespace).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from lxml import etree

from xmlevents.algebra import ArgumentTypeError, InvalidArgumentError
from xmlevents.dom import xpath_boolean

from . import ast
from ._errors import RuleError, UnknownDocumentError

__all__ = ["SelectedNode", "Documents", "CompiledPath", "CompiledCondition",
           "CompiledQualifier", "CompiledContent", "compile_path", "compile_condition",
           "compile_qualifier", "compile_content", "string_value"]

#: What a path selects: an element, or an attribute as lxml returns it (a ``str`` subclass
#: with ``getparent()``, ``attrname`` and ``is_attribute``).
SelectedNode: TypeAlias = "etree._Element | etree._ElementUnicodeResult"
#: Where ``document('name')`` finds its document: a mapping or a function from names to an
#: lxml element (any of the document), tree, or anything with ``getroot()`` (a watched
#: document); a function signals an unknown name with ``KeyError`` or ``None``.
Documents: TypeAlias = "Mapping[str, Any] | Callable[[str], Any]"

_DELTA_ELEMENT = "$delta"
_DELTA_ATTRIBUTE = "($delta_owner/@*[local-name()=$delta_local and namespace-uri()=$delta_uri])"


def string_value(node: SelectedNode) -> str:
    """The XPath string-value of a selected node: an element's text, an attribute's value."""
    if isinstance(node, etree._Element):
        value = node.xpath("string()")
        assert isinstance(value, str)
        return value
    return str(node)


def _literal(value: str) -> str:
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    parts = value.split("'")
    return "concat(" + ", \"'\", ".join(f"'{p}'" for p in parts) + ")"


class _Translator:
    """Writes trees as XPath 1.0 text; collects the document names, in order."""

    def __init__(self, namespaces: Mapping[str, str], delta: str) -> None:
        self.namespaces = namespaces
        self.delta = delta
        self.documents: dict[str, str] = {}

    def name(self, name: str, step: ast.Step) -> str:
        prefix, colon, _ = name.partition(":")
        if colon and prefix not in self.namespaces:
            line, col = step.pos if step.pos is not None else (None, None)
            known = ", ".join(sorted(self.namespaces)) or "none"
            raise RuleError(f"namespace prefix {prefix!r} of {name} is not bound (bound: "
                            f"{known}); pass namespaces={{{prefix!r}: uri}}", line=line, column=col)
        return name

    def qualifiers(self, qualifiers: tuple[ast.Qualifier, ...]) -> str:
        return "".join(f"[{self.qualifier(q)}]" for q in qualifiers)

    def step(self, step: ast.Step, first_relative: bool) -> str:
        sep = "" if first_relative else step.sep.value
        quals = self.qualifiers(step.qualifiers)
        if step.kind is ast.StepKind.ELEMENT:
            assert step.name is not None
            return f"{sep}{step.name if step.is_wildcard else self.name(step.name, step)}{quals}"
        if step.kind is ast.StepKind.ATTRIBUTE:
            assert step.name is not None
            return f"{sep}@{step.name if step.is_wildcard else self.name(step.name, step)}{quals}"
        descendants = step.sep is ast.Sep.DESCENDANT
        if step.kind is ast.StepKind.SELF:
            if descendants:  # a//. : a and its descendant elements
                return f"/descendant-or-self::*{quals}"
            return f"{sep}{'self::node()' if quals else '.'}{quals}"
        parent = "parent::node()" if quals else ".."
        if descendants:  # a//.. : the parents of a and of its descendant elements
            return f"/descendant-or-self::*/{parent}{quals}"
        return f"{sep}{parent}{quals}"

    def path(self, path: ast.Path) -> str:
        if isinstance(path.root, ast.Document):
            var = self.documents.setdefault(path.root.name, f"doc{len(self.documents)}")
            text = f"${var}/.."
        elif isinstance(path.root, ast.Delta):
            text = self.delta + self.qualifiers(path.root.qualifiers)
        else:
            text = ""
        return text + "".join(self.step(s, i == 0 and path.root is None)
                              for i, s in enumerate(path.steps))

    def qualifier(self, node: ast.Qualifier | ast.Operand) -> str:
        if isinstance(node, ast.Path):
            return self.path(node)
        if isinstance(node, ast.Literal):
            return _literal(node.value)
        if isinstance(node, ast.Number):
            return format(node.value, "f")
        if isinstance(node, ast.Compare):
            return f"{self.qualifier(node.left)} {node.op.value} {self.qualifier(node.right)}"
        word = " and " if isinstance(node, ast.QAnd) else " or "
        return "(" + word.join(self.qualifier(q) for q in node.items) + ")"

    def condition(self, node: ast.Condition) -> str:
        if isinstance(node, ast.TrueCondition):
            return "true()"
        if isinstance(node, ast.Path):
            return f"boolean({self.path(node)})"
        if isinstance(node, ast.Not):
            return f"not({self.condition(node.item)})"
        word = " and " if isinstance(node, ast.And) else " or "
        return "(" + word.join(self.condition(c) for c in node.items) + ")"


def _check_namespaces(namespaces: Mapping[str, str] | None) -> dict[str, str]:
    found = dict(namespaces or {})
    for prefix, uri in found.items():
        if not isinstance(prefix, str) or not prefix:
            raise InvalidArgumentError(f"namespaces: prefix {prefix!r}; XPath 1.0 has no default "
                                       "namespace, bind a prefix and use it in the names")
        if not isinstance(uri, str) or not uri:
            raise InvalidArgumentError(f"namespaces: {prefix!r} -> {uri!r}; give a URI")
    return found


def _document_root(documents: Documents, name: str) -> etree._Element:
    if isinstance(documents, Mapping):
        if name not in documents:
            raise UnknownDocumentError(name, documents.keys())
        doc = documents[name]
    else:
        try:
            doc = documents(name)
        except KeyError:
            raise UnknownDocumentError(name) from None
        if doc is None:
            raise UnknownDocumentError(name)
    if isinstance(doc, etree._Element):
        return doc.getroottree().getroot()
    getroot = getattr(doc, "getroot", None)
    root = getroot() if callable(getroot) else None
    if not isinstance(root, etree._Element):
        raise ArgumentTypeError(f"document {name!r} is {doc!r}; give an lxml element or tree, "
                                "or a watched document")
    return root


def _is_attribute(value: object) -> bool:
    return isinstance(value, etree._ElementUnicodeResult) and bool(value.is_attribute)


class _Compiled:
    """One translated tree, compiled for an element ``$delta`` now and for an attribute
    ``$delta`` when first needed; binds the variables of each call."""

    def __init__(self, what: str, node: ast.Node, namespaces: Mapping[str, str] | None,
                 translate: Callable[[_Translator, Any], str]) -> None:
        self.node = node
        self.namespaces = _check_namespaces(namespaces)
        self.uses_delta = any(isinstance(n, ast.Delta) for n in ast.walk(node))
        self._translate = translate
        self._what = what
        translator = _Translator(self.namespaces, _DELTA_ELEMENT)
        #: The XPath 1.0 text for an element ``$delta`` (for the curious and for tests).
        self.xpath = translate(translator, node)
        self.documents = tuple(translator.documents)
        self._variables = tuple(translator.documents.values())
        self._element = self._compile(self.xpath)
        self._attribute: etree.XPath | None = None

    def _compile(self, text: str) -> etree.XPath:
        try:
            return etree.XPath(text, namespaces=self.namespaces, smart_strings=True)
        except etree.XPathError as exc:  # pragma: no cover - a translation bug, not input
            raise RuleError(f"{self._what} {self.node}: lxml refused {text!r}: {exc}") from None

    def run(self, documents: Documents, delta: Any, context: etree._Element | None,
            home: str | None = None) -> Any:
        """Evaluate with ``context`` as the context node or else the root of document
        ``home`` or else ``$delta``'s element.

        lxml returns a node of a document other than the context node's as a copy, so a
        path is evaluated from its own document: its root's (``home``), or ``$delta``'s.
        """
        variables: dict[str, Any] = {var: _document_root(documents, name)
                                     for name, var in zip(self.documents, self._variables,
                                                          strict=True)}
        if context is None and home is not None:
            context = variables[self._variables[self.documents.index(home)]]
        xpath = self._element
        if self.uses_delta:
            if delta is None:
                raise InvalidArgumentError(f"{self._what} {self.node} uses $delta; pass "
                                           "delta=, the node the event selected")
            if isinstance(delta, etree._Element):
                variables["delta"] = delta
                owner = delta
            elif _is_attribute(delta):
                owner = delta.getparent()
                local = etree.QName(delta.attrname)
                variables.update(delta_owner=owner, delta_local=local.localname,
                                 delta_uri=local.namespace or "")
                if self._attribute is None:
                    self._attribute = self._compile(self._translate(
                        _Translator(self.namespaces, _DELTA_ATTRIBUTE), self.node))
                xpath = self._attribute
            else:
                raise ArgumentTypeError(f"delta={delta!r}; $delta is an element or an attribute "
                                        "as lxml selects one")
            context = context if context is not None else owner
        if context is None:
            context = next(iter(variables.values()))
        try:
            return xpath(context, **variables)
        except etree.XPathError as exc:  # pragma: no cover - a translation bug, not input
            raise RuleError(f"{self._what} {self.node}: {exc} (lxml)") from None


def _selected(result: Any) -> list[SelectedNode]:
    out: list[SelectedNode] = []
    for item in result:
        if ((isinstance(item, etree._Element) and isinstance(item.tag, str))
                or _is_attribute(item)):
            out.append(item)
    return out


class CompiledPath:
    """A simple XPath expression ``e`` ready to run; :meth:`__call__` gives what it selects.

    Attributes:
        path: the tree.
        xpath: its XPath 1.0 text (``$delta`` an element).
        documents: the document names it reads, in text order.
        uses_delta: whether it needs ``delta=``.
    """

    __slots__ = ("_compiled", "documents", "path", "uses_delta", "xpath")

    def __init__(self, path: ast.Path, namespaces: Mapping[str, str] | None = None) -> None:
        if not isinstance(path, ast.Path) or not path.absolute:
            raise InvalidArgumentError(f"compile_path: {path!r} is not a simple XPath expression "
                                       "starting with document('name') or $delta")
        self.path = path
        self._compiled = _Compiled("path", path, namespaces, _Translator.path)
        self.xpath = self._compiled.xpath
        self.documents = self._compiled.documents
        self.uses_delta = self._compiled.uses_delta

    def __call__(self, documents: Documents, delta: SelectedNode | None = None
                 ) -> list[SelectedNode]:
        """The elements and attributes selected (the nodes themselves), in document order.

        Raises:
            UnknownDocumentError: for a ``document('name')`` the lookup does not know.
            InvalidArgumentError: if the path uses ``$delta`` and none is given.
        """
        root = self.path.root
        home = root.name if isinstance(root, ast.Document) else None
        return _selected(self._compiled.run(documents, delta, None, home))

    def elements(self, documents: Documents, delta: SelectedNode | None = None
                 ) -> list[etree._Element]:
        """The elements selected (the nodes ``BELOW e`` inserts under, section 2.3)."""
        return [n for n in self(documents, delta) if isinstance(n, etree._Element)]

    def strings(self, documents: Documents, delta: SelectedNode | None = None) -> list[str]:
        """The string values of the nodes selected."""
        return [string_value(n) for n in self(documents, delta)]

    def boolean(self, documents: Documents, delta: SelectedNode | None = None) -> bool:
        """Whether it selects anything (XPath ``boolean()``, as a condition reads it)."""
        return bool(self(documents, delta))

    def __repr__(self) -> str:
        return f"CompiledPath({str(self.path)!r})"


class CompiledCondition:
    """A condition (section 2.2) ready to run: :meth:`__call__` gives True or False."""

    __slots__ = ("_compiled", "condition", "documents", "uses_delta", "xpath")

    def __init__(self, condition: ast.Condition,
                 namespaces: Mapping[str, str] | None = None) -> None:
        self.condition = condition
        self._compiled = _Compiled("condition", condition, namespaces, _Translator.condition)
        self.xpath = self._compiled.xpath
        self.documents = self._compiled.documents
        self.uses_delta = self._compiled.uses_delta

    def __call__(self, documents: Documents, delta: SelectedNode | None = None) -> bool:
        """The condition's truth on the documents (and the ``$delta`` instantiation).

        Raises:
            UnknownDocumentError: for a ``document('name')`` the lookup does not know.
            InvalidArgumentError: if the condition uses ``$delta`` and none is given.
        """
        if isinstance(self.condition, ast.TrueCondition):
            return True
        return xpath_boolean(self._compiled.run(documents, delta, None))

    def __repr__(self) -> str:
        return f"CompiledCondition({str(self.condition)!r})"


class CompiledQualifier:
    """The ``q`` of ``BEFORE q``/``AFTER q`` (or ``TRUE``), tested on one child at a time."""

    __slots__ = ("_compiled", "test", "uses_delta")

    def __init__(self, test: ast.TrueCondition | ast.Qualifier,
                 namespaces: Mapping[str, str] | None = None) -> None:
        self.test = test
        self._compiled = (None if isinstance(test, ast.TrueCondition) else _Compiled(
            "qualifier", test, namespaces, lambda t, q: f"boolean({t.qualifier(q)})"))
        self.uses_delta = self._compiled is not None and self._compiled.uses_delta

    def __call__(self, node: etree._Element, documents: Documents,
                 delta: SelectedNode | None = None) -> bool:
        """Whether the qualifier holds with ``node`` (a child) as the context node."""
        if self._compiled is None:
            return True
        return xpath_boolean(self._compiled.run(documents, delta, node))

    def __repr__(self) -> str:
        return f"CompiledQualifier({str(self.test)!r})"


def _clark(name: str, namespaces: Mapping[str, str], where: ast.Node) -> tuple[str, str | None]:
    """``{uri}local`` for a QName, and its prefix (None without one)."""
    prefix, colon, local = name.partition(":")
    if not colon:
        return name, None
    if prefix not in namespaces:
        line, col = where.pos if where.pos is not None else (None, None)
        raise RuleError(f"namespace prefix {prefix!r} of {name} is not bound; pass "
                        f"namespaces={{{prefix!r}: uri}}", line=line, column=col)
    return f"{{{namespaces[prefix]}}}{local}", prefix


class _ElementPlan:
    """An element constructor with its names resolved and its enclosed paths compiled."""

    def __init__(self, element: ast.Element, namespaces: dict[str, str]) -> None:
        self.tag, prefix = _clark(element.name, namespaces, element)
        nsmap = {prefix: namespaces[prefix]} if prefix else {}
        self.attributes: list[tuple[str, str | CompiledPath]] = []
        for attribute in element.attributes:
            name, attr_prefix = _clark(attribute.name, namespaces, attribute)
            if attr_prefix:
                nsmap[attr_prefix] = namespaces[attr_prefix]
            value = attribute.value
            self.attributes.append((name, value if isinstance(value, str)
                                    else CompiledPath(value, namespaces)))
        self.nsmap = nsmap
        self.contents: list[str | _ElementPlan | CompiledPath] = [
            item if isinstance(item, str)
            else _ElementPlan(item, namespaces) if isinstance(item, ast.Element)
            else CompiledPath(item, namespaces)
            for item in element.contents]

    def build(self, documents: Documents, delta: SelectedNode | None) -> etree._Element:
        element = etree.Element(self.tag, nsmap=self.nsmap or None)
        for name, value in self.attributes:
            element.set(name, value if isinstance(value, str)
                        else " ".join(value.strings(documents, delta)))
        for item in self.contents:
            if isinstance(item, str):
                _append(element, item)
            elif isinstance(item, _ElementPlan):
                element.append(item.build(documents, delta))
            else:
                for part in _copies(item(documents, delta)):
                    if isinstance(part, str):
                        _append(element, part)
                    else:
                        element.append(part)
        return element


def _append(element: etree._Element, text: str) -> None:
    """Add text at the end of ``element``'s content."""
    if len(element):
        last = element[-1]
        last.tail = (last.tail or "") + text
    else:
        element.text = (element.text or "") + text


def _copies(selected: list[SelectedNode]) -> list[etree._Element | str]:
    """Deep copies of selected elements (tails left behind); attribute values, as text,
    adjacent ones joined by a space."""
    out: list[etree._Element | str] = []
    for node in selected:
        if isinstance(node, etree._Element):
            duplicate = copy.deepcopy(node)
            duplicate.tail = None
            out.append(duplicate)
        elif out and isinstance(out[-1], str):
            out[-1] += " " + str(node)
        else:
            out.append(str(node))
    return out


class CompiledContent:
    """The ``r`` of ``INSERT r`` (section 2.5) ready to run: :meth:`__call__` gives the new
    sub-documents, lxml elements not yet in any document, and strings (text)."""

    __slots__ = ("_path", "_plan", "content", "uses_delta")

    def __init__(self, content: ast.Content, namespaces: Mapping[str, str] | None = None) -> None:
        self.content = content
        checked = _check_namespaces(namespaces)
        self._path = CompiledPath(content, checked) if isinstance(content, ast.Path) else None
        self._plan = _ElementPlan(content, checked) if isinstance(content, ast.Element) else None
        if self._path is None and self._plan is None:
            raise ArgumentTypeError(f"compile_content: {content!r} is not a Path or an Element")
        self.uses_delta = any(isinstance(n, ast.Delta) for n in ast.walk(content))

    def __call__(self, documents: Documents, delta: SelectedNode | None = None
                 ) -> list[etree._Element | str]:
        """New elements (and text) to insert; a path's elements are deep copies.

        Raises:
            UnknownDocumentError: for a ``document('name')`` the lookup does not know.
            InvalidArgumentError: if the content uses ``$delta`` and none is given.
        """
        if self._plan is not None:
            if self.uses_delta and delta is None:
                raise InvalidArgumentError(f"content {self.content} uses $delta; pass delta=, "
                                           "the node the event selected")
            return [self._plan.build(documents, delta)]
        assert self._path is not None
        return _copies(self._path(documents, delta))

    def __repr__(self) -> str:
        return f"CompiledContent({str(self.content)!r})"


def compile_path(path: ast.Path | str, namespaces: Mapping[str, str] | None = None
                 ) -> CompiledPath:
    """Compile a simple XPath expression (a tree or its text) for evaluation.

    Raises:
        RuleSyntaxError: for text that does not parse.
        RuleError: for a prefix ``namespaces`` does not bind.

    >>> from lxml import etree
    >>> s = etree.fromstring("<stores><store id='s1'><product id='p1'/></store></stores>")
    >>> product = compile_path("document('s.xml')//product")({"s.xml": s})[0]
    >>> compile_path("$delta/../@id").strings({"s.xml": s}, product)
    ['s1']
    """
    if isinstance(path, str):
        from ._parser import parse_path

        path = parse_path(path)
    return CompiledPath(path, namespaces)


def compile_condition(condition: ast.Condition | str,
                      namespaces: Mapping[str, str] | None = None) -> CompiledCondition:
    """Compile a condition (a tree or its text) for evaluation.

    Raises:
        RuleSyntaxError: for text that does not parse.
        RuleError: for a prefix ``namespaces`` does not bind.
    """
    if isinstance(condition, str):
        from ._parser import parse_condition

        condition = parse_condition(condition)
    return CompiledCondition(condition, namespaces)


def compile_qualifier(test: ast.TrueCondition | ast.Qualifier,
                      namespaces: Mapping[str, str] | None = None) -> CompiledQualifier:
    """Compile the qualifier of ``BEFORE q``/``AFTER q`` (an :class:`~.ast.Position`'s
    ``test``) for evaluation on each child.

    Raises:
        RuleError: for a prefix ``namespaces`` does not bind.
    """
    return CompiledQualifier(test, namespaces)


def compile_content(content: ast.Content, namespaces: Mapping[str, str] | None = None
                    ) -> CompiledContent:
    """Compile the content of an ``INSERT`` (a path or an element constructor).

    Raises:
        RuleError: for a prefix ``namespaces`` does not bind.

    >>> from lxml import etree
    >>> from xmlevents.rules import parse_action
    >>> s = etree.fromstring("<stores><store id='s1'><product id='p1'/></store></stores>")
    >>> insert = parse_action("INSERT <store id='{$delta/../@id}'/> BELOW $delta")
    >>> [etree.tostring(e) for e in compile_content(insert.content)({}, s[0][0])]
    [b'<store id="s1"/>']
    """
    return CompiledContent(content, namespaces)
