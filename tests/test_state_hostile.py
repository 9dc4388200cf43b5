"""The project's state folder in a shape agentgate did not make: never followed, set aside."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agentgate.cli.main import main

FAILING = 'gates:\n  build:\n    command: python -c "import sys; sys.exit(1)"\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "agentgate.yml").write_text(FAILING)
    monkeypatch.chdir(root)
    return root


def test_a_state_folder_that_is_a_link_is_set_aside_and_the_attempts_go_on(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 30: `ln -s elsewhere .agentgate` made recording fail, and a failing verdict
    # escalated, which let the agent stop at its first try.
    main(["verify", "--task", "t"])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(project / ".agentgate")
    (project / ".agentgate").symlink_to(elsewhere)
    capsys.readouterr()
    code = main(["verify", "--task", "t"])
    out, err = capsys.readouterr()
    assert list(elsewhere.iterdir()) == []  # nothing written where the link points
    assert "was a symbolic link; set aside as .agentgate.corrupt-" in err
    assert code == 1 and "attempt 2 of 3" in out and "ESCALATE" not in out
    [aside] = project.glob(".agentgate.corrupt-*")
    assert aside.is_symlink() and aside.resolve() == elsewhere.resolve()  # the user's, kept


def test_a_state_path_that_is_a_file_is_set_aside(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".agentgate").write_text("not a folder")
    assert main(["verify", "--task", "t"]) == 1
    out, err = capsys.readouterr()
    assert "was not a folder; set aside as .agentgate.corrupt-" in err
    assert "attempt 1 of 3" in out
    [aside] = project.glob(".agentgate.corrupt-*")
    assert aside.read_text() == "not a folder"  # nothing of the user's lost


@pytest.mark.parametrize(
    ("name", "kind"),
    [("ledger.lock", "folder"), ("ledger.lock", "link"), (".gitignore", "link")],
)
def test_something_else_in_the_place_of_the_lock_or_gitignore_is_set_aside(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, kind: str
) -> None:
    # Red team 31: a folder (or a link to nothing) in the place of the ledger's lock file, or
    # of `.agentgate/.gitignore`, made the first failing stop escalate; a link was written
    # through, outside the project.
    main(["verify", "--task", "t"])
    path = project / ".agentgate" / name
    path.unlink()
    target = tmp_path / "elsewhere" / name
    target.parent.mkdir()
    if kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(target)
    capsys.readouterr()
    assert main(["verify", "--task", "t"]) == 1
    out, err = capsys.readouterr()
    assert "attempt 2 of 3" in out and "ESCALATE" not in out
    assert f"{name} was not a regular file; set aside as {name}.corrupt-" in err
    assert path.is_file() and not path.is_symlink() and not target.exists()


@pytest.mark.parametrize("kind", ["folder", "link", "pipe"])
def test_something_else_in_the_historys_place_is_set_aside_and_the_attempts_go_on(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # Red team 30: `mkdir .agentgate/history.jsonl` made the first failing stop escalate.
    main(["verify", "--task", "t"])
    history = project / ".agentgate" / "history.jsonl"
    history.unlink()
    if kind == "folder":
        history.mkdir()
    elif kind == "link":
        history.symlink_to(tmp_path / "elsewhere.jsonl")
    else:
        os.mkfifo(history)
    capsys.readouterr()
    assert main(["verify", "--task", "t"]) == 1  # a pipe is never waited on either
    out, err = capsys.readouterr()
    assert "attempt 2 of 3" in out and "ESCALATE" not in out
    assert "history.jsonl was not a regular file; set aside as history.jsonl.corrupt-" in err
    assert history.is_file() and not (tmp_path / "elsewhere.jsonl").exists()
    assert main(["stats"]) == 0


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe{not utf-8",
        b'{"schema": "agentgate.state/1", "tasks": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"schema": "agentgate.state/1", "tasks": {"t": {"total": 1, "attempts": [{}]}}}',
    ],
    ids=["not-utf-8", "nested-5000", "attempt-missing-keys"],
)
def test_a_corrupt_state_file_is_set_aside_and_the_attempts_survive(
    content: bytes, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(2):
        main(["verify", "--task", "t"])
    (project / ".agentgate" / "state.json").write_bytes(content)
    capsys.readouterr()
    assert main(["verify", "--task", "t"]) == 1
    out, err = capsys.readouterr()
    assert "state.json is corrupt" in err and "set aside as state.json.corrupt-" in err
    assert "attempt 3 of 3" in out  # the copy outside the project restores the count
    [aside] = (project / ".agentgate").glob("state.json.corrupt-*")
    assert aside.read_bytes() == content


def test_a_folder_in_the_state_files_place_is_set_aside_and_the_attempts_survive(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 16: `mkdir .agentgate/state.json` made every verdict unrecordable, and a failing
    # one escalated at the first stop.
    for _ in range(2):
        main(["verify", "--task", "t"])
    (project / ".agentgate" / "state.json").unlink()
    (project / ".agentgate" / "state.json").mkdir()
    capsys.readouterr()
    assert main(["verify", "--task", "t"]) == 1
    out, err = capsys.readouterr()
    assert "not a regular file; set aside as state.json.corrupt-" in err
    assert "attempt 3 of 3" in out and "ESCALATE" not in out


def test_stats_over_hostile_history_lines_skips_them(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["verify", "--task", "t"])
    history = project / ".agentgate" / "history.jsonl"
    hostile = [
        b"garbage",
        b"[" * 5000 + b"]" * 5000,
        b'{"v": 1, "status": 5, "gates": "x", "ts": 1.0, "task": [1]}',
        b'{"v": 1, "status": "fail", "gates": [{"name": 1}], "ts": 1e400}',
        b'{"v": 1, "status": "fail", "gates": [], "ts": 2.0, "wall_s": "slow"}',
        b"\xff\xfe",
        b"null",
    ]
    with history.open("ab") as handle:
        handle.write(b"\n".join(hostile) + b"\n")
    capsys.readouterr()
    assert main(["stats"]) == 0
    out, err = capsys.readouterr()
    assert err.count("is unreadable (an interrupted write?); skipped it") == len(hostile) - 1
    assert "its last line is torn (an interrupted write?); skipped it" in err
    assert "internal error" not in err and "build" in out


def _unwritable_run(
    folder: Path, argv: list[str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with ``folder`` unwritable the way the system enforces it for this user:
    `chmod a-w` for a user, a read-only bind mount in a mount namespace of its own for root
    (whom permissions do not stop)."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
        finally:
            folder.chmod(0o755)
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("running as root without unshare(1): no way to make a folder read-only")
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    probe = subprocess.run(
        [unshare, "-m", "sh", "-c", script, str(folder), "true"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot make a read-only mount here: {probe.stderr.strip()}")
    return subprocess.run(
        [unshare, "-m", "sh", "-c", script, str(folder), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_state_folder_made_unwritable_counts_the_attempts_outside_the_project(
    project: Path, fresh_state_home: Path
) -> None:
    # `chmod -w .agentgate` made recording fail, and a failing stop escalated at the first try:
    # the agent's cheapest way out. The copy outside the project counts the attempts now.
    argv = [sys.executable, "-m", "pytest_agentgate", "verify", "--task", "t"]
    assert main(["verify", "--task", "t"]) == 1
    runs = [_unwritable_run(project / ".agentgate", argv) for _ in range(3)]
    assert [r.returncode for r in runs] == [1, 1, 3]  # 3: escalated to a human
    assert "attempt 2 of 3" in runs[0].stdout and "ESCALATE" not in runs[0].stdout
    assert "attempt 3 of 3" in runs[1].stdout
    assert "cannot be written" in runs[0].stdout and "counted in agentgate's copy alone" in (
        runs[0].stdout
    )
    assert "Traceback" not in "".join(r.stderr for r in runs)
    [copy] = (fresh_state_home / "projects").iterdir()
    report = copy / "escalations" / "t.md"
    assert report.is_file() and str(report) in runs[2].stdout
    assert not (project / ".agentgate" / "escalations").exists()


def test_the_stop_hook_counts_on_and_points_at_the_report_outside_the_project(
    project: Path, fresh_state_home: Path
) -> None:
    hook = [sys.executable, "-m", "pytest_agentgate", "hook", "claude"]
    (project / ".agentgate").mkdir()
    answers = []
    for n in range(4):
        event = {
            "session_id": "s",
            "cwd": str(project),
            "hook_event_name": "Stop",
            "last_assistant_message": f"done {n}",
        }
        run = _unwritable_run(project / ".agentgate", hook, json.dumps(event))
        assert run.returncode == 0, run.stderr
        answers.append(json.loads(run.stdout))
    assert [a.get("decision") for a in answers] == ["block", "block", "block", None]
    assert "make it writable again" in answers[0]["reason"]
    [copy] = (fresh_state_home / "projects").iterdir()
    assert f"Report: {copy / 'escalations' / 's.md'}" in answers[3]["systemMessage"]
