"""``xmlevents.algebra`` imports some of its modules on first use (PEP 562 ``__getattr__``:
the drawings, the rows' columns, the checks of subscriptions), so that ``xmlevents detect``
starts without them (issue 13, item 5). Every public name is still there, by attribute, by
``from xmlevents.algebra import ...`` and by ``import *``, and is the object its module
defines."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import xmlevents.algebra as algebra

LAZY_MODULES = ("xmlevents.algebra._render", "xmlevents.algebra._rows",
                "xmlevents.algebra._subscriptions")


def test_every_name_of_all_resolves() -> None:
    for name in algebra.__all__:
        assert getattr(algebra, name) is not None, name
    assert set(algebra.__all__) <= set(dir(algebra))


def test_star_import_gives_every_name() -> None:
    namespace: dict[str, object] = {}
    exec("from xmlevents.algebra import *", namespace)
    assert set(algebra.__all__) <= set(namespace)


@pytest.mark.parametrize("name, module", [
    ("render_text", "_render"), ("render_dot", "_render"), ("EVENT_LINE", "_rows"),
    ("COMPOSITES_TABLE", "_rows"), ("RowSchema", "_rows"), ("Column", "_rows"),
    ("check_subscription", "_subscriptions"), ("raise_collected", "_subscriptions"),
    ("unknown_name", "_subscriptions"), ("subscription_type", "_subscriptions"),
])
def test_a_lazy_name_is_its_module_s_object(name: str, module: str) -> None:
    from_module = getattr(importlib.import_module(f"xmlevents.algebra.{module}"), name)
    assert getattr(algebra, name) is from_module
    namespace: dict[str, object] = {}
    exec(f"from xmlevents.algebra import {name}", namespace)
    assert namespace[name] is from_module


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


def test_importing_the_algebra_leaves_the_lazy_modules_alone() -> None:
    """In a fresh interpreter: the algebra alone, then a graph detecting, import none of them
    (nor difflib); the first use of a name imports its module."""
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
