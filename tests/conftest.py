"""Test-session settings shared by every test package."""

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

# Keep bytecode (the tests' rewritten by pytest and the library's, in the gitignored
# __pycache__ folders) even where PYTHONDONTWRITEBYTECODE is set, as on the project's
# machines: otherwise every run's workers (pytest-xdist, one a core) compile and rewrite
# ~240 modules anew, 5 s each of a fast loop that should take under a minute (issue 28).
sys.dont_write_bytecode = False

# CI runs derandomized so a red run is reproducible, with the full counts; local runs explore
# new examples, a quarter as many (tests/strategies.py's examples() scales the properties that
# ask for their own count alike).
settings.register_profile("ci", derandomize=True, deadline=None, max_examples=100,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=50,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first (a stable sort: otherwise in collection order): the workers
    (pytest-xdist, worksteal) start on the minute-long Spark, cluster and follower tests and
    fill the rest of their time with the short ones, instead of meeting the long ones last
    with one core idle (the longest tests first: the suite's time, issue 28, item 7)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
