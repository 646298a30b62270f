"""Run ``mypy --strict`` over every package, with the paths of the sources in its report.

mypy cannot follow the editable install's import hook, so this builds the installed layout in
links first (``tools/linktree.py``); ``[tool.mypy]`` in ``pyproject.toml`` points mypy at it.
mypy names files by the links it read; each is printed as the source file it links to, so an
editor jumps to ``algebra/_graph.py``, not ``build/tree/xmlevents/algebra/_graph.py``.

Usage: ``python3 tools/typecheck.py [mypy options]``; the exit status is mypy's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from linktree import ROOT, build

_LOCATION = re.compile(r"^(build/tree/\S+?\.pyi?)(?=:)", re.M)


def _source(match: re.Match[str]) -> str:
    real = Path(os.path.realpath(ROOT / match.group(1)))
    try:
        return str(real.relative_to(ROOT))
    except ValueError:
        return match.group(1)


def main(argv: list[str]) -> int:
    """Build the link tree, run mypy with ``argv``, print its report with source paths."""
    build()
    proc = subprocess.run([sys.executable, "-m", "mypy", *argv], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    sys.stdout.write(_LOCATION.sub(_source, proc.stdout))
    sys.stderr.write(proc.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
