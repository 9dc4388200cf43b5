"""A pyc that another patch release of the same Python wrote (one magic number, so Python loads
it) is compiled from its source, though its bytes may differ: 3.11.2 jumps to a jump that
3.11.7 threads through (pytest's ``terminal.py``, in a virtual environment made by Debian's
Python on packages another 3.11 compiled). ``integrity/bytecode`` compares what the
instructions do when the bytes differ; a pyc compiled from other code is still not alike."""

from __future__ import annotations

import importlib.util
import marshal
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _helpers import timestamp_pyc

from pytest_agentgate.integrity import bytecode

# The shape of pytest 8.4's TerminalProgressPlugin._emit_progress: a match statement whose
# cases end in jumps.
SOURCE = """\
def emit(state, progress=None):
    match state:
        case "remove":
            sequence = "0"
        case "normal":
            sequence = f"1;{progress}"
        case "error":
            if progress is not None:
                sequence = f"2;{progress}"
            else:
                sequence = "2"
        case "indeterminate":
            sequence = "3"
        case "paused":
            if progress is not None:
                sequence = f"4;{progress}"
            else:
                sequence = "4"
    return sequence
"""


def other_release() -> str:
    """An interpreter of this Python's minor version and magic number, another patch release."""
    wanted = f"python{sys.version_info.major}.{sys.version_info.minor}"
    probe = "import importlib.util, sys; print(importlib.util.MAGIC_NUMBER.hex(), sys.version)"
    for folder in (
        "/usr/bin",
        "/usr/local/bin",
        *sorted(Path.home().glob(".pyenv/versions/*/bin")),
    ):
        found = shutil.which(wanted, path=str(folder))
        if found is None:
            continue
        said = subprocess.run([found, "-c", probe], capture_output=True, text=True, check=False)
        magic, _, version = said.stdout.strip().partition(" ")
        if magic == importlib.util.MAGIC_NUMBER.hex() and version != sys.version:
            return found
    pytest.skip(f"no other patch release of {wanted} here")


def test_a_pyc_another_patch_release_compiled_is_alike(tmp_path: Path) -> None:
    python = other_release()
    source = tmp_path / "emit.py"
    source.write_text(SOURCE)
    compiled = subprocess.run(
        [python, "-c", f"import py_compile; py_compile.compile({str(source)!r}, doraise=True)"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    pyc = Path(importlib.util.cache_from_source(str(source)))
    theirs = marshal.loads(pyc.read_bytes()[16:])
    ours = compile(SOURCE, str(source), "exec", dont_inherit=True)
    if bytecode._behaviour(theirs) == bytecode._behaviour(ours):
        pytest.skip(f"{python} compiles this code byte for byte as {sys.executable} does")
    remembered = bytecode.Remembered(tmp_path)
    assert bytecode.unlike_pycs(source, remembered) == []
    # The same pyc with one comparison of the source turned: not alike.
    edited = SOURCE.replace('case "error":', 'case "errors":')
    header = pyc.read_bytes()[:16]
    pyc.write_bytes(header + marshal.dumps(compile(edited, str(source), "exec")))
    assert bytecode.unlike_pycs(source, bytecode.Remembered(tmp_path)) == [pyc.name]


def test_what_instructions_do_sees_every_instruction() -> None:
    # Threading jumps and dropping fillers keeps every instruction that does something: a
    # comparison turned, a jump's end moved, a constant changed are each seen.
    def shown(text: str) -> tuple[object, ...]:
        return bytecode._behaviour(compile(text, "m.py", "exec"), bytecode._instructions)

    base = "def f(a):\n    if a == 1:\n        return 2\n    return 3\n"
    assert shown(base) == shown(base)
    assert shown(base) != shown(base.replace("==", "!="))
    assert shown(base) != shown(base.replace("return 2", "pass"))
    assert shown(base) != shown(base.replace("return 3", "return 4"))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception tables came with 3.11")
def test_where_an_exception_goes_is_part_of_what_code_does(tmp_path: Path) -> None:
    # Red team 26: one entry added to a pyc's exception table sent a failing assert's raise to
    # the function's `return None`; instructions, constants and header unchanged.
    import dis

    text = "def check(x):\n    assert x == 0\n"
    source = tmp_path / "check.py"
    source.write_text(text)
    module = compile(text, str(source), "exec", dont_inherit=True)
    function = next(c for c in module.co_consts if isinstance(c, type(module)))
    raising = next(i for i in dis.get_instructions(function) if i.opname == "RAISE_VARARGS")
    end = raising.offset + 2
    # An entry: start, end (in code units of 2 bytes) and target, varint-coded; depth 0.
    entry = bytes([0x80 | raising.offset // 2, 1, end // 2, 0])
    swallowing = function.replace(co_exceptiontable=function.co_exceptiontable + entry)
    assert swallowing.co_code == function.co_code
    forged = module.replace(
        co_consts=tuple(swallowing if c is function else c for c in module.co_consts)
    )
    assert bytecode._behaviour(forged) != bytecode._behaviour(module)
    ours = bytecode._behaviour(module, bytecode._instructions)
    assert bytecode._behaviour(forged, bytecode._instructions) != ours
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.parent.mkdir()
    pyc.write_bytes(timestamp_pyc(forged, source))
    assert bytecode.unlike_pycs(source, bytecode.Remembered(tmp_path)) == [pyc.name]
    pyc.write_bytes(timestamp_pyc(module, source))
    assert bytecode.unlike_pycs(source, bytecode.Remembered(tmp_path)) == []
