"""``agentgate stats``: pass rates, rejections and escalations from the verdict history."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_agentgate.cli._args import add_config, ledger_project
from pytest_agentgate.cli._exit import EXIT_PASS
from pytest_agentgate.cli._output import write_output

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers


def add_parser(subparsers: Subparsers) -> Parser:
    parser = subparsers.add_parser(
        "stats", help="pass rates, rejections and escalations from the history"
    )
    add_config(parser)
    parser.add_argument("--since", metavar="AGE", help="only verdicts newer than AGE: 7d, 24h, 30m")
    parser.add_argument("--format", choices=("text", "json", "markdown", "svg"), default="text")
    parser.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")
    return parser


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.state.ledger import read_history
    from pytest_agentgate.state.stats import RENDERERS, compute

    root, _ = ledger_project(args)
    stats = compute(read_history(root), since=args.since)  # a bad --since: a LedgerError
    text = RENDERERS[args.format](stats)
    if args.output:
        write_output(Path(args.output), text.rstrip("\n"), "the stats")
        print(f"agentgate: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_PASS
