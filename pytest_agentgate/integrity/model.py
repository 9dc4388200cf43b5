"""Integrity findings, the rules they break, and what one scan of a change can look at.

An agent under the gate takes the cheapest way past it: skip the failing test, add ``# noqa``,
lower a threshold, hand-write a report, disarm the door. Each such move breaks a :class:`Rule`;
an analyzer (one module per family, listed in :mod:`pytest_agentgate.integrity.analyzers`) finds
them in the change and reports each at ``file:line`` with a short reason.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from pytest_agentgate.config.model import AllowRule, Config
from pytest_agentgate.git import Change, Repo

# "tampering" always blocks; "weakening" blocks under strict and warns under the others;
# "notice" is reported and never blocks (an honest change a reviewer should still see).
Weight = Literal["tampering", "weakening", "notice"]


@dataclass(frozen=True)
class Rule:
    name: str
    weight: Weight
    what: str  # one line, for the README and `agentgate explain`
    restore: str  # what the agent must do instead


@dataclass
class IntegrityFinding:
    rule: str
    message: str
    path: str | None = None  # project-relative
    line: int | None = None
    # Set by the judge from the base's allowlist.
    allowed_because: str | None = None


class Sources(Protocol):
    """Text of files at the base and in the working tree, read once and cached; a Python
    file's as Python decodes it, by its BOM or coding declaration (PEP 263,
    :mod:`pytest_agentgate.texts`): the code the analyzers read is the code Python runs."""

    def at_base(self, path: str) -> str | None: ...

    def now(self, path: str) -> str | None: ...


@dataclass(frozen=True)
class EditedTest:
    """A test of the base that the change edits (its decorators, signature or body): if the
    run skips it, the change must say why (:func:`gates.integrity.with_skipped_tests`)."""

    path: str  # project-relative
    qualname: str  # "TestA::test_b"
    line: int
    # The base's test could skip already (a skip, skipif, xfail or importorskip of its own).
    skipped_at_base: bool
    # Where it was at the base, and its text there (decorators, signature, body).
    base_path: str = ""
    base_text: str = ""


@dataclass
class Scan:
    """What an analyzer looks at: the change, the project, and both sides of each file.

    Paths are project-relative (``root``), with ``/``.
    """

    root: Path
    repo: Repo
    change: Change
    config: Config
    sources: Sources
    # Project-relative paths the change touches: added, modified, renamed (new path) or deleted.
    touched: dict[str, str] = field(default_factory=dict)  # path -> status
    renamed_from: dict[str, str] = field(default_factory=dict)  # new path -> old path
    # The environment the gate's commands run under (agentgate's own, without the gates' `env:`).
    environ: Mapping[str, str] = field(default_factory=dict)
    # Filled by the test-file analyzers: the tests of the base the change edits, and the
    # tests it adds (``path::qualname``).
    edited_tests: list[EditedTest] = field(default_factory=list)
    new_tests: list[str] = field(default_factory=list)
    # The tests of the base the change renames or moves: ``path::qualname`` at the base ->
    # now.
    renamed_tests: dict[str, str] = field(default_factory=dict)
    # Of those, the tests folded into another (a case of a parametrized test, statements of
    # a test they were merged into): each is a case fewer in the count, and no test gone.
    folded_tests: dict[str, str] = field(default_factory=dict)
    # The tests of the change that make a check a test of the base no longer makes (moved
    # there): ``path::qualname`` now -> the base's test it came from.
    check_hosts: dict[str, str] = field(default_factory=dict)
    # The test classes the change deletes from a file pytest still collects (not renamed):
    # ``path::qualname`` at the base -> the code the change deletes that they went with (their
    # own tests all removed with it, and what their body gives the tests they inherit uses
    # it), else None. The tests they inherited from a mixin follow them (gates/integrity.py).
    deleted_classes: dict[str, str | None] = field(default_factory=dict)

    def repo_path(self, path: str) -> str:
        """A project-relative path as the repository names it."""
        prefix = self.root.resolve().relative_to(self.change.toplevel).as_posix()
        return path if prefix == "." else f"{prefix}/{path}"

    def added_lines(self, path: str) -> set[int]:
        """The lines of ``path`` (project-relative) that the change adds or modifies."""
        return self.change.added_lines(self.repo_path(path))


K = TypeVar("K", bound=Hashable)


def past_the_base(
    now: Iterable[tuple[int, K]], before: Iterable[tuple[int, K]], first: Collection[int] = ()
) -> list[tuple[int, K]]:
    """The ``(line, kind)`` items of a file of the change past the base's count of each kind,
    in line order: a line moved is not new, and of two alike the first is reported, or the
    first of those on a line in ``first`` (the lines the change added)."""
    items = list(now)
    excess = Counter(kind for _, kind in items) - Counter(kind for _, kind in before)
    found = []
    for line, kind in sorted(items, key=lambda item: (item[0] not in first, item[0])):
        if excess[kind] > 0:
            excess[kind] -= 1
            found.append((line, kind))
    return found


class Analyzer(Protocol):
    def __call__(self, scan: Scan) -> Iterable[IntegrityFinding]: ...


def allowed(finding: IntegrityFinding, rules: Iterable[AllowRule]) -> AllowRule | None:
    """The base's allowlist entry that approves ``finding``, if any."""
    for rule in rules:
        if rule.rule in (finding.rule, "*") and fnmatch.fnmatch(finding.path or "", rule.path):
            return rule
    return None
