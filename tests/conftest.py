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
    """The slow tests first (a stable sort): with pytest-xdist's worksteal the minute-long
    ones (Spark, the docs' replays) start at once on both workers and the short ones fill
    in after, instead of one of them ending the run alone (issue 28: the whole suite under
    10 minutes; a suite run ended with 2.5 minutes of its last 4%)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
