"""Custom gates: a command's exit code, or a numeric or severity threshold on its JSON report."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import COMMON_OPTIONS, CollectContext, Evidence, Option
from pytest_agentgate.gates.collect import read_report_text, report_files
from pytest_agentgate.gates.judging import (
    command_problem,
    exit_disagrees,
    new_result,
    skipped,
    unreadable,
)
from pytest_agentgate.reports._io import display_path
from pytest_agentgate.reports.jsonvalue import (
    SEVERITY_RANK,
    UNRANKED,
    load_json,
    lookup,
    severities,
)
from pytest_agentgate.reports.model import ReportError
from pytest_agentgate.verdict import GateResult


@dataclass
class CustomEvidence(Evidence):
    # The JSON report (None when the gate judges the exit code only), and where it came from.
    data: object = None
    source: str = ""
    # The metric's value, when one is configured and the report has it.
    value: float | None = None
    metric_error: ReportError | None = None


def _uses_report(config: GateConfig) -> bool:
    return bool(config.options.get("metric")) or config.thresholds.get("max_severity") is not None


class CustomGate:
    name = "custom"
    options: tuple[Option, ...] = (
        *COMMON_OPTIONS,
        Option("name", "str", "the gate's name in the verdict"),
        Option("report", "globs", "JSON report file; the command's stdout when omitted"),
        Option("metric", "str", "dotted path to a number in the JSON report, e.g. summary.high"),
        Option("max", "number", "the metric must be at most this", threshold=True),
        Option("min", "number", "the metric must be at least this", threshold=True),
        Option(
            "max_severity",
            "choice",
            "highest severity tolerated in the report",
            choices=tuple(SEVERITY_RANK),
            threshold=True,
        ),
    )
    stdout_report = True

    def collect(self, context: CollectContext) -> CustomEvidence:
        cfg = context.config
        res = context.result
        evidence = CustomEvidence(context.root, command=res)
        if res is not None and (res.cut_short or res.start_error):
            return evidence  # the judge says why the command's run cannot be trusted
        if not _uses_report(cfg):
            if cfg.command is None:
                evidence.missing = "no command configured"
            elif res is None:
                evidence.missing = "not run (--no-run)"
            return evidence
        try:
            if cfg.reports:
                files = report_files(context, "JSON report", "the command must write it")
                if len(files) != 1:
                    raise ReportError(", ".join(cfg.reports), "expected exactly one JSON report")
                evidence.source = display_path(str(files[0]), context.root)
                text = read_report_text(files[0], "JSON report", evidence.source)
                evidence.data = load_json(text, evidence.source)
            elif res is None:
                evidence.missing = "not run (--no-run) and no report configured"
                return evidence
            else:
                evidence.source = f"stdout of `{cfg.command}`"
                evidence.data = load_json(res.stdout, evidence.source)
        except ReportError as exc:
            evidence.error = exc
            return evidence
        if metric := cfg.options.get("metric"):
            try:
                evidence.value = lookup(evidence.data, str(metric), evidence.source)
            except ReportError as exc:
                evidence.metric_error = exc
        return evidence

    def judge(self, config: GateConfig, evidence: CustomEvidence) -> GateResult:
        if (problem := command_problem(config, evidence)) is not None:
            result = new_result(config, evidence, "fail", f"{config.name} did not finish")
            result.problems.append(problem)
            return result
        if not _uses_report(config):
            return _exit_code_only(config, evidence)
        if evidence.error is not None:
            return unreadable(
                config, evidence, f"{config.name} report could not be read", evidence.error
            )
        if evidence.missing is not None:
            return skipped(config, evidence, evidence.missing)
        if config.options.get("metric"):
            return _metric(config, evidence)
        return _severity(config, evidence)


def _exit_code_only(config: GateConfig, evidence: CustomEvidence) -> GateResult:
    res = evidence.command
    if evidence.missing is not None or res is None:
        return skipped(config, evidence, evidence.missing or "not run (--no-run)")
    ok = res.exit_code == 0
    result = new_result(config, evidence, "pass" if ok else "fail", f"exit code {res.exit_code}")
    result.actual = {"exit_code": res.exit_code}
    if not ok:
        result.notes.append("output tail:\n" + res.output_tail)
    return result


def _metric(config: GateConfig, evidence: CustomEvidence) -> GateResult:
    metric = str(config.options["metric"])
    value = evidence.value
    if value is None:
        result = new_result(config, evidence, "fail", f"{metric} could not be measured")
        if evidence.metric_error is not None:
            result.problems.append(str(evidence.metric_error))
        return result
    low, high = config.thresholds.get("min"), config.thresholds.get("max")
    bad = (low is not None and value < low) or (high is not None and value > high)
    bounds = " ".join(
        part
        for part in (
            f"min {low:g}" if low is not None else "",
            f"max {high:g}" if high is not None else "",
        )
        if part
    )
    result = new_result(
        config,
        evidence,
        "fail" if bad else "pass",
        f"{metric} = {value:g}" + (f" ({bounds})" if bounds else ""),
    )
    res = evidence.command
    result.actual = {"value": value, "exit_code": None if res is None else res.exit_code}
    if not bad and res is not None and res.exit_code not in (0, None):
        result.status = "fail"
        result.problems.append(
            f"`{config.command}` exited with code {res.exit_code}; output tail:\n" + res.output_tail
        )
    return result


def _severity(config: GateConfig, evidence: CustomEvidence) -> GateResult:
    allowed = str(config.thresholds["max_severity"])
    counts = Counter(severities(evidence.data))
    limit = SEVERITY_RANK[allowed]
    over = {s: n for s, n in counts.items() if SEVERITY_RANK.get(s, UNRANKED) > limit}
    unranked = sorted(s for s in counts if s not in SEVERITY_RANK)
    shown = ", ".join(f"{n} {s}" for s, n in counts.most_common()) or "no findings"
    result = new_result(
        config, evidence, "fail" if over else "pass", f"{shown} (max severity {allowed})"
    )
    result.actual = {"severities": dict(counts)}
    if over:
        result.notes.append(
            "above the tolerated severity: " + ", ".join(f"{n} {s}" for s, n in over.items())
        )
    if unranked and over:
        words = ", ".join(f"'{s}'" for s in unranked)
        result.problems.append(
            f"agentgate cannot rank the severity {words}, so it counts as the highest. "
            f"Known severities, lowest first: {_scale()}. To tolerate every severity, set "
            "max_severity: critical."
        )
    elif not counts and (msg := exit_disagrees(config, evidence)):
        result.status = "fail"
        result.problems.append(msg)
    return result


def _scale() -> str:
    """``none, info, … < low, minor < …``: the known words, lowest rank first."""
    ranks: dict[int, list[str]] = {}
    for word, rank in SEVERITY_RANK.items():
        ranks.setdefault(rank, []).append(word)
    return " < ".join(", ".join(words) for _, words in sorted(ranks.items()))
