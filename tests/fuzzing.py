"""The example budgets of the property-based tests (hypothesis), chosen by ``PTRNET_FUZZ``.

``ci`` (the default, what the README's test command and CI run): derandomised, so every run
draws the same examples and a red run is red again on any machine; each test runs the budget it
states with :func:`cases`. ``long`` (``PTRNET_FUZZ=long``): a fresh random search each run,
:data:`LONG_SCALE` times each budget. A failure either way is a bug in ptrnet to fix, never a run
to retry (docs/reliability.md). ``tests/conftest.py`` loads the profile.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

LONG_SCALE = 25
"""How many times its CI budget each property test runs in the ``long`` profile."""

PROFILE = os.environ.get("PTRNET_FUZZ", "ci")
if PROFILE not in ("ci", "long"):
    raise ValueError(f"PTRNET_FUZZ must be ci or long, got {PROFILE!r}")

COMMON = {
    "database": None,  # no examples remembered between runs: a run depends on its code only
    "deadline": None,  # CI machines vary; a slow example is not a failure
    "suppress_health_check": list(HealthCheck),
    "print_blob": True,  # a failure prints the @reproduce_failure line that replays it
}
settings.register_profile("ci", derandomize=True, **COMMON)
settings.register_profile("long", derandomize=False, **COMMON)


def cases(count: int) -> settings:
    """Settings for a property test that runs ``count`` examples in CI (``LONG_SCALE`` times
    as many with ``PTRNET_FUZZ=long``)."""
    return settings(max_examples=count * (LONG_SCALE if PROFILE == "long" else 1))
