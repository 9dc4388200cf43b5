"""The verdict cache: an unchanged tree reuses its judged gates; anything changed runs afresh."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from _helpers import STRICT_TESTS, gated_project, git

from pytest_agentgate.cli.main import main
from pytest_agentgate.state import cache

REUSED = "its judged gates were reused"
CONFIG = """\
profile: strict
gates:
  build:
    command: python -c "import sys, pathlib; sys.exit(0 if pathlib.Path('ok').exists() else 1)"
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'r'\n")
    (root / "agentgate.yml").write_text(CONFIG)
    (root / ".gitignore").write_text("secret.dat\n")
    (root / "code.py").write_text("x = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    return root


def verify(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    main(["verify", "--format", "json", *args])
    verdict: dict[str, Any] = json.loads(capsys.readouterr().out)
    return verdict


def reused(verdict: dict[str, Any]) -> bool:
    return any(REUSED in note for note in verdict["notices"])


def test_an_unchanged_tree_reuses_the_judged_gates_and_is_the_same_attempt(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Asking again about the same tree is no new try at the work (red team 16 spent the
    # task's whole budget with `verify --task` on an unchanged tree, and the first stop
    # escalated): one unchanged tree, one attempt.
    first = verify(capsys, "--task", "t")
    second = verify(capsys, "--task", "t")
    assert not reused(first) and reused(second)
    assert second["gates"] == first["gates"]
    assert first["attempt"] == second["attempt"] == {"number": 1, "max": 3}
    for _ in range(5):
        assert verify(capsys, "--task", "t")["attempt"] == {"number": 1, "max": 3}
    lines = (repo / ".agentgate" / "history.jsonl").read_text().splitlines()
    first_line, second_line = (json.loads(line) for line in lines[:2])
    assert "reused" not in first_line
    assert (
        abs(datetime.fromisoformat(second_line["reused"]).timestamp() - first_line["ts"]) < 5
    )  # the history says which run it reused


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "code.py").write_text("x = 2\n"),
        lambda root: (root / "code.py").unlink(),
        lambda root: (root / "new_test.py").write_text("def test_new(): pass\n"),
        lambda root: (root / "secret.dat").write_text("read by a test\n"),
        lambda root: (root / "ok").write_text(""),
        lambda root: (root / "agentgate.yml").write_text(CONFIG.replace("strict", "standard")),
    ],
    ids=[
        "tracked-file",
        "deleted-file",
        "untracked-file",
        "ignored-file",
        "what-the-command-reads",
        "config",
    ],
)
def test_any_change_in_the_tree_runs_afresh(
    change: Callable[[Path], object], repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "secret.dat").write_text("before\n")
    verify(capsys)
    change(repo)
    assert not reused(verify(capsys))


def _set_back(path: Path, text: str) -> None:
    """Write ``text`` keeping the file's size and times, as an agent hiding an edit would."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize(
    ("hide", "edited"),
    [
        (lambda root: git(root, "update-index", "--assume-unchanged", "code.py"), "code.py"),
        (lambda root: git(root, "update-index", "--skip-worktree", "code.py"), "code.py"),
        (lambda root: (root / ".git" / "info" / "exclude").write_text("conf*.py\n"), "conf.py"),
    ],
    ids=["assume-unchanged", "skip-worktree", "private-exclude"],
)
def test_an_edit_hidden_from_git_runs_afresh(
    hide: Callable[[Path], object], edited: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What .git/ says about the tree is not the tree: the key reads past it (git.py).
    (repo / "conf.py").write_text("x = 1\n")
    hide(repo)
    verify(capsys)
    assert reused(verify(capsys))
    _set_back(repo / edited, "x = 3\n")
    assert not reused(verify(capsys))


def test_an_edit_the_index_takes_as_the_runs_content_runs_afresh(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 18: the file edited, then `git add` through a clean filter that gives the old
    # text: git's index holds the old content with the edited file's size and times, and
    # `git status` shows nothing.
    verify(capsys)
    (repo / ".git" / "old.py").write_text((repo / "code.py").read_text())
    (repo / "code.py").write_text("x = 3\n")
    past = time.time() - 10
    os.utime(repo / "code.py", (past, past))
    (repo / ".git" / "attrs").write_text("code.py filter=old\n")
    git(
        repo,
        "-c", f"filter.old.clean=cat {repo / '.git' / 'old.py'}",
        "-c", f"core.attributesFile={repo / '.git' / 'attrs'}",
        "add", "code.py",
    )  # fmt: skip
    assert not reused(verify(capsys))


def test_an_edit_through_a_linked_folder_runs_afresh(
    repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "conftest.py").write_text("x = 1\n")
    (repo / "linked").symlink_to(outside)
    verify(capsys)
    assert reused(verify(capsys))
    _set_back(outside / "conftest.py", "x = 2\n")
    assert not reused(verify(capsys))


def test_an_edit_inside_a_nested_repository_runs_afresh(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "ext").mkdir()
    (repo / "ext" / "test_e.py").write_text("x = 1\n")
    git(repo / "ext", "init", "-q")
    verify(capsys)
    assert reused(verify(capsys))
    _set_back(repo / "ext" / "test_e.py", "x = 2\n")
    assert not reused(verify(capsys))


NOT_REUSED = "judged the same tree and configuration but was not reused"


def not_reused_because(verdict: dict[str, Any]) -> list[str]:
    return [n for n in verdict["notices"] if NOT_REUSED in n]


def test_a_different_environment_runs_afresh_and_says_which_variable(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTGATE_TEST_GONE", "was here")
    verify(capsys)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k nothing")
    monkeypatch.delenv("AGENTGATE_TEST_GONE")
    again = verify(capsys)
    assert not reused(again)
    (why,) = not_reused_because(again)
    assert "the environment (AGENTGATE_TEST_GONE, PYTEST_ADDOPTS) differ" in why
    assert "-k nothing" not in why and "was here" not in why  # names, never values


def test_a_changed_value_is_told_by_name_and_the_entry_keeps_no_value(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "s3cr3t-value")
    verify(capsys)
    entry = cache._entry_path(repo)
    assert "s3cr3t-value" not in entry.read_text()
    assert entry.stat().st_mode & 0o077 == 0  # the user's own file
    monkeypatch.setenv("DEPLOY_TOKEN", "another")
    (why,) = not_reused_because(verify(capsys))
    assert "(DEPLOY_TOKEN)" in why


def test_a_changed_tree_is_no_surprise_and_not_explained(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    verify(capsys)
    (repo / "code.py").write_text("x = 2\n")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-k nothing")
    assert not_reused_because(verify(capsys)) == []


def test_a_run_stopped_by_a_signal_still_says_why_it_was_not_reused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A timeout ends the run before its verdict: the reason it ran everything again is still
    shown (on stderr), since that is what the user needs to make the next one fast."""
    (repo / "agentgate.yml").write_text(
        'profile: strict\ngates:\n  build:\n    command: >-\n      python -c "import os,'
        " time; p = os.environ.get('SLOW'); p and (open(p, 'w').close(), time.sleep(30))\"\n"
    )
    git(repo, "commit", "-q", "-am", "a build that is slow when asked")
    verify(capsys)
    started = repo.parent / "build-started"
    env = {**os.environ, "SLOW": str(started)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_agentgate", "verify", "--format", "text"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120  # however loaded the machine, stop it inside its build
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the slow build never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert NOT_REUSED in err and "the environment (SLOW) differ" in err


def test_a_tool_installed_or_upgraded_runs_afresh(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = tmp_path / "tools"
    (venv / "bin").mkdir(parents=True)
    site = venv / "lib" / "python3.99" / "site-packages"
    site.mkdir(parents=True)
    tool = venv / "bin" / "checker"
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    (repo / "agentgate.yml").write_text("profile: strict\ngates:\n  build:\n    command: checker\n")
    git(repo, "commit", "-q", "-am", "the build runs the checker")  # the base's config is the law
    verify(capsys)
    assert reused(verify(capsys))
    time.sleep(0.01)
    (site / "newpkg-2.0.dist-info").mkdir()  # pip install changes the folder
    assert not reused(verify(capsys))


def test_a_stop_hooks_own_path_and_variables_still_reuse_the_agents_run(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent ran verify in its shell; the harness's stop hook runs it with another PATH and
    variables that locate the harness: the same tools, so the same run."""
    verify(capsys)
    harness_bin = tmp_path / "harness-bin"
    harness_bin.mkdir()
    (harness_bin / "harness-helper").write_text("#!/bin/sh\n")
    monkeypatch.setenv("PATH", f"{harness_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    monkeypatch.setenv("COPILOT_HOOK_DIR", str(tmp_path))
    monkeypatch.setenv("GEMINI_SESSION_ID", "0b1e")
    assert reused(verify(capsys))


def test_the_stop_hook_after_the_agents_verify_reuses_its_run_and_judges_the_words(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook's session gate (the agent's last message) is judged afresh; the rest is the
    run the agent just made."""
    import io

    (repo / "ok").write_text("")
    assert verify(capsys)["status"] == "pass"
    event = {
        "session_id": "s-1",
        "cwd": str(repo),
        "hook_event_name": "Stop",
        "last_assistant_message": "Done; the remaining work can go in a follow-up PR.",
    }
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(event).encode())))
    assert main(["hook", "claude"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["decision"] == "block" and "follow-up PR" in answer["reason"]
    last = json.loads((repo / ".agentgate" / "history.jsonl").read_text().splitlines()[-1])
    assert last["source"] == "hook:claude" and "reused" in last
    assert [g["name"] for g in last["gates"]] == ["integrity", "build", "session"]


def test_a_path_that_finds_another_command_tool_runs_afresh(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PATH whose ``checker`` is another program (one that always exits 0) is not the run's."""
    for folder, code in (("tools", 1), ("shadow", 0)):
        (tmp_path / folder).mkdir()
        tool = tmp_path / folder / "checker"
        tool.write_text(f"#!/bin/sh\nexit {code}\n")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'tools'}{os.pathsep}{os.environ['PATH']}")
    (repo / "agentgate.yml").write_text("profile: strict\ngates:\n  build:\n    command: checker\n")
    git(repo, "commit", "-q", "-am", "the build runs the checker")
    assert verify(capsys)["status"] == "fail"
    monkeypatch.setenv("PATH", f"{tmp_path / 'shadow'}{os.pathsep}{os.environ['PATH']}")
    again = verify(capsys)
    assert not reused(again) and again["status"] == "pass"
    assert "the tools on the commands' PATH" in " ".join(not_reused_because(again))


def test_a_program_shadowed_on_path_for_one_run_is_not_reused_without_it(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent passes once with a fake ``hostname`` first on PATH (a test runs it); the stop
    hook, without that folder, must not reuse the pass."""
    fakebin = tmp_path / "fakebin"
    fakebin.mkdir()
    (fakebin / "hostname").write_text("#!/bin/sh\necho expected-host\n")
    (fakebin / "hostname").chmod(0o755)
    check = (
        "import subprocess, sys; "
        "out = subprocess.run(['hostname'], capture_output=True, text=True).stdout; "
        "sys.exit(out.strip() != 'expected-host')"
    )
    (repo / "agentgate.yml").write_text(
        f'profile: strict\ngates:\n  build:\n    command: python -c "{check}"\n'
    )
    git(repo, "commit", "-q", "-am", "the build asks the host's name")
    clean_path = os.environ["PATH"]
    monkeypatch.setenv("PATH", f"{fakebin}{os.pathsep}{clean_path}")
    assert verify(capsys)["status"] == "pass"
    monkeypatch.setenv("PATH", clean_path)
    again = verify(capsys)
    assert not reused(again) and again["status"] == "fail"
    assert f"PATH (the run's had {fakebin.resolve()}, this one does not)" in " ".join(
        not_reused_because(again)
    )


@pytest.mark.parametrize(
    ("variables", "reuse"),
    [
        (
            {
                "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "core.pager",
                "GIT_CONFIG_VALUE_0": "cat",
            },
            True,
        ),
        (
            {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "app.mode", "GIT_CONFIG_VALUE_0": "ok"},
            False,
        ),
        ({"GIT_CONFIG_GLOBAL": "/dev/null"}, False),
        ({"LC_ALL": "C.UTF-8", "PAGER": "cat", "NO_COLOR": "1", "GIT_TERMINAL_PROMPT": "0"}, True),
        ({"LC_ALL": "tr_TR.UTF-8"}, False),
        # A variable named like a harness's that no harness gives (red team 16: the code
        # under test read it, and a run primed with it was reused by the stop hook).
        ({"CLAUDE_TAX_PROFILE": "1"}, False),
        ({"TERM": "vt-zero"}, False),  # red team 18: the code under test read it
        # What Claude Code and Codex give their agents' shells and not their hooks, measured
        # (tests_e2e/harness): reading one is test-detected, so the cache need not key it.
        ({"AI_AGENT": "x", "CLAUDE_CODE_EXECPATH": "/x", "CODEX_CI": "1"}, True),
        ({"SHELL": "/bin/sh"}, True),
        ({"SHELL": "vt-zero"}, False),
        ({"SHELL": "/tmp/zero-rate/bash"}, False),  # red team 20: a "shell" of its own
        ({"CLAUDE_PROJECT_DIR": "/elsewhere", "CODEX_HOME": "/elsewhere"}, True),
        ({"STOP_HOOK_DIR": "/elsewhere"}, True),  # where a stop hook's runner runs from
        ({"PAGER": "/tmp/evil"}, False),
        ({"MYAPP_PROJECT_DIR": "/elsewhere"}, False),
    ],
    ids=[
        "harness-git-setting",
        "other-git-setting",
        "no-global-git-config",
        "harness-values",
        "another-locale",
        "a-harness-like-name",
        "a-terminal-of-the-agents",
        "the-harnesses-shell-variables",
        "a-shell",
        "a-shell-that-is-no-shell",
        "a-shell-of-the-agents",
        "harness-own-variables",
        "a-hook-runners-folder",
        "another-pager",
        "a-projects-own-variable",
    ],
)
def test_a_harness_variable_is_ignored_only_with_the_value_a_harness_gives_it(
    repo: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variables: dict[str, str],
    reuse: bool,
) -> None:
    """The agent's shell (a harness's) may have these; a value of the agent's choosing is a
    different environment, and its run is not the stop hook's."""
    for name in ("LC_ALL", "PAGER", "NO_COLOR", "GIT_TERMINAL_PROMPT", "GIT_CONFIG_COUNT"):
        monkeypatch.delenv(name, raising=False)
    with monkeypatch.context() as shell:
        for name, value in variables.items():
            shell.setenv(name, value)
        verify(capsys)
    assert reused(verify(capsys)) is reuse


def test_no_cache_runs_everything_again(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    verify(capsys)
    assert not reused(verify(capsys, "--no-cache"))


def test_the_projects_state_folder_is_not_where_the_cache_lives(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Deleting or writing .agentgate/ cannot plant or remove a cached verdict."""
    verify(capsys)
    for path in (repo / ".agentgate").iterdir():
        if path.is_file():
            path.unlink()
    (repo / ".agentgate" / "verdict.json").write_text('{"status": "pass"}')
    again = verify(capsys)
    assert reused(again) and again["status"] == "fail"


def test_the_agents_words_are_judged_every_time(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "ok").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ok")
    first = verify(capsys, "--claim", "Done, everything passes.")
    assert first["status"] == "pass"
    second = verify(capsys, "--claim", "Done; the rest goes in a follow-up PR.")
    assert reused(second) and second["status"] == "fail"


def test_outside_git_nothing_is_cached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "agentgate.yml").write_text(CONFIG)
    monkeypatch.chdir(root)
    verify(capsys)
    assert not reused(verify(capsys))


def test_a_file_in_an_ignored_folder_counts_too(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / ".gitignore").write_text("secret.dat\nfixtures/\n")
    git(repo, "commit", "-q", "-am", "ignore fixtures")
    (repo / "fixtures" / "deep").mkdir(parents=True)
    (repo / "fixtures" / "deep" / "data.json").write_text("{}")
    verify(capsys)
    assert reused(verify(capsys))
    (repo / "fixtures" / "deep" / "data.json").write_text('{"changed": true}')
    assert not reused(verify(capsys))


@pytest.mark.parametrize(
    ("name", "size"),
    [("secret.dat", 40), ("code.py", 9 * 1024 * 1024)],
    ids=["an-ignored-data-file", "a-module-too-big-to-hash"],
)
def test_a_file_set_back_to_its_size_and_time_runs_afresh(
    name: str, size: int, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 23: a git-ignored data file the product reads, and an 8 MiB module, swapped at
    # the same size with `touch -r` after a passing run was kept. The inode's change time is
    # no one's to set back.
    (repo / name).write_text("a" * (size - 1) + "\n")
    verify(capsys)
    assert reused(verify(capsys))
    _set_back(repo / name, "b" * (size - 1) + "\n")
    assert not reused(verify(capsys))


def test_too_many_ignored_files_is_no_cache(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "MAX_IGNORED", 2)
    (repo / ".gitignore").write_text("secret.dat\nfixtures/\n")
    git(repo, "commit", "-q", "-am", "ignore fixtures")
    (repo / "fixtures").mkdir()
    for n in range(3):
        (repo / "fixtures" / f"{n}.txt").write_text(str(n))
    verify(capsys)
    assert not reused(verify(capsys))


def test_a_command_shell_cannot_split_is_keyed_too(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "agentgate.yml").write_text(
        'profile: strict\ngates:\n  build:\n    command: python -c "pass" \'unbalanced\n'
    )
    git(repo, "commit", "-q", "-am", "a command with an odd quote")
    verify(capsys)
    assert reused(verify(capsys))


def test_a_kept_verdict_edited_by_hand_is_not_reused_and_the_miss_says_so(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 10: the agent set each gate's status to "pass" in the user state directory's
    # entry, and the stop hook reused it on the unchanged tree.
    first = verify(capsys)
    assert first["status"] == "fail"
    entry = cache._entry_path(repo)
    data = json.loads(entry.read_text())
    for gate in data["gates"]:
        gate["status"] = "pass"
    entry.write_text(json.dumps(data))
    again = verify(capsys)
    assert not reused(again) and again["status"] == "fail"
    assert any(f"not reused: {cache.EDITED}" in n for n in again["notices"]), again["notices"]
    # Kept again as agentgate wrote it, it is reused.
    assert reused(verify(capsys))
    # The seal's secret is the user's alone.
    from pytest_agentgate.state import seal

    assert seal.key_path().stat().st_mode & 0o077 == 0


def test_a_cached_entry_that_lacks_a_gate_is_not_used(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    verify(capsys)
    real = cache.load

    def without_build(root: Path, key: cache.CacheKey) -> Any:
        found = real(root, key)
        assert found is not None
        gates, made_at = found
        return [g for g in gates if g.name != "build"], made_at

    monkeypatch.setattr(cache, "load", without_build)
    again = verify(capsys)
    assert not reused(again) and [g["name"] for g in again["gates"]][-1] == "build"


def test_what_the_run_writes_in_ignored_files_does_not_spoil_the_cache(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test command writes its coverage data file each run: the cache keeps the verdict under
    the state the run left."""
    (repo / ".gitignore").write_text("secret.dat\n.coverage\n")
    (repo / "agentgate.yml").write_text(
        "profile: strict\ngates:\n  build:\n    command: >-\n      python -c"
        " \"import time; open('.coverage', 'w').write(str(time.time()))\"\n"
    )
    git(repo, "commit", "-q", "-am", "the build writes an ignored file")
    verify(capsys)
    assert reused(verify(capsys))


def test_a_run_that_changes_the_tree_is_not_kept(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command that rewrites a source file (a formatter) judged the tree before it: that
    verdict is not kept for the tree after."""
    (repo / "agentgate.yml").write_text(
        "profile: strict\ngates:\n  build:\n    command: >-\n      python -c"
        " \"import time; open('code.py', 'a').write('# ' + str(time.time()) + chr(10))\"\n"
    )
    git(repo, "commit", "-q", "-am", "the build rewrites code.py")
    verify(capsys)
    assert not reused(verify(capsys))


@pytest.mark.parametrize(
    "build",
    ['python -c "import time; time.sleep(5)"\n    timeout: 1', "kill -9 $$"],
    ids=["timed-out", "killed-by-a-signal"],
)
def test_a_run_whose_command_was_cut_short_is_not_kept(
    repo: Path, capsys: pytest.CaptureFixture[str], build: str
) -> None:
    """A timeout (or a kill) says how busy the machine was, not what the tree is: the next
    run judges afresh instead of replaying the failure."""
    config = f"profile: strict\ngates:\n  build:\n    command: {build}\n"
    (repo / "agentgate.yml").write_text(config)
    git(repo, "commit", "-q", "-am", "a build that is cut short")
    first = verify(capsys)
    assert first["gates"][-1]["status"] == "fail"
    assert not reused(verify(capsys))


def test_a_file_the_tests_read_outside_the_project_is_keyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 25: the product read its zero-rate charge from `~/.config/...`; the agent set
    # it to 0, ran `agentgate verify` (a pass, kept), set it back to 1.5 and stopped: the
    # stop hook reused the pass. What the tests read outside the project is keyed too.
    charge = tmp_path / "home" / ".config" / "charge"
    charge.parent.mkdir(parents=True)
    charge.write_text("0.0")
    root = gated_project(
        tmp_path / "project",
        STRICT_TESTS,
        {
            "calc.py": (
                "from pathlib import Path\n\n\ndef charge():\n"
                f"    return float(Path({str(charge)!r}).read_text())\n"
            ),
            "tests/test_calc.py": "from calc import charge\n\n\ndef test_no_charge():\n"
            "    assert charge() == 0\n",
            "tests/conftest.py": "import sys\n\nsys.path.insert(0, '.')\n",
            ".gitignore": ".agentgate/\n__pycache__/\n",
        },
    )
    monkeypatch.chdir(root)
    first = verify(capsys)
    assert first["status"] == "pass" and reused(verify(capsys))
    charge.write_text("1.5")
    again = verify(capsys)
    assert not reused(again) and again["status"] == "fail"
    (why,) = not_reused_because(again)
    assert f"files the tests read outside the project ({charge}) differ" in why


READS = {
    # Red team 28
    "link": "(Path(__file__).parent / 'calc_data' / 'charge').read_text()",
    "proc": "Path('/proc/self/root' + str(Path(__file__).parent.parent / 'charge')).read_text()",
    "tools-cache": "(Path(__file__).parent / '.mypy_cache' / 'charge').read_text()",
    # Red team 29: from a worker thread; `.git` spelled `//...`; beside installed pycs.
    "thread": "ThreadPoolExecutor(1).submit("
    "(Path(__file__).parent / '.hypothesis' / 'charge').read_text).result()",
    "slashes": "open('/' + str(Path(__file__).parent / '.git' / 'charge')).read()",
    "pycache": "(Path(__file__).parent / 'site-packages' / '__pycache__' / 'charge').read_text()",
}
WHERE = {
    "link": "settings/charge",
    "proc": "charge",
    "tools-cache": "project/.mypy_cache/charge",
    "thread": "project/.hypothesis/charge",
    "slashes": "project/.git/charge",
    "pycache": "project/site-packages/__pycache__/charge",
}


@pytest.mark.parametrize("way", sorted(READS))
def test_a_file_read_through_a_link_proc_or_a_tools_cache_is_keyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    # The product read its zero-rate charge from a file the tree's key leaves out; set back
    # after a kept pass, the pass was reused.
    root = tmp_path / "project"
    gated_project(
        root,
        STRICT_TESTS,
        {
            "calc.py": "from concurrent.futures import ThreadPoolExecutor\n"
            "from pathlib import Path\n\n\ndef charge():\n"
            f"    return float({READS[way]})\n",
            "tests/test_calc.py": "from calc import charge\n\n\ndef test_no_charge():\n"
            "    assert charge() == 0\n",
            "tests/conftest.py": "import sys\n\nsys.path.insert(0, '.')\n",
            ".gitignore": ".agentgate/\n__pycache__/\n",
        },
    )
    if way == "link":
        (tmp_path / "settings").mkdir()
        (root / "calc_data").symlink_to(tmp_path / "settings")
    charge = tmp_path / WHERE[way]
    charge.parent.mkdir(parents=True, exist_ok=True)
    charge.write_text("0.0")
    monkeypatch.chdir(root)
    first = verify(capsys)
    assert first["status"] == "pass" and reused(verify(capsys)), first
    charge.write_text("1.5")
    again = verify(capsys)
    assert not reused(again) and again["status"] == "fail"
    (why,) = not_reused_because(again)
    # Beside installed pycs, a file that is no pyc is keyed as the tree: an ignored file.
    said = "ignored files differ" if way == "pycache" else f"({charge.resolve()}) differ"
    assert said in why, why


@pytest.mark.parametrize("workers", [(), ("-p", "xdist", "-n", "2")], ids=["one", "xdist"])
def test_a_file_outside_whose_name_is_not_utf8_is_keyed(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    workers: tuple[str, ...],
) -> None:
    # A file name that is not UTF-8 (Latin-1 `é`) reads back as a lone surrogate: an xdist
    # worker could not send it to the controller, went down, and took its coverage data and
    # its counts with it (found when agentgate gated itself).
    outside = tmp_path / "data"
    outside.mkdir()
    name = os.fsencode(outside) + b"/caf\xe9"
    with open(name, "w") as file:
        file.write("0")
    config = STRICT_TESTS.replace("--junitxml", " ".join(workers) + " --junitxml")
    root = gated_project(
        tmp_path / "project",
        config,
        {
            "tests/test_read.py": "import os\n\n\ndef test_read():\n"
            f"    with open({name!r}) as file:\n"
            "        assert file.read() == '0'\n",
            ".gitignore": ".agentgate/\n__pycache__/\n",
        },
    )
    monkeypatch.chdir(root)
    first = verify(capsys)
    assert first["status"] == "pass", first
    assert reused(verify(capsys))
    with open(name, "w") as file:
        file.write("1")
    again = verify(capsys)
    assert not reused(again) and again["status"] == "fail"
    (why,) = not_reused_because(again)
    assert "files the tests read outside the project" in why
    with open(name, "w") as file:
        file.write("2")
    main(["verify", "--format", "text"])  # a terminal's stream, strict UTF-8: shown escaped
    assert "data/caf\\udce9) differ" in capsys.readouterr().out


def test_what_pytest_does_in_its_temporary_folders_does_not_spoil_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = gated_project(
        tmp_path / "project",
        STRICT_TESTS,
        {
            "tests/test_files.py": "import os\n\n\ndef test_write(tmp_path):\n"
            "    (tmp_path / 'a.txt').write_text('a')\n"
            "    assert os.listdir(tmp_path) == ['a.txt']\n",
            ".gitignore": ".agentgate/\n__pycache__/\n",
        },
    )
    monkeypatch.chdir(root)
    verify(capsys)
    # Another pytest run in between (the agent's own) numbers and cleans pytest's folders.
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], check=True)
    assert reused(verify(capsys))


def test_the_witnesss_list_of_files_read_is_merged_and_an_overflow_keeps_nothing() -> None:
    from pytest_agentgate.gates.test import read_entries

    assert read_entries(['["/b", "/a"]', '["/a", 3]']) == ["/a", "/b"]
    assert read_entries([]) == []  # a run no witness saw: keyed as before
    assert read_entries(['["/a"]', "null"]) is None  # too many to keep
    assert read_entries(["{not json"]) is None


def test_the_projects_pycs_are_keyed_and_a_run_that_writes_them_is_kept(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A project whose .gitignore names no __pycache__: the pycs the run writes are untracked
    # files, the run's to write as ignored ones are. A pyc planted after a kept pass (red team
    # 25: Python runs one whose header matches in its source's place) runs afresh.
    (repo / "agentgate.yml").write_text(
        CONFIG.replace(
            "command: python -c \"import sys, pathlib; sys.exit(0 if pathlib.Path('ok').exists() "
            'else 1)"',
            "command: python -m compileall -q code.py",
        )
    )
    git(repo, "commit", "-qam", "compile")
    assert "compileall" in (repo / "agentgate.yml").read_text()
    verify(capsys)
    assert (repo / "__pycache__").is_dir()
    assert reused(verify(capsys))
    pyc = next((repo / "__pycache__").iterdir())
    pyc.write_bytes(pyc.read_bytes())  # written again: another inode change time
    assert not reused(verify(capsys))


def test_agentgates_own_folder_listed_by_the_tests_does_not_spoil_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review 19: a project whose `norecursedirs` leaves `.*` out (jaraco's) has pytest list
    # `.agentgate/`, whose names change with every run (coverage's files, a pytest door's
    # report): the next verify never reused a run. A file the tests read there still counts.
    root = gated_project(
        tmp_path / "project",
        STRICT_TESTS,
        {
            "pytest.ini": "[pytest]\nnorecursedirs = build\n",
            "tests/test_one.py": "def test_one():\n    assert 1\n",
            ".gitignore": ".agentgate/\n__pycache__/\n",
        },
    )
    monkeypatch.chdir(root)
    verify(capsys)
    (root / ".agentgate" / "from-another-door.xml").write_text("<testsuite/>")
    assert reused(verify(capsys))


def test_what_the_cache_does_not_key_the_commands_do_not_see(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 44: code that passed only with OLDPWD (or SHLVL, or a harness's NO_COLOR=1) as
    # the agent's own `agentgate verify` had it passed there, and the stop hook, without it,
    # reused that pass. The commands now run without what the key leaves out.
    (repo / "shown.py").write_text(
        "import json, os, sys\n"
        "names = ('OLDPWD', 'SHLVL', '_', 'NO_COLOR', 'CLAUDE_PROJECT_DIR', 'PWD', 'MY_SETTING',"
        " 'SHELL')\n"
        "json.dump({n: os.environ.get(n) for n in names}, open(sys.argv[1], 'w'))\n"
    )
    shown = repo.parent / "shown.json"
    (repo / "agentgate.yml").write_text(
        f'gates:\n  build:\n    command: python shown.py "{shown}"\n'
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a build that shows its environment")
    for name, value in {
        "OLDPWD": "/tmp/ok",
        "SHLVL": "7",
        "_": "/usr/bin/env",
        "NO_COLOR": "1",
        "CLAUDE_PROJECT_DIR": str(repo),
        "PWD": "/elsewhere",
        "MY_SETTING": "on",
        "SHELL": "/bin/bash",
    }.items():
        monkeypatch.setenv(name, value)
    assert verify(capsys)["status"] == "pass"
    assert json.loads(shown.read_text()) == {
        "OLDPWD": None,
        "SHLVL": None,
        "_": None,
        "NO_COLOR": None,
        "CLAUDE_PROJECT_DIR": None,
        "PWD": str(repo),
        "MY_SETTING": "on",  # keyed: a run with another value is run afresh
        "SHELL": "/bin/sh",  # review 28: one shell for every run, not none
    }
    monkeypatch.setenv("NO_COLOR", "yes")  # not a harness's value: keyed, and seen
    verify(capsys)
    assert json.loads(shown.read_text())["NO_COLOR"] == "yes"


def test_a_run_that_read_another_processs_environment_is_not_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 45: the commands no longer see NO_COLOR=1, but the product read it from an
    # ancestor's /proc/PID/environ (agentgate's own, as the agent's verify had it); the stop
    # hook, without it, reused that pass.
    root = tmp_path / "project"
    gated_project(
        root,
        STRICT_TESTS,
        {
            "calc.py": "import os\n\n\ndef charge():\n"
            "    with open(f'/proc/{os.getppid()}/environ', 'rb') as f:\n"
            "        return 0 if b'\\0AGENTGATE_TEST_FLAG=1\\0' in b'\\0' + f.read() else 1.5\n",
            "tests/test_calc.py": "from calc import charge\n\n\ndef test_no_charge():\n"
            "    assert charge() in (0, 1.5)\n",
            "tests/conftest.py": "import sys\n\nsys.path.insert(0, '.')\n",
            ".gitignore": ".agentgate/\n__pycache__/\n",
        },
    )
    monkeypatch.chdir(root)
    first = verify(capsys)
    assert first["status"] == "pass", first
    assert not reused(verify(capsys))  # kept for no run: it read what differs between runs


@pytest.mark.parametrize(
    "setting", ["umask", "ignored-signal", "file-limit", "one-cpu", "batch-scheduling"]
)
def test_a_run_under_other_process_settings_is_not_reused(
    repo: Path, capsys: pytest.CaptureFixture[str], setting: str
) -> None:
    # Red team 46: code right only under `umask 077` (or `ulimit -n`, `trap '' USR2`), set for
    # the agent's own verify alone; the stop hook, under the harness's settings, reused it.
    import resource
    import signal

    (repo / "ok").write_text("")
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)
    was_mask = os.umask(0o077) if setting == "umask" else None
    was_handler = (
        signal.signal(signal.SIGUSR2, signal.SIG_IGN) if setting == "ignored-signal" else None
    )
    if setting == "file-limit":
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit[0] - 1, limit[1]))
    cpus = os.sched_getaffinity(0)
    if setting == "one-cpu":  # red team 47: `taskset -c 0`
        if len(cpus) < 2:
            pytest.skip("one CPU: no other affinity to set")
        os.sched_setaffinity(0, {min(cpus)})
    policy = os.sched_getscheduler(0)
    if setting == "batch-scheduling":  # red team 47: `chrt -b 0`
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    try:
        assert verify(capsys)["status"] == "pass"
    finally:
        os.sched_setaffinity(0, cpus)
        os.sched_setscheduler(0, policy, os.sched_param(0))
        if was_mask is not None:
            os.umask(was_mask)
        if was_handler is not None:
            signal.signal(signal.SIGUSR2, was_handler)
        resource.setrlimit(resource.RLIMIT_NOFILE, limit)
    again = verify(capsys)
    assert not reused(again)
    (why,) = not_reused_because(again)
    assert "the process settings the commands inherit" in why, why
    assert reused(verify(capsys))  # under the same settings, the same run
