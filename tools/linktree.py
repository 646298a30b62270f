"""Build the import tree the package-dir mapping describes, as symbolic links.

The distribution installs the top-level folders ``algebra/``, ``dom/``, ``replay/``, ... as
``xmlevents.algebra``, ``xmlevents.dom``, ... (``[tool.setuptools.package-dir]`` in
``pyproject.toml``). An editable install resolves that mapping with an import hook, which
static tools cannot follow: mypy and griffe (the API reference) look for ``xmlevents/algebra``
on disk. This module makes that folder: ``build/tree/xmlevents`` holds a link to every file of
``xmlevents/`` and one link per mapped package, so static tools see the installed layout while
the sources stay where they are. The mapping is read from ``pyproject.toml``, so a new package
needs no change here.

Usage: ``python3 tools/linktree.py`` prints the folder to put on the tools' search path.
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "tree"


def mapping(root: Path = ROOT) -> dict[str, Path]:
    """Package name -> source folder, from ``[tool.setuptools.package-dir]``."""
    with open(root / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)
    dirs = config["tool"]["setuptools"]["package-dir"]
    return {name: (root / folder).resolve() for name, folder in dirs.items()}


def build(root: Path = ROOT, dest: Path = TREE) -> Path:
    """Make ``dest`` anew as the installed layout, in links; return ``dest``.

    Raises:
        ValueError: if a mapped package's parent is not mapped too (the layout has a hole).
    """
    packages = mapping(root)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    # Parents first, so a subpackage's link is made inside its parent's real folder.
    for name in sorted(packages, key=lambda n: n.count(".")):
        source = packages[name]
        target = dest.joinpath(*name.split("."))
        if not target.parent.is_dir():
            raise ValueError(f"package {name!r} is mapped but its parent package is not")
        target.mkdir()
        children = {n.rsplit(".", 1)[1] for n in packages if n.rpartition(".")[0] == name}
        for entry in source.iterdir():
            if entry.name in children or entry.name == "__pycache__":
                continue  # a mapped subpackage gets its own folder
            (target / entry.name).symlink_to(entry)
    return dest


if __name__ == "__main__":
    print(build())
    sys.exit(0)
