"""A declared source encoding (PEP 263) that hides code, and honest Latin-1 files, through
`agentgate verify`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _helpers import STRICT_TESTS, gated_project, git, only_gate, verify_json
from test_integrity_encoding import TESTS

CALC = "def add(a, b):\n    return a - b\n"


FIXED = "def add(a, b):\n    return a + b\n"


def findings(verdict: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["code"], f["path"]) for f in only_gate(verdict, "integrity")["findings"]]


def early_return(line: str) -> str:
    """The tests with ``line`` first in the failing test."""
    return TESTS.replace("def test_add():\n", f"def test_add():\n    {line}\n")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("AGENTGATE_RUNNING", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    files = {"calc.py": CALC, "tests/test_calc.py": TESTS}
    return gated_project(tmp_path / "proj", STRICT_TESTS, files)


def test_a_utf7_return_hidden_in_a_comment_is_found(project: Path) -> None:
    # To UTF-8 readers (a diff, ruff, a reviewer) a comment; to Python a return before the assert.
    text = "# -*- coding: utf-7 -*-\n" + early_return("# see INV-42 +AAo-    return")
    (project / "tests" / "test_calc.py").write_bytes(text.encode("ascii"))
    code, verdict = verify_json(project)
    assert code == 1
    assert ("source-disguised", "tests/test_calc.py") in findings(verdict)
    (finding,) = [
        f for f in only_gate(verdict, "integrity")["findings"] if f["code"] == "source-disguised"
    ]
    assert "utf-7" in finding["message"] and finding["line"] == 1


def test_a_utf7_conftest_hook_is_found_and_read_as_python_runs_it(project: Path) -> None:
    hidden = [
        "@pytest.hookimpl(wrapper=True)",
        "def pytest_runtest_makereport(item, call):",
        "    report = yield",
        '    if report.when == "call":',
        '        report.outcome = "passed"',
        "    return report",
    ]
    text = "# -*- coding: utf-7 -*-\nimport pytest\n\n\n@pytest.fixture\ndef rule():\n"
    text += "    return None\n\n\n" + "".join(f"# INV-42 +AAo-{line}\n" for line in hidden)
    (project / "tests" / "conftest.py").write_bytes(text.encode("ascii"))
    code, verdict = verify_json(project)
    assert code == 1
    found = findings(verdict)
    assert ("source-disguised", "tests/conftest.py") in found
    # The analyzers read the hook Python runs, not the comments UTF-8 shows.
    assert ("result-rewritten", "tests/conftest.py") in found


def test_a_raw_unicode_escape_return_is_found(project: Path) -> None:
    text = "# -*- coding: raw_unicode_escape -*-\n" + early_return("# see INV-42 \\u000a    return")
    (project / "tests" / "test_calc.py").write_bytes(text.encode("ascii"))
    code, verdict = verify_json(project)
    assert code == 1
    assert ("source-disguised", "tests/test_calc.py") in findings(verdict)


def test_a_skip_in_a_latin1_test_file_is_found(project: Path) -> None:
    text = "# -*- coding: latin-1 -*-\n# Tests (r\xe9vis\xe9es)\n" + TESTS.replace(
        "def test_add():", "@pytest.mark.skip(reason='tracked separately')\ndef test_add():"
    ).replace("from calc", "import pytest\nfrom calc")
    (project / "tests" / "test_calc.py").write_bytes(text.encode("latin-1"))
    code, verdict = verify_json(project)
    assert code == 1
    found = findings(verdict)
    assert ("skip-added", "tests/test_calc.py") in found
    # Latin-1 hides no code: its ASCII reads the same both ways.
    assert ("source-disguised", "tests/test_calc.py") not in found


def test_an_honest_change_to_a_latin1_file_passes(project: Path) -> None:
    # The project keeps a test file in Latin-1; the change fixes the code and adds a test there.
    latin = "# -*- coding: latin-1 -*-\n# Tests (r\xe9vis\xe9es)\n" + TESTS
    (project / "tests" / "test_calc.py").write_bytes(latin.encode("latin-1"))
    git(project, "commit", "-qam", "latin-1 tests")
    (project / "calc.py").write_text(FIXED)
    more = latin + "\n\ndef test_add_negative():\n    # n\xe9gatif\n    assert add(-1, -2) == -3\n"
    (project / "tests" / "test_calc.py").write_bytes(more.encode("latin-1"))
    code, verdict = verify_json(project)
    assert findings(verdict) == [] and code == 0


def test_a_new_latin1_file_and_a_utf8_declaration_pass(project: Path) -> None:
    (project / "calc.py").write_text("# -*- coding: utf-8 -*-\n" + FIXED)
    (project / "tests" / "test_calc.py").write_text("# -*- coding: utf-8 -*-\n" + TESTS)
    text = "# -*- coding: latin-1 -*-\n# Cas limites (r\xe9vis\xe9s)\nfrom calc import add\n\n\n"
    text += "def test_add_both_negative():\n    assert add(-1, -2) == -3\n"
    (project / "tests" / "test_more.py").write_bytes(text.encode("latin-1"))
    code, verdict = verify_json(project)
    assert findings(verdict) == [] and code == 0
