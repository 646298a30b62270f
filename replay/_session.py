"""The SparkSession of the command line (library functions take one; only the CLI makes one)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["make_session", "active_session"]


def make_session(master: str | None = None, *, app_name: str = "xmlevents replay",
                 progress: bool = True, **conf: str) -> SparkSession:
    """A SparkSession: ``master`` if given; under ``spark-submit`` the one it configured;
    otherwise an embedded ``local[*]`` session that needs no set-up.

    The Python workers run this interpreter (``PYSPARK_PYTHON``, unless set), so they see the
    same installed packages. ``progress`` shows Spark's console progress bar per stage.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit set the master already
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
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def active_session() -> SparkSession | None:
    """The SparkSession already running in this process (a caller's, ``spark-submit``'s), or
    None: the command line stops only a session it started."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()
