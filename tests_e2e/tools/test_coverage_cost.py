"""`agentgate verify --coverage-cost`: what measuring coverage costs the tests, measured by
running the test command once more without coverage, and shown in every later verdict."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import PY, CliRun

from pytest_agentgate.commands import without_coverage
from pytest_agentgate.state import coverage_cost
from pytest_agentgate.state.coverage_cost import CoverageCost

Agentgate = Callable[..., CliRun]
WriteConfig = Callable[[str], Path]

COVERAGE_TEST = (
    "gates:\n"
    "  test:\n"
    "    command: >-\n"
    "      {py} -m coverage run --branch --data-file=.agentgate/.coverage\n"
    "      -m pytest -q -p no:cacheprovider --junitxml=.agentgate/junit.xml\n"
    "    report: .agentgate/junit.xml\n"
)
# Each run of the suite appends whether coverage.py measured it: the order of the two runs and
# that the first really ran without coverage show in runs.txt.
BUSY_TEST = """\
import coverage

from busy import spin


def test_spin():
    with open("runs.txt", "a") as out:
        out.write("with\\n" if coverage.Coverage.current() else "without\\n")
    assert spin(100_000) == sum(range(100_000))
"""
BUSY_CODE = """\
def spin(n):
    total = 0
    for i in range(n):
        total += i
    return total
"""
NOTICE = re.compile(
    r"test: coverage took (\d+)% of the test gate's time, measured (now|on [\d-]+ at [\d:]+): "
    r"([\d.]+) s with coverage, ([\d.]+) s without, ([\d.]+)x"
)


@pytest.fixture
def busy(project: Path, write_config: WriteConfig) -> Path:
    (project / "busy.py").write_text(BUSY_CODE)
    (project / "test_busy.py").write_text(BUSY_TEST)
    write_config(COVERAGE_TEST)
    return project


def _notice(run: CliRun) -> re.Match[str]:
    found = [m for n in run.verdict()["notices"] if (m := NOTICE.fullmatch(n.split(";")[0]))]
    assert len(found) == 1, run.verdict()["notices"]
    return found[0]


def test_measured_now_then_shown_in_every_later_verdict(busy: Path, agentgate: Agentgate) -> None:
    measured = agentgate("verify", "--coverage-cost", "--format", "json")
    assert measured.code == 0, measured.out
    # The command ran once without coverage, first, then once under it as the test gate.
    assert (busy / "runs.txt").read_text().split() == ["without", "with"]
    notice = _notice(measured)
    assert notice.group(2) == "now"
    with_s, without_s = float(notice.group(3)), float(notice.group(4))
    assert measured.gate("test")["duration_s"] == pytest.approx(with_s, abs=0.05)
    # Both runs are timed (which one is faster is the machine's business, not this test's).
    assert with_s > 0 and without_s > 0
    # The gate judged the run with coverage, whose report the timed run did not overwrite.
    assert measured.gate("test")["actual"]["passed"] == 1

    kept = json.loads((busy / ".agentgate" / "coverage-cost.json").read_text())
    [(command, entry)] = kept["commands"].items()
    assert command.startswith((PY, shlex.quote(PY)))
    assert entry["with_s"] == pytest.approx(with_s, abs=0.05)
    assert entry["without_s"] == pytest.approx(without_s, abs=0.05)
    share = 100 * (entry["with_s"] - entry["without_s"]) / entry["with_s"]
    # A busy machine can make the run without coverage the slower one: shown as 0%, no less.
    assert int(notice.group(1)) == max(0, round(share))

    later = agentgate("verify", "--no-cache", "--format", "json")
    again = _notice(later)
    assert again.group(2).startswith("on ")
    assert (again.group(3), again.group(4)) == (notice.group(3), notice.group(4))
    assert "`agentgate verify --coverage-cost` measures it again" in " ".join(
        later.verdict()["notices"]
    )
    assert (busy / "runs.txt").read_text().split() == ["without", "with", "with"]


def test_text_output_shows_the_share(busy: Path, agentgate: Agentgate) -> None:
    run = agentgate("verify", "--coverage-cost")
    assert run.code == 0
    shown = r"note: test: coverage took \d+% of the test gate's time, measured now"
    assert re.search(shown, run.out)


def test_another_test_command_has_no_figure(busy: Path, agentgate: Agentgate) -> None:
    coverage_cost.save(busy, CoverageCost("some other command", 9.0, 3.0, 1.0))
    run = agentgate("verify", "--format", "json")
    assert not any("coverage took" in n for n in run.verdict()["notices"])


def test_a_failing_run_without_coverage_is_no_measurement(busy: Path, agentgate: Agentgate) -> None:
    # Without coverage the conftest cannot even be imported: pytest exits 4, and a time
    # of a run that tested nothing says nothing about what coverage costs.
    (busy / "conftest.py").write_text(
        "import coverage\n"
        "if not coverage.Coverage.current():\n"
        "    raise ImportError('needs coverage')\n"
    )
    run = agentgate("verify", "--coverage-cost", "--format", "json")
    notices = run.verdict()["notices"]
    assert any(
        n.startswith("test: coverage's cost was not measured: the tests without coverage exited")
        for n in notices
    ), notices
    assert not (busy / ".agentgate" / "coverage-cost.json").exists()


def test_a_report_of_the_run_without_coverage_is_never_the_gates(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    """The project's own addopts write the JUnit report in both runs. When the run with
    coverage writes none (here it exits 0 at once), the report the run without coverage left
    is not this run's: another run id, and older than the gates' run."""
    (project / "busy.py").write_text(BUSY_CODE)
    (project / "test_busy.py").write_text(BUSY_TEST)
    (project / "pytest.ini").write_text("[pytest]\naddopts = --junitxml=j.xml\n")
    (project / "conftest.py").write_text(
        "import os\nimport coverage\nif coverage.Coverage.current():\n    os._exit(0)\n"
    )
    write_config(
        "gates:\n"
        "  test:\n"
        "    command: '{py} -m coverage run --data-file=.agentgate/.coverage -m pytest -q'\n"
        "    report: j.xml\n"
    )
    run = agentgate("verify", "--coverage-cost", "--format", "json")
    assert (project / "runs.txt").read_text().split() == ["without"]
    assert run.code == 1
    assert run.gate("test")["status"] == "fail"
    assert run.gate("test")["actual"].get("passed") in (None, 0)


def test_the_gates_run_one_at_a_time_while_measuring(
    busy: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    """Nothing shares the machine with the tests under coverage while their time is taken."""
    write_config(
        COVERAGE_TEST
        + "  build:\n"
        + "    command: >-\n"
        + '      {py} -c "import time; s = time.time(); time.sleep(1);'
        + " open('build.txt', 'w').write(f'{s} {time.time()}')\"\n"
    )
    (busy / "test_busy.py").write_text(
        "import time\n\n"
        + BUSY_TEST.replace(
            "    with open(",
            "    start = time.time()\n    with open(",
        ).replace(
            "    assert spin(100_000) == sum(range(100_000))\n",
            "    assert spin(100_000) == sum(range(100_000))\n"
            '    with open("test.txt", "a") as out:\n'
            '        out.write(f"{start} {time.time()}\\n")\n',
        )
    )
    assert agentgate("verify", "--coverage-cost").code == 0
    build = [float(t) for t in (busy / "build.txt").read_text().split()]
    lines = (busy / "test.txt").read_text().splitlines()
    tested = [[float(t) for t in line.split()] for line in lines]
    assert len(tested) == 2  # without coverage, then with it
    for start, end in tested:
        assert end <= build[0] or start >= build[1], (build, tested)


def test_pytest_cov_is_measured_too(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    (project / "busy.py").write_text(BUSY_CODE)
    (project / "test_busy.py").write_text(BUSY_TEST)
    write_config(
        "gates:\n"
        "  test:\n"
        "    command: >-\n"
        "      {py} -m pytest -q -p no:cacheprovider --cov=busy --cov-branch\n"
        "      --cov-report=json:.agentgate/coverage.json --junitxml=.agentgate/junit.xml\n"
        "    report: .agentgate/junit.xml\n"
        "  coverage: {report: .agentgate/coverage.json, format: coverage-json}\n"
    )
    run = agentgate("verify", "--coverage-cost", "--format", "json")
    assert run.code == 0, run.out
    assert (project / "runs.txt").read_text().split() == ["without", "with"]
    assert _notice(run).group(2) == "now"
    assert run.gate("coverage")["status"] == "pass"


def test_a_test_gate_without_coverage_is_refused(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config("gates:\n  test: {command: '{py} -m pytest -q --junitxml=j.xml', report: j.xml}\n")
    run = agentgate("verify", "--coverage-cost")
    assert run.code == 2
    assert "--coverage-cost: no test gate runs a command that measures coverage" in run.err


def test_a_command_it_cannot_undo_is_refused(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config(
        "gates:\n  test: {command: '{py} -m coverage run -m pytest > log.txt', report: j.xml}\n"
    )
    run = agentgate("verify", "--coverage-cost")
    assert run.code == 2
    assert "cannot tell how to run the test gate's command without coverage" in run.err
    assert not (project / "log.txt").exists()  # refused before anything ran


def test_no_run_is_refused(busy: Path, agentgate: Agentgate) -> None:
    run = agentgate("verify", "--coverage-cost", "--no-run")
    assert run.code == 2
    assert "--coverage-cost runs the tests, so it cannot be used with --no-run" in run.err
    assert not (busy / "runs.txt").exists()


def test_no_figure_and_no_hint_where_nothing_was_measured_here(
    busy: Path, write_config: WriteConfig, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert agentgate("verify", "--coverage-cost").code == 0
    # Under --no-run nothing ran under coverage; a disabled test gate ran nothing at all.
    run = agentgate("verify", "--no-run", "--format", "json")
    assert not any("coverage" in n for n in run.verdict()["notices"])
    write_config(COVERAGE_TEST + "    enabled: false\n  build: {command: 'true'}\n")
    run = agentgate("verify", "--format", "json")
    assert not any("coverage" in n for n in run.verdict()["notices"])
    # A command --coverage-cost would refuse gets no hint pointing at it.
    monkeypatch.setattr(coverage_cost, "HINT_AFTER_S", 0.0)
    write_config(COVERAGE_TEST.replace("junit.xml\n    report", "junit.xml > log.txt\n    report"))
    run = agentgate("verify", "--format", "json")
    assert (busy / "log.txt").exists()
    assert not any("coverage" in n for n in run.verdict()["notices"])


def test_a_slow_unmeasured_test_gate_says_how_to_measure(
    busy: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(coverage_cost, "HINT_AFTER_S", 0.0)
    run = agentgate("verify", "--format", "json")
    [hint] = [n for n in run.verdict()["notices"] if "--coverage-cost" in n]
    assert re.fullmatch(
        r"test: the tests took [\d.]+ s under coverage; `agentgate verify --coverage-cost` runs "
        r"them once more without it and shows coverage's share of that time",
        hint,
    )


@pytest.mark.parametrize(
    "kept",
    [
        "not json",
        '{"commands": []}',
        '{"commands": {"C": {"with_s": "x", "without_s": 1, "measured_at": 1}}}',
        '{"commands": {"C": {"with_s": -1, "without_s": 1, "measured_at": 1}}}',
        '{"commands": {"C": {"with_s": NaN, "without_s": 1, "measured_at": 1}}}',
        '{"commands": {"C": {"with_s": 1}}}',
        # Found by an attack review: each made every verdict of the project an internal error,
        # and a stop hook then let the agent stop unverified.
        '{"commands": {"C": {"with_s": 1' + "0" * 400 + ', "without_s": 1, "measured_at": 1e9}}}',
        '{"commands": {"C": {"with_s": 2, "without_s": 1, "measured_at": 1e20}}}',
        "[" * 100_000 + "]" * 100_000,
        '{"commands": {"C": {"with_s": 1e12, "without_s": 1, "measured_at": 1e9}}}',
    ],
)
def test_a_damaged_file_is_no_figure_and_is_replaced(tmp_path: Path, kept: str) -> None:
    path = tmp_path / ".agentgate" / coverage_cost.COST_FILE
    path.parent.mkdir()
    path.write_text(kept)
    assert coverage_cost.load(tmp_path, "C") is None
    coverage_cost.save(tmp_path, CoverageCost("C", 2.0, 1.0, 1e9))
    assert coverage_cost.load(tmp_path, "C") == CoverageCost("C", 2.0, 1.0, 1e9)


def test_other_commands_are_kept_beside_a_new_one(tmp_path: Path) -> None:
    coverage_cost.save(tmp_path, CoverageCost("A", 2.0, 1.0, 1e9))
    coverage_cost.save(tmp_path, CoverageCost("B", 4.0, 1.0, 1.1e9))
    assert coverage_cost.load(tmp_path, "A") == CoverageCost("A", 2.0, 1.0, 1e9)
    assert coverage_cost.load(tmp_path, "B") == CoverageCost("B", 4.0, 1.0, 1.1e9)


def test_a_damaged_file_never_costs_a_verdict(
    busy: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    (busy / "test_fail.py").write_text("def test_fails():\n    assert 1 == 2\n")
    command = next(iter(_kept_commands(busy, agentgate)))
    cost = busy / ".agentgate" / coverage_cost.COST_FILE
    damaged = {"commands": {command: {"with_s": 2, "without_s": 1, "measured_at": 1e20}}}
    cost.write_text(json.dumps(damaged))
    run = agentgate("verify", "--no-cache", "--format", "json")
    assert (run.code, run.gate("test")["status"]) == (1, "fail")
    assert not any("coverage took" in n for n in run.verdict()["notices"])

    # Whatever goes wrong in the note, the verdict stands and says why the note is missing.
    def broken(root: Path, command: str) -> None:
        raise RuntimeError("no such thing")

    monkeypatch.setattr(coverage_cost, "load", broken)
    run = agentgate("verify", "--no-cache", "--format", "json")
    assert (run.code, run.gate("test")["status"]) == (1, "fail")
    notices = run.verdict()["notices"]
    assert "coverage's cost could not be shown: RuntimeError: no such thing" in notices


def _kept_commands(root: Path, agentgate: Agentgate) -> dict[str, object]:
    """Measure once; the commands the measurement was kept under."""
    agentgate("verify", "--coverage-cost", "--format", "json")
    doc = json.loads((root / ".agentgate" / coverage_cost.COST_FILE).read_text())
    commands: dict[str, object] = doc["commands"]
    return commands


def test_share_and_description() -> None:
    cost = CoverageCost("C", 10.0, 2.5, 0.0)
    assert cost.share == 0.75
    assert cost.describe("unit", now=True) == (
        "unit: coverage took 75% of the test gate's time, measured now: "
        "10.0 s with coverage, 2.50 s without, 4.0x"
    )
    # Noise can make the run without coverage the slower one: that is no negative cost.
    assert CoverageCost("C", 1.0, 1.2, 0.0).share == 0.0
    assert CoverageCost("C", 0.0, 0.0, 0.0).share == 0.0
    # A time no platform can show is no measurement; a kept one always describes.
    assert "measured on 2001-" in CoverageCost("C", 2.0, 1.0, 1e9).describe("t", now=False)
    assert "12.0 min with coverage" in CoverageCost("C", 720.0, 60.0, 0.0).describe("t", now=True)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # What zero-config and `agentgate init` write.
        (
            "'/v/bin/python' -m coverage run --branch --data-file=.agentgate/.coverage "
            "--source=src -m pytest -q --junitxml=.agentgate/junit.xml -o junit_family=xunit1",
            "/v/bin/python -m pytest -q -o junit_family=xunit1",
        ),
        (
            "python3 -m coverage run -p --rcfile setup.cfg --omit '*/x/*' tests/run.py -v",
            "python3 tests/run.py -v",
        ),
        ("python -m coverage run -m pytest && python -m coverage xml", "python -m pytest"),
        (
            "python -m coverage erase; python -m coverage run -m pytest --junit-xml j.xml -x",
            "python -m pytest -x",
        ),
        # pytest-cov: `--cov src` takes src as its value, not as a test path.
        (
            "pytest --cov src tests --cov-report xml:c.xml --cov-branch --cov-fail-under=90 -q",
            "pytest tests -q --no-cov",
        ),
        ("pytest --cov --cov-config=.coveragerc -k 'a and b'", "pytest -k 'a and b' --no-cov"),
        (
            "CI=1 FOO='a b' python -m pytest --cov=pkg tests/unit",
            "CI=1 FOO='a b' python -m pytest tests/unit --no-cov",
        ),
        ("make lint && pytest --cov=pkg", "make lint && pytest --no-cov"),
        # Nothing measures coverage, or it cannot be told what the command would do without it.
        ("pytest -q", None),
        ("tox -e py", None),
        ("python -m coverage run --unknown-option -m pytest", None),
        ("python -m coverage run --branch", None),
        ("python -m coverage run -m", None),
        ("python -m coverage run -m pytest > log.txt", None),
        ("(python -m coverage run -m pytest)", None),
        ("python -m coverage run -m pytest $PYTEST_ARGS", None),
        ("python -m coverage run -m pytest tests/*.py", None),
        ("python -m coverage run -m pytest 'unbalanced", None),
        ("python -m coverage xml", None),
        # Two commands on two lines: the second is no argument of the first.
        ("pytest --cov=src\nrm -rf build", None),
        # pytest-cov's --cov-precision takes a value; an option it does not know cannot be read.
        ("pytest --cov=src --cov-precision 2 tests", "pytest tests --no-cov"),
        ("pytest --cov=src --cov-newthing x tests", None),
        # A "#" inside a word is the word's; one that starts a word makes the rest a comment.
        ("pytest --cov=src 'tests/a#1.py' -q", "pytest 'tests/a#1.py' -q --no-cov"),
        ("pytest --cov=src tests # && rm -rf /", None),
        # A quoted operator is an argument: never read as two commands.
        ("pytest --cov=src -k '&&' tests", None),
        ('pytest --cov=src tests ";" -q', None),
        ("pytest --cov=src '&&' x\\;", None),
        ("pytest --cov=src -k 'a && b'", "pytest -k 'a && b' --no-cov"),
    ],
)
def test_without_coverage(command: str, expected: str | None) -> None:
    assert without_coverage(command) == expected


def test_a_bare_coverage_script_runs_with_the_python_its_first_line_names(tmp_path: Path) -> None:
    bindir = tmp_path / "tools" / "bin"
    bindir.mkdir(parents=True)
    python = tmp_path / "venv" / "bin" / "python3.12"
    python.parent.mkdir(parents=True)
    python.write_text("")
    (bindir / "coverage").write_text(f"#!{python}\n# -*- coding: utf-8 -*-\n")
    (bindir / "coverage").chmod(0o755)
    (bindir / "python").write_text("")  # an unrelated Python beside it: not the one
    derived = without_coverage("coverage run -m pytest", {"PATH": str(bindir)})
    assert derived == f"{python} -m pytest"
    # A first line naming an interpreter that is not there: no guess.
    python.unlink()
    assert without_coverage("coverage run -m pytest", {"PATH": str(bindir)}) is None


def test_a_bare_coverage_script_runs_with_the_python_beside_it(tmp_path: Path) -> None:
    bindir = tmp_path / "venv" / "bin"
    bindir.mkdir(parents=True)
    for name in ("coverage", "python"):
        (bindir / name).write_text("#!/bin/sh\n")
        (bindir / name).chmod(0o755)
    derived = without_coverage("coverage run -m pytest -q", {"PATH": str(bindir)})
    assert derived == f"{bindir / 'python'} -m pytest -q"
    # No coverage on PATH, or no Python beside it: the interpreter cannot be told.
    assert without_coverage("coverage run -m pytest", {"PATH": str(tmp_path)}) is None
    (bindir / "python").unlink()
    assert without_coverage("coverage run -m pytest", {"PATH": str(bindir)}) is None


@pytest.mark.parametrize(
    ("python", "branch", "env", "noted"),
    [
        ((3, 11), True, {}, False),  # no sys.monitoring at all
        ((3, 12), True, {}, True),
        ((3, 13), True, {}, True),
        ((3, 14), True, {}, False),  # sysmon measures branches, and is coverage.py's default
        ((3, 12), False, {}, False),  # lines only: sysmon could measure them
        ((3, 13), True, {"COVERAGE_CORE": "ctrace"}, False),  # the user chose the core
    ],
)
def test_why_branches_are_measured_with_the_c_tracer(
    python: tuple[int, int], branch: bool, env: dict[str, str], noted: bool
) -> None:
    note = coverage_cost.tracer_note(python, branch, env)
    assert (note == coverage_cost.CORE_NOTE) is noted
    assert note == "" or "measures branches only from Python 3.14" in note
