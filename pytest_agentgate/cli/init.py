"""``agentgate init``: write a starter ``agentgate.yml`` for this project, never over one."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_agentgate.cli._exit import EXIT_PASS, EXIT_USAGE
from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.profiles import PROFILE_NAMES

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers


def add_parser(subparsers: Subparsers) -> Parser:
    parser = subparsers.add_parser("init", help="write a starter agentgate.yml for this project")
    # strict, as zero-config is: a failing test is never quiet.
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="strict")
    return parser


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.config.files import find_config
    from pytest_agentgate.config.starter import starter_config

    cwd = Path.cwd()
    existing = find_config(cwd)
    if existing is not None:
        print(
            f"agentgate: {existing} already configures this project; nothing was written",
            file=sys.stderr,
        )
        return EXIT_USAGE
    text = starter_config(cwd, args.profile)
    if text is None:
        raise AgentgateError(
            "no Python or JavaScript project detected here "
            "(no pyproject.toml, setup.py, *.py or package.json)"
        )
    target = cwd / "agentgate.yml"
    # O_EXCL: never overwrite, even if the file appeared since the check above.
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        print(f"agentgate: {target} already exists; nothing was written", file=sys.stderr)
        return EXIT_USAGE
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(
        f"wrote {target.name}; run `agentgate explain` to see every threshold, "
        "`agentgate verify` to gate the project"
    )
    return EXIT_PASS
