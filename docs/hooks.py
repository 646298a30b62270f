"""mkdocs hooks: build the installed layout in links before the API reference is read.

The editable install maps the top-level folders ``algebra/``, ``dom/`` and ``replay/`` to
``xmlevents.algebra``, ``xmlevents.dom`` and ``xmlevents.replay`` through an import hook that
griffe (mkdocstrings' Python handler) cannot follow, as mypy cannot. ``tools/linktree.py``
builds ``build/tree/xmlevents/...`` as symbolic links to the sources; ``mkdocs.yml`` points the
handler there (``paths: [build/tree]``). Building it in ``on_startup`` makes
``rm -rf site build && mkdocs build --strict`` work from a clean checkout.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _linktree() -> Any:
    spec = importlib.util.spec_from_file_location("_xmlevents_linktree",
                                                  ROOT / "tools" / "linktree.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_startup(command: str, dirty: bool) -> None:
    """Make ``build/tree`` once per mkdocs run (``build``, ``serve`` or ``gh-deploy``)."""
    _linktree().build()
