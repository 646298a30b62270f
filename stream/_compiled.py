"""The stream package's optional compiled modules (issue 33, item 4), and the switch that
leaves them aside: :mod:`xmlevents._foundation.compiled`'s, for this package.

``setup.py`` compiles the modules of :data:`MODULES` with Cython where it can (the run's
handlers, which lxml calls twice per element, then run with no interpreter frame per call);
``XMLEVENTS_PURE_PYTHON=1``, and a compiled module older than its source, import them from
their source (``tests/stream/test_compiled.py``). The mechanism and the lists of every
package are in the foundation, shared with the service (issue 31, item 10); this module
keeps the stream's names, and the package imports it first, before any of :data:`MODULES`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from xmlevents._foundation import compiled as _shared
from xmlevents._foundation.compiled import ENV, compiled

__all__ = ["ENV", "MODULES", "compiled", "select", "stale"]

#: the modules ``setup.py`` compiles: the run, its driver, and the making of matches
MODULES = _shared.MODULES["xmlevents.stream"]


def stale(path: Sequence[str]) -> list[str]:
    """The modules of :data:`MODULES` whose compiled file in the folders ``path`` is older
    than their source."""
    return _shared.stale(path, MODULES)


def select(package: str, path: Sequence[str]) -> None:
    """From now on, import from their source the modules of ``package`` (whose folders are
    ``path``) that are compiled but stale, or every module of :data:`MODULES` with
    :data:`ENV` set to ``1``."""
    _shared.select(package, path, MODULES)


# the package imports this module first, before any of MODULES
if __package__:
    select(__package__, sys.modules[__package__].__path__)
