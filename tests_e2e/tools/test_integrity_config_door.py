"""`pytest --agentgate=strict` is held to the base's configuration, in a process of its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import test_integrity_config as integrity_config_module
from _helpers import PY
from test_integrity_config import GATE, edit, line_of, plugin, plugin_gate

# The unit suite's fixtures for these tests.
repo_from = integrity_config_module.repo_from
templates = integrity_config_module.templates


@pytest.mark.parametrize(
    ("where", "old", "new", "needle", "rule"),
    [
        ("agentgate.yml", "  lint:\n", "  lint:\n    enabled: false\n", "enabled", GATE),
        ("agentgate.yml", "  lint:\n", "  lint:\n    max_errors: 5\n", "max_errors", GATE),
        (
            "agentgate.yml",
            f"    command: {PY} -m ruff check --no-cache .\n",
            "    command: echo '[]'\n    format: ruff\n",
            "echo",
            GATE,
        ),
        (
            "pyproject.toml",
            'select = ["E", "F", "W"]\n',
            'select = ["E", "F", "W"]\nignore = ["F401"]\n',
            "ignore",
            "tool-config-loosened",
        ),
    ],
    ids=["lint-disabled", "lint-threshold", "lint-echo", "ruff-ignore"],
)
def test_pytest_agentgate_strict_is_held_to_the_base(
    repo_from: Callable[[str], Path], where: str, old: str, new: str, needle: str, rule: str
) -> None:
    root = repo_from("lint")
    text = edit(root / where, old, new)
    code, verdict = plugin(root)
    assert code != 0
    # The integrity gate judged the change before the first test: no test ran.
    assert (
        "stopped before the first test by the integrity gate"
        in plugin_gate(verdict, "test")["summary"]
    )
    integrity = plugin_gate(verdict, "integrity")
    assert integrity["status"] == "fail"
    located = {(f["code"], f["path"], f["line"]) for f in integrity["findings"]}
    assert (rule, where, line_of(text, needle)) in located, integrity["findings"]
