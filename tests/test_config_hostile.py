"""A small configuration with a huge cost is refused before it is built: alias bombs, alias
cycles, deep nesting and duplicate keys are errors that name the line, never a traceback."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import CliRun

from pytest_agentgate.config.files import MAX_DEPTH, parse_raw
from pytest_agentgate.config.model import ConfigError

Agentgate = Callable[..., CliRun]
WriteConfig = Callable[[str], Path]

LEVEL = "[" + ",".join(["*{prev}"] * 9) + "]"
BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} " + LEVEL.format(prev=prev) + "\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def refused(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        parse_raw(text, "agentgate.yml", "agentgate.yml")
    return raised.value


def test_an_alias_bomb_is_refused_at_once_without_quoting_it() -> None:
    assert len(BOMB) < 1000
    start = time.monotonic()
    error = refused(BOMB)
    assert time.monotonic() - start < 2.0  # expanded, it would be 9**9 values
    assert "expands to more than 100,000 values once its aliases are followed" in str(error)
    assert error.line is not None and "lol" not in str(error)


def test_duplicate_keys_name_both_lines() -> None:
    error = refused("profile: strict\ngates:\n  build: {command: make}\n  build: {command: true}\n")
    assert str(error) == (
        "agentgate.yml:4: build: appears twice in one mapping (lines 3 and 4); keep one"
    )


def test_deep_nesting_and_alias_cycles_are_errors() -> None:
    deep = "gates: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"
    assert f"nested more than {MAX_DEPTH} levels deep" in str(refused(deep))
    very_deep = "gates: " + "[" * 5000 + "]" * 5000 + "\n"  # deeper than the parser recurses
    assert "levels deep" in str(refused(very_deep))
    fine = "gates:\n  build: {command: make}\n  lint: &lint {command: ruff}\n  x: *lint\n"
    assert parse_raw(fine, "agentgate.yml", "agentgate.yml").data["gates"]["x"] == {
        "command": "ruff"
    }


def test_the_cli_says_it_in_one_line(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config(BOMB)
    run = agentgate("verify")
    assert run.code == 2 and run.out == ""
    assert run.err.startswith("agentgate: error: ") and "Traceback" not in run.err
    assert run.err.count("\n") == 1
