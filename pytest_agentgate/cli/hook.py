"""``agentgate hook HARNESS``: answer a harness's stop hook; the event comes on stdin.

Whatever happens, the harness gets an answer in its own protocol: an error of agentgate's lets
the agent stop and tells the user (see ``harness/door.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING

from pytest_agentgate.harness.protocols import HARNESSES

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers


def add_parser(subparsers: Subparsers) -> Parser:
    parser = subparsers.add_parser(
        "hook",
        help="answer a harness's stop hook (the event on stdin)",
        description="Called by the harness when the agent wants to stop (install it with "
        "`agentgate install-hook`). Gates the project at the event's cwd and answers on stdout "
        "in the harness's protocol: block with what is left, allow on a pass, allow and tell "
        "the user on an escalation or on agentgate's own trouble.",
    )
    parser.add_argument("harness", choices=sorted(HARNESSES), help="the harness calling")
    return parser


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.cli._exit import internal_error
    from pytest_agentgate.harness.door import MAX_EVENT_BYTES, answer, handle, trouble

    harness = HARNESSES[args.harness]
    raw = sys.stdin.buffer.read(MAX_EVENT_BYTES)
    real_stdout = sys.stdout
    try:
        # stdout is the harness's channel: nothing but the answer may reach it.
        with contextlib.redirect_stdout(sys.stderr):
            result = handle(harness, raw)
    except Exception as exc:  # a bug of agentgate's must never trap the agent
        result = answer(harness, trouble(internal_error(exc)))
    real_stdout.write(result.stdout + "\n")
    real_stdout.flush()
    if result.stderr:
        sys.stderr.write(result.stderr)
    return result.exit_code
