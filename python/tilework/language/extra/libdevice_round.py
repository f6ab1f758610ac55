"""libdevice's directed roundings (`_rd` down, `_ru` up, `_rz` toward zero) of `add`, `sub`,
`mul`, `div`, `fma`, `rcp`, `sqrt` (fp32 and fp64), of the integer -> float conversions
(`int2float_rd`, `ull2double_ru`, ...) and of `double2float`.  On NVIDIA each is its one PTX
instruction (`add.rm.f32`, `cvt.rz.f32.s64`, ...; inline assembly, as libdevice).  AMD has no
per-instruction rounding mode: there, and in the interpreter, they are computed in the
language on round-to-nearest arithmetic, to the same bits:

Each function computes a representable `r` next to the exact result (its nearest, or the
nearest of a close fp64 value) and a `d` with the sign of (exact - r), found exactly: fp32
operands in fp64, where products, sums (TwoSum) and the residuals of a quotient or a root are
exact; fp64 with error-free transformations (TwoSum; the FMA residual of a product, quotient
or root; Boldo and Muller's ErrFma for fma), operands scaled by powers of two where a
residual would fall below the subnormals.  Then `r` moves one ulp toward the exact result
where the mode asks (`_stepped`, on the bits).  Overflow: a finite exact result whose nearest
is inf has d of the other sign (rounding down or toward zero gives the largest finite).
An exact zero sum (or fma) rounding down is -0, as IEEE says.

Limit: fp64 `fma_*` where a*b overflows while the result does not may miss the step (its
error terms are then NaN).  The computed path costs about 20 to 80 instructions an element.

Also `rcp64h` (fp64 approximate reciprocal: NVIDIA's instruction there, 1/x's high word
elsewhere).
"""
import types

from ..core import constexpr, float32, float64, full_like, int32, int64, static_assert, uint32
from ..core import uint64, where
from ..asm import inline_asm_elementwise
from ..function import jit
from .libdevice_common import check_float as _check, narrow as _narrow, wide as _wide
from ..random import to_tensor
from .. import target_info
from ..math import abs, fma, sqrt

INF = float("inf")
S300 = 2.0 ** 300
S550 = 2.0 ** 550
S600 = 2.0 ** 600
TINY = 2.0 ** -900
SMALL = 2.0 ** -500
SMALL_Z = 2.0 ** -800
TWO63 = 2.0 ** 63
TWO64 = 2.0 ** 64
NEG_TINY32 = -2147483647  # the bits of -2**-149 as int32
NEG_TINY64 = -9223372036854775807  # the bits of -2**-1074 as int64
LOW_WORD = -4294967296  # ~0xFFFFFFFF as int64
MIN_NORMAL64 = 2.2250738585072014e-308


@jit
def _common(x, y):
    """Triton's promotion of libdevice's operands: Python numbers become tensors, then a float
    operand makes both the wider float (fp64 over fp32); the dtype is then checked."""
    x = to_tensor(x)
    y = to_tensor(y)
    if x.dtype == float64 or y.dtype == float64:
        return x.to(float64), y.to(float64)
    elif x.dtype == float32 or y.dtype == float32:
        return x.to(float32), y.to(float32)
    else:
        return x, y


@jit
def _common3(x, y, z):
    x, y = _common(x, y)
    x, z = _common(x, z)
    x, y = _common(x, y)
    return x, y, z


@jit
def _ptx(text32, text64, args):
    """NVIDIA: the one PTX instruction (`add.rm.f32`, ...) of fp32 or fp64 operands."""
    if args[0].dtype == float64:
        return inline_asm_elementwise(text64, "=d" + ",d" * len(args), args, dtype=float64,
                                      is_pure=True, pack=1)
    else:
        return inline_asm_elementwise(text32, "=f" + ",f" * len(args), args, dtype=float32,
                                      is_pure=True, pack=1)


@jit
def _stepped(r, d, mode):
    """`r`, or its neighbour on the side of the exact result when mode (0 down, 1 up, 2 toward
    zero) says: d has the sign of (exact - r); 0 or NaN keeps r.  On the bits: as integers a
    float's bits grow away from zero for either sign; from +-0 the step is to +-2**-149
    (-1074)."""
    if mode == 0:
        move = d < 0
    elif mode == 1:
        move = d > 0
    else:
        move = ((r > 0) & (d < 0)) | ((r < 0) & (d > 0))
    if r.dtype == float64:
        bits = r.to(int64, bitcast=True)
        zero_step = where(d > 0, 1, NEG_TINY64).to(int64)
    else:
        bits = r.to(int32, bitcast=True)
        zero_step = where(d > 0, 1, NEG_TINY32)
    nb = where((r > 0) == (d > 0), bits + 1, bits - 1)
    nb = where(r == 0, zero_step, nb)
    return where(move, nb.to(r.dtype, bitcast=True), r)


@jit
def _add(x, y, mode):
    a = _wide(x)
    b = _wide(y)
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)  # TwoSum: a + b = s + e exactly (short of overflow)
    r = _narrow(s, x)
    d = (s - _wide(r)) + e
    finite = (abs(a) < INF) & (abs(b) < INF)
    d = where(finite & (abs(s) == INF), -s, d)
    if mode == 0:
        r = where((r == 0) & (d == 0), -((-x) + (-y)), r)  # -0 unless both are +0
    return _stepped(r, d, mode)


@jit
def _mul(x, y, mode):
    a = _wide(x)
    b = _wide(y)
    p = a * b  # exact for fp32 operands
    r = _narrow(p, x)
    if x.dtype == float64:
        # the residual of a product below 2**-900 from operands scaled by 2**600 each (then
        # exactly representable, being a multiple of 2**-948)
        tiny = abs(p) < TINY
        e = fma(where(tiny, a * S600, a), where(tiny, b * S600, b),
                -where(tiny, p * S600 * S600, p))
        d = where((abs(a) < INF) & (abs(b) < INF) & (abs(p) == INF), -p, e)
    else:
        d = p - _wide(r)
    return _stepped(r, d, mode)


@jit
def _div(x, y, mode):
    a = _wide(x)
    b = _wide(y)
    r = _narrow(a / b, x)  # fp64's division: correctly rounded
    w = _wide(r)
    if x.dtype == float64:
        # a - r*b is exact unless |a| < 2**-900: then a is scaled by 2**1100 with b (b small)
        # or with r (r then below 2**-400)
        small = abs(a) < TINY
        bsmall = abs(b) < SMALL
        a = where(small, a * S550 * S550, a)
        b = where(small & bsmall, b * S550 * S550, b)
        w = where(small & (~bsmall), w * S550 * S550, w)
    res = fma(-w, b, a)  # exact; a/b - r has its sign times b's
    return _stepped(r, where(b < 0, -res, res), mode)


@jit
def _sqrt(x, mode):
    a = _wide(x)
    r = _narrow(sqrt(a), x)  # fp64's root: correctly rounded
    w = _wide(r)
    if x.dtype == float64:
        tiny = a < TINY  # x * 4**300, root * 2**300: the residual exact again
        a = where(tiny, a * S600, a)
        w = where(tiny, w * S300, w)
    return _stepped(r, fma(-w, w, a), mode)


@jit
def _err_fma(x, y, z, r):
    """The sign of x*y + z - r for r = fma(x, y, z) (fp64): Boldo and Muller's ErrFma, exact
    while x*y is at least 2**-969 (its residual representable)."""
    u1 = x * y
    u2 = fma(x, y, -u1)
    a1 = z + u2
    t = a1 - z
    a2 = (z - (a1 - t)) + (u2 - t)
    b1 = u1 + a1
    t = b1 - u1
    b2 = (u1 - (b1 - t)) + (a1 - t)
    return ((b1 - r) + b2) + a2


@jit
def _fma(x, y, z, mode):
    if x.dtype == float64:
        r = fma(x, y, z)
        # a product below 2**-900: if |z| >= 2**-800, r = z and the error is x*y (scaled to
        # keep its sign); else everything scaled by 2**1200, where fma rounds to a grid at
        # least as fine as the subnormals' (scaled), so the scaled r differs from it by an
        # exact difference, larger than that fma's error when not 0
        tiny = abs(x * y) < TINY
        zbig = (abs(z) >= SMALL_Z) & (abs(z) < INF)
        xs = where(tiny, x * S600, x)
        ys = where(tiny, y * S600, y)
        scaled = tiny & (~zbig)
        zs = where(scaled, z * S600 * S600, z)
        rs = where(scaled, fma(xs, ys, zs), r)
        d = _err_fma(xs, ys, zs, rs)
        d = where(scaled, (rs - r * S600 * S600) + d, d)
        d = where(tiny & zbig, xs * ys, d)
        finite = (abs(x) < INF) & (abs(y) < INF) & (abs(z) < INF)
        d = where(finite & (abs(r) == INF), -r, d)
    else:
        p = x.to(float64) * y.to(float64)  # exact, and so is the TwoSum with z in fp64
        c = z.to(float64)
        s = p + c
        t = s - p
        e = (p - (s - t)) + (c - t)
        r = s.to(float32)
        d = (s - r.to(float64)) + e
    if mode == 0:
        r = where((r == 0) & (d == 0), -fma(-x, y, -z), r)
    return _stepped(r, d, mode)


@jit
def _from_int(x, ft, mode):
    """x (int32, uint32, int64, uint64) to ft: d from the integer difference to r."""
    r = x.to(ft)
    if x.dtype == int64:
        big = r >= TWO63  # r = 2**63 > every int64
        diff = x - where(big, 0.0, r).to(int64)
        d = where(big, -1.0, diff.to(ft))
    elif x.dtype == uint64:
        big = r >= TWO64
        rc = where(big, 0.0, r).to(uint64)
        d = where(big | (x < rc), -1.0, where(x > rc, 1.0, 0.0))
    else:
        d = (x.to(int64) - r.to(int64)).to(ft)
    return _stepped(r, d, mode)


@jit
def rcp64h(x):
    """libdevice's approximate fp64 reciprocal: on NVIDIA its instruction,
    `rcp.approx.ftz.f64` (as Triton); elsewhere (AMD, the interpreter) 1/x with the low 32 bits
    cleared (relative error below 2**-20), subnormal inputs and results flushed to zero as
    the instruction does.  The bits can differ between the two."""
    static_assert(x.dtype == float64, "libdevice.rcp64h takes fp64 (as Triton)")
    if target_info.is_cuda():
        return inline_asm_elementwise("rcp.approx.ftz.f64 $0, $1;", "=d,d", [x],
                                      dtype=float64, is_pure=True, pack=1)
    else:
        xf = where(abs(x) < MIN_NORMAL64, x * 0.0, x)  # -0 for -subnormals (1/-0 = -inf)
        r = 1.0 / xf
        r = (r.to(int64, bitcast=True) & LOW_WORD).to(float64, bitcast=True)
        return where(abs(r) < MIN_NORMAL64, r * 0.0, r)


# ---- the public functions: one @jit definition per family, a variant per mode -------------------
# Each variant (`add_rd`, ...) is its family's function under that name, with its keyword-only
# constexprs (the op, the types, the mode) bound as defaults: `_define` makes them from the table
# below.  Mode 0 rounds down, 1 up, 2 toward zero.

SUFFIX = ("rd", "ru", "rz")  # libdevice's names of the modes
PTX_RND = ("rm", "rp", "rz")  # PTX's
FLOAT_ONLY = " takes fp32 or fp64 (as Triton)"


@jit
def _rounded1(x, *, op: constexpr, mode: constexpr):
    """rcp, sqrt."""
    _check(x, "libdevice." + op + "_" + SUFFIX[mode] + FLOAT_ONLY)
    if target_info.is_cuda():
        r = _ptx(op + "." + PTX_RND[mode] + ".f32 $0, $1;",
                 op + "." + PTX_RND[mode] + ".f64 $0, $1;", [x])
    elif op == "rcp":
        r = _div(full_like(x, 1.0), x, mode)
    else:
        r = _sqrt(x, mode)
    return r


@jit
def _rounded2(x, y, *, op: constexpr, mode: constexpr):
    """add, sub, mul, div."""
    x, y = _common(x, y)
    _check(x, "libdevice." + op + "_" + SUFFIX[mode] + FLOAT_ONLY)
    if target_info.is_cuda():
        r = _ptx(op + "." + PTX_RND[mode] + ".f32 $0, $1, $2;",
                 op + "." + PTX_RND[mode] + ".f64 $0, $1, $2;", [x, y])
    elif op == "add":
        r = _add(x, y, mode)
    elif op == "sub":
        r = _add(x, -y, mode)
    elif op == "mul":
        r = _mul(x, y, mode)
    else:
        r = _div(x, y, mode)
    return r


@jit
def _rounded3(x, y, z, *, op: constexpr, mode: constexpr):
    """fma."""
    x, y, z = _common3(x, y, z)
    _check(x, "libdevice." + op + "_" + SUFFIX[mode] + FLOAT_ONLY)
    if target_info.is_cuda():
        r = _ptx(op + "." + PTX_RND[mode] + ".f32 $0, $1, $2, $3;",
                 op + "." + PTX_RND[mode] + ".f64 $0, $1, $2, $3;", [x, y, z])
    else:
        r = _fma(x, y, z, mode)
    return r


@jit
def _converted(x, *, op: constexpr, src: constexpr, dst: constexpr, cvt: constexpr,
               constraints: constexpr, mode: constexpr):
    """The integer -> float conversions and double2float: `cvt` is PTX's types ("f32.s32")."""
    static_assert(x.dtype == src, "libdevice." + op + "_" + SUFFIX[mode] + " takes " + src.name
                  + " (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt." + PTX_RND[mode] + "." + cvt + " $0, $1;", constraints,
                                   [x], dtype=dst, is_pure=True, pack=1)
    elif src == float64:
        r = _stepped(x.to(float32), x - x.to(float32).to(float64), mode)
    else:
        r = _from_int(x, dst, mode)
    return r


__all__ = ["rcp64h"]


def _define(family, op, what, **consts):
    """`op_rd`, `op_ru`, `op_rz` (of `what`): @jit functions running `family`'s code with `op`,
    `consts` and their mode bound (the source, and so the error locations, are `family`'s)."""
    f = family.fn
    for mode, suffix in enumerate(SUFFIX):
        name = f"{op}_{suffix}"
        fn = types.FunctionType(f.__code__, f.__globals__, name, f.__defaults__, f.__closure__)
        fn.__kwdefaults__ = {"op": op, **consts, "mode": mode}
        fn.__qualname__ = name
        fn.__doc__ = f"{what}, rounded {('down', 'up', 'toward zero')[mode]}."
        globals()[name] = jit(fn)
        __all__.append(name)


_define(_rounded2, "add", "x + y")
_define(_rounded2, "sub", "x - y")
_define(_rounded2, "mul", "x * y")
_define(_rounded2, "div", "x / y")
_define(_rounded3, "fma", "x * y + z (one rounding)")
_define(_rounded1, "rcp", "1 / x")
_define(_rounded1, "sqrt", "The square root of x")
PTX_TYPE = {int32: ("s32", "r"), uint32: ("u32", "r"), int64: ("s64", "l"),
            uint64: ("u64", "l"), float32: ("f32", "f"), float64: ("f64", "d")}
for _op, _src, _dst in (("int2float", int32, float32), ("uint2float", uint32, float32),
                        ("ll2float", int64, float32), ("ull2float", uint64, float32),
                        ("ll2double", int64, float64), ("ull2double", uint64, float64),
                        ("double2float", float64, float32)):
    _define(_converted, _op, f"x ({_src.name}) as {_dst.name}", src=_src, dst=_dst,
            cvt=f"{PTX_TYPE[_dst][0]}.{PTX_TYPE[_src][0]}",
            constraints=f"={PTX_TYPE[_dst][1]},{PTX_TYPE[_src][1]}")
del _op, _src, _dst
