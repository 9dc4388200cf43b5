"""The exit-forced analyzer (``integrity/exits.py``) and the engine's early judgment.

Real git repositories: the base commit on ``main``, the change in the working tree. The
integrity gate is judged through ``Pipeline.early``, as the pytest plugin's gate process does
before pytest imports the project's conftest.py files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _helpers import change, git

from pytest_agentgate.config.resolve import resolve_config
from pytest_agentgate.engine import Pipeline, Request
from pytest_agentgate.registry import get_registry

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")

CONFIG = 'gates:\n  build: {command: "true"}\n'
FAILING_TEST = "def test_fails():\n    assert 0\n"


def project(root: Path, **base: str) -> Path:
    """``root`` as a git repository whose ``main`` has one commit of ``base`` (name -> text)."""
    git(root, "init", "-q", "-b", "main")
    files = {"agentgate.yml": CONFIG, "test_a.py": FAILING_TEST, **base}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def early(root: Path, cwd: Path | None = None) -> list[tuple[str | None, int | None, str]]:
    """The integrity gate judged now, as the gate process does: its findings."""
    registry = get_registry()
    config = resolve_config(cwd or root, registry=registry)
    (result,) = Pipeline(Request(config), registry).early(["integrity"])
    # Other analyzers (result-rewritten for the same hooks) are not this module's subject.
    return [(f.path, f.line, f.message) for f in result.findings if f.code == "exit-forced"]


def test_exits_counts_only_what_the_change_adds_to_a_conftest(tmp_path: Path) -> None:
    base = {
        "conftest.py": "import sys\n\n\ndef pytest_configure(config):\n    sys.exit(1)\n",
        "tools/cli.py": "import sys\n\n\ndef main():\n    sys.exit(0)\n",
    }
    root = project(tmp_path, **base)
    assert early(root) == []  # what the base already had is not the change's
    change(
        root,
        **{
            "conftest.py": base["conftest.py"] + "\n\ndef helper():\n    return sys.exit\n",
            "tools/cli.py": base["tools/cli.py"] + "\n\ndef other():\n    sys.exit(2)\n",
            "sub/conftest.py": """\
                import os as o
                from pytest import exit as stop


                class Plugin:
                    def pytest_runtest_call(self, item):
                        o._exit(
                            0,
                        )


                def later():
                    stop("x")


                print(len("sys.exit(0)"))
                """,
            "sub/broken/conftest.py": "def (:\n",
        },
    )
    assert early(root) == [
        (
            "sub/conftest.py",
            7,
            "os._exit() in pytest_runtest_call() ends the pytest run from the project's own code, "
            "before the verdict",
        ),
        (
            "sub/conftest.py",
            13,
            "pytest.exit() in later() ends the pytest run from the project's own code, "
            "before the verdict",
        ),
    ]
    # A changed argument is a changed line; a conftest.py that is gone runs nothing.
    change(root, **{"conftest.py": base["conftest.py"].replace("exit(1)", "exit(0)")})
    (root / "sub" / "conftest.py").unlink()
    assert [(p, line) for p, line, _ in early(root)] == [("conftest.py", 5)]


def test_exits_in_a_project_below_the_repository_root(tmp_path: Path) -> None:
    root = project(tmp_path, **{"app/agentgate.yml": CONFIG, "app/test_a.py": FAILING_TEST})
    change(root, **{"app/conftest.py": "import os\nos._exit(0)\n"})
    assert [(p, line) for p, line, _ in early(root / "app")] == [("conftest.py", 2)]


def test_the_verdict_judges_the_evidence_collected_early(tmp_path: Path) -> None:
    # What the pytest plugin judged before the run is what its verdict says, even if the run
    # changed the working tree since; and the change is not read twice.
    root = project(tmp_path)
    registry = get_registry()
    pipeline = Pipeline(Request(resolve_config(root, registry=registry)), registry)
    (early,) = pipeline.early(["integrity"])
    assert early.status == "pass" and pipeline.early(["no-such-gate"]) == []
    change(root, **{"conftest.py": "import os\nos._exit(0)\n"})
    pipeline.run_commands()
    verdict = pipeline.verdict()
    integrity = next(g for g in verdict.gates if g.name == "integrity")
    assert integrity.status == "pass" and integrity.summary == early.summary
    # A pipeline that judged nothing early reads the change as it is now.
    fresh = Pipeline(Request(resolve_config(root, registry=registry)), registry)
    fresh.run_commands()
    assert next(g for g in fresh.verdict().gates if g.name == "integrity").status == "fail"
