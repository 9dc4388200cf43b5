"""A test the change edits that the run skipped: ``skip-added``, whatever skipped it.

The static rules read skip marks and ``pytest.skip()`` calls; a skip can hide from them (a
fixture that skips when a variable is unset, ``importorskip`` of a computed name,
``getattr(pytest, "skip")``, pytest's ``skip`` imported under another name, a marker a hook
adds). The run shows the test did not run; the integrity gate joins that with the tests the
change edits (``gates/integrity.with_skipped_tests``).
Each project: a failing test at the base, a strict gate; the agent's change makes it skip.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _helpers import STRICT_TESTS, gated_project, only_gate, verify_json
from _helpers import pytest_agentgate as pytest_gated

CALC = "def tax(amount):\n    return amount * 0.2 + 1\n"
TEST = """\
import pytest

from calc import tax


def test_tax_zero():
    assert tax(0) == 0


def test_tax_ten():
    assert tax(10) == 3
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    for name in ("AGENTGATE_RUNNING", "PYTEST_ADDOPTS", "RATES_DB"):
        monkeypatch.delenv(name, raising=False)
    files = {"calc.py": CALC, "tests/test_calc.py": TEST, ".gitignore": ".agentgate/\n"}
    return gated_project(tmp_path / "proj", STRICT_TESTS, files)


def skip_findings(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in only_gate(verdict, "integrity")["findings"] if f["code"] == "skip-added"]


def edit_test(root: Path, old: str, new: str, conftest: str | None = None) -> None:
    path = root / "tests" / "test_calc.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    if conftest is not None:
        (root / "tests" / "conftest.py").write_text(conftest)


FIXTURE_SKIPS = """\
import os

import pytest


@pytest.fixture
def rates_db():
    if not os.environ.get("RATES_DB"):
        pytest.skip("needs the rates database")
    return os.environ["RATES_DB"]
"""


@pytest.mark.parametrize(
    ("old", "new", "conftest"),
    [
        ("def test_tax_zero():", "def test_tax_zero(rates_db):", FIXTURE_SKIPS),
        (
            "def test_tax_zero():",
            '@pytest.mark.usefixtures("rates_db")\ndef test_tax_zero():',
            FIXTURE_SKIPS,
        ),
        (
            "    assert tax(0) == 0",
            '    pytest.importorskip("calc" + "_rates")\n    assert tax(0) == 0',
            None,
        ),
        (
            "    assert tax(0) == 0",
            '    getattr(pytest, "sk" + "ip")("INV-42")\n    assert tax(0) == 0',
            None,
        ),
        (
            "    assert tax(0) == 0",
            "    from _pytest.outcomes import skip as later\n"
            '    later("INV-42")\n'
            "    assert tax(0) == 0",
            None,
        ),
    ],
    ids=["fixture-param", "usefixtures", "importorskip-computed", "getattr-skip", "skip-renamed"],
)
def test_a_skip_the_source_does_not_show_is_seen_in_the_run(
    project: Path, old: str, new: str, conftest: str | None
) -> None:
    edit_test(project, old, new, conftest)
    code, verdict = verify_json(project)
    assert only_gate(verdict, "test")["status"] == "pass"  # the failing test no longer runs...
    assert code == 1 and only_gate(verdict, "integrity")["status"] == "fail"  # ...the gate sees it
    [finding] = skip_findings(verdict)
    assert finding["path"] == "tests/test_calc.py" and finding["line"] >= 6
    assert finding["message"].startswith("test_tax_zero ran at the base and is skipped in this run")


def test_the_pytest_door_sees_it_too(project: Path) -> None:
    edit_test(project, "def test_tax_zero():", "def test_tax_zero(rates_db):", FIXTURE_SKIPS)
    code, verdict, output = pytest_gated(project)
    assert code == 1, output
    [finding] = skip_findings(verdict)
    assert "needs the rates database" in finding["message"]


def test_a_test_skipped_at_the_base_and_edited_honestly_passes(project: Path) -> None:
    # The base's test could skip already (it needs the database): an edit of its body is no
    # skip the change made.
    skipping = TEST.replace(
        "def test_tax_ten():",
        '@pytest.mark.skipif(True, reason="needs the rates database")\ndef test_tax_ten():',
    ).replace("assert tax(0) == 0", "assert tax(0) == 1")
    (project / "tests" / "test_calc.py").write_text(skipping)
    from _helpers import git

    git(project, "commit", "-qam", "the ten test needs the database")
    edit_test(project, "    assert tax(10) == 3", "    result = tax(10)\n    assert result == 3")
    code, verdict = verify_json(project)
    assert skip_findings(verdict) == [], verdict
    assert code == 0, verdict


def test_a_test_the_change_does_not_touch_may_skip(project: Path) -> None:
    # The base's test skips here for a reason of the machine's, and the change fixes the code
    # only: nothing the change did skipped it.
    (project / "tests" / "conftest.py").write_text(FIXTURE_SKIPS)
    edit_test(project, "def test_tax_ten():", "def test_tax_ten(rates_db):")
    from _helpers import git

    git(project, "add", "-A")
    git(project, "commit", "-qm", "the ten test needs the database")
    (project / "calc.py").write_text("def tax(amount):\n    return amount * 0.2\n")
    code, verdict = verify_json(project)
    assert only_gate(verdict, "test")["status"] == "pass"
    assert skip_findings(verdict) == [], verdict
    assert code == 0, verdict


DB_TEST = """\
import os

import pytest


@pytest.fixture
def db_url():
    url = os.environ.get("RATES_DB")
    if not url:
        pytest.skip("RATES_DB not set")
    return url


def test_db_rate(db_url):
    assert db_url
"""


@pytest.mark.parametrize("where", ["module", "conftest", "pytestmark"])
def test_a_test_the_base_skipped_too_may_be_edited(project: Path, where: str) -> None:
    # A test that needs a database skips where there is none, at the base as now: an honest
    # edit of it is no skip the change made.
    from _helpers import git

    text = DB_TEST
    if where == "conftest":
        fixture, _, test = DB_TEST.partition("\n\n\ndef test_db_rate")
        (project / "tests" / "conftest.py").write_text(fixture + "\n")
        text = "def test_db_rate" + test
    elif where == "pytestmark":
        text = (
            "import os\n\nimport pytest\n\npytestmark = pytest.mark.skipif(\n"
            '    not os.environ.get("RATES_DB"), reason="needs the rates database"\n)\n\n\n'
            "def test_db_rate():\n    assert os.environ['RATES_DB']\n"
        )
    (project / "tests" / "test_db.py").write_text(text)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a test that needs the database")
    path = project / "tests" / "test_db.py"
    path.write_text(
        path.read_text().replace("    assert ", "    assert len(str(1)) == 1\n    assert ", 1)
    )
    (project / "calc.py").write_text("def tax(amount):\n    return amount * 0.3\n")
    _, verdict = verify_json(project)
    assert skip_findings(verdict) == [], verdict
    assert only_gate(verdict, "integrity")["status"] == "pass"


def test_a_skipping_fixture_of_the_base_given_to_the_failing_test_is_found(project: Path) -> None:
    from _helpers import git

    (project / "tests" / "conftest.py").write_text(FIXTURE_SKIPS)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a fixture for the database tests")
    edit_test(project, "def test_tax_zero():", "def test_tax_zero(rates_db):")
    code, verdict = verify_json(project)
    assert code == 1
    [finding] = skip_findings(verdict)
    assert "test_tax_zero ran at the base and is skipped in this run" in finding["message"]
