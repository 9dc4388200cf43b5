"""What every gate kind shares: its option schema, the evidence it collects, and its protocol.

A gate kind has two parts (docs/ARCHITECTURE.md, "Collect, then judge"):

- ``collect(context) -> Evidence`` does all the I/O: it reads the command's result, globs and
  reads report files, checks that they were written by this run, and parses them;
- ``judge(config, evidence) -> GateResult`` is pure: thresholds and evidence in, one result out.
  It touches no file, so the same evidence is judged the same way by every door.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from pytest_agentgate.config.model import Config, GateConfig

# Re-exported: a gate kind declares its options with them (config/model.py keeps them, so the
# configuration never imports the gates).
from pytest_agentgate.config.model import Option as Option
from pytest_agentgate.config.model import OptionType as OptionType
from pytest_agentgate.git import BaseMissing, Change, Repo
from pytest_agentgate.process import CommandResult
from pytest_agentgate.reports.model import CoverageReport, LintReport, ReportError
from pytest_agentgate.verdict import GateResult

# Keys every gate accepts, whatever its kind.
COMMON_OPTIONS: tuple[Option, ...] = (
    Option("command", "str", "shell command to run; its exit code is always part of the evidence"),
    Option("timeout", "number", "seconds before the command and all its children are killed"),
    Option("enabled", "bool", "false skips the gate"),
    Option("blocking", "bool", "false reports the gate without failing the verdict"),
    Option("env", "env", "extra environment variables for the command"),
)
REPORT_OPTIONS: tuple[Option, ...] = (
    Option("report", "globs", "report file(s) to read after every command has finished"),
    Option("format", "str", "report format (see `agentgate explain`)"),
)

# For reports that arrive as shards (a CI matrix): judging part of the suite is not allowed.
SHARD_OPTIONS: tuple[Option, ...] = (
    Option("expected_files", "int", "exactly this many report files must match"),
    Option("min_files", "int", "at least this many report files must match"),
)


class ReportReaders(Protocol):
    """The report parsers of every registered format (the registry), as collectors use them."""

    def parse_lint(self, text: str, source: str, fmt: str | None) -> LintReport:
        """Parse one lint report, recognising its format from the content when not given."""
        ...

    def read_coverage_many(self, paths: list[Path], fmt: str | None, root: Path) -> CoverageReport:
        """One coverage report from one or more files (shards of one run are merged)."""
        ...


# The change being gated (the repository and what changed since the base), why there is no
# base, or None outside a git repository.
ChangeFound = tuple[Repo, Change] | BaseMissing | None
_T = TypeVar("_T")


class Later(Generic[_T]):
    """A value computed in a thread of its own from now on; :meth:`get` waits for it (and
    raises what computing it raised). The engine reads the change this way while the
    collectors read their reports, so that neither waits for the other."""

    def __init__(self, compute: Callable[[], _T]) -> None:
        self._compute = compute
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="agentgate-later", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._compute()
        except BaseException as exc:  # handed to whoever asks for the value
            self._error = exc

    def get(self) -> _T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set when no error was


@dataclass
class CollectContext:
    """Everything a collector may look at: where the project is and what this run did."""

    config: GateConfig
    root: Path
    result: CommandResult | None  # None when the gate has no command or commands were not run
    ran_commands: bool
    started_at: float  # wall-clock time (time.time()) when commands started
    registry: ReportReaders
    # Every command that ran this run (all gates): a report named in one of them must be fresh
    # even when the gate reading it has no command of its own (coverage written by the tests).
    commands_run: tuple[str, ...] = ()
    # The change being gated (see ChangeFound), computed once per run by the engine: possibly
    # still being read (a Later) when the collector starts; read it through ``change``.
    change_found: ChangeFound | Later[ChangeFound] = None
    # The whole configuration, for gates that look beyond their own (integrity).
    project: Config | None = None
    # This run's id, given to every command as AGENTGATE_RUN_ID (pytest_plugin/witness.py).
    run_id: str | None = None
    # The environment the commands ran with, on top of the caller's (PATH of a virtualenv).
    command_env: dict[str, str] | None = None
    # Who asks (``cli``, ``hook:claude``), the agent's last message and its session's
    # transcript, as the door gave them (the session gate reads them).
    door: str | None = None
    claim: str | None = None
    transcript: Path | None = None

    @property
    def change(self) -> ChangeFound:
        found = self.change_found
        return found.get() if isinstance(found, Later) else found


@dataclass
class Evidence:
    """What a collector found for one gate; every kind's evidence extends it.

    ``command`` is the run of the gate's own command (its exit code is always evidence);
    ``missing`` says why there is nothing to judge (the gate is skipped); ``error`` is the
    reason the evidence could not be read (the gate fails and says how to produce it).
    """

    root: Path
    command: CommandResult | None = None
    missing: str | None = None
    error: ReportError | None = None


EvidenceT = TypeVar("EvidenceT", bound=Evidence)


class GateKind(Protocol[EvidenceT]):
    """A gate kind, registered through the ``agentgate_gate_kinds`` hook.

    Optional: ``independent = True`` when its evidence needs no command (it is collected while
    the commands run); ``prepare(config, root)``, called while the commands run, to start
    something its collector will need (the coverage gate starts coverage.py's reporter);
    ``complete(context, evidence)``, called with the evidence a door measured itself in place of
    the collector's, to add what only the change tells (the coverage gate's patch coverage).
    """

    name: str
    options: tuple[Option, ...]
    # True when the command's stdout is the report unless a report file is configured.
    stdout_report: bool

    def collect(self, context: CollectContext) -> EvidenceT:
        """All the I/O of the gate: read the command's result and the reports."""
        ...

    def judge(self, config: GateConfig, evidence: EvidenceT) -> GateResult:
        """Pure: the gate's result from its thresholds and the evidence."""
        ...
