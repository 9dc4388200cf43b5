"""`agentgate github`, the Action's step, against a GitHub API served on 127.0.0.1.

PyGithub talks to tests/github_api.py for real; the projects are real git repositories with a
base commit and a pull request's head; the runner's files (summary, outputs) are real files.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _helpers import git
from github_api import JOB_TOKEN, READ_TOKEN, WRITE_TOKEN, FakeGitHub, Served

from pytest_agentgate.github.door import run_action
from pytest_agentgate.github.pr import MARKER, decode_state, encode_state
from pytest_agentgate.github.workflow import escape_data, escape_property

FAILING_BUILD = 'gates:\n  build:\n    command: python -c "import sys; sys.exit(1)"\n'
PASSING_BUILD = 'gates:\n  build:\n    command: python -c "pass"\n'


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with Served() as fake:
        yield fake


class Action:
    """One repository with a pull request, and the step run on it as GitHub would."""

    def __init__(self, tmp_path: Path, gh: FakeGitHub, config: str, number: int = 7) -> None:
        self.tmp = tmp_path
        self.gh = gh
        self.number = number
        self.root = tmp_path / "repo"
        self.root.mkdir()
        (self.root / "pyproject.toml").write_text("[project]\nname = 'w'\n")
        (self.root / "agentgate.yml").write_text("profile: strict\n" + config)
        git(self.root, "init", "-q", "-b", "main")
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", "base")
        self.base = git(self.root, "rev-parse", "HEAD")
        git(self.root, "checkout", "-q", "-b", "agent/fix")
        (self.root / "work.py").write_text("x = 1\n")
        self.commit("the agent's change")
        self.runs = 0

    def commit(self, message: str) -> None:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)

    def run(
        self, event_name: str = "pull_request", payload: dict[str, Any] | None = None, **inputs: str
    ) -> tuple[int, str]:
        self.runs += 1
        event = self.tmp / "event.json"
        event.write_text(
            json.dumps(
                payload
                or {
                    "pull_request": {
                        "number": self.number,
                        "base": {"sha": self.base, "ref": "main"},
                        "head": {"sha": git(self.root, "rev-parse", "HEAD")},
                    }
                }
            )
        )
        self.summary = self.tmp / f"summary-{self.runs}.md"
        self.output = self.tmp / f"output-{self.runs}"
        env = {
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": self.gh.repository,
            "GITHUB_API_URL": self.gh.url,
            "GITHUB_SHA": git(self.root, "rev-parse", "HEAD"),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_OUTPUT": str(self.output),
            "RUNNER_TEMP": str(self.tmp / "runner"),
            "INPUT_WORKING_DIRECTORY": str(self.root),
            "INPUT_GITHUB_TOKEN": WRITE_TOKEN,
            "INPUT_MENTION": "@claude",
        }
        env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
        out = io.StringIO()
        code = run_action(env, out)
        return code, out.getvalue()

    @property
    def comments(self) -> list[dict[str, Any]]:
        return [c for c in self.gh.on(self.number) if MARKER in c["body"]]

    @property
    def outputs(self) -> dict[str, str]:
        text = self.output.read_text()
        found = re.findall(r"^([\w-]+)<<(\S+)\n(.*?)\n\2\n", text, re.DOTALL | re.MULTILINE)
        return {name: value for name, _, value in found}


def test_a_failing_pr_gets_one_comment_with_the_mention_and_the_continuation(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    code, annotations = action.run()
    assert code == 1
    [comment] = action.comments
    body = comment["body"]
    assert body.splitlines()[2].startswith("@claude the gate failed at ")
    assert "COMPLETION REJECTED (attempt 1 of 3)" in body
    assert "::error title=agentgate build::" in annotations
    summary = action.summary.read_text()
    assert summary.startswith("## agentgate: ❌ fail (strict profile, attempt 1 of 3)")
    assert "| build | ❌ fail |" in summary
    outputs = action.outputs
    assert outputs["status"] == "fail" and outputs["attempt"] == "1"
    assert outputs["continuation"].startswith("COMPLETION REJECTED (attempt 1 of 3)")
    assert "\n" in outputs["continuation"]  # multiline, kept whole by the delimiter
    assert json.loads(Path(outputs["verdict-path"]).read_text())["status"] == "fail"


def test_a_second_push_updates_the_same_comment_with_attempt_2(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    action.run()
    first_id = action.comments[0]["id"]
    (action.root / "more.py").write_text("y = 2\n")
    action.commit("another try")
    action.run()
    [comment] = action.comments
    assert comment["id"] == first_id
    assert "COMPLETION REJECTED (attempt 2 of 3)" in comment["body"]
    assert ("POST", f"/repos/{gh.repository}/issues/7/comments") in gh.requests
    assert sum(1 for r in gh.requests if r[0] == "POST" and r[1].endswith("/comments")) == 1


def test_a_pass_updates_the_comment_without_a_mention(tmp_path: Path, gh: FakeGitHub) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    action.run()
    (action.root / "agentgate.yml").write_text("profile: strict\n" + PASSING_BUILD)
    action.commit("fix")  # the base's config is the law: the base must pass too
    (action.root / "agentgate.yml").write_text("profile: strict\n" + PASSING_BUILD)
    git(action.root, "checkout", "-q", "main")
    (action.root / "agentgate.yml").write_text("profile: strict\n" + PASSING_BUILD)
    action.commit("a maintainer fixes the build command on main")
    action.base = git(action.root, "rev-parse", "HEAD")
    git(action.root, "checkout", "-q", "agent/fix")
    git(action.root, "merge", "-q", "main", "-m", "merge main", "-X", "theirs")
    code, _ = action.run()
    assert code == 0
    [comment] = action.comments
    assert "the gate passed" in comment["body"]
    assert "@claude" not in comment["body"]
    assert action.outputs["status"] == "pass"


def test_escalation_adds_the_label_and_speaks_to_people(tmp_path: Path, gh: FakeGitHub) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    action.run(max_attempts="1")
    code, _ = action.run(max_attempts="1")
    assert code == 1
    [comment] = action.comments
    assert "a human is needed" in comment["body"]
    assert "@claude" not in comment["body"]
    assert gh.labels[7] == ["needs-human"]
    assert action.outputs["status"] == "escalate"
    code, _ = action.run(max_attempts="1", fail_on="never")
    assert code == 0


def test_max_attempts_can_only_tighten(tmp_path: Path, gh: FakeGitHub) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD + "attempts:\n  max: 2\n")
    action.run(max_attempts="10")
    assert "attempt 1 of 2" in action.comments[0]["body"]


def test_a_read_only_token_writes_nothing_and_does_not_fail_the_job(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    action = Action(tmp_path, gh, PASSING_BUILD)
    code, _ = action.run(github_token=READ_TOKEN)
    assert code == 0
    assert gh.comments == [] and gh.labels == {}
    assert "agentgate wrote no comment or label: the token may not comment (HTTP 403" in (
        action.summary.read_text()
    )


def test_the_comment_is_found_among_many_pages(tmp_path: Path, gh: FakeGitHub) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    for n in range(40):
        gh.add_comment(7, f"review note {n}", "reviewer")
    action.run()
    for n in range(75):
        gh.add_comment(7, f"later note {n}", "reviewer")
    action.run()
    assert len(action.comments) == 1
    assert "attempt 2 of 3" in action.comments[0]["body"]
    pages = [p for m, p in gh.requests if m == "GET" and p.endswith("/issues/7/comments")]
    assert len(pages) >= 4  # 30 a page: 116 comments on the second run


def test_a_forged_marker_from_someone_else_is_ignored(tmp_path: Path, gh: FakeGitHub) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    action.run()
    action.run()
    forged = f"{MARKER}\n{encode_state({'state': {}, 'history': []})}\nfresh budget"
    gh.add_comment(7, forged, "claude[bot]")
    action.run()
    ours = [c for c in action.comments if c["user"]["login"] == "agentgate-bot"]
    assert len(ours) == 1
    assert "attempt 3 of 3" in ours[0]["body"]


def test_the_job_token_finds_its_own_comment_again(tmp_path: Path, gh: FakeGitHub) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    action.run(github_token=JOB_TOKEN)
    action.run(github_token=JOB_TOKEN)
    [comment] = action.comments
    assert comment["user"]["login"] == "github-actions[bot]"
    assert "attempt 2 of 3" in comment["body"]


@pytest.mark.parametrize(
    ("association", "reset"), [("COLLABORATOR", True), ("MEMBER", True), ("NONE", False)]
)
def test_a_maintainer_resets_the_attempts_with_a_comment(
    association: str, reset: bool, tmp_path: Path, gh: FakeGitHub
) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    action.run()
    action.run()
    gh.add_comment(7, "/agentgate reset\nlet it try again", "someone", association)
    action.run()
    expected = "attempt 1 of 3" if reset else "attempt 3 of 3"
    assert expected in action.comments[0]["body"]


def test_the_reset_label_resets_and_is_taken_off(tmp_path: Path, gh: FakeGitHub) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    action.run()
    action.run()
    gh.labels[7] = ["agentgate-reset"]
    action.run()
    assert "attempt 1 of 3" in action.comments[0]["body"]
    assert gh.labels[7] == []


def test_secrets_never_reach_the_comment_summary_annotations_or_outputs(
    tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaked = "ghp_" + "L" * 36
    monkeypatch.setenv("DEPLOY_TOKEN", "s3cr3t-deploy-value")
    config = (
        'gates:\n  build:\n    command: >-\n      python -c "import os,sys;'
        f" print('{leaked}', os.environ['DEPLOY_TOKEN'], '{WRITE_TOKEN}'); sys.exit(1)\"\n"
    )
    action = Action(tmp_path, gh, config)
    _, annotations = action.run()
    everything = "".join(
        [
            action.comments[0]["body"],
            action.summary.read_text(),
            annotations,
            action.output.read_text(),
        ]
    )
    everything += Path(action.outputs["verdict-path"]).read_text()
    for secret in (leaked, "s3cr3t-deploy-value", WRITE_TOKEN):
        assert secret not in everything
    assert "***" in everything


def test_test_names_and_messages_cannot_mention_or_inject(tmp_path: Path, gh: FakeGitHub) -> None:
    config = (
        'gates:\n  build:\n    command: >-\n      python -c "import sys;'
        " print('error: ping @octocat and @acme/security </details><img src=x>'); sys.exit(1)\"\n"
    )
    action = Action(tmp_path, gh, config)
    action.run()
    body = action.comments[0]["body"]
    summary = action.summary.read_text()
    for text in (body, summary):
        assert "@octocat" not in text and "@acme/security" not in text
        assert "<img" not in text.replace("```", "").split("<details>")[0] or "&lt;img" in text
    assert body.count("@claude") == 1  # the one mention the workflow asked for


def test_pull_request_target_runs_no_pr_code_unless_trusted(tmp_path: Path, gh: FakeGitHub) -> None:
    config = "gates:\n  build:\n    command: python -c \"open('ran', 'w').write('x')\"\n"
    action = Action(tmp_path, gh, config)
    action.run(event_name="pull_request_target")
    assert not (action.root / "ran").exists()
    assert "the pull request's code was not run" in action.summary.read_text()
    action.run(event_name="pull_request_target", trust_pr_code="true")
    assert (action.root / "ran").exists()


def test_a_fork_safe_stage_judges_the_prs_head_and_never_the_base_alone(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    # Red team 34: stage 2 of the fork-safe workflow checked out the base branch, so the change
    # was empty and a pull request that only added a skip passed with its own reports.
    action = Action(tmp_path, gh, FAILING_BUILD.replace("sys.exit(1)", "sys.exit(0)"))
    (action.root / "test_work.py").write_text(
        "import pytest\n\n\n@pytest.mark.skip(reason='flaky')\ndef test_work():\n    assert 0\n"
    )
    action.commit("skip the failing test")
    head = git(action.root, "rev-parse", "HEAD")
    payload = {
        "workflow_run": {
            "event": "pull_request",
            "head_sha": head,
            "pull_requests": [
                {"number": action.number, "base": {"sha": action.base}, "head": {"sha": head}}
            ],
        }
    }
    git(action.root, "checkout", "-q", "main")
    code, _ = action.run("workflow_run", payload, run="false")
    assert code == 1 and action.outputs["status"] == "fail"
    assert "the working tree is not the pull request's: it does not hold its head" in (
        action.summary.read_text()
    )
    git(action.root, "checkout", "-q", head)
    code, _ = action.run("workflow_run", payload, run="false")
    assert code == 1 and "skip-added" in action.summary.read_text()


def test_a_shallow_merge_checkout_is_told_to_fetch_the_history(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    # Review 21: a merge commit checked out at depth 1 (its base fetched alone, a common
    # recipe) hides the head among its parents: the advice is the history, not another checkout.
    action = Action(tmp_path, gh, PASSING_BUILD)
    head = git(action.root, "rev-parse", "HEAD")
    payload = {
        "pull_request": {
            "number": action.number,
            "base": {"sha": action.base, "ref": "main"},
            "head": {"sha": head},
        }
    }
    git(action.root, "checkout", "-q", "-b", "merge", "main")
    git(action.root, "merge", "-q", "--no-ff", "-m", "merge", head)
    shallow = tmp_path / "shallow"
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--branch",
        "merge",
        f"file://{action.root}",
        str(shallow),
    )
    git(shallow, "fetch", "-q", "--depth", "1", "origin", action.base)
    action.root = shallow
    code, _ = action.run(payload=payload)
    assert code == 1
    assert "the clone is shallow: whether the working tree holds the pull request's head" in (
        action.summary.read_text()
    )
    assert "fetch-depth: 0" in action.summary.read_text()


def test_a_pr_that_weakens_its_own_gate_is_judged_by_the_base(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    action = Action(tmp_path, gh, FAILING_BUILD)
    (action.root / "agentgate.yml").write_text(
        'profile: strict\ngates:\n  build:\n    command: python -c "pass"\n    enabled: false\n'
    )
    action.commit("the agent turns the build gate off")
    code, _ = action.run()
    assert code == 1
    body = action.comments[0]["body"]
    assert "build FAILED" in body or "| build | ❌ fail |" in body
    assert "integrity" in body


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"fail_on": "sometimes"}, "input `fail-on` must be one of fail, escalate, never"),
        ({"max_attempts": "many"}, "input `max-attempts` must be a whole number >= 1"),
        ({"comment": "yes"}, "input `comment` must be true or false"),
    ],
)
def test_bad_inputs_are_errors_that_name_the_input(
    inputs: dict[str, str], message: str, tmp_path: Path, gh: FakeGitHub
) -> None:
    from pytest_agentgate.errors import AgentgateError

    action = Action(tmp_path, gh, PASSING_BUILD)
    with pytest.raises(AgentgateError, match=re.escape(message)):
        action.run(**inputs)


def test_workflow_commands_are_escaped() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_the_annotation_caps_are_kept_and_the_rest_counted(tmp_path: Path, gh: FakeGitHub) -> None:
    report = tmp_path / "ruff.json"
    findings = [
        {
            "code": "F401",
            "message": f"unused import {n}",
            "filename": str(tmp_path / "repo" / f"m{n}.py"),
            "location": {"row": 1, "column": 1},
            "end_location": {"row": 1, "column": 2},
            "fix": None,
            "noqa_row": 1,
            "url": "",
        }
        for n in range(25)
    ]
    report.write_text(json.dumps(findings))
    action = Action(tmp_path, gh, PASSING_BUILD)
    _, annotations = action.run(lint=str(report), lint_format="ruff", run="false")
    assert annotations.count("::error ") == 10
    assert "15 more errors" in action.summary.read_text()


def test_the_state_marker_round_trips() -> None:
    document = {"state": {"tasks": {"pr-7": {"total": 2}}}, "history": [{"status": "fail"}]}
    assert decode_state("before " + encode_state(document) + " after") == document
    assert decode_state("<!-- agentgate:state !!! -->") is None
