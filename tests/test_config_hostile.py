"""A small configuration with a huge cost is refused before it is built: alias bombs, alias
cycles, deep nesting and duplicate keys are errors that name the line, never a traceback."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import CliRun, gated_project

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


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("agentgate.json", '{"gates": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}"),
        ("agentgate.json", '{"gates": ' + '{"a": ' * 70 + "1" + "}" * 70 + "}"),
        ("pyproject.toml", "[tool.agentgate]\nx = " + "[" * 600 + "]" * 600 + "\n"),
        ("agentgate.toml", "x = " + "[" * 100 + "]" * 100 + "\n"),
    ],
    ids=["json-5000", "json-70", "pyproject-600", "toml-100"],
)
def test_json_and_toml_nested_too_deep_are_errors(name: str, text: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_raw(text, name, name)
    assert f"nested more than {MAX_DEPTH} levels deep" in str(raised.value)


def test_a_fifo_or_a_device_as_the_configuration_never_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from pytest_agentgate.cli.main import main

    fifo = tmp_path / "config.yml"
    os.mkfifo(fifo)  # nobody writes to it: reading would wait forever
    monkeypatch.chdir(tmp_path)
    start = time.monotonic()
    assert main(["verify", "--config", str(fifo)]) == 2
    assert f"{fifo}: is not a regular file" in capsys.readouterr().err
    assert main(["verify", "--config", "/dev/zero"]) == 2
    assert "/dev/zero: is not a regular file" in capsys.readouterr().err
    assert time.monotonic() - start < 10


def test_a_huge_or_binary_configuration_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.yml").write_text("# padding\n" * 200_000)
    assert main(["verify", "--config", "big.yml"]) == 2
    assert "is larger than 1024 KiB" in capsys.readouterr().err
    (tmp_path / "bin.yml").write_bytes(b"profile: strict\n\xff\xfe\n")
    assert main(["verify", "--config", "bin.yml"]) == 2
    assert "cannot be read: not UTF-8 (invalid start byte at byte 16)" in capsys.readouterr().err


def test_a_task_id_with_undecodable_bytes_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "agentgate.yml").write_text('gates:\n  build:\n    command: python -c "pass"\n')
    bad = b"\xff\xfe".decode("utf-8", "surrogateescape")  # what Python makes of such an argv
    with pytest.raises(SystemExit) as exited:
        main(["verify", "--task", bad])
    assert exited.value.code == 2
    assert "a task id must be text (UTF-8)" in capsys.readouterr().err


# Values the parsers cannot build, and numbers no setting takes (tests_fuzz found them; each
# escaped as a traceback, or reached validation and broke its messages and comparisons).
DIGITS = "a number of {} digits is larger than any setting takes; write one of at most 300 digits"
UNBUILDABLE = {
    "toml-5000-digits": (
        "agentgate.toml",
        "profile = " + "1" * 5000,
        "agentgate.toml:1: " + DIGITS.format("5,000"),
    ),
    "pyproject-5000-digits": (
        "pyproject.toml",
        "[tool.agentgate]\nprofile = " + "1" * 5000,
        "pyproject.toml:2: " + DIGITS.format("5,000"),
    ),
    "yaml-5000-digits": (
        "agentgate.yml",
        "profile: strict\nattempts:\n  max: " + "1" * 5000,
        "agentgate.yml:3: " + DIGITS.format("5,000"),
    ),
    "json-5000-digits": (
        "agentgate.json",
        '{\n  "enabled": ' + "1" * 5000 + "\n}",
        "agentgate.json:2: " + DIGITS.format("5,000"),
    ),
    "yaml-hex-6000-digits": (
        "agentgate.yml",
        "profile: 0x" + "f" * 5000,
        "agentgate.yml:1: profile: " + DIGITS.format("about 6,021"),
    ),
    "toml-hex-6000-digits": (
        "agentgate.toml",
        "[attempts]\nmax = 0x" + "f" * 5000,
        "agentgate.toml: attempts.max: " + DIGITS.format("about 6,021"),
    ),
    "yaml-timeout-beyond-a-float": (
        "agentgate.yml",
        "gates:\n  build: {command: x, timeout: 0x" + "f" * 300 + "}",
        "agentgate.yml:2: gates.build.timeout: " + DIGITS.format("about 362"),
    ),
    "yaml-hook-budget-401-digits": (
        "agentgate.yml",
        "hook: {budget: 1" + "0" * 400 + "}",
        "agentgate.yml:1: hook.budget: " + DIGITS.format("about 401"),
    ),
    "yaml-no-such-date": (
        "agentgate.yml",
        "profile: strict\nbase: 2026-13-45",
        "agentgate.yml:2: `2026-13-45` is read as a date and is not one (month must be in "
        "1..12); quote it if it is text",
    ),
    "yaml-tagged-float": (
        "agentgate.yml",
        "attempts: {max: !!float many}",
        "agentgate.yml:1: `many` is read as a number and is not one; quote it if it is text",
    ),
    "yaml-tagged-bool": (
        "agentgate.yml",
        "enabled: !!bool maybe",
        "agentgate.yml:1: `maybe` is read as true or false and is not one; quote it if it is text",
    ),
    "yaml-tagged-timestamp": (
        "agentgate.yml",
        "base: !!timestamp today",
        "agentgate.yml:1: `today` is read as a date and is not one; quote it if it is text",
    ),
}


@pytest.mark.parametrize("case", sorted(UNBUILDABLE))
def test_a_value_no_setting_takes_is_an_error_at_its_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate.cli.main import main

    name, text, message = UNBUILDABLE[case]
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text + "\n", encoding="utf-8")
    assert main(["explain", "--config", name]) == 2
    assert capsys.readouterr().err == f"agentgate: error: {tmp_path / message}\n"


def test_large_honest_numbers_and_dates_still_read() -> None:
    text = "attempts: {max: 0x10}\ngates:\n  build: {command: x, timeout: 1" + "0" * 299 + "}\n"
    raw = parse_raw(text + "base: 2026-02-28\n", "agentgate.yml", "agentgate.yml")
    assert raw.data["attempts"]["max"] == 16
    assert raw.data["gates"]["build"]["timeout"] == 10**299


def test_a_fifo_in_the_change_never_blocks_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Callable[..., CliRun]
) -> None:
    import os

    root = gated_project(
        tmp_path / "p",
        'profile: strict\ngates:\n  build:\n    command: "{py} -c pass"\n',
        {"calc.py": "def add(a, b):\n    return a + b\n", "pytest.ini": "[pytest]\n"},
    )
    os.mkfifo(tmp_path / "fifo")  # nobody writes to it: reading would wait for ever
    (root / "notes.txt").symlink_to(tmp_path / "fifo")  # new, untracked: part of the change
    (root / "pytest.ini").unlink()
    os.mkfifo(root / "pytest.ini")  # a settings file the integrity gate reads
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    monkeypatch.chdir(root)
    start = time.monotonic()
    run = agentgate("verify", "--format", "json", "--no-cache")
    assert time.monotonic() - start < 30
    assert run.verdict()["status"] in ("pass", "fail"), run.err
