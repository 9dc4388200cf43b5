"""Constants and types the test modules share (fixtures live in conftest.py).

Test modules import this module, never ``conftest``: ``tests/data`` holds a conftest.py of its
own, and whichever is imported first would own the name.
"""

from __future__ import annotations

import atexit
import importlib.util
import io
import json
import marshal
import shlex
import shutil
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

DATA = Path(__file__).parent / "data"
# The interpreter running these tests: gate commands use its pytest, ruff and coverage.
PY = shlex.quote(sys.executable)


@dataclass
class CliRun:
    """What one in-process ``agentgate`` call returned and printed."""

    code: int
    out: str
    err: str

    def verdict(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.out)
        return doc

    def gate(self, name: str) -> dict[str, Any]:
        return next(g for g in self.verdict()["gates"] if g["name"] == name)


# The tools wrote absolute paths into some samples under tests/data (see the READMEs there).
# Those paths are stored under this neutral root, never the machine's real checkout. A checkout
# reads a copy with that prefix replaced by its own root, so paths relative to the project work.
RECORDED_ROOT = "/home/user/project"
REPO = Path(__file__).resolve().parent.parent
_relocated: Path | None = None


def sample(relative: str) -> Path:
    """The sample ``tests/data/RELATIVE``, relocated to this checkout when it needs to be."""
    global _relocated
    path = DATA / relative
    if str(REPO) == RECORDED_ROOT or not path.is_file():
        return path
    if _relocated is None:
        _relocated = Path(tempfile.mkdtemp(prefix="agentgate-samples-"))
        atexit.register(shutil.rmtree, _relocated, True)
    target = _relocated / relative
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if path.read_bytes()[:16] == b"SQLite format 3\x00":
        from coverage import CoverageData

        recorded = CoverageData(str(path))
        recorded.read()
        moved = CoverageData(str(target))
        moved.update(recorded, map_path=lambda p: p.replace(RECORDED_ROOT, str(REPO), 1))
        moved.write()
    else:
        text = path.read_text(encoding="utf-8")
        target.write_text(text.replace(RECORDED_ROOT, str(REPO)), encoding="utf-8")
    return target


# An XML entity bomb: expanded, its last entity would be 10^9 characters. Readers must refuse it.
BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<testsuite><testcase classname="m" name="&lol9;"><failure message="&lol9;"/></testcase></testsuite>
"""


def assess(kind: Any, context: Any) -> Any:
    """A gate kind's two steps on one context: collect the evidence, then judge it."""
    return kind.judge(context.config, kind.collect(context))


def record(config: Any, task: Any, verdict: Any, **kwargs: Any) -> Any:
    """The recording step of a door's call, for a Verdict a test built by hand: the ledger
    decides the attempt and the engine concludes the verdict from the same gates."""
    from pytest_agentgate.engine import conclude
    from pytest_agentgate.state.ledger import record as ledger_record

    kwargs.setdefault("wall_s", 3.0)
    return ledger_record(
        config, task, verdict, lambda d: conclude(config, verdict.gates, decision=d), **kwargs
    )


# A module with a branch each side of which a test can take (coverage's branch measurement).
BRANCHED_ADD = """\
def add(a, b):
    if a < 0:
        return b + a
    return a + b
"""


def timestamp_pyc(code: CodeType, like: Path) -> bytes:
    """A pyc of ``code`` whose header has the file ``like``'s own modification time and size:
    what Python checks before it runs a pyc in that file's place."""
    stat = like.stat()
    header = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
    header += (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
    header += (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    return header + marshal.dumps(code)


def write(root: Path, path: str, text: str) -> None:
    """``text`` (dedented) into ``root / path``, its folders made."""
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(text), encoding="utf-8")


def edit(root: Path, path: str, old: str, new: str) -> None:
    """Replace ``old`` (which must be there) by ``new`` in ``root / path``, once."""
    text = (root / path).read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {path}"
    (root / path).write_text(text.replace(old, new, 1), encoding="utf-8")


_AUTHOR = ("-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false")


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` as a test's author; its stdout, stripped. Fails the test on an error."""
    import subprocess

    done = subprocess.run(
        ["git", *_AUTHOR, *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


# The ``agentgate`` script installed beside the interpreter running these tests.
AGENTGATE = Path(sys.executable).with_name("agentgate")
# A strict gate on the project's tests, run by pytest into a JUnit report.
# pytest's report maker replaced so that every failure is a pass: the trick the tests of the
# run-time checks plant in a conftest, a test module or a sitecustomize.
REPORT_PATCHER = """\
import _pytest.reports

_made = _pytest.reports.TestReport.from_item_and_call.__func__


def _passed(cls, item, call):
    report = _made(cls, item, call)
    if report.failed:
        report.outcome = "passed"
    return report


_pytest.reports.TestReport.from_item_and_call = classmethod(_passed)
"""

# What zero-config adds to its pytest command where pytest-cov is installed (project.py).
NO_COV = " --no-cov" if importlib.util.find_spec("pytest_cov") else ""
# The options zero-config adds to pytest for a project whose settings do not use pytest-xdist
# (one that does gets ` -n 0`: its tests run in the process `coverage run` measures).
PYTEST_OPTS = NO_COV

STRICT_TESTS = """\
profile: strict
gates:
  test:
    command: "{py} -m pytest -q -p no:cacheprovider --junitxml=.agentgate/junit.xml"
    report: .agentgate/junit.xml
"""


def gated_project(root: Path, config: str, files: dict[str, str]) -> Path:
    """A git repository at ``root`` whose ``main`` has one commit, the change's base:
    ``agentgate.yml`` (``config``, ``{py}`` this interpreter) and ``files`` (path -> text)."""
    root.mkdir(parents=True)
    (root / "agentgate.yml").write_text(config.replace("{py}", sys.executable))
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def verify_json(root: Path) -> tuple[int, dict[str, Any]]:
    """``agentgate verify --format json --no-cache`` in ``root``, in a process of its own: its
    exit status and the verdict it printed."""
    import subprocess

    proc = subprocess.run(
        [str(AGENTGATE), "verify", "--format", "json", "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return proc.returncode, json.loads(proc.stdout)


def only_gate(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    """The gate named ``name`` in the JSON ``verdict``: a failure unless there is exactly one."""
    (found,) = [g for g in verdict["gates"] if g["name"] == name]
    return found


def pytest_agentgate(root: Path, profile: str = "strict") -> tuple[int, dict[str, Any], str]:
    """``pytest --agentgate=PROFILE`` in ``root``, in a process of its own: its exit status, the
    verdict it wrote (``{}`` if none) and what it printed. Only the user's state directory of
    agentgate's variables is inherited (the tests' own, see conftest.py)."""
    import os
    import subprocess

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENTGATE", "PYTEST")) or k == "AGENTGATE_STATE_HOME"
    }
    env["NO_COLOR"] = "1"
    out = root / ".agentgate" / "verdict.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"--agentgate={profile}",
            f"--agentgate-json={out}",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    verdict = json.loads(out.read_text()) if out.is_file() else {}
    return proc.returncode, verdict, proc.stdout + proc.stderr


def run_hook(
    harness: str, payload: Any, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[str, str, int]:
    """``agentgate hook HARNESS ARGS`` in this process with ``payload`` on stdin (bytes as they
    are, anything else as JSON): what was printed since ``capsys`` was last read, and the exit
    status."""
    from pytest_agentgate.cli.main import main

    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw))
    try:
        code = main(["hook", harness, *args])
    finally:
        sys.stdin = old
    out, err = capsys.readouterr()
    return out, err, code


# A pytest plugin that rewrites failures as passes (the plugin an agent would plant).
REWRITER = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
"""


def egg_info(root: Path, name: str, entry_points: str) -> None:
    """A distribution's metadata folder in ``root``, as an install (or an agent) writes one."""
    info = root / f"{name.replace('-', '_')}.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)


def change(root: Path, **files: str) -> None:
    """The agent's change, in the working tree: each file (name -> text, dedented) written."""
    import textwrap

    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
