"""A small GitHub REST API on 127.0.0.1 for the Action's tests: PyGithub talks to it for real.

It serves what `agentgate github` uses, shaped as api.github.com answers (checked against
GitHub's REST reference): the authenticated user, an issue, its comments (paginated with a
``Link`` header, ``per_page``, ``page``, ``since``), creating and editing a comment, adding and
removing a label. Tokens decide who is asking:

- ``WRITE_TOKEN``: a user token (``/user`` answers), may write;
- ``JOB_TOKEN``: like a workflow's GITHUB_TOKEN: ``/user`` is 403, posts as github-actions[bot];
- ``READ_TOKEN``: a fork's read-only token: every write is 403.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

WRITE_TOKEN = "ghp_" + "w" * 36
JOB_TOKEN = "ghs_" + "j" * 36
READ_TOKEN = "ghs_" + "r" * 36
USERS = {
    WRITE_TOKEN: "agentgate-bot",
    JOB_TOKEN: "github-actions[bot]",
    READ_TOKEN: "github-actions[bot]",
}


@dataclass
class FakeGitHub:
    repository: str = "acme/widgets"
    comments: list[dict[str, Any]] = field(default_factory=list)
    labels: dict[int, list[str]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    clock: datetime = field(default_factory=lambda: datetime(2026, 11, 24, tzinfo=timezone.utc))
    url: str = ""

    def tick(self) -> str:
        self.clock += timedelta(seconds=1)
        return self.clock.strftime("%Y-%m-%dT%H:%M:%SZ")

    def add_comment(
        self, number: int, body: str, login: str, association: str = "NONE"
    ) -> dict[str, Any]:
        stamp = self.tick()
        comment = {
            "id": 1000 + len(self.comments),
            "number": number,
            "body": body,
            "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
            "author_association": association,
            "created_at": stamp,
            "updated_at": stamp,
        }
        self.comments.append(comment)
        return comment

    def on(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.comments if c["number"] == number]

    # -- JSON shapes --------------------------------------------------------------------------

    def comment_json(self, c: dict[str, Any]) -> dict[str, Any]:
        base = f"{self.url}/repos/{self.repository}"
        return {
            **{k: v for k, v in c.items() if k != "number"},
            "url": f"{base}/issues/comments/{c['id']}",
            "issue_url": f"{base}/issues/{c['number']}",
            "html_url": f"https://github.com/{self.repository}/pull/{c['number']}#issuecomment-{c['id']}",
        }

    def issue_json(self, number: int) -> dict[str, Any]:
        base = f"{self.url}/repos/{self.repository}"
        return {
            "number": number,
            "title": "A pull request",
            "state": "open",
            "url": f"{base}/issues/{number}",
            "comments_url": f"{base}/issues/{number}/comments",
            "labels_url": f"{base}/issues/{number}/labels{{/name}}",
            "html_url": f"https://github.com/{self.repository}/pull/{number}",
            "labels": [self.label_json(n) for n in self.labels.get(number, [])],
            "pull_request": {"url": f"{base}/pulls/{number}"},
        }

    def label_json(self, name: str) -> dict[str, Any]:
        return {
            "name": name,
            "url": f"{self.url}/repos/{self.repository}/labels/{name}",
            "color": "ededed",
        }


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _token(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        match = re.match(r"(?:token|Bearer)\s+(\S+)", auth)
        return match.group(1) if match else None

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def _route(self, method: str) -> None:
        gh = self.server.github
        url = urlparse(self.path)
        path, query = unquote(url.path), parse_qs(url.query)
        gh.requests.append((method, path))
        token = self._token()
        if token not in USERS:
            return self._send(401, {"message": "Bad credentials"})
        if method != "GET" and token == READ_TOKEN:
            return self._send(403, {"message": "Resource not accessible by integration"})
        if path == "/user":
            if token != WRITE_TOKEN:
                return self._send(403, {"message": "Resource not accessible by integration"})
            return self._send(200, {"login": USERS[token], "id": 1, "type": "User"})
        repo = f"/repos/{gh.repository}"
        if path == repo:
            full = gh.repository
            return self._send(
                200, {"full_name": full, "name": full.split("/")[1], "url": f"{gh.url}{repo}"}
            )
        if m := re.fullmatch(rf"{repo}/issues/(\d+)", path):
            return self._send(200, gh.issue_json(int(m[1])))
        if m := re.fullmatch(rf"{repo}/issues/(\d+)/comments", path):
            number = int(m[1])
            if method == "POST":
                comment = gh.add_comment(number, self._body()["body"], USERS[token], "NONE")
                return self._send(201, gh.comment_json(comment))
            found = gh.on(number)
            if "since" in query:
                found = [c for c in found if c["updated_at"] >= query["since"][0]]
            per_page = int(query.get("per_page", ["30"])[0])
            page = int(query.get("page", ["1"])[0])
            chunk = found[(page - 1) * per_page : page * per_page]
            headers = {}
            if page * per_page < len(found):
                nxt = f"{gh.url}{path}?per_page={per_page}&page={page + 1}"
                if "since" in query:
                    nxt += f"&since={query['since'][0]}"
                headers["Link"] = f'<{nxt}>; rel="next"'
            return self._send(200, [gh.comment_json(c) for c in chunk], headers)
        if (m := re.fullmatch(rf"{repo}/issues/comments/(\d+)", path)) and method == "PATCH":
            comment = next((c for c in gh.comments if c["id"] == int(m[1])), None)
            if comment is None:
                return self._send(404, {"message": "Not Found"})
            if comment["user"]["login"] != USERS[token]:
                return self._send(403, {"message": "Must have admin rights to Repository."})
            comment["body"] = self._body()["body"]
            comment["updated_at"] = gh.tick()
            return self._send(200, gh.comment_json(comment))
        if m := re.fullmatch(rf"{repo}/issues/(\d+)/labels", path):
            number = int(m[1])
            body = self._body()
            names = body["labels"] if isinstance(body, dict) else body
            current = gh.labels.setdefault(number, [])
            current.extend(n for n in names if n not in current)
            return self._send(200, [gh.label_json(n) for n in current])
        if (m := re.fullmatch(rf"{repo}/issues/(\d+)/labels/(.+)", path)) and method == "DELETE":
            current = gh.labels.get(int(m[1]), [])
            if m[2] not in current:
                return self._send(404, {"message": "Label does not exist"})
            current.remove(m[2])
            return self._send(200, [gh.label_json(n) for n in current])
        return self._send(404, {"message": f"Not Found: {method} {path}"})

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def do_PATCH(self) -> None:
        self._route("PATCH")

    def do_DELETE(self) -> None:
        self._route("DELETE")


class _Server(ThreadingHTTPServer):
    github: FakeGitHub


class Served:
    """The fake API running in a thread; ``with Served() as gh: ... gh.url``."""

    def __init__(self) -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.github = FakeGitHub()
        self.server.github.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self.server.github

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
