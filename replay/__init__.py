"""Replay of document version histories into event streams, on Spark (DESIGN section 7).

The pure core — :func:`edit_script` between two versions (a list of typed actions, encoded
for Spark by :func:`encode_script`), :class:`DocumentHistory` for one document's versions,
:func:`replay_history` for a whole table in this process (:func:`iter_history` step by step,
holding only the live state; :func:`index_versions` reads a table on disk one version at a
time) — needs no Spark. The Spark job
(:func:`replay_frames`, :func:`read_versions_df`, :func:`write_frames`) and its schemas are
imported on first use, so pyspark is only needed for them; the errors are not.

With CEL queries (``queries=``, :func:`check_queries`), each document's primitive events are
also a CEL stream, and the complex events the queries find there are rows of
:data:`CEL_TABLE` (the ``cel`` output).

The whole job of ``xmlevents replay`` is :func:`run_spark` (on a session: :func:`spark_session`
gives one for a block, :func:`make_session` starts one) or :func:`run_local` (in process,
pyarrow writing the same datasets), each returning a :class:`ReplayReport` and reporting its
progress to a :class:`ReplayProgress` of the caller's (none by default); the command line's
displays of it (rich bars, stage lines) are the command line's own (issue 28).
:class:`NamespaceWarning` (and :func:`namespace_hints`) says when a definition matched nothing
for want of a namespace.
"""

from typing import TYPE_CHECKING

from xmlevents._foundation.lazy import lazy_names
from xmlevents.algebra import NamespaceHint, NamespaceWarning, namespace_hints

from ._actions import (
    ACTION_TYPES,
    Action,
    Delete,
    InsertComment,
    InsertElement,
    InsertFragment,
    Move,
    NodePath,
    Rename,
    RenameAttribute,
    ReplaceRoot,
    SetAttribute,
    SetTail,
    SetText,
    decode_script,
    encode_script,
)
from ._cel import CEL_STAGE, CEL_TABLE, check_queries
from ._checkpoint import (
    Checkpoint,
    CheckpointNote,
    CheckpointRun,
    RunSummary,
    fingerprint,
    resume_history,
    write_run,
)
from ._errors import (
    BadVersion,
    DiffActionError,
    EditScriptError,
    GitHistoryError,
    InexactScriptError,
    KeySpecError,
    KeyWarning,
    MissingXmlError,
    ScriptFormatError,
    ScriptPathError,
    VersionTableError,
)
from ._history import (
    DocumentHistory,
    HistoryResult,
    VersionResult,
    VersionRows,
    iter_history,
    replay_history,
)
from ._index import VersionIndex, index_versions
from ._infer import InferredKey
from ._keys import Key, KeyField, KeyNote
from ._match import key_notes
from ._report import ReplayReport
from ._script import (
    AUTO,
    DiffOptions,
    apply_script,
    c14n,
    digest,
    edit_script,
    parse_version,
    sync,
)
from ._state import CheckpointError, DocumentState
from ._tables import read_versions, write_versions

__all__ = [
    # edit scripts
    "edit_script", "apply_script", "sync", "c14n", "digest", "parse_version", "DiffOptions",
    "Action", "NodePath", "InsertElement", "InsertComment", "InsertFragment", "Delete", "Move",
    "Rename", "SetText", "SetTail", "SetAttribute", "RenameAttribute", "ReplaceRoot",
    "ACTION_TYPES", "encode_script", "decode_script",
    # matching: keys, given or inferred (issue 30)
    "Key", "KeyField", "KeyNote", "key_notes", "AUTO", "InferredKey", "show_keys",
    # histories, tables
    "DocumentHistory", "VersionResult", "HistoryResult", "replay_history",
    "read_versions", "write_versions", "git_history",
    # the same, holding only the live state (issue 29)
    "iter_history", "VersionRows", "index_versions", "VersionIndex",
    # errors
    "BadVersion", "MissingXmlError", "VersionTableError", "GitHistoryError", "EditScriptError",
    "ScriptFormatError", "ScriptPathError", "DiffActionError", "InexactScriptError",
    "KeySpecError",
    "KeyWarning", "NamespaceWarning",
    # runs of xmlevents replay: in process (pyarrow) or on Spark, their report and what
    # their progress is reported to
    "run_local", "run_spark", "ReplayReport", "ReplayProgress", "Silent", "NamespaceHint",
    "namespace_hints", "arrow_schema", "write_dataset",
    # Spark (imported on first use)
    "replay_frames", "diff_stage", "read_versions_df", "write_frames", "ReplayFrames",
    "spark_session", "make_session", "spark_schema",
    # on a cluster (issue 29): where the master comes from, the package shipped to the
    # executors, the output checked on the file system that writes it
    "resolve_master", "MasterChoice", "master_where", "ship_package", "check_spark_output",
    "OutputLocationError",
    "EVENTS_SCHEMA", "COMPOSITES_SCHEMA", "ERRORS_SCHEMA", "VERSIONS_SCHEMA", "CEL_SCHEMA",
    # CEL queries over each document's events (issue 19)
    "CEL_TABLE", "CEL_STAGE", "check_queries",
    # run after run: a replay resumed from a checkpoint folder (issue 29, item 4)
    "resume_history", "Checkpoint", "CheckpointError", "CheckpointNote", "DocumentState",
    "fingerprint", "write_run", "CheckpointRun", "RunSummary",
    # continuous: replay --follow on Structured Streaming (issue 29, item 5; Spark)
    "follow", "Follower", "FollowSource", "FollowError", "BatchReport",
]

#: The Spark job's names (and git's, pyarrow's and the displays' protocol), imported on first
#: use (PEP 562): module -> names.
_MODULES: dict[str, tuple[str, ...]] = {
    "._git": ("git_history",),
    "._spark": ("replay_frames", "diff_stage", "read_versions_df", "write_frames",
                "spark_schema", "ReplayFrames", "EVENTS_SCHEMA", "COMPOSITES_SCHEMA",
                "ERRORS_SCHEMA", "VERSIONS_SCHEMA", "CEL_SCHEMA"),
    "._session": ("make_session", "spark_session", "resolve_master", "MasterChoice",
                  "master_where"),
    "._ship": ("ship_package",),
    "._output": ("check_spark_output", "OutputLocationError"),
    "._local": ("run_local", "show_keys"),
    "._spark_job": ("run_spark",),
    "._arrow": ("arrow_schema", "write_dataset"),
    "._progress": ("ReplayProgress", "Silent"),
    "._follow": ("follow", "Follower", "BatchReport"),
    "._follow_source": ("FollowSource", "FollowError"),
}
__getattr__, __dir__ = lazy_names(__name__, globals(), _MODULES)

if TYPE_CHECKING:
    from ._arrow import arrow_schema, write_dataset
    from ._follow import BatchReport, Follower, follow
    from ._follow_source import FollowError, FollowSource
    from ._git import git_history
    from ._local import run_local, show_keys
    from ._output import OutputLocationError, check_spark_output
    from ._progress import ReplayProgress, Silent
    from ._session import MasterChoice, make_session, master_where, resolve_master, spark_session
    from ._ship import ship_package
    from ._spark import (
        CEL_SCHEMA,
        COMPOSITES_SCHEMA,
        ERRORS_SCHEMA,
        EVENTS_SCHEMA,
        VERSIONS_SCHEMA,
        ReplayFrames,
        diff_stage,
        read_versions_df,
        replay_frames,
        spark_schema,
        write_frames,
    )
    from ._spark_job import run_spark
