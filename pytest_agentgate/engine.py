"""The pipeline: config -> plan -> run commands -> collect evidence -> judge -> conclude -> Verdict.

Every door calls it the same way, with its own name, task and claim (a :class:`Request`), and
renders the one Verdict it returns; it knows no door. docs/ARCHITECTURE.md draws it.

- :meth:`Pipeline.run_commands` runs the gates' commands (a door may run them in the
  background, as the pytest plugin does while the tests run);
- :meth:`Pipeline.early` collects and judges some gates at once, before the commands have run
  (the pytest plugin judges the integrity gate before the project's conftest.py is imported);
- :meth:`Pipeline.verdict` collects each gate's evidence (the I/O), judges it (pure), and
  concludes the Verdict (pure); a door that records (every door but the library call) has the
  attempts ledger count it and the history keep it. A gate judged early is judged again from
  the evidence collected then, not collected twice.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import sys
import threading
import time
import traceback
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_agentgate.commands import RUN_ID_ENV, command_python, python_environment
from pytest_agentgate.config.model import Config, GateConfig
from pytest_agentgate.config.resolve import add_integrity_gate
from pytest_agentgate.gates.base import ChangeFound, CollectContext, Evidence, Later
from pytest_agentgate.gates.collect import STALE_SLACK_S
from pytest_agentgate.gates.judging import UNMEASURED, new_result, skipped
from pytest_agentgate.gates.session import check_claims
from pytest_agentgate.git import Base, BaseMissing, Change, GitError, Repo, unreadable_repository
from pytest_agentgate.process import (
    CommandResult,
    CommandSpec,
    StatusReporter,
    adopt_orphans,
    end_strays,
    run_commands,
)
from pytest_agentgate.redact import Cleaner, secret_values
from pytest_agentgate.registry import Registry, get_registry
from pytest_agentgate.render.continuation import render_continuation
from pytest_agentgate.state import ledger, task_base
from pytest_agentgate.state.ledger import Decision
from pytest_agentgate.state.storage import LocalStorage, Storage, default_storage
from pytest_agentgate.state.task import TaskRef
from pytest_agentgate.verdict import GateResult, Verdict, human_needed, overall_status

if TYPE_CHECKING:
    from pytest_agentgate.integrity.base_count import BaseCount, Target
    from pytest_agentgate.state.cache import CacheKey

NOTHING_VERIFIED = (
    "no gate produced any evidence, so nothing was verified: configure at least one gate "
    "with a command or a report"
)


@dataclass
class Request:
    """One door's call: the project's configuration, and who asks.

    ``door`` names the front door (``cli``, ``pytest``, ``hook:claude``, ``action``,
    ``library``); attempts are counted per door. ``task`` is what they count against (``--task``,
    the harness session, the pull request); ``claim`` is the agent's final message, quoted when
    the gate disproves it. ``door_evidence`` names the gates whose evidence the door measures
    itself (the pytest session is the test run): their commands are not run and their reports
    not read. ``record``: count the attempt and keep the verdict in the history (every door does;
    the library call ``verify()`` does not unless asked). ``transcript``: the agent session's
    JSON Lines transcript (the harness's ``transcript_path``). With a transcript or a claim the
    session gate is judged too (gates/session.py); without either it is not.
    """

    config: Config
    door: str = "library"
    # The base of the change, when the door knows it (``--base``, the pull request's base).
    base: str | None = None
    # The commit the working tree must hold, when the door knows it (the pull request's head):
    # a tree without it (the base checked out by a fork-safe stage) has no change to judge.
    head: str | None = None
    task: str | None = None
    claim: str | None = None
    transcript: Path | None = None
    run: bool = True
    door_evidence: Collection[str] = ()
    record: bool = False
    storage: Storage | None = None
    # Reuse the judged gates of an identical earlier run (state/cache.py): the authoritative
    # doors ask for it; --no-cache turns it off.
    cache: bool = False
    # Measure what coverage costs the test gate (state/coverage_cost.py): its command runs once
    # more without coverage, then the gates run one at a time; no earlier run is reused.
    coverage_cost: bool = False


@dataclass(frozen=True)
class Plan:
    """The gates to judge and the commands to run for them."""

    config: Config
    commands: list[CommandSpec]
    run: bool


@dataclass
class Pipeline:
    """One run of the pipeline for one request."""

    request: Request
    registry: Registry = field(default_factory=get_registry)
    plan: Plan = field(init=False)
    results: dict[str, CommandResult] = field(default_factory=dict)
    started_at: float = field(default_factory=time.time)
    # Given to every command as AGENTGATE_RUN_ID: a report carrying it was written by this run.
    run_id: str = field(default_factory=lambda: secrets.token_hex(12))
    _clock: float = field(default_factory=time.monotonic)
    # What :meth:`early` collected, per gate name: the verdict's evidence for those gates.
    _early: dict[str, Evidence | GateResult] = field(default_factory=dict)
    # The change (base to working tree), when it was read while the commands ran.
    _change: tuple[Repo, Change] | BaseMissing | None = None
    _change_read: bool = False
    # The gates collected while the commands ran, and the tree before and after the commands.
    _alongside_names: list[str] = field(default_factory=list)
    _tree_before: tuple[str, str] = ("", "")
    _tree_after: tuple[str, str] | None = None
    # The verdict cache's key for this run, once :meth:`reuse` has looked (None: no caching),
    # and what it was made of (state/cache.py).
    _cache_key: CacheKey | None = None
    _cache_tree: tuple[str, str] | None = None
    _cache_inputs: tuple[str, list[tuple[str, str]], dict[str, str]] = ("", [], {})
    # When the run whose judged gates this verdict reuses was made (None: judged now).
    _reused_at: float | None = None
    # --coverage-cost: how the measured test gate's command went without coverage.
    _without_coverage: CommandResult | None = None
    # The test gates' counts at the base (integrity/base_count.py), measured beside the
    # commands; the thread a door started for them; set to stop them early.
    _base_counts: dict[str, BaseCount] = field(default_factory=dict)
    _counted: bool = False
    _counting: threading.Thread | None = None
    _count_cancel: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.request.config = with_session(self.request)
        if self.request.task is not None:
            # A task has a base even outside git (the snapshot of its first verdict).
            add_integrity_gate(self.request.config, has_base=True)
        self.plan = make_plan(
            self.request.config,
            self.registry,
            run=self.request.run,
            door_evidence=self.request.door_evidence,
            run_id=self.run_id,
        )

    def run_commands(
        self, status: StatusReporter | None = None, *, cancel: threading.Event | None = None
    ) -> dict[str, CommandResult]:
        """Run the plan's commands; ``cancel`` (set from another thread) ends them early."""
        self.started_at = time.time()
        if self.plan.commands:
            with contextlib.suppress(OSError):
                # A read-only project can still be gated; a command that needs the folder says so.
                LocalStorage(self.plan.config.root).ensure()
            alongside = self._alongside()
            # While coverage's cost is measured, no command shares the machine with another.
            serial = 1 if self._without_coverage is not None else None
            # In agentgate's own process (not a library call inside someone's program), what
            # the commands leave running is adopted, and stopped once they are over: nothing
            # a test run starts outlives the verdict to change the tree it judged.
            adopting = self.request.door != "library" and adopt_orphans()
            try:
                self.results = run_commands(
                    self.plan.commands, status=status, cancel=cancel, max_workers=serial
                )
            except BaseException:
                self._count_cancel.set()  # the base's collection stops with the commands
                raise
            finally:
                if cancel is not None and cancel.is_set():
                    self._count_cancel.set()
                alongside.join()
            if adopting and (strays := end_strays()):
                self.request.config.notices.append(
                    f"{len(strays)} process{'es' if len(strays) > 1 else ''} the gate commands "
                    "started outside their session kept running after them and "
                    f"{'were' if len(strays) > 1 else 'was'} stopped: {'; '.join(strays[:5])}"
                )
            if not (self._alongside_names or self._cache_key is not None):
                return self.results
            self._tree_after = self._tree()
            if self._tree_after is None or self._tree_after[0] != self._tree_before[0]:
                # The commands changed the tree (or it cannot be told): what was read while
                # they ran is not what the verdict must judge. Read it again, afterwards.
                self._change_read = False
                for name in self._alongside_names:
                    self._early.pop(name, None)
        return self.results

    def measure_without_coverage(self, status: StatusReporter | None = None) -> None:
        """Run the test gate's command once without coverage, alone, before the gates: the
        first half of ``agentgate verify --coverage-cost`` (the verdict shows the other).
        Anything written by it, a report in the project's own pytest options, is written again
        by the gates' run. Raises AgentgateError when there is no such command to run."""
        from pytest_agentgate.commands import without_coverage
        from pytest_agentgate.errors import AgentgateError

        config = self.request.config
        spec = self._measured_test()
        if spec is None:
            raise AgentgateError(
                "--coverage-cost: no test gate runs a command that measures coverage "
                "(`coverage run ... -m pytest`, `pytest --cov`); there is nothing to compare"
            )
        derived = without_coverage(spec.command, spec.env)
        if derived is None:
            raise AgentgateError(
                f"--coverage-cost: cannot tell how to run the {spec.key} gate's command without "
                f"coverage: {spec.command}. agentgate reads `[python -m] coverage run [options] "
                "-m pytest ...` and `pytest --cov ...` (with `&&` between steps), without "
                "redirections or variables"
            )
        # A run id of its own: a report this run writes (a --junitxml in the project's own
        # addopts) is never taken for the gates' run.
        plain = dataclasses.replace(
            spec,
            key=f"{spec.key} (without coverage)",
            command=derived,
            env={**(spec.env or {}), RUN_ID_ENV: secrets.token_hex(12)},
        )
        with contextlib.suppress(OSError):
            LocalStorage(config.root).ensure()
        self._without_coverage = run_commands([plain], status=status)[plain.key]
        # ... and the gates' run starts more than the freshness check's slack after it ended,
        # so a report the gates' run does not write again is stale (gates/collect.py).
        time.sleep(STALE_SLACK_S + 0.05)

    def _measured_test(self) -> CommandSpec | None:
        """The command ``--coverage-cost`` measures: the first test gate's that measures
        coverage (``coverage run``, ``pytest --cov``)."""
        from pytest_agentgate.commands import coverage_options

        kinds = {g.name: g.kind for g in self.request.config.gates}
        return next(
            (
                spec
                for spec in self.plan.commands
                if kinds.get(spec.key) == "test" and coverage_options(spec.command, spec.cwd)
            ),
            None,
        )

    def _coverage_cost_notices(self, gates: list[GateResult]) -> None:
        """What coverage costs the test gate ``--coverage-cost`` measures: measured now, as
        measured earlier for the same command, or how to measure it when the tests took a
        while and it can be measured (state/coverage_cost.py)."""
        from pytest_agentgate.commands import (
            coverage_options,
            runs_this_interpreter,
            without_coverage,
        )
        from pytest_agentgate.state import coverage_cost

        config = self.request.config
        spec = self._measured_test()
        if spec is None or not self.plan.run or spec.key in self.request.door_evidence:
            return  # nothing ran under coverage here (--no-run; the pytest session's own)
        gate = next((g for g in gates if g.name == spec.key), None)
        if gate is None or gate.status == "skipped":
            return
        if self._without_coverage is not None:
            notice, timed = self._measured_cost(gate.name, spec.command)
            if not timed:
                config.notices.append(notice)
                return
        elif (kept := coverage_cost.load(config.root, spec.command)) is not None:
            notice = kept.describe(gate.name, now=False)
        elif (gate.duration_s or 0) >= coverage_cost.HINT_AFTER_S and without_coverage(
            spec.command, spec.env
        ):
            notice = coverage_cost.hint(gate.name, gate.duration_s or 0)
        else:
            return
        env = {**os.environ, **(spec.env or {})}
        measured = coverage_options(spec.command, config.root) or {}
        if runs_this_interpreter(spec.command, env):
            # The tests ran with this Python: what coverage.py could measure them with.
            python = (sys.version_info.major, sys.version_info.minor)
            notice += coverage_cost.tracer_note(python, measured.get("branch") is True, env)
        config.notices.append(notice)

    def _measured_cost(self, name: str, command: str) -> tuple[str, bool]:
        """The notice of a measurement made now, and whether both runs could be timed."""
        from pytest_agentgate.state import coverage_cost

        plain = self._without_coverage
        assert plain is not None
        with_coverage = self.results.get(name)
        for result, what in ((plain, "without"), (with_coverage, "with")):
            if result is None or result.exit_code not in (0, 1) or result.timed_out:
                how = "did not run" if result is None else _how_it_ended(result)
                why = f"the tests {what} coverage {how}, so the times do not compare"
                return coverage_cost.not_measured(name, why), False
        assert with_coverage is not None
        # Rounded as they are kept, so that this verdict and later ones show the same figures.
        cost = coverage_cost.CoverageCost(
            command,
            round(with_coverage.duration_s, 3),
            round(plain.duration_s, 3),
            round(time.time(), 3),
        )
        try:
            coverage_cost.save(self.request.config.root, cost)
        except OSError as exc:
            self.request.config.notices.append(
                f"{name}: coverage's cost could not be kept in {coverage_cost.COST_FILE}: {exc}"
            )
        return cost.describe(name, now=True), True

    def _tree(self) -> tuple[str, str] | None:
        from pytest_agentgate.state import cache

        return cache.tree_state(self.request.config.root)

    def _alongside(self) -> threading.Thread:
        """Collect the gates that need no command (integrity, session) while the commands run,
        so the verdict does not wait for them afterwards; what they read is the tree the
        commands were given. Warm the readers whose gates do have commands (the coverage gate
        starts coverage.py, which takes a while to import). If anything here fails, the verdict
        collects those gates itself."""
        config = self.request.config
        names, warm = [], []
        for gate in config.gates:
            kind = self.registry.kinds.get(gate.kind)
            if kind is None or not gate.enabled or gate.name in self.request.door_evidence:
                continue
            if getattr(kind, "independent", False) and not gate.command:
                if gate.name not in self._early:
                    names.append(gate.name)
            elif hasattr(kind, "prepare"):
                warm.append((kind, gate))
        # Read alongside only a tree whose change can be told afterwards (git).
        before = self._cache_tree or self._tree()
        if before is None:
            names = []
        else:
            self._tree_before = before
        self._alongside_names = names

        def work() -> None:
            for kind, gate in warm:
                with contextlib.suppress(Exception):
                    kind.prepare(gate, config.root)
            if not names:
                return
            try:
                self._change = find_change(
                    config, self.request.base, task=self.request.task, head=self.request.head
                )
                self._change_read = True
                self.early(names)
            except Exception:  # verdict() reads them again, and reports the bug
                self._change_read = False
                for name in names:
                    self._early.pop(name, None)
            # Then the base's tests are counted, while the commands still run (unless
            # coverage's cost is measured: then nothing shares the machine with them).
            if self._without_coverage is None:
                self.count_base(self._count_cancel)

        thread = threading.Thread(target=work, name="agentgate-alongside", daemon=True)
        thread.start()
        return thread

    def count_base(
        self,
        cancel: threading.Event | None = None,
        door_commands: Mapping[str, tuple[str, Path]] | None = None,
        *,
        collect: bool = True,
        evidence: Mapping[str, Evidence | GateResult] | None = None,
    ) -> None:
        """Count the tests the base's suite selects for each test gate (the integrity gate
        compares them with the run's, gates/integrity.py): kept from an earlier verdict, else
        collected in a checkout of the base (integrity/base_count.py). Needs the integrity
        gate's evidence, collected before (:meth:`early`). ``door_commands``: per test gate the
        door measures itself, the pytest command it is and where it runs. ``collect=False``:
        only what needs no collection (a kept figure, why the base cannot be collected).
        ``evidence``: where the integrity gate's evidence is, if not among the early gates'."""
        from pytest_agentgate.integrity import base_count

        targets = self._count_targets(door_commands or {})
        base = self._integrity_base(self._early if evidence is None else evidence)
        if not targets or base is None:
            return
        try:
            counts = base_count.count_at_base(
                self.request.config.root, base, targets, cancel, collect=collect
            )
        except Exception as exc:  # a bug here costs no verdict: the count is not compared
            why = f"agentgate could not count the base's tests ({exc!r})"
            counts = {t.gate: base_count.BaseCount(t.gate, base.sha, None, why) for t in targets}
        self._base_counts.update(counts)
        self._counted = True

    def start_counting(
        self, cancel: threading.Event, door_commands: Mapping[str, tuple[str, Path]]
    ) -> None:
        """:meth:`count_base` in a thread of its own, for a door whose tests are the session it
        runs (the pytest plugin): the verdict waits for it."""
        if self._counting is None:
            self._count_cancel = cancel
            self._counting = threading.Thread(
                target=self.count_base,
                args=(cancel, door_commands),
                name="agentgate-base-count",
                daemon=True,
            )
            self._counting.start()

    def stop_counting(self, wait: float = 10.0) -> None:
        """Stop the base's collection, if it still runs, and wait (bounded) for its checkout
        to be removed."""
        self._count_cancel.set()
        if self._counting is not None:
            self._counting.join(wait)

    def _count_targets(self, door_commands: Mapping[str, tuple[str, Path]]) -> list[Target]:
        """The test gates whose base is counted: each that runs a command in this run (or is
        the door's own), when an integrity gate judges the change."""
        from pytest_agentgate.integrity.base_count import Target

        config = self.request.config
        if not config.enabled:
            return []
        if not any(g.kind == "integrity" and g.enabled for g in config.gates):
            return []
        specs = {spec.key: spec for spec in self.plan.commands}
        targets = []
        for gate in config.gates:
            if gate.kind != "test" or not gate.enabled:
                continue
            if gate.name in door_commands:
                command, cwd = door_commands[gate.name]
                env = {**command_environment(), **gate.env}
                targets.append(Target(gate.name, command, cwd, env, gate.timeout))
            elif (spec := specs.get(gate.name)) is not None:
                targets.append(Target(gate.name, spec.command, spec.cwd, spec.env, spec.timeout))
        return targets

    @staticmethod
    def _integrity_base(found: Mapping[str, Evidence | GateResult]) -> Base | None:
        """The base the integrity gate judges the change against, in its evidence."""
        from pytest_agentgate.gates.integrity import IntegrityEvidence

        for evidence in found.values():
            if isinstance(evidence, IntegrityEvidence) and evidence.base is not None:
                return evidence.base
        return None

    def early(self, names: Collection[str]) -> list[GateResult]:
        """Collect and judge the gates ``names`` now, before the commands have run.

        For a door that must stop a run before it starts: the pytest plugin judges the integrity
        gate before the project's conftest.py is imported. The evidence collected is kept, and
        :meth:`verdict` judges it again rather than collecting it a second time: the verdict
        says what was judged before the run, not what the run may have changed since.
        """
        config = self.request.config
        gates = [g for g in config.gates if g.name in names]
        if not gates:
            return []
        only = dataclasses.replace(config, gates=gates)
        found = collect(
            Plan(only, [], self.plan.run),
            {},
            self.started_at,
            self.registry,
            {},
            self._change
            if self._change_read
            else find_change(
                only, self.request.base, task=self.request.task, head=self.request.head
            ),
            run_id=self.run_id,
            request=self.request,
            project=config,
        )
        self._early.update(found)
        cleaner = Cleaner(secret_values(os.environ))
        return [cleaner.gate(g) for g in judge(only, found, self.registry)]

    def verdict(self, evidence: Mapping[str, Evidence] | None = None) -> Verdict:
        """Collect, judge and conclude; record the verdict when the request says so.

        ``evidence``: per gate name, what the door measured itself (see ``door_evidence``).
        """
        return self.concluded(self.judged(evidence))

    def judged(self, evidence: Mapping[str, Evidence] | None = None) -> list[GateResult]:
        """Collect and judge: each gate's result, nothing concluded or recorded yet (a door
        that decides from them whether there is a verdict at all: harness/door.py)."""
        from pytest_agentgate.gates.integrity import (
            with_installs,
            with_skipped_tests,
            with_startup_code,
            with_suite_counts,
        )

        config = self.request.config
        change: ChangeFound | Later[ChangeFound]
        if self._change_read:
            change = self._change
        else:
            # Read while the collectors read their reports; a collector that needs the change
            # waits for it then (CollectContext.change).
            judged = list(self._early)
            change = Later(
                lambda: find_change(
                    config,
                    self.request.base,
                    judged=judged,
                    task=self.request.task,
                    head=self.request.head,
                )
            )
        found = collect(
            self.plan,
            self.results,
            self.started_at,
            self.registry,
            {**self._early, **(evidence or {})},
            change,
            run_id=self.run_id,
            request=self.request,
        )
        if isinstance(change, Later):
            # No git process outlives the verdict; an error no collector asked for is moot.
            with contextlib.suppress(Exception):
                change.get()
        if self._counting is not None:
            self._counting.join()
        if not self._counted:
            # Nothing was counted beside the commands: outside git, what needs no collection
            # is still said; after a --coverage-cost run, the base is collected now.
            self.count_base(collect=self._without_coverage is not None, evidence=found)
        # The integrity gate compares the test run's count with the base's: both go into its
        # evidence before it is judged.
        found = with_suite_counts(found, self._base_counts)
        # ...and the startup code the test run's interpreter ran, which only that run sees.
        found = with_startup_code(found)
        # ...and, in a task, the test tools and plugins installed since it began.
        found = with_installs(found, self._installed_since(found))
        # ...and the tests this run skipped, where the change edited them.
        found = with_skipped_tests(found)
        # What leaves agentgate is cleaned once, here: secrets masked, control characters made
        # visible, messages bounded (redact.py).
        cleaner = Cleaner(secret_values(os.environ))
        gates = [cleaner.gate(g) for g in judge(config, found, self.registry)]
        if self._cache_key is not None and not any(
            # A command that ran out of time (or was cut short) says how busy the machine was,
            # not what the tree is: its verdict is not kept.
            r.cancelled or r.cut_short or (r.exit_code or 0) < 0
            for r in self.results.values()
        ):
            self._remember(gates, found)
        return gates

    def _installed_since(self, found: Mapping[str, Evidence | GateResult]) -> list[tuple[str, str]]:
        """The test tools and pytest plugins the test run loaded from distributions installed
        since the task began (integrity/installs.py: reads the task's record, and keeps the
        folders it does not have yet); nothing without a task, or without an integrity gate."""
        from pytest_agentgate.gates.integrity import IntegrityEvidence
        from pytest_agentgate.gates.test import SuiteEvidence

        task = self.request.task
        if task is None or not any(isinstance(e, IntegrityEvidence) for e in found.values()):
            return []
        installs = sorted(
            {entry for e in found.values() if isinstance(e, SuiteEvidence) for entry in e.installs}
        )
        if not installs:
            return []
        from pytest_agentgate.integrity.installs import changes

        root = self.request.config.root
        base = next(
            (e.base for e in found.values() if isinstance(e, IntegrityEvidence) and e.base), None
        )
        repo = Repo.find(root) if base is not None else None
        if repo is None or base is None:
            return changes(root, task, installs)
        return changes(root, task, installs, _reader_at(repo, base))

    def _cache_extra(self) -> str:
        """What else decides the verdict: the door's base, and a task's pinned base
        (state/task_base.py): the same tree is judged against another commit."""
        pinned = None
        if self.request.task is not None:
            repo = Repo.find(self.request.config.root)
            if repo is not None:
                pinned = task_base.pinned(repo.toplevel, self.request.task)
            if repo is not None and pinned is not None:
                # The refs are in the key: a pin where they lead is no other base (and the
                # stop hook reuses the run the agent's own `agentgate verify` made).
                found = repo.resolve_base()
                if isinstance(found, Base) and found.sha == pinned:
                    pinned = None
        # A task whose test environment changed since it began is judged afresh
        # (state/task_env.py): a verdict made without the task compared nothing.
        environment = ""
        if self.request.task is not None:
            from pytest_agentgate.state import task_env

            environment = task_env.changed_since(self.request.config.root, self.request.task)
        return f"{self.request.base}|{pinned or ''}|{environment}"

    def _remember(
        self, gates: list[GateResult], found: Mapping[str, Evidence | GateResult]
    ) -> None:
        """Keep the judged gates under the state the run left the tree in, if the run changed
        nothing but ignored files (a coverage data file), with the files the tests read
        outside the project as they are now; the session gate is never kept."""
        from pytest_agentgate.gates.test import SuiteEvidence
        from pytest_agentgate.state import cache

        config = self.request.config
        before = self._cache_tree
        after = self._tree_after or cache.tree_state(config.root)
        if before is None or after is None or after[0] != before[0]:
            return
        read = [e.read_outside for e in found.values() if isinstance(e, SuiteEvidence)]
        if any(paths is None for paths in read):
            return  # more files read outside the project than can be kept: nothing to key
        outside = sorted({path for paths in read if paths is not None for path in paths})
        key = cache.cache_key(
            config.root, *self._cache_inputs, tree=after, extra=self._cache_extra()
        )
        cache.store(config.root, key, [g for g in gates if g.kind != "session"], outside)

    def reuse(self) -> Verdict | None:
        """The verdict of an identical earlier run (same tree, configuration, tools and
        environment), concluded and recorded afresh; None when there is none (state/cache.py).
        The session gate is judged now: the agent's words are new each time."""
        request, plan = self.request, self.plan
        if not (request.cache and plan.run and plan.commands and not request.door_evidence):
            return None
        from pytest_agentgate.state import cache

        config = request.config
        self._cache_tree = cache.tree_state(config.root)
        if self._cache_tree is None:
            return None
        self._cache_inputs = (
            # The session gate is judged afresh each time: a door with a session (a stop hook)
            # and one without (the agent's own `agentgate verify`) share a run.
            repr(
                dataclasses.replace(
                    config, notices=[], gates=[g for g in config.gates if g.kind != "session"]
                )
            ),
            [
                (spec.command, (spec.env or {}).get("PATH") or os.environ.get("PATH", os.defpath))
                for spec in plan.commands
            ],
            dict(os.environ),
        )
        self._cache_key = cache.cache_key(
            config.root, *self._cache_inputs, tree=self._cache_tree, extra=self._cache_extra()
        )
        found = cache.load(config.root, self._cache_key)
        if found is None:
            self._say_why_not_reused()
            return None
        kept, made_at = found
        fresh = {
            g.name: g for g in self.early([g.name for g in config.gates if g.kind == "session"])
        }
        by_name = {g.name: g for g in kept}
        gates = [fresh.get(g.name) or by_name.get(g.name) for g in config.gates]
        if any(g is None for g in gates):
            return None  # the gate list differs from the cached one: judge afresh
        self._reused_at = made_at
        stamp = time.strftime("%H:%M:%S", time.localtime(made_at))
        config.notices.append(
            f"nothing changed since the run at {stamp} (the same tree, configuration, tools and "
            "environment): its judged gates were reused; --no-cache runs everything again"
        )
        return self.concluded([g for g in gates if g is not None])

    def _say_why_not_reused(self) -> None:
        """When the tree and configuration are those of the last kept run but something else
        differs (the environment, the tools, agentgate itself), say what: a user who expected
        the earlier verdict to be reused learns why everything runs again."""
        from pytest_agentgate.state import cache

        assert self._cache_key is not None
        missed = cache.why_missed(self.request.config.root, self._cache_key)
        if missed is None:
            return
        made_at, differs = missed
        if differs == [cache.EDITED]:
            stamp = time.strftime("%H:%M:%S", time.localtime(made_at))
            self.request.config.notices.append(
                f"the run kept from {stamp} was not reused: {cache.EDITED}"
            )
            return
        if not differs or any(
            cache.PART_NAMES[part] in differs for part in ("tree", "config", "project")
        ):
            return
        stamp = time.strftime("%H:%M:%S", time.localtime(made_at))
        self.request.config.notices.append(
            f"the run at {stamp} judged the same tree and configuration but was not reused: "
            f"{' and '.join(differs)} differ"
        )

    def concluded(self, gates: list[GateResult]) -> Verdict:
        """The verdict of the judged ``gates``, recorded when the request says so."""
        config = self.request.config
        try:
            self._coverage_cost_notices(gates)
        except Exception as exc:  # an informational note never costs the verdict
            problem = f"{type(exc).__name__}: {exc}"
            config.notices.append(f"coverage's cost could not be shown: {problem}")
        cleaner = Cleaner(secret_values(os.environ))
        config.notices[:] = [cleaner.text(n) for n in config.notices]
        claim = cleaner.maybe(self.request.claim)

        def final(decision: Decision | None) -> Verdict:
            return conclude(config, gates, claim=claim, decision=decision)

        if not self.request.record:
            return final(None)
        task = TaskRef(self.request.task, self.request.door) if self.request.task else None
        return ledger.record(
            config,
            task,
            assemble(config, gates, claim=claim),
            final,
            wall_s=time.monotonic() - self._clock,
            storage=self.request.storage or default_storage(config.root),
            source=self.request.door,
            reused_at=self._reused_at,
        )


def run(
    request: Request, registry: Registry | None = None, status: StatusReporter | None = None
) -> Verdict:
    """The whole pipeline once: run the commands, then the verdict."""
    pipeline = Pipeline(request, registry or get_registry())
    if request.coverage_cost:
        pipeline.measure_without_coverage(status)
    elif (reused := pipeline.reuse()) is not None:
        return reused
    pipeline.run_commands(status)
    return pipeline.verdict()


def _how_it_ended(result: CommandResult) -> str:
    if result.timed_out:
        return "ran out of time"
    if result.exit_code is None:
        return "could not start" if result.start_error else "was stopped"
    return f"exited {result.exit_code}"


# -- plan -------------------------------------------------------------------------------------


def with_session(request: Request) -> Config:
    """The request's configuration, with the session gate when the door gave a session (a
    transcript or the agent's last message) and the configuration has it enabled."""
    config = request.config
    session = config.session
    if (
        session is None
        or not session.enabled
        or (request.transcript is None and request.claim is None)
        or any(g.kind == "session" for g in config.gates)
    ):
        return config
    return dataclasses.replace(config, gates=[*config.gates, session])


def _reader_at(repo: Repo, base: Base) -> Callable[[list[Path]], dict[Path, str | None]]:
    """Project files (absolute paths) as ``base`` has them: None where it has none, or where
    git cannot say."""

    def read(paths: list[Path]) -> dict[Path, str | None]:
        named: dict[Path, str] = {}
        for path in paths:
            with contextlib.suppress(ValueError, OSError):
                named[path] = path.resolve().relative_to(repo.toplevel).as_posix()
        try:
            texts = repo.read_at(base, named.values())
        except GitError:
            return {}
        return {path: texts.get(named[path]) if path in named else None for path in paths}

    return read


def command_environment() -> dict[str, str]:
    """Variables every gate command gets on top of the caller's environment.

    A hook or CI step often calls ``.venv/bin/agentgate`` without activating the environment;
    the commands then get that environment's ``bin`` first on PATH, as activation would do.
    An environment that is already active is left alone.

    ``AGENTGATE_PYTHON`` names another Python for the commands (the GitHub Action: agentgate
    runs from a virtualenv of its own, the project's tests with the workflow's Python): its
    folder goes first on PATH, and ``VIRTUAL_ENV`` names its environment when it is a virtual
    environment's. A Python of none (setup-python's) sets no ``VIRTUAL_ENV``: a tool that
    reads it as the active virtual environment would take that Python's installation for one.
    """
    if (python := command_python()) is not None:
        named = {"PATH": os.path.dirname(python) + os.pathsep + os.environ.get("PATH", "")}
        if (venv := python_environment(python)) is not None:
            named["VIRTUAL_ENV"] = venv
        return named
    if sys.prefix == sys.base_prefix or os.environ.get("VIRTUAL_ENV"):
        return {}
    bindir = os.path.dirname(sys.executable)
    return {
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "VIRTUAL_ENV": sys.prefix,
    }


def make_plan(
    config: Config,
    registry: Registry,
    *,
    run: bool = True,
    door_evidence: Collection[str] = (),
    run_id: str | None = None,
) -> Plan:
    """The commands to run: every enabled gate's, except those whose evidence the door has."""
    commands = []
    base_env = command_environment()
    if run_id is not None:
        base_env[RUN_ID_ENV] = run_id
    if run and config.enabled:
        for gate in config.gates:
            if gate.enabled and gate.command and gate.name not in door_evidence:
                stdout_report = registry.kinds[gate.kind].stdout_report and not gate.reports
                commands.append(
                    CommandSpec(
                        key=gate.name,
                        command=gate.command,
                        cwd=config.root,
                        timeout=gate.timeout,
                        env={**base_env, **gate.env} or None,
                        # Only a report on stdout needs to be kept whole.
                        stdout_limit=(64 if stdout_report else 1) * 1024 * 1024,
                    )
                )
    return Plan(config, commands, run)


# -- collect ----------------------------------------------------------------------------------


def find_change(
    config: Config,
    explicit_base: str | None,
    *,
    judged: Collection[str] = (),
    task: str | None = None,
    head: str | None = None,
) -> tuple[Repo, Change] | BaseMissing | None:
    """The change being gated: from its base to the working tree (see git.py). Outside a git
    repository, a task's change is read against the snapshot of its first verdict
    (state/snapshot.py). None outside git without a task, or when no gate looks at the change
    (integrity, coverage with a ``patch`` threshold, lint with ``scope: changed``; gates named
    in ``judged`` already have their evidence). ``head``: the commit the working tree must hold
    (the pull request's head); a tree without it is no change to judge (red team 34: a
    fork-safe stage checked out the base, and a pull request adding a skip passed)."""
    if not config.enabled or not any(
        g.enabled and g.name not in judged and _needs_change(g) for g in config.gates
    ):
        return None
    repo = Repo.find(config.root)
    if repo is None:
        unreadable = unreadable_repository(config.root)
        if unreadable is not None:
            return unreadable
        from pytest_agentgate.config.base import repository_gone

        gone = repository_gone(config.root, task)
        if gone is not None:
            return gone
        return _snapshot_change(config.root, task)
    try:
        if config.base is not None and not explicit_base:
            base = repo.resolve_base(configured=config.base)
        else:
            base = task_base.resolve(repo, task, explicit_base, config.root)
        if isinstance(base, BaseMissing):
            return base
        if head is not None and not repo.is_ancestor(head, "HEAD"):
            if repo.is_shallow():
                return BaseMissing(
                    f"the clone is shallow: whether the working tree holds the pull request's "
                    f"head {head[:12]} cannot be told",
                    "check out with `fetch-depth: 0` (or run `git fetch --unshallow`)",
                )
            return BaseMissing(
                f"the working tree is not the pull request's: it does not hold its head "
                f"{head[:12]}, so the change cannot be judged",
                "check out the pull request's head (or its merge commit) in the job that runs "
                "agentgate; with `run: false` it is read, never run",
            )
        return repo, repo.change(base)
    except GitError as exc:
        return BaseMissing(f"git could not read the change ({exc})", "check that git works here")


def _snapshot_change(root: Path, task: str | None) -> tuple[Repo, Change] | BaseMissing | None:
    if task is None:
        return None
    from pytest_agentgate.state.snapshot import SnapshotRepo, load_or_take

    snapshot = load_or_take(root, task)
    if isinstance(snapshot, BaseMissing):
        return snapshot
    if snapshot is None:
        return BaseMissing(
            "not a git repository, and the task's snapshot cannot be read or written",
            "check that agentgate's state directory (AGENTGATE_STATE_HOME) is writable",
        )
    repo = SnapshotRepo(root, snapshot)
    return repo, repo.change(repo.base)


def _needs_change(gate: GateConfig) -> bool:
    if gate.kind == "coverage":
        return gate.thresholds.get("patch") is not None
    if gate.kind == "lint":
        return gate.options.get("scope") == "changed"
    return gate.kind == "integrity"


def collect(
    plan: Plan,
    results: Mapping[str, CommandResult],
    started_at: float,
    registry: Registry,
    door: Mapping[str, Evidence | GateResult],
    change: ChangeFound | Later[ChangeFound] = None,
    *,
    run_id: str | None = None,
    request: Request | None = None,
    project: Config | None = None,
) -> dict[str, Evidence | GateResult]:
    """Each enabled gate's evidence: the door's, else what its kind's collector finds.

    A collector that fails (a bug, never a user mistake: those are ReportErrors in the
    evidence) gives a failed GateResult in place of evidence. ``project``: the whole
    configuration, when the plan's holds only some of its gates (:meth:`Pipeline.early`);
    collectors see every gate (which linters the lint gates run, which commands test).
    """
    config = plan.config
    commands_run = tuple(spec.command for spec in plan.commands if spec.key in results)
    found: dict[str, Evidence | GateResult] = {}
    for gate in config.gates:
        if not config.enabled or not gate.enabled:
            continue
        given = door.get(gate.name)
        kind = registry.kinds[gate.kind]
        complete = getattr(kind, "complete", None)
        if given is not None and (not isinstance(given, Evidence) or complete is None):
            found[gate.name] = given
            continue
        context = CollectContext(
            config=gate,
            root=config.root,
            result=results.get(gate.name),
            ran_commands=plan.run,
            started_at=started_at,
            registry=registry,
            commands_run=commands_run,
            change_found=change,
            project=project or config,
            run_id=run_id,
            command_env=command_environment(),
            door=None if request is None else request.door,
            claim=None if request is None else request.claim,
            transcript=None if request is None else request.transcript,
        )
        try:
            if given is None or complete is None:
                found[gate.name] = kind.collect(context)
            else:  # the door's own measurement, completed with what the change tells
                found[gate.name] = complete(context, given)
        except Exception as exc:  # a bug in a gate kind must never turn into a pass
            found[gate.name] = _internal_error(gate, Evidence(config.root, context.result), exc)
    return found


# -- judge ------------------------------------------------------------------------------------


def judge(
    config: Config, evidence: Mapping[str, Evidence | GateResult], registry: Registry
) -> list[GateResult]:
    """Every gate's result, in configuration order. Pure: no file is touched."""
    results = []
    for gate in config.gates:
        found = evidence.get(gate.name)
        if not config.enabled or not gate.enabled or found is None:
            results.append(skipped(gate, Evidence(config.root), "disabled in the configuration"))
        elif isinstance(found, GateResult):
            results.append(found)
        else:
            results.append(_unverified(config, _judge_one(gate, found, registry), found))
    return results


NO_RUN = "not run (--no-run)"


def _unverified(config: Config, result: GateResult, evidence: Evidence) -> GateResult:
    """Under strict, a gate skipped for want of evidence (``--no-run`` and no report) is not a
    pass: nothing verified it. A gate that has no report to read (build, a custom gate judged
    by its exit code) is the exception when a configuration file names it: a report-only CI step
    is then the user's own split. Zero-config never is: its gates are agentgate's guess."""
    missing = getattr(evidence, "missing", None)
    if config.profile != "strict" or result.status != "skipped" or not missing:
        return result
    if not str(missing).startswith(NO_RUN):
        return result
    no_report = str(missing) == NO_RUN or "has no report to read" in str(missing)
    if no_report and config.path is not None:
        return result
    result.status = "fail"
    result.summary = f"not verified: {missing}"
    # A failed gate's verdict names every measure, none measured (the schema requires them).
    result.actual = {**UNMEASURED.get(result.kind, {}), **result.actual}
    result.problems.append(
        f"under the strict profile a gate with no evidence is not a pass: run it (without "
        f"--no-run), or give it a report to read (`report:` in the {result.name} gate)"
    )
    return result


def _judge_one(gate: GateConfig, evidence: Evidence, registry: Registry) -> GateResult:
    try:
        result: GateResult = registry.kinds[gate.kind].judge(gate, evidence)
    except Exception as exc:  # a bug in a gate kind must never turn into a pass
        return _internal_error(gate, evidence, exc)
    return result


def _internal_error(gate: GateConfig, evidence: Evidence, exc: Exception) -> GateResult:
    result = new_result(gate, evidence, "fail", f"agentgate could not judge this gate ({exc!r})")
    # The verdict must still validate: the built-in kinds' `actual` keys, none measured.
    actual: dict[str, Any] = dict(UNMEASURED.get(gate.kind, {}))
    if "exit_code" in actual and evidence.command is not None:
        actual["exit_code"] = evidence.command.exit_code
    result.actual = actual
    result.problems.append(
        "internal error in the gate kind; please report it with this trace:\n"
        + "".join(traceback.format_exception(exc)[-3:])
    )
    return result


# -- conclude ---------------------------------------------------------------------------------


def assemble(config: Config, gates: list[GateResult], *, claim: str | None = None) -> Verdict:
    """The Verdict of judged gates before any attempt is counted: overall status and notices.

    The agent's success claims are checked against the judged gates here, once: a claim a
    failed gate disproves becomes a finding of the session gate (gates/session.py).
    """
    gates = check_claims(gates, claim)
    gates = _coverage_of_no_tests(gates)
    verdict = Verdict(
        status=overall_status(gates),
        profile=config.profile,
        gates=gates,
        notices=list(config.notices),
    )
    if not config.enabled:
        verdict.notices.append("gating is disabled in the configuration (enabled: false)")
    elif all(g.status == "skipped" for g in gates if g.kind != "session"):
        # Nothing was measured, so nothing was verified: that is never a pass. The session
        # gate reads what the agent said and did, never the work itself.
        verdict.status = "fail"
        verdict.notices.append(NOTHING_VERIFIED)
    return verdict


def _coverage_of_no_tests(gates: list[GateResult]) -> list[GateResult]:
    """A coverage figure from a suite that ran no test (every test gate failed with nothing
    passed or failed: a collection error, an internal error) is no measurement: it counts the
    lines importing the code ran. The coverage gate then fails as not measured."""
    tests = [g for g in gates if g.kind == "test"]
    if not tests or not all(
        g.status == "fail" and not (g.actual.get("passed") or g.actual.get("failed")) for g in tests
    ):
        return gates
    for gate in gates:
        if gate.kind != "coverage" or gate.status not in ("pass", "fail"):
            continue
        if not any(value is not None for value in gate.actual.values()):
            continue  # nothing measured already: its own summary says why
        names = ", ".join(g.name for g in tests)
        gate.status = "fail"
        gate.summary = f"not measured: no test ran ({names}: {tests[0].summary})"
        gate.actual = dict.fromkeys(gate.actual)
        gate.problems.insert(
            0,
            "the coverage report comes from a run in which no test ran, so its figures count "
            "only what importing the code executed; fix the test run first",
        )
        gate.findings = []
    return gates


def conclude(
    config: Config,
    gates: list[GateResult],
    *,
    claim: str | None = None,
    decision: Decision | None = None,
) -> Verdict:
    """The final Verdict: status, the ledger's decision (attempt, escalation), continuation.

    Pure: the decision was made by the ledger from the recorded state; nothing is written here.
    """
    verdict = assemble(config, gates, claim=claim)
    instruction = None
    if decision is None and (reasons := human_needed(verdict.gates)):
        # No task to count against, and yet only a human can take it from here.
        verdict.status = "escalate"
        verdict.escalation = "\n".join(
            ["# agentgate: a human is needed", "", "## Why", "", *(f"- {r}" for r in reasons)]
        )
    if decision is not None:
        verdict.attempt = decision.attempt
        verdict.notices.extend(decision.notices)
        if decision.escalate:
            verdict.status = "escalate"
            verdict.escalation = decision.report
            if decision.report_location:
                verdict.notices.append(
                    f"escalated to a human: the report is in {decision.report_location}"
                )
        elif verdict.status == "fail":
            instruction = decision.instruction
    if verdict.status == "fail":  # an escalated task goes to a human, not back to the agent
        verdict.continuation = render_continuation(
            verdict, max_chars=config.max_chars, claim=claim, instruction=instruction
        )
    return verdict
