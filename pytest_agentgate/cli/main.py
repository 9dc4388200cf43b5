"""`agentgate`: the command-line front door. It translates arguments and renders; it never judges.

This module assembles the parser from the subcommand modules (each has ``add_parser`` and
``run``), dispatches to the one asked for, and turns how it ended into the exit code:
0 pass, 1 fail (keep working), 2 usage or configuration error, 3 escalate (see ``_exit``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from pytest_agentgate import __version__
from pytest_agentgate.cli import (
    block,
    explain,
    github,
    hook,
    init,
    install_hook,
    reset,
    schema,
    stats,
    verify,
)
from pytest_agentgate.cli._args import Parser
from pytest_agentgate.cli._exit import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_USAGE, internal_error
from pytest_agentgate.cli._output import silence_stdout
from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.signals import Terminated, ending_signals, exit_code, name_of

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Subparsers


class Command(Protocol):
    """What a subcommand module provides."""

    def add_parser(self, subparsers: Subparsers) -> Parser: ...
    def run(self, args: argparse.Namespace) -> int: ...


# Set to show the traceback of an internal error instead of the one-paragraph message.
DEBUG_ENV = "AGENTGATE_DEBUG"

# In the order `agentgate --help` lists them.
COMMANDS: tuple[Command, ...] = (
    verify,
    hook,
    install_hook,
    github,
    block,
    reset,
    stats,
    schema,
    explain,
    init,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="agentgate",
        description="The completion gate for AI coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"agentgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub).set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    run: Callable[[argparse.Namespace], int] = args.run
    _carry_any_path()
    try:
        with ending_signals():
            return run(args)
    except AgentgateError as exc:
        return error_exit(exc)
    except KeyboardInterrupt:
        print("agentgate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated as stop:
        print(
            f"agentgate: stopped by {name_of(stop.signum)}; every gate command was stopped first",
            file=sys.stderr,
        )
        return exit_code(stop.signum)
    except BrokenPipeError:  # `agentgate explain | head`: the reader left; no traceback
        silence_stdout()
        return EXIT_FAIL
    except Exception as exc:  # a bug of agentgate's: one paragraph, never a traceback
        if os.environ.get(DEBUG_ENV):
            raise
        print(internal_error(exc), file=sys.stderr)
        return EXIT_USAGE


def _carry_any_path() -> None:
    """Let stdout and stderr print a path that is not UTF-8 (its lone surrogates) as an
    escape, ``\\udce9``, where a strict stream would end the command with an error."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            with contextlib.suppress(ValueError):  # a closed stream
                stream.reconfigure(errors="backslashreplace")


def error_exit(exc: AgentgateError) -> int:
    """The one place an error agentgate raised on purpose becomes what the user sees: its
    message on stderr, no traceback, and its exit code (2, usage or configuration, by default)."""
    print(f"agentgate: error: {exc}", file=sys.stderr)
    return exc.exit_code
