"""Python numbers a kernel assigns to a name, as Triton's int32/int64/fp32 scalars compute.

Triton makes a number assigned in a kernel a scalar of its dtype (`a = -7`, `a = BLOCK`,
`a = tl.constexpr(-7)`, `t = (-7, 2)`'s members: int32; a float: fp32), where tilework keeps a
compile-time value (constexpr uses of it, `tl.arange(0, n)` after `n = 4`, keep working).  Its
operators are those of the scalar, though, or a ported kernel silently gets another answer:
`//` and `%` truncate toward zero (C), `+ - * <<` wrap at the dtype's width, `>>` follows the
left operand's signedness, `/` of ints and any float arithmetic is fp32 (fp64 only beyond fp32).
`ScalarInt`/`ScalarFloat` are such values: a Python int/float carrying that dtype, whose
operators fold with those rules (the compiler's `binop` and the interpreter's Python alike) and
give another one.  A number used directly (`BLOCK // 2`, a literal, `c: tl.constexpr = -7`) stays
Python's, as Triton computes constexprs in Python.  Bools stay Python's (not folded here)."""
from __future__ import annotations

import numpy as np

from ..language import core
from ..language.core import constexpr
from ..language.tuples import tuple as tl_tuple
from . import semantic as S


def _scalar_class(base, name: str, doc: str):
    """A subclass of `base` (int, float) carrying the dtype Triton would give the value."""

    def __new__(cls, value, dtype: core.dtype):
        obj = base.__new__(cls, value)
        obj.scalar_dtype = dtype
        return obj

    def __getnewargs__(self):  # (copies and pickles keep the dtype)
        return base(self), self.scalar_dtype

    return type(name, (base,), {"__doc__": doc, "__new__": __new__, "__repr__": base.__repr__,
                                "__str__": base.__repr__, "__getnewargs__": __getnewargs__,
                                "__module__": __name__})


ScalarInt = _scalar_class(int, "ScalarInt", "An int Triton would hold as a scalar of "
                          "`scalar_dtype` (an integer dtype).")
ScalarFloat = _scalar_class(float, "ScalarFloat", "A float Triton would hold as a scalar of "
                            "`scalar_dtype` (fp32 or fp64).")


SCALARS = (ScalarInt, ScalarFloat)


def as_scalar(value):
    """An assigned value as Triton's scalar would compute (a number; a tl.tuple's members)."""
    if isinstance(value, SCALARS):
        return value
    if isinstance(value, constexpr):  # (stays one: the interpreter's `tl.constexpr(-7)`)
        return constexpr(as_scalar(value.value)) if _number(value.value) else value
    if type(value) is tl_tuple:  # its members (not a shape's, nor a named tuple's)
        members = [as_scalar(v) for v in value]
        return tl_tuple(members, value.type) if value.fields else tl_tuple(members)
    if not _number(value):
        return value
    if isinstance(value, float):
        return ScalarFloat(value, core.float32 if _fp32_range(value) else core.float64)
    # Triton's to_tensor: uint32 between int32 and 2**32 (an int alone elsewhere is int64)
    return ScalarInt(value, core.uint32 if 2**31 <= value < 2**32 else
                     S.python_scalar_dtype(value))


def _number(v) -> bool:
    return type(v) in (int, float)


def is_number(v) -> bool:
    """A Python int, float or bool (an assigned one included), not a numpy scalar."""
    return type(v) in (int, float, bool) or isinstance(v, SCALARS)


def is_scalar_operation(x, y) -> bool:
    """Whether `x <op> y` folds as Triton's scalars: numbers, one of them an assigned one."""
    return (isinstance(x, SCALARS) or isinstance(y, SCALARS)) and is_number(x) and is_number(y)


def _fp32_range(x: float) -> bool:
    a = abs(x)  # Triton's to_tensor: fp32 unless finite, nonzero and outside fp32's range
    return a == float("inf") or a == 0.0 or x != x or 2.0**-126 <= a <= (2 - 2**-23) * 2.0**127


def _operand_dtype(v, other: core.dtype) -> core.dtype:
    """`v`'s dtype against a scalar of dtype `other`: its own, or, a plain Python number,
    Triton's weak typing (as it meets a tile: an int must fit the scalar's int type)."""
    if isinstance(v, SCALARS):
        return v.scalar_dtype
    S.check_weak_int(v, other)
    if isinstance(v, bool):
        return core.int1
    if isinstance(v, float):
        return other if other.is_floating() else core.float32
    return other  # (an int meeting a float scalar becomes that float)


def _wrap(v: int, dt: core.dtype) -> int:
    bits = dt.primitive_bitwidth
    v &= (1 << bits) - 1
    if dt.is_int_signed() and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return -q if (x < 0) != (y < 0) else q


_SIGNED = {8: core.int8, 16: core.int16, 32: core.int32, 64: core.int64}
_NP_FLOAT = {"fp32": np.float32, "fp64": np.float64}


def fold(op: str, x, y):
    """`x <op> y` (semantic op names: "floordiv", ...), one of them a ScalarInt/ScalarFloat, as
    Triton's scalars compute it."""
    xdt = _operand_dtype(x, y.scalar_dtype) if not isinstance(x, SCALARS) else x.scalar_dtype
    ydt = _operand_dtype(y, xdt)
    S.check_div_signedness(op, xdt, ydt)
    ct = S.computation_type(xdt, ydt, op)
    if ct.is_floating():
        if S.is_bitwise(op):
            raise S.SemanticError(S.bitwise_message(op, xdt, ydt))
        t = _NP_FLOAT[ct.name]
        a, b = t(x), t(y)
        with np.errstate(all="ignore"):
            r = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                 "truediv": np.divide, "mod": np.fmod,  # arith.remf: C's fmod
                 "floordiv": lambda p, q: np.floor(np.divide(p, q))}[op](a, b)
        return ScalarFloat(float(r), ct)
    a, b = _wrap(int(x), ct), _wrap(int(y), ct)
    if op in ("floordiv", "mod") and b == 0:
        raise ZeroDivisionError("integer division or modulo by zero")  # (Python's)
    if op == "rshift" and xdt.is_int_signed():  # the left operand's signedness picks the shift
        r = _wrap(a, _SIGNED[ct.primitive_bitwidth]) >> b
    elif op == "floordiv":
        r = _trunc_div(a, b)
    elif op == "mod":
        r = a - _trunc_div(a, b) * b
    else:
        r = {"add": a + b, "sub": a - b, "mul": a * b, "and": a & b, "or": a | b,
             "xor": a ^ b}.get(op)
        if r is None:  # (shifts by a negative count raise, as Python's)
            r = a << b if op == "lshift" else a >> b
    return ScalarInt(_wrap(r, ct), ct)


def negate(x):
    if isinstance(x, ScalarInt):
        return ScalarInt(_wrap(-int(x), x.scalar_dtype), x.scalar_dtype)
    return ScalarFloat(-float(x), x.scalar_dtype)


def invert(x: ScalarInt):
    return ScalarInt(_wrap(~int(x), x.scalar_dtype), x.scalar_dtype)


_OPS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or", "xor", "lshift",
        "rshift")


def _install(cls):
    for op in _OPS:
        dunder = {"and": "and_", "or": "or_"}.get(op, op).rstrip("_")

        def forward(self, other, op=op):
            return fold(op, self, other) if is_number(other) else NotImplemented

        def reflected(self, other, op=op):
            return fold(op, other, self) if is_number(other) else NotImplemented

        setattr(cls, f"__{dunder}__", forward)
        setattr(cls, f"__r{dunder}__", reflected)
    cls.__neg__ = negate
    cls.__pos__ = lambda self: self
    if cls is ScalarInt:
        cls.__invert__ = invert


_install(ScalarInt)
_install(ScalarFloat)
