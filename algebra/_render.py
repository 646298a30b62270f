"""Draw the event trees of a definition set as text or Graphviz DOT, as the paper's figures do.

Every node shows its event type and its path type; an operator's path type says whether it was
derived (and from which children, Figure 1) or given with ``at=``.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import ast
from ._definitions import DefinitionSet, LeafSpec, NodeSpec, OperatorSpec, ResolvedDefinition
from ._printer import quote

__all__ = ["render_text", "render_dot"]

_NAMES = {ast.Conj: "conjunction", ast.Disj: "disjunction", ast.Seq: "sequence",
          ast.AnyOf: "any", ast.Not: "not", ast.Mult: "multiplicity"}


def _operator_label(node: OperatorSpec) -> str:
    expr = node.expr
    if isinstance(expr, ast.Mult):
        symbol = f"[{expr.low},{'*' if expr.high is None else expr.high}]"
    elif isinstance(expr, ast.AnyOf):
        symbol = f"any({expr.n})"
    else:
        symbol = expr.symbol
    name = _NAMES[type(expr)]
    return name if symbol == name else f"{symbol} {name}"  # "not", never "not not"


def _origin(node: OperatorSpec) -> str:
    if node.explicit:
        return "given by at="
    if isinstance(node.expr, ast.Mult):
        return f"derived: {node.children[0].pt} minus its last step"
    return "derived: " + " ∩lb ".join(str(c.pt) for c in node.children)


def _with(node: OperatorSpec) -> str:
    """The node's ``with`` clause (``at=`` is shown as the path type's origin), or ""."""
    parts = [f"{k}={quote(v) if k == 'when' else getattr(v, 'value', v)}"
             for k, v in node.mods.items() if k != "at"]
    return f"with {', '.join(parts)}" if parts else ""


def _effects(node: OperatorSpec) -> str:
    """What the ``with`` does to this operator, in words: the same text can put it on a
    different operator (``(a & b with mode=non-local)`` binds to the ``&``), and where it
    sits changes the composites (a non-local ``&`` collects every quantity, a non-local
    root above an earliest ``&`` only the first), so the drawing says which node it is."""
    name = _NAMES[type(node.expr)]
    mods = node.mods
    said = []
    if mods.mode is ast.Mode.NON_LOCAL:
        said.append(f"this {name} holds what it detects until an event of the document "
                    "outside its subtree (or a flush), taking in more events meanwhile")
    elif mods.mode is ast.Mode.CUSTOM:
        said.append(f"this {name} holds what it detects until a flush or close")
    if mods.when is not None:
        said.append(f"this {name} raises only when the condition holds on its node")
    if mods.context is not None:
        said.append(f"this {name} picks and consumes its events in the "
                    f"{mods.context.value} context")
    if mods.hierarchical is not None:
        said.append(f"this {name} {'groups' if mods.hierarchical else 'does not group'} "
                    "its events by path")
    if mods.within is not None:
        span = f"{mods.within} ticks" if isinstance(mods.within, int) else str(mods.within)
        said.append(f"this {name} and the operators beneath it complete within {span}")
    return "; ".join(said)


def _leaf_label(leaf: LeafSpec) -> str:
    text = str(leaf.et)
    if leaf.ref is not None:
        text += f"  <- events of {leaf.ref}"
    return text


def render_text(definitions: DefinitionSet) -> str:
    """One block per definition: its source line, then its tree with path types.

    >>> print(render_text(DefinitionSet.parse("E := ins(a/b) & ins(a/c)")))
    E := ins(a/b) & ins(a/c)
      & conjunction  E(a)  path type a (derived: a/b ∩lb a/c)
      ├── ins(a/b)
      └── ins(a/c)
    """
    blocks = []
    for d in definitions:
        lines = [str(d.definition)]
        if d.is_alias:
            lines.append(f"  one composite per {d.root.expr} event (where another definition "
                         "names it: that event type)")
        else:
            _lines(d, d.root, "  ", "  ", lines)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _lines(d: ResolvedDefinition, node: NodeSpec, first: str, rest: str,
           out: list[str]) -> None:
    if isinstance(node, LeafSpec):
        out.append(first + _leaf_label(node))
        return
    et = f"{d.name}({node.pt})" if node is d.root else f"({node.pt})"
    out.append(f"{first}{_operator_label(node)}  {et}  path type {node.pt} "
               f"({_origin(node)})")
    clause = _with(node)
    if clause:  # under the operator it applies to, with what it does there
        out.append(f"{rest}│ ◆ {clause}: {_effects(node)}")
    for i, child in enumerate(node.children):
        last = i == len(node.children) - 1
        _lines(d, child, rest + ("└── " if last else "├── "), rest + ("    " if last else "│   "),
               out)


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_dot(definitions: DefinitionSet) -> str:
    """A Graphviz digraph: one cluster per tree, dashed edges where a tree feeds another."""
    out = ["digraph xmlevents {", "  rankdir=BT;", "  node [fontname=\"Helvetica\"];"]
    roots: dict[str, str] = {}
    feeds: list[tuple[str, str]] = []
    counter = 0
    trees = {t.name: t for t in definitions.trees()}  # once: a leaf looks its producers up

    def producers(d: ResolvedDefinition, leaf: LeafSpec) -> Iterable[str]:
        """The trees whose composites reach ``leaf``: among those the definition set found
        feeding ``d``'s leaves (``depends_on``, looked up there by name or through its index
        of path types), the ones this leaf receives."""
        return [n for n in d.depends_on
                if n != d.name and n in trees and leaf.receives(trees[n].root, n)]

    def visit(d: ResolvedDefinition, node: NodeSpec, lines: list[str]) -> str:
        nonlocal counter
        counter += 1
        ident = f"n{counter}"
        if isinstance(node, LeafSpec):
            lines.append(f"    {ident} [shape=box, label={_dot_id(_leaf_label(node))}];")
            feeds.extend((name, ident) for name in producers(d, node))
            return ident
        et = f"{d.name}({node.pt})" if node is d.root else f"({node.pt})"
        clause = _with(node)
        label = f"{_operator_label(node)}\\n{et}\\n{_origin(node)}" + (
            f"\\n◆ {clause}" if clause else "")
        # ordering=in: the children (whose edges come in) drawn left to right in their order,
        # as the paper draws E1 ; E2 (Graphviz keeps in-edges in the order they are written).
        # The operator a `with` applies to is drawn bold, its clause on a line of its own.
        style = ", style=bold" if clause else ""
        lines.append(f"    {ident} [shape=ellipse, ordering=in{style}, label={_dot_id(label)}];"
                     .replace("\\\\n", "\\n"))
        children = [visit(d, child, lines) for child in node.children]
        lines.extend(f"    {child} -> {ident};" for child in children)  # in child order
        return ident

    for d in definitions:
        if d.is_alias:
            continue
        lines: list[str] = []
        roots[d.name] = visit(d, d.root, lines)
        out.append(f"  subgraph cluster_{len(roots)} {{")
        out.append(f"    label={_dot_id(str(d.definition))};")
        out.extend(lines)
        out.append("  }")
    for producer, leaf in dict.fromkeys(feeds):
        if producer in roots:
            out.append(f"  {roots[producer]} -> {leaf} [style=dashed];")
    out.append("}")
    return "\n".join(out)
