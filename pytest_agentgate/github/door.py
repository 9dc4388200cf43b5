"""``agentgate github``: the GitHub Action's door.

Reads what the runner gives a step (the event, ``GITHUB_*``, the action's inputs as
``INPUT_*``), gates the pull request through the one pipeline (door ``action``, task = the pull
request, base = its base commit, the ledger in the PR's comment), and writes what GitHub shows:
annotations, the job summary, step outputs and the PR comment.

Security: the configuration in force is the base's (the change may tighten it, never loosen
it). Under ``pull_request_target`` the job has a write token and the PR's code must not run with
it: the gates' commands run only with ``trust-pr-code: true``; otherwise reports are read.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pytest_agentgate.github.workflow import annotations_of, bounded_summary, output_lines
from pytest_agentgate.verdict import Verdict

FAIL_ON = ("fail", "escalate", "never")
# Secret-looking input values are masked wherever they would appear.
_SECRET_SHAPE = re.compile(r"^[A-Za-z0-9_\-./+=]{16,}$")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_])")


@dataclass
class Inputs:
    """The action's inputs, as action.yml passes them (``INPUT_<NAME>``, ``-`` as ``_``)."""

    profile: str | None = None
    config: str | None = None
    working_directory: str = "."
    run: bool = True
    junit: list[str] = field(default_factory=list)
    coverage: str | None = None
    lint: list[str] = field(default_factory=list)
    lint_format: str | None = None
    comment: bool = True
    mention: str = ""
    max_attempts: int | None = None
    escalation_label: str = "needs-human"
    reset_label: str = "agentgate-reset"
    fail_on: str = "fail"
    token: str = ""
    trust_pr_code: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Inputs:
        from pytest_agentgate.github.pr import GitHubError

        def get(name: str) -> str:
            return environ.get(f"INPUT_{name.upper().replace('-', '_')}", "").strip()

        def flag(name: str, default: bool) -> bool:
            value = get(name).lower()
            if not value:
                return default
            if value not in ("true", "false"):
                raise GitHubError(f"input `{name}` must be true or false, not {value!r}")
            return value == "true"

        def many(name: str) -> list[str]:
            return [v.strip() for v in re.split(r"[\n,]", get(name)) if v.strip()]

        fail_on = get("fail-on") or "fail"
        if fail_on not in FAIL_ON:
            raise GitHubError(
                f"input `fail-on` must be one of {', '.join(FAIL_ON)}, not {fail_on!r}"
            )
        max_attempts = None
        if get("max-attempts"):
            try:
                max_attempts = int(get("max-attempts"))
            except ValueError:
                max_attempts = 0
            if max_attempts < 1:
                raise GitHubError(
                    f"input `max-attempts` must be a whole number >= 1, not {get('max-attempts')!r}"
                )
        return cls(
            profile=get("profile") or None,
            config=get("config") or None,
            working_directory=get("working-directory") or ".",
            run=flag("run", True),
            junit=many("junit"),
            coverage=get("coverage") or None,
            lint=many("lint"),
            lint_format=get("lint-format") or None,
            comment=flag("comment", True),
            mention=get("mention"),
            max_attempts=max_attempts,
            escalation_label=get("escalation-label") or "needs-human",
            fail_on=fail_on,
            token=get("github-token") or environ.get("GITHUB_TOKEN", ""),
            trust_pr_code=flag("trust-pr-code", False),
        )


@dataclass
class Event:
    name: str
    payload: dict[str, Any]

    @property
    def pull_request(self) -> dict[str, Any] | None:
        """The pull request: of a ``pull_request(_target)`` event, or the one a ``workflow_run``
        ran for (the fork-safe two-stage workflow)."""
        pr = self.payload.get("pull_request")
        if isinstance(pr, dict):
            return pr
        run = self.payload.get("workflow_run")
        prs = run.get("pull_requests") if isinstance(run, dict) else None
        if isinstance(prs, list) and prs and isinstance(prs[0], dict):
            return prs[0]
        return None

    @property
    def number(self) -> int | None:
        pr = self.pull_request
        number = pr.get("number") if pr else None
        return number if isinstance(number, int) else None

    @property
    def head_sha(self) -> str | None:
        """The pull request's head: its own, or the commit a ``workflow_run`` ran for."""
        pr = self.pull_request
        head = pr.get("head") if pr else None
        sha = head.get("sha") if isinstance(head, dict) else None
        if not isinstance(sha, str):
            run = self.payload.get("workflow_run")
            sha = run.get("head_sha") if isinstance(run, dict) else None
        return sha if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{40,64}", sha) else None

    @property
    def base_sha(self) -> str | None:
        pr = self.pull_request
        base = pr.get("base") if pr else None
        sha = base.get("sha") if isinstance(base, dict) else None
        return sha if isinstance(sha, str) else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Event:
        from pytest_agentgate.github.pr import GitHubError

        name = environ.get("GITHUB_EVENT_NAME", "")
        path = environ.get("GITHUB_EVENT_PATH")
        payload: Any = {}
        if path:
            try:
                payload = json.loads(Path(path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise GitHubError(
                    f"GITHUB_EVENT_PATH {path}: cannot be read as JSON ({exc})"
                ) from None
        return cls(name, payload if isinstance(payload, dict) else {})


def secrets_of(inputs: Inputs, environ: Mapping[str, str]) -> list[str]:
    from pytest_agentgate.redact import secret_values

    found = set(secret_values(environ))
    if inputs.token:
        found.add(inputs.token)
    found.update(
        v for k, v in environ.items() if k.startswith("INPUT_") and _SECRET_SHAPE.match(v.strip())
    )
    return sorted(found, key=len, reverse=True)


def quiet_mentions(text: str) -> str:
    """``@name`` from a test name or message must not notify a real user or team."""
    return _MENTION.sub("@\u200b", text)


def comment_body(
    verdict: Verdict, inputs: Inputs, storage_document: Mapping[str, Any], sha: str
) -> str:
    from pytest_agentgate.github.pr import MARKER, MAX_COMMENT, encode_state
    from pytest_agentgate.render.markdown import render_markdown

    head = f"{MARKER}\n{encode_state(storage_document)}\n"
    at = f" at {sha[:12]}" if sha else ""
    details = quiet_mentions(render_markdown(verdict))
    if verdict.status == "pass":
        text = f"✅ **agentgate: the gate passed**{at} (profile {verdict.profile}).\n\n{details}"
    elif verdict.status == "escalate":
        text = (
            f"🛑 **agentgate: a human is needed.**{at} The gate still fails and the agent's "
            f"attempts are used up, or it hit something only a person can fix. The agent is no "
            f"longer asked to continue; after fixing or deciding, comment `/agentgate reset` or "
            f"add the `{inputs.reset_label}` label to give it a fresh budget.\n\n{details}"
        )
    else:
        continuation = quiet_mentions(verdict.continuation or "")
        fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", continuation)), default=0))
        mention = f"{inputs.mention} " if inputs.mention else ""
        text = (
            f"{mention}the gate failed{at}: the work on this pull request is not done. Continue "
            f"with the instructions below.\n\n{fence}text\n{continuation}\n{fence}\n\n"
            f"<details><summary>The verdict</summary>\n\n{details}\n\n</details>"
        )
    body = head + text
    if len(body) > MAX_COMMENT:
        body = (
            body[: MAX_COMMENT - 200]
            + "\n\n… cut at GitHub's comment limit: the job summary has it all.\n"
        )
    return body


def run_action(environ: Mapping[str, str], stdout: TextIO) -> int:
    """The whole step; returns its exit code."""
    from pytest_agentgate.config.resolve import ReportFlags, resolve_config
    from pytest_agentgate.engine import Request, run
    from pytest_agentgate.github.pr import CommentStorage, GitHubError, PullRequest
    from pytest_agentgate.redact import Cleaner
    from pytest_agentgate.registry import get_registry

    inputs = Inputs.from_env(environ)
    event = Event.from_env(environ)
    cleaner = Cleaner(secrets_of(inputs, environ))
    cwd = Path(inputs.working_directory).absolute()
    notes: list[str] = []
    run_commands = inputs.run
    if event.name == "pull_request_target" and run_commands and not inputs.trust_pr_code:
        run_commands = False
        notes.append(
            "pull_request_target: the job has a write token, so the pull request's code was not "
            "run (set `trust-pr-code: true` to run it); the gates read the reports there are"
        )
    registry = get_registry()
    flags = ReportFlags(
        junit=inputs.junit,
        coverage=inputs.coverage,
        lint=inputs.lint,
        lint_format=inputs.lint_format,
    )
    config = resolve_config(
        cwd,
        config_path=inputs.config,
        profile=inputs.profile,
        flags=flags,
        registry=registry,
        base=event.base_sha,
    )
    if inputs.max_attempts is not None and inputs.max_attempts < config.attempts_max:
        config.attempts_max = inputs.max_attempts  # an input may tighten the budget, never widen it
    pr: PullRequest | None = None
    storage = None
    number = event.number
    if number is not None and inputs.token:
        try:
            pr = PullRequest.open(
                inputs.token,
                environ.get("GITHUB_API_URL", "https://api.github.com"),
                environ.get("GITHUB_REPOSITORY", ""),
                number,
            )
        except GitHubError as exc:
            notes.append(f"the pull request could not be read ({exc}); attempts are not counted")
        else:
            storage = CommentStorage.from_body(pr.comment.body if pr.comment else None)
            who = pr.reset_requested(inputs.reset_label)
            if who:
                storage.state = {}
                storage.notices.append(f"the attempts were reset by {who}")
    request = Request(
        config,
        door="action",
        base=event.base_sha,
        head=event.head_sha,
        task=None if number is None else f"pr-{number}",
        run=run_commands,
        record=storage is not None,
        storage=storage,
    )
    verdict = run(request, registry)
    verdict.notices.extend(notes)

    found = annotations_of(verdict)
    for line in found.lines:
        stdout.write(cleaner.text(line, limit=4000) + "\n")
    summary = quiet_mentions(cleaner.text(_summary(verdict, found), limit=10**7))
    _append(environ.get("GITHUB_STEP_SUMMARY"), bounded_summary(summary) + "\n")

    sha = environ.get("GITHUB_SHA", "")
    if pr is not None and inputs.comment and storage is not None:
        body = cleaner.text(comment_body(verdict, inputs, storage.document(), sha), limit=10**6)
        pr.post(body)
        if verdict.status == "escalate":
            pr.add_label(inputs.escalation_label)
        if pr.write_refused:
            _append(
                environ.get("GITHUB_STEP_SUMMARY"),
                f"\n> agentgate wrote no comment or label: {pr.write_refused} (a fork's read-only "
                "token); the summary and annotations above are the verdict.\n",
            )
    verdict_path = Path(environ.get("RUNNER_TEMP") or cwd / ".agentgate") / "agentgate-verdict.json"
    try:
        verdict_path.parent.mkdir(parents=True, exist_ok=True)
        verdict_path.write_text(cleaner.text(verdict.to_json(), limit=10**9), encoding="utf-8")
    except OSError as exc:
        print(f"agentgate: could not write {verdict_path}: {exc}", file=sys.stderr)
    attempt = "" if verdict.attempt is None else str(verdict.attempt.number)
    _append(
        environ.get("GITHUB_OUTPUT"),
        output_lines(
            [
                ("status", verdict.status),
                ("attempt", attempt),
                ("verdict-path", str(verdict_path)),
                ("continuation", cleaner.text(verdict.continuation or "", limit=10**6)),
            ]
        ),
    )
    if inputs.fail_on == "never" or verdict.status == "pass":
        return 0
    if inputs.fail_on == "escalate":
        return 1 if verdict.status == "escalate" else 0
    return 1


def _summary(verdict: Verdict, found: Any) -> str:
    from pytest_agentgate.render.markdown import render_markdown

    text = render_markdown(verdict)
    hidden = []
    if found.hidden_errors:
        hidden.append(f"{found.hidden_errors} more errors")
    if found.hidden_warnings:
        hidden.append(f"{found.hidden_warnings} more warnings")
    if hidden:
        text += (
            f"\n> Annotations: GitHub shows 10 errors and 10 warnings per step; "
            f"{' and '.join(hidden)} are in the details above and in the JSON verdict.\n"
        )
    return text


def _append(path: str | None, text: str) -> None:
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
