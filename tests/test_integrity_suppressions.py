"""suppression-added, on real git repositories: the change's new noqa, type: ignore, pragma,
nosec, eslint-disable and @ts-ignore comments block strict; moved or existing ones do not."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import CliRun, git, only_gate, verify_json

from pytest_agentgate.integrity.suppressions import suppressions

Agentgate = Callable[..., CliRun]

BASE = {
    # A gate runs a type checker: its suppressions hide what it finds.
    "agentgate.yml": (
        "gates:\n  integrity: {kind: integrity}\n"
        "  types: {kind: build, command: python -m mypy pkg}\n"
    ),
    "pkg/calc.py": (
        "import os  # noqa: F401\n\n\ndef add(a, b):\n    return a + b\n\n\n"
        "def label(x):\n    return 'noqa' + str(x)\n"
    ),
    "web/app.ts": "export const one: number = 1;\n",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    for name, text in BASE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "agent")
    monkeypatch.chdir(root)
    return root


def integrity(agentgate: Agentgate, profile: str = "strict") -> dict[str, Any]:
    run = agentgate("verify", "--format", "json", "--no-run", "--profile", profile)
    return run.gate("integrity")


def test_new_suppressions_block_strict_at_their_lines(repo: Path, agentgate: Agentgate) -> None:
    (repo / "pkg" / "calc.py").write_text(
        BASE["pkg/calc.py"].replace("    return a + b\n", "    return a + b  # noqa: E501\n")
        + "\n\ndef untested():  # pragma: no cover\n    x: int = 'a'  # type: ignore[assignment]\n"
        "    return int(x)  # nosec B307\n"
    )
    (repo / "pkg" / "extra.py").write_text("# ruff: noqa\nimport sys\n")
    (repo / "web" / "app.ts").write_text(
        "// @ts-ignore\nexport const one: number = 'x';\n/* eslint-disable no-console */\n"
    )
    gate = integrity(agentgate)
    found = {(f["path"], f["line"], f["message"].split("`")[1]) for f in gate["findings"]}
    assert found == {
        ("pkg/calc.py", 5, "noqa E501"),
        ("pkg/calc.py", 12, "pragma: no cover"),
        ("pkg/calc.py", 13, "type: ignore assignment"),
        ("pkg/calc.py", 14, "nosec B307"),
        ("pkg/extra.py", 1, "noqa"),
        ("web/app.ts", 1, "@ts-ignore"),
        ("web/app.ts", 3, "eslint-disable no-console"),
    }
    assert gate["status"] == "fail" and {f["code"] for f in gate["findings"]} == {
        "suppression-added"
    }
    # Weakening, not tampering: reported but not blocking under standard.
    standard = integrity(agentgate, "standard")
    assert standard["status"] == "pass" and len(standard["findings"]) == 7
    assert {f["severity"] for f in standard["findings"]} == {"warning"}


def test_moved_reformatted_and_string_noqa_are_not_new(repo: Path, agentgate: Agentgate) -> None:
    text = BASE["pkg/calc.py"]
    moved = (
        "\n\ndef add(a, b):\n    return a + b\n\n\nimport os  # noqa: F401\n"
        + text.split("return a + b\n", 1)[1]
    )
    (repo / "pkg" / "calc.py").write_text(moved + "\nNOTE = 'type: ignore # noqa'\n")
    git(repo, "mv", "web/app.ts", "web/main.ts")
    gate = integrity(agentgate)
    assert gate["status"] == "pass" and gate["findings"] == []


def test_the_base_config_can_approve_a_suppression(repo: Path, agentgate: Agentgate) -> None:
    (repo / "agentgate.yml").write_text(
        BASE["agentgate.yml"]
        + "integrity:\n  allow:\n    - rule: suppression-added\n      path: web/*.ts\n"
        "      reason: generated bindings the type checker cannot read\n"
    )
    git(repo, "commit", "-qam", "a human approves ts suppressions")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "agent")
    git(repo, "checkout", "-qb", "agent2")
    (repo / "web" / "app.ts").write_text("// @ts-ignore\nexport const one: number = 'x';\n")
    gate = integrity(agentgate)
    assert gate["status"] == "pass"
    (finding,) = gate["findings"]
    assert "allowed by the base's configuration: generated bindings" in finding["message"]


def test_linters_own_suppressions(repo: Path, agentgate: Agentgate) -> None:
    """flake8's and pylint's comments, the file-wide ones too."""
    (repo / "pkg" / "calc.py").write_text(
        BASE["pkg/calc.py"].replace(
            "def add(a, b):\n",
            "# pylint: disable-next=invalid-name\ndef add(a, b):  # pylint:disable=W0613\n",
        )
    )
    (repo / "pkg" / "gen.py").write_text("# pylint: skip-file\nimport sys\n")
    (repo / "pkg" / "old.py").write_text("# flake8: noqa\nimport sys\n")
    gate = integrity(agentgate)
    found = {(f["path"], f["line"], f["message"].split("`")[1]) for f in gate["findings"]}
    assert found == {
        ("pkg/calc.py", 4, "pylint: disable invalid-name"),
        ("pkg/calc.py", 5, "pylint: disable W0613"),
        ("pkg/gen.py", 1, "pylint: skip-file"),
        ("pkg/old.py", 1, "noqa"),
    }


def test_suppressions_are_read_from_comments_only() -> None:
    source = "x = 1  # noqa\ny = '# noqa'\nz = 2  # NOQA:E501,W291\n"
    assert list(suppressions("a.py", source)) == [(1, ("noqa", "")), (3, ("noqa", "E501,W291"))]
    broken = "def f(:\n    pass  # type: ignore\n"
    assert list(suppressions("b.py", broken)) == [(2, ("type: ignore", ""))]
    js = "const s = '// eslint-disable';\nconst u = \"http://x\"; /* istanbul ignore next */\n"
    assert list(suppressions("c.js", js)) == [(2, ("istanbul ignore", "next"))]


def test_the_pytest_door_blocks_a_new_suppression_too(repo: Path, tmp_path: Path) -> None:
    import sys

    (repo / "test_calc.py").write_text(
        "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    (repo / "pkg" / "__init__.py").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a passing test")
    (repo / "pkg" / "calc.py").write_text(
        BASE["pkg/calc.py"].replace("return a + b", "return a + b  # noqa: E501")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTGATE_")}
    env["AGENTGATE_STATE_HOME"] = str(tmp_path / "state")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--agentgate=strict", "-p", "no:cacheprovider"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout
    assert "FAIL  integrity" in proc.stdout and "pkg/calc.py:5" in proc.stdout


@pytest.mark.parametrize(
    ("gate", "found"),
    [
        ("", []),  # the gates run no type checker: nothing is hidden from them
        # Review 16: an interpreter in a folder named like a runner runs no runner.
        ("  build: {command: /p/.tox/py311/bin/python -m compileall -q pkg}\n", []),
        ("  lint: {command: tox -e lint}\n", ["type: ignore arg-type,call-arg"]),  # it may
        (
            "  types: {kind: build, command: pyright src}\n",
            ["type: ignore arg-type,call-arg"],
        ),
    ],
    ids=["no-type-checker", "an-interpreter-in-.tox", "a-tox-environment", "pyright"],
)
def test_a_type_checkers_suppression_counts_where_a_gate_may_run_one(
    repo: Path, agentgate: Agentgate, gate: str, found: list[str]
) -> None:
    # Review 15: blinker's test calls `send` wrongly on purpose, inside pytest.raises, and
    # its own strict mypy needs the comment; no gate of the verdict ran a type checker.
    (repo / "agentgate.yml").write_text("gates:\n  integrity: {kind: integrity}\n" + gate)
    git(repo, "commit", "-qam", "the gates")
    git(repo, "branch", "-f", "main", "HEAD")  # the base's gates
    (repo / "test_calc.py").write_text(
        "import pytest\n\nfrom pkg.calc import add\n\n\ndef test_one_argument():\n"
        "    with pytest.raises(TypeError):\n"
        "        add(1)  # type: ignore[call-arg, arg-type]\n"
    )
    findings = integrity(agentgate)["findings"]
    assert [f["message"].split("`")[1] for f in findings] == found, findings


# -- through `agentgate verify`, on a git repository whose change is in the working tree -------

GATED = "profile: strict\ngates:\n  integrity: {kind: integrity}\n"
TAX = "import math\n\n\ndef apply_tax(amount, rate):\n    return amount * (1 + rate)\n"


def _verify_findings(root: Path) -> list[tuple[str, str | None, int | None, str]]:
    from _helpers import only_gate, verify_json

    _, verdict = verify_json(root)
    gate = only_gate(verdict, "integrity")
    return [(f["code"], f["path"], f["line"], f["message"]) for f in gate["findings"]]


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("# ruff: disable[F401]\nimport math\n# ruff: enable[F401]\n", 1, "ruff: disable F401"),
        ("#ruff:disable[F401, E501]\nimport math\n", 1, "ruff: disable E501,F401"),
        ("import math  # ruff: ignore[F401]\n", 1, "ruff: ignore F401"),
        ("# ruff: file-ignore[unused-import]\nimport math\n", 1, "ruff: file-ignore unused-import"),
    ],
    ids=["range", "unmatched-range", "line", "file"],
)
def test_ruffs_own_suppression_comments_are_suppressions(
    tmp_path: Path, text: str, line: int, what: str
) -> None:
    from _helpers import gated_project

    root = gated_project(tmp_path / "proj", GATED, {"pkg/__init__.py": "", "pkg/tax.py": TAX})
    (root / "pkg" / "tax.py").write_text(TAX.replace("import math\n", text))
    assert _verify_findings(root) == [
        (
            "suppression-added",
            "pkg/tax.py",
            line,
            f"new `{what}`: the finding it silences must be fixed, not hidden",
        )
    ]


def test_a_ruff_range_the_base_had_moved_or_ended_is_no_finding(tmp_path: Path) -> None:
    from _helpers import gated_project

    ranged = "# ruff: disable[F401]\nimport math\n# ruff: enable[F401]\n"
    root = gated_project(
        tmp_path / "proj",
        GATED,
        {"pkg/__init__.py": "", "pkg/tax.py": TAX.replace("import math\n", ranged)},
    )
    (root / "pkg" / "tax.py").write_text(
        "'''Taxes; see `# ruff: disable[F401]` in the docs.'''\n\n"
        + TAX.replace("import math\n", ranged.replace("import math\n", "import math\nimport os\n"))
    )
    assert _verify_findings(root) == []


# -- lines coverage.py excludes, by its own regexes and the base's settings ----------------------

TOTALS = (
    "from typing import TYPE_CHECKING, Protocol\n\n"
    "if TYPE_CHECKING:\n    from collections.abc import Sequence\n\n\n"
    "class Invoice:\n    def __init__(self, amounts):\n        self.amounts = list(amounts)\n\n"
    "    def total(self):\n        return sum(self.amounts)\n"
)
EXPORT = (
    '\n    def export_rows(self, currency: str = "EUR") -> list[str]:{comment}\n'
    "        rows = []\n        for index, amount in enumerate(self.amounts):\n"
    '            rows.append(f"{{index}};{{amount}};{{currency}}")\n        return rows\n'
)


def _exclusion_project(tmp_path: Path, pyproject: str = "") -> Path:
    from _helpers import gated_project

    files = {"pkg/__init__.py": "", "pkg/totals.py": TOTALS}
    if pyproject:
        files["pyproject.toml"] = pyproject
    return gated_project(tmp_path / "proj", GATED, files)


@pytest.mark.parametrize(
    ("comment", "shown"),
    [
        ("  # pragma no cover (CSV exporter)", "# pragma no cover"),
        ("  #PRAGMA NO COVER", "#PRAGMA NO COVER"),
        ("  # pragma no branch", "# pragma no branch"),
        ("  # columns: index, label, amount: ...", "def export_rows("),
    ],
    ids=["no-colon", "upper-case", "no-branch", "comment-ending-in-ellipsis"],
)
def test_a_comment_coverage_excludes_a_function_by_is_a_suppression(
    tmp_path: Path, comment: str, shown: str
) -> None:
    root = _exclusion_project(tmp_path)
    (root / "pkg" / "totals.py").write_text(TOTALS + EXPORT.format(comment=comment))
    [(code, path, line, message)] = _verify_findings(root)
    assert (code, path, line) == ("suppression-added", "pkg/totals.py", 14)
    assert message.startswith(f"new coverage exclusion `{shown}")


def test_a_lone_ellipsis_inside_a_functions_parameters_is_a_suppression(tmp_path: Path) -> None:
    # Red team 35: coverage.py's default exclusion of a line holding only `...` (a stub's body),
    # put in a parameter list, left the whole untested function out of every figure.
    root = _exclusion_project(tmp_path)
    export = EXPORT.format(comment="").replace(
        'currency: str = "EUR")',
        'currency: str = "EUR",\n        note: object = (\n            ...\n        ),\n    )',
    )
    (root / "pkg" / "totals.py").write_text(TOTALS + export)
    [(code, path, line, message)] = _verify_findings(root)
    assert (code, path, line) == ("suppression-added", "pkg/totals.py", 16)
    assert message.startswith("new coverage exclusion `...`")


def test_typings_ellipsis_in_a_wrapped_signature_is_no_suppression(tmp_path: Path) -> None:
    # Review 22: the base's own `\\.\\.\\.` pattern matches `tuple[int, ...]` whether the
    # signature is wrapped or not; only a line that is the match alone hides code.
    root = _exclusion_project(
        tmp_path, '[tool.coverage.report]\nexclude_also = ["\\\\.\\\\.\\\\."]\n'
    )
    (root / "pkg" / "totals.py").write_text(
        TOTALS + "\n\ndef total(\n    values: tuple[int, ...],\n    start: int = 0,\n) -> int:\n"
        "    return sum(values, start)\n"
    )
    assert _verify_findings(root) == []


def test_if_type_checking_bound_by_an_import_alias_is_a_suppression(tmp_path: Path) -> None:
    root = _exclusion_project(tmp_path)
    text = TOTALS.replace(
        "        return sum(self.amounts)\n",
        "        return sum(self.amounts)\n\n    if TYPE_CHECKING:\n"
        + EXPORT.format(comment="").replace("\n    ", "\n        "),
    ).replace(
        "from typing import TYPE_CHECKING, Protocol\n", "from os import sep as TYPE_CHECKING\n"
    )
    (root / "pkg" / "totals.py").write_text(text)
    found = _verify_findings(root)
    assert [(c, p, n) for c, p, n, _ in found] == [
        ("suppression-added", "pkg/totals.py", 14),  # the lines the change added first
        ("suppression-added", "pkg/totals.py", 3),
    ]
    assert all("`if TYPE_CHECKING:`" in message for *_, message in found)


def test_a_comment_the_bases_coverage_settings_exclude_by_is_a_suppression(
    tmp_path: Path,
) -> None:
    root = _exclusion_project(
        tmp_path,
        "[tool.coverage.report]\n"
        'exclude_also = ["#\\\\s*untested", "if __name__ == .__main__.:"]\n',
    )
    (root / "pkg" / "totals.py").write_text(TOTALS + EXPORT.format(comment="  # untested"))
    assert [(c, p, n) for c, p, n, _ in _verify_findings(root)] == [
        ("suppression-added", "pkg/totals.py", 14)
    ]


def test_the_idioms_coverage_excludes_for_an_honest_change_pass(tmp_path: Path) -> None:
    """``if TYPE_CHECKING:`` from typing (or ``typing.TYPE_CHECKING``), a stub whose body is
    ``...`` (a comment after it too), ``...`` in a docstring, and a code idiom the base's own
    settings exclude."""
    root = _exclusion_project(
        tmp_path, '[tool.coverage.report]\nexclude_also = ["if __name__ == .__main__.:"]\n'
    )
    (root / "pkg" / "totals.py").write_text(
        TOTALS.replace("from typing", "import typing\nfrom typing")
        + EXPORT.format(comment="")
        + "\n\nif typing.TYPE_CHECKING:\n    from collections.abc import Iterator\n\n\n"
        "class Exporter(Protocol):\n    def rows(self) -> list[str]: ...\n\n"
        "    def header(\n        self,\n    ) -> str: ...  # the first row\n\n"
        "    def footer(self) -> str:\n        '''The last row.\n\n        ...\n        '''\n"
        '        ...\n\n\nif __name__ == "__main__":\n    print(Invoice([1]).total())\n'
    )
    status, verdict = verify_json(root)
    assert only_gate(verdict, "integrity")["findings"] == [], verdict
    assert status == 0, verdict


def test_a_comment_line_that_mentions_an_exclusion_is_no_suppression(tmp_path: Path) -> None:
    """A line that is only a comment leaves no statement out and opens no block: coverage.py's
    figures are the same with it, whether it names the base's ``exclude_also`` pattern or the
    ``pragma: no cover`` one."""
    root = _exclusion_project(
        tmp_path, '[tool.coverage.report]\nexclude_also = ["if TYPE_CHECKING:"]\n'
    )
    (root / "pkg" / "totals.py").write_text(
        TOTALS.replace(
            "\n\nclass Invoice:",
            '# Imports used only in annotations go under "if TYPE_CHECKING:".\n'
            '# Do not add "# pragma: no cover" to this module.\n\n\nclass Invoice:',
        )
    )
    status, verdict = verify_json(root)
    assert only_gate(verdict, "integrity")["findings"] == [], verdict
    assert status == 0, verdict


def test_a_pragma_comment_line_inside_a_statements_brackets_is_a_suppression(
    tmp_path: Path,
) -> None:
    """coverage.py counts a comment line inside a statement's brackets as that statement's:
    the pragma there leaves the whole statement out."""
    root = _exclusion_project(tmp_path)
    (root / "pkg" / "totals.py").write_text(
        TOTALS + "\n\nRATES = (\n    # pragma: no cover\n    0.2,\n)\n"
    )
    assert [(c, p, n) for c, p, n, _ in _verify_findings(root)] == [
        ("suppression-added", "pkg/totals.py", 16)
    ]


REPORT_TEST = (
    "from pkg.totals import Invoice\n\n\ndef test_pragma_lines_are_counted():\n"
    '    text = "a\\nb  # pragma: no cover\\n"\n    assert text.count("pragma") == 1\n'
)


@pytest.mark.parametrize(
    ("source", "found"),
    [('["pkg"]', []), ('["pkg", "tests"]', [("suppression-added", "tests/test_report.py", 5)])],
    ids=["tests-not-measured", "tests-measured"],
)
def test_a_test_string_that_holds_a_pragma_is_data_where_coverage_does_not_measure_tests(
    tmp_path: Path, source: str, found: list[tuple[str, str, int]]
) -> None:
    """coverage.py measures only the base's ``source``: a test file outside it is in no
    figure, and its string that holds ``# pragma: no cover`` is a test's data."""
    from _helpers import gated_project

    files = {
        "pkg/__init__.py": "",
        "pkg/totals.py": TOTALS,
        "pyproject.toml": f"[tool.coverage.run]\nsource = {source}\n",
        "tests/test_report.py": REPORT_TEST.split("    text")[0] + "    pass\n",
    }
    root = gated_project(tmp_path / "proj", GATED, files)
    (root / "tests" / "test_report.py").write_text(REPORT_TEST)
    _, verdict = verify_json(root)
    gate = only_gate(verdict, "integrity")
    assert [(f["code"], f["path"], f["line"]) for f in gate["findings"]] == found, verdict
    assert gate["status"] == ("fail" if found else "pass"), verdict
