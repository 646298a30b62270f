"""What a streaming query reports: a match, where it was detected, and a run's statistics."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter

__all__ = ["Detection", "Match", "Stats"]


@dataclass(frozen=True, slots=True)
class Detection:
    """The event at which a match became certain: the ``"start"`` or ``"end"`` tag of the
    element with 1-based pre-order index ``node`` (seed 004, section 2: its earliest
    detection location; the end of the root for matches decided only at the end); or
    ``"text"``, the ``node``-th text node of the document (issue 33: a query that reaches
    elements through text nodes, as ``//..``, can be decided by one; character data,
    comments and PIs between two tags are one text node)."""

    event: str
    node: int

    def to_json(self) -> dict[str, object]:
        return {"event": self.event, "node": self.node}


@dataclass(frozen=True, slots=True)
class Match:
    """A matching element: its 1-based pre-order index among the document's elements, its
    path with positions among same-named siblings, its attributes, and its detection.

    >>> m = Match(3, "/r[1]/a[1]/b[1]", {}, Detection("start", 4))
    >>> m.to_json()
    {'node': 3, 'path': '/r[1]/a[1]/b[1]', 'attributes': {},
     'detected': {'event': 'start', 'node': 4}}
    """

    node: int
    path: str
    attributes: Mapping[str, str] = field(hash=False)
    detected: Detection

    def to_json(self) -> dict[str, object]:
        """The match as the JSON object the command line prints."""
        return {"node": self.node, "path": self.path, "attributes": dict(self.attributes),
                "detected": self.detected.to_json()}


@dataclass(frozen=True, slots=True)
class Stats:
    """A run's figures: elements read, matches reported, the most candidates held at once
    (the paper's ``pot_max``, section 5.3), candidates still held, the automaton's shapes
    (states without candidates) built so far, and the seconds spent."""

    elements: int
    matches: int
    peak_candidates: int
    held: int
    shapes: int
    seconds: float

    def to_json(self) -> dict[str, object]:
        return {"elements": self.elements, "matches": self.matches,
                "peak_candidates": self.peak_candidates, "held": self.held,
                "shapes": self.shapes, "seconds": round(self.seconds, 6)}


# Fast construction for the run's hot path. A frozen dataclass's __init__ sets each field
# through object.__setattr__ (frozen forbids plain assignment), which made building a match
# cost as much as parsing its element; setting the slots through their descriptors builds the
# same immutable object in about half the time. The fields are the dataclasses' own.
_new = object.__new__
_set_node = Match.__dict__["node"].__set__
_set_path = Match.__dict__["path"].__set__
_set_attributes = Match.__dict__["attributes"].__set__
_set_detected = Match.__dict__["detected"].__set__
_set_event = Detection.__dict__["event"].__set__
_set_at = Detection.__dict__["node"].__set__

_node = itemgetter(0)


#: A match as the run reports it: (node, path, attributes).
Row = tuple[int, str, dict[str, str]]
#: A match held until an ancestor decides it (issue 33, item 4): (node, its path less the
#: position, ``parent's path/name``, shared by the rows of a line group; its position among
#: same-named siblings; attributes); its path is made with its match.
HeldRow = tuple[int, str, int, dict[str, str]]


def matches_of(reports: Iterable[tuple[str, int, list[Row | HeldRow]]]) -> list[Match]:
    """The matches of a run's reports ``(event, node, [row, ...])`` (:data:`Row`,
    :data:`HeldRow`), in their order and by node within one report, built as above in one
    loop: a Python call per batch of matches, not two per match (issue 33, item 4: a batch
    can be every line of a document).

    >>> matches_of([("end", 1, [(3, "/r[1]/b[2]", {}), (2, "/r[1]/b[1]", {"n": "1"})])]) == [
    ...     Match(2, "/r[1]/b[1]", {"n": "1"}, Detection("end", 1)),
    ...     Match(3, "/r[1]/b[2]", {}, Detection("end", 1))]
    True
    """
    out: list[Match] = []
    append = out.append
    new, set_node, set_path, set_attributes, set_detected = \
        _new, _set_node, _set_path, _set_attributes, _set_detected
    for event, at, found in reports:
        where: Detection = new(Detection)
        _set_event(where, event)
        _set_at(where, at)
        if len(found) > 1:
            found.sort(key=_node)
        for row in found:
            m = new(Match)
            if len(row) == 3:
                node, path, attributes = row
            else:  # a held row: its path less its position, and its position (issue 33)
                node, stem, pos, attributes = row
                path = f"{stem}[{pos}]"
            set_node(m, node)
            set_path(m, path)
            set_attributes(m, attributes)
            set_detected(m, where)
            append(m)
    return out
