"""Renderers of one Verdict: continuation text, terminal text, markdown; and the wire format."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pytest

from pytest_agentgate.render.continuation import (
    RULES,
    SHORT_RULES,
    find_claim,
    render_continuation,
)
from pytest_agentgate.render.markdown import render_markdown
from pytest_agentgate.render.terminal import render_text, use_colour
from pytest_agentgate.verdict import Attempt, Finding, GateResult, Verdict, overall_status

Check = Callable[[dict[str, Any]], dict[str, Any]]


def _gate(name: str, kind: str, status: str = "fail", **extra: Any) -> GateResult:
    return GateResult(name=name, kind=kind, status=status, summary=f"{name} summary", **extra)  # type: ignore[arg-type]


def _verdict(*gates: GateResult, **extra: Any) -> Verdict:
    return Verdict(status=overall_status(list(gates)), profile="strict", gates=list(gates), **extra)


def _lint_findings(n: int) -> list[Finding]:
    return [
        Finding(f"message number {i} " + "x" * 40, path=f"src/m{i}.py", line=i, code="F401")
        for i in range(n)
    ]


# -- continuation -------------------------------------------------------------------------------


def test_continuation_names_everything_most_important_first() -> None:
    verdict = _verdict(
        _gate("audit", "custom", notes=["output tail:\nline one\nline two"]),
        _gate("cov", "coverage", findings=[Finding("3 lines not covered", path="a.py", line=4)]),
        _gate("lint", "lint", findings=_lint_findings(1)),
        _gate("test", "test", findings=[Finding("AssertionError: boom", name="t.py::test_a")]),
        _gate("build", "build", problems=["`make` could not start: no shell"]),
        _gate("advice", "build", blocking=False),
        _gate("ok", "build", status="pass"),
        attempt=Attempt(2, 3),
    )
    text = render_continuation(verdict)
    lines = text.splitlines()
    assert lines[0] == (
        "COMPLETION REJECTED (attempt 2 of 3): the work is not done. 6 of 7 gates failed "
        "under the strict profile: build, test, lint, cov, audit, advice."
    )
    order = [
        text.index(f"{n} FAILED" if n == k else f"{n} ({k}) FAILED")
        for n, k in [
            ("build", "build"),
            ("test", "test"),
            ("lint", "lint"),
            ("cov", "coverage"),
            ("audit", "custom"),
            ("advice", "build"),
        ]
    ]
    assert order == sorted(order)
    assert "  ! `make` could not start: no shell" in lines
    assert "  - t.py::test_a: AssertionError: boom" in lines
    assert "  - src/m0.py:0 F401: message number 0 " + "x" * 40 in lines
    assert "  - a.py:4: 3 lines not covered" in lines
    assert "  * output tail:" in lines and "    line two" in lines
    assert lines[-1] == RULES
    for forbidden in ("follow-up PR", "incrementally", "Do not stop"):
        assert forbidden in text
    assert "left out" not in text


def test_a_hint_that_matters_is_never_the_part_that_gets_cut() -> None:
    # Lint findings once filled the text and cut the coverage gate's "add --cov=PACKAGE" hint.
    hint = "coverage is not measured in this run: run pytest with --cov=PACKAGE (pytest-cov)"
    verdict = _verdict(
        _gate("lint", "lint", findings=_lint_findings(200)),
        _gate("coverage", "coverage", problems=[hint]),
    )
    text = render_continuation(verdict, max_chars=4000)
    assert f"  ! {hint}" in text
    assert "more items left out for length; the JSON verdict lists them all." in text
    assert "--format json" not in text  # the hint is the same for every door


def test_every_failed_gate_shows_its_first_detail_before_any_shows_a_second() -> None:
    # Review 12: thirteen failing tests of the base filled the text, and the one integrity
    # finding the change made, the gate's only detail, was left out.
    failures = [Finding("AssertionError", name=f"tests/t.py::test_{i}") for i in range(300)]
    finding = "reads CLAUDECODE, which an AI agent's harness sets " + "z" * 150
    verdict = _verdict(
        _gate("test", "test", findings=failures),
        _gate("integrity", "integrity", findings=[Finding(finding, code="x")]),
        _gate("coverage", "coverage", findings=_lint_findings(40)),
    )
    text = render_continuation(verdict, max_chars=4000)
    assert f"  - x: {finding}" in text.splitlines()
    assert "  - tests/t.py::test_0: AssertionError" in text.splitlines()
    assert "  - src/m0.py:0 F401: message number 0 " in text
    assert text.index("test_0:") < text.index("test_1:")  # a gate's lines keep their order


def test_continuation_is_bounded_and_counts_what_it_left_out() -> None:
    verdict = _verdict(
        _gate("coverage", "coverage", findings=_lint_findings(5)),
        _gate("lint", "lint", findings=_lint_findings(200)),
        _gate("build", "build", findings=[Finding("fatal: no Makefile")]),
    )
    for max_chars in (800, 1000, 4000):
        text = render_continuation(verdict, max_chars=max_chars)
        assert len(text) <= max_chars
        shown = text.count("\n  - ")
        left = int(text.split(" more items left out")[0].rsplit("(", 1)[1])
        assert shown + left == 206
        assert text.endswith(RULES)
        assert "  - fatal: no Makefile" in text  # build details come first
        assert "coverage FAILED" in text  # every header survives
    # Too small for every header: the first line and the rules stay whole, lines in between.
    small = render_continuation(verdict, max_chars=600, claim="All tests pass. " + "z" * 300)
    assert len(small) <= 600 and small.endswith(RULES)
    assert small.startswith("COMPLETION REJECTED: the work is not done. 3 of 3 gates failed")
    assert "(207 more items left out for length;" in small  # 206 details and the claim
    assert "lint FAILED: lint summary" in small.splitlines()
    tiny = render_continuation(verdict, max_chars=200)
    assert len(tiny) <= 200 and tiny.startswith("COMPLETION REJECTED")
    assert tiny.endswith(SHORT_RULES) and "follow-up PR" in tiny


def test_claims_are_quoted_with_the_measured_fact() -> None:
    verdict = _verdict(_gate("test", "test"))
    message = "I refactored the parser.\nAll tests pass now! Let me know."
    text = render_continuation(verdict, claim=message)
    assert (
        'You said: "All tests pass now!" The gate measured otherwise: test: test summary.' in text
    )
    assert "You said" not in render_continuation(verdict, claim="I refactored the parser.")
    assert find_claim(None) is None
    assert find_claim("The task is complete.") == "The task is complete."
    assert find_claim("Lint is clean and everything is done") is not None
    assert len(find_claim("All checks passed " + "y" * 500) or "") == 200


def test_long_lines_are_clipped() -> None:
    verdict = _verdict(_gate("lint", "lint", findings=[Finding("z" * 1000, path="a.py")]))
    line = next(ln for ln in render_continuation(verdict).splitlines() if "a.py" in ln)
    assert len(line) == 300 and line.endswith("…")
    # Review 31: an integrity finding's way out, at its end, was cut off.
    way_out = "; a person approves it: merged on the base branch, then a new task"
    said = "x" * 420 + way_out
    verdict = _verdict(_gate("integrity", "integrity", findings=[Finding(said, path="a.py")]))
    line = next(ln for ln in render_continuation(verdict).splitlines() if "a.py" in ln)
    assert line.endswith(way_out)


def test_finding_line_shapes() -> None:
    findings = [
        Finding("failed", name="tests/t.py::test_x", path="tests/t.py", line=3, code="error"),
        Finding("flaky: passed on rerun", name="suite::case", path="x.go", line=9, code="flaky"),
        Finding("msg only"),
    ]
    lines = render_continuation(_verdict(_gate("test", "test", findings=findings))).splitlines()
    assert "  - tests/t.py::test_x: failed" in lines
    assert "  - suite::case (x.go:9): flaky: passed on rerun" in lines
    assert "  - msg only" in lines


# -- terminal -----------------------------------------------------------------------------------


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_one_line_per_gate() -> None:
    verdict = _verdict(
        _gate("build", "build", status="pass", duration_s=1.234),
        _gate("longer-name", "custom", status="skipped"),
        _gate("lint", "lint", blocking=False),
        notices=["detected a Python project"],
        attempt=Attempt(1, 3),
        escalation="ask a human",
    )
    verdict.continuation = "COMPLETION REJECTED: ..."
    text = render_text(verdict)
    lines = text.splitlines()
    assert lines[0] == "agentgate: PASS (profile strict, attempt 1 of 3)"
    assert lines[1] == "  PASS  build        build summary  (1.23s)"
    assert lines[2] == "  SKIP  longer-name  longer-name summary"
    assert lines[3] == "  FAIL  lint         lint summary [advisory]"
    assert lines[4] == "  note: detected a Python project"
    assert "\x1b[" not in text
    assert lines[-1] == "ask a human" and "COMPLETION REJECTED: ..." in lines


def test_the_escalating_verdict_says_the_attempts_are_used_up() -> None:
    # max 3: verdicts 1 to 3 send the agent back, the 4th goes to a human.
    verdict = _verdict(_gate("lint", "lint"), attempt=Attempt(4, 3), escalation="ask a human")
    verdict.status = "escalate"
    assert render_text(verdict).splitlines()[0] == (
        "agentgate: ESCALATE (profile strict, attempts used up: 3 of 3)"
    )
    assert "attempts used up: 3 of 3)" in render_markdown(verdict).splitlines()[0]
    assert "4 of 3" not in render_text(verdict) + render_markdown(verdict)


def test_colour_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_colour(_Tty()) is True
    assert use_colour(io.StringIO()) is False
    assert use_colour(object()) is False  # type: ignore[arg-type]
    coloured = render_text(_verdict(_gate("lint", "lint")), colour=True)
    assert "\x1b[31mFAIL\x1b[0m" in coloured
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_colour(_Tty()) is False


# -- markdown -----------------------------------------------------------------------------------


def test_markdown_table_and_details() -> None:
    verdict = _verdict(
        _gate("build", "build", status="pass", duration_s=0.5),
        _gate(
            "lint",
            "lint",
            findings=[
                *_lint_findings(55),
                Finding("a | b", name="n", code="error"),
            ],
            problems=["`ruff` exited 2\ntail"],
            notes=["", "note"],
        ),
        notices=["notice one"],
        attempt=Attempt(3, 3),
        escalation="Escalated: attempts exhausted",
    )
    verdict.continuation = "COMPLETION REJECTED: go on"
    text = render_markdown(verdict)
    lines = text.splitlines()
    assert lines[0] == "## agentgate: ❌ fail (strict profile, attempt 3 of 3)"
    assert lines[2] == "| Gate | Status | Summary | Time |"
    assert "| build | ✅ pass | build summary | 0.50 s |" in lines
    assert "| lint | ❌ fail | lint summary |  |" in lines
    assert "> notice one" in lines
    assert "<summary>lint: 1 problem, 1 note, 56 findings</summary>" in lines
    assert "- ⚠️ `ruff` exited 2" in lines
    assert "- `src/m0.py:0` `F401` message number 0 " + "x" * 40 in lines
    assert "- … and 6 more (see the JSON verdict)" in lines
    assert "```text" in lines and "COMPLETION REJECTED: go on" in lines
    assert "Escalated: attempts exhausted" in lines
    assert "a \\| b" not in text  # the 56th finding is beyond the first 50


def test_markdown_escapes_cells() -> None:
    verdict = _verdict(_gate("t", "test", findings=[Finding("x | y\nz", name="a|b")]))
    text = render_markdown(verdict)
    assert "- **a\\|b** x \\| y z" in text
    assert "<details>" in text


def test_markdown_html_in_a_message_cannot_break_the_comment() -> None:
    # A failing test's own words may hold HTML and code fences; the PR comment must survive.
    message = 'assert "</details><img src=x>" == "```"'
    verdict = _verdict(_gate("test", "test", findings=[Finding(message, name="t")]))
    verdict.continuation = f"COMPLETION REJECTED\n  - t: {message}\n```\nafter"
    text = render_markdown(verdict)
    details, fenced = text.split("### What the agent is told")
    assert details.count("</details>") == 1 and "<img" not in details
    assert "&lt;/details&gt;&lt;img src=x&gt;" in details
    assert "<summary>test: 1 finding</summary>" in text
    # The continuation is fenced by a longer fence than any run of backticks inside it.
    assert "````text\nCOMPLETION REJECTED" in fenced and "after\n````" in fenced


def test_markdown_counts_what_the_details_hold() -> None:
    gate = _gate("coverage", "coverage", findings=[Finding("f")], notes=["gap 1", "gap 2"])
    text = render_markdown(_verdict(gate))
    assert "<summary>coverage: 2 notes, 1 finding</summary>" in text


# -- the wire format ----------------------------------------------------------------------------


def test_verdict_to_dict_validates(check_verdict: Check) -> None:
    finding = Finding("m", path="a.py", line=2, code="E1", column=5, tool="ruff")
    assert finding.to_dict()["column"] == 5 and finding.to_dict()["tool"] == "ruff"
    assert Finding("m").location() == "" and Finding("m", path="a").location() == "a"
    gate = _gate(
        "lint",
        "lint",
        findings=[finding],
        actual={"errors": 1, "warnings": 0},
        duration_s=0.123456,
        exit_code=1,
    )
    verdict = _verdict(gate, attempt=Attempt(1, 2))
    doc = check_verdict(json.loads(verdict.to_json()))
    assert doc["gates"][0]["duration_s"] == 0.123
    assert doc["attempt"] == {"number": 1, "max": 2}
    assert verdict.failed_gates == [gate]
    assert json.loads(verdict.to_json(indent=None)) == doc


def test_schema_rejects_incomplete_actuals(check_verdict: Check) -> None:
    doc = _verdict(_gate("test", "test", actual={"total": 1})).to_dict()
    with pytest.raises(AssertionError, match="required property"):
        check_verdict(doc)


def test_markdown_failed_gate_without_details() -> None:
    text = render_markdown(_verdict(_gate("build", "build")))
    assert "<details>" not in text
    assert "| build | ❌ fail | build summary |  |" in text


def test_terminal_keeps_a_multi_line_summary_on_one_line() -> None:
    gate = GateResult(name="x", kind="custom", status="fail", summary="first\n  second")
    assert render_text(_verdict(gate)).splitlines()[1] == "  FAIL  x  first second"


def test_a_passing_test_gate_still_names_the_tests_that_failed() -> None:
    """A failing test is never quiet: under a profile that lets some fail, the text names them."""
    from pytest_agentgate.render.terminal import render_text
    from pytest_agentgate.verdict import Finding, GateResult, Verdict

    failed = [
        Finding(f"AssertionError: case {n}\ndetail", name=f"tests/test_a.py::test_{n}")
        for n in range(12)
    ]
    gate = GateResult("test", "test", "pass", "88 of 100 tests passed", findings=failed)
    text = render_text(Verdict("pass", "relaxed", [gate]))
    lines = text.splitlines()
    assert lines[2] == "        failed: tests/test_a.py::test_0: AssertionError: case 0"
    assert sum(line.startswith("        failed: ") for line in lines) == 10
    assert "        … and 2 more failed (the JSON verdict lists them)" in lines
    gate.status = "fail"
    assert "failed: tests/test_a.py" not in render_text(Verdict("fail", "strict", [gate]))


def test_markdown_from_a_report_cannot_make_links_or_emphasis() -> None:
    from pytest_agentgate.render.markdown import render_markdown
    from pytest_agentgate.verdict import Finding, GateResult, Verdict

    finding = Finding(
        "**urgent**: see ![x](https://evil.example/p.png)",
        name="tests/test_a.py::test_[click](https://evil.example)",
    )
    gate = GateResult("test", "test", "fail", "1 of 2 tests passed", findings=[finding])
    text = render_markdown(Verdict("fail", "strict", [gate]))
    assert "[click](https" not in text and "![x](" not in text and "**urgent**" not in text
    assert r"test\_\[click\](https://evil.example)" in text
