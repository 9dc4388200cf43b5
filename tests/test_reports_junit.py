"""JUnit XML reader: counting, folding reruns, messages, and refusing bad files."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from _helpers import BILLION_LAUGHS

from pytest_agentgate.reports.junit import MAX_MESSAGE, read_junit
from pytest_agentgate.reports.model import ReportError

if TYPE_CHECKING:  # imported for annotations only: pytest would try to collect a Test* class
    from pytest_agentgate.reports.model import TestRun

DATA = Path(__file__).parent / "data"
JUNIT = DATA / "junit"
JS = DATA / "js"


def write(tmp_path: Path, text: str, name: str = "junit.xml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def counts(run: TestRun) -> dict[str, int]:
    return {
        "total": run.total,
        "passed": run.passed,
        "failed": run.failed,
        "errors": run.errors,
        "skipped": run.skipped,
        "flaky": run.flaky,
    }


def expect(
    total: int, passed: int = 0, failed: int = 0, errors: int = 0, skipped: int = 0, flaky: int = 0
) -> dict[str, int]:
    return {
        "total": total,
        "passed": passed,
        "failed": failed,
        "errors": errors,
        "skipped": skipped,
        "flaky": flaky,
    }


def failure_names(run: TestRun) -> list[str]:
    return [f.name for f in run.failures]


def read_error(path: Path) -> str:
    with pytest.raises(ReportError) as info:
        read_junit([path])
    assert info.value.path == str(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    return message


# --- counting ------------------------------------------------------------------------------------


def test_counts_testcase_elements_never_the_count_attributes(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        <testsuites tests="100" failures="50">
          <testsuite name="s" tests="99" failures="0" errors="7" skipped="3">
            <testcase classname="m" name="a"/>
            <testcase classname="m" name="b"><failure message="boom"/></testcase>
          </testsuite>
        </testsuites>
        """,
    )
    run = read_junit([path])
    assert counts(run) == expect(total=2, passed=1, failed=1)
    assert run.files == [str(path)]
    assert run.executed == 2


def test_outcome_precedence_error_over_failure_over_skipped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        <testsuite>
          <testcase classname="m" name="all"><skipped/><failure message="f"/><error message="e"/>
          </testcase>
          <testcase classname="m" name="fail_skip"><skipped/><failure message="f"/></testcase>
          <testcase classname="m" name="skip"><skipped message="later"/></testcase>
          <testcase classname="m" name="err_first"><error message="e"/><failure message="f"/>
          </testcase>
        </testsuite>
        """,
    )
    run = read_junit([path])
    assert counts(run) == expect(total=4, failed=1, errors=2, skipped=1)
    outcomes = {f.name: (f.outcome, f.message) for f in run.failures}
    assert outcomes == {
        "all": ("error", "e"),
        "fail_skip": ("failed", "f"),
        "err_first": ("error", "e"),
    }


def test_nested_testsuites_and_suite_file_inheritance(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        <testsuites>
          <testsuite name="outer" file="spec/outer.js">
            <testcase classname="outer" name="ok"/>
            <testsuite name="inner">
              <testsuite name="innermost" file="spec/inner.js">
                <testcase classname="inner" name="deep"><failure message="deep failure"/></testcase>
              </testsuite>
              <testcase classname="inner" name="mid"><failure message="mid failure"/></testcase>
            </testsuite>
            <testcase classname="outer" name="own" file="spec/own.js" line="7">
              <error message="own error"/>
            </testcase>
          </testsuite>
          <testsuite name="other">
            <testcase classname="other" name="x"><skipped/></testcase>
          </testsuite>
        </testsuites>
        """,
    )
    run = read_junit([path])
    assert counts(run) == expect(total=5, passed=1, failed=2, errors=1, skipped=1)
    where = {f.name: (f.file, f.line) for f in run.failures}
    assert where == {
        "deep": ("spec/inner.js", None),
        "mid": ("spec/outer.js", None),
        "own": ("spec/own.js", 7),
    }


def test_empty_report_is_zero_tests_not_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, '<testsuites name="none"/>')
    assert counts(read_junit([path]))["total"] == 0


def test_no_paths_gives_an_empty_run() -> None:
    run = read_junit([])
    assert run.total == 0 and run.files == []


def test_lone_path_is_not_iterated_as_characters(tmp_path: Path) -> None:
    path = write(tmp_path, '<testsuite><testcase classname="m" name="a"/></testsuite>')
    assert read_junit(str(path)).total == 1  # type: ignore[arg-type]
    assert read_junit(path).total == 1  # type: ignore[arg-type]


# --- reruns, duplicates and flakiness ------------------------------------------------------------


def test_duplicate_counts_once_with_last_outcome_and_earlier_failure_is_flaky(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        """
        <testsuite>
          <testcase classname="m" name="flaky"><failure message="first try failed"/></testcase>
          <testcase classname="m" name="fixed_later"><error message="setup broke"/></testcase>
          <testcase classname="m" name="regressed"/>
          <testcase classname="m" name="flaky"/>
          <testcase classname="m" name="regressed"><failure message="now broken"/></testcase>
          <testcase classname="m" name="fixed_later"/>
          <testcase classname="other" name="flaky"><failure message="different class"/></testcase>
        </testsuite>
        """,
    )
    run = read_junit([path])
    assert counts(run) == expect(total=4, passed=2, failed=2, flaky=2)
    assert [(f.classname, f.name) for f in run.failures] == [("m", "regressed"), ("other", "flaky")]
    assert [(f.name, f.outcome, f.flaky, f.message) for f in run.flaky_tests] == [
        ("flaky", "passed", True, "first try failed"),
        ("fixed_later", "passed", True, "setup broke"),
    ]
    assert run.failures[0].message == "now broken"


def test_duplicates_fold_across_files_in_first_seen_order(tmp_path: Path) -> None:
    first = write(
        tmp_path,
        """
        <testsuite>
          <testcase classname="m" name="a"><failure message="a1"/></testcase>
          <testcase classname="m" name="b"><failure message="b1"/></testcase>
          <testcase classname="m" name="c"/>
        </testsuite>
        """,
        "run1.xml",
    )
    second = write(
        tmp_path,
        """
        <testsuite>
          <testcase classname="m" name="c"><failure message="c2"/></testcase>
          <testcase classname="m" name="b"><failure message="b2"/></testcase>
          <testcase classname="m" name="a"/>
        </testsuite>
        """,
        "run2.xml",
    )
    run = read_junit([first, second])
    assert run.files == [str(first), str(second)]
    assert counts(run) == expect(total=3, passed=1, failed=2, flaky=1)
    assert [(f.name, f.message) for f in run.failures] == [("b", "b2"), ("c", "c2")]
    assert [f.name for f in run.flaky_tests] == ["a"]


def test_same_file_listed_twice_is_read_once(tmp_path: Path) -> None:
    path = write(tmp_path, '<testsuite><testcase classname="m" name="a"/></testsuite>')
    run = read_junit([path, str(path), tmp_path / "." / "junit.xml"])
    assert run.files == [str(path)]
    assert run.total == 1


def test_flaky_markers_without_failure_pass_flakily(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        <testsuite>
          <testcase classname="C" name="flaky">
            <flakyFailure message="attempt 1 failed" type="AssertionError">
              <stackTrace>trace</stackTrace>
            </flakyFailure>
            <flakyError><stackTrace>java.io.IOException: socket closed
            at C.flaky(C.java:3)</stackTrace></flakyError>
          </testcase>
          <testcase classname="C" name="no_message"><flakyError>
              <stackTrace>
                java.io.IOException: socket closed
                at C.no_message(C.java:9)</stackTrace></flakyError></testcase>
          <testcase classname="C" name="always">
            <failure message="final failure"/>
            <rerunFailure message="rerun 1"/><rerunFailure message="rerun 2"/>
          </testcase>
        </testsuite>
        """,
    )
    run = read_junit([path])
    assert counts(run) == expect(total=3, passed=2, failed=1, flaky=2)
    assert [(f.name, f.message) for f in run.flaky_tests] == [
        ("flaky", "attempt 1 failed"),
        ("no_message", "java.io.IOException: socket closed"),
    ]
    assert [(f.name, f.outcome, f.flaky, f.message) for f in run.failures] == [
        ("always", "failed", False, "final failure")
    ]


def test_skipped_after_failure_is_skipped_not_flaky(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        <testsuite>
          <testcase classname="m" name="a"><failure message="x"/></testcase>
          <testcase classname="m" name="a"><skipped/></testcase>
        </testsuite>
        """,
    )
    assert counts(read_junit([path])) == expect(total=1, skipped=1)


def test_testcases_without_a_name_are_not_folded_together(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        <testsuite>
          <testcase classname="m"/><testcase classname="m"><failure message="x"/></testcase>
          <testcase name="no_class"/>
        </testsuite>
        """,
    )
    run = read_junit([path])
    assert (run.total, run.passed, run.failed) == (3, 2, 1)
    assert run.failures[0].classname == "m"


# --- messages ------------------------------------------------------------------------------------


def test_message_is_first_non_empty_line_of_attribute_else_text(tmp_path: Path) -> None:
    long_line = "x" * 5000
    path = write(
        tmp_path,
        f"""
        <testsuite>
          <testcase classname="m" name="attr"><failure message="&#10;  first line  &#10;second"
            >ignored text</failure></testcase>
          <testcase classname="m" name="text"><failure>

              AssertionError: expected 1
            at line 2</failure></testcase>
          <testcase classname="m" name="cdata"><error><![CDATA[
        Traceback: <boom> & more
        next]]></error></testcase>
          <testcase classname="m" name="long"><failure message="{long_line}"/></testcase>
          <testcase classname="m" name="long_text"><failure>{long_line}</failure></testcase>
          <testcase classname="m" name="empty"><failure/></testcase>
          <testcase classname="m" name="go"><failure message="Failed">=== RUN   TestGo
            === PAUSE TestGo
            calc_test.go:25: Add(2, 2) = 4, want 5
        --- FAIL: TestGo (0.00s)</failure></testcase>
          <testcase classname="m" name="placeholder_only"><failure message="Failed"/></testcase>
          <testcase classname="m" name="from_output"><failure type="assert"/>
            <system-out>

        thread 'main' panicked at src/lib.rs:16:9:
        more</system-out></testcase>
        </testsuite>
        """,
    )
    messages = {f.name: f.message for f in read_junit([path]).failures}
    assert messages["attr"] == "first line"
    assert messages["text"] == "AssertionError: expected 1"
    assert messages["cdata"] == "Traceback: <boom> & more"
    assert messages["long"] == "x" * (MAX_MESSAGE - 3) + "..."
    assert messages["long_text"] == "x" * (MAX_MESSAGE - 3) + "..."
    assert messages["empty"] is None
    assert messages["go"] == "calc_test.go:25: Add(2, 2) = 4, want 5"
    assert messages["placeholder_only"] == "Failed"
    assert messages["from_output"] == "thread 'main' panicked at src/lib.rs:16:9:"


def test_huge_system_out_is_streamed_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "big.xml"
    chunk = "log line that nobody will read &amp; more\n" * 1000  # ~42 KB
    with path.open("w", encoding="utf-8") as out:
        out.write('<testsuite><testcase classname="m" name="noisy"><failure message="boom"/>')
        out.write("<system-out>")
        for _ in range(300):  # one text node of ~12 MB
            out.write(chunk)
        out.write("</system-out><system-err><![CDATA[")
        out.write("e" * 1_000_000)
        out.write("]]></system-err></testcase>")
        out.write('<testcase classname="m" name="quiet"/></testsuite>')
    assert path.stat().st_size > 10_000_000
    tracemalloc.start()
    try:
        run = read_junit([path])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6_000_000  # a read chunk or two plus expat's buffers, not 13 MB of text
    assert (run.total, run.passed, run.failed) == (2, 1, 1)
    assert run.failures[0].message == "boom"


def test_huge_failure_text_keeps_only_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "big.xml"
    with path.open("w", encoding="utf-8") as out:
        out.write('<testsuite><testcase classname="m" name="t"><failure>')
        out.write("\n" * 1000 + "AssertionError: the point\n")
        out.write("frame\n" * 2_000_000)
        out.write("</failure></testcase></testsuite>")
    assert read_junit([path]).failures[0].message == "AssertionError: the point"


# --- real pytest, end to end ---------------------------------------------------------------------

PYTEST_PROJECT = """
import pytest

@pytest.fixture
def broken_setup():
    raise RuntimeError("database unavailable")

@pytest.fixture
def broken_teardown():
    yield 1
    raise RuntimeError("teardown boom")

def test_pass():
    print("captured output")

def test_fail():
    assert 1 + 1 == 3, "arithmetic is broken"

def test_setup_error(broken_setup):
    pass

def test_fail_and_teardown_error(broken_teardown):
    assert False, "call failed"

def test_pass_then_teardown_error(broken_teardown):
    pass

@pytest.mark.skip(reason="not ready")
def test_skip():
    pass

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False

@pytest.mark.xfail(reason="fixed?")
def test_xpass():
    pass
"""


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
def test_real_pytest_report(tmp_path: Path, family: str) -> None:
    (tmp_path / "test_project.py").write_text(PYTEST_PROJECT, encoding="utf-8")
    report = tmp_path / "junit.xml"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:agentgate",
            f"--junitxml={report}",
            "-o",
            f"junit_family={family}",
            "-o",
            "junit_logging=all",
            "test_project.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=60,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    run = read_junit([report])
    # pytest writes 9 <testcase> elements (the call failure and its teardown error are two);
    # 8 tests: 2 pass (incl. non-strict xpass), 1 fail, 3 errors, 2 skipped (incl. xfail).
    assert counts(run) == expect(total=8, passed=2, failed=1, errors=3, skipped=2)
    found = {f.name: (f.outcome, f.message) for f in run.failures}
    assert found == {
        "test_fail": ("failed", "AssertionError: arithmetic is broken"),
        "test_setup_error": (
            "error",
            'failed on setup with "RuntimeError: database unavailable"',
        ),
        # The error is the outcome; the assertion that failed first stays in the message.
        "test_fail_and_teardown_error": (
            "error",
            'AssertionError: call failed (then: failed on teardown with "RuntimeError: '
            'teardown boom")',
        ),
        "test_pass_then_teardown_error": (
            "error",
            'failed on teardown with "RuntimeError: teardown boom"',
        ),
    }
    assert all(f.classname == "test_project" for f in run.failures)
    if family == "xunit1":
        assert [(f.file, f.line) for f in run.failures][:2] == [
            ("test_project.py", 15),
            ("test_project.py", 18),
        ]
    else:
        assert all(f.file is None for f in run.failures)


# --- sample reports written by real tools (tests/data) -------------------------------------------

SAMPLES: dict[str, tuple[dict[str, int], list[str], list[str]]] = {
    # file: (counts, failed/errored test names in order, flaky test names)
    "junit/pytest-xunit1.xml": (
        expect(total=9, passed=3, failed=2, errors=2, skipped=2),
        ["test_tax_zero", "test_setup_error", "test_teardown_error", "test_xpass_strict"],
        [],
    ),
    "junit/pytest-xunit2.xml": (
        expect(total=9, passed=3, failed=2, errors=2, skipped=2),
        ["test_tax_zero", "test_setup_error", "test_teardown_error", "test_xpass_strict"],
        [],
    ),
    "junit/pytest-teardown-dup.xml": (
        expect(total=2, passed=1, errors=1),
        ["test_call_fails_and_teardown_errors"],
        [],
    ),
    # pytest-rerunfailures writes the failed attempts as empty (passing-looking) <testcase>s:
    # test_flaky_once cannot be told apart from a plain pass.
    "junit/pytest-rerun.xml": (
        expect(total=4, passed=2, failed=1, skipped=1),
        ["test_always_fails"],
        [],
    ),
    "junit/surefire-flaky.xml": (
        expect(total=4, passed=2, failed=1, skipped=1, flaky=1),
        ["alwaysFails"],
        ["flakyPassesOnSecondAttempt"],
    ),
    "junit/go-junit-report.xml": (
        expect(total=8, passed=5, failed=2, skipped=1),
        ["TestAlwaysFails", "TestFlaky"],
        [],
    ),
    "junit/gotestsum.xml": (
        expect(total=8, passed=6, failed=1, skipped=1, flaky=1),
        ["TestAlwaysFails"],
        ["TestFlaky"],
    ),
    "junit/cargo-nextest.xml": (
        expect(total=3, passed=2, failed=1, flaky=1),
        ["tests::always_fails"],
        ["tests::flaky"],
    ),
    "junit/cargo-libtest-junit.xml": (
        expect(total=3, passed=1, failed=2),
        ["always_fails", "flaky"],
        [],
    ),
    "js/jest-junit.xml": (
        expect(total=6, passed=4, failed=1, skipped=1),
        ["cart total applies coupon"],
        [],
    ),
    "js/vitest-junit.xml": (
        expect(total=6, passed=3, failed=1, skipped=2),
        ["cart > total applies coupon"],
        [],
    ),
    "js/mocha-junit.xml": (
        expect(total=8, passed=5, failed=1, skipped=2),
        ["cart total applies coupon"],
        [],
    ),
    # mocha-junit-reporter without includePending: pending tests are simply absent.
    "js/mocha-junit-default.xml": (
        expect(total=6, passed=5, failed=1),
        ["cart total applies coupon"],
        [],
    ),
}


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_sample_reports(sample: str) -> None:
    path = DATA / sample
    if not path.exists():
        pytest.skip(f"sample {sample} not generated")
    expected_counts, expected_failures, expected_flaky = SAMPLES[sample]
    run = read_junit([path])
    assert counts(run) == expected_counts
    assert failure_names(run) == expected_failures
    assert [f.name for f in run.flaky_tests] == expected_flaky
    assert all(f.message for f in run.failures + run.flaky_tests)


def test_sample_messages_are_the_useful_first_line() -> None:
    expected = {
        "junit/pytest-xunit1.xml": ("test_tax_zero", "assert 0.0 == 1.5"),
        "junit/surefire-flaky.xml": (
            "alwaysFails",
            "2 + 2 should be 5 ==> expected: <5> but was: <4>",
        ),
        "junit/gotestsum.xml": ("TestAlwaysFails", "calc_test.go:25: Add(2, 2) = 4, want 5"),
        "junit/go-junit-report.xml": (
            "TestAlwaysFails",
            "calc_test.go:25: Add(2, 2) = 4, want 5",
        ),
        "junit/cargo-libtest-junit.xml": (
            "always_fails",
            "thread 'tests::always_fails' (7799) panicked at src/lib.rs:16:9:",
        ),
        "js/jest-junit.xml": (
            "cart total applies coupon",
            "Error: expect(received).toBe(expected) // Object.is equality",
        ),
        "js/vitest-junit.xml": (
            "cart > total applies coupon",
            "expected 99 to be 90 // Object.is equality",
        ),
    }
    for sample, (name, message) in expected.items():
        path = DATA / sample
        if path.exists():
            failures = {f.name: f.message for f in read_junit([path]).failures}
            assert failures[name] == message, sample


def test_samples_fold_together_across_files() -> None:
    paths = [JUNIT / "pytest-xunit1.xml", JUNIT / "pytest-xunit2.xml"]
    if not all(p.exists() for p in paths):
        pytest.skip("pytest samples not generated")
    run = read_junit(paths)
    # Same classname/name in both files: the second run's outcomes, 9 distinct tests.
    assert counts(run) == expect(total=9, passed=3, failed=2, errors=2, skipped=2)


def test_mocha_failure_location_comes_from_the_suite_file() -> None:
    path = JS / "mocha-junit.xml"
    if not path.exists():
        pytest.skip("mocha sample not generated")
    (failure,) = read_junit([path]).failures
    assert failure.file is not None and failure.file.endswith("test/mocha/cart.spec.js")


# --- files that cannot be read -------------------------------------------------------------------

XXE = """<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<testsuite><testcase classname="m" name="a"><failure message="&x;">&x;</failure></testcase>
</testsuite>
"""

DOCTYPE_ONLY = """<?xml version="1.0"?>
<!DOCTYPE testsuite SYSTEM "http://example.invalid/junit.dtd">
<testsuite><testcase classname="m" name="a"/></testsuite>
"""


@pytest.mark.parametrize("text", [BILLION_LAUGHS, XXE, DOCTYPE_ONLY], ids=["bomb", "xxe", "dtd"])
def test_dtd_and_entities_are_refused_fast(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    start = time.perf_counter()
    message = read_error(path)
    assert time.perf_counter() - start < 1.0
    assert "DTD/entity declarations are not allowed in a JUnit report" in message
    assert "root:" not in message  # nothing from /etc/passwd


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "is empty"),
        (b"   \n\n  ", "contains no XML element"),
        (
            b'<?xml version="1.0"?>\n<testsuite><testcase classname="m" name="a"/><testca',
            "is truncated",
        ),
        (b'<testsuites><testsuite><testcase classname="m" name="a"><failure>bo', "is truncated"),
        (b"<testsuite><testcase name='a'/>", "is truncated"),
        (b"PASSED 3 tests\n", "is not well-formed XML"),
        (bytes(range(256)) * 4, "is not well-formed XML"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is not well-formed XML"),
        (b"<testsuite><testcase name='a'></testsuite>", "is not well-formed XML"),
        (b"<testsuite><testcase name='&undefined;'/></testsuite>", "is not well-formed XML"),
        (b"<testsuite/><testsuite/>", "is not well-formed XML"),
        (b'<?xml version="1.0" encoding="no-such-codec"?><testsuite/>', "cannot be decoded"),
        (b'<?xml version="1.0" encoding="utf-16"?><testsuite/>', "is not well-formed XML"),
        (b'<?xml version="1.0" encoding="shift_jis"?><testsuite/>', "cannot be decoded"),
        (b"<html><body>502 Bad Gateway</body></html>", "the root element is <html>"),
        (b'{"tests": []}', "is not well-formed XML"),
    ],
    ids=[
        "empty",
        "blank",
        "truncated-tag",
        "truncated-text",
        "unclosed-root",
        "plain-text",
        "binary",
        "png",
        "mismatched",
        "undefined-entity",
        "two-roots",
        "bad-encoding",
        "utf16-lie",
        "multibyte-codec",
        "html",
        "json",
    ],
)
def test_unreadable_reports_name_the_file_and_what_to_do(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(content)
    message = read_error(path)
    assert expected in message
    assert "(" in message  # a hint follows the problem


def test_truncated_report_says_the_command_may_have_crashed(tmp_path: Path) -> None:
    full = b'<testsuite><testcase classname="m" name="a"/><testcase classname="m" name="b"/>'
    path = tmp_path / "junit.xml"
    path.write_bytes(full + b"</testsuite>")
    assert read_junit([path]).total == 2
    path.write_bytes(full)
    message = read_error(path)
    assert "truncated" in message and "crashed" in message


def test_missing_file(tmp_path: Path) -> None:
    message = read_error(tmp_path / "nowhere.xml")
    assert "not found" in message and "crashed before writing it" in message


def test_directory(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    assert "is a directory" in read_error(tmp_path / "reports")


@pytest.mark.skipif(
    sys.platform == "win32" or (hasattr(os, "geteuid") and os.geteuid() == 0),
    reason="root reads anything",
)
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path, "<testsuite/>")
    path.chmod(0)
    try:
        assert "cannot open" in read_error(path)
    finally:
        path.chmod(0o600)


def test_one_bad_file_among_good_ones_names_the_bad_one(tmp_path: Path) -> None:
    good = write(tmp_path, '<testsuite><testcase classname="m" name="a"/></testsuite>', "a.xml")
    bad = tmp_path / "b.xml"
    bad.write_bytes(b"<testsuite><testcase")
    with pytest.raises(ReportError) as info:
        read_junit([good, bad])
    assert info.value.path == str(bad)


def test_mangled_reports_only_ever_raise_report_error(tmp_path: Path) -> None:
    # Cut and corrupt a real-shaped report at many points: the reader either counts it or
    # raises ReportError, never anything else.
    sample = JUNIT / "surefire-flaky.xml"
    base = sample.read_bytes() if sample.exists() else PYTEST_PROJECT.encode()
    path = tmp_path / "junit.xml"
    step = max(1, len(base) // 150)
    for cut in range(0, len(base), step):
        for variant in (base[:cut], base[:cut] + b"\xff\xfe<" + base[cut:]):
            path.write_bytes(variant)
            try:
                read_junit([path])
            except ReportError as exc:
                assert exc.path == str(path)


# --- bounded memory at scale --------------------------------------------------------------------


def _many_cases(tmp_path: Path, name: str, cases: int, offset: int = 0) -> Path:
    rows = []
    for i in range(offset, offset + cases):
        if i % 10 == 3:
            rows.append(
                f'<testcase classname="m{i % 7}" name="t{i}"><failure message="f{i}"/></testcase>'
            )
        elif i % 10 == 5:
            rows.append(f'<testcase classname="m{i % 7}" name="t{i}"><skipped/></testcase>')
        else:
            rows.append(f'<testcase classname="m{i % 7}" name="t{i}"/>')
    return write(tmp_path, f"<testsuite>{''.join(rows)}</testsuite>", name)


def test_compact_fold_table_gives_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_agentgate.reports.junit as junit

    first = _many_cases(tmp_path, "a.xml", 3000)
    # The second file reruns half of the first (failures now pass: flaky) and adds new tests.
    rerun = "".join(f'<testcase classname="m{i % 7}" name="t{i}"/>' for i in range(1500, 4500))
    second = write(tmp_path, f"<testsuite>{rerun}</testsuite>", "b.xml")
    expected = read_junit([first, second])
    monkeypatch.setattr(junit, "_COMPACT_AFTER", 16)  # move to the arrays early and grow them
    got = read_junit([first, second])
    assert (got.total, got.passed, got.failed, got.skipped, got.flaky) == (
        expected.total,
        expected.passed,
        expected.failed,
        expected.skipped,
        expected.flaky,
    )
    assert got.failures == expected.failures and got.flaky_tests == expected.flaky_tests
    assert got.total == 4500 and got.flaky == 150 and got.failed == 150
    assert got.failures[0].message == "f3"


def test_fold_table_grows_and_finds_zero_hash_keys() -> None:
    from pytest_agentgate.reports.junit import _FoldTable
    from pytest_agentgate.reports.outcomes import EVER_FAILED, FAILED, PASSED, SKIPPED

    table = _FoldTable()
    table._compact({})
    for key in (0, 1, -1, 2**63 - 1, -(2**63)):
        table.add(key, FAILED | EVER_FAILED)  # failed once
        table.add(key, PASSED)  # then passed
    for key in range(2, 1000):
        table.add(key * 7919, SKIPPED)
    assert len(table) == 4 + 998  # keys 0 and 1 share a slot: 0 marks an empty slot
    assert table.get(-1) == EVER_FAILED and table.get(7919 * 5) == SKIPPED
    counts = table.counts()
    assert counts[EVER_FAILED] == 4 and counts[SKIPPED] == 998


def test_system_out_over_ten_megabytes(tmp_path: Path) -> None:
    blob = ("y" * 99 + "\n") * (11 * 2**20 // 100)
    path = write(
        tmp_path,
        '<testsuite><testcase classname="c" name="ok"><system-out>'
        + blob
        + '</system-out></testcase><testcase classname="c" name="bad"><failure type="x"/>'
        + "<system-out>panicked at a.rs:1\n"
        + blob
        + "</system-out></testcase></testsuite>",
    )
    run = read_junit([path])
    assert (run.passed, run.failed) == (1, 1)
    assert run.failures[0].message == "panicked at a.rs:1"
