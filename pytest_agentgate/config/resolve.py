"""Where a run's configuration comes from: a file, the report flags, or zero-config detection.

Shared by every front door so that `agentgate verify`, ``pytest_agentgate.verify()`` and the
pytest plugin resolve the same project the same way.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_agentgate.config.base import (
    AtBase,
    BaseFile,
    Side,
    at_base,
    govern,
    guard_new,
    hold_to_profile,
    label_sources,
    pin_task,
    profile_of,
    stricter_profile,
)
from pytest_agentgate.config.files import RawConfig, find_config, read_raw
from pytest_agentgate.config.model import (
    FLAGS_SOURCE,
    Config,
    ConfigChange,
    ConfigError,
    GateConfig,
)
from pytest_agentgate.config.validate import validate
from pytest_agentgate.git import Base, Repo, unreadable_repository
from pytest_agentgate.linters import declared_linter
from pytest_agentgate.profiles import DEFAULT_PROFILE, defaults_for
from pytest_agentgate.project import project_root, zero_config
from pytest_agentgate.registry import Registry, get_registry
from pytest_agentgate.texts import read_regular_text
from pytest_agentgate.tree import Files
from pytest_agentgate.tree import at_base as files_at_base

# The source of zero-config's configuration document.
ZERO_CONFIG_SOURCE = "zero-config defaults"


@dataclass
class ReportFlags:
    """``--junit``, ``--coverage``, ``--lint`` and ``--lint-format``."""

    junit: list[str] = field(default_factory=list)
    coverage: str | None = None
    lint: list[str] = field(default_factory=list)
    lint_format: str | None = None

    def any(self) -> bool:
        return bool(self.junit or self.coverage or self.lint)


def _apply_flags(data: dict[str, Any], flags: ReportFlags) -> None:
    gates = data.setdefault("gates", {})
    if not isinstance(gates, dict):
        return  # validation reports the wrong type with its line
    if flags.junit:
        gates["test"] = {**_gate(gates, "test"), "report": list(flags.junit)}
    if flags.coverage:
        gates["coverage"] = {**_gate(gates, "coverage"), "report": flags.coverage}
    if flags.lint:
        lint = {**_gate(gates, "lint"), "report": list(flags.lint)}
        if flags.lint_format:
            lint["format"] = flags.lint_format
        gates["lint"] = lint


def _gate(gates: dict[str, Any], name: str) -> dict[str, Any]:
    body = gates.get(name)
    return dict(body) if isinstance(body, dict) else {}


def resolve_config(
    cwd: Path,
    *,
    config_path: str | None = None,
    profile: str | None = None,
    flags: ReportFlags | None = None,
    registry: Registry | None = None,
    base: str | None = None,
    task: str | None = None,
) -> Config:
    """The validated configuration for a run started in ``cwd``.

    In a git repository the configuration in force is the base's, tightened (never loosened) by
    the change (config/base.py); ``base`` is the door's ``--base REF``. Outside git, a ``task``'s
    base is the snapshot of its first verdict (state/snapshot.py). A run called strict is never
    judged on thresholds weaker than strict's.
    """
    registry = registry or get_registry()
    flags = flags or ReportFlags()
    if flags.lint_format and not flags.lint:
        raise ConfigError(FLAGS_SOURCE, "--lint-format", "goes with --lint FILE")
    explicit: Path | None = None
    if config_path is not None:
        explicit = Path(config_path) if Path(config_path).is_absolute() else cwd / config_path
    path = explicit if explicit is not None else find_config(cwd)
    now_raw = None
    # A change's configuration that does not load is the change's fault, not agentgate's: where
    # the base's loads, it is in force and the integrity gate says so (never a free stop).
    now_error: ConfigError | None = None
    if path is not None and (explicit is None or path.exists()):
        try:
            now_raw = read_raw(path)
        except ConfigError as exc:
            now_error = exc
    snapshot = None
    if task is not None:
        snapshot = (task_home(cwd, path), task)
    found = at_base(
        cwd,
        config_path=explicit,
        explicit=base,
        now_key=_base_key(now_raw),
        snapshot=snapshot,
        task=task,
    )
    law = found.file
    notices: list[str] = []
    if not flags.any():
        if law is not None and law.raw is not None:
            law = dataclasses.replace(law, raw=_with_detected_gates(law.raw, law.path, found))
        if now_raw is not None and path is not None:
            now_raw = _with_detected_gates(now_raw, path, found)
    config: Config | None = None
    if law is not None and law.raw is not None:
        try:
            config = _governed(law, law.raw, path, now_raw, flags, profile, registry, now_error)
        except ConfigError as exc:
            notices.append(_not_the_law(law.label, exc))
    elif law is not None and law.error is not None:
        notices.append(_not_the_law(law.label, law.error))
    if config is None and now_error is None:
        if path is not None and now_raw is None:
            read_raw(path)  # the file named by --config is not there: say so
        try:
            config = _stand_alone(cwd, path, now_raw, flags, profile, registry, found)
        except ConfigError as exc:
            now_error = exc
    if config is None:
        assert now_error is not None
        config = _without_the_broken_file(cwd, path, now_error, flags, profile, registry, found)
    config.notices[:0] = notices
    if found.unreadable is not None:
        # The change is judged against the base (the change's own reading of git), but the
        # law at the base could not be read: never the change's configuration in its place
        # (red team 16 wrote the base's agentgate.yml object over with a loosened text).
        shown = path.name if path is not None else "agentgate.yml"
        config.loosened.append(
            ConfigChange("base", f"the configuration at the base: {found.unreadable}", shown)
        )
    if explicit is None and path is not None:
        _above_the_project(config, cwd, path)
    _what_is_gated(config, law, now_raw, path, found)
    hold_to_profile(config)
    return config


def _what_is_gated(
    config: Config,
    law: BaseFile | None,
    now_raw: RawConfig | None,
    path: Path | None,
    found: AtBase,
) -> None:
    """The notices of a configuration file that names no gates (zero-config's detected gates
    run: which, and which linter), or that gates nothing of the project."""
    in_force = law.raw if law is not None and law.raw is not None else now_raw
    if in_force is not None and in_force.detected_gates and path is not None:
        root = path.resolve().parent
        label = law.label if law is not None and in_force is law.raw else path.name
        config.notices.append(
            f"{label} names no gates: the project is gated by what zero-config detects "
            "(compileall, its linter, pytest and coverage) under the configuration's profile; "
            "`agentgate init` writes those gates into it"
        )
        config.notices.extend(_linters_described(root, _files_at_base(found, root)))
    named = in_force is None or not isinstance(in_force.data, dict) or "gates" in in_force.data
    _nothing_measured(config, named)


def _with_detected_gates(raw: RawConfig, path: Path, found: AtBase) -> RawConfig:
    """``raw`` with the gates zero-config detects for its project, where it names no ``gates``
    (an agentgate.yml holding only ``profile: strict`` gated nothing and passed: review 28). As
    zero-config, detection reads the project's files at the change's base, whose linter is the
    law; the file's other settings (profile, thresholds of no gate, attempts, budgets) stand."""
    if not isinstance(raw.data, dict) or "gates" in raw.data:
        return raw
    root = path.resolve().parent
    detected = zero_config(root, _files_at_base(found, root))
    if detected is None:
        return raw
    return dataclasses.replace(
        raw, data={**raw.data, "gates": detected[0]["gates"]}, detected_gates=True
    )


def _validated(
    raw: RawConfig,
    flags: ReportFlags,
    registry: Registry,
    *,
    root: Path,
    path: Path | None,
    profile: str | None,
) -> Config:
    """``raw`` validated, with the report flags applied; zero-config's gates (of zero-config
    itself, or of a file that names none) lint with the change's own linter as a gate
    ``lint-TOOL`` beside the base's: that gate's command is the change's, not the law."""
    config = validate(
        _with_flags(raw, flags), registry, root=root, path=path, profile_override=profile
    )
    if raw.source == ZERO_CONFIG_SOURCE or raw.detected_gates:
        _mark_added_linters(config)
    return config


def _nothing_measured(config: Config, named: bool) -> None:
    """Say so when a configuration file gates nothing of the project: its ``gates`` name no
    gate that measures it (``named``), or it names none and zero-config detects no project
    beside it. Its verdict then judges the change alone (review 28)."""
    if config.path is None or not config.enabled:
        return
    if any(g.kind != "integrity" for g in config.gates):
        return
    why = (
        "its `gates` replace the detected ones; without a `gates` key the detected gates run"
        if named
        else "and zero-config detects no Python project beside it; name them under `gates`"
    )
    config.notices.append(
        f"{config.path.name} names no gate that measures the project (build, lint, test, "
        f"coverage), so `agentgate verify` runs none: {why}"
    )


def task_home(cwd: Path, path: Path | None) -> Path:
    """The project whose ``.agentgate/`` keeps the record of a task's base (and, outside git,
    whose files the task's snapshot keeps): the folder of the configuration file ``path``,
    else the project that contains ``cwd``."""
    return path.resolve().parent if path is not None else project_root(cwd)


def pin_task_base(cwd: Path, task: str) -> None:
    """Keep the base of ``task``, a run started in ``cwd``, now: what :func:`resolve_config`
    keeps at the task's first verdict, found the same way (config/base.py ``pin_task``).
    Only the configuration file is looked for, never read."""
    pin_task(cwd, task_home(cwd, find_config(cwd)), task)


def pin_task_environment(cwd: Path, task: str) -> None:
    """Keep the test environment ``task`` begins with, a run started in ``cwd``: the virtual
    environments in its project (state/task_env.py), which its first verdict would keep
    otherwise, after its agent could have installed anything there."""
    from pytest_agentgate.state import task_env

    root = task_home(cwd, find_config(cwd))
    venvs = task_env.project_venvs(root)
    folders = [folder for venv in venvs for folder in task_env.site_folders(venv)]
    task_env.pin(root, task, folders, venvs=venvs)


def _above_the_project(config: Config, cwd: Path, path: Path) -> None:
    """Say so when the configuration found is above the project the run started in: it gates
    the folder it is in, not that project (a monorepo's top-level configuration)."""
    project = project_root(cwd).resolve()
    folder = path.resolve().parent
    if folder != project and folder in project.parents:
        config.notices.append(
            f"the configuration {path} is in a folder above the project at {project}: it "
            f"gates {folder}; give the project its own agentgate.yml to gate it alone"
        )


def _base_key(raw: RawConfig | None) -> str | None:
    key = raw.data.get("base") if raw is not None and isinstance(raw.data, dict) else None
    return key if isinstance(key, str) and key.strip() else None


def _not_the_law(label: str, error: ConfigError) -> str:
    where = "" if error.source.startswith(label) else f"{label}: "
    return (
        f"{where}{error}; the base's configuration cannot be used, so this change's stands "
        "until a reviewer merges it"
    )


def _with_flags(raw: RawConfig, flags: ReportFlags) -> RawConfig:
    """A copy of ``raw`` with the report flags applied (the cached document stays as read)."""
    out = copy.copy(raw)
    if isinstance(raw.data, dict):
        out.data = copy.deepcopy(raw.data)
        _apply_flags(out.data, flags)
    return out


def _stand_alone(
    cwd: Path,
    path: Path | None,
    raw: RawConfig | None,
    flags: ReportFlags,
    profile: str | None,
    registry: Registry,
    found: AtBase,
) -> Config:
    """The configuration now, when there is no base's to hold it to."""
    notices: list[str] = []
    side: Side | None = None
    if path is not None and raw is not None:
        root = path.resolve().parent
        side = Side(raw, _text(path), path.name, raw.source.replace(str(path), path.name, 1))
        if (
            isinstance(found.base, Base)
            and found.file is None
            and _in_repository(found.repo, path) is not None
        ):
            governed = _over_zero_config(path, raw, side, flags, profile, registry, found)
            if governed is not None:
                return governed
    elif flags.any():
        raw = RawConfig({}, FLAGS_SOURCE)
        root = cwd
        notices.append(
            "no configuration file: gating exactly the reports given on the command line"
        )
    else:
        # From a subdirectory, the project is the nearest folder up to the repository root that
        # has a project file; its gates run there, as they would from a config file.
        root = project_root(cwd)
        at_base = _files_at_base(found, root)
        detected = zero_config(root, at_base)
        if detected is None:
            raise ConfigError(
                str(cwd),
                None,
                "no agentgate.yml, .agentgate.yml or [tool.agentgate] in pyproject.toml here or "
                "above, and no Python project detected; run `agentgate init` or write a config",
            )
        defaults, marker = detected
        raw = RawConfig(defaults, ZERO_CONFIG_SOURCE)
        where = "" if root == cwd else f" in {root}"
        notices.append(
            f"no configuration: detected a Python project{where} ({marker}) and gated it with "
            "compileall, its linter, pytest and coverage under the strict profile; "
            "`agentgate init` writes this as agentgate.yml"
        )
        notices.extend(_linters_described(root, at_base))
    config = _validated(raw, flags, registry, root=root, path=path, profile=profile)
    config.notices[:0] = notices
    add_integrity_gate(config, found.repo is not None or unreadable_repository(root) is not None)
    label_sources(config, side)
    if found.repo is not None and isinstance(found.base, Base) and path is not None:
        _unreviewed(config, found, found.base, path, side)
    return config


def _mark_added_linters(config: Config) -> None:
    """zero-config's ``lint-TOOL`` gates lint with the linter the change declares beside the
    base's (project.python_defaults): what they run is the change's, not the base's law."""
    for gate in config.gates:
        if gate.kind == "lint" and gate.name.startswith("lint-"):
            gate.from_change = True


def _files_at_base(found: AtBase, root: Path) -> Files | None:
    """The project's files at the change's base, where zero-config's detection is the law."""
    if found.repo is None or not isinstance(found.base, Base):
        return None
    return files_at_base(found.repo, found.base, root)


def _linters_described(root: Path, at_base: Files | None) -> list[str]:
    """What zero-config lints with: the linter the project declares at the base (else now),
    and the one the change declares when it is another tool (a gate ``lint-TOOL`` beside)."""
    law = declared_linter(at_base if at_base is not None else root)
    out = [law.describe()]
    if at_base is None:
        return out
    now = declared_linter(root)
    if now.tool != law.tool:
        beside = (
            "ruff's error rules, which the base gets (it declares no linter)"
            if law.tool == "ruff" and law.config is None
            else f"{law.tool}, which the base declares"
        )
        out.append(
            f"lint-{now.tool}: {now.describe().removeprefix('lint: ')}, new in this change: "
            f"it lints beside {beside} and which stays the law"
        )
    elif now != law:
        out.append(
            f"lint: the change declares {now.describe().removeprefix('lint: ')}; not in force "
            "until it is merged: the base's lints"
        )
    return out


def _over_zero_config(
    path: Path,
    raw: RawConfig,
    side: Side,
    flags: ReportFlags,
    profile: str | None,
    registry: Registry,
    found: AtBase,
) -> Config | None:
    """A configuration file new in the change, where the base has none: the base's law is what
    zero-config detects (in the project's files at the base, tree.py), and the new file is
    held to it as a change to a configuration of the base's is (config/base.py ``govern``): it
    may tighten thresholds and add gates; a gate it leaves out, disables or lowers is
    ``gate-config-loosened``, and zero-config's gate stands. A gate's command, report, format
    or env unlike zero-config's is not loosening in itself (`agentgate init` writes
    ``python`` where zero-config runs this interpreter): a notice, and zero-config's runs
    until a reviewer merges the file. None: the project has no files at the base (a repository
    without a commit, a project new in the change), or zero-config detects none there."""
    assert isinstance(found.base, Base)
    root = path.resolve().parent
    at_base = _files_at_base(found, root)
    detected = None if at_base is None else zero_config(root, at_base)
    if detected is None:
        return None  # no commit yet, or a project new in the change: the file stands
    law_raw = RawConfig(detected[0], ZERO_CONFIG_SOURCE)
    in_force = profile or stricter_profile(profile_of(law_raw), profile_of(raw) or DEFAULT_PROFILE)
    law = _validated(law_raw, flags, registry, root=root, path=None, profile=in_force)
    add_integrity_gate(law, True)
    now = _validated(raw, flags, registry, root=root, path=path, profile=in_force)
    add_integrity_gate(now, True)
    label_sources(now, side)
    _unreviewed(now, found, found.base, path, side)  # gating on, no approval, no base of its own
    law_side = Side(law_raw, None, "zero-config", "zero-config defaults at the base")
    config = govern(law, law_side, now, side)
    measured = [c for c in config.loosened if c.key.rsplit(".", 1)[-1] in _MEASURED_KEYS]
    config.loosened = [*now.loosened, *(c for c in config.loosened if c not in measured)]
    config.notices[:0] = [
        *(n for n in now.notices if not any(n.startswith(f"{g.name}: ") for g in law.gates)),
        f"the base has no agentgate configuration: zero-config's gates, as detected at the "
        f"base, are the law; {side.file} may tighten them and add gates",
        *_linters_described(root, at_base),
    ]
    if measured:
        config.notices.append(
            f"{side.file}: " + ", ".join(c.key for c in measured) + " not in force until it is "
            "merged: zero-config's run"
        )
    return config


# Gate settings unlike zero-config's in a new configuration: notices, not findings.
_MEASURED_KEYS = ("command", "report", "format", "env")


def _unreviewed(config: Config, found: AtBase, base: Base, path: Path, side: Side | None) -> None:
    """A configuration in the repository that is not the base's (new in the change, or the
    base's cannot be used) stands, but it cannot switch the gate off, approve its own
    findings, or choose the commit it is judged against."""
    name = _in_repository(found.repo, path)
    if name is None:
        return  # a --config file outside the repository is the door's choice
    if found.file is None:
        config.notices.append(
            f"{name} is new in this change: it is not yet the law; a reviewer approves it by "
            "merging it"
        )
    if side is not None:
        guard_new(config, side)
    if config.integrity_allow:
        # Approvals are a reviewer's, on the base: a change cannot approve itself.
        config.notices.append(f"integrity.allow in {name} is not in force until it is merged")
        config.integrity_allow = []
    if config.base is not None and base.how != "base: in the configuration":
        config.notices.append(
            f"base: {config.base} in {name} is not used until it is merged: the change is "
            f"judged against {base.describe()}"
        )
        config.base = None


def _in_repository(repo: Repo | None, path: Path) -> str | None:
    """``path`` relative to the repository, when it is in it."""
    if repo is None:
        return None
    try:
        return path.resolve().relative_to(repo.toplevel).as_posix()
    except ValueError:
        return None


def _governed(
    law: BaseFile,
    law_raw: RawConfig,
    path: Path | None,
    now_raw: RawConfig | None,
    flags: ReportFlags,
    profile: str | None,
    registry: Registry,
    now_error: ConfigError | None = None,
) -> Config:
    """The base's configuration, tightened by the change's when it is the same project's.
    ``now_error``: why the change's file does not load (then the base's is in force, and the
    change loosened the configuration: :func:`_broken_now`)."""
    root = law.path.parent
    in_place = now_raw is not None and path is not None and path.resolve().parent == root
    base_profile = profile_of(law_raw) or DEFAULT_PROFILE
    now_profile = (profile_of(now_raw) or DEFAULT_PROFILE) if in_place else None
    in_force = profile or stricter_profile(base_profile, now_profile)
    base_config = _validated(law_raw, flags, registry, root=root, path=law.path, profile=in_force)
    add_integrity_gate(base_config, True)
    name = PurePosixPath(law.repo_path).name
    base_side = Side(law_raw, law.text, name, law.label)
    if now_error is not None and path is not None:
        return _broken_now(govern(base_config, base_side, None, None), path, now_error)
    if not in_place or now_raw is None or path is None:
        config = govern(base_config, base_side, None, None)
        if not law.path.exists():
            config.loosened.append(
                ConfigChange(
                    "config",
                    f"{name} was deleted by this change; the base's configuration is in force",
                    name,
                )
            )
        elif path is not None:
            config.notices.append(
                f"{_shown(path, root)} is new in this change: it is not yet the law; "
                f"{law.label} is in force"
            )
        return config
    try:
        now_config = _validated(now_raw, flags, registry, root=root, path=path, profile=in_force)
    except ConfigError as exc:
        return _broken_now(govern(base_config, base_side, None, None), path, exc)
    add_integrity_gate(now_config, True)
    now_side = Side(now_raw, _text(path), path.name, f"{path.name} (this change)")
    return govern(base_config, base_side, now_config, now_side)


def _without_the_broken_file(
    cwd: Path,
    path: Path | None,
    error: ConfigError,
    flags: ReportFlags,
    profile: str | None,
    registry: Registry,
    found: AtBase,
) -> Config:
    """A change's configuration that does not load, where the base has none: the base's law
    is then what zero-config detects, and the broken file is reported. Outside git (no base),
    or where nothing is detected, the error stands: nothing can judge the change."""
    if found.repo is None or path is None or found.file is not None:
        raise error
    try:
        config = _stand_alone(cwd, None, None, flags, profile, registry, found)
    except ConfigError:
        raise error from None
    return _broken_now(config, path, error)


def _broken_now(config: Config, path: Path, error: ConfigError) -> Config:
    """The base's configuration in force, because the change's does not load: a loosening of
    the configuration the integrity gate reports (the agent cannot stop by breaking it)."""
    where = path.name if error.line is None else f"{path.name}:{error.line}"
    detail = f"{error.key}: {error.message}" if error.key else error.message
    config.loosened.append(
        ConfigChange(
            "config",
            f"{path.name} does not load in this change at {where} ({detail}); the base's "
            "configuration is in force: fix the file",
            path.name,
            error.line,
        )
    )
    return config


def _text(path: Path) -> str | None:
    """The file's text, for line numbers the parser does not give (TOML)."""
    try:
        return read_regular_text(path)
    except (OSError, UnicodeDecodeError):
        return None


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def add_integrity_gate(config: Config, has_base: bool | None = None) -> None:
    """Every project with a base for its change gets the integrity gate: the change cannot
    remove it. ``has_base``: in a git repository (None: look), or a task outside git, whose
    change is read against the snapshot of its first verdict (state/snapshot.py)."""
    if any(g.kind == "integrity" for g in config.gates):
        return
    if has_base is None:
        has_base = (
            Repo.find(config.root) is not None or unreadable_repository(config.root) is not None
        )
    if not has_base:
        return
    thresholds = defaults_for(config.profile, "integrity")
    config.gates.insert(
        0,
        GateConfig(
            "integrity",
            "integrity",
            command=None,
            thresholds=thresholds,
            sources=dict.fromkeys(thresholds, f"profile {config.profile}"),
        ),
    )
