"""What the compiler warns of in the project's code, as the stale-bytecode check compiles it
again (``integrity/bytecode._compiled``): the project's to hear from its own tools, never
printed on agentgate's output (a review on real projects: parso's fixture files)."""

from __future__ import annotations

import warnings
from pathlib import Path

from pytest_agentgate.integrity import bytecode


def test_the_projects_compiler_warnings_are_not_printed(tmp_path: Path) -> None:
    source = b'def check():\n    assert (1, "always true")\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning that got out would raise here
        plain = list(bytecode._compiled(source, tmp_path / "fixture.py", "0"))
        rewritten = list(bytecode._compiled(source, tmp_path / "fixture.py", "pytest"))
    assert len(plain) == 1 and len(rewritten) == 2
    assert all(code.co_filename == str(tmp_path / "fixture.py") for code in plain + rewritten)
