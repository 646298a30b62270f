"""The automaton's leaf tests for one event type compiled once per query into one Python
function (issue 32, item 4): the bitmask of the leaves an event satisfies, in one call.

Evaluated through the objects (:meth:`~._cea.Leaf.test` -> ``VarFilter.evaluate`` ->
``Compare.holds`` -> ``Attr.value`` and ``_comparable``), an atomic filter cost some ten
Python calls an event and a dict for the valuation; a chain of nine filtered ``TRIP``s spent
80% of its time there. Here the common atomic filters — an attribute of the event compared
with a constant, under ``AND``, ``OR`` and ``NOT`` — become inline expressions over the
event's attributes, each read once per event; every other condition (arithmetic, ``IN``,
``LIKE``, ``MATCHES``, two attributes, ``type``) is called through its own
:meth:`~._predicates.Condition.holds`, so the semantics stay those of
:mod:`._predicates` by construction. :func:`generic_tester` is the same function without
compiling, the reference the tests hold it to.

The generated source names constants only through its globals (never a value in the source
text), so no attribute name or string of a query can change the code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._events import Event, is_number
from ._predicates import (
    _MISSING,
    Attr,
    Compare,
    CondAnd,
    Condition,
    CondNot,
    CondOr,
    Const,
)

__all__ = ["Tested", "Tester", "LeafTests", "compile_tester", "generic_tester"]

#: A leaf to test: its bit, its variable, its stream (None: any) and its filters' conditions,
#: each with the variable it is on (a filter pushed to the leaf is on the leaf's variable).
Tested = tuple[int, str, str | None, tuple[Condition, ...]]

Tester = Callable[[Event], int]


def generic_tester(fixed: int, tested: Sequence[Tested]) -> Tester:
    """The bitmask function evaluated through the condition objects (as
    :meth:`~._cea.Leaf.test` does): the reference for :func:`compile_tester`."""

    def satisfied(event: Event) -> int:
        bits = fixed
        for bit, var, stream, conditions in tested:
            if stream is not None and event.stream not in (None, stream):
                continue
            valuation = {var: event}
            if all(c.holds(var, valuation) for c in conditions):
                bits |= bit
        return bits

    return satisfied


class _Source:
    """The generated function's text and the globals it names."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {"_M": _MISSING, "_num": is_number}
        self.values: dict[str, str] = {}  # attribute -> the local holding its value
        self.reads: list[str] = []

    def const(self, value: object) -> str:
        name = f"_c{len(self.names)}"
        self.names[name] = value
        return name

    def attribute(self, name: str) -> str:
        local = self.values.get(name)
        if local is None:
            local = self.values[name] = f"v{len(self.values)}"
            self.reads.append(f"    {local} = get({self.const(name)}, _M)")
        return local

    def condition(self, c: Condition, own: str) -> str:
        """A Python expression for ``c.holds(own, {own: event})``."""
        if isinstance(c, CondAnd):
            return f"({self.condition(c.left, own)} and {self.condition(c.right, own)})"
        if isinstance(c, CondOr):
            return f"({self.condition(c.left, own)} or {self.condition(c.right, own)})"
        if isinstance(c, CondNot):
            return f"(not {self.condition(c.operand, own)})"
        if isinstance(c, Compare):
            inline = self._compare(c, own)
            if inline is not None:
                return inline
        # anything else: the condition's own evaluation (the same semantics, a call)
        return f"{self.const(c.holds)}({self.const(own)}, {{{self.const(own)}: event}})"

    def _compare(self, c: Compare, own: str) -> str | None:
        """``Compare.holds`` of an attribute of the event and a constant, inline: the values
        compared with the operator where :func:`~._predicates._comparable` holds (both
        numbers, else the same type), else ``!=`` true of two present values."""
        if isinstance(c.left, Attr) and isinstance(c.right, Const):
            attr, const, attr_first = c.left, c.right.value_, True
        elif isinstance(c.left, Const) and isinstance(c.right, Attr):
            attr, const, attr_first = c.right, c.left.value_, False
        else:
            return None
        if attr.name == "type" or attr.var not in (None, own):
            return None  # the event's type, or another variable's: the generic path
        v = self.attribute(attr.name)
        k = self.const(const)
        op = "==" if c.op == "=" else c.op
        test = f"{v} {op} {k}" if attr_first else f"{k} {op} {v}"
        if is_number(const):
            comparable = f"(type({v}) is int or type({v}) is float or _num({v}))"
        elif type(const) in (str, bool):
            comparable = f"type({v}) is {self.const(type(const))}"
        else:
            return None
        if c.op == "!=":  # not comparable: true where both are present (the constant is)
            return f"({test} if {comparable} else {v} is not _M)"
        return f"({comparable} and {test})"


def compile_tester(fixed: int, tested: Sequence[Tested]) -> Tester:
    """The bitmask of the leaves ``tested`` an event satisfies, plus ``fixed`` (the leaves of
    the type without a test), as one generated function (see the module)."""
    src = _Source()
    body: list[str] = []
    for bit, var, stream, conditions in tested:
        parts = [src.condition(c, var) for c in conditions]
        if stream is not None:
            parts.insert(0, f"(event.stream is None or event.stream == {src.const(stream)})")
        test = " and ".join(parts) if parts else "True"
        body.append(f"    if {test}:\n        bits |= {bit}")
    lines = ["def satisfied(event):"]
    if src.reads:
        lines.append("    get = event.attrs.get")
        lines.extend(src.reads)
    lines.append(f"    bits = {fixed}")
    lines.extend(body)
    lines.append("    return bits")
    namespace: dict[str, Any] = dict(src.names)
    exec(compile("\n".join(lines) + "\n", "<cel leaf tests>", "exec"), namespace)
    tester: Tester = namespace["satisfied"]
    return tester


class LeafTests:
    """:func:`compile_tester`'s function for one event type (``fn``) with what it was built
    from, so that it pickles (a CEL state is saved in the replay's checkpoints, issue 29):
    the function itself cannot, and is compiled again when loaded."""

    __slots__ = ("fixed", "fn", "tested")

    def __init__(self, fixed: int, tested: Sequence[Tested]) -> None:
        self.fixed = fixed
        self.tested = tuple(tested)
        self.fn = compile_tester(fixed, self.tested)

    def __reduce__(self) -> tuple[type[LeafTests], tuple[int, tuple[Tested, ...]]]:
        return LeafTests, (self.fixed, self.tested)
