"""The detection service (seed 001, SNOOP-R): event expressions with variables registered and
unregistered at run time on one event graph that shares common subexpressions, atomic events
signalled with parameters, detections notified with their bindings.

The engine (:class:`Engine`) is usable in process; ``xmlevents serve`` puts it behind HTTP.

Every name is imported on first use (PEP 562), from the module :data:`_MODULES` names for it:
the engine, the expressions and the errors need no web stack; the HTTP service
(:func:`create_app`, :func:`serve`, :class:`Service`) needs Starlette, uvicorn and httpx, the
``service`` extra (``pip install 'xmlevents[service]'``, issue 28). Without them, its names
raise ``ModuleNotFoundError`` with that command in a note, and :func:`web_stack_missing`
says so beforehand (``xmlevents serve`` prints it and exits with status 1).

References:
    J. J. Alferes, G. E. Tagni. Implementation of a Complex Event Engine for the Web.
"""

import importlib.util
from typing import TYPE_CHECKING

from xmlevents._foundation import compiled as _compiled
from xmlevents._foundation.lazy import lazy_names

# first, before any module below is imported: with XMLEVENTS_PURE_PYTHON=1 (or one compiled
# since edited) the compiled modules of the writer are imported from their source (issue 31)
_compiled.select(__name__, __path__)

__all__ = [
    # expressions
    "Expression", "Atomic", "Opaque", "Or", "Seq", "Any", "Param", "Var", "Literal", "Value",
    "Registration", "DOCUMENT_PARAMS", "parse_expression", "to_text",
    # the R3-style markup (section 2.3)
    "parse_markup", "to_markup", "detection_to_xml", "parse_detection_xml", "SNOOP_R",
    # engine
    "Engine", "Signal", "Detection", "Instance", "OpaqueRequest", "Provider", "Leaf",
    "OperatorNode", "Use", "Join", "valid_bindings", "check_signal",
    # the HTTP service (the ``service`` extra)
    "create_app", "serve", "Service", "MAX_BODY", "ANONYMOUS", "web_stack_missing",
    "WEB_STACK", "Limits",
    # errors
    "ExpressionTextError", "MarkupError", "RegistrationError", "SignalError",
    "UnknownExpressionError", "DamagedLogError", "CommitterGone",
]

#: Where each public name is defined: module -> names (every name of ``__all__`` but the two
#: below, once).
_MODULES: dict[str, tuple[str, ...]] = {
    ".ast": ("Expression", "Atomic", "Opaque", "Or", "Seq", "Any", "Param", "Var", "Literal",
             "Value", "Registration", "DOCUMENT_PARAMS"),
    "._text": ("parse_expression", "to_text"),
    "._markup": ("parse_markup", "to_markup", "detection_to_xml", "parse_detection_xml",
                 "SNOOP_R"),
    "._engine": ("Engine", "Signal", "Detection", "Instance", "OpaqueRequest", "Provider",
                 "Leaf", "OperatorNode", "Use", "Join", "valid_bindings", "check_signal"),
    "._app": ("create_app", "Service", "MAX_BODY", "ANONYMOUS"),
    "._server": ("serve",),
    "._limits": ("Limits",),
    "._replay": ("DamagedLogError",),
    "._commit": ("CommitterGone",),
    "._errors": ("ExpressionTextError", "MarkupError", "RegistrationError", "SignalError",
                 "UnknownExpressionError"),
}

#: The modules the HTTP service imports (the ``service`` extra, with uvloop, which uvicorn
#: uses when it is there; httptools is needed: the service's protocol is uvicorn's httptools
#: one with a header timeout, issue 31).
WEB_STACK = ("starlette", "uvicorn", "httpx", "httptools")
_HINT = "pip install 'xmlevents[service]'"


def web_stack_missing() -> str | None:
    """One line saying what to install if the HTTP service cannot run here, else None.

    Looks the packages up without importing them (``importlib.util.find_spec``), so a
    command can ask before any work.

    >>> web_stack_missing() is None or "xmlevents[service]" in web_stack_missing()
    True
    """
    missing = [name for name in WEB_STACK if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (f"the detection service needs {', '.join(missing)} (not installed): "
            f"{_HINT}")


def _missing(name: str, exc: ModuleNotFoundError) -> None:
    """Say which extra to install when a name's module needs the web stack."""
    if exc.name is not None and exc.name.partition(".")[0] in WEB_STACK:
        exc.add_note(f"xmlevents.service.{name} needs the web stack: {_HINT}")


__getattr__, __dir__ = lazy_names(__name__, globals(), _MODULES, missing=_missing)

if TYPE_CHECKING:
    from ._app import ANONYMOUS, MAX_BODY, Service, create_app
    from ._commit import CommitterGone
    from ._engine import (
        Detection,
        Engine,
        Instance,
        Join,
        Leaf,
        OpaqueRequest,
        OperatorNode,
        Provider,
        Signal,
        Use,
        check_signal,
        valid_bindings,
    )
    from ._errors import (
        ExpressionTextError,
        MarkupError,
        RegistrationError,
        SignalError,
        UnknownExpressionError,
    )
    from ._limits import Limits
    from ._markup import SNOOP_R, detection_to_xml, parse_detection_xml, parse_markup, to_markup
    from ._replay import DamagedLogError
    from ._server import serve
    from ._text import parse_expression, to_text
    from .ast import (
        DOCUMENT_PARAMS,
        Any,
        Atomic,
        Expression,
        Literal,
        Opaque,
        Or,
        Param,
        Registration,
        Seq,
        Value,
        Var,
    )
