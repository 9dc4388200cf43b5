"""Patch coverage is diff-cover's figure: the real diff-cover, on the same change and report."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_patch_coverage import Agentgate, agentgate_figure, diff_cover, make_change, measure


@pytest.mark.parametrize(
    ("layout", "selection"),
    [
        # At the repository root; --source reports pkg/legacy.py though no test imports it.
        ("root", "--source=pkg"),
        # A project in a subfolder; --include leaves pkg/legacy.py out of the report.
        ("subfolder", "--include=pkg/*"),
    ],
)
def test_patch_coverage_is_diff_covers_figure(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    agentgate: Agentgate,
    layout: str,
    selection: str,
) -> None:
    repo = tmp_path / "repo"
    project = repo if layout == "root" else repo / "app"
    project.mkdir(parents=True)
    # diff-cover counts an untracked file's lines from the working directory, so it can only
    # take one at the repository root.
    make_change(repo, project, untracked=layout == "root")
    measure(project, selection)
    monkeypatch.chdir(project)
    prefix = "" if layout == "root" else "app/"

    expected = diff_cover(project, "coverage.xml", prefix)
    # The change as built: what the tests ran of it, file by file.
    assert expected["uncovered"] == {
        "pkg/calc.py": [19, 24],
        "pkg/extra.py": [6],
        "pkg/fresh.py": [4],
        **({"pkg/legacy.py": [5, 6]} if selection == "--source=pkg" else {}),
    }
    assert expected["total"] >= 16

    for report in ("coverage.xml", "coverage.json", ".coverage", "coverage.lcov"):
        assert agentgate_figure(agentgate, report) == expected, report
    if layout == "root":
        assert diff_cover(project, "coverage.lcov", prefix) == expected
    else:
        # diff-cover takes an lcov SF path as relative to the repository root when its working
        # directory is a subfolder (`os.path.relpath(path, "app")`), so it finds no file of a
        # project's own relative paths there: it counts nothing. agentgate reads them from the
        # project root, as coverage.py wrote them.
        assert diff_cover(project, "coverage.lcov", prefix)["total"] == 0

    result = agentgate("verify", "--no-run", "--coverage", "coverage.xml")
    if selection == "--include=pkg/*":
        # Not in the report, so not counted (as diff-cover does), and said.
        assert (
            "patch coverage: 4 changed lines in 1 file the coverage report does not measure, "
            "not counted: pkg/legacy.py"
        ) in result.out
    else:
        assert "does not measure" not in result.out
