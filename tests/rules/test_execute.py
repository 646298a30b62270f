"""ECA rule execution on a store of watched documents (seed 002, section 2.6; issue 17 item 2):
the runs of Examples 1 and 2, document- and instance-level triggering, priorities, DELETE
events on the document as it was, ``on EVENT Name``, and top-level updates as transactions."""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Any

import pytest
from lxml import etree

import xmlevents
from xmlevents.algebra import InvalidArgumentError, XmlEventsError
from xmlevents.rules import (
    StepLimitError,
    Store,
    TraceStep,
    UnknownDocumentError,
    UpdateError,
    parse_rules,
)

FIXTURES = FilePath(__file__).parent / "fixtures"
PAPER_RULES = (FIXTURES / "paper_rules.txt").read_text(encoding="utf-8")


def load(name: str) -> etree._Element:
    parser = etree.XMLParser(remove_blank_text=True)
    return etree.parse(str(FIXTURES / name), parser).getroot()


def c14n(element: Any) -> bytes:
    root = element.getroot() if hasattr(element, "getroot") else element
    return etree.tostring(root, method="c14n")


def states(store: Store) -> dict[str, bytes]:
    return {name: c14n(store[name]) for name in store}


@pytest.fixture
def paper() -> Store:
    """Examples 1 and 2: the stores, products, guide and view, with the paper's rules."""
    store = Store({name: load(name) for name in ("s.xml", "p.xml", "g.xml", "m.xml")})
    store.rules(PAPER_RULES, source="paper_rules.txt")
    return store


# --- Example 1 -------------------------------------------------------------------------------

def test_example_1_rule_1_fires_once_rule_2_is_triggered_but_false(paper: Store) -> None:
    steps = paper.execute(
        "INSERT <product id='p2'/> BELOW document('s.xml')/stores/store[@id='s1'] AFTER TRUE")
    # Two steps: the update, then Rule 1's action; the schedule is then empty.
    assert [(s.step, s.rule) for s in steps] == [(1, None), (2, "R1")]
    assert steps[0].triggered == ("R1",) and steps[0].fired == ("R1",)
    new = paper["s.xml"].getroot()[0][-1]
    assert steps[1].deltas == (f"/stores[n1]/store[n2]/product[{paper['s.xml'].id_of(new)}]",)
    # Rule 2 is triggered by the new store of p.xml, but its condition is false.
    assert steps[1].triggered == ("R2",) and steps[1].fired == ()
    product = paper["p.xml"].getroot().find("product[@id='p2']")
    assert etree.tostring(product[-1]) == b'<store id="s1"/>'       # the last child
    assert [s.step for s in paper.trace] == [1, 2]


def test_example_1_the_other_way_round(paper: Store) -> None:
    """A store added below a product of p.xml adds the product below the store (Rule 2);
    then Rule 1 is triggered by that product, and finds the store already there."""
    steps = paper.execute("INSERT <store id='s2'/> BELOW "
                          "document('p.xml')/products/product[@id='p2']")
    assert [(s.step, s.rule, s.fired) for s in steps] == [(1, None, ("R2",)), (2, "R2", ())]
    assert steps[1].triggered == ("R1",)
    store = paper["s.xml"].getroot().find("store[@id='s2']")
    assert etree.tostring(store[-1]) == b'<product id="p2"/>'


def test_the_trace_as_json() -> None:
    step = TraceStep(1, 2, "R1", "s.xml", "DELETE document('a')/b", ("/a[n1]/b[n2]",),
                     ("R1",), ("R1",))
    assert step.to_dict() == {"update": 1, "step": 2, "rule": "R1", "doc": "s.xml",
                              "action": "DELETE document('a')/b", "deltas": ["/a[n1]/b[n2]"],
                              "triggered": ["R1"], "fired": ["R1"]}


# --- Example 2 -------------------------------------------------------------------------------

def test_example_2_view_maintenance(paper: Store) -> None:
    guide = paper["g.xml"].getroot()
    unnamed = guide.xpath("restaurant[name='Baghdad Cafe']/entree[not(name)]")[0]
    with paper.update():                        # any lxml edits: one top-level update
        etree.SubElement(unnamed, "ingredient").text = "Mushroom"
    assert [(s.step, s.rule) for s in paper.trace] == [(1, None), (2, "Mushrooms")]
    assert paper.trace[0].action is None and paper.trace[0].doc is None
    assert c14n(paper["m.xml"]) == c14n(load("m-after.xml"))


def test_example_2_condition_is_per_instantiation(paper: Store) -> None:
    """Two ingredients in one update: the instance-level condition holds for one of them,
    so the instance-level action runs once."""
    guide = paper["g.xml"].getroot()
    eats = guide.xpath("restaurant[name='Eats']/entree[not(name)]")[0]
    unnamed = guide.xpath("restaurant[name='Baghdad Cafe']/entree[not(name)]")[0]
    with paper.update():
        etree.SubElement(eats, "ingredient").text = "Mushroom"      # not Baghdad Cafe
        etree.SubElement(unnamed, "ingredient").text = "Mushroom"
    assert len(paper.trace[1].deltas) == 1
    assert c14n(paper["m.xml"]) == c14n(load("m-after.xml"))


# --- document-level and instance-level triggering --------------------------------------------

LOG_RULES = """
rule Count priority 1:
on INSERT document('s.xml')/stores/store/product
do INSERT <seen id='{$delta/@id}'/> BELOW document('log.xml')/log;
   INSERT <batch/> BELOW document('log.xml')/log
"""


def test_three_products_instance_level_three_times_document_level_once() -> None:
    store = Store({"s.xml": load("s.xml"), "log.xml": etree.fromstring("<log/>")})
    store.rules(LOG_RULES)
    steps = store.execute("INSERT <store id='s3'><product id='p1'/><product id='p2'/>"
                          "<product id='p3'/></store> BELOW document('s.xml')/stores")
    # Every node of the inserted sub-document is new: the three products are instantiations.
    assert [(s.step, s.rule, len(s.deltas)) for s in steps] == [
        (1, None, 0), (2, "Count", 3), (3, "Count", 3)]
    log = store["log.xml"].getroot()
    assert [(e.tag, e.get("id")) for e in log] == [
        ("seen", "p1"), ("seen", "p2"), ("seen", "p3"), ("batch", None)]


def test_three_products_in_one_update_block() -> None:
    store = Store({"s.xml": load("s.xml"), "log.xml": etree.fromstring("<log/>")})
    store.rules(LOG_RULES)
    s1 = store["s.xml"].getroot()[0]
    with store.update():
        for ident in ("p7", "p8", "p9"):
            etree.SubElement(s1, "product", id=ident)
    assert [e.tag for e in store["log.xml"].getroot()] == ["seen", "seen", "seen", "batch"]


def test_no_rule_triggered_by_a_change_elsewhere() -> None:
    store = Store({"s.xml": load("s.xml"), "log.xml": etree.fromstring("<log/>")})
    store.rules(LOG_RULES)
    steps = store.execute("INSERT <manager/> BELOW document('s.xml')/stores/store")
    assert [(s.step, s.triggered) for s in steps] == [(1, ())]
    assert len(store["log.xml"].getroot()) == 0


# --- priorities --------------------------------------------------------------------------------

def _priority_rules(high: str, low: str) -> str:
    return f"""
rule {high} priority 9:
on INSERT document('a.xml')/r/x
do INSERT <{high}/> BELOW document('b.xml')/r
rule {low} priority 1:
on INSERT document('a.xml')/r/x
do INSERT <{low}/> BELOW document('b.xml')/r
"""


@pytest.mark.parametrize(("high", "low"), [("first", "second"), ("second", "first")])
def test_priorities_order_the_schedule(high: str, low: str) -> None:
    store = Store({"a.xml": etree.fromstring("<r/>"), "b.xml": etree.fromstring("<r/>")})
    store.rules(_priority_rules(high, low))
    steps = store.execute("INSERT <x/> BELOW document('a.xml')/r")
    assert steps[0].fired == (high, low)
    assert [s.rule for s in steps] == [None, high, low]
    assert [e.tag for e in store["b.xml"].getroot()] == [high, low]


def test_fired_actions_go_to_the_head_of_the_schedule() -> None:
    """A's action triggers C; C's action runs before B's, which was already waiting."""
    store = Store({"a.xml": etree.fromstring("<r/>"), "b.xml": etree.fromstring("<r/>")})
    store.rules("""
rule A priority 3: on INSERT document('a.xml')/r/x do INSERT <a/> BELOW document('b.xml')/r
rule B priority 2: on INSERT document('a.xml')/r/x do INSERT <b/> BELOW document('b.xml')/r
rule C priority 1: on INSERT document('b.xml')/r/a do INSERT <c/> BELOW document('b.xml')/r
""")
    steps = store.execute("INSERT <x/> BELOW document('a.xml')/r")
    assert [s.rule for s in steps] == [None, "A", "C", "B"]
    assert [e.tag for e in store["b.xml"].getroot()] == ["a", "c", "b"]


# --- placement ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "tags"), [
    ("INSERT <n/> BELOW document('a.xml')/r", ["x", "y", "x", "n"]),
    ("INSERT <n/> BELOW document('a.xml')/r AFTER TRUE", ["x", "y", "x", "n"]),
    ("INSERT <n/> BELOW document('a.xml')/r BEFORE TRUE", ["n", "x", "y", "x"]),
    ("INSERT <n/> BELOW document('a.xml')/r AFTER self::x", None),
    ("INSERT <n/> BELOW document('a.xml')/r AFTER .[@k='1']", ["x", "n", "y", "x"]),
    ("INSERT <n/> BELOW document('a.xml')/r BEFORE .[@k='2']", ["x", "n", "y", "x"]),
    ("INSERT <n/> BELOW document('a.xml')/r AFTER .[@k='9']", ["n", "x", "y", "x"]),
    ("INSERT <n/> BELOW document('a.xml')/r BEFORE .[@k='9']", ["x", "y", "x", "n"]),
    ("INSERT <n/> BELOW document('a.xml')/r/nothing", ["x", "y", "x"]),
])
def test_placement(action: str, tags: list[str] | None) -> None:
    store = Store({"a.xml": etree.fromstring("<r><x k='1'/><y k='2'/><x k='3'/></r>")})
    if tags is None:                       # not simple XPath: refused before anything runs
        with pytest.raises(XmlEventsError):
            store.execute(action)
        return
    store.execute(action)
    assert [e.tag for e in store["a.xml"].getroot()] == tags


# --- DELETE events: on the document as it was ------------------------------------------------

def test_delete_event_sees_the_document_as_it_was() -> None:
    store = Store({"s.xml": load("s.xml"), "p.xml": load("p.xml")})
    store.rules("""
rule Gone priority 1:
on DELETE document('s.xml')/stores/store/product
do DELETE document('p.xml')/products/product[@id=$delta/@id]/store[@id=$delta/../@id]
""")
    steps = store.execute("DELETE document('s.xml')/stores/store[@id='s2']/product")
    assert [(s.step, s.rule) for s in steps] == [(1, None), (2, "Gone")]
    assert len(steps[1].deltas) == 1 and steps[1].deltas[0].startswith("/stores[")
    p1 = store["p.xml"].getroot().find("product[@id='p1']")
    assert [s.get("id") for s in p1.findall("store")] == ["s1"]


def test_deleting_a_subtree_deletes_each_of_its_nodes() -> None:
    store = Store({"s.xml": load("s.xml"), "log.xml": etree.fromstring("<log/>")})
    store.rules("""
rule Gone priority 1:
on DELETE document('s.xml')//product
do INSERT <gone id='{$delta/@id}' store='{$delta/../@id}'/> BELOW document('log.xml')/log
""")
    store.execute("DELETE document('s.xml')/stores/store[@id='s1']")
    assert [(e.get("id"), e.get("store")) for e in store["log.xml"].getroot()] == [
        ("p1", "s1"), ("p2", "s1")]


# --- on EVENT Name (beyond the paper) --------------------------------------------------------

def test_on_event_item_complete_maintains_the_order_total() -> None:
    """Each complete item (a price and a quantity) adds its line to totals.xml; the total
    is the sum over the lines, kept up to date by the rule alone."""
    store = Store({"o.xml": etree.fromstring("<order/>"),
                   "t.xml": etree.fromstring("<totals/>")})
    store.define("ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))")
    store.rules("""
rule Line priority 1:
on EVENT ItemComplete
do INSERT <line item='{$delta/@n}' amount='{$delta/price}' times='{$delta/quantity}'/>
   BELOW document('t.xml')/totals
""")

    def total() -> float:
        return sum(float(x.get("amount")) * int(x.get("times"))
                   for x in store["t.xml"].getroot())

    steps = store.execute("INSERT <item n='1'><price>2.50</price><quantity>4</quantity></item> "
                          "BELOW document('o.xml')/order")
    assert [(s.step, s.rule) for s in steps] == [(1, None), (2, "Line")]
    assert steps[1].deltas == ("/order[n1]/item[n2]",)     # $delta: the complete item
    assert total() == 10.0
    order = store["o.xml"].getroot()
    with store.update():                      # an item made complete in two edits
        item = etree.SubElement(order, "item", n="2")
        etree.SubElement(item, "price").text = "1"
    assert total() == 10.0                    # no quantity yet: not complete
    with store.update():
        etree.SubElement(item, "quantity").text = "3"
    assert total() == 13.0
    assert [e.get("item") for e in store["t.xml"].getroot()] == ["1", "2"]


# --- transactions -------------------------------------------------------------------------------

LOOP = """
rule Ping priority 2:
on INSERT document('a.xml')/r/x
do INSERT <y/> BELOW document('b.xml')/r
rule Pong priority 1:
on INSERT document('b.xml')/r/y
do INSERT <x/> BELOW document('a.xml')/r
"""


def test_a_looping_pair_hits_the_step_limit_and_everything_is_rolled_back() -> None:
    store = Store({"a.xml": etree.fromstring("<r><x/></r>"),
                   "b.xml": etree.fromstring("<r>text<y k='1'/></r>")}, max_steps=25)
    store.rules(LOOP)
    before = states(store)
    with pytest.raises(StepLimitError) as caught:
        store.execute("INSERT <x/> BELOW document('a.xml')/r")
    error = caught.value
    assert error.step == 26 and error.rule in ("Ping", "Pong") and error.update == 1
    assert "max_steps=25" in str(error) and "step 26" in str(error)
    assert len(error.trace) == 25
    assert states(store) == before                       # C14N-equal, every document
    assert store.trace == []                              # a failed update leaves no trace
    # The store goes on: the next update runs (and fails the same way).
    with pytest.raises(StepLimitError):
        store.execute("INSERT <y/> BELOW document('b.xml')/r")
    assert states(store) == before


def test_what_subscribers_see_of_a_rollback() -> None:
    """The rollback is itself edits: the changed document's root is replaced by its copy
    from before — a del of the changed root, an ins of the restored one."""
    store = Store({"a.xml": etree.fromstring("<r><x/></r>"),
                   "b.xml": etree.fromstring("<r/>")}, max_steps=3)
    store.rules(LOOP)
    seen: list[dict[str, Any]] = []

    def receive(doc: Any, event: Any) -> None:
        seen.append(event.to_dict())

    store["b.xml"].mutations.connect(receive, weak=False)
    with pytest.raises(StepLimitError):
        store.execute("INSERT <x/> BELOW document('a.xml')/r")
    ops = [(e["op"], e["path"]) for e in seen]
    assert ops[0] == ("ins", "/r/y")                      # the failed update's edits
    assert ops[-2:] == [("del", "/r"), ("ins", "/r")]    # then the rollback
    assert c14n(store["b.xml"]) == b"<r></r>"


def test_an_unknown_document_names_the_rule_and_the_step() -> None:
    store = Store({"a.xml": etree.fromstring("<r/>")})
    store.rules("""
rule Lost priority 1:
on INSERT document('a.xml')/r/x
do INSERT <y/> BELOW document('nope.xml')/r
""")
    before = states(store)
    with pytest.raises(UpdateError) as caught:
        store.execute("INSERT <x/> BELOW document('a.xml')/r")
    error = caught.value
    assert (error.rule, error.step) == ("Lost", 2)
    assert isinstance(error.cause, UnknownDocumentError) and error.cause.rule == "Lost"
    assert "rule Lost" in str(error) and "nope.xml" in str(error) and "step 2" in str(error)
    assert states(store) == before


def test_an_unknown_document_in_the_update_itself() -> None:
    store = Store({"a.xml": etree.fromstring("<r/>")})
    with pytest.raises(UpdateError) as caught:
        store.execute("INSERT <x/> BELOW document('b.xml')/r")
    assert caught.value.rule is None and caught.value.step == 1


def test_a_failing_action_rolls_back_the_earlier_steps() -> None:
    """Step 2 edits b.xml, step 3 fails (deleting a root): both documents are restored."""
    store = Store({"a.xml": etree.fromstring("<r/>"), "b.xml": etree.fromstring("<r/>")})
    store.rules("""
rule Edit priority 2: on INSERT document('a.xml')/r/x do INSERT <y/> BELOW document('b.xml')/r
rule Bad priority 1: on INSERT document('b.xml')/r/y do DELETE document('a.xml')/r
""")
    with pytest.raises(UpdateError) as caught:
        store.execute("INSERT <x/> BELOW document('a.xml')/r")
    assert (caught.value.rule, caught.value.step) == ("Bad", 3)
    assert "root element" in str(caught.value)
    assert states(store) == {"a.xml": b"<r></r>", "b.xml": b"<r></r>"}


def test_an_exception_in_an_update_block_rolls_it_back() -> None:
    store = Store({"a.xml": etree.fromstring("<r><x/></r>")})
    with pytest.raises(KeyError), store.update():
        etree.SubElement(store["a.xml"].getroot(), "y")
        raise KeyError("boom")
    assert c14n(store["a.xml"]) == b"<r><x></x></r>"
    store.execute("INSERT <z/> BELOW document('a.xml')/r")  # the store goes on
    assert c14n(store["a.xml"]) == b"<r><x></x><z></z></r>"


def test_updates_do_not_nest() -> None:
    store = Store({"a.xml": etree.fromstring("<r/>")})
    with store.update(), pytest.raises(UpdateError, match="do not nest"):
        store.execute("INSERT <z/> BELOW document('a.xml')/r")


# --- building a store ------------------------------------------------------------------------

def test_documents_as_files_trees_and_watched_documents(tmp_path: FilePath) -> None:
    path = tmp_path / "s.xml"
    path.write_bytes(etree.tostring(load("s.xml")))
    monitor = xmlevents.Monitor()
    p = xmlevents.fromstring(etree.tostring(load("p.xml")), monitor=monitor, name="p.xml")
    store = Store({"s.xml": str(path)}, p=p)
    assert store.monitor is monitor and store["p"] is p
    assert store["s.xml"].getroot().tag == "stores"
    with pytest.raises(UnknownDocumentError):
        store["q"]


def test_watched_documents_on_different_monitors_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="different monitors"):
        Store(a=xmlevents.fromstring("<a/>"), b=xmlevents.fromstring("<b/>"))


def test_a_top_level_update_has_no_delta() -> None:
    store = Store(a=etree.fromstring("<r/>"))
    with pytest.raises(InvalidArgumentError, match=r"\$delta"):
        store.execute("INSERT <x/> BELOW $delta")


def test_rules_given_as_a_rule_set() -> None:
    store = Store({"s.xml": load("s.xml"), "p.xml": load("p.xml")})
    bound = store.rules(parse_rules(PAPER_RULES))
    assert [r.name for r in bound] == ["R1", "R2", "Mushrooms"] and len(bound) == 3
    assert bound["R1"].priority == 2 and store.ruleset is bound
