"""What the benchmarks that gate examples/invoice share: a git copy of it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "invoice"


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=b@example.com", "-c", "user.name=bench", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def example_repo(folder: Path) -> Path:
    """examples/invoice copied into ``folder`` as a git repository with one commit."""
    root = folder / "invoice"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".agentgate", "__pycache__"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "example")
    return root
