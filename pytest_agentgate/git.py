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
repository or its index (``GIT_OPTIONAL_LOCKS=0``).

What git reports as changed is what the repository's own settings let it see, and those
settings (``.git/config``, ``.git/info/*``, the index) are not part of the change: an agent can
change them in one command. So the change is read past them (:meth:`Repo.change`): git runs
with the defaults that make it look at every file (no fsmonitor, ctime and full stat checked),
clean filters other than Git LFS's are switched off, and the diffs go through an index of
agentgate's own with the repository's entries and nothing of what its index knew of the files
on the disk (their sizes and times, ``assume-unchanged``, ``skip-worktree``): git reads every
tracked file to compare it (an entry written through a filter with the base's content and the
edited file's size and times hid the edit). Files ignored only by the repository's private
excludes (``.git/info/exclude``, ``core.excludesFile``) or by a ``.gitignore`` the change itself
added or edited are untracked files of the change.

:meth:`Repo.export` writes a commit's files into a folder of the caller's, through an index
file of its own.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import re
import stat
import subprocess
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal, TypeVar

from pytest_agentgate.texts import decode

GIT_TIMEOUT_S = 60.0
_T = TypeVar("_T")
DEFAULT_BRANCHES = ("origin/main", "origin/master", "main", "master")
# git's empty tree: the base of a repository that has no commit yet.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

Status = Literal["added", "modified", "deleted", "renamed"]

# git's defaults for the settings under which it may skip looking at a changed file.
LOOK_AT_EVERY_FILE = (
    "core.fsmonitor=false",
    "core.trustctime=true",
    "core.checkStat=default",
    "core.ignoreStat=false",
)
# Every diff names its sides a/ and b/, whatever `diff.mnemonicPrefix`, `diff.noprefix` or
# `diff.srcPrefix` say, and reads no external or converted text.
DIFF_OPTIONS = (
    "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--no-relative",
)  # fmt: skip
# Ignored folders that hold no code of the project (virtualenvs, caches, build output): never
# looked into for files a private exclude hides.
NOT_PROJECT_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".agentgate", "__pycache__", ".venv", "venv", "env",
        "node_modules", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
        ".hypothesis", "build", "dist", "site-packages", ".eggs", "htmlcov", ".idea", ".vscode",
        ".cache", ".direnv",
    }
)  # fmt: skip
# Files a private exclude may hide that matter to a gate: code and configuration.
PROJECT_SUFFIXES = frozenset(
    {
        ".py", ".pyi", ".pyx", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts",
        ".toml", ".cfg", ".ini", ".yml", ".yaml", ".json",
    }
)  # fmt: skip
# What pytest (or a JS runner) loads as code or settings: the files read inside a folder git
# lists as one entry, and the ignored files keyed by content.
CODE_SUFFIXES = frozenset(
    {".py", ".pyi", ".pyx", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}
)
SETTINGS_NAMES = frozenset(
    {
        "conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini",
        "setup.cfg", "pyproject.toml", ".coveragerc", ".coveragerc.toml", "ruff.toml", ".ruff.toml",
        ".gitignore",
        ".ignore", "package.json",
    }
)  # fmt: skip
# The most folders looked into, and files kept, inside what git lists as one entry.
MAX_HIDDEN_FOLDERS = 20_000
PROJECT_NAMES = frozenset(
    {
        ".coveragerc",
        ".coveragerc.toml",
        ".flake8",
        ".pylintrc",
        "pylintrc",
        "conftest.py",
        ".gitignore",
    }
)
# The most files a folder hidden by a private exclude is read for.
MAX_HIDDEN_FILES = 5_000


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
    # Each project root's folder inside the repository ("" for its top; None: outside it).
    _prefixes: dict[Path, str | None] = field(default_factory=dict, repr=False, compare=False)

    def added_lines(self, path: str) -> set[int]:
        entry = self.files.get(path)
        return set() if entry is None else entry.lines

    def relative(self, path: str, root: Path) -> str | None:
        """``path`` (repository-relative) relative to the project ``root``; None outside it."""
        if root not in self._prefixes:
            try:
                prefix = root.resolve().relative_to(self.toplevel).as_posix()
            except ValueError:
                self._prefixes[root] = None
            else:
                self._prefixes[root] = "" if prefix == "." else prefix + "/"
        inside = self._prefixes[root]
        if inside is None:
            return None
        if not inside:
            return path
        pure = PurePosixPath(path).as_posix()
        return pure[len(inside) :] if pure.startswith(inside) else None


def git_error(path: Path) -> str | None:
    """Why git cannot find a repository at ``path``: its message, or None when git is not
    installed or finds one."""
    try:
        _git(path, "rev-parse", "--show-toplevel")
    except GitError as exc:
        message = str(exc)
        return None if "not installed" in message else message
    return None


def unreadable_repository(root: Path) -> BaseMissing | None:
    """A git repository at or above ``root`` that git refuses to read (a repository format
    version or extension it does not know, ``core.bare`` set on a work tree): not "no
    repository", which would leave the change unjudged, but a base that cannot be found."""
    for folder in (root, *root.parents):
        dot = folder / ".git"
        if (dot / "HEAD").is_file() or (dot.is_file() and _names_a_gitdir(dot)):
            why = git_error(root)
            if why is None:
                return None
            fix = (
                f"let git read it: `git config --global --add safe.directory {folder}`"
                if "dubious ownership" in why
                else "repair the repository (`git status` says what is wrong)"
            )
            return BaseMissing(
                f"git cannot read the repository at {folder} ({why})",
                f"{fix}; the change is judged against its base only where git can read both",
            )
    return None


def _names_a_gitdir(path: Path) -> bool:
    try:
        return path.read_text(encoding="utf-8", errors="replace").startswith("gitdir:")
    except OSError:
        return False


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

    def is_ancestor(self, older: str, newer: str) -> bool:
        """Whether commit ``older`` is in the history of ``newer``."""
        try:
            _git(self.toplevel, "merge-base", "--is-ancestor", older, newer)
        except GitError:
            return False
        return True

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
        """Every file from ``base`` to the working tree, with the lines each adds or modifies,
        read past what the repository's own settings hide (see the module's docstring)."""
        change = Change(base, self.toplevel)
        diffs = (
            ["diff", *DIFF_OPTIONS, "--name-status", "-z", "-M", base.sha, "--"],
            ["diff", *DIFF_OPTIONS, "--no-color", "-U0", "-M", base.sha, "--"],
        )
        # Read at once: the index's entries, the untracked files, and what could hide a changed
        # file from the diffs (filters, index flags, private excludes).
        staged, untracked, filters, flags, ignored = _git_many(
            self.toplevel,
            ["ls-files", "-s", "-z"],
            ["ls-files", "--others", "--exclude-standard", "-z"],
            FILTERS_COMMAND,
            FLAGS_COMMAND,
            ["ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"],
            unchecked={2},
        )
        blind = Blind(filter_overrides(filters))
        with blind.index(self.toplevel, staged, sparse(flags, self.toplevel)) as index:
            statuses, patch = _git_many(self.toplevel, *diffs, config=blind.overrides, index=index)
            entries = list(_name_status(statuses))
            # Code that an attribute calls binary (`*.py -diff` in .git/info/attributes) has
            # no hunks: its lines are read again as text.
            names = {e.path for e in entries}
            binary = [p for p in _binary_files(patch) if project_file(p) and p in names]
            if binary:
                patch += _git(
                    self.toplevel,
                    *diffs[1][:-1], "--text", "--", *binary,
                    config=blind.overrides, index=index,
                )  # fmt: skip
        for entry in entries:
            change.files[entry.path] = entry
        modified = [path for path, entry in change.files.items() if entry.status == "modified"]
        for path in self._lfs_unchanged(base, modified):
            del change.files[path]
        for path, lines in _added_lines(patch).items():
            if path in change.files:
                change.files[path].lines = lines
        # Not a virtual environment's files, when no ignore rule names it (Python 3.12's
        # `venv` writes no .gitignore into it): installed code, judged where the tests run it.
        # A folder that holds a tracked file is the project's, whatever else it holds.
        venvs = {
            line.split("\t", 1)[-1].partition("/")[0]: False
            for line in staged.split("\0")
            if "/" in line.split("\t", 1)[-1]
        }
        added = [p for p in untracked.split("\0") if p and not _in_a_venv(self.toplevel, p, venvs)]
        # A .gitignore the change added or edited is the project's only in the lines the base
        # had (a new one may even ignore itself): each with the lines it had at the base.
        edited = [
            p
            for p in [*change.files, *added, *ignored.split("\0")]
            if p.rsplit("/", 1)[-1] == ".gitignore"
            and change.files.get(p, FileChange(p, "added")).status != "deleted"
        ]
        at_base = self.read_at(base, edited) if edited else {}
        edited_ignores = {p: _pattern_lines(at_base.get(p)) for p in edited}
        hidden, own = privately_ignored(self.toplevel, ignored, edited_ignores)
        added += hidden
        added += pytest_loads_in(self.toplevel, own)
        for path in through_folders(self.toplevel, added):
            if path not in change.files:
                lines = _all_lines(self.toplevel / path)
                change.files[path] = FileChange(path, "added", lines=lines)
        return change

    def _lfs_unchanged(self, base: Base, paths: list[str]) -> list[str]:
        """The files of ``paths`` Git LFS keeps whose file on the disk is the one the base's
        pointer names (its SHA-256 and size): read with the filters off, through an index that
        knows nothing of the files, every LFS file would differ from its pointer."""
        if not paths:
            return []
        listed = _git(
            self.toplevel, "check-attr", "-z", "--stdin", "filter", stdin="\0".join(paths) + "\0"
        ).split("\0")
        kept = [listed[i] for i in range(0, len(listed) - 2, 3) if listed[i + 2] == "lfs"]
        if not kept:
            return []
        pointers = self.read_at(base, kept)
        same = []
        for path in kept:
            pointer = _LFS_POINTER.search(pointers.get(path) or "")
            if pointer is None:
                continue
            digest = hashlib.sha256()
            try:
                with (self.toplevel / path).open("rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
                size = (self.toplevel / path).stat().st_size
            except OSError:
                continue
            if digest.hexdigest() == pointer.group(1) and size == int(pointer.group(2)):
                same.append(path)
        return same

    def read_at(self, base: Base, paths: Iterable[str]) -> dict[str, str | None]:
        """The text of each path at ``base`` (None where it did not exist or is not text); a
        Python file's as Python decodes it (:mod:`pytest_agentgate.texts`).

        git does not check that an object holds what its name (its hash) says when it reads
        one: an object file written over under the same name (red team 16: the base's
        ``agentgate.yml`` given a loosened text, so that the change shows none) is read as it
        is. Each object read here is hashed, from the base's commit through the trees to the
        file, and one that does not hold what its name says raises GitError."""
        wanted = list(dict.fromkeys(paths))
        out: dict[str, str | None] = dict.fromkeys(wanted)
        if not wanted or base.sha == EMPTY_TREE:
            return out
        folders = list(
            dict.fromkeys(
                "/".join(parts[:n])
                for parts in (p.split("/") for p in wanted)
                for n in range(1, len(parts))
            )
        )
        names = [base.sha, f"{base.sha}^{{tree}}", *(f"{base.sha}:{f}" for f in folders)]
        names += [f"{base.sha}:{p}" for p in wanted]
        request = "".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape")
        blocking = waits_forever(self.toplevel)
        if blocking is not None:
            raise GitError(blocking)
        proc = subprocess.run(
            ["git", "cat-file", "--batch"],
            cwd=self.toplevel,
            input=request,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            env=_env(),
            check=False,
        )
        objects = _batch_objects(proc.stdout, len(names))
        commit = objects[0]
        if commit is None or commit[1] != "commit":
            return out
        _check_object(base.sha, commit[1], commit[2])
        trees: dict[str, tuple[str, bytes]] = {}
        for key, found in zip(["", *folders], objects[1 : 2 + len(folders)], strict=True):
            if found is not None and found[1] == "tree":
                _check_object(found[0], "tree", found[2])
                trees[key] = (found[0], found[2])
        root = trees.get("")
        if root is None or _commit_tree(commit[2]) != root[0]:
            raise GitError(_forged(base.sha, "its tree"))
        for path, found in zip(wanted, objects[2 + len(folders) :], strict=True):
            if found is None or found[1] != "blob":
                continue  # "missing", or a tree
            _check_object(found[0], "blob", found[2], path)
            parent, _, name = path.rpartition("/")
            held = trees.get(parent)
            if held is None or _tree_entry(held[1], name, len(found[0])) != found[0]:
                raise GitError(_forged(base.sha, f"the folder of {path}"))
            out[path] = decode(path, found[2])
        for folder in folders:  # each folder's tree named by its parent's
            parent, _, name = folder.rpartition("/")
            if folder not in trees or parent not in trees:
                continue
            if _tree_entry(trees[parent][1], name, len(trees[folder][0])) != trees[folder][0]:
                raise GitError(_forged(base.sha, f"the folder {folder}"))
        return out

    def export(self, sha: str, dest: Path, index: Path, timeout: float = GIT_TIMEOUT_S) -> None:
        """Write the files of commit ``sha`` into the folder ``dest`` as git keeps them:
        ``export-ignore`` does not apply, and no attribute, filter or conversion either (red
        team 39: `working-tree-encoding=UTF-16` in `.git/info/attributes` wrote the base's
        tests as UTF-16, its collection failed, and nothing was compared); a Git LFS file is
        its pointer. Read with ``ls-tree`` and ``cat-file --batch``; the repository, its index
        and work tree are untouched, and no hook runs. ``index`` is not used (the signature
        is the checkout's it replaced). Raises GitError."""
        del index
        listing = _git(self.toplevel, "ls-tree", "-r", "-z", "--full-tree", sha, timeout=timeout)
        by_blob: dict[str, list[tuple[str, Path]]] = {}
        dest.mkdir(parents=True, exist_ok=True)
        for record in listing.split("\0"):
            if not record:
                continue
            meta, _, path = record.partition("\t")
            mode, kind, name = [*meta.split(), "", "", ""][:3]
            if not _safe_path(path):
                raise GitError(f"the base holds a path git would not check out: {path!r}")
            if kind == "blob":
                by_blob.setdefault(name, []).append((mode, dest / path))
            else:  # a submodule's commit: an empty folder, as a checkout leaves it
                (dest / path).mkdir(parents=True, exist_ok=True)
        links: list[tuple[Path, bytes]] = []

        def write(name: str, content: bytes) -> None:
            for mode, target in by_blob[name]:
                if mode == "120000":
                    links.append((target, content))
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
                if mode == "100755":
                    target.chmod(0o755)

        _blobs(self.toplevel, list(by_blob), write, timeout)
        for target, pointee in links:  # last: no file is written through one
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.fsdecode(pointee), target)

    def tracked_at(self, base: Base) -> list[str]:
        """Every file in the tree of ``base``."""
        if base.sha == EMPTY_TREE:
            return []
        out = self.git("ls-tree", "-r", "-z", "--name-only", base.sha)
        return [p for p in out.split("\0") if p]

    def ignored_tracked(self) -> list[str]:
        """The files of the index that git's ignore rules name (every source: the work tree's
        ``.gitignore`` files, ``.git/info/exclude``, ``core.excludesFile``)."""
        out = self.git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
        return [p for p in out.split("\0") if p]

    def ignored(self, paths: Collection[str]) -> dict[str, Ignored]:
        """Which of ``paths`` git's ignore rules here name, each with the rule that decides
        (:func:`ignored_by` reads given files instead)."""
        return _check_ignore(self.toplevel, paths)


# -- what the repository's settings may hide ---------------------------------------------------

FILTERS_COMMAND = ["config", "-z", "--get-regexp", r"^filter\."]
FLAGS_COMMAND = ["ls-files", "-v", "-z"]
# `ls-files -v`: a lower-case tag is an assume-unchanged entry, S a skip-worktree one.
_FLAGGED = re.compile(r"(?:^|\0)(?:[a-z]|S) ([^\0]+)")


@dataclass
class Blind:
    """What would keep git from seeing a changed file: filters to switch off (``-c``
    settings), and an index that knows the files on the disk (:meth:`index`)."""

    overrides: list[str]

    @contextlib.contextmanager
    def index(self, toplevel: Path, staged: str, sparse: list[str]) -> Iterator[Path]:
        """An index of the caller's holding the entries of the repository's (``staged``, from
        ``git ls-files -s -z``) with no flags and none of what it knew of the files on the
        disk: git then reads every tracked file to compare it, and takes none as unchanged by
        its size and times (red team 18: `git -c filter.x.clean=… add` left an entry with the
        base's content and the edited file's size and times, and the edit was never read).
        ``sparse``: the entries a sparse checkout keeps off the disk, kept so. The
        repository's own index is never written."""
        from pytest_agentgate.process import temporary_folder

        with temporary_folder("agentgate-index-") as folder:
            copy = folder / "index"
            if staged:
                _git(toplevel, "update-index", "-z", "--index-info", stdin=staged, index=copy)
            if sparse:
                _git(
                    toplevel,
                    "update-index", "--skip-worktree", "-z", "--stdin",
                    stdin="\0".join(sparse) + "\0",
                    index=copy,
                )  # fmt: skip
            yield copy


def filter_overrides(config: str) -> list[str]:
    """``-c`` settings that switch off every filter driver the repository's settings name,
    from ``git config -z --get-regexp '^filter[.]'`` (entries ``key\nvalue\0``). None is
    kept, not even Git LFS's: it turns code an attribute assigns to it into a pointer (an LFS
    file the tree left untouched is not re-read)."""
    keys = (entry.partition("\n")[0] for entry in config.split("\0") if entry)
    drivers = {name for key in keys if (name := key[len("filter.") :].rpartition(".")[0])}
    return [
        f"filter.{name}.{setting}={'false' if setting == 'required' else ''}"
        for name in sorted(drivers)
        for setting in ("clean", "process", "smudge", "required")
    ]


def sparse(listing: str, toplevel: Path) -> list[str]:
    """The skip-worktree entries (from ``git ls-files -v -z``) whose file is not on the disk:
    a sparse checkout's, not part of the change."""
    return [
        p
        for tag, p in re.findall(r"(?:^|\0)([A-Za-z]) ([^\0]+)", listing)
        if tag in "Ss" and not os.path.lexists(toplevel / p)
    ]


def flagged_on_disk(listing: str, toplevel: Path) -> list[str]:
    """The index entries marked ``assume-unchanged`` or ``skip-worktree`` (from ``git ls-files
    -v -z``) whose file is on the disk: git takes them as unchanged without looking. A
    skip-worktree entry without a file (a sparse checkout's) is not part of the change."""
    return [p for p in _FLAGGED.findall(listing) if os.path.lexists(toplevel / p)]


def privately_ignored(
    toplevel: Path, listing: str, edited_ignores: Mapping[str, frozenset[str]]
) -> tuple[list[str], list[str]]:
    """The code and configuration files (``git ls-files --others --ignored --directory -z``)
    that nothing of the project ignores: only ``.git/info/exclude``, ``core.excludesFile``, or
    a line of a ``.gitignore`` the change added or edited that the base's did not have
    (``edited_ignores``: each such file, with its lines at the base). pytest collects ignored
    files as it collects any other: they are part of the change. Second, the files and folders
    the project's own ignore rules hide (:func:`pytest_loads_in` reads them)."""
    candidates = [
        p
        for p in filter(None, listing.split("\0"))
        if not outside_project(p) and (p.endswith("/") or loads_code(p))
    ]
    if not candidates:
        return [], []
    out = _git(
        toplevel,
        "check-ignore", "-v", "-z", "--no-index", "--stdin",
        stdin="\0".join(candidates) + "\0",
        check=False,
    )  # fmt: skip
    fields = out.split("\0")
    found: list[str] = []
    own: list[str] = []
    for i in range(0, len(fields) - 3, 4):
        source, pattern, path = fields[i], fields[i + 2], fields[i + 3]
        as_at_base = source not in edited_ignores or pattern.strip() in edited_ignores[source]
        if own_ignore(source, path) and as_at_base:
            own.append(path)  # the project's own ignore rules, as at the base
            continue
        found.append(path)
    return found, own


# pytest's default `norecursedirs` (besides names starting with a dot): it never collects there.
NORECURSE = ("*.egg", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
# pytest's default `python_files`: what it imports as a test module.
TEST_FILES = ("test_*.py", "*_test.py")


def pytest_loads_in(toplevel: Path, paths: list[str]) -> list[str]:
    """What pytest loads among files and folders the project's own ignore rules hide: each
    conftest.py (its hooks can rewrite any result, its import-time code patch anything) and
    each test module of pytest's default pattern, in folders pytest recurses into. git shows
    none of them; a project rarely ignores either, and an agent could put one there. Raises
    GitError past :data:`MAX_HIDDEN_FOLDERS` folders."""
    out: list[str] = []
    walked = 0
    for path in paths:
        clean = path.rstrip("/")
        if not path.endswith("/"):
            if _pytest_loads(clean.rsplit("/", 1)[-1]):
                out.append(clean)
            continue
        top = toplevel / clean
        for folder, dirs, names in os.walk(top):
            walked += 1
            if walked > MAX_HIDDEN_FOLDERS:
                raise GitError(
                    f"{clean} holds more than {MAX_HIDDEN_FOLDERS:,} folders that the "
                    "project's .gitignore hides and pytest would look in: the change cannot "
                    "be read whole; move them out of the project, or name them in pytest's "
                    "norecursedirs and agentgate's base configuration"
                )
            if "pyvenv.cfg" in names:  # a virtualenv: pytest does not recurse into one
                dirs[:] = []
                continue
            dirs[:] = sorted(
                d
                for d in dirs
                if not d.startswith(".")
                and d not in NOT_PROJECT_DIRS
                and not any(fnmatch.fnmatch(d, pattern) for pattern in NORECURSE)
            )
            inner = Path(folder).relative_to(top).as_posix()
            here = clean if inner == "." else f"{clean}/{inner}"
            out += [f"{here}/{f}" for f in sorted(names) if _pytest_loads(f)]
    return out


def _pytest_loads(name: str) -> bool:
    return name == "conftest.py" or any(fnmatch.fnmatch(name, p) for p in TEST_FILES)


def through_folders(toplevel: Path, paths: list[str]) -> list[str]:
    """``paths`` (untracked or hidden), with each folder among them replaced by the code and
    settings files in it (:func:`loads_code`): git lists a nested repository (``tests/ext/``),
    a folder a private exclude hides, and a symbolic link to a folder as one entry, and pytest
    collects what is inside. Links are followed (each real folder once). Raises GitError past
    :data:`MAX_HIDDEN_FOLDERS` folders or :data:`MAX_HIDDEN_FILES` files: such a change
    cannot be read whole, and is not judged as if it were."""
    out: list[str] = []
    seen: set[str] = set()
    files = 0
    for path in paths:
        clean = path.rstrip("/")
        target = toplevel / clean
        if not (path.endswith("/") or (target.is_symlink() and target.is_dir())):
            out.append(path)
            continue
        for folder, dirs, names in os.walk(target, followlinks=True):
            real = os.path.realpath(folder)
            if real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            dirs[:] = sorted(d for d in dirs if not outside_project(d + "/"))
            inner = Path(folder).relative_to(target).as_posix()
            here = clean if inner == "." else f"{clean}/{inner}"
            chosen = [f"{here}/{f}" for f in sorted(names) if loads_code(f)]
            out += chosen
            files += len(chosen)
            if len(seen) > MAX_HIDDEN_FOLDERS or files > MAX_HIDDEN_FILES:
                raise GitError(
                    f"{clean} holds more than {MAX_HIDDEN_FOLDERS:,} folders or "
                    f"{MAX_HIDDEN_FILES:,} code files that git does not list (a nested "
                    "repository, a linked or privately ignored folder): the change cannot be "
                    "read whole; move it out of the project or track it"
                )
    return out


# The files of ignore rules that ruff (through ripgrep's `ignore` crate) reads in each folder,
# the later one's rules winning: git's, and the `.ignore` of ripgrep and its kin.
IGNORE_FILES = (".gitignore", ".ignore")


@dataclass(frozen=True)
class Ignored:
    """The rule that makes a path ignored: its file (as ``check-ignore -v`` names it), line
    and pattern."""

    source: str
    line: int
    pattern: str


def ignored_by(files: Mapping[str, str], paths: Collection[str]) -> dict[str, Ignored]:
    """Which of ``paths`` the ignore files ``files`` (repository-relative path of each
    ``.gitignore`` or ``.ignore`` -> its text) ignore, as git reads a ``.gitignore`` and ruff
    reads both (a folder's ``.ignore`` after its ``.gitignore``): each path ignored, with the
    rule that decides, in the file and at the line of ``files`` it comes from. Read by git in
    a repository of its own in a temporary folder, with only these files: no setting or
    exclude of the user's applies. Raises GitError."""
    wanted = [p for p in paths if p]
    if not wanted or not files:
        return {}
    folders: dict[str, list[str]] = {}
    for path in sorted(files):  # in a folder, `.gitignore` then `.ignore`
        folders.setdefault(str(PurePosixPath(path).parent), []).append(path)
    from pytest_agentgate.process import temporary_folder

    with temporary_folder("agentgate-ignores-") as top:
        origin: dict[tuple[str, int], tuple[str, int]] = {}
        for folder, names in folders.items():
            merged: list[str] = []
            for name in names:
                for number, text in enumerate(files[name].splitlines(), 1):
                    merged.append(text)
                    origin[(folder, len(merged))] = (name, number)
            target = top / folder / ".gitignore"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(merged) + "\n", encoding="utf-8", errors="surrogateescape")
        _git(top, "init", "-q", "--template=")
        found = _check_ignore(top, wanted, config=(f"core.excludesFile={os.devnull}",))
    out: dict[str, Ignored] = {}
    for path, rule in found.items():
        folder = str(PurePosixPath(rule.source).parent)
        source, line = origin.get((folder, rule.line), (rule.source, rule.line))
        out[path] = Ignored(source, line, rule.pattern)
    return out


def _check_ignore(
    cwd: Path, paths: Collection[str], config: Sequence[str] = ()
) -> dict[str, Ignored]:
    """``git check-ignore -v --no-index`` on ``paths``: each one an ignore rule names, with
    that rule (a path a negated rule, ``!pattern``, decides is not ignored)."""
    wanted = [p for p in paths if p]
    if not wanted:
        return {}
    out = _git(
        cwd,
        "check-ignore", "-v", "-z", "--no-index", "--stdin",
        stdin="\0".join(wanted) + "\0",
        config=config,
        ok=(0, 1),  # 1: none is ignored
    )  # fmt: skip
    fields = out.split("\0")
    found: dict[str, Ignored] = {}
    for i in range(0, len(fields) - 3, 4):
        source, number, pattern, path = fields[i : i + 4]
        if not source or pattern.startswith("!") or not number.isdigit():
            continue
        found[path] = Ignored(source, int(number), pattern)
    return found


def _pattern_lines(text: str | None) -> frozenset[str]:
    """A .gitignore's patterns, as ``check-ignore -v`` names them."""
    if text is None:
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def ignored_here(root: str, path: str) -> bool:
    """Whether git ignores ``path`` in the repository at ``root`` (``git check-ignore``); False
    outside git, or when git cannot say."""
    try:
        done = subprocess.run(
            ["git", "-C", root, "check-ignore", "-q", "--", path],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def own_ignore(source: str, path: str) -> bool:
    """Whether a pattern from ``source`` (as ``check-ignore -v`` names it) is one of the
    project's ``.gitignore`` files applying to ``path``: one inside the repository, not under
    ``.git/``, in a folder that holds ``path``. The same file named as ``core.excludesFile``
    applies everywhere: its patterns matching outside its folder are not the project's."""
    folder, _, name = source.rpartition("/")
    if name != ".gitignore" or os.path.isabs(source) or source.startswith((".git/", "../")):
        return False
    return not folder or path.startswith(folder + "/")


def _in_a_venv(toplevel: Path, path: str, known: dict[str, bool]) -> bool:
    """Whether ``path`` is in a folder of the repository's top level that holds a virtual
    environment, whatever its name (venvs.py); ``known`` caches the answer per folder, and
    says no for the folders that hold a tracked file."""
    from pytest_agentgate.venvs import an_environment

    top, _, rest = path.partition("/")
    if not rest:
        return False
    if top not in known:
        known[top] = an_environment(toplevel / top)
    return known[top]


def outside_project(path: str) -> bool:
    parts = path.rstrip("/").split("/")
    return any(p in NOT_PROJECT_DIRS or p.endswith(".egg-info") for p in parts)


def loads_code(path: str) -> bool:
    """Whether pytest (or a JS test runner) loads ``path`` as code or reads it as settings."""
    name = path.rsplit("/", 1)[-1]
    return name in SETTINGS_NAMES or os.path.splitext(name)[1] in CODE_SUFFIXES


def project_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name in PROJECT_NAMES or os.path.splitext(name)[1] in PROJECT_SUFFIXES


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


_BINARY = re.compile(r"^Binary files (?:a/.*|/dev/null) and b/(.*) differ$", re.M)


def _binary_files(patch: str) -> list[str]:
    """The files ``git diff`` called binary (no hunks, their new side's path)."""
    return [_unquote(m.group(1)) for m in _BINARY.finditer(patch)]


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
    """Every line of a new file. Only a regular file is read: git keeps a symbolic link as the
    path it points to, and a link to a FIFO or ``/dev/zero`` would be read for ever."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return set()
        with path.open("rb") as handle:
            count = sum(1 for _ in handle)
    except OSError:
        return set()
    return set(range(1, count + 1))


# What git reads a commit as is the commit: no replacement object (`git replace`) and no graft
# (`.git/info/grafts`) stands in for it, or for the base's files.
GIT_ENV = {
    "LC_ALL": "C",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_GRAFT_FILE": os.devnull,
}


def _env(index: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_ENV)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    return env


def side_by_side(calls: Sequence[Callable[[], _T]]) -> list[_T]:
    """Each call's result, in order; the calls run at once, one thread each but the first
    (git processes mostly wait). A call must not raise: catch what it may. A call whose
    thread never ran it (a thread that could not start, or died first: under coverage.py,
    Python 3.11's ``threading.settrace`` can raise in a new thread) runs here after the
    others: an empty slot read as a result once let a count that fell pass."""
    done: dict[int, _T] = {}

    def one(i: int) -> None:
        done[i] = calls[i]()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(1, len(calls))]
    for thread in threads:
        with contextlib.suppress(RuntimeError):  # no thread to be had: run below
            thread.start()
    one(0)
    for thread in threads:
        if thread.ident is not None:
            thread.join()
    for i in range(len(calls)):
        if i not in done:
            one(i)
    return [done[i] for i in range(len(calls))]


def _git_many(
    cwd: Path,
    *commands: list[str],
    unchecked: Collection[int] = (),
    config: Sequence[str] = (),
    index: Path | None = None,
) -> list[str]:
    """``_git(cwd, *command)`` for each command, run side by side; the first error raises
    (but for the commands whose index is in ``unchecked``: their exit code is not an error)."""

    def call(i: int) -> Callable[[], str | GitError]:
        def run() -> str | GitError:
            try:
                return _git(cwd, *commands[i], check=i not in unchecked, config=config, index=index)
            except GitError as exc:
                return exc

        return run

    out = []
    for result in side_by_side([call(i) for i in range(len(commands))]):
        if isinstance(result, GitError):
            raise result
        out.append(result)
    return out


def git_command(*args: str, config: Sequence[str] = ()) -> list[str]:
    """``git ARGS`` as agentgate runs it: paths unquoted, every file looked at
    (:data:`LOOK_AT_EVERY_FILE`), plus the ``config`` settings."""
    settings = ["core.quotePath=off", *LOOK_AT_EVERY_FILE, *config]
    return ["git", *(word for setting in settings for word in ("-c", setting)), *args]


def _git(
    cwd: Path,
    *args: str,
    check: bool = True,
    stdin: str | None = None,
    config: Sequence[str] = (),
    index: Path | None = None,
    extra_env: dict[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
    ok: Collection[int] = (0,),
) -> str:
    blocking = waits_forever(cwd)
    if blocking is not None:
        raise GitError(blocking)
    try:
        proc = subprocess.run(
            git_command(*args, config=config),
            cwd=cwd,
            input=None if stdin is None else stdin.encode("utf-8", "surrogateescape"),
            capture_output=True,
            timeout=timeout,
            env={**_env(index), **(extra_env or {})},
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} failed: {exc}") from None
    if check and proc.returncode not in ok:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {err[-1] if err else proc.returncode}")
    return proc.stdout.decode("utf-8", "surrogateescape")


# Files of a repository git opens as it reads it: one that is a pipe or a device makes every
# git command wait on it (red team 16: a FIFO as `objects/info/alternates` made each call hang
# until the stop hook's time ran out, which lets the agent stop).
_OPENED = (
    "HEAD", "config", "index", "packed-refs", "commondir", "shallow", "info/grafts",
    "info/exclude", "info/attributes", "objects/info/alternates",
    "objects/info/http-alternates",
)  # fmt: skip


def _safe_path(path: str) -> bool:
    """A tree's path git would check out: relative, no ``.``/``..``/``.git`` component."""
    parts = path.split("/")
    return (
        bool(path)
        and not path.startswith("/")
        and all(part and part not in (".", "..") and part.lower() != ".git" for part in parts)
    )


def _blobs(
    cwd: Path, names: Sequence[str], each: Callable[[str, bytes], None], timeout: float
) -> None:
    """Each of the blobs ``names`` handed to ``each`` as one ``git cat-file --batch`` reads it
    (the request written from a thread: a large tree fills both pipes)."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return
    blocking = waits_forever(cwd)
    if blocking is not None:
        raise GitError(blocking)
    try:
        proc = subprocess.Popen(
            git_command("cat-file", "--batch"),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_env(),
        )
    except OSError as exc:
        raise GitError(f"git cat-file failed: {exc}") from None
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def ask() -> None:
        with contextlib.suppress(OSError):
            stdin.write("".join(f"{n}\n" for n in wanted).encode())
        with contextlib.suppress(OSError):
            stdin.close()

    timer = threading.Timer(timeout, proc.kill)
    writer = threading.Thread(target=ask, daemon=True)
    timer.start()
    writer.start()
    try:
        for name in wanted:
            header = stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
                raise GitError(f"git cat-file could not read the base's blob {name}")
            size = int(header[2])
            content = stdout.read(size)
            if len(content) != size or stdout.read(1) != b"\n":
                raise GitError(f"git cat-file stopped reading the base's blob {name}")
            each(name, content)
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()
        writer.join(1.0)
        stdout.close()


def waits_forever(cwd: Path) -> str | None:
    """What in the repository at or above ``cwd`` would make git wait forever (a file it opens
    that is a pipe or a device), as an error to show; None when nothing would."""
    for folder in (cwd, *cwd.parents):
        dot = folder / ".git"
        try:
            kind = os.lstat(dot).st_mode
        except OSError:
            continue
        gitdir = dot
        if not (stat.S_ISREG(kind) or stat.S_ISDIR(kind) or stat.S_ISLNK(kind)):
            return f"{dot} is a pipe or a device: git would wait on it forever; remove it"
        if stat.S_ISREG(kind):
            pointer = _read_small(dot).strip()
            if not pointer.startswith("gitdir:"):
                return None
            gitdir = (folder / pointer[len("gitdir:") :].strip()).resolve()
        for name in _OPENED:
            try:
                mode = os.stat(gitdir / name).st_mode
            except OSError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                return (
                    f"{gitdir / name} is a pipe or a device, not a file: git would wait on it "
                    "forever; remove it"
                )
        return None
    return None


def _read_small(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""


# A Git LFS pointer file: the object's SHA-256 and size.
_LFS_POINTER = re.compile(
    r"\Aversion https://git-lfs\.github\.com/spec/v1\noid sha256:([0-9a-f]{64})\nsize (\d+)\n"
)


def _batch_objects(data: bytes, count: int) -> list[tuple[str, str, bytes] | None]:
    """``git cat-file --batch``'s answers, in order: (name, type, content), None for one it
    does not have."""
    found: list[tuple[str, str, bytes] | None] = []
    pos = 0
    for _ in range(count):
        end = data.find(b"\n", pos)
        if end < 0:
            found.append(None)
            continue
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit():
            found.append(None)  # "<name> missing", "<name> ambiguous"
            continue
        size = int(header[2])
        found.append(
            (header[0].decode("ascii", "replace"), header[1].decode(), data[pos : pos + size])
        )
        pos += size + 1
    return found


def _check_object(name: str, kind: str, content: bytes, path: str | None = None) -> None:
    """Raise GitError when ``content`` is not what the object ``name`` must hold: git names
    an object by the hash of its type, size and content (SHA-1, or SHA-256 in a repository
    made with it)."""
    algorithm = hashlib.sha1 if len(name) == 40 else hashlib.sha256
    actual = algorithm(f"{kind} {len(content)}\0".encode() + content).hexdigest()
    if actual != name:
        what = f"{path} at the base" if path else f"the base's {kind}"
        raise GitError(
            f"the repository's object {name} ({what}) does not hold what its name says: it was "
            "written over, and the base cannot be trusted; fetch the base again from its remote "
            "(`git fetch`), or restore `.git/objects` from a copy"
        )


def _commit_tree(content: bytes) -> str | None:
    first = content.split(b"\n", 1)[0]
    return first[5:].decode("ascii", "replace") if first.startswith(b"tree ") else None


def _tree_entry(content: bytes, name: str, length: int) -> str | None:
    """The name (hex) of the entry ``name`` of a tree object's ``content``; ``length``: the
    length of a name in hex (40 for SHA-1)."""
    raw = length // 2
    wanted = name.encode("utf-8", "surrogateescape")
    pos = 0
    while pos < len(content):
        space = content.find(b" ", pos)
        nul = content.find(b"\0", space)
        if space < 0 or nul < 0:
            return None
        if content[space + 1 : nul] == wanted:
            return content[nul + 1 : nul + 1 + raw].hex()
        pos = nul + 1 + raw
    return None


def _forged(sha: str, what: str) -> str:
    return (
        f"the base {sha[:12]}'s objects do not agree ({what} is not the one its parent names): "
        "the repository's objects were written over, and the base cannot be trusted; fetch it "
        "again from its remote (`git fetch`)"
    )
