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
from _helpers import sample

from pytest_agentgate.reports.coverage import (
    COVERAGE_FORMATS,
    detect_coverage_format,
    merge_coverage,
    parse_lcov,
    read_coverage,
    read_coverage_data_files,
    read_coverage_files,
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


def test_a_reporter_started_early_reads_the_same_report(project: Path) -> None:
    # The coverage gate starts coverage.py's reporter while the tests run (warm): the report it
    # gives once the data exists is the one a reporter started afterwards gives.
    from pytest_agentgate.reports.coverage import coveragepy

    cold = read_coverage(project / ".coverage", root=project)
    coveragepy.warm(project)
    assert str(project) in coveragepy._warm
    warm = read_coverage(project / ".coverage", root=project)
    assert str(project) not in coveragepy._warm  # used once, then gone
    assert warm == cold


def test_a_reporter_started_early_for_another_project_is_not_used(
    project: Path, tmp_path: Path
) -> None:
    from pytest_agentgate.reports.coverage import coveragepy

    coveragepy.warm(tmp_path)
    waiting = coveragepy._warm[str(tmp_path)]
    report = read_coverage(project / ".coverage", root=project)
    assert {f.path for f in report.files} == {"prog.py", "helper.py"}
    coveragepy._cool()  # what happens at exit: an unused reporter ends
    assert waiting.returncode == 0 and str(tmp_path) not in coveragepy._warm


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
    assert COVERAGE_FORMATS == (
        "coverage-json",
        "coverage-data",
        "istanbul-summary",
        "cobertura",
        "lcov",
    )


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
        (b'<?xml version="1.0"?><report name="jacoco"/>', "JaCoCo"),
        (b'<coverage generated="1" clover="4.4.1"><project/></coverage>', "Clover"),
        (b"<html><body/></html>", "root element <html>"),
        (b"hello", "not JSON, XML, lcov or a SQLite data file"),
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
    with pytest.raises(ReportError, match="unknown coverage format 'gcov'") as caught:
        read_coverage(json_file, format="gcov")
    assert "istanbul-summary" in caught.value.hint and "lcov" in caught.value.hint
    with pytest.raises(ReportError, match="is not an lcov tracefile"):
        read_coverage(json_file, format="lcov")
    with pytest.raises(ReportError, match="not well-formed XML"):
        read_coverage(json_file, format="cobertura")
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


def test_the_projects_coverage_plugin_is_never_run_to_read_a_report(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `[run] plugins` module is the project's code: with the project on PYTHONPATH it would
    run in the reporter and could write the numbers. It is not loaded, and the report says so."""
    root = make_project(tmp_path / "with-plugin")
    marker = tmp_path / "plugin-ran"
    (root / "forge.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n\ndef coverage_init(reg, options):\n    pass\n"
    )
    (root / ".coveragerc").write_text("[run]\nplugins = forge\n", "utf-8")
    monkeypatch.setenv("PYTHONPATH", str(root))
    report = read_coverage(root / ".coverage", root=root)
    assert not marker.exists()
    assert report.lines == Ratio(23, 24)
    assert any("plugins (forge) were not loaded" in note for note in report.notes)


def test_broken_configuration_in_root(project: Path, tmp_path: Path) -> None:
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


# --- Cobertura ----------------------------------------------------------------------------------

PY_PROJECT = DATA / "python" / "project"


def test_real_coverage_py_xml_counts_lines_not_rates() -> None:
    path = sample("python/coverage-partial.xml")
    assert detect_coverage_format(path) == "cobertura"
    report = read_coverage(path, root=PY_PROJECT)
    # The same run as coverage-partial.json: the numbers agree with coverage.py's JSON.
    assert report.format == "cobertura"
    assert report.lines == report.statements == Ratio(28, 39)
    assert report.branches == Ratio(7, 14)
    assert report.functions is None  # coverage.py writes <methods/>: no function data
    by_path = {f.path: f for f in report.files}
    assert by_path[os.path.join("shop", "pricing.py")].missing_lines == [10, 11, 12, 13, 14, 15]
    assert by_path[os.path.join("shop", "__init__.py")].lines == Ratio(0, 0)
    for alias in ("cobertura", "coverage-xml"):
        assert read_coverage(path, format=alias, root=PY_PROJECT).lines == Ratio(28, 39)


def test_real_istanbul_cobertura_with_doctype_and_methods() -> None:
    path = DATA / "js" / "c8-cobertura.xml"
    assert detect_coverage_format(path) == "cobertura"
    report = read_coverage(path)
    # Same run as coverage-summary.json: lines 40/44, branches 11/14, functions 5/5.
    assert (report.lines, report.branches, report.functions) == (
        Ratio(40, 44),
        Ratio(11, 14),
        Ratio(5, 5),
    )
    # The <source> (/tmp/jscopy) was a temporary copy: where it is gone, filenames are kept.
    assert sorted(f.path for f in report.files) == [
        "src/cart.js",
        "src/constants.js",
        "src/format.js",
    ]


COBERTURA = """<?xml version="1.0" ?>
<coverage line-rate="1" branch-rate="1" lines-valid="999" lines-covered="999">
  <sources><source>{source}</source></sources>
  <packages><package name="p"><classes>
    <class name="A" filename="src/ünï.kt" line-rate="1">
      <methods>
        <method name="f" signature="()V"><lines><line number="2" hits="3"/></lines></method>
        <method name="g" signature="()V"><lines><line number="5" hits="0"/></lines></method>
        <method name="abstract" signature="()V"/>
      </methods>
      <lines>
        <line number="2" hits="3" branch="true" condition-coverage="50% (1/2)"/>
        <line number="5" hits="0"/>
      </lines>
    </class>
    <class name="A$Inner" filename="src/ünï.kt">
      <lines>
        <line number="2" hits="0" branch="true" condition-coverage="100% (2/2)"/>
        <line number="9" hits="1.0"/>
      </lines>
    </class>
  </classes></package></packages>
</coverage>
"""


def test_hand_made_cobertura_dedupes_lines_per_file_and_never_reads_rates(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ünï.kt").write_text("", encoding="utf-8")
    path = tmp_path / "cobertura ü.xml"
    path.write_text(COBERTURA.format(source=tmp_path), encoding="utf-8")
    report = read_coverage(path, root=tmp_path)
    (file,) = report.files
    assert file.path == os.path.join("src", "ünï.kt")
    assert report.lines == Ratio(2, 3)  # lines 2 and 9 ran, 5 did not; 2 counted once
    assert file.missing_lines == [5]
    assert report.branches == Ratio(2, 2)  # the fuller of line 2's two records
    assert report.functions == Ratio(1, 2)  # f ran, g did not; a method without lines is no data


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "is empty"),
        (b'<?xml version="1.0"?>\n<coverage>\n<packages>', "truncated XML"),
        (b"<coverage><packages></packages></coverage>", "measured no files"),
        (b"<coverage/>", "measured no files"),
        (b"<testsuites/>", "root element is <testsuites>"),
        (b"<coverage><a></b></coverage>", "not well-formed XML"),
        (
            b'<!DOCTYPE coverage [<!ENTITY x "y">]><coverage/>',
            "DTD entity declarations are not allowed",
        ),
        (
            b'<coverage><class filename="a.py"><lines><line number="x" hits="1"/></lines>'
            b"</class></coverage>",
            "number='x' is not a credible count",
        ),
        (b'<coverage><class name="c"/></coverage>', "<class> without a filename"),
    ],
)
def test_malformed_cobertura(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "coverage.xml"
    path.write_bytes(content)
    with pytest.raises(ReportError) as caught:
        read_coverage(path, format="cobertura")
    assert str(caught.value).startswith(f"{path}:")
    assert problem in str(caught.value)


def test_cobertura_without_branch_data_has_no_branches(tmp_path: Path) -> None:
    path = tmp_path / "c.xml"
    path.write_text(
        '<coverage><class filename="a.py"><lines><line number="1" hits="0"/></lines></class>'
        "</coverage>",
        encoding="utf-8",
    )
    report = read_coverage(path)
    assert (report.lines, report.branches, report.functions) == (Ratio(0, 1), None, None)


# --- lcov ---------------------------------------------------------------------------------------


def test_real_coverage_py_lcov() -> None:
    path = DATA / "python" / "coverage-partial.lcov"
    assert detect_coverage_format(path) == "lcov"
    report = read_coverage(path)
    assert report.format == "lcov"
    assert report.lines == report.statements == Ratio(28, 39)
    assert report.branches == Ratio(7, 14)
    assert report.functions == Ratio(6, 9)  # same as coverage-partial.json
    by_path = {f.path: f for f in report.files}
    assert by_path["shop/textutil.py"].missing_lines == [6, 10, 11, 12]


def test_real_c8_lcov() -> None:
    report = read_coverage(DATA / "js" / "c8-lcov.info", format="lcov")
    assert (report.lines, report.branches, report.functions) == (
        Ratio(40, 44),
        Ratio(11, 14),
        Ratio(5, 5),
    )
    assert {f.path: f.missing_lines for f in report.files}["src/format.js"] == [5, 6, 8, 9]


def test_hand_made_lcov_edge_cases() -> None:
    text = (
        "TN:\nSF:/elsewhere/ü.c\nFN:1,3,main\nFNA:0,0,helper\nFNDA:2,main\nDA:1,2\nDA:2,0\n"
        "BRDA:2,0,0,-\nBRDA:2,0,1,4\nLF:99\nLH:99\nend_of_record\n"
        # the same file again (a second test name): unioned, counted once
        "TN:t2\nSF:/elsewhere/ü.c\nDA:2,1\nFNDA:1,helper\nend_of_record\n"
        # a record with summary lines only
        "SF:summary_only.c\nLF:10\nLH:4\nFNF:2\nFNH:1\nBRF:0\nBRH:0\nend_of_record\n"
    )
    report = parse_lcov(text, "t.info")
    by_path = {f.path: f for f in report.files}
    assert by_path["/elsewhere/ü.c"].lines == Ratio(2, 2)  # DA wins over the LF/LH claim
    assert by_path["summary_only.c"].lines == Ratio(4, 10)
    assert by_path["summary_only.c"].detail is None  # cannot be merged line by line
    assert report.lines == Ratio(6, 12)
    assert report.branches == Ratio(1, 2)
    assert report.functions == Ratio(3, 4)


def test_lcov_without_function_or_branch_data_and_zero_totals() -> None:
    report = parse_lcov("SF:a.py\nDA:1,0\nend_of_record\nSF:empty.py\nend_of_record\n", "t")
    assert (report.lines, report.branches, report.functions) == (Ratio(0, 1), None, None)
    empty_ok = parse_lcov("SF:e.js\nFNF:0\nFNH:0\nBRF:0\nBRH:0\nend_of_record\n", "t")
    assert (empty_ok.lines, empty_ok.branches, empty_ok.functions) == (
        Ratio(0, 0),
        Ratio(0, 0),
        Ratio(0, 0),
    )
    assert empty_ok.lines.percent == 100.0


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "is empty"),
        ("SF:a.py\nDA:1,1\n", "truncated: record 'a.py' has no end_of_record"),
        ("SF:a.py\nDA:one,1\nend_of_record\n", "line 2: 'one' is not a credible count"),
        ("SF:a.py\nDA:1\nend_of_record\n", "DA needs line,hits"),
        ("SF:a.py\nBRDA:1,0\nend_of_record\n", "BRDA needs"),
        ("TN:\nDA:1,1\n", "DA outside an SF record"),
        ("SF:a\nSF:b\nend_of_record\n", "record 'a' has no end_of_record"),
        ("SF:a\nLF:1\nLH:2\nend_of_record\n", "covered 2 exceeds total 1"),
        ("TN:\n", "has no SF record"),
        ("SF:a\ngarbage\nend_of_record\n", "not an lcov line"),
    ],
)
def test_malformed_lcov(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "lcov.info"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReportError) as caught:
        read_coverage(path, format="lcov")
    assert str(caught.value).startswith(f"{path}:")
    assert problem in str(caught.value)
    assert caught.value.hint


# --- shards -------------------------------------------------------------------------------------


def test_lcov_shards_merge_line_by_line(tmp_path: Path) -> None:
    one = tmp_path / "shard1.info"
    two = tmp_path / "shard2.info"
    one.write_text(
        "SF:a.js\nFNDA:1,f\nFNDA:0,g\nDA:1,1\nDA:2,0\nBRDA:1,0,0,1\nBRDA:1,0,1,0\nend_of_record\n",
        encoding="utf-8",
    )
    two.write_text(
        "SF:a.js\nFNDA:0,f\nFNDA:3,g\nDA:1,0\nDA:2,5\nBRDA:1,0,0,0\nBRDA:1,0,1,-\nend_of_record\n"
        "SF:b.js\nFNF:0\nFNH:0\nDA:1,0\nend_of_record\n",
        encoding="utf-8",
    )
    report = read_coverage_files([one, two])
    assert report.lines == Ratio(2, 3)
    assert report.branches == Ratio(1, 2)
    assert report.functions == Ratio(2, 2)
    assert {f.path: f.missing_lines for f in report.files} == {"a.js": [], "b.js": [1]}


def test_coverage_json_shards_merge_and_single_report_is_itself() -> None:
    partial = read_coverage(DATA / "python" / "coverage-partial.json")
    full = read_coverage(DATA / "python" / "coverage-branches.json")
    merged = merge_coverage([partial, full])
    assert (merged.lines, merged.branches, merged.functions) == (
        Ratio(39, 39),
        Ratio(11, 14),
        Ratio(9, 9),
    )
    assert merge_coverage([partial]) is partial
    with pytest.raises(ReportError, match="no coverage reports"):
        merge_coverage([])


def test_cobertura_shards_merge_lines_but_not_ambiguous_branches(tmp_path: Path) -> None:
    def shard(name: str, hits: int, condition: str) -> Path:
        path = tmp_path / name
        path.write_text(
            f'<coverage><class filename="a.py"><lines><line number="1" hits="{hits}" '
            f'branch="true" condition-coverage="{condition}"/><line number="2" hits="{1 - hits}"/>'
            "</lines></class></coverage>",
            encoding="utf-8",
        )
        return path

    exact = read_coverage_files([shard("1.xml", 1, "50% (1/2)"), shard("2.xml", 0, "0% (0/2)")])
    assert (exact.lines, exact.branches) == (Ratio(2, 2), Ratio(1, 2))
    unsure = read_coverage_files([shard("3.xml", 1, "50% (1/2)"), shard("4.xml", 0, "50% (1/2)")])
    assert (unsure.lines, unsure.branches) == (Ratio(2, 2), None)
    assert any("cannot be merged" in note for note in unsure.notes)


def test_istanbul_summary_shards_cannot_be_merged() -> None:
    summary = DATA / "js" / "coverage-summary.json"
    with pytest.raises(ReportError, match="istanbul-summary cannot be merged") as caught:
        read_coverage_files([summary, DATA / "js" / "coverage-summary-jest.json"])
    assert "per-line" in str(caught.value)


def test_parallel_data_files_are_combined_without_touching_them(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "prog.py").write_text(PROGRAM, encoding="utf-8")
    (root / "helper.py").write_text(HELPER, encoding="utf-8")
    (root / "other.py").write_text("from helper import never_called\nnever_called()\n")
    coverage_cli(root, "run", "--branch", "-p", "prog.py")
    coverage_cli(root, "run", "--branch", "-p", "other.py")
    shards = sorted(root.glob(".coverage.*"))
    assert len(shards) == 2
    before = sorted((p.name, digest(p)) for p in root.iterdir() if p.is_file())
    for report in (
        read_coverage_data_files(shards, root=root),
        read_coverage_files(shards, root=root),
        read_coverage(root, root=root),  # a directory: its data files, combined
    ):
        by_path = {f.path: f for f in report.files}
        assert by_path["helper.py"].lines == Ratio(4, 4)  # never_called ran in the second shard
        assert report.functions == Ratio(3, 3)
        assert report.format == "coverage-data"
    # (the files: `__pycache__` is there when Python writes bytecode)
    assert sorted((p.name, digest(p)) for p in root.iterdir() if p.is_file()) == before


def test_data_shards_measured_differently_cannot_combine(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "prog.py").write_text(PROGRAM, encoding="utf-8")
    (root / "helper.py").write_text(HELPER, encoding="utf-8")
    coverage_cli(root, "run", "--branch", "-p", "prog.py")
    coverage_cli(root, "run", "-p", "prog.py")
    with pytest.raises(ReportError, match="could not combine") as caught:
        read_coverage_files(sorted(root.glob(".coverage.*")), root=root)
    assert "--branch" in caught.value.hint
    empty_dir = tmp_path / "nothing"
    empty_dir.mkdir()
    with pytest.raises(ReportError, match=r"holds no coverage\.py data file"):
        read_coverage(empty_dir)


def test_the_package_loads_its_readers_on_first_use_and_names_what_it_lacks() -> None:
    import pytest_agentgate.reports.coverage as package

    assert package.read_lcov.__module__ == "pytest_agentgate.reports.coverage.lcov"
    with pytest.raises(AttributeError, match="has no attribute 'read_clover'"):
        package.read_clover  # noqa: B018


# -- Cobertura: coverage.py's own shape is read by one expression, anything else by expat -------

COVERAGE_PY_SHAPE = (DATA / "python" / "coverage-partial.xml").read_text(encoding="utf-8")
FIRST_CLASS = COVERAGE_PY_SHAPE.index("<class ")


def _variants() -> dict[str, str]:
    """coverage.py's report, and spellings of it that only the expat reader reads right."""
    text = COVERAGE_PY_SHAPE
    head, tail = text[:FIRST_CLASS], text[FIRST_CLASS:]
    fake = '<class name="x" filename="fake.py"><lines><line number="1" hits="1"/></lines></class>'
    return {
        "coverage.py": text,
        "a class hidden in a comment": head + f"<!-- {fake} -->" + tail,
        "a line hidden in CDATA": head
        + '<extra><![CDATA[<line number="1" hits="1"/>]]></extra>'
        + tail,
        "attributes in another order": text.replace(
            'branch="true" condition-coverage=', 'condition-coverage="100% (2/2)" branch='
        ).replace('condition-coverage="100% (2/2)" branch="true" condition-coverage=', "x="),
        "hits as 1.0": text.replace('hits="1"', 'hits="1.0"', 3),
        "a self-closing class": head + '<class name="e" filename="empty.py"/>' + tail,
        "an entity in a filename": text.replace('filename="shop/', 'filename="&#115;hop/', 1),
        "single quotes": text.replace('hits="0"', "hits='0'", 2),
        "a tab in a filename": text.replace('filename="shop/', 'filename="sh\top/', 1),
        "a line break in a filename": text.replace('filename="shop/', 'filename="sh\nop/', 1),
        "a line outside any class": head + '<line number="3" hits="1"/>' + tail,
        "a method with lines": text.replace(
            "<methods/>",
            '<methods><method name="f" signature=""><lines><line number="2" hits="1"/>'
            "</lines></method></methods>",
            1,
        ),
        "a source spelled empty": text.replace("<sources>", "<sources><source/>", 1),
        "another element in a class": text.replace("<methods/>", "<methods/><extra/>", 1),
        "a line after its lines": text.replace(
            "</lines>", '</lines><line number="99" hits="1"/>', 1
        ),
        "text between lines": text.replace("</lines>", "text &gt; more</lines>", 1),
        # Found by an attack review: XML reads a carriage return as a line feed.
        "a carriage return in a source": text.replace("</source>", "\r/x</source>", 1),
        "class end tags spelled with a space": text.replace("</class>", "</class >"),
    }


def _malformed() -> dict[str, bytes]:
    """coverage.py's report, broken as no XML parser may read it."""
    text = COVERAGE_PY_SHAPE
    return {
        name: value.encode("utf-8") if isinstance(value, str) else value
        for name, value in {
            "truncated": text[: text.rindex("</packages>")],
            "a package left open": text.replace("</package>", "", 1),
            "a misspelt end tag": text.replace("</classes>", "</clases>", 1),
            "a stray <": text.replace("</lines>", "<</lines>", 1),
            "a stray < in the skeleton": text.replace("<packages>", "<packages><", 1),
            "bytes that are not UTF-8": text.encode().replace(b'name="shop"', b'name="sh\xffp"'),
            "a control character": text.replace('name="inventory.py"', 'name="inv\x01.py"', 1),
            "an attribute twice": text.replace(
                'complexity="0" line-rate', 'complexity="0" complexity="1" line-rate', 1
            ),
            "an attribute name that is no name": text.replace(
                'complexity="0" line-rate', '1complexity="0" line-rate', 1
            ),
            "a bare &": text.replace('name="shop"', 'name="sh&p"', 1),
            "]]> in text": text.replace("</lines>", "]]></lines>", 1),
            "lines left open": text.replace("</lines>", "", 1),
            # Found by an attack review: no XML characters, in a body expat never saw.
            "U+FFFF in a class body": text.replace("</lines>", "\uffff</lines>", 1),
            "U+FFFE in an attribute": text.replace(
                'missing-branches="', 'missing-branches="\ufffe', 1
            ),
        }.items()
    }


@pytest.mark.parametrize("name", list(_malformed()))
def test_malformed_cobertura_is_refused_by_the_fast_reader_too(name: str, tmp_path: Path) -> None:
    from pytest_agentgate.reports.coverage import cobertura

    data = _malformed()[name]
    assert cobertura._read_fast(data, {}, []) is None
    path = tmp_path / "coverage.xml"
    path.write_bytes(data)
    with pytest.raises(ReportError, match=r"XML|decoded"):
        read_coverage(path, root=tmp_path)


@pytest.mark.parametrize("name", list(_variants()))
def test_cobertura_is_read_alike_by_both_readers(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate.reports.coverage import cobertura

    path = tmp_path / "coverage.xml"
    path.write_text(_variants()[name], encoding="utf-8")
    fast = read_coverage(path, root=tmp_path)
    monkeypatch.setattr(cobertura, "_FAST_MAX_BYTES", -1)  # every report goes through expat
    slow = read_coverage(path, root=tmp_path)
    assert fast == slow
    if name == "a class hidden in a comment":
        assert "fake.py" not in {f.path for f in fast.files}


def test_a_class_body_never_runs_into_the_next_class() -> None:
    """With end tags spelled otherwise, each class fails at the next one, not at the end of the
    report: reading stays linear (an attack review measured 166 s for 8,000 classes before)."""
    from pytest_agentgate.reports.coverage import cobertura

    two = (
        b'<class name="a" filename="a.py"><methods/><lines></lines></class >'
        b'<class name="b" filename="b.py"><methods/><lines></lines></class>'
    )
    assert [m.group(1) for m in cobertura._FAST_CLASS.finditer(two)] == [b"b.py"]


def test_a_source_with_a_carriage_return_goes_to_expat(tmp_path: Path) -> None:
    """XML reads it as a line feed, so only expat knows the folder the files are in."""
    from pytest_agentgate.reports.coverage import cobertura

    folder = tmp_path / "a\nb"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "mod.py").write_text("x = 1\n")
    text = COVERAGE_PY_SHAPE.replace(
        "<source>/home/user/project/tests/data/python/project</source>",
        f"<source>{tmp_path}/a\rb</source>",
    ).replace('filename="shop/inventory.py"', 'filename="pkg/mod.py"')
    assert cobertura._read_fast(text.encode(), {}, []) is None
    path = tmp_path / "coverage.xml"
    path.write_text(text, encoding="utf-8", newline="")
    assert "a\nb/pkg/mod.py" in {f.path for f in read_coverage(path, root=tmp_path).files}


def test_coverage_pys_own_reports_take_the_fast_reader() -> None:
    """The expression reads what coverage.py writes (the benchmark's speed rests on it);
    another spelling goes to expat."""
    from pytest_agentgate.reports.coverage import cobertura

    data = COVERAGE_PY_SHAPE.encode()
    assert cobertura._read_fast(data, {}, []) is True  # with branch data
    assert cobertura._read_fast(data.replace(b'hits="1"', b'hits="1.0"'), {}, []) is None
