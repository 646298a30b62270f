"""Watched lxml documents that emit primitive mutation events (DESIGN section 5, issue 5).

Importing this package installs the watched element classes as lxml's default classes and
the reporting versions of ``etree.SubElement`` and the ``strip_*`` functions into
``lxml.etree`` (see :func:`install`); on trees that no one watches they behave as lxml's.
"""

from ._conditions import XPathDocuments, xpath_boolean
from ._document import Recording, WatchedDocument
from ._elements import WatchedAttrib, WatchedComment, WatchedElement, WatchedPI
from ._errors import (
    CascadeError,
    EventLogError,
    SubscriptionWarning,
    WatchError,
    WatchTypeError,
    XMLSyntaxError,
)
from ._factories import empty, from_snapshot, fromstring, parse, wrap
from ._functions import (
    SubElement,
    cleanup_namespaces,
    indent,
    install,
    installed,
    strip_attributes,
    strip_elements,
    strip_tags,
    uninstall,
)
from ._monitor import Monitor
from ._registry import declarations
from ._replay import Replayer, Snapshot, hardened_parser, replay

install()

__all__ = [
    "parse", "fromstring", "wrap", "empty", "from_snapshot", "WatchedDocument", "Monitor",
    "Recording", "Snapshot", "Replayer", "replay",
    "hardened_parser", "SubElement", "strip_attributes", "strip_elements", "strip_tags",
    "indent", "cleanup_namespaces", "install", "uninstall", "installed",
    "WatchedElement", "WatchedComment", "WatchedPI", "WatchedAttrib",
    "XPathDocuments", "xpath_boolean", "declarations",
    # errors
    "WatchError", "WatchTypeError", "XMLSyntaxError", "EventLogError", "CascadeError",
    "SubscriptionWarning",
]
