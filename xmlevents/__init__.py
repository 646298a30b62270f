"""xmlevents: composite events for XML documents.

The algebra (paths, events, the expression language, event trees and graphs) lives in
:mod:`xmlevents.algebra`; this facade re-exports what an application needs.
"""

from xmlevents.algebra import XmlEventsError

__all__ = ["XmlEventsError", "__version__"]

__version__ = "0.1.0"
