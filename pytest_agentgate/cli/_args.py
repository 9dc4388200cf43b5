"""What more than one subcommand shares: the parser class, ``--config``/``--profile``, task ids
and the project whose ledger ``block``, ``reset`` and ``stats`` work on.

Kept import-light: every subcommand's parser is built for ``agentgate --version`` too, so the
configuration and the ledger are imported only when an argument is translated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_agentgate.cli._exit import EXIT_USAGE
from pytest_agentgate.profiles import PROFILE_NAMES

if TYPE_CHECKING:
    from typing import TypeAlias

    from pytest_agentgate.config.model import Config
    from pytest_agentgate.state.task import TaskRef


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors on exit code 2 and no traceback."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"agentgate: error: {message}\n")


if TYPE_CHECKING:
    Subparsers: TypeAlias = argparse._SubParsersAction[Parser]


def add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="config file (default: discovered)")


def add_config_and_profile(parser: argparse.ArgumentParser) -> None:
    add_config(parser)
    parser.add_argument("--profile", choices=PROFILE_NAMES, help="override the config's profile")


def task_id(text: str) -> str:
    """``--task ID``: a valid task id, or a usage error that says why not."""
    from pytest_agentgate.state.task import LedgerError, check_task_id

    try:
        return check_task_id(text)
    except LedgerError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def task_ref(task: str | None) -> TaskRef | None:
    from pytest_agentgate.state.task import TaskRef

    return None if task is None else TaskRef(task, "cli")


def ledger_project(args: argparse.Namespace) -> tuple[Path, Config | None]:
    """The project root whose ``.agentgate/`` holds the ledger, and its config if any."""
    from pytest_agentgate.config.files import find_config
    from pytest_agentgate.config.validate import load_config
    from pytest_agentgate.registry import get_registry

    cwd = Path.cwd()
    path = (cwd / args.config) if args.config else find_config(cwd)
    if path is None:
        return cwd, None
    config = load_config(path, get_registry())
    return config.root, config
