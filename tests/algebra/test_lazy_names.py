"""``xmlevents.algebra`` imports every module on first use (PEP 562 ``__getattr__``), so that
``xmlevents detect`` starts without the drawings and the checks of subscriptions (issue 13,
item 5) and the systems that use only the algebra's model — CEL and streaming queries — never
load its engine (issue 28: ``import xmlevents.stream`` loaded 19 algebra modules). Every public
name is still there, by attribute, by ``from xmlevents.algebra import ...`` and by ``import
*``, and is the object its module defines; what siblings share and needs none of the algebra's
types is in the foundation, not here."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import xmlevents.algebra as algebra

#: The engine: the event trees and graph, their nodes, contexts and windows.
ENGINE = ("xmlevents.algebra._graph", "xmlevents.algebra._tree",
          "xmlevents.algebra._operator", "xmlevents.algebra._multiplicity",
          "xmlevents.algebra._contexts", "xmlevents.algebra._termination",
          "xmlevents.algebra._sharing", "xmlevents.algebra._window",
          "xmlevents.algebra._grouping", "xmlevents.algebra._definitions",
          "xmlevents.algebra._parser")
LAZY_MODULES = ("xmlevents.algebra._render", "xmlevents.algebra._subscriptions",
                "xmlevents._foundation.rows", "xmlevents._foundation.subscriptions")


def test_every_name_of_all_resolves() -> None:
    for name in algebra.__all__:
        assert getattr(algebra, name) is not None, name
    assert set(algebra.__all__) <= set(dir(algebra))


def test_the_table_names_every_public_name_once() -> None:
    """Each name of ``__all__`` has one module, and the table has nothing else."""
    listed = [name for names in algebra._MODULES.values() for name in names]
    assert sorted(listed) == sorted(algebra.__all__)
    assert len(set(listed)) == len(listed)


def test_star_import_gives_every_name() -> None:
    namespace: dict[str, object] = {}
    exec("from xmlevents.algebra import *", namespace)
    assert set(algebra.__all__) <= set(namespace)


_WHERE = {name: module for module, names in algebra._MODULES.items() for name in names}


@pytest.mark.parametrize("name", sorted(_WHERE))
def test_a_lazy_name_is_its_module_s_object(name: str) -> None:
    module = _WHERE[name]
    full = f"xmlevents.algebra{module}" if module.startswith(".") else module
    from_module = getattr(importlib.import_module(full), name)
    assert getattr(algebra, name) is from_module
    namespace: dict[str, object] = {}
    exec(f"from xmlevents.algebra import {name}", namespace)
    assert namespace[name] is from_module


def test_the_siblings_plumbing_is_not_public_here() -> None:
    """The rows' columns and the receivers' checks live in the foundation (issue 28)."""
    for name in ("Column", "RowSchema", "EVENT_LINE", "COMPOSITES_TABLE", "check_receiver",
                 "check_weak", "raise_collected", "unknown_name", "load_line", "check_text",
                 "MAX_INT"):
        assert name not in algebra.__all__
        assert not hasattr(algebra, name), name
    from xmlevents._foundation import rows, subscriptions

    assert rows.EVENT_LINE.names[:2] == ("id", "ts")
    assert callable(subscriptions.check_receiver)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'render_svg'"):
        algebra.render_svg  # noqa: B018
    with pytest.raises(ImportError):
        exec("from xmlevents.algebra import render_svg", {})
    assert not hasattr(algebra, "nothing_here")


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def _loaded_after(statement: str) -> list[str]:
    """The xmlevents modules a fresh interpreter has loaded after ``statement``."""
    code = f"""
import sys
{statement}
print(" ".join(sorted(m for m in sys.modules if m.startswith("xmlevents"))))
"""
    return _fresh(code).split()


def test_importing_the_algebra_loads_none_of_its_modules() -> None:
    # the foundation's one module for names imported on first use, and nothing else
    assert _loaded_after("import xmlevents.algebra") == [
        "xmlevents", "xmlevents._foundation", "xmlevents._foundation.lazy", "xmlevents.algebra"]


@pytest.mark.parametrize("package", ["xmlevents.stream", "xmlevents.cel", "xmlevents"])
def test_the_model_s_users_load_no_engine_module(package: str) -> None:
    """``import xmlevents.stream`` and ``import xmlevents.cel`` (and the facade) load none of
    the engine's modules (issue 28); the control below shows the listing sees them."""
    modules = _loaded_after(f"import {package}")
    assert package in modules
    assert [m for m in modules if m in ENGINE] == []


def test_a_graph_loads_the_engine() -> None:
    """The control: an event graph loads the engine's modules (the listing is read right)."""
    modules = _loaded_after("from xmlevents.algebra import EventGraph")
    assert {"xmlevents.algebra._graph", "xmlevents.algebra._tree",
            "xmlevents.algebra._operator"} <= set(modules)


def test_detecting_leaves_the_lazy_modules_alone() -> None:
    """In a fresh interpreter: a graph detecting imports none of the drawings, the checks of
    subscriptions or the rows (nor difflib); the first use of each imports its module."""
    code = f"""
import sys
import xmlevents.algebra as a
g = a.EventGraph("E := ins(a) ; ins(a/b)")
e = a.PrimitiveEvent("e1", 1, a.Op.INS, a.PathInstance.of("/a", ["a1"]))
g.feed(e)
lazy = {LAZY_MODULES!r} + ("difflib",)
print(sorted(m for m in lazy if m in sys.modules))
a.render_text(g.definitions)
e.to_dict()
g.subscribe("E", print)
print(sorted(m for m in lazy if m in sys.modules))
"""
    before, after = _fresh(code).splitlines()
    assert before == "[]"
    assert after == str(sorted(LAZY_MODULES + ("difflib",)))
