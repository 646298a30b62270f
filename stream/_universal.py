"""Earliest detection in general: universality of a union of products of tree languages across
the stack of open elements (seed 004, section 2's earliest detection location; section 5.3's
Theorem 1 covers the case of one derivation, this module the others).

After an event, the unread rest of the document splits into independent *holes*, one per open
element ``e_j``: the rest of its content, i.e. the binary subtree right of the open child
``e_{j+1}`` (for the innermost one, the binary subtree at the current position). The root has no
right sibling (where the tree has text nodes, a text node may follow it: the hole right of the
root is then one of two forests). A derivation of the read part (a *chain*: an entry of each
stacked state, a production at each open element, an entry of the current state) gives each hole
a variable; a candidate ``u`` is a match in a completion iff some chain that marks ``u`` derives
each hole's forest from its variable. So ``u`` is decided iff the union, over the chains marking
``u``, of the products of the holes' languages is every tuple of forests.

That is decided level by level, top down, with *types*: the type of a forest over a set ``Y``
of variables is ``{y in Y : forest in [[y]]}``; only the ⊆-minimal realisable types matter (the
test is monotone in them). A *frontier* is the set of variables a chain may hand to the
level below (the content variable ``x3`` of the open element's production); a *family* holds
one frontier per combination of the holes' minimal types above, ⊆-minimal frontiers only.
``u`` is decided iff every frontier of the family at the current level meets, for every
minimal type of the current hole, an entry whose variable has that type.

The other way round, ``u`` is rejected (no completion can select it any more) iff no chain
marking it has holes whose variables all derive some forest: one frontier per origin, of the
chains whose hole variables are productive, carried down with the families.

Reconstruction (the paper states Theorem 1 for one derivation; its proof takes the derivation
of one right completion, which may differ between completions): the chains are read off the
run's stack of states (:mod:`._poa`), with the observation that a candidate's set membership
at its *origin* — the level whose read part holds it: the stacked state where it was marked
in a preceding sibling's subtree, or the open element it is — describes every chain marking it
(copies pushed into contents, Listing 1 line 15, lie on chains through the origin). Families
and the transitions between them are memoised per automaton state, so a fixed query has a
bounded cost per event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ._grammar import Grammar

__all__ = ["Types", "Universality", "Detector", "label_classes", "TooManyTypes"]

Family = frozenset[frozenset[int]]
#: per origin of candidates, ``((depth, kind), family, reach)``: ``reach`` is the frontier of
#: the chains through the origin whose holes all derive some forest (none: rejected)
Origins = tuple[tuple[tuple[int, str], Family, frozenset[int]], ...]
#: the origins decided, whether the current level's candidates may be, the origins rejected,
#: whether the current level's are
Verdict = tuple[tuple[tuple[int, str], ...], bool, tuple[tuple[int, str], ...], bool]

#: The most minimal types of one closure of variables that are computed; beyond it the general
#: check is given up for the query (it is then detected as Theorem 1 allows: late, never wrong).
MAX_TYPES = 4096


#: The most variables whose productions the general check's closures may expand for one
#: query, and the most steps (a variable tried in combining two types or in the
#: productivity fixpoint) its subset construction may take, before the check is given up
#: for the query, as past :data:`MAX_TYPES` (issue 33, item 5). The closure of the
#: variables asked about is in effect a determinisation of all of the grammar they reach,
#: which the run's own automaton builds only as far as the input goes: a few random
#: queries reach thousands of variables, each with productions to compute for every label
#: class (over 10 s before the first event was decided, on a three-element document).
MAX_CLOSURE = 600
MAX_WORK = 2_000_000


class TooManyTypes(Exception):
    """The subset construction of :class:`Types` went past :data:`MAX_TYPES` types,
    :data:`MAX_CLOSURE` variables or :data:`MAX_WORK` steps."""


def label_classes(grammar: Grammar) -> tuple[int, ...]:
    """Every label class an element name can have: one name per name test, a fresh local name
    in each namespace tested with ``prefix:*``, and a name that passes no test."""
    fresh = "\x00"  # no XML name contains it, so it equals no name test
    names = [fresh]
    for t in grammar.tests:
        names.append(t.value if t.kind == "name" else "{" + t.value + "}" + fresh)
    return tuple(sorted({grammar.classify(n) for n in names}))


def minimize(sets: Iterable[frozenset[int]]) -> list[frozenset[int]]:
    """The ⊆-minimal sets among ``sets``, each once."""
    out: list[frozenset[int]] = []
    for s in sorted(set(sets), key=len):
        if not any(o <= s for o in out):
            out.append(s)
    return out


class Types:
    """Minimal realisable types of forests over sets of a grammar's variables (a bottom-up
    subset construction on the binary encoding, section 2, restricted to ⊆-minimal types).

    The type of ``λ`` is the nullable variables; that of ``a<F1, F2>`` is the variables with a
    production for ``a`` whose left variable is in ``F1``'s type and right one in ``F2``'s.
    Combining is monotone in both types, so the minimal types are generated by combining
    minimal ones; universal variables are in every type and not tracked.

    >>> from xmlevents.stream._notation import parse_grammar
    >>> g = parse_grammar("x -> a<t, t> | λ; y -> *<t, t>; z -> b<t, t>; t -> *<t, t> | λ; "
    ...                   "select x")
    >>> ty = Types(g)
    >>> x, y, z = (g.variables.index(v) for v in "xyz")
    >>> def names(types): return sorted(sorted(g.variables[v] for v in s) for s in types)
    >>> names(ty.minimal(frozenset({x, y})))  # λ is an x, every element a y
    [['x'], ['y']]
    >>> names(ty.minimal(frozenset({x, z})))  # <c/> is neither
    [[]]
    """

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self.classes = label_classes(grammar)
        self._by_closure: dict[frozenset[int], tuple[tuple[int, ...], list[int]]] = {}
        self._minimal: dict[frozenset[int], tuple[frozenset[int], ...]] = {}
        self._productive: dict[int, bool] = {}
        #: the variables expanded in closures, and the steps taken so far (see
        #: :data:`MAX_CLOSURE`, :data:`MAX_WORK`)
        self.expanded: set[int] = set()
        self.work = 0

    def _spend(self, steps: int) -> None:
        """Count ``steps`` more, past :data:`MAX_WORK` raise :class:`TooManyTypes`."""
        self.work += steps
        if self.work > MAX_WORK:
            raise TooManyTypes(f"{self.work} steps")

    def closure(self, ys: Iterable[int]) -> frozenset[int]:
        """The non-universal variables reachable from ``ys`` through productions."""
        g = self.grammar
        seen: set[int] = set()
        todo = [y for y in ys if not g.universal(y)]
        while todo:
            y = todo.pop()
            if y in seen:
                continue
            seen.add(y)
            if y not in self.expanded:
                # a variable's first expansion computes its productions (later ones are
                # looked up): the costly part, counted once
                if len(self.expanded) >= MAX_CLOSURE:
                    raise TooManyTypes(f"over {MAX_CLOSURE} variables")
                self.expanded.add(y)
            for c in self.classes:
                for left, right, _m in g.productions(y, c):
                    for v in (left, right):
                        if v not in seen and not g.universal(v):
                            todo.append(v)
        return frozenset(seen)

    def _types(self, closure: frozenset[int]) -> tuple[tuple[int, ...], list[int]]:
        """The closure's variables in bit order and its minimal types as bit masks."""
        found = self._by_closure.get(closure)
        if found is not None:
            return found
        g = self.grammar
        order = tuple(sorted(closure))
        bit = {v: 1 << k for k, v in enumerate(order)}
        # per class, per variable: its productions as (left mask, right mask), 0 = universal
        prods = [[tuple((bit.get(a, 0) if not g.universal(a) else 0,
                         bit.get(b, 0) if not g.universal(b) else 0)
                        for a, b, _m in g.productions(v, c)) for v in order]
                 for c in self.classes]
        lam = 0
        for v in order:
            if g.nullable(v):
                lam |= bit[v]

        def combine(a: int, b: int, table: list[tuple[tuple[int, int], ...]]) -> int:
            self._spend(len(table))
            m = 0
            for k, plist in enumerate(table):
                for lm, rm in plist:
                    if (lm == 0 or a & lm) and (rm == 0 or b & rm):
                        m |= 1 << k
                        break
            return m

        current: list[int] = [lam]
        todo = [lam]
        seen = {lam}
        while todo:
            t = todo.pop()
            if t not in current:
                continue  # dominated since it was found
            for s in list(current):
                for a, b in ((t, s), (s, t)):
                    for table in prods:
                        m = combine(a, b, table)
                        if m in seen:
                            continue
                        seen.add(m)
                        if any(o & m == o for o in current):
                            continue  # a subset of m is realisable: m adds nothing
                        current = [o for o in current if o & m != m]
                        current.append(m)
                        todo.append(m)
                        if len(seen) > MAX_TYPES:
                            raise TooManyTypes(len(seen))
        found = self._by_closure[closure] = (order, current)
        return found

    def productive(self, y: int) -> bool:
        """Whether ``[[y]]`` is not empty (the least fixpoint over its closure)."""
        found = self._productive.get(y)
        if found is None:
            g = self.grammar
            closure = self.closure([y])
            good = {v for v in closure if g.nullable(v)}
            changed = True
            while changed:
                changed = False
                for v in closure - good:
                    self._spend(len(self.classes))
                    if any((g.universal(a) or a in good) and (g.universal(b) or b in good)
                           for c in self.classes for a, b, _m in g.productions(v, c)):
                        good.add(v)
                        changed = True
            for v in closure:
                self._productive[v] = v in good
            found = g.universal(y) or y in good
            self._productive[y] = found
        return found

    def minimal(self, ys: frozenset[int]) -> tuple[frozenset[int], ...]:
        """The ⊆-minimal types over ``ys`` of all forests (universal variables in each)."""
        found = self._minimal.get(ys)
        if found is not None:
            return found
        g = self.grammar
        always = frozenset(y for y in ys if g.universal(y))
        order, masks = self._types(self.closure(ys))
        index = {v: k for k, v in enumerate(order)}
        tracked = [(y, 1 << index[y]) for y in ys if y in index]
        out = minimize(always | frozenset(y for y, b in tracked if m & b) for m in masks)
        found = self._minimal[ys] = tuple(out)
        return found


def _intern(memo: dict[Family, Family], family: Iterable[frozenset[int]]) -> Family:
    """A family as one object per value (minimal frontiers only; :data:`DEAD` if one is
    empty: that combination of types leaves no chain, whatever the others do)."""
    sets = minimize(family)
    if frozenset() in sets:
        return DEAD
    f = frozenset(sets)
    return memo.setdefault(f, f)


#: The family with an empty frontier: some combination of the holes' types above leaves no
#: chain, so nothing below is decided while those elements stay open.
DEAD: Family = frozenset([frozenset()])


class FrameInfo:
    """An open element as the general check sees it: per production of an entry of the state
    before it (``nodes``: entry, ``x1``, ``x3``, ``x5``, marked), the node sets whose ``x5``
    — the variable of the hole right of the element — has each minimal type, and the nodes
    whose ``x5`` derives some forest (``live``)."""

    __slots__ = ("kinds", "live", "marked", "memo", "nodes", "reach", "types")

    def __init__(self, nodes: list[tuple[int, int, int, int, bool]],
                 types: tuple[frozenset[int], ...], live: frozenset[int]) -> None:
        self.nodes = nodes
        self.types = types
        self.live = live
        self.marked = frozenset(n for n, node in enumerate(nodes) if node[4])
        self.memo: dict[tuple[Family, frozenset[int] | None], Family] = {}
        self.reach: dict[tuple[frozenset[int], frozenset[int] | None], frozenset[int]] = {}
        self.kinds: dict[frozenset[int], frozenset[int]] = {}

    def of_entries(self, entries: frozenset[int]) -> frozenset[int]:
        """The nodes of the productions of these entries."""
        found = self.kinds.get(entries)
        if found is None:
            found = self.kinds[entries] = frozenset(
                n for n, node in enumerate(self.nodes) if node[0] in entries)
        return found


class LevelInfo:
    """The current state as the general check sees it: its entries' ``(x, x_first)`` and, per
    minimal type of the current hole, the entries whose ``x`` has it."""

    __slots__ = ("entries", "live", "memo", "types")

    def __init__(self, entries: Sequence[tuple[int, int, bool]],
                 types: tuple[tuple[int, ...], ...], live: tuple[int, ...]) -> None:
        self.entries = tuple((x, f) for x, f, _b in entries)
        self.types = types
        self.live = live
        self.memo: dict[tuple[Family, frozenset[int] | None], bool] = {}

    def alive(self, reach: frozenset[int], pattern: frozenset[int] | None) -> bool:
        """Whether some entry (among ``pattern`` if given) whose variable derives a forest
        has its ``x_first`` in ``reach``: some completion keeps the chains alive."""
        entries = self.entries
        return any(entries[k][1] in reach for k in self.live
                   if pattern is None or k in pattern)

    def final(self, family: Family, pattern: frozenset[int] | None) -> bool:
        """Whether every frontier of ``family`` meets, for each minimal type of the hole, an
        entry (among ``pattern`` if given) of that type whose ``x_first`` is in it."""
        key = (family, pattern)
        found = self.memo.get(key)
        if found is None:
            entries = self.entries
            found = all(
                any(entries[k][1] in front for k in ks if pattern is None or k in pattern)
                for front in family for ks in self.types)
            self.memo[key] = found
        return found


class _Level:
    """The general check's view down to an open element (interned: one object per distinct
    view, so that what depends on it is memoised on it): the family before and after the
    element, the families of the origins of candidates above and at it (``(depth, "e")``:
    the open element itself, ``(depth, "p")``: marked in its parent's content before it),
    the views below it by ``enter'``, depth, candidate and sets (``next``), and the verdicts
    by current shape and sets (``verdicts``)."""

    __slots__ = ("after", "before", "calm", "held", "next", "origins", "plain", "quiet",
                 "reach", "still", "verdicts")

    def __init__(self, before: Family, after: Family, reach: frozenset[int],
                 origins: Origins) -> None:
        self.before = before
        self.after = after
        self.reach = reach
        self.origins = origins
        self.next: dict[tuple[Any, int, bool, tuple[bool, ...] | None], _Level] = {}
        self.plain: dict[Any, _Level] = {}  # by enter' alone, for frames without candidates
        #: those of ``plain`` at whose start tag the run has no check to make: no origins, or
        #: the shape entered among their ``quiet`` ones (which only grow; issue 33, item 4)
        self.calm: dict[Any, _Level] = {}
        #: the same for the views below by a held line's ``enter'`` (``_poa._Enter.hold``),
        #: with the depth they were made at (part of their key in ``next``)
        self.held: dict[Any, tuple[int, _Level]] = {}
        #: the shapes at which none of the origins is decided (the run skips the check there)
        self.quiet: set[Any] = set()
        #: the shapes at which the check finds nothing whatever the current sets hold (the run
        #: skips it there even while candidates are pending at this level; issue 33, item 4)
        self.still: set[Any] = set()
        self.verdicts: dict[tuple[Any, tuple[bool, ...] | None], Verdict] = {}


class Universality:
    """What the general check memoises per automaton (shared by its runs): the types, the
    families (interned), and per ``enter'`` transition and per shape their views
    (:class:`FrameInfo`, :class:`LevelInfo`) with the steps between families."""

    def __init__(self, grammar: Grammar, epilogue: Callable[[int], bool]) -> None:
        self.grammar = grammar
        self.types = Types(grammar)
        #: whether a variable derives one text node (what may follow the root element where
        #: the tree has text nodes: :meth:`._poa.Automaton.epilogue`)
        self.epilogue = epilogue
        self._families: dict[Family, Family] = {}
        self.initial = _intern(self._families, [frozenset([grammar.start])])
        self._views: dict[tuple[Family, Family, frozenset[int], Origins], _Level] = {}
        self._holding: dict[Any, frozenset[int]] = {}
        #: the view above the root element
        self.top = self.view(self.initial, self.initial, frozenset([grammar.start]), ())

    def view(self, before: Family, after: Family, reach: frozenset[int],
             origins: Origins) -> _Level:
        """The interned :class:`_Level` of these families (a fixed query has finitely many,
        up to the depths in the origins)."""
        key = (before, after, reach, origins)
        found = self._views.get(key)
        if found is None:
            found = self._views[key] = _Level(before, after, reach, origins)
        return found

    def holding(self, shape: Any) -> frozenset[int]:
        """The entries of a state inside the root element that can hold pending candidates
        after an event: not those whose ``b`` is true and variable universal, whose
        candidates Theorem 1 reports at the transition that makes them (Listing 1 routes
        none there)."""
        found = self._holding.get(shape)
        if found is None:
            g = self.grammar
            found = self._holding[shape] = frozenset(
                k for k, (x, _f, b) in enumerate(shape.entries) if not (b and g.universal(x)))
        return found

    def frame_info(self, tr: Any) -> FrameInfo:
        """The :class:`FrameInfo` of an ``enter'`` transition (its source state and class),
        kept on the transition."""
        found: FrameInfo | None = tr.general
        if found is None:
            g = self.grammar
            root = tr.source.top  # the level of a node at the top (:attr:`._poa.Shape.top`)
            epi = self.epilogue
            nodes = []
            for i, (x2, x1, _b) in enumerate(tr.source.entries):
                for x3, x5, marked in g.productions(x2, tr.cls):
                    if root and not (g.nullable(x5) or (root == 1 and epi(x5))):
                        continue  # the root has no right sibling (but a text node's)
                    nodes.append((i, x1, x3, x5, marked))
            if root == 1:
                # the hole right of the root: nothing, or one text node (two forests)
                types: tuple[frozenset[int], ...] = tuple(
                    frozenset(k for k, n in enumerate(nodes) if derives(n[3]))
                    for derives in (g.nullable, epi))
            elif root:
                types = (frozenset(range(len(nodes))),)
            else:
                ys = frozenset(n[3] for n in nodes)
                types = tuple(frozenset(k for k, n in enumerate(nodes) if n[3] in s)
                              for s in self.types.minimal(ys))
            live = frozenset(k for k, n in enumerate(nodes)
                             if root or self.types.productive(n[3]))
            found = tr.general = FrameInfo(nodes, types, live)
        return found

    def level_info(self, shape: Any) -> LevelInfo:
        """The :class:`LevelInfo` of a state's shape, kept on the shape."""
        found: LevelInfo | None = shape.general
        if found is None:
            entries = shape.entries
            ys = frozenset(x for x, _f, _b in entries)
            types = tuple(tuple(k for k, e in enumerate(entries) if e[0] in s)
                          for s in self.types.minimal(ys))
            live = tuple(k for k, e in enumerate(entries) if self.types.productive(e[0]))
            found = shape.general = LevelInfo(entries, types, live)
        return found

    def step(self, family: Family, info: FrameInfo, marks: frozenset[int] | None = None) -> Family:
        """The family below an open element: per frontier and minimal type of the hole right
        of it, the ``x3`` of its nodes (among ``marks``, the nodes marking the candidate, if
        given) whose ``x1`` is in the frontier and ``x5`` of that type."""
        key = (family, marks)
        found = info.memo.get(key)
        if found is None:
            nodes = info.nodes
            out = []
            for front in family:
                for ks in info.types:
                    out.append(frozenset(nodes[k][2] for k in ks
                                         if nodes[k][1] in front and (marks is None or k in marks)))
            found = info.memo[key] = _intern(self._families, out)
        return found

    def reach_step(self, reach: frozenset[int], info: FrameInfo,
                   marks: frozenset[int] | None = None) -> frozenset[int]:
        """The frontier below an open element of the chains (through ``marks`` if given)
        from ``reach`` whose hole right of the element derives some forest."""
        key = (reach, marks)
        found = info.reach.get(key)
        if found is None:
            nodes = info.nodes
            found = info.reach[key] = frozenset(
                nodes[k][2] for k in info.live
                if nodes[k][1] in reach and (marks is None or k in marks))
        return found


class Detector:
    """The general earliest-detection test over one run's stack (see the module docstring).

    The run keeps, in each stack frame, the view down to that open element (:meth:`below`,
    memoised on the view above; ``None`` for frames pushed before the check was on, which
    :meth:`views` recomputes). :meth:`check` returns the pending candidates that the current
    event decided, and those it rejected; the run calls it after Listing 1's own reports,
    and only where the view has origins of candidates or the current state holds
    candidates: a verdict memoised per view, shape and non-empty sets is then one look-up.
    """

    def __init__(self, universality: Universality) -> None:
        self.u = universality
        self.top = universality.top

    def below(self, above: _Level | None, stack: list[tuple[Any, ...]], tr: Any,
              fsets: tuple[Iterable[Any], ...] | None, cand: Any) -> _Level:
        """The view down to an element entered by ``tr`` from a state with sets ``fsets``,
        with its own candidate ``cand``, about to be pushed onto ``stack`` (``above``: the
        view of the stack's top, if known)."""
        if above is None:
            above = self.views(stack)[-1] if stack else self.top
        j = len(stack)
        if cand is None and (fsets is None or j == 0):
            found = above.plain.get(tr)
            if found is None:
                found = above.plain[tr] = self._below(above, tr, j, False, None)
            return found
        # the depth is part of the key: the origins made here are named by it, and a view
        # (interned by its families) can stand at several depths
        key = (tr, j, cand is not None and not cand.reported,
               None if fsets is None or j == 0 else tuple(map(_holds, fsets)))
        found = above.next.get(key)
        if found is None:
            found = above.next[key] = self._below(above, tr, j, key[2], key[3])
        return found

    def _below(self, above: _Level, tr: Any, j: int, marked: bool,
               nonempty: tuple[bool, ...] | None) -> _Level:
        u = self.u
        info = u.frame_info(tr)
        before = above.after
        origins = []
        # an origin is kept while its candidates may be decided (a family not DEAD) or
        # rejected: while some chain through it lives; one found dead here is kept for this
        # view only, where the check rejects its candidates
        for o, family, reach in above.origins:
            if reach:
                f2 = u.step(family, info) if family is not DEAD else DEAD
                origins.append((o, f2, u.reach_step(reach, info)))
        for kind, marks in (("e", info.marked if marked else None),
                            ("p", None if nonempty is None or not any(nonempty) else
                             info.of_entries(frozenset(i for i, s in enumerate(nonempty) if s)))):
            if marks is not None:
                origins.append(((j, kind), u.step(before, info, marks),
                                u.reach_step(above.reach, info, marks)))
        return u.view(before, u.step(before, info), u.reach_step(above.reach, info),
                      tuple(origins))

    def views(self, stack: list[tuple[Any, ...]]) -> list[_Level]:
        """The view of each open element (frames as :class:`._poa.Run` keeps them:
        ``(enter', sets, candidate, name, node, ..., view)``)."""
        out: list[_Level] = []
        above = self.top
        for j, frame in enumerate(stack):
            view = frame[8]
            if view is None:
                view = self.below(above, stack[:j], frame[0], frame[1], frame[2])
            out.append(view)
            above = view
        return out

    def check(self, view: _Level, stack: list[tuple[Any, ...]], shape: Any,
              sets: tuple[Iterable[Any], ...] | None) -> tuple[list[Any], list[Any]]:
        """The candidates decided now that Listing 1 has not reported, and those no
        completion can select any more (rejected): of the view's origins and those in
        ``sets`` marked inside the innermost open element (whose view is ``view``)."""
        key = (shape, None if sets is None else tuple(map(_holds, sets)))
        verdict = view.verdicts.get(key)
        if verdict is None:
            level = self.u.level_info(shape)
            pattern = None if sets is None else \
                frozenset(k for k, s in enumerate(sets) if _holds(s)) or None
            verdict = view.verdicts[key] = (
                tuple(o for o, family, _r in view.origins
                      if family is not DEAD and level.final(family, None)),
                pattern is not None and level.final(view.after, pattern),
                tuple(o for o, _f, reach in view.origins if not level.alive(reach, None)),
                pattern is not None and not level.alive(view.reach, pattern))
            if _still(view, level, self.u.holding(shape)):
                view.still.add(shape)
        origins, here, dead, here_dead = verdict
        if not origins and not here and not dead and not here_dead:
            if sets is None:
                view.quiet.add(shape)
            return [], []
        found: list[Any] = []
        rejected: list[Any] = []
        level = self.u.level_info(shape)
        for j, kind in origins:
            if kind == "e":
                cand = stack[j][2]
                if not cand.reported:
                    found.append(cand)
            else:
                self._resolve(stack, j, level, found)
        if here:
            assert sets is not None
            for pat, group in _groups(sets, stack[-1][4]).items():
                if level.final(view.after, pat):
                    found.extend(group)
        for j, kind in dead:
            if kind == "e":
                rejected.append(stack[j][2])
            else:
                for group in _groups(stack[j][1], stack[j - 1][4]).values():
                    rejected.extend(group)
        if here_dead:
            assert sets is not None
            for group in _groups(sets, stack[-1][4]).values():
                rejected.extend(group)
        return found, rejected

    def _resolve(self, stack: list[tuple[Any, ...]], j: int, level: LevelInfo,
                 found: list[Any]) -> None:
        """The candidates marked before open element ``j`` in its parent's content whose own
        entries (not only all of them together) decide them."""
        u = self.u
        info = u.frame_info(stack[j][0])
        before = self.views(stack[:j + 1])[j].before
        for pat, group in _groups(stack[j][1], stack[j - 1][4]).items():
            family = u.step(before, info, info.of_entries(pat))
            for k in range(j + 1, len(stack)):
                if family is DEAD:
                    break
                family = u.step(family, u.frame_info(stack[k][0]))
            if family is not DEAD and level.final(family, None):
                found.extend(group)


def _still(view: _Level, level: LevelInfo, holding: frozenset[int]) -> bool:
    """Whether :meth:`Detector.check` finds nothing at ``level`` under ``view`` whatever the
    current sets hold: no origin is decided or dead, and no pattern of entries holding
    candidates is final or dead. Both tests grow with the pattern (more entries, more chances
    to meet a frontier or to stay alive), so the entries that can hold candidates at all
    (``holding``) decide "final", and each of them alone decides "dead"."""
    if any(family is not DEAD and level.final(family, None) for _o, family, _r in view.origins):
        return False
    if any(not level.alive(reach, None) for _o, _f, reach in view.origins):
        return False
    if holding and level.final(view.after, holding):
        return False
    return all(level.alive(view.reach, frozenset((k,))) for k in holding)


def _holds(candidates: Iterable[Any]) -> bool:
    """Whether a set holds a candidate not yet reported: the run's sets keep reported ones
    until it compacts them (:func:`._poa._routed`); this stops at the first one held (a
    loop: cheaper than ``any`` over a generator, on the path of every such event)."""
    for c in candidates:  # noqa: SIM110 - a loop, not any() over a generator: faster
        if not c.reported:
            return True
    return False


def _groups(sets: tuple[Iterable[Any], ...] | None,
            after: int) -> dict[frozenset[int], list[Any]]:
    """The unreported candidates of ``sets`` marked after pre-order index ``after`` (in the
    level's own read part, not copies pushed from above), by the entries holding each; none
    for ``None`` (sets the run compacted to nothing since the view was made)."""
    where: dict[Any, list[int]] = {}
    for k, s in enumerate(sets or ()):
        for c in s:
            if c.node > after and not c.reported:
                where.setdefault(c, []).append(k)
    out: dict[frozenset[int], list[Any]] = {}
    for c, ks in where.items():
        out.setdefault(frozenset(ks), []).append(c)
    return out
