"""Custom gates: a command's exit code, or a numeric or severity threshold on its JSON report."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pytest_agentgate.gates.base import (
    COMMON_OPTIONS,
    GateInput,
    Option,
    command_problem,
    display_path,
    exit_disagrees,
    new_result,
    report_files,
    skipped,
    unreadable,
)
from pytest_agentgate.reports.jsonvalue import (
    SEVERITY_RANK,
    UNRANKED,
    load_json,
    lookup,
    severities,
)
from pytest_agentgate.reports.model import ReportError
from pytest_agentgate.verdict import GateResult


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

    def judge(self, gate: GateInput) -> GateResult:
        cfg = gate.config
        if (problem := command_problem(gate)) is not None:
            result = new_result(gate, "fail", f"{cfg.name} did not finish")
            result.problems.append(problem)
            return result
        uses_report = (
            bool(cfg.options.get("metric")) or cfg.thresholds.get("max_severity") is not None
        )
        if not uses_report:
            return self._exit_code_only(gate)
        try:
            data, source = self._load(gate)
        except ReportError as exc:
            return unreadable(gate, f"{cfg.name} report could not be read", exc)
        if data is None:
            return skipped(gate, "not run (--no-run) and no report configured")
        if cfg.options.get("metric"):
            return self._metric(gate, data, source)
        return self._severity(gate, data)

    def _exit_code_only(self, gate: GateInput) -> GateResult:
        res = gate.result
        if gate.config.command is None:
            return skipped(gate, "no command configured")
        if res is None:
            return skipped(gate, "not run (--no-run)")
        ok = res.exit_code == 0
        result = new_result(gate, "pass" if ok else "fail", f"exit code {res.exit_code}")
        result.actual = {"exit_code": res.exit_code}
        if not ok:
            result.notes.append("output tail:\n" + res.output_tail)
        return result

    def _load(self, gate: GateInput) -> tuple[object, str]:
        cfg = gate.config
        if cfg.reports:
            files = report_files(gate, "JSON report", "the command must write it")
            if len(files) != 1:
                raise ReportError(", ".join(cfg.reports), "expected exactly one JSON report")
            path: Path = files[0]
            source = display_path(path, gate.root)
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise ReportError(source, f"cannot be read: {exc.strerror}") from None
            return load_json(text, source), source
        if gate.result is None:
            return None, ""
        source = f"stdout of `{cfg.command}`"
        return load_json(gate.result.stdout, source), source

    def _metric(self, gate: GateInput, data: object, source: str) -> GateResult:
        cfg = gate.config
        metric = str(cfg.options["metric"])
        try:
            value = lookup(data, metric, source)
        except ReportError as exc:
            result = new_result(gate, "fail", f"{metric} could not be measured")
            result.problems.append(str(exc))
            return result
        low, high = cfg.thresholds.get("min"), cfg.thresholds.get("max")
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
            gate,
            "fail" if bad else "pass",
            f"{metric} = {value:g}" + (f" ({bounds})" if bounds else ""),
        )
        result.actual = {
            "value": value,
            "exit_code": None if gate.result is None else gate.result.exit_code,
        }
        if not bad and gate.result is not None and gate.result.exit_code not in (0, None):
            result.status = "fail"
            result.problems.append(
                f"`{cfg.command}` exited with code {gate.result.exit_code}; output tail:\n"
                + gate.result.output_tail
            )
        return result

    def _severity(self, gate: GateInput, data: object) -> GateResult:
        cfg = gate.config
        allowed = str(cfg.thresholds["max_severity"])
        counts = Counter(severities(data))
        limit = SEVERITY_RANK[allowed]
        over = {s: n for s, n in counts.items() if SEVERITY_RANK.get(s, UNRANKED) > limit}
        unranked = sorted(s for s in counts if s not in SEVERITY_RANK)
        shown = ", ".join(f"{n} {s}" for s, n in counts.most_common()) or "no findings"
        result = new_result(gate, "fail" if over else "pass", f"{shown} (max severity {allowed})")
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
        elif not counts and (msg := exit_disagrees(gate)):
            result.status = "fail"
            result.problems.append(msg)
        return result


def _scale() -> str:
    """``none, info, … < low, minor < …``: the known words, lowest rank first."""
    ranks: dict[int, list[str]] = {}
    for word, rank in SEVERITY_RANK.items():
        ranks.setdefault(rank, []).append(word)
    return " < ".join(", ".join(words) for _, words in sorted(ranks.items()))
