"""Shared by the error tests: where a kernel's line is, and what a located error must say."""
import inspect
import os


def line_of(fn, marker="# ERR"):
    """The file line holding `marker` in the source of `fn` (a JITFunction or a function)."""
    lines, start = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    for i, text in enumerate(lines):
        if marker in text:
            return start + i
    raise AssertionError(marker)


def assert_located(e, message, filename, line=None):
    """`e` (a CompilationError) carries `message`, names `filename` (and `line`, if given),
    and shows no MLIR traceback."""
    assert message in e.message, e.message
    assert os.path.abspath(e.filename) == os.path.abspath(filename)
    if line is not None:
        assert e.lineno == line, (e.lineno, line, str(e))
    assert "MLIR" not in str(e) and "Traceback" not in str(e)
