"""What some Python forms mean in kernels, shared by the code generator and the interpreter
(which runs the kernel's own Python): builtin `min`/`max` (Triton's), the recursion limit of
inlined @jit calls, and the words of a few refusals."""
from __future__ import annotations

import builtins

from ..language.core import constexpr, tensor
from . import semantic as S

MAX_RECURSION = 16  # levels of a @jit function calling itself (inlined)

NOT_TUPLE_MESSAGE = "`not` of a tuple is not supported (as in Triton): test its length or members"


def _unwrap(x):
    return x.value if isinstance(x, constexpr) else x


def recursion_message(name: str) -> str:
    return (f"recursion does not end at compile time: {name}() calls itself more than "
            f"{MAX_RECURSION} levels deep (a recursive @jit function must stop on constexpr "
            f"values or shapes)")


def undefined_message(name: str, fn=None) -> str:
    """Triton's words for an undefined name; a variable of the enclosing function (a closure)
    says why it is not read."""
    if fn is not None and name in fn.__code__.co_freevars:
        return (f"{name} is not defined: a compiled kernel does not read the variables of the "
                f"function it is defined in; pass it as an argument or make it a tl.constexpr "
                f"global")
    return f"{name} is not defined"


def min_max(b, fn, args, kwargs):
    """Triton's builtin `min`/`max` in kernels: of runtime values the elementwise
    minimum/maximum; of compile-time values Python's, NaN and -0.0 refused (their order is not
    defined)."""
    if any(isinstance(a, tensor) for a in args):
        if kwargs or len(args) < 2:
            raise TypeError(f"{fn.__name__}() of runtime values takes two or more positional "
                            f"arguments")
        op = "minimum" if fn is builtins.min else "maximum"
        acc = args[0]
        for a in args[1:]:
            acc = S.binary(b, op, _unwrap(acc), _unwrap(a))
        return acc
    vals = [_unwrap(a) for a in args]
    for x in (vals[0] if len(vals) == 1 and isinstance(vals[0], tuple) else vals):
        x = _unwrap(x)
        if isinstance(x, float) and (x != x or (x == 0 and str(x).startswith("-"))):
            raise TypeError(f"{fn.__name__}() of compile-time values takes no NaN or -0.0 (as "
                            f"Triton: their order is not defined), got {x}")
    res = fn(*vals, **{k: _unwrap(v) for k, v in kwargs.items()})
    return constexpr(res) if isinstance(res, (int, float, bool)) else res


def def_source(jit_fn) -> str:
    """`jit_fn`'s source from its `def` line (Triton's `src`: no decorators)."""
    lines = jit_fn.src.splitlines(keepends=True)
    return "".join(lines[jit_fn.parse().body[0].lineno - 1:])
