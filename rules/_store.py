"""A store of named watched documents on which ECA rules run (seed 002, section 2.6).

>>> from lxml import etree
>>> from xmlevents.rules import Store
>>> store = Store({"s.xml": etree.fromstring("<stores><store id='s1'/></stores>"),
...                "p.xml": etree.fromstring("<products><product id='p1'/></products>")})
>>> _ = store.rules('''
... rule R1 priority 2:
... on INSERT document('s.xml')/stores/store/product
... if not(document('p.xml')/products/product[@id=$delta/@id]/store[@id=$delta/../@id])
... do INSERT <store id='{$delta/../@id}'/>
...    BELOW document('p.xml')/products/product[@id=$delta/@id] AFTER TRUE
... ''')
>>> steps = store.execute("INSERT <product id='p1'/> BELOW document('s.xml')/stores/store")
>>> [(s.step, s.rule, s.deltas) for s in steps]
[(1, None, ()), (2, 'R1', ('/stores[n1]/store[n2]/product[n4]',))]
>>> store["p.xml"].tostring()
b'<products><product id="p1"><store id="s1"/></product></products>'
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from lxml import etree

import xmlevents.dom as dom
from xmlevents.algebra import ArgumentTypeError, InvalidArgumentError, XmlEventsError

from . import ast
from ._errors import UnknownDocumentError
from ._execute import (
    Changes,
    CompiledAction,
    CompiledRule,
    Firing,
    RuleIndex,
    StepLimitError,
    TraceStep,
    UpdateError,
    apply_action,
    check_max_steps,
    copy_with_ids,
    fire,
)
from ._parser import parse_action, parse_rules
from ._xpath import SelectedNode

__all__ = ["Store", "BoundRules"]


def _c14n(element: etree._Element) -> bytes:
    return etree.tostring(element, method="c14n")


class BoundRules:
    """A rule set installed in a :class:`Store`: its rules compiled and indexed by event.

    Iterating, ``len`` and ``rules["R1"]`` act on the :class:`~xmlevents.rules.RuleSet`
    (``.ruleset``); other attributes are the rule set's too.
    """

    def __init__(self, ruleset: ast.RuleSet, namespaces: Mapping[str, str] | None) -> None:
        self.ruleset = ruleset
        self.compiled = tuple(CompiledRule(r, namespaces) for r in ruleset.by_priority())
        self.index = RuleIndex(self.compiled)

    def __iter__(self) -> Iterator[ast.Rule]:
        return iter(self.ruleset)

    def __len__(self) -> int:
        return len(self.ruleset)

    def __getitem__(self, name: str) -> ast.Rule:
        return self.ruleset[name]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ruleset, name)

    def __repr__(self) -> str:
        return f"<BoundRules {', '.join(r.name for r in self.ruleset) or '(none)'}>"


#: One entry of the schedule: the action, the rule it belongs to, and ``docsAndDeltas``.
_Entry = tuple[CompiledAction, CompiledRule, list[tuple[str, list[SelectedNode], list[str]]]]


class Store:
    """Named watched documents on one :class:`xmlevents.Monitor`, with the rules that react
    to their updates (section 2.6).

    ``Store({"s.xml": a, "p.xml": b})`` or ``Store(s=a, p=b)``: each document an lxml tree or
    element (watched in place), a watched document (all of them on one monitor, which the
    store then uses), or a file path. ``store[name]`` is the watched document.

    A *top-level update* — :meth:`execute` of an action, or the lxml edits of a ``with
    store.update():`` block — is atomic: the rules are evaluated once it is complete; then
    the fired rules' actions go to the head of the schedule, higher priority first, and run
    one per step until the schedule is empty. It is a transaction: if it does not finish
    (more than ``max_steps`` steps, an action failing, an unknown document), every document
    it changed is restored and :class:`UpdateError` says where and why.

    **What the monitor saw of a failed update**: every edit, as it happened (subscribers
    and the event graph see each step's primitive events at once), and then the rollback as
    edits: each document the update changed gets a copy of its root element from before
    the update (``doc.setroot``), reported as the deletion of the changed root and the
    insertion of the restored one, whose nodes get new ids. Rules do not run on the
    rollback. Hold no element of a document across a failed update: take
    ``store[name].getroot()`` again.

    Args:
        documents: the documents by name (or give them as keyword arguments).
        namespaces: prefixes the rules' names use.
        max_steps: the most steps one top-level update may take (itself included).
        monitor: the monitor to put lxml trees and files on (default: the watched
            documents', else a new one).
    """

    def __init__(self, documents: Mapping[str, Any] | None = None, /, *,
                 namespaces: Mapping[str, str] | None = None, max_steps: int = 1000,
                 monitor: dom.Monitor | None = None, **more: Any) -> None:
        given: dict[str, Any] = dict(documents or {})
        for name, doc in more.items():
            if name in given:
                raise InvalidArgumentError(f"Store: document {name!r} is given twice")
            given[name] = doc
        self.namespaces = dict(namespaces or {})
        self.max_steps = check_max_steps(max_steps)
        monitors = {id(d.monitor): d.monitor for d in given.values()
                    if isinstance(d, dom.WatchedDocument)}
        if monitor is not None:
            monitors.setdefault(id(monitor), monitor)
        if len(monitors) > 1:
            raise InvalidArgumentError(
                "Store: the watched documents are on different monitors; make them with one "
                "(xmlevents.fromstring(text, monitor=m, name=...)), or give lxml trees")
        self.monitor: dom.Monitor = (next(iter(monitors.values())) if monitors
                                     else dom.Monitor(namespaces=self.namespaces or None))
        self.documents: dict[str, Any] = {}
        for name, doc in given.items():
            self.documents[name] = self._load(name, doc)
        self._store_name = {d.name: n for n, d in self.documents.items()}
        self._bound = BoundRules(ast.RuleSet(()), self.namespaces)
        self._updates = 0
        #: Every step of every top-level update that finished, in order.
        self.trace: list[TraceStep] = []
        self._collecting = False
        self._changes: dict[str, Changes] = {}
        self._busy = False
        self._receivers: list[Any] = []
        for name, doc in self.documents.items():
            self._receivers.append(self._receiver(name))
            doc.mutations.connect(self._receivers[-1], sender=doc, weak=False)
        self.monitor.composites.connect(self._composite, weak=False)

    def _load(self, name: str, doc: Any) -> Any:
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(f"Store: document name {name!r}; give a name such as "
                                       "'s.xml', as rules write document('s.xml')")
        if isinstance(doc, dom.WatchedDocument):
            return doc
        if isinstance(doc, (str, os.PathLike)):
            return dom.parse(doc, name=name, monitor=self.monitor)
        if isinstance(doc, (etree._Element, etree._ElementTree)):
            return dom.wrap(doc, name=name, monitor=self.monitor)
        raise ArgumentTypeError(f"Store: document {name!r} is {doc!r}; give an lxml tree or "
                                "element, a watched document or a file path")

    def _receiver(self, name: str) -> Any:
        def receive(doc: Any, event: Any) -> None:
            if self._collecting:
                self._changes.setdefault(name, Changes()).take(event)
        return receive

    def _composite(self, doc: Any, event: Any) -> None:
        if self._collecting:
            name = self._store_name.get(getattr(doc, "name", None))
            if name is not None:
                self._changes.setdefault(name, Changes()).composites.append(event)

    # --- the public interface ----------------------------------------------------------

    def __getitem__(self, name: str) -> Any:
        """The watched document ``name``."""
        if name not in self.documents:
            raise UnknownDocumentError(name, self.documents)
        return self.documents[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.documents)

    def rules(self, rules: str | ast.RuleSet, *, source: str = "") -> BoundRules:
        """Install the rules (a rule file's text or a :class:`RuleSet`), replacing any
        installed before, and return them compiled and indexed.

        Raises:
            RuleSyntaxError, RuleError: for text that does not parse or a bad rule set.
        """
        ruleset = rules if isinstance(rules, ast.RuleSet) else parse_rules(rules, source=source)
        self._bound = BoundRules(ruleset, self.namespaces)
        return self._bound

    @property
    def ruleset(self) -> BoundRules:
        """The installed rules."""
        return self._bound

    def define(self, definitions: Any) -> Any:
        """Add composite event definitions to the store's monitor, for ``on EVENT Name``
        rules (see :meth:`xmlevents.Monitor.define`)."""
        return self.monitor.define(definitions)

    def execute(self, action: str | ast.Action) -> list[TraceStep]:
        """Run a top-level update (``INSERT r BELOW e [BEFORE|AFTER q]`` or ``DELETE e``,
        text or tree, without ``$delta``) and its rule cascade; the steps it took.

        Raises:
            UpdateError: the update did not finish and was rolled back (StepLimitError when
                the cascade exceeded ``max_steps``).
            RuleSyntaxError: for text that does not parse.
        """
        parsed = parse_action(action) if isinstance(action, str) else action
        if any(isinstance(n, ast.Delta) for n in ast.walk(parsed)):
            raise InvalidArgumentError(f"{parsed}: a top-level update has no $delta; start its "
                                       "paths with document('name')")
        compiled = CompiledAction(parsed, self.namespaces)

        def run() -> None:
            apply_action(compiled, self.documents, [None], self._roots())

        return self._run(run, compiled.document, compiled.text)

    @contextmanager
    def update(self) -> Iterator[None]:
        """``with store.update():`` makes the block's lxml edits one top-level update: the
        rules run when the block ends. An exception in the block rolls it back and goes on.

        Raises:
            UpdateError: the cascade did not finish (rolled back, the block's edits too).
        """
        state = self._begin()
        try:
            yield
        except BaseException:
            self._rollback(state)
            raise
        self._finish(state, None, None)

    # --- the execution (section 2.6) -------------------------------------------------------

    def _roots(self) -> set[int]:
        return {id(d.getroot()) for d in self.documents.values()}

    def _copies(self) -> dict[str, tuple[etree._Element, dict[Any, str]]]:
        """The documents some DELETE rule watches, as they are (copies with ids)."""
        wanted = self._bound.index.documents_with(ast.EventKind.DELETE)
        return {n: copy_with_ids(self.documents[n]) for n in wanted if n in self.documents}

    def _begin(self) -> dict[str, Any]:
        if self._busy:
            raise UpdateError("a top-level update is already running; updates do not nest "
                              "(a rule's actions are the way to react)", update=self._updates,
                              step=0, rule=None)
        self._busy = True
        self._updates += 1
        before = self._copies()
        saved = {n: before[n][0] if n in before else copy.deepcopy(d.getroot())
                 for n, d in self.documents.items()}
        self._changes = {}
        self._collecting = True
        return {"before": before, "saved": saved, "touched": set(), "trace": []}

    def _run(self, run: Any, doc: str | None, text: str | None) -> list[TraceStep]:
        state = self._begin()
        try:
            run()
        except Exception as exc:
            self._rollback(state)
            raise self._error(exc, state, 1, None) from exc
        except BaseException:
            self._rollback(state)
            raise
        return self._finish(state, doc, text)

    def _error(self, exc: Exception, state: dict[str, Any], step: int,
               rule: str | None) -> UpdateError:
        cause: BaseException = exc
        if isinstance(exc, UnknownDocumentError) and rule is not None and not exc.rule:
            cause = UnknownDocumentError(exc.document, exc.known or self.documents, rule=rule)
        reason = cause.for_cli() if isinstance(cause, XmlEventsError) else \
            f"{type(cause).__name__}: {cause}"
        return UpdateError(reason, update=self._updates, step=step, rule=rule, cause=cause,
                           trace=state["trace"])

    def _take_changes(self, state: dict[str, Any]) -> dict[str, Changes]:
        changes = self._changes
        self._changes = {}
        state["touched"].update(n for n, c in changes.items() if c.touched)
        return changes

    def _finish(self, state: dict[str, Any], doc: str | None,
                text: str | None) -> list[TraceStep]:
        """Evaluate the rules on the top-level update, then run the schedule to its end."""
        trace: list[TraceStep] = state["trace"]
        step, rule_name = 1, None
        try:
            triggered, firings = self._fire(state)
            trace.append(TraceStep(self._updates, 1, None, doc, text, (), tuple(triggered),
                                   tuple(f.rule.name for f in firings)))
            schedule: list[_Entry] = self._entries(firings)
            while schedule:
                action, compiled, docs_and_deltas = schedule.pop(0)
                step, rule_name = step + 1, compiled.name
                if step > self.max_steps:
                    raise StepLimitError(
                        f"the cascade needs more than max_steps={self.max_steps} steps: "
                        "the rules may not terminate (see `xmlevents rules check`)",
                        update=self._updates, step=step, rule=rule_name, trace=trace)
                state["before"] = self._copies()
                for _doc, nodes, _ in docs_and_deltas:
                    apply_action(action, self.documents,
                                 list(nodes) if action.instance_level else [None],
                                 self._roots())
                triggered, firings = self._fire(state)
                fired = tuple(f.rule.name for f in firings)
                for d, _, names in docs_and_deltas:
                    trace.append(TraceStep(self._updates, step, compiled.name, d, action.text,
                                           tuple(names), tuple(triggered), fired))
                schedule[:0] = self._entries(firings)
        except StepLimitError:
            self._rollback(state)
            raise
        except Exception as exc:
            self._rollback(state)
            raise self._error(exc, state, step, rule_name) from exc
        except BaseException:
            self._rollback(state)
            raise
        self._collecting = False
        self._busy = False
        self.trace.extend(trace)
        return list(trace)

    def _fire(self, state: dict[str, Any]) -> tuple[list[str], list[Firing]]:
        changes = self._take_changes(state)
        if not changes:
            return [], []
        return fire(self._bound.index, self.documents, changes, state["before"],
                    self.monitor.node_of)

    @staticmethod
    def _entries(firings: list[Firing]) -> list[_Entry]:
        """The fired rules' actions, higher priority first (``firings`` is in that order)."""
        return [(action, f.rule, f.docs_and_deltas) for f in firings for action in f.rule.actions]

    def _rollback(self, state: dict[str, Any]) -> None:
        """Restore every document the update changed from its copy (the class docstring
        says what the monitor sees of it)."""
        self._take_changes(state)
        self._collecting = False
        touched: set[str] = state["touched"]
        saved: dict[str, etree._Element] = state["saved"]
        try:
            for name, doc in self.documents.items():
                if name in touched or _c14n(doc.getroot()) != _c14n(saved[name]):
                    doc.setroot(saved[name])
        finally:
            self._busy = False

    def __repr__(self) -> str:
        return f"<Store {', '.join(self.documents)}: {len(self._bound)} rules>"
