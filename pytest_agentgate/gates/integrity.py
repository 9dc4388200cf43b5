"""The integrity gate: what the change did to the tests, the configuration and the evidence.

It is part of every configuration (see ``config/validate.py``): the change cannot remove it,
because the configuration that counts is the base's. Its findings come from the analyzers in
:mod:`pytest_agentgate.integrity.analyzers`; each names a rule of
:mod:`pytest_agentgate.integrity.rules` at file:line.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path

from pytest_agentgate.config.model import AllowRule, Config, GateConfig
from pytest_agentgate.gates.base import CollectContext, Evidence, Option
from pytest_agentgate.gates.judging import new_result, skipped
from pytest_agentgate.git import Base, BaseMissing, Change, Repo
from pytest_agentgate.integrity.analyzers import ANALYZERS
from pytest_agentgate.integrity.model import IntegrityFinding, Scan, allowed
from pytest_agentgate.integrity.rules import RULES
from pytest_agentgate.verdict import Finding, GateResult

BLOCK_CHOICES = ("all", "tampering")


@dataclass
class IntegrityEvidence(Evidence):
    base: Base | None = None
    findings: list[IntegrityFinding] = field(default_factory=list)
    allow: list[AllowRule] = field(default_factory=list)
    # Files the base could not hold (a snapshot over its size budget): not judged.
    left_out: list[str] = field(default_factory=list)


class CachedSources:
    """Both sides of each file, read once: the base's through one ``git cat-file`` batch."""

    def __init__(self, root: Path, repo: Repo, change: Change) -> None:
        self.root = root
        self.repo = repo
        self.change = change
        self._base: dict[str, str | None] = {}
        self._now: dict[str, str | None] = {}

    def _repo_path(self, path: str) -> str:
        prefix = self.root.resolve().relative_to(self.repo.toplevel).as_posix()
        return path if prefix == "." else f"{prefix}/{path}"

    def prefetch(self, paths: list[str]) -> None:
        wanted = {self._repo_path(p): p for p in paths if p not in self._base}
        for repo_path, text in self.repo.read_at(self.change.base, wanted).items():
            self._base[wanted[repo_path]] = text

    def at_base(self, path: str) -> str | None:
        if path not in self._base:
            self.prefetch([path])
        return self._base.get(path)

    def now(self, path: str) -> str | None:
        if path not in self._now:
            try:
                self._now[path] = (self.root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                self._now[path] = None
        return self._now[path]


def scan_for(context: CollectContext, config: Config, repo: Repo, change: Change) -> Scan:
    sources = CachedSources(context.root, repo, change)
    scan = Scan(context.root, repo, change, config, sources)
    for entry in change.files.values():
        path = change.relative(entry.path, context.root)
        if path is None:
            continue
        scan.touched[path] = entry.status
        if entry.old_path is not None:
            old = change.relative(entry.old_path, context.root)
            if old is not None:
                scan.renamed_from[path] = old
    # Every touched file's base side in one `git cat-file --batch`, not one process a file.
    sources.prefetch([scan.renamed_from.get(p, p) for p in scan.touched])
    return scan


class IntegrityGate:
    name = "integrity"
    options: tuple[Option, ...] = (
        Option("enabled", "bool", "false skips the gate"),
        Option("blocking", "bool", "false reports the gate without failing the verdict"),
        Option(
            "block",
            "choice",
            "all: every finding fails the gate; tampering: weakening (skips, suppressions, "
            "reruns) is reported, not blocking",
            choices=BLOCK_CHOICES,
            threshold=True,
        ),
    )
    stdout_report = False
    # Its evidence needs no command: collected while the commands run.
    independent = True

    def collect(self, context: CollectContext) -> IntegrityEvidence:
        evidence = IntegrityEvidence(context.root)
        found = context.change
        if found is None:
            evidence.missing = "not a git repository: there is no base to compare the change with"
            return evidence
        if isinstance(found, BaseMissing):
            evidence.missing = f"no base to compare with: {found}"
            return evidence
        repo, change = found
        evidence.base = change.base
        evidence.left_out = list(getattr(repo, "left_out", ()))
        config = context.project
        if config is None:  # pragma: no cover - the engine always passes the configuration
            return evidence
        evidence.allow = list(config.integrity_allow)
        scan = scan_for(context, config, repo, change)
        seen: set[tuple[str, str | None, int | None]] = set()
        for name in ANALYZERS:
            module = importlib.import_module(name)
            results = list(module.analyze(scan))
            # Two analyzers may see the same thing (a forced exit in a hook): report it once.
            evidence.findings.extend(f for f in results if (f.rule, f.path, f.line) not in seen)
            seen.update((f.rule, f.path, f.line) for f in results)
        return evidence

    def judge(self, config: GateConfig, evidence: IntegrityEvidence) -> GateResult:
        if evidence.missing is not None or evidence.base is None:
            why = evidence.missing or "no base"
            if "no base to compare with" in why:  # a base was expected and is not there
                result = new_result(config, evidence, "fail", "the change could not be checked")
                result.problems.append(why)
                result.actual = {"findings": None, "blocking": None}
                return result
            return skipped(config, evidence, why, {"findings": None, "blocking": None})
        block_all = config.thresholds.get("block", "all") == "all"
        blocking: list[IntegrityFinding] = []
        findings: list[Finding] = []
        for item in evidence.findings:
            rule = RULES[item.rule]
            approval = allowed(item, evidence.allow)
            blocks = (
                approval is None
                and rule.weight != "notice"
                and (block_all or rule.weight == "tampering")
            )
            if blocks:
                blocking.append(item)
            reason = item.message
            if approval is not None:
                reason += f" (allowed by the base's configuration: {approval.reason})"
            findings.append(
                Finding(
                    reason,
                    path=item.path,
                    line=item.line,
                    code=item.rule,
                    severity="error" if blocks else "warning",
                )
            )
        findings.sort(key=lambda f: f.severity != "error")
        against = f"against {evidence.base.describe()}"
        if not evidence.findings:
            summary = f"the change weakens nothing {against}"
        else:
            summary = (
                f"{len(blocking)} of {len(evidence.findings)} findings block {against}"
                if blocking
                else f"{len(evidence.findings)} findings reported, none blocking, {against}"
            )
        result = new_result(config, evidence, "fail" if blocking else "pass", summary)
        result.findings = findings
        result.actual = {"findings": len(evidence.findings), "blocking": len(blocking)}
        if evidence.left_out:
            shown = ", ".join(evidence.left_out[:3])
            more = len(evidence.left_out) - 3
            result.summary += (
                f" ({len(evidence.left_out)} files were too many for the snapshot and are not "
                f"judged: {shown}{f' and {more} more' if more > 0 else ''}; a git repository "
                "has no such limit)"
            )
        if blocking:
            restore = sorted({RULES[item.rule].restore for item in blocking})
            result.notes.extend(restore)
        return result
