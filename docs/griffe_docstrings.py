"""A griffe extension that reads the project's docstrings as the API reference shows them.

The docstrings are written for ``help()`` and doctest: examples are bare ``>>>`` blocks and
cross-references use Sphinx roles (``:class:`DefinitionSet```). Markdown knows neither: a bare
doctest becomes a paragraph (and its output, ``[['e1', 'e2']]``, a broken link), a role shows
its colons. This extension, loaded by mkdocstrings (``extensions:`` in ``mkdocs.yml``), fences
every doctest block as ``pycon`` and turns every role into inline code before the docstrings
are parsed, so the sources stay as they are.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _role(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    if tilde:
        target = target.rsplit(".", 1)[-1]  # ~a.b.C shows C, as Sphinx does
    return f"`{target}`"


def fence_doctests(text: str) -> str:
    """Wrap every block of ``>>>`` lines and their output in a ``pycon`` fence."""
    out: list[str] = []
    lines = text.split("\n")
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
        if in_fence or not line.lstrip().startswith(">>>"):
            out.append(line)
            i += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        block = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i])
            i += 1
        out.extend([f"{indent}```pycon", *block, f"{indent}```"])
    return "\n".join(out)


def clean(text: str) -> str:
    """The docstring ``text`` as Markdown: doctests fenced, Sphinx roles as inline code."""
    return _ROLE.sub(_role, fence_doctests(text))


class MarkdownDocstrings(griffe.Extension):
    """Rewrite each docstring once, when its object is created."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = clean(obj.docstring.value)
