"""`agentgate verify` and `agentgate schema`: output formats, exit codes, report-only mode."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import DATA, CliRun

from pytest_agentgate import __version__
from pytest_agentgate.cli.main import main
from pytest_agentgate.cli.schema import schema_text
from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.profiles import PROFILE_NAMES
from pytest_agentgate.registry import RegistryError
from pytest_agentgate.state.task import LedgerError

Agentgate = Callable[..., CliRun]
WriteConfig = Callable[[str], Path]
Check = Callable[[dict[str, Any]], dict[str, Any]]

PASSING_JUNIT = (
    '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite>'
)
GATES = (
    "gates:\n"
    "  build: {command: 'true'}\n"
    "  lint: {command: 'cat lint.json', format: ruff}\n"
    "  test: {command: 'cp pass.src junit.xml', report: junit.xml}\n"
)


@pytest.fixture
def passing(project: Path, write_config: WriteConfig) -> Path:
    """A project whose three gates pass without any real tool."""
    (project / "lint.json").write_text("[]")
    (project / "pass.src").write_text(PASSING_JUNIT)
    write_config(GATES)
    return project


def test_json_is_the_only_thing_on_stdout(passing: Path, agentgate: Agentgate) -> None:
    run = agentgate("verify", "--format", "json", "--output", "out/verdict.json")
    assert run.code == 0
    assert run.out.startswith("{") and run.out.endswith("}\n")
    verdict = run.verdict()
    assert verdict["schema"] == "agentgate.verdict/1"
    assert [g["status"] for g in verdict["gates"]] == ["pass", "pass", "pass"]
    written = json.loads((passing / "out" / "verdict.json").read_text())
    assert written["gates"][0]["summary"] == verdict["gates"][0]["summary"]
    assert written["status"] == "pass"


def test_text_output(passing: Path, agentgate: Agentgate, check_verdict: Check) -> None:
    run = agentgate("verify", "--output", "v.json")
    assert run.code == 0
    lines = run.out.splitlines()
    assert lines[0] == "agentgate: PASS (profile standard)"
    assert [ln.split()[:2] for ln in lines[1:4]] == [
        ["PASS", "build"],
        ["PASS", "lint"],
        ["PASS", "test"],
    ]
    assert "\x1b[" not in run.out
    check_verdict(json.loads((passing / "v.json").read_text()))


def test_markdown_output(passing: Path, agentgate: Agentgate) -> None:
    (passing / "lint.json").write_text(
        json.dumps(
            [
                {
                    "code": "E501",
                    "message": "Line too long",
                    "filename": str(passing / "a.py"),
                    "location": {"row": 3, "column": 1},
                }
            ]
        )
    )
    run = agentgate("verify", "--format", "markdown")
    assert run.code == 1
    assert "| Gate | Status | Summary | Time |" in run.out
    assert "| lint | ❌ fail | 1 error (max 0), 0 warnings (max 50) |" in run.out
    assert "- `a.py:3` `E501` Line too long" in run.out
    assert "### What the agent is told" in run.out


def test_claim_and_max_chars(passing: Path, agentgate: Agentgate) -> None:
    (passing / "pass.src").write_text(
        '<testsuite><testcase classname="t" name="a"><failure message="boom"/></testcase>'
        "</testsuite>"
    )
    run = agentgate(
        "verify", "--format", "json", "--claim", "Done. All tests pass.", "--max-chars", "900"
    )
    assert run.code == 1
    text = run.verdict()["continuation"]
    assert 'You said: "All tests pass." The gate measured otherwise: test: 0 of 1' in text
    assert len(text) <= 900


def test_exit_codes_for_usage_and_config_errors(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config("gates:\n  bulid: {command: make}\n")
    run = agentgate("verify")
    assert run.code == 2
    assert "did you mean 'build'?" in run.err and run.out == ""
    assert agentgate().code == 2
    (project / "agentgate.yml").unlink()
    flags = agentgate("verify", "--lint-format", "ruff", "--junit", "j.xml")
    assert flags.code == 2 and "--lint-format: goes with --lint FILE" in flags.err
    with pytest.raises(SystemExit) as exc:
        main(["verify", "--max-chars", "12"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["verify", "--max-chars", "many"])
    assert exc.value.code == 2


def test_output_that_cannot_be_written_is_an_output_error(
    passing: Path, agentgate: Agentgate
) -> None:
    (passing / "blocker").write_text("a file, not a directory")
    run = agentgate("verify", "--output", "blocker/verdict.json")
    assert run.code == 2
    # It names the file and what is in the way, says what to do, and blames no configuration.
    assert run.err == (
        "agentgate: error: --output blocker/verdict.json: cannot write the verdict: "
        "blocker is a file, not a folder; choose another path\n"
    )
    assert "config" not in run.err
    # The verdict was made: it is still shown, not lost with the file.
    assert run.out.startswith("agentgate: PASS")
    # A folder is refused before anything runs (no command, no attempt counted).
    history = passing / ".agentgate" / "history.jsonl"
    verdicts = history.read_text().count("\n")
    (passing / "out").mkdir()
    run = agentgate("verify", "--output", "out", "--task", "T")
    assert run.code == 2 and run.out == ""
    assert "--output out: is a folder; name the file to write the verdict to" in run.err
    assert history.read_text().count("\n") == verdicts


def test_schema_command(agentgate: Agentgate, verdict_schema: dict[str, Any]) -> None:
    run = agentgate("schema")
    assert run.code == 0
    assert json.loads(run.out) == verdict_schema
    assert run.out == schema_text()


def test_everything_skipped_is_a_failure(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config("gates:\n  build: {command: 'true'}\n")
    run = agentgate("verify", "--no-run", "--format", "json")
    assert run.code == 1
    verdict = run.verdict()
    assert verdict["gates"][0]["status"] == "skipped"
    assert any("nothing was verified" in n for n in verdict["notices"])


@pytest.mark.parametrize(
    ("sample", "passed", "failed", "errors", "skipped", "flaky", "xfailed"),
    [
        ("junit/pytest-xunit1.xml", 3, 2, 2, 1, 0, 1),
        ("junit/pytest-xunit2.xml", 3, 2, 2, 1, 0, 1),
        ("junit/pytest-teardown-dup.xml", 1, 0, 1, 0, 0, 0),
        ("junit/surefire-flaky.xml", 2, 1, 0, 1, 1, 0),
        ("junit/gotestsum.xml", 6, 1, 0, 1, 1, 0),
        ("junit/cargo-libtest-junit.xml", 1, 2, 0, 0, 0, 0),
        ("js/jest-junit.xml", 4, 1, 0, 1, 0, 0),
        ("js/vitest-junit.xml", 3, 1, 0, 2, 0, 0),
        ("js/mocha-junit.xml", 5, 1, 0, 2, 0, 0),
        ("js/mocha-junit-default.xml", 5, 1, 0, 0, 0, 0),
    ],
)
def test_no_run_with_junit_dialects(
    sample: str,
    passed: int,
    failed: int,
    errors: int,
    skipped: int,
    flaky: int,
    xfailed: int,
    project: Path,
    agentgate: Agentgate,
) -> None:
    run = agentgate("verify", "--no-run", "--junit", str(DATA / sample), "--format", "json")
    actual = run.gate("test")["actual"]
    counts = [actual[k] for k in ("passed", "failed", "errors", "skipped", "flaky", "xfailed")]
    assert counts == [passed, failed, errors, skipped, flaky, xfailed]
    assert actual["total"] == passed + failed + errors + skipped + xfailed
    assert run.code == 1  # every sample has a deliberate failure
    assert any("no configuration file" in n for n in run.verdict()["notices"])


def test_no_run_with_js_reports(project: Path, agentgate: Agentgate) -> None:
    run = agentgate(
        "verify",
        "--no-run",
        "--lint",
        str(DATA / "js" / "eslint.json"),
        "--coverage",
        str(DATA / "js" / "coverage-summary.json"),
        "--profile",
        "relaxed",
        "--format",
        "json",
    )
    lint, coverage = run.gate("lint"), run.gate("coverage")
    assert lint["actual"] == {"errors": 3, "warnings": 1}
    assert lint["status"] == "pass"  # relaxed tolerates 5 errors
    assert coverage["actual"]["lines"] == pytest.approx(40 * 100 / 44)
    assert coverage["actual"]["branches"] == pytest.approx(11 * 100 / 14)
    assert coverage["actual"]["functions"] == 100.0
    assert coverage["status"] == "pass"
    assert run.code == 0
    strict = agentgate(
        "verify", "--no-run", "--lint", str(DATA / "js" / "eslint.json"), "--profile", "strict"
    )
    assert strict.code == 1
    assert "Parsing error: Unexpected keyword 'return'" in strict.out


def test_real_console_script_and_module(project: Path, write_config: WriteConfig) -> None:
    write_config("profile: strcit\n")
    script = Path(sys.executable).with_name("agentgate")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "pytest_agentgate"]
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run(
        [*command, "verify"], capture_output=True, text=True, cwd=project, env=env, timeout=60
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "did you mean 'strict'?" in proc.stderr
    version = subprocess.run(
        [sys.executable, "-m", "pytest_agentgate", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert version.returncode == 0
    assert version.stdout.strip() == f"agentgate {__version__}"


@pytest.mark.parametrize("args", [["explain"], ["verify"]])
def test_a_closed_stdout_is_no_traceback(passing: Path, args: list[str]) -> None:
    # `agentgate explain | head -1`: the reader has gone before agentgate writes.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest_agentgate", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=passing,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
    # A verdict keeps its own exit status: this one passes.
    assert proc.returncode == (0 if args == ["verify"] else 1)


def test_interrupt_and_module_entry(
    passing: Path,
    agentgate: Agentgate,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import importlib

    from pytest_agentgate import engine

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(engine, "run", interrupted)
        run = agentgate("verify")
    assert run.code == 130 and "interrupted" in run.err
    monkeypatch.setattr(sys, "argv", ["agentgate", "--version"])
    monkeypatch.setattr(sys, "path", list(sys.path))  # __main__ drops the current directory
    monkeypatch.delitem(sys.modules, "pytest_agentgate.__main__", raising=False)
    with pytest.raises(SystemExit) as exc:  # `python -m pytest_agentgate`, in-process
        importlib.import_module("pytest_agentgate.__main__")
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"agentgate {__version__}"


def test_stats_output_that_cannot_be_written(project: Path, agentgate: Agentgate) -> None:
    (project / "blocker").write_text("a file")
    run = agentgate("stats", "--output", "blocker/stats.md", "--format", "markdown")
    assert run.code == 2 and run.out == ""
    assert "--output blocker/stats.md: cannot write the stats: blocker is a file" in run.err


def test_no_command_prints_the_help_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: agentgate [-h] [--version] COMMAND ...")
    # Every subcommand is listed, in the order of COMMANDS.
    listed = [ln.split()[0] for ln in err.splitlines() if re.match(r"    \S", ln)]
    assert listed == [
        "verify",
        "hook",
        "install-hook",
        "github",
        "block",
        "reset",
        "stats",
        "schema",
        "explain",
        "init",
    ]
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("usage: agentgate") and "COMMAND" in out


def test_every_subcommand_module_is_assembled() -> None:
    from pytest_agentgate.cli import (
        block,
        explain,
        github,
        hook,
        init,
        install_hook,
        reset,
        schema,
        stats,
        verify,
    )
    from pytest_agentgate.cli.main import COMMANDS, build_parser

    assert (
        verify,
        hook,
        install_hook,
        github,
        block,
        reset,
        stats,
        schema,
        explain,
        init,
    ) == COMMANDS
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [
        "verify",
        "hook",
        "install-hook",
        "github",
        "block",
        "reset",
        "stats",
        "schema",
        "explain",
        "init",
    ]
    for name in ("verify", "explain", "init"):
        profile = next(a for a in sub.choices[name]._actions if a.dest == "profile")
        assert profile.choices is PROFILE_NAMES


class _Unavailable(AgentgateError):
    exit_code = 4


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (AgentgateError("plain"), 2),
        (LedgerError("a ledger mistake"), 2),
        (_Unavailable("its own code"), 4),
        (RegistryError("two plugins claim 'ruff'"), 2),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
)
def test_an_agentgate_error_is_its_message_and_its_exit_code(
    error: Exception, code: int, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    from pytest_agentgate.cli import schema

    def fail(args: object) -> int:
        raise error

    monkeypatch.setattr(schema, "run", fail)
    run = agentgate("schema")
    assert run.code == code
    assert run.err == f"agentgate: error: {error}\n" and run.out == ""


def test_a_bug_is_one_paragraph_with_the_version_and_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_agentgate.cli import schema

    def fail(args: object) -> int:
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(schema, "run", fail)
    monkeypatch.delenv("AGENTGATE_DEBUG", raising=False)
    assert main(["schema"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentgate: internal error: RuntimeError at test_cli.py:")
    assert ": a bug over two lines. This is a bug in agentgate " + __version__ in err
    assert "AGENTGATE_DEBUG=1" in err and "Traceback" not in err and err.count("\n") == 1
    monkeypatch.setenv("AGENTGATE_DEBUG", "1")
    with pytest.raises(RuntimeError, match="a bug"):
        main(["schema"])


def test_version_stays_import_light() -> None:
    code = (
        "import sys\n"
        "from pytest_agentgate.cli.main import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ['yaml', 'pytest', 'pytest_agentgate.engine', 'pytest_agentgate.render',\n"
        "         'pytest_agentgate.config.resolve', 'pytest_agentgate.process']\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.splitlines() == [f"agentgate {__version__}", "[]"]


def test_an_output_file_is_written_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk while writing --output leaves the old file whole and no temporary file."""
    import errno

    from pytest_agentgate.cli._output import write_output
    from pytest_agentgate.errors import OutputError

    target = tmp_path / "verdict.json"
    target.write_text('{"old": true}\n')

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OutputError, match="No space left on device"):
        write_output(target, '{"new": true}', "the verdict")
    assert target.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["verdict.json"]


def test_an_output_that_is_no_file_is_written_to_not_replaced(tmp_path: Path) -> None:
    """`--output /dev/null` (or `/dev/stdout`, or a pipeline's FIFO) is written to: an atomic
    write renamed a file over it, and as root the machine's /dev/null became a regular file.
    A FIFO nobody reads is an error, not a hang."""
    import stat
    import threading

    from pytest_agentgate.cli._output import write_output
    from pytest_agentgate.errors import OutputError

    fifo = tmp_path / "verdict.fifo"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match=r"verdict\.fifo: cannot write the verdict"):
        write_output(fifo, "{}", "the verdict")
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    for _ in range(200):  # until the reader has the FIFO open
        try:
            write_output(fifo, '{"status": "pass"}', "the verdict")
            break
        except OutputError:
            threading.Event().wait(0.01)
    reader.join(10)
    assert got == ['{"status": "pass"}\n']
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    write_output(Path(os.devnull), "{}", "the verdict")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
