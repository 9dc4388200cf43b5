"""Every module of the package can be the first one a program imports (no import cycle)."""

from __future__ import annotations

import subprocess
import sys

from _helpers import REPO

# Each module is imported first in turn: the package's modules are dropped from sys.modules
# before each one, as in a fresh interpreter (where a cycle fails with ImportError).
SCRIPT = """
import importlib, pathlib, sys
package = pathlib.Path(sys.argv[1])
names = sorted(
    ".".join(p.relative_to(package.parent).with_suffix("").parts).removesuffix(".__init__")
    for p in package.rglob("*.py")
    if p.name != "__main__.py"
)
failed = []
for name in names:
    for loaded in [m for m in sys.modules if m.split(".")[0] == package.name]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
print(len(names))
print("\\n".join(failed))
"""


def test_each_module_imports_first_without_a_cycle() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(REPO / "pytest_agentgate")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    count, *failed = done.stdout.strip().splitlines()
    assert int(count) > 100
    assert failed == []
