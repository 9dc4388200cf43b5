"""``agentgate verify``: run the gates and print the verdict; exit with its status."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pytest_agentgate.cli._args import add_config_and_profile, task_id
from pytest_agentgate.cli._exit import EXIT_BY_STATUS
from pytest_agentgate.cli._output import refuse_folder, silence_stdout, write_output
from pytest_agentgate.signals import Terminated

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers
    from pytest_agentgate.verdict import Verdict


def add_parser(subparsers: Subparsers) -> Parser:
    parser = subparsers.add_parser("verify", help="run the gates and print the verdict")
    add_config_and_profile(parser)
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="what to print on stdout (default: text)",
    )
    parser.add_argument("--output", metavar="FILE", help="also write the verdict JSON to FILE")
    parser.add_argument(
        "--base",
        metavar="REF",
        help="judge the change against this commit (default: `base:` in the base's configuration,"
        " else the merge-base with the default branch); its configuration is the one in force",
    )
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="run no command; read the reports that are already there",
    )
    parser.add_argument(
        "--junit",
        action="append",
        default=[],
        metavar="GLOB",
        help="JUnit XML report(s) for the test gate (repeatable)",
    )
    parser.add_argument("--coverage", metavar="FILE", help="coverage report for the coverage gate")
    parser.add_argument(
        "--lint",
        action="append",
        default=[],
        metavar="FILE",
        help="lint report for the lint gate (repeatable)",
    )
    parser.add_argument("--lint-format", metavar="FORMAT", help="format of the --lint report(s)")
    parser.add_argument(
        "--max-chars",
        type=_max_chars,
        metavar="N",
        help="bound of the continuation text (default 4000)",
    )
    parser.add_argument(
        "--claim",
        metavar="TEXT",
        help="the agent's final message: judged by the session gate (deferral, success claims "
        "the gates disprove)",
    )
    parser.add_argument(
        "--transcript",
        metavar="FILE",
        help="the agent session's JSON Lines transcript (Claude Code, Codex, Gemini CLI, "
        "Copilot CLI): judged by the session gate (failed calls, budgets, loops, thrash)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="run every gate even when nothing changed since the last run (default: an "
        "unchanged tree, configuration, tools and environment reuse its judged gates)",
    )
    parser.add_argument(
        "--coverage-cost",
        action="store_true",
        help="measure what coverage costs the tests: run the test command once more without "
        "coverage, then the gates one at a time; the verdict shows coverage's share of the "
        "test gate's time, and later verdicts show it too (implies --no-cache)",
    )
    parser.add_argument(
        "--task",
        type=task_id,
        metavar="ID",
        help="count the attempts of this task; escalate to a human when they run out",
    )
    return parser


def _max_chars(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 200:
        raise argparse.ArgumentTypeError("must be at least 200")
    return value


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.config.resolve import ReportFlags, resolve_config
    from pytest_agentgate.engine import Request, run
    from pytest_agentgate.errors import AgentgateError
    from pytest_agentgate.process import StatusReporter
    from pytest_agentgate.registry import get_registry

    registry = get_registry()
    flags = ReportFlags(
        junit=args.junit, coverage=args.coverage, lint=args.lint, lint_format=args.lint_format
    )
    config = resolve_config(
        Path.cwd(),
        config_path=args.config,
        profile=args.profile,
        flags=flags,
        registry=registry,
        base=args.base,
        task=args.task,
    )
    if args.max_chars:
        config.max_chars = args.max_chars
    refuse_folder(args.output, "the verdict")  # before any command runs or attempt counts
    if args.coverage_cost and args.no_run:
        raise AgentgateError("--coverage-cost runs the tests, so it cannot be used with --no-run")
    status = StatusReporter.for_stream(sys.stderr)
    request = Request(
        config,
        door="cli",
        base=args.base,
        task=args.task,
        claim=args.claim,
        transcript=None if args.transcript is None else Path(args.transcript).absolute(),
        run=not args.no_run,
        record=True,
        cache=not (args.no_cache or args.coverage_cost),
        coverage_cost=args.coverage_cost,
    )
    try:
        verdict = run(request, registry, status)
    except (KeyboardInterrupt, Terminated):
        # Stopped before a verdict (a timeout, CI cancelling the job): what agentgate had noticed
        # so far still reaches the user, such as why an earlier run was not reused.
        for notice in request.config.notices:
            print(f"agentgate: {notice}", file=sys.stderr)
        raise
    try:
        _emit(verdict, args.format, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # `agentgate verify | head`: the verdict's status still counts
        silence_stdout()
    if args.output:  # after the verdict is shown: a file that cannot be written does not hide it
        write_output(Path(args.output), verdict.to_json(), "the verdict")
    return EXIT_BY_STATUS[verdict.status]


def _emit(verdict: Verdict, fmt: str, stream: TextIO) -> None:
    from pytest_agentgate.render.markdown import render_markdown
    from pytest_agentgate.render.terminal import render_text, use_colour

    if fmt == "json":
        stream.write(verdict.to_json() + "\n")
    elif fmt == "markdown":
        stream.write(render_markdown(verdict) + "\n")
    else:
        stream.write(render_text(verdict, colour=use_colour(stream)))
