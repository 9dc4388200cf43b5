"""Patch coverage: what the tests ran of the lines a change adds or modifies.

Built on real git repositories with a small Python package whose real tests run under
coverage.py; the figure is checked against diff-cover's on the same change and report.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import CliRun

Agentgate = Callable[..., CliRun]

PY = sys.executable

CALC_BASE = """\
def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    result = 0
    for _ in range(b):
        result += a
    return result


def obsolete(x):
    y = x * 2
    z = y + 1
    return z
"""

# The change: a modified line and an added one in add(), obsolete() deleted, div() new and
# partly covered, never() new and never run.
CALC_CHANGED = """\
def add(a, b):
    total = a + b
    return total


def sub(a, b):
    return a - b


def mul(a, b):
    result = 0
    for _ in range(b):
        result += a
    return result


def div(a, b):
    if b == 0:
        raise ZeroDivisionError("b")
    return a / b


def never(x):
    return x * 3
"""

TESTS_BASE = """\
from pkg.calc import add, sub


def test_add():
    assert add(1, 2) == 3


def test_sub():
    assert sub(3, 2) == 1
"""

TESTS_MORE = """\


def test_div():
    from pkg.calc import div
    from pkg.extra import double

    assert div(4, 2) == 2
    assert double(2) == 4


def test_fresh():
    from pkg.fresh import fresh

    assert fresh(1) == 1
"""

# A new file: double() is tested, triple() is not.
EXTRA = "def double(x):\n    return 2 * x\n\n\ndef triple(x):\n    return 3 * x\n"

IGNORED = ".coverage\ncoverage.*\ndiff-cover*.json\n.agentgate/\n__pycache__/\n.pytest_cache/\n"
# Every metric but patch switched off: the test reads patch coverage alone. `patch: 100` makes
# every uncovered new line a finding.
CONFIG = (
    "gates:\n"
    "  coverage: {report: coverage.xml, patch: 100, lines: null, branches: null,\n"
    "             functions: null, statements: null}\n"
)


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    proc = subprocess.run(
        ["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return proc.stdout


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "COVERAGE_"))}
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def make_change(repo: Path, project: Path, *, untracked: bool) -> None:
    """The base on main, then on a branch: commits, a staged and an unstaged edit, and a new
    file (untracked, or staged)."""
    git(repo, "init", "-q", "-b", "main")
    write(repo / ".gitignore", IGNORED)
    write(repo / "README.md", "# demo\n")
    write(project / "agentgate.yml", CONFIG)
    write(project / "pkg" / "__init__.py", "")
    write(project / "pkg" / "calc.py", CALC_BASE)
    write(project / "pkg" / "legacy.py", "def old(x):\n    return x\n")
    write(project / "pkg" / "gone.py", "def gone():\n    return 1\n")
    write(project / "tests" / "test_calc.py", TESTS_BASE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write(project / "pkg" / "calc.py", CALC_CHANGED)
    write(project / "pkg" / "extra.py", EXTRA)
    # Lines in a file the tests never import.
    with (project / "pkg" / "legacy.py").open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef older(x):\n    return x + 1\n")
    (project / "pkg" / "gone.py").unlink()
    if repo != project:  # another project's code in the same repository
        write(repo / "tools" / "helper.py", "def helper():\n    return 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    # Uncommitted: a staged test, an unstaged README line, a new module.
    with (project / "tests" / "test_calc.py").open("a", encoding="utf-8") as handle:
        handle.write(TESTS_MORE)
    git(project, "add", "tests")
    with (repo / "README.md").open("a", encoding="utf-8") as handle:
        handle.write("more\n")
    write(
        project / "pkg" / "fresh.py",
        "def fresh(x):\n    if x:\n        return 1\n    return 0\n",
    )
    if not untracked:
        git(project, "add", "pkg/fresh.py")


def measure(project: Path, selection: str) -> None:
    """The real tests under coverage.py, and every report format from the one run."""
    run(project, PY, "-m", "coverage", "run", "--branch", selection, "-m", "pytest", "-q",
        "-p", "no:cacheprovider", "tests")  # fmt: skip
    run(project, PY, "-m", "coverage", "xml", "-q", "-o", "coverage.xml")
    run(project, PY, "-m", "coverage", "json", "-q", "-o", "coverage.json")
    run(project, PY, "-m", "coverage", "lcov", "-q", "-o", "coverage.lcov")


def diff_cover(project: Path, report: str, prefix: str) -> dict[str, Any]:
    """diff-cover's figure: total, uncovered, and the uncovered lines per project path."""
    out = project / f"diff-cover-{report}.json"
    options = ("--include-untracked", "--total-percent-float", "-q", "--format", f"json:{out}")
    run(project, PY, "-m", "diff_cover.diff_cover_tool", report, "--compare-branch=main", *options)
    doc = json.loads(out.read_text(encoding="utf-8"))
    return {
        "percent": doc["total_percent_covered"],
        "total": doc["total_num_lines"],
        "covered": doc["total_num_lines"] - doc["total_num_violations"],
        "uncovered": {
            path.removeprefix(prefix): stats["violation_lines"]
            for path, stats in doc["src_stats"].items()
            if stats["violation_lines"]
        },
    }


def expand(ranges: str) -> list[int]:
    """``19, 24`` / ``5-6`` -> the line numbers."""
    lines: list[int] = []
    for part in ranges.split(", "):
        first, _, last = part.partition("-")
        lines.extend(range(int(first), int(last or first) + 1))
    return lines


def agentgate_figure(agentgate: Agentgate, report: str) -> dict[str, Any]:
    """agentgate's figure, read from what it prints: the verdict's actual.patch, the summary,
    the continuation text and the findings."""
    result = agentgate("verify", "--no-run", "--coverage", report, "--format", "json")
    gate = result.gate("coverage")
    total = re.search(r"patch [\d.]+% of (\d+) changed lines", gate["summary"])
    covered = re.search(r"\((\d+) covered now\)", result.verdict()["continuation"] or "")
    assert total and covered, gate
    uncovered = {}
    for finding in gate["findings"]:
        match = re.fullmatch(r"\d+ new lines? not covered: lines? (.+)", finding["message"])
        assert match, finding
        uncovered[finding["path"]] = expand(match.group(1))
        assert finding["line"] == uncovered[finding["path"]][0]
    return {
        "percent": round(gate["actual"]["patch"], 2),
        "total": int(total.group(1)),
        "covered": int(covered.group(1)),
        "uncovered": uncovered,
    }


# An lcov record shaped like istanbul's (jest, nyc): a function's line and a branch's line need
# not have a DA line; diff-cover then counts them from FN/FNDA and BRDA.
ISTANBUL_LCOV = """\
TN:
SF:{path}
FN:1,price
FN:5,unused
FNF:2
FNH:1
FNDA:3,price
FNDA:0,unused
DA:2,3
DA:3,3
DA:6,0
LF:3
LH:2
BRDA:3,0,0,2
BRDA:3,0,1,1
BRDA:7,1,0,0
BRDA:7,1,1,1
BRDA:8,2,0,1
BRDA:8,2,1,1
BRF:6
BRH:5
end_of_record
"""

PRICE_JS = """\
function price(n) {
  return n * 2;
}

function unused() {
  return 0;
}
const a = 1 ? 2 : 3;
const b = true ? 1 : 2;
"""


def test_lcov_lines_without_da_count_as_diff_cover_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo / ".gitignore", IGNORED)
    write(repo / "agentgate.yml", CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo / "src" / "price.js", PRICE_JS)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "price")
    # An absolute SF path, as nyc writes it.
    write(repo / "coverage.lcov", ISTANBUL_LCOV.format(path=repo / "src" / "price.js"))
    monkeypatch.chdir(repo)
    expected = diff_cover(repo, "coverage.lcov", "")
    # FN line 1 ran, FN line 5 did not; BRDA line 7 was partly taken, line 8 fully; DA line 3
    # ran; DA line 6 did not.
    assert expected["uncovered"] == {"src/price.js": [5, 6, 7]}
    assert (expected["total"], expected["covered"]) == (7, 4)
    assert agentgate_figure(agentgate, "coverage.lcov") == expected


# -- when patch coverage decides, informs, or cannot be measured --------------------------------

MOD_BASE = "def f():\n    return 1\n"
TEST_MOD = "from pkg.mod import f\n\n\ndef test_f():\n    assert f() == 1\n"


def small_project(
    root: Path, added: str, config: str, *, repository: bool = True, report: str = "json"
) -> None:
    """pkg/mod.py with a tested function; ``added`` appended to it after the base commit (left
    uncommitted); the real tests run under coverage.py and its ``report`` written."""
    write(root / ".gitignore", IGNORED)
    write(root / "agentgate.yml", config)
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "mod.py", MOD_BASE)
    write(root / "tests" / "test_mod.py", TEST_MOD)
    if repository:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base")
    write(root / "pkg" / "mod.py", MOD_BASE + added)
    run(root, PY, "-m", "coverage", "run", "--source=pkg", "-m", "pytest", "-q",
        "-p", "no:cacheprovider", "tests")  # fmt: skip
    run(root, PY, "-m", "coverage", report, "-q", "-o", f"coverage.{report}")


SIX_UNCOVERED = (
    "\n\ndef g(x):\n    y = x + 1\n    z = y * 2\n    if z:\n        z -= 1\n    return z\n"
)
ONLY_PATCH = (
    "  coverage: {{report: coverage.json, lines: null, branches: null, functions: null,\n"
    "             statements: null{extra}}}\n"
)


def patch_part(gate: dict[str, Any]) -> str | None:
    """The patch coverage part of a coverage gate's summary."""
    return next((p for p in gate["summary"].split(", ") if p.startswith("patch")), None)


def commit_config(root: Path, text: str) -> None:
    """Make ``text`` the base's configuration: the base's is the one that counts."""
    write(root / "agentgate.yml", text)
    git(root, "add", "agentgate.yml")
    git(root, "commit", "-q", "-m", "configuration")


def only_patch(extra: str = "") -> str:
    return "gates:\n" + ONLY_PATCH.format(extra=extra)


def test_uncovered_new_code_fails_the_profile_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    small_project(tmp_path, SIX_UNCOVERED, only_patch())
    monkeypatch.chdir(tmp_path)
    result = agentgate("verify", "--no-run", "--format", "json")
    gate = result.gate("coverage")
    assert result.code == 1 and gate["status"] == "fail"
    assert gate["expected"] == {"patch": 80.0}  # the standard profile's
    # The `def` line ran when the module was imported; the body never did.
    assert gate["actual"]["patch"] == pytest.approx(100 / 6)
    assert patch_part(gate) == "patch 16.67% of 6 changed lines (need 80.00%)"
    assert [(f["path"], f["line"], f["message"]) for f in gate["findings"]] == [
        ("pkg/mod.py", 6, "5 new lines not covered: lines 6-10")
    ]
    assert (
        "cover 4 more of the 6 lines the change adds or modifies against main"
        in (result.verdict()["continuation"])
    )


def test_covered_new_code_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    small_project(tmp_path, SIX_UNCOVERED, only_patch())
    write(
        tmp_path / "tests" / "test_g.py",
        "from pkg.mod import g\n\n\ndef test_g():\n    assert g(1) == 3\n",
    )
    run(tmp_path, PY, "-m", "coverage", "run", "--source=pkg", "-m", "pytest", "-q",
        "-p", "no:cacheprovider", "tests")  # fmt: skip
    run(tmp_path, PY, "-m", "coverage", "json", "-q", "-o", "coverage.json")
    monkeypatch.chdir(tmp_path)
    gate = agentgate("verify", "--no-run", "--format", "json").gate("coverage")
    assert gate["status"] == "pass"
    assert patch_part(gate) == "patch 100.00% of 6 changed lines (need 80.00%)"
    assert gate["actual"]["patch"] == 100.0


def test_a_small_change_is_reported_not_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    small_project(tmp_path, "\n\ndef g():\n    return 2\n", only_patch())
    monkeypatch.chdir(tmp_path)
    gate = agentgate("verify", "--no-run", "--format", "json").gate("coverage")
    assert gate["status"] == "pass"
    assert patch_part(gate) == "patch 50.00% of 2 changed lines (informational below 5)"
    assert gate["actual"]["patch"] == 50.0

    commit_config(tmp_path, only_patch(", patch_min_lines: 2"))
    gate = agentgate("verify", "--no-run", "--format", "json").gate("coverage")
    assert gate["status"] == "fail"
    assert patch_part(gate) == "patch 50.00% of 2 changed lines (need 80.00%)"


def test_a_change_without_code_has_nothing_to_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    small_project(tmp_path, "", only_patch(", patch: 100, patch_min_lines: 0"))
    write(tmp_path / "README.md", "# notes\n")  # untracked: the whole change
    write(tmp_path / "tests" / "test_more.py", "def test_more():\n    assert True\n")
    monkeypatch.chdir(tmp_path)
    gate = agentgate("verify", "--no-run", "--format", "json").gate("coverage")
    assert gate["status"] == "pass"
    assert patch_part(gate) == "patch: no changed line the report measures"
    assert gate["actual"]["patch"] is None


def test_without_a_repository_the_default_informs_and_an_explicit_patch_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    small_project(tmp_path, SIX_UNCOVERED, only_patch(), repository=False)
    monkeypatch.chdir(tmp_path)
    result = agentgate("verify", "--no-run", "--format", "json")
    gate = result.gate("coverage")
    assert result.code == 0 and gate["status"] == "pass"
    assert gate["actual"]["patch"] is None
    assert patch_part(gate) is None

    write(tmp_path / "agentgate.yml", only_patch(", patch: 80"))
    result = agentgate("verify", "--no-run", "--format", "json")
    gate = result.gate("coverage")
    assert result.code == 1 and gate["status"] == "fail"
    assert patch_part(gate) == "patch not measured (need 80.00%)"
    assert gate["problems"] == [
        "patch coverage not measured: not a git repository; gate inside a git repository "
        "whose base is there (set `base:` or pass --base)"
    ]


def test_a_missing_base_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    small_project(tmp_path, SIX_UNCOVERED, only_patch(", patch: 50"))
    monkeypatch.chdir(tmp_path)
    args = ("verify", "--no-run", "--base", "no-such-branch", "--format", "json")
    gate = agentgate(*args).gate("coverage")
    assert gate["status"] == "fail"
    assert gate["problems"][0].startswith(
        "patch coverage not measured: no base to compare with: the base 'no-such-branch' "
        "(--base) is not a commit in this repository"
    )
    # The profile's default is informational then (the integrity gate says the base is missing).
    commit_config(tmp_path, only_patch())
    result = agentgate(*args)
    assert result.gate("coverage")["status"] == "pass"
    assert result.gate("integrity")["status"] == "fail"


def test_a_summary_without_line_numbers_says_how_to_measure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    small_project(tmp_path, SIX_UNCOVERED, only_patch())
    summary = {
        "total": {m: {"total": 8, "covered": 2, "skipped": 0, "pct": 25}
                  for m in ("lines", "statements", "functions", "branches")},
        str(tmp_path / "pkg" / "mod.py"): {
            m: {"total": 8, "covered": 2, "skipped": 0, "pct": 25}
            for m in ("lines", "statements", "functions", "branches")
        },
    }  # fmt: skip
    write(tmp_path / "coverage-summary.json", json.dumps(summary))
    monkeypatch.chdir(tmp_path)
    result = agentgate(
        "verify", "--no-run", "--coverage", "coverage-summary.json", "--format", "json"
    )
    gate = result.gate("coverage")
    assert gate["status"] == "fail" and gate["actual"]["patch"] is None
    assert gate["problems"] == [
        "patch coverage not measured: coverage-summary.json (istanbul-summary) has no line "
        "numbers; write a report with line numbers: lcov or Cobertura (istanbul/nyc/c8/jest/"
        "vitest: add the `lcov` or `cobertura` reporter; coverage.py: `coverage json`, "
        "`coverage xml` or the data file), or set `patch: null`"
    ]
    commit_config(tmp_path, only_patch(", patch: null"))
    gate = agentgate(
        "verify", "--no-run", "--coverage", "coverage-summary.json", "--format", "json"
    ).gate("coverage")
    assert gate["status"] == "pass" and gate["actual"]["patch"] is None


def test_coverage_a_door_measured_without_the_change(tmp_path: Path) -> None:
    """The pytest session hands its coverage to the judge with no change: the profile's
    default says so; a `patch` the user wrote fails, as an unmeasurable threshold does."""
    from pytest_agentgate.config.model import GateConfig
    from pytest_agentgate.gates.coverage import CoverageEvidence, CoverageGate
    from pytest_agentgate.profiles import defaults_for
    from pytest_agentgate.reports.model import CoverageReport, Ratio

    report = CoverageReport("pytest-cov", "pytest-cov", lines=Ratio(9, 10), statements=Ratio(9, 10))
    evidence = CoverageEvidence(tmp_path, report=report, measured_as="data")
    thresholds = {**defaults_for("standard", "coverage"), "branches": None, "functions": None}
    default = CoverageGate().judge(
        GateConfig("coverage", "coverage", thresholds=thresholds), evidence
    )
    assert default.status == "pass" and default.actual["patch"] is None
    assert default.notes == [
        "no base: patch coverage not measured (this door measured coverage without looking at "
        "the change)"
    ]
    explicit = GateConfig("coverage", "coverage", thresholds={**thresholds, "patch": 80.0})
    failed = CoverageGate().judge(explicit, evidence)
    assert failed.status == "fail"
    assert failed.problems == [
        "patch coverage not measured: this door measured coverage without looking at the "
        "change; gate with `agentgate verify`, which measures patch coverage against the base"
    ]


def test_patch_null_turns_it_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    small_project(tmp_path, SIX_UNCOVERED, only_patch(", patch: null"))
    monkeypatch.chdir(tmp_path)
    gate = agentgate("verify", "--no-run", "--format", "json").gate("coverage")
    assert gate["status"] == "pass" and "patch" not in gate["expected"]
    assert patch_part(gate) is None and gate["actual"]["patch"] is None


def test_a_project_reached_through_a_symlink(tmp_path: Path) -> None:
    """The library door is given the link; git names the resolved folder."""
    from pytest_agentgate import verify

    real = tmp_path / "real"
    real.mkdir()
    small_project(real, SIX_UNCOVERED, "")
    (real / "agentgate.yml").unlink()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    verdict = verify(str(link), run=False, coverage="coverage.json")
    coverage = next(g for g in verdict.gates if g.name == "coverage")
    assert coverage.actual["patch"] == pytest.approx(100 / 6)
    assert coverage.findings[0].message == "5 new lines not covered: lines 6-10"
    assert (coverage.findings[0].path, coverage.findings[0].line) == ("pkg/mod.py", 6)
