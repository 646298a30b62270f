"""The build's one addition to ``pyproject.toml``: the hot modules of the stream package
(issue 33, item 4) and of the service's writer (issue 31, item 10) compiled with Cython where
a C compiler is at hand; the lists are ``MODULES`` in ``foundation/compiled.py``, which this
file executes from its file (the package is not installed yet). Each is optional: where one
cannot be built, the install goes on and that module runs from its Python source, as it does
with ``XMLEVENTS_PURE_PYTHON=1`` (which, set for the install, compiles nothing).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent


def _compiled() -> ModuleType:
    """``foundation/compiled.py``, read without importing the package."""
    spec = importlib.util.spec_from_file_location("_compiled",
                                                  ROOT / "foundation" / "compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _extensions() -> list[Extension]:
    compiled = _compiled()
    if os.environ.get(compiled.ENV) == "1":  # XMLEVENTS_PURE_PYTHON: nothing to compile
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:  # built without Cython (not the build's requirements): source only
        return []
    # xmlevents.<package>'s folder is <package>/ ([tool.setuptools.package-dir])
    modules = [Extension(f"{package}.{name}", [f"{package.rpartition('.')[2]}/{name}.py"])
               for package, names in compiled.MODULES.items() for name in names]
    # annotations are not C types here: the code is the same Python, compiled or not
    directives = {"language_level": 3, "annotation_typing": False, "binding": True}
    try:
        built: list[Extension] = cythonize(modules, compiler_directives=directives,
                                           build_dir="build/cython", quiet=True)
    except Exception as exc:  # a Cython that cannot read the source: the source it is
        print(f"setup.py: not compiled ({exc}); the packages run from their source",
              file=sys.stderr)
        return []
    for extension in built:
        # a module that does not build (no C compiler) is left out, not the install:
        # cythonize's extensions do not carry the flag over from those it is given
        extension.optional = True
    return built


setup(ext_modules=_extensions(), options={"build_ext": {"parallel": 2}})
