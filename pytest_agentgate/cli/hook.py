"""``agentgate hook HARNESS``: answer a harness's stop hook; the event comes on stdin.

Whatever happens, the harness gets an answer in its own protocol: an error of agentgate's lets
the agent stop and tells the user (see ``harness/door.py``). With ``--session-start`` (or a
``SessionStart`` event) the session is starting: its task's base is pinned, and the answer is
empty (``harness/start.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
from typing import TYPE_CHECKING, TextIO

from pytest_agentgate.harness.protocols import HARNESSES

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers
    from pytest_agentgate.harness.protocols import Answer, Harness


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
    parser.add_argument(
        "--session-start",
        action="store_true",
        help="the session is starting: pin its task's base (the commit its change is judged "
        "against) before the agent can move it; answers nothing and never fails",
    )
    parser.add_argument(
        "--managed",
        action="store_true",
        help="claude only: the Stop hook of Claude Code's managed settings (`install-hook claude "
        "--managed` writes it), run by every session on the machine: gates only a project whose "
        "own settings run agentgate's Stop hook, and answers nothing elsewhere",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.cli._exit import internal_error
    from pytest_agentgate.harness.door import Deadline, answer, handle, trouble
    from pytest_agentgate.harness.protocols import MAX_EVENT_BYTES
    from pytest_agentgate.harness.start import is_start

    harness = HARNESSES[args.harness]
    managed = bool(getattr(args, "managed", False)) and harness.name == "claude"
    deadline = Deadline()
    raw = sys.stdin.buffer.read(MAX_EVENT_BYTES)
    if is_start(harness, raw, args.session_start):
        return _start(harness, raw)
    real_stdout = sys.stdout
    answered: list[Answer] = []

    def work() -> None:
        try:
            # stdout is the harness's channel: nothing but the answer may reach it.
            with contextlib.redirect_stdout(sys.stderr):
                answered.append(handle(harness, raw, deadline, managed=managed))
        except BaseException as exc:  # a bug of agentgate's must never trap the agent
            answered.append(answer(harness, trouble(internal_error(exc))))

    # The gate runs in a thread of its own, so that the answer is given in time whatever it is
    # doing: the commands are stopped before the budget ends (harness/door.py), but reading
    # reports, git and the state are not commands.
    worker = threading.Thread(target=work, name="agentgate-hook", daemon=True)
    worker.start()
    try:
        while worker.is_alive() and (left := deadline.remaining()) > 0:
            worker.join(min(left, WATCH_S))  # the budget changes once the config is read
    except BaseException:  # a signal: the commands are stopped before agentgate ends
        deadline.cancel.set()
        worker.join(ABANDON_GRACE_S)
        raise
    if worker.is_alive():
        late = answer(harness, deadline.out_of_time())
        _write(late, real_stdout)
        _abandon(late.exit_code)
    result = answered[0]
    _write(result, real_stdout)
    return result.exit_code


def _start(harness: Harness, raw: bytes) -> int:
    """The session's start: the pin, in a thread given :data:`START_BUDGET_S`; exit 0 with
    nothing on stdout whatever happens (a late pin is left to the first verdict)."""
    from pytest_agentgate.harness.start import START_BUDGET_S, note, start_session

    real_stdout = sys.stdout
    answered: list[Answer] = []

    def work() -> None:
        try:
            with contextlib.redirect_stdout(sys.stderr):
                answered.append(start_session(harness, raw))
        except BaseException as exc:  # never fails the session's start
            answered.append(note(f"{type(exc).__name__}: {exc}"))

    worker = threading.Thread(target=work, name="agentgate-start", daemon=True)
    worker.start()
    worker.join(START_BUDGET_S)
    if worker.is_alive():
        late = note(f"it took more than {START_BUDGET_S:g} s")
        _write(late, real_stdout)
        _abandon(0)
    result = answered[0]
    _write(result, real_stdout)
    return 0


# How often the hook looks at its deadline while the gate runs.
WATCH_S = 0.25
# How long a hook stopped by a signal waits for its commands to be stopped.
ABANDON_GRACE_S = 10.0


def _write(result: Answer, stdout: TextIO) -> None:
    if result.stdout:  # an empty answer is no output at all (a session's start)
        stdout.write(result.stdout + "\n")
        stdout.flush()
    if result.stderr:
        sys.stderr.write(result.stderr)
        sys.stderr.flush()


def _abandon(code: int) -> None:
    """Leave now, with the answer given: the gate's thread is stuck in something that is not a
    command (a report, git). What this process started is killed; what the gate had not
    recorded yet (this stop's attempt, as a rule) is not recorded."""
    from pytest_agentgate.process import leave_now

    leave_now(code)
