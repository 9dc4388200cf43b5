"""``pytest --agentgate[=PROFILE]``: the completion gate inside a pytest run.

A front door: it translates what this pytest session measured (its test reports, pytest-cov's
data) into the engine's evidence types, lets the engine judge, and renders the one Verdict. It
never judges anything itself.

- Off unless ``--agentgate`` or the ``agentgate`` ini option asks for it. This module (the
  ``pytest11`` entry point) only adds the options and decides whether the run is gated; the gated
  session lives in :mod:`pytest_agentgate.pytest_plugin.session`, imported and registered only
  when asked for, so an ungated run pays for nothing.
- The session *is* the test run: the configured test gate's command is not run and its report
  files are not read. Its evidence is every test report of the session folded per node id.
- Coverage: with pytest-cov active, its combined data is reported by coverage.py in-process at
  the end of the session; otherwise the coverage gate reads its configured report.
- The engine runs in a gate process (:mod:`.gate_process`) started before pytest imports the
  project's conftest.py files. It resolves the configuration and judges the integrity gate
  (what the change did to the tests, the configuration, the conftest.py files) while pytest
  waits, then runs the other gates' commands (build, lint, custom) while the tests run, and
  judges at the end. A change the integrity gate rejects gets none of its conftest.py files
  imported: its findings and the failing verdict (counted like any other) are printed and the
  run stops before collection with status 1, so no hook of the project's runs: not even one
  that would end the process with ``os._exit(0)``, which nothing inside the process can
  catch. A configuration error stops the run before its first test, as a usage error.
- pytest-xdist: the controller makes the verdict from every worker's reports (xdist replays
  them on it); a crashed worker counts as an error. Workers only tell the controller how many
  items they deselected.
- Started by an agentgate gate, nothing is gated: the outer run judges this one. The gate's
  commands get ``AGENTGATE_RUNNING=<pid>:<nonce>``, honoured only when that pid is an
  ancestor of this pytest running agentgate (:func:`.session.agentgate_ancestor`), so a value set
  in a shell or by a conftest.py is reported and gated anyway.
- The options that weaken the gate are the caller's: ``--agentgate-no-run`` from ``addopts``,
  ``PYTEST_ADDOPTS`` or the project's own code is a usage error, and a profile from them other
  than strict is ignored (the configuration's profile is used) with a notice.

Exit status: a failing (or escalated) verdict turns pytest's 0 into 1. Any other status of
pytest's own (1 tests failed, 2 interrupted or collection errors, 3 internal error, 4 usage
error, 5 no tests collected) is kept. Escalation cannot use agentgate's 3, which pytest uses for
internal errors; the verdict JSON (``--agentgate-json``) says ``"status": "escalate"``.

No verdict is never a pass: a run that ends without one never exits 0. When agentgate itself
fails (its gate process ends without a verdict), or the project's code ends the run early
(``pytest.exit(returncode=0)``, ``KeyboardInterrupt`` or ``SystemExit`` from a hook or a
test), pytest's 0 becomes 3, and the output says what ended the run and where. What no code in
the process can see (``os._exit(0)``, an ``exec``) the process pytest was started as sees: a
gated run forks first thing, and that parent gives the exit status (:mod:`.supervisor`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import weakref
from collections.abc import Generator, Iterator, Sequence
from types import FrameType
from typing import Any

import pytest

from pytest_agentgate.commands import RUN_ID_ENV
from pytest_agentgate.profiles import PROFILE_NAMES
from pytest_agentgate.pytest_plugin.start import (
    COMMAND_LINE,
    PROJECT_CODE,
    START_KEY,
    START_PATH,
    option_sources,
)

# pytest_agentgate.process.RUNNING_ENV; not imported, so that an ungated run imports no more.
RUNNING_ENV = "AGENTGATE_RUNNING"

SESSION_PLUGIN = "agentgate-session"
NOTICE_PLUGIN = "agentgate-notice"
# ini values that switch the gate on with the configuration's own profile, or off.
_INI_ON = ("config", "on", "true", "yes", "1")
_INI_OFF = ("", "off", "false", "no", "0")

NESTED_NOTICE = (
    "agentgate: not gating this run: pytest was started by agentgate (pid {pid}), which judges it"
)
FORGED_GUARD_NOTICE = (
    f"agentgate: {RUNNING_ENV} is set but no agentgate process started this run: gating anyway"
)


# The guard as each session's pytest started (its plugin manager is the key), before any
# conftest.py could change os.environ.
_GUARD_AT_START: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()
XDIST_WORKER_ENV = "PYTEST_XDIST_WORKER"
# The options of a run of no test (their dest, then how each is written).
NO_TEST_RUN = {
    "help": ("-h", "--help"),
    "version": ("-V", "--version"),
    "collectonly": ("--collectonly", "--collect-only", "--co"),
    "showfixtures": ("--funcargs", "--fixtures"),
    "show_fixtures_per_test": ("--fixtures-per-test",),
    "markers": ("--markers",),
}
# Where the gated run forks (:mod:`.supervisor`): the copy of stderr the waiting parent speaks
# on. Not in the stash where the run is not forked.
SUPERVISED = pytest.StashKey[int]()


# -- options ----------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    _GUARD_AT_START[pluginmanager] = os.environ.get(RUNNING_ENV)
    group = parser.getgroup("agentgate", "agentgate: the completion gate for AI coding agents")
    group.addoption(
        "--agentgate",
        action="store",
        nargs="?",
        const="",
        default=None,
        dest="agentgate",
        metavar="PROFILE",
        help="gate this run: tests, coverage (pytest-cov) and the configured build, lint and "
        "custom gates, judged against PROFILE (strict, standard, relaxed; default: the "
        "configuration's profile, else standard). Write --agentgate=PROFILE.",
    )
    group.addoption(
        "--agentgate-json",
        action="store",
        default=None,
        dest="agentgate_json",
        metavar="PATH",
        help="write the verdict (agentgate.verdict/1 JSON) to PATH",
    )
    group.addoption(
        "--agentgate-no-run",
        action="store_true",
        default=False,
        dest="agentgate_no_run",
        help="run none of the other gates' commands (build, lint, custom): they are judged "
        "from their report files if configured, else skipped",
    )
    parser.addini(
        "agentgate",
        "gate every run like --agentgate: a profile (strict, standard, relaxed), 'config' for "
        "the configuration's profile, or 'off' (the default)",
        default="",
    )


def option_value(
    config: pytest.Config, name: str, default: Any = None, *, early: bool = False
) -> Any:
    """A command-line option's value; ``early``: before pytest has parsed them all (while it
    loads the initial conftest.py files), from what it has parsed so far."""
    if early:
        return getattr(config.known_args_namespace, name, default)
    return config.getoption(name, default)


def requested_profile(config: pytest.Config, *, early: bool = False) -> str | None:
    """None: not gated. "": the configuration's profile. Otherwise the profile asked for."""
    value: str | None = option_value(config, "agentgate", early=early)
    if value is None:  # the caller's --agentgate stands, even if a conftest.py reset the option
        value = _command_line_profile(config)
    if value is None:
        ini = str(config.getini("agentgate") or "").strip().lower()
        if ini in _INI_OFF:
            return None
        value = "" if ini in _INI_ON else ini
        where = f"ini option agentgate = {ini}"
    else:
        where = f"--agentgate={value}"
    if value and value not in PROFILE_NAMES:
        raise pytest.UsageError(
            f"{where}: not a profile; choose one of {', '.join(PROFILE_NAMES)}. "
            "(--agentgate takes its profile after '=': `--agentgate tests/` reads tests/ as "
            "the profile; write `--agentgate=strict tests/` or put --agentgate last)"
        )
    return value


@pytest.hookimpl(wrapper=True, tryfirst=True, specname="pytest_load_initial_conftests")
def pytest_agentgate_supervise(early_config: pytest.Config) -> Generator[None, None, None]:
    """First of all (before pytest captures output): where a gated run will fork, once it has
    started its gate process, so that this process only waits for the run and gives its exit
    status (:mod:`.supervisor`), keep a copy of stderr for it to speak on."""
    if early_profile(early_config) is not None:
        with _plain_imports(early_config):
            from pytest_agentgate.pytest_plugin import supervisor

            if supervisor.may_fork():
                early_config.stash[SUPERVISED] = supervisor.terminal()
    return (yield)


@pytest.hookimpl  # after pytest-cov's (tryfirst), before pytest's own, which imports them
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Before pytest imports the project's conftest.py files: start the gate process and wait
    for its judgment of the integrity gate. A change it rejects gets none of them imported
    (``--noconftest``); the session stops it before collection (``GateSession``)."""
    config = early_config
    if option_value(config, "help", early=True) or option_value(config, "version", early=True):
        return
    _watch_compiles(config)
    profile = early_profile(config)
    if profile is None:
        return
    with _plain_imports(config):
        from pytest_agentgate.pytest_plugin import session as gated

        gated.start_early(config, profile, config.stash.get(SUPERVISED, None))


def early_profile(config: pytest.Config) -> str | None:
    """The profile a run is gated with, known before its conftest.py files are imported; None
    when it is not gated there (a run of no test, a worker or a nested run, a usage error said
    later). A run of no test the caller did not ask for is a usage error now: ``--help`` and
    ``--version`` end the run before it is configured."""
    if xdist_worker_being_configured(config):
        return None  # the controller judged the change before it started the worker
    try:
        profile = requested_profile(config, early=True)
        if profile is None:
            return None
        profile = callers_profile(config, profile, [], early=True)
    except pytest.UsageError:
        return None  # said by pytest_configure, where it stops the run
    if no_test_run(config, early=True):
        return None
    guard = _GUARD_AT_START.get(config.pluginmanager, os.environ.get(RUNNING_ENV))
    if guard is not None:
        with _plain_imports(config):
            from pytest_agentgate.pytest_plugin import session as gated

            if gated.agentgate_ancestor(guard) is not None:
                return None  # nested under agentgate: not gated
    return profile


def _watch_compiles(config: pytest.Config) -> None:
    """In a gated run (an xdist worker's too), keep what Python compiles for the project's
    files from before its conftest.py files are imported (:mod:`.compiled`)."""
    try:
        gated = RUN_ID_ENV in os.environ or requested_profile(config, early=True) is not None
    except pytest.UsageError:
        return  # said by pytest_configure, where it stops the run
    if gated:
        from pytest_agentgate.pytest_plugin.compiled import watch

        watch(str(config.rootpath))


def xdist_worker_being_configured(config: pytest.Config) -> bool:
    """Whether this is an xdist worker's configuration, before xdist marks it as one.

    xdist sets ``workerinput`` once the configuration is made. Until then, a worker is told by
    the code making it: xdist's worker runs in an execnet channel (a module named
    ``__channelexec__``) that assigns ``config`` only when it has been made. The worker id in
    the environment is not enough: a pytest started by a test running on a worker inherits it.
    """
    if hasattr(config, "workerinput"):
        return True
    if not os.environ.get(XDIST_WORKER_ENV):
        return False
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        names = frame.f_globals
        if names.get("__name__") == "__channelexec__" and "workerinput" in names:
            return "config" not in names
        frame = frame.f_back
    return False


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("help", False) or config.getoption("version", False):
        return
    config.stash[START_KEY] = START_PATH
    if RUN_ID_ENV in os.environ or requested_profile(config) is not None:
        # Where the project's code skips a test, for the integrity gate (both doors, workers).
        from pytest_agentgate.pytest_plugin import skips

        config.pluginmanager.register(
            skips.SkipWitness(config.rootpath, config.pluginmanager), skips.PLUGIN_NAME
        )
    if RUN_ID_ENV in os.environ:
        # A run agentgate started: what it collects is part of the test gate's evidence (an
        # xdist worker hands its counts to the controller, which signs the report).
        from pytest_agentgate.pytest_plugin.witness import PLUGIN_NAME, Witness

        config.pluginmanager.register(Witness(os.environ[RUN_ID_ENV]), PLUGIN_NAME)
    profile = requested_profile(config)
    if profile is None:
        return
    notices: list[str] = []
    with _plain_imports(config):
        from pytest_agentgate.pytest_plugin import session as gated

        guard = _GUARD_AT_START.get(config.pluginmanager, os.environ.get(RUNNING_ENV))
        if guard is not None or os.environ.get(RUNNING_ENV) is not None:
            outer = gated.agentgate_ancestor(guard)
            if outer is not None:
                if not hasattr(config, "workerinput"):
                    nested = gated.Notice(NESTED_NOTICE.format(pid=outer))
                    config.pluginmanager.register(nested, SESSION_PLUGIN)
                return
            notices.append(FORGED_GUARD_NOTICE)
        if hasattr(config, "workerinput"):
            config.pluginmanager.register(gated.WorkerAgent(config), SESSION_PLUGIN)
            return
        profile = callers_profile(config, profile, notices)
        if notices:
            config.pluginmanager.register(gated.Notice("\n".join(notices)), NOTICE_PLUGIN)
        if asked := no_test_run(config):
            notice = f"agentgate: not gating a {asked} run: it runs no tests"
            config.pluginmanager.register(gated.Notice(notice), SESSION_PLUGIN)
            return
        session = gated.GateSession.create(config, profile)
    config.pluginmanager.register(session, SESSION_PLUGIN)


# -- the caller's options ---------------------------------------------------------------------


def agentgate_options(args: Sequence[str]) -> list[tuple[str, str]]:
    """The gate's options in ``args`` as argparse reads them: ``("no_run", "")`` and
    ``("profile", value)``, in order."""
    found = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            break
        if arg == "--agentgate-no-run":
            found.append(("no_run", ""))
        elif arg.startswith("--agentgate="):
            found.append(("profile", arg.partition("=")[2]))
        elif arg == "--agentgate":
            value = args[index + 1] if index + 1 < len(args) else "-"
            if value.startswith("-"):  # nargs="?": a following argument is the profile
                value = ""
            else:
                index += 1
            found.append(("profile", value))
        index += 1
    return found


def callers_profile(
    config: pytest.Config, profile: str, notices: list[str], *, early: bool = False
) -> str:
    """The profile to gate with, once the options that weaken the gate are the caller's.

    ``--agentgate-no-run`` anywhere but pytest's command line (``addopts``, ``PYTEST_ADDOPTS``,
    a conftest.py setting it) is a usage error. A profile from there other than strict (nothing
    is stricter) is ignored with a notice: the configuration's profile is used instead.
    """
    sources = option_sources(config)
    seen = [(where, *option) for where, args in sources for option in agentgate_options(args)]
    if option_value(config, "agentgate_no_run", False, early=early) and not any(
        where == COMMAND_LINE and name == "no_run" for where, name, _ in seen
    ):
        where = next(
            (where for where, name, _ in seen if name == "no_run"),
            PROJECT_CODE,
        )
        raise pytest.UsageError(
            f"--agentgate-no-run in {where}: the gate's options are the caller's; remove it "
            "(to skip the other gates' commands, pass --agentgate-no-run on pytest's command line)"
        )
    if (
        option_value(config, "agentgate", early=early) is None
        and _command_line_profile(config) is None
    ):
        return profile  # the ini option `agentgate` asked for the gate
    given = [(where, value) for where, name, value in seen if name == "profile"]
    where, value = given[-1] if given else ("", None)
    if value != profile:
        where = PROJECT_CODE
    if where == COMMAND_LINE or profile in ("", "strict"):
        return profile
    notices.append(
        f"agentgate: --agentgate={profile} in {where} ignored: the gate's options are the "
        "caller's, and a profile from elsewhere may only be strict; gating with the "
        f"configuration's profile (pass --agentgate={profile} on pytest's command line for it)"
    )
    return ""


def no_test_run(config: pytest.Config, *, early: bool = False) -> str | None:
    """The option, as the caller wrote it, that makes this a run of no test (``--help``,
    ``--version``, ``--collect-only``, ``--fixtures``, ``--fixtures-per-test``, ``--markers``),
    which is not gated; None when no such option is set. One from anywhere but pytest's
    command line (``addopts``, ``PYTEST_ADDOPTS``, a conftest.py setting it) is a usage error:
    the run was asked for as a gated test run, and such an option would end it with 0 and no
    test run."""
    args = [str(arg) for arg in config.invocation_params.args]
    if "--" in args:
        args = args[: args.index("--")]
    for dest, spellings in NO_TEST_RUN.items():
        if not option_value(config, dest, False, early=early):
            continue
        if asked := next((arg for arg in args if arg in spellings), None):
            return asked
        where, written = next(
            (
                (where, word)
                for where, words in option_sources(config)
                for word in words
                if word in spellings
            ),
            (PROJECT_CODE, spellings[-1]),
        )
        raise pytest.UsageError(
            f"{written} in {where}: the gate's options are the caller's, and it makes a run of "
            f"no test; remove it (to only look, pass {written} on pytest's command line)"
        )
    return None


def _command_line_profile(config: pytest.Config) -> str | None:
    args = [str(arg) for arg in config.invocation_params.args]
    given = [value for name, value in agentgate_options(args) if name == "profile"]
    return given[-1] if given else None


@contextlib.contextmanager
def _plain_imports(config: pytest.Config) -> Iterator[None]:
    """Import the gated session with Python's importer rather than pytest's assertion rewriter.

    pytest marks every package of a ``pytest11`` plugin's distribution for assertion rewriting,
    so the session's modules would be imported by pytest's hook: source read and hashed,
    pytest's own cache unmarshalled from a file object, for modules that hold no test
    assertions. The hook is off ``sys.meta_path`` only while the session object is built,
    before any test module is collected.
    """
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    try:
        index = sys.meta_path.index(hook)  # type: ignore[arg-type]
    except ValueError:  # --assert=plain, or not installed
        yield
        return
    del sys.meta_path[index]
    try:
        yield
    finally:
        sys.meta_path.insert(index, hook)  # type: ignore[arg-type]
