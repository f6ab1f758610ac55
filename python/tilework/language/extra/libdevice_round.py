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
from ..core import float32, float64, full_like, int32, int64, static_assert, uint32, uint64, where
from ..asm import inline_asm_elementwise
from ..function import jit
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
def _check(x, msg):
    static_assert(x.dtype == float32 or x.dtype == float64, msg)


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
def _wide(x):
    if x.dtype == float64:
        return x
    return x.to(float64)


@jit
def _near(w, x):
    """w (fp64) rounded to x's dtype."""
    if x.dtype == float64:
        return w
    return w.to(float32)


@jit
def _add(x, y, mode):
    a = _wide(x)
    b = _wide(y)
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)  # TwoSum: a + b = s + e exactly (short of overflow)
    r = _near(s, x)
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
    r = _near(p, x)
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
    r = _near(a / b, x)  # fp64's division: correctly rounded
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
    r = _near(sqrt(a), x)  # fp64's root: correctly rounded
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


__all__ = [
    "rcp64h", "add_rd", "add_ru", "add_rz", "sub_rd", "sub_ru", "sub_rz", "mul_rd", "mul_ru",
    "mul_rz", "div_rd", "div_ru", "div_rz", "fma_rd", "fma_ru", "fma_rz", "rcp_rd", "rcp_ru",
    "rcp_rz", "sqrt_rd", "sqrt_ru", "sqrt_rz", "int2float_rd", "int2float_ru", "int2float_rz",
    "uint2float_rd", "uint2float_ru", "uint2float_rz", "ll2float_rd", "ll2float_ru",
    "ll2float_rz", "ull2float_rd", "ull2float_ru", "ull2float_rz", "ll2double_rd",
    "ll2double_ru", "ll2double_rz", "ull2double_rd", "ull2double_ru", "ull2double_rz",
    "double2float_rd", "double2float_ru", "double2float_rz"
]

@jit
def add_rd(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.add_rd takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("add.rm.f32 $0, $1, $2;", "add.rm.f64 $0, $1, $2;", [x, y])
    else:
        r = _add(x, y, 0)
    return r


@jit
def add_ru(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.add_ru takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("add.rp.f32 $0, $1, $2;", "add.rp.f64 $0, $1, $2;", [x, y])
    else:
        r = _add(x, y, 1)
    return r


@jit
def add_rz(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.add_rz takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("add.rz.f32 $0, $1, $2;", "add.rz.f64 $0, $1, $2;", [x, y])
    else:
        r = _add(x, y, 2)
    return r


@jit
def sub_rd(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.sub_rd takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("sub.rm.f32 $0, $1, $2;", "sub.rm.f64 $0, $1, $2;", [x, y])
    else:
        r = _add(x, -y, 0)
    return r


@jit
def sub_ru(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.sub_ru takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("sub.rp.f32 $0, $1, $2;", "sub.rp.f64 $0, $1, $2;", [x, y])
    else:
        r = _add(x, -y, 1)
    return r


@jit
def sub_rz(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.sub_rz takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("sub.rz.f32 $0, $1, $2;", "sub.rz.f64 $0, $1, $2;", [x, y])
    else:
        r = _add(x, -y, 2)
    return r


@jit
def mul_rd(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.mul_rd takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("mul.rm.f32 $0, $1, $2;", "mul.rm.f64 $0, $1, $2;", [x, y])
    else:
        r = _mul(x, y, 0)
    return r


@jit
def mul_ru(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.mul_ru takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("mul.rp.f32 $0, $1, $2;", "mul.rp.f64 $0, $1, $2;", [x, y])
    else:
        r = _mul(x, y, 1)
    return r


@jit
def mul_rz(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.mul_rz takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("mul.rz.f32 $0, $1, $2;", "mul.rz.f64 $0, $1, $2;", [x, y])
    else:
        r = _mul(x, y, 2)
    return r


@jit
def div_rd(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.div_rd takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("div.rm.f32 $0, $1, $2;", "div.rm.f64 $0, $1, $2;", [x, y])
    else:
        r = _div(x, y, 0)
    return r


@jit
def div_ru(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.div_ru takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("div.rp.f32 $0, $1, $2;", "div.rp.f64 $0, $1, $2;", [x, y])
    else:
        r = _div(x, y, 1)
    return r


@jit
def div_rz(x, y):
    x, y = _common(x, y)
    _check(x, "libdevice.div_rz takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("div.rz.f32 $0, $1, $2;", "div.rz.f64 $0, $1, $2;", [x, y])
    else:
        r = _div(x, y, 2)
    return r


@jit
def fma_rd(x, y, z):
    x, y, z = _common3(x, y, z)
    _check(x, "libdevice.fma_rd takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("fma.rm.f32 $0, $1, $2, $3;", "fma.rm.f64 $0, $1, $2, $3;", [x, y, z])
    else:
        r = _fma(x, y, z, 0)
    return r


@jit
def fma_ru(x, y, z):
    x, y, z = _common3(x, y, z)
    _check(x, "libdevice.fma_ru takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("fma.rp.f32 $0, $1, $2, $3;", "fma.rp.f64 $0, $1, $2, $3;", [x, y, z])
    else:
        r = _fma(x, y, z, 1)
    return r


@jit
def fma_rz(x, y, z):
    x, y, z = _common3(x, y, z)
    _check(x, "libdevice.fma_rz takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("fma.rz.f32 $0, $1, $2, $3;", "fma.rz.f64 $0, $1, $2, $3;", [x, y, z])
    else:
        r = _fma(x, y, z, 2)
    return r


@jit
def rcp_rd(x):
    _check(x, "libdevice.rcp_rd takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("rcp.rm.f32 $0, $1;", "rcp.rm.f64 $0, $1;", [x])
    else:
        r = _div(full_like(x, 1.0), x, 0)
    return r


@jit
def rcp_ru(x):
    _check(x, "libdevice.rcp_ru takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("rcp.rp.f32 $0, $1;", "rcp.rp.f64 $0, $1;", [x])
    else:
        r = _div(full_like(x, 1.0), x, 1)
    return r


@jit
def rcp_rz(x):
    _check(x, "libdevice.rcp_rz takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("rcp.rz.f32 $0, $1;", "rcp.rz.f64 $0, $1;", [x])
    else:
        r = _div(full_like(x, 1.0), x, 2)
    return r


@jit
def sqrt_rd(x):
    _check(x, "libdevice.sqrt_rd takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("sqrt.rm.f32 $0, $1;", "sqrt.rm.f64 $0, $1;", [x])
    else:
        r = _sqrt(x, 0)
    return r


@jit
def sqrt_ru(x):
    _check(x, "libdevice.sqrt_ru takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("sqrt.rp.f32 $0, $1;", "sqrt.rp.f64 $0, $1;", [x])
    else:
        r = _sqrt(x, 1)
    return r


@jit
def sqrt_rz(x):
    _check(x, "libdevice.sqrt_rz takes fp32 or fp64 (as Triton)")
    if target_info.is_cuda():
        r = _ptx("sqrt.rz.f32 $0, $1;", "sqrt.rz.f64 $0, $1;", [x])
    else:
        r = _sqrt(x, 2)
    return r


@jit
def int2float_rd(x):
    static_assert(x.dtype == int32, "libdevice.int2float_rd takes int32 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rm.f32.s32 $0, $1;", "=f,r", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 0)
    return r


@jit
def int2float_ru(x):
    static_assert(x.dtype == int32, "libdevice.int2float_ru takes int32 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rp.f32.s32 $0, $1;", "=f,r", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 1)
    return r


@jit
def int2float_rz(x):
    static_assert(x.dtype == int32, "libdevice.int2float_rz takes int32 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rz.f32.s32 $0, $1;", "=f,r", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 2)
    return r


@jit
def uint2float_rd(x):
    static_assert(x.dtype == uint32, "libdevice.uint2float_rd takes uint32 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rm.f32.u32 $0, $1;", "=f,r", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 0)
    return r


@jit
def uint2float_ru(x):
    static_assert(x.dtype == uint32, "libdevice.uint2float_ru takes uint32 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rp.f32.u32 $0, $1;", "=f,r", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 1)
    return r


@jit
def uint2float_rz(x):
    static_assert(x.dtype == uint32, "libdevice.uint2float_rz takes uint32 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rz.f32.u32 $0, $1;", "=f,r", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 2)
    return r


@jit
def ll2float_rd(x):
    static_assert(x.dtype == int64, "libdevice.ll2float_rd takes int64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rm.f32.s64 $0, $1;", "=f,l", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 0)
    return r


@jit
def ll2float_ru(x):
    static_assert(x.dtype == int64, "libdevice.ll2float_ru takes int64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rp.f32.s64 $0, $1;", "=f,l", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 1)
    return r


@jit
def ll2float_rz(x):
    static_assert(x.dtype == int64, "libdevice.ll2float_rz takes int64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rz.f32.s64 $0, $1;", "=f,l", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 2)
    return r


@jit
def ull2float_rd(x):
    static_assert(x.dtype == uint64, "libdevice.ull2float_rd takes uint64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rm.f32.u64 $0, $1;", "=f,l", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 0)
    return r


@jit
def ull2float_ru(x):
    static_assert(x.dtype == uint64, "libdevice.ull2float_ru takes uint64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rp.f32.u64 $0, $1;", "=f,l", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 1)
    return r


@jit
def ull2float_rz(x):
    static_assert(x.dtype == uint64, "libdevice.ull2float_rz takes uint64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rz.f32.u64 $0, $1;", "=f,l", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _from_int(x, float32, 2)
    return r


@jit
def ll2double_rd(x):
    static_assert(x.dtype == int64, "libdevice.ll2double_rd takes int64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rm.f64.s64 $0, $1;", "=d,l", [x],
                                   dtype=float64, is_pure=True, pack=1)
    else:
        r = _from_int(x, float64, 0)
    return r


@jit
def ll2double_ru(x):
    static_assert(x.dtype == int64, "libdevice.ll2double_ru takes int64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rp.f64.s64 $0, $1;", "=d,l", [x],
                                   dtype=float64, is_pure=True, pack=1)
    else:
        r = _from_int(x, float64, 1)
    return r


@jit
def ll2double_rz(x):
    static_assert(x.dtype == int64, "libdevice.ll2double_rz takes int64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rz.f64.s64 $0, $1;", "=d,l", [x],
                                   dtype=float64, is_pure=True, pack=1)
    else:
        r = _from_int(x, float64, 2)
    return r


@jit
def ull2double_rd(x):
    static_assert(x.dtype == uint64, "libdevice.ull2double_rd takes uint64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rm.f64.u64 $0, $1;", "=d,l", [x],
                                   dtype=float64, is_pure=True, pack=1)
    else:
        r = _from_int(x, float64, 0)
    return r


@jit
def ull2double_ru(x):
    static_assert(x.dtype == uint64, "libdevice.ull2double_ru takes uint64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rp.f64.u64 $0, $1;", "=d,l", [x],
                                   dtype=float64, is_pure=True, pack=1)
    else:
        r = _from_int(x, float64, 1)
    return r


@jit
def ull2double_rz(x):
    static_assert(x.dtype == uint64, "libdevice.ull2double_rz takes uint64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rz.f64.u64 $0, $1;", "=d,l", [x],
                                   dtype=float64, is_pure=True, pack=1)
    else:
        r = _from_int(x, float64, 2)
    return r


@jit
def double2float_rd(x):
    static_assert(x.dtype == float64, "libdevice.double2float_rd takes fp64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rm.f32.f64 $0, $1;", "=f,d", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _stepped(x.to(float32), x - x.to(float32).to(float64), 0)
    return r


@jit
def double2float_ru(x):
    static_assert(x.dtype == float64, "libdevice.double2float_ru takes fp64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rp.f32.f64 $0, $1;", "=f,d", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _stepped(x.to(float32), x - x.to(float32).to(float64), 1)
    return r


@jit
def double2float_rz(x):
    static_assert(x.dtype == float64, "libdevice.double2float_rz takes fp64 (as Triton)")
    if target_info.is_cuda():
        r = inline_asm_elementwise("cvt.rz.f32.f64 $0, $1;", "=f,d", [x],
                                   dtype=float32, is_pure=True, pack=1)
    else:
        r = _stepped(x.to(float32), x - x.to(float32).to(float64), 2)
    return r



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
