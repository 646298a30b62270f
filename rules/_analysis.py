"""Static termination analysis of ECA rules (seed 002, section 3).

:func:`analyse` builds the **triggering graph** (section 3.1: ``ri → rj`` when an action of
``ri`` may raise an event of ``rj``) and the **activation graph** (section 3.2: ``ri → rj``
when an action of ``ri`` may turn ``rj``'s condition from False to True, and ``ri → ri`` unless
``ri`` is self-disactivating), and a verdict: acyclicity of either graph proves termination.

Soundness comes first: an arc may be drawn where no run has one, never the reverse. Where the
paper's test is not obviously sound, the analysis is more conservative:

* **Triggering by insertion** (3.1.1): an event ``INSERT e2`` sees *every* node of an inserted
  subtree, so ``e2`` is tested against the words of all inserted nodes (the target's word
  followed by any root-to-node word of ``type(r)``), which covers a ``//`` that spans the
  target (``document('s')//product`` is triggered by an insertion below ``/stores/store``,
  where the paper's prefix test would need a prefix ending exactly at the target). The
  paper's qualifier-aware refinement (Example 5: ``product[name]`` is not triggered by
  ``<product id='…'/>``) is applied only when it is sound: ``e2`` goes only downward, the
  content is a constructor, and the ``BELOW`` path cannot select nodes the same action
  inserts (otherwise one action could nest instances and the suffix would not be matched
  by one instance of ``type(r)``).
* **Triggering by deletion** (3.1.2): ``e1//*`` plus the attributes of the deleted nodes.
* **Composite events** (``on EVENT Name``, beyond the paper): any action may raise them, and
  their ``$delta`` may be any node.
* **Activation** (3.2.1-3.2.4): instead of the paper's decomposition (:func:`decompose`,
  kept for display and Example 6), a condition's *visited* language (every node its paths
  and qualifier paths can step on, prefixes included) is intersected with the inserted or
  deleted nodes. The paper's tables assume a positive condition cannot be made true by a
  deletion; that is false for comparisons, because deleting (or inserting) below a compared
  element changes its string value (``[name='Baghdad']`` after deleting ``<x> Cafe</x>``
  inside the name). So a change strictly below a compared node may activate both ways.
* **New ``$delta`` bindings**: a rule whose condition uses ``$delta`` is evaluated with a
  *fresh* binding each time it is triggered; its condition need not change from False to
  True to hold (``not($delta/y)`` is true of every new node). Termination by the activation
  graph needs an arc for that: when ``ri`` may trigger ``rj`` and ``rj``'s condition uses
  ``$delta``, ``ri → rj`` is drawn, unless the new binding provably makes ``rj``'s
  condition false (the mirror argument of Example 1, see :func:`_mirror_false`).
* **Self-disactivation** (3.2.1, 3.2.2, Example 7) uses syntactic containment only
  (identical prefixes; an attribute of the constructor given by the very expression the
  condition compares). It rests on two assumptions the paper makes silently: the ``BELOW``
  path selects a node (else nothing is inserted and ``not c`` stays true), and an enclosed
  attribute value selects a node (``<store id='{$delta/../@id}'/>`` gives ``id=""`` when
  ``$delta/..`` has no ``id``, and then ``[@id=$delta/../@id]`` is false). ``strict=True``
  drops these assumptions: no insertion-based self-disactivation, no mirror argument; then
  only deletion subsumption remains and Example 1 is *may not terminate*.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from . import ast
from ._paths import Label, Nfa, any_node_nfa, intersects, path_nfa
from ._types import TypeNode, append_type, content_type, may_match

__all__ = ["Arc", "Graph", "Verdict", "Analysis", "analyse", "decompose", "dnf",
           "self_disactivating"]


# --- graphs ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Arc:
    """``source → target`` with the reason: which action, which event or condition."""

    source: str
    target: str
    reason: str


@dataclass(frozen=True, slots=True)
class Graph:
    """A directed graph over rule names (section 3): the triggering or the activation graph."""

    name: str
    nodes: tuple[str, ...]
    arcs: tuple[Arc, ...]

    def has(self, source: str, target: str) -> bool:
        """Whether there is an arc ``source → target``."""
        return any(a.source == source and a.target == target for a in self.arcs)

    def cycle(self) -> tuple[str, ...] | None:
        """A cycle as the rules on it (``(r, r)`` for a self-loop closes on the first), or
        None when the graph is acyclic."""
        succ: dict[str, list[str]] = {n: [] for n in self.nodes}
        for arc in self.arcs:
            if arc.target not in succ[arc.source]:
                succ[arc.source].append(arc.target)
        color = dict.fromkeys(self.nodes, 0)
        for start in self.nodes:
            if color[start]:
                continue
            stack: list[tuple[str, Iterator[str]]] = [(start, iter(succ[start]))]
            path = [start]
            color[start] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    path.pop()
                    color[node] = 2
                elif color[nxt] == 1:
                    return (*path[path.index(nxt):], nxt)
                elif color[nxt] == 0:
                    color[nxt] = 1
                    path.append(nxt)
                    stack.append((nxt, iter(succ[nxt])))
        return None

    def to_dot(self) -> str:
        """The graph in Graphviz DOT, arcs labelled with their reasons."""
        lines = [f"digraph {_dot_id(self.name)} {{"]
        lines += [f"  {_dot_id(n)};" for n in self.nodes]
        lines += [f"  {_dot_id(a.source)} -> {_dot_id(a.target)} [label={_dot_id(a.reason)}];"
                  for a in self.arcs]
        return "\n".join([*lines, "}"])

    def to_text(self) -> str:
        """One line per arc, ``(none)`` for no arcs."""
        lines = [f"{self.name} graph:"]
        lines += [f"  {a.source} -> {a.target}: {a.reason}" for a in self.arcs] or ["  (no arcs)"]
        return "\n".join(lines)


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True, slots=True)
class Verdict:
    """``terminates`` with the acyclic graph that proves it (``proof``), or not, with a
    cycle of each graph (``cycles``: graph name → rules on the cycle)."""

    terminates: bool
    proof: str | None
    cycles: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __str__(self) -> str:
        if self.terminates:
            return f"terminates: the {self.proof} graph is acyclic"
        parts = [f"the {name} graph has the cycle {' -> '.join(c)}"
                 for name, c in self.cycles.items()]
        return "may not terminate: " + "; ".join(parts)


@dataclass(frozen=True, slots=True)
class Analysis:
    """The result of :func:`analyse`: both graphs, the verdict, and notes per rule
    (self-disactivation, composite events)."""

    ruleset: ast.RuleSet
    triggering: Graph
    activation: Graph
    verdict: Verdict
    notes: tuple[str, ...]

    def to_text(self) -> str:
        """Each rule, the two graphs, the notes and the verdict, as ``rules check`` prints."""
        parts = ["rules:"] + [f"  {r.name} (priority {r.priority}): {_one_line(r)}"
                              for r in self.ruleset]
        parts += [self.triggering.to_text(), self.activation.to_text()]
        if self.notes:
            parts += ["notes:"] + [f"  {n}" for n in self.notes]
        parts.append(f"verdict: {self.verdict}")
        return "\n".join(parts)

    def to_dot(self) -> str:
        """The triggering and the activation graph as two DOT digraphs."""
        return self.triggering.to_dot() + "\n" + self.activation.to_dot()


def _one_line(rule: ast.Rule) -> str:
    text = str(rule)
    return " ".join(text.split())


# --- per-rule context ------------------------------------------------------------------------

def _delta(rule: ast.Rule) -> Nfa | None:
    """The automaton ``$delta`` stands for: the event path, or None (any node) for a
    composite event."""
    if isinstance(rule.event, ast.Event):
        return path_nfa(rule.event.path, None)
    return None


@dataclass
class _Effect:
    """What one action changes: the words of the nodes it inserts or deletes."""

    action: ast.Action
    index: int
    nodes: Nfa
    below: Nfa | None = None
    tree: TypeNode | None = None


def _effect(rule: ast.Rule, index: int, action: ast.Action) -> _Effect:
    delta = _delta(rule)
    if isinstance(action, ast.Insert):
        below = path_nfa(action.below, delta)
        tree = content_type(action.content, delta)
        return _Effect(action, index, append_type(below.copy(), tree), below, tree)
    return _Effect(action, index, path_nfa(action.target, delta).subtree())


def _what(rule: ast.Rule, effect: _Effect) -> str:
    kind = "INSERT" if isinstance(effect.action, ast.Insert) else "DELETE"
    return f"action {effect.index + 1} ({kind}) of {rule.name}"


# --- triggering (section 3.1) ----------------------------------------------------------------

def _prefix(path: ast.Path, k: int) -> Nfa:
    assert isinstance(path.root, ast.Document)
    nfa = Nfa()
    nfa.move(Label("doc", path.root.name))
    return nfa.steps(path.steps[:k])


def _tree_nodes(tree: TypeNode) -> Iterator[TypeNode]:
    yield tree
    for child in tree.children:
        if child.kind != "string":
            yield from _tree_nodes(child)


def _triggers(effect: _Effect, event: ast.Event) -> str | None:
    """Why ``effect`` may raise ``event``, or None when it cannot (section 3.1)."""
    e2 = path_nfa(event.path, None)
    if isinstance(effect.action, ast.Delete):
        if event.kind is ast.EventKind.DELETE and intersects(effect.nodes, e2):
            return f"the deleted nodes ({effect.action.target}//*) may be selected by {event}"
        return None
    if event.kind is not ast.EventKind.INSERT or not intersects(effect.nodes, e2):
        return None
    action = effect.action
    assert effect.below is not None and effect.tree is not None
    downward = all(s.kind in (ast.StepKind.ELEMENT, ast.StepKind.ATTRIBUTE)
                   for s in event.path.steps)
    nested = intersects(effect.below, effect.nodes)
    if not downward or not isinstance(action.content, ast.Element) or nested \
            or not isinstance(event.path.root, ast.Document):
        return (f"some inserted node of {action.content} below {action.below} may be "
                f"selected by {event}")
    steps = event.path.steps
    for k in range(len(steps)):
        prefix = _prefix(event.path, k)
        suffix = ast.Path(None, (ast.Step(ast.Sep.CHILD, steps[k].kind, steps[k].name,
                                          steps[k].qualifiers), *steps[k + 1:]))
        shown = ast.Path(event.path.root, steps[:k]) if k else event.path.root
        if steps[k].sep is ast.Sep.CHILD:
            if intersects(prefix, effect.below) and may_match(effect.tree, steps, k):
                return (f"prefix {shown} may meet {action.below} and type {effect.tree} may "
                        f"satisfy {suffix}")
        elif intersects(prefix.descendants_or_self(), effect.below) and any(
                may_match(node, steps, k) for node in _tree_nodes(effect.tree)):
            return (f"prefix {shown} may be an ancestor-or-self of {action.below} and type "
                    f"{effect.tree} may satisfy //{suffix}")
    return None


# --- conditions ------------------------------------------------------------------------------

Literal = tuple[bool, ast.Path]


def dnf(condition: ast.Condition, limit: int = 256) -> tuple[tuple[Literal, ...], ...] | None:
    """``condition`` in disjunctive normal form (section 3.2): disjuncts of literals
    ``(positive, path)``; ``()`` for TRUE's single empty conjunction is ``((),)``; None
    when it would have more than ``limit`` disjuncts.

    >>> from xmlevents.rules import parse_condition
    >>> [[(pos, str(p)) for pos, p in d] for d in dnf(parse_condition(
    ...     "not(document('a')/x or document('a')/y) and document('a')/z"))]
    [[(False, "document('a')/x"), (False, "document('a')/y"), (True, "document('a')/z")]]
    """
    def go(node: ast.Condition, positive: bool) -> list[tuple[Literal, ...]] | None:
        if isinstance(node, ast.TrueCondition):
            return [()] if positive else []
        if isinstance(node, ast.Path):
            return [((positive, node),)]
        if isinstance(node, ast.Not):
            return go(node.item, not positive)
        conj = isinstance(node, ast.And) == positive
        parts = [go(item, positive) for item in node.items]
        if any(p is None for p in parts):
            return None
        if not conj:
            return [d for p in parts if p is not None for d in p][:limit + 1]
        out: list[tuple[Literal, ...]] = [()]
        for p in parts:
            assert p is not None
            out = [a + b for a in out for b in p]
            if len(out) > limit:
                return None
        return out

    result = go(condition, True)
    return None if result is None or len(result) > limit else tuple(result)


def _literals(condition: ast.Condition, positive: bool = True) -> Iterator[Literal]:
    """Every path of the condition with its polarity (negation normal form)."""
    if isinstance(condition, ast.Path):
        yield (positive, condition)
    elif isinstance(condition, ast.Not):
        yield from _literals(condition.item, not positive)
    elif isinstance(condition, (ast.And, ast.Or)):
        for item in condition.items:
            yield from _literals(item, positive)


class _Visited:
    """The languages of a condition path (section 3.2.1: "consider all the qualifiers and
    the distinguished path"): ``visited``, every node any of its paths can step on
    (prefixes included), and ``below_compared``, every node strictly below a node whose
    string value a comparison reads."""

    def __init__(self, path: ast.Path, delta: Nfa | None) -> None:
        self.nfa = Nfa()
        self.compared: set[int] = set()
        self._absolute(path, delta)
        self.visited = Nfa(self.nfa.moves, self.nfa.eps, frozenset(range(len(self.nfa.moves))))
        below = Nfa(self.nfa.moves, self.nfa.eps, frozenset(self.compared))
        below.move(Label("elem"))
        below.subtree()
        self.below_compared = Nfa(self.nfa.moves, self.nfa.eps, below.final)

    def _absolute(self, path: ast.Path, delta: Nfa | None) -> frozenset[int]:
        if isinstance(path.root, ast.Document):
            part = Nfa(self.nfa.moves, self.nfa.eps, frozenset({0}))
            part.move(Label("doc", path.root.name))
            start = part.final
        else:
            base = delta if delta is not None else any_node_nfa()
            offset = len(self.nfa.moves)
            for q in range(len(base.moves)):
                self.nfa.moves.append([(lab, n + offset) for lab, n in base.moves[q]])
                self.nfa.eps.append([n + offset for n in base.eps[q]])
            self.nfa.eps[0].append(offset)
            start = frozenset(f + offset for f in base.final)
            assert isinstance(path.root, ast.Delta)
            for qualifier in path.root.qualifiers:
                self._qualifier(qualifier, start, delta)
        return self._steps(path.steps, start, delta)

    def _steps(self, steps: tuple[ast.Step, ...], start: frozenset[int],
               delta: Nfa | None) -> frozenset[int]:
        part = Nfa(self.nfa.moves, self.nfa.eps, start)
        for step in steps:
            part.step(step)
            for q in step.qualifiers:
                self._qualifier(q, part.final, delta)
        return part.final

    def _operand(self, operand: ast.Qualifier | ast.Operand, at: frozenset[int],
                 delta: Nfa | None) -> frozenset[int]:
        if isinstance(operand, ast.Path):
            if operand.absolute:
                return self._absolute(operand, delta)
            return self._steps(operand.steps, at, delta)
        return frozenset()

    def _qualifier(self, q: ast.Qualifier, at: frozenset[int], delta: Nfa | None) -> None:
        if isinstance(q, ast.Path):
            self._operand(q, at, delta)
        elif isinstance(q, ast.Compare):
            for side in (q.left, q.right):
                self.compared |= self._operand(side, at, delta)
        else:
            for item in q.items:
                self._qualifier(item, at, delta)


def _activates(effect: _Effect, positive: bool, path: ast.Path, delta: Nfa | None) -> str | None:
    """Why ``effect`` may turn the literal from False to True (sections 3.2.1, 3.2.2)."""
    v = _Visited(path, delta)
    literal = str(path) if positive else f"not({path})"
    inserting = isinstance(effect.action, ast.Insert)
    if intersects(effect.nodes, v.below_compared):
        return (f"it {'inserts' if inserting else 'deletes'} below a node whose string value "
                f"{literal} compares")
    if positive and inserting and intersects(effect.nodes, v.visited):
        return f"an inserted node may make {literal} true (section 3.2.1)"
    if not positive and not inserting and intersects(effect.nodes, v.visited):
        return f"a deleted node may make {literal} true (section 3.2.2)"
    return None


# --- self-disactivation (sections 3.2.1-3.2.4, Example 7) ------------------------------------

def _attribute_stable(path: ast.Path) -> bool:
    """Whether every comparison in ``path``'s qualifiers reads attributes or literals only,
    so that an insertion cannot change what ``path`` selects (insertions only add nodes)."""
    for node in ast.walk(path):
        if isinstance(node, ast.Compare):
            for side in (node.left, node.right):
                if isinstance(side, ast.Path) and (
                        not side.steps or side.steps[-1].kind is not ast.StepKind.ATTRIBUTE):
                    return False
    return True


def _satisfies_q(element: ast.Element, q: ast.Qualifier) -> bool:
    """Whether every instance of ``element`` satisfies ``q`` (section 3.2.2's stronger
    *satisfies*): an attribute it has, a child constructor, an attribute whose enclosed
    expression is the one compared (Example 7), a literal equal to the one compared."""
    attrs = {a.name: a.value for a in element.attributes}
    if isinstance(q, ast.QAnd):
        return all(_satisfies_q(element, item) for item in q.items)
    if isinstance(q, ast.Path) and not q.absolute and len(q.steps) == 1 \
            and not q.steps[0].qualifiers:
        step = q.steps[0]
        if step.kind is ast.StepKind.ATTRIBUTE:
            return step.name in attrs or (step.name == "*" and bool(attrs))
        if step.kind is ast.StepKind.ELEMENT and step.sep is ast.Sep.CHILD:
            return any(isinstance(c, ast.Element) and step.name in ("*", c.name)
                       for c in element.contents)
        return False
    if isinstance(q, ast.Compare) and q.op is ast.CompOp.EQ:
        for mine, other in ((q.left, q.right), (q.right, q.left)):
            if isinstance(mine, ast.Path) and not mine.absolute and len(mine.steps) == 1 \
                    and mine.steps[0].kind is ast.StepKind.ATTRIBUTE \
                    and not mine.steps[0].qualifiers and mine.steps[0].name in attrs:
                value = attrs[mine.steps[0].name]
                if isinstance(value, str) and isinstance(other, ast.Literal):
                    return value == other.value
                if isinstance(value, ast.Path) and value == other:
                    return True
    return False


def _satisfies(element: ast.Element, steps: tuple[ast.Step, ...]) -> bool:
    step = steps[0]
    if step.sep is not ast.Sep.CHILD or step.kind is not ast.StepKind.ELEMENT \
            or step.name not in ("*", element.name):
        return False
    if not all(_satisfies_q(element, q) for q in step.qualifiers):
        return False
    if len(steps) == 1:
        return True
    return any(isinstance(c, ast.Element) and _satisfies(c, steps[1:]) for c in element.contents)


def _guarantees(action: ast.Insert, path: ast.Path) -> bool:
    """Whether ``action`` makes ``path`` true (section 3.2.2): a prefix of ``path`` is the
    ``BELOW`` path itself (containment by identity) and each instance of the constructor
    satisfies the suffix."""
    if not isinstance(action.content, ast.Element) or not _attribute_stable(action.below):
        return False
    if action.position is not None and not isinstance(action.position.test, ast.TrueCondition):
        return False
    for k in range(1, len(path.steps)):
        if path.root == action.below.root and path.steps[:k] == action.below.steps \
                and _satisfies(action.content, path.steps[k:]):
            return True
    return False


def _subsumes(action: ast.Delete, path: ast.Path) -> bool:
    """Whether ``DELETE e1`` leaves ``path`` empty (section 3.2.1, ``e1//* ⊇ c``), tested
    by identity: ``path`` is ``e1`` or ``e1`` followed by more steps, all child steps (no
    ``//``, whose nested matches could change string values the qualifiers compare)."""
    target = action.target
    n = len(target.steps)
    if len(path.steps) < n or path.root != target.root or path.steps[:n] != target.steps:
        return False
    return all(s.sep is ast.Sep.CHILD and s.kind in (ast.StepKind.ELEMENT, ast.StepKind.ATTRIBUTE)
               for s in path.steps)


def self_disactivating(rule: ast.Rule, *, strict: bool = False) -> bool:
    """Whether each action of ``rule`` leaves its condition false (sections 3.2.1-3.2.4).

    A disjunct of positive literals is falsified by a deletion subsuming one of them; a
    disjunct of negations by an insertion guaranteeing one of them (Example 7); mixed
    disjuncts are never (3.2.3 (iii)). Every disjunct must be falsified by every action.
    With ``strict``, insertions never count (module docstring: the paper's assumptions).
    """
    disjuncts = dnf(rule.condition)
    if disjuncts is None:
        return False
    for disjunct in disjuncts:
        if not disjunct or len({pos for pos, _ in disjunct}) != 1:
            return False
        for action in rule.actions:
            if disjunct[0][0]:
                ok = isinstance(action, ast.Delete) and any(_subsumes(action, p)
                                                            for _, p in disjunct)
            else:
                ok = (not strict and isinstance(action, ast.Insert)
                      and any(_guarantees(action, p) for _, p in disjunct))
            if not ok:
                return False
    return True


def _delta_path(path: ast.Operand) -> tuple[int, str] | None:
    """``$delta/(../)^k@name`` as ``(k, name)``."""
    if not isinstance(path, ast.Path) or not isinstance(path.root, ast.Delta) \
            or path.root.qualifiers or not path.steps:
        return None
    *ups, last = path.steps
    if last.kind is not ast.StepKind.ATTRIBUTE or last.name == "*" or last.qualifiers:
        return None
    if any(s.kind is not ast.StepKind.PARENT or s.sep is not ast.Sep.CHILD or s.qualifiers
           for s in [*ups, last][:-1]) or last.sep is not ast.Sep.CHILD:
        return None
    assert last.name is not None
    return len(ups), last.name


def _own_attribute(operand: ast.Operand) -> str | None:
    if isinstance(operand, ast.Path) and operand.root is None and len(operand.steps) == 1:
        step = operand.steps[0]
        if step.kind is ast.StepKind.ATTRIBUTE and step.name != "*" and not step.qualifiers:
            return step.name
    return None


def _equalities(qualifiers: tuple[ast.Qualifier, ...]) -> Iterator[tuple[str, ast.Operand]]:
    """``@name = X`` conjuncts of qualifiers."""
    for q in qualifiers:
        items = q.items if isinstance(q, ast.QAnd) else (q,)
        for item in items:
            if isinstance(item, ast.Compare) and item.op is ast.CompOp.EQ:
                for mine, other in ((item.left, item.right), (item.right, item.left)):
                    name = _own_attribute(mine)
                    if name is not None:
                        yield name, other


def _mirror_false(ruleset: ast.RuleSet, source: ast.Rule, effect: _Effect,
                  target: ast.Rule) -> bool:
    """Whether each fresh ``$delta`` of ``target`` created by ``effect`` makes ``target``'s
    condition false: the argument behind Example 1's termination.

    ``target`` is ``on INSERT e2 if not(P) …``; ``effect`` inserts a constructor ``r`` below
    ``f`` in ``source`` (``on INSERT ei``); ``e2`` selects only roots of ``r``'s instances.
    Each comparison ``@n = $delta/@x`` or ``@n = $delta/../@x`` of ``P`` is resolved through
    ``r``'s attribute ``x`` (an enclosed expression) or ``f``'s last-step equality ``@x = Q``
    into an expression over ``source``'s ``$delta``; when ``P``'s steps are ``ei``'s steps and
    each resolved step ``k`` compares ``@n`` with ``$delta/(../)^(m-k)@n``, the ancestors of
    ``source``'s ``$delta`` witness ``P``. Nothing in the rule set may delete ``ei``'s nodes
    (they must still be there). Assumes the compared attributes exist (module docstring).
    """
    action = effect.action
    if not isinstance(action, ast.Insert) or not isinstance(action.content, ast.Element) \
            or not isinstance(source.event, ast.Event) or not isinstance(target.event, ast.Event) \
            or source.event.kind is not ast.EventKind.INSERT \
            or not isinstance(target.condition, ast.Not) \
            or not isinstance(target.condition.item, ast.Path):
        return False
    assert effect.below is not None and effect.tree is not None
    condition = target.condition.item
    ei = source.event.path.distinguished()
    if condition.distinguished() != ei or not isinstance(condition.root, ast.Document) \
            or any(s.sep is not ast.Sep.CHILD or s.kind is not ast.StepKind.ELEMENT
                   for s in ei.steps):
        return False
    non_root = append_type(effect.below.copy(), effect.tree, root=False)
    if intersects(non_root, path_nfa(target.event.path, None)):
        return False
    attrs = {a.name: a.value for a in action.content.attributes}
    below = dict(_equalities(action.below.steps[-1].qualifiers)) if action.below.steps else {}
    m = len(condition.steps)
    for k, step in enumerate(condition.steps, start=1):
        for q in step.qualifiers:
            items = q.items if isinstance(q, ast.QAnd) else (q,)
            for item in items:
                pairs = list(_equalities((item,)))
                if not pairs:
                    return False
                name, other = pairs[0]
                ref = _delta_path(other)
                if ref is None or ref[0] > 1:
                    return False
                resolved = attrs.get(ref[1]) if ref[0] == 0 else below.get(ref[1])
                if not isinstance(resolved, ast.Path) or _delta_path(resolved) != (m - k, name):
                    return False
    for rule in ruleset:
        for i, other_action in enumerate(rule.actions):
            if isinstance(other_action, ast.Delete) and intersects(
                    _effect(rule, i, other_action).nodes, path_nfa(source.event.path, None)):
                return False
    return True


# --- the decomposition of section 3.2.1 (Example 6) -----------------------------------------

def _substitute(path: ast.Path, event: ast.Path | None) -> ast.Path:
    if not isinstance(path.root, ast.Delta) or event is None:
        return path
    base = event.distinguished()
    last = base.steps[-1]
    qualified = ast.Step(last.sep, last.kind, last.name, path.root.qualifiers)
    return ast.Path(base.root, (*base.steps[:-1], qualified, *path.steps))


def _normal(steps: tuple[ast.Step, ...]) -> tuple[ast.Step, ...]:
    """Rule 2: delete ``/.`` and ``./``, and ``//.//`` becomes ``//``; qualifiers of a
    deleted ``.`` move to the step before it."""
    out: list[ast.Step] = []
    pending_desc = False
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        if step.kind is ast.StepKind.SELF and (step.sep is ast.Sep.CHILD or not last) and out:
            if step.qualifiers:
                prev = out[-1]
                out[-1] = ast.Step(prev.sep, prev.kind, prev.name,
                                   prev.qualifiers + step.qualifiers)
            pending_desc = pending_desc or step.sep is ast.Sep.DESCENDANT
            continue
        if pending_desc:
            step = ast.Step(ast.Sep.DESCENDANT, step.kind, step.name, step.qualifiers)
            pending_desc = False
        out.append(step)
    return tuple(out)


def decompose(condition: ast.Path, event: ast.Path | None = None) -> tuple[ast.Path, ...]:
    """The set ``C`` of qualifier-free conditions of section 3.2.1 (Example 6), ``$delta``
    replaced by the event path ``event``.

    The rules, applied to the leftmost qualifier first, else to the leftmost ``..``:

    1. ``u v/.. w`` becomes ``u[v] w`` (the parent of ``v``: ``u``'s node with a ``v``
       child). The extracted text of the rule for ``//..`` is garbled ("replace ci by
       u./[v]w and u v//*[*]"); reconstructed: ``u v//.. w`` becomes ``u[v] w`` (the parent
       of ``v`` itself) and ``u v//. w`` (``v`` or an element below it, as the parent of
       one of its children). The paper's ``u v//*[*]`` would miss ``v`` itself and elements
       whose only children are text; the qualifier ``[*]`` is dropped, which only adds.
    2. ``/.`` and ``./`` are deleted, ``//.//`` becomes ``//``.
    3. ``u[v]w`` becomes ``u[v]`` and ``uw``.
    4. ``u[v]`` becomes ``u/v`` for a relative path, ``v`` for an expression, ``u[x]`` and
       ``u[y]`` for ``x and y`` / ``x or y``, and the path operands of a comparison.

    >>> from xmlevents.rules import parse_path
    >>> c = parse_path("$delta[.='Mushroom']/../..[name='Baghdad Cafe']")
    >>> event = parse_path("document('g.xml')/guide/restaurant/entree/ingredient")
    >>> for p in decompose(c, event):
    ...     print(p)
    document('g.xml')/guide/restaurant/entree/ingredient
    document('g.xml')/guide/restaurant/entree
    document('g.xml')/guide/restaurant/name
    """
    out: list[ast.Path] = []
    _decompose(_substitute(condition, event), event, out, 0)
    return tuple(dict.fromkeys(out))


def _decompose(path: ast.Path, event: ast.Path | None, out: list[ast.Path], depth: int) -> None:
    if depth > 64:
        out.append(path.distinguished())
        return
    root = path.root
    steps = _normal(path.steps)
    if isinstance(root, ast.Delta) and root.qualifiers:
        bare = ast.Path(ast.Delta(), steps)
        for q in root.qualifiers:
            _qualifier(ast.Path(ast.Delta(), ()), q, event, out, depth)
        _decompose(bare, event, out, depth + 1)
        return
    for i, step in enumerate(steps):
        if step.qualifiers:
            u = (*steps[:i], ast.Step(step.sep, step.kind, step.name))
            for q in step.qualifiers:
                _qualifier(ast.Path(root, u), q, event, out, depth)
            if i + 1 < len(steps):
                _decompose(ast.Path(root, (*u, *steps[i + 1:])), event, out, depth + 1)
            return
    for i, step in enumerate(steps):
        if step.kind is ast.StepKind.PARENT:
            if i == 0:
                _decompose(ast.Path(root, steps[1:]) if len(steps) > 1 or root is None
                           or isinstance(root, ast.Delta) else path.distinguished(),
                           event, out, depth + 1)
                return
            v = steps[i - 1]
            w = steps[i + 1:]
            inner = ast.Path(None, (ast.Step(ast.Sep.CHILD, v.kind, v.name, v.qualifiers),))
            holder = ast.Step(v.sep, ast.StepKind.SELF, None, (inner,))
            _decompose(ast.Path(root, (*steps[:i - 1], holder, *w)), event, out, depth + 1)
            if step.sep is ast.Sep.DESCENDANT:
                below = ast.Step(ast.Sep.DESCENDANT, ast.StepKind.SELF)
                _decompose(ast.Path(root, (*steps[:i], below, *w)), event, out, depth + 1)
            return
    out.append(ast.Path(root, steps) if steps or not isinstance(root, ast.Document) else path)


def _qualifier(u: ast.Path, q: ast.Qualifier | ast.Operand, event: ast.Path | None,
               out: list[ast.Path], depth: int) -> None:
    if isinstance(q, ast.Path):
        if q.absolute:
            _decompose(_substitute(q, event), event, out, depth + 1)
        else:
            _decompose(ast.Path(u.root, (*u.steps, *q.steps)), event, out, depth + 1)
    elif isinstance(q, ast.Compare):
        for side in (q.left, q.right):
            _qualifier(u, side, event, out, depth)
    elif isinstance(q, (ast.QAnd, ast.QOr)):
        for item in q.items:
            _qualifier(u, item, event, out, depth)


# --- the analysis ----------------------------------------------------------------------------

def analyse(ruleset: ast.RuleSet, *, strict: bool = False) -> Analysis:
    """The triggering and activation graphs of ``ruleset`` and the termination verdict
    (seed 002, section 3). ``strict`` drops the paper's assumptions about insertions (see
    the module docstring): sound without them, and less precise.

    >>> from xmlevents.rules import parse_rules
    >>> a = analyse(parse_rules('''
    ... rule Loop priority 1: on INSERT document('d')//x do INSERT <x/> BELOW document('d')/a
    ... '''))
    >>> print(str(a.verdict).replace("; ", ";\\n"))
    may not terminate: the triggering graph has the cycle Loop -> Loop;
    the activation graph has the cycle Loop -> Loop
    """
    rules = ruleset.rules
    names = tuple(r.name for r in rules)
    effects = {r.name: [_effect(r, i, a) for i, a in enumerate(r.actions)] for r in rules}
    trig: list[Arc] = []
    act: list[Arc] = []
    notes: list[str] = []
    for rj in rules:
        if isinstance(rj.event, ast.NamedEvent):
            notes.append(f"{rj.name}: on EVENT {rj.event.name} is a composite event; any "
                         "insertion or deletion may raise it, and its $delta may be any node")
    triggered_by: dict[tuple[str, str], list[_Effect]] = {}
    for ri, rj in itertools.product(rules, rules):
        for effect in effects[ri.name]:
            if isinstance(rj.event, ast.NamedEvent):
                reason: str | None = (f"{_what(ri, effect)} may raise the composite event "
                                      f"{rj.event.name} (conservative)")
            else:
                why = _triggers(effect, rj.event)
                reason = None if why is None else f"{_what(ri, effect)}: {why}"
            if reason is not None:
                trig.append(Arc(ri.name, rj.name, reason))
                triggered_by.setdefault((ri.name, rj.name), []).append(effect)
    for ri, rj in itertools.product(rules, rules):
        delta = _delta(rj)
        reasons: list[str] = []
        for effect in effects[ri.name]:
            for positive, path in dict.fromkeys(_literals(rj.condition)):
                why = _activates(effect, positive, path, delta)
                if why is not None:
                    reasons.append(f"{_what(ri, effect)}: {why}")
                    break
        uses_delta = any(p.uses_delta for _, p in _literals(rj.condition))
        fresh = [e for e in triggered_by.get((ri.name, rj.name), [])
                 if strict or not _mirror_false(ruleset, ri, e, rj)]
        if uses_delta and fresh:
            reasons.append(f"{_what(ri, fresh[0])} may trigger {rj.name}, whose condition is "
                           "evaluated on a new $delta binding")
        if ri is rj and not isinstance(rj.condition, ast.TrueCondition) \
                and self_disactivating(rj, strict=strict):
            notes.append(f"{rj.name} is self-disactivating (section 3.2, Example 7)")
        elif ri is rj:
            reasons.append("its condition may still be true after its action (not "
                           "self-disactivating)")
        act.extend(Arc(ri.name, rj.name, r) for r in dict.fromkeys(reasons))
    triggering = Graph("triggering", names, tuple(trig))
    activation = Graph("activation", names, tuple(act))
    t_cycle, a_cycle = triggering.cycle(), activation.cycle()
    if t_cycle is None:
        verdict = Verdict(True, "triggering")
    elif a_cycle is None:
        verdict = Verdict(True, "activation")
    else:
        verdict = Verdict(False, None, {"triggering": t_cycle, "activation": a_cycle})
    return Analysis(ruleset, triggering, activation, verdict, tuple(notes))
