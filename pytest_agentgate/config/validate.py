"""Validation: the raw document against the gate kinds' option schemas, with profile defaults
merged under the overrides. Every user mistake becomes a :class:`ConfigError` that names the file,
the line when known, the key and, for a misspelling, the nearest valid key.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_agentgate.commands import junit_in_command, runs_pytest
from pytest_agentgate.config.files import RawConfig, describe_value, read_raw
from pytest_agentgate.config.model import (
    ALLOW_KEYS,
    ATTEMPT_KEYS,
    BUDGET_KEYS,
    BUILT_IN_KINDS,
    BUILTIN_GATES,
    CONTINUATION_KEYS,
    DEFAULT_TIMEOUT,
    HOOK_KEYS,
    INTEGRITY_KEYS,
    MIN_HOOK_BUDGET_S,
    TOP_KEYS,
    AllowRule,
    Config,
    ConfigError,
    GateConfig,
    KeyPath,
    Option,
)
from pytest_agentgate.profiles import DEFAULT_PROFILE, PROFILE_NAMES, defaults_for
from pytest_agentgate.state.storage import STATE_DIR

if TYPE_CHECKING:  # registry.py imports the configuration model: no cycle at run time
    from pytest_agentgate.registry import Registry


class _Validator:
    def __init__(self, raw: RawConfig, registry: Registry) -> None:
        self.raw = raw
        self.registry = registry
        # Where each gate was written (a custom gate lives at gates.custom.N), for errors.
        self.paths: dict[str, KeyPath] = {}

    def error(self, path: KeyPath, message: str) -> ConfigError:
        key = self.raw.display.get(path) or ".".join(str(p) for p in path)
        return ConfigError(self.raw.source, key, message, self._line(path))

    def _line(self, path: KeyPath) -> int | None:
        if not path:
            return self.raw.lines.get(path)
        while path:
            if path in self.raw.lines:
                return self.raw.lines[path]
            path = path[:-1]
        return None

    def check_keys(self, mapping: Mapping[str, Any], valid: Sequence[str], path: KeyPath) -> None:
        for key in mapping:
            if key not in valid:
                close = difflib.get_close_matches(str(key), list(valid), n=1, cutoff=0.6)
                hint = f"did you mean '{close[0]}'?" if close else "valid keys: " + ", ".join(valid)
                raise self.error((*path, key), f"unknown key; {hint}")

    def mapping(self, value: Any, path: KeyPath) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(path, f"expected a mapping of keys, got {describe_value(value)}")
        return value

    def integer(self, value: Any, path: KeyPath, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(
                path, f"expected a whole number >= {minimum}, got {describe_value(value)}"
            )
        return value

    def option(self, opt: Option, value: Any, path: KeyPath) -> Any:
        """The validated value of one gate option."""
        if value is None and opt.threshold:
            return None  # an explicit null switches the threshold off
        kind = opt.type
        if kind == "str":
            if not isinstance(value, str) or not value.strip():
                raise self.error(path, f"expected a non-empty string, got {describe_value(value)}")
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                raise self.error(path, f"expected true or false, got {describe_value(value)}")
            return value
        if kind == "int":
            return self.integer(value, path, 0)
        if kind in ("percent", "number"):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
            ):
                raise self.error(path, f"expected a number, got {describe_value(value)}")
            if kind == "percent" and not 0 <= value <= 100:
                raise self.error(path, f"expected a percentage from 0 to 100, got {value}")
            return float(value)
        if kind == "choice":
            if value not in opt.choices:
                close = difflib.get_close_matches(str(value), list(opt.choices), n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                raise self.error(
                    path, f"{value!r} is not valid; {hint}choose one of: " + ", ".join(opt.choices)
                )
            return value
        if kind == "globs":
            items = [value] if isinstance(value, str) else value
            if (
                not isinstance(items, list)
                or not items
                or not all(isinstance(i, str) and i.strip() for i in items)
            ):
                raise self.error(
                    path, f"expected a path or a list of paths, got {describe_value(value)}"
                )
            return list(items)
        if kind == "env":
            env = self.mapping(value, path)
            out = {}
            for name, item in env.items():
                if isinstance(item, (dict, list)) or item is None:
                    raise self.error(
                        (*path, name), f"expected a string, got {describe_value(item)}"
                    )
                out[str(name)] = item if isinstance(item, str) else json.dumps(item)
            return out
        raise AssertionError(f"unknown option type {kind}")  # pragma: no cover

    def gate(self, name: str, kind: str, value: Any, path: KeyPath, profile: str) -> GateConfig:
        spec = self.registry.kinds[kind]
        self.paths.setdefault(name, path)
        body = dict(self.mapping(value, path))
        body.pop("kind", None)
        options = {o.name: o for o in spec.options}
        self.check_keys(body, list(options), path)
        values = {key: self.option(options[key], item, (*path, key)) for key, item in body.items()}
        if "timeout" in values:
            timeout = values["timeout"]
            if self.raw.ms_timeouts:
                timeout = timeout / 1000.0
            if timeout <= 0:
                unit = "milliseconds" if self.raw.ms_timeouts else "seconds"
                raise self.error((*path, "timeout"), f"expected a number of {unit} above 0")
            values["timeout"] = timeout
        thresholds = defaults_for(profile, kind)
        thresholds.update(
            {k: v for k, v in values.items() if k in options and options[k].threshold}
        )
        extra = {
            k: v
            for k, v in values.items()
            if not options[k].threshold
            and k not in ("command", "timeout", "enabled", "blocking", "report", "format", "env")
        }
        return GateConfig(
            name=name,
            kind=kind,
            command=values.get("command"),
            timeout=values.get("timeout", DEFAULT_TIMEOUT),
            reports=values.get("report", []),
            format=values.get("format"),
            thresholds=thresholds,
            options=extra,
            enabled=values.get("enabled", True),
            blocking=values.get("blocking", True),
            env=values.get("env", {}),
        )


def validate(
    raw: RawConfig,
    registry: Registry,
    *,
    root: Path,
    path: Path | None,
    profile_override: str | None = None,
) -> Config:
    v = _Validator(raw, registry)
    data = v.mapping(raw.data, ())
    v.check_keys(data, TOP_KEYS, ())
    config = Config(root=root, path=path)
    profile = data.get("profile", DEFAULT_PROFILE)
    if profile_override is not None and profile_override not in PROFILE_NAMES:
        raise ConfigError("--profile", None, _not_a_profile(profile_override))
    if profile not in PROFILE_NAMES:
        raise v.error(("profile",), _not_a_profile(profile))
    config.profile = profile_override or profile
    if "enabled" in data:
        config.enabled = v.option(Option("enabled", "bool", ""), data["enabled"], ("enabled",))
    if "attempts" in data:
        attempts = v.mapping(data["attempts"], ("attempts",))
        v.check_keys(attempts, ATTEMPT_KEYS, ("attempts",))
        if "max" in attempts:
            config.attempts_max = v.integer(attempts["max"], ("attempts", "max"), 1)
        _attempt_options(v, attempts, config)
    if "base" in data:
        config.base = v.option(Option("base", "str", ""), data["base"], ("base",))
    if "integrity" in data:
        config.integrity_allow = _integrity_allow(v, data["integrity"])
    if "continuation" in data:
        cont = v.mapping(data["continuation"], ("continuation",))
        v.check_keys(cont, CONTINUATION_KEYS, ("continuation",))
        if "max_chars" in cont:
            config.max_chars = v.integer(cont["max_chars"], ("continuation", "max_chars"), 200)
    if "hook" in data:
        hook = v.mapping(data["hook"], ("hook",))
        v.check_keys(hook, HOOK_KEYS, ("hook",))
        if "budget" in hook:
            config.hook_budget_s = v.integer(hook["budget"], ("hook", "budget"), MIN_HOOK_BUDGET_S)
    gates = v.mapping(data.get("gates", {}), ("gates",))
    for name, body in gates.items():
        if name == "session" and "session" in v.registry.kinds:
            continue
        config.gates.extend(_gates_named(v, str(name), body, config.profile))
    if "session" in v.registry.kinds:
        config.session = _session_gate(v, gates.get("session"), data.get("budget"), config.profile)
    elif "budget" in data:
        raise v.error(("budget",), "needs the session gate kind, which is not registered")
    names = [g.name for g in config.gates]
    if dup := next((n for n in names if names.count(n) > 1), None):
        raise v.error(("gates",), f"two gates are named {dup!r}; gate names must be unique")
    for gate in config.gates:
        _complete(gate, config, v)
    return config


def _session_gate(v: _Validator, body: Any, budget: Any, profile: str) -> GateConfig:
    """``gates.session`` (the signals' settings) with ``budget:`` (limits of the session)."""
    gate = v.gate(
        "session", "session", body if body is not None else {}, ("gates", "session"), profile
    )
    if budget is None:
        return gate
    limits = v.mapping(budget, ("budget",))
    v.check_keys(limits, BUDGET_KEYS, ("budget",))
    for key, value in limits.items():
        path: KeyPath = ("budget", key)
        if value is None:
            gate.thresholds[key] = None
        elif key == "max_context_percent":
            percent = v.option(Option(key, "percent", ""), value, path)
            if percent <= 0:
                raise v.error(path, "expected a percentage above 0 and at most 100")
            gate.thresholds[key] = percent
        else:
            gate.thresholds[key] = v.integer(value, path, 1)
    return gate


def _integrity_allow(v: _Validator, value: Any) -> list[AllowRule]:
    integrity = v.mapping(value, ("integrity",))
    v.check_keys(integrity, INTEGRITY_KEYS, ("integrity",))
    items = integrity.get("allow", [])
    if not isinstance(items, list):
        raise v.error(("integrity", "allow"), "expected a list of {rule, path, reason}")
    rules = []
    for index, item in enumerate(items):
        where: KeyPath = ("integrity", "allow", index)
        entry = v.mapping(item, where)
        v.check_keys(entry, ALLOW_KEYS, where)
        texts = {}
        for key in ALLOW_KEYS:
            text = entry.get(key)
            if not isinstance(text, str) or not text.strip():
                what = "why a human approved it" if key == "reason" else f"the finding's {key}"
                raise v.error((*where, key), f"needs `{key}`: {what}")
            texts[key] = text.strip()
        rules.append(AllowRule(texts["rule"], texts["path"], texts["reason"]))
    return rules


def _not_a_profile(profile: Any) -> str:
    close = difflib.get_close_matches(str(profile), PROFILE_NAMES, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"{profile!r} is not a profile; {hint}choose one of: " + ", ".join(PROFILE_NAMES)


def _attempt_options(v: _Validator, attempts: Mapping[str, Any], config: Config) -> None:
    """``attempts.global_max`` and ``attempts.per_branch`` (read by ledger.py)."""
    if "global_max" in attempts:
        config.attempts_global_max = v.integer(
            attempts["global_max"], ("attempts", "global_max"), 1
        )
    if "per_branch" in attempts:
        config.attempts_per_branch = v.option(
            Option("per_branch", "bool", ""), attempts["per_branch"], ("attempts", "per_branch")
        )


def _gates_named(v: _Validator, name: str, body: Any, profile: str) -> list[GateConfig]:
    path: KeyPath = ("gates", name)
    if name == "custom":
        if not isinstance(body, list):
            raise v.error(path, f"expected a list of custom gates, got {describe_value(body)}")
        out = []
        for index, item in enumerate(body):
            item_path = (*path, index)
            mapping = v.mapping(item, item_path)
            gate_name = mapping.get("name")
            if not isinstance(gate_name, str) or not gate_name.strip():
                raise v.error((*item_path, "name"), "every custom gate needs a name")
            out.append(v.gate(gate_name, "custom", mapping, item_path, profile))
        return out
    if name in BUILTIN_GATES:
        kind = name
        given = body.get("kind", name) if isinstance(body, Mapping) else name
        if given != name:
            raise v.error(
                (*path, "kind"),
                f"the {name!r} gate is always of kind {name!r}; give a gate of kind "
                f"{given!r} another name",
            )
    else:
        given_kind = body.get("kind") if isinstance(body, Mapping) else None
        if given_kind is None:
            close = difflib.get_close_matches(name, [*BUILTIN_GATES, "custom"], n=1, cutoff=0.6)
            hint = (
                f"did you mean '{close[0]}'?"
                if close
                else "name a built-in gate (build, lint, test, coverage, custom) or set `kind:`"
            )
            raise v.error(path, f"unknown gate; {hint}")
        if not isinstance(given_kind, str) or given_kind not in v.registry.kinds:
            raise v.error(
                (*path, "kind"),
                f"unknown gate kind {given_kind!r}; {_suggest(given_kind, v.registry.kinds)}"
                "known kinds: " + ", ".join(sorted(v.registry.kinds)),
            )
        if given_kind == "session":
            raise v.error(
                (*path, "kind"), "the session gate has one place: `gates: {session: {...}}`"
            )
        kind = given_kind
    return [v.gate(name, kind, body if body is not None else {}, path, profile)]


def _complete(gate: GateConfig, config: Config, v: _Validator) -> None:
    """Fill what the user may leave out, and refuse gates that cannot produce evidence."""
    path: KeyPath = v.paths.get(gate.name, ("gates", gate.name))
    if gate.kind == "test" and not gate.reports and gate.command:
        if written := junit_in_command(gate.command):
            gate.reports = [written]
            config.notices.append(f"{gate.name}: reading {written}, the command's --junitxml")
        elif _can_add_junit(gate.command):
            junit = f"{STATE_DIR}/junit-{gate.name}.xml"
            gate.command += f" --junitxml={junit} -o junit_family=xunit1"
            gate.reports = [junit]
            config.notices.append(f"{gate.name}: added --junitxml={junit} to the pytest command")
    if gate.kind == "test" and gate.enabled and gate.command and not gate.reports:
        # Tests are counted from JUnit XML only; without it the gate could never fail.
        raise v.error(
            path,
            "needs `report`: the JUnit XML file(s) its command writes "
            "(agentgate counts tests from JUnit XML, never from a command's output)",
        )
    if gate.kind == "lint" and gate.format is None:
        # Inferred from the command or report name when it says; otherwise each report is
        # recognised by its content when it is read.
        gate.format = _infer_lint_format(gate, v.registry)
    if (
        gate.kind == "lint"
        and gate.format is not None
        and gate.format not in v.registry.lint_formats
    ):
        raise v.error(
            (*path, "format"),
            f"unknown lint format {gate.format!r}; "
            f"{_suggest(gate.format, v.registry.lint_formats)}agentgate reads: "
            + ", ".join(sorted(v.registry.lint_formats)),
        )
    if (
        gate.kind == "coverage"
        and gate.format is not None
        and (gate.format not in v.registry.coverage_formats)
    ):
        raise v.error(
            (*path, "format"),
            f"unknown coverage format {gate.format!r}; "
            f"{_suggest(gate.format, v.registry.coverage_formats)}agentgate reads: "
            + ", ".join(sorted(v.registry.coverage_formats)),
        )
    if gate.kind == "lint" and gate.command and not gate.reports:
        gate.command = _json_lint_command(gate.command, gate.format or "", config, gate.name)
    if gate.enabled and gate.command is None and not gate.reports and gate.kind in BUILT_IN_KINDS:
        # A plugin's kind may collect its evidence without either (its collector says so).
        takes_report = any(o.name == "report" for o in v.registry.kinds[gate.kind].options)
        raise v.error(
            path, "needs a `command` or a `report` to read" if takes_report else "needs a `command`"
        )
    bounds = (gate.thresholds.get("min"), gate.thresholds.get("max"))
    if gate.kind == "custom" and "metric" in gate.options and bounds == (None, None):
        raise v.error(path, "`metric` needs `min` or `max`")
    if gate.kind == "custom" and "metric" not in gate.options and bounds != (None, None):
        bound = "min" if bounds[0] is not None else "max"
        raise v.error(
            (*path, bound), f"`{bound}` needs `metric`, the number in the report to check"
        )


def _suggest(value: object, valid: Iterable[str]) -> str:
    """``did you mean 'ruff'? `` for a near miss, else nothing."""
    close = difflib.get_close_matches(str(value), sorted(valid), n=1, cutoff=0.75)
    return f"did you mean '{close[0]}'? " if close else ""


def _can_add_junit(command: str) -> bool:
    """A pytest command that names no JUnit file and that the shell can read: agentgate adds
    ``--junitxml``. A bare ``--junitxml`` or unbalanced quotes are left for the error."""
    try:
        shlex.split(command)
    except ValueError:
        return False
    return runs_pytest(command) and "--junitxml" not in command and "--junit-xml" not in command


def _infer_lint_format(gate: GateConfig, registry: Registry) -> str | None:
    if gate.command is None and len(gate.reports) != 1:
        return None  # several reports may come from several tools: each is recognised by content
    text = gate.command or gate.reports[0]
    for name in sorted(registry.lint_formats, key=len, reverse=True):
        if re.search(rf"\b{re.escape(name)}\b", text):
            return name
    return None


def _json_lint_command(command: str, fmt: str, config: Config, name: str) -> str:
    """Ask the linter for JSON when the command would print text the gate cannot read."""
    if fmt == "ruff" and "--output-format" not in command and "ruff" in command:
        config.notices.append(f"{name}: added --output-format json to the ruff command")
        return command + " --output-format json"
    if fmt == "eslint" and not re.search(r"(\s-f\s|--format)", command):
        config.notices.append(f"{name}: added -f json to the eslint command")
        return command + " -f json"
    return command


def load_config(path: Path, registry: Registry, *, profile_override: str | None = None) -> Config:
    raw = read_raw(path)
    root = path.resolve().parent
    return validate(raw, registry, root=root, path=path, profile_override=profile_override)
