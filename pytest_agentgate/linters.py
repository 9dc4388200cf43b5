"""The linter a project declares, at the version it pins: what zero-config lints with.

A project is judged by its own rules. In order, the first found wins:

1. a lint hook in ``.pre-commit-config.yaml`` (ruff, flake8, pycodestyle), at the hook's ``rev``;
2. ruff configuration: ``[tool.ruff]`` in pyproject.toml, ``ruff.toml`` or ``.ruff.toml``;
3. flake8 configuration: ``.flake8``, or ``[flake8]`` in setup.cfg or tox.ini;
4. pycodestyle configuration: ``[pycodestyle]`` (or the old ``[pep8]``) in setup.cfg or tox.ini;
5. pylint configuration: ``.pylintrc``, ``pylintrc``, ``[tool.pylint.*]`` in pyproject.toml, or
   ``[pylint.*]`` / ``[MASTER]`` in setup.cfg or tox.ini;
6. a linter in the project's development dependencies (``[project.optional-dependencies]``,
   ``[dependency-groups]``, ``requirements-dev.txt``, ``dev-requirements.txt`` and the like
   (:data:`_REQUIREMENT_FILES`), ``requirements/{dev,lint,test}.txt``), with its defaults.

A tool found by its configuration takes its version from the development dependencies when they
pin it exactly (``ruff==0.6.9``). A project that declares none is linted by ruff's error rules
only (syntax errors, undefined names and the like: ``E9, F63, F7, F82``), with ruff's
configuration files ignored, and the verdict says so. A pinned version runs through
``python -m pytest_agentgate.tools``, which installs it apart from the project (tools.py). Only
files are read here, through :class:`~pytest_agentgate.tree.Files` (on the disk, or the project's
files at the change's base, whose linter is the law: project.py); nothing runs.
"""

from __future__ import annotations

import configparser
import dataclasses
import posixpath
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pytest_agentgate.texts import toml_document
from pytest_agentgate.tree import Files, OnDisk

# ruff's rules that find errors rather than style: what a project that declares no linter gets.
ERROR_RULES = "E9,F63,F7,F82"
# ruff's default rules from 0.1 to 0.15: what a configuration that selects none was written
# against, unless it pins a later ruff. ruff 0.16 made 413 rules the default (review 17:
# more_itertools' `[tool.ruff.lint] ignore = [...]` read 84 findings with 0.17, none with 0.11).
FORMER_DEFAULTS = ("E4", "E7", "E9", "F")
# The rules ruff 0.16 and later select by default beyond FORMER_DEFAULTS (ruff 0.17.6's
# `ruff check --show-settings` on a project without configuration, named by `ruff rule --all`).
# A configuration that ignores one of these, and does not add it itself, was written against
# the new defaults (review 23: cachetools' `ignore = ["UP031", "DTZ005"]`).
_NEW_DEFAULTS = (
    "ASYNC100 ASYNC105 ASYNC115 ASYNC116 ASYNC210 ASYNC220 ASYNC221 ASYNC222 ASYNC230 "
    "ASYNC251 B002 B003 B004 B005 B006 B008 B009 B010 B012 B013 B014 B015 B016 B017 B018 B019 "
    "B020 B021 B022 B023 B025 B026 B029 B030 B031 B032 B033 B035 B039 BLE001 C400 C401 C402 "
    "C403 C404 C405 C406 C408 C409 C410 C411 C413 C414 C415 C417 C418 C419 D419 DTZ002 DTZ003 "
    "DTZ004 EXE001 EXE002 EXE004 EXE005 G010 G101 G201 G202 I001 INT001 INT002 INT003 ISC004 "
    "LOG001 LOG002 LOG009 LOG014 LOG015 N999 PERF101 PERF102 PERF402 PGH005 PIE790 PIE794 "
    "PIE796 PIE800 PIE804 PIE807 PIE808 PIE810 PLC0105 PLC0131 PLC0132 PLC0205 PLC0206 "
    "PLC0208 PLC0414 PLC3002 PLE0100 PLE0101 PLE0115 PLE0116 PLE0117 PLE0118 PLE0303 PLE0304 "
    "PLE0305 PLE0307 PLE0308 PLE0309 PLE0604 PLE0605 PLE0643 PLE0704 PLE1132 PLE1142 PLE1205 "
    "PLE1206 PLE1300 PLE1307 PLE1310 PLE1507 PLE1519 PLE1520 PLE1700 PLE2502 PLE2510 PLE2512 "
    "PLE2513 PLE2514 PLE2515 PLR0124 PLR0133 PLR0206 PLR0402 PLR1704 PLR1708 PLR1711 PLR1716 "
    "PLR1722 PLR1730 PLR1733 PLR1736 PLR2044 PLW0120 PLW0127 PLW0128 PLW0129 PLW0131 PLW0133 "
    "PLW0177 PLW0211 PLW0245 PLW0406 PLW0602 PLW0604 PLW0642 PLW0711 PLW1501 PLW1507 PLW1508 "
    "PLW1509 PLW1510 PLW2101 PT010 PT014 PT020 PT025 PT026 PT031 PTH124 PTH210 PYI001 PYI002 "
    "PYI003 PYI004 PYI005 PYI006 PYI007 PYI008 PYI009 PYI010 PYI012 PYI013 PYI015 PYI016 "
    "PYI017 PYI018 PYI019 PYI020 PYI025 PYI026 PYI029 PYI030 PYI032 PYI033 PYI034 PYI035 "
    "PYI036 PYI041 PYI042 PYI043 PYI044 PYI045 PYI046 PYI047 PYI048 PYI049 PYI050 PYI052 "
    "PYI055 PYI057 PYI058 PYI059 PYI061 PYI062 PYI063 PYI064 PYI066 RET501 RUF007 RUF008 "
    "RUF009 RUF010 RUF012 RUF013 RUF015 RUF016 RUF017 RUF018 RUF019 RUF020 RUF022 RUF023 "
    "RUF024 RUF026 RUF028 RUF030 RUF032 RUF033 RUF034 RUF040 RUF041 RUF046 RUF048 RUF049 "
    "RUF051 RUF053 RUF057 RUF058 RUF059 RUF063 RUF068 RUF100 RUF101 RUF200 S102 S110 S112 "
    "SIM101 SIM102 SIM103 SIM107 SIM113 SIM114 SIM115 SIM117 SIM118 SIM201 SIM202 SIM208 "
    "SIM210 SIM211 SIM220 SIM221 SIM222 SIM223 SIM401 SIM905 SIM911 T100 TC004 TC005 TC007 "
    "TC010 TRY002 TRY004 TRY201 TRY203 TRY401 UP001 UP003 UP004 UP005 UP006 UP007 UP008 UP009 "
    "UP010 UP011 UP012 UP014 UP017 UP018 UP019 UP020 UP021 UP022 UP023 UP024 UP025 UP026 "
    "UP028 UP029 UP030 UP031 UP032 UP033 UP034 UP035 UP036 UP037 UP039 UP040 UP041 UP043 "
    "UP044 UP045 UP046 UP047 UP049 UP050 W605 YTT101 YTT102 YTT103 YTT201 YTT202 YTT203 "
    "YTT204 YTT301 YTT302 YTT303"
)
NEW_DEFAULTS = frozenset(_NEW_DEFAULTS.split())

_PRE_COMMIT_REPOS = {
    "astral-sh/ruff-pre-commit": "ruff",
    "charliermarsh/ruff-pre-commit": "ruff",
    "pycqa/flake8": "flake8",
    "pycqa/pycodestyle": "pycodestyle",
}
_LINT_HOOKS = {
    "ruff": "ruff",
    "ruff-check": "ruff",
    "flake8": "flake8",
    "pycodestyle": "pycodestyle",
}


@dataclass(frozen=True)
class Linter:
    """The tool to lint with, its pinned version (None: the one installed), where the pin and
    the configuration come from."""

    tool: str
    version: str | None = None
    pinned_in: str | None = None
    config: str | None = None
    # A pinned flake8's plugins (its pre-commit hook's `additional_dependencies`), installed
    # with it, and the hook's `args`, as pre-commit runs it.
    plugins: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    # The regular expressions of the files its pre-commit hook is not given (the
    # configuration's top-level `exclude:` and the hook's own): the project's test inputs kept
    # wrong on purpose (review 16, pycodestyle's `testing/data/`).
    excludes: tuple[str, ...] = ()
    # A ruff configuration that selects no rules, with no version pinned: the rules it chose
    # on top of ruff's former defaults (:data:`FORMER_DEFAULTS`; its `extend-select`) and those
    # it ignores, given to ruff's `--select` and `--ignore` (a `select` resets the file's).
    former_defaults: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    # The tox environment whose `commands` run the tool (flake8, pycodestyle): its options
    # that choose rules and files are `args`, and the folders and files it names are linted
    # in place of the whole project (review 33: python-slugify runs pycodestyle with
    # `--ignore=E128,E261,E225,E501,W605 slugify tests setup.py tools`).
    tox_env: str | None = None
    targets: tuple[str, ...] = ()

    def gate(self, py: str) -> dict[str, Any]:
        """The lint gate's configuration, run with the interpreter ``py``."""
        spec = self.tool if self.version is None else f"{self.tool}=={self.version}"
        spec += "".join(f" --exclude-regex {shlex.quote(r)}" for r in self.excludes)
        if self.tool == "ruff":
            if self.config is None:
                args = f"check --isolated --select {ERROR_RULES} --output-format json ."
            else:
                # --no-fix: a gate judges the tree, it never edits it (`fix = true` in the
                # project's ruff settings would rewrite files while the tests run)
                args = "check --no-fix --no-fix-only --output-format json ."
                if self.former_defaults is not None:
                    extended, ignored = self.former_defaults
                    chosen = f" --select {shlex.quote(','.join(FORMER_DEFAULTS + extended))}"
                    if ignored:
                        chosen += f" --ignore {shlex.quote(','.join(ignored))}"
                    args = "check" + chosen + args[5:]
            runner = (
                f"{py} -m ruff"
                if self.version is None and not self.excludes
                else f"{py} -m pytest_agentgate.tools {spec}"
            )
            return {"command": f"{runner} {args}", "format": "ruff"}
        if self.tool == "pylint":
            return {
                "command": f"{py} -m pytest_agentgate.tools {spec} --output-format=json2 "
                "--recursive=y .",
                "format": "pylint",
            }
        extra = "".join(f" --with {shlex.quote(p)}" for p in self.plugins if self.version)
        args = "".join(f" {shlex.quote(a)}" for a in (*self.args, *(self.targets or (".",))))
        return {
            "command": f"{py} -m pytest_agentgate.tools {spec}{extra}{args}",
            "format": "flake8-text",
        }

    def describe(self) -> str:
        """For the verdict's notices: which tool, which version, which configuration."""
        if self.version is not None:
            version = f"{self.version}, pinned in {self.pinned_in}"
        else:
            installed = _installed_version(self.tool)
            version = (
                f"{installed}, as installed (the project pins no version)"
                if installed is not None
                else "(not installed, and the project pins no version)"
            )
        if self.tool == "ruff" and self.config is None:
            return (
                f"lint: the project declares no linter, so only ruff's error rules run "
                f"({ERROR_RULES}: syntax errors, undefined names and the like), ruff {version}; "
                "configure a linter to be judged by its rules"
            )
        plugins = f", with {', '.join(self.plugins)}" if self.plugins and self.version else ""
        if self.former_defaults is not None:
            plugins += (
                f"; the configuration selects no rules and pins no version, so ruff's defaults "
                f"before 0.16 ({', '.join(FORMER_DEFAULTS)}), which it was written against, "
                "are selected"
            )
        left_out = (
            f"; the files its pre-commit hook is not given are left out "
            f"({' and '.join(map(repr, self.excludes))})"
            if self.excludes
            else ""
        )
        missing = (
            f": install {self.tool} in the environment the gate runs in"
            if version.startswith("(not installed")
            else ""
        )
        tox = (
            f", with the options and paths of tox.ini [{self.tox_env}]"
            if self.tox_env is not None
            else ""
        )
        return (
            f"lint: {self.tool} {version}{plugins}, configured by "
            f"{self.config or 'its defaults'}{tox}{left_out}{missing}"
        )


def _installed_version(tool: str) -> str | None:
    import importlib.metadata  # only here: its import costs every stop hook about 30 ms

    try:
        return importlib.metadata.version(tool)
    except importlib.metadata.PackageNotFoundError:
        return None


class _Hook(NamedTuple):
    tool: str
    version: str | None
    plugins: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()


# The linters whose files pre-commit's `exclude:` can leave out (tools.py): the folders and
# files it matches are given to their `--extend-exclude`.
EXCLUDES_BY_REGEX = ("flake8", "ruff")


# A requirement pre-commit may install beside a hook: a name, extras, version bounds; never a
# URL, a path or an option.
PLUGIN = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9._, -]+\])?"
    r"(?:\s*(?:==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!-]+(?:\s*,\s*(?:==|>=|<=|~=|!=|<|>)\s*"
    r"[A-Za-z0-9.*+!-]+)*)?"
)
# Plugins that make flake8 read `[tool.flake8]` in pyproject.toml.
_PYPROJECT_LOADERS = frozenset({"flake8-pyproject", "pyproject-flake8", "flake8-toml-config"})


def _strings(value: object) -> tuple[str, ...]:
    """The strings of the list ``value`` (YAML may give a number): none when it is no list."""
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _pre_commit_config(files: Files) -> dict[str, Any] | None:
    """``.pre-commit-config.yaml`` (or ``.yml``) as read by YAML; None: none, or unreadable."""
    text = files.read(".pre-commit-config.yaml") or files.read(".pre-commit-config.yml")
    if not text:
        return None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def _regex(value: object) -> str | None:
    """A pre-commit ``exclude:`` that leaves something out: a regular expression Python
    compiles, not pre-commit's default ``^$``."""
    if not isinstance(value, str) or value in ("", "^$"):
        return None
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError):
        return None  # pre-commit itself stops on it
    return value


def pre_commit_exclude(files: Files) -> str | None:
    """The top-level ``exclude:`` of the project's pre-commit configuration: the files none of
    its hooks is given."""
    data = _pre_commit_config(files)
    return None if data is None else _regex(data.get("exclude"))


def _pre_commit(files: Files) -> list[_Hook]:
    """(tool, rev, plugins, args, excludes) for each lint hook in ``.pre-commit-config.yaml``,
    in file order: a flake8 hook's ``additional_dependencies`` (its plugins: flake8-pyproject
    makes it read `[tool.flake8]`; review 15, tqdm's 205 false E501 without it) and ``args``;
    the configuration's top-level ``exclude:`` and the hook's own."""
    data = _pre_commit_config(files)
    if data is None:
        return []
    top = _regex(data.get("exclude"))
    repos = data.get("repos")
    found: list[_Hook] = []
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict) or not isinstance(repo.get("repo"), str):
            continue
        url = repo["repo"].lower().removesuffix(".git").rstrip("/")
        name = "/".join(url.split("/")[-2:])
        tool = _PRE_COMMIT_REPOS.get(name)
        hooks = repo.get("hooks")
        if tool is None or not isinstance(hooks, list):
            continue
        hook = next(
            (h for h in hooks if isinstance(h, dict) and _LINT_HOOKS.get(h.get("id", "")) == tool),
            None,
        )
        if hook is None:
            continue
        rev = repo.get("rev")
        version = str(rev).removeprefix("v") if rev is not None else None
        plugins: tuple[str, ...] = ()
        args: tuple[str, ...] = ()
        if tool == "flake8":
            wanted = _strings(hook.get("additional_dependencies"))
            plugins = tuple(p.strip() for p in wanted if PLUGIN.fullmatch(p.strip()))
            args = _strings(hook.get("args"))
        good = version if version and re.match(r"^[0-9][\w.+!-]*$", version) else None
        excludes = tuple(r for r in (top, _regex(hook.get("exclude"))) if r is not None)
        found.append(_Hook(tool, good, plugins, args, excludes))
    return found


def _reads_pyproject(plugins: tuple[str, ...]) -> bool:
    return any(
        re.split(r"[\[<>=!~ ]", p, maxsplit=1)[0].lower().replace("_", "-") in _PYPROJECT_LOADERS
        for p in plugins
    )


def _ini_sections(files: Files, name: str) -> set[str]:
    text = files.read(name)
    if text is None:
        return set()
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source=name)
    except configparser.Error:
        return set()
    return set(parser.sections())


def _ruff_config(files: Files) -> str | None:
    for name in ("ruff.toml", ".ruff.toml"):
        if files.is_file(name):
            return name
    text = files.read("pyproject.toml")
    if text and re.search(r"^\s*\[\s*tool\s*\.\s*ruff\b", text, re.MULTILINE):
        return "pyproject.toml [tool.ruff]"
    return None


def _ruff_choice(files: Files) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """For a ruff configuration that selects no rules (``select``, at its top or under
    ``lint``), nor does any file it extends (``extend``, followed in the project): the rules
    they add to the defaults (``extend-select``) and those they ignore (``ignore``,
    ``extend-ignore``). None where one chooses its rules, or the chain leaves the project or
    cannot be read: the defaults it meant are then beside the point."""
    for name, table in (
        ("ruff.toml", ()),
        (".ruff.toml", ()),
        ("pyproject.toml", ("tool", "ruff")),
    ):
        data = _ruff_table(files, name, table)
        if data is None:
            continue
        extended: list[str] = []
        ignored: list[str] = []
        per_file: list[str] = []  # only to tell which defaults it was written against
        for _ in range(8):  # a chain of extends, nearest first; a loop is cut short
            lint = data.get("lint")
            tables = [data, lint] if isinstance(lint, dict) else [data]
            if any("select" in t for t in tables):
                return None
            extended[:0] = [r for t in tables for r in _strings(t.get("extend-select"))]
            ignored[:0] = [
                r
                for t in tables
                for key in ("ignore", "extend-ignore")
                for r in _strings(t.get(key))
            ]
            per_file += [
                r
                for t in tables
                for key in ("per-file-ignores", "extend-per-file-ignores")
                for codes in _mapping(t.get(key)).values()
                for r in _strings(codes)
            ]
            parent = data.get("extend")
            if parent is None:
                if _written_for_new_defaults(extended, [*ignored, *per_file]):
                    return None
                return tuple(extended), tuple(ignored)
            if not isinstance(parent, str) or parent.startswith(("/", "~")) or ".." in parent:
                return None
            name = posixpath.normpath(posixpath.join(posixpath.dirname(name), parent))
            data = _ruff_table(
                files, name, ("tool", "ruff") if name.endswith("pyproject.toml") else ()
            )
            if data is None:
                # zipp's `extend = "pyproject.toml"` where pyproject.toml has no [tool.ruff]
                if files.read(name) is None:
                    return None
                return tuple(extended), tuple(ignored)
        return None
    return None  # no configuration read: nothing to choose for it


def _written_for_new_defaults(extended: list[str], ignored: list[str]) -> bool:
    """Whether the configuration ignores a rule only ruff's new defaults select (one the
    former defaults and its own ``extend-select`` do not)."""
    own = (*FORMER_DEFAULTS, *extended)
    for code in ignored:
        code = code.strip().upper()
        if len(code) < 2 or code.startswith(own):
            continue
        if code in NEW_DEFAULTS or any(rule.startswith(code) for rule in NEW_DEFAULTS):
            return True
    return False


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _ruff_table(files: Files, name: str, table: tuple[str, ...]) -> dict[str, Any] | None:
    """The ruff settings of the file ``name`` (under ``table`` in it); None when it has none."""
    text = files.read(name)
    if text is None:
        return None
    data: Any = toml_document(text)
    for key in table:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


def _ini_config(files: Files, tool: str) -> str | None:
    if tool == "flake8" and files.is_file(".flake8"):
        return ".flake8"
    wanted = ("flake8",) if tool == "flake8" else ("pycodestyle", "pep8")
    for name in ("setup.cfg", "tox.ini"):
        sections = _ini_sections(files, name)
        for section in wanted:
            if section in sections:
                return f"{name} [{section}]"
    return None


def _pylint_config(files: Files) -> str | None:
    for name in (".pylintrc", "pylintrc"):
        if files.is_file(name):
            return name
    text = files.read("pyproject.toml")
    if text and re.search(r"^\s*\[\s*tool\s*\.\s*pylint\b", text, re.MULTILINE):
        return "pyproject.toml [tool.pylint]"
    for name in ("setup.cfg", "tox.ini"):
        sections = _ini_sections(files, name)
        if "MASTER" in sections or any(s.startswith("pylint.") for s in sections):
            return f"{name} [pylint]"
    return None


# A linter named in a requirement: ``ruff``, ``ruff==0.6.9``, ``flake8[extra]>=7; python...``.
_REQUIREMENT = re.compile(
    r"^\s*(ruff|flake8|pycodestyle|pylint)\s*(?:\[[^\]]*\])?\s*(?:==\s*([0-9][\w.+!-]*)\s*(?:;|$))?",
    re.IGNORECASE,
)
_REQUIREMENT_FILES = (
    "requirements-dev.txt",
    "dev-requirements.txt",
    "requirements_dev.txt",
    "dev.requirements.txt",  # review 33: python-slugify's
    "requirements-lint.txt",
    "lint-requirements.txt",
    "requirements-test.txt",
    "test-requirements.txt",
    "requirements/dev.txt",
    "requirements/development.txt",
    "requirements/lint.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
)


def _dev_dependencies(files: Files) -> tuple[dict[str, str | None], dict[str, str]]:
    """The linters in the project's development dependencies: tool -> exact pin (or None), and
    tool -> where it is declared, in the order found."""
    requirements: list[tuple[str, str]] = []
    text = files.read("pyproject.toml")
    if text:
        data = toml_document(text) or {}
        project = data.get("project")
        extras = project.get("optional-dependencies") if isinstance(project, dict) else None
        groups = data.get("dependency-groups")
        for table, where in (
            (extras, "[project.optional-dependencies]"),
            (groups, "[dependency-groups]"),
        ):
            for items in table.values() if isinstance(table, dict) else ():
                for item in items if isinstance(items, list) else ():
                    if isinstance(item, str):
                        requirements.append((item, f"pyproject.toml {where}"))
    for name in _REQUIREMENT_FILES:
        for line in (files.read(name) or "").splitlines():
            requirements.append((line, name))
    pins: dict[str, str | None] = {}
    where_found: dict[str, str] = {}
    for requirement, where in requirements:
        match = _REQUIREMENT.match(requirement)
        if match is None:
            continue
        tool = match.group(1).lower()
        if tool not in pins or (pins[tool] is None and match.group(2)):
            pins[tool] = match.group(2)
            where_found[tool] = where
    return pins, where_found


def declared_linter(root: Path | Files) -> Linter:
    """The linter the project at ``root`` declares (see the module's docstring); ``root`` may
    be its files at a commit (tree.py)."""
    files = OnDisk(root) if isinstance(root, Path) else root
    hooks = _pre_commit(files)
    configs = {
        "ruff": _ruff_config(files),
        "flake8": _ini_config(files, "flake8"),
        "pycodestyle": _ini_config(files, "pycodestyle"),
        "pylint": _pylint_config(files),
    }
    if hooks:
        tool, version, plugins, args, excludes = hooks[0]
        where = ".pre-commit-config.yaml" if version else None
        config = configs[tool] or ("ruff's defaults" if tool == "ruff" else None)
        if tool == "flake8" and config is None and _reads_pyproject(plugins):
            text = files.read("pyproject.toml") or ""
            if re.search(r"^\s*\[\s*tool\s*\.\s*flake8\s*\]", text, re.MULTILINE):
                config = "pyproject.toml [tool.flake8]"
        excludes = excludes if tool in EXCLUDES_BY_REGEX else ()
        return Linter(tool, version, where, config, plugins, args, excludes)
    pins, declared_in = _dev_dependencies(files)
    for tool, config in configs.items():
        if config is not None:
            version = pins.get(tool)
            former = _ruff_choice(files) if tool == "ruff" and version is None else None
            return _with_tox(files, Linter(
                tool, version, declared_in[tool] if version else None, config,
                former_defaults=former,
            ))  # fmt: skip
    for tool, version in pins.items():
        defaults = f"its defaults (declared in {declared_in[tool]})"
        return _with_tox(
            files, Linter(tool, version, declared_in[tool] if version else None, defaults)
        )
    return Linter("ruff")


# The options of flake8 and pycodestyle a tox command may give the gate's run: what they choose
# of rules and files. Others (`--output-file`, `--format`, `--quiet`, `--exit-zero`, `--diff`)
# would change what the gate reads of the run, and are left out.
_TOX_OPTIONS = frozenset(
    {
        "--ignore", "--extend-ignore", "--select", "--extend-select", "--exclude",
        "--extend-exclude", "--filename", "--max-line-length", "--max-doc-length",
        "--max-complexity", "--hang-closing", "--per-file-ignores", "--indent-size",
        "--config", "--append-config",
    }
)  # fmt: skip
# Of those, the ones that stand alone (the others take a value, `--x=v` or `--x v`).
_TOX_FLAGS = frozenset({"--hang-closing"})


def _with_tox(files: Files, linter: Linter) -> Linter:
    """``linter`` with the options and paths of the first tox environment whose ``commands``
    run it (flake8 and pycodestyle, whose projects often choose rules on the command line)."""
    if linter.tool not in ("flake8", "pycodestyle"):
        return linter
    text = files.read("tox.ini")
    if not text:
        return linter
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source="tox.ini")
    except configparser.Error:
        return linter
    for section in parser.sections():
        if section != "testenv" and not section.startswith("testenv:"):
            continue
        commands = parser.get(section, "commands", fallback="").replace("\\\n", " ")
        for line in commands.splitlines():
            try:
                words = shlex.split(line.strip().lstrip("-"), comments=True)
            except ValueError:
                continue
            if words[:1] == [linter.tool]:
                words = words[1:]
            elif len(words) > 2 and words[1:3] == ["-m", linter.tool]:
                words = words[3:]
            else:
                continue
            args, targets = _tox_words(files, words)
            return dataclasses.replace(linter, args=args, targets=targets, tox_env=section)
    return linter


def _tox_words(files: Files, words: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The options of :data:`_TOX_OPTIONS` among a tox command's words, and the project's
    files and folders it names (tox's `{posargs:tests}` is its default, `tests`)."""
    args: list[str] = []
    targets: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        substitution = re.fullmatch(r"\{posargs:([^{}]*)\}", word)
        if substitution is not None:
            word = substitution.group(1)
        if "{" in word:
            continue  # another tox substitution: nothing the gate can give
        name, equals, _ = word.partition("=")
        if word.startswith("-"):
            if name not in _TOX_OPTIONS:
                continue
            args.append(word)
            if not equals and name not in _TOX_FLAGS and index < len(words):
                args.append(words[index])
                index += 1
            continue
        path = posixpath.normpath(word)
        inside = not path.startswith("..") and not posixpath.isabs(path)
        if inside and (files.is_dir(path) or files.is_file(path)):
            targets.append(path)
    return tuple(args), tuple(targets)
