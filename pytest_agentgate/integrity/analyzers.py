"""The analyzers the integrity gate runs, one module per family of finding."""

from __future__ import annotations

# Each module has ``analyze(scan: Scan) -> Iterable[IntegrityFinding]``.
ANALYZERS: tuple[str, ...] = (
    "pytest_agentgate.integrity.tests_python",
    "pytest_agentgate.integrity.tests_js",
    "pytest_agentgate.integrity.exits",
    "pytest_agentgate.integrity.hooks",
    "pytest_agentgate.integrity.patches",
    "pytest_agentgate.integrity.under_test",
    "pytest_agentgate.integrity.settings",
    "pytest_agentgate.integrity.ignores",
    "pytest_agentgate.integrity.suppressions",
    "pytest_agentgate.integrity.stop_hooks",
    "pytest_agentgate.integrity.environment",
    "pytest_agentgate.integrity.interpreters",
    "pytest_agentgate.integrity.bytecode",
    "pytest_agentgate.integrity.disguise",
)
