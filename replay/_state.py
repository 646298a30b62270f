"""A document's replay state as a value, and the pickling that saves it (issue 29, item 4).

:class:`DocumentState` is what a later run needs to go on with a document's history as if it
had never stopped (:meth:`~._history.DocumentHistory.checkpoint`,
:meth:`~._history.DocumentHistory.resume`): the last good version (its number, digest,
commit and time), the document then with its node ids (a :class:`~xmlevents.dom.Snapshot`)
and how many ids were issued, the monitor's tick, the event graph's live state, the CEL
evaluations' state, the last version read (a bad one too) and whether the replay of the
document stopped for good.

The event graph and the CEL evaluations are saved with :func:`dump` / :func:`load`: pickle,
with three rules.

* **Externals.** Objects the resuming side already has — the monitor's documents (which
  resolve path instances to the elements of the live document), the compiled CEL queries
  and their automata — are saved as a token and given back as the new owner's
  (``persistent_id``): nothing of the old process's documents travels.
* **No lxml.** An lxml object (an element proxy, a compiled XPath) in the state is refused
  with :class:`CheckpointError` naming where it was met: the house rule is that no state
  hides in lxml proxies; a termination condition pickles as its text and is compiled again
  (``xmlevents.algebra``'s ``compile_condition``).
* **Cells flat.** CEL's structure of runs is linked lists of cells
  (:class:`xmlevents.cel`'s ``Node`` and ``Bag``) as long as the history without a window:
  pickled as they are they would recurse once per cell. Each cell is saved apart, its
  links as indices, so depth never grows with the history.

A state read back is only valid for the library version that wrote it: the checkpoint
folder (:mod:`._checkpoint`) records the version and a format number and refuses others.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from xmlevents.algebra import XmlEventsError
from xmlevents.dom import Snapshot

__all__ = ["DocumentState", "CheckpointError", "dump", "load"]

_PROTOCOL = 5


class CheckpointError(XmlEventsError, ValueError):
    """A checkpoint that cannot be written or used: another library version or format,
    other definitions or options, a state that cannot be saved, a damaged file."""


@dataclass(frozen=True)
class DocumentState:
    """One document's replay state between two runs (see the module).

    Attributes:
        doc: the document's name.
        version: the last good version replayed (None: none yet).
        read: the last version read, good or bad (None: none yet); rows at or below it are
            not replayed again.
        snapshot: the document at ``version`` with its node ids (None: no good version yet).
        issued: how many node ids were issued (:attr:`~xmlevents.dom.WatchedDocument.issued`).
        ts: the monitor's tick: the next event is ``e{ts + 1}``.
        digest: :func:`~._script.digest` of ``version`` (to tell a changed row from a replayed
            one).
        commit, time: the commit and time of ``version``.
        graph: the event graph's state (:func:`dump`; None without definitions).
        cel: the CEL evaluations' state (:func:`dump`; None without queries).
        stopped: why the replay of this document stopped for good (an error row said so and
            later versions are not replayed, as in one run), or None.
        keys: the keys inferred for this document (none are inferred yet: issue 29 item 2
            reserves the place).
    """

    doc: str
    version: int | None = None
    read: int | None = None
    snapshot: Snapshot | None = None
    issued: int = 0
    ts: int = 0
    digest: str | None = None
    commit: str | None = None
    time: float | None = None
    graph: bytes | None = None
    cel: bytes | None = None
    stopped: str | None = None
    keys: tuple[Any, ...] = ()


# --- pickling with externals and flat cells -----------------------------------------------

#: The cell types of a linked structure, saved apart with their links as indices (see the
#: module): CEL's structure of runs (by name: the cel package keeps them private).
_CELLS = frozenset({("xmlevents.cel._cea", "Node"), ("xmlevents.cel._cea", "Bag")})


#: The modules of objects a state must not hold (besides lxml's and their subclasses, the
#: watched elements): the live documents and their monitor.
_REFUSED = frozenset({"xmlevents.dom._document", "xmlevents.dom._monitor"})


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, externals: Mapping[int, Hashable], part: str) -> None:
        super().__init__(file, protocol=_PROTOCOL)
        self._externals = externals
        self._part = part
        self._cells: dict[int, int] = {}
        self.cells: list[Any] = []

    def persistent_id(self, obj: Any) -> Any:
        token = self._externals.get(id(obj))
        if token is not None:
            return ("x", token)
        cls = type(obj)
        kind = _KINDS.get(cls)
        if kind is None:
            kind = _KINDS[cls] = _kind(cls)
        if kind is _PLAIN:
            return None
        if kind is _CELL:
            index = self._cells.get(id(obj))
            if index is None:
                index = self._cells[id(obj)] = len(self.cells)
                self.cells.append(obj)
            return ("c", cls, index)
        raise CheckpointError(
            f"the {self._part} holds {cls.__module__}.{cls.__name__}, which cannot be saved "
            "in a checkpoint (no state may be kept in lxml objects or watched documents): "
            "checkpoint without it")


_PLAIN, _CELL, _REFUSE = "plain", "cell", "refuse"
#: What each class met is (decided once a class: pickling asks for every object).
_KINDS: dict[type, str] = {}


def _kind(cls: type) -> str:
    if (cls.__module__, cls.__name__) in _CELLS:
        return _CELL
    if cls.__module__ in _REFUSED or any(k.__module__.startswith("lxml") for k in cls.__mro__):
        return _REFUSE
    return _PLAIN


def dump(obj: Any, externals: Mapping[int, Hashable] | None = None, *, part: str = "state"
         ) -> bytes:
    """``obj`` pickled, the objects of ``externals`` (``id(obj) -> token``) as their tokens
    and cells flat (see the module).

    Raises:
        CheckpointError: naming ``part`` and what in it cannot be saved.
    """
    buf = io.BytesIO()
    pickler = _Pickler(buf, externals or {}, part)
    try:
        pickler.dump(obj)
        done = 0
        # Each cell's slots, in the order met; cells met in them are appended (no recursion).
        while done < len(pickler.cells):
            cell = pickler.cells[done]
            pickler.dump(tuple(getattr(cell, name, _UNSET) for name in type(cell).__slots__))
            done += 1
        pickler.dump(_END)
    except CheckpointError:
        raise
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
        raise CheckpointError(f"the {part} cannot be saved in a checkpoint: "
                              f"{type(exc).__name__}: {exc}") from None
    return buf.getvalue()


_UNSET = "<unset slot>"
_END = "<end of cells>"


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, externals: Callable[[Hashable], Any]) -> None:
        super().__init__(file)
        self._externals = externals
        self.cells: dict[int, Any] = {}

    def persistent_load(self, pid: Any) -> Any:
        if pid[0] == "x":
            return self._externals(pid[1])
        _, cls, index = pid
        cell = self.cells.get(index)
        if cell is None:
            cell = self.cells[index] = cls.__new__(cls)
        return cell


def load(data: bytes, externals: Callable[[Hashable], Any] | None = None) -> Any:
    """What :func:`dump` saved, each external token given back as ``externals(token)``.

    Raises:
        CheckpointError: if the data is damaged.
    """
    def missing(token: Hashable) -> Any:
        raise CheckpointError(f"the state names {token!r}, which nothing here provides")

    unpickler = _Unpickler(io.BytesIO(data), externals or missing)
    try:
        obj = unpickler.load()
        index = 0
        while True:
            fields = unpickler.load()
            if fields == _END:
                break
            cell = unpickler.cells.get(index)
            if cell is None:
                raise CheckpointError(f"the state is damaged: cell {index} is never used")
            for name, value in zip(type(cell).__slots__, fields, strict=True):
                if not (type(value) is str and value == _UNSET):
                    setattr(cell, name, value)
            index += 1
    except CheckpointError:
        raise
    except Exception as exc:  # a damaged or foreign file
        raise CheckpointError(f"the state cannot be read: {type(exc).__name__}: {exc}"
                              ) from None
    return obj
