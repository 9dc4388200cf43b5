"""``agentgate hook HARNESS --session-start``: the session starts; its task's base is kept now.

A task's base is pinned where the task first met the gate (state/task_base.py). Before that,
the refs decide, and an agent that commits its weakened test on the default branch of a
repository without a remote (or points that branch at its own commit) before its first stop
has that commit inside its base: the change judged is empty. So when the harness session starts,
before its agent has run anything, the hook pins the base its first verdict would find, under
the same task (the harness session's id, the one its stop events carry): the stops then find the
pin. Outside git it takes the task's snapshot (state/snapshot.py), for the same reason: the
files the agent edited before its first stop would be in it. The session's folder is kept too
(state/sessions.py): its stops are gated there, wherever the agent's shell has moved. So is the
test environment the task begins with (state/task_env.py): the distributions installed in the
project's virtual environments, against which a plugin or test tool installed later is judged.

Nothing here may change what the agent does: the answer is empty stdout and exit 0, whatever
happens (see harness/protocols.py for what each harness makes of other output). A start that
cannot be pinned (no repository, no base, a state directory that cannot be written) leaves the
task to be pinned at its first verdict, as before; only agentgate's own trouble is a note on
stderr, which no harness gives the model. No gate runs; the configuration is looked for (its
folder is the project whose `.agentgate/` records the pin), never loaded.
"""

from __future__ import annotations

from pathlib import Path

from pytest_agentgate.harness.protocols import Answer, EventError, Harness

# How long the hook may take at the session's start: the harness waits for it before the
# agent's first request. A state directory or a git that takes longer leaves the task to be
# pinned at its first verdict.
START_BUDGET_S = 10.0
# The harness's timeout on the session-start hook (install-hook writes it): above the budget.
START_TIMEOUT_S = 30

QUIET = Answer("")


def is_start(harness: Harness, raw: bytes, flagged: bool) -> bool:
    """Whether the hook was called for the session's start: ``--session-start`` (what
    install-hook writes), or the event's own name (a Claude-shaped ``SessionStart`` given to
    the stop hook's command must never be gated as a stop)."""
    if flagged:
        return True
    if harness.start_event is None or harness.start_event.encode() not in raw:
        return False
    try:
        return harness.parse(raw).start
    except Exception:  # not an event: the stop's door says so in the harness's protocol
        return False


def note(what: str) -> Answer:
    return Answer(
        "",
        f"agentgate: note: the task's base was not pinned at the session's start ({what}); "
        "its first stop pins it.\n",
    )


def start_session(harness: Harness, raw: bytes) -> Answer:
    """Pin the base of the task the session is; always :data:`QUIET` on stdout."""
    if harness.start_event is None:
        return note(f"{harness.title} has no session-start hook agentgate uses")
    try:
        event = harness.parse(raw)
    except EventError as exc:
        return note(str(exc))
    cwd = Path(event.cwd)
    if not cwd.is_dir():
        return QUIET
    from pytest_agentgate.config.resolve import pin_task_base, pin_task_environment
    from pytest_agentgate.state.sessions import remember_start

    try:
        remember_start(harness.name, event.session, cwd)  # where its stops are gated
        pin_task_base(cwd, event.session)
        pin_task_environment(cwd, event.session)  # the plugins and test tools it begins with
    except Exception as exc:  # a bug of agentgate's never fails the session's start
        return note(f"{type(exc).__name__}: {exc}")
    return QUIET
