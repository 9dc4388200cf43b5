"""``agentgate install-hook HARNESS``: make the harness call ``agentgate hook`` when its agent
wants to stop, and when its session starts (see ``harness/install.py`` for where each harness
reads its hooks)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_agentgate.harness.protocols import HARNESSES

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers


def add_parser(subparsers: Subparsers) -> Parser:
    parser = subparsers.add_parser(
        "install-hook",
        help="make a harness ask agentgate before its agent stops",
        description="Merge agentgate's stop hook, and its session-start hook (which pins the "
        "commit the task's change is judged against before the agent can move it), into the "
        "project's (or, with --user, your) settings of the harness: other settings and hooks "
        "are kept, a changed file is backed up, and running it twice changes nothing.",
    )
    parser.add_argument("harness", choices=sorted(HARNESSES), help="the harness to set up")
    parser.add_argument(
        "--user", action="store_true", help="your settings for every project, not this project's"
    )
    parser.add_argument("--uninstall", action="store_true", help="take agentgate's hooks out again")
    parser.add_argument(
        "--managed",
        action="store_true",
        help="claude only: in Claude Code's managed settings (the machine's; run it with sudo), "
        "agentgate's Stop hook, which gates only projects whose own settings run it, and the "
        "environment variables that would let a project's settings switch it off in the session",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.config.model import DEFAULT_HOOK_BUDGET_S
    from pytest_agentgate.config.resolve import resolve_config
    from pytest_agentgate.errors import AgentgateError
    from pytest_agentgate.harness.install import (
        TIMEOUT_MARGIN_S,
        hook_command,
        install,
        settings_path,
        start_command,
        trust_steps,
    )
    from pytest_agentgate.harness.start import START_TIMEOUT_S
    from pytest_agentgate.project import project_root

    harness = HARNESSES[args.harness]
    if args.managed:
        return _managed(args)
    cwd = Path.cwd()
    budget = DEFAULT_HOOK_BUDGET_S
    try:
        config = resolve_config(cwd)
        root, budget = config.root, config.hook_budget_s
    except AgentgateError as exc:
        root = project_root(cwd)
        print(
            f"agentgate: note: the configuration cannot be read ({exc}); the hook's timeout "
            f"assumes the default budget of {budget} s"
        )
    path = settings_path(harness, root, user=args.user)
    command = hook_command(harness)
    timeout = budget + TIMEOUT_MARGIN_S
    done = install(harness, path, command=command, timeout_s=timeout, uninstall=args.uninstall)
    shown = _shown(path, root)
    hooks = "stop hook" if harness.start_event is None else "stop and session-start hooks"
    if not done.changed:
        return _unchanged(f"{harness.title} {hooks}", args.uninstall, "installed", shown)
    if args.uninstall:
        print(f"agentgate: removed the {harness.title} {hooks} from {shown}")
    else:
        print(
            f"agentgate: {harness.title} now asks agentgate before its agent stops.\n"
            f"  wrote {shown}: {harness.event} hook `{command}`, timeout {timeout} s "
            f"(agentgate answers within {budget} s)"
        )
        if harness.start_event is not None:
            print(
                f"  and {harness.start_event} hook `{start_command(command)}`, timeout "
                f"{START_TIMEOUT_S} s: pins the commit the task is judged against when the "
                "session starts"
            )
    if done.backup is not None:
        print(f"  the previous file is kept as {_shown(done.backup, root)}")
    if not args.uninstall:
        inside = _inside_the_project(command, root)
        if inside is not None:
            print(
                f"agentgate: note: the hook runs {inside}, inside the project, where the agent "
                "can write it and the libraries it loads: an agent that breaks it makes each "
                "stop agentgate's own trouble, which lets the agent stop, unverified (and says "
                "so); one that rewrites it can answer every stop itself, with nothing said "
                "(agentgate's next verdict reports the edit). Install agentgate outside the "
                "project for the hook (`pipx install pytest-agentgate`, or `uv tool install "
                "pytest-agentgate`) and run its install-hook."
            )
        print("Still to do in the harness:")
        for step in trust_steps(harness, root, user=args.user):
            print("  - " + step.replace("\n", "\n    "))
    return 0


def _unchanged(what: str, uninstall: bool, done: str, where: object) -> int:
    state = "not there" if uninstall else f"already {done}"
    print(f"agentgate: {what} {state} in {where}; nothing changed")
    return 0


def _managed(args: argparse.Namespace) -> int:
    """``--managed``: Claude Code's managed settings run agentgate's managed Stop hook and pin
    the variables of ``CLAUDE_PINNED_ENV``."""
    from pytest_agentgate.harness.install import InstallError, pin_managed
    from pytest_agentgate.harness.managed import managed_settings_path

    if args.harness != "claude":
        raise InstallError("--managed is for claude only")
    if args.user:
        raise InstallError("--managed writes the machine's settings: leave out --user")
    path = managed_settings_path()
    done = pin_managed(path, uninstall=args.uninstall)
    if not done.changed:
        return _unchanged(
            "agentgate's Stop hook and pins in Claude Code's managed settings",
            args.uninstall,
            "set",
            path,
        )
    if args.uninstall:
        print(
            "agentgate: took agentgate's Stop hook and pins out of Claude Code's managed "
            f"settings, {path}:"
        )
    else:
        print(
            "agentgate: Claude Code's managed settings now run agentgate's Stop hook (in "
            "projects whose own settings run it) and pin the environment a project's settings "
            f"could switch it off with, in {path}:"
        )
    for line in done.lines:
        print(f"  {line}")
    if done.backup is not None:
        print(f"  the previous file is kept as {done.backup}")
    if not args.uninstall:
        print("  Claude Code applies it to every session of every user on this machine.")
    return 0


def _inside_the_project(command: str, root: Path) -> str | None:
    """The program the hook command runs, when it is inside the project (its ``.venv``)."""
    import shlex

    try:
        program = Path(shlex.split(command)[0])
    except (ValueError, IndexError):
        return None
    try:
        program.absolute().relative_to(root.resolve())
    except ValueError:
        return None
    return str(program)


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
