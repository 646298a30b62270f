"""The pieces of ECA rule execution (seed 002, section 2.6): compiled rules, the index that
finds the rules an update may trigger, the candidate documents and ``$delta`` instantiations
of a rule, and the application of one action.

The :class:`~xmlevents.rules.Store` (``_store.py``) drives these: it applies the update at
the head of the schedule, tells :func:`fire` what the update inserted and deleted (read off
the watched documents' primitive events), and places the fired rules' actions at the head of
the schedule, higher priority first.

Decisions the paper leaves open, taken here (and in ``docs/guide/rules.md``):

* ``INSERT r BELOW e`` without ``BEFORE``/``AFTER``: ``r`` goes in as the last child.
  ``AFTER q`` where no child satisfies ``q`` puts it first (there is nothing it must
  follow); ``BEFORE q`` where none does puts it last. ``BELOW e`` selecting nothing inserts
  nothing (section 2.3: one sub-document per node of ``N``, and ``N`` is empty).
* An action is evaluated when it is taken from the schedule (section 2.6 applies the update
  at the head), all its instantiations first and then applied, so one instantiation's
  insertion does not change where the next goes; several sub-documents below the same node
  keep the order of the instantiations (the paper: "non-deterministic").
* A target an action selects outside the store's live documents (through a deleted
  ``$delta``, which lives in the copy of the document as it was) is left alone.
* ``DELETE`` of a document's root element is refused (a document keeps its root).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from xmlevents.algebra import InvalidArgumentError, XmlEventsError

from . import ast
from ._xpath import (
    CompiledCondition,
    CompiledContent,
    CompiledPath,
    CompiledQualifier,
    SelectedNode,
    compile_condition,
    compile_content,
    compile_path,
    compile_qualifier,
)

__all__ = ["UpdateError", "StepLimitError", "ActionError", "TraceStep", "CompiledRule",
           "CompiledAction", "RuleIndex", "Changes", "Firing", "fire", "apply_action",
           "describe", "copy_with_ids"]


# --- errors ----------------------------------------------------------------------------------

class UpdateError(XmlEventsError, RuntimeError):
    """A top-level update that did not finish, and was rolled back (section 2.6, issue 17).

    Every document is back to its state before the update. ``update`` is the update's number
    in the store, ``step`` the step that failed (1 is the top-level update itself), ``rule``
    the rule whose action failed (None for the top-level update), ``cause`` the error, and
    ``trace`` the steps that ran before it (undone now).
    """

    def __init__(self, reason: str, *, update: int, step: int, rule: str | None,
                 cause: BaseException | None = None,
                 trace: Iterable[TraceStep] = ()) -> None:
        self.reason = reason
        self.update = update
        self.step = step
        self.rule = rule
        self.cause = cause
        self.trace = tuple(trace)
        who = f"rule {rule}" if rule is not None else "the top-level update"
        super().__init__(f"update {update} rolled back: step {step} ({who}): {reason}")


class StepLimitError(UpdateError):
    """The rule cascade of an update needed more than ``max_steps`` steps: it may not
    terminate (section 3 analyses when it surely does). ``rule`` is the rule whose action
    was next."""


class ActionError(XmlEventsError, ValueError):
    """An action that cannot be applied (e.g. ``DELETE`` of a document's root element)."""


# --- the trace -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TraceStep:
    """One action applied (section 2.6: the update at the head of the schedule).

    Attributes:
        update: the top-level update's number in the store (1, 2, ...).
        step: the step within it; 1 is the top-level update itself.
        rule: the rule whose action this is; None for the top-level update.
        doc: the candidate document the action ran for (the ``d`` of ``docsAndDeltas``);
            for the top-level update, the document its path names (None for
            ``with store.update():``).
        action: the action's text (None for ``with store.update():``, any lxml edits).
        deltas: the ``$delta`` instantiations for ``doc``, as node paths with ids
            (``/stores[n1]/store[n2]/product[n9]``, ``.../@id`` for an attribute).
        triggered: the rules whose event this step raised (a new or deleted node selected by
            their event path, or a composite event of their ``EVENT`` type).
        fired: those of them with a non-empty set of candidate documents, highest priority
            first: their actions now head the schedule.
    """

    update: int
    step: int
    rule: str | None
    doc: str | None
    action: str | None
    deltas: tuple[str, ...] = ()
    triggered: tuple[str, ...] = ()
    fired: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (a line of ``xmlevents rules run``)."""
        return {"update": self.update, "step": self.step, "rule": self.rule, "doc": self.doc,
                "action": self.action, "deltas": list(self.deltas),
                "triggered": list(self.triggered), "fired": list(self.fired)}


# --- compiled rules and their index ----------------------------------------------------------

def _uses_delta(node: ast.Node) -> bool:
    return any(isinstance(n, ast.Delta) for n in ast.walk(node))


class CompiledAction:
    """An action ready to run; ``instance_level`` when it references ``$delta`` anywhere
    (footnote 2: then it runs once per instantiation, else once per candidate document)."""

    __slots__ = ("action", "content", "instance_level", "position", "target", "text",
                 "where")

    def __init__(self, action: ast.Action, namespaces: Mapping[str, str] | None) -> None:
        self.action = action
        self.text = str(action)
        self.instance_level = _uses_delta(action)
        self.content: CompiledContent | None = None
        self.position: CompiledQualifier | None = None
        self.where: ast.Where | None = None
        if isinstance(action, ast.Insert):
            self.target: CompiledPath = compile_path(action.below, namespaces)
            self.content = compile_content(action.content, namespaces)
            if action.position is not None:
                self.position = compile_qualifier(action.position.test, namespaces)
                self.where = action.position.where
        else:
            self.target = compile_path(action.target, namespaces)

    @property
    def document(self) -> str | None:
        """The document its target path names (None for a ``$delta`` root)."""
        root = self.target.path.root
        return root.name if isinstance(root, ast.Document) else None


class CompiledRule:
    """A rule with its event path, condition and actions compiled."""

    __slots__ = ("actions", "condition", "event", "rule")

    def __init__(self, rule: ast.Rule, namespaces: Mapping[str, str] | None) -> None:
        self.rule = rule
        self.event = (compile_path(rule.event.path, namespaces)
                      if isinstance(rule.event, ast.Event) else None)
        self.condition: CompiledCondition = compile_condition(rule.condition, namespaces)
        self.actions = tuple(CompiledAction(a, namespaces) for a in rule.actions)

    @property
    def name(self) -> str:
        return self.rule.name


_ANY = ""  # the index key of event paths whose last step names no single node name


def _event_key(path: ast.Path) -> str:
    """The local name a node must have to be selected by ``path``: its last step's
    (``@name`` for an attribute; a prefixed name by its local part, as primitive events name
    nodes); ``_ANY`` for ``*``, ``@*``, ``.`` and ``..``. The namespace itself is checked when
    the event path is evaluated."""
    leaf = path.steps[-1]
    if leaf.name is None or leaf.name == "*":
        return _ANY
    local = leaf.name.rpartition(":")[2]
    return f"@{local}" if leaf.kind is ast.StepKind.ATTRIBUTE else local


class RuleIndex:
    """The rules by what can trigger them, so an update looks up only the rules whose event
    path ends in the name of a node it changed — not every rule (issue 17, speed).

    ``INSERT``/``DELETE`` rules are keyed by (document, last step name), ``EVENT`` rules by
    the definition name.
    """

    def __init__(self, rules: Iterable[CompiledRule]) -> None:
        self.rules = tuple(rules)
        self._by_kind: dict[ast.EventKind, dict[str, dict[str, list[CompiledRule]]]] = {
            ast.EventKind.INSERT: {}, ast.EventKind.DELETE: {}}
        self.named: dict[str, list[CompiledRule]] = {}
        for compiled in self.rules:
            event = compiled.rule.event
            if isinstance(event, ast.NamedEvent):
                self.named.setdefault(event.name, []).append(compiled)
                continue
            root = event.path.root
            assert isinstance(root, ast.Document)  # an event path starts at document(...)
            by_doc = self._by_kind[event.kind].setdefault(root.name, {})
            by_doc.setdefault(_event_key(event.path), []).append(compiled)

    def documents_with(self, kind: ast.EventKind) -> set[str]:
        """The documents some rule watches for events of ``kind``."""
        return set(self._by_kind[kind])

    def lookup(self, kind: ast.EventKind, doc: str, keys: Iterable[str]) -> list[CompiledRule]:
        """The rules of ``kind`` on ``doc`` whose event path may select a node with one of
        the names ``keys`` (``name`` or ``@name``)."""
        by_doc = self._by_kind[kind].get(doc)
        if not by_doc:
            return []
        found: dict[int, CompiledRule] = {id(r): r for r in by_doc.get(_ANY, ())}
        for key in keys:
            for rule in by_doc.get(key, ()):
                found[id(rule)] = rule
        return list(found.values())


# --- what an update changed ------------------------------------------------------------------

@dataclass
class Changes:
    """What one step did to one document, read off its primitive events: the ids of the
    elements inserted and deleted (every node of a sub-document: a watched document reports
    each), the (owner id, name) of the attributes, and the names for the index."""

    inserted: set[str] = field(default_factory=set)
    inserted_attributes: set[tuple[str, str]] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)
    deleted_attributes: set[tuple[str, str]] = field(default_factory=set)
    inserted_keys: set[str] = field(default_factory=set)
    deleted_keys: set[str] = field(default_factory=set)
    composites: list[Any] = field(default_factory=list)
    touched: bool = False

    def take(self, event: Any) -> None:
        """Note one primitive event (``ins``/``del`` of elements and attributes; text
        events and attribute updates insert or delete no node of the paper's model)."""
        self.touched = True
        op = str(event.op.value if hasattr(event.op, "value") else event.op)
        if op not in ("ins", "del"):
            return
        step = event.pi.pt.steps[-1]
        axis = str(step.axis.value)
        ids = event.pi.ids
        name = str(step.name)  # Clark notation where the node has a namespace
        local = name.rpartition("}")[2]  # the index's key (_event_key)
        if axis == "attribute":
            key = (ids[-2], name)
            (self.inserted_attributes if op == "ins" else self.deleted_attributes).add(key)
            (self.inserted_keys if op == "ins" else self.deleted_keys).add("@" + local)
        elif axis == "child" and step.name is not None:
            (self.inserted if op == "ins" else self.deleted).add(ids[-1])
            (self.inserted_keys if op == "ins" else self.deleted_keys).add(local)


def copy_with_ids(doc: Any) -> tuple[etree._Element, dict[Any, str]]:
    """A deep copy of a watched document's root, and the id of each copied node: the
    document as it was, where ``DELETE`` event paths are evaluated (section 2.1)."""
    root = doc.getroot()
    duplicate = copy.deepcopy(root)
    ids: dict[Any, str] = {}
    for original, copied in zip(root.iter(), duplicate.iter(), strict=True):
        ident = doc.id_of(original)
        if ident is not None:
            ids[copied] = ident
    return duplicate, ids


def _local(tag: Any) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else "node()"


def describe(node: SelectedNode, ids: Mapping[Any, str] | Any) -> str:
    """A node as its path with ids, ``/stores[n1]/store[n2]/@id``: ``ids`` is a mapping
    from nodes to ids or a watched document (its ``id_of``)."""
    lookup = ids.get if isinstance(ids, Mapping) else ids.id_of
    suffix = ""
    element: Any = node
    if not isinstance(node, etree._Element):
        element = node.getparent()
        suffix = f"/@{_local(node.attrname)}"
    parts: list[str] = []
    while element is not None:
        ident = lookup(element)
        parts.append(f"{_local(element.tag)}[{ident}]" if ident else _local(element.tag))
        element = element.getparent()
    return "/" + "/".join(reversed(parts)) + suffix


# --- firing ----------------------------------------------------------------------------------

@dataclass
class Firing:
    """A fired rule with its ``docsAndDeltas`` (section 2.6): per candidate document, the
    ``$delta`` instantiations (for an instance-level condition, those where it held)."""

    rule: CompiledRule
    docs_and_deltas: list[tuple[str, list[SelectedNode], list[str]]]


def _candidates(compiled: CompiledRule, doc: str, selected: list[SelectedNode],
                documents: Mapping[str, Any], names: list[str]
                ) -> tuple[str, list[SelectedNode], list[str]] | None:
    """Evaluate the condition for one document: once, or once per instantiation when it
    references ``$delta`` (section 2.2); None when the document is no candidate."""
    condition = compiled.condition
    if condition.uses_delta:
        held = [(n, d) for n, d in zip(selected, names, strict=True)
                if condition(documents, n)]
        if not held:
            return None
        return doc, [n for n, _ in held], [d for _, d in held]
    if not condition(documents):
        return None
    return doc, selected, names


def fire(index: RuleIndex, documents: Mapping[str, Any], changes: Mapping[str, Changes],
         before: Mapping[str, tuple[etree._Element, dict[Any, str]]],
         node_of: Any) -> tuple[list[str], list[Firing]]:
    """The rules one step triggered and those that fired (section 2.6), highest priority
    first.

    For an ``INSERT e`` rule the instantiations are the nodes ``e`` selects now that the
    step inserted; for ``DELETE e`` the nodes ``e`` selects in ``before`` (the document as
    it was, a copy with ids) that the step deleted; for ``EVENT Name`` the node at each
    composite's path instance (``node_of``). Conditions are evaluated on the documents as
    they are now.
    """
    triggered: list[CompiledRule] = []
    firings: list[Firing] = []
    seen: set[int] = set()
    pending: list[tuple[CompiledRule, str, list[SelectedNode], list[str]]] = []
    for doc, change in changes.items():
        watched = documents[doc]
        for compiled in index.lookup(ast.EventKind.INSERT, doc, change.inserted_keys):
            assert compiled.event is not None
            fresh: list[SelectedNode] = []
            for node in compiled.event(documents):
                if isinstance(node, etree._Element):
                    if watched.id_of(node) in change.inserted:
                        fresh.append(node)
                elif (watched.id_of(node.getparent()), str(node.attrname)) in \
                        change.inserted_attributes:
                    fresh.append(node)
            if fresh:
                pending.append((compiled, doc, fresh, [describe(n, watched) for n in fresh]))
        if change.deleted_keys and doc in before:
            old_root, ids = before[doc]
            as_was = {**documents, doc: old_root}
            for compiled in index.lookup(ast.EventKind.DELETE, doc, change.deleted_keys):
                assert compiled.event is not None
                gone: list[SelectedNode] = []
                for node in compiled.event(as_was):
                    if isinstance(node, etree._Element):
                        if ids.get(node) in change.deleted:
                            gone.append(node)
                    elif (ids.get(node.getparent()), str(node.attrname)) in \
                            change.deleted_attributes:
                        gone.append(node)
                if gone:
                    pending.append((compiled, doc, gone, [describe(n, ids) for n in gone]))
        by_rule: dict[int, tuple[CompiledRule, list[SelectedNode], list[str]]] = {}
        for composite in change.composites:
            for compiled in index.named.get(composite.type.name, ()):
                node = node_of(composite)
                if node is None:
                    continue
                entry = by_rule.setdefault(id(compiled), (compiled, [], []))
                entry[1].append(node)
                entry[2].append(describe(node, watched))
        for compiled, nodes, names in by_rule.values():
            pending.append((compiled, doc, nodes, names))
    grouped: dict[int, Firing] = {}
    for compiled, doc, nodes, names in pending:
        if id(compiled) not in seen:
            seen.add(id(compiled))
            triggered.append(compiled)
        candidate = _candidates(compiled, doc, nodes, documents, names)
        if candidate is not None:
            grouped.setdefault(id(compiled), Firing(compiled, [])).docs_and_deltas.append(
                candidate)
    firings = sorted(grouped.values(), key=lambda f: -f.rule.rule.priority)
    names_triggered = [c.name for c in sorted(triggered, key=lambda c: -c.rule.priority)]
    return names_triggered, firings


# --- applying an action ----------------------------------------------------------------------

def _children(node: etree._Element) -> list[etree._Element]:
    return [c for c in node if isinstance(c.tag, str)]


def _place_text(parent: etree._Element, index: int, text: str) -> None:
    if index == 0:
        parent.text = (parent.text or "") + text
    else:
        previous = parent[index - 1]
        previous.tail = (previous.tail or "") + text


def apply_action(action: CompiledAction, documents: Mapping[str, Any],
                 instantiations: list[SelectedNode | None], roots: set[int]) -> None:
    """Apply one action for the given ``$delta`` instantiations (``[None]`` for a
    document-level action): evaluate every target, content and position first, then edit
    (section 2.3). ``roots`` holds ``id()`` of the store's root elements: a target outside
    them is left alone.

    Raises:
        ActionError: for ``DELETE`` of a root element.
        UnknownDocumentError: for a ``document('name')`` the store does not have.
    """
    if isinstance(action.action, ast.Delete):
        doomed: list[SelectedNode] = []
        for delta in instantiations:
            for node in action.target(documents, delta):
                element = node if isinstance(node, etree._Element) else node.getparent()
                if element is None or id(element.getroottree().getroot()) not in roots:
                    continue
                if isinstance(node, etree._Element) and node.getparent() is None:
                    raise ActionError(f"{action.text}: selects the root element "
                                      f"<{_local(node.tag)}> of its document; a document "
                                      "keeps its root (delete below it)")
                doomed.append(node)
        for node in doomed:
            if isinstance(node, etree._Element):
                parent = node.getparent()
                if parent is not None:  # not gone with an ancestor deleted before it
                    parent.remove(node)
            else:
                owner = node.getparent()
                if owner is not None:
                    owner.attrib.pop(str(node.attrname), None)
        return
    assert action.content is not None
    plans: list[tuple[etree._Element, str, etree._Element | None,
                      list[etree._Element | str]]] = []
    for delta in instantiations:
        for parent in action.target.elements(documents, delta):
            if id(parent.getroottree().getroot()) not in roots:
                continue
            content = action.content(documents, delta)
            if action.where is None:
                plans.append((parent, "last", None, content))
                continue
            assert action.position is not None
            passing = [c for c in _children(parent) if action.position(c, documents, delta)]
            if action.where is ast.Where.AFTER:
                plans.append((parent, "after", passing[-1], content) if passing
                             else (parent, "first", None, content))
            else:
                plans.append((parent, "before", passing[0], content) if passing
                             else (parent, "last", None, content))
    cursors: dict[tuple[int, int], etree._Element] = {}
    for parent, how, anchor, content in plans:
        key = (id(parent), id(anchor) if anchor is not None else 0)
        for item in content:
            if how == "last":
                index = len(parent)
            elif how == "before":
                assert anchor is not None
                index = parent.index(anchor)
            else:
                cursor = cursors.get(key, anchor)
                index = 0 if cursor is None else parent.index(cursor) + 1
            if isinstance(item, str):
                _place_text(parent, index, item)
            else:
                parent.insert(index, item)
                if how in ("after", "first"):
                    cursors[key] = item


def check_max_steps(max_steps: int) -> int:
    """``max_steps`` as given, or an error saying what it must be."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise InvalidArgumentError(f"max_steps={max_steps!r}: give a positive number of steps "
                                   "(the top-level update is the first)")
    return max_steps
