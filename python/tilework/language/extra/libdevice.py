"""`tl.extra.libdevice` (also `tl.extra.cuda.libdevice`, `tl.extra.hip.libdevice`): the math
functions Triton takes from NVIDIA's libdevice / AMD's ocml, here written in the tile language
itself on top of `tl.math`, so they are self-contained on both targets (no bitcode is linked;
`extern_libs=` is accepted and ignored).

Functions that `tl.math` has (exp, log, sqrt, sin, erf, floor, fma, ...) are those builtins.
The others are ordinary `@jit` functions inlined into the kernel (plain Python under the
interpreter).  An fp32 argument is computed in fp64 and rounded once at the end, so these are
accurate to about 1 ulp in fp32 (and cost fp64 arithmetic); fp64 arguments use the same
formulas in fp64: a few ulp, except `pow`/`exp10` (relative error ~|result exponent| * 2**-53)
and `erfc` (absolute 1e-16 below 2).  Integer results (isnan, signbit, ...) are int32.
"""
from ..control import static_range
from ..core import float32, float64, int32, int64, maximum, minimum, static_assert, where
from ..function import extern_names, jit
from .libdevice_common import narrow as _narrow, wide as _wide
from ..math import abs, ceil, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, rsqrt, sin
from ..math import sqrt, sqrt_rn, umulhi
from ..random import to_tensor
from . import libdevice_bessel, libdevice_bits, libdevice_convert, libdevice_round, libdevice_special
from .libdevice_bits import *  # noqa: F401,F403  (popc, clz, ffs, brev, byte_perm, sad, mul24)
from .libdevice_convert import *  # noqa: F401,F403  (rint, the conversions)
from .libdevice_round import *  # noqa: F401,F403  (add_rd, ..., int2float_ru, ...)
from .libdevice_special import *  # noqa: F401,F403  (erfinv, lgamma, ...)
from .libdevice_bessel import *  # noqa: F401,F403  (j0, y1, cyl_bessel_i0, ...)

__all__ = [
    "abs", "fabs", "ceil", "floor", "trunc", "round", "nearbyint", "sqrt", "sqrt_rn",
    "rsqrt", "cbrt", "rcbrt", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p",
    "pow", "powi", "pown", "fast_powf", "hypot", "rhypot", "sin", "cos", "tan", "sinpi", "cospi",
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
    "erfc", "fmod", "remainder", "rsqrt_rn", "fmin", "fmax", "fma", "fdim", "copysign", "signbit", "isnan", "isinf",
    "isfinited", "finitef", "ldexp", "div_rn", "fast_dividef", "saturatef", "umulhi",
    "fast_expf", "fast_exp10f", "fast_logf", "fast_log2f", "fast_log10f", "fast_sinf",
    "fast_cosf", "fast_tanf", "fast_tanhf", "float_as_int", "int_as_float", "double_as_longlong",
    "longlong_as_double", "llrint", "llround", "scalbn", "logb", "ilogb", "nextafter", "norm3d", "norm4d", "rnorm3d",
    "rnorm4d",
] + (libdevice_convert.__all__ + libdevice_bits.__all__ + libdevice_round.__all__
     + libdevice_special.__all__ + libdevice_bessel.__all__)

PI = 3.141592653589793
HALF_PI = 1.5707963267948966
QUARTER_PI = 0.7853981633974483
LN2 = 0.6931471805599453
LN10 = 2.302585092994046
INV_LN10 = 0.4342944819032518
INV_SQRT_PI = 0.5641895835477563
INF = float("inf")
BIG = 268435456.0  # 2**28: beyond it x*x + 1 == x*x in the inverse hyperbolics

fabs = abs
fmin = minimum
fmax = maximum
fast_expf = exp
fast_logf = log
fast_log2f = log2
fast_sinf = sin
fast_cosf = cos
fast_dividef = fdiv


# ---- working precision: fp32 (and narrower) computes in fp64, rounded once at the end -------

@jit
def _sign_of(x, r):
    """`r` (>= 0) with the sign of `x`."""
    return where(x < 0, -r, r)


# ---- rounding (exact in any precision) ----------------------------------------------------------

@jit
def trunc(x):
    return where(x < 0, ceil(x), floor(x))


@jit
def round(x):
    """Nearest integer, halves away from zero (C's round)."""
    t = trunc(x)
    return where(abs(x - t) >= 0.5, t + where(x < 0, -1.0, 1.0), t)


@jit
def nearbyint(x):
    return rint(x)


# ---- exponentials and logarithms ----------------------------------------------------------------

@jit
def _expm1_w(x):
    # Kahan: (u - 1) * x / log(u) cancels the rounding of u = exp(x)
    u = exp(x)
    um1 = u - 1.0
    r = where(u == 1.0, x, um1 * x / log(u))
    r = where(um1 == -1.0, -1.0, r)
    return where(u == INF, u, r)


@jit
def _log1p_w(x):
    # Kahan: log(u) * x / (u - 1) with u = 1 + x rounded
    u = 1.0 + x
    d = u - 1.0
    r = where(d == 0.0, x, log(u) * (x / d))
    return where(x == INF, x, r)


@jit
def expm1(x):
    return _narrow(_expm1_w(_wide(x)), x)


@jit
def log1p(x):
    return _narrow(_log1p_w(_wide(x)), x)


@jit
def exp10(x):
    return _narrow(exp(_wide(x) * LN10), x)


@jit
def fast_exp10f(x):
    return exp10(x)


@jit
def log10(x):
    return _narrow(log(_wide(x)) * INV_LN10, x)


@jit
def fast_log10f(x):
    return log10(x)


@jit
def pow(x, y):
    """x**y with C's special cases: pow(x, 0) = pow(1, y) = 1, a negative base needs an
    integral exponent (odd ones keep the sign), else NaN."""
    w = _wide(x)
    y = to_tensor(y)
    v = _wide(y) if y.dtype == float32 or y.dtype == float64 else y.to(float64)
    r = exp2(v * log2(abs(w)))
    integral = floor(v) == v
    half = v * 0.5
    odd = integral & (floor(half) != half)
    r = where(w < 0, where(integral, where(odd, -r, r), float("nan")), r)
    r = where((v == 0.0) | (w == 1.0), 1.0, r)
    return _narrow(r, x)


@jit
def powi(x, y):
    return pow(x, y.to(float64))


@jit
def pown(x, y):
    return pow(x, y.to(float64))


@jit
def fast_powf(x, y):
    return pow(x, y)


@jit
def cbrt(x):
    a = abs(_wide(x))
    r = exp2(log2(a) / 3.0)
    r = r - (r * r * r - a) / (3.0 * r * r)  # one Newton step
    r = where((a == 0.0) | (a == INF), a, r)
    return _narrow(_sign_of(_wide(x), r), x)


@jit
def rcbrt(x):
    return _narrow(1.0 / _wide(cbrt(x)), x)


@jit
def hypot(x, y):
    a = abs(_wide(x))
    b = abs(_wide(y))
    m = maximum(a, b)
    n = minimum(a, b)
    q = n / m
    r = m * sqrt(1.0 + q * q)
    r = where(m == 0.0, 0.0, r)
    r = where((a == INF) | (b == INF), INF, r)
    return _narrow(r, x)


@jit
def rhypot(x, y):
    return _narrow(1.0 / _wide(hypot(x, y)), x)


@jit
def _norm(a, b, c, d):
    """sqrt(a*a + b*b + c*c + d*d) of wide non-negative values, scaled by the largest (no
    overflow); 0 for all zeros, inf if one is."""
    m = maximum(maximum(a, b), maximum(c, d))
    s = where(m == 0.0, 1.0, m)
    qa, qb, qc, qd = a / s, b / s, c / s, d / s
    r = m * sqrt(qa * qa + qb * qb + qc * qc + qd * qd)
    return where(m == INF, INF, r)


@jit
def norm3d(a, b, c):
    return _narrow(_norm(abs(_wide(a)), abs(_wide(b)), abs(_wide(c)), 0.0 * _wide(a)), a)


@jit
def norm4d(a, b, c, d):
    return _narrow(_norm(abs(_wide(a)), abs(_wide(b)), abs(_wide(c)), abs(_wide(d))), a)


@jit
def rnorm3d(a, b, c):
    return _narrow(1.0 / _norm(abs(_wide(a)), abs(_wide(b)), abs(_wide(c)), 0.0 * _wide(a)), a)


@jit
def rnorm4d(a, b, c, d):
    return _narrow(1.0 / _norm(abs(_wide(a)), abs(_wide(b)), abs(_wide(c)), abs(_wide(d))), a)


# ---- trigonometric ------------------------------------------------------------------------------

@jit
def tan(x):
    w = _wide(x)
    return _narrow(sin(w) / cos(w), x)


@jit
def fast_tanf(x):
    return tan(x)


@jit
def sinpi(x):
    return _narrow(sin(_wide(x) * PI), x)


@jit
def cospi(x):
    return _narrow(cos(_wide(x) * PI), x)


@jit
def _atan01(t):
    """atan of t in [0, 1] (fp64): two argument halvings, atan(t) = 2 atan(t / (1 +
    sqrt(1 + t*t))), bring t below 0.2, where 13 terms of the odd Taylor series are exact."""
    t = t / (1.0 + sqrt(1.0 + t * t))
    t = t / (1.0 + sqrt(1.0 + t * t))
    z = t * t
    p = z * 0.0 + 1.0 / 25.0
    for j in static_range(12):
        k = 11 - j
        p = p * z + ((-1.0) ** k) / (2 * k + 1)
    return 4.0 * t * p


@jit
def _atan2_w(y, x):
    ay = abs(y)
    ax = abs(x)
    swap = ay > ax
    r = _atan01(where(swap, ax, ay) / where(swap, ay, ax))
    r = where(swap, HALF_PI - r, r)
    r = where((ay == 0.0) & (ax == 0.0), 0.0, r)
    r = where((ay == INF) & (ax == INF), QUARTER_PI, r)
    r = where(x < 0, PI - r, r)
    return where(y < 0, -r, r)


@jit
def atan2(y, x):
    return _narrow(_atan2_w(_wide(y), _wide(x)), y)


@jit
def atan(x):
    w = _wide(x)
    a = abs(w)
    big = a > 1.0
    r = _atan01(where(big, 1.0 / a, a))
    r = where(big, HALF_PI - r, r)
    return _narrow(_sign_of(w, r), x)


@jit
def asin(x):
    w = _wide(x)
    return _narrow(_atan2_w(w, sqrt((1.0 - w) * (1.0 + w))), x)


@jit
def acos(x):
    w = _wide(x)
    return _narrow(_atan2_w(sqrt((1.0 - w) * (1.0 + w)), w), x)


# ---- hyperbolic ---------------------------------------------------------------------------------

@jit
def sinh(x):
    w = _wide(x)
    a = abs(w)
    e = _expm1_w(a)
    r = where(a < 20.0, 0.5 * (e + e / (e + 1.0)), 0.5 * exp(a))
    return _narrow(_sign_of(w, r), x)


@jit
def cosh(x):
    a = abs(_wide(x))
    e = exp(a)
    return _narrow(0.5 * (e + 1.0 / e), x)


@jit
def tanh(x):
    w = _wide(x)
    a = abs(w)
    e = _expm1_w(2.0 * a)
    r = where(a < 20.0, e / (e + 2.0), 1.0)
    r = where(a != a, a, r)
    return _narrow(_sign_of(w, r), x)


fast_tanhf = tanh  # (Triton's HIP fast tanh; here the correctly rounded one, as fast_expf)


@jit
def asinh(x):
    w = _wide(x)
    a = abs(w)
    r = where(a > BIG, log(a) + LN2, _log1p_w(a + a * a / (1.0 + sqrt(1.0 + a * a))))
    return _narrow(_sign_of(w, r), x)


@jit
def acosh(x):
    w = _wide(x)
    t = w - 1.0
    r = where(w > BIG, log(w) + LN2, _log1p_w(t + sqrt(2.0 * t + t * t)))
    return _narrow(r, x)


@jit
def atanh(x):
    w = _wide(x)
    a = abs(w)
    r = 0.5 * _log1p_w(2.0 * a / (1.0 - a))
    return _narrow(_sign_of(w, r), x)


# ---- error function -----------------------------------------------------------------------------

@jit
def erfc(x):
    """1 - erf(x); from 2 on, exp(-x*x) / sqrt(pi) over the continued fraction
    x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))) (60 terms, evaluated backward), so the
    small results keep their relative accuracy."""
    w = _wide(x)
    f = w
    for j in static_range(60):
        f = w + (0.5 * (60 - j)) / f
    tail = exp(-w * w) * INV_SQRT_PI / f
    r = where(w > 2.0, tail, 1.0 - erf(w))
    return _narrow(r, x)


# ---- floating-point manipulation ----------------------------------------------------------------

@jit
def fmod(x, y):
    """C's fmod: the remainder with the sign of x."""
    return x % y


@jit
def remainder(x, y):
    """IEEE remainder x - n*y, n the nearest integer to x/y (halves to even); exact.  From
    fmod (exact): r = fmod(x, y) has the sign of x and |r| < |y|; it moves down by |y| where
    |r| is more than half of |y|, or exactly half and the truncated quotient is odd (fmod(|x|,
    2|y|) >= |y|; 2|y| overflowing to inf still answers right, the quotient then being below
    2).  a - |y| is exact (|y| / 2 <= a < |y|); the result takes x's sign, zeros included."""
    ay = abs(y)
    a = abs(x % y)
    odd = abs(x) % (ay + ay) >= ay
    up = (a + a > ay) | ((a + a == ay) & odd)
    r = where(up, a - ay, a)
    return where(_bits(x) < 0, -r, r)


@jit
def rsqrt_rn(x):
    """1 / sqrt(x) correctly rounded (fp32): fp64's correctly rounded sqrt and division, then
    one rounding to fp32.  That double rounding is exact for every fp32 input (checked
    exhaustively over the two binades that determine all of them: test_libdevice_rn.py);
    rsqrt_rn(-0) = -inf, negative inputs NaN."""
    static_assert(x.dtype == float32, "libdevice.rsqrt_rn takes fp32 (as Triton)")
    return (1.0 / sqrt(x.to(float64))).to(float32)


@jit
def fdim(x, y):
    r = where(x > y, x - y, 0.0)
    return where((x != x) | (y != y), x + y, r)


@jit
def saturatef(x):
    return minimum(maximum(x, 0.0), 1.0)


@jit
def _bits(x):
    if x.dtype == float64:
        return x.to(int64, bitcast=True)
    return x.to(float32).to(int32, bitcast=True)


@jit
def signbit(x):
    return (_bits(x) < 0).to(int32)


@jit
def copysign(x, y):
    a = abs(x)
    return where(_bits(y) < 0, -a, a)


@jit
def isnan(x):
    return (x != x).to(int32)


@jit
def isinf(x):
    return (abs(x) == INF).to(int32)


@jit
def isfinited(x):
    return (abs(x) < INF).to(int32)


@jit
def finitef(x):
    return (abs(x) < INF).to(int32)


@jit
def _pow2(k):
    """2**k as fp64 for integer k in [-1022, 1023], built from its exponent bits."""
    return ((k.to(int64) + 1023) << 52).to(float64, bitcast=True)


@jit
def ldexp(x, n):
    """x * 2**n in two exact steps (the product rounds once, unless it is subnormal)."""
    m = minimum(maximum(n.to(int32), -2044), 2046)
    k1 = m // 2
    r = _wide(x) * _pow2(k1) * _pow2(m - k1)
    return _narrow(r, x)


scalbn = ldexp  # (libdevice's scalbn(x, n) is x * 2**n too)


@jit
def _exponent(w):
    """floor(log2(|w|)) of a finite non-zero fp64, from its exponent bits (subnormals scaled
    by 2**54 first)."""
    a = abs(w)
    tiny = a < 2.2250738585072014e-308
    s = where(tiny, a * 18014398509481984.0, a)
    e = ((s.to(int64, bitcast=True) >> 52) & 0x7FF) - 1023
    return where(tiny, e - 54, e)


@jit
def logb(x):
    """The exponent of x as a float: -inf for 0, inf for +-inf, NaN for NaN."""
    w = _wide(x)
    r = where(w == 0.0, -INF, _exponent(where(w == 0.0, 1.0, w)).to(float64))
    r = where(abs(w) == INF, INF, r)
    return _narrow(where(w != w, w, r), x)


@jit
def ilogb(x):
    """The exponent of x as an int32: INT_MIN for 0 and NaN, INT_MAX for +-inf (CUDA's)."""
    w = _wide(x)
    ok = (w == w) & (w != 0.0) & (abs(w) != INF)
    e = _exponent(where(ok, w, 1.0)).to(int32)
    return where(ok, e, where(abs(w) == INF, 2147483647, -2147483648))


@jit
def nextafter(x, y):
    """The next representable value after x towards y (fp32 or fp64)."""
    if x.dtype == float64:
        bits = x.to(int64, bitcast=True)
    else:
        bits = x.to(int32, bitcast=True)
    tiny = (bits * 0 + 1).to(x.dtype, bitcast=True)  # the smallest subnormal
    up = (y > x) == (x > 0)  # the magnitude grows
    r = where(up, bits + 1, bits - 1).to(x.dtype, bitcast=True)
    r = where(x == 0, where(y > 0, tiny, -tiny), r)
    r = where(x == y, y, r)
    return where((x != x) | (y != y), x + y, r)


@jit
def float_as_int(x):
    return x.to(int32, bitcast=True)


@jit
def int_as_float(x):
    return x.to(float32, bitcast=True)


@jit
def double_as_longlong(x):
    return x.to(int64, bitcast=True)


@jit
def longlong_as_double(x):
    return x.to(float64, bitcast=True)



@jit
def llrint(x):
    return rint(x).to(int64)


@jit
def llround(x):
    return round(x).to(int64)


# Triton's libdevice functions name their parameters `arg0`, `arg1`, ...: each is called by
# those keywords too (`libdevice.pow(arg0=x, arg1=y)`)
for _name in __all__:
    globals()[_name] = extern_names(globals()[_name])
del _name
