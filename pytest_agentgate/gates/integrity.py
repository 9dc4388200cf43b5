"""The integrity gate: what the change did to the tests, the configuration and the evidence.

It is part of every configuration (see ``config/validate.py``): the change cannot remove it,
because the configuration that counts is the base's. Its findings come from the analyzers in
:mod:`pytest_agentgate.integrity.analyzers`; each names a rule of
:mod:`pytest_agentgate.integrity.rules` at file:line.

It also compares how many tests the test run selected with how many the base's suite selects
(``test-count-below-base``): the base's figure is measured while the commands run
(:mod:`pytest_agentgate.integrity.base_count`), the run's is the test gate's evidence, and the
engine hands both to this gate's evidence (:func:`with_suite_counts`) before it is judged.
So it does with the startup code the test run's interpreter ran that no installed package put
there (``startup-code-planted``, :func:`with_startup_code`): only the run sees its environment.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_agentgate import syntax
from pytest_agentgate.commands import MAX_RUN_LISTED_TESTS
from pytest_agentgate.config.model import AllowRule, Config, GateConfig
from pytest_agentgate.gates.base import CollectContext, Evidence, Option
from pytest_agentgate.gates.judging import new_result, skipped
from pytest_agentgate.gates.test import SuiteEvidence
from pytest_agentgate.git import Base, BaseMissing, Change, Repo
from pytest_agentgate.integrity.analyzers import ANALYZERS
from pytest_agentgate.integrity.base_count import BaseCount
from pytest_agentgate.integrity.model import EditedTest, IntegrityFinding, Scan, allowed
from pytest_agentgate.integrity.rules import RULES
from pytest_agentgate.integrity.tests_python import read_settings, settings_file
from pytest_agentgate.reports.model import TestCaseResult
from pytest_agentgate.syntax import dumped
from pytest_agentgate.texts import decode, is_python, read_regular, universal_newlines
from pytest_agentgate.verdict import Finding, GateResult

BLOCK_CHOICES = ("all", "tampering")
COUNT_RULE = "test-count-below-base"
FEATURE_RULE = "test-removed-with-feature"
# The rules whose findings name tests the change takes out of the run (removed, cases dropped,
# no longer collected, deselected, skipped for a whole file): with any of them, a count below
# the base's is what they already say, shown as a note (a feature removed with its tests is
# honest work).
EXPLAINS_FEWER = frozenset(
    {
        "test-removed",
        "test-removed-with-feature",
        "tests-fewer",
        "selection-narrowed",
        "skip-added",
        "tool-config-loosened",
    }
)


@dataclass(frozen=True)
class SuiteCount:
    """One test gate's count at the base, and what its run selected now (None: not known,
    ``why_not_now`` says why)."""

    base: BaseCount
    now: int | None = None
    why_not_now: str | None = None
    # The test functions this run's selection deselected, and those it collected
    # (SuiteEvidence.deselected_tests, collected_tests).
    deselected_now: tuple[str, ...] | None = None
    collected_now: tuple[str, ...] | None = None
    # The run collected more test functions than it lists (commands.MAX_RUN_LISTED_TESTS).
    over_limit: bool = False


@dataclass
class IntegrityEvidence(Evidence):
    base: Base | None = None
    findings: list[IntegrityFinding] = field(default_factory=list)
    allow: list[AllowRule] = field(default_factory=list)
    # Files the base could not hold (a snapshot over its size budget): not judged.
    left_out: list[str] = field(default_factory=list)
    # The test counts (with_suite_counts), and where a count below the base's is reported: the
    # file pytest reads its settings from, else its first testpaths entry.
    counts: list[SuiteCount] = field(default_factory=list)
    count_path: str | None = None
    # The base's tests the change edits (the test-file analyzers'): one this run skipped is a
    # skip the change made (with_skipped_tests).
    edited_tests: list[EditedTest] = field(default_factory=list)
    # The tests the change adds (path::qualname), and the lines it adds to its Python files: a
    # test of the base this run skipped from such a line was skipped by the change.
    new_tests: list[str] = field(default_factory=list)
    # The base's tests the change renames or moves (path::qualname at the base -> now).
    renamed_tests: dict[str, str] = field(default_factory=dict)
    check_hosts: dict[str, str] = field(default_factory=dict)  # now -> the base's test
    # The base's tests the change folds into another (merged, or made a parametrized case).
    folded_tests: int = 0
    # The test classes the change deletes, not renamed (path::qualname at the base), each with
    # the code the change deletes that it went with, or None (Scan.deleted_classes).
    deleted_classes: dict[str, str | None] = field(default_factory=dict)
    # The files the change deletes (project-relative).
    deleted: list[str] = field(default_factory=list)
    added_lines: dict[str, list[int]] = field(default_factory=dict)


def with_suite_counts(
    found: Mapping[str, Evidence | GateResult], counts: Mapping[str, BaseCount]
) -> dict[str, Evidence | GateResult]:
    """``found`` with each integrity gate's evidence given the test gates' counts: at the base
    (``counts``, by test gate) and in this run (the test gate's evidence). Pure: the engine
    calls it between collecting and judging, so the integrity judge compares two figures of
    its own evidence."""
    out = dict(found)
    if not counts:
        return out
    suite = []
    for gate, base in counts.items():
        now, why_not = _selected_now(found.get(gate))
        deselected, collected, over = _tests_now(found.get(gate))
        suite.append(SuiteCount(base, now, why_not, deselected, collected, over))
    for name, evidence in found.items():
        if isinstance(evidence, IntegrityEvidence) and evidence.base is not None:
            out[name] = dataclasses.replace(evidence, counts=suite)
    return out


STARTUP_RULE = "startup-code-planted"
STARTUP_MACHINE_RULE = "startup-code-of-the-machine"


def with_startup_code(
    found: Mapping[str, Evidence | GateResult],
) -> dict[str, Evidence | GateResult]:
    """``found`` with each integrity gate's evidence given a finding for each piece of startup
    code the test gates' interpreters ran that no installed distribution put there (their
    evidence's ``startup``: pytest_plugin/startup.py). Pure, as :func:`with_suite_counts`."""
    out = dict(found)
    startup = sorted(
        {entry for e in found.values() if isinstance(e, SuiteEvidence) for entry in e.startup}
    )
    if not startup:
        return out
    for name, evidence in found.items():
        if not isinstance(evidence, IntegrityEvidence):
            continue
        findings = list(evidence.findings)
        for path, line, code, system in startup:
            shown = _project_path(path, evidence.root)
            if line == 0:  # a pytest plugin (startup.planted_plugins)
                machine = system and Path(shown).is_absolute()
                message = (
                    f"{code} ({Path(path).name}): it runs in every run of the tests, and no "
                    "package installed from an index put it there as it is; it can rewrite any "
                    "test's result"
                ) + ("; outside the project and its virtual environment: the machine's own "
                     "set-up, shown, not judged" if machine else "")  # fmt: skip
                rule = STARTUP_MACHINE_RULE if machine else STARTUP_RULE
                findings.append(IntegrityFinding(rule, message, shown, None))
                continue
            if system and Path(shown).is_absolute():  # the machine's, outside the project
                message = (
                    f"Python runs `{code}` from {Path(path).name} at every start, outside the "
                    "project and its virtual environment, and no installed package put it "
                    "there: the machine's own set-up, shown, not judged (tests run in a "
                    "virtual environment of the project's are judged on all they run)"
                )
                findings.append(IntegrityFinding(STARTUP_MACHINE_RULE, message, shown, line))
                continue
            findings.append(
                IntegrityFinding(
                    STARTUP_RULE,
                    f"Python runs `{code}` from {Path(path).name} at every start of the "
                    "interpreter that runs the tests, and no installed package put it there: "
                    "it can replace the code under test or the test tools before any test runs",
                    shown,
                    line,
                )
            )
        out[name] = dataclasses.replace(evidence, findings=findings)
    return out


def with_installs(
    found: Mapping[str, Evidence | GateResult], changes: Sequence[tuple[str, str]]
) -> dict[str, Evidence | GateResult]:
    """``found`` with each integrity gate's evidence given an ``environment-changed`` finding
    for each of ``changes`` (integrity/installs.py: the test tools and plugins installed in
    the tests' environment since the task began, each as its dist-info's path and the
    message). Pure, as :func:`with_suite_counts`."""
    out = dict(found)
    if not changes:
        return out
    for name, evidence in found.items():
        if isinstance(evidence, IntegrityEvidence):
            added = [
                IntegrityFinding(INSTALLS_RULE, message, _project_path(path, evidence.root), None)
                for path, message in changes
            ]
            out[name] = dataclasses.replace(evidence, findings=[*evidence.findings, *added])
    return out


INSTALLS_RULE = "environment-changed"
SKIP_RULE = "skip-added"


def with_skipped_tests(
    found: Mapping[str, Evidence | GateResult],
) -> dict[str, Evidence | GateResult]:
    """``found`` with each integrity gate's evidence given a ``skip-added`` finding for each
    test of the base this run skipped (or xfailed) where the change made it so, though its
    source need not show it: a test the change edits, where the base's test had no skip of
    its own (a fixture that skips when a variable is unset, ``importorskip`` of a computed
    name, a marker a hook adds); and any test of the base skipped from a line the change adds
    (a conftest hook that raises ``pytest.skip.Exception`` or calls ``pytest.xfail()``, the
    code under test raising ``unittest.SkipTest``: agentgate's pytest plugin records where).
    Pure, as :func:`with_suite_counts`."""
    out = dict(found)
    skipped = [
        test
        for e in found.values()
        if isinstance(e, SuiteEvidence) and e.run is not None
        for test in e.run.skipped_tests
    ]
    if not skipped:
        return out
    for name, evidence in found.items():
        if not isinstance(evidence, IntegrityEvidence):
            continue
        edited, reported = _skipped_edited_tests(evidence, skipped)
        hosts = _skipped_hosts(evidence, skipped, reported)
        by_lines = _skipped_by_added_lines(
            evidence, [*evidence.findings, *edited, *hosts], skipped, reported
        )
        if edited or hosts or by_lines:
            findings = [*evidence.findings, *edited, *hosts, *by_lines]
            out[name] = dataclasses.replace(evidence, findings=findings)
    return out


def _skipped_hosts(
    evidence: IntegrityEvidence, skipped: list[TestCaseResult], reported: set[str]
) -> list[IntegrityFinding]:
    """A finding for each test a base test was renamed, moved or folded into that this run
    skipped, whatever skipped it (red team 53: the failing test folded into a new test
    marked `slow`, which the base's conftest skips unless `--runslow`): what the base test
    checked no longer runs. Keys of the runs it reports go into ``reported``."""
    runs = {_test_key(t.classname, t.name): t for t in skipped}
    could_skip = {f"{t.path}::{t.qualname}" for t in evidence.edited_tests if t.skipped_at_base}
    by_host: dict[str, list[str]] = {}
    pairs = [*evidence.renamed_tests.items(), *((b, h) for h, b in evidence.check_hosts.items())]
    for base, host in pairs:
        if host not in could_skip:  # it could skip at the base: the base's skip
            by_host.setdefault(host, []).append(base)
    findings = []
    for host, bases in sorted(by_host.items()):
        key = _test_key("", host)
        hits = [k for k in runs if k == key or k.endswith("." + key)]
        if not hits or all(k in reported for k in hits):
            continue
        reported.update(hits)
        path, _, qualname = host.partition("::")
        run = runs[hits[0]]
        why = f" ({run.message})" if run.message else ""
        shown = ", ".join(bases[:3]) + (f" and {len(bases) - 3} more" if len(bases) > 3 else "")
        findings.append(
            IntegrityFinding(
                SKIP_RULE,
                f"{qualname}, which holds what {shown} checked at the base (renamed, moved or "
                f"folded there), is skipped in this run{why}: what the base's test checked no "
                "longer runs",
                path,
                None,
            )
        )
    return findings


def _skipped_edited_tests(
    evidence: IntegrityEvidence, skipped: list[TestCaseResult]
) -> tuple[list[IntegrityFinding], set[str]]:
    """The findings for the tests the change edits that this run skipped, and their keys."""
    runs = {_test_key(t.classname, t.name): t for t in skipped}
    # A skip the source shows is found already, by its mark or call: once is enough.
    marked = [(f.path, f.message) for f in evidence.findings if f.rule == SKIP_RULE]
    findings = []
    reported: set[str] = set()
    for test in evidence.edited_tests:
        function = test.qualname.rsplit("::", 1)[-1]
        if test.skipped_at_base:  # it could skip at the base: not the change's skip, either way
            key = _edited_key(test)
            reported.update(k for k in runs if k == key or k.endswith("." + key))
            continue
        if any(
            path == test.path and re.search(rf"\b{re.escape(function)}\b", message)
            for path, message in marked
        ):
            continue
        key = _edited_key(test)
        found = next(((k, r) for k, r in runs.items() if k == key or k.endswith("." + key)), None)
        if found is None:
            found = next(((k, r) for k, r in runs.items() if key.endswith("." + k)), None)
        if found is None:
            continue
        run_key, run = found
        reported.add(run_key)
        why = f" ({run.message})" if run.message else ""
        findings.append(
            IntegrityFinding(
                SKIP_RULE,
                f"{test.qualname} ran at the base and is skipped in this run{why}, and the "
                "change edits it: what skips it is the change's (a fixture, a computed "
                "importorskip, a marker a hook adds)",
                test.path,
                test.line,
            )
        )
    return findings, reported


def _skipped_by_added_lines(
    evidence: IntegrityEvidence,
    findings: list[IntegrityFinding],
    skipped: list[TestCaseResult],
    reported: set[str],
) -> list[IntegrityFinding]:
    """A finding for each line the change adds from which this run skipped tests of the base
    (a test the change adds may skip itself; one already reported is not reported again). A
    test a base test was renamed or folded into is the base's (red team 52: the fold's host
    called a helper of the change that skipped it)."""
    hosts = set(evidence.renamed_tests.values())
    new = [_test_key("", key) for key in evidence.new_tests if key not in hosts]
    seen = {(f.path, f.line) for f in findings if f.rule == SKIP_RULE}
    added = {path: set(lines) for path, lines in evidence.added_lines.items()}
    by_line: dict[tuple[str, int], list[str]] = {}
    for test in skipped:
        path, _, line = (test.raised_at or "").rpartition(":")
        if not path or not line.isdigit():
            continue
        where = (_project_path(path, evidence.root), int(line))
        if where in seen or where[1] not in added.get(where[0], ()):
            continue
        key = _test_key(test.classname, test.name)
        if key in reported or any(
            k == key or k.endswith("." + key) or key.endswith("." + k) for k in new
        ):
            continue
        by_line.setdefault(where, []).append(test.display_name)
    out = []
    for (path, number), tests in sorted(by_line.items()):
        shown = ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
        out.append(
            IntegrityFinding(
                SKIP_RULE,
                f"this line, which the change adds, skipped {len(tests)} test(s) of the base in "
                f"this run ({shown}): they count as skipped or xfailed, not failed",
                path,
                number,
            )
        )
    return out


_SKIP_WORDS = re.compile(r"\b(?:skip|skipif|xfail|importorskip|skipTest|SkipTest|Skipped)\b")


def _new_lines(scan: Scan, path: str) -> list[int]:
    """The lines the change adds to ``path``, less those that only reword a skip the base
    had: a line naming a skip is new only past the base's count of such lines (a message
    edited, a `pytest.skip("needs docker")` moved into a fixture, is the base's skip)."""
    added = scan.added_lines(path)
    now = scan.sources.now(path) or ""
    if not added or not _SKIP_WORDS.search(now):
        return sorted(added)
    before = scan.sources.at_base(scan.renamed_from.get(path, path)) or ""
    lines = now.splitlines()
    naming = [n for n, line in enumerate(lines, 1) if _SKIP_WORDS.search(line)]
    added_skips = [n for n in naming if n in added]
    kept_skips = len(naming) - len(added_skips)
    base_skips = sum(1 for line in before.splitlines() if _SKIP_WORDS.search(line))
    reworded = set(added_skips[: max(0, base_skips - kept_skips)])
    return sorted(n for n in added if n not in reworded)


def _test_key(classname: str, name: str) -> str:
    """A test as ``tests.test_a.TestB.test_c``, from a JUnit case (``tests.test_a.TestB``,
    ``test_c[1]``) or a pytest node id (``tests/test_a.py::TestB::test_c[1]``)."""
    name = name.split("[", 1)[0]
    if "::" in name:
        path, _, rest = name.partition("::")
        path = path.removesuffix(".py").replace("\\", "/").strip("/").replace("/", ".")
        return f"{path}.{rest.replace('::', '.')}"
    return f"{classname}.{name}" if classname else name


def _edited_key(test: EditedTest) -> str:
    module = test.path.removesuffix(".py").replace("/", ".")
    return f"{module}.{test.qualname.replace('::', '.')}"


def _project_path(path: str, root: Path) -> str:
    """``path`` relative to the project when it is inside it (a ``.venv`` of the project's),
    else as it is."""
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return path


def _tests_now(
    evidence: Evidence | GateResult | None,
) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None, bool]:
    """The test functions the run's selection deselected, those it collected, and whether it
    collected more than it lists."""
    if not isinstance(evidence, SuiteEvidence):
        return None, None, False
    deselected, collected = evidence.deselected_tests, evidence.collected_tests
    return (
        None if deselected is None else tuple(deselected),
        None if collected is None else tuple(collected),
        evidence.tests_over_limit,
    )


def _deselected_by_the_change(
    evidence: IntegrityEvidence, count: SuiteCount
) -> list[IntegrityFinding]:
    """A ``skip-added`` finding for each test of the base that this run's selection (``-m``,
    ``-k``, ``--deselect``) leaves out and the base's did not: a mark put on it by whatever
    spelling (a helper decorator, ``getattr(pytest.mark, name)``, a dict of marks), a mark a
    hook adds, or the selection itself. Only a test whose counterpart at the base (itself, or
    the test the change renamed to it) was collected and not deselected there: a new test,
    or a renamed one the base deselected already, is not the change's skip (review 24); one
    a finding names already is not reported twice."""
    if count.deselected_now is None or count.base.deselected is None or count.base.tests is None:
        return []
    at_base = {_name_key(name) for name in _defined(count.base.tests)}
    deselected_at_base = {_name_key(name) for name in count.base.deselected}
    renamed_from = {_test_key("", b): _test_key("", a) for a, b in evidence.renamed_tests.items()}
    out = []
    for test in count.deselected_now:
        key = _name_key(test)
        origin = key if key in at_base else None
        if origin is None:
            source = next((a for b, a in renamed_from.items() if _same_test(b, key)), None)
            origin = next((k for k in at_base if source and _same_test(k, source)), None)
        if origin is None or origin in deselected_at_base:
            continue  # new, or the base left it out too
        path, _, qualname = test.partition("::")
        if _named_by_a_finding(evidence, path, qualname.rsplit("::", 1)[-1]):
            continue
        out.append(
            IntegrityFinding(
                SKIP_RULE,
                f"{qualname} ran at the base and this run's selection (-m, -k, --deselect) "
                "leaves it out: the change took it out of the run (a mark put on it, by "
                "whatever spelling, or the selection itself)",
                path,
                None,
            )
        )
    return out


def _named_by_a_finding(evidence: IntegrityEvidence, path: str, function: str) -> bool:
    """Whether a finding that names tests the change takes out (``EXPLAINS_FEWER``) names
    ``function`` of ``path`` already: it is reported once."""
    return any(
        f.rule in EXPLAINS_FEWER
        and _same_path(f.path or "", path)
        and re.search(rf"\b{re.escape(function)}\b", f.message) is not None
        for f in evidence.findings
    )


def _defined(entries: Iterable[str]) -> dict[str, str]:
    """The lists' entries (``count.entry``: a function id, a tab, where its code is defined)
    as function id -> definition."""
    out: dict[str, str] = {}
    for item in entries:
        name, _, where = item.partition("\t")
        out[name] = where
    return out


def _no_longer_collected(evidence: IntegrityEvidence, count: SuiteCount) -> list[IntegrityFinding]:
    """A ``test-count-below-base`` finding for each test function of the base's collection
    that this run did not collect, where the change neither removes it (a finding names it
    then), nor renames it to a test that is collected, nor runs the code it ran as often as
    the base did under other names (a renamed subclass that inherits it, an assigned test
    renamed: review 24): ``__test__ = False`` set by a helper, a ``@property`` on it, an empty
    parameter set, whatever new test keeps the count."""
    if count.base.tests is None:
        return []
    if count.collected_now is None:
        if not count.over_limit:
            return []
        return [
            IntegrityFinding(
                COUNT_RULE,
                f"this run collected more than {MAX_RUN_LISTED_TESTS:,} test functions, too "
                f"many to compare by name with the {len(count.base.tests):,} of the base: "
                "whether each test of the base still runs is not known (red team 39 made "
                "20,001 to hide one); a change that adds that many is for a person to approve",
                evidence.count_path,
            )
        ]
    base = _defined(count.base.tests)
    now = {_name_key(name): where for name, where in _defined(count.collected_now).items()}
    renamed = {_test_key("", a): _test_key("", b) for a, b in evidence.renamed_tests.items()}
    uses_now = Counter(_definition_key(where, renamed) for where in now.values())
    uses_base = Counter(_definition_key(where, renamed) for where in base.values())
    out = []
    for test, where in sorted(base.items()):
        path, _, qualname = test.partition("::")
        parts = qualname.split("::")
        key = _name_key(test)
        if key in now:
            continue
        target = next((b for a, b in renamed.items() if _same_test(a, key)), None)
        if target is not None and any(_same_test(target, k) for k in now):
            continue
        defined = _definition_key(where, renamed)
        if target is None and _renamed_here(key, where, defined, now):
            continue  # its renamed or folded code collected where it was (review 30)
        if defined and uses_now[defined] >= uses_base[defined]:
            continue  # the same code runs as often, under another name
        if _named_by_a_finding(evidence, path, parts[-1]):
            continue
        if target is None and any(_same_path(p, path) for p in evidence.deleted):
            continue  # the file is gone: the findings on its tests say so
        if target is None and len(parts) > 1:
            deleted = _class_deleted(evidence, path, parts, where)
            if deleted is not None:
                out.append(deleted)
                continue
        out.append(
            IntegrityFinding(
                COUNT_RULE,
                f"{'::'.join(parts)} was collected at the base and is not in this run"
                + (f" (renamed to {target})" if target is not None else "")
                + ": pytest no longer takes it for a test, or it has no case to run "
                "(`__test__ = False`, a decorator that makes it no function, an empty "
                "parameter set, a collection setting)",
                path,
                None,
            )
        )
    return out


def _renamed_here(key: str, where: str, defined: str, now: Mapping[str, str]) -> bool:
    """Whether a test of the base collected away from where its code is defined (a class
    another module imports, a subclass that inherits it), whose code the change renames or
    folds into another test, has that test collected in its place: the same module and class
    collect it now, its code defined where the rename put it, with the same class data. Each
    copy answers for itself, where counting the uses of a definition would not: two tests
    folded into one are one definition now, and two at the base (review 30)."""
    source = _definition_key(where, {})
    if not defined or not source or source == defined:
        return False  # not renamed
    new_name = defined.partition("#")[0].partition("@")[0].rsplit(".", 1)[-1]
    here = f"{key.rsplit('.', 1)[0]}.{new_name}"
    if here in now:
        return _definition_key(now[here], {}) == defined
    return any(_same_test(here, k) and _definition_key(w, {}) == defined for k, w in now.items())


def _class_deleted(
    evidence: IntegrityEvidence, path: str, parts: list[str], where: str
) -> IntegrityFinding | None:
    """The finding for a test of the base that its class collected, where the change deletes
    that class (not renamed: ``IntegrityEvidence.deleted_classes``); None when it does not.
    A test the class inherited (its code defined in another class: a mixin's) goes with the
    class as the class's own tests do: with the feature the change deletes (a note) when they
    all went with it and the class gave the tests it inherits some of that code; else it is a
    test the change takes out of the run. Anything else of the class (a test assigned in its
    body, made by a hook) is never waved through."""
    cls = "::".join(parts[:-1])
    went: str | None = None
    for key, value in evidence.deleted_classes.items():
        at, _, qualname = key.partition("::")
        if qualname == cls and _same_path(at, path):
            went = value or ""
            break
    else:
        return None
    name = "::".join(parts)
    at, _, defined = where.partition("@")[0].partition("#")[0].partition("::")
    owner = defined.rpartition(".")[0]  # where its code is defined: count.definition
    inherited = bool(owner) and not (owner == cls.replace("::", ".") and _same_path(at, path))
    source = f" (inherited from {owner.rpartition('.')[2]})" if inherited else ""
    if inherited and went:
        return IntegrityFinding(
            FEATURE_RULE,
            f"{name}{source} was collected at the base and went with its class {cls}, which "
            f"the change deletes together with {went}: the class's own tests went with it, "
            "and the tests it inherited ran with it too",
            path,
            None,
        )
    why = (
        "its own tests are not all gone with code the change deletes, or its body does not "
        "give that code to the tests it inherits"
        if inherited
        else "not a test it inherited, and no removed test names it"
    )
    return IntegrityFinding(
        COUNT_RULE,
        f"{name}{source} was collected at the base and is not in this run: the change deletes "
        f"its class {cls}, not with code it deletes ({why})",
        path,
        None,
    )


def _definition_key(where: str, renamed: Mapping[str, str]) -> str:
    """Where a test's code is defined (``path::qualname``) as a dotted key, through the
    change's renames; empty when not known."""
    path, _, qualname = where.partition("::")
    qualname, at, data = qualname.partition("@")
    qualname, hashed, bound = qualname.partition("#")  # count.definition's parts
    if not path or not qualname or qualname.rsplit(".", 1)[-1].startswith("<"):
        return ""  # a lambda: every one in a file has the same name
    key = _test_key("", f"{path}::{qualname}")
    key = next((b for a, b in renamed.items() if _same_test(a, key)), key)
    return f"{key}{hashed}{bound}{at}{data}"


def _name_key(test: str) -> str:
    """A test function's node id (``count.function_id``) as a dotted key, its name whole: a
    test named `test_x[zero]` is not `test_x`."""
    path, _, rest = test.partition("::")
    path = path.removesuffix(".py").replace("\\", "/").strip("/").replace("/", ".")
    return f"{path}.{rest.replace('::', '.')}" if rest else path


def _same_test(a: str, b: str) -> bool:
    """Two dotted test keys for one test, one perhaps relative to a folder the other is in
    (pytest's rootdir and the project's folder differ)."""
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def _same_path(a: str, b: str) -> bool:
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _selected_now(evidence: Evidence | GateResult | None) -> tuple[int | None, str | None]:
    if not isinstance(evidence, SuiteEvidence) or evidence.run is None:
        return None, "the test gate has no report of this run"
    if evidence.run.partial:
        return None, "only part of the suite ran (" + "; ".join(evidence.run.partial) + ")"
    if evidence.collect_errors:
        return None, f"{evidence.collect_errors} error(s) collecting the tests now"
    if evidence.selected is None:
        return None, (
            "this run's pytest did not say how many tests it selected (agentgate's pytest "
            "plugin is not installed where it runs, or the run wrote no JUnit report)"
        )
    return evidence.selected, None


class CachedSources:
    """Both sides of each file, read once: the base's through one ``git cat-file`` batch; a
    Python file's text as Python decodes it (:mod:`pytest_agentgate.texts`)."""

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
                text = decode(path, read_regular(self.root / path))
            except OSError:
                text = None
            self._now[path] = None if text is None else universal_newlines(text)
        return self._now[path]


def _renamed_defs(scan: Scan) -> dict[str, str]:
    """Test functions the change renames in place, in any class (a mixin's, whose tests pytest
    collects in its subclasses: review 24), found by their code: a ``test*`` function gone
    from a file and one new beside it, in the same class, with the same arguments and
    decorators, whose body begins with the old one's statements, unchanged (more may follow:
    review 26, a renamed mixin test given one more assert). ``path::qualname`` at the base ->
    now."""
    import ast

    Shape = tuple[str, tuple[str, ...]]

    def defs(text: str | None) -> dict[str, Shape]:
        try:
            tree = syntax.parse(text or "")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
        found: dict[str, Shape] = {}

        def walk(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    walk(child, f"{prefix}{child.name}.")
                elif isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef)
                ) and child.name.startswith("test"):
                    head = "\n".join(dumped(n) for n in [child.args, *child.decorator_list])
                    body = tuple(dumped(n) for n in child.body)
                    found[prefix + child.name] = (head, body)

        walk(tree, "")
        return found

    out: dict[str, str] = {}
    for path, status in scan.touched.items():
        if status == "deleted" or not path.endswith(".py"):
            continue
        now_text = scan.sources.now(path)
        if not now_text or "def test" not in now_text:
            continue
        old_path = scan.renamed_from.get(path, path)
        before, after = defs(scan.sources.at_base(old_path)), defs(now_text)
        gone = {q: shape for q, shape in before.items() if q not in after}
        new = {q: shape for q, shape in after.items() if q not in before}
        for old, (head, body) in gone.items():
            parent = old.rpartition(".")[0]
            matches = [
                q
                for q, (other_head, other_body) in new.items()
                if other_head == head
                and other_body[: len(body)] == body
                and q.rpartition(".")[0] == parent
            ]
            if len(matches) == 1:
                out[f"{old_path}::{old}"] = f"{path}::{matches[0]}"
    return out


def scan_for(context: CollectContext, config: Config, repo: Repo, change: Change) -> Scan:
    sources = CachedSources(context.root, repo, change)
    scan = Scan(context.root, repo, change, config, sources, environ=dict(os.environ))
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
        evidence.count_path = settings_file(scan.sources.now) or next(
            iter(read_settings(scan.sources.now).testpaths), None
        )
        seen: set[tuple[str, str | None, int | None]] = set()
        for name in ANALYZERS:
            module = importlib.import_module(name)
            results = list(module.analyze(scan))
            # Two analyzers may see the same thing (a forced exit in a hook): report it once.
            evidence.findings.extend(f for f in results if (f.rule, f.path, f.line) not in seen)
            seen.update((f.rule, f.path, f.line) for f in results)
        evidence.edited_tests = list(scan.edited_tests)
        evidence.new_tests = list(scan.new_tests)
        evidence.renamed_tests = {**_renamed_defs(scan), **scan.renamed_tests}
        evidence.check_hosts = dict(scan.check_hosts)
        evidence.folded_tests = len(scan.folded_tests)
        evidence.deleted_classes = dict(scan.deleted_classes)
        evidence.deleted = sorted(p for p, status in scan.touched.items() if status == "deleted")
        evidence.added_lines = {
            path: _new_lines(scan, path)
            for path, status in scan.touched.items()
            if status != "deleted" and is_python(path)
        }
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
        fewer, count_notes = compare_counts(evidence)
        items = [*evidence.findings, *fewer]
        for item in items:
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
        if not items:
            summary = f"the change weakens nothing {against}"
        else:
            summary = (
                f"{len(blocking)} of {len(items)} findings block {against}"
                if blocking
                else f"{len(items)} findings reported, none blocking, {against}"
            )
        result = new_result(config, evidence, "fail" if blocking else "pass", summary)
        result.findings = findings
        result.actual = {"findings": len(items), "blocking": len(blocking)}
        result.notes.extend(count_notes)
        if "has moved on to" in evidence.base.how:
            result.notes.append(f"the base is {evidence.base.describe()}: {evidence.base.how}")
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


def compare_counts(evidence: IntegrityEvidence) -> tuple[list[IntegrityFinding], list[str]]:
    """A finding for each test gate whose run selected fewer tests than its base's suite when
    no finding of the change names tests it takes out; a note for every count (what was
    compared, or why it was not). Pure."""
    findings: list[IntegrityFinding] = []
    notes: list[str] = []
    explained = sorted({f.rule for f in evidence.findings if f.rule in EXPLAINS_FEWER})
    for count in evidence.counts:
        base = count.base
        short = base.commit[:7]
        head = f"test count ({base.gate})"
        if base.selected is None:
            notes.append(f"{head}: not compared with the base: {base.why_not}")
            continue
        how = (
            "kept from an earlier verdict"
            if base.cached
            else f"collected in {base.seconds or 0:.1f} s"
        )
        at_base = f"{base.selected} at the base (commit {short}, {how})"
        if evidence.base is not None and base.commit != evidence.base.sha:
            notes.append(f"{head}: {at_base}: not compared, the change's base is another commit")
            continue
        if count.now is None:
            notes.append(f"{head}: {at_base}; not compared: {count.why_not_now}")
            continue
        named = [
            *_deselected_by_the_change(evidence, count),
            *_no_longer_collected(evidence, count),
        ]
        findings += named
        # Tests folded into another run as its statements or cases: a case fewer each.
        folded = 0 < base.selected - count.now <= evidence.folded_tests
        if count.now >= base.selected or explained or named or folded:
            why = ""
            if count.now < base.selected and (explained or named):
                rules = sorted({*explained, *(f.rule for f in named)})
                why = f": the {', '.join(rules)} findings name the tests that went"
            elif count.now < base.selected:
                why = f": {evidence.folded_tests} tests of the base were folded into others"
            notes.append(f"{head}: {count.now} tests ran, {at_base}{why}")
        else:
            notes.append(f"{head}: {count.now} tests ran, {at_base}")
            missing = base.selected - count.now
            findings.append(
                IntegrityFinding(
                    COUNT_RULE,
                    f"{base.selected} tests ran at the base (commit {short}), {count.now} now; "
                    f"no removed test in the change explains the {missing} missing"
                    + (f" ({base.gate} gate)" if len(evidence.counts) > 1 else ""),
                    evidence.count_path,
                )
            )
    return findings, notes
