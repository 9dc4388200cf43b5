"""``agentgate block``: record a blocker the agent cannot fix for a task."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pytest_agentgate.cli._args import add_config, ledger_project, task_id, task_ref
from pytest_agentgate.cli._exit import EXIT_PASS
from pytest_agentgate.errors import AgentgateError

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers


def add_parser(subparsers: Subparsers) -> Parser:
    from pytest_agentgate.state.reasons import BLOCK_REASONS, HUMAN_ONLY_REASONS

    parser = subparsers.add_parser(
        "block",
        help="record a blocker the agent cannot fix for a task",
        description="Human-only reasons ("
        + ", ".join(HUMAN_ONLY_REASONS)
        + ") make the next verify escalate to a human; transient and insufficient_context "
        "keep the agent working.",
    )
    add_config(parser)
    parser.add_argument("--task", type=task_id, metavar="ID", help="the task (required)")
    parser.add_argument(
        "--reason",
        required=True,
        choices=BLOCK_REASONS,
        metavar="REASON",
        help="one of: " + ", ".join(BLOCK_REASONS),
    )
    parser.add_argument("--detail", default="", metavar="TEXT", help="what blocks, for a human")
    return parser


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.state.ledger import block, resolve_task

    root, config = ledger_project(args)
    task = task_ref(args.task)
    if task is None and config is not None:
        task = resolve_task(config, None)
    if task is None:
        raise AgentgateError(
            "block needs --task ID (or `attempts: {per_branch: true}` on a git branch)"
        )
    human = block(root, task, args.reason, args.detail)
    then = (
        "the next verify escalates to a human"
        if human
        else "the next failing verify tells the agent to keep going"
    )
    print(f"agentgate: recorded {args.reason} for task {task.id}; {then}")
    return EXIT_PASS
