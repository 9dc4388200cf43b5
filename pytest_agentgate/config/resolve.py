"""Where a run's configuration comes from: a file, the report flags, or zero-config detection.

Shared by every front door so that `agentgate verify`, ``pytest_agentgate.verify()`` and the
pytest plugin resolve the same project the same way.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_agentgate.config.files import RawConfig, find_config, read_raw
from pytest_agentgate.config.model import FLAGS_SOURCE, Config, ConfigError, GateConfig
from pytest_agentgate.config.validate import validate
from pytest_agentgate.git import Repo
from pytest_agentgate.profiles import defaults_for
from pytest_agentgate.project import project_root, zero_config
from pytest_agentgate.registry import Registry, get_registry


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
) -> Config:
    """The validated configuration for a run started in ``cwd``."""
    registry = registry or get_registry()
    flags = flags or ReportFlags()
    if flags.lint_format and not flags.lint:
        raise ConfigError(FLAGS_SOURCE, "--lint-format", "goes with --lint FILE")
    notices: list[str] = []
    if config_path is not None:
        path: Path | None = (
            (cwd / config_path) if not Path(config_path).is_absolute() else Path(config_path)
        )
    else:
        path = find_config(cwd)
    if path is not None:
        raw = read_raw(path)
        root = path.resolve().parent
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
        detected = zero_config(root)
        if detected is None:
            raise ConfigError(
                str(cwd),
                None,
                "no agentgate.yml, .agentgate.yml or [tool.agentgate] in pyproject.toml here or "
                "above, and no Python project detected; run `agentgate init` or write a config",
            )
        defaults, marker = detected
        raw = RawConfig(defaults, "zero-config defaults")
        where = "" if root == cwd else f" in {root}"
        notices.append(
            f"no configuration: detected a Python project{where} ({marker}) and gated it with "
            "compileall, ruff, pytest and coverage; `agentgate init` writes this as agentgate.yml"
        )
    if isinstance(raw.data, dict):
        raw.data = copy.deepcopy(raw.data)  # the flags must not leak into a cached document
        _apply_flags(raw.data, flags)
    config = validate(raw, registry, root=root, path=path, profile_override=profile)
    config.notices[:0] = notices
    add_integrity_gate(config)
    return config


def add_integrity_gate(config: Config) -> None:
    """Every project in a git repository gets the integrity gate: the change cannot remove it."""
    if any(g.kind == "integrity" for g in config.gates) or Repo.find(config.root) is None:
        return
    thresholds = defaults_for(config.profile, "integrity")
    config.gates.insert(
        0, GateConfig("integrity", "integrity", command=None, thresholds=thresholds)
    )
