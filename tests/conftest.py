"""Test-session settings shared by every test package."""

import os

from hypothesis import HealthCheck, settings

# CI runs derandomized so a red run is reproducible; local runs explore new examples.
settings.register_profile("ci", derandomize=True, deadline=None, max_examples=200,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
