"""Every integrity rule, in one place: its name, its weight, and what to restore.

"tampering" changes what is measured or how results are reported: it always blocks. "weakening"
lowers the bar without hiding it: it blocks under strict and is reported under the other
profiles. "notice" is reported and never blocks: a change a reviewer should see that is not
weakening (the tests of a feature removed with it). A human approves an exception in the base's
configuration (``integrity: {allow: [{rule, path, reason}]}``), never in the change itself.
"""

from __future__ import annotations

from pytest_agentgate.integrity.model import Rule

_RULES = (
    # -- the tests ---------------------------------------------------------------------------
    Rule(
        "test-removed",
        "tampering",
        "a test that exists at the base is gone (not renamed or moved)",
        "restore the test; fix the code it tests instead of deleting it",
    ),
    Rule(
        "test-removed-with-feature",
        "notice",
        "a test is gone together with code it exercised, which the change also deletes",
        "nothing, if the feature is meant to go; otherwise restore the code and its test",
    ),
    Rule(
        "tests-fewer",
        "tampering",
        "a test runs fewer of its parametrized cases than at the base, and the cases that are "
        "gone are not written anywhere in the change's tests",
        "restore the cases; fix the code they test instead of dropping them",
    ),
    Rule(
        "test-count-below-base",
        "weakening",
        "fewer tests ran than the base's suite selects (collected at the base commit), and no "
        "test the change removes explains it: cases a function builds, a file no longer "
        "collected",
        "restore the tests that no longer run (the cases, the test files pytest collected); "
        "tests that are meant to go are deleted where a reviewer sees them",
    ),
    Rule(
        "skip-added",
        "weakening",
        "a new skip, skipif, xfail or pytest.skip() (JS: .skip, xit, xdescribe)",
        "remove the skip and make the test pass",
    ),
    Rule(
        "only-added",
        "tampering",
        "a new .only / fit / fdescribe, which runs one test and silently drops the rest",
        "remove .only",
    ),
    Rule(
        "rerun-added",
        "weakening",
        "new reruns or flaky markers (--reruns, @flaky, jest.retryTimes)",
        "fix the flaky test instead of rerunning it until it passes",
    ),
    Rule(
        "assertion-removed",
        "tampering",
        "a test that asserted something now asserts nothing (or swallows AssertionError), or "
        "no longer makes a check of the code, with values written out, that no test of the "
        "change makes or calls the code the same way for",
        "restore the test's assertions; change the expectation only with the behaviour",
    ),
    Rule(
        "assertion-weakened",
        "weakening",
        "a test that compared a value with an expected one now only checks that it is truthy, "
        "not None or of a type",
        "restore the exact expectation; change it only together with the behaviour",
    ),
    Rule(
        "check-dropped",
        "notice",
        "a test the change edits no longer makes a check of the base's that no test of the "
        "change makes, where the test still reads what the check was about (a check "
        "rewritten another way: a whole value compared, another spelling, a helper)",
        "nothing, if the test checks as much another way; otherwise restore the check",
    ),
    Rule(
        "expectation-changed",
        "notice",
        "a test calls the code as it did and expects another value, in a change that does "
        "not change what the code does (imports, docstrings and layout aside): the test was "
        "wrong, or it now agrees with a bug",
        "nothing, if the old expectation was wrong; otherwise restore it and fix the code",
    ),
    Rule(
        "tested-code-mocked",
        "tampering",
        "a test replaces the very function it asserts on (monkeypatch.setattr, mock.patch), "
        "so it checks the stand-in, not the code",
        "mock what the code depends on, never the code under test; fix the code instead",
    ),
    Rule(
        "test-asserts-nothing",
        "weakening",
        "a test the change adds asserts nothing: it only runs the code, for coverage",
        "assert what the code must do (an assert, pytest.raises, expect(...))",
    ),
    # -- what reports the results ------------------------------------------------------------
    Rule(
        "result-rewritten",
        "tampering",
        "conftest, plugin or test code that alters test reports or outcomes: a hook, or a "
        "patch of pytest's, coverage.py's or agentgate's own code",
        "remove a new hook or patch, restore the base's version of a changed one (a person "
        "allows a needed change in the base's configuration, `integrity: {allow: [...]}`); a "
        "test's result is what the test did",
    ),
    Rule(
        "selection-narrowed",
        "tampering",
        "tests deselected by -k, --deselect, -m or a collection hook the base did not have",
        "run the whole suite the base runs",
    ),
    Rule(
        "exit-forced",
        "tampering",
        "pytest.exit, os._exit or sys.exit in conftest, plugin or hook code",
        "remove the forced exit; let the run end on its own",
    ),
    Rule(
        "source-disguised",
        "tampering",
        "a Python file of the change declares an encoding (# -*- coding: utf-7 -*-) under "
        "which Python runs code that its text read as UTF-8 (an editor, a linter, a diff, a "
        "reviewer) does not show, or nests its code deeper than agentgate can read it",
        "save the file as UTF-8 without the coding declaration, in pieces a parser reads at "
        "its default limit; write the code where it shows",
    ),
    Rule(
        "guard-forged",
        "tampering",
        "the change sets an AGENTGATE_* variable or otherwise disarms the gate",
        "remove it; the gate decides when it runs",
    ),
    # -- suppressions --------------------------------------------------------------------------
    Rule(
        "comparison-forged",
        "tampering",
        "code of the change defines a comparison (__eq__, __ne__) that answers without looking "
        "at what it is compared with: every `assert f(x) == expected` on its values passes",
        "compare the values; a test's expectation is only met by the right value",
    ),
    Rule(
        "test-detected",
        "weakening",
        "code (not a test) that asks whether it runs under pytest or agentgate "
        '(PYTEST_CURRENT_TEST, "pytest" in sys.modules): it can behave one way for the tests '
        "and another for its users",
        "make the code right for its users; the tests then pass by themselves (where the "
        "code must know, a debugger check say, a person allows the finding at the base: "
        "`integrity: allow: [{rule: test-detected, path: ..., reason: ...}]` in agentgate.yml)",
    ),
    Rule(
        "suppression-added",
        "weakening",
        "a new noqa, ruff: disable, type: ignore, pragma: no cover (or another line coverage.py "
        "excludes by a comment), nosec, eslint-disable or @ts-ignore",
        "fix the finding instead of silencing it",
    ),
    # -- configuration -------------------------------------------------------------------------
    Rule(
        "gate-config-loosened",
        "tampering",
        "agentgate's configuration was weakened: a gate removed, disabled, made non-blocking, "
        "a threshold lowered or its command changed",
        "restore the configuration; the base's is the one that counts",
    ),
    Rule(
        "threshold",
        "tampering",
        "a threshold weaker than the profile's (a run called strict is judged on strict's)",
        "meet the profile's threshold; an exception is a reviewer's: integrity: {allow: [{rule: "
        "threshold, path: gates.GATE.KEY, reason}]} in the base's configuration",
    ),
    Rule(
        "tool-config-loosened",
        "tampering",
        "a linter, coverage or pytest setting that decides what is measured was loosened",
        "restore the setting",
    ),
    Rule(
        "stale-bytecode",
        "tampering",
        "a __pycache__ file that Python or pytest loads in place of its source holds other code "
        "(compiled from another text, its header made to match the file's time and size)",
        "delete the project's __pycache__ folders (`find . -name __pycache__ -prune -exec rm -rf "
        "{} +`) and run the checks again",
    ),
    Rule(
        "compiled-code-added",
        "tampering",
        "an extension module (machine code: .so, .pyd) in a folder Python imports the project's "
        "code from, in a project with no source to build one at the base: what it does, no "
        "reading of the change can show",
        "remove it; a project that is to have compiled code gets its source and build in a "
        "change a person reviews (who allows the rule in agentgate.yml at the base)",
    ),
    Rule(
        "environment-loosened",
        "tampering",
        "an environment variable chooses what pytest or coverage.py measures: selection, "
        "reruns, settings or plugins in PYTEST_ADDOPTS, PYTEST_PLUGINS, a COVERAGE_RCFILE that "
        "is not the project's",
        "unset it; a setting the project means goes in the gate's `env:` in agentgate.yml",
    ),
    Rule(
        "interpreter-replaced",
        "tampering",
        "a Python of the project's virtual environment (`.venv/bin/python`), which the gate's "
        "commands run, is a script or another file, not an interpreter: it decides what the "
        "test command sees (its environment, its arguments, its files) while agentgate runs "
        "clean; or a linter a gate's command runs (ruff, flake8, pylint, mypy) installed there "
        "is not as its RECORD has it (`.venv/bin/ruff` replaced): it reports what it is told",
        "make the environment again (`python -m venv --clear .venv`, then install the "
        "project), or install the linter named again (`pip install --force-reinstall NAME`), "
        "and run the checks again",
    ),
    Rule(
        "startup-code-planted",
        "tampering",
        "code that Python runs at every start of the interpreter that runs the tests, which no "
        "installed package put there: an `import` line in a .pth file, a sitecustomize or "
        "usercustomize module, a pytest plugin written into the environment by hand or "
        "installed from a local folder with hooks that rewrite results, a test tool's file or "
        "its bytecode in __pycache__ not as its package installed it (in a git-ignored .venv "
        "the change never shows); it can replace the code under test, the test tools or the "
        "results",
        "remove the file (or its `import` line) named, or install the test tool named again "
        "(`pip install --force-reinstall NAME`); code the project means to run belongs in its "
        "package, or in a package it installs",
    ),
    Rule(
        "startup-code-of-the-machine",
        "notice",
        "startup code no installed package put there, in a site folder of the machine's Python "
        "outside the project and the virtual environment the tests run in (or with no virtual "
        "environment at all): the machine's own set-up, a certificate or a debugger hooked in "
        "at every start",
        "nothing, if it is the machine's; run the tests in a virtual environment of the "
        "project's, where all startup code is judged",
    ),
    Rule(
        "environment-changed",
        "tampering",
        "a test tool (pytest, pluggy, coverage.py, xdist, pytest-cov, agentgate) installed "
        "again in the tests' environment after the task began, or a pytest plugin installed "
        "since, that the project's dependency files do not name at the base, whose hooks can "
        "alter test outcomes (from a package index, a wheel file or a RECORD written by hand "
        "alike); a "
        "virtual environment's pyvenv.cfg changed; or the record of the environment the task "
        "began with gone or changed",
        "put back what changed: install the versions the task began with again, uninstall "
        "the plugin named (`pip uninstall NAME`), or restore the virtual environment's "
        "pyvenv.cfg; a tool, plugin or environment the project means to change is changed "
        "between tasks, by a person (a plugin the change declares is the project's once a "
        "reviewer merges the declaration)",
    ),
    Rule(
        "stop-hook-removed",
        "tampering",
        "agentgate's stop hook (or its session-start hook) was taken out of a harness's "
        "project settings, made to run another program or with other settings, its timeout "
        "cut, the harness's hooks turned off, a stop handler added beside it, or the "
        "environment the harness gives its hooks changed",
        "restore the hook settings as the base has them (`git checkout BASE -- FILE`); moving "
        "the hook to another program, or changing how the harness runs it, is a person's "
        "change on the base branch",
    ),
)

RULES: dict[str, Rule] = {rule.name: rule for rule in _RULES}
