"""agentgate: the completion gate for AI coding agents.

Kept import-light: ``agentgate --version`` and pytest's plugin loading import this module, so
the engine is imported only when :func:`verify` is called.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["__version__", "hookimpl", "verify"]

if TYPE_CHECKING:
    from pytest_agentgate.verdict import Verdict


def verify(
    path: str | None = None,
    *,
    config: str | None = None,
    profile: str | None = None,
    run: bool = True,
    junit: Sequence[str] = (),
    coverage: str | None = None,
    lint: Sequence[str] | str = (),
    lint_format: str | None = None,
    task: str | None = None,
    claim: str | None = None,
    record: bool = False,
) -> Verdict:
    """Gate the project at ``path`` (default: the current directory) and return the Verdict.

    The report options are the CLI's: ``junit=[globs]``, ``coverage=path``, ``lint=path``,
    ``lint_format=name``. Nothing is recorded (no attempt counted, no history line) unless
    ``record`` is true; ``task`` and ``claim`` are the CLI's ``--task`` and ``--claim``.
    Raises :class:`pytest_agentgate.errors.AgentgateError` (a ``ConfigError`` for a configuration
    mistake, a ``RegistryError`` for a broken plugin) with a message that says what to do.
    """
    from pathlib import Path

    from pytest_agentgate.config.resolve import ReportFlags, resolve_config
    from pytest_agentgate.engine import Request
    from pytest_agentgate.engine import run as run_pipeline
    from pytest_agentgate.registry import get_registry

    registry = get_registry()
    flags = ReportFlags(
        junit=list(junit),
        coverage=coverage,
        lint=[lint] if isinstance(lint, str) else list(lint),
        lint_format=lint_format,
    )
    cwd = Path(path or ".").resolve()
    settings = resolve_config(
        cwd, config_path=config, profile=profile, flags=flags, registry=registry
    )
    request = Request(settings, door="library", task=task, claim=claim, run=run, record=record)
    return run_pipeline(request, registry)


def __getattr__(name: str) -> Any:
    if name == "hookimpl":
        from pytest_agentgate.plugin_api import hookimpl

        return hookimpl
    raise AttributeError(name)


def pytest_addhooks(pluginmanager: Any) -> None:
    """``pytest -p pytest_agentgate`` registers this package: register the plugin module
    under its entry-point name, so that entry-point loading (if not disabled) finds it there
    instead of registering it a second time."""
    from pytest_agentgate.pytest_plugin import entry as plugin

    if not pluginmanager.is_registered(plugin):
        pluginmanager.register(plugin, "agentgate")
