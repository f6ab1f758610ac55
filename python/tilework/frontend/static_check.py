"""The rejections of the code generator that depend on a kernel's source alone, checked on its
AST, for the interpreter: it runs the Python function itself, so without this it would accept
a list comprehension, a `with`, a lambda, an undefined name or a recursive call that the
compiler rejects, and `break`, `continue`, a loop's `else`, a chained comparison or a kernel
returning a value, a `for` over anything but range/tl.range/tl.static_range, which Python
would run (`f(*args)` is taken, as compiled).  Same messages, same file:line:col (a `CompilationError`), in the order a
reader meets them; @jit functions the kernel calls are checked too, with the call chain.

What needs values (shapes, dtypes, constexpr-ness) is rejected by the shared semantics
(`frontend/semantic.py`, `ops_*.py`) the interpreter calls anyway.  Closure variables are left
to Python (the compiler does not see them; interpreted kernels may use them).
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import io
import warnings

from ..errors import CompilationError
from ..language.function import JITFunction, is_constexpr_global
from ..language.core import tensor
from .codegen import (
    CHAINED_COMPARE_MESSAGE, LANGUAGE, PY_BUILTINS, CodeGenerator, build_kernel, readable_global,
    tile_call_message, unsupported_message,
)
from .kernel_forms import def_source, undefined_message
from ..language import control
from .ops_control import (BREAK_MESSAGE, CONTINUE_MESSAGE, FOR_ITER_MESSAGE, KERNEL_RETURN_MESSAGE,
                          LOOP_ELSE_MESSAGE, MISMATCH_MESSAGE, RETURN_TYPES_MESSAGE,
                          TERNARY_MESSAGE, WHILE_TRUE_MESSAGE)
from .semantic import SemanticError

_CHECKED: set = set()  # code objects already found clean


def guarded_builtin(name: str):
    """Python's builtin `name` refusing tile arguments as the compiler does (the interpreter
    puts these in an interpreted kernel's globals)."""
    return guarded_call(getattr(builtins, name))


def guarded_call(f, shaped_only: bool = False):
    """`f` (a builtin, or a plain Python function a kernel calls) refusing tile arguments
    with the compiler's message; the compiler calls it at compile time on other values.
    `shaped_only`: runtime scalars are taken (int()/float()/bool() of a scalar, which the
    interpreter keeps as debugging helpers)."""
    def call(*args, **kwargs):
        if any(isinstance(a, tensor) and (a.shape or not shaped_only)
               for a in (*args, *kwargs.values())):
            raise SemanticError(tile_call_message(f))
        return f(*args, **kwargs)
    call.__name__ = f.__name__
    call.__wrapped__ = f
    return call


def _walk(node):
    """The nodes under `node`, parents first, in source order."""
    for child in ast.iter_child_nodes(node):
        yield child
        yield from _walk(child)


def _local_names(fdef: ast.FunctionDef) -> set:
    a = fdef.args
    names = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    names |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    for n in _walk(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
    return names


def _for_iter_message(node, g) -> str | None:
    """The compiler's error for a `for` over anything but range/tl.range/tl.static_range,
    where the callee is a name or attribute of the module's globals (Python would iterate
    a tuple or a tile)."""
    it = node.iter
    if not isinstance(it, ast.Call):
        return FOR_ITER_MESSAGE
    path, f = [], it.func
    while isinstance(f, ast.Attribute):
        path.append(f.attr)
        f = f.value
    if not isinstance(f, ast.Name):
        return None
    v = g[f.id] if f.id in g else getattr(builtins, f.id, None)
    for attr in reversed(path):
        v = getattr(v, attr, None)
    if v is None:
        return None
    return None if v in (builtins.range, control.range, control.static_range) else \
        FOR_ITER_MESSAGE


def _control_message(node, top: bool) -> str | None:
    """The code generator's errors for Python control flow it does not take (`break`,
    `continue`, a loop's `else`, chained comparisons, a kernel returning a value), which
    Python would run when interpreted."""
    if isinstance(node, ast.Break):
        return BREAK_MESSAGE
    if isinstance(node, ast.Continue):
        return CONTINUE_MESSAGE
    if isinstance(node, (ast.For, ast.While)) and node.orelse:
        return LOOP_ELSE_MESSAGE[type(node).__name__]
    if isinstance(node, ast.Compare) and len(node.ops) != 1:
        return CHAINED_COMPARE_MESSAGE
    if top and isinstance(node, ast.Return) and node.value is not None and \
            not isinstance(node.value, ast.Name) and \
            not (isinstance(node.value, ast.Constant) and node.value.value is None):
        return KERNEL_RETURN_MESSAGE  # (a name may hold None: left to the interpreter)
    return None


def check(fn: JITFunction, chain: tuple = (), call_at: tuple = (), called: bool = False) -> None:
    """Raises the compiler's `CompilationError` for the first construct, name or call in
    `fn` (and the @jit functions it calls) that the code generator would reject; `called`: `fn`
    is a function kernels call (it may return a value), not a kernel."""
    code = fn.fn.__code__
    if (code in _CHECKED and not chain and not called) or getattr(fn, "_no_source", None):
        return  # (a function built by `exec`: no source to check; the interpreter runs it)
    fdef = fn.parse().body[0]
    offset, col0 = fn.first_line - 1, fn.col_offset

    def error(node, message):
        return CompilationError(message, fn.filename, offset + node.lineno,
                                node.col_offset + col0, chain,
                                at(node), call_at, def_source(fn))

    def at(node):  # Triton's position
        return node.lineno - fdef.lineno + 1, node.col_offset, fn.__name__

    local = _local_names(fdef) | set(code.co_freevars)
    g = fn.fn.__globals__
    call_stars = {id(a) for n in _walk(fdef) if isinstance(n, ast.Call) for a in n.args
                  if isinstance(a, ast.Starred)}  # (`f(*args)` is taken; other stars are not)
    # a `raise` in a branch of an `if` is the code generator's to refuse where it compiles
    # the branch (a runtime `if`), not where a constexpr condition leaves it out, as Triton
    # (`else: raise ValueError(...)` after constexpr tests): `types_check` asks it
    branch_raises = {id(m) for i in _walk(fdef) if isinstance(i, ast.If)
                     for stmt in i.body + i.orelse for n in [stmt, *_walk(stmt)]
                     if isinstance(n, ast.Raise) for m in [n, *_walk(n)]}
    for node in (n for stmt in fdef.body for n in [stmt, *_walk(stmt)]):
        if isinstance(node, (ast.stmt, ast.expr)) and id(node) not in call_stars and \
                id(node) not in branch_raises:
            message = unsupported_message(node) or \
                _control_message(node, top=not chain and not called)
            if message is None and isinstance(node, ast.For) and \
                    not (isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
                         and node.iter.func.id in local):
                message = _for_iter_message(node, g)
            if message is not None:
                raise error(node, message)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                node.id not in local and id(node) not in branch_raises:
            if node.id in g:
                if not readable_global(g[node.id]) and not is_constexpr_global(g, node.id) and \
                        not fn.__module__.startswith(LANGUAGE):
                    raise error(node, CodeGenerator.global_message(node.id))
            elif node.id not in PY_BUILTINS:
                raise error(node, f"unsupported builtin `{node.id}` in a kernel"
                            if hasattr(builtins, node.id) else
                            undefined_message(node.id))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id not in local and isinstance(g.get(node.func.id), JITFunction):
            callee = g[node.func.id]
            if callee is fn or any(c[3] == callee.__name__ for c in chain):
                continue  # (a recursion: checked once; the interpreter runs it as Python)
            check(callee, chain + ((fn.filename, offset + node.lineno, node.col_offset + col0,
                                    callee.__name__),), call_at + (at(node),))
    if not chain and not called:
        _CHECKED.add(code)


RAISE_MESSAGE = unsupported_message(ast.Raise())

# What the code generator checks on the types a kernel's control flow carries, which the
# interpreter (running Python's loops and `if`s) cannot see: raised by `types_check`.
_TYPED_MESSAGES = ("loop-carried value `", "` is assigned in a loop but not before it",
                   "` holds a compile-time value (the constexpr ",
                   "` is defined in only one branch of the `if`", WHILE_TRUE_MESSAGE,
                   MISMATCH_MESSAGE.split("{")[0], TERNARY_MESSAGE.split("{")[0],
                   RETURN_TYPES_MESSAGE.split("{")[0], RAISE_MESSAGE)
_TYPED_CHECKED: dict = {}


def types_check(fn: JITFunction, signature: dict, constants: dict, context) -> None:
    """Runs the code generator on `fn` specialized as launched (`signature`: runtime
    parameter -> dtype, `constants`: the others) and raises its `CompilationError` where that
    is about the types a loop or an `if` carries (a loop-carried value changing type, a name
    assigned only in a loop or one branch, branches giving a name different types, a
    constexpr rebound in a runtime loop).  Other errors are left to the interpreter, which
    raises its own or accepts what only it takes (closures, int() of a scalar); once per
    specialization."""
    try:
        key = (fn.fn.__code__, tuple(signature.items()),
               tuple((k, repr(v)) for k, v in constants.items()))
        hash(key)
    except TypeError:
        return
    if key in _TYPED_CHECKED:
        err = _TYPED_CHECKED[key]
    else:
        err = None
        try:
            # (tl.static_print and the compiler's warnings: once, when run)
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                build_kernel(fn, signature, constants, {}, context)
        except CompilationError as e:
            if any(m in e.message for m in _TYPED_MESSAGES):
                err = e
        except Exception:  # noqa: BLE001  (the interpreter reports it, or takes the kernel)
            pass
        _TYPED_CHECKED[key] = err
    if err is not None:
        raise err
