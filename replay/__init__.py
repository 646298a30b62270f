"""Replay of document version histories into event streams, on Spark (DESIGN section 7).

The pure core — :func:`edit_script` between two versions, :class:`DocumentHistory` for one
document's versions, :func:`replay_history` for a whole table in this process — needs no
Spark. The Spark job (:func:`replay_frames`, :func:`read_versions_df`, :func:`write_frames`)
is imported on first use, so pyspark is only needed for it.
"""

from typing import TYPE_CHECKING, Any

from ._history import (
    BadVersion,
    DocumentHistory,
    HistoryResult,
    VersionResult,
    replay_history,
)
from ._script import DiffOptions, apply_script, c14n, digest, edit_script, parse_version, sync
from ._tables import VersionTableError, read_versions, write_versions

__all__ = [
    "edit_script", "apply_script", "sync", "c14n", "digest", "parse_version", "DiffOptions",
    "DocumentHistory", "VersionResult", "BadVersion", "HistoryResult", "replay_history",
    "read_versions", "write_versions", "VersionTableError", "git_history", "GitHistoryError",
    "replay_frames", "diff_stage", "read_versions_df", "write_frames", "ReplayFrames",
    "make_session",
    "EVENTS_SCHEMA", "COMPOSITES_SCHEMA", "ERRORS_SCHEMA", "VERSIONS_SCHEMA",
]

_LAZY = {
    "git_history": "._git", "GitHistoryError": "._git",
    "replay_frames": "._spark", "diff_stage": "._spark", "read_versions_df": "._spark",
    "write_frames": "._spark",
    "ReplayFrames": "._spark", "EVENTS_SCHEMA": "._spark", "COMPOSITES_SCHEMA": "._spark",
    "ERRORS_SCHEMA": "._spark", "VERSIONS_SCHEMA": "._spark", "make_session": "._session",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'xmlevents.replay' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from ._git import GitHistoryError, git_history  # noqa: F401
    from ._session import make_session  # noqa: F401
    from ._spark import (  # noqa: F401
        COMPOSITES_SCHEMA,
        ERRORS_SCHEMA,
        EVENTS_SCHEMA,
        VERSIONS_SCHEMA,
        ReplayFrames,
        diff_stage,
        read_versions_df,
        replay_frames,
        write_frames,
    )
