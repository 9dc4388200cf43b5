"""The plugin registry: every gate kind and report format, built-in or third-party."""

from __future__ import annotations

import contextlib
import difflib
import functools
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from pytest_agentgate import plugin_api
from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.plugin_api import CoverageFormat, GateKind, LintFormat
from pytest_agentgate.reports.model import CoverageReport, LintReport, ReportError

if TYPE_CHECKING:
    import importlib.metadata

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
        load_entry_points(pm, plugin_api.PROJECT)
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


# -- which distributions' plugins load ------------------------------------------------------


def load_entry_points(pm: pluggy.PluginManager, group: str) -> int:
    """Register every ``group`` entry point of the installed distributions, as pluggy's
    ``load_setuptools_entrypoints`` does (one registration per name; blocked names skipped),
    except those of a distribution that sits in the project's own folder.

    ``python -m`` (or ``PYTHONPATH=.``) puts the current directory on ``sys.path``, and a
    ``*.dist-info`` folder there is a distribution to ``importlib.metadata``: the project's
    files would register a plugin that runs inside the gate. A distribution counts as installed
    when it sits in one of the interpreter's site-packages folders, wherever that is (a
    ``.venv`` inside the project is fine); one found elsewhere inside the project is ignored,
    with a warning naming it. Returns the number of plugins registered.
    """
    import importlib.metadata

    project = _project_folders()
    installed = _installed_folders()
    found = []
    for dist in importlib.metadata.distributions():
        entry_points = [ep for ep in dist.entry_points if ep.group == group]
        if entry_points:
            location = _location(dist)
            outside = location is None or location in installed or not _inside(location, project)
            found.append((dist, entry_points, outside))
    # The project's own build metadata (the `*.egg-info` of `pip install -e .`) next to the
    # installed copy of the same distribution is ignored without a word.
    allowed = {_name(dist) for dist, _, outside in found if outside}
    count = 0
    for dist, entry_points, outside in found:
        if not outside:
            if _name(dist) not in allowed:
                names = ", ".join(repr(ep.name) for ep in entry_points)
                print(
                    f"agentgate: warning: ignored the agentgate plugin {names} of "
                    f"{_metadata(dist)}: it is in the project's own folder, not installed; "
                    "install it into the environment (pip install) to use it",
                    file=sys.stderr,
                )
            continue
        for ep in entry_points:
            if pm.has_plugin(ep.name) or pm.is_blocked(ep.name):
                continue
            pm.register(ep.load(), name=ep.name)
            count += 1
    return count


def _name(dist: importlib.metadata.Distribution) -> str:
    try:
        name = dist.metadata["Name"]
    except KeyError:  # metadata without a name
        name = None
    return re.sub(r"[-_.]+", "-", str(name or "")).lower()


def _metadata(dist: importlib.metadata.Distribution) -> str:
    path = getattr(dist, "_path", None)
    return str(path) if path is not None else repr(_name(dist))


def _location(dist: importlib.metadata.Distribution) -> Path | None:
    """The ``sys.path`` folder a distribution was found in (its metadata folder's parent)."""
    path = getattr(dist, "_path", None)
    try:
        folder = Path(path).parent if path is not None else Path(str(dist.locate_file("")))
        return folder.resolve()
    except (OSError, TypeError, ValueError):
        return None


def _installed_folders() -> set[Path]:
    """The interpreter's site-packages folders: where an installed distribution sits."""
    import site
    import sysconfig

    folders = [sysconfig.get_paths().get(key) for key in ("purelib", "platlib")]
    with contextlib.suppress(AttributeError):  # old virtualenvs' site module
        folders.extend(site.getsitepackages())
    with contextlib.suppress(AttributeError):
        folders.append(site.getusersitepackages())
    resolved = set()
    for folder in folders:
        if folder:
            with contextlib.suppress(OSError):
                resolved.add(Path(folder).resolve())
    return resolved


def _project_folders() -> list[Path]:
    """The current directory and the repository (the nearest folder up with ``.git``) it is in."""
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        return []
    folders = [cwd]
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            folders.append(folder)
            break
    return folders


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


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
