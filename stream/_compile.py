"""Core XPath to a regular tree query (seed 004, section 3 and footnote 2: the translation is
"straightforward but outside the scope"; reconstructed here).

A location path is turned into a node formula ``phi``: the selected nodes are those where it
holds. Each step of the selecting path adds the converse of its axis (``child`` asks the parent
to be in the previous context: a past bit ``PAR``; ``parent`` asks for a child in it: the
future formula ``m1 S``), and each predicate's path becomes an existence formula read forward
from the step's node (``child::c`` is ``m1 S c``). The document node, which is not an element
of the binary tree, is carried as a separate global condition. ``phi`` then compiles to a
grammar whose variables are obligations with past bits (:mod:`._formulas`).

``[1]`` and ``[last()]`` stay regular on child steps: the first ``a`` among its siblings is an
``a`` with no preceding sibling ``a`` (earlier predicates included), the last one has no
following one; on other axes they would compare positions along the axis and are refused.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._errors import UnsupportedQueryError
from ._formulas import FALSE, TRUE, CompiledGrammar, F, atom, land, lor, neg
from ._grammar import TEXT, LabelTest
from ._xpath import (
    And,
    LocationPath,
    NodeTest,
    Not,
    Or,
    PathPred,
    Position,
    Pred,
    Step,
    parse_xpath,
)

__all__ = ["compile_xpath", "compile_path", "MAX_DECIDED"]

#: The most formulas about what follows a node that a compiled grammar decides at every
#: element (past bits' arguments): the productions of a variable try their combinations, 3^n
#: at worst. Conditions on labels and past bits alone are known when read and not counted.
MAX_DECIDED = 6


class _Compiler:
    def __init__(self, text: str, texts: bool = False) -> None:
        self.text = text
        self.tests: list[LabelTest] = []
        self.bits: list[tuple[str, F]] = []
        #: whether the tree has text nodes (:data:`._grammar.TEXT`): then ``*`` is an
        #: element that is not one, and ``node()`` any node
        self.texts = texts

    # atoms
    def label(self, lt: LabelTest) -> int:
        if lt not in self.tests:
            self.tests.append(lt)
        return self.tests.index(lt)

    def element(self) -> F:
        """A node that is an element (with text nodes in the tree, not a text node)."""
        if not self.texts:
            return atom("elem", True)
        return land([atom("elem", True), atom("lab", self.label(LabelTest("text", TEXT)), False)])

    def test(self, t: NodeTest) -> F:
        if t.kind == "node":
            return atom("elem", True)  # any node of the binary tree: an element or a text
        if t.kind == "any":
            return self.element()
        lt = LabelTest("name" if t.kind == "name" else "ns", t.value)
        return atom("lab", self.label(lt), True)

    def bit(self, kind: str, psi: F) -> F:
        if psi == FALSE:
            return FALSE
        key = (kind, psi)
        if key not in self.bits:
            self.bits.append(key)
        return atom("past", self.bits.index(key), "T")

    def top(self) -> F:
        """The node is a child of the document node: the root element, or (with text nodes)
        a comment or PI before or after it (the bit ``ISROOT``, which then passes to right
        siblings)."""
        return self.bit("ISROOT", TRUE)

    def isroot(self) -> F:
        """The node is the root element."""
        return land([self.top(), self.element()]) if self.texts else self.top()

    def par(self, psi: F) -> F:
        return self.bit("PAR", psi)

    def anc(self, psi: F) -> F:
        return self.bit("ANC", psi)

    def prevs(self, psi: F) -> F:
        return self.bit("PREVS", psi)

    @staticmethod
    def m(side: str, f: F) -> F:
        if f == FALSE:
            return FALSE
        if f == TRUE:
            return atom("elem", True)
        return atom(side, f)

    def children(self, f: F) -> F:  # some child satisfies f
        f = _unlast(f)
        return FALSE if f == FALSE else self.m("m1", atom("S", f))

    def descendants(self, f: F) -> F:  # some descendant satisfies f
        f = _unlast(f)
        return FALSE if f == FALSE else self.m("m1", atom("D", f))

    def following(self, f: F) -> F:  # some following sibling satisfies f
        f = _unlast(f)
        return FALSE if f == FALSE else self.m("m2", atom("S", f))

    def rootsat(self, f: F) -> F:
        """Some child of the document node satisfies ``f`` (anywhere): the root element, or
        with text nodes a comment or PI before it (a preceding sibling of the root) or after
        it (a following one); from inside the root, through the ancestor at the top."""
        if not self.texts:
            here = land([self.isroot(), f])
            return lor([here, self.anc(here)])
        top_f = land([self.top(), f])
        here = land([self.top(), lor([f, self.following(top_f), self.prevs(top_f)])])
        return lor([here, self.anc(here)])

    # steps
    @staticmethod
    def simplify(steps: tuple[Step, ...]) -> list[Step]:
        """``//t`` (``descendant-or-self::node()/child::t``) read as ``descendant::t`` when no
        position refers to the child axis."""
        out: list[Step] = []
        i = 0
        while i < len(steps):
            s = steps[i]
            nxt = steps[i + 1] if i + 1 < len(steps) else None
            if s.axis == "descendant-or-self" and s.test.kind == "node" and nxt is not None \
                    and nxt.axis == "child" \
                    and not any(isinstance(p, Position) for p in nxt.predicates):
                out.append(Step("descendant", nxt.test, nxt.predicates, nxt.col))
                i += 2
                continue
            out.append(s)
            i += 1
        return out

    def node(self, s: Step) -> F:
        """The step's node test and predicates, at an element."""
        parts = [self.test(s.test)]
        for k, p in enumerate(s.predicates):
            parts.append(self.pred(p, s, k))
        return land(parts)

    def pred(self, p: Pred, s: Step, k: int) -> F:
        if isinstance(p, Or):
            return lor([self.pred(p.left, s, k), self.pred(p.right, s, k)])
        if isinstance(p, And):
            return land([self.pred(p.left, s, k), self.pred(p.right, s, k)])
        if isinstance(p, Not):
            return neg(self.pred(p.operand, s, k))
        if isinstance(p, Position):
            if s.axis != "child":
                raise UnsupportedQueryError(
                    f"[{p}] on the {s.axis} axis is not supported: it would compare positions "
                    "along the axis, which is not a condition on siblings; [1] and [last()] "
                    "are supported on child steps",
                    text=self.text, line=1, column=p.col or s.col, context="query")
            sib = land([self.test(s.test),
                        *(self.pred(q, s, j) for j, q in enumerate(s.predicates[:k]))])
            return neg(self.following(sib) if p.last else self.prevs(sib))
        if isinstance(p, PathPred):
            elem, doc = self.exists(self.simplify(p.path.steps), 0, p.path.absolute)
            return doc if p.path.absolute else elem
        raise AssertionError(p)

    def exists(self, steps: list[Step], i: int, want_doc: bool) -> tuple[F, F]:
        """(at an element, at the document node): ``steps[i:]`` reach some node. The second
        is built only when asked for (``want_doc``): it costs past bits."""
        if i == len(steps):
            return TRUE, TRUE
        s = steps[i]
        node_test = s.test.kind == "node"
        # the document part of the rest matters for this step's document part, and for the
        # element part of the upward axes (the document is every element's ancestor)
        ne, nd = self.exists(steps, i + 1, node_test and (
            want_doc or s.axis in ("parent", "ancestor", "ancestor-or-self")))
        tgt = land([self.node(s), ne])
        doc_t = nd if node_test else FALSE
        a = s.axis
        if a == "child":
            return self.children(tgt), self.rootsat(tgt) if want_doc else FALSE
        if a == "descendant":
            return self.descendants(tgt), \
                self.rootsat(lor([tgt, self.descendants(tgt)])) if want_doc else FALSE
        if a == "descendant-or-self":
            below = lor([tgt, self.descendants(tgt)])
            return below, lor([doc_t, self.rootsat(below)]) if want_doc else FALSE
        if a == "self":
            return tgt, doc_t
        if a == "parent":
            at_root = land([self.top(), doc_t]) if doc_t != FALSE else FALSE
            return lor([self.par(tgt), at_root]), FALSE
        if a == "ancestor":
            return lor([self.anc(tgt), doc_t]), FALSE
        if a == "ancestor-or-self":
            return lor([tgt, self.anc(tgt), doc_t]), doc_t
        if a == "following-sibling":
            return self.following(tgt), FALSE
        if a == "preceding-sibling":
            return self.prevs(tgt), FALSE
        raise AssertionError(a)

    def select(self, path: LocationPath) -> F:
        """The formula of the nodes the path selects (the converse axes, step by step)."""
        psi, doc = (FALSE, TRUE) if path.absolute else (self.isroot(), FALSE)
        for s in self.simplify(path.steps):
            here = self.node(s)
            node_test = s.test.kind == "node"
            a = s.axis
            if a == "child":
                at_root = land([doc, self.isroot()]) if doc != FALSE else FALSE
                ctx, doc2 = lor([at_root, self.par(psi)]), FALSE
            elif a == "descendant":
                ctx, doc2 = lor([doc, self.anc(psi)]), FALSE
            elif a == "descendant-or-self":
                ctx, doc2 = lor([psi, doc, self.anc(psi)]), doc if node_test else FALSE
            elif a == "self":
                ctx, doc2 = psi, doc if node_test else FALSE
            elif a == "parent":
                ctx = self.children(psi)
                doc2 = self.rootsat(psi) if node_test else FALSE
            elif a == "ancestor":
                ctx = self.descendants(psi)
                doc2 = self.rootsat(lor([psi, self.descendants(psi)])) if node_test else FALSE
            elif a == "ancestor-or-self":
                ctx = lor([psi, self.descendants(psi)])
                doc2 = lor([doc, self.rootsat(ctx)]) if node_test else FALSE
            elif a == "following-sibling":
                ctx, doc2 = self.prevs(psi), FALSE
            else:  # preceding-sibling
                ctx, doc2 = self.following(psi), FALSE
            psi, doc = land([here, ctx]), doc2
        # the matches are elements: a text node a path reaches (//.) is not reported
        return land([psi, self.element()]) if self.texts else psi


def compile_path(path: LocationPath, text: str = "") -> CompiledGrammar:
    """The grammar of a parsed location path (its matches are the elements it selects).

    Raises:
        UnsupportedQueryError: a position on an axis other than child, a path that can select
            only the document node, or more than :data:`MAX_DECIDED` conditions looked back at.
    """
    if not path.steps or (all(s.axis == "self" and s.test.kind == "node" for s in path.steps)
                          and path.absolute):
        # "/" and "/.": the document node alone; "//." selects every element too (issue 33)
        raise UnsupportedQueryError("the query selects the document node, not an element",
                                    text=text, line=1, column=1, context="query")
    c = _Compiler(text, _reads_text(path))
    phi = c.select(path)
    grammar = CompiledGrammar(phi, tuple(c.tests), tuple(c.bits), text, texts=c.texts)
    # a condition on labels and past bits alone is known when its node is read; only one
    # about what follows the node (its content, its following siblings) makes a choice
    guessed = sum(1 for f in grammar.decided if _looks_ahead(f))
    if guessed > MAX_DECIDED:
        raise UnsupportedQueryError(
            f"the query has {guessed} conditions that later nodes look back at "
            f"(through parent, ancestor, preceding-sibling, absolute paths in predicates or "
            f"positions); more than {MAX_DECIDED} are refused, as each element may have to "
            "try every combination of them; split the query",
            text=text, line=1, column=1, context="query")
    return grammar


#: the axes that lead from a text node to elements other than through its (absent) content
_FROM_TEXT = ("parent", "ancestor", "ancestor-or-self", "following-sibling", "preceding-sibling")


def _reads_text(path: LocationPath) -> bool:
    """Whether the path's answer can depend on text nodes (issue 33): some step reaches them
    (``descendant-or-self::node()``, the ``//`` that is not read as ``descendant``, kept by
    ``.``) and a later step leaves them upward or sideways (``//..``,
    ``//following-sibling::b``). A text node has no content and satisfies no element test,
    so otherwise the elements selected are those of the tree without text, and the run need
    not be told of text at all (text never reaches Python: the guide's *Memory*)."""
    on_text = False
    for s in _Compiler.simplify(path.steps):
        if on_text and s.axis in _FROM_TEXT:
            return True
        if s.test.kind == "node" and s.axis == "descendant-or-self":
            on_text = True
        elif not (s.test.kind == "node" and s.axis == "self"):
            on_text = False
        if any(_pred_reads_text(p) for p in s.predicates):
            return True
    return False


def _pred_reads_text(p: Pred) -> bool:
    if isinstance(p, And | Or):
        return _pred_reads_text(p.left) or _pred_reads_text(p.right)
    if isinstance(p, Not):
        return _pred_reads_text(p.operand)
    return isinstance(p, PathPred) and _reads_text(p.path)


def _unlast(f: F) -> F:
    """``g ∧ no following sibling satisfies g`` as ``g`` where only the existence of such a
    node is asked (``a[b[last()]]``): some ``g`` among a list of siblings has a last one. The
    grammar would otherwise guess which ``g`` is last, and neither guess alone is universal,
    so the match would be found only when the list ends (section 3's ``Univ_G`` is a test on
    single variables)."""
    if f[0] != "and":
        return f
    for p in f[1]:
        rest = land(f[1] - {p})
        if p == atom("b2", atom("Sn", neg(rest))):
            return rest
    return f


def _looks_ahead(f: F) -> bool:
    """Whether a formula says anything about the content or the following siblings."""
    k = f[0]
    if k in ("m1", "b1", "m2", "b2", "S", "Sn", "D", "Dn"):
        return True
    if k in ("and", "or"):
        return any(_looks_ahead(g) for g in f[1])
    return False


def compile_xpath(text: str, namespaces: Mapping[str, str] | None = None) -> CompiledGrammar:
    """Parse and compile a query of the Core XPath subset.

    >>> g = compile_xpath("//a/b")
    >>> [str(t) for t in g.tests], [kind for kind, _ in g.bits]
    (['a', 'b'], ['PAR'])
    """
    return compile_path(parse_xpath(text, namespaces), text)
