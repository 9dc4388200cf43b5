"""`agentgate`: the command-line front door. It translates arguments and renders; it never judges.

Exit codes: 0 pass, 1 fail (keep working), 2 usage or configuration error, 3 escalate.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pytest_agentgate import __version__

if TYPE_CHECKING:
    from pytest_agentgate.config import Config
    from pytest_agentgate.state.task import TaskRef

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_ESCALATE = 0, 1, 2, 3
EXIT_BY_STATUS = {"pass": EXIT_PASS, "fail": EXIT_FAIL, "escalate": EXIT_ESCALATE}
PROFILES = ("strict", "standard", "relaxed")


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors on exit code 2 and no traceback."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"agentgate: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="agentgate",
        description="The completion gate for AI coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"agentgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    verify = sub.add_parser("verify", help="run the gates and print the verdict")
    _config_args(verify)
    verify.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="what to print on stdout (default: text)",
    )
    verify.add_argument("--output", metavar="FILE", help="also write the verdict JSON to FILE")
    verify.add_argument(
        "--no-run",
        action="store_true",
        help="run no command; read the reports that are already there",
    )
    verify.add_argument(
        "--junit",
        action="append",
        default=[],
        metavar="GLOB",
        help="JUnit XML report(s) for the test gate (repeatable)",
    )
    verify.add_argument("--coverage", metavar="FILE", help="coverage report for the coverage gate")
    verify.add_argument(
        "--lint",
        action="append",
        default=[],
        metavar="FILE",
        help="lint report for the lint gate (repeatable)",
    )
    verify.add_argument("--lint-format", metavar="FORMAT", help="format of the --lint report(s)")
    verify.add_argument(
        "--max-chars",
        type=_positive_int,
        metavar="N",
        help="bound of the continuation text (default 4000)",
    )
    verify.add_argument(
        "--claim",
        metavar="TEXT",
        help="the agent's final message; a success claim the gate disproves is quoted",
    )
    verify.add_argument(
        "--task",
        type=_task_id,
        metavar="ID",
        help="count the attempts of this task; escalate to a human when they run out",
    )
    _ledger_parsers(sub)

    sub.add_parser("schema", help="print the verdict JSON Schema")

    explain = sub.add_parser("explain", help="print each gate's effective thresholds")
    _config_args(explain)
    explain.add_argument("--format", choices=("text", "json"), default="text")

    init = sub.add_parser("init", help="write a starter agentgate.yml for this project")
    init.add_argument("--profile", choices=PROFILES, default="standard")
    return parser


def _config_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="config file (default: discovered)")
    parser.add_argument("--profile", choices=PROFILES, help="override the config's profile")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 200:
        raise argparse.ArgumentTypeError("must be at least 200")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    handler = {"verify": _verify, "schema": _schema, "explain": _explain, "init": _init}
    handler.update(LEDGER_HANDLERS)
    from pytest_agentgate.config import ConfigError
    from pytest_agentgate.registry import RegistryError

    try:
        return handler[args.command](args)
    except (ConfigError, RegistryError) as exc:
        print(f"agentgate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("agentgate: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `agentgate explain | head`: the reader left; no traceback
        _silence_stdout()
        return EXIT_FAIL


def _silence_stdout() -> None:
    """After a broken pipe, send what is still buffered nowhere, so exit does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _verify(args: argparse.Namespace) -> int:
    from pytest_agentgate.config import ConfigError
    from pytest_agentgate.config.resolve import ReportFlags, resolve_config
    from pytest_agentgate.engine import Request, run
    from pytest_agentgate.process import StatusReporter
    from pytest_agentgate.registry import get_registry

    registry = get_registry()
    flags = ReportFlags(
        junit=args.junit, coverage=args.coverage, lint=args.lint, lint_format=args.lint_format
    )
    config = resolve_config(
        Path.cwd(), config_path=args.config, profile=args.profile, flags=flags, registry=registry
    )
    if args.max_chars:
        config.max_chars = args.max_chars
    if args.output and Path(args.output).is_dir():  # before any command runs or attempt counts
        raise ConfigError(args.output, "--output", "is a folder; name the file to write")
    status = StatusReporter.for_stream(sys.stderr)
    request = Request(
        config, door="cli", task=args.task, claim=args.claim, run=not args.no_run, record=True
    )
    verdict = run(request, registry, status)
    try:
        _emit(verdict, args.format, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # `agentgate verify | head`: the verdict's status still counts
        _silence_stdout()
    if args.output:  # after the verdict is shown: a file that cannot be written does not hide it
        _write_output(Path(args.output), verdict.to_json())
    return EXIT_BY_STATUS[verdict.status]


def _write_output(path: Path, text: str) -> None:
    from pytest_agentgate.config import ConfigError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            str(path), "--output", f"cannot write the verdict: {exc.strerror}"
        ) from None


def _emit(verdict: object, fmt: str, stream: TextIO) -> None:
    from pytest_agentgate.render.markdown import render_markdown
    from pytest_agentgate.render.terminal import render_text, use_colour
    from pytest_agentgate.verdict import Verdict

    assert isinstance(verdict, Verdict)
    if fmt == "json":
        stream.write(verdict.to_json() + "\n")
    elif fmt == "markdown":
        stream.write(render_markdown(verdict) + "\n")
    else:
        stream.write(render_text(verdict, colour=use_colour(stream)))


def schema_text() -> str:
    from importlib.resources import files

    return files("pytest_agentgate").joinpath("schema/verdict.schema.json").read_text("utf-8")


def _schema(args: argparse.Namespace) -> int:
    sys.stdout.write(schema_text())
    return EXIT_PASS


def _explain(args: argparse.Namespace) -> int:
    from pytest_agentgate.config.resolve import resolve_config
    from pytest_agentgate.registry import get_registry

    registry = get_registry()
    config = resolve_config(
        Path.cwd(), config_path=args.config, profile=args.profile, registry=registry
    )
    gates = [
        {
            "name": g.name,
            "kind": g.kind,
            "enabled": g.enabled,
            "blocking": g.blocking,
            "command": g.command,
            "timeout_s": g.timeout,
            "reports": g.reports,
            "format": g.format,
            "thresholds": g.thresholds,
            **({"options": g.options} if g.options else {}),
        }
        for g in config.gates
    ]
    source = str(config.path) if config.path else "zero-config defaults"
    if args.format == "json":
        doc = {
            "config": source,
            "profile": config.profile,
            "attempts_max": config.attempts_max,
            "max_chars": config.max_chars,
            "gates": gates,
            "notices": config.notices,
            "formats": {
                "lint": sorted(registry.lint_formats),
                "coverage": sorted(registry.coverage_formats),
            },
        }
        print(json.dumps(doc, indent=2))
        return EXIT_PASS
    print(f"config: {source}")
    print(
        f"profile: {config.profile}   attempts: {config.attempts_max}   "
        f"continuation: {config.max_chars} chars"
    )
    for gate in gates:
        state = "" if gate["enabled"] else "  (disabled)"
        advisory = "" if gate["blocking"] else "  (advisory)"
        print(f"\n{gate['name']} [{gate['kind']}]{state}{advisory}")
        if gate["command"]:
            print(f"  command:  {gate['command']}  (timeout {gate['timeout_s']:g}s)")
        if gate["reports"]:
            fmt = f"  ({gate['format']})" if gate["format"] else ""
            print(f"  reports:  {', '.join(gate['reports'])}{fmt}")
        for key, value in gate["thresholds"].items():
            shown = (
                "off" if value is None else (f"{value:g}" if isinstance(value, float) else value)
            )
            print(f"  {key:<14} {shown}")
    for notice in config.notices:
        print(f"\nnote: {notice}")
    print(f"\nlint formats: {', '.join(sorted(registry.lint_formats))}")
    print(f"coverage formats: {', '.join(sorted(registry.coverage_formats))}")
    return EXIT_PASS


def _init(args: argparse.Namespace) -> int:
    from pytest_agentgate.config import find_config
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
        print(
            "agentgate: error: no Python or JavaScript project detected here "
            "(no pyproject.toml, setup.py, *.py or package.json)",
            file=sys.stderr,
        )
        return EXIT_USAGE
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


# -- attempts, blockers and the dashboard (ledger.py, stats.py) -------------------------------


def _ledger_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pytest_agentgate.state.ledger import BLOCK_REASONS, HUMAN_ONLY_REASONS

    block = sub.add_parser(
        "block",
        help="record a blocker the agent cannot fix for a task",
        description="Human-only reasons ("
        + ", ".join(HUMAN_ONLY_REASONS)
        + ") make the next verify escalate to a human; transient and insufficient_context "
        "keep the agent working.",
    )
    block.add_argument("--config", metavar="FILE", help="config file (default: discovered)")
    block.add_argument("--task", type=_task_id, metavar="ID", help="the task (required)")
    block.add_argument(
        "--reason",
        required=True,
        choices=BLOCK_REASONS,
        metavar="REASON",
        help="one of: " + ", ".join(BLOCK_REASONS),
    )
    block.add_argument("--detail", default="", metavar="TEXT", help="what blocks, for a human")

    reset = sub.add_parser("reset", help="clear a task's attempts (all tasks without --task)")
    reset.add_argument("--config", metavar="FILE", help="config file (default: discovered)")
    reset.add_argument("--task", type=_task_id, metavar="ID", help="the task to clear")

    stats = sub.add_parser("stats", help="pass rates, rejections and escalations from the history")
    stats.add_argument("--config", metavar="FILE", help="config file (default: discovered)")
    stats.add_argument("--since", metavar="AGE", help="only verdicts newer than AGE: 7d, 24h, 30m")
    stats.add_argument("--format", choices=("text", "json", "markdown", "svg"), default="text")
    stats.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")


def _task_id(text: str) -> str:
    from pytest_agentgate.state.task import LedgerError, check_task_id

    try:
        return check_task_id(text)
    except LedgerError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _task_ref(task_id: str | None) -> TaskRef | None:
    from pytest_agentgate.state.task import TaskRef

    return None if task_id is None else TaskRef(task_id, "cli")


def _ledger_project(args: argparse.Namespace) -> tuple[Path, Config | None]:
    """The project root whose ``.agentgate/`` holds the ledger, and its config if any."""
    from pytest_agentgate.config import find_config, load_config
    from pytest_agentgate.registry import get_registry

    cwd = Path.cwd()
    path = (cwd / args.config) if args.config else find_config(cwd)
    if path is None:
        return cwd, None
    config = load_config(path, get_registry())
    return config.root, config


def _block(args: argparse.Namespace) -> int:
    from pytest_agentgate.state.ledger import block, resolve_task

    root, config = _ledger_project(args)
    task = _task_ref(args.task)
    if task is None and config is not None:
        task = resolve_task(config, None)
    if task is None:
        print(
            "agentgate: error: block needs --task ID "
            "(or `attempts: {per_branch: true}` on a git branch)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    human = block(root, task, args.reason, args.detail)
    then = (
        "the next verify escalates to a human"
        if human
        else "the next failing verify tells the agent to keep going"
    )
    print(f"agentgate: recorded {args.reason} for task {task.id}; {then}")
    return EXIT_PASS


def _reset(args: argparse.Namespace) -> int:
    from pytest_agentgate.state.ledger import reset

    root, _ = _ledger_project(args)
    cleared = reset(root, args.task)
    if args.task:
        what = f"cleared task {args.task}" if cleared else f"task {args.task} had no attempts"
    else:
        what = f"cleared {cleared} task{'' if cleared == 1 else 's'}"
    print(f"agentgate: {what}")
    return EXIT_PASS


def _stats(args: argparse.Namespace) -> int:
    from pytest_agentgate.state.ledger import read_history
    from pytest_agentgate.state.stats import RENDERERS, compute
    from pytest_agentgate.state.task import LedgerError

    root, _ = _ledger_project(args)
    try:
        stats = compute(read_history(root), since=args.since)
    except LedgerError as exc:
        print(f"agentgate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    text = RENDERERS[args.format](stats)
    if args.output:
        _write_output(Path(args.output), text.rstrip("\n"))
        print(f"agentgate: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_PASS


LEDGER_HANDLERS = {"block": _block, "reset": _reset, "stats": _stats}
