"""What leaves agentgate: secrets masked, control characters visible, messages bounded, in every
output of a real verdict (terminal text, JSON, the --output file, the history)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import CliRun

from pytest_agentgate.redact import MASK, Cleaner, secret_values

Agentgate = Callable[..., CliRun]
WriteConfig = Callable[[str], Path]

GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS = "AKIA" + "ABCDEFGHIJKLMNOP"


def test_secret_values_are_found_by_name_and_masked_longest_first() -> None:
    env = {
        "GITHUB_TOKEN": "tok-1234567890",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
        "DB_PASSWORD": "short",  # too short to be worth it
        "HOME": "/home/user",
    }
    assert secret_values(env) == ["wJalrXUtnFEMI/K7MDENG", "tok-1234567890"]
    clean = Cleaner(secret_values(env))
    assert (
        clean.text("login tok-1234567890 and wJalrXUtnFEMI/K7MDENG") == f"login {MASK} and {MASK}"
    )
    assert clean.text(f"push with {GH} as {AWS}") == f"push with {MASK} as {MASK}"
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----"
    assert clean.text(f"key:\n{key}\nafter") == f"key:\n{MASK}\nafter"
    assert clean.text("sk-ant-" + "x" * 30) == MASK


def test_control_characters_are_made_visible_and_text_is_bounded() -> None:
    clean = Cleaner()
    fake = "E501 long line\r\x1b[2K\x1b[32mPASS  lint\x1b[0m \x07\x9b"
    assert clean.text(fake) == ("E501 long line\\x0d\\x1b[2K\\x1b[32mPASS  lint\\x1b[0m \\x07\\x9b")
    assert clean.text("tab\tand\nnewline") == "tab\tand\nnewline"
    huge = clean.text("x" * 10_000_000)
    assert len(huge) < 2100 and huge.endswith("more characters cut)")


def test_a_token_printed_by_a_gate_command_never_reaches_any_output(
    project: Path, write_config: WriteConfig, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "s3cr3t-value-of-the-job")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value-123")
    write_config(
        "gates:\n  build:\n    command: \"printf 'error: token $GITHUB_TOKEN aws "
        + "$AWS_SECRET_ACCESS_KEY "
        + GH
        + "\\\\033]0;pwned\\\\007\\\\n'; exit 1\"\n"
    )
    text = agentgate("verify")
    data = agentgate("verify", "--format", "json", "--output", "out.json", "--task", "T1")
    history = (project / ".agentgate" / "history.jsonl").read_text()
    for output in (text.out, data.out, (project / "out.json").read_text(), history):
        assert "s3cr3t-value-of-the-job" not in output
        assert "aws-secret-value-123" not in output
        assert GH not in output
        assert "\x1b" not in output and "\x07" not in output
    assert MASK in text.out and "\\x1b]0;pwned\\x07" in text.out


def test_every_finding_counts_but_a_gate_lists_a_thousand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every finding counts; the verdict lists the first MAX_FINDINGS, errors first."""
    from pytest_agentgate.cli.main import main
    from pytest_agentgate.redact import MAX_FINDINGS

    total = MAX_FINDINGS + 500
    messages = [
        {"ruleId": "no-unused-vars", "severity": 1 if i % 2 else 2, "message": f"m{i}", "line": i}
        for i in range(total)
    ]
    report = [{"filePath": str(tmp_path / "a.js"), "messages": messages,
               "errorCount": (total + 1) // 2, "warningCount": total // 2}]  # fmt: skip
    (tmp_path / "eslint.json").write_text(json.dumps(report))
    monkeypatch.chdir(tmp_path)
    args = ["verify", "--no-run", "--lint", "eslint.json", "--lint-format", "eslint"]
    main([*args, "--format", "json"])
    (gate,) = json.loads(capsys.readouterr().out)["gates"]
    assert (gate["actual"]["errors"], gate["actual"]["warnings"]) == ((total + 1) // 2, total // 2)
    assert len(gate["findings"]) == MAX_FINDINGS
    severities = [f["severity"] for f in gate["findings"]]
    assert severities == sorted(severities, key=lambda s: s != "error")  # errors first
    assert severities.count("error") == (total + 1) // 2
    assert f"the verdict lists the first {MAX_FINDINGS:,} of {total:,} findings" in gate["summary"]
