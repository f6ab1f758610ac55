"""Implementations of the math builtins (registered in ops.IMPLS by name).

Elementwise math becomes upstream ops on tiles: `math.exp`, `math.log`, ... (`math.sqrt` with
`fastmath<afn>` for the fast `tl.sqrt`, without for `tl.sqrt_rn`), `math.absf`/`absi`,
`math.fma`, `arith.divf`, `arith.maxnumf`/`minnumf` (clamp), and `tile.umulhi`.  What each
becomes on each target is in lowering/rules/math.py.  Dtype rules follow Triton 3.6's
`triton.language.math` (`_check_dtype`), with its messages."""
from __future__ import annotations

import functools

import mlir.ir as ir

from tilework.dialects import builders as B

from ..language import core
from ..language.core import constexpr, tensor
from ..language.math import PropagateNan, cdiv_host
from . import semantic as S
from .ops_core import const, impl, propagate_nan_arg
from .semantic import SemanticError

_F32_F64 = ("fp32", "fp64")
_F32 = ("fp32",)
_UMULHI = ("int32", "int64", "uint32", "uint64")


def _check(name, dtypes, *xs):
    """Triton's `_check_dtype`: every tensor operand must have one of `dtypes`."""
    for x in xs:
        if isinstance(x, tensor) and x.dtype.name not in dtypes:
            hint = ""
            if x.dtype.is_floating() and "fp32" in dtypes:
                hint = "; convert it first, e.g. `x.to(tl.float32)`"
            raise SemanticError(f"tl.{name}: Expected dtype {list(dtypes)} but got "
                                f"{x.dtype.name}{hint}")


def _afn() -> ir.Attribute:
    return ir.Attribute.parse("#arith.fastmath<afn>")


def _emit(b, opname, operands: list, attrs=None) -> tensor:
    x = operands[0]
    h = b.create1(opname, [o.handle for o in operands], x.handle.type, attrs)
    return tensor(h, x.dtype, x.shape)


def _unary(name, opname, dtypes=_F32_F64, afn=False):
    def fn(b, x):
        x = S.to_tensor(b, x)
        _check(name, dtypes, x)
        return _emit(b, opname, [x], {"fastmath": _afn()} if afn else None)
    fn.__name__ = name
    fn.__doc__ = f"tl.{name}: `{opname}`{' (afn)' if afn else ''} on {'/'.join(dtypes)}."
    return impl(fn)


exp = _unary("exp", "math.exp")
exp2 = _unary("exp2", "math.exp2")
log = _unary("log", "math.log")
log2 = _unary("log2", "math.log2")
sin = _unary("sin", "math.sin")
cos = _unary("cos", "math.cos")
erf = _unary("erf", "math.erf")
floor = _unary("floor", "math.floor")
ceil = _unary("ceil", "math.ceil")
rsqrt = _unary("rsqrt", "math.rsqrt")
sqrt = _unary("sqrt", "math.sqrt", afn=True)   # Triton's "fast square root"
sqrt_rn = _unary("sqrt_rn", "math.sqrt", _F32)  # correctly rounded


def _common(b, what, *xs):
    """The operands converted to one dtype and shape: Python scalars take the dtype of the
    first tile (weak typing), then the usual promotion and broadcasting."""
    ref = next((x.dtype for x in xs if isinstance(x, tensor)), None)
    ts = [x if isinstance(x, tensor) else
          (S.weak_scalar(b, x, ref) if ref is not None else S.to_tensor(b, x)) for x in xs]
    ct = functools.reduce(lambda a, c: S.computation_type(a, c, what), [t.dtype for t in ts])
    shape = functools.reduce(lambda a, c: S.broadcast_shapes(a, c, f"{what} operands"),
                             [t.shape for t in ts])
    return [S.broadcast_to(b, S.cast(b, t, ct), shape) for t in ts]


@impl
def abs_(b, x):
    """Floats clear the sign bit (fp8 by an integer mask, as Triton does for its fp8 type);
    signed ints wrap at the minimum; unsigned ints and bools are unchanged."""
    x = S.to_tensor(b, x)
    dt = x.dtype
    if dt.is_ptr():
        raise SemanticError(f"tl.abs is not defined for pointers ({dt})")
    if dt.is_fp8():
        bits = S.cast(b, x, core.int8, bitcast=True)
        return S.cast(b, S.binary(b, "and", bits, 0x7F), dt, bitcast=True)
    if dt.is_floating():
        return _emit(b, "math.absf", [x])
    if dt.is_bool() or dt.is_int_unsigned():
        return x
    return _emit(b, "math.absi", [x])


@impl
def umulhi(b, x, y):
    _check("umulhi", _UMULHI, x, y)
    x, y = _common(b, "umulhi", x, y)
    _check("umulhi", _UMULHI, x)
    return tensor(B.build_umulhi(b, x.handle, y.handle), x.dtype, x.shape)


@impl
def fma(b, x, y, z):
    x, y, z = _common(b, "fma", x, y, z)
    if not x.dtype.is_floating() or x.dtype.is_fp8():
        raise SemanticError(f"tl.fma: expected fp16, bf16, fp32 or fp64 operands, got "
                            f"{x.dtype}")
    return _emit(b, "math.fma", [x, y, z])


def _divf(b, name, x, y, attrs=None):
    x, y = S.to_tensor(b, x), S.to_tensor(b, y)  # as Triton: a Python int stays an int
    if not x.dtype.is_floating() or not y.dtype.is_floating():
        raise SemanticError(f"tl.{name}: both operands of {name} must have floating scalar "
                            f"type, got {x.dtype} and {y.dtype}")
    x, y = _common(b, name, x, y)
    if x.dtype.primitive_bitwidth < 32:  # Triton divides fp16/bf16 (and fp8) in fp32
        x, y = S.cast(b, x, core.float32), S.cast(b, y, core.float32)
    return _emit(b, "arith.divf", [x, y], attrs)


@impl
def fdiv(b, x, y, ieee_rounding=False):
    if not isinstance(const(ieee_rounding, "ieee_rounding"), bool):
        raise SemanticError(f"tl.fdiv: ieee_rounding must be a constexpr bool, got "
                            f"{const(ieee_rounding, 'ieee_rounding')!r}")
    # ieee_rounding=True rounds correctly (Triton 3.6 ignores it: its fdiv is `/`)
    return _divf(b, "fdiv", x, y, {"tile.rn": ir.UnitAttr.get()} if const(
        ieee_rounding, "ieee_rounding") else None)


@impl
def div_rn(b, x, y):
    _check("div_rn", _F32, x, y)
    # correctly rounded; `/` and tl.fdiv may be 2 ulp off on NVIDIA (div.full.f32, as Triton)
    return _divf(b, "div_rn", x, y, {"tile.rn": ir.UnitAttr.get()})


@impl
def clamp(b, x, min, max, propagate_nan=PropagateNan.NONE):
    pn = propagate_nan_arg("clamp", propagate_nan)
    ts = []
    for v in (x, min, max):  # as Triton: Python floats are fp32 here (not weakly typed), so
        v = S.to_tensor(b, v)  # clamp(fp16 tile, 0.0, 1.0) is fp32; bf16 computes in fp32
        ts.append(S.cast(b, v, core.float32) if v.dtype.is_bf16() else v)
    x, lo, hi = _common(b, "clamp", *ts)
    if not x.dtype.is_floating():
        raise SemanticError(f"tl.clamp: Unexpected dtype {x.dtype}. Only floating point clamp "
                            f"is supported")
    if pn is PropagateNan.ALL:
        return _emit(b, "arith.minimumf", [_emit(b, "arith.maximumf", [x, lo]), hi])
    return _emit(b, "arith.minnumf", [_emit(b, "arith.maxnumf", [x, lo]), hi])


@impl
def sigmoid(b, x):
    """1 / (1 + exp(-x)), as Triton's `tl.sigmoid`."""
    x = S.to_tensor(b, x)
    _check("sigmoid", _F32_F64, x)
    e = exp(b, S.minus(b, x))
    return S.binary(b, "truediv", 1, S.binary(b, "add", 1, e))


@impl
def cdiv(b, x, div):
    """`(x + div - 1) // div`; on two Python ints a constexpr."""
    if not isinstance(x, tensor) and not isinstance(div, tensor):
        try:
            return constexpr(cdiv_host(x, div))
        except TypeError as e:
            raise SemanticError(f"tl.cdiv: {e}") from None
    return S.binary(b, "floordiv", S.binary(b, "sub", S.binary(b, "add", x, div), 1), div)
