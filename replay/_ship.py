"""The ``xmlevents`` package shipped to a cluster's executors (issue 29, item 3).

Spark's Python workers unpickle the replay's functions by module name, so every executor must
import ``xmlevents``. One that does not have it installed gets it from the session: the
installed package zipped as it imports (``xmlevents/...``, the top-level folders ``algebra/``,
``replay/``, ... at ``xmlevents/algebra/``, ``xmlevents/replay/``, ... as the package-dir
mapping installs them, found through each package's ``__path__``) and added with
``SparkContext.addPyFile``, which puts it on the workers' ``sys.path``. The third-party
dependencies (lxml, xmldiff, pyarrow, pandas, ...) are not shipped: they hold compiled code
for one platform, and the executors' Python must have them (docs/guide/replay.md, "On a
cluster").
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import importlib.util
import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["PACKAGES", "package_files", "package_zip", "ship_package"]

#: The subpackages of ``xmlevents`` that the distribution maps from folders of their own
#: (``[tool.setuptools] packages`` in pyproject.toml; a test keeps the two equal). An editable
#: install resolves them through an import hook, so they are not inside ``xmlevents/`` on
#: disk and must be named; subpackages inside a package's folder are found by walking it.
PACKAGES = ("_cli", "algebra", "dom", "replay", "rules", "service", "cel", "stream",
            "_foundation")

# Built once per process: the package does not change while it runs, and Spark refuses a
# second file of the same name from another path.
_built: str | None = None


def package_files(name: str = "xmlevents") -> Iterator[tuple[str, str]]:
    """``(file, name in the zip)`` for every file of the installed package ``name`` and its
    subpackages (not ``__pycache__``), as they import: ``xmlevents/replay/_session.py``.

    Raises:
        ModuleNotFoundError: if ``name`` (or a subpackage :data:`PACKAGES` names) is not
            installed.
    """
    seen: set[str] = set()
    for package in (name, *(f"{name}.{sub}" for sub in PACKAGES)):
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        if not locations:  # not installed: importing it raises Python's own error for it
            locations = list(importlib.import_module(package).__path__)
        prefix = package.replace(".", "/")
        for folder in locations:
            for root, dirs, files in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                inside = os.path.relpath(root, folder)
                base = prefix if inside == "." else f"{prefix}/{inside.replace(os.sep, '/')}"
                for file in sorted(files):
                    if file.endswith((".pyc", ".pyo")):
                        continue
                    arcname = f"{base}/{file}"
                    if arcname not in seen:  # a subpackage's folder inside its parent's
                        seen.add(arcname)
                        yield os.path.join(root, file), arcname


def package_zip(folder: str, name: str = "xmlevents") -> str:
    """The installed package ``name`` zipped into ``folder`` as it imports; its path.

    The file is named by a digest of its content (``xmlevents-<12 hex>.zip``): the same
    sources give the same name.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path, arcname in package_files(name):
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(path, "rb") as f:
                z.writestr(info, f.read())
    data = buffer.getvalue()
    path = os.path.join(folder, f"{name}-{hashlib.sha256(data).hexdigest()[:12]}.zip")
    with open(path, "wb") as f:
        f.write(data)
    return path


def ship_package(spark: SparkSession) -> str:
    """Add the installed ``xmlevents`` to ``spark``'s Python workers (``addPyFile``); the zip's
    path (made once per process in a temporary folder removed at exit)."""
    global _built
    if _built is None or not os.path.exists(_built):
        folder = tempfile.mkdtemp(prefix="xmlevents-ship-")
        atexit.register(shutil.rmtree, folder, True)
        _built = package_zip(folder)
    spark.sparkContext.addPyFile(_built)
    return _built
