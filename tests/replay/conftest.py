"""One small local Spark session for the whole test session (started on first use)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from xmlevents.replay import make_session

    session = make_session("local[2]", app_name="xmlevents tests", progress=False,
                           **{"spark.sql.shuffle.partitions": "4",
                              "spark.default.parallelism": "2"})
    yield session
    session.stop()
