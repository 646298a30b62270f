"""Every definition and subscription of a watched document can fire, or is refused with the
reason and the fix (issue 15, item 1): one test per silent case the issue lists."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import pytest
from lxml import etree

import xmlevents
from xmlevents.algebra import (
    ArgumentTypeError,
    DefinitionError,
    InvalidArgumentError,
    UnknownNameError,
)

EI = "ItemComplete := ins(item) ; (ins(item/price) & ins(item/quantity))"


def receiver(doc: Any, event: Any) -> None:
    pass


@pytest.fixture
def doc() -> Any:
    d = xmlevents.fromstring("<order/>")
    d.define(EI)
    return d


def test_an_unknown_name_is_refused_with_the_names_defined(doc: Any) -> None:
    with pytest.raises(UnknownNameError) as info:
        doc.subscribe("Nope", receiver)
    assert str(info.value) == "Nope: no definition named 'Nope' (defined: ItemComplete)"


def test_a_misspelt_name_is_refused_with_the_closest(doc: Any) -> None:
    with pytest.raises(UnknownNameError, match="did you mean ItemComplete\\?"):
        doc.subscribe("ItemComplet", receiver)


def test_a_misspelt_operation_is_refused_with_the_primitive_type_meant(doc: Any) -> None:
    # update(...) parses as a composite type named "update": no definition has that name.
    with pytest.raises(UnknownNameError) as info:
        doc.subscribe("update(item/price/text())", receiver)
    assert "no definition named 'update'" in str(info.value)
    assert "did you mean upd(item/price/text())?" in str(info.value)


def test_a_path_type_the_definition_never_has_is_refused(doc: Any) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        doc.subscribe("ItemComplete(order)", receiver)
    message = str(info.value)
    assert "ItemComplete's events occur at paths ending in item (its path type)" in message
    assert "ItemComplete(order/item)" in message
    # ... while the ones it can have are taken, and fire.
    seen: list[Any] = []
    doc.subscribe("ItemComplete(order/item)", lambda d, event: seen.append(event))
    item = etree.SubElement(doc.getroot(), "item")
    etree.SubElement(item, "price")
    etree.SubElement(item, "quantity")
    assert len(seen) == 1


def test_a_wildcard_no_definition_reaches_is_refused(doc: Any) -> None:
    with pytest.raises(InvalidArgumentError, match=r"no definition's events occur at a path "
                                                   r"ending in order \(defined: "
                                                   r"ItemComplete\(item\)\)"):
        doc.subscribe("%(order)", receiver)
    doc.subscribe("%(item)", receiver)  # one does


def test_an_element_is_never_updated_in_a_subscription(doc: Any) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        doc.subscribe("upd(item/price)", receiver)
    assert "an element is never updated in a watched document" in str(info.value)
    assert "upd(item/price/text())" in str(info.value)
    doc.subscribe("upd(item/price/text())", receiver)
    doc.subscribe("upd(item/@partnum)", receiver)
    doc.subscribe("*(item/price)", receiver)  # inserted and deleted: it can fire


def test_an_element_is_never_updated_in_a_definition() -> None:
    d = xmlevents.fromstring("<order/>")
    with pytest.raises(DefinitionError) as info:
        d.define("Y := ins(item) ; upd(item/price)")
    err = info.value
    assert (err.line, err.column) == (1, 18)  # the caret under the leaf
    assert "an element is never updated in a watched document, only its text and its " \
           "attributes: write upd(item/price/text())" in str(err)
    assert d.monitor.definitions is None  # nothing was defined
    # Inside an alias, the caret is in the alias's own text.
    with pytest.raises(DefinitionError) as info:
        d.define("A := upd(item/price)\nZ := ins(item) ; A")
    assert (info.value.definition, info.value.line, info.value.column) == ("A", 1, 6)


def test_the_paper_s_element_update_is_still_taken_by_a_plain_graph() -> None:
    """Example 12 feeds upd(item/price) events to a graph: events from elsewhere than
    watched documents may update anything."""
    graph = xmlevents.algebra.EventGraph("Eh := *(item/quantity) & upd(item/price)")
    assert [t.name for t in graph.trees] == ["Eh"]


def test_a_subscription_before_any_definition_is_checked_by_the_first() -> None:
    d = xmlevents.fromstring("<order/>")
    d.subscribe("Later", receiver)
    with pytest.raises(UnknownNameError) as info:
        d.define(EI)
    assert "subscribed to before anything was defined: define Later in the same call" \
        in str(info.value)
    assert d.monitor.definitions is None
    d.define(EI + "\nLater := del(item)")  # defined together: taken


def test_a_subscription_that_waited_for_nothing_is_a_warning_at_close() -> None:
    d = xmlevents.fromstring("<order/>")
    d.subscribe("Later", receiver)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d.close()
    assert [str(w.message) for w in caught] == [
        "subscriptions to 'Later' never ran: nothing was defined (define the composite "
        "events they name with doc.define)"]
    assert caught[0].category is xmlevents.SubscriptionWarning


def test_a_receiver_that_cannot_take_the_event_by_name_is_refused(doc: Any) -> None:
    def cb(doc: Any, e: Any) -> None:
        pass

    with pytest.raises(ArgumentTypeError) as info:
        doc.subscribe("ItemComplete", cb)
    assert str(info.value) == (
        "the receiver cb(doc, e) cannot be called as cb(doc, event=e) (it "
        "passes the event as the keyword argument event=); write it as def cb(doc, event): "
        "...")


def test_a_receiver_with_too_few_parameters_is_refused(doc: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="cannot be called as <lambda>\\(doc, event=e\\)"):
        doc.subscribe("ItemComplete", lambda event: None)
    doc.subscribe("ItemComplete", lambda *args, **kwargs: None)  # takes anything


def test_weak_lambdas_and_unreferenceable_receivers_are_refused(doc: Any) -> None:
    with pytest.raises(InvalidArgumentError, match="weak=True with a lambda: nothing else "
                                                   "holds it, so it is collected at once"):
        doc.subscribe("ItemComplete", lambda d, event: None, weak=True)

    class Owner:
        def on(self, d: Any, event: Any) -> None:
            seen.append(event)

    seen: list[Any] = []
    owner = Owner()
    doc.subscribe("ItemComplete", owner.on, weak=True)  # a method: lives with its object
    item = etree.SubElement(doc.getroot(), "item")
    etree.SubElement(item, "price")
    etree.SubElement(item, "quantity")
    assert len(seen) == 1
    del owner
    gc.collect()


def test_undefining_a_subscribed_definition_is_refused(doc: Any) -> None:
    doc.subscribe("ItemComplete", receiver)
    with pytest.raises(InvalidArgumentError, match="ItemComplete has subscribers "
                                                   "\\('ItemComplete'\\), which would never "
                                                   "be called again"):
        doc.undefine("ItemComplete")
    doc.unsubscribe("ItemComplete", receiver)
    doc.undefine("ItemComplete")
