"""The configuration that counts is the base's: the change may tighten it, never loosen it.

An agent under the gate edits ``agentgate.yml`` as easily as the code, so a run reads the
configuration twice: as it is at the change's base (the commit the change is judged against, see
:mod:`pytest_agentgate.git`) and as it is now. In force:

- every gate of the base, each threshold the stricter of the base's and the change's
  (:func:`compare`); ``enabled`` and ``blocking`` only go from false to true; the command,
  reports, format, env, timeout and options are the base's;
- the gates the change adds;
- the base's profile unless the change's is stricter; the base's ``enabled``, ``attempts``,
  ``continuation``, ``base`` and ``integrity.allow``.

What the change weakened is a :class:`ConfigChange` in ``Config.loosened``: the integrity gate
reports each as ``gate-config-loosened`` at the file's line, so that the weakening does not stay in
the pull request. Without a base (no repository, no base commit, no configuration at the base) the
configuration now stands; a file new in the change says so in a notice.

Then a run called strict is never judged on thresholds weaker than strict's
(:func:`hold_to_profile`), unless the configuration in force approves the exception with an
``integrity.allow`` entry of rule ``threshold`` and path ``gates.GATE.KEY``.
"""

from __future__ import annotations

import copy
import math
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_agentgate.config.files import (
    CONFIG_NAMES,
    RawConfig,
    has_tool_table,
    parse_raw,
)
from pytest_agentgate.config.model import (
    BUDGET_KEYS,
    ESCALATING_KEYS,
    Config,
    ConfigChange,
    ConfigError,
    GateConfig,
    KeyPath,
)
from pytest_agentgate.git import Base, BaseMissing, GitError, Repo
from pytest_agentgate.integrity.model import IntegrityFinding, allowed
from pytest_agentgate.profiles import DEFAULT_PROFILE, PROFILE_NAMES, defaults_for
from pytest_agentgate.reports.jsonvalue import SEVERITY_RANK
from pytest_agentgate.reports.model import METRICS

# A run under these profiles is never judged on thresholds weaker than the profile's. Only strict:
# under the others the README documents overrides below the profile and `null` to switch one off.
FLOORED_PROFILES = ("strict",)
# The integrity rule and key path an `integrity.allow` entry names to approve a weaker threshold.
THRESHOLD_RULE = "threshold"

# Thresholds whose higher value is stricter, and those whose lower value is; a plugin's
# threshold is ranked by its name (min_*, max_*) when it is in neither.
_HIGHER_IS_STRICTER = ("min_pass_rate", "min", *METRICS)
_LOWER_IS_STRICTER = ("max_errors", "max_warnings", "max", "loop_repeats")
# Choice thresholds, from the most lenient to the strictest.
_CHOICE_ORDER: dict[str, tuple[str, ...]] = {
    "flaky": ("allow", "fail"),
    "partial": ("allow", "fail"),
    "block": ("tampering", "all"),
    "deferral": ("warn", "block"),
}


# -- which value is stricter ------------------------------------------------------------------


def _rank(key: str, value: Any) -> float | None:
    """How strict ``value`` is for threshold ``key`` (higher is stricter); None: unknown."""
    if value is None:
        return -math.inf  # switched off
    if key in _CHOICE_ORDER:
        order = _CHOICE_ORDER[key]
        return float(order.index(value)) if value in order else None
    if key == "max_severity":
        rank = SEVERITY_RANK.get(str(value).lower())
        return None if rank is None else -float(rank)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if key in _HIGHER_IS_STRICTER or key.startswith("min_"):
        return float(value)
    if key in _LOWER_IS_STRICTER or key.startswith("max_"):
        return -float(value)
    return None


def compare(key: str, a: Any, b: Any) -> int | None:
    """1 when ``a`` is a stricter value of threshold ``key`` than ``b``, -1 when it is more
    lenient, 0 when as strict; None when agentgate cannot tell (a plugin's own threshold)."""
    if a == b:
        return 0
    if (a is None) != (b is None):
        return -1 if a is None else 1  # any bar is stricter than none
    ra, rb = _rank(key, a), _rank(key, b)
    if ra is None or rb is None:
        return None
    return (ra > rb) - (ra < rb)


def _profile_rank(name: str) -> int:
    """Smaller is stricter: strict, standard, relaxed."""
    return PROFILE_NAMES.index(name) if name in PROFILE_NAMES else len(PROFILE_NAMES)


# -- the configuration at the base --------------------------------------------------------------


@dataclass
class BaseFile:
    """The configuration file as it is at the base."""

    repo_path: str  # relative to the repository's top level
    path: Path  # where it is in the work tree (it may be gone now)
    text: str
    label: str  # "agentgate.yml at main (abc123def456)"
    raw: RawConfig | None = None
    error: ConfigError | None = None


@dataclass
class AtBase:
    """What the repository says: its base, and the configuration file there, if any."""

    repo: Repo | None = None
    base: Base | BaseMissing | None = None
    file: BaseFile | None = None
    # Why the configuration at the base could not be read (git failing, or an object of the
    # base written over): the integrity gate fails on it.
    unreadable: str | None = None


def at_base(
    start: Path,
    *,
    config_path: Path | None,
    explicit: str | None,
    now_key: str | None,
    snapshot: tuple[Path, str] | None = None,
    task: str | None = None,
) -> AtBase:
    """The base of the change and the configuration there.

    The base is ``explicit`` (``--base``), else ``base:`` of the base's own configuration, else
    where the ``task`` first met the gate (state/task_base.py), else the merge-base with the
    default branch (git.py). The change's ``base:`` (``now_key``) only
    names a base when git finds none: otherwise a change could pick the commit it is judged
    against. ``config_path`` is an explicit ``--config``: only that file is looked for; else the
    same names as :func:`~pytest_agentgate.config.files.find_config`, from ``start`` up to the
    repository's top level. Outside git, ``snapshot`` (the project's root and a task) makes the
    snapshot of the task's first verdict the base (state/snapshot.py).
    """
    repo = Repo.find(start)
    if repo is None:
        gone = repository_gone(start, task)
        if gone is not None:
            return AtBase(base=gone, unreadable=gone.problem)
        return _at_snapshot(start, config_path, snapshot) if snapshot else AtBase()
    found = AtBase(repo)
    try:
        from pytest_agentgate.state import task_base

        base = task_base.resolve(repo, task, explicit, snapshot[0] if snapshot else None)
        if explicit is None and isinstance(base, BaseMissing) and now_key:
            base = repo.resolve_base(configured=now_key)
        found.base = base
        if not isinstance(base, Base):
            return found
        found.file = _read_at(repo, base, start, config_path)
        key = _base_key(found.file)
        if explicit is None and key and base.how != "base: in the configuration":
            configured = repo.resolve_base(configured=key)
            found.base = configured
            if isinstance(configured, Base) and configured.sha != base.sha:
                found.file = _read_at(repo, configured, start, config_path) or found.file
    except (GitError, OSError, subprocess.SubprocessError) as exc:
        found.base = BaseMissing(f"git could not read the base ({exc})", "check that git works")
        found.file = None
        found.unreadable = str(exc)
    return found


def repository_gone(start: Path, task: str | None) -> BaseMissing | None:
    """The task's base when it began in a git repository that is no longer one (red team 19
    moved `.git` out of the project: the snapshot of the next verdict became the base)."""
    if task is None:
        return None
    from pytest_agentgate.state.task_base import pinned_in

    here = start.resolve()
    for repository in pinned_in(task):
        if here == repository or repository in here.parents:
            return BaseMissing(
                f"the task began in the git repository {repository}, and git finds none "
                "there now (`.git` moved or deleted): its change cannot be judged",
                "put the repository back",
            )
    return None


def pin_task(start: Path, root: Path, task: str) -> None:
    """Keep the ``task``'s base now, as :func:`at_base` keeps it at the task's first verdict:
    in git the base the refs give, pinned (state/task_base.py); outside git the snapshot of the
    project at ``root`` (state/snapshot.py). Called when a harness session starts
    (harness/start.py), before its agent can commit on the default branch, move it, or edit a
    file; a task that has its base already keeps it. Reads no configuration."""
    repo = Repo.find(start)
    if repo is None:
        from pytest_agentgate.state.snapshot import take_first

        take_first(root, task)
        return
    from pytest_agentgate.state import task_base

    task_base.resolve(repo, task, None, root)


def _at_snapshot(start: Path, config_path: Path | None, snapshot: tuple[Path, str]) -> AtBase:
    from pytest_agentgate.state.snapshot import SnapshotRepo, load_or_take

    root, task = snapshot
    kept = load_or_take(root, task)
    if kept is None or isinstance(kept, BaseMissing):
        # The integrity gate says there is no base (and fails); the configuration now stands.
        return AtBase(base=kept)
    repo = SnapshotRepo(root, kept)
    return AtBase(repo, repo.base, _read_at(repo, repo.base, start, config_path))


def _candidates(toplevel: Path, start: Path, config_path: Path | None) -> list[str]:
    """Repository paths where the configuration may be at the base, first found wins."""
    try:
        if config_path is not None:
            return [config_path.resolve().relative_to(toplevel).as_posix()]
        here = start.resolve().relative_to(toplevel)
    except ValueError:
        return []
    out: list[str] = []
    for directory in (here, *here.parents):
        prefix = "" if directory == Path(".") else directory.as_posix() + "/"
        out.extend(prefix + name for name in CONFIG_NAMES)
    return out


def _read_at(repo: Repo, base: Base, start: Path, config_path: Path | None) -> BaseFile | None:
    wanted = _candidates(repo.toplevel, start, config_path)
    texts = repo.read_at(base, wanted)
    for repo_path in wanted:
        text = texts.get(repo_path)
        name = PurePosixPath(repo_path).name
        if text is None:
            continue
        if config_path is None and name == "pyproject.toml" and not has_tool_table(text, name):
            continue
        label = f"{repo_path} at {base.describe()}"
        found = BaseFile(repo_path, repo.toplevel / repo_path, text, label)
        try:
            found.raw = parse_raw(text, name, label)
        except ConfigError as exc:
            found.error = exc
        return found
    return None


def _base_key(found: BaseFile | None) -> str | None:
    data = None if found is None or found.raw is None else found.raw.data
    key = data.get("base") if isinstance(data, Mapping) else None
    return key if isinstance(key, str) and key.strip() else None


def profile_of(raw: RawConfig | None) -> str | None:
    """The ``profile:`` a document names, when it names a valid one."""
    data = None if raw is None else raw.data
    name = data.get("profile") if isinstance(data, Mapping) else None
    return name if name in PROFILE_NAMES else None


def stricter_profile(*names: str | None) -> str | None:
    given = [n for n in names if n is not None]
    return min(given, key=_profile_rank) if given else None


# -- one side of the comparison -------------------------------------------------------------------


@dataclass
class Side:
    """One configuration document: the base's or the change's."""

    raw: RawConfig
    text: str | None  # for line numbers of documents whose parser gives none (TOML)
    file: str  # the file, relative to the project: where findings point
    label: str  # where its values come from, in the verdict
    # Gate name -> its key path in the document and the keys written there.
    written: dict[str, tuple[KeyPath, set[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.written = _written(self.raw)

    def line(self, path: KeyPath) -> int | None:
        """The line of ``path`` (or of the nearest enclosing key) in the document."""
        probe = path
        while probe:
            if probe in self.raw.lines:
                return self.raw.lines[probe]
            probe = probe[:-1]
        return _search_line(self.text, self.raw, path) if self.text else None

    def written_value(self, gate: str, key: str) -> Any:
        """The value of a gate's ``key`` as the document writes it (None when it does not)."""
        node: Any = self.raw.data
        for part in (*self.gate_path(gate), key):
            if isinstance(node, Mapping):
                node = node.get(part)
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node = node[part]
            else:
                return None
        return node

    def shown(self, gate: str, key: str) -> str:
        """A gate's ``key`` as the document spells it (``gates.lint.maxErrors`` in the
        workspace JSON shape), else ``gates.GATE.KEY``."""
        return self.raw.display.get((*self.gate_path(gate), key)) or f"gates.{gate}.{key}"

    def gate_path(self, name: str) -> KeyPath:
        return self.written[name][0] if name in self.written else ("gates", name)

    def key_line(self, gate: str | None, key: str) -> int | None:
        if gate is None:
            return self.line(tuple(key.split(".")))
        return self.line((*self.gate_path(gate), key))


def _written(raw: RawConfig) -> dict[str, tuple[KeyPath, set[str]]]:
    gates = raw.data.get("gates") if isinstance(raw.data, Mapping) else None
    out: dict[str, tuple[KeyPath, set[str]]] = {}
    if not isinstance(gates, Mapping):
        return out
    for name, body in gates.items():
        if name == "custom" and isinstance(body, list):
            for index, item in enumerate(body):
                if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                    out[item["name"]] = (("gates", "custom", index), {str(k) for k in item})
        else:
            keys = {str(k) for k in body} if isinstance(body, Mapping) else set()
            out[str(name)] = (("gates", str(name)), keys)
    return out


def _search_line(text: str | None, raw: RawConfig, path: KeyPath) -> int | None:
    """The line where the words of ``path`` appear in order (TOML and JSON, which the parsers
    give no lines for): the gate's name, then the key after it."""
    if not text:
        return None
    display = raw.display.get(path)
    words = display.split(".") if display else [str(p) for p in path if isinstance(p, str)]
    pos = max(0, text.find("[tool.agentgate")) if "[tool.agentgate" in text else 0
    found = None
    for word in words:
        match = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])").search(text, pos)
        if match is None:
            break
        found = match.start()
        pos = match.end()
    return None if found is None else text.count("\n", 0, found) + 1


def _explicit(side: Side, gate: str) -> set[str]:
    return side.written.get(gate, ((), set()))[1]


# -- the configuration in force ----------------------------------------------------------------


def label_sources(config: Config, side: Side | None) -> None:
    """Where each threshold of a configuration that stands on its own comes from."""
    for gate in [*config.gates, *([config.session] if config.session else [])]:
        written = _explicit(side, gate.name) if side is not None else set()
        for key in gate.thresholds:
            default = f"profile {config.profile}"
            gate.sources.setdefault(key, side.label if side and key in written else default)


def govern(base: Config, base_side: Side, now: Config | None, now_side: Side | None) -> Config:
    """The configuration in force: the base's, tightened (never loosened) by the change's."""
    law = copy.deepcopy(base)
    label_sources(law, base_side)
    if now is None or now_side is None:
        return law
    report = _Report(now_side)
    _top(law, base, now, base_side, now_side, report)
    for gate in law.gates:
        other = now.gate(gate.name)
        if other is None:
            report.loosened(
                f"gates.{gate.name}",
                f"removed; the base's {gate.name} gate is in force",
                now_side.line(("gates",)),
            )
        elif other.kind != gate.kind:
            report.loosened(
                f"gates.{gate.name}.kind",
                f"{gate.kind} -> {other.kind}; the base's {gate.kind} gate is in force",
                now_side.key_line(gate.name, "kind"),
            )
        else:
            _tighten(gate, other, base_side, now_side, report)
    if law.session is not None and now.session is not None:
        # The session gate and the budget: a change may tighten them, never loosen them.
        _tighten(law.session, now.session, base_side, now_side, report, ESCALATING_KEYS)
    for gate in now.gates:
        if law.gate(gate.name) is None:  # a gate the change adds: more is checked
            added = copy.deepcopy(gate)
            added.from_change = True
            written = _explicit(now_side, gate.name)
            for key in added.thresholds:
                added.sources[key] = (
                    f"{now_side.file} (this change, tightened)"
                    if key in written
                    else f"profile {law.profile}"
                )
            law.gates.append(added)
            law.notices.extend(n for n in now.notices if n.startswith(f"{gate.name}: "))
    law.loosened = report.changes
    if report.unapplied:
        law.notices.append(
            f"{now_side.file}: not in force until this change is merged (the base's values "
            "stand): " + ", ".join(report.unapplied)
        )
    return law


class _Report:
    """What the comparison found: weakenings (findings) and changes not yet in force."""

    def __init__(self, side: Side) -> None:
        self.side = side
        self.changes: list[ConfigChange] = []
        self.unapplied: list[str] = []

    def loosened(self, key: str, message: str, line: int | None) -> None:
        """``message`` is "what changed; what is in force instead"."""
        change, _, consequence = message.partition("; ")
        where = self.side.file if line is None else f"{self.side.file}:{line}"
        text = f"{key}: {change} at {where}" + (f"; {consequence}" if consequence else "")
        self.changes.append(ConfigChange(key, text, self.side.file, line))

    def changed(self, key: str, old: Any, new: Any, line: int | None) -> None:
        self.loosened(key, f"{show(old)} -> {show(new)}; the base's {show(old)} is in force", line)


def _top(
    law: Config, base: Config, now: Config, base_side: Side, now_side: Side, report: _Report
) -> None:
    """Top-level settings: the base's stand; only `enabled` and the profile may tighten."""
    law.enabled = base.enabled or now.enabled
    if base.enabled and not now.enabled:
        report.loosened(
            "enabled", "true -> false; gating stays on, as at the base", now_side.line(("enabled",))
        )
    base_profile = profile_of(base_side.raw) or DEFAULT_PROFILE
    now_profile = profile_of(now_side.raw) or DEFAULT_PROFILE
    if _profile_rank(now_profile) > _profile_rank(base_profile):
        report.changed("profile", base_profile, now_profile, now_side.line(("profile",)))
    for key, old, new in (
        ("attempts.max", base.attempts_max, now.attempts_max),
        ("attempts.global_max", base.attempts_global_max, now.attempts_global_max),
    ):
        if new < old:  # fewer attempts: out of the loop before the work is done
            report.changed(key, old, new, now_side.key_line(None, key))
        elif new != old:
            report.unapplied.append(key)
    if now.attempts_per_branch != base.attempts_per_branch:
        report.unapplied.append("attempts.per_branch")
    if now.max_chars != base.max_chars:
        report.unapplied.append("continuation.max_chars")
    if now.hook_budget_s != base.hook_budget_s:
        report.unapplied.append("hook.budget")
    if now.base != base.base:
        report.changed("base", base.base, now.base, now_side.line(("base",)))
    approved = {(r.rule, r.path) for r in base.integrity_allow}
    for index, rule in enumerate(now.integrity_allow):
        if (rule.rule, rule.path) not in approved:
            report.loosened(
                "integrity.allow",
                f"gained {{rule: {rule.rule}, path: {rule.path}}}; a change cannot approve its "
                "own findings: a reviewer adds the entry on the base branch",
                now_side.line(("integrity", "allow", index)),
            )
    if {(r.rule, r.path) for r in now.integrity_allow} < approved:
        report.unapplied.append("integrity.allow")


# Gate settings that decide what is measured: the base's always run, and a change is reported.
_MEASURED = ("command", "reports", "format", "env")


def _tighten(
    gate: GateConfig,
    other: GateConfig,
    base_side: Side,
    now_side: Side,
    report: _Report,
    escalating: tuple[str, ...] = (),
) -> None:
    """``gate`` (a copy of the base's) with what the change's ``other`` tightens. A threshold in
    ``escalating`` ends the task in an escalation, which lets the agent stop: a stricter one is
    not in force until the change is merged."""
    name = gate.name
    written = _explicit(now_side, name)
    for flag, word in (("enabled", "the base's gate runs"), ("blocking", "the base's gate blocks")):
        old, new = getattr(gate, flag), getattr(other, flag)
        if old and not new:
            report.loosened(
                now_side.shown(name, flag), f"true -> false; {word}", now_side.key_line(name, flag)
            )
        setattr(gate, flag, old or new)
    for key in dict.fromkeys([*gate.thresholds, *other.thresholds]):
        old, new = gate.thresholds.get(key), other.thresholds.get(key)
        order = compare(key, new, old)
        if order == 1 and key in escalating:
            # Lower, it ends the task in an escalation sooner: the base's stands until merged.
            data = now_side.raw.data
            limits = data.get("budget") if isinstance(data, Mapping) else None
            budget = key in BUDGET_KEYS and isinstance(limits, Mapping) and key in limits
            report.unapplied.append(f"budget.{key}" if budget else now_side.shown(name, key))
        elif order == 1:
            gate.thresholds[key] = new
            gate.sources[key] = f"{now_side.file} (this change, tightened)"
        elif order == -1:
            line = (
                now_side.key_line(name, key)
                if key in written
                else now_side.line(now_side.gate_path(name))
            )
            report.changed(now_side.shown(name, key), old, new, line)
        elif order is None:
            report.unapplied.append(f"gates.{name}.{key}")
    for attr in _MEASURED:
        old, new = getattr(gate, attr), getattr(other, attr)
        if old != new:
            key = "report" if attr == "reports" else attr
            # As the files write them: agentgate's additions (--junitxml, JSON output) aside.
            old = _or(base_side.written_value(name, key), old)
            new = _or(now_side.written_value(name, key), new)
            shown = (
                f"`{show(old)}` -> `{show(new)}`"
                if attr == "command"
                else (f"{show(old)} -> {show(new)}")
            )
            report.loosened(
                now_side.shown(name, key),
                f"{shown}; the base's {key} is what counts",
                now_side.key_line(name, key),
            )
    for key in dict.fromkeys([*gate.options, *other.options]):
        old, new = gate.options.get(key), other.options.get(key)
        if old == new:
            continue
        if key == "min_files" and isinstance(old, int) and isinstance(new, int) and new > old:
            report.unapplied.append(f"gates.{name}.{key}")
        else:
            report.changed(now_side.shown(name, key), old, new, now_side.key_line(name, key))
    if other.timeout != gate.timeout:
        report.unapplied.append(f"gates.{name}.timeout")


def guard_new(config: Config, side: Side) -> None:
    """A configuration new in the change stands (a reviewer approves it by merging it), but it
    cannot switch off the gate that judges it: gating stays on, and the integrity gate runs and
    blocks as the profile says, as they did at the base without a configuration."""
    report = _Report(side)
    if not config.enabled:
        report.loosened(
            "enabled", "true -> false; gating stays on, as at the base", side.line(("enabled",))
        )
        config.enabled = True
    for gate in config.gates:
        if gate.kind != "integrity":
            continue
        for flag in ("enabled", "blocking"):
            if not getattr(gate, flag):
                report.loosened(
                    side.shown(gate.name, flag),
                    "true -> false; the integrity gate judges every change",
                    side.key_line(gate.name, flag),
                )
                setattr(gate, flag, True)
        for key, need in defaults_for(config.profile, gate.kind).items():
            have = gate.thresholds.get(key)
            if compare(key, have, need) == -1:
                report.changed(
                    side.shown(gate.name, key), need, have, side.key_line(gate.name, key)
                )
                gate.thresholds[key] = need
                gate.sources[key] = f"profile {config.profile}"
    config.loosened.extend(report.changes)


def _or(written: Any, value: Any) -> Any:
    return value if written is None else written


def hold_to_profile(config: Config) -> None:
    """Under strict, a threshold weaker than strict's is raised to strict's, unless the
    configuration in force approves it (``integrity.allow``, rule ``threshold``)."""
    profile = config.profile
    if profile not in FLOORED_PROFILES:
        return
    for gate in config.gates:
        raised = []
        for key, need in defaults_for(profile, gate.kind).items():
            have = gate.thresholds.get(key)
            if compare(key, have, need) != -1:
                continue
            path = f"gates.{gate.name}.{key}"
            if allowed(IntegrityFinding(THRESHOLD_RULE, "", path), config.integrity_allow):
                continue
            gate.thresholds[key] = need
            gate.sources[key] = f"raised to {profile}'s"
            raised.append(f"{key} {show(have)} -> {show(need)}")
        if raised:
            config.notices.append(
                f"{gate.name}: a run called {profile} is judged on {profile}'s thresholds: "
                + ", ".join(raised)
                + f" (a weaker one needs the base's approval: integrity: {{allow: [{{rule: "
                f"{THRESHOLD_RULE}, path: gates.{gate.name}.KEY, reason: ...}}]}})"
            )


def show(value: Any) -> str:
    """A setting's value as the configuration would write it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
    return str(value)
