"""One error hierarchy: every exception the library raises is an ``XmlEventsError``.

Read off the sources: each ``raise Name(...)`` in the library names a class, looked up in its
module, that must derive from :class:`xmlevents.XmlEventsError` and from a built-in exception
(so ``except ValueError`` keeps working). The exceptions Python's protocols require are listed
with their reason.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import xmlevents
from xmlevents import XmlEventsError

ROOT = Path(__file__).resolve().parents[1]
# The packages whose raise statements are scanned. service, cel, stream and the foundation are
# not yet: they raise control-flow exceptions they catch themselves (the service's HTTP
# Problem, cel's and stream's ValueError and size limits, the JSON reader's constants), which
# a scan cannot tell from escaping ones.
PACKAGES = {"xmlevents": "xmlevents", "algebra": "xmlevents.algebra", "dom": "xmlevents.dom",
            "replay": "xmlevents.replay", "rules": "xmlevents.rules"}
#: The seven packages whose public errors the facade exports (issue 28: it had three).
SYSTEMS = ("xmlevents.algebra", "xmlevents.dom", "xmlevents.replay", "xmlevents.rules",
           "xmlevents.service", "xmlevents.cel", "xmlevents.stream")

# (file, exception): the protocol asks for exactly this built-in.
PROTOCOL = {
    ("xmlevents/__init__.py", "AttributeError"): "a module's __getattr__",
    ("algebra/__init__.py", "AttributeError"): "a module's __getattr__",
    ("replay/__init__.py", "AttributeError"): "a module's __getattr__",
    ("dom/_elements.py", "KeyError"): "the attributes mapping's __getitem__/__delitem__",
    ("algebra/_operator.py", "NotImplementedError"): "unreachable: a new operator kind unhandled",
}


def _raises() -> list[tuple[str, str, str, int]]:
    """(file, module, class name, line) of every ``raise Name(...)`` in the library.

    ``raise make(...)`` with ``make`` a function of the same file that builds the exception
    counts as raising the class its return annotation names (an imported one is resolved
    the same way when the classes are checked).
    """
    found = []
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).glob("*.py")):
            stem = path.stem
            module = package if stem == "__init__" else f"{package}.{stem}"
            tree = ast.parse(path.read_text(encoding="utf-8"))
            makers = {f.name: f.returns.id for f in ast.walk(tree)
                      if isinstance(f, ast.FunctionDef) and isinstance(f.returns, ast.Name)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                    func = node.exc.func
                    if isinstance(func, ast.Name):
                        name = makers.get(func.id, func.id)
                        found.append((str(path.relative_to(ROOT)), module, name, node.lineno))
    return found


def test_every_raised_class_is_an_xmlevents_error() -> None:
    """Each class the library raises derives from XmlEventsError and a built-in."""
    wrong = []
    for file, module, name, line in _raises():
        if (file, name) in PROTOCOL:
            continue
        namespace = vars(importlib.import_module(module))
        cls = namespace.get(name, getattr(builtins, name, None))
        if inspect.isfunction(cls):  # a function imported to build the error: what it returns
            cls = typing.get_type_hints(cls).get("return")
        if not (isinstance(cls, type) and issubclass(cls, XmlEventsError)):
            wrong.append(f"{file}:{line}: raise {name}")
        elif not any(issubclass(cls, b) for b in (ValueError, TypeError, KeyError,
                                                   RuntimeError, OSError, LookupError,
                                                   # an attribute this object has not
                                                   # (hasattr answers False): NoSoleEventError
                                                   AttributeError)):
            wrong.append(f"{file}:{line}: {name} inherits no built-in exception")
    assert wrong == []


def test_the_scan_finds_raises() -> None:
    """The scan sees the library's raise statements (it is not vacuously empty)."""
    names = {name for _, _, name, _ in _raises()}
    assert {"InvalidArgumentError", "WatchError", "DefinitionError"} <= names


def test_the_facade_exports_every_error() -> None:
    """Every XmlEventsError subclass any of the seven packages exports is exported by
    xmlevents too, as the same class."""
    missing, seen = [], 0
    for package in map(importlib.import_module, SYSTEMS):
        for name in package.__all__:
            value = getattr(package, name)
            if isinstance(value, type) and issubclass(value, XmlEventsError):
                seen += 1
                if name not in xmlevents.__all__ or getattr(xmlevents, name) is not value:
                    missing.append(f"{package.__name__}.{name}")
    assert missing == []
    assert seen >= 40  # the walk sees the packages' errors (not vacuously empty)


def test_the_facade_loads_a_package_only_for_its_names() -> None:
    """``import xmlevents`` loads none of the seven packages; an error is loaded with its
    package on first use (PEP 562), the service's without its web stack."""
    code = ("import sys, xmlevents; print(sorted(m for m in sys.modules "
            "if m.startswith('xmlevents.') and not m.startswith('xmlevents._foundation'))); "
            "from xmlevents import SignalError, "
            "QuerySyntaxError; print('starlette' in sys.modules, 'uvicorn' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.splitlines() == ["[]", "False False"]


def test_every_exported_name_of_the_facade_resolves() -> None:
    """Each name of ``xmlevents.__all__`` is there, and an unknown one is an AttributeError."""
    for name in xmlevents.__all__:
        assert getattr(xmlevents, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        xmlevents.Nothing  # noqa: B018


@pytest.mark.parametrize(("call", "builtin"), [
    (lambda: xmlevents.EventGraph("E := ins(a) ; ins(a/b)", context="nope"), ValueError),
    (lambda: xmlevents.EventGraph("E := ins(a) ; ins(a/b)").held("F"), KeyError),
    (lambda: xmlevents.parse_expression(3), TypeError),  # type: ignore[arg-type]  # on purpose
    (lambda: xmlevents.Monitor(cascade_limit=0), ValueError),
])
def test_errors_are_both_kinds(call: object, builtin: type[Exception]) -> None:
    """A misuse raises an XmlEventsError that is also the built-in a caller expects."""
    with pytest.raises(XmlEventsError) as info:
        call()  # type: ignore[operator]  # the parametrized callables
    assert isinstance(info.value, builtin)


def test_unknown_name_reads_as_a_sentence() -> None:
    """An unknown tree name's message is not quoted as KeyError's str() would quote a key."""
    with pytest.raises(KeyError) as info:
        xmlevents.EventGraph("E := ins(a) ; ins(a/b)").held("F")
    assert str(info.value).startswith("no event tree named 'F'")
