"""The plugin registry: every gate kind and report format, built-in or third-party."""

from __future__ import annotations

import difflib
import functools
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from pytest_agentgate import plugin_api
from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.plugin_api import CoverageFormat, GateKind, LintFormat
from pytest_agentgate.reports.model import CoverageReport, LintReport, ReportError

BUILTIN_PLUGIN = "pytest_agentgate.builtin"
# Filled when the registry is built: formats whose shards the built-in readers can merge.
BUILTIN_COVERAGE_FORMATS: set[str] = set()


class RegistryError(AgentgateError):
    """Two plugins claim the same name, or a plugin returned something unusable."""


@dataclass
class Registry:
    kinds: dict[str, GateKind[Any]] = field(default_factory=dict)
    lint_formats: dict[str, LintFormat] = field(default_factory=dict)
    coverage_formats: dict[str, CoverageFormat] = field(default_factory=dict)
    # Detection by content, when `format` is not configured.
    detect_coverage: Callable[[Path], str] | None = None
    detect_lint: Callable[[str, str], str] | None = None
    # Reads several coverage reports (CI shards) as one; built-in formats only.
    read_coverage_shards: Callable[[list[Path], str | None, Path], CoverageReport] | None = None

    def parse_lint(self, text: str, source: str, fmt: str | None) -> LintReport:
        """Parse one lint report, recognising its format from the content when not given."""
        if fmt is None:
            if self.detect_lint is None:  # pragma: no cover - the built-ins always set it
                raise ReportError(source, "no lint format given and none can be detected")
            fmt = self.detect_lint(text, source)
        return self.lint_parser(fmt)(text, source)

    def read_coverage_many(self, paths: list[Path], fmt: str | None, root: Path) -> CoverageReport:
        """One report from one or more files; several are merged as shards of one run."""
        if len(paths) == 1:
            return self.read_coverage(paths[0], fmt, root)
        if self.read_coverage_shards is None or (
            fmt is not None and fmt not in BUILTIN_COVERAGE_FORMATS
        ):
            raise ReportError(
                ", ".join(map(str, paths)), f"several {fmt} reports cannot be merged; name one"
            )
        return self.read_coverage_shards(paths, fmt, root)

    def lint_parser(self, name: str | None) -> Callable[[str, str], LintReport]:
        if name is None or name not in self.lint_formats:
            known = ", ".join(sorted(self.lint_formats))
            raise ReportError("lint", f"unknown lint format {name!r}", f"agentgate reads: {known}")
        return self.lint_formats[name].parse

    def read_coverage(self, path: Path, fmt: str | None, root: Path) -> CoverageReport:
        if fmt is None:
            if self.detect_coverage is None:  # pragma: no cover - the built-ins always set it
                raise ReportError(str(path), "no coverage format given and none can be detected")
            fmt = self.detect_coverage(path)
        if fmt not in self.coverage_formats:
            known = ", ".join(sorted(self.coverage_formats))
            raise ReportError(
                str(path), f"unknown coverage format {fmt!r}", f"agentgate reads: {known}"
            )
        return self.coverage_formats[fmt].read(path, root)


def _register(table: dict[str, object], items: object, what: str) -> None:
    for item in items or ():  # type: ignore[attr-defined]
        name = getattr(item, "name", None)
        if not isinstance(name, str) or not name:
            raise RegistryError(f"a plugin returned a {what} without a name: {item!r}")
        if name in table:
            raise RegistryError(f"two plugins register the {what} {name!r}")
        table[name] = item


@functools.lru_cache(maxsize=1)
def get_registry() -> Registry:
    """Load every plugin of the ``agentgate`` entry-point group once per process."""
    pm = pluggy.PluginManager(plugin_api.PROJECT)
    pm.add_hookspecs(plugin_api)
    try:
        pm.load_setuptools_entrypoints(plugin_api.PROJECT)
        if not any(getattr(p, "__name__", "") == BUILTIN_PLUGIN for p in pm.get_plugins()):
            # Running from a source tree without installed metadata: the built-ins still load.
            from pytest_agentgate import builtin

            pm.register(builtin)
        # A hook implementation whose name is not a hook (a typo) would never be called.
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise RegistryError(_invalid_plugin(pm, exc)) from None
    except Exception as exc:  # a plugin that cannot even be imported
        raise RegistryError(f"an agentgate plugin could not be loaded: {_oneline(exc)}") from None
    try:
        return build_registry(pm)
    except RegistryError:
        raise
    except Exception as exc:  # a plugin's hook raised
        raise RegistryError(
            f"an agentgate plugin failed while registering: {_oneline(exc)}"
        ) from None


def _oneline(exc: BaseException) -> str:
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        where = f" (in {frames[-1].filename}, line {frames[-1].lineno})"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}{where}"


def _invalid_plugin(pm: pluggy.PluginManager, exc: pluggy.PluginValidationError) -> str:
    """One line naming the plugin (entry point and module) and what is wrong with it."""
    plugin = exc.plugin
    module = getattr(plugin, "__name__", None)
    name = pm.get_name(plugin) or module or repr(plugin)
    who = repr(name) + (f" ({module})" if module and module != name else "")
    hooks = sorted(n for n in vars(plugin_api) if n.startswith(f"{plugin_api.PROJECT}_"))
    unknown = [
        hook
        for hook, caller in vars(pm.hook).items()
        if not hook.startswith("_")
        and not caller.has_spec()
        and any(impl.plugin is plugin for impl in caller.get_hookimpls())
    ]
    if unknown:
        problems = []
        for hook in sorted(unknown):
            close = difflib.get_close_matches(hook, hooks, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "the hooks are " + ", ".join(hooks)
            problems.append(f"@hookimpl {hook!r} is not an agentgate hook; {hint}")
        detail = "; ".join(problems)
    else:  # pluggy's own words (a hook implementation with arguments the hook does not have)
        detail = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"the agentgate plugin {who} is invalid: {detail}"


def build_registry(pm: pluggy.PluginManager) -> Registry:
    registry = Registry()
    # pluggy calls the newest registration first; reverse so built-ins claim their names first.
    for batch in reversed(pm.hook.agentgate_gate_kinds()):
        _register(registry.kinds, batch, "gate kind")  # type: ignore[arg-type]
    for batch in reversed(pm.hook.agentgate_lint_formats()):
        _register(registry.lint_formats, batch, "lint format")  # type: ignore[arg-type]
    for batch in reversed(pm.hook.agentgate_coverage_formats()):
        _register(registry.coverage_formats, batch, "coverage format")  # type: ignore[arg-type]
    from pytest_agentgate.reports.coverage import COVERAGE_ALIASES, COVERAGE_FORMATS
    from pytest_agentgate.reports.lint import detect_lint_format

    BUILTIN_COVERAGE_FORMATS.update(COVERAGE_FORMATS, COVERAGE_ALIASES)
    registry.detect_coverage = _detect_coverage
    registry.detect_lint = detect_lint_format
    registry.read_coverage_shards = _read_coverage_shards
    return registry


# The coverage readers are imported when a coverage report is first read, not with the registry.


def _detect_coverage(path: Path) -> str:
    from pytest_agentgate.reports.coverage import detect_coverage_format

    return detect_coverage_format(path)


def _read_coverage_shards(paths: list[Path], fmt: str | None, root: Path) -> CoverageReport:
    from pytest_agentgate.reports.coverage import read_coverage_files

    return read_coverage_files(paths, format=fmt, root=root)
