"""The analyzers the integrity gate runs, one module per family of finding."""

from __future__ import annotations

# Each module has ``analyze(scan: Scan) -> Iterable[IntegrityFinding]``.
ANALYZERS: tuple[str, ...] = (
    "pytest_agentgate.integrity.tests_python",
    "pytest_agentgate.integrity.tests_js",
)
