"""Which environment variables a verdict can depend on (:func:`keyed_env`), and which it cannot:
shell bookkeeping and what a harness sets in the agent's shell or its stop hook. The verdict
cache (state/cache.py) keys the first; the gate's commands (process.py) run without the second,
so no result depends on what the key leaves out.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Mapping

# Shell bookkeeping that differs between two identical runs. PATH is not keyed as text: a
# harness runs its stop hook with a PATH of its own. It counts through what the commands' tools
# resolve to (:func:`tools_key`), and a run is reused only on a PATH that has every folder the
# run's PATH had (:func:`path_folders`): a folder put first to shadow a program a test starts
# makes the next run, without it, run afresh.
VOLATILE_ENV = frozenset(
    {"_", "OLDPWD", "PWD", "SHLVL", "PATH", "AGENTGATE_RUN_ID", "AGENTGATE_RUNNING"}
)
# What the harnesses set in the agent's shell or in their stop hook's environment, and not in
# the other, measured with the real Claude Code, Codex CLI, Gemini CLI and Copilot CLI: an
# agent's `agentgate verify` and the stop hook after it must be one run. Their own variables
# (:data:`HARNESS_OWN_ENV`) are never keyed; the others only with the
# value a harness gives them, so an agent cannot set them to its liking.
# Their own variables are named one by one, as measured (the harness lab's README): a prefix
# let the agent prime a verdict with `CLAUDE_TAX_PROFILE=1 agentgate verify`, a variable its
# code read, and the stop hook reuse it (red team 16). A harness variable not listed here
# makes a run afresh, never a stale one.
# A folder a stop hook's runner names for itself (Copilot's COPILOT_HOOK_DIR, a harness's
# STOP_HOOK_DIR): where the hook runs from, never the project's to read (`test-detected`).
HOOK_DIR = "_HOOK_DIR"
HARNESS_OWN_ENV = frozenset(
    {
        "AI_AGENT", "CLAUDECODE", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID",
        "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_EXECPATH", "CLAUDE_CODE_SSE_PORT",
        "CLAUDE_ENV_FILE", "CODEX_HOME", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED",
        "CODEX_THREAD_ID", "CODEX_MANAGED_BY_NPM", "CODEX_CI", "CODEX_SESSION_ID",
        "CODEX_TOOL_CALL_ID", "CODEX_VERSION", "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS",
        "GEMINI_PROJECT_DIR", "GEMINI_SESSION_ID", "GEMINI_CWD", "GEMINI_CLI",
        "COPILOT_PROJECT_DIR", "COPILOT_HOOK_DIR", "CURSOR_PROJECT_DIR", "CURSOR_TRACE_ID",
    }
)  # fmt: skip
# Variables whose every value a harness might give are not here: code under test can read
# them too (red team 18 primed a verdict with `TERM=vt-zero agentgate verify`, a variable its
# code read), so they are keyed; a run of the agent's and the hook's that differ there is run
# afresh, never reused. The harnesses' own variables (above) are not keyed: product code that
# reads one asks whether an AI agent runs it, which the integrity gate finds (`test-detected`,
# integrity/under_test.py), so no verdict that depends on one is kept passing. SHELL is
# bookkeeping only as the path of a shell.
HARNESS_ENV: dict[str, frozenset[str]] = {
    "COLORTERM": frozenset({""}),
    "NO_COLOR": frozenset({"1"}),
    "DISPLAY": frozenset({""}),
    "DBUS_SESSION_BUS_ADDRESS": frozenset({""}),
    "LC_ALL": frozenset({"C.UTF-8"}),
    "LC_CTYPE": frozenset({"C.UTF-8"}),
    "PAGER": frozenset({"cat"}),
    "GIT_PAGER": frozenset({"cat"}),
    "GH_PAGER": frozenset({"cat"}),
    "GIT_EDITOR": frozenset({"true"}),
    "GIT_ASKPASS": frozenset({""}),
    "SSH_ASKPASS": frozenset({""}),
    "GIT_TERMINAL_PROMPT": frozenset({"0"}),
    "GIT_OPTIONAL_LOCKS": frozenset({"0"}),
    "GCM_INTERACTIVE": frozenset({"never", "Never"}),
    "GH_PROMPT_DISABLED": frozenset({"1"}),
}
# The git settings harnesses give through GIT_CONFIG_COUNT/KEY_n/VALUE_n, all of them about
# not waiting for a person. Any other setting keys every GIT_CONFIG_* variable. (Gemini CLI's
# GIT_CONFIG_GLOBAL=/dev/null is keyed: without the user's git configuration a test may fail.)
HARNESS_GIT_CONFIG = frozenset(
    {
        ("credential.helper", ""),
        ("credential.interactive", "never"),
        ("core.fsmonitor", ""),
        ("core.fsmonitor", "false"),
        ("core.hooksPath", ""),
        ("core.sshCommand", ""),
        ("core.pager", "cat"),
        ("core.editor", ""),
        ("sequence.editor", ""),
        ("diff.external", ""),
        ("safe.bareRepository", "explicit"),
    }
)
_GIT_CONFIG_ENTRY = re.compile(r"GIT_CONFIG_(?:COUNT|KEY_\d+|VALUE_\d+)")


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "fish", "ksh", "tcsh", "csh"})
# Where the machine's shells are (red team 20 named its own `/tmp/.../bash`).
_SHELL_FOLDERS = ("/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin")


def _a_shell(value: str) -> bool:
    folder, name = os.path.split(value)
    return folder in _SHELL_FOLDERS and name in _SHELLS and os.path.isfile(value)


def unkeyed_env(environ: Mapping[str, str]) -> set[str]:
    """The variables :func:`keyed_env` leaves out, but the gate's own (PATH, which it sets,
    and its run's markers): the gate's commands run without them (process.py). A verdict
    reused for the stop hook must not depend on one (red team 44: product code that read
    OLDPWD, SHLVL or NO_COLOR=1, set for the agent's own `agentgate verify` only)."""
    keyed = keyed_env(environ)
    return {name for name in environ if name not in keyed} - _THE_GATES


_THE_GATES = frozenset({"PATH", "AGENTGATE_RUN_ID", "AGENTGATE_RUNNING"})


def keyed_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables a verdict can depend on: all but shell and harness bookkeeping."""
    harness_git = _harness_git_config(environ)
    keyed = {}
    for name, value in environ.items():
        if name in VOLATILE_ENV or name in HARNESS_OWN_ENV or name.endswith(HOOK_DIR):
            continue
        if name in HARNESS_ENV and value in HARNESS_ENV[name]:
            continue
        if name == "SHELL" and _a_shell(value):
            continue
        if harness_git and _GIT_CONFIG_ENTRY.fullmatch(name):
            continue
        keyed[name] = value
    return keyed


def _harness_git_config(environ: Mapping[str, str]) -> bool:
    """Whether the GIT_CONFIG_COUNT settings are all ones a harness gives."""
    try:
        count = int(environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        return False
    if not 0 <= count <= 64:
        return False
    pairs = {
        (environ.get(f"GIT_CONFIG_KEY_{n}"), environ.get(f"GIT_CONFIG_VALUE_{n}"))
        for n in range(count)
    }
    return all(pair in HARNESS_GIT_CONFIG for pair in pairs)


def process_state() -> str:
    """What a process passes to the programs it starts besides its environment, and code can
    read: the file mode mask, the resource limits, the signals it ignores or blocks, its
    scheduling priority, policy and CPUs. The verdict cache keys it (red teams 46 and 47: code
    that answered right only under `umask 077`, `ulimit -n 333`, `trap '' USR2`, `renice`,
    `taskset` or `chrt`, set for the agent's own `agentgate verify` alone, had its pass reused
    by the stop hook)."""
    import signal

    parts = [f"umask={_umask()}"]
    if sys.platform != "win32":
        import resource

        for name in sorted(n for n in dir(resource) if n.startswith("RLIMIT_")):
            with contextlib.suppress(OSError, ValueError):
                parts.append(f"{name}={resource.getrlimit(getattr(resource, name))}")
    ignored = []
    for number in sorted(signal.valid_signals()):
        with contextlib.suppress(OSError, ValueError):
            if signal.getsignal(number) is signal.SIG_IGN:
                ignored.append(int(number))
    parts.append(f"ignored={ignored}")
    if hasattr(signal, "pthread_sigmask"):
        blocked = sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
        parts.append(f"blocked={blocked}")
    if hasattr(os, "getpriority"):
        with contextlib.suppress(OSError):
            parts.append(f"nice={os.getpriority(os.PRIO_PROCESS, 0)}")
    # Where and how it is scheduled (red team 47: `taskset -c 0`, `chrt -b 0`).
    if hasattr(os, "sched_getaffinity"):
        with contextlib.suppress(OSError):
            parts.append(f"cpus={sorted(os.sched_getaffinity(0))}")
    if hasattr(os, "sched_getscheduler"):
        with contextlib.suppress(OSError):
            parts.append(f"policy={os.sched_getscheduler(0)}")
            parts.append(f"priority={os.sched_getparam(0).sched_priority}")
    return ";".join(parts)


def _umask() -> str:
    """This process's file mode mask, read without setting it where the kernel says it
    (Linux's /proc/self/status): other threads may be creating files."""
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/self/status", encoding="ascii", errors="replace") as status,
    ):
        for line in status:
            if line.startswith("Umask:"):
                return f"{int(line.split()[1], 8):o}"
    mask = os.umask(0o022)
    os.umask(mask)
    return f"{mask:o}"
