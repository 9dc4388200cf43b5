"""The tool-settings analyzer (``tool-config-loosened``) in process, on both sides' texts.

Pins down what the change to flake8's, pycodestyle's and pylint's settings lets pass (rules
ignored or deselected, files excluded or no longer named, maxima raised, allowances gained,
switches flipped), read from the file each tool reads for the lint gates the base runs; and
ruff's ``extend``, coverage.py's unreadable settings and pytest's ``--assert=plain``. Each case
is a change of texts held in memory: no git, no subprocess. The end-to-end cases through
``agentgate verify`` are in ``test_integrity_config.py``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_agentgate.config.model import Config, GateConfig
from pytest_agentgate.integrity import settings
from pytest_agentgate.integrity.model import Scan

RULE = "tool-config-loosened"
FILES = ("pkg/__init__.py", "pkg/core.py", "legacy/old.py", "tests/test_core.py")


class Texts:
    def __init__(self, base: dict[str, str], now: dict[str, str]) -> None:
        self.base, self.current = base, now

    def at_base(self, path: str) -> str | None:
        return self.base.get(path)

    def now(self, path: str) -> str | None:
        return self.current.get(path)


class Repo:
    """The base's tracked files, as git would list them."""

    def __init__(self, root: Path, files: tuple[str, ...]) -> None:
        self.toplevel, self.files = root, files

    def tracked_at(self, base: object) -> list[str]:
        return list(self.files)


class Change:
    base = "base"

    def relative(self, path: str, root: Path) -> str | None:
        return path


def found(
    base: dict[str, str],
    now: dict[str, str],
    *commands: str,
    gates: list[GateConfig] | None = None,
    root: Path = Path("/project"),
) -> list[tuple[str | None, int | None, str]]:
    """The findings (file, line, message) of the change from ``base`` to ``now``, under lint
    gates running ``commands``."""
    base = {k: textwrap.dedent(v) for k, v in base.items()}
    now = {k: textwrap.dedent(v) for k, v in now.items()}
    touched = {
        p: "added" if p not in base else "deleted" if p not in now else "modified"
        for p in set(base) | set(now)
        if base.get(p) != now.get(p)
    }
    if gates is None:
        gates = [GateConfig(f"lint{i}", "lint", c) for i, c in enumerate(commands)]
    config = Config(root, gates=gates)
    scan = Scan(root, Repo(root, FILES), Change(), config, Texts(base, now), touched)  # type: ignore[arg-type]
    out = []
    for finding in settings.analyze(scan):
        assert finding.rule == RULE
        out.append((finding.path, finding.line, finding.message))
    return sorted(out, key=lambda f: (f[0] or "", f[1] or 0))


# -- flake8 ------------------------------------------------------------------------------------


def test_flake8_each_loosening_is_reported_at_its_key() -> None:
    base = {"setup.cfg": "[flake8]\nmax-line-length = 79\n"}
    now = {
        "setup.cfg": """\
            [flake8]
            max-line-length = 120
            extend-ignore = E501, W6
            per-file-ignores =
                tests/*.py: F401,E731
            extend-exclude = legacy
            exit-zero = yes
            """
    }
    assert found(base, now, "flake8 .") == [
        ("setup.cfg", 2, "flake8: max-line-length 79 -> 120: the base's E501 reports less"),
        ("setup.cfg", 3, "flake8: extend-ignore gained E501, W6, rules the base enforces"),
        (
            "setup.cfg",
            5,
            "flake8: per-file-ignores gained 'tests/*.py': E731, F401, rules the base enforces",
        ),
        (
            "setup.cfg",
            6,
            "flake8: extend-exclude gained legacy: 1 files are no longer linted (legacy/old.py)",
        ),
        ("setup.cfg", 7, "flake8: exit-zero false -> true: flake8 reports less"),
    ]


def test_flake8_a_local_report_plugin_gained_is_reported_a_checker_is_not() -> None:
    # Red team 34: a plugin of the project's own folder runs inside flake8. A report plugin
    # decides what flake8 prints; a checker only adds findings (one that patches flake8 is
    # found as code: patches.py), and review 21 added an honest one.
    base = {"setup.cfg": "[flake8]\nmax-line-length = 79\n"}
    checker = {
        "setup.cfg": "[flake8]\nmax-line-length = 79\n\n[flake8:local-plugins]\n"
        "extension =\n    X2 = checks:NoBreakpoint\npaths = ./lintplug\n"
    }
    assert found(base, checker, "flake8 .") == []
    report = {"setup.cfg": checker["setup.cfg"] + "report =\n    Q = quiet:Formatter\n"}
    assert [m for _, _, m in found(checker, report, "flake8 .")] == [
        "flake8: local-plugins-report gained Q=quiet:Formatter: flake8 reports less"
    ]
    # The base's own local plugins, unchanged, are no finding.
    assert found(report, report, "flake8 .") == []


def test_flake8_select_and_filename_narrowed() -> None:
    base = {"tox.ini": "[flake8]\nselect = E,F,W\n"}
    now = {"tox.ini": "[flake8]\nselect = F\nfilename = pkg/*.py\n"}
    assert found(base, now, "python -m flake8") == [
        ("tox.ini", 2, "flake8: select narrowed: E, W no longer selected"),
        (
            "tox.ini",
            3,
            "flake8: filename narrowed to pkg/*.py: 2 files are no longer linted "
            "(legacy/old.py, tests/test_core.py)",
        ),
    ]


def test_flake8_an_ignore_over_a_selection_names_the_ignore_key() -> None:
    base = {".flake8": "[flake8]\nselect = E,F\n"}
    now = {".flake8": "[flake8]\nselect = E,F\nignore = F401\n"}
    assert found(base, now, "flake8") == [
        (".flake8", 3, "flake8: ignore gained F401, rules the base enforces"),
    ]


def test_flake8_tightening_reordering_and_excluding_nothing_are_no_findings() -> None:
    base = {"setup.cfg": "[flake8]\nselect = E,F,W\nmax-line-length = 100\n"}
    now = {
        "setup.cfg": (
            "[flake8]\nselect = W, F, E\nmax-line-length = 88\n"
            "extend-exclude = build_output\nfilename = *.py, *.pyi\n"
        )
    }
    assert found(base, now, "flake8 .") == []


def test_flake8_an_option_of_a_rule_the_base_ignores_is_no_finding() -> None:
    base = {"setup.cfg": "[flake8]\nextend-ignore = E501\n"}
    now = {"setup.cfg": "[flake8]\nextend-ignore = E501\nmax-line-length = 200\n"}
    assert found(base, now, "flake8 .") == []


def test_flake8_per_file_ignores_entries_and_what_the_base_ignored_there() -> None:
    base = {"setup.cfg": "[flake8]\nper-file-ignores = a.py,b/*.py:E\n"}
    now = {"setup.cfg": "[flake8]\nper-file-ignores =\n    a.py,b/*.py:E501,F401\n    c.py:W605\n"}
    # E501 is ignored there already (E); F401 and W605 are new. The line is the first that
    # starts with a widened pattern.
    assert found(base, now, "flake8 .") == [
        (
            "setup.cfg",
            4,
            "flake8: per-file-ignores gained 'a.py': F401; 'b/*.py': F401; 'c.py': W605, "
            "rules the base enforces",
        ),
    ]


def test_flake8_reads_the_file_its_command_names() -> None:
    base = {"lint/flake8.ini": "[flake8]\n", "setup.cfg": "[flake8]\n"}
    now = {"lint/flake8.ini": "[flake8]\nignore = F\n", "setup.cfg": "[flake8]\nignore = W\n"}
    assert found(base, now, "flake8 --config lint/./flake8.ini pkg") == [
        ("lint/flake8.ini", 2, "flake8: ignore gained F, rules the base enforces"),
    ]


def test_flake8_stops_at_a_file_with_only_its_local_plugins() -> None:
    # setup.cfg with [flake8:local-plugins] is the file flake8 reads: .flake8 is not read.
    base = {"setup.cfg": "[flake8:local-plugins]\nextension =\n"}
    now = {**base, ".flake8": "[flake8]\nignore = E,F,W\n"}
    assert found(base, now, "flake8 .") == []
    # Without it, the new .flake8 is flake8's settings.
    assert found({}, {".flake8": "[flake8]\nignore = F\n"}, "flake8 .") == [
        (".flake8", 2, "flake8: ignore gained F, rules the base enforces"),
    ]


def test_flake8_settings_are_compared_only_for_the_base_s_enabled_gates() -> None:
    now = {"setup.cfg": "[flake8]\nignore = F\n"}
    added = GateConfig("lint", "lint", "flake8 .", from_change=True)
    disabled = GateConfig("lint", "lint", "flake8 .", enabled=False)
    assert found({}, now, gates=[added]) == []
    assert found({}, now, gates=[disabled]) == []
    assert found({}, now, "flake8-json .", "pytest --flake8") == []
    # A gate running flake8 whose settings file the change does not touch: nothing to compare.
    assert found({}, {"tox.ini": "[tox]\n"}, "flake8 .") == []


def test_an_unreadable_ini_file_is_no_linter_s_settings() -> None:
    assert found({}, {"setup.cfg": "[flake8\nignore = F\n"}, "flake8 .") == []


# -- pycodestyle -----------------------------------------------------------------------------


def test_pycodestyle_each_loosening_is_reported() -> None:
    base = {"tox.ini": "[pycodestyle]\nmax-doc-length = 72\n"}
    now = {
        "tox.ini": (
            "[pycodestyle]\nmax-doc-length = 100\nignore = E501\nrepeat = no\nhang-closing = yes\n"
        )
    }
    assert found(base, now, "pycodestyle pkg") == [
        ("tox.ini", 2, "pycodestyle: max-doc-length 72 -> 100: the base's W505 reports less"),
        ("tox.ini", 3, "pycodestyle: ignore gained E501, rules the base enforces"),
        ("tox.ini", 4, "pycodestyle: repeat true -> false: pycodestyle reports less"),
        ("tox.ini", 5, "pycodestyle: hang-closing false -> true: what pycodestyle reports changes"),
    ]


def test_pycodestyle_reads_its_files_together_and_pep8_as_a_fallback() -> None:
    # setup.cfg's [pep8] then tox.ini's [pycodestyle]: the last file's value wins.
    base = {"setup.cfg": "[pep8]\nselect = E,W\n", "tox.ini": "[pycodestyle]\n"}
    now = {"setup.cfg": "[pep8]\nselect = E,W\n", "tox.ini": "[pycodestyle]\nselect = E\n"}
    assert found(base, now, "pycodestyle .") == [
        ("tox.ini", 2, "pycodestyle: select narrowed: W no longer selected"),
    ]


def test_pycodestyle_exclude_replaces_its_defaults() -> None:
    now = {"setup.cfg": "[pycodestyle]\nexclude = .git,legacy\n"}
    assert found({"setup.cfg": "[pycodestyle]\n"}, now, "pycodestyle --config=extra.cfg .") == [
        (
            "setup.cfg",
            2,
            "pycodestyle: exclude gained legacy: 1 files are no longer linted (legacy/old.py)",
        ),
    ]


# -- pylint ----------------------------------------------------------------------------------


def test_pylint_in_pyproject_toml() -> None:
    base = {"pyproject.toml": "[tool.pylint.format]\nmax-line-length = 100\n"}
    now = {
        "pyproject.toml": """\
            [tool.pylint.format]
            max-line-length = 120
            [tool.pylint.'messages control']
            disable = ['missing-docstring']
            [tool.pylint.design]
            min-public-methods = 0
            """
    }
    assert found(base, now, "pylint pkg") == [
        ("pyproject.toml", 2, "pylint: max-line-length 100 -> 120: pylint reports less"),
        ("pyproject.toml", 4, "pylint: disable gained missing-docstring: pylint reports less"),
        ("pyproject.toml", 6, "pylint: min-public-methods 2 -> 0: pylint reports less"),
    ]


def test_pylint_lists_against_its_defaults_in_an_rc_file() -> None:
    base = {".pylintrc": "[MAIN]\nload-plugins = a,b\n"}
    now = {".pylintrc": "[MAIN]\nload-plugins = a\ngood-names = i, j, k, ex, Run, _, x\n"}
    assert found(base, now, "pylint pkg") == [
        (".pylintrc", 2, "pylint: load-plugins lost b: pylint reports less"),
        (".pylintrc", 3, "pylint: good-names gained x: pylint reports less"),
    ]


def test_pylint_reads_only_its_own_sections_of_setup_cfg() -> None:
    base = {"setup.cfg": "[metadata]\nname = x\n"}
    now = {"setup.cfg": "[metadata]\nname = x\n[pylint.MASTER]\nfail-under = 8\n"}
    assert found(base, now, "pylint pkg") == [
        ("setup.cfg", 4, "pylint: fail-under 10 -> 8: pylint reports less"),
    ]
    # A [metadata]-only setup.cfg is not pylint's: nothing to compare on either side.
    assert found(base, {"setup.cfg": "[metadata]\nname = y\n"}, "pylint pkg") == []


def test_pylint_reads_the_rc_file_its_command_names() -> None:
    base = {"ci/pylintrc": "[DESIGN]\nmax-args = 5\n"}
    now = {"ci/pylintrc": "[DESIGN]\nmax-args = 9\n"}
    assert found(base, now, "pylint --rcfile=ci/pylintrc pkg") == [
        ("ci/pylintrc", 2, "pylint: max-args 5 -> 9: pylint reports less"),
    ]


def test_pylint_unrankable_and_reordered_values() -> None:
    base = {"pylintrc": "[MAIN]\ndisable = a, b\nfail-under = 9\n"}
    now = {"pylintrc": "[MAIN]\ndisable = b, a\nfail-under = high\n"}
    # The same messages disabled in another order is no change; a floor that is no number
    # cannot be ranked, so it is reported as a change.
    assert found(base, now, "pylint pkg") == [
        ("pylintrc", 3, "pylint: fail-under '9' -> 'high': what pylint reports changes"),
    ]


# -- ruff's extend, coverage.py, pytest -------------------------------------------------------


def test_ruff_extend_reads_the_parent_the_path_climbs_to() -> None:
    # sub/ruff.toml extends the project's settings by "../ruff-base.toml": the base enforces
    # B there, so ignoring B loosens. A path with ".." must name the file git and the working
    # tree hold (git cannot read "sub/../ruff-base.toml" at the base).
    parent = '[lint]\nselect = ["E", "F", "B"]\n'
    base = {"ruff-base.toml": parent, "sub/ruff.toml": 'extend = "../ruff-base.toml"\n'}
    now = {
        "ruff-base.toml": parent,
        "sub/ruff.toml": 'extend = "../ruff-base.toml"\n\n[lint]\nextend-ignore = ["B"]\n',
    }
    assert found(base, now) == [
        ("sub/ruff.toml", 4, "ruff: extend-ignore gained B, rules the base enforces"),
    ]


def test_ruff_extend_lists_add_up_and_option_tables_merge() -> None:
    parent = (
        '[lint]\nselect = ["E", "F", "PL"]\nextend-ignore = ["E731"]\n'
        "[lint.pylint]\nmax-args = 5\nmax-branches = 12\n"
    )
    base = {"ruff.base.toml": parent, "ruff.toml": 'extend = "ruff.base.toml"\n'}
    now = {
        "ruff.base.toml": parent,
        "ruff.toml": 'extend = "ruff.base.toml"\n[lint]\nextend-ignore = ["E501"]\n'
        "[lint.pylint]\nmax-args = 8\n",
    }
    assert found(base, now) == [
        ("ruff.toml", 3, "ruff: extend-ignore gained E501, rules the base enforces"),
        ("ruff.toml", 5, "ruff: pylint.max-args 5 -> 8: the base's PL rules report less"),
    ]


def test_ruff_exclude_in_a_sub_folder_names_its_files() -> None:
    base = {"legacy/ruff.toml": "line-length = 88\n"}
    now = {"legacy/ruff.toml": 'line-length = 88\nextend-exclude = ["old.py"]\n'}
    assert found(base, now) == [
        (
            "legacy/ruff.toml",
            2,
            "ruff: extend-exclude gained old.py: 1 files are no longer linted (old.py)",
        ),
    ]


def test_an_unreadable_coveragerc_gives_way_to_the_next_file() -> None:
    base = {".coveragerc": "[run\n", "setup.cfg": "[coverage:report]\nfail_under = 90\n"}
    now = {".coveragerc": "[run\nx", "setup.cfg": "[coverage:report]\nfail_under = 80\n"}
    assert found(base, now) == [
        ("setup.cfg", 2, "coverage: fail_under 90 -> 80"),
    ]


@pytest.mark.parametrize(
    "addopts", ['addopts = "--assert=plain"', 'addopts = ["-q", "--assert", "plain"]']
)
def test_pytest_addopts_gaining_plain_asserts(addopts: str) -> None:
    base = {"pyproject.toml": "[tool.pytest.ini_options]\n"}
    now = {"pyproject.toml": f"[tool.pytest.ini_options]\n{addopts}\n"}
    [(path, line, message)] = found(base, now)
    assert (path, line) == ("pyproject.toml", 2)
    assert message.startswith("pytest: addopts gained --assert=plain: ")


def test_coverage_sources_at_base_read_the_gates_cov_options() -> None:
    config = Config(
        Path("/project"),
        gates=[
            GateConfig("test", "test", "pytest --cov pkg --cov=lib,tools --cov -q"),
            GateConfig("cov", "coverage", "coverage run --source app -m pytest"),
        ],
    )
    scan = Scan(Path("/project"), None, None, config, Texts({}, {}), {})  # type: ignore[arg-type]
    assert settings.coverage_sources_at_base(scan) == ["pkg", "lib", "tools", "app"]


# -- red team 4: settings read another way than agentgate read them ---------------------------

RUFF_BASE = '[tool.ruff.lint]\nselect = ["E", "F", "W", "B"]\n'
IGNORES = '[lint.per-file-ignores]\n"pkg/core.py" = ["B006", "F401"]\n'


def test_a_chain_of_ruff_extends_is_followed_to_its_end() -> None:
    pyproject = '[tool.ruff]\nextend = "cfg/a.toml"\n' + RUFF_BASE
    now = {"pyproject.toml": pyproject, "cfg/a.toml": 'extend = "b.toml"\n', "cfg/b.toml": IGNORES}
    assert [m for _, _, m in found({"pyproject.toml": RUFF_BASE}, now)] == [
        "ruff: per-file-ignores gained 'pkg/core.py': B006, F401, rules the base enforces"
    ]


def test_an_extend_ruff_cannot_be_read_by_agentgate_is_a_finding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_SUCH_FOLDER", raising=False)
    pyproject = '[tool.ruff]\nextend = "${NO_SUCH_FOLDER}/b.toml"\n' + RUFF_BASE
    assert found({"pyproject.toml": RUFF_BASE}, {"pyproject.toml": pyproject}) == [
        (
            "pyproject.toml",
            None,
            "ruff: extend names ${NO_SUCH_FOLDER}/b.toml, which agentgate cannot read, so what "
            "it changes cannot be compared with the base's rules; write ruff's settings so "
            "that they read as TOML 1.0, with plain paths",
        )
    ]


def test_a_ruff_file_that_is_not_toml_1_0_is_a_finding() -> None:
    # ruff reads TOML 1.1 (a multi-line inline table); Python's tomllib does not.
    ruff_toml = (
        '[lint]\nselect = ["E", "F", "W", "B"]\n'
        'per-file-ignores = {\n    "pkg/core.py" = ["B006"],\n}\n'
    )
    findings = found(
        {"pyproject.toml": RUFF_BASE}, {**{"pyproject.toml": RUFF_BASE}, "ruff.toml": ruff_toml}
    )
    assert [(p, m.split(",")[0]) for p, _, m in findings] == [
        ("ruff.toml", "ruff: ruff.toml does not read as TOML 1.0")
    ]


def test_coverage_settings_from_another_file_or_a_plugin_are_findings() -> None:
    base = '[tool.pytest.ini_options]\naddopts = "-q"\n\n[tool.coverage.run]\nbranch = true\n'
    now = base.replace('"-q"', '"-q --cov-config=cov.ini"').replace(
        "branch = true\n", 'branch = true\nplugins = ["covplug"]\n'
    )
    messages = sorted(m for _, _, m in found({"pyproject.toml": base}, {"pyproject.toml": now}))
    assert messages == [
        "coverage: plugins gained covplug: a plugin's code can change what coverage measures "
        "and excludes while the tests run",
        "pytest: addopts gained --cov-config=cov.ini: coverage reads its settings from that "
        "file instead of the project's, which agentgate compares",
    ]


def test_an_extend_outside_the_project_is_judged_only_when_new() -> None:
    # A workspace member's settings extend the workspace's: no side of the change holds it.
    member = '[tool.ruff]\nextend = "../pyproject.toml"\n' + RUFF_BASE
    touched = member + '\n[project]\nname = "member"\ndependencies = ["attrs"]\n'
    assert found({"pyproject.toml": member}, {"pyproject.toml": touched}) == []
    (path, _, message) = found({"pyproject.toml": RUFF_BASE}, {"pyproject.toml": member})[0]
    assert (path, message.split(",")[0]) == (
        "pyproject.toml",
        "ruff: extend names ../pyproject.toml",
    )
