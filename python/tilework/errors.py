"""Errors that point at the kernel's source."""
from __future__ import annotations

import linecache


class TritonError(Exception):
    """The base of the errors the compiler and the interpreter raise about a kernel (Triton's
    `triton.TritonError`)."""


class CompilationError(TritonError):
    """A kernel could not be compiled.  Carries the kernel's file, line and column, shows the
    source line with a caret, and the chain of nested @jit calls that led there."""

    def __init__(self, message: str, filename: str | None = None, lineno: int | None = None,
                 col: int | None = None, call_chain: tuple = ()):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.call_chain = tuple(call_chain)  # ((filename, lineno, col, fn_name), ...) outermost first
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        for fname, line, col, fn in self.call_chain:
            parts.append(f"{fname}:{line}:{col + 1}: in call to {fn}()")
            parts.extend(_source_excerpt(fname, line, col))
        if self.filename is None:
            return self.message
        parts.append(f"{self.filename}:{self.lineno}:{(self.col or 0) + 1}: error: {self.message}")
        parts.extend(_source_excerpt(self.filename, self.lineno, self.col))
        return "\n".join(parts)


class StageError(CompilationError):
    """A stage could not be compiled from its input: a restart from text that is not that
    stage's (missing, truncated, another stage's or another target's), or a failing external
    tool (ptxas).  The message names the stage and the target; `str()` is that one line."""

    def __init__(self, message: str, stage: str | None = None, target: str | None = None):
        self.stage = stage
        self.target = target
        super().__init__(message)


class InterpreterError(TritonError):
    """An error while interpreting a kernel (Triton's `triton.runtime.errors.InterpreterError`):
    its `__cause__` is the original error.  `InterpreterError(message)` is this class; the
    interpreter raises `interpreter_error(e, ...)`, which is also of `e`'s class."""

    def __init__(self, error_message: str | None = None):
        self.error_message = error_message
        super().__init__(error_message)

    def __str__(self) -> str:
        return self.error_message or ""


_MIXED: dict = {}


def interpreter_error(e: Exception, where: str | None = None) -> InterpreterError:
    """An InterpreterError for `e` (raise it `from e`), of a class deriving from both
    InterpreterError and `type(e)` (an `except SemanticError:` still catches it); its message is
    `e`'s, after `where` ("file:line:col") unless the message is already located."""
    if isinstance(e, InterpreterError):
        return e
    msg = str(e) if not isinstance(e, KeyError) else repr(e)
    if where and not msg.startswith(where.split(":", 1)[0] + ":"):
        msg = f"{where}: {msg}"
    t = type(e)
    cls = _MIXED.get(t)
    if cls is None:
        try:
            cls = type(t.__name__, (InterpreterError, t), {"__module__": t.__module__})
        except TypeError:  # a class that cannot be combined (a layout conflict): only ours
            cls = InterpreterError
        _MIXED[t] = cls
    try:
        err = cls.__new__(cls)
        InterpreterError.__init__(err, msg)
    except TypeError:  # (an __init__ that needs more arguments: UnicodeDecodeError's)
        err = InterpreterError(msg)
    for k, v in getattr(e, "__dict__", {}).items():  # (CompilationError's fields, ...)
        if k != "error_message":
            setattr(err, k, v)
    return err


def _source_excerpt(filename, lineno, col):
    if not filename or not lineno:
        return []
    text = linecache.getline(filename, lineno).rstrip("\n")
    if not text:
        return []
    caret = " " * (col or 0) + "^"
    return ["    " + text, "    " + caret]


class IntegerOverflowError(OverflowError, ValueError):
    """An int kernel argument that fits in no 64-bit type: an OverflowError, as Triton's
    launch raises (and a ValueError, as tilework's did)."""


class OptionError(ValueError, AssertionError):
    """A compile option out of its range where Triton's options assert (`num_warps` not a
    power of 2): a ValueError, as tilework's option errors are, and an AssertionError, as
    Triton's."""


def located(message: str, fn, node=None, exc=TypeError):
    """An exception of type `exc` whose message names the kernel `fn`'s file and line
    (the line of `node` if given, else the kernel's `def`)."""
    import inspect
    try:
        filename = inspect.getsourcefile(fn)
        _, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return exc(message)
    line = first + (node.lineno - 1 if node is not None else 0)
    col = node.col_offset if node is not None else 0
    return exc(f"{filename}:{line}:{col + 1}: {message}")
