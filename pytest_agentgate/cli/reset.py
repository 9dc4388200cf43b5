"""``agentgate reset``: clear a task's attempts, or every task's.

The reset is recorded outside the project (who, when, which task: see
:class:`pytest_agentgate.state.storage.MirroredStorage`) and the task's next verdict says so.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pytest_agentgate.cli._args import add_config, ledger_project, task_id
from pytest_agentgate.cli._exit import EXIT_PASS

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers


def add_parser(subparsers: Subparsers) -> Parser:
    parser = subparsers.add_parser(
        "reset", help="clear a task's attempts (all tasks without --task)"
    )
    add_config(parser)
    parser.add_argument("--task", type=task_id, metavar="ID", help="the task to clear")
    return parser


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.state.ledger import reset

    root, _ = ledger_project(args)
    cleared = reset(root, args.task)
    if args.task:
        what = f"cleared task {args.task}" if cleared else f"task {args.task} had no attempts"
    else:
        what = f"cleared {cleared} task{'' if cleared == 1 else 's'}"
    if cleared:  # a reset is never silent: the task's next verdict names who reset it, and when
        what += " (recorded: the next verdict says who reset it and when)"
    print(f"agentgate: {what}")
    return EXIT_PASS
