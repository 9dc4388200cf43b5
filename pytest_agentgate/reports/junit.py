"""JUnit XML test reports: every ``<testcase>`` of one or more files, reruns folded.

Streaming, with the standard library's expat fed in chunks, so a report of any size is read in
bounded memory: no tree is built, ``<system-out>``/``<system-err>`` text is never kept (no
character-data handler is installed while it streams past), and failure text is kept only up to
its first line.

What counts (the "test" row of the gate semantics in docs/ARCHITECTURE.md):

- only ``<testcase>`` elements; the ``tests``/``failures``/``errors`` attributes of a testsuite are
  never read (pytest counts a teardown error twice, Surefire counts reruns, some tools omit them);
- the outcome of one ``<testcase>`` element is error > failure > skipped > passed, from its
  ``<error>``, ``<failure>`` and ``<skipped>`` children;
- Surefire / cargo-nextest ``<flakyFailure>``/``<flakyError>`` (and ``<rerunFailure>``/
  ``<rerunError>``) children mark an occurrence that failed at least once; with no ``<failure>``
  or ``<error>`` beside them the test passed, flakily;
- a test is identified by ``(classname, name)``. One that appears more than once, in one file or
  across files (pytest writes a second element for a teardown error, pytest-rerunfailures,
  gotestsum ``--rerun-fails``), counts once with its last outcome; when that last outcome is a pass
  and any occurrence failed, the test is flaky.

Those fold rules live in :mod:`pytest_agentgate.reports.outcomes`: each ``<testcase>`` element is
one attempt, its children the reports within it.

DTDs are refused outright, before anything is expanded: a JUnit report never needs one, and
refusing them closes entity expansion bombs and external entities (XXE) at once.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Sequence
from typing import Any
from xml.parsers import expat

from pytest_agentgate.reports._io import XmlRejected, hardened_expat, whole_number
from pytest_agentgate.reports.model import (
    MAX_SKIPPED_KEPT,
    SKIPPED_AT,
    ReportError,
    TestCaseResult,
    TestRun,
)
from pytest_agentgate.reports.outcomes import (
    ERROR,
    EVER_FAILED,
    FAILED,
    OUTCOMES,
    PASSED,
    RANK_MASK,
    SKIPPED,
    STATES,
    fold,
    is_flaky,
    rank_of,
)

__all__ = ["read_junit"]

CHUNK_SIZE = 1 << 20  # bytes handed to expat per call
MAX_MESSAGE = 500  # characters kept of a failure message's first line

_FAILURE_RANKS = {"failure": FAILED, "error": ERROR}
_FLAKY_TAGS = frozenset({"flakyFailure", "flakyError", "rerunFailure", "rerunError"})
_ROOT_TAGS = ("testsuites", "testsuite")
_OUTPUT_TAGS = frozenset({"system-out", "system-err"})
# Placeholder messages that say nothing (go-junit-report and gotestsum write message="Failed" and
# put the real assertion in the element text): the text's first line is used instead.
_PLACEHOLDER_MESSAGES = frozenset({"failed", "failure", "error"})
_GO_FRAMING = ("=== RUN", "=== CONT", "=== PAUSE", "=== NAME", "--- FAIL", "--- PASS", "--- SKIP")
# Characters of element text kept to find a message in: enough for a few framing lines.
_MAX_TEXT = 8 * MAX_MESSAGE
_NAMES = (
    *_ROOT_TAGS,
    *_FAILURE_RANKS,
    *_FLAKY_TAGS,
    *_OUTPUT_TAGS,
    "testcase",
    "skipped",
    "name",
    "classname",
    "file",
    "line",
    "message",
)

# The expat errors raised when the input ends while elements are still open.
_TRUNCATION_CODES = frozenset(
    expat.errors.codes[message]
    for message in (
        expat.errors.XML_ERROR_NO_ELEMENTS,
        expat.errors.XML_ERROR_UNCLOSED_TOKEN,
        expat.errors.XML_ERROR_PARTIAL_CHAR,
        expat.errors.XML_ERROR_UNCLOSED_CDATA_SECTION,
    )
)

_Key = tuple[str, str]
# A failing occurrence: (classname, name, file, line attribute, first message line).
# (classname, name, file, line, message, kept as a skip, where the project raised the skip)
_Detail = tuple[str, str, str | None, str | None, str | None, bool, str | None]
# Past this many distinct tests the fold table moves from a dict to compact arrays.
_COMPACT_AFTER = 1 << 17
_OCCUPIED = STATES  # set in every state byte of the compact table's used slots, above any state
# Set in an occurrence's state when it was skipped as an expected failure (pytest's
# ``<skipped type="pytest.xfail">``): a later occurrence replaces it, as its outcome.
_XFAIL = STATES << 1
# Every state a test can end in, flags included (``_OCCUPIED`` is never one).
_FLAGGED_STATES = tuple(s | flag for flag in (0, _XFAIL) for s in range(STATES))


class _FoldTable:
    """The folded state of every test identity seen so far, in bounded memory.

    A test identity ``(classname, name)`` is stored as its 64-bit hash only: the names of a
    million passing tests are never kept (the failing and flaky ones keep theirs in ``details``).
    Up to ``_COMPACT_AFTER`` identities live in a dict (fastest); past that, in an open-addressing
    table of ``array('q')`` hashes and a ``bytearray`` of states: 9 bytes a slot, at most half
    full, about 20 MB for 1,000,000 tests instead of some 250 MB of tuples and strings.

    The hash is Python's own (SipHash of each string, randomised per process, combined by the
    tuple hash): 64 bits, so two different tests share one only with a probability of about
    n^2 / 2^65, about 3e-8 for a million tests; such a pair would count as one test, its reruns.
    """

    __slots__ = ("_keys", "_mask", "_small", "_states", "_used")

    def __init__(self) -> None:
        self._small: dict[int, int] | None = {}
        self._keys = array("q")
        self._states = bytearray()
        self._mask = 0
        self._used = 0

    def __len__(self) -> int:
        return len(self._small) if self._small is not None else self._used

    def add(self, key: int, state: int) -> None:
        """Record an occurrence, a new attempt of its test: ``fold(previous, state, True)``.

        Inlined (the call cost 2% of reading a report in which every test ran twice):
        ``state`` is the occurrence's own fold, ``EVER_FAILED`` set with any failure, so the
        fold is ``state`` for a first occurrence and ``state | (previous & EVER_FAILED)`` for a
        rerun, as tests/test_outcomes.py checks.
        """
        small = self._small
        if small is not None:
            previous = small.get(key)
            small[key] = state if previous is None else state | (previous & EVER_FAILED)
            if len(small) > _COMPACT_AFTER:
                self._compact(small)
            return
        key = key or 1  # 0 marks an empty slot
        keys, mask = self._keys, self._mask
        slot = key & mask
        while True:
            found = keys[slot]
            if found == key:
                self._states[slot] = _OCCUPIED | state | (self._states[slot] & EVER_FAILED)
                return
            if not found:
                break
            slot = (slot + 1) & mask
        keys[slot] = key
        self._states[slot] = _OCCUPIED | state
        self._used += 1
        if self._used * 2 > mask:
            self._grow()

    def get(self, key: int) -> int:
        small = self._small
        if small is not None:
            return small[key]
        key = key or 1
        keys, mask = self._keys, self._mask
        slot = key & mask
        while keys[slot] != key:
            slot = (slot + 1) & mask
        return self._states[slot] & ~_OCCUPIED

    def counts(self) -> dict[int, int]:
        """How many identities end in each state (``_FLAGGED_STATES``)."""
        if self._small is not None:
            result = dict.fromkeys(_FLAGGED_STATES, 0)
            for state in self._small.values():
                result[state] += 1
            return result
        return {state: self._states.count(_OCCUPIED | state) for state in _FLAGGED_STATES}

    def _compact(self, small: dict[int, int]) -> None:
        self._small = None
        self._allocate(len(small) * 4)
        for key, state in small.items():
            self._insert(key or 1, state | _OCCUPIED)

    def _grow(self) -> None:
        keys, states = self._keys, self._states
        self._allocate(len(keys) * 2)
        for slot, key in enumerate(keys):
            if key:
                self._insert(key, states[slot])

    def _allocate(self, size: int) -> None:
        capacity = 1 << max(size - 1, 1).bit_length()
        self._keys = array("q", bytes(8 * capacity))
        self._states = bytearray(capacity)
        self._mask = capacity - 1
        self._used = 0

    def _insert(self, key: int, state: int) -> None:
        keys, mask = self._keys, self._mask
        slot = key & mask
        while keys[slot]:
            slot = (slot + 1) & mask
        keys[slot] = key
        self._states[slot] = state
        self._used += 1


_Rejected = XmlRejected


def read_junit(paths: Sequence[str | os.PathLike[str]]) -> TestRun:
    """Read JUnit XML reports and count their test cases, duplicates folded across files.

    ``paths`` are concrete files (expand globs before calling); a file listed twice is read once.
    Raises :class:`ReportError` naming the file when any of them is missing, unreadable, not XML,
    truncated, not a JUnit report, or carries a DTD. An empty ``paths`` gives an empty run; the
    gate, not the reader, decides that zero tests is a failure.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]  # a lone path is a Sequence of characters: never iterate it
    seen = _FoldTable()
    details: dict[int, _Detail] = {}
    properties: dict[str, list[str]] = {}
    files: list[str] = []
    read: set[str] = set()
    for path in paths:
        name = os.fspath(path)
        real = os.path.realpath(name)
        if real in read:
            continue
        read.add(real)
        _read_file(name, seen, details, properties)
        files.append(name)
    run = _summarise(files, seen, details)
    run.properties = properties
    # Tests that passed though marked xfail look like any pass in JUnit; agentgate's pytest
    # plugin counts them in the report it witnessed (informational: no verdict depends on it).
    witnessed = sum(max(0, _to_int(v) or 0) for v in properties.get("agentgate_xpassed", []))
    run.xpassed = min(run.passed, witnessed)
    return run


def _summarise(files: list[str], seen: _FoldTable, details: dict[int, _Detail]) -> TestRun:
    run = TestRun(files=files, total=len(seen))
    by_state = seen.counts()
    counts = [0, 0, 0, 0]
    for state, number in by_state.items():
        if number:
            counts[rank_of(state)] += number
            if state & _XFAIL and rank_of(state) == SKIPPED:
                run.xfailed += number
    for key, (classname, name, file, line, message, skip, raised_at) in details.items():
        state = seen.get(key)
        rank = rank_of(state)
        flaky = is_flaky(state)
        if rank < FAILED and not flaky:
            if rank == SKIPPED and skip:  # kept by name: the integrity gate asks after it
                run.skipped_tests.append(
                    TestCaseResult(
                        name, classname, "skipped", file, _to_int(line), message, False, raised_at
                    )
                )
            continue  # failed once, then skipped: a skip, as its last outcome says
        result = TestCaseResult(
            name=name,
            classname=classname,
            outcome=OUTCOMES[rank],
            file=file,
            line=_to_int(line),
            message=message,
            flaky=flaky,
        )
        (run.flaky_tests if flaky else run.failures).append(result)
    run.passed, run.skipped, run.failed, run.errors = counts
    run.flaky = len(run.flaky_tests)
    return run


def _read_file(
    path: str,
    seen: _FoldTable,
    details: dict[int, _Detail],
    properties: dict[str, list[str]] | None = None,
) -> None:
    """Stream one file into ``seen``/``details``; raise ReportError naming it if it can't."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed by the `with` below
    except FileNotFoundError:
        raise ReportError(
            path,
            "JUnit report not found",
            "the test command may have crashed before writing it; check that it writes "
            "JUnit XML to this path, e.g. pytest --junitxml=PATH",
        ) from None
    except IsADirectoryError:
        raise ReportError(
            path, "is a directory, not a JUnit XML file", "point the report at the XML file"
        ) from None
    except OSError as exc:
        raise ReportError(path, f"cannot open the JUnit report: {exc.strerror or exc}") from None

    parser, root_seen = _new_parser(seen, details, properties)
    got_bytes = False
    final = False
    try:
        with handle:
            while True:
                chunk = handle.read(CHUNK_SIZE)
                if not chunk:
                    break
                got_bytes = True
                parser.Parse(chunk, False)
            if not got_bytes:
                raise ReportError(
                    path,
                    "JUnit report is empty",
                    "the test command may have crashed before writing it; run it and check "
                    "its output",
                )
            final = True
            parser.Parse(b"", True)
    except _Rejected as exc:
        raise ReportError(path, exc.problem, exc.hint) from None
    except expat.ExpatError as exc:
        raise _syntax_error(path, exc, truncated=final, root_seen=root_seen()) from None
    except (LookupError, ValueError) as exc:  # an XML declaration naming an odd encoding
        raise ReportError(
            path,
            f"JUnit report cannot be decoded: {exc}",
            "write the report as UTF-8; the test tool's JUnit option does by default",
        ) from None
    except IsADirectoryError:  # some platforms only fail at read()
        raise ReportError(
            path, "is a directory, not a JUnit XML file", "point the report at the XML file"
        ) from None
    except OSError as exc:
        raise ReportError(path, f"cannot read the JUnit report: {exc.strerror or exc}") from None
    finally:
        # The handlers close over the parser: break the cycle so expat's buffers are freed now,
        # not whenever the cyclic garbage collector next runs.
        parser.StartElementHandler = parser.EndElementHandler = None
        parser.CharacterDataHandler = None


def _syntax_error(
    path: str, exc: expat.ExpatError, *, truncated: bool, root_seen: bool
) -> ReportError:
    where = f"line {exc.lineno}, column {exc.offset + 1}"
    what = expat.errors.messages.get(exc.code, str(exc))
    if truncated and exc.code in _TRUNCATION_CODES:
        if not root_seen:
            problem = f"JUnit report contains no XML element ({what})"
        else:
            problem = f"JUnit report is truncated ({what} at {where})"
        return ReportError(
            path,
            problem,
            "the test command may have crashed or been killed before finishing it; "
            "run it again and check its output",
        )
    return ReportError(
        path,
        f"JUnit report is not well-formed XML ({what} at {where})",
        "it may be binary, another format, or written by two processes at once; "
        "regenerate it with the test command's JUnit XML option",
    )


# Messages that say only what failed; pytest puts the cause in the text's last "E   " line
# (an import error, an unknown mark turned error).
_CAUSE_AT_THE_END = frozenset({"collection failure"})


def _with_cause(message: str, text: str) -> str:
    """``message: cause``, the cause being the last ``E   `` line of the failure's text."""
    causes = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    cause = causes[-1] if causes else _first_line(text)
    if not cause:
        return message
    line = f"{message}: {cause}"
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 3] + "..."


def _first_line(text: str | None) -> str | None:
    """The first meaningful line of ``text``, stripped and cut to MAX_MESSAGE characters.

    Blank lines and Go's ``=== RUN``/``--- FAIL`` framing (gotestsum puts the whole test output
    in the failure text) are skipped.
    """
    if not text:
        return None
    text = text.lstrip()
    pos, size = 0, len(text)
    while pos < size:
        end = text.find("\n", pos)
        if end < 0:
            end = size
        line = text[pos : min(end, pos + 4 * MAX_MESSAGE)].strip()
        pos = end + 1
        if line and not line.startswith(_GO_FRAMING):
            if len(line) > MAX_MESSAGE:
                line = line[: MAX_MESSAGE - 3] + "..."
            return line
    return None


def _to_int(text: str | None) -> int | None:
    """A ``line`` attribute as a line number: None unless a whole number from 0 to
    ``MAX_COUNT`` (a line of -1 or of 5,000 digits points nowhere)."""
    return None if text is None else whole_number(text)


def _new_parser(
    seen: _FoldTable, details: dict[int, _Detail], properties: dict[str, list[str]] | None = None
) -> tuple[Any, Callable[[], bool]]:
    """An expat parser whose handlers fold every <testcase> into ``seen`` and ``details``.

    The handlers are closures over plain locals: this is the hot loop (one call per element),
    and a closure variable is cheaper than an attribute of ``self``.
    """
    # Pre-seeding expat's name cache with our constants makes `tag == "testcase"` an identity test.
    parser = hardened_expat(names=_NAMES)
    parser.buffer_text = True
    parser.buffer_size = 16 * 1024

    # State of the <testcase> being read. Only what every test case needs is touched per case:
    # its attributes are looked at when it ends, the rest only when a failure shows up.
    case_depth = 0  # >1 only inside a (malformed) testcase nested in a testcase: ignored
    case_attrs: dict[str, str] = {}
    case_state = PASSED  # this attempt's fold of its children (outcomes.fold)
    skipped_at: str | None = None
    # Kept at None / -1 between test cases; reset when a failing test case ends.
    message: str | None = None
    message_rank = -1  # rank of the element the message came from (flaky markers: 0)
    # Text collection for a failure element without a message attribute.
    collecting: str | None = None
    # The message whose cause is the text's last "E   " line (pytest's collection failure).
    tail_cause: str | None = None
    parts: list[str] = []
    collected = 0
    # Files of the enclosing testsuites (jest-junit and vitest can put `file` on the suite).
    suite_files: list[str | None] = [None]
    unnamed = 0
    has_root = False
    record = seen.add
    # Skipped test cases kept by name (their reason), up to MAX_SKIPPED_KEPT in all.
    skip_message: str | None = None
    skips_kept = sum(1 for d in details.values() if d[5])

    def on_text(data: str) -> None:
        # Called once per buffer_size of text. The handler cannot be unset from inside itself
        # (pyexpat flushes its text buffer into the handler being replaced), so past the
        # bound it just returns until the element ends; for a cause read from the end (pytest's
        # collection failure) only the last _MAX_TEXT characters are kept.
        nonlocal collected
        if tail_cause is not None:
            parts.append(data)
            collected += len(data)
            if collected > 2 * _MAX_TEXT:
                kept = "".join(parts)[-_MAX_TEXT:]
                parts[:] = [kept]
                collected = len(kept)
            return
        if collected > _MAX_TEXT:
            return
        if not parts:
            data = data.lstrip()
            if not data:
                return
        parts.append(data)
        collected += len(data)

    def take_message(tag: str, attrs: dict[str, str], rank: int) -> None:
        nonlocal message, message_rank, tail_cause
        message_rank = rank
        message = _first_line(attrs.get("message"))
        if message is None or message.lower() in _PLACEHOLDER_MESSAGES:
            collect_text(tag)
        elif message in _CAUSE_AT_THE_END:
            tail_cause = message
            collect_text(tag)

    def collect_text(tag: str) -> None:
        nonlocal collecting, collected
        collecting = tag
        parts.clear()
        collected = 0
        parser.CharacterDataHandler = on_text

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal case_depth, case_attrs, case_state, skip_message, skipped_at
        if tag == "testcase":
            case_depth += 1
            if case_depth == 1:
                case_attrs = attrs
                case_state = PASSED
                skipped_at = None
        elif case_depth:
            if collecting is not None:
                return  # an element inside a failure (Surefire <stackTrace>): its text counts
            # Children are the reports of one attempt: the higher rank wins, a failure sticks.
            rank = _FAILURE_RANKS.get(tag)
            if rank is not None:
                case_state = fold(case_state, rank, False)
                if rank > message_rank:
                    take_message(tag, attrs, rank)
            elif tag == "skipped":
                case_state = fold(case_state, SKIPPED, False)
                skip_message = attrs.get("message") or attrs.get("type") or "skipped"
                if attrs.get("type") == "pytest.xfail":
                    case_state |= _XFAIL
            elif tag == "property" and attrs.get("name") == SKIPPED_AT:
                skipped_at = attrs.get("value")  # agentgate's plugin: where the project skipped it
            elif tag in _FLAKY_TAGS:
                # A failed retry inside this occurrence: it failed, and ranks as a pass.
                case_state = fold(case_state, PASSED | EVER_FAILED, False)
                if message_rank < 0:
                    take_message(tag, attrs, 0)
            elif tag in _OUTPUT_TAGS and message is None and case_state & EVER_FAILED:
                # A failure with neither message nor text (cargo test's libtest JUnit output):
                # the first line of the captured output, typically the panic, stands in.
                collect_text(tag)
        elif tag == "testsuite":
            suite_files.append(attrs.get("file") or suite_files[-1])
        elif tag == "property" and properties is not None:
            # What agentgate's pytest plugin witnessed of this run (WITNESS_PREFIX).
            name = attrs.get("name", "")
            if name.startswith("agentgate_"):
                properties.setdefault(name, []).append(attrs.get("value", ""))

    def end_case() -> None:
        nonlocal message, message_rank, unnamed, skip_message, skips_kept
        attrs = case_attrs
        classname = attrs.get("classname", "")
        name = attrs.get("name")
        if name is None:
            unnamed += 1
            name = f"<unnamed testcase #{unnamed}>"
        key = hash((classname, name))
        record(key, case_state)
        if case_state & EVER_FAILED:
            file = attrs.get("file") or suite_files[-1]
            earlier = details.get(key)
            if (
                earlier is not None
                and earlier[4]
                and message != earlier[4]
                and case_state & RANK_MASK == ERROR
                and " (then: " not in earlier[4]
            ):
                # pytest writes a test that failed and then errored in teardown twice; the
                # error is its outcome, but the assertion is what the agent has to fix.
                message = f"{earlier[4]} (then: {message or 'error'})"[:MAX_MESSAGE]
            details[key] = (classname, name, file, attrs.get("line"), message, False, None)
            message = None
            message_rank = -1
        elif (
            skip_message is not None
            and case_state & RANK_MASK == SKIPPED
            and skips_kept < MAX_SKIPPED_KEPT
            and key not in details
        ):
            file = attrs.get("file") or suite_files[-1]
            reason = _first_line(skip_message)
            details[key] = (classname, name, file, attrs.get("line"), reason, True, skipped_at)
            skips_kept += 1
        skip_message = None

    def end(tag: str) -> None:
        nonlocal case_depth, collecting, message, tail_cause
        if tag == "testcase":
            case_depth -= 1
            if not case_depth:
                end_case()
        elif tag == collecting:
            collecting = None
            parser.CharacterDataHandler = None
            if tail_cause is not None:
                message = _with_cause(tail_cause, "".join(parts))
                tail_cause = None
            else:
                message = _first_line("".join(parts)) or message
            parts.clear()
        elif tag == "testsuite" and not case_depth and len(suite_files) > 1:
            suite_files.pop()

    def start_root(tag: str, attrs: dict[str, str]) -> None:
        nonlocal has_root
        if tag not in _ROOT_TAGS:
            raise _Rejected(
                f"not a JUnit report: the root element is <{tag}>, "
                "expected <testsuites> or <testsuite>",
                "point the test gate at the file your test command writes with its JUnit XML "
                "option (pytest: --junitxml=PATH, jest: jest-junit, go: go-junit-report)",
            )
        has_root = True
        parser.StartElementHandler = start  # the root is checked once, not on every element
        start(tag, attrs)

    def root_seen() -> bool:
        return has_root

    parser.StartElementHandler = start_root
    parser.EndElementHandler = end
    return parser, root_seen
