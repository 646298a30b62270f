"""The SparkSession of a replay on Spark (library functions take one; the command line, or a
script, makes it here).

A session this module starts logs at ERROR level from the JVM's first line (a log4j2
configuration handed to the driver JVM, written to a temporary file), so that no WARN line —
the loopback address, NativeCodeLoader, the default log level — reaches the user; and what the
JVM still writes on its stderr (its own ``WARNING: Using incubator modules``, the errors of the
Python workers it starts) can be sent to a file (``jvm_log``) instead of the terminal (issue
15: ``xmlevents replay -q`` prints nothing but its summary).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["make_session", "spark_session"]

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


def make_session(master: str | None = None, *, app_name: str = "xmlevents replay",
                 progress: bool = True, jvm_log: str | os.PathLike[str] | None = None,
                 **conf: str) -> SparkSession:
    """A SparkSession: ``master`` if given; under ``spark-submit`` the one it configured;
    otherwise an embedded ``local[*]`` session that needs no set-up.

    The Python workers run this interpreter (``PYSPARK_PYTHON``, unless set), so they see the
    same installed packages. A JVM started here logs at ERROR level from its start.
    ``progress`` shows Spark's console progress bar per stage. ``jvm_log``: a file that takes
    everything the JVM started here writes on stderr (and the Python workers it starts), from
    its first line, instead of this process's stderr (appended to; a session already running
    is not affected).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit set the master already
    # Whether getOrCreate starts a JVM (none runs yet in this process): only then do its
    # options and its stderr take effect.
    launching = not submitted and SparkContext._gateway is None
    if master is not None:
        builder = builder.master(master)
    elif not submitted:
        builder = builder.master("local[*]")
    settings = {
        "spark.ui.showConsoleProgress": "true" if progress else "false",
        "spark.sql.shuffle.partitions": "8",  # small tables: 200 empty tasks cost more
        "spark.sql.execution.arrow.maxRecordsPerBatch": "64",  # versions are large rows
    }
    if not submitted:
        settings["spark.ui.enabled"] = "false"
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
            given = settings.get("spark.driver.extraJavaOptions")
            settings["spark.driver.extraJavaOptions"] = f"{option} {given}" if given else option
        for key, value in settings.items():
            builder = builder.config(key, value)
        with _stderr_to(jvm_log if launching else None):
            spark = builder.getOrCreate()
    finally:
        if folder is not None:  # read once, as the JVM started
            shutil.rmtree(folder, ignore_errors=True)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


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
            spark.stop()
