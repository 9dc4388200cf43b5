"""Configuration the change weakened: agentgate's own, and the tools' that decide what is measured.

- ``gate-config-loosened``: what config/base.py found the change weakened in agentgate's
  configuration (``Config.loosened``). The base's values are in force anyway; the finding blocks so
  that the weakening does not stay in the pull request.
- ``tool-config-loosened``: ruff, coverage.py and pytest settings, compared as each tool reads
  them (the file that tool would use, at the base and now), never as text: reordering,
  reformatting and comments change nothing, and tightening is welcome. Loosened is what makes the
  tool look at less: a rule that was active is ignored or no longer selected, a file that was
  linted, measured or collected no longer is, a coverage floor is lowered, branch coverage is off.
  Every other ruff option is compared too (:func:`_ruff_options_loosened`): one that lets more
  pass for rules the base enforces (a maximum raised, an allowance gained), or whose effect
  cannot be ranked, is loosened; ruff's cache, output, fixing and formatter settings are not.
  flake8's, pycodestyle's and pylint's settings are compared the same way (:func:`_linter_loosened`,
  the same ranking of options, :func:`_option_change`), for the linters the base's lint gates
  run (:func:`_linters_run`; a gate the change adds runs the change's settings), read from the
  file each tool reads in the project's folder: a rule the base reports ignored, deselected or
  disabled, a file excluded or ignored, a maximum raised, an allowance gained.

Test selection by ``-k``, ``--deselect``, ``-m`` or ``addopts`` is another analyzer's
(``selection-narrowed``); this one looks at ``testpaths``, ``python_files``, ``python_classes``,
``python_functions`` and ``norecursedirs``.
"""

from __future__ import annotations

import configparser
import dataclasses
import fnmatch
import functools
import math
import os
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from pytest_agentgate.config.model import Config
from pytest_agentgate.gates.changed import is_test_file
from pytest_agentgate.git import GitError
from pytest_agentgate.integrity import pytest_files
from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate.project import coverage_sources
from pytest_agentgate.texts import toml_document
from pytest_agentgate.tree import at_base

GATE_RULE = "gate-config-loosened"
TOOL_RULE = "tool-config-loosened"
_SHOWN = 5  # files or entries named in one finding

# -- agentgate's own configuration ------------------------------------------------------------


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    for change in scan.config.loosened:
        yield IntegrityFinding(GATE_RULE, change.message, change.path, change.line)
    tools = _Tools(scan)
    yield from tools.ruff()
    yield from tools.linters()
    yield from tools.coverage()
    yield from tools.shadowed_sources()
    yield from tools.pytest()


def coverage_exclusions_at_base(scan: Scan) -> list[str]:
    """The regexes coverage.py leaves a line out of its figures by, as the base's settings give
    them: ``exclude_lines`` (else coverage.py's defaults for the installed version) and
    ``exclude_also``, ``partial_branches`` (else the defaults) and ``partial_also``."""
    from coverage.config import DEFAULT_EXCLUDE, DEFAULT_PARTIAL

    found = _Tools(scan)._coverage_at("base")
    values = found.values if found else {}
    out: list[str] = []
    for key, defaults in (
        ("exclude_lines", DEFAULT_EXCLUDE),
        ("partial_branches", DEFAULT_PARTIAL),
    ):
        own = values.get(f"report.{key}")
        out += _words(own, commas=False) if own is not None else list(defaults)
    for key in ("exclude_also", "partial_also"):
        out += _words(values.get(f"report.{key}"), commas=False)
    return list(dict.fromkeys(out))


def coverage_sources_at_base(scan: Scan) -> list[str]:
    """What the base says coverage.py measures: its settings' ``source``, ``source_pkgs`` and
    ``source_dirs``, and the gates' commands' ``--cov=X`` (pytest-cov) and ``--source=X``
    (``coverage run``). Empty when none names any (coverage.py then measures what runs)."""
    found = _Tools(scan)._coverage_at("base")
    values = found.values if found else {}
    out = [w for key in _SOURCE_KEYS for w in _words(values.get(f"run.{key}"))]
    for gate in scan.config.gates:
        words = (gate.command or "").split()
        for word, following in zip(words, [*words[1:], "-"], strict=False):
            flag, _, value = word.partition("=")
            if flag not in ("--cov", "--source"):
                continue
            if word == flag:  # its value is the next word, if that is no option
                value = "" if following.startswith("-") else following
            out += [w for w in value.split(",") if w]
    return list(dict.fromkeys(out))


def measured_by(path: str, sources: Iterable[str]) -> bool:
    """Whether coverage.py measures ``path`` under ``sources`` (folders, dotted packages,
    top-level modules)."""
    return _in_code(path, sources)


# -- reading the tools' settings ------------------------------------------------------------------


def ruff_excludes_at_base(scan: Scan, path: str) -> bool:
    """Whether the base's ruff settings for ``path`` (project-relative: the closest settings
    file above it, its ``extend`` chain; ruff's defaults without one) exclude it."""
    tools = _Tools(scan)
    found = tools._ruff_at(_folder(path), "base")
    values = found.values if found is not None else {}
    folder = _folder(found.path) if found is not None else ""
    inside = path[len(folder) + 1 :] if folder and path.startswith(folder + "/") else path
    return _excluded(inside, _ruff_exclude(values))


def ruff_default_excludes(scan: Scan, path: str) -> str | None:
    """The name of one of ruff's default excludes that skips ``path`` (project-relative), when
    the base's ruff settings for it keep ruff's defaults (no ``exclude`` of their own) and
    their ``extend-exclude`` does not skip it too: a folder ruff leaves out without the
    project ever saying so."""
    tools = _Tools(scan)
    found = tools._ruff_at(_folder(path), "base")
    values = found.values if found is not None else {}
    if "exclude" in values:
        return None
    folder = _folder(found.path) if found is not None else ""
    inside = path[len(folder) + 1 :] if folder and path.startswith(folder + "/") else path
    if _excluded(inside, _words(values.get("extend-exclude"))):
        return None
    return next((name for name in _RUFF_EXCLUDE if _excluded(inside, [name])), None)


def _ini(text: str) -> configparser.ConfigParser | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _table(data: Mapping[str, Any] | None, *keys: str) -> dict[str, Any] | None:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return dict(data) if isinstance(data, Mapping) else None


def _words(value: Any, *, commas: bool = True) -> list[str]:
    """A list setting, from TOML (a list or a string) or INI (lines, commas, or spaces)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if str(v).strip()]
    text = str(value)
    parts = re.split(r"[\n,]" if commas else r"\n", text)
    return [p.strip() for p in parts if p.strip()]


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _line_of(text: str | None, section: str | None, key: str) -> int | None:
    """The line of ``key`` (``key =``, ``key:``, ``"key":``) in ``text``, after ``section``'s
    header when there is one."""
    if not text:
        return None
    lines = text.splitlines()
    start = 0
    if section is not None:
        header = re.compile(rf"^\s*\[+\s*{re.escape(section)}\s*[\].]")
        start = next((i for i, line in enumerate(lines) if header.match(line)), 0)
    spelled = "[-_]".join(re.escape(part) for part in re.split(r"[-_]", key))
    pattern = re.compile(rf"^\s*[\"']?(?:lint\.)?{spelled}[\"']?\s*[=:]")
    table = re.compile(rf"^\s*\[+[^\]]*[.\s]{spelled}\s*\]")  # [tool.ruff.lint.KEY]
    for index in range(start, len(lines)):
        if pattern.match(lines[index]) or table.match(lines[index]):
            return index + 1
    return None


def _has_section(text: str | None, section: str) -> bool:
    header = re.compile(rf"^\s*\[+\s*{re.escape(section)}\s*\]", re.MULTILINE)
    return bool(text) and header.search(text or "") is not None


def _show(items: Iterable[str]) -> str:
    items = sorted(items)
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _join(directory: str, name: str) -> str:
    return name if directory in ("", ".") else f"{directory}/{name}"


def _folder(path: str) -> str:
    parent = str(PurePosixPath(path).parent)
    return "" if parent == "." else parent


def _parents(directory: str) -> list[str]:
    """``a/b`` -> ``["a/b", "a", ""]``."""
    out = [directory]
    while directory not in ("", "."):
        directory = str(PurePosixPath(directory).parent)
        out.append("" if directory == "." else directory)
    return out


@dataclass
class Settings:
    """One tool's settings as the tool reads them, and the file they are in."""

    path: str
    text: str
    values: dict[str, Any] = field(default_factory=dict)
    section: str | None = None  # the table or section header, for line numbers

    def line(self, *keys: str) -> int | None:
        """The line of the first of ``keys`` found."""
        return next(
            (n for key in keys if (n := _line_of(self.text, self.section, key)) is not None), None
        )

    def option_line(self, table: str, key: str) -> int | None:
        """The line of ruff's option ``key``, in its ``table`` (``pyflakes``: under
        ``[tool.ruff.lint.pyflakes]``, ``[tool.ruff.pyflakes]``, or written dotted) when it
        has one."""
        if not table:
            return self.line(key)
        prefix = f"{self.section}." if self.section else ""
        for section in (f"{prefix}lint.{table}", f"{prefix}{table}"):
            if _has_section(self.text, section):
                return _line_of(self.text, section, key)
        return self.line(f"{table}.{key}", key, table)


@dataclass(frozen=True)
class _Sides:
    """One tool's settings at the base and in the change (None: that side has none)."""

    base: Settings | None
    now: Settings | None

    @property
    def old(self) -> dict[str, Any]:
        return self.base.values if self.base else {}

    @property
    def new(self) -> dict[str, Any]:
        return self.now.values if self.now else {}

    def finding(self, message: str, *keys: str) -> IntegrityFinding:
        """A setting loosened, at the line of the first of ``keys`` the change's file sets
        (else the file itself: the base's, when the change has none)."""
        where = self.now or self.base
        line = self.now.line(*keys) if self.now is not None else None
        return IntegrityFinding(TOOL_RULE, message, where.path if where else None, line)


def _sides(at: Callable[[str], Settings | None]) -> _Sides | None:
    """The settings ``at`` reads on each side (``"base"``, ``"now"``); None if neither has any."""
    base, now = at("base"), at("now")
    return None if base is None and now is None else _Sides(base, now)


class _Tools:
    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self.touched = scan.touched
        self._files: list[str] | None = None
        # Settings files of the change agentgate cannot read, as (path, why): what they
        # change cannot be compared (ruff reads TOML 1.1 and expands variables; tomllib does not).
        self.unreadable: dict[str, str] = {}
        # The ruff `extend` each side's settings file names outside the project.
        self.outside: dict[str, dict[str, str]] = {"base": {}, "now": {}}

    def read(self, side: str, path: str) -> str | None:
        return self.scan.sources.at_base(path) if side == "base" else self.scan.sources.now(path)

    def base_files(self) -> list[str]:
        """The project's Python files at the base, relative to the project."""
        if self._files is None:
            try:
                tracked = self.scan.repo.tracked_at(self.scan.change.base)
            except (GitError, OSError):
                tracked = []
            found = {self.scan.change.relative(p, self.scan.root) for p in tracked}
            self._files = sorted(p for p in found if p is not None and _is_python(p))
        return self._files

    def files(self) -> list[str]:
        """The project's Python files now: the base's, less those the change deletes or moves,
        and those it adds."""
        gone = {p for p, status in self.touched.items() if status == "deleted"}
        gone.update(self.scan.renamed_from.values())
        found = {p for p in self.base_files() if p not in gone}
        found.update(p for p, s in self.touched.items() if s != "deleted" and _is_python(p))
        return sorted(found)

    # -- ruff ------------------------------------------------------------------------------------

    def ruff(self) -> Iterator[IntegrityFinding]:
        directories = sorted(
            {_folder(path) for path in self.touched if PurePosixPath(path).name in _RUFF_FILES}
        )
        for directory in directories:
            sides = _sides(functools.partial(self._ruff_at, directory))
            if sides is not None:
                yield from self._ruff_compare(sides, directory)
        for path, extend in sorted(self.outside["now"].items()):
            if self.outside["base"].get(path) != extend:
                self.unreadable.setdefault(
                    path,
                    f"extend names {extend}, outside the project, which the change does not show",
                )
        for path, why in sorted(self.unreadable.items()):
            yield IntegrityFinding(
                TOOL_RULE,
                f"ruff: {why}, so what it changes cannot be compared with the base's rules; "
                "write ruff's settings so that they read as TOML 1.0, with plain paths",
                path,
                None,
            )

    def _ruff_at(self, directory: str, side: str) -> Settings | None:
        for folder in _parents(directory):
            for name in _RUFF_FILES:
                path = _join(folder, name)
                text = self.read(side, path)
                if text is None:
                    continue
                data = toml_document(text)
                if data is None:
                    if side == "now" and path in self.touched:
                        self.unreadable[path] = f"{path} does not read as TOML 1.0"
                    continue
                table = _table(data, "tool", "ruff") if name == "pyproject.toml" else data
                if table is None:
                    continue  # a pyproject.toml without [tool.ruff]: ruff looks further up
                section = "tool.ruff" if name == "pyproject.toml" else None
                settings = Settings(path, text, _ruff_values(table), section)
                parent = self._extended(side, folder, table.get("extend"), path)
                if parent is not None:
                    settings.values = _ruff_extend(parent, settings.values)
                return settings
        return None

    def _extended(
        self, side: str, folder: str, extend: Any, named_in: str, depth: int = 0
    ) -> dict[str, Any] | None:
        """The settings a file's ``extend`` names, with those of the file it extends in turn
        (ruff follows the whole chain); None when it names none or cannot be read."""
        if not isinstance(extend, str) or depth > 10:
            return None
        expanded = os.path.expanduser(os.path.expandvars(extend))
        root = self.scan.root.resolve().as_posix()
        if posixpath.isabs(expanded) and (expanded + "/").startswith(root + "/"):
            expanded = posixpath.relpath(expanded, root)  # `${PWD}/cfg/b.toml`: the project's
            folder = ""
        path = posixpath.normpath(_join(folder, expanded))  # git reads no "a/../b"
        if posixpath.isabs(path) or path.startswith("../"):
            # Outside the project: no side of the change holds it; only a new one is a finding.
            self.outside[side][named_in] = extend
            return None
        text = None if "$" in expanded else self.read(side, path)
        data = None if text is None else toml_document(text)
        if data is None:
            if side == "now" and named_in in self.touched:
                self.unreadable[named_in] = f"extend names {extend}, which agentgate cannot read"
            return None
        table = _table(data, "tool", "ruff") if path.endswith("pyproject.toml") else data
        if table is None:
            return None
        values = _ruff_values(table)
        parent = self._extended(side, _folder(path), table.get("extend"), named_in, depth + 1)
        return values if parent is None else _ruff_extend(parent, values)

    def _ruff_compare(self, sides: _Sides, directory: str) -> Iterator[IntegrityFinding]:
        old, new = sides.old, sides.new
        old_select, new_select = _selected(old), _selected(new)
        lost = [code for code in old_select if not _covers(new_select, code)]
        if lost:
            yield sides.finding(
                f"ruff: select narrowed: {_show(lost)} no longer selected", "select"
            )
        old_ignore = set(_words(old.get("ignore"))) | set(_words(old.get("extend-ignore")))
        new_ignore = set(_words(new.get("ignore"))) | set(_words(new.get("extend-ignore")))
        gained = [c for c in new_ignore - old_ignore if _active(old, c)]
        if gained:
            key = "extend-ignore" if "extend-ignore" in new else "ignore"
            yield sides.finding(f"ruff: {key} gained {_show(gained)}, rules the base enforces", key)
        old_files, new_files = _per_file(old), _per_file(new)
        widened = {}
        for pattern, codes in new_files.items():
            fresh = codes - old_files.get(pattern, set())
            more = [c for c in fresh if _active(old, c, old_files, pattern)]
            if more:
                widened[pattern] = more
        if widened:
            shown = "; ".join(f"{p!r}: {_show(c)}" for p, c in sorted(widened.items()))
            yield sides.finding(
                f"ruff: per-file-ignores gained {shown}, rules the base enforces",
                *sorted(widened),
                "per-file-ignores",
            )
        old_exclude, new_exclude = _ruff_exclude(old), _ruff_exclude(new)
        added = new_exclude - old_exclude
        if added:
            files = [
                f
                for f in self._under(directory)
                if _excluded(f, added) and not _excluded(f, old_exclude)
            ]
            if files:
                key = "extend-exclude" if "extend-exclude" in new else "exclude"
                yield sides.finding(
                    f"ruff: {key} gained {_show(added)}: {len(files)} files are no longer "
                    f"linted ({_show(files)})",
                    key,
                )
        old_include, new_include = _ruff_include(old), _ruff_include(new)
        if set(new_include) != set(old_include):
            files = [
                f
                for f in self._under(directory)
                if _included(f, old_include)
                and not _included(f, new_include)
                and not _excluded(f, old_exclude)
            ]
            if files:
                changed = _words(old.get("include")) != _words(new.get("include"))
                key = "include" if changed else "extend-include"
                yield sides.finding(
                    f"ruff: {key} narrowed to {_show(new_include)}: {len(files)} files are no "
                    f"longer linted ({_show(files)})",
                    key,
                )
        for key, message in _ruff_options_loosened(old, new):
            table, _, name = key.rpartition(".")
            where = sides.now or sides.base
            line = sides.now.option_line(table, name) if sides.now is not None else None
            path = where.path if where is not None else None
            yield IntegrityFinding(TOOL_RULE, f"ruff: {key} {message}", path, line)

    def _under(self, directory: str) -> list[str]:
        """The project's Python files under ``directory``, relative to it."""
        if directory in ("", "."):
            return self.files()
        prefix = directory + "/"
        return [f[len(prefix) :] for f in self.files() if f.startswith(prefix)]

    # -- flake8, pycodestyle, pylint -----------------------------------------------------------

    def linters(self) -> Iterator[IntegrityFinding]:
        """The settings of the linters the base's lint gates run, as each reads them in the
        project's folder, where the gate runs it (ruff's are compared above, whoever runs it)."""
        for tool, names in _linters_run(self.scan.config):
            if not any(path in names for path in self.touched):
                continue
            sides = _sides(functools.partial(self._linter_at, tool, names))
            if sides is None:
                continue
            for keys, message in _linter_loosened(tool, sides.old, sides.new, self.files()):
                yield sides.finding(f"{tool}: {message}", *keys)

    def _linter_at(self, tool: str, names: tuple[str, ...], side: str) -> Settings | None:
        """The settings ``tool`` reads from the files ``names``: flake8 the ``[flake8]``
        section of the first that has one (setup.cfg, tox.ini, .flake8); pycodestyle
        ``[pycodestyle]`` (else ``[pep8]``) of all, read together, the last's last; pylint the
        first of its rc files, pyproject.toml with ``[tool.pylint.*]``, setup.cfg and tox.ini
        with ``[pylint.*]``."""
        texts = {name: self.read(side, name) for name in names}
        if tool == "pycodestyle":
            return _pycodestyle_settings(texts)
        for name, text in texts.items():
            found = None if text is None else _linter_settings(tool, name, text)
            if found is not None:
                return found
        return None

    # -- coverage.py -----------------------------------------------------------------------------

    def coverage(self) -> Iterator[IntegrityFinding]:
        if not any(path in _COVERAGE_FILES for path in self.touched):
            return
        sides = _sides(self._coverage_at)
        if sides is not None:
            yield from self._coverage_compare(sides)

    def _coverage_at(self, side: str) -> Settings | None:
        """The file coverage.py reads: .coveragerc, else the first of setup.cfg, tox.ini and
        pyproject.toml with coverage settings."""
        for name in _COVERAGE_FILES:
            text = self.read(side, name)
            if text is None:
                continue
            if name.endswith(".toml"):
                document = toml_document(text)
                table = (
                    _table(document, "tool", "coverage")
                    if name == "pyproject.toml"
                    else (dict(document) if isinstance(document, Mapping) else None)
                )
                if table is None:
                    continue
                values = {
                    f"{section}.{key}": value
                    for section in ("run", "report", "paths")
                    for key, value in (_table(table, section) or {}).items()
                }
                section = "tool.coverage" if name == "pyproject.toml" else None
                return Settings(name, text, values, section)
            parser = _ini(text)
            if parser is None:
                continue
            prefix = "" if name == ".coveragerc" else "coverage:"
            sections = [s for s in parser.sections() if s.startswith("coverage:")]
            if name != ".coveragerc" and not sections:
                continue
            values = {}
            for section in ("run", "report", "paths"):
                for header in (prefix + section, "coverage:" + section):
                    if parser.has_section(header):
                        for key, value in parser.items(header):
                            values[f"{section}.{key}"] = value
            return Settings(name, text, values)
        return None

    def _coverage_compare(self, sides: _Sides) -> Iterator[IntegrityFinding]:
        old, new = sides.old, sides.new
        patterns = _exclusions(new) - _exclusions(old)
        if patterns:
            key = "exclude_also" if "report.exclude_also" in new else "exclude_lines"
            yield sides.finding(
                f"coverage: {key} gained {_show(repr(p) for p in patterns)}: lines matching it "
                "are no longer measured",
                key,
            )
        plugins = [
            p for p in _words(new.get("run.plugins")) if p not in _words(old.get("run.plugins"))
        ]
        if plugins:
            yield sides.finding(
                f"coverage: plugins gained {_show(plugins)}: a plugin's code can change what "
                "coverage measures and excludes while the tests run",
                "plugins",
            )
        partial = _partials(new) - _partials(old)
        if partial:
            key = "partial_also" if "report.partial_also" in new else "partial_branches"
            yield sides.finding(
                f"coverage: {key} gained {_show(repr(p) for p in partial)}: branches of "
                "lines matching it are no longer counted as missed",
                key,
            )
        old_omit = set(_words(old.get("run.omit"))) | set(_words(old.get("report.omit")))
        new_omit = set(_words(new.get("run.omit"))) | set(_words(new.get("report.omit")))
        if added := new_omit - old_omit:
            # What the base measured: its sources' files (every key, read as coverage.py
            # reads them), else all of them; of those, the project's code. A test file
            # omitted is no code left unmeasured (review 34: `omit = ["tests/*"]`), but one in
            # a package zero-config measures is its code (red team 57: `pkg/testing/`).
            measured = self._measured(old)
            code = self._code_at_base()
            files = [
                f
                for f in self.files()
                if f.endswith(".py")
                and (not is_test_file(f) or _in_code(f, code))
                and (measured is None or f in measured)
                and _omitted(f, added)
                and not _omitted(f, old_omit)
            ]
            if files:
                yield sides.finding(
                    f"coverage: omit gained {_show(added)}: {len(files)} files are no longer "
                    f"measured ({_show(files)})",
                    "omit",
                )
        yield from self._coverage_sources(sides)
        yield from self._coverage_set(sides)
        yield from self._coverage_include(sides)
        # An alias (a later entry) that folds a file of the project onto another file is what
        # red team 40 did; one for copies elsewhere (CI machines, site-packages), or that maps
        # the project's files onto themselves, is not (review 26: `[paths]` for CI's data).
        paths = {
            k: _words(v)
            for k, v in new.items()
            if k.startswith("paths.")
            and _words(v) != _words(old.get(k))
            and self._folds_project_files(_words(v))
        }
        if paths:
            names = [k.removeprefix("paths.") for k in paths]
            finding = sides.finding(
                f"coverage: [paths] gained {_show(names)}: coverage.py reports the data of "
                "those files as the first path's, so code that never ran can read as measured "
                "(red team 40)"
            )
            text = sides.now.text if sides.now is not None else ""
            line = next(
                (
                    found
                    for header in ("tool.coverage.paths", "coverage:paths", "paths")
                    if _has_section(text, header)
                    and (found := _line_of(text, header, names[0])) is not None
                ),
                None,
            )
            yield dataclasses.replace(finding, line=line)
        old_floor = _number(old.get("report.fail_under")) or 0.0
        new_floor = _number(new.get("report.fail_under")) or 0.0
        if new_floor < old_floor:
            yield sides.finding(
                f"coverage: fail_under {old_floor:g} -> {new_floor:g}", "fail_under"
            )
        if _flag(old.get("run.branch")) and not _flag(new.get("run.branch")):
            yield sides.finding(
                "coverage: branch true -> false: branches are no longer measured",
                "branch",
            )

    def _code_at_base(self) -> list[str]:
        """The packages and modules of the project's code, as zero-config finds them in the
        project's files at the base (what it measures)."""
        files = at_base(self.scan.repo, self.scan.change.base, self.scan.root)
        return coverage_sources(files) if files is not None else []

    def shadowed_sources(self) -> Iterator[IntegrityFinding]:
        """A folder the change adds at the project's top, named as a package the base's
        coverage sources name (``source = ["pkg"]``, ``--cov=pkg``): coverage.py reads a name
        as a folder when there is one, so the package (under ``src/``) is no longer measured
        (red team 57 added ``pkg/release.py``)."""
        added = {
            path.split("/", 1)[0]
            for path, status in self.touched.items()
            if status != "deleted" and "/" in path
        }
        if not added:
            return
        before = self.base_files()
        for entry in coverage_sources_at_base(self.scan):
            name = entry.strip().removeprefix("./").strip("/")
            if "/" in name or name not in added or any(f.startswith(name + "/") for f in before):
                continue
            package = [f for f in _measured_by("source_pkgs", name, before) if f.endswith(".py")]
            if package:
                yield IntegrityFinding(
                    TOOL_RULE,
                    f"coverage: the change adds a folder {name}/ at the project's top, which "
                    f"coverage.py measures for the source {name} in place of the package "
                    f"({_show(package)}): the package's files are no longer measured",
                    next(p for p in sorted(self.touched) if p.startswith(name + "/")),
                    None,
                )

    def _measured(self, settings: Mapping[str, Any]) -> set[str] | None:
        """The project's files the ``source``, ``source_pkgs`` and ``source_dirs`` of these
        settings measure, each entry read as coverage.py reads it (``_measured_by``); None
        where they name none (coverage.py measures whatever runs)."""
        entries = [(k, e) for k in _SOURCE_KEYS for e in _words(settings.get(f"run.{k}"))]
        if not entries:
            return None
        files = self.files()
        return {f for key, entry in entries for f in _measured_by(key, entry, files)}

    def _coverage_sources(self, sides: _Sides) -> Iterator[IntegrityFinding]:
        """The base's ``source``, ``source_pkgs`` and ``source_dirs`` entries whose files the
        change's no longer measure. Each entry is read as the project's files it measures now
        (``_measured_by``), so one package named in either key is the same measurement; an
        entry that measures none of them (a folder moved away) loses nothing."""
        old, new = sides.old, sides.new
        files = self.files()
        measured = {
            f
            for key in _SOURCE_KEYS
            for entry in _words(new.get(f"run.{key}"))
            for f in _measured_by(key, entry, files)
        }
        for key in _SOURCE_KEYS:
            lost = [
                entry
                for entry in _words(old.get(f"run.{key}"))
                if any(f not in measured for f in _measured_by(key, entry, files))
            ]
            if lost:
                yield sides.finding(
                    f"coverage: {key} narrowed: {_show(lost)} no longer measured",
                    key,
                    *(k for k in _SOURCE_KEYS if k != key),
                )

    def _folds_project_files(self, entries: list[str]) -> bool:
        """Whether coverage.py's ``[paths]`` entry (its first the result, the rest aliases)
        reports a file of the project as another of its files, as coverage.py maps them."""
        if len(entries) < 2:
            return False
        from coverage.files import PathAliases

        root = self.scan.root.resolve()
        # Patterns made absolute here, against the project, not against the process's folder.
        aliases = PathAliases(relative=False)
        try:
            for alias in entries[1:]:
                absolute = alias.startswith(("*", "/", "~")) or os.path.isabs(alias)
                aliases.add(alias if absolute else str(root / alias), entries[0])
        except Exception:  # a pattern coverage.py refuses: it reports nothing either
            return False
        for f in self.files():
            mapped = aliases.map(str(root / f), exists=lambda _: True)
            if mapped == str(root / f):
                continue
            if os.path.normpath(root / mapped) != os.path.normpath(root / f):
                return True
        return False

    def _coverage_include(self, sides: _Sides) -> Iterator[IntegrityFinding]:
        """An ``include`` (of ``[run]`` or ``[report]``) changed where the base had a
        ``source`` too (red team 40: `[report] include` leaving a new module out of the
        report): the project's files under the base's sources that it no longer takes."""
        old, new = sides.old, sides.new
        had = [w for key in _SOURCE_KEYS for w in _words(old.get(f"run.{key}"))]
        for section in ("run", "report"):
            before = _words(old.get(f"{section}.include"))
            after = _words(new.get(f"{section}.include"))
            if not had or not after or after == before:
                continue
            lost = [
                f
                for f in self.files()
                if _within(f, had, files=True)
                and (not before or _omitted(f, before))
                and not _omitted(f, after)
            ]
            if lost:
                yield sides.finding(
                    f"coverage: [{section}] include {_show(after)}: {len(lost)} files of the "
                    f"base's source are no longer measured ({_show(lost)})",
                    "include",
                )

    def _coverage_set(self, sides: _Sides) -> Iterator[IntegrityFinding]:
        """A ``source`` (``source_pkgs``) or an ``include`` where the base had none: what it
        leaves out of the project's code (the packages and modules zero-config measures, as
        the base's files show them) is no longer measured. Without settings, the base measured
        all of it: zero-config names it, and coverage.py measures what runs."""
        old, new = sides.old, sides.new
        sources = [w for key in _SOURCE_KEYS for w in _words(new.get(f"run.{key}"))]
        had = [w for key in _SOURCE_KEYS for w in _words(old.get(f"run.{key}"))]
        old_include = _words(old.get("run.include")) + _words(old.get("report.include"))
        new_include = _words(new.get("run.include")) + _words(new.get("report.include"))
        if had or not (sources or set(new_include) - set(old_include)):
            return
        code = self._code_at_base()
        # Python's own files: coverage.py measures no stub (`.pyi`).
        mine = [f for f in self.files() if f.endswith(".py") and _in_code(f, code)]
        if sources:
            # Each entry as coverage.py reads it: a package named is its folder, `src/` too
            # (review 34: `source = ["cachetools"]` of a src layout measures src/cachetools).
            measured = self._measured(new) or set()
            lost = [f for f in mine if f not in measured]
            key = next(k for k in _SOURCE_KEYS if _words(new.get(f"run.{k}")))
            what = f"{key} {_show(sources)}"
        else:
            lost = [
                f
                for f in mine
                if (not old_include or _omitted(f, old_include)) and not _omitted(f, new_include)
            ]
            key, what = "include", f"include gained {_show(set(new_include) - set(old_include))}"
        if lost:
            yield sides.finding(
                f"coverage: {what}: {len(lost)} files of the project's code, measured at the "
                f"base, no longer are ({_show(lost)})",
                key,
            )

    # -- pytest ------------------------------------------------------------------------------------

    def pytest(self) -> Iterator[IntegrityFinding]:
        if not any(path in _PYTEST_FILES for path in self.touched):
            return
        sides = _sides(self._pytest_at)
        if sides is None:
            return
        old, new = sides.old, sides.new
        for key in ("testpaths", "pythonpath"):
            before = set(_split(old.get(key)))
            for entry in _split(new.get(key)):
                if entry not in before and _leaves_the_project(entry):
                    yield sides.finding(
                        f"pytest: {key} gained {entry}, outside the project: what pytest "
                        f"{'collects' if key == 'testpaths' else 'imports'} there is no part of "
                        "the change agentgate judges",
                        key,
                    )
        if _plain_asserts(new.get("addopts")) and not _plain_asserts(old.get("addopts")):
            yield sides.finding(
                "pytest: addopts gained --assert=plain: pytest no longer rewrites the tests' "
                "asserts, so under python -O or PYTHONOPTIMIZE not one of them runs",
                "addopts",
            )
        was, now_config = _cov_config(old.get("addopts")), _cov_config(new.get("addopts"))
        if now_config is not None and now_config != was:
            yield sides.finding(
                f"pytest: addopts gained --cov-config={now_config}: coverage reads its settings "
                "from that file instead of the project's, which agentgate compares",
                "addopts",
            )
        changed = [k for k in _COLLECTION if _split(old.get(k)) != _split(new.get(k))]
        if not changed:
            return
        now_files = self.files()
        collected = _collected(now_files, new)
        moved = {old_path: new_path for new_path, old_path in self.scan.renamed_from.items()}
        lost = set()
        for path in _collected(self.base_files(), old):
            path = moved.get(path, path)
            if path in now_files and path not in collected:  # a test gone is another rule's
                lost.add(path)
        file_keys = [k for k in changed if k in ("testpaths", "python_files", "norecursedirs")]
        if lost and file_keys:
            shown = ", ".join(
                f"{k} {_show_list(old.get(k))} -> {_show_list(new.get(k))}" for k in file_keys
            )
            yield sides.finding(
                f"pytest: {shown}: {len(lost)} test files at the base are no longer collected "
                f"({_show(lost)})",
                file_keys[0],
            )
        for key, default in (("python_classes", ["Test"]), ("python_functions", ["test"])):
            old_patterns = _split(old.get(key)) or default
            new_patterns = _split(new.get(key)) or default
            dropped = [p for p in old_patterns if not _name_covered(p, new_patterns)]
            if dropped:
                yield sides.finding(
                    f"pytest: {key} {' '.join(old_patterns)} -> {' '.join(new_patterns)}: "
                    f"tests named {_show(dropped)} are no longer collected",
                    key,
                )

    def _pytest_at(self, side: str) -> Settings | None:
        """The file pytest takes its settings from, in pytest's order."""
        for name in _PYTEST_FILES:
            text = self.read(side, name)
            if text is None:
                continue
            table = pytest_files.read(name, text)
            if table is not None:
                return Settings(name, text, table.values, table.section)
        return None


def _leaves_the_project(entry: str) -> bool:
    """Whether a path in pytest's settings (relative to the project) names a folder outside
    it: absolute, or climbing out with ``..``."""
    path = entry.strip()
    if path.startswith("~") or PurePosixPath(path).is_absolute() or PureWindowsPath(path).drive:
        return True
    return posixpath.normpath(path.replace("\\", "/")).startswith("..")


_RUFF_FILES = (".ruff.toml", "ruff.toml", "pyproject.toml")
# coverage.py's order (7.10 reads `.coveragerc.toml` second: red team 41's new file loaded a
# coverage plugin that no comparison saw).
_COVERAGE_FILES = (".coveragerc", ".coveragerc.toml", "setup.cfg", "tox.ini", "pyproject.toml")
_PYTEST_FILES = pytest_files.FILES
_COLLECTION = ("testpaths", "python_files", "norecursedirs", "python_classes", "python_functions")
# ruff's defaults (https://docs.astral.sh/ruff/settings/).
_RUFF_SELECT = ("E4", "E7", "E9", "F")
_RUFF_INCLUDE = ("*.py", "*.pyi", "*.ipynb", "**/pyproject.toml")
# ruff's default `exclude` (`build` left it in ruff 0.3.0).
_RUFF_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)
# coverage.py's default exclusion, and pytest's default norecursedirs and python_files.
_COVERAGE_EXCLUDE = r"#\s*(pragma|PRAGMA)[:\s]?\s*(no|NO)\s*(cover|COVER)"
_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
_PYTHON_FILES = ("test_*.py", "*_test.py")


def _ruff_values(table: Mapping[str, Any]) -> dict[str, Any]:
    """ruff's settings with ``[lint]`` merged in (lists from both), keys in kebab-case."""
    out: dict[str, Any] = {}
    lint = table.get("lint")
    for source in (table, lint if isinstance(lint, Mapping) else {}):
        for key, value in source.items():
            if key == "lint":
                continue
            name = str(key).replace("_", "-")
            if name in _RUFF_PATTERN_TABLES and isinstance(value, Mapping):
                merged = dict(out.get(name, {}))
                merged.update(value)
                out[name] = merged
            elif isinstance(value, Mapping):  # an option table: [lint.pyflakes], [format]
                known = out.get(name)
                merged = dict(known) if isinstance(known, Mapping) else {}
                merged.update({str(k).replace("_", "-"): v for k, v in value.items()})
                out[name] = merged
            elif name in out and name != "select" and isinstance(value, list):
                out[name] = [*_words(out[name]), *value]
            else:
                out[name] = value
    return out


def _ruff_extend(parent: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """``extend = "..."``: the parent's settings, this file's on top; ``extend-*`` lists add up."""
    out = dict(parent)
    for key, value in own.items():
        if key.startswith("extend-") and isinstance(value, list):
            out[key] = [*_words(parent.get(key)), *value]
        elif (
            key not in _RUFF_PATTERN_TABLES
            and isinstance(value, Mapping)
            and isinstance(parent.get(key), Mapping)
        ):
            out[key] = {**parent[key], **value}  # an option table, option by option
        else:
            out[key] = value
    return out


# -- ruff's other settings: what each one changes in what `ruff check` reports -----------------

# Tables whose keys are file patterns, not options.
_RUFF_PATTERN_TABLES = ("per-file-ignores", "extend-per-file-ignores", "per-file-target-version")
# Not compared option by option: the rules and files (compared above, as ruff reads them), and
# what changes how ruff runs, fixes or formats, never what `ruff check` reports: its cache and
# output, fixing, the version it requires, where first-party code is (`src`: the order isort
# wants, nothing it lets pass), the formatter (`[format]`; the lint gate runs `ruff check`)
# and `ruff analyze`.
_RUFF_UNJUDGED = frozenset(
    {
        "select", "extend-select", "ignore", "extend-ignore", "per-file-ignores",
        "extend-per-file-ignores", "exclude", "extend-exclude", "include", "extend-include",
        "extend", "force-exclude", "cache-dir", "output-format", "show-fixes", "show-source",
        "fix", "unsafe-fixes", "fixable", "unfixable", "extend-fixable", "extend-safe-fixes",
        "extend-unsafe-fixes", "required-version", "src", "format", "analyze",
    }
)  # fmt: skip
# The rules each plugin's option table speaks for: its options count when one of them is
# enforced at the base. A table not named here counts always.
_RUFF_TABLES: dict[str, tuple[str, ...]] = {
    "flake8-annotations": ("ANN",),
    "flake8-bandit": ("S",),
    "flake8-boolean-trap": ("FBT",),
    "flake8-bugbear": ("B",),
    "flake8-builtins": ("A",),
    "flake8-comprehensions": ("C4",),
    "flake8-copyright": ("CPY",),
    "flake8-errmsg": ("EM",),
    "flake8-gettext": ("INT",),
    "flake8-implicit-str-concat": ("ISC",),
    "flake8-import-conventions": ("ICN",),
    "flake8-pytest-style": ("PT",),
    "flake8-quotes": ("Q",),
    "flake8-self": ("SLF",),
    "flake8-tidy-imports": ("TID",),
    "flake8-type-checking": ("TC", "TCH"),
    "flake8-unused-arguments": ("ARG",),
    "isort": ("I",),
    "mccabe": ("C90",),
    "pep8-naming": ("N",),
    "pycodestyle": ("E", "W"),
    "pydoclint": ("DOC",),
    "pydocstyle": ("D",),
    "pyflakes": ("F",),
    "pylint": ("PLC", "PLE", "PLR", "PLW"),
    "pyupgrade": ("UP",),
    "ruff": ("RUF",),
}
# The same for top-level options that speak for some rules only (others count always:
# `dummy-variable-rgx` and `typing-modules` reach across many plugins).
_RUFF_OPTION_RULES: dict[str, tuple[str, ...]] = {
    "line-length": ("E501",),
    "indent-width": ("E1",),
    "builtins": ("F821",),
    "allowed-confusables": ("RUF00",),
    "external": ("RUF100",),
    "namespace-packages": ("INP",),
    "ignore-init-module-imports": ("F401",),
}
_RUFF_SHOWN = {("PLC", "PLE", "PLR", "PLW"): "PL", ("TC", "TCH"): "TC"}
# Numbers: a higher maximum lets more pass. ruff's defaults, for a side that does not set one
# (a limit without a default, `max-doc-length`, is no limit).
_RUFF_MAXIMA: dict[str, float] = {
    "line-length": 88,
    "mccabe.max-complexity": 10,
    "pylint.max-args": 5,
    "pylint.max-positional-args": 5,
    "pylint.max-branches": 12,
    "pylint.max-returns": 6,
    "pylint.max-statements": 50,
    "pylint.max-public-methods": 20,
    "pylint.max-locals": 15,
    "pylint.max-nested-blocks": 5,
    "pylint.max-bool-expr": 5,
    "flake8-errmsg.max-string-length": 0,
}
# Lists (or tables) of what a rule lets pass: an entry gained lets more pass ...
_RUFF_ALLOWING = ("allow", "extend-allow", "ignore", "extend-ignore", "exempt", "runtime-evaluated")
_RUFF_ALLOW_LISTS = frozenset(
    {
        "builtins", "external", "namespace-packages", "typing-modules", "extend-immutable-calls",
        "builtins-ignorelist", "builtins-allowed-modules", "classmethod-decorators",
        "staticmethod-decorators",
    }
)  # fmt: skip
# ... and of what a rule reports: an entry lost lets more pass.
_RUFF_BAN_LISTS = frozenset(
    {
        "banned-api", "banned-module-level-imports", "banned-aliases", "banned-from",
        "aliases", "extend-aliases", "hardcoded-tmp-directory", "hardcoded-tmp-directory-extend",
        "logger-objects", "function-names", "extend-function-names", "extend-markup-names",
    }
)  # fmt: skip
# Switches: on lets more pass (`allow-*`, `ignore-*`, `suppress-*` too), or off does.
_RUFF_LOOSE_ON = frozenset(
    {"fix-only", "respect-gitignore", "explicit-preview-rules", "mypy-init-return",
     "keep-runtime-typing"}
)  # fmt: skip
_RUFF_LOOSE_OFF = frozenset({"preview", "strict", "check-typed-exception"})
_RUFF_SWITCH_DEFAULTS = {"respect-gitignore": True}


@dataclass(frozen=True)
class _Ranks:
    """What a tool's options mean for what it reports: how a change to one is ranked
    (:func:`_option_change`)."""

    # Numbers where a higher value lets more pass (``max-*`` are such), with the tool's
    # defaults for a side that does not set one; a negative maximum is none (off).
    maxima: Mapping[str, float]
    # Numbers where a lower value lets more pass, with the tool's defaults.
    minima: Mapping[str, float] = field(default_factory=dict)
    switch_defaults: Mapping[str, bool] = field(default_factory=dict)
    loose_on: frozenset[str] = frozenset()  # switched on, lets more pass
    loose_off: frozenset[str] = frozenset()  # switched off, lets more pass
    allow_lists: frozenset[str] = frozenset()  # an entry gained lets more pass
    allowing: tuple[str, ...] = ()  # list names that start so are allow lists too
    ban_lists: frozenset[str] = frozenset()  # an entry lost lets more pass


_RUFF_RANKS = _Ranks(
    maxima=_RUFF_MAXIMA,
    switch_defaults=_RUFF_SWITCH_DEFAULTS,
    loose_on=_RUFF_LOOSE_ON,
    loose_off=_RUFF_LOOSE_OFF,
    allow_lists=_RUFF_ALLOW_LISTS,
    allowing=_RUFF_ALLOWING,
    ban_lists=_RUFF_BAN_LISTS,
)


def _ruff_options(values: Mapping[str, Any]) -> dict[str, Any]:
    """ruff's settings as options: ``pyflakes.allowed-unused-imports`` for a table's."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping) and key not in _RUFF_PATTERN_TABLES:
            out.update({f"{key}.{name}": inner for name, inner in value.items()})
        else:
            out[key] = value
    return out


def _ruff_options_loosened(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> Iterator[tuple[str, str]]:
    """Each option of ruff (but the rules and files, compared apart) that the change set so
    that ruff reports less, or reports otherwise (a setting agentgate cannot rank): the option
    and what happened. An option of rules the base does not enforce is no finding, and
    tightening is welcome (a lower maximum, an allowance taken out)."""
    before, after = _ruff_options(old), _ruff_options(new)
    seen_e501 = False
    for key in sorted(set(before) | set(after)):
        if key.split(".", 1)[0] in _RUFF_UNJUDGED:
            continue
        a, b = before.get(key), after.get(key)
        if a == b:
            continue
        table, _, name = key.rpartition(".")
        rules = _RUFF_TABLES.get(table) if table else _RUFF_OPTION_RULES.get(key)
        if key in ("line-length", "pycodestyle.max-line-length"):
            # E501's limit: pycodestyle's own, else the line length (the formatter's too).
            if seen_e501 or not _any_active(old, ("E501",)):
                continue
            seen_e501 = True
            was, now = _e501_limit(old), _e501_limit(new)
            if now > was:
                yield key, f"{was:g} -> {now:g}: the base's E501 reports less"  # long lines
            continue
        if rules is not None and not _any_active(old, rules):
            continue
        change = _option_change(_RUFF_RANKS, key, name, a, b)
        if change is None:
            continue
        text, less = change
        whose, verb = _whose(rules)
        if less:
            yield key, f"{text}: {whose} {verb} less"
        else:
            yield key, f"{text}: what {whose} {verb} changes"


def _option_change(ranks: _Ranks, key: str, name: str, a: Any, b: Any) -> tuple[str, bool] | None:
    """How option ``key`` (``name`` without its table) went from ``a`` to ``b`` (None: not
    set) when that lets more pass (True) or cannot be ranked (False); None when it only
    tightens."""
    if key in ranks.minima:
        default = ranks.minima.get(key)
        was = _number(a) if a is not None else default
        now = _number(b) if b is not None else default
        if was is None or now is None:
            return f"{_shown(a)} -> {_shown(b)}", False
        return (f"{was:g} -> {now:g}", True) if now < was else None
    if name.startswith("max-") or key in ranks.maxima:
        default = ranks.maxima.get(key, math.inf if name == "max-doc-length" else None)
        was = _limit(a) if a is not None else default
        now = _limit(b) if b is not None else default
        if was is None or now is None:
            return f"{_shown(a)} -> {_shown(b)}", False
        return (f"{was:g} -> {now:g}", True) if now > was else None
    if isinstance(a, bool) or isinstance(b, bool):
        default = ranks.switch_defaults.get(name, False)
        was, now = (default if a is None else _flag(a)), (default if b is None else _flag(b))
        if was == now:
            return None
        text = f"{str(was).lower()} -> {str(now).lower()}"
        if name in ranks.loose_on or name.startswith(("allow-", "ignore-", "suppress-")):
            return (text, True) if now else None
        if name in ranks.loose_off:
            return (text, True) if not now else None
        return text, False
    if isinstance(a, (list, Mapping)) or isinstance(b, (list, Mapping)):
        was_set, now_set = set(_entries(a)), set(_entries(b))
        if name in ranks.ban_lists:
            lost = was_set - now_set
            return (f"lost {_show(lost)}", True) if lost else None
        if name in ranks.allow_lists or (ranks.allowing and name.startswith(ranks.allowing)):
            gained = now_set - was_set
            return (f"gained {_show(gained)}", True) if gained else None
        return f"{_shown(a)} -> {_shown(b)}", False
    if key == "target-version":
        was_v, now_v = _python_version(a), _python_version(b)
        if was_v is None:
            return None  # the base's came from requires-python or ruff's default
        if now_v is not None and now_v >= was_v:
            return None  # newer Python: pyupgrade's rules ask more
        return f"{_shown(a)} -> {_shown(b)}", True
    return f"{_shown(a)} -> {_shown(b)}", False


def _limit(value: Any) -> float | None:
    """A maximum as a number; a negative one is no limit (flake8's ``max-complexity = -1``)."""
    number = _number(value)
    return math.inf if number is not None and number < 0 else number


def _whose(rules: tuple[str, ...] | None) -> tuple[str, str]:
    """Who reports (``the base's F rules``, ``the base's E501``, ``ruff``) and the verb."""
    if not rules:
        return "ruff", "reports"
    shown = _RUFF_SHOWN.get(rules, ", ".join(rules))
    if re.fullmatch(r"[A-Z]+[0-9]{3,}", shown):
        return f"the base's {shown}", "reports"
    return f"the base's {shown} rules", "report"


def _any_active(settings: Mapping[str, Any], prefixes: Iterable[str]) -> bool:
    """Whether a rule of one of the ``prefixes`` (``F``, ``E501``, ``PLR``) is enforced."""
    ignored = _words(settings.get("ignore")) + _words(settings.get("extend-ignore"))
    for prefix in prefixes:
        for selector in _selected(settings):
            if selector == "ALL" or prefix.startswith(selector):
                target = prefix
            elif selector.startswith(prefix) and selector[len(prefix) :][:1].isdigit():
                target = selector  # part of the prefix's rules: E501 of E
            else:
                continue
            if not _covers(ignored, target):
                return True
    return False


def _e501_limit(settings: Mapping[str, Any]) -> float:
    pycodestyle = settings.get("pycodestyle")
    own = pycodestyle.get("max-line-length") if isinstance(pycodestyle, Mapping) else None
    return _number(own) or _number(settings.get("line-length")) or _RUFF_MAXIMA["line-length"]


def _python_version(value: Any) -> tuple[int, int] | None:
    match = re.fullmatch(r"py(\d)(\d+)", str(value).strip().lower()) if value else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def _entries(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [str(k) for k in value]
    return _words(value)


def _shown(value: Any) -> str:
    if value is None:
        return "(default)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {_shown(v)}" for k, v in value.items()) + "}"
    return repr(value) if isinstance(value, str) else str(value)


def _ruff_include(settings: Mapping[str, Any]) -> list[str]:
    include = _words(settings["include"]) if "include" in settings else list(_RUFF_INCLUDE)
    return include + _words(settings.get("extend-include"))


def _included(path: str, patterns: Iterable[str]) -> bool:
    """Whether ruff's ``include`` patterns take ``path`` (relative to the config's folder):
    globs from that folder, ``*`` across folders too, as ruff matches them."""
    return any(
        fnmatch.fnmatch(path, p.strip().removeprefix("./"))
        or (p.startswith("**/") and fnmatch.fnmatch(path, p[3:]))
        for p in patterns
    )


def _selected(settings: Mapping[str, Any]) -> list[str]:
    select = _words(settings["select"]) if "select" in settings else list(_RUFF_SELECT)
    return select + _words(settings.get("extend-select"))


def _covers(selectors: Iterable[str], code: str) -> bool:
    """Whether a selector (``ALL``, a prefix such as ``E`` or ``E50``) selects ``code``."""
    return any(s == "ALL" or code.startswith(s) for s in selectors)


def _active(
    settings: Mapping[str, Any],
    code: str,
    per_file: Mapping[str, set[str]] | None = None,
    pattern: str | None = None,
) -> bool:
    """Whether rule ``code`` is enforced under ``settings`` (for files of ``pattern``)."""
    ignored = _words(settings.get("ignore")) + _words(settings.get("extend-ignore"))
    if pattern is not None and per_file is not None:
        ignored += sorted(per_file.get(pattern, set()))
    if code == "ALL":
        return bool(_selected(settings))
    return _covers(_selected(settings), code) and not _covers(ignored, code)


def _per_file(settings: Mapping[str, Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        table = settings.get(key)
        if isinstance(table, Mapping):
            for pattern, codes in table.items():
                out.setdefault(str(pattern), set()).update(_words(codes))
    return out


def _ruff_exclude(settings: Mapping[str, Any]) -> set[str]:
    exclude = _words(settings["exclude"]) if "exclude" in settings else list(_RUFF_EXCLUDE)
    return set(exclude) | set(_words(settings.get("extend-exclude")))


def _excluded(path: str, patterns: Iterable[str]) -> bool:
    """Whether ruff's ``exclude`` patterns skip ``path`` (relative to the config's folder).
    ruff's globs read ``{a,b}`` as either (red team 40: `invoice/{bands}.py`, which fnmatch
    takes as the literal braces, hid a new file with four lint errors)."""
    parts = path.split("/")
    for written in patterns:
        for pattern in _braces(written.strip().rstrip("/").removeprefix("./")):
            if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, pattern + "/*"):
                return True
            if any(fnmatch.fnmatch(part, pattern) for part in parts):
                return True
    return False


def _braces(pattern: str, limit: int = 256) -> list[str]:
    """A glob's ``{a,b}`` alternatives spelled out (nested ones too), at most ``limit``."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    out: list[str] = []
    for choice in match.group(1).split(","):
        out += _braces(pattern[: match.start()] + choice + pattern[match.end() :], limit)
        if len(out) >= limit:
            break
    return out[:limit]


def _omitted(path: str, patterns: Iterable[str]) -> bool:
    """Whether coverage.py's ``omit`` patterns skip ``path`` (relative to the project)."""
    absolute = "/project/" + path
    return any(
        fnmatch.fnmatch(path, p.removeprefix("./")) or fnmatch.fnmatch(absolute, p)
        for p in patterns
    )


def _within(source: str, sources: Iterable[str], *, files: bool = False) -> bool:
    """Whether ``source`` (a folder or package; a file's path with ``files``) is measured
    under ``sources`` (folders or dotted packages)."""
    source = source.strip("/").removeprefix("./")
    for other in sources:
        other = other.strip("/").removeprefix("./")
        if other in (".", "") or source == other:
            return True
        if files:
            other = other.replace(".", "/") if "/" not in other else other
        if source.startswith(other + "/") or (not files and source.startswith(other + ".")):
            return True
    return False


# coverage.py's keys that name what it measures (with ``include`` ignored when one is set).
_SOURCE_KEYS = ("source", "source_pkgs", "source_dirs")


def _measured_by(key: str, entry: str, files: Iterable[str]) -> list[str]:
    """The files among ``files`` that one entry of coverage.py's ``key`` measures, as
    coverage.py reads it: a ``source_dirs`` entry is a folder; a ``source`` entry is a folder
    when there is one of that name, else a package name; a ``source_pkgs`` entry is a package
    name. A package is found as Python imports it from the project's root or ``src/``: a
    regular package's folder (coverage.py reports the unrun files of a package it can locate,
    so a folder without ``__init__.py`` is not the same measurement), or a module's file. A
    name that is none of the project's (an installed package) measures none of its files."""
    files = list(files)
    entry = entry.strip().removeprefix("./").strip("/")
    if entry in ("", "."):
        return files if key != "source_pkgs" else []
    if key != "source_pkgs" and any(f.startswith(entry + "/") for f in files):
        return [f for f in files if f.startswith(entry + "/")]
    if key == "source_dirs":
        return []
    path = entry.replace(".", "/")
    for root in ("", "src/"):
        if f"{root}{path}/__init__.py" in files:
            return [f for f in files if f.startswith(f"{root}{path}/")]
        if f"{root}{path}.py" in files:
            return [f"{root}{path}.py"]
    return []


def _in_code(path: str, sources: Iterable[str]) -> bool:
    """Whether a file is in ``sources`` (folders, dotted packages, top-level modules)."""
    names = list(sources)
    return _within(path, names, files=True) or path.removesuffix(".py") in names


def _is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def _exclusions(settings: Mapping[str, Any]) -> set[str]:
    lines = settings.get("report.exclude_lines")
    base = _words(lines, commas=False) if lines is not None else [_COVERAGE_EXCLUDE]
    return set(base) | set(_words(settings.get("report.exclude_also"), commas=False))


def _partials(settings: Mapping[str, Any]) -> set[str]:
    """The regexes of lines whose missed branches coverage.py does not count."""
    from coverage.config import DEFAULT_PARTIAL

    lines = settings.get("report.partial_branches")
    base = _words(lines, commas=False) if lines is not None else list(DEFAULT_PARTIAL)
    return set(base) | set(_words(settings.get("report.partial_also"), commas=False))


def _split(value: Any) -> list[str]:
    return [w for item in _words(value, commas=False) for w in item.split()]


def _collected(files: Iterable[str], settings: Mapping[str, Any]) -> set[str]:
    """The test files pytest would collect from ``files`` under ``settings`` (no arguments)."""
    testpaths = [p.strip("/").removeprefix("./") for p in _split(settings.get("testpaths"))]
    patterns = _split(settings.get("python_files")) or list(_PYTHON_FILES)
    norecurse = _split(settings.get("norecursedirs")) or list(_NORECURSE)
    out = set()
    for path in files:
        if testpaths and not any(_under_path(path, p) for p in testpaths):
            continue
        parts = path.split("/")
        if any(fnmatch.fnmatch(d, n) for d in parts[:-1] for n in norecurse):
            continue
        if any(fnmatch.fnmatch(parts[-1], p) for p in patterns):
            out.add(path)
    return out


def _under_path(path: str, testpath: str) -> bool:
    if testpath in ("", "."):
        return True
    if any(ch in testpath for ch in "*?["):
        return fnmatch.fnmatch(path, testpath) or fnmatch.fnmatch(path, testpath + "/*")
    return path == testpath or path.startswith(testpath + "/")


def _name_covered(pattern: str, patterns: Iterable[str]) -> bool:
    """Whether names ``pattern`` selects are still selected by one of ``patterns`` (a pattern
    without glob characters is a prefix, as pytest reads it)."""
    for other in patterns:
        globbed = any(ch in other for ch in "*?[")
        if other == pattern or (not globbed and pattern.startswith(other)):
            return True
        if globbed and fnmatch.fnmatch(pattern, other):
            return True
    return False


def _show_list(value: Any) -> str:
    words = _split(value)
    return "[" + ", ".join(words) + "]" if words else "(default)"


# -- flake8's, pycodestyle's and pylint's settings ----------------------------------------------

# The files each reads its settings from in the folder it runs in, in its order.
_LINT_FILES: dict[str, tuple[str, ...]] = {
    "flake8": ("setup.cfg", "tox.ini", ".flake8"),
    "pycodestyle": ("setup.cfg", "tox.ini"),
    "pylint": (
        "pylintrc",
        "pylintrc.toml",
        ".pylintrc",
        ".pylintrc.toml",
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
    ),
}
# A linter named in a gate's command: `flake8 .`, `-m pylint`, `pytest_agentgate.tools
# flake8==7.1.1` (not `pytest-flake8`, `flake8-json`).
_LINTER_IN_COMMAND = re.compile(r"(?<![\w.-])(flake8|pycodestyle|pylint)(?![\w-])")


def _pycodestyle_settings(texts: Mapping[str, str | None]) -> Settings | None:
    """``[pycodestyle]`` (else ``[pep8]``) of the files (setup.cfg, tox.ini, ``--config``'s),
    read together."""
    found: Settings | None = None
    for name, text in texts.items():
        parser = None if text is None else _ini(text)
        if parser is None:
            continue
        section = next((s for s in ("pycodestyle", "pep8") if parser.has_section(s)), None)
        if section is not None and text is not None:
            values = {**(found.values if found else {}), **_ini_values(parser, [section])}
            found = Settings(name, text, values, section)
    return found


def _linter_settings(tool: str, name: str, text: str) -> Settings | None:
    """flake8's or pylint's settings in file ``name``, when it has theirs."""
    if name.endswith(".toml"):
        table = _table(toml_document(text), "tool", "pylint")
        if table is None:
            return None
        values: dict[str, Any] = {}
        for key, value in table.items():
            inner = value if isinstance(value, Mapping) else {key: value}
            values.update({_kebab(k): v for k, v in inner.items()})
        return Settings(name, text, values, "tool.pylint")
    parser = _ini(text)
    if parser is None:
        return None
    if tool == "flake8":
        # `[flake8:local-plugins]`: plugins the project's own folder holds, imported as flake8
        # starts. A report plugin gained decides what is printed; a checker (`extension`) only
        # adds findings, and one that rewrites flake8 is found as code that patches it
        # (patches.py; red team 34: every finding made to vanish).
        plugins = {
            f"{_LOCAL_PLUGINS}-{_kebab(key)}": [
                re.sub(r"\s*=\s*", "=", entry.strip())
                for entry in re.split(r"[\n,]", raw)
                if entry.strip()
            ]
            for key, raw in (
                parser.items("flake8:local-plugins")
                if parser.has_section("flake8:local-plugins")
                else []
            )
        }
        if parser.has_section("flake8"):
            return Settings(name, text, {**_ini_values(parser, ["flake8"]), **plugins}, "flake8")
        if plugins or parser.has_section("flake8:local-plugins"):
            return Settings(name, text, plugins)  # the file flake8 reads, with its plugins
        return None
    # only its [pylint.*] sections are pylint's
    shared = PurePosixPath(name).name in ("setup.cfg", "tox.ini")
    sections = [s for s in parser.sections() if not shared or s.split(".")[0] == "pylint"]
    return Settings(name, text, _ini_values(parser, sections)) if sections or not shared else None


def _linters_run(config: Config) -> list[tuple[str, tuple[str, ...]]]:
    """The linters the base's gates run (not those of a gate the change adds), each with the
    files it reads its settings from: the file its command names (flake8's and pycodestyle's
    ``--config``, pylint's ``--rcfile``; pycodestyle reads it after the project's), else the
    tool's own."""
    found: set[tuple[str, tuple[str, ...]]] = set()
    for gate in config.gates:
        if not gate.command or not gate.enabled or gate.from_change:
            continue
        for tool in _LINTER_IN_COMMAND.findall(gate.command):
            option = _CONFIG_OPTION.get(tool, "--config")
            named = re.search(rf"(?:^|\s){option}[=\s]+(['\"]?)([^\s'\"]+)\1", gate.command)
            names = _LINT_FILES[tool]
            if named is not None:
                path = posixpath.normpath(named.group(2).replace("\\", "/"))
                names = (*_LINT_FILES[tool], path) if tool == "pycodestyle" else (path,)
            found.add((tool, names))
    return sorted(found)


_CONFIG_OPTION = {"pylint": "--rcfile"}
_LOCAL_PLUGINS = "local-plugins"


def _codes(value: Any) -> list[str]:
    """A list of flake8's, pycodestyle's or pylint's: words between commas, spaces or lines."""
    return [w for item in _words(value) for w in re.split(r"[\s,]+", item) if w]


def _kebab(key: Any) -> str:
    return str(key).strip().lower().replace("_", "-")


# Options whose INI value is a list (commas, lines); other values are words, yes/no switches
# or numbers (read as such where compared).
_LINT_LIST_OPTIONS = frozenset(
    {
        "select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude",
        "filename", "enable-extensions", "require-plugins", "builtins", "doctests",
        "disable", "enable", "ignore-patterns", "ignore-paths", "good-names", "bad-names",
        "good-names-rgxs", "bad-names-rgxs", "ignored-modules", "ignored-classes",
        "generated-members", "additional-builtins", "allowed-redefined-builtins", "load-plugins",
        "fail-on", "extension-pkg-allow-list", "extension-pkg-whitelist", "ignored-parents",
        "exclude-too-few-public-methods", "overgeneral-exceptions", "deprecated-modules",
        "ignored-argument-names", "callbacks", "redefining-builtins-modules",
        "notes", "notes-rgx", "valid-classmethod-first-arg",
        "valid-metaclass-classmethod-first-arg",
        "defining-attr-methods", "exclude-protected", "mixin-class-rgx", "signature-mutators",
        "contextmanager-decorators", "property-classes", "logging-modules", "ignore-decorators",
    }
)  # fmt: skip
_SWITCH_WORDS = {"yes": True, "y": True, "true": True, "on": True,
                 "no": False, "n": False, "false": False, "off": False}  # fmt: skip


def _ini_values(parser: configparser.ConfigParser, sections: Iterable[str]) -> dict[str, Any]:
    """The options of ``sections`` (later ones last), keys in kebab-case, lists as lists,
    yes/no as switches, other text with its spaces made one."""
    values: dict[str, Any] = {}
    for section in sections:
        for key, raw in parser.items(section):
            name = _kebab(key)
            text = str(raw)
            if name in _LINT_LIST_OPTIONS and name != "doctests":
                values[name] = _words(text) if name in _LINT_REGEX_LISTS else _codes(text)
            elif text.strip().lower() in _SWITCH_WORDS:
                values[name] = _SWITCH_WORDS[text.strip().lower()]
            else:
                values[name] = " ".join(text.split())
    return values


# Lists of regular expressions: split on commas and lines only (a space is part of one).
_LINT_REGEX_LISTS = frozenset({"good-names-rgxs", "bad-names-rgxs", "ignore-patterns",
                               "ignore-paths", "notes-rgx", "ignored-argument-names",
                               "mixin-class-rgx"})  # fmt: skip
# Compared apart (the rules, the files), or what changes how the tool runs and what it prints
# beside its findings, never which it reports.
_LINT_UNJUDGED: dict[str, frozenset[str]] = {
    "flake8": frozenset(
        {
            "select", "extend-select", "ignore", "extend-ignore", "per-file-ignores",
            "exclude", "extend-exclude", "filename", "show-source", "statistics", "count",
            "benchmark", "color", "verbose", "jobs", "tee", "stdin-display-name",
            "bug-report", "extended-default-select", "extended-default-ignore",
            # A local checker adds findings; one that patches flake8 is judged as code
            # (patches.py, LINT_TOOLS). A local report plugin decides what is printed.
            "local-plugins-extension", "local-plugins-paths",
        }
    ),
    "pycodestyle": frozenset(
        {
            "select", "ignore", "exclude", "filename", "show-source", "show-pep8",
            "statistics", "count", "benchmark", "verbose", "diff",
        }
    ),
    "pylint": frozenset(
        {
            "jobs", "persistent", "reports", "score", "msg-template", "clear-cache-post-run",
            "suggestion-mode", "evaluation", "max-spelling-suggestions",
            "spelling-private-dict-file", "spelling-store-unknown-words", "py-version",
            "output-format", "limit-inference-results", "rcfile",
        }
    ),
}  # fmt: skip
# The rules an option speaks for: its change counts when one of them is enforced at the base.
_LINT_OPTION_RULES = {"max-line-length": "E501", "max-doc-length": "W505", "max-complexity": "C901"}
_PYCODESTYLE_IGNORE = ("E121", "E123", "E126", "E226", "E24", "E704", "W503", "W504")
_PYCODESTYLE_EXCLUDE = (".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox")
_FLAKE8_EXCLUDE = (*_PYCODESTYLE_EXCLUDE, ".nox", ".eggs", "*.egg")
# The tools' defaults (flake8/defaults.py, pycodestyle.py, pylint's options).
_LINT_RANKS: dict[str, _Ranks] = {
    "flake8": _Ranks(
        maxima={"max-line-length": 79, "max-doc-length": math.inf, "max-complexity": math.inf},
        loose_on=frozenset({"exit-zero"}),
        loose_off=frozenset({"disable-noqa", "doctests"}),
        allow_lists=frozenset({"builtins", "local-plugins-report"}),
        ban_lists=frozenset({"enable-extensions", "require-plugins"}),
    ),
    "pycodestyle": _Ranks(
        maxima={"max-line-length": 79, "max-doc-length": math.inf},
        switch_defaults={"repeat": True},
        loose_on=frozenset({"first"}),
        loose_off=frozenset({"repeat", "doctest", "testsuite"}),
    ),
    "pylint": _Ranks(
        maxima={
            "max-line-length": 100, "max-args": 5, "max-positional-arguments": 5,
            "max-locals": 15, "max-returns": 6, "max-branches": 12, "max-statements": 50,
            "max-parents": 7, "max-attributes": 7, "max-bool-expr": 5, "max-nested-blocks": 5,
            "max-public-methods": 20, "max-module-lines": 1000, "min-similarity-lines": 4,
            "docstring-min-length": -1, "max-try-statements": 1,
        },
        minima={"min-public-methods": 2, "fail-under": 10},
        loose_on=frozenset({"exit-zero", "unsafe-load-any-extension"}),
        loose_off=frozenset({"analyse-fallback-blocks"}),
        allow_lists=frozenset(
            {
                "disable", "ignore", "ignore-patterns", "ignore-paths", "good-names",
                "good-names-rgxs", "ignored-modules", "ignored-classes", "generated-members",
                "additional-builtins", "allowed-redefined-builtins", "ignored-parents",
                "exclude-too-few-public-methods", "ignored-argument-names", "callbacks",
                "redefining-builtins-modules", "exclude-protected", "ignore-decorators",
                "signature-mutators", "contextmanager-decorators", "defining-attr-methods",
            }
        ),
        ban_lists=frozenset(
            {"enable", "bad-names", "bad-names-rgxs", "load-plugins", "fail-on",
             "overgeneral-exceptions", "deprecated-modules", "notes"}
        ),
    ),
}  # fmt: skip
_PYLINT_DEFAULTS: dict[str, list[str]] = {
    "ignore": ["CVS"],
    "ignore-patterns": ["^\\.#"],
    "good-names": ["i", "j", "k", "ex", "Run", "_"],
    "bad-names": ["foo", "bar", "baz", "toto", "tutu", "tata"],
    "notes": ["FIXME", "XXX", "TODO"],
}


def _linter_loosened(
    tool: str, old: Mapping[str, Any], new: Mapping[str, Any], files: Iterable[str]
) -> Iterator[tuple[tuple[str, ...], str]]:
    """What the change to ``tool``'s settings (``old`` at the base, ``new`` now) lets pass:
    the keys to show its line by, and what happened. ``files``: the project's Python files."""
    if tool in ("flake8", "pycodestyle"):
        yield from _codes_loosened(tool, old, new)
        yield from _files_loosened(tool, old, new, list(files))
    ranks, unjudged = _LINT_RANKS[tool], _LINT_UNJUDGED[tool]
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if key in unjudged or a == b:
            continue
        if (
            isinstance(a, list)
            and isinstance(b, list)
            and sorted(map(str, a)) == sorted(map(str, b))
        ):
            continue  # reordered
        if tool == "pylint" and key in _PYLINT_DEFAULTS:
            a = _PYLINT_DEFAULTS[key] if a is None else a
            b = _PYLINT_DEFAULTS[key] if b is None else b
        if tool == "pylint" and key in ("disable", "enable"):
            a, b = _pylint_symbolic(a), _pylint_symbolic(b)
            if sorted(_entries(a)) == sorted(_entries(b)):
                continue  # the same messages, by id or by name
        rule = _LINT_OPTION_RULES.get(key) if tool != "pylint" else None
        if rule is not None and not _code_active(tool, old, rule):
            continue
        change = _option_change(ranks, key, key, a, b)
        if change is None:
            continue
        text, less = change
        whose = f"the base's {rule}" if rule else tool
        what = f"{whose} reports less" if less else f"what {whose} reports changes"
        yield (key,), f"{key} {text}: {what}"


_PYLINT_ID = re.compile(r"^[CRWEIF]\d{4}$")


def _pylint_symbolic(value: Any) -> Any:
    """A pylint ``disable``/``enable`` list with each message id (``C0301``) as its name
    (``line-too-long``), as pylint itself reads both; unchanged when it names no id, or when
    pylint is not installed where agentgate runs (the ids are then compared as written)."""
    entries = _entries(value)
    if not any(_PYLINT_ID.match(e.strip().upper()) for e in entries):
        return value
    names = _pylint_names()
    return [names.get(e.strip().upper(), e.strip()) for e in entries]


@functools.cache
def _pylint_names() -> dict[str, str]:
    """pylint's message ids and their names, from pylint's own checkers (about 1 s, once)."""
    try:
        from pylint.checkers import initialize
        from pylint.lint import PyLinter

        linter = PyLinter()
        initialize(linter)
        return {d.msgid: d.symbol for d in linter.msgs_store.messages}
    except Exception:  # not installed, or another pylint: compare as written
        return {}


def _code_active(tool: str, settings: Mapping[str, Any], code: str) -> bool:
    """Whether ``tool`` reports ``code`` (a code, or a prefix of codes) under ``settings``."""
    if tool == "pycodestyle":
        # Only what `select` names when it is set; else all but `ignore` (else its defaults).
        select = _codes(settings.get("select"))
        if select:
            return _prefixed(code, select) > 0
        ignore = _codes(settings["ignore"]) if "ignore" in settings else _PYCODESTYLE_IGNORE
        return _prefixed(code, ignore) == 0
    # flake8's decision (style_guide.DecisionEngine): a code chosen by the settings' own
    # select or ignore beats one chosen by a default; between two of a kind the longer
    # prefix wins. The default selection is every check ("").
    own_select = _codes(settings.get("select")) + _codes(settings.get("extend-select"))
    own_ignore = _codes(settings.get("ignore")) + _codes(settings.get("extend-ignore"))
    selected = own_select if settings.get("select") else ["", *own_select]
    ignored = own_ignore if "ignore" in settings else [*_PYCODESTYLE_IGNORE, *own_ignore]
    by_select, by_ignore = _prefixed(code, selected), _prefixed(code, ignored)
    if not by_ignore:
        return by_select > 0
    if not by_select:
        return False
    chose, dropped = _prefixed(code, own_select) > 0, _prefixed(code, own_ignore) > 0
    if chose != dropped:
        return chose
    return by_select > by_ignore


def _selected_by(tool: str, settings: Mapping[str, Any], code: str) -> bool:
    """Whether the selection (``select``, ``extend-select``) takes ``code`` at all."""
    select = _codes(settings.get("select"))
    if not select:
        return True
    return _prefixed(code, [*select, *_codes(settings.get("extend-select"))]) > 0


def _prefixed(code: str, prefixes: Iterable[str]) -> int:
    """The length of the longest of ``prefixes`` that ``code`` starts with, plus one (0: none)."""
    return max((len(p) + 1 for p in prefixes if code.startswith(p)), default=0)


def _codes_loosened(
    tool: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> Iterator[tuple[tuple[str, ...], str]]:
    """Rules the base reports that the new settings no longer do: narrowed by the selection,
    or ignored (everywhere, or for the files of a ``per-file-ignores`` pattern)."""
    keys = ("select", "extend-select", "ignore", "extend-ignore")
    codes = {c for side in (old, new) for key in keys for c in _codes(side.get(key))}
    codes.update(("E", "W") if tool == "pycodestyle" else ("E", "F", "W"))
    lost = [c for c in codes if _code_active(tool, old, c) and not _code_active(tool, new, c)]
    lost = [c for c in lost if not any(o != c and c.startswith(o) for o in lost)]
    ignores = {
        key: [
            c
            for c in lost
            if _selected_by(tool, new, c)
            and _prefixed(c, _codes(new.get(key)))
            and not (key == "ignore" and _prefixed(c, _codes(new.get("extend-ignore"))))
        ]
        for key in ("extend-ignore", "ignore")
    }
    # The rest is no longer selected (or no longer selected over flake8's default ignore).
    narrowed = [c for c in lost if not any(c in codes for codes in ignores.values())]
    if narrowed:
        key = "select" if "select" in new or "select" in old else "extend-select"
        yield (key,), f"{key} narrowed: {_show(narrowed)} no longer selected"
    for key, gained in ignores.items():
        if gained:
            yield (key,), f"{key} gained {_show(gained)}, rules the base enforces"
    if tool != "flake8":
        return
    before, after = (
        _flake8_per_file(old.get("per-file-ignores")),
        _flake8_per_file(new.get("per-file-ignores")),
    )
    widened: dict[str, list[str]] = {}
    for pattern, gained_codes in after.items():
        more = [
            c
            for c in gained_codes - before.get(pattern, set())
            if _code_active(tool, old, c) and not _prefixed(c, before.get(pattern, set()))
        ]
        if more:
            widened[pattern] = more
    if widened:
        shown = "; ".join(f"{p!r}: {_show(c)}" for p, c in sorted(widened.items()))
        yield (
            (*sorted(widened), "per-file-ignores"),
            f"per-file-ignores gained {shown}, rules the base enforces",
        )


_FLAKE8_CODE = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")


def _flake8_per_file(value: Any) -> dict[str, set[str]]:
    """flake8's ``per-file-ignores`` (``a.py,b/*.py:E501,F401`` entries, spaces or lines
    between them): pattern -> codes."""
    tokens = re.findall(r"[^\s,:]+|:", str(value or ""))
    out: dict[str, set[str]] = {}
    names: list[str] = []
    codes: list[str] = []
    after_colon = False
    for token in [*tokens, ""]:
        if token == ":":
            after_colon = True
            continue
        if after_colon and _FLAKE8_CODE.match(token):
            codes.append(token)
            continue
        if after_colon:  # a file name after codes: the entry is done
            for name in names:
                out.setdefault(name, set()).update(codes)
            names, codes, after_colon = [], [], False
        if token:
            names.append(token)
    return out


def _files_loosened(
    tool: str, old: Mapping[str, Any], new: Mapping[str, Any], files: list[str]
) -> Iterator[tuple[tuple[str, ...], str]]:
    """Files the base's settings lint that the new ones no longer do: excluded, or no longer
    matched by ``filename``."""
    default = _FLAKE8_EXCLUDE if tool == "flake8" else _PYCODESTYLE_EXCLUDE

    def excluded(settings: Mapping[str, Any]) -> set[str]:
        base = _codes(settings["exclude"]) if "exclude" in settings else list(default)
        return set(base) | set(_codes(settings.get("extend-exclude")))

    old_exclude, new_exclude = excluded(old), excluded(new)
    if added := new_exclude - old_exclude:
        gone = [f for f in files if _excluded(f, added) and not _excluded(f, old_exclude)]
        if gone:
            key = "extend-exclude" if "extend-exclude" in new else "exclude"
            yield (
                (key,),
                (
                    f"{key} gained {_show(added)}: {len(gone)} files are no longer linted "
                    f"({_show(gone)})"
                ),
            )
    old_names = _codes(old.get("filename")) or ["*.py"]
    new_names = _codes(new.get("filename")) or ["*.py"]
    if set(old_names) != set(new_names):
        gone = [
            f
            for f in files
            if _named(f, old_names) and not _named(f, new_names) and not _excluded(f, old_exclude)
        ]
        if gone:
            yield (
                ("filename",),
                (
                    f"filename narrowed to {_show(new_names)}: {len(gone)} files are no longer "
                    f"linted ({_show(gone)})"
                ),
            )


def _named(path: str, patterns: Iterable[str]) -> bool:
    """Whether flake8's (pycodestyle's) ``filename`` patterns take ``path``: its name, or its
    path from the project's folder."""
    name = path.rsplit("/", 1)[-1]
    return any(
        fnmatch.fnmatch(name, p) or fnmatch.fnmatch(path, p.removeprefix("./")) for p in patterns
    )


def _cov_config(addopts: Any) -> str | None:
    """The file pytest-cov's ``--cov-config`` in pytest ``addopts`` names, if any."""
    if isinstance(addopts, list):
        addopts = " ".join(map(str, addopts))
    if not isinstance(addopts, str):
        return None
    found = re.findall(r"--cov-config(?:=|\s+)(\S+)", addopts)
    return found[-1].strip("'\"") if found else None


def _plain_asserts(addopts: Any) -> bool:
    """Whether pytest ``addopts`` turn assertion rewriting off (``--assert=plain``)."""
    from pytest_agentgate.integrity.environment import plain_asserts

    if isinstance(addopts, list):
        addopts = " ".join(map(str, addopts))
    return isinstance(addopts, str) and plain_asserts(addopts)
