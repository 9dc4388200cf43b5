"""``agentgate github``: the GitHub Action's step (action.yml runs it; see github/door.py).

It takes no arguments: the runner's ``GITHUB_*`` variables and the action's inputs as
``INPUT_*`` variables say everything, as they do for any action.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers


def add_parser(subparsers: Subparsers) -> Parser:
    return subparsers.add_parser(
        "github",
        help="gate a pull request inside GitHub Actions",
        description="The GitHub Action's step: reads the event and the action's inputs "
        "(INPUT_*), gates the pull request, and writes annotations, the job summary, the step "
        "outputs and the pull request's comment.",
    )


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.github.door import run_action

    return run_action(os.environ, sys.stdout)
