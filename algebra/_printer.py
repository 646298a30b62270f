"""Print expression trees in the text form of DESIGN section 3, one method per node type.

The printer adds only the parentheses the grammar needs, so ``parse(to_text(x)) == x``:
a child is parenthesised when it binds looser than its parent, when it is an operator of the
same kind (chains are n-ary, so nesting must be explicit), or when it carries ``with``
modifiers (``with`` binds loosest of all).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from . import ast

__all__ = ["to_text", "quote"]

# Binding strength, loosest first; functional forms and leaves are atoms.
_DISJ, _CONJ, _SEQ, _PREFIX, _ATOM = 1, 2, 3, 4, 5


def quote(text: str) -> str:
    """A double-quoted string literal with ``\\`` and ``"`` escaped, as the tokenizer reads it."""
    return json.dumps(text, ensure_ascii=False)


_BINARY_STRENGTH: dict[type, int] = {ast.Disj: _DISJ, ast.Conj: _CONJ, ast.Seq: _SEQ}


def _strength(node: ast.Expr) -> int:
    if isinstance(node, ast.Operator) and node.mods:
        return 0
    if type(node) in _BINARY_STRENGTH:
        return _BINARY_STRENGTH[type(node)]
    if isinstance(node, ast.Mult):
        return _PREFIX
    return _ATOM


def _wrap(node: ast.Expr, least: int) -> str:
    """Print ``node``, in parentheses unless it binds at least as tight as ``least``."""
    text = to_text(node)
    return text if _strength(node) >= least else f"({text})"


def _modifiers(mods: ast.Modifiers) -> str:
    parts = []
    for key, value in mods.items():
        if key == "when":
            parts.append(f"when={quote(value)}")
        elif key == "hierarchical":
            parts.append(f"hierarchical={'true' if value else 'false'}")
        elif key in ("mode", "context"):
            parts.append(f"{key}={value.value}")
        else:
            parts.append(f"{key}={value}")
    return " with " + ", ".join(parts) if parts else ""


def _primitive(node: ast.Primitive) -> str:
    return f"{node.op.value}({node.path})"


def _ref(node: ast.Ref) -> str:
    name = node.name if node.name is not None else "%"
    return name if node.path is None else f"{name}({node.path})"


def _binary(node: ast.Disj | ast.Conj | ast.Seq) -> str:
    # Same-kind children bind "equally" and must be parenthesised to stay nested.
    least = _BINARY_STRENGTH[type(node)] + 1
    return f" {node.symbol} ".join(_wrap(c, least) for c in node.children)


def _any(node: ast.AnyOf) -> str:
    args = ", ".join(_wrap(c, _DISJ) for c in node.children)
    return f"any({node.n}, {args})"


def _not(node: ast.Not) -> str:
    return "not(" + ", ".join(_wrap(c, _DISJ) for c in node.children) + ")"


def _mult(node: ast.Mult) -> str:
    high = "*" if node.high is None else str(node.high)
    return f"[{node.low},{high}] {_wrap(node.child, _PREFIX)}"


_DISPATCH: dict[type, Callable[..., str]] = {
    ast.Primitive: _primitive,
    ast.Ref: _ref,
    ast.Disj: _binary,
    ast.Conj: _binary,
    ast.Seq: _binary,
    ast.AnyOf: _any,
    ast.Not: _not,
    ast.Mult: _mult,
}


def to_text(node: ast.Expr) -> str:
    """The text form of ``node``; modifiers of the top node are printed with ``with``.

    >>> to_text(ast.conj(ast.ins("a"), ast.seq("ins(b)", "ins(c)"), mode="custom"))
    'ins(a) & ins(b) ; ins(c) with mode=custom'
    """
    text = _DISPATCH[type(node)](node)
    if isinstance(node, ast.Operator):
        text += _modifiers(node.mods)
    return text
