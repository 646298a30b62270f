"""Result types of simple XPath and simple XQuery, and *may satisfy* (seed 002, section 2.5).

* :func:`result_type` — the simple type of an XPath expression (section 2.4): ``string`` when
  it selects attributes, an element name ``n``, or ``*``. Computed from the labels the
  path's automaton (:mod:`._paths`) can end with, which agrees with the paper's modified
  distinguished path (Example 3) and stays an over-approximation where that rewriting is
  not (``p//.``).
* :func:`content_type` — the tree ``type(r)`` of an ``INSERT``'s content (section 2.5): an
  element constructor gives its own tree; an enclosed expression ``{e}`` in contents gives a
  node ``n//*`` or ``*//*`` (the root of an arbitrary copied subtree) or ``string``, in an
  attribute value ``string``. Example 4: ``<store id='{$delta/../@id}'/>`` is
  ``store(@id(string))``.
* :func:`may_match` — *type(r) may satisfy e''* (section 2.5), used for the suffix of an
  event path matched inside an inserted tree (section 3.1.1, Example 5). A qualifier is
  checked only where the tree decides it (a downward relative path, a comparison of such
  paths); anything else (``..``, another document, ``$delta``) may hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ast
from ._paths import ANY_ATTR, ANY_ELEM, Label, Nfa, path_nfa

__all__ = ["TypeNode", "result_type", "content_type", "may_match", "append_type"]


@dataclass(frozen=True, slots=True)
class TypeNode:
    """A node of ``type(r)``: ``kind`` is ``"elem"`` (name ``n`` or None for ``*``),
    ``"attr"`` (``@n``), ``"string"``, or ``"subtree"`` (``n//*`` / ``*//*``: an element
    named ``name`` (None: any) with an arbitrary subtree). ``expr`` keeps the enclosed
    expression a ``string`` node came from (section 3.2.2's stronger *satisfies*)."""

    kind: str
    name: str | None = None
    children: tuple[TypeNode, ...] = ()
    expr: ast.Path | None = None

    def __str__(self) -> str:
        name = "*" if self.name is None else self.name
        head = {"elem": name, "attr": f"@{name}", "string": "string",
                "subtree": f"{name}//*"}[self.kind]
        return head + "".join(f"({child})" for child in self.children)


def result_type(path: ast.Path, delta: Nfa | None) -> str:
    """``type(e)`` (section 2.4): ``"string"``, an element name, or ``"*"``.

    >>> from xmlevents.rules import parse_path
    >>> event = path_nfa(parse_path("document('g.xml')/guide/restaurant/entree/ingredient"), None)
    >>> result_type(parse_path("$delta[.='Mushroom']"), event)
    'ingredient'
    """
    labels, _ = path_nfa(path, delta).last_labels()
    if labels and all(label.kind == "attr" for label in labels):
        return "string"
    names = {label.name for label in labels if label.kind == "elem"}
    if len(names) == 1 and all(label.kind == "elem" for label in labels):
        (name,) = names
        if name is not None:
            return name
    return "*"


def _enclosed(path: ast.Path, delta: Nfa | None, in_attribute: bool) -> TypeNode:
    kind = result_type(path, delta)
    if in_attribute or kind == "string":
        return TypeNode("string", expr=path)
    return TypeNode("subtree", None if kind == "*" else kind)


def content_type(content: ast.Content, delta: Nfa | None) -> TypeNode:
    """``type(r)`` of an ``INSERT``'s content (section 2.5, Example 4).

    >>> from xmlevents.rules import parse_action
    >>> print(content_type(parse_action("INSERT <a><b>{$delta/..}</b><c/></a> BELOW $delta")
    ...                    .content, None))
    a(b(*//*))(c)
    """
    if isinstance(content, ast.Path):
        return _enclosed(content, delta, in_attribute=False)
    children: list[TypeNode] = []
    for attribute in content.attributes:
        value = (TypeNode("string") if isinstance(attribute.value, str)
                 else _enclosed(attribute.value, delta, in_attribute=True))
        children.append(TypeNode("attr", attribute.name, (value,)))
    for item in content.contents:
        if isinstance(item, str):
            children.append(TypeNode("string"))
        elif isinstance(item, ast.Element):
            children.append(content_type(item, delta))
        else:
            children.append(_enclosed(item, delta, in_attribute=False))
    return TypeNode("elem", content.name, tuple(children))


def append_type(nfa: Nfa, tree: TypeNode, *, root: bool = True) -> Nfa:
    """Append the words of the nodes of an instance of ``tree`` (its root included when
    ``root``) below the final states of ``nfa``: the words of the nodes an ``INSERT``
    creates (section 3.1.1: every inserted node, not only the root)."""
    finals: set[int] = set()

    def add(start: frozenset[int], node: TypeNode) -> None:
        if node.kind == "string":
            return
        part = Nfa(nfa.moves, nfa.eps, start)
        label = Label("attr" if node.kind == "attr" else "elem", node.name)
        part.move(label)
        here = part.final
        finals.update(here)
        if node.kind == "subtree":
            part.subtree()
            finals.update(part.final)
            return
        for child in node.children:
            add(here, child)

    base = nfa.final
    if root:
        add(base, tree)
    else:
        for child in tree.children:
            add(base, child)
        if tree.kind == "subtree":
            part = Nfa(nfa.moves, nfa.eps, base)
            part.move(ANY_ELEM if tree.name is None else Label("elem", tree.name))
            part.move(ANY_ELEM)
            extra = part.final
            part.subtree()
            finals.update(extra | part.final)
            attr = Nfa(nfa.moves, nfa.eps, base)
            attr.move(ANY_ELEM if tree.name is None else Label("elem", tree.name))
            attr.move(ANY_ATTR)
            finals.update(attr.final)
    nfa.final = frozenset(finals)
    return nfa


# --- may satisfy (section 2.5) -----------------------------------------------------------

def _label_ok(node: TypeNode, step: ast.Step) -> bool:
    name = None if step.name == "*" else step.name
    if step.kind is ast.StepKind.ELEMENT:
        return node.kind in ("elem", "subtree") and (name is None or node.name is None
                                                     or node.name == name)
    if step.kind is ast.StepKind.ATTRIBUTE:
        return node.kind == "attr" and (name is None or node.name == name)
    return False


def _below(node: TypeNode, descendant: bool) -> list[TypeNode]:
    out: list[TypeNode] = []
    for child in node.children:
        if child.kind == "string":
            continue
        out.append(child)
        if descendant and child.kind != "attr":
            out.extend(_below(child, True))
    return out


def may_match(node: TypeNode, steps: tuple[ast.Step, ...], i: int = 0) -> bool:
    """Whether step ``i`` of ``steps`` may select ``node`` of a tree of ``type(r)`` and the
    rest of the steps may then select something below it (qualifiers included). Steps must be
    downward (names, ``*``, ``@n``, ``@*``); a ``subtree`` node may satisfy anything below."""
    step = steps[i]
    if not _label_ok(node, step):
        return False
    if not all(_qualifier_may(node, q) for q in step.qualifiers):
        return False
    if i + 1 == len(steps):
        return True
    if node.kind == "subtree":
        return True
    nxt = steps[i + 1]
    return any(may_match(child, steps, i + 1)
               for child in _below(node, nxt.sep is ast.Sep.DESCENDANT))


def _relative_may(node: TypeNode, path: ast.Path) -> bool:
    """A relative qualifier path from ``node``: decided on the tree when it is downward
    (a leading ``.`` allowed); anything else may select something."""
    steps = path.steps
    if steps and steps[0].kind is ast.StepKind.SELF and steps[0].sep is ast.Sep.CHILD:
        if not all(_qualifier_may(node, q) for q in steps[0].qualifiers):
            return False
        steps = steps[1:]
        if not steps:
            return True
    if node.kind == "subtree":
        return True
    if any(s.kind not in (ast.StepKind.ELEMENT, ast.StepKind.ATTRIBUTE) for s in steps):
        return True
    return any(may_match(child, steps) for child in
               _below(node, steps[0].sep is ast.Sep.DESCENDANT))


def _qualifier_may(node: TypeNode, qualifier: ast.Qualifier | ast.Operand) -> bool:
    if isinstance(qualifier, ast.Path):
        return True if qualifier.absolute else _relative_may(node, qualifier)
    if isinstance(qualifier, (ast.Literal, ast.Number)):
        return True
    if isinstance(qualifier, ast.Compare):
        # an XPath 1.0 comparison of node sets needs a node on each path side
        return _qualifier_may(node, qualifier.left) and _qualifier_may(node, qualifier.right)
    if isinstance(qualifier, ast.QAnd):
        return all(_qualifier_may(node, q) for q in qualifier.items)
    return any(_qualifier_may(node, q) for q in qualifier.items)
