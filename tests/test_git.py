"""The change being gated, read from real git repositories the tests build."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_agentgate.git import EMPTY_TREE, Base, BaseMissing, GitError, Repo


def git(root: Path, *args: str, input_text: str | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    proc = subprocess.run(
        ["git", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        input=input_text,
    )
    return proc.stdout


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root / "pkg" / "a.py", "one = 1\ntwo = 2\nthree = 3\n")
    write(root / "tests" / "test_a.py", "def test_one():\n    assert 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def written_over(repo: Path, name: str, kind: str, content: bytes) -> None:
    """The loose object file of ``name`` written over with ``content`` (git keeps the name)."""
    import zlib

    path = repo / ".git" / "objects" / name[:2] / name[2:]
    path.chmod(0o644)
    path.write_bytes(zlib.compress(f"{kind} {len(content)}".encode() + b"\0" + content))


def test_an_object_of_the_base_written_over_is_not_read_as_the_base(repo: Path) -> None:
    # Red team 16: the base's agentgate.yml given a loosened text under its own name (git
    # never checks the hash of what it reads), so the change showed none.
    found = Repo.find(repo)
    assert found is not None
    base = found.resolve_base(explicit="HEAD")
    assert isinstance(base, Base)
    assert found.read_at(base, ["pkg/a.py"]) == {"pkg/a.py": "one = 1\ntwo = 2\nthree = 3\n"}
    blob = git(repo, "rev-parse", "HEAD:pkg/a.py").strip()
    written_over(repo, blob, "blob", b"one = 1\ntwo = 0\nthree = 3\n")
    assert git(repo, "show", "HEAD:pkg/a.py") == "one = 1\ntwo = 0\nthree = 3\n"  # git reads it
    with pytest.raises(GitError, match=rf"object {blob} \(pkg/a.py at the base\) does not hold"):
        found.read_at(base, ["pkg/a.py"])


def test_a_tree_of_the_base_written_over_is_not_read_as_the_base(repo: Path) -> None:
    # The same with the folder's tree: its entry pointed at another file's object.
    found = Repo.find(repo)
    assert found is not None
    base = found.resolve_base(explicit="HEAD")
    assert isinstance(base, Base)
    other = git(repo, "hash-object", "-w", "--stdin", input_text="two = 0\n").strip()
    tree = git(repo, "rev-parse", "HEAD:pkg").strip()
    written_over(repo, tree, "tree", b"100644 a.py\0" + bytes.fromhex(other))
    assert git(repo, "show", "HEAD:pkg/a.py") == "two = 0\n"
    with pytest.raises(GitError, match="written over"):
        found.read_at(base, ["pkg/a.py"])


def test_a_pipe_git_would_wait_on_forever_is_an_error_at_once(repo: Path) -> None:
    # Red team 16: a FIFO as objects/info/alternates made every git call hang until the stop
    # hook's time ran out, which lets the agent stop.
    import os

    from pytest_agentgate.git import unreadable_repository

    os.mkfifo(repo / ".git" / "objects" / "info" / "alternates")
    missing = unreadable_repository(repo)
    assert missing is not None
    assert "alternates is a pipe or a device, not a file: git would wait on it forever" in (
        missing.problem
    )


def test_an_edit_the_index_takes_as_the_bases_content_is_part_of_the_change(repo: Path) -> None:
    # Red team 18: `git add` through a clean filter that gives the base's text leaves an index
    # entry with the base's content and the edited file's size and times: git never reads the
    # file again, and `git diff` shows nothing.
    base_text = (repo / "pkg" / "a.py").read_text()
    (repo / ".git" / "base_a.py").write_text(base_text)
    write(repo / "pkg" / "a.py", "one = 1\ntwo = 0\nthree = 3\n")
    past = time.time() - 10  # older than the index git writes: not "racily clean"
    os.utime(repo / "pkg" / "a.py", (past, past))
    (repo / ".git" / "hide_attrs").write_text("pkg/a.py filter=hide\n")
    git(
        repo,
        "-c", f"filter.hide.clean=cat {repo / '.git' / 'base_a.py'}",
        "-c", f"core.attributesFile={repo / '.git' / 'hide_attrs'}",
        "add", "pkg/a.py",
    )  # fmt: skip
    (repo / ".git" / "hide_attrs").unlink()
    assert git(repo, "diff", "HEAD", "--stat") == ""  # git itself sees nothing
    found = Repo.find(repo)
    assert found is not None
    base = found.resolve_base(explicit="HEAD")
    assert isinstance(base, Base)
    change = found.change(base)
    assert change.files["pkg/a.py"].status == "modified"
    assert change.added_lines("pkg/a.py") == {2}


def test_a_git_lfs_file_as_its_pointer_names_it_is_no_change(repo: Path) -> None:
    # A review on real projects: through an index that knows nothing of the files, with the
    # filters off, every file Git LFS keeps read as changed against its pointer.
    import hashlib

    data = b"\x00binary translations\n" * 50
    pointer = (
        "version https://git-lfs.github.com/spec/v1\n"
        f"oid sha256:{hashlib.sha256(data).hexdigest()}\nsize {len(data)}\n"
    )
    write(repo / "data.mo", pointer)  # committed as Git LFS commits it: the pointer
    write(repo / "other.mo", pointer)
    write(repo / ".gitattributes", "*.mo filter=lfs diff=lfs merge=lfs -text\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lfs")
    (repo / "data.mo").write_bytes(data)  # checked out: the object itself
    (repo / "other.mo").write_bytes(data + b"edited")
    found = Repo.find(repo)
    assert found is not None
    base = found.resolve_base(explicit="HEAD")
    assert isinstance(base, Base)
    assert sorted(found.change(base).files) == ["other.mo"]


def test_no_repository_is_none(tmp_path: Path) -> None:
    assert Repo.find(tmp_path) is None


def test_the_change_from_the_merge_base_to_the_working_tree(repo: Path) -> None:
    base_sha = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo / "pkg" / "a.py", "one = 1\ntwo = 22\nthree = 3\nfour = 4\n")
    git(repo, "commit", "-qam", "edit")
    git(repo, "mv", "tests/test_a.py", "tests/test_b.py")  # staged rename, uncommitted
    write(repo / "new file.py", "x = 1\ny = 2\n")  # untracked, with a space in its name
    found = Repo.find(repo / "pkg")
    assert found is not None and found.toplevel == repo.resolve()
    base = found.resolve_base()
    assert isinstance(base, Base)
    assert (base.sha, base.ref, base.how) == (base_sha, "main", "merge-base of HEAD with main")
    change = found.change(base)
    assert change.files["pkg/a.py"].status == "modified"
    assert change.added_lines("pkg/a.py") == {2, 4}
    renamed = change.files["tests/test_b.py"]
    assert (renamed.status, renamed.old_path) == ("renamed", "tests/test_a.py")
    assert change.files["new file.py"].status == "added"
    assert change.added_lines("new file.py") == {1, 2}
    texts = found.read_at(base, ["tests/test_a.py", "pkg/a.py", "nope.py"])
    assert texts["tests/test_a.py"] == "def test_one():\n    assert 1\n"
    assert texts["nope.py"] is None
    assert sorted(found.tracked_at(base)) == ["pkg/a.py", "tests/test_a.py"]
    assert change.relative("pkg/a.py", repo / "pkg") == "a.py"
    assert change.relative("tests/test_b.py", repo / "pkg") is None


def test_deleted_files_and_an_explicit_base(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "tests" / "test_a.py").unlink()
    found = Repo.find(repo)
    assert found is not None
    base = found.resolve_base(explicit="HEAD", configured="main")
    assert isinstance(base, Base) and base.how == "--base" and base.sha == first
    assert found.change(base).files["tests/test_a.py"].status == "deleted"
    configured = found.resolve_base(configured="main")
    assert isinstance(configured, Base) and configured.how == "base: in the configuration"
    missing = found.resolve_base(explicit="origin/nope")
    assert isinstance(missing, BaseMissing)
    assert "'origin/nope'" in missing.problem and "git fetch origin nope" in missing.fix


def test_origin_head_names_the_default_branch(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "-b", "work")
    found = Repo.find(clone)
    assert found is not None and found.default_branch() == "origin/main"


def test_a_shallow_clone_says_how_to_fetch_the_base(repo: Path, tmp_path: Path) -> None:
    for n in range(3):
        write(repo / "pkg" / "a.py", f"n = {n}\n")
        git(repo, "commit", "-qam", f"c{n}")
    git(repo, "checkout", "-q", "-b", "side", "HEAD~3")
    write(repo / "side.py", "s = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "side")
    git(repo, "checkout", "-q", "main")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth=1", "--branch", "side", f"file://{repo}", str(clone))
    git(clone, "fetch", "-q", "--depth=1", "origin", "main:refs/remotes/origin/main")
    found = Repo.find(clone)
    assert found is not None and found.is_shallow()
    missing = found.resolve_base()
    assert isinstance(missing, BaseMissing)
    assert "no common commit" in missing.problem and "git fetch --unshallow" in missing.fix


def test_a_repository_without_commits_has_the_empty_tree_as_base(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path / "a.py", "a = 1\n")
    found = Repo.find(tmp_path)
    assert found is not None
    base = found.resolve_base()
    assert isinstance(base, Base) and base.sha == EMPTY_TREE
    change = found.change(base)
    assert change.files["a.py"].status == "added" and change.added_lines("a.py") == {1}
    assert found.read_at(base, ["a.py"]) == {"a.py": None}


def test_without_a_default_branch_the_base_is_head(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "trunk")
    write(tmp_path / "a.py", "a = 1\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "first")
    write(tmp_path / "a.py", "a = 2\n")
    found = Repo.find(tmp_path)
    assert found is not None and found.default_branch() is None
    base = found.resolve_base()
    assert isinstance(base, Base) and base.ref == "HEAD"
    assert base.sha == git(tmp_path, "rev-parse", "HEAD").strip()
    assert "no default branch found" in base.how
    assert found.change(base).added_lines("a.py") == {1}


def test_the_first_default_branch_that_exists_is_taken(repo: Path) -> None:
    git(repo, "branch", "-m", "main", "master")
    git(repo, "checkout", "-q", "-b", "work")
    found = Repo.find(repo)
    assert found is not None and found.default_branch() == "master"
    assert found.commits(["master", "nope", "HEAD"])[1] is None


# -- what the repository's own settings would hide -------------------------------------------------
# .git/config, .git/info and the index are not part of the change, and one command changes them:
# the change is read past each of them.

SKIPPED = "import pytest\n\n\n@pytest.mark.skip\ndef test_one():\n    assert 1\n"


def _change_of(repo: Path) -> dict[str, tuple[str, set[int]]]:
    found = Repo.find(repo)
    assert found is not None
    base = found.resolve_base()
    assert isinstance(base, Base)
    return {p: (f.status, f.lines) for p, f in found.change(base).files.items()}


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_an_edit_the_index_is_told_to_ignore_is_part_of_the_change(repo: Path, flag: str) -> None:
    write(repo / "tests" / "test_a.py", SKIPPED)
    git(repo, "update-index", flag, "tests/test_a.py")
    assert git(repo, "diff", "--name-only", "HEAD") == ""  # what git itself says
    assert _change_of(repo) == {"tests/test_a.py": ("modified", {1, 2, 3, 4})}
    # The repository's index keeps its flag: agentgate read a copy.
    assert git(repo, "ls-files", "-v", "tests/test_a.py")[0] in "hS"


def test_a_sparse_entry_without_a_file_is_not_a_change(repo: Path) -> None:
    git(repo, "update-index", "--skip-worktree", "tests/test_a.py")
    (repo / "tests" / "test_a.py").unlink()
    assert _change_of(repo) == {}


def test_a_clean_filter_that_hides_an_edit_is_switched_off(repo: Path) -> None:
    write(repo / "tests" / "test_a.py", SKIPPED)
    write(repo / ".git" / "info" / "attributes", "*.py filter=hide\n")
    git(repo, "config", "filter.hide.clean", "git show HEAD:%f")
    git(repo, "config", "filter.hide.required", "true")
    assert git(repo, "diff", "--name-only", "HEAD") == ""
    assert _change_of(repo) == {"tests/test_a.py": ("modified", {1, 2, 3, 4})}


def test_every_clean_filter_is_switched_off_git_lfs_too() -> None:
    from pytest_agentgate.git import filter_overrides

    # Git LFS's own would turn code an attribute assigns to it into a pointer.
    lfs = (
        "filter.lfs.clean\ngit-lfs clean -- %f\0filter.lfs.smudge\ngit-lfs smudge -- %f\0"
        "filter.lfs.process\ngit-lfs filter-process\0filter.lfs.required\ntrue\0"
        "filter.other.clean\ncat\0"
    )
    assert filter_overrides(lfs) == [
        "filter.lfs.clean=",
        "filter.lfs.process=",
        "filter.lfs.smudge=",
        "filter.lfs.required=false",
        "filter.other.clean=",
        "filter.other.process=",
        "filter.other.smudge=",
        "filter.other.required=false",
    ]


def test_the_repositorys_fsmonitor_is_not_asked(repo: Path, tmp_path: Path) -> None:
    asked = tmp_path / "asked"
    hook = tmp_path / "fsmonitor"
    hook.write_text(f"#!/bin/sh\necho asked >> '{asked}'\nprintf 'token\\0'\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    write(repo / "tests" / "test_a.py", SKIPPED)
    assert _change_of(repo)["tests/test_a.py"][0] == "modified"
    assert not asked.exists()


def test_files_only_a_private_exclude_hides_are_part_of_the_change(repo: Path) -> None:
    write(repo / "tests" / "conftest.py", "def pytest_collection_modifyitems(items):\n    pass\n")
    write(repo / "tests" / "hidden" / "test_x.py", "def test_x():\n    pass\n")
    write(repo / "tests" / "hidden" / "data.bin", "x")
    write(repo / ".venv" / "lib" / "site.py", "x = 1\n")  # not the project's: not looked into
    write(repo / "notes.log", "x\n")
    write(repo / ".git" / "info" / "exclude", "conftest.py\nhidden/\n.venv/\n*.log\n")
    assert _change_of(repo) == {
        "tests/conftest.py": ("added", {1, 2}),
        "tests/hidden/test_x.py": ("added", {1, 2}),
    }


def test_the_projects_own_ignore_rules_hold_unless_the_change_edits_them(repo: Path) -> None:
    write(repo / ".gitignore", "generated_*.py\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore generated code")
    write(repo / "pkg" / "generated_a.py", "x = 1\n")
    assert _change_of(repo) == {}
    # The change adds a .gitignore that hides a new conftest: both are part of the change.
    write(repo / "tests" / ".gitignore", ".gitignore\nconftest.py\n")
    write(repo / "tests" / "conftest.py", "import os\n")
    assert _change_of(repo) == {
        "tests/.gitignore": ("added", {1, 2}),
        "tests/conftest.py": ("added", {1}),
    }


def test_a_projects_gitignore_named_as_the_global_excludes_file_is_not_the_project(
    repo: Path,
) -> None:
    # docs/.gitignore ignores *.py under docs/ only; as core.excludesFile it ignores every .py.
    write(repo / "docs" / ".gitignore", "*.py\n")
    git(repo, "add", "docs/.gitignore")
    git(repo, "commit", "-qm", "docs")
    git(repo, "config", "core.excludesFile", "docs/.gitignore")
    write(repo / "docs" / "conf.py", "x = 1\n")  # ignored by the project itself
    write(repo / "tests" / "conftest.py", "x = 1\n")
    assert _change_of(repo) == {"tests/conftest.py": ("added", {1})}


def test_a_commit_is_exported_without_running_the_repositorys_filters(
    repo: Path, tmp_path: Path
) -> None:
    # Git LFS would fetch every large file; any other filter runs a command of the repository's.
    ran = tmp_path / "smudged"
    write(repo / ".gitattributes", "*.py filter=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    git(repo, "config", "filter.evil.smudge", f"sh -c 'touch {ran}; cat'")
    git(repo, "config", "filter.evil.required", "true")
    found = Repo.find(repo)
    assert found is not None
    index = (repo / ".git" / "index").read_bytes()
    dest = tmp_path / "out"
    found.export(git(repo, "rev-parse", "HEAD").strip(), dest, tmp_path / "index")
    assert (dest / "pkg" / "a.py").read_text() == "one = 1\ntwo = 2\nthree = 3\n"
    assert not ran.exists()
    assert (repo / ".git" / "index").read_bytes() == index  # the repository's index is untouched


def test_a_commit_is_exported_as_git_keeps_it_whatever_the_attributes_say(
    repo: Path, tmp_path: Path
) -> None:
    # Red team 39: `working-tree-encoding=UTF-16` in `.git/info/attributes` (no part of the
    # change) wrote the base's tests as UTF-16, its collection failed, nothing was compared.
    write(repo / "bin" / "run", "#!/bin/sh\necho run\n")
    (repo / "bin" / "run").chmod(0o755)
    (repo / "link.py").symlink_to("pkg/a.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a script and a link")
    write(repo / ".git" / "info" / "attributes", "*.py working-tree-encoding=UTF-16 eol=crlf\n")
    found = Repo.find(repo)
    assert found is not None
    dest = tmp_path / "out"
    found.export(git(repo, "rev-parse", "HEAD").strip(), dest, tmp_path / "index")
    assert (dest / "pkg" / "a.py").read_bytes() == b"one = 1\ntwo = 2\nthree = 3\n"
    assert os.access(dest / "bin" / "run", os.X_OK)
    assert os.readlink(dest / "link.py") == "pkg/a.py"
    assert (dest / "link.py").read_bytes() == (dest / "pkg" / "a.py").read_bytes()


@pytest.mark.parametrize("what", ["blob", "commit"])
def test_a_replacement_object_does_not_stand_in_for_the_base(repo: Path, what: str) -> None:
    # `git replace` makes git read another object wherever the base's is named.
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "work")
    write(repo / "tests" / "test_a.py", SKIPPED)
    if what == "blob":
        fake = git(repo, "hash-object", "-w", "tests/test_a.py").strip()
        git(repo, "replace", git(repo, "rev-parse", f"{base}:tests/test_a.py").strip(), fake)
    else:
        git(repo, "add", "-A")
        tree = git(repo, "write-tree").strip()
        git(repo, "replace", base, git(repo, "commit-tree", "-m", "fake base", tree).strip())
    assert git(repo, "diff", "--name-only", "main") == ""
    assert _change_of(repo) == {"tests/test_a.py": ("modified", {1, 2, 3, 4})}


def test_files_git_lists_as_one_folder_are_part_of_the_change(repo: Path, tmp_path: Path) -> None:
    # A nested repository and a link to a folder outside the repository are one entry each
    # in git's listing; pytest collects what is inside them.
    write(repo / "tests" / "ext" / "conftest.py", "x = 1\n")
    write(repo / "tests" / "ext" / "deep" / "test_d.py", "def test_d():\n    pass\n")
    git(repo / "tests" / "ext", "init", "-q")
    outside = tmp_path / "outside"
    write(outside / "conftest.py", "y = 1\n")
    write(outside / "sub" / "test_s.py", "z = 1\n")
    (outside / "sub" / "loop").symlink_to(outside)  # each real folder is read once
    (repo / "tests" / "linked").symlink_to(outside)
    assert _change_of(repo) == {
        "tests/ext/conftest.py": ("added", {1}),
        "tests/ext/deep/test_d.py": ("added", {1, 2}),
        "tests/linked/conftest.py": ("added", {1}),
        "tests/linked/sub/test_s.py": ("added", {1}),
    }


def test_code_an_attribute_calls_binary_still_has_its_lines(repo: Path) -> None:
    # `-diff` makes `git diff` print "Binary files differ" and no hunk: no changed line, and
    # patch coverage had nothing to measure.
    write(repo / "pkg" / "a.py", "one = 1\ntwo = 2\nthree = 3\nfour = 4\n")
    write(repo / "pkg" / "new.py", "x = 1\n")
    write(repo / ".git" / "info" / "attributes", "*.py -diff\n")
    git(repo, "add", "pkg/new.py")
    assert "Binary files" in git(repo, "diff", "HEAD")
    assert _change_of(repo) == {
        "pkg/a.py": ("modified", {4}),
        "pkg/new.py": ("added", {1}),
    }


@pytest.mark.parametrize("setting", ["diff.mnemonicPrefix", "diff.noprefix"])
def test_the_diffs_prefixes_are_agentgates(repo: Path, setting: str) -> None:
    # `+++ w/pkg/a.py` (or no prefix) named another file, and its lines were lost.
    git(repo, "config", setting, "true")
    write(repo / ".git" / "info" / "attributes", "*.py -diff\n")
    write(repo / "pkg" / "a.py", "one = 1\ntwo = 2\nthree = 3\nfour = 4\n")
    assert _change_of(repo) == {"pkg/a.py": ("modified", {4})}


def test_an_edit_flagged_in_the_index_and_called_binary_keeps_its_lines(repo: Path) -> None:
    write(repo / "pkg" / "a.py", "one = 1\ntwo = 2\nthree = 3\nfour = 4\n")
    git(repo, "update-index", "--assume-unchanged", "pkg/a.py")
    write(repo / ".git" / "info" / "attributes", "*.py -diff\n")
    assert _change_of(repo) == {"pkg/a.py": ("modified", {4})}


def test_an_edited_gitignore_keeps_the_bases_lines(repo: Path) -> None:
    # The developer's own ignored files stay ignored when the change adds a line, but for what
    # pytest loads from them (a conftest.py, a test module); what the new line hides is part of
    # the change.
    write(repo / ".gitignore", "generated/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore generated")
    write(repo / "generated" / "data.py", "x = 1\n")
    write(repo / "generated" / "conftest.py", "x = 1\n")
    write(repo / ".gitignore", "generated/\n.env\nhidden_conftest/\n")
    write(repo / "hidden_conftest" / "helper.py", "y = 1\n")
    assert _change_of(repo) == {
        ".gitignore": ("modified", {2, 3}),
        "generated/conftest.py": ("added", {1}),
        "hidden_conftest/helper.py": ("added", {1}),
    }


def test_a_folder_too_large_to_read_whole_is_said(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate import git as git_module

    monkeypatch.setattr(git_module, "MAX_HIDDEN_FILES", 3)
    for i in range(5):
        write(repo / "aaa" / f"m{i}.py", "x = 1\n")
    git(repo / "aaa", "init", "-q")
    write(repo / "zzz_conftest.py", "y = 1\n")
    found = Repo.find(repo)
    assert found is not None
    base = found.resolve_base()
    assert isinstance(base, Base)
    with pytest.raises(GitError, match=r"aaa holds more than .* the change cannot be read whole"):
        found.change(base)


def test_a_virtual_environment_no_ignore_rule_names_is_not_the_change(repo: Path) -> None:
    # A fourth review: Python 3.12's `venv` writes no .gitignore into the environment, and a
    # project that ignores none had the environment's 978 files of installed code judged as
    # its change. A folder named alike without a pyvenv.cfg is the project's.
    write(repo / "py312" / "pyvenv.cfg", "home = /usr/bin\n")
    write(repo / "py312" / "lib" / "python3.12" / "site-packages" / "mod.py", "x = 1\n")
    (repo / "py312" / "bin").mkdir()
    (repo / "py312" / "bin" / "python").symlink_to(sys.executable)
    write(repo / "env" / "test_env.py", "def test_env():\n    pass\n")
    # Red team 30: a pyvenv.cfg (and an interpreter) added to the tests' folder took the
    # conftest.py beside it out of the change; nor is a folder with code at its top an
    # environment.
    for folder in ("tests", "fake"):
        write(repo / folder / "pyvenv.cfg", "home = /usr/bin\n")
        (repo / folder / "bin").mkdir()
        (repo / folder / "bin" / "python").symlink_to(sys.executable)
        write(repo / folder / "sub" / "conftest.py", "x = 1\n")
    write(repo / "fake" / "conftest.py", "x = 1\n")
    # Red team 31: nor is one whose __init__ is an extension module (a `pytest/` of its own).
    write(repo / "pytest" / "pyvenv.cfg", "home = /usr/bin\n")
    (repo / "pytest" / "bin").mkdir()
    (repo / "pytest" / "bin" / "python").symlink_to(sys.executable)
    write(repo / "pytest" / "__init__.cpython-311-x86_64-linux-gnu.so", "\x7fELF")
    found = Repo.find(repo)
    assert found is not None
    base = found.resolve_base()
    assert isinstance(base, Base)
    assert sorted(p for p in found.change(base).files if "pyvenv" not in p and "bin/" not in p) == [
        "env/test_env.py",
        "fake/conftest.py",
        "fake/sub/conftest.py",
        "pytest/__init__.cpython-311-x86_64-linux-gnu.so",
        "tests/sub/conftest.py",
    ]


@pytest.mark.parametrize("trouble", ["cannot-start", "dies-first"])
def test_calls_whose_thread_never_ran_them_are_run_all_the_same(
    trouble: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under coverage.py, Python 3.11's `threading.settrace` can raise in a new thread before
    # it runs its target: the empty slot was read as a result, and a test count that fell
    # passed the integrity gate.
    import threading

    from pytest_agentgate.git import side_by_side

    def cannot_start(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    if trouble == "cannot-start":
        monkeypatch.setattr(threading.Thread, "start", cannot_start)
    else:
        monkeypatch.setattr(threading.Thread, "run", lambda self: None)
    assert side_by_side([lambda: 1, lambda: None, lambda: 3]) == [1, None, 3]
