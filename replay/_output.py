"""Where a replay on Spark writes, checked on the file system that will write it, before any
work (issue 29, item 3).

On a cluster the executors write the outputs, each on the file system its path names — so a
path of this machine (``/tmp/out``, a folder only the driver has) would be written in pieces on
every worker's disk, or fail after the whole job ran. :func:`check_spark_output` refuses such a
path and checks the rest through Hadoop's ``FileSystem`` API in the session's JVM, the one
Spark writes with: its scheme has a file system (an HDFS or S3 URL needs its connector on the
classpath), and the folder exists or can be made, and takes a new file.
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING, Any

from xmlevents.algebra import XmlEventsError

from ._session import is_local_master

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["OutputLocationError", "check_spark_output"]


class OutputLocationError(XmlEventsError, ValueError):
    """An output location a replay on Spark cannot write: a path of the driver's machine given
    to a cluster, a URL whose file system Spark does not have, a folder that cannot be made or
    written. The message starts with the location as given."""


def check_spark_output(spark: SparkSession, out: str) -> None:
    """Check ``out`` as ``spark`` will write it, before the job: a folder that exists or can be
    made, and takes a new file; nothing is left behind (a probe file and the folders made for
    it are removed).

    A path without a scheme resolves on Hadoop's default file system (``fs.defaultFS``). When
    that is this machine's (``file:``) and the master is not local, it is refused: the
    executors would write it on their own disks. ``file:///shared/out`` says the folder is
    shared (an NFS mount on every machine): accepted, checked from the driver.

    Raises:
        OutputLocationError: naming ``out`` and the reason, in one line.
    """
    from py4j.protocol import Py4JJavaError

    jvm: Any = spark._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop = jvm.org.apache.hadoop.fs
    try:
        path = hadoop.Path(out)
        fs = path.getFileSystem(conf)
    except Py4JJavaError as exc:
        raise OutputLocationError(_no_file_system(out, exc)) from None
    except Exception as exc:  # an illegal path (Path's IllegalArgumentException)
        raise OutputLocationError(f"{out}: not a path Spark can write: "
                                  f"{_first_line(exc)}") from None
    master = spark.sparkContext.master or ""
    if (not is_local_master(master) and path.toUri().getScheme() is None
            and fs.getUri().getScheme() == "file"):
        raise OutputLocationError(
            f"{out}: a folder of this machine, and the master {master} runs executors that "
            "write on their own file systems: give a URL they share (hdfs://..., s3a://...), "
            f"or file://{_absolute(out)} if every machine has that folder (a shared mount)")
    try:
        _probe(hadoop, fs, fs.makeQualified(path), out)
    except Py4JJavaError as exc:
        raise OutputLocationError(f"{out}: cannot write there: "
                                  f"{_java_message(exc)}") from None


def _probe(hadoop: Any, fs: Any, path: Any, out: str) -> None:
    """``path`` (``out`` qualified) is, or can be made, a folder that takes a new file: made
    (with its missing parents), written in, and everything made removed again."""
    if fs.exists(path) and not fs.getFileStatus(path).isDirectory():
        raise OutputLocationError(f"{out}: a file is there, not a folder")
    top = None  # the highest folder made here, removed at the end with what it holds
    ancestor = path
    while ancestor is not None and not fs.exists(ancestor):
        top = ancestor
        ancestor = ancestor.getParent()
    if ancestor is not None and not fs.getFileStatus(ancestor).isDirectory():
        raise OutputLocationError(f"{out}: {ancestor.toUri().getPath()} is a file, not a "
                                  "folder")
    try:
        if top is not None and not fs.mkdirs(path):
            raise OutputLocationError(f"{out}: cannot create the folder")
        probe = hadoop.Path(path, f".xmlevents-probe-{uuid.uuid4().hex}")
        fs.create(probe, False).close()
        fs.delete(probe, False)
    finally:
        if top is not None:
            fs.delete(top, True)


def _no_file_system(out: str, exc: BaseException) -> str:
    """The one line for a URL whose file system this Spark cannot open."""
    text = _java_message(exc)
    # An unknown scheme, or a known one whose class is missing (Hadoop names s3a's
    # S3AFileSystem in its defaults; hadoop-aws holds it).
    if any(sign in text or sign in str(exc) for sign in (
            "UnsupportedFileSystemException", "No FileSystem for scheme",
            "ClassNotFoundException")):
        scheme = out.split("://", 1)[0] if "://" in out else out.split(":", 1)[0]
        return (f"{out}: this Spark has no file system for {scheme}:// (its connector is not "
                "on the classpath: add it, e.g. --conf spark.jars.packages=org.apache.hadoop:"
                "hadoop-aws:VERSION for s3a://, or use a Spark distribution built with it)")
    return f"{out}: cannot open its file system: {text}"


def _java_message(exc: BaseException) -> str:
    """A Java exception's class and message, without its stack (py4j's text has both)."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            message = java.getMessage()
            name = java.getClass().getSimpleName()
            return f"{name}: {message}".splitlines()[0] if message else str(name)
        except Exception:  # the gateway went away: fall back to the text
            pass
    return _first_line(exc)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _absolute(out: str) -> str:
    return os.path.abspath(out)
