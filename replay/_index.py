"""A version table read without holding its versions (issue 29, item 1): a first pass that
keeps where each row is, then each document's versions read back one at a time in order.

The first pass (:func:`index_versions`) reads the table through once, as
:func:`~._tables.read_versions` reads it — every row checked, every unreadable entry an error
row worded as today — and keeps per row only its document, version, commit, time and where it
can be read again. It finds the duplicate versions (a second row with a document's version:
the first in file order is kept, the others are error rows, as
:func:`~._history.ordered_versions` words them) and whether the table is already in
(document, version) order. Iterating the :class:`VersionIndex` then gives the rows with their
XML in that order — documents by name, each one's versions ascending — reading one row's XML
at a time. Which way the XML is read back:

- a plain JSON-lines file: its line, by the offset the first pass noted (in order or not);
- a folder of ``DOC/VERSION.xml`` files: the file;
- a compressed JSON-lines file or a Parquet table (no cheap offsets) already in order: read
  through once more, in file order, the rows not kept passed over;
- one not in order: read through once more, the XML of each row kept written to a temporary
  file (sequential writes, the offsets noted), then read back from there by offset.

So the XML held at any time is one row's (its reader's buffers aside: a Parquet table is read
:data:`~._tables.PARQUET_BATCH` rows at a time), and the index costs some 50 bytes a row.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ._errors import VersionTableError
from ._history import DUPLICATE, error_row
from ._tables import LineAt, Location, line_row, located_rows, read_versions, table_format

__all__ = ["VersionIndex", "index_versions"]

_NO_TIME = -(1 << 63)  # a time column's None (a time is -MAX_INT..MAX_INT: never this)


def index_versions(path: str | os.PathLike[str], errors: list[dict[str, Any]] | None = None
                   ) -> VersionIndex:
    """The first pass over a version table (see the module): where each row is, its
    duplicates, whether it is in order.

    Args:
        path: a version table, as for :func:`~._tables.read_versions`.
        errors: as for :func:`~._tables.read_versions`: None, the first unreadable entry
            raises; a list, each is appended as an error row and reading goes on.

    Returns:
        The index; iterate it for the rows in (document, version) order, close it (or use
        it as a context manager) to remove its temporary file, if it made one.

    Raises:
        VersionTableError: as :func:`~._tables.read_versions` raises.
    """
    index = VersionIndex(path, errors is not None)
    index._read(errors)
    return index


class VersionIndex:
    """Where each row of a version table is, and its duplicates (see the module); iterating
    it gives the rows (``doc``, ``version``, ``xml``, ``commit``, ``time``) in (document,
    version) order, the duplicates left out, one row's XML read at a time.

    Attributes:
        path: the table.
        duplicates: the error rows of the duplicate versions, in file order.
        ordered: whether the table was in (document, version) order already.
        spilled: whether the XML was written to a temporary file to be read back in order
            (a compressed or Parquet table not in order).
    """

    def __init__(self, path: str | os.PathLike[str], collecting: bool) -> None:
        self.path = path
        self._collecting = collecting  # how the first pass decoded lines: the same again
        self._kind = table_format(path)
        self._plain = (self._kind == "jsonl"
                       and not Path(path).name.lower().endswith(".gz"))
        self._names: list[str] = []  # document names, by id
        self._ids: dict[str, int] = {}
        # One entry a row read, in file order: columns of machine integers, not objects.
        self._doc = array("q")
        self._version = array("q")
        self._time = array("q")
        self._commit: list[str | None] = []
        self._at = array("q")  # a line's offset (plain JSON lines) or the spill's
        self._length = array("q")
        self._line = array("q")  # a line's number (plain JSON lines)
        self._files: dict[int, Path] = {}  # a folder table's file, by entry
        self._order = array("q")  # the entries kept, in (document, version) order
        self._counts: list[tuple[str, int]] = []  # (document, versions kept), in order
        self.duplicates: list[dict[str, Any]] = []
        self.ordered = True
        self.spilled = False
        self._spill: IO[bytes] | None = None

    # -- the first pass ---------------------------------------------------------------------

    def _read(self, errors: list[dict[str, Any]] | None) -> None:
        for n, (row, where) in enumerate(located_rows(self.path, errors)):
            self._note(n, row, where)
        self._sort()

    def _note(self, n: int, row: dict[str, Any], where: Location) -> None:
        doc = row["doc"]
        i = self._ids.get(doc)
        if i is None:
            i = self._ids[doc] = len(self._names)
            self._names.append(doc)
        self._doc.append(i)
        self._version.append(row["version"])
        self._time.append(_NO_TIME if row["time"] is None else row["time"])
        self._commit.append(row["commit"])
        if isinstance(where, LineAt):
            self._at.append(where.offset)
            self._length.append(where.length)
            self._line.append(where.line)
        else:
            self._at.append(0)
            self._length.append(0)
            self._line.append(0)
            if isinstance(where, Path):
                self._files[n] = where

    def _sort(self) -> None:
        """The entries in (document name, version, file order); the second and later of one
        version are duplicates (their error rows in file order, as the rows came)."""
        rank = array("q", [0] * len(self._names))
        for r, i in enumerate(sorted(range(len(self._names)), key=self._names.__getitem__)):
            rank[i] = r
        doc, version = self._doc, self._version
        # One integer a key (rank, then version: 64 bits), sorted stably: file order breaks
        # ties. Entries in file order that are already sorted make the table "ordered".
        order = sorted(range(len(doc)), key=lambda n: (rank[doc[n]] << 64) | version[n])
        dups: list[int] = []
        prev = -1
        counts: dict[int, int] = {}
        for k, n in enumerate(order):
            if k != n:
                self.ordered = False
            if prev >= 0 and doc[n] == doc[prev] and version[n] == version[prev]:
                dups.append(n)
                continue
            prev = n
            self._order.append(n)
            counts[doc[n]] = counts.get(doc[n], 0) + 1
        self._counts = [(self._names[i], counts[i])
                        for i in sorted(counts, key=rank.__getitem__)]
        for n in sorted(dups):
            self.duplicates.append(error_row(self._names[doc[n]], version[n], "input",
                                             DUPLICATE, commit=self._commit[n],
                                             time=self._time_of(n)))

    def _time_of(self, n: int) -> int | None:
        t = self._time[n]
        return None if t == _NO_TIME else t

    # -- what it holds ----------------------------------------------------------------------

    @property
    def documents(self) -> list[tuple[str, int]]:
        """Each document and how many versions it has (duplicates left out), in replay
        order (by name)."""
        return list(self._counts)

    def __len__(self) -> int:
        """The versions to replay (duplicates left out)."""
        return len(self._order)

    # -- the rows, in order -----------------------------------------------------------------

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """The rows in (document, version) order, one row's XML read at a time."""
        if self._plain:
            return self._by_line()
        if self._kind == "folder":
            return self._by_file()
        if self.ordered:
            return self._through()
        if self._spill is None:
            self._spill_xml()
        return self._by_spill()

    def _row(self, n: int, xml: str) -> dict[str, Any]:
        return {"doc": self._names[self._doc[n]], "version": self._version[n], "xml": xml,
                "commit": self._commit[n], "time": self._time_of(n)}

    def _by_line(self) -> Iterator[dict[str, Any]]:
        name = os.fspath(self.path)
        with open(self.path, "rb") as f:
            for n in self._order:
                f.seek(self._at[n])
                where = f"{name}, line {self._line[n]}"
                row = line_row(f.read(self._length[n]), where, self._collecting)
                if row is None:  # the file changed since the first pass
                    raise VersionTableError(f"{where}: blank now (the table changed while "
                                            "it was read)")
                yield self._row(n, row["xml"])

    def _by_file(self) -> Iterator[dict[str, Any]]:
        from ._tables import decode_xml

        for n in self._order:
            file = self._files[n]
            yield self._row(n, decode_xml(file.read_bytes(), str(file)))

    def _through(self) -> Iterator[dict[str, Any]]:
        """The table read through in file order (it is in order), the rows not kept (the
        duplicates) passed over; its unreadable entries were counted by the first pass."""
        order = iter(self._order)
        want = next(order, None)
        for n, row in enumerate(read_versions(self.path, [] if self._collecting else None)):
            if n == want:
                yield self._row(n, row["xml"])
                want = next(order, None)
                if want is None:
                    return

    def _spill_xml(self) -> None:
        """Read the table through once more and write the XML of each row kept to a
        temporary file, noting its offset and length."""
        keep = bytearray(len(self._doc))  # a byte a row, not a set of ints
        for n in self._order:
            keep[n] = 1
        # Closed by close() (the index's life, not a block's): deleted by the system then.
        spill = tempfile.TemporaryFile(prefix="xmlevents-versions-")  # noqa: SIM115
        self._spill = spill
        self.spilled = True
        at = 0
        for n, row in enumerate(read_versions(self.path, [] if self._collecting else None)):
            if keep[n]:
                data = row["xml"].encode("utf-8", "surrogatepass")
                spill.write(data)
                self._at[n], self._length[n] = at, len(data)
                at += len(data)
        spill.flush()

    def _by_spill(self) -> Iterator[dict[str, Any]]:
        spill = self._spill
        assert spill is not None
        for n in self._order:
            spill.seek(self._at[n])
            yield self._row(n, spill.read(self._length[n]).decode("utf-8", "surrogatepass"))

    def close(self) -> None:
        """Remove the temporary file, if one was written."""
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def __enter__(self) -> VersionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
