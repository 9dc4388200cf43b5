"""The fuzz suite's hypothesis profiles; ``--hypothesis-profile=NAME`` picks one, "dev" is the
default.

- ci: what ``.ci/run`` runs, bounded (about a minute on two CPUs), no deadline (a shared
  machine's pauses are no bug), nothing written into the repository, and derandomized: every
  CI run draws the same examples, so CI fails only on a change, never on a new draw (finding
  new inputs is the long profile's job).
- dev: a few examples a test, for a quick look while changing a reader.
- long: 5,000 examples a test, failing examples kept in ``.hypothesis/`` and replayed first.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    # Files are written to the test's tmp_path, overwritten by every example; the documents
    # are large on purpose.
    "suppress_health_check": [
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
}
settings.register_profile(
    "ci", max_examples=100, database=None, derandomize=True, print_blob=True, **_COMMON
)
settings.register_profile("dev", max_examples=20, database=None, **_COMMON)
settings.register_profile("long", max_examples=5000, **_COMMON)
settings.load_profile("dev")
