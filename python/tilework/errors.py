"""Errors that point at the kernel's source."""
from __future__ import annotations

import linecache


class TritonError(Exception):
    """The base of the errors the compiler and the interpreter raise about a kernel (Triton's
    `triton.TritonError`)."""


class CompilationError(TritonError):
    """A kernel could not be compiled.  Carries the kernel's file, line and column, shows the
    source line with a caret, and the chain of nested @jit calls that led there.

    Also what Triton's CompilationError carries: `error_message` (the message alone), `src`
    (the source of the function the error is in) and, under each caret, Triton's position
    `at L:C:` (L counted from the function's `def` line as 1, C the column in its dedented
    source); an error in a called @jit function is raised at the call with the callee's own
    error (its call chain starting there) as `__cause__`, as Triton's are."""

    def __init__(self, message: str, filename: str | None = None, lineno: int | None = None,
                 col: int | None = None, call_chain: tuple = (), at=None, call_at: tuple = (),
                 src: str | None = None):
        self.message = message
        self.error_message = message  # (Triton's name for it)
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.call_chain = tuple(call_chain)  # ((filename, lineno, col, fn_name), ...) outermost first
        # Triton's positions: (line, col, function) of the error and of each call in the chain
        self.at = at
        self.call_at = tuple(call_at)
        self.src = src
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        at = list(self.call_at) + [None] * (len(self.call_chain) - len(self.call_at))
        for (fname, line, col, fn), pos in zip(self.call_chain, at):
            parts.append(f"{fname}:{line}:{col + 1}: in call to {fn}()")
            parts.extend(_source_excerpt(fname, line, col, pos))
        if self.filename is None:
            return self.message
        parts.append(f"{self.filename}:{self.lineno}:{(self.col or 0) + 1}: error: {self.message}")
        parts.extend(_source_excerpt(self.filename, self.lineno, self.col, self.at))
        return "\n".join(parts)

    def _copy(self, cls=None, depth: int = 0):
        """This error (of class `cls`) with the first `depth` calls of its chain dropped."""
        return (cls or type(self))(self.message, self.filename, self.lineno, self.col,
                                   self.call_chain[depth:], self.at, self.call_at[depth:],
                                   self.src)

    def raised_at_call(self, depth: int) -> "CompilationError":
        """The error to raise at the `depth`-th call of the chain (1: the outermost), as Triton
        does: this error again, its `__cause__` the error as the callee raised it (its chain
        from the call on).  Raise it `from` its `__cause__`."""
        inner = self._copy(depth=depth)
        inner.__cause__ = self.__cause__
        inner.__suppress_context__ = True
        outer = self._copy()
        outer.__cause__ = inner
        return outer


class CompileTimeAssertionFailure(CompilationError):
    """A failed `tl.static_assert` (Triton's class of that name): a CompilationError with no
    `__cause__`."""


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
    msg = getattr(e, "detail", None) or (str(e) if not isinstance(e, KeyError) else repr(e))
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


def _source_excerpt(filename, lineno, col, at=None):
    where = f" at {at[0]}:{at[1]}: in {at[2]}" if at else ""  # (Triton's position)
    text = linecache.getline(filename, lineno).rstrip("\n") if filename and lineno else ""
    if not text:
        return ["   " + where] if where else []
    caret = " " * (col or 0) + "^"
    return ["    " + text, "    " + caret + where]


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
