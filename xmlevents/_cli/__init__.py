"""The ``xmlevents`` command line (DESIGN sections 6 and 11; issue 28): a table of commands, each
a module of this package with its parser and ``run(args, streams) -> int``
(:mod:`._main`); what they share in :mod:`._common` (the one failure type and the exit
statuses, the opener of inputs, ``NAME=VALUE``, the checks of outputs) and
:mod:`._definitions`. ``main(argv) -> int`` runs it; ``entry`` is the console script.
"""

from ._main import entry, main

__all__ = ["main", "entry"]
