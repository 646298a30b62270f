"""The binary encoding of section 2: an element's left subtree holds its content, its right
subtree its following siblings; locations are strings over ``1`` and ``2`` (the root is ε).

In the event stream, location ``w1`` is where the automaton stands after the start tag of
``w`` and ``w2`` after its end tag, so every event has one location (Example 4's ``1121`` is
the moment after ``<c>`` of Figure 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = ["dewey_to_binary", "binary_location", "binary_locations"]


def dewey_to_binary(dewey: str) -> str:
    """Example 1's locations (the root is ``1``, child ``i`` of ``w`` is ``w i``) as binary
    locations (the root is ε, the first child ``w1``, the next sibling ``w2``).

    >>> dewey_to_binary("1"), dewey_to_binary("111"), dewey_to_binary("131")
    ('', '11', '1221')
    """
    if not dewey.startswith("1"):
        raise ValueError(f"dewey location {dewey!r}: the root is 1")
    out = ""
    for digit in dewey[1:]:
        out += "1" + "2" * (int(digit) - 1)
    return out


def binary_location(dewey: str) -> str:
    """Alias of :func:`dewey_to_binary` for element locations."""
    return dewey_to_binary(dewey)


def binary_locations(events: Iterable[str]) -> Iterator[str]:
    """For each ``"start"``/``"end"`` event, the binary location the automaton reaches.

    >>> list(binary_locations(["start", "start", "end", "start", "end", "end"]))
    ['1', '11', '12', '121', '122', '2']
    """
    stack: list[str] = []
    here = ""
    for event in events:
        if event == "start":
            stack.append(here)
            here = here + "1"
        else:
            here = stack.pop() + "2"
        yield here
