"""What the test analyzers share: the tests of a change's test files on both of its sides, the
marks that stop them from running or make them pass, and how the two sides are matched.

A language's analyzer (``tests_python.py``, ``tests_js.py``) reads each test file the change
touches, at the base and now, into a :class:`Side`; :func:`compare` judges the change:

- a test of the base that is not there now is removed, unless it was renamed or moved: the same
  body under another name or in another file, the same name in another file or class, or a
  body that still checks most of what the old one did (its calls and expected values: in the
  same file first, then, where the language says what a body checks, in another file). A
  renamed test is still the same test, and is compared with what it was;
- a test that asserted something at the base and asserts nothing now lost its assertions;
  one that no longer makes a check it made (``assert tax(30) == 3.5`` deleted, its other
  asserts left), where no test of the change makes it, dropped it, unless the change changes
  the code that check calls;
- a test the change adds that asserts nothing only runs the code;
- a skip, xfail, ``.only`` or rerun that applies here and that the base did not have, in the same
  place (the file, a class or suite, a test), is new.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal

from pytest_agentgate.integrity.model import EditedTest, IntegrityFinding

Category = Literal["skip", "only", "rerun", "exit"]
CATEGORY_RULES: dict[str, str] = {
    "skip": "skip-added",
    "only": "only-added",
    "rerun": "rerun-added",
    "exit": "exit-forced",
}
# How alike the bodies of a vanished test and a new one of the same file must be for them to
# be the same test, renamed and edited, where the language does not say what a body checks
# (the share of tokens they have in common).
SIMILAR = 0.8
# Where the language says what a body checks (its calls and values): the share of the old
# test's a renamed one must keep. A shared word of the name, or the old test's place, is not
# enough: ``test_tax_zero: assert tax(0) == 0.0`` replaced by ``test_tax_positive: assert
# tax(1) > 0`` is a test removed.
KEPT = 0.6
FACTS = 2000  # at most this many calls of one body are read as its facts
SPLIT_SIZE = 200  # a removed test of more statements is not tried split over cases
SPLIT_STEPS = 2_000  # the parts of a removed test tried as whole cases of one test


@dataclass
class Case:
    """One test, on one side of the change."""

    path: str  # project-relative
    qualname: str  # "TestA::test_b" (Python), "suite > adds" (JS)
    name: str  # the function's name or the test's title
    line: int
    # What its body is made of, read when the test vanished, is new or asserts nothing.
    read_body: Callable[[], Body]
    # None when the test asserts something, else why it asserts nothing. Decided lazily: it
    # may read helpers and fixtures in other files.
    assertion: Callable[[], str | None] = lambda: None
    runs: bool = True  # False for a test with no body (it.todo, a pending mocha test)
    # (line, "exact" | "weak" | "loose") for each plain assert of its own body: "exact" compares
    # with an expected value, "weak" only checks truthiness, None-ness or a type, "loose" admits
    # other values too (a wide tolerance, one of values written out) (Python).
    checks: Callable[[], list[tuple[int, str]]] = lambda: []
    # (line, name) for each function the test patches (monkeypatch.setattr, mock.patch) and
    # then calls in one of its own assertions (Python).
    mocked: Callable[[], list[tuple[int, str]]] = lambda: []
    # (line, argnames, each case as written) of each parametrization (Python's
    # ``@pytest.mark.parametrize``); the cases are None when they are not written as a literal.
    params: Callable[[], list[tuple[int, str, tuple[str, ...] | None]]] = lambda: []
    # The test as written (decorators, signature, body), to tell whether the change edited it.
    written: Callable[[], str] = lambda: ""
    # What it checks, as a rename or a move keeps it: the calls it makes with their arguments,
    # the values it expects ("call add(1, 2)", "value 3"). Empty where the language has none.
    facts: Callable[[], tuple[str, ...]] = lambda: ()
    # Its statements, normalised as a fold into another test keeps them (Python; none for a
    # test that is itself parametrized).
    statements: Callable[[], tuple[str, ...]] = lambda: ()
    # The cases it runs (one for a test that is not parametrized), each its statements with
    # the case's values put in for the argnames, and whether each is plain (cannot end the
    # test before the next one): where a removed test may have been folded or merged.
    cases: Callable[[], tuple[tuple[tuple[str, bool], ...], ...]] = lambda: ()
    # How many statements its body has as written, and those from one to another (end not
    # included) normalised as a test of those alone would be; None where they use a variable
    # that the statements before them bind (Python; none for a parametrized test): a removed
    # test split over several cases of a parametrized one, one after another.
    size: Callable[[], int] = lambda: 0
    part: Callable[[int, int], tuple[str, ...] | None] = lambda start, end: None
    # (what it calls, what it expects as compared and as written, line) of each assert that
    # compares a call of the code with a literal: ("tax(0)", "== 0", "== 0.0", 7); a
    # parametrized test's for each case (Python).
    expects: Callable[[], tuple[tuple[str, str, str, int], ...]] = lambda: ()
    # Each check its own body makes (its asserts, nested blocks included, its ``pytest.raises``
    # blocks and assert* calls), and given True, each of its parametrized cases' too, their
    # values put in: where a check dropped from another test may still be made (Python).
    made: Callable[[bool], tuple[Made, ...]] = lambda cases: ()
    _body: Body | None = field(default=None, repr=False, compare=False)
    _why: list[str | None] = field(default_factory=list, repr=False, compare=False)

    def why_nothing(self) -> str | None:
        if not self._why:
            self._why.append(self.assertion())
        return self._why[0]

    @property
    def body(self) -> Body:
        if self._body is None:
            self._body = self.read_body()
        return self._body

    @property
    def key(self) -> str:
        return self.body.key

    @property
    def parts(self) -> tuple[str, ...]:
        return self.body.parts

    @property
    def refs(self) -> frozenset[str]:
        return self.body.refs

    @property
    def strings(self) -> tuple[str, ...]:
        return self.body.strings


@dataclass(frozen=True)
class Made:
    """One check a test makes: an assert (each part of an ``and`` apart), a ``pytest.raises``
    block, an assert* call."""

    # Normalised as a move, a rename of its variables or a reformat keeps it (``b == a`` is
    # ``a == b``): the same check.
    key: str
    # What it checks, where another expected value is another rule's (expectation-changed):
    # ("compare", what it compares with a value written out), ("truth", what it only checks
    # to be true, false or None), ("raises", the code it expects to raise); None for others.
    subject: tuple[str, str] | None
    written: str  # as written, for a message
    line: int
    # The names it uses (and, where it reads a variable of the test, the test's): what of
    # the code it calls.
    names: frozenset[str] = frozenset()
    calls: frozenset[str] = frozenset()  # the functions it calls, by their own names
    # The checks on its line as the test writes them, its own variables not put in
    # (``content["a"] == "1"`` whatever ``content`` was read from): one still written so in
    # the test checks the same, of another input maybe (a test's own test data moved).
    plain: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Body:
    """A test's body: normalised (a move or a reformat keeps it), its tokens (how alike two
    bodies are), the names and strings it uses."""

    key: str = ""
    parts: tuple[str, ...] = ()
    refs: frozenset[str] = frozenset()
    strings: tuple[str, ...] = ()
    # It states types the compiler checks (TypeScript): a new test that does asserts that.
    typed: bool = False


@dataclass
class Mark:
    """A skip, xfail, ``.only`` or rerun, where it applies (``scope``) and whether it does here."""

    path: str
    scope: str  # a test's or class's qualname; "" for the whole file
    category: Category
    what: str  # as written: "@pytest.mark.skip", "it.skip", "pytest.skip()"
    line: int
    here: bool | None  # its condition holds here (None: cannot be told, not a finding)
    # A todo or a pending test is a finding only where it replaces a test of the base.
    replaces_only: bool = False
    # Its condition asks where it runs (the platform, the Python version): on a test, class or
    # file the change adds, it is a test for elsewhere, not a test taken away here.
    environmental: bool = False
    effect: str | None = None  # what it does, when it is not what its category does


@dataclass
class Side:
    """The tests and marks of the test files on one side of the change."""

    tests: dict[tuple[str, str], Case] = field(default_factory=dict)  # (path, qualname)
    marks: list[Mark] = field(default_factory=list)
    # path -> normalised body -> the name of a function there that the runner does not collect
    uncollected: dict[str, dict[str, str]] = field(default_factory=dict)
    # (path, qualname) of each class a test file defines, anywhere in it -> the names of the
    # code its body uses outside its own tests (what it gives the tests it inherits: Python)
    classes: dict[tuple[str, str], Callable[[], frozenset[str]]] = field(default_factory=dict)

    def add(self, case: Case) -> None:
        self.tests[(case.path, case.qualname)] = case


@dataclass
class Words:
    """How a language's findings speak."""

    runner: str  # "pytest"
    test_file: str  # what makes a file a test file: "python_files (test_*.py, *_test.py)"


@dataclass
class Change:
    """Where each file of the change came from, and what was removed from the code."""

    # now path -> base path, for every test file that is there now
    origin: dict[str, str]
    # base path -> why its tests are not there now, for test files that are not
    gone: dict[str, str]
    # What the change deletes from the code (not the tests): read only when a test is gone.
    removed_code: Callable[[], CodeRemoved]
    # The change touches test files and nothing else (no code, no data, no settings).
    only_tests: bool = False


# A test's string and the code share a phrase of this many words: the message it checks.
PHRASE = 5


@dataclass
class CodeRemoved:
    """What the change deletes from the code that is not a test: the functions and classes
    it defines at the top of a module, and its text (a removed test may check a message the
    code no longer has)."""

    names: set[str] = field(default_factory=set)
    before: str = ""  # the code's text at the base, whitespace collapsed
    after: str = ""  # and now
    # The names of the code whose definition the change changes, adds or deletes, and of
    # the code that uses them (where the language says: Python).
    changed: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        texts: Iterable[tuple[str | None, str | None]],
        defined: Callable[[str | None], set[str]],
        changed: Callable[[list[tuple[str | None, str | None]]], frozenset[str]] | None = None,
        bound: Callable[[str | None], set[str]] | None = None,
    ) -> CodeRemoved:
        """From (base text, text now) of each code file the change touches. A name is
        deleted when no file now has it: ``bound`` (else ``defined``) says which a text has,
        in any form (red team 52: `apply_tax = _apply_tax` after the def was renamed)."""
        texts = list(texts)
        names_before: set[str] = set()
        names_after: set[str] = set()
        before: list[str] = []
        after: list[str] = []
        for old, new in texts:
            names_before |= defined(old)
            names_after |= (bound or defined)(new)
            before.append(" ".join((old or "").split()))
            after.append(" ".join((new or "").split()))
        return cls(
            names_before - names_after,
            "\n".join(before),
            "\n".join(after),
            changed(texts) if changed is not None else frozenset(),
        )

    def used_by(self, case: Case) -> list[str]:
        """What of it ``case`` used: names, and phrases of its strings."""
        found = sorted(case.refs & self.names)
        for text in case.strings:
            words = text.split()
            for i in range(len(words) - PHRASE + 1):
                phrase = " ".join(words[i : i + PHRASE])
                if phrase in self.before and phrase not in self.after:
                    found.append(f"the message {phrase!r}")
                    break
        return found


def compare(
    base: Side,
    now: Side,
    change: Change,
    words: Words,
    edited: list[EditedTest] | None = None,
    new: list[str] | None = None,
    moved: dict[str, str] | None = None,
    merged: dict[str, str] | None = None,
    classes_gone: dict[str, str | None] | None = None,
    check_hosts: dict[str, str] | None = None,
) -> list[IntegrityFinding]:
    """Every finding of the change to these test files; ``edited`` gets the tests of the base
    the change edits, ``new`` the tests it adds, ``moved`` the tests it renames or moves, or
    folds into another, and ``merged`` those it folds (``path::qualname``, base -> now);
    ``classes_gone`` the classes it deletes (:func:`_classes_gone`)."""
    findings: list[IntegrityFinding] = []
    pairs, removed, added = _match(base, now, change)
    if new is not None:
        new.extend(f"{case.path}::{case.qualname}" for case in added)
    if moved is not None:
        for before, after in pairs:
            if (before.path, before.qualname) != (after.path, after.qualname):
                moved[f"{before.path}::{before.qualname}"] = f"{after.path}::{after.qualname}"
    if edited is not None:
        for before, after in pairs:
            written = before.written()
            if written != after.written():
                could_skip = any(w in written for w in ("skip", "xfail", "Skip"))
                edited.append(
                    EditedTest(
                        after.path, after.qualname, after.line, could_skip, before.path, written
                    )
                )
    scopes = {(n.path, n.qualname): (b.path, b.qualname) for b, n in pairs}
    new_marks = _new_marks(base, now, change, scopes)
    skipped_now = {(m.path, m.scope) for m in new_marks if m.category == "skip"}
    added_tests = {(case.path, case.qualname) for case in added}
    for mark in new_marks:
        findings.append(_mark_finding(mark, new_test=(mark.path, mark.scope) in added_tests))
    code: CodeRemoved | None = None
    folded: dict[str, str] = {}
    removed_as: dict[tuple[str, str], str] = {}
    for case in _unfolded(removed, pairs, added, now, folded):
        if code is None:
            code = change.removed_code()
        finding = _removed_finding(case, now, change, words, code)
        removed_as[(case.path, case.qualname)] = finding.rule
        findings.append(finding)
    if classes_gone is not None:
        classes_gone.update(_classes_gone(base, now, change, removed_as, code))
    if moved is not None:
        moved.update(folded)
    if merged is not None:
        merged.update(folded)
    for before, after in pairs:
        if not (before.runs and after.runs) or (after.path, after.qualname) in skipped_now:
            continue
        why = after.why_nothing()
        if why is not None and before.why_nothing() is None:
            renamed = (
                ""
                if before.qualname == after.qualname
                else f" (it was {before.path}::{before.qualname})"
            )
            findings.append(
                IntegrityFinding(
                    "assertion-removed",
                    f"{after.qualname} asserted something at the base and now asserts nothing"
                    f"{renamed}: {why}",
                    after.path,
                    after.line,
                )
            )
        elif why is None and before.why_nothing() is None:
            weakened = _weakened(before, after)
            if weakened is not None:
                findings.append(weakened)
        findings.extend(_mocked(after, {name for _, name in before.mocked()}))
    findings.extend(_dropped(pairs, now, change, skipped_now, code, check_hosts))
    findings.extend(_fewer_cases(pairs, now, check_hosts))
    if change.only_tests:
        for before, after in pairs:
            if before.written() == after.written():
                continue
            if before.why_nothing() is None and after.why_nothing() is None:
                findings.extend(_expectation_changed(before, after))
    for case in added:
        if not case.runs or (case.path, case.qualname) in skipped_now:
            continue
        findings.extend(_mocked(case, set()))
        why = case.why_nothing()
        if why is not None and not case.body.typed:
            findings.append(
                IntegrityFinding(
                    "test-asserts-nothing",
                    f"new test {case.qualname} asserts nothing ({why}): it only runs the code",
                    case.path,
                    case.line,
                )
            )
    return findings


def _classes_gone(
    base: Side,
    now: Side,
    change: Change,
    removed_as: dict[tuple[str, str], str],
    code: CodeRemoved | None,
) -> dict[str, str | None]:
    """The classes of the base the change deletes from a file that is still collected, not
    renamed (none of their own tests renamed, moved or folded: each is removed), as
    ``path::qualname`` -> what they went with: the code the change deletes that their own
    tests and the rest of their body use, when every own test is removed with it
    (``test-removed-with-feature``) and their body gives the tests they inherit some of it
    (the tests a mixin gives them ran with it); else None. The tests they inherited are
    judged by this, from the run's collection (gates/integrity.py)."""
    out: dict[str, str | None] = {}
    # A class of that name anywhere in the file now (nested in another, under an `if`) is
    # not deleted: whatever took its tests out is judged as the run's collection shows it.
    kept = {
        (change.origin.get(path, path), qualname.rpartition("::")[2])
        for path, qualname in now.classes
    }
    files = set(change.origin.values())
    for (path, qualname), uses in base.classes.items():
        name = qualname.rpartition("::")[2]
        if (path, name) in kept or path not in files or path in change.gone:
            continue
        own = [
            key for key in base.tests if key[0] == path and key[1].rpartition("::")[0] == qualname
        ]
        if any(key not in removed_as for key in own):
            continue  # one of its tests is elsewhere now: renamed or moved, not deleted
        went: str | None = None
        if code is not None and own and all(removed_as[key] == FEATURE_RULE for key in own):
            given = sorted(uses() & code.names)
            went = ", ".join(given[:3]) or None
        out[f"{path}::{qualname}"] = went
    return out


FEATURE_RULE = "test-removed-with-feature"


def _unfolded(
    removed: list[Case],
    pairs: list[tuple[Case, Case]],
    added: list[Case],
    now: Side,
    folded_into: dict[str, str] | None = None,
) -> list[Case]:
    """The removed tests that were not folded into another: a test whose statements run as
    one case of a parametrized test the change adds or edits (``test_tax_zero``'s ``assert
    tax(0) == 0.0`` as the case ``(0, 0.0)`` of ``assert tax(amount) == approx(expected)``), or
    as a run of statements of a test it was merged into, still runs. The case must be written
    among the parametrize cases, without marks, and the test run here: no skip, xfail or rerun
    on it, its class or its file, and nothing before the folded statements that could end it
    early."""
    if not removed:
        return removed
    hosts = [
        *added,
        *(after for before, after in pairs if before.written() != after.written()),
    ]
    hosts = [case for case in hosts if case.runs and case.cases() and not _skipped(case, now)]
    if not hosts:
        return removed
    left = []
    for case in removed:
        host = next((host for host in hosts if _folded(case, host)), None)
        if host is None:
            left.append(case)
        elif folded_into is not None:  # where it runs now (review 25: the names compared)
            folded_into[f"{case.path}::{case.qualname}"] = f"{host.path}::{host.qualname}"
    return left


def _folded(case: Case, host: Case) -> bool:
    """Whether ``case``'s statements run in ``host``: as one run of a case after statements
    that cannot end it early, or split over several cases (:func:`_split_over`)."""
    statements = case.statements()
    if not statements:
        return _cases_run_in(case, host)
    size = len(statements)
    instances = host.cases()
    for instance in instances:
        for start in range(len(instance) - size + 1):
            run = tuple(text for text, _ in instance[start : start + size])
            if run == statements and all(plain for _, plain in instance[:start]):
                return True
    return _split_over(case, instances)


def _cases_run_in(case: Case, host: Case) -> bool:
    """Whether each case of the parametrized ``case`` runs as a case of ``host``: the same
    statements with the same values put in (review 33: tomlkit merged two parametrized tests of
    one body into one, their cases in one list). A case left out, or given another value, is a
    test removed."""
    own = case.cases()
    if not own or not case.params():
        return False
    theirs = {tuple(text for text, _ in instance) for instance in host.cases()}
    return all(tuple(text for text, _ in instance) in theirs for instance in own)


def _split_over(case: Case, instances: tuple[tuple[tuple[str, bool], ...], ...]) -> bool:
    """Whether ``case``'s statements are, in order, those of several cases of one test, each
    case used once (review 30: a test that checked two inputs in turn made a test
    parametrized with a case for each). Each part of them is read as a test of its own would
    be (:attr:`Case.part`), and none uses a variable an earlier part bound: every case begins
    afresh. The first part is the end of its case, after statements that cannot end it
    early; each next one a whole case from its beginning, the last at least its beginning:
    a statement of the removed test is never found after another case's statements that may
    give its names other values (``r = tax(7)`` before ``assert r == 3.0`` that checked
    ``tax(10)``)."""
    size = case.size()
    if size < 2 or size > SPLIT_SIZE or len(instances) < 2:
        return False
    texts = [tuple(text for text, _ in instance) for instance in instances]
    budget = [SPLIT_STEPS]
    for end in range(1, size):
        piece = case.part(0, end)
        if not piece:
            continue
        for first, instance in enumerate(instances):
            start = len(instance) - len(piece)
            if (
                start < 0
                or texts[first][start:] != piece
                or not all(plain for _, plain in instance[:start])
            ):
                continue
            left = Counter(texts)
            left[texts[first]] -= 1
            if _whole_cases(case, end, left, budget):
                return True
    return False


def _whole_cases(case: Case, start: int, left: Counter[tuple[str, ...]], budget: list[int]) -> bool:
    """Whether ``case``'s statements from ``start`` on are, in order, whole cases of ``left``
    (each used once), the last at least its case's beginning. The ways tried are bounded by
    ``budget`` (spent: not found)."""
    size = case.size()
    if start == size:
        return True
    for end in range(start + 1, size + 1):
        budget[0] -= 1
        if budget[0] < 0:
            return False
        piece = case.part(start, end)
        if not piece:
            continue
        for text, count in left.items():
            if count <= 0 or not (text == piece or (end == size and text[: len(piece)] == piece)):
                continue
            left[text] -= 1
            found = _whole_cases(case, end, left, budget)
            left[text] += 1
            if found:
                return True
    return False


def _skipped(case: Case, now: Side) -> bool:
    """A skip, xfail or rerun applies, or may, to ``case`` (itself, its class, its file)."""
    scopes = {"", case.qualname}
    parts = case.qualname.split("::")
    scopes.update("::".join(parts[:n]) for n in range(1, len(parts)))
    return any(
        mark.path == case.path
        and mark.scope in scopes
        and mark.category in ("skip", "rerun")
        and mark.here is not False
        and mark.effect is None  # a case's own mark: that case is not read
        for mark in now.marks
    )


def _fewer_cases(
    pairs: list[tuple[Case, Case]], now: Side, hosts: dict[str, str] | None = None
) -> list[IntegrityFinding]:
    """Tests that run fewer parametrized cases than at the base, where a case that is gone is
    in no test with as many argnames now (a case moved to another test, or a duplicate
    dropped, still runs). A parametrization whose cases are not a literal on either
    side cannot be counted: no finding."""
    if not any(before.params() for before, _ in pairs):
        return []
    # A case still runs when a test with as many argnames has it now (moved, or split off,
    # names renamed or not); the same text under another arity is another case.
    written: dict[int, set[str]] = {}
    for case in now.tests.values():
        for _, names, cases in case.params():
            written.setdefault(names.count(","), set()).update(cases or ())
    ran: dict[tuple[str, ...], str] | None = None
    findings = []
    for before, after in pairs:
        now_params = after.params()
        if any(cases is None for _, _, cases in now_params):
            continue
        by_names = {names: (line, cases or ()) for line, names, cases in now_params}
        for _, names, was in before.params():
            if was is None:
                continue
            if names not in by_names and len(now_params) == len(before.params()) == 1:
                names = now_params[0][1]  # the argnames renamed: the one parametrization
            line, cases = by_names.get(names, (after.line, ()))
            gone = [text for text in was if text not in written.get(names.count(","), ())]
            # A case moved to another test runs there only with the same checks (red team
            # 53: `(ZERO, 0.0)` moved to a test asserting `rule.rate == expected`).
            bodies = [tuple(text for text, _ in one) for one in before.cases()]
            if len(before.params()) == 1 and len(bodies) == len(was):
                if ran is None:
                    ran = {
                        tuple(text for text, _ in one): f"{case.path}::{case.qualname}"
                        for case in now.tests.values()
                        if case.runs
                        for one in case.cases()
                    }
                gone = [
                    text
                    for text, body in zip(was, bodies, strict=True)
                    if text not in cases and body not in ran
                ]
                if hosts is not None:  # where a moved case runs now: it must run (red team 54)
                    here = f"{after.path}::{after.qualname}"
                    for text, body in zip(was, bodies, strict=True):
                        host = ran.get(body)
                        if text not in cases and host is not None and host != here:
                            hosts.setdefault(host, f"{before.path}::{before.qualname}")
            if len(set(cases)) >= len(set(was)) or not gone:
                continue
            shown = ", ".join(f"`{text}`" for text in gone[:3])
            more = f" and {len(gone) - 3} more" if len(gone) > 3 else ""
            findings.append(
                IntegrityFinding(
                    "tests-fewer",
                    f"{after.qualname} runs {len(cases) or 1} `{names}` case(s), "
                    f"{len(was)} at the base: {shown}{more} no longer run",
                    after.path,
                    line,
                )
            )
    return findings


def _expectation_changed(before: Case, after: Case) -> list[IntegrityFinding]:
    """A test that calls the code as it did and now expects another value of it, in a change
    that touches nothing but tests: either the test was wrong, or it now agrees with a bug. A
    notice for the reviewer (never blocking): ``assert tax(0) == 0.0`` become ``== 1.5``."""
    was: dict[str, dict[str, str]] = {}
    for subject, same, written, _ in before.expects():
        was.setdefault(subject, {})[same] = written
    now: dict[str, dict[str, str]] = {}
    lines: dict[str, int] = {}
    for subject, same, written, line in after.expects():
        now.setdefault(subject, {})[same] = written
        lines.setdefault(subject, line)
    for subject, expecting in now.items():
        old = was.get(subject, {})
        if old and not set(old) <= set(expecting):
            shown_now = " or ".join(sorted(expecting.values()))
            shown_was = " or ".join(sorted(old.values()))
            return [
                IntegrityFinding(
                    "expectation-changed",
                    f"{after.qualname} now expects `{subject} {shown_now}` where the base "
                    f"expected `{subject} {shown_was}`, and the change does not change what "
                    "the code does: is the test wrong, or does it now agree with a bug?",
                    after.path,
                    lines[subject],
                )
            ]
    return []


def _dropped(
    pairs: list[tuple[Case, Case]],
    now: Side,
    change: Change,
    skipped: set[tuple[str, str]],
    code: CodeRemoved | None,
    hosts: dict[str, str] | None = None,
) -> list[IntegrityFinding]:
    """The checks a test the change edits (in place, renamed or moved) made at the base and
    that no test of the change makes now: ``assert tax(30) == 3.5`` deleted, the test's other
    asserts left to pass. A check moved to another test of the change, or into a case of a
    parametrized one, is still made; one of the same call with another expected value is
    another rule's (``expectation-changed``), as is one made weak (``assertion-weakened``) in
    its own test. A check of code the change changes or deletes may go with the behaviour it
    checked."""
    findings: list[IntegrityFinding] = []
    everywhere: _Kept | None = None
    written: str | None = None
    for before, after in pairs:
        if (
            before.written() == after.written()
            or not (before.runs and after.runs)
            or (after.path, after.qualname) in skipped
            or before.why_nothing() is not None
            or after.why_nothing() is not None  # asserting nothing: assertion-removed already
        ):
            continue
        was = before.made(False)
        if not was:
            continue
        own = _Kept(after.made(True))
        gone = [check for check in was if not own.makes(check)]
        if gone:
            if everywhere is None:  # the tests that run: one skipped now checks nothing
                made = {
                    check: f"{case.path}::{case.qualname}"
                    for case in now.tests.values()
                    if case.runs and (case.path, case.qualname) not in skipped
                    for check in case.made(True)
                }
                everywhere = _Kept(made, made.__getitem__)
            moved = [check for check in gone if everywhere.makes(check)]
            gone = [check for check in gone if not everywhere.makes(check)]
            if moved and hosts is not None:  # where each runs now: it must run (red team 53)
                unchanged = {
                    f"{a.path}::{a.qualname}" for b, a in pairs if b.written() == a.written()
                }
                for host in everywhere.hosts(moved) - unchanged:
                    hosts.setdefault(host, f"{before.path}::{before.qualname}")
        if gone and not change.only_tests:
            # In a change of the code too, a check of a function it changes may go with the
            # old behaviour (or give way to a check of it with other values). What the check
            # calls, not any name it reads: red team 53's new module binding `ZERO`, a name
            # of the check's, excused it.
            if code is None:
                code = change.removed_code()
            gone = [c for c in gone if not c.calls & code.changed]
        if not gone:
            continue
        renamed = (
            ""
            if (before.path, before.qualname) == (after.path, after.qualname)
            else f" (it was {before.path}::{before.qualname})"
        )
        # It blocks where it is sure: a check of the code with values written out
        # (`assert tax(30) == 3.5`) whose call no test of the change makes. A check of the
        # test's own values (`isinstance(result, tuple)`, `v1 == v2`), or of a call the
        # tests still make, was more likely rewritten another way (review 32: a whole value
        # compared, unittest's other spellings, a helper): a note for a reviewer.
        if written is None:  # the checks the tests of the change make, as keyed
            written = "\n".join(everywhere.keys) if everywhere is not None else ""
        # Still written as it was in the test, its input made another way (review 33: a
        # test's data file read from a tmp_path copy): the test's input edited, not a check
        # dropped; a note for a reviewer.
        kept = {plain for check in after.made(False) for plain in check.plain}
        sure = [c for c in gone if _sure(c, written) and not c.plain & kept]
        for rule, checks in (("assertion-removed", sure), ("check-dropped", gone)):
            unique = list({check.key: check for check in reversed(checks)}.values())[::-1]
            if not unique:
                continue
            first = unique[0]
            more = f" and {len(unique) - 1} more check(s)" if len(unique) > 1 else ""
            findings.append(
                IntegrityFinding(
                    rule,
                    f"{after.path}::{after.qualname}{renamed} no longer checks "
                    f"`{first.written}` (at the base, line {first.line}){more}, and no test of "
                    "the change does, nor calls the code the same way, while the change does "
                    "not change the code it calls: restore the check, or change it with the "
                    "behaviour it checks"
                    if rule == "assertion-removed"
                    else f"{after.path}::{after.qualname}{renamed} no longer checks "
                    f"`{first.written}` (at the base, line {first.line}){more} as it did, and "
                    "no test of the change makes that check: if it checks as much another way, "
                    "nothing to do",
                    after.path,
                    after.line,
                )
            )
            break
    return findings


def _sure(check: Made, tests_now: str) -> bool:
    """Whether a dropped check surely went: it compares a call of the code, with values the
    test wrote out (none of its own variables), and no check a test of the change makes has
    that call in it (a whole value compared, another spelling of `assertRaises`: the test's
    variables are put in where they are read). A call only assigned, or only made, checks
    nothing (red team 54)."""
    if check.subject is None or not check.calls:
        return False
    kind, subject = check.subject
    if kind not in ("compare", "raises") or "Name('_'" in subject:
        return False  # a variable of the test's: computed another way, maybe
    return subject not in tests_now


class _Kept:
    """The checks some tests make: whether one of the base's is still made, and by which."""

    def __init__(self, checks: Iterable[Made], host: Callable[[Made], str] | None = None) -> None:
        self.keys: set[str] = set()
        self.subjects: set[tuple[str, str]] = set()
        self.made_by: dict[str, set[str]] = {}
        for check in checks:
            self.keys.add(check.key)
            if check.subject is not None:
                self.subjects.add(check.subject)
            if host is not None:
                self.made_by.setdefault(check.key, set()).add(host(check))

    def hosts(self, checks: Iterable[Made]) -> set[str]:
        """The tests that make these checks, where known."""
        return {host for check in checks for host in self.made_by.get(check.key, ())}

    def makes(self, check: Made) -> bool:
        if check.key in self.keys:
            return True
        if check.subject is None:
            return False
        kind, subject = check.subject
        if kind == "truth":  # checked true at the base: compared with a value now is as much
            return check.subject in self.subjects or ("compare", subject) in self.subjects
        return check.subject in self.subjects


def _mocked(case: Case, at_base: set[str]) -> list[IntegrityFinding]:
    """The functions ``case`` newly replaces and then asserts on."""
    return [
        IntegrityFinding(
            "tested-code-mocked",
            f"{case.qualname} replaces `{name}` and then asserts on what `{name}` returns: it "
            "checks the stand-in, not the code",
            case.path,
            line,
        )
        for line, name in case.mocked()
        if name not in at_base
    ]


def _weakened(before: Case, after: Case) -> IntegrityFinding | None:
    """The same test with fewer exact assertions and more weak ones: ``assert total(x) == 3``
    become ``assert total(x)`` or ``assert total(x) is not None``."""
    was, now = before.checks(), after.checks()
    exact = sum(kind == "exact" for _, kind in now) - sum(kind == "exact" for _, kind in was)
    weak = sum(kind != "exact" for _, kind in now) - sum(kind != "exact" for _, kind in was)
    if exact >= 0 or weak <= 0:
        return None
    loose = sum(kind == "loose" for _, kind in now) > sum(kind == "loose" for _, kind in was)
    line = next((n for n, kind in reversed(now) if kind != "exact"), after.line)
    what = (
        "admits other values than the expected one (a wide tolerance, or one of values written out)"
        if loose
        else "only checks that something is truthy, not None or of a type"
    )
    return IntegrityFinding(
        "assertion-weakened",
        f"{after.qualname} compared values with expected ones at the base; now {-exact} fewer "
        f"comparisons and {what}",
        after.path,
        line,
    )


# -- matching the two sides ---------------------------------------------------------------------


def _match(
    base: Side, now: Side, change: Change
) -> tuple[list[tuple[Case, Case]], list[Case], list[Case]]:
    """(base, now) pairs of the same test; the base's tests that are gone; the new tests."""
    by_origin = {(change.origin.get(c.path, c.path), c.qualname): c for c in now.tests.values()}
    pairs = [(case, by_origin[key]) for key, case in base.tests.items() if key in by_origin]
    removed = [case for key, case in base.tests.items() if key not in by_origin]
    added = [case for key, case in by_origin.items() if key not in base.tests]

    def pair_off(same: Callable[[Case, Case], bool]) -> None:
        for before in list(removed):
            for after in added:
                if same(before, after):
                    pairs.append((before, after))
                    removed.remove(before)
                    added.remove(after)
                    break

    pair_off(lambda b, n: bool(b.key) and b.key == n.key)
    pair_off(lambda b, n: b.name == n.name)
    if removed and added:
        # Renamed and edited, in the same file: only a body that keeps what the old one
        # checked (most of its calls and expected values) is the same test; a shared word of
        # the name or the old test's place only says which of the alike ones it is. The pair
        # is still compared: this lets through nothing an edit in place would not.
        slots = _Slots(base, now, pairs)
        for before in list(removed):
            candidates = [
                (
                    _kept(before, after),
                    _shared_words(before, after),
                    slots.same(before, after),
                    _similarity(before, after),
                    index,
                    after,
                )
                for index, after in enumerate(added)
                if change.origin.get(after.path, after.path) == before.path and before.parts
            ]
            # The likeliest first: the most of what it checked, words of its name, its place.
            for kept, _, _, similarity, _, after in sorted(
                candidates, key=lambda c: (-(c[0] or 0), -c[1], -c[2], -c[3], c[4])
            ):
                alike = similarity >= SIMILAR if kept is None else kept >= KEPT
                if alike:
                    pairs.append((before, after))
                    removed.remove(before)
                    added.remove(after)
                    break
        _moved_and_edited(removed, added, pairs, change)
        _split(removed, added, pairs, change)
    return pairs, removed, added


def _moved_and_edited(
    removed: list[Case], added: list[Case], pairs: list[tuple[Case, Case]], change: Change
) -> None:
    """Moved to another file, renamed and edited: a new test of another file is the same test
    only when the language says what the old one checked and the new one keeps most of it
    (its calls and expected values, :data:`KEPT`); a body merely alike in its words is not.
    The one that keeps the most is it, and the pair is compared as an edit in place is."""
    for before in list(removed):
        candidates = [
            (kept, _shared_words(before, after), index, after)
            for index, after in enumerate(added)
            if change.origin.get(after.path, after.path) != before.path
            and (kept := _kept(before, after)) is not None
            and kept >= KEPT
        ]
        if candidates:
            *_, after = min(candidates, key=lambda c: (-c[0], -c[1], c[2]))
            pairs.append((before, after))
            removed.remove(before)
            added.remove(after)


def _split(
    removed: list[Case], added: list[Case], pairs: list[tuple[Case, Case]], change: Change
) -> None:
    """Tests split in several: all that the old test checked is still checked, together, by
    new tests of its file. It is paired with the one that keeps the most of it (judged as that
    test); the others are new tests. (Tests merged into one are folded: see
    :func:`_unfolded`.)"""
    for before in list(removed):
        was = Counter(before.facts())
        if not was:
            continue
        new = [c for c in added if change.origin.get(c.path, c.path) == before.path]
        together: Counter[str] = Counter()
        for case in new:
            together += Counter(case.facts())
        if was - together:
            continue  # not all of it: the tests that split it would keep what they like
        best = max(new, key=lambda case: _kept(before, case) or 0)
        if _kept(before, best):
            pairs.append((before, best))
            removed.remove(before)
            added.remove(best)


def _kept(before: Case, after: Case) -> float | None:
    """The share of what ``before`` checked (its calls and values) that ``after`` still
    checks; None when the language does not say."""
    was = Counter(before.facts())
    if not was:
        return None
    return sum((was & Counter(after.facts())).values()) / sum(was.values())


# Words a test's name has that say nothing of what it tests.
_FILLER = {"test", "tests", "should", "when", "with", "the", "and", "can", "does", "that", "for"}


def _shared_words(before: Case, after: Case) -> int:
    """How many words of the old name the new one has (or one starts the other: mul,
    multiplies)."""

    def words(case: Case) -> set[str]:
        found = re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", case.qualname).lower())
        return {w for w in found if len(w) >= 3 and w not in _FILLER}

    new = words(after)
    return sum(any(a.startswith(b) or b.startswith(a) for b in new) for a in words(before))


def _similarity(before: Case, after: Case) -> float:
    return SequenceMatcher(None, before.parts, after.parts, autojunk=False).ratio()


class _Slots:
    """Where a test sits in its file: between which tests (by their names at the base)."""

    def __init__(self, base: Side, now: Side, pairs: list[tuple[Case, Case]]) -> None:
        known = {(n.path, n.qualname): b.qualname for b, n in pairs}
        self.before = self._neighbours(base.tests.values(), lambda c: c.qualname)
        self.after = self._neighbours(
            now.tests.values(), lambda c: known.get((c.path, c.qualname), "")
        )

    @staticmethod
    def _neighbours(
        cases: Iterable[Case], name: Callable[[Case], str]
    ) -> dict[tuple[str, str], tuple[str, str]]:
        by_file: dict[str, list[Case]] = {}
        for case in cases:
            by_file.setdefault(case.path, []).append(case)
        out: dict[tuple[str, str], tuple[str, str]] = {}
        for tests in by_file.values():
            tests.sort(key=lambda c: c.line)
            names = ["<start>", *(name(c) for c in tests), "<end>"]
            for index, case in enumerate(tests, start=1):
                out[(case.path, case.qualname)] = (names[index - 1], names[index + 1])
        return out

    def same(self, before: Case, after: Case) -> bool:
        was = self.before.get((before.path, before.qualname), ("", ""))
        now = self.after.get((after.path, after.qualname), ("", ""))
        return any(w == n and w != "" for w, n in zip(was, now, strict=True))


def tokens(text: str) -> tuple[str, ...]:
    """The words and symbols of a body, for how alike two bodies are."""
    return tuple(re.findall(r"\w+|[^\w\s]", text))


def _new_marks(
    base: Side, now: Side, change: Change, scopes: dict[tuple[str, str], tuple[str, str]]
) -> list[Mark]:
    """The marks that apply here now and did not at the base, in the same place."""
    had: Counter[tuple[str, str, str]] = Counter()
    written: dict[tuple[str, str, str], set[str]] = {}
    for mark in base.marks:
        if mark.here is True:
            had[(mark.path, mark.scope, mark.category)] += 1
        written.setdefault((mark.path, mark.scope, mark.category), set()).add(mark.what)
    base_tests = set(base.tests)
    # Where the base had tests: the tests, their classes and suites, their files.
    places = (
        {(path, "") for path, _ in base_tests}
        | {
            (path, qualname.rsplit(sep, 1)[0])
            for path, qualname in base_tests
            for sep in ("::", " > ")
            if sep in qualname
        }
        | base_tests
    )
    groups: dict[tuple[str, str, str], list[Mark]] = {}
    for mark in now.marks:
        if mark.here is not True:
            continue
        origin = scopes.get(
            (mark.path, mark.scope), (change.origin.get(mark.path, mark.path), mark.scope)
        )
        if mark.replaces_only and origin not in base_tests:
            continue  # a todo of its own: a note for later, not a test taken away
        if mark.environmental and origin not in places:
            continue  # a new test for another platform or version
        groups.setdefault((*origin, mark.category), []).append(mark)
    new: list[Mark] = []
    for key, marks in groups.items():
        extra = len(marks) - had[key]
        if extra > 0:
            known = written.get(key, set())
            marks.sort(key=lambda m: m.what in known)  # the unfamiliar ones first
            new.extend(marks[:extra])
    new.sort(key=lambda m: (m.path, m.line))
    return new


# -- findings ----------------------------------------------------------------------------------

_MARK_EFFECT: dict[str, str] = {
    "skip": "the test no longer counts",
    "only": "every other test of the run is dropped",
    "rerun": "a failure is rerun until it passes",
    "exit": "the run ends before its failures are reported",
}


def _mark_finding(mark: Mark, *, new_test: bool = False) -> IntegrityFinding:
    where = f"on {mark.scope}" if mark.scope else "for every test in the file"
    effect = mark.effect or _MARK_EFFECT[mark.category]
    if mark.category == "skip" and not mark.scope and mark.effect is None:
        effect = "the file's tests no longer count"
    elif mark.category == "skip" and new_test and mark.effect is None:
        # Review 23: a new test marked xfail never counted; it does not count now either.
        effect = "a test the change adds that does not count; make it pass, or leave it out"
    return IntegrityFinding(
        CATEGORY_RULES[mark.category],
        f"new {mark.what} {where}: {effect}",
        mark.path,
        mark.line,
    )


def _removed_finding(
    case: Case, now: Side, change: Change, words: Words, code: CodeRemoved
) -> IntegrityFinding:
    at = f"{case.path}::{case.qualname} (at the base, line {case.line})"
    feature = code.used_by(case)
    if feature:
        names = ", ".join(feature[:3])
        return IntegrityFinding(
            FEATURE_RULE,
            f"{at} is gone together with {names}, which the change deletes from the code",
            case.path,
            case.line,
        )
    return IntegrityFinding(
        "test-removed", f"{at} is gone: {_why_gone(case, now, change, words)}", case.path, case.line
    )


def _why_gone(case: Case, now: Side, change: Change, words: Words) -> str:
    if case.path in change.gone:
        return change.gone[case.path]
    for path, base_path in change.origin.items():
        if base_path == case.path:
            other = now.uncollected.get(path, {}).get(case.key) if case.key else None
            if other is not None:
                return f"renamed to {other}, which {words.runner} does not collect"
    return (
        "deleted (a renamed or moved test keeps what it checked, its calls and expected "
        "values; no test of the change does)"
    )
