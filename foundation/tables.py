"""Tables keyed by an enum's members, complete by construction (issue 28, "Fail closed").

A choice made by an if-chain over an enum — ``if ctx is CHRONICLE: ... elif ...: ...`` with
the last case as the fall-through — silently gives a member added later the last case's
behaviour (Snoop's unrestricted context, CEL's ``ALL``). A table made with :func:`complete`
names every member or fails when its module is imported, and a lookup of a member it lacks is
a ``KeyError``, never another member's behaviour.

>>> import enum
>>> class Light(enum.Enum):
...     RED = 1
...     GREEN = 2
>>> complete(Light, {Light.RED: "stop", Light.GREEN: "go"}, "what a light says")[Light.GREEN]
'go'
>>> complete(Light, {Light.RED: "stop"}, "what a light says")
Traceback (most recent call last):
...
LookupError: what a light says: no entry for Light.GREEN (every member of Light needs one)
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TypeVar

__all__ = ["complete"]

K = TypeVar("K", bound=enum.Enum)
V = TypeVar("V")


def complete(members: type[K], table: Mapping[K, V], what: str) -> dict[K, V]:
    """``table`` as a dict, checked to have an entry for every member of ``members`` and
    nothing else.

    Raises:
        LookupError: a member has no entry, or a key is not a member (a defect of the
            library, found when the module that makes the table is imported).
    """
    missing = [m for m in members if m not in table]
    if missing:
        names = ", ".join(str(m) for m in missing)
        raise LookupError(f"{what}: no entry for {names} (every member of "
                          f"{members.__name__} needs one)")
    stray = [k for k in table if not isinstance(k, members)]
    if stray:
        raise LookupError(f"{what}: {stray!r} are not members of {members.__name__}")
    return dict(table)
