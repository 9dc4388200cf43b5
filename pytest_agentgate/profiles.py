"""Profile defaults: the thresholds each gate kind gets unless the config overrides them."""

from __future__ import annotations

from typing import Any


class ProfileDefault(float):
    """A threshold the profile set, not the user. It compares and prints as the float it is; a
    gate that treats a default differently from a value the user wrote (patch coverage without
    a base) tells them apart with ``isinstance``. Values from the configuration are plain."""

    __slots__ = ()


PROFILE_NAMES: tuple[str, ...] = ("strict", "standard", "relaxed")
DEFAULT_PROFILE = "standard"

# kind -> threshold key -> value, per profile: the profile table of README.md, verbatim.
PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "strict": {
        "build": {"max_errors": 0},
        "lint": {"max_errors": 0, "max_warnings": 0},
        "test": {"min_pass_rate": 100.0, "flaky": "fail", "partial": "fail"},
        "coverage": {
            "lines": 90.0,
            "branches": 85.0,
            "functions": 90.0,
            "statements": 90.0,
            "patch": ProfileDefault(90.0),
        },
        "integrity": {"block": "all"},
        "session": {"deferral": "block", "loop_repeats": 5, "max_file_edits": 20},
    },
    "standard": {
        "build": {"max_errors": 0},
        "lint": {"max_errors": 0, "max_warnings": 50},
        "test": {"min_pass_rate": 95.0, "flaky": "allow", "partial": "allow"},
        "coverage": {
            "lines": 85.0,
            "branches": 80.0,
            "functions": 85.0,
            "statements": 85.0,
            "patch": ProfileDefault(80.0),
        },
        "integrity": {"block": "tampering"},
        "session": {"deferral": "warn", "loop_repeats": 5, "max_file_edits": 20},
    },
    "relaxed": {
        "build": {"max_errors": 0},
        "lint": {"max_errors": 5, "max_warnings": 100},
        "test": {"min_pass_rate": 90.0, "flaky": "allow", "partial": "allow"},
        "coverage": {
            "lines": 70.0,
            "branches": 65.0,
            "functions": 70.0,
            "statements": 70.0,
            "patch": ProfileDefault(60.0),
        },
        "integrity": {"block": "tampering"},
        "session": {"deferral": "warn", "loop_repeats": 5, "max_file_edits": 20},
    },
}


def defaults_for(profile: str, kind: str) -> dict[str, Any]:
    """The profile's thresholds for one gate kind (empty for kinds the profile does not cover)."""
    return dict(PROFILES[profile].get(kind, {}))
