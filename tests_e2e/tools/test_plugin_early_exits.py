"""A conftest that ends the run early is rejected before it runs, through the pytest door in a
process of its own."""

from __future__ import annotations

import textwrap

import pytest
import test_plugin_early as early
from _helpers import change
from test_plugin_early import IMPORTED, TRICKS, gate, gated, project, ran

pytest_plugins = ["pytester"]
pytestmark = early.pytestmark
_clean_env = early._clean_env  # the suite's autouse fixture: no agentgate options leak in


@pytest.mark.parametrize(("trick", "line", "what"), TRICKS.values(), ids=list(TRICKS))
def test_a_conftest_that_ends_the_run_is_rejected_before_it_runs(
    pytester: pytest.Pytester, trick: str, line: int, what: str
) -> None:
    # The trick: before this change, each of these conftests ended `pytest --agentgate=strict`
    # with status 0 and no verdict (or a FAIL printed, then 0), the failing test never judged.
    root = project(pytester.path)
    change(root, **{"conftest.py": IMPORTED + textwrap.dedent(trick)})
    result, verdict = gated(pytester)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out + result.stderr.str()
    assert f"conftest.py:{line} exit-forced: {what}" in out
    assert "agentgate: the integrity gate rejected the change, so no test ran" in out
    assert not ran(root) and not ran(root, "conftest-imported")  # none of it ran
    assert verdict is not None and verdict["status"] == "fail"
    assert gate(verdict, "integrity")["status"] == "fail"
    tests = gate(verdict, "test")
    assert tests["actual"]["total"] == 0
    assert "stopped before the first test by the integrity gate" in tests["summary"]
    assert "Traceback" not in out + result.stderr.str()
