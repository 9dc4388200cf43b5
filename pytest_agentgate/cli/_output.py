"""Writing what a subcommand made: to ``--output FILE``, and nowhere after a broken pipe."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def write_output(path: Path, text: str) -> None:
    from pytest_agentgate.config import ConfigError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            str(path), "--output", f"cannot write the verdict: {exc.strerror}"
        ) from None


def silence_stdout() -> None:
    """After a broken pipe, send what is still buffered nowhere, so exit does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
