"""The detection service (seed 001, SNOOP-R): event expressions with variables registered and
unregistered at run time on one event graph that shares common subexpressions, atomic events
signalled with parameters, detections notified with their bindings.

The engine (:class:`Engine`) is usable in process; ``xmlevents serve`` puts it behind HTTP.

References:
    J. J. Alferes, G. E. Tagni. Implementation of a Complex Event Engine for the Web.
"""

from ._app import ANONYMOUS, MAX_BODY, Service, create_app
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
from ._markup import SNOOP_R, detection_to_xml, parse_detection_xml, parse_markup, to_markup
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

__all__ = [
    # expressions
    "Expression", "Atomic", "Opaque", "Or", "Seq", "Any", "Param", "Var", "Literal", "Value",
    "Registration", "DOCUMENT_PARAMS", "parse_expression", "to_text",
    # the R3-style markup (section 2.3)
    "parse_markup", "to_markup", "detection_to_xml", "parse_detection_xml", "SNOOP_R",
    # engine
    "Engine", "Signal", "Detection", "Instance", "OpaqueRequest", "Provider", "Leaf",
    "OperatorNode", "Use", "Join", "valid_bindings", "check_signal",
    # the HTTP service
    "create_app", "serve", "Service", "MAX_BODY", "ANONYMOUS",
    # errors
    "ExpressionTextError", "MarkupError", "RegistrationError", "SignalError",
    "UnknownExpressionError",
]
