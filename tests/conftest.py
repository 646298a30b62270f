"""Test-session settings shared by every test package."""

import os
import sys

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
