"""Load, validate and merge the configuration.

Sources, first found wins: ``--config FILE``; ``agentgate.yml`` / ``.agentgate.yml`` (also
``.yaml``); ``[tool.agentgate]`` in ``pyproject.toml``; ``agentgate.json`` in the "workspace
quality gates" shape. Every user mistake becomes a :class:`ConfigError` that names the file, the
line when known, the key and, for a misspelling, the nearest valid key.
"""

from pytest_agentgate.config.files import RawConfig, find_config, read_raw
from pytest_agentgate.config.model import (
    FLAGS_SOURCE,
    Config,
    ConfigError,
)
from pytest_agentgate.config.validate import load_config, validate

__all__ = [
    "FLAGS_SOURCE",
    "Config",
    "ConfigError",
    "RawConfig",
    "find_config",
    "load_config",
    "read_raw",
    "validate",
]
