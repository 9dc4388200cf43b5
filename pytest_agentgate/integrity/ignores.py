"""Files the linter no longer reads because an ignore rule now names them.

ruff (through ripgrep's ``ignore`` crate) skips what git ignores: what the ``.gitignore``
files name, ``.git/info/exclude`` and the user's ``core.excludesFile``, and also what a
``.ignore`` file names, tracked files included. So a rule that names a Python file tracked at
the base takes that file out of the lint gate without a word in ruff's settings. Reported as
``tool-config-loosened``:

- a rule of a ``.gitignore`` or ``.ignore`` the change adds, edits or deletes that ignores such a
  file (tracked at the base, still on the disk) the base's rules did not ignore: compared by
  git itself, the base's files and the change's each read in a repository of their own;
- such a rule that ignores a Python file the change adds (red team 33: `rates.py`, with two
  lint errors, imported by the product and named in a new `invoice/.ignore`, which git does not
  read; or in a `.gitignore`, the file added with `git add -f`);
- a rule of the repository's private excludes (``.git/info/exclude``, ``core.excludesFile``)
  that ignores such a file: no part of the change, and ruff skips the file all the same;
- a rule of a ``.ignore`` in a folder above the repository (ruff reads those too, and git
  never does) that ignores such a file, or one the change adds (red team 34: `../.ignore`
  naming `ig/invoice/tax.py`);
- a folder ruff leaves out by default (``dist``, ``venv``, ``_build``, ...) that a Python file the
  change adds is in, where the base keeps no linted file and the project never chose that
  exclude (red team 33: `invoice/dist/rates.py`, imported by the product, went unlinted);
- a rule of a git repository nested in the project (its ``.gitignore`` and ``.ignore`` files,
  its ``info/exclude``) that ignores a Python file of the change in it: ruff takes the nested
  repository's rules as its own there (red team 35: `git init invoice/rates`, `*.py` in its
  exclude).

Rules that name only untracked files git ignores (build output, a virtualenv) and files the
change deletes from the disk are no finding.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping, Set
from pathlib import Path, PurePosixPath

from pytest_agentgate.git import IGNORE_FILES, GitError, Ignored, ignored_by, own_ignore
from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate.texts import read_regular_text

RULE = "tool-config-loosened"
# What ruff lints by default (its `include`, but for pyproject.toml).
LINTED = (".py", ".pyi", ".ipynb")
_SHOWN = 5


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    for rules in (
        _project_rules,
        _private_rules,
        _rules_above,
        _nested_rules,
        _default_excluded,
        _linked_folders,
    ):
        try:
            found = rules(scan)
        except (GitError, OSError, ValueError):
            continue  # not git (a task's snapshot), or git cannot tell: other rules still judge
        yield from found


def _linted(scan: Scan, path: str) -> str | None:
    """``path`` (repository-relative) relative to the project, when ruff lints it there and
    it is on the disk."""
    if not path.endswith(LINTED):
        return None
    inside = scan.change.relative(path, scan.root)
    if inside is None or not os.path.isfile(scan.change.toplevel / path):
        return None
    return inside


def _project_rules(scan: Scan) -> list[IntegrityFinding]:
    change = scan.change
    touched = [p for p in change.files if PurePosixPath(p).name in IGNORE_FILES]
    if not touched:
        return []
    tracked = scan.repo.tracked_at(change.base)
    at_base = [p for p in tracked if PurePosixPath(p).name in IGNORE_FILES]
    now: dict[str, str] = {}
    for path in dict.fromkeys([*at_base, *touched]):
        try:
            now[path] = read_regular_text(change.toplevel / path, errors="replace")
        except OSError:
            continue  # deleted by the change
    added = _added(scan)
    linted = {p: inside for p in [*tracked, *added] if (inside := _linted(scan, p)) is not None}
    ignored_now = ignored_by(now, linted)
    if not ignored_now:
        return []
    base_texts = {p: t for p, t in scan.repo.read_at(change.base, at_base).items() if t}
    ignored_before = ignored_by(base_texts, ignored_now)
    fresh = {p: rule for p, rule in ignored_now.items() if p not in ignored_before}
    new = {linted[p] for p in added if p in linted}
    return _findings(scan, fresh, linted, private=False, added=new)


def _added(scan: Scan) -> list[str]:
    """The Python files the change adds that git keeps: tracked, or not ignored by git (a
    ``.ignore`` is ruff's alone). An untracked file git ignores is scratch or build output."""
    added = [
        p
        for p, entry in scan.change.files.items()
        if entry.status == "added" and p.endswith(LINTED)
    ]
    if not added:
        return []
    ignored = set(scan.repo.ignored(added)) - set(scan.repo.ignored_tracked())
    return [p for p in added if p not in ignored]


def _private_rules(scan: Scan) -> list[IntegrityFinding]:
    """Tracked files git's private excludes ignore: files of the index (but those the change
    adds), and files the change takes out of the index but leaves on the disk."""
    change = scan.change
    names = [
        p
        for p in scan.repo.ignored_tracked()
        if p not in change.files or change.files[p].status != "added"
    ]
    names += [p for p, entry in change.files.items() if entry.status == "deleted"]
    linted = {p: inside for p in names if (inside := _linted(scan, p)) is not None}
    if not linted:
        return []
    rules = scan.repo.ignored(linted)
    private = {p: rule for p, rule in rules.items() if not own_ignore(rule.source, p)}
    return _findings(scan, private, linted, private=True)


def _rules_above(scan: Scan) -> list[IntegrityFinding]:
    """Files ruff lints in the project that a ``.ignore`` above the repository names: when a
    lint gate of the base runs ruff, and ruff's own settings at the base do not leave them out
    (review 21: a ripgrep `~/.ignore` naming `migrations/`, which the project's
    `extend-exclude` skips as well, is no finding)."""
    if not _runs_ruff(scan):
        return []
    from pytest_agentgate.integrity.settings import ruff_excludes_at_base

    top = Path(scan.change.toplevel).resolve()
    above: list[tuple[Path, str]] = []
    for folder in top.parents:
        try:
            above.append((folder, read_regular_text(folder / ".ignore", errors="replace")))
        except OSError:
            continue  # none there (or no regular file: ruff reads none either)
    if not above:
        return []
    names = [*scan.repo.tracked_at(scan.change.base), *_added(scan)]
    linted = {
        p: inside
        for p in names
        if (inside := _linted(scan, p)) is not None and not ruff_excludes_at_base(scan, inside)
    }
    found: list[IntegrityFinding] = []
    for folder, text in above:
        source = folder / ".ignore"
        prefix = top.relative_to(folder).as_posix()
        ignored = ignored_by({".ignore": text}, [f"{prefix}/{p}" for p in linted])
        by_rule: dict[Ignored, list[str]] = {}
        for path, rule in ignored.items():
            by_rule.setdefault(rule, []).append(linted[path[len(prefix) + 1 :]])
        for rule, files in sorted(by_rule.items(), key=lambda item: item[0].line):
            files.sort()
            what = (
                files[0] if len(files) == 1 else f"{len(files)} files ({', '.join(files[:_SHOWN])})"
            )
            found.append(
                IntegrityFinding(
                    RULE,
                    f"{source}:{rule.line} `{rule.pattern}` ignores {what}: ruff skips files "
                    "a `.ignore` above the project names, and it is no part of the change; "
                    "take the line out",
                    files[0],
                    None,
                )
            )
    return found


def _nested_rules(scan: Scan) -> list[IntegrityFinding]:
    """Python files of the change in a git repository nested in the project that its own
    ignore rules name."""
    root = scan.root.resolve()
    added = [
        inside
        for path, entry in scan.change.files.items()
        if entry.status != "deleted" and (inside := _linted(scan, path)) is not None
    ]
    nested: dict[str, list[str]] = {}
    for inside in added:
        parts = inside.split("/")[:-1]
        for depth in range(len(parts), 0, -1):
            folder = "/".join(parts[:depth])
            if os.path.lexists(root / folder / ".git"):
                nested.setdefault(folder, []).append(inside[len(folder) + 1 :])
                break
    found: list[IntegrityFinding] = []
    for folder, files in sorted(nested.items()):
        top = root / folder
        texts: dict[str, str] = {}
        # Its private excludes read as a `.gitignore` at its top (the same patterns), first.
        exclude = _git_dir(top) / "info" / "exclude"
        for path in [exclude, *_ignore_files(top)]:
            name = ".gitignore" if path == exclude else path.relative_to(top).as_posix()
            with contextlib.suppress(OSError):
                texts[name] = texts.get(name, "") + read_regular_text(path, errors="replace") + "\n"
        for hidden, rule in sorted(ignored_by(texts, files).items()):
            found.append(
                IntegrityFinding(
                    RULE,
                    f"{folder}/ is a git repository of its own inside the project, and its "
                    f"ignore rule `{rule.pattern}` names {folder}/{hidden}: ruff skips what the "
                    "nested repository's rules name; make it a folder of the project",
                    f"{folder}/{hidden}",
                    None,
                )
            )
    return found


def _default_excluded(scan: Scan) -> list[IntegrityFinding]:
    """Python files the change adds in a folder ruff's default ``exclude`` skips, in a
    project whose base has no linted file in that folder."""
    added = {p: inside for p in _added(scan) if (inside := _linted(scan, p)) is not None}
    if not added or not _runs_ruff(scan):
        return []
    from pytest_agentgate.integrity.settings import ruff_default_excludes

    at_base: set[str] | None = None
    found: list[IntegrityFinding] = []
    for inside in sorted(added.values()):
        name = ruff_default_excludes(scan, inside)
        if name is None:
            continue
        parts = inside.split("/")
        folder = "/".join(parts[: next(i for i, p in enumerate(parts) if p == name) + 1])
        if at_base is None:
            at_base = {
                known
                for p in scan.repo.tracked_at(scan.change.base)
                if p.endswith(LINTED) and (known := scan.change.relative(p, scan.root))
            }
        if any(p.startswith(folder + "/") for p in at_base):
            continue  # the project keeps code there, unlinted at the base as well
        found.append(
            IntegrityFinding(
                RULE,
                f"{inside} is new in {folder}/, a folder ruff skips by default (`{name}` is one "
                "of its default excludes): the lint gate never reads it; put the code in a "
                "folder of another name",
                inside,
                None,
            )
        )
    return found


def _linked_folders(scan: Scan) -> list[IntegrityFinding]:
    """Python files the change adds through a link in the project to a folder (red team 40:
    `invoice/bands` -> `.venv/src/bands`, git-ignored): git lists what is inside, but ruff does
    not walk into a folder link, and coverage.py measures the files where they really are,
    outside ``source``."""
    if not _runs_ruff(scan):
        return []
    root = scan.root.resolve()
    links: dict[str, str] = {}
    for path, entry in scan.change.files.items():
        inside = _linted(scan, path)
        if entry.status != "added" or inside is None:
            continue
        parts = inside.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if (root / folder).is_symlink():
                links.setdefault(folder, inside)
                break
    if links:  # a link the base has is the project's own way (ruff skips it there too)
        tracked = set(scan.repo.tracked_at(scan.change.base))
        links = {f: first for f, first in links.items() if scan.repo_path(f) not in tracked}
    return [
        IntegrityFinding(
            RULE,
            f"{folder}/ is a link to {os.readlink(root / folder)}, and the change adds "
            f"{first} through it: ruff does not lint through a folder link, and coverage.py "
            "measures the files where they are; make the folder the project's own",
            first,
            None,
        )
        for folder, first in sorted(links.items())
    ]


def _git_dir(top: Path) -> Path:
    """The folder of the repository at ``top`` that holds its ``info/exclude``: ``.git``, or,
    where ``.git`` is a file (a worktree, a submodule), the folder its ``gitdir:`` names and
    that one's ``commondir`` (red team 36: a worktree whose main repository excluded `*.py`)."""
    dot = top / ".git"
    if not dot.is_file():
        return dot
    try:
        line = read_regular_text(dot, errors="replace").strip()
    except OSError:
        return dot
    folder = Path(line.removeprefix("gitdir:").strip())
    folder = folder if folder.is_absolute() else top / folder
    with contextlib.suppress(OSError):
        common = read_regular_text(folder / "commondir", errors="replace").strip()
        folder = Path(common) if Path(common).is_absolute() else folder / common
    return folder


def _ignore_files(top: Path) -> list[Path]:
    """The ``.gitignore`` and ``.ignore`` files under ``top`` (its ``.git`` left out)."""
    found: list[Path] = []
    for folder, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d != ".git"]
        found += [Path(folder) / n for n in sorted(names) if n in IGNORE_FILES]
        if len(found) > 1000:
            break
    return found


def _runs_ruff(scan: Scan) -> bool:
    """Whether a lint gate of the base runs ruff (its command names it, or reads its format)."""
    return any(
        gate.enabled
        and gate.kind == "lint"
        and not gate.from_change
        and (gate.format == "ruff" or _RUFF.search(gate.command or "") is not None)
        for gate in scan.config.gates
    )


# ruff named in a command: `ruff check`, `-m ruff`, `pytest_agentgate.tools ruff==0.15.6`.
_RUFF = re.compile(r"(?<![\w.-])ruff(?![\w-])")


def _findings(
    scan: Scan,
    ignored: Mapping[str, Ignored],
    inside: Mapping[str, str],
    *,
    private: bool,
    added: Set[str] = frozenset(),
) -> list[IntegrityFinding]:
    by_rule: dict[Ignored, list[str]] = {}
    for path, rule in ignored.items():
        by_rule.setdefault(rule, []).append(inside[path])
    out = []
    for rule, files in sorted(by_rule.items(), key=lambda item: (item[0].source, item[0].line)):
        files.sort()
        shown = ", ".join(files[:_SHOWN]) + (
            f" and {len(files) - _SHOWN} more" if len(files) > _SHOWN else ""
        )
        what = files[0] if len(files) == 1 else f"{len(files)} files"
        if private:
            message = (
                f"{rule.source}:{rule.line} `{rule.pattern}` ignores {what} tracked at the base"
                f"{'' if len(files) == 1 else f' ({shown})'}: ruff skips files git ignores, "
                "and the repository's private excludes are no part of the change; take the "
                "line out"
            )
            out.append(IntegrityFinding(RULE, message, files[0], None))
            continue
        name = PurePosixPath(rule.source).name
        where = scan.change.relative(rule.source, scan.root)
        known = "added by the change" if added >= set(files) else "tracked at the base"
        message = (
            f"{name} `{rule.pattern}` ignores {what}, {known}"
            f"{'' if len(files) == 1 else f' ({shown})'}: ruff skips files {name} names"
        )
        if where is None:  # a file above the project: named, the finding at the first file
            message = f"{rule.source}:{rule.line}: {message}"
        out.append(
            IntegrityFinding(
                RULE, message, where or files[0], rule.line if where is not None else None
            )
        )
    return out
