"""What the coverage readers share: format names, how to write each format, checked counts."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pytest_agentgate.reports._io import count, shape_error
from pytest_agentgate.reports.model import Ratio, ReportError

COVERAGE_FORMATS: tuple[str, ...] = (
    "coverage-json",
    "coverage-data",
    "istanbul-summary",
    "cobertura",
    "lcov",
)
# Other names accepted for a format: coverage.py calls its Cobertura report "coverage xml".
COVERAGE_ALIASES: dict[str, str] = {"coverage-xml": "cobertura"}

SQLITE_MAGIC = b"SQLite format 3\x00"


def ratio_of(covered: object, total: object, source: str, where: str, hint: str) -> Ratio:
    """covered/total from a report's counts: whole numbers, covered never above total."""
    covered_n = count(covered, source, f"{where} covered", hint)
    total_n = count(total, source, f"{where} total", hint)
    if covered_n > total_n:
        raise ReportError(source, f"{where}: covered {covered_n} exceeds total {total_n}", hint)
    return Ratio(covered_n, total_n)


def check_total(claimed: Ratio, summed: Ratio, source: str, where: str, hint: str) -> None:
    """A report's total is the sum of its files (coverage.py and istanbul add them up): a total
    that says otherwise was not written by the tool, and the gate would judge the claim."""
    if claimed != summed:
        raise ReportError(
            source,
            f"{where} say {claimed.covered} of {claimed.total} covered, but its files add up to "
            f"{summed.covered} of {summed.total}: the report is not credible",
            hint,
        )


def expect_object(value: object, source: str, where: str, hint: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else a ReportError naming ``where`` in ``source``."""
    if not isinstance(value, dict):
        raise shape_error(source, where, "an object", value, hint)
    return value


def unique_paths(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """``paths`` as strings, each once, in order; a single path (not in a list) is one path."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return list(dict.fromkeys(os.fspath(p) for p in paths))


def outside_project(
    path: str, root: str | os.PathLike[str], relative_to: str | os.PathLike[str] | None = None
) -> bool:
    """Whether a file a coverage report measured lies outside the project at ``root``: both as
    written (``..`` folded: ``../proj/x.py`` from inside ``proj`` is inside) and resolved (a
    link into the project is inside). A relative path is read from ``relative_to`` (default
    ``root``), where the tool wrote it. A file inside either way is the project's: a link
    inside the project to code elsewhere stays counted."""
    anchor = os.fspath(root if relative_to is None else relative_to)
    full = os.path.join(anchor, path)  # an absolute path stays itself
    roots = {os.path.abspath(root), os.path.realpath(root)}
    if _within(os.path.normpath(os.path.abspath(full)), roots):
        return False
    try:
        real = os.path.realpath(full)
    except (OSError, ValueError):
        return False  # cannot be resolved: not known to be outside
    return not _within(real, roots)


def _within(path: str, roots: set[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def foreign_files(
    paths: Sequence[str],
    root: str | os.PathLike[str] | None,
    relative_to: str | os.PathLike[str] | None = None,
) -> set[str]:
    """The files of ``paths`` outside the project at ``root`` (none when ``root`` is None), to
    be left out of the figures: the coverage gate judges the project's code. When no file is
    inside, none is left out: the report's paths are not this checkout's (written on another
    machine), and the figures stay the report's own."""
    if root is None:
        return set()
    outside = {path for path in paths if outside_project(path, root, relative_to)}
    if not outside or len(outside) == len(paths):
        return set()
    # coverage.py records a file by its real path: a link in the project to code elsewhere
    # (a module moved out of the project and linked back in) is measured as a file outside.
    # It is still the project's code, imported through the project: it stays counted.
    linked = _linked_out(os.fspath(root))
    if linked is None:
        return set()  # the project could not be walked: nothing is left out
    anchor = os.fspath(root if relative_to is None else relative_to)
    return {path for path in outside if not _within(_real(anchor, path), linked)}


# At most this many entries of the project are looked at for links that lead out of it.
MAX_WALK_ENTRIES = 500_000


def _real(anchor: str, path: str) -> str:
    try:
        return os.path.realpath(os.path.join(anchor, path))
    except (OSError, ValueError):
        return path


def _linked_out(root: str) -> set[str] | None:
    """Where the links in the project at ``root`` that lead out of it lead (resolved); None
    when the project holds more than :data:`MAX_WALK_ENTRIES` entries."""
    real_root = os.path.realpath(root)
    found: set[str] = set()
    pending = [root]
    seen = 0
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        seen += len(entries)
        if seen > MAX_WALK_ENTRIES:
            return None
        for entry in entries:
            try:
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if not _within(target, {real_root}):
                        found.add(target)
                elif entry.is_dir(follow_symlinks=False) and entry.name != ".git":
                    pending.append(entry.path)
            except (OSError, ValueError):
                continue
    return found


def foreign_note(left_out: Sequence[str]) -> str:
    """The note that says which measured files outside the project were left out."""
    example = sorted(left_out)[0]
    return (
        f"{len(left_out)} measured file(s) outside the project left out of the coverage "
        f"figures (e.g. {example}): the gate judges the project's own code; measure only it "
        "with `[run] source` / `--cov=PACKAGE`"
    )
