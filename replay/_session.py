"""The SparkSession of a replay on Spark (library functions take one; the command line, or a
script, makes it here).

Its master is the one Spark's own configuration names (issue 29, item 3): in order,
``--master`` (``master=``), ``--conf spark.master=...``, ``spark-submit``'s, ``MASTER``,
``PYSPARK_SUBMIT_ARGS`` and ``spark-defaults.conf``; the embedded ``local[*]`` only when none
does (:func:`resolve_master`, pure, tested without a JVM). The settings a user gives (``**conf``,
the defaults file, ``PYSPARK_SUBMIT_ARGS``, ``spark-submit``'s) win over the session's own
defaults. On a master that is not local the installed package is shipped to the executors
(:func:`~._ship.ship_package`).

A session this module starts logs at ERROR level from the JVM's first line (a log4j2
configuration handed to the driver JVM, written to a temporary file), so that no WARN line —
the loopback address, NativeCodeLoader, the default log level — reaches the user; and what the
JVM still writes on its stderr (its own ``WARNING: Using incubator modules``, the errors of the
Python workers it starts) can be sent to a file (``jvm_log``) instead of the terminal (issue
15: ``xmlevents replay -q`` prints nothing but its summary).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["make_session", "spark_session", "MasterChoice", "resolve_master", "master_where",
           "is_local_master", "MASTER_SOURCE"]

#: The session setting that keeps where its master came from (a :class:`MasterChoice`'s
#: ``source``), for the summary line (:func:`master_where`); set on sessions started here.
MASTER_SOURCE = "spark.xmlevents.masterSource"

#: Where the master of the embedded session comes from: nothing named one.
EMBEDDED = "local[*]"

# Only ERROR lines reach stderr. The root logger stays at WARN, as Spark's shell level: when
# the two differ, Spark prints "Setting default log level to WARN" and how to change it; the
# console appender's threshold drops the WARN lines instead.
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""

_JAVA_OPTIONS = "spark.driver.extraJavaOptions"

#: The driver JVM's options for an embedded session (a local master, the JVM started here):
#: the JIT's first tier only and the serial collector. A replay's JVM work is short-lived
#: (jobs of seconds, the diffing in the Python workers), where the second tier's compiler
#: threads and the parallel collector's compete for the cores with the Python workers and give
#: back little: the README's main job took 124–172 s and 56–76 s so, a 2-version history
#: 73–78 s and 39–44 s, 400 versions of a 150 KB catalogue 176 s and 156 s (load 9–18 on 2
#: cores; on a quiet machine the main job 26–30 s and 21–25 s; issue 28, item 7;
#: docs/guide/replay.md).
_SHORT_JOBS_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# Where a user's JVM options may already choose a collector or a compiler: the driver's own
# settings (_JAVA_OPTIONS, and the defaults Spark puts before them) and the launcher's
# environment. With any of them, theirs alone (a second collector flag would stop the JVM:
# "multiple garbage collectors selected").
_DEFAULT_JAVA_OPTIONS = "spark.driver.defaultJavaOptions"
_USER_JVM_ENVIRON = ("SPARK_SUBMIT_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")


def _driver_java_options(log_option: str, local: bool | None, settings: Mapping[str, str],
                         environ: Mapping[str, str] | None = None) -> str:
    """The driver JVM's options for a session started here: ``log_option`` (the log4j file's
    option), then the user's own (``settings``: theirs and Spark's configuration), else on a
    local master :data:`_SHORT_JOBS_JVM` unless the environment gives the JVM options.

    >>> _driver_java_options("-Dlog", True, {}, environ={})
    '-Dlog -XX:TieredStopAtLevel=1 -XX:+UseSerialGC'
    >>> _driver_java_options("-Dlog", True, {"spark.driver.extraJavaOptions": "-Xss4m"}, {})
    '-Dlog -Xss4m'
    >>> _driver_java_options("-Dlog", False, {}, environ={})
    '-Dlog'
    """
    env = os.environ if environ is None else environ
    given = settings.get(_JAVA_OPTIONS)
    if given:
        return f"{log_option} {given}"
    if local and not settings.get(_DEFAULT_JAVA_OPTIONS) and not any(
            env.get(k) for k in _USER_JVM_ENVIRON):
        return f"{log_option} {_SHORT_JOBS_JVM}"
    return log_option


@dataclass(frozen=True, slots=True)
class MasterChoice:
    """The master a session gets and where it was named (issue 29, item 3).

    Attributes:
        url: the master URL; None under ``spark-submit`` (known once the session runs).
        source: where it was named: ``--master``, ``--conf spark.master``, ``spark-submit``,
            ``MASTER``, ``PYSPARK_SUBMIT_ARGS``, the path of the ``spark-defaults.conf`` (or
            ``--properties-file``) that names it, or ``""`` for the embedded ``local[*]``.
        set_here: whether the session's builder sets it; False where Spark reads it itself
            as its JVM starts (``spark-submit``, ``PYSPARK_SUBMIT_ARGS``,
            ``spark-defaults.conf``: the proof that Spark sees what this resolution says; a
            JVM this process started earlier read them then, so :func:`make_session` names
            the URL to it).
    """

    url: str | None
    source: str
    set_here: bool

    @property
    def local(self) -> bool | None:
        """Whether the master runs in this process's JVM (``local``, ``local[N]``, ...); None
        while unknown (under ``spark-submit``)."""
        return None if self.url is None else is_local_master(self.url)


def is_local_master(url: str) -> bool:
    """Whether a master URL runs everything on this machine in the driver's JVM: ``local``,
    ``local[N]``, ``local[N,F]``, ``local[*]`` (not ``local-cluster[...]``, whose executors are
    processes apart, as a cluster's)."""
    return url == "local" or url.startswith("local[")


def resolve_master(master: str | None = None, conf: Mapping[str, str] | None = None,
                   environ: Mapping[str, str] | None = None) -> MasterChoice:
    """Which master a session gets, in the order Spark's own tools give it (issue 29, item 3):
    ``master`` (``--master``); ``conf["spark.master"]`` (``--conf spark.master=...``);
    ``spark-submit``'s (``PYSPARK_GATEWAY_PORT`` set: it configured the JVM); ``MASTER``;
    ``--master`` (or ``--conf spark.master=``) in ``PYSPARK_SUBMIT_ARGS``; ``spark.master`` in
    the defaults file (``spark-defaults.conf`` in ``$SPARK_CONF_DIR``, else
    ``$SPARK_HOME/conf``, else pyspark's own ``conf``; ``PYSPARK_SUBMIT_ARGS``'
    ``--properties-file`` instead if it names one); else the embedded ``local[*]``.

    Pure: reads ``environ`` (default :data:`os.environ`) and at most one file; starts nothing.

    >>> resolve_master("spark://h:7077", environ={})
    MasterChoice(url='spark://h:7077', source='--master', set_here=True)
    >>> resolve_master(environ={"MASTER": "local[2]", "SPARK_CONF_DIR": "/nowhere"})
    MasterChoice(url='local[2]', source='MASTER', set_here=True)
    """
    env = os.environ if environ is None else environ
    conf = conf or {}
    if master is not None:
        return MasterChoice(master, "--master", True)
    if conf.get("spark.master"):
        return MasterChoice(conf["spark.master"], "--conf spark.master", True)
    if "PYSPARK_GATEWAY_PORT" in env:
        return MasterChoice(None, "spark-submit", False)
    if env.get("MASTER"):
        return MasterChoice(env["MASTER"], "MASTER", True)
    submit = _submit_args(env)
    if submit.master:
        return MasterChoice(submit.master, "PYSPARK_SUBMIT_ARGS", False)
    path = submit.properties_file or defaults_file(env)
    if path is not None:
        named = read_properties(path).get("spark.master")
        if named:
            return MasterChoice(named, path, False)
    return MasterChoice(EMBEDDED, "", True)


def defaults_file(environ: Mapping[str, str] | None = None) -> str | None:
    """The ``spark-defaults.conf`` that ``spark-submit`` (and so pyspark's launcher) reads, if
    there is one: in ``$SPARK_CONF_DIR``, else ``$SPARK_HOME/conf``, else in the ``conf``
    folder of the pip-installed pyspark (its ``SPARK_HOME``)."""
    env = os.environ if environ is None else environ
    folder = env.get("SPARK_CONF_DIR")
    if not folder:
        home = env.get("SPARK_HOME") or _pyspark_home()
        if home is None:
            return None
        folder = os.path.join(home, "conf")
    path = os.path.join(folder, "spark-defaults.conf")
    return path if os.path.isfile(path) else None


def _pyspark_home() -> str | None:
    """The pip-installed pyspark's folder, its ``SPARK_HOME`` (found without importing it)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(iter(spec.submodule_search_locations))


def read_properties(path: str) -> dict[str, str]:
    """A Java properties file as Spark reads ``spark-defaults.conf`` (``java.util.Properties``,
    values trimmed): ``key value``, ``key=value`` or ``key: value``; ``#`` and ``!`` start a
    comment line; a line ending in ``\\`` continues. A file that cannot be read is empty
    (Spark's launcher reports it as it starts)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return {}
    result: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if _continues(line):
            logical += line[:-1]
            continue
        logical += line
        key, value = _split_property(logical)
        logical = ""
        if key:
            result[key] = value.strip()
    if logical:
        key, value = _split_property(logical)
        if key:
            result[key] = value.strip()
    return result


def _continues(line: str) -> bool:
    """Whether a line ends in an odd number of backslashes (the next line continues it)."""
    count = len(line) - len(line.rstrip("\\"))
    return count % 2 == 1


def _split_property(line: str) -> tuple[str, str]:
    """A properties line's key and value: the key ends at the first unescaped ``=``, ``:`` or
    white space; one ``=`` or ``:`` after white space belongs to the separator."""
    key: list[str] = []
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            key.append(line[i + 1])
            i += 2
            continue
        if c in "=: \t\f":
            break
        key.append(c)
        i += 1
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return "".join(key), rest


@dataclass(frozen=True, slots=True)
class _SubmitArgs:
    """What ``PYSPARK_SUBMIT_ARGS`` names that the session must know: the master (``--master``
    over ``--conf spark.master=``, as ``spark-submit`` takes them), the properties file that
    replaces ``spark-defaults.conf``, and the ``--conf`` settings."""

    master: str | None
    properties_file: str | None
    conf: dict[str, str]


def _submit_args(environ: Mapping[str, str]) -> _SubmitArgs:
    """``PYSPARK_SUBMIT_ARGS`` read as ``spark-submit`` reads its arguments (only the options
    that matter here; pyspark's launcher passes them all on)."""
    try:
        words = shlex.split(environ.get("PYSPARK_SUBMIT_ARGS", ""))
    except ValueError:  # unbalanced quotes: pyspark's launcher fails on them itself
        return _SubmitArgs(None, None, {})
    options: dict[str, str] = {}
    conf: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        if name in ("--master", "--properties-file", "--conf", "-c"):
            if not eq:
                i += 1
                value = words[i] if i < len(words) else ""
            if name in ("--conf", "-c"):
                k, eq2, v = value.partition("=")
                if eq2:
                    conf[k] = v
            else:
                options[name] = value
        i += 1
    return _SubmitArgs(options.get("--master") or conf.get("spark.master") or None,
                       options.get("--properties-file") or None, conf)


def configured_elsewhere(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings Spark's own configuration gives a session started from this process: the
    defaults file's (or ``--properties-file``'s), overridden by ``PYSPARK_SUBMIT_ARGS``'
    ``--conf`` — the user's, which the session's own defaults must not override."""
    env = os.environ if environ is None else environ
    submit = _submit_args(env)
    path = submit.properties_file or defaults_file(env)
    settings = read_properties(path) if path is not None else {}
    settings.update(submit.conf)
    return settings


def master_where(spark: SparkSession) -> str:
    """Where a session runs, for the summary line: its master, and where that was named when
    this module started the session (``spark://h:7077, from spark-defaults.conf``); the
    embedded ``local[*]`` alone."""
    master = spark.sparkContext.master or "?"
    source = spark.conf.get(MASTER_SOURCE, "") or ""
    if source:
        return f"{master}, from {os.path.basename(source) if _is_defaults(source) else source}"
    return master


def _is_defaults(source: str) -> bool:
    return os.path.basename(source) == "spark-defaults.conf"


def make_session(master: str | None = None, *, app_name: str = "xmlevents replay",
                 progress: bool = True, jvm_log: str | os.PathLike[str] | None = None,
                 **conf: str) -> SparkSession:
    """A SparkSession on the master :func:`resolve_master` gives (``master``, ``conf``'s
    ``spark.master``, ``spark-submit``'s, ``MASTER``, ``PYSPARK_SUBMIT_ARGS``,
    ``spark-defaults.conf``; else an embedded ``local[*]`` session that needs no set-up).

    The Python workers run this interpreter (``PYSPARK_PYTHON``, unless set), so they see the
    same installed packages; on a master that is not local the ``xmlevents`` package itself is
    shipped to the executors (a zip added to the session: they need its dependencies only).
    ``conf`` (``--conf``), and the settings of Spark's own configuration, win over the
    session's defaults (8 shuffle partitions, no UI unless under ``spark-submit``). A JVM
    started here logs at ERROR level from its start. ``progress`` shows Spark's console
    progress bar per stage. ``jvm_log``: a file that takes everything the JVM started here
    writes on stderr (and the Python workers it starts), from its first line, instead of this
    process's stderr (appended to; a session already running is not affected).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    conf = dict(conf)
    choice = resolve_master(master, conf)
    conf.pop("spark.master", None)  # the choice's, if it is the one to set
    builder = SparkSession.builder.appName(app_name)
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit set the master already
    # Whether getOrCreate starts a JVM (none runs yet in this process): only then do its
    # options and its stderr take effect.
    launching = not submitted and SparkContext._gateway is None
    # A session already running (a caller's) is returned as it is: its master was named
    # elsewhere, so the summary names no source for it.
    running = SparkContext._active_spark_context is not None
    # Spark reads its own sources (the defaults file, PYSPARK_SUBMIT_ARGS) as the JVM starts;
    # a JVM this process started before keeps the master of its start: name it then.
    if choice.url is not None and (choice.set_here or not launching):
        builder = builder.master(choice.url)
    elsewhere = _spark_submit_settings() if submitted else configured_elsewhere()
    # The executors' Python: spark.pyspark.python over PYSPARK_PYTHON, as spark-submit takes
    # them; pyspark itself reads only the variable (SparkContext.pythonExec).
    python = conf.get("spark.pyspark.python") or elsewhere.get("spark.pyspark.python")
    if python and not running:
        os.environ["PYSPARK_PYTHON"] = python
    settings = {
        "spark.ui.showConsoleProgress": "true" if progress else "false",
        "spark.sql.shuffle.partitions": "8",  # small tables: 200 empty tasks cost more
        # Versions are large rows, and the diff stage's carry two: a batch of 16 bounds what a
        # Python worker holds (64 held 350 MB of a 200 KB catalogue's pairs; issue 29).
        "spark.sql.execution.arrow.maxRecordsPerBatch": "16",
        # The checked versions are cached (the diff stage and the errors read them) in
        # columnar batches of 10,000 rows by default, built in the heap before they go to
        # memory or disk: 2 GB of a 200 KB document's versions (6,400 versions: "Java heap
        # space" in the cache's column builder; issue 29).
        "spark.sql.inMemoryColumnarStorage.batchSize": "64",
    }
    if not submitted:
        settings["spark.ui.enabled"] = "false"
    settings = {k: v for k, v in settings.items() if k not in elsewhere}  # the user's win
    settings.update(conf)
    folder = tempfile.mkdtemp(prefix="xmlevents-spark-") if launching else None
    try:
        if folder is not None:
            config = os.path.join(folder, "log4j2.properties")
            with open(config, "w", encoding="utf-8") as f:
                f.write(_LOG4J2)
            option = f"-Dlog4j2.configurationFile=file:{config}"
            if " " in option:
                option = f'"{option}"'
            # A --conf replaces the defaults file's value: keep the user's options after ours.
            settings[_JAVA_OPTIONS] = _driver_java_options(
                option, choice.local, {**elsewhere, **settings})
        for key, value in settings.items():
            builder = builder.config(key, value)
        with _stderr_to(jvm_log if launching else None):
            spark = builder.getOrCreate()
    finally:
        if folder is not None:  # read once, as the JVM started
            shutil.rmtree(folder, ignore_errors=True)
    spark.sparkContext.setLogLevel("ERROR")
    if not running:
        source = choice.source
        if choice.url is not None and spark.sparkContext.master != choice.url:
            source = ""  # not what was resolved (a JVM started earlier): name none
        spark.conf.set(MASTER_SOURCE, source)
    if not is_local_master(spark.sparkContext.master or "local"):
        from ._ship import ship_package

        ship_package(spark)
    return spark


def _spark_submit_settings() -> dict[str, str]:
    """The settings ``spark-submit`` gave the JVM it started (its ``--conf``, its defaults
    file): the system properties a new SparkConf loads through the gateway."""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connects to spark-submit's gateway: no new JVM
    return dict(SparkConf().getAll())


@contextlib.contextmanager
def _stderr_to(path: str | os.PathLike[str] | None) -> Iterator[None]:
    """This process's file descriptor 2 sent to ``path`` while in the block (None: left as
    it is), so that a process started meanwhile (the JVM) writes its stderr there for good."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(target, 2)
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


@contextlib.contextmanager
def spark_session(master: str | None = None, **options: object) -> Iterator[SparkSession]:
    """A SparkSession for the block: the one already running in this process (a caller's,
    ``spark-submit``'s), left running at the end; otherwise one :func:`make_session` starts
    (``master`` and ``options`` are its arguments), stopped at the end. ``xmlevents replay``
    runs in one; so may a script (callers pass the session to :func:`~._spark_job.run_spark`).
    """
    from pyspark.sql import SparkSession

    running = SparkSession.getActiveSession()
    spark = make_session(master, **options)  # type: ignore[arg-type]
    try:
        yield spark
    finally:
        if running is None:
            # A JVM that died mid-job (out of memory) cannot be stopped: what killed it is
            # the error to see, not py4j's on the way out (it logs its own traceback too).
            logging.disable(logging.CRITICAL)
            try:
                with contextlib.suppress(Exception):
                    spark.stop()
            finally:
                logging.disable(logging.NOTSET)
