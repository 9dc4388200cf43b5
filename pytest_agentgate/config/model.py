"""The validated configuration and the error every configuration mistake becomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.profiles import DEFAULT_PROFILE

OptionType = Literal["str", "int", "percent", "number", "bool", "globs", "choice", "env"]


@dataclass(frozen=True)
class Option:
    """One config key a gate kind accepts (gates/base.py declares the common ones)."""

    name: str
    type: OptionType
    doc: str
    choices: tuple[str, ...] = ()
    # Thresholds take profile defaults and may be set to null to switch them off.
    threshold: bool = False


YAML_NAMES = ("agentgate.yml", ".agentgate.yml", "agentgate.yaml", ".agentgate.yaml")
JSON_NAMES = ("agentgate.json", ".agentgate.json")
BUILTIN_GATES = ("build", "lint", "test", "coverage")
# The gate kinds agentgate ships; third-party kinds come from plugins.
BUILT_IN_KINDS = (*BUILTIN_GATES, "custom")
TOP_KEYS = (
    "profile",
    "gates",
    "attempts",
    "continuation",
    "enabled",
    "base",
    "integrity",
    "budget",
    "hook",
)
# `budget:` keys; each is a threshold of the session gate (gates/session.py).
BUDGET_KEYS = ("max_tool_calls", "max_tokens", "max_context_percent")
# The session gate's thresholds that escalate when they are crossed: an escalation lets the agent
# stop, so a change that lowers one gets the agent out sooner (red team 43), as fewer attempts do.
ESCALATING_KEYS = ("loop_repeats", "max_file_edits", *BUDGET_KEYS)
INTEGRITY_KEYS = ("allow",)
ALLOW_KEYS = ("rule", "path", "reason")
ATTEMPT_KEYS = ("max", "global_max", "per_branch")
CONTINUATION_KEYS = ("max_chars",)
# `hook:` keys: the harness stop hooks' door (pytest_agentgate/harness/).
HOOK_KEYS = ("budget",)
# Seconds a stop hook may take, below the harness's own hook timeout (install-hook writes a
# larger one); gates still running then are stopped and the stop is let through, said loudly.
DEFAULT_HOOK_BUDGET_S = 100
MIN_HOOK_BUDGET_S = 10
DEFAULT_MAX_CHARS = 4000
# The source name of a configuration made only of the report flags.
FLAGS_SOURCE = "command line"

KeyPath = tuple[str | int, ...]


class ConfigError(AgentgateError):
    """A configuration mistake, worded for the person who made it."""

    def __init__(self, source: str, key: str | None, message: str, line: int | None = None) -> None:
        self.source = source
        self.key = key
        self.message = message
        self.line = line
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {key}: {message}" if key else f"{where}: {message}")


DEFAULT_TIMEOUT = 600.0


@dataclass
class GateConfig:
    """One gate as configured, after profile defaults were merged under the overrides."""

    name: str
    kind: str
    command: str | None = None
    timeout: float | None = DEFAULT_TIMEOUT
    reports: list[str] = field(default_factory=list)
    format: str | None = None
    thresholds: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True
    blocking: bool = True
    env: dict[str, str] = field(default_factory=dict)
    # Where each threshold in force came from ("profile strict", "agentgate.yml at main
    # (abc123)", ...): filled by config/base.py, shown in the verdict.
    sources: dict[str, str] = field(default_factory=dict)
    # A gate the change adds (config/base.py), or zero-config's lint gate for a linter the
    # change declares beside the base's: what it runs is no part of the base's law.
    from_change: bool = False


@dataclass(frozen=True)
class AllowRule:
    """``integrity: {allow: [{rule, path, reason}]}``: an integrity finding a human approved."""

    rule: str
    path: str  # a glob over project-relative paths
    reason: str


@dataclass(frozen=True)
class ConfigChange:
    """A setting the change weakened in agentgate's configuration; the base's value is in force.

    ``path`` is the config file, relative to the project; ``line`` where the setting is (or was).
    """

    key: str
    message: str
    path: str
    line: int | None = None


@dataclass
class Config:
    root: Path
    path: Path | None = None
    profile: str = DEFAULT_PROFILE
    gates: list[GateConfig] = field(default_factory=list)
    attempts_max: int = 3
    # Rejections of one task across every source (CLI, hooks, Action) before a human.
    attempts_global_max: int = 6
    # Without --task, count the attempts of the current git branch.
    attempts_per_branch: bool = False
    max_chars: int = DEFAULT_MAX_CHARS
    hook_budget_s: int = DEFAULT_HOOK_BUDGET_S
    enabled: bool = True
    # The commit the change is judged against (``base:``); see pytest_agentgate/git.py.
    base: str | None = None
    # Integrity findings a human approved, in the base's configuration (never the change's).
    integrity_allow: list[AllowRule] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    # What the change weakened in this configuration against the base's (config/base.py); the
    # integrity gate reports each as gate-config-loosened.
    loosened: list[ConfigChange] = field(default_factory=list)
    # The session gate (``gates.session`` and ``budget``): judged only when a door gives the
    # agent's session (engine.with_session), so it is kept apart from the gates every run has.
    session: GateConfig | None = None

    def gate(self, name: str) -> GateConfig | None:
        return next((g for g in self.gates if g.name == name), None)
