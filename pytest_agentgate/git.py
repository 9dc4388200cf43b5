"""The change being gated: its base commit, the files it touches and the lines it adds.

The change is everything from the base to the working tree: commits since the base, staged and
unstaged edits, and untracked files (those git does not ignore). The base is, first found:

1. ``--base REF`` (the Action passes the pull request's base this way);
2. ``base:`` in the configuration;
3. the commit at which the task first met the gate (a harness session; the door passes it);
4. the merge-base of HEAD with the default branch: ``origin/HEAD``, else ``origin/main``,
   ``origin/master``, ``main``, ``master``.

A base that cannot be found is said plainly, with the command that fetches it (a shallow clone
has no merge-base until it is deepened). This module only reads git; it never changes the
repository or its index (``GIT_OPTIONAL_LOCKS=0``). :meth:`Repo.export` writes a commit's files
into a folder of the caller's, through an index file of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

GIT_TIMEOUT_S = 60.0
DEFAULT_BRANCHES = ("origin/main", "origin/master", "main", "master")
# git's empty tree: the base of a repository that has no commit yet.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

Status = Literal["added", "modified", "deleted", "renamed"]


class GitError(Exception):
    """git failed or is missing; the message says what to do."""


@dataclass(frozen=True)
class Base:
    """The commit the change is judged against, and how it was chosen."""

    ref: str
    sha: str
    how: str

    def describe(self) -> str:
        short = self.sha[:12]
        return f"{self.ref} ({short})" if self.ref != self.sha else short


@dataclass(frozen=True)
class BaseMissing:
    """No base could be found: why, and the command that would fetch it."""

    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.problem}; {self.fix}"


@dataclass
class FileChange:
    """One file the change touches. Paths are relative to the repository root, with ``/``."""

    path: str
    status: Status
    old_path: str | None = None
    # Line numbers in the new file that the change adds or modifies.
    lines: set[int] = field(default_factory=set)


@dataclass
class Change:
    """What a change does, from its base to the working tree."""

    base: Base
    toplevel: Path
    files: dict[str, FileChange] = field(default_factory=dict)

    def added_lines(self, path: str) -> set[int]:
        entry = self.files.get(path)
        return set() if entry is None else entry.lines

    def relative(self, path: str, root: Path) -> str | None:
        """``path`` (repository-relative) relative to the project ``root``; None outside it."""
        try:
            prefix = root.resolve().relative_to(self.toplevel)
        except ValueError:
            return None
        if prefix == Path("."):
            return path
        pure = PurePosixPath(path)
        try:
            return str(pure.relative_to(PurePosixPath(prefix.as_posix())))
        except ValueError:
            return None


class Repo:
    """A git work tree, read through the ``git`` command."""

    def __init__(self, toplevel: Path) -> None:
        self.toplevel = toplevel

    @classmethod
    def find(cls, path: Path) -> Repo | None:
        """The repository ``path`` is in, or None (not a repository, or no git)."""
        try:
            out = _git(path, "rev-parse", "--show-toplevel")
        except GitError:
            return None
        return cls(Path(out.strip()).resolve())

    def git(self, *args: str, check: bool = True) -> str:
        return _git(self.toplevel, *args, check=check)

    # -- the base ------------------------------------------------------------------------------

    def commit(self, ref: str) -> str | None:
        """The commit ``ref`` names, or None."""
        out = self.git(
            "rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}", check=False
        )
        sha = out.strip()
        return sha if re.fullmatch(r"[0-9a-f]{40,64}", sha) else None

    def commits(self, refs: Sequence[str]) -> list[str | None]:
        """The commit each of ``refs`` names (None where none), in one ``git cat-file``."""
        request = "".join(f"{ref}^{{commit}}\n" for ref in refs)
        out = _git(self.toplevel, "cat-file", "--batch-check", check=False, stdin=request)
        # "<sha> commit <size>" for each ref that names a commit, "<ref> missing" otherwise.
        lines = [line.split(" ") for line in out.splitlines()]
        return [
            words[0]
            if len(words) == 3
            and words[1] == "commit"
            and re.fullmatch(r"[0-9a-f]{40,64}", words[0])
            else None
            for words in (lines + [[]] * len(refs))[: len(refs)]
        ]

    def is_shallow(self) -> bool:
        return self.git("rev-parse", "--is-shallow-repository", check=False).strip() == "true"

    def default_branch(self) -> str | None:
        """``origin/HEAD``'s branch, else the first of origin/main, origin/master, main, master."""
        return self._head_and_default()[1]

    def _head_and_default(self) -> tuple[str | None, str | None]:
        """HEAD's commit and the default branch (:meth:`default_branch`), in two git calls."""
        head = self.git("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", check=False).strip()
        candidates = [head.removeprefix("refs/remotes/")] if head else []
        candidates += [b for b in DEFAULT_BRANCHES if b not in candidates]
        head_sha, *found = self.commits(["HEAD", *candidates])
        branch = next(
            (name for name, sha in zip(candidates, found, strict=True) if sha is not None), None
        )
        return head_sha, branch

    def resolve_base(
        self,
        explicit: str | None = None,
        configured: str | None = None,
        task_start: str | None = None,
    ) -> Base | BaseMissing:
        """The base of the change (see the module's docstring for the order)."""
        for ref, how in (
            (explicit, "--base"),
            (configured, "base: in the configuration"),
            (task_start, "where the task first met the gate"),
        ):
            if not ref:
                continue
            sha = self.commit(ref)
            if sha is None:
                return BaseMissing(
                    f"the base {ref!r} ({how}) is not a commit in this repository",
                    self._fetch_hint(ref),
                )
            return Base(ref, sha, how)
        head, branch = self._head_and_default()
        if head is None:
            return Base("(no commits yet)", EMPTY_TREE, "the repository has no commit yet")
        if branch is None:
            return Base(
                "HEAD", head, "no default branch found: only uncommitted changes are the change"
            )
        out = self.git("merge-base", "HEAD", branch, check=False).strip()
        if not re.fullmatch(r"[0-9a-f]{40,64}", out):
            return BaseMissing(
                f"HEAD and {branch} have no common commit here", self._fetch_hint(branch)
            )
        return Base(branch, out, f"merge-base of HEAD with {branch}")

    def _fetch_hint(self, ref: str) -> str:
        if self.is_shallow():
            return (
                "this is a shallow clone: run `git fetch --unshallow` "
                "(or `git fetch --deepen=200`) and gate again"
            )
        remote = ref.split("/", 1)
        if len(remote) == 2 and remote[0] == "origin":
            return (
                f"run `git fetch origin {remote[1]}` and gate again, or name the base with --base"
            )
        return "fetch it (`git fetch origin BRANCH`) or name an existing commit with --base"

    # -- the change ----------------------------------------------------------------------------

    def change(self, base: Base) -> Change:
        """Every file from ``base`` to the working tree, with the lines each adds or modifies."""
        change = Change(base, self.toplevel)
        # Three independent reads, at once: the change's files, its lines, the untracked files.
        statuses, patch, untracked = _git_many(
            self.toplevel,
            ["diff", "--no-ext-diff", "--no-textconv", "--name-status", "-z", "-M", base.sha, "--"],
            ["diff", "--no-ext-diff", "--no-textconv", "--no-color", "-U0", "-M", base.sha, "--"],
            ["ls-files", "--others", "--exclude-standard", "-z"],
        )
        for entry in _name_status(statuses):
            change.files[entry.path] = entry
        for path, lines in _added_lines(patch).items():
            if path in change.files:
                change.files[path].lines = lines
        for path in filter(None, untracked.split("\0")):
            change.files[path] = FileChange(path, "added", lines=_all_lines(self.toplevel / path))
        return change

    def read_at(self, base: Base, paths: Iterable[str]) -> dict[str, str | None]:
        """The text of each path at ``base`` (None where it did not exist or is not text)."""
        wanted = list(dict.fromkeys(paths))
        out: dict[str, str | None] = dict.fromkeys(wanted)
        if not wanted or base.sha == EMPTY_TREE:
            return out
        request = "".join(f"{base.sha}:{p}\n" for p in wanted).encode("utf-8")
        proc = subprocess.run(
            ["git", "cat-file", "--batch"],
            cwd=self.toplevel,
            input=request,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            env=_env(),
            check=False,
        )
        data = proc.stdout
        pos = 0
        for path in wanted:
            end = data.find(b"\n", pos)
            if end < 0:
                break
            header = data[pos:end].split()
            pos = end + 1
            if len(header) != 3 or header[1] != b"blob":
                continue  # "missing", or a tree
            size = int(header[2])
            blob = data[pos : pos + size]
            pos += size + 1
            try:
                out[path] = blob.decode("utf-8")
            except UnicodeDecodeError:
                out[path] = None
        return out

    def export(self, sha: str, dest: Path, index: Path, timeout: float = GIT_TIMEOUT_S) -> None:
        """Write the files of commit ``sha`` into the folder ``dest``, as a checkout would (the
        repository's attributes and filters apply; ``export-ignore`` does not), through
        ``index``, an index file of the caller's. The repository, its index, its work tree and
        its list of work trees are untouched, and no hook runs. Raises GitError."""
        env = {"GIT_INDEX_FILE": str(index)}
        _git(self.toplevel, "read-tree", sha, extra_env=env, timeout=timeout)
        prefix = f"--prefix={dest}{os.sep}"
        _git(self.toplevel, "checkout-index", "-a", "-f", prefix, extra_env=env, timeout=timeout)

    def tracked_at(self, base: Base) -> list[str]:
        """Every file in the tree of ``base``."""
        if base.sha == EMPTY_TREE:
            return []
        out = self.git("ls-tree", "-r", "-z", "--name-only", base.sha)
        return [p for p in out.split("\0") if p]


# -- parsing git's output -------------------------------------------------------------------------


def _name_status(text: str) -> Iterable[FileChange]:
    fields = text.split("\0")
    i = 0
    while i < len(fields) and fields[i]:
        code = fields[i]
        if code[0] in "RC":
            old, new = fields[i + 1], fields[i + 2]
            i += 3
            if code[0] == "R":
                yield FileChange(new, "renamed", old_path=old)
            else:
                yield FileChange(new, "added")
            continue
        path = fields[i + 1]
        i += 2
        status: Status = {"A": "added", "D": "deleted"}.get(code[0], "modified")  # type: ignore[assignment]
        yield FileChange(path, status)


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _added_lines(patch: str) -> dict[str, set[int]]:
    """``+++ b/PATH`` then ``@@ -a,b +c,d @@`` hunks (``-U0``): lines c .. c+d-1 are new."""
    found: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in patch.splitlines():
        if line.startswith("+++ "):
            target = line[4:].rstrip("\t")  # git ends a name that has a space with a tab
            if target == "/dev/null":
                current = None
                continue
            target = _unquote(target)
            current = found.setdefault(target[2:] if target.startswith("b/") else target, set())
        elif line.startswith("@@") and current is not None:
            match = _HUNK.match(line)
            if match:
                start = int(match.group(1))
                count = 1 if match.group(2) is None else int(match.group(2))
                current.update(range(start, start + count))
    return found


def _unquote(path: str) -> str:
    """git quotes a path with unusual characters (``core.quotePath`` is off, so only those)."""
    if len(path) >= 2 and path[0] == path[-1] == '"':
        inner = path[1:-1]
        return (
            inner.encode("latin-1", "backslashreplace")
            .decode("unicode_escape")
            .encode("latin-1")
            .decode("utf-8", "replace")
        )
    return path


def _all_lines(path: Path) -> set[int]:
    try:
        with path.open("rb") as handle:
            count = sum(1 for _ in handle)
    except OSError:
        return set()
    return set(range(1, count + 1))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"})
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    return env


def _git_many(cwd: Path, *commands: list[str]) -> list[str]:
    """``_git(cwd, *command)`` for each command, run side by side; the first error raises."""
    results: list[str | GitError] = [GitError("git did not run")] * len(commands)

    def one(index: int) -> None:
        try:
            results[index] = _git(cwd, *commands[index])
        except GitError as exc:
            results[index] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(1, len(commands))]
    for thread in threads:
        thread.start()
    one(0)
    for thread in threads:
        thread.join()
    out = []
    for result in results:
        if isinstance(result, GitError):
            raise result
        out.append(result)
    return out


def _git(
    cwd: Path,
    *args: str,
    check: bool = True,
    stdin: str | None = None,
    extra_env: dict[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
) -> str:
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotePath=off", *args],
            cwd=cwd,
            input=None if stdin is None else stdin.encode("utf-8", "surrogateescape"),
            capture_output=True,
            timeout=timeout,
            env={**_env(), **(extra_env or {})},
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} failed: {exc}") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {err[-1] if err else proc.returncode}")
    return proc.stdout.decode("utf-8", "surrogateescape")
