"""Node formulas over the binary encoding, and the grammar they compile to (seed 004,
section 3: regular tree queries; the translation of Core XPath is the paper's footnote 2,
"straightforward but outside the scope", reconstructed here).

A formula holds or not at a position of the binary tree (an element, or the empty tree λ
that ends a list of siblings). Formulas are kept in negation normal form and interned as
tuples:

``("T",)``, ``("F",)``
    true, false.
``("lab", i, pos)``
    an element whose name passes (``pos``) or fails label test ``i``; ``("elem", pos)``: an
    element (``pos``) or λ.
``("and", fs)``, ``("or", fs)``
    over a frozenset.
``("m1", f)``, ``("b1", f)``, ``("m2", f)``, ``("b2", f)``
    an element whose left (content) / right (following siblings) position satisfies ``f``;
    ``b`` also holds at λ.
``("S", f)``, ``("Sn", f)``, ``("D", f)``, ``("Dn", f)``
    ``f`` here or at a right position, ``S = f or m2 S``; its dual ``Sn = f ∧ b2 Sn``;
    ``f`` somewhere in the binary subtree, ``D = f or m1 D or m2 D``; dual ``Dn``. Every path
    of a finite tree is finite, so least and greatest solutions agree and negation is dual.
``("past", k, v)``
    past bit ``k`` holds the value ``v`` (``"T"``/``"F"``) here.

Past bits carry what the pre-order traversal has already passed: ``PAR ψ`` (the XML parent
satisfies ψ), ``ANC ψ`` (some ancestor does), ``PREVS ψ`` (some preceding sibling does) and
``ISROOT``. They are three-valued: a derivation decides ψ at a node (``T``, asserting ψ's
future part, ``F`` asserting its negation) or leaves it undecided (``U``), which asserts
nothing and keeps the variable universal; a past literal holds only on a decided bit.

The grammar's variables are pairs (obligations, bits): the formulas the binary subtree at the
position must satisfy, and the past bits there. Its productions unfold the obligations on the
label (one step of each fixpoint), decide the bits' formulas and whether the node is
selected, and split the result into left and right obligations (a disjunctive normal form).
A variable without obligations derives every tree: it is universal and nullable.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any, TypeAlias

from ._grammar import Grammar, LabelTest, Production

__all__ = ["F", "TRUE", "FALSE", "land", "lor", "neg", "CompiledGrammar", "Bits"]

F: TypeAlias = tuple[Any, ...]  # a formula (an interned tuple); see the module docstring
TRUE: F = ("T",)
FALSE: F = ("F",)
_intern: dict[F, F] = {}


def _mk(f: F) -> F:
    return _intern.setdefault(f, f)


def land(fs: Iterable[F]) -> F:
    """Conjunction, flattened, with constants folded and ``f ∧ ¬f`` found false (for the
    negations built so far)."""
    out: set[F] = set()
    for f in fs:
        if f is FALSE or f == FALSE:
            return FALSE
        if f == TRUE:
            continue
        if f[0] == "and":
            out.update(f[1])
        else:
            out.add(f)
    if not out:
        return TRUE
    for f in out:
        if _known_complement(f, out):
            return FALSE
    if len(out) == 1:
        return next(iter(out))
    return _mk(("and", frozenset(out)))


def lor(fs: Iterable[F]) -> F:
    """Disjunction, flattened, with constants folded and ``f or ¬f`` found true (for the
    negations built so far)."""
    out: set[F] = set()
    for f in fs:
        if f == TRUE:
            return TRUE
        if f == FALSE:
            continue
        if f[0] == "or":
            out.update(f[1])
        else:
            out.add(f)
    if not out:
        return FALSE
    for f in out:
        if _known_complement(f, out):
            return TRUE
    if len(out) == 1:
        return next(iter(out))
    return _mk(("or", frozenset(out)))


_DUAL = {"m1": "b1", "b1": "m1", "m2": "b2", "b2": "m2", "S": "Sn", "Sn": "S", "D": "Dn",
         "Dn": "D"}
_neg_memo: dict[F, F] = {}


def neg(f: F) -> F:
    """The negation normal form of ``¬f``."""
    found = _neg_memo.get(f)
    if found is not None:
        return found
    k = f[0]
    if k == "T":
        r = FALSE
    elif k == "F":
        r = TRUE
    elif k == "lab":
        # built directly: lor() would look for complements and ask for this negation again
        r = _mk(("or", frozenset([_mk(("elem", False)), _mk(("lab", f[1], not f[2]))])))
    elif k == "elem":
        r = _mk(("elem", not f[1]))
    elif k == "and":
        r = lor(neg(g) for g in f[1])
    elif k == "or":
        r = land(neg(g) for g in f[1])
    elif k == "past":
        r = _mk(("past", f[1], "F" if f[2] == "T" else "T"))
    else:
        r = _mk((_DUAL[k], neg(f[1])))
    # only this way round: simplification can make two formulas' negations equal (both
    # TRUE, say), so r -> f would not be a function
    _neg_memo[f] = r
    return r


def _known_complement(f: F, others: set[F]) -> bool:
    """Whether the negation of ``f``, if already built, is among ``others`` (not building
    it here: ``neg`` itself calls ``land``/``lor``)."""
    r = _neg_memo.get(f)
    return r is not None and r in others


def atom(kind: str, *args: object) -> F:
    """An interned atom or modal formula, e.g. ``atom("m1", atom("S", f))``."""
    return _mk((kind, *args))


Bits = tuple[str, ...]
_KOR = {("T", "T"): "T", ("T", "F"): "T", ("T", "U"): "T", ("F", "T"): "T", ("U", "T"): "T",
        ("F", "F"): "F", ("F", "U"): "U", ("U", "F"): "U", ("U", "U"): "U"}


class CompiledGrammar(Grammar):
    """The grammar of a node formula ``phi`` (the selected nodes) with past bits ``bits``
    (``(kind, formula)``, kinds ``PAR``, ``ANC``, ``PREVS``, ``ISROOT``), built lazily;
    ``texts``: the trees have text nodes (:data:`._grammar.TEXT`), also before and after the
    root element, and ``ISROOT`` holds at every child of the document node."""

    def __init__(self, phi: F, tests: tuple[LabelTest, ...],
                 bits: tuple[tuple[str, F], ...], text: str = "", *,
                 texts: bool = False) -> None:
        super().__init__(tests)
        self.texts = texts
        self.phi = phi
        self.bits = bits
        self.text = text
        # the formulas decided at each node: the arguments of the past bits
        self.decided: tuple[F, ...] = tuple(dict.fromkeys(f for k, f in bits if k != "ISROOT"))
        self._dec_index = {f: i for i, f in enumerate(self.decided)}
        self._needed = self._values_needed()
        self._vars: dict[tuple[frozenset[F], Bits], int] = {}
        self.variables: list[tuple[frozenset[F], Bits]] = []
        start_bits = tuple("T" if k == "ISROOT" else "F" for k, _ in bits)
        self.start = self._var(frozenset(), start_bits)
        self._memo: dict[tuple[int, int], tuple[Production, ...]] = {}
        self._unfold_memo: dict[tuple[F, int, Bits], F] = {}
        self._null: dict[int, bool] = {}

    def _values_needed(self) -> set[tuple[F, str]]:
        """The values ``T``/``F`` of decided formulas that some past literal can test (read
        from the selecting formula and, in turn, from what the values tested assert). A
        value no literal tests is never guessed: ``U`` asserts less and satisfies the same
        literals (the combined bits of ``ANC``/``PREVS`` differ only in untested values), so
        dropping it changes no match, and it keeps out variables that derive λ without being
        universal (``b1 Sn ¬c`` for ``//a[c]/b``), on which the general check's filter rests
        (:attr:`._poa.Automaton.risky`)."""
        needed: set[tuple[F, str]] = set()
        todo = [self.phi]
        while todo:
            for k, v in _literals(todo.pop()):
                kind, psi = self.bits[k]
                if kind == "ISROOT" or (psi, v) in needed:
                    continue
                needed.add((psi, v))
                todo.append(psi if v == "T" else neg(psi))
        return needed

    def _var(self, obligations: frozenset[F], bits: Bits) -> int:
        key = (obligations, bits)
        found = self._vars.get(key)
        if found is None:
            found = self._vars[key] = len(self.variables)
            self.variables.append(key)
        return found

    def name(self, x: int) -> str:
        return f"x{x}"

    def universal(self, x: int) -> bool:
        return not self.variables[x][0]

    def nullable(self, x: int) -> bool:
        found = self._null.get(x)
        if found is None:
            obligations, bits = self.variables[x]
            found = self._null[x] = all(self._at_empty(f, bits) for f in obligations)
        return found

    def _at_empty(self, f: F, bits: Bits) -> bool:
        k = f[0]
        if k == "T":
            return True
        if k in ("F", "lab", "m1", "m2"):
            return False
        if k == "elem":
            return not f[1]
        if k in ("b1", "b2"):
            return True
        if k == "and":
            return all(self._at_empty(g, bits) for g in f[1])
        if k == "or":
            return any(self._at_empty(g, bits) for g in f[1])
        if k == "past":
            return bool(bits[f[1]] == f[2])
        return self._at_empty(f[1], bits)  # S, Sn, D, Dn: the right/left parts are λ too

    def _unfold(self, f: F, cls: int, bits: Bits) -> F:
        """``f`` at an element of label class ``cls`` with past bits ``bits``: a formula over
        ``m1 g`` (the content satisfies g) and ``m2 g`` (the following siblings do)."""
        key = (f, cls, bits)
        found = self._unfold_memo.get(key)
        if found is not None:
            return found
        k = f[0]
        if k in ("T", "F"):
            r = f
        elif k == "lab":
            r = TRUE if (f[1] in self.class_tests[cls]) == f[2] else FALSE
        elif k == "elem":
            r = TRUE if f[1] else FALSE
        elif k == "and":
            r = land(self._unfold(g, cls, bits) for g in f[1])
        elif k == "or":
            r = lor(self._unfold(g, cls, bits) for g in f[1])
        elif k in ("m1", "b1"):
            r = TRUE if f[1] == TRUE else FALSE if f[1] == FALSE else atom("m1", f[1])
        elif k in ("m2", "b2"):
            r = TRUE if f[1] == TRUE else FALSE if f[1] == FALSE else atom("m2", f[1])
        elif k == "past":
            r = TRUE if bits[f[1]] == f[2] else FALSE
        elif k == "S":
            r = lor([self._unfold(f[1], cls, bits), atom("m2", f)])
        elif k == "Sn":
            r = land([self._unfold(f[1], cls, bits), atom("m2", f)])
        elif k == "D":
            r = lor([self._unfold(f[1], cls, bits), atom("m1", f), atom("m2", f)])
        else:  # Dn
            r = land([self._unfold(f[1], cls, bits), atom("m1", f), atom("m2", f)])
        self._unfold_memo[key] = r
        return r

    def productions(self, x: int, cls: int) -> tuple[Production, ...]:
        key = (x, cls)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._productions(x, cls)
        return found

    def _productions(self, x: int, cls: int) -> tuple[Production, ...]:
        obligations, bits = self.variables[x]
        base = land(self._unfold(f, cls, bits) for f in obligations)
        if base == FALSE:
            return ()
        # decisions: per decided formula, the values it may take and what each asserts
        options: list[list[tuple[str, F]]] = []
        for psi in self.decided:
            yes = self._unfold(psi, cls, bits)
            no = self._unfold(neg(psi), cls, bits)
            if yes == TRUE:
                options.append([("T", TRUE)])
            elif no == TRUE:
                options.append([("F", TRUE)])
            else:
                opts = [("U", TRUE)]
                if yes != FALSE and (psi, "T") in self._needed:
                    opts.append(("T", yes))
                if no != FALSE and (psi, "F") in self._needed:
                    opts.append(("F", no))
                options.append(opts)
        sel = self._unfold(self.phi, cls, bits)
        sel_opts = [(True, TRUE)] if sel == TRUE else [(False, TRUE)] if sel == FALSE else \
            [(False, TRUE), (True, sel)]
        out: dict[Production, None] = {}
        for combo in itertools.product(*options):
            choice = {psi: v for psi, (v, _) in zip(self.decided, combo, strict=True)}
            left_bits, right_bits = self._child_bits(bits, choice)
            for marked, s in sel_opts:
                conj = land([base, s, *(a for _, a in combo)])
                if conj == FALSE:
                    continue
                for left, right in _dnf(conj):
                    out[Production(self._var(left, left_bits), self._var(right, right_bits),
                                   marked)] = None
        return tuple(out)

    def _child_bits(self, bits: Bits, choice: dict[F, str]) -> tuple[Bits, Bits]:
        left: list[str] = []
        right: list[str] = []
        for (kind, psi), here in zip(self.bits, bits, strict=True):
            if kind == "ISROOT":
                # "a child of the document": with text nodes, the comments and PIs around
                # the root are its siblings; without, the root has none
                left.append("F")
                right.append(here if self.texts else "F")
            elif kind == "PAR":
                left.append(choice[psi])
                right.append(here)
            elif kind == "ANC":
                left.append(_KOR[choice[psi], here])
                right.append(here)
            else:  # PREVS
                left.append("F")
                right.append(_KOR[choice[psi], here])
        return tuple(left), tuple(right)


def _literals(f: F) -> set[tuple[int, str]]:
    """The past literals ``(bit, value)`` of a formula."""
    k = f[0]
    if k == "past":
        return {(f[1], f[2])}
    if k in ("and", "or"):
        return set().union(*(_literals(g) for g in f[1]))
    if k in ("m1", "b1", "m2", "b2", "S", "Sn", "D", "Dn"):
        return _literals(f[1])
    return set()


def _dnf(f: F) -> list[tuple[frozenset[F], frozenset[F]]]:
    """``f`` over ``m1``/``m2`` atoms as a disjunction of (left, right) obligation sets."""
    terms = _terms(f)
    out = []
    seen = set()
    for t in terms:
        left = frozenset(a[1] for a in t if a[0] == "m1")
        right = frozenset(a[1] for a in t if a[0] == "m2")
        if any(neg(g) in left for g in left) or any(neg(g) in right for g in right):
            continue
        if (left, right) not in seen:
            seen.add((left, right))
            out.append((left, right))
    # drop terms implied by a weaker one (a superset of obligations on both sides)
    return [(lft, rgt) for lft, rgt in out
            if not any((a, b) != (lft, rgt) and a <= lft and b <= rgt for a, b in out)]


def _terms(f: F) -> list[frozenset[F]]:
    k = f[0]
    if k == "T":
        return [frozenset()]
    if k == "F":
        return []
    if k == "or":
        return [t for g in f[1] for t in _terms(g)]
    if k == "and":
        acc: list[frozenset[F]] = [frozenset()]
        for g in f[1]:
            acc = [a | b for a in acc for b in _terms(g)]
            if len(acc) > 4096:
                acc = _minimal(acc)
        return acc
    return [frozenset([f])]


def _minimal(sets: list[frozenset[F]]) -> list[frozenset[F]]:
    uniq = sorted(set(sets), key=len)
    out: list[frozenset[F]] = []
    for s in uniq:
        if not any(o <= s for o in out):
            out.append(s)
    return out
