"""The pull request's side: its one agentgate comment, where the PR's attempts are kept.

The comment is found again by a hidden marker, and only among comments written by the identity
agentgate posts as: anyone can paste the marker into a comment of their own, and the agent must
not be able to hand the gate a ledger with a fresh budget. The ledger rides in a second marker
in the same comment (``Storage``, the interface the state layer keeps for this), so the
attempts of a PR survive re-runs and new runners.

A read-only token (a fork's pull request) can read but not write: the door then writes no
comment and no label, and says so in the job summary; the 403 itself never fails the job.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_agentgate.errors import AgentgateError

if TYPE_CHECKING:
    from github.Issue import Issue
    from github.IssueComment import IssueComment

MARKER = "<!-- agentgate:pull-request-gate -->"
STATE_MARKER = re.compile(r"<!-- agentgate:state (?P<data>[A-Za-z0-9+/=]*) -->")
# GitHub refuses a comment body over 65,536 characters.
MAX_COMMENT = 65_000
# The identity a workflow's GITHUB_TOKEN posts as (it cannot read /user).
ACTIONS_BOT = "github-actions[bot]"
# Who may reset a PR's attempts with a comment command.
MAINTAINERS = ("OWNER", "MEMBER", "COLLABORATOR")
RESET_COMMAND = re.compile(r"^\s*/agentgate\s+reset\b", re.MULTILINE)
KEPT_HISTORY = 20


class GitHubError(AgentgateError):
    """The GitHub API could not be used (not a 403 on a write, which is reported, not raised)."""


def encode_state(document: Mapping[str, Any]) -> str:
    raw = json.dumps(document, separators=(",", ":"), ensure_ascii=True).encode()
    return f"<!-- agentgate:state {base64.b64encode(raw).decode()} -->"


def decode_state(body: str) -> dict[str, Any] | None:
    found = STATE_MARKER.search(body)
    if found is None:
        return None
    try:
        data = json.loads(base64.b64decode(found["data"], validate=True))
    except (ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class CommentStorage:
    """The ledger of one pull request, kept in its agentgate comment (``state.storage.Storage``).

    Reads come from the comment found when the job started; writes are kept here and posted once,
    with the comment, by the door.
    """

    state: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    escalation: str | None = None
    notices: list[str] = field(default_factory=list)

    @classmethod
    def from_body(cls, body: str | None) -> CommentStorage:
        document = decode_state(body or "") or {}
        state = document.get("state") if isinstance(document.get("state"), dict) else None
        found = document.get("history")
        history = [h for h in found if isinstance(h, dict)] if isinstance(found, list) else []
        return cls(state=state or {}, history=history)

    def document(self) -> dict[str, Any]:
        return {"state": self.state, "history": self.history[-KEPT_HISTORY:]}

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        # One job per pull request at a time: the workflow's `concurrency:` group (README).
        yield

    def read_state(self) -> dict[str, Any]:
        from pytest_agentgate.state.storage import empty_state

        return json.loads(json.dumps(self.state)) if self.state else empty_state()

    def write_state(self, state: Mapping[str, Any]) -> None:
        self.state = json.loads(json.dumps(state))

    def append_history(self, record: Mapping[str, Any]) -> None:
        self.history.append(dict(record))

    def read_history(self) -> list[dict[str, Any]]:
        return list(self.history)

    def escalation_location(self, task_id: str) -> str:
        return "the agentgate comment on this pull request"

    def write_escalation(self, task_id: str, report: str) -> None:
        self.escalation = report

    def take_notices(self, task_id: str) -> list[str]:
        taken, self.notices = self.notices, []
        return taken

    def note_reset(self, task_ids: list[str], now: float) -> None:
        pass


@dataclass
class PullRequest:
    """The pull request's issue, through PyGithub, and what agentgate wrote on it."""

    issue: Issue
    me: str
    comment: IssueComment | None = None
    write_refused: str | None = None

    @classmethod
    def open(cls, token: str, api_url: str, repository: str, number: int) -> PullRequest:
        from github import Auth, Github, GithubException

        client = Github(
            auth=Auth.Token(token),
            base_url=api_url,
            timeout=30,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        try:
            repo = client.get_repo(repository)
            issue = repo.get_issue(number)
        except GithubException as exc:
            raise GitHubError(
                f"cannot read pull request #{number} of {repository}: {_why(exc)}"
            ) from None
        try:
            me = client.get_user().login
        except GithubException:
            me = ACTIONS_BOT  # an installation token (GITHUB_TOKEN) cannot read /user
        pr = cls(issue, me)
        pr.comment = pr._find()
        return pr

    def _find(self) -> IssueComment | None:
        from github import GithubException

        try:
            for comment in self.issue.get_comments():
                if comment.user.login == self.me and MARKER in (comment.body or ""):
                    return comment
        except GithubException as exc:
            raise GitHubError(
                f"cannot list the comments of #{self.issue.number}: {_why(exc)}"
            ) from None
        return None

    def reset_requested(self, label: str) -> str | None:
        """Who asked, by a comment command after agentgate's comment or by the label."""
        from github import GithubException

        if any(lbl.name == label for lbl in self.issue.labels):
            with contextlib.suppress(GithubException):
                self.issue.remove_from_labels(label)
            return f"the {label!r} label"
        since = self.comment.updated_at if self.comment is not None else None
        with contextlib.suppress(GithubException):
            for comment in (
                self.issue.get_comments(since=since) if since else self.issue.get_comments()
            ):
                if since is not None and comment.created_at <= since:
                    continue
                if (
                    RESET_COMMAND.search(comment.body or "")
                    and comment.author_association in MAINTAINERS
                ):
                    return f"@{comment.user.login}'s /agentgate reset"
        return None

    def post(self, body: str) -> None:
        """Create or update agentgate's comment; a refused write is remembered, not raised."""
        from github import GithubException

        try:
            if self.comment is None:
                self.comment = self.issue.create_comment(body)
            else:
                self.comment.edit(body)
        except GithubException as exc:
            if exc.status in (401, 403, 404):
                self.write_refused = f"the token may not comment ({_why(exc)})"
                return
            raise GitHubError(
                f"cannot write the comment on #{self.issue.number}: {_why(exc)}"
            ) from None

    def add_label(self, label: str) -> None:
        from github import GithubException

        if self.write_refused:
            return
        try:
            self.issue.add_to_labels(label)
        except GithubException as exc:
            if exc.status in (401, 403, 404):
                self.write_refused = f"the token may not label ({_why(exc)})"
                return
            raise GitHubError(f"cannot label #{self.issue.number}: {_why(exc)}") from None


def _why(exc: Any) -> str:
    data = getattr(exc, "data", None)
    message = data.get("message") if isinstance(data, dict) else None
    return f"HTTP {getattr(exc, 'status', '?')}" + (f": {message}" if message else "")
