"""Coverage readers: real coverage.py runs, sample files from nyc/jest, and malformed input."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agentgate.reports.coverage import (
    COVERAGE_FORMATS,
    detect_coverage_format,
    read_coverage,
)
from pytest_agentgate.reports.model import Ratio, ReportError

DATA = Path(__file__).parent / "data"

# Seven ifs (14 branches), every line runs; the last three ifs are always true: 11/14 branches.
PROGRAM = """\
from helper import double


def check(x):
    total = 0
    if x > 0:
        total += 1
    if x > 1:
        total += 1
    if x > 2:
        total += 1
    if x > 3:
        total += 1
    if x >= -5:
        total += 1
    if x >= -6:
        total += 1
    if x >= -7:
        total += 1
    return double(total)


check(0)
check(5)
"""

HELPER = """\
def double(n):
    return n * 2


def never_called():
    return 0
"""


def sample(relative: str) -> Path:
    path = DATA / relative
    if not path.exists():
        pytest.skip(f"sample {relative} not generated yet")
    return path


def clean_env() -> dict[str, str]:
    """No pytest-cov / coverage subprocess hooks leaking in from an outer measured run."""
    drop = ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG", "COVERAGE_FILE", "COVERAGE_RCFILE")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("COV_CORE_")}


def coverage_cli(cwd: Path, *args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "coverage", *args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def make_project(root: Path, *, branch: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "prog.py").write_text(PROGRAM, encoding="utf-8")
    (root / "helper.py").write_text(HELPER, encoding="utf-8")
    coverage_cli(root, "run", *(["--branch"] if branch else []), "prog.py")
    return root


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("measured"))


# --- real coverage.py -------------------------------------------------------------------------


def test_data_file_read_through_coverage_api(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_file = project / ".coverage"
    before = digest(data_file), sorted(p.name for p in project.iterdir())
    monkeypatch.chdir(tmp_path)  # root, not the working directory, decides where sources are
    report = read_coverage(data_file, root=project)
    assert report.format == "coverage-data"
    assert report.source == str(data_file)
    by_path = {f.path: f for f in report.files}
    assert set(by_path) == {"prog.py", "helper.py"}
    assert by_path["prog.py"].lines == Ratio(20, 20)
    assert by_path["helper.py"].missing_lines == [6]
    assert report.branches == Ratio(11, 14)
    assert f"{report.branches.percent:.2f}" == "78.57"
    assert report.lines == report.statements == Ratio(23, 24)
    assert report.functions == Ratio(2, 3)  # check, double; never_called missed
    assert report.notes == []
    # The user's data file is untouched and nothing was written next to it.
    assert (digest(data_file), sorted(p.name for p in project.iterdir())) == before


def test_json_report_matches_the_data_file_and_ignores_percent_covered(project: Path) -> None:
    coverage_cli(project, "json", "-o", "cov.json")
    try:
        report = read_coverage(project / "cov.json")
        raw = json.loads((project / "cov.json").read_text(encoding="utf-8"))
    finally:
        (project / "cov.json").unlink()
    assert report.format == "coverage-json"
    assert (report.lines, report.branches, report.functions) == (
        Ratio(23, 24),
        Ratio(11, 14),
        Ratio(2, 3),
    )
    # coverage.py's percent_covered mixes lines and branches; agentgate never uses it.
    mixed = raw["totals"]["percent_covered"]
    assert mixed == pytest.approx((23 + 11) * 100 / (24 + 14))
    assert report.lines is not None and report.lines.percent != mixed


def test_all_lines_run_but_branches_partial(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(
        PROGRAM.replace("from helper import double\n", "").replace("double(total)", "total"),
        encoding="utf-8",
    )
    coverage_cli(tmp_path, "run", "--branch", "prog.py")
    report = read_coverage(tmp_path / ".coverage", root=tmp_path)
    assert report.lines is not None and report.lines.percent == 100.0
    assert report.branches is not None and report.branches.percent == pytest.approx(78.5714, 1e-4)
    assert report.functions == Ratio(1, 1)


def test_without_branch_measurement_branches_are_not_measured(tmp_path: Path) -> None:
    make_project(tmp_path, branch=False)
    report = read_coverage(tmp_path / ".coverage", root=tmp_path)
    assert report.branches is None
    assert report.lines == Ratio(23, 24)


def test_root_configuration_applies(tmp_path: Path) -> None:
    make_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.coverage.report]\nomit = ["helper.py"]\n', encoding="utf-8"
    )
    report = read_coverage(tmp_path / ".coverage", root=tmp_path)
    assert [f.path for f in report.files] == ["prog.py"]
    assert report.lines == Ratio(20, 20)


def test_missing_source_is_left_out_with_a_note(tmp_path: Path) -> None:
    make_project(tmp_path)
    (tmp_path / "helper.py").unlink()
    report = read_coverage(tmp_path / ".coverage", root=tmp_path)
    assert [f.path for f in report.files] == ["prog.py"]
    assert len(report.notes) == 1 and "helper.py" in report.notes[0]
    assert "1 measured file(s) left out" in report.notes[0]

    (tmp_path / "prog.py").unlink()
    with pytest.raises(ReportError, match="none could be reported") as caught:
        read_coverage(tmp_path / ".coverage", root=tmp_path)
    assert "project root" in caught.value.hint


def test_unparsable_source_is_left_out_with_a_note(tmp_path: Path) -> None:
    make_project(tmp_path)
    (tmp_path / "helper.py").write_text("def broken(:\n", encoding="utf-8")
    report = read_coverage(tmp_path / ".coverage", root=tmp_path)
    assert [f.path for f in report.files] == ["prog.py"]
    assert len(report.notes) == 1
    assert report.notes[0].startswith("coverage.py: Couldn't parse")
    assert "helper.py" in report.notes[0]


def test_data_file_that_measured_nothing(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("x = 1\n", encoding="utf-8")
    coverage_cli(tmp_path, "run", "--include=nothing/*", "prog.py")
    data_file = tmp_path / ".coverage"
    assert data_file.exists()
    with pytest.raises(ReportError, match="no coverage data") as caught:
        read_coverage(data_file, root=tmp_path)
    assert "coverage run" in caught.value.hint


# --- samples made by the real tools -----------------------------------------------------------


def test_sample_coverage_py_json_with_branches() -> None:
    report = read_coverage(sample("python/coverage-branches.json"))
    assert report.lines == report.statements == Ratio(39, 39)
    assert report.branches == Ratio(11, 14)
    assert report.functions == Ratio(9, 9)
    assert [f.path for f in report.files][:1] == ["shop/__init__.py"]


def test_sample_coverage_py_json_partial() -> None:
    report = read_coverage(sample("python/coverage-partial.json"), format="coverage-json")
    assert report.lines == Ratio(28, 39)
    assert report.branches == Ratio(7, 14)
    assert report.functions == Ratio(6, 9)
    pricing = next(f for f in report.files if f.path == "shop/pricing.py")
    assert pricing.missing_lines == [10, 11, 12, 13, 14, 15]
    assert pricing.missed == 6


def test_sample_coverage_data_file_with_project_root() -> None:
    data_file = sample("python/coverage-branches.data")
    before = digest(data_file)
    report = read_coverage(data_file, root=DATA / "python" / "project")
    assert report.format == "coverage-data"
    assert (report.lines, report.branches, report.functions) == (
        Ratio(39, 39),
        Ratio(11, 14),
        Ratio(9, 9),
    )
    assert "shop/pricing.py" in {f.path for f in report.files}
    assert digest(data_file) == before


def test_sample_istanbul_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    path = sample("js/coverage-summary.json")
    monkeypatch.chdir(DATA / "js" / "project")
    report = read_coverage(path)
    assert report.format == "istanbul-summary"
    assert (report.lines, report.statements, report.functions, report.branches) == (
        Ratio(40, 44),
        Ratio(40, 44),
        Ratio(5, 5),
        Ratio(11, 14),
    )
    by_path = {f.path: f for f in report.files}
    assert by_path[os.path.join("src", "format.js")].lines == Ratio(13, 17)
    assert by_path[os.path.join("src", "format.js")].missing_lines == []


def test_sample_jest_summary_keeps_lines_and_statements_apart() -> None:
    report = read_coverage(sample("js/coverage-summary-jest.json"), root=DATA / "js" / "project")
    assert (report.lines, report.statements, report.functions, report.branches) == (
        Ratio(12, 16),
        Ratio(13, 17),
        Ratio(5, 6),
        Ratio(7, 10),
    )
    assert os.path.join("src", "cart.js") in {f.path for f in report.files}


def test_sample_summary_with_no_files_is_not_a_pass() -> None:
    with pytest.raises(ReportError, match="measured no files"):
        read_coverage(sample("js/coverage-summary-unknown.json"))


# --- istanbul edge cases ----------------------------------------------------------------------


def metric(covered: int, total: int, pct: Any = None) -> dict[str, Any]:
    if pct is None:
        pct = "Unknown" if total == 0 else round(covered * 100 / total, 2)
    return {"total": total, "covered": covered, "skipped": 0, "pct": pct}


def summary(**files: dict[str, Any]) -> dict[str, Any]:
    return {"total": files.pop("total"), **{k.replace("__", "/"): v for k, v in files.items()}}


def entry(lines: tuple[int, int], functions: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    return {
        "lines": metric(*lines),
        "statements": metric(*lines),
        "functions": metric(*functions),
        "branches": metric(0, 0),
    }


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_istanbul_unknown_pct_and_zero_totals_are_fully_covered(tmp_path: Path) -> None:
    data = {"total": entry((3, 4)), "/abs/elsewhere/données.js": entry((3, 4))}
    report = read_coverage(write_json(tmp_path / "coverage-summary.json", data))
    assert report.lines == Ratio(3, 4)
    assert report.functions == Ratio(0, 0) and report.functions.percent == 100.0
    assert report.branches is not None and report.branches.percent == 100.0
    assert [f.path for f in report.files] == ["/abs/elsewhere/données.js"]  # outside root: kept


def test_istanbul_percentages_come_from_counts_not_pct(tmp_path: Path) -> None:
    total = entry((84996, 100000))
    total["lines"]["pct"] = 85  # rounded up by the tool; the gate must see 84.996
    data = {"total": total, str(tmp_path / "src" / "a.js"): entry((84996, 100000))}
    report = read_coverage(write_json(tmp_path / "s.json", data), root=tmp_path)
    assert report.lines is not None and report.lines.percent == pytest.approx(84.996)
    assert report.files[0].path == os.path.join("src", "a.js")


# --- detection --------------------------------------------------------------------------------


def test_formats_tuple() -> None:
    assert COVERAGE_FORMATS == ("coverage-json", "coverage-data", "istanbul-summary")


def test_detection_by_content(tmp_path: Path, project: Path) -> None:
    assert detect_coverage_format(project / ".coverage") == "coverage-data"
    py = write_json(tmp_path / "a", {"meta": {"format": 3}, "totals": {}, "files": {}})
    assert detect_coverage_format(py) == "coverage-json"
    old = write_json(tmp_path / "b", {"totals": {"num_statements": 1, "covered_lines": 1}})
    assert detect_coverage_format(old) == "coverage-json"
    js = write_json(tmp_path / "c", {"total": entry((1, 1))})
    assert detect_coverage_format(js) == "istanbul-summary"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"some": "thing"}', "JSON of an unknown shape"),
        (b'<?xml version="1.0"?><coverage/>', "XML"),
        (b"TN:\nSF:a.js\nend_of_record\n", "not JSON and not a SQLite data file"),
        (b'{"/a.js": {"statementMap": {}, "s": {}}}', "coverage-final.json"),
        (b"[1, 2]", "unknown shape"),
    ],
)
def test_unknown_content_lists_the_formats(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "report.out"
    path.write_bytes(content)
    for call in (detect_coverage_format, read_coverage):
        with pytest.raises(ReportError, match="not a coverage report agentgate reads") as caught:
            call(path)
        assert problem in str(caught.value)
        assert str(path) in str(caught.value)
        for name in COVERAGE_FORMATS:
            assert name in caught.value.hint


# --- bad input --------------------------------------------------------------------------------


def test_missing_files_say_which_command_writes_them(tmp_path: Path) -> None:
    cases = {
        ".coverage": "coverage run",
        "coverage.json": "coverage json",
        "coverage-summary.json": "json-summary",
    }
    for name, expected in cases.items():
        with pytest.raises(ReportError, match="file not found") as caught:
            read_coverage(tmp_path / name)
        assert expected in caught.value.hint, name
        assert str(tmp_path / name) in str(caught.value)
    with pytest.raises(ReportError, match="file not found") as caught:
        read_coverage(tmp_path / "x", format="coverage-data")
    assert "coverage run" in caught.value.hint


def py_json(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "meta": {"format": 3, "branch_coverage": True},
        "totals": {
            "covered_lines": 3,
            "num_statements": 4,
            "covered_branches": 1,
            "num_branches": 2,
        },
        "files": {
            "a.py": {"summary": {"covered_lines": 3, "num_statements": 4}, "missing_lines": [9]}
        },
    }
    data.update(overrides)
    return data


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "is empty"),
        ("   \n", "is empty"),
        ('{"meta": {"format": 3}, "totals": {"covered_lines": 3', "truncated"),
        ('{"meta": {"format": 3}, nope}', "not valid JSON"),
        (json.dumps(py_json(totals=[1])), '"totals" should be an object, got a list'),
        (json.dumps(py_json(totals={"covered_lines": -1, "num_statements": 4})), "negative"),
        (json.dumps(py_json(totals={"covered_lines": 5, "num_statements": 4})), "exceeds total"),
        (json.dumps(py_json(totals={"covered_lines": "3", "num_statements": 4})), "whole number"),
        (
            json.dumps(py_json(totals={"covered_lines": 3, "num_statements": 4})),
            "branches covered should be a whole number, got null",
        ),
        (
            json.dumps(
                py_json(
                    files={
                        "a.py": {
                            "summary": {"covered_lines": 1, "num_statements": 1},
                            "missing_lines": "9",
                        }
                    }
                )
            ),
            "missing_lines",
        ),
        (json.dumps(py_json(files={"a.py": []})), "file 'a.py' should be an object"),
        (json.dumps(py_json(files={})), "measured no files"),
        (json.dumps({"total": {"lines": metric(5, 4, 100)}}), "exceeds total"),
        (json.dumps({"total": {**entry((1, 1)), "branches": None}}), "total branches"),
        (
            json.dumps({"total": entry((1, 1)), "/a.js": {"lines": {"covered": 1}}}),
            "file '/a.js' lines total",
        ),
    ],
)
def test_bad_reports_are_report_errors_naming_the_file(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "coverage.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ReportError) as caught:
        read_coverage(path)
    assert str(caught.value).startswith(f"{path}:")
    assert problem in str(caught.value)


def test_explicit_format_mismatches(tmp_path: Path, project: Path) -> None:
    with pytest.raises(ReportError, match=r"is a coverage\.py data file, not coverage-json"):
        read_coverage(project / ".coverage", format="coverage-json")
    json_file = write_json(tmp_path / "c.json", py_json())
    with pytest.raises(ReportError, match=r"not a coverage\.py data file"):
        read_coverage(json_file, format="coverage-data")
    with pytest.raises(ReportError, match="unknown coverage format 'lcov'") as caught:
        read_coverage(json_file, format="lcov")
    assert "istanbul-summary" in caught.value.hint
    with pytest.raises(ReportError, match='"total" should be an object'):
        read_coverage(json_file, format="istanbul-summary")
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with pytest.raises(ReportError, match="is empty"):
        read_coverage(empty, format="coverage-data")
    with pytest.raises(ReportError, match="is empty"):
        read_coverage(empty, format="istanbul-summary")


def test_corrupt_data_file(tmp_path: Path, project: Path) -> None:
    broken = tmp_path / ".coverage"
    broken.write_bytes((project / ".coverage").read_bytes()[:200])  # SQLite header, no body
    with pytest.raises(ReportError, match=r"cannot be loaded by coverage\.py") as caught:
        read_coverage(broken, root=tmp_path)
    assert str(caught.value).startswith(f"{broken}:")
    assert "agentgate-coverage-" not in str(caught.value)  # the temp copy is never named


def test_broken_configuration_in_root(project: Path, tmp_path: Path) -> None:
    (tmp_path / ".coveragerc").write_text("[run]\nplugins = no_such_plugin_module\n", "utf-8")
    with pytest.raises(ReportError, match="could not start with the configuration") as caught:
        read_coverage(project / ".coverage", root=tmp_path)
    assert "no_such_plugin_module" in str(caught.value)
    (tmp_path / ".coveragerc").write_text("[run]\nbranch = maybe\n", "utf-8")
    with pytest.raises(ReportError, match="could not start with the configuration"):
        read_coverage(project / ".coverage", root=tmp_path)


def test_missing_root_directory(project: Path, tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="not a directory"):
        read_coverage(project / ".coverage", root=tmp_path / "absent")


# --- coverage.py JSON details -----------------------------------------------------------------


def test_functions_regions(tmp_path: Path) -> None:
    regions = {
        "": {"summary": {"covered_lines": 4, "num_statements": 4}},  # module level: not a function
        "f": {"summary": {"covered_lines": 2, "num_statements": 3}},
        "g": {"summary": {"covered_lines": 0, "num_statements": 2}},
        "Protocol.method": {"summary": {"covered_lines": 0, "num_statements": 0}},  # no statements
    }
    data = py_json()
    data["files"]["a.py"]["functions"] = regions
    data["files"]["b.py"] = {"summary": {"covered_lines": 0, "num_statements": 0}}
    report = read_coverage(write_json(tmp_path / "coverage.json", data))
    assert report.functions == Ratio(1, 2)
    assert report.branches == Ratio(1, 2)
    assert report.files[0].missing_lines == [9]


def test_older_coverage_json_has_no_functions_or_branches(tmp_path: Path) -> None:
    data = {
        "meta": {"version": "6.5.0", "branch_coverage": False},
        "totals": {"covered_lines": 8, "num_statements": 10, "percent_covered": 80.0},
        "files": {
            "pkg/ü.py": {
                "summary": {"covered_lines": 8, "num_statements": 10},
                "missing_lines": [12, 3],
            }
        },
    }
    report = read_coverage(write_json(tmp_path / "coverage.json", data))
    assert (report.functions, report.branches) == (None, None)
    assert report.lines == report.statements == Ratio(8, 10)
    assert report.files[0].path == "pkg/ü.py"
    assert report.files[0].missing_lines == [3, 12]
