"""README's quick start is two commands; CI runs the second one word for word."""

from __future__ import annotations

import re

from _helpers import REPO


def _quick_start() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)]


def test_quick_start_is_two_one_line_commands() -> None:
    commands = _quick_start()
    assert len(commands) == 2
    assert all("\n" not in command for command in commands)
    install_and_verify, install_and_test = commands
    assert install_and_verify.endswith("(cd examples/invoice && agentgate verify)")
    assert (REPO / "examples" / "invoice" / "agentgate.yml").is_file()
    assert install_and_test.endswith("&& pytest -n auto")  # the suite, on every CPU


def test_ci_runs_the_readme_test_command_word_for_word() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert _quick_start()[1] in ci.splitlines()


def test_each_command_works_in_the_shell_the_other_left() -> None:
    """Neither command leaves the shell in another folder: the first gates the example in a
    subshell, the second runs from where it starts (the repository root)."""
    install_and_verify, install_and_test = _quick_start()
    outside_subshells = re.sub(r"\([^()]*\)", "", install_and_verify)
    assert "cd " not in outside_subshells
    assert "cd " not in install_and_test
