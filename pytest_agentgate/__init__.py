"""agentgate: the completion gate for AI coding agents.

Kept import-light: ``agentgate --version`` and pytest's plugin loading import this module, so
the engine is imported only when :func:`verify` is called.
"""

from __future__ import annotations

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
    **reports: Any,
) -> Verdict:
    """Gate the project at ``path`` (default: the current directory) and return the Verdict.

    ``reports`` takes the CLI's report options: ``junit=[globs]``, ``coverage=path``,
    ``lint=path``, ``lint_format=name``. Raises :class:`pytest_agentgate.config.ConfigError`
    for configuration mistakes.
    """
    from pytest_agentgate.config.resolve import verify as _verify

    return _verify(path, config=config, profile=profile, run=run, **reports)


def __getattr__(name: str) -> Any:
    if name == "hookimpl":
        from pytest_agentgate.hookspecs import hookimpl

        return hookimpl
    raise AttributeError(name)


def pytest_addhooks(pluginmanager: Any) -> None:
    """``pytest -p pytest_agentgate`` registers this package: register the plugin module
    under its entry-point name, so that entry-point loading (if not disabled) finds it there
    instead of registering it a second time."""
    from pytest_agentgate.pytest_plugin import entry as plugin

    if not pluginmanager.is_registered(plugin):
        pluginmanager.register(plugin, "agentgate")
