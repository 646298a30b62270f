"""Make the documentation's pictures: the paper's event trees and the architecture diagrams.

Usage, from the repository root (needs Graphviz's ``dot`` on the PATH)::

    python3 docs/figures/make_figures.py

For each of the paper's examples below it writes ``docs/figures/<name>.dot``, the output of
``python3 -m xmlevents graph --define ... --dot``, and renders it to ``<name>.svg``; then it
renders every hand-written diagram source (``layers.dot``, ``flow-*.dot``) to SVG.
``tests/test_docs.py`` regenerates the trees' DOT with the CLI and compares it with the stored
``.dot`` files (without Graphviz), so a change to the language or the renderer that changes a
picture fails the fast tests until this script is run again.

The examples are those of Bernauer, Kappel, Kramler, *Composite Events for XML* (seed 000),
sections 3.1-3.3. Their text was extracted from PDF: the figures survive only as their labels
(one character a line), the operators ∆ (conjunction) and ∇ (disjunction) as ``4``/``5`` or
not at all, and the superscript ``c`` of composite event type names (E^c_i) as a separate
line. Each definition below says which example it is and how it was read; the readings are
the ones the tests of the language hold (``tests/algebra/test_language.py``,
``tests/algebra/test_definitions.py``). Composite type names drop the superscript: the
paper's E^c_h is written ``Eh`` (in Example 10, where ``Ei`` is the primitive E_i's alias,
E^c_i is ``Ec``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> (what it is, the definitions passed to `xmlevents graph --define`).
TREES: dict[str, tuple[str, list[str]]] = {
    # Example 10, Figure 1 (also the tree of Example 11 and Figure 2, which show how it
    # combines events in hierarchical context). The text reads "Ec := Ei ; (Ep 4 Eq)" with
    # the subscript "i" of Ec on the next line: E^c_i := E_i ; (E_p ∆ E_q), "4" being the
    # conjunction ∆. E_i, E_p, E_q are the insertions of item, item/price and
    # item/quantity (the figure's leaf labels ins(item), ins(item/price), ins(item/quantity));
    # we write them as aliases. The figure's right side derives both operators' path types:
    # item/price ∩lb item/quantity = item (step 1), item ∩lb item = item (step 2).
    "example-10": ("Example 10 (Figure 1): E^c_i := E_i ; (E_p ∆ E_q)", [
        "Ei := ins(item)",
        "Ep := ins(item/price)",
        "Eq := ins(item/quantity)",
        "Ec := Ei ; (Ep & Eq)",
    ]),
    # Example 12: "(cid:3)(item=quantity) 4 upd(item=price)" is *(item/quantity) ∆
    # upd(item/price): "(cid:3)" is the wildcard operation *, "=" the slash, "4" ∆. The paper
    # gives the expression no name; DESIGN section 3 calls it Eh.
    "example-12": ("Example 12: *(item/quantity) ∆ upd(item/price)", [
        "Eh := *(item/quantity) & upd(item/price)",
    ]),
    # Example 13: a fourth type combines E^c_i (Example 10), E^c_s and E^c_b (complete
    # insertions of shipTo and billTo) by E^c_i ∆ E^c_s ∆ E^c_b; item ∩lb shipTo ∩lb billTo
    # is null, so the conjunction's path type is given "e.g., as order". The text names the
    # fourth type nowhere; DESIGN section 3 calls it Eo. E^c_s and E^c_b are defined in
    # Example 14 (Figure 3), so this graph holds Figure 3's trees too: it shows how the
    # event graph reuses trees (dashed edges: a root's events feed a leaf of another tree).
    "example-13": ("Example 13: E^c_i ∆ E^c_s ∆ E^c_b with path type order", [
        "Ea := ins(address) ; (ins(address/street) & ins(address/city))",
        "Es := ins(shipTo) ; Ea(shipTo/address)",
        "Eb := ins(billTo) ; Ea(billTo/address)",
        "Ei := ins(item) ; (ins(item/price) & ins(item/quantity))",
        "Eo := (Ei(item) & Es(shipTo) & Eb(billTo)) with at=order",
    ]),
    # Example 14, Figure 3. The figure's labels, in extraction order: "Ea(address)c",
    # "ins(address)", "...", "ins(address/street)", "ins(address/city)", ";", "Es(shipTo)c",
    # "ins(shipTo)", ";", "Eb(billTo)c", "ins(billTo)", "Ea(shipTo/address)c",
    # "Ea(billTo/address)c". So E^c_a is a sequence of ins(address) and a conjunction (whose
    # ∆ did not survive, as in Figure 1) of the insertions of address's children, of which
    # the figure names street and city and elides the rest ("..."; the text says "other
    # elements such as street and city"); we keep the two named. E^c_s and E^c_b are the
    # insertion of shipTo/billTo followed by an E^c_a event at shipTo/address/billTo/address:
    # one address tree reused along two longer path types.
    "example-14": ("Example 14 (Figure 3): one address tree reused by E^c_s and E^c_b", [
        "Ea := ins(address) ; (ins(address/street) & ins(address/city))",
        "Es := ins(shipTo) ; Ea(shipTo/address)",
        "Eb := ins(billTo) ; Ea(billTo/address)",
    ]),
    # Examples 15 and 16, Figure 4. The figure's labels: "ins(item/comment)", "x[0,1]",
    # "ins(item)", "ins(item/price)", ";", "ins(item/quantity)", "x[1, ]" (the upper bound
    # ∞ is lost), and the node names "Eq", "Ec", "Eh", "Ei" each with its superscript "c".
    # So: E^c_q := ×[1,∞] ins(item/quantity) (Example 15: several quantities per item),
    # E^c_c := ×[0,1] ins(item/comment) (Example 16: an optional comment),
    # E^c_h := ins(item/price) ∆ E^c_q ∆ E^c_c (the conjunction, "4" lost again) and
    # E^c_i := ins(item) ; E^c_h. The inner nodes are named in the figure (Table 3 reports
    # their composites ec_q, ec_c, ec_h), so they are definitions of their own here. Every
    # node's termination mode is earliest (the figure's "tm:earliest").
    "example-15": ("Examples 15 and 16 (Figure 4): multiplicity operators", [
        "Eq := [1,*] ins(item/quantity)",
        "Ec := [0,1] ins(item/comment)",
        "Eh := ins(item/price) & Eq & Ec",
        "Ei := ins(item) ; Eh",
    ]),
    # Example 17: Figure 4's tree with the termination modes Table 3 varies: the figure marks
    # the conjunction "(1) tm:earliest (2) tm:non-local" and the quantity multiplicity
    # "(a) tm:earliest (b) tm:non-local"; the other two nodes stay "tm:earliest". Block (1a)
    # is the tree of Examples 15-16 as drawn above; this is block (2b), both non-local
    # ((1b) and (2a) set one of the two).
    "example-17": ("Example 17 (Figure 4, block 2b): termination modes", [
        "Eq := [1,*] ins(item/quantity) with mode=non-local",
        "Ec := [0,1] ins(item/comment)",
        "Eh := (ins(item/price) & Eq & Ec) with mode=non-local",
        "Ei := ins(item) ; Eh",
    ]),
}

# Every example from 10 to 17 and the figure that shows its tree.
EXAMPLES = {10: "example-10", 11: "example-10", 12: "example-12", 13: "example-13",
            14: "example-14", 15: "example-15", 16: "example-15", 17: "example-17"}

# Hand-written diagram sources, rendered as they are.
DIAGRAMS = ["layers", "flow-dom", "flow-replay"]

# The CEL guide's picture of the automaton evaluator's structure of runs (seed 003, section
# 7.2): the query, the stream (one event type a letter, positions from 0), the figure's name.
CEL_RUNS = ("A+ ; B", "AAB", "cel-runs")


def runs_dot(query: str, letters: str) -> str:
    """The structure of runs of ``query``'s automaton after reading ``letters`` as DOT:
    each node a cell (its event and position, primed when an event has several nodes; a
    bottom ⊥), ``pred`` to the first cell of the list it extends (labelled with that list's
    last cell when it has several), ``next``
    links dashed, each active deterministic state pointing at its list, and the nodes of
    the complex events ending at the last event drawn double."""
    from xmlevents.cel import Event, compile_query
    from xmlevents.cel._cea import Bag, Node, Runs, compile_cea

    runs = Runs(compile_cea(compile_query(f"SELECT * FROM S WHERE {query}").formula))
    found: list[Node] = []
    for j, t in enumerate(letters):
        found = runs.step(j, Event(j, t)) or []
    names: dict[int, str] = {}
    lines = ["digraph runs {", "  rankdir=RL;", '  node [fontname="Helvetica", shape=circle];',
             '  edge [fontname="Helvetica", fontsize=10];']

    def ends(lst: Node | Bag) -> tuple[Node, Node]:
        return (lst.first, lst.last) if isinstance(lst, Bag) else (lst, lst)

    labels: dict[int, str] = {}

    def name(n: Node) -> str:
        if id(n) not in names:
            names[id(n)] = f"n{len(names)}"
            label = "⊥" if n.pred is None else f"{letters[n.pos]}{n.pos}"
            while label in labels.values():  # two nodes of one event: A1, A1 primed
                label += "\u2032"  # prime
            labels[id(n)] = label
            shape = ", shape=doublecircle" if any(n is f for f in found) else ""
            lines.append(f'  {names[id(n)]} [label="{label}"{shape}];')
            todo.append(n)
        return names[id(n)]

    todo: list[Node] = []
    roots = [(d, ends(lst)) for d, lst in sorted(runs.active.items())]
    for n in found:
        name(n)
    for _, (first, _last) in roots:
        name(first)
    while todo:
        n = todo.pop(0)
        if n.next is not None:
            lines.append(f'  {name(n)} -> {name(n.next)} [style=dashed, label="next"];')
        if n.pred is not None:
            first, last = ends(n.pred)
            name(last)
            label = "pred" if first is last else f"pred (to {labels[id(last)]})"
            lines.append(f'  {name(n)} -> {name(first)} [label="{label}"];')
    for d, (first, _last) in roots:
        lines.append(f'  s{d} [shape=box, label="state {d}"];')
        lines.append(f"  s{d} -> {name(first)} [style=dotted];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def tree_dot(definitions: list[str]) -> str:
    """The DOT text ``xmlevents graph --dot`` prints for ``definitions``."""
    argv = [sys.executable, "-m", "xmlevents", "graph", "--dot"]
    for d in definitions:
        argv += ["--define", d]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def render(dot_file: Path) -> Path:
    """Render ``dot_file`` to an SVG beside it with Graphviz; return the SVG's path."""
    svg = dot_file.with_suffix(".svg")
    subprocess.run(["dot", "-Tsvg", str(dot_file), "-o", str(svg)], check=True)
    return svg


def main() -> int:
    if shutil.which("dot") is None:
        print("make_figures: Graphviz's `dot` is not on the PATH "
              "(Debian/Ubuntu: apt-get install graphviz)", file=sys.stderr)
        return 1
    for name, (_title, definitions) in TREES.items():
        dot_file = HERE / f"{name}.dot"
        dot_file.write_text(tree_dot(definitions), encoding="utf-8")
        print(render(dot_file).relative_to(HERE.parents[1]))
    for name in DIAGRAMS:
        print(render(HERE / f"{name}.dot").relative_to(HERE.parents[1]))
    query, letters, name = CEL_RUNS
    dot_file = HERE / f"{name}.dot"
    dot_file.write_text(runs_dot(query, letters), encoding="utf-8")
    print(render(dot_file).relative_to(HERE.parents[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
