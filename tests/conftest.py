"""Shared fixtures: throwaway projects, the CLI run in-process, gate inputs, the verdict schema."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _helpers import PY, CliRun

from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import CollectContext
from pytest_agentgate.process import CommandResult, CommandSpec
from pytest_agentgate.profiles import defaults_for
from pytest_agentgate.pytest_plugin import compiled, start, startup, tampering
from pytest_agentgate.registry import Registry, get_registry

# The plugin's modules that keep state for a run, imported once before any test: pytester's
# in-process runs drop the modules they imported when they end, and a module imported again
# is another object (its run's start time another) than the one a test module already holds.
KEPT_IMPORTED = (compiled, start, startup, tampering)

# -- the user's state directory --------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def _user_state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """agentgate keeps a copy of the attempts in the user's state directory: never the real one
    in a test. Every process the tests start (pytester, subprocess) inherits it too."""
    home = tmp_path_factory.mktemp("user-state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENTGATE_STATE_HOME", str(home))
        yield home


@pytest.fixture
def fresh_state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's state directory of the test's own: harness sessions ("sess-1") and tasks of one
    test are never those of another (a session is gated where it started)."""
    home = tmp_path / "user-state-of-the-test"
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def _not_inside_an_agentgate_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """When agentgate gates this suite, its run id and its guard are in the environment (and
    this session's JUnit report carries the id, which is the point); the runs the tests make
    are their own, never nested in the run that gates the suite, and run their commands with
    the Python they name."""
    monkeypatch.delenv("AGENTGATE_RUN_ID", raising=False)
    monkeypatch.delenv("AGENTGATE_RUNNING", raising=False)
    monkeypatch.delenv("AGENTGATE_PYTHON", raising=False)  # the GitHub Action's


# -- the verdict schema ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def verdict_schema() -> dict[str, Any]:
    from pytest_agentgate.cli.schema import schema_text

    schema: dict[str, Any] = json.loads(schema_text())
    return schema


@pytest.fixture(scope="session")
def check_verdict(verdict_schema: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Validate a verdict document against the shipped schema and return it."""
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(verdict_schema)
    validator = Draft202012Validator(verdict_schema)

    def check(doc: dict[str, Any]) -> dict[str, Any]:
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, "verdict does not match the schema:\n" + "\n".join(errors)
        return doc

    return check


# -- projects and the CLI -------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project, the working directory of the test. Its ``.git`` stops config lookup."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return root


@pytest.fixture
def write_config(project: Path) -> Callable[[str], Path]:
    """Write ``agentgate.yml`` in the project; ``{py}`` becomes this interpreter."""

    def write(text: str) -> Path:
        path = project / "agentgate.yml"
        path.write_text(text.replace("{py}", PY), encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session", autouse=True)
def _no_adoption_in_the_test_processes() -> Iterator[None]:
    """agentgate's own processes adopt what their commands leave running
    (``process.adopt_orphans``). A test process that runs the CLI in-process must not: it
    would become the parent of every later test's orphans. Adoption is tested in processes of
    its own (test_process.py, tests_e2e/tools/test_stray_process_door.py)."""
    from pytest_agentgate import engine

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "adopt_orphans", lambda: False)
        yield


@pytest.fixture
def agentgate(
    capsys: pytest.CaptureFixture[str], check_verdict: Callable[[dict[str, Any]], dict[str, Any]]
) -> Callable[..., CliRun]:
    """Run ``agentgate ARGS`` in-process; a JSON verdict on stdout is checked against the schema."""
    from pytest_agentgate.cli.main import main

    def run(*args: str) -> CliRun:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        result = CliRun(code, captured.out, captured.err)
        if "--format" in args and args[args.index("--format") + 1] == "json":
            check_verdict(result.verdict())
        return result

    return run


# -- gate inputs for unit tests -------------------------------------------------------------


@pytest.fixture(scope="session")
def registry() -> Registry:
    return get_registry()


@pytest.fixture
def command_result(tmp_path: Path) -> Callable[..., CommandResult]:
    """A finished command, as process.run_commands would report it."""

    def make(
        command: str = "cmd",
        exit_code: int | None = 0,
        stdout: str = "",
        stderr: str = "",
        **extra: Any,
    ) -> CommandResult:
        spec = CommandSpec(key="gate", command=command, cwd=tmp_path)
        return CommandResult(
            spec, exit_code, extra.pop("duration_s", 0.25), stdout, stderr, **extra
        )

    return make


@pytest.fixture
def gate_input(tmp_path: Path, registry: Registry) -> Callable[..., CollectContext]:
    """A CollectContext for one gate rooted at tmp_path; thresholds start from the profile."""

    def make(
        kind: str,
        *,
        result: CommandResult | None = None,
        command: str | None = None,
        reports: tuple[str, ...] | list[str] = (),
        fmt: str | None = None,
        thresholds: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
        profile: str = "standard",
        ran: bool = True,
        started_at: float | None = None,
        commands_run: tuple[str, ...] = (),
        name: str | None = None,
        timeout: float = 600.0,
    ) -> CollectContext:
        if result is not None and command is None:
            command = result.spec.command
        config = GateConfig(
            name=name or kind,
            kind=kind,
            command=command,
            timeout=timeout,
            reports=list(reports),
            format=fmt,
            thresholds={**defaults_for(profile, kind), **(thresholds or {})},
            options=dict(options or {}),
        )
        return CollectContext(
            config=config,
            root=tmp_path,
            result=result,
            ran_commands=ran,
            started_at=time.time() if started_at is None else started_at,
            registry=registry,
            commands_run=commands_run,
        )

    return make
