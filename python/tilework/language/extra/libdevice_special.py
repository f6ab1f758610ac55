"""libdevice's special functions: `erfinv`, `erfcinv`, `erfcx`, `normcdf`, `normcdfinv`,
`lgamma`, `tgamma`, written in the language (fp32 computes in fp64 and rounds once; fp64 in
fp64).  Approximations of our own on classical expansions:

- erfcx: for x > 2 the continued fraction of erfc, x + (1/2) / (x + 1 / (x + (3/2) / ...)),
  erfcx = 1 / (sqrt(pi) f), needing no exp; on [1/2, 2] Taylor series at six centres, their
  coefficients by erfcx's differential equation; below, exp(x*x) (1 - erf(x)); for x < 0,
  2 exp(x*x) - erfcx(-x) with x*x split exactly (fma) so exp's argument carries no error.
- erfinv / erfcinv: Winitzki's closed form (relative error 2e-3) as the start, then for
  |y| <= 1/2 three Halley steps on erf(x) - y, else four Newton steps on
  log(erfcx(x)) - x*x - log(1 - |y|), whose derivative -2 / (sqrt(pi) erfcx(x)) never
  underflows (so erfcinv of the smallest subnormals converges too).
- erfc (for normcdf) = exp(-x*x) erfcx(x) from 1/2 on, x*x split exactly.
- normcdf(x) = erfc(-x / sqrt 2) / 2; normcdfinv(p) = -sqrt(2) erfcinv(2p).
- lgamma: lgamma(1 + t) for |t| <= 1/2 from the series -gamma t + (t - log1p t) +
  sum (-1)**k (zeta(k) - 1) t**k / k (32 terms), exact at the roots 1 and 2 (t = 0); other
  x below 12 are shifted into [1/2, 3/2) (x < 1/2: lgamma(1 + x) - log x) with the product of
  the shifts;
  from 12 Stirling's series with seven Bernoulli terms; x <= -1/2 by the reflection
  lgamma(x) = log(pi / |sin(pi x)|) - log(-x) - lgamma(-x), sin on the exact x - round(x).
- tgamma: exp of the same series at 1 + t times the product of the shifts (up to 179 of them,
  compensated: each product's residual from fma, so the product is within about an ulp;
  `tl.map_elementwise`, a loop of its own length per element); reflection below -1/2
  (negative integers NaN, +-0 +-inf).

fp64 error: a few ulp each (normcdf up to about 6: the rounding of x / sqrt 2);
lgamma near its negative roots is accurate only absolutely; tgamma below -171.6 gives 0 where
Gamma(-x) overflows (results under 1e-307).
The tests (test_libdevice_special.py) state the measured bounds.
"""
from ..control import static_range
from ..asm import map_elementwise
from ..core import maximum, minimum, where
from ..function import jit
from .libdevice_common import check_float as _check, narrow as _narrow, wide as _wide
from ..math import abs, erf, exp, floor, fma, log, sin, sqrt

__all__ = ["erfcx", "erfinv", "erfcinv", "normcdf", "normcdfinv", "lgamma", "tgamma"]

PI = 3.141592653589793
SQRT_PI = 1.7724538509055159
INV_SQRT_PI = 0.5641895835477563
HALF_SQRT_PI = 0.886226925452758
INV_SQRT2 = 0.7071067811865476
SQRT2 = 1.4142135623730951
HALF_LOG_2PI = 0.9189385332046728
EULER = 0.5772156649015329
INF = float("inf")
NAN = float("nan")
WINITZKI_A = 0.147
WINITZKI_C = 2.0 / (PI * 0.147)
# (-1)**k (zeta(k) - 1) / k, k = 2 .. 33 (mpmath, 40 digits)
LG1P = (0.3224670334241132, -0.0673523010531981, 0.020580808427784546, -0.007385551028673986,
        0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425,
        -0.00022315475845357939, 9.945751278180853e-05, -4.492623673813314e-05,
        2.050721277567069e-05, -9.439488275268397e-06, 4.374866789907488e-06,
        -2.039215753801366e-06, 9.55141213040742e-07, -4.492469198764566e-07,
        2.1207184805554665e-07, -1.0043224823968099e-07, 4.7698101693639804e-08,
        -2.2711094608943164e-08, 1.0838659214896955e-08, -5.183475041970047e-09,
        2.4836745438024785e-09, -1.1921401405860912e-09, 5.731367241678862e-10,
        -2.7595228851242334e-10, 1.330476437424449e-10, -6.4229645638381e-11,
        3.1044247747322276e-11, -1.5021384080754142e-11, 7.275974480239079e-12,
        -3.527742476575915e-12)
# erfcx at 0.625, 0.875, ..., 1.875 (mpmath, 40 digits)
ERFCX_C = (0.5568138808733625, 0.464311583202669, 0.3956980795529959, 0.3432958898621254,
           0.30226120936348594, 0.2694299851646704)
# Stirling: B(2k) / (2k (2k - 1)), k = 1 .. 7
STIRLING = (1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188, -691.0 / 360360,
            1.0 / 156)


@jit
def _log1p(x):
    # Kahan: log(u) * x / (u - 1) with u = 1 + x rounded
    u = 1.0 + x
    d = u - 1.0
    return where(d == 0.0, x, log(u) * (x / d))


# ---- erfcx, erfc, normcdf -----------------------------------------------------------------------

@jit
def _erfcx_taylor(x):
    """erfcx on [1/2, 2): its Taylor series at the nearest of six centres c (|x - c| <= 1/8),
    the coefficients from erfcx(c) (mpmath) by erfcx' = 2x erfcx - 2/sqrt(pi), i.e.
    a(n+1) = (2c a(n) + 2 a(n-1)) / (n+1)."""
    k = minimum(maximum(floor((x - 0.5) * 4.0), 0.0), 5.0)
    c = 0.625 + 0.25 * k
    a0 = x * 0.0 + ERFCX_C[5]  # fp64 (a where of two Python floats would be fp32)
    for i in static_range(5):
        a0 = where(k == i, ERFCX_C[i], a0)
    h = x - c
    a1 = 2.0 * c * a0 - 2.0 * INV_SQRT_PI
    acc = a0 + a1 * h
    hp = h
    for n in static_range(1, 20):
        a2 = (2.0 * c * a1 + 2.0 * a0) / (n + 1)
        hp = hp * h
        acc = acc + a2 * hp
        a0 = a1
        a1 = a2
    return acc


@jit
def _erfcx_pos(x):
    """exp(x*x) erfc(x) for x >= 0 (fp64): below 1/2 exp(x*x) (1 - erf(x)) (erfc >= 0.48, so
    erf's absolute error stays relative), the Taylor series to 2, the continued fraction
    above."""
    w = maximum(x, 2.0)
    f = w
    for j in static_range(60):
        f = w + (0.5 * (60 - j)) / f
    tail = INV_SQRT_PI / f
    hi = x * x
    lo = fma(x, x, -hi)
    near = exp(hi) * (1.0 + lo) * (1.0 - erf(x))
    mid = _erfcx_taylor(minimum(maximum(x, 0.5), 1.999))
    return where(x > 2.0, tail, where(x >= 0.5, mid, near))


@jit
def _erfcx_w(x):
    a = abs(x)
    r = _erfcx_pos(a)
    hi = a * a
    lo = fma(a, a, -hi)
    neg = 2.0 * (exp(hi) * (1.0 + lo)) - r
    r = where(x < 0, neg, where(x == INF, 0.0, r))
    return where(x == -INF, INF, r)


@jit
def _erfc_w(x):
    a = abs(x)
    hi = a * a
    lo = fma(a, a, -hi)
    pos = where(a >= 0.5, exp(-hi) * (1.0 - lo) * _erfcx_pos(a), 1.0 - erf(a))
    pos = where(a == INF, 0.0, pos)
    return where(x < 0, 2.0 - pos, pos)


@jit
def erfcx(x):
    _check(x, "libdevice.erfcx takes fp32 or fp64 (as Triton)")
    return _narrow(_erfcx_w(_wide(x)), x)


@jit
def normcdf(x):
    """erfc(a) / 2, a = -x / sqrt(2); for a > 2 as exp(-x*x / 2) erfcx(a) / 2 with x*x split
    exactly (the rounding of a would cost exp's argument a*a * 2**-52)."""
    _check(x, "libdevice.normcdf takes fp32 or fp64 (as Triton)")
    w = _wide(x)
    a = -w * INV_SQRT2
    hi = w * w
    lo = fma(w, w, -hi)
    tail = 0.5 * exp(-0.5 * hi) * (1.0 - 0.5 * lo) * _erfcx_pos(maximum(a, 2.0))
    r = where(a > 2.0, tail, 0.5 * _erfc_w(a))
    return _narrow(where(w == -INF, 0.0, r), x)


# ---- erfinv, erfcinv, normcdfinv ----------------------------------------------------------------

@jit
def _winitzki(lg):
    """erfinv's closed-form start from lg = log(1 - y*y)."""
    c = WINITZKI_C + 0.5 * lg
    return sqrt(sqrt(c * c - lg / WINITZKI_A) - c)


@jit
def _erfinv_core(y):
    """erfinv(y) for |y| <= 1/2: its series' first four terms, three Halley steps."""
    z = HALF_SQRT_PI * y
    z2 = z * z
    x = z * (1.0 + z2 * (1.0 / 3 + z2 * (7.0 / 30 + z2 * (127.0 / 630))))
    for _ in static_range(3):
        u = (erf(x) - y) * HALF_SQRT_PI * exp(x * x)
        x = x - u / (1.0 + x * u)
    return x


@jit
def _erfcinv_core(z):
    """erfcinv(z) for 0 < z <= 1/2 (x >= 0.47): Newton on log erfc."""
    lz = log(z)
    x = _winitzki(lz + log(2.0 - z))
    for _ in static_range(4):
        e = _erfcx_pos(x)
        x = x + (log(e) - x * x - lz) * e * HALF_SQRT_PI
    return x


@jit
def _erfcinv_w(z):
    """erfcinv on (0, 2): 1 - z is exact for z in [1/2, 3/2]."""
    small = z <= 0.5
    big = z >= 1.5
    tail = _erfcinv_core(where(small, z, where(big, 2.0 - z, 0.5)))
    mid = _erfinv_core(where(small | big, 0.0, 1.0 - z))
    r = where(small, tail, where(big, -tail, mid))
    r = where(z == 0.0, INF, where(z == 2.0, -INF, r))
    return where((z < 0.0) | (z > 2.0) | (z != z), NAN, r)


@jit
def erfcinv(x):
    _check(x, "libdevice.erfcinv takes fp32 or fp64 (as Triton)")
    return _narrow(_erfcinv_w(_wide(x)), x)


@jit
def erfinv(x):
    """erfinv(y) = sign(y) erfcinv(1 - |y|); 1 - |y| is exact for |y| >= 1/2."""
    _check(x, "libdevice.erfinv takes fp32 or fp64 (as Triton)")
    y = _wide(x)
    a = abs(y)
    r = where(a <= 0.5, _erfinv_core(where(a <= 0.5, y, 0.0)),
              _erfcinv_w(where(a <= 0.5, 1.0, 1.0 - a)))
    r = where((a > 0.5) & (y < 0), -r, r)
    return _narrow(r, x)


@jit
def normcdfinv(x):
    _check(x, "libdevice.normcdfinv takes fp32 or fp64 (as Triton)")
    return _narrow(-SQRT2 * _erfcinv_w(2.0 * _wide(x)), x)


# ---- lgamma, tgamma -----------------------------------------------------------------------------

@jit
def _lg1p(t):
    """lgamma(1 + t) for |t| <= 1/2."""
    p = t * 0.0 + LG1P[31]
    for j in static_range(31):
        p = p * t + LG1P[30 - j]
    return -EULER * t + (t - _log1p(t)) + p * t * t


@jit
def _stirling(x):
    """lgamma(x) for x >= 12."""
    r = 1.0 / x
    r2 = r * r
    s = r * 0.0 + STIRLING[6]
    for j in static_range(6):
        s = s * r2 + STIRLING[5 - j]
    return (x - 0.5) * log(x) - x + HALF_LOG_2PI + s * r


@jit
def _shifted(x):
    """For 1/2 <= x < 12: (t, prod, lprod) with Gamma(x) = Gamma(1 + t) prod, |t| <= 1/2 and
    lprod = log(prod): m = floor(x - 1/2) steps down, x - j exact for each j <= m, and
    t = x - m - 1 exact; log(x - 1) is log1p(x - 2) (exact argument: lgamma's root at 2)."""
    m = floor(x - 0.5)
    prod = x * 0.0 + 1.0
    for j in static_range(11):
        prod = where(j + 1 <= m, prod * (x - (j + 1)), prod)
    lprod = where(m == 1.0, _log1p(x - 2.0), log(prod))
    return x - m - 1.0, prod, lprod


@jit
def _lgamma_pos(x):
    """lgamma for x > 0 (fp64)."""
    t, prod, lprod = _shifted(where((x >= 0.5) & (x < 12.0), x, 1.0))
    mid = _lg1p(t) + lprod
    low = _lg1p(where(x < 0.5, x, 0.0)) - log(x)
    big = _stirling(maximum(x, 12.0))
    r = where(x < 0.5, low, where(x < 12.0, mid, big))
    return where(x == INF, INF, r)


@jit
def _sinpi_abs(x):
    f = x - floor(x + 0.5)  # exact, |f| <= 1/2
    return abs(sin(PI * f)), f


@jit
def lgamma(x):
    _check(x, "libdevice.lgamma takes fp32 or fp64 (as Triton)")
    w = _wide(x)
    a = abs(w)
    s, f = _sinpi_abs(where(w < -0.5, w, 0.25))
    refl = log(PI / s) - log(a) - _lgamma_pos(where(w < -0.5, a, 1.0))
    small_neg = _lg1p(where((w < 0) & (w >= -0.5), w, 0.0)) - log(a)
    r = where(w >= 0, _lgamma_pos(where(w >= 0, w, 1.0)),
              where(w >= -0.5, small_neg, refl))
    r = where((w < 0) & (f == 0.0), INF, r)  # poles
    r = where(w == 0.0, INF, r)
    r = where(w == -INF, INF, r)
    return _narrow(r, x)


@jit
def _shift_product(x, m):
    """prod (x - j), j = 1 .. m (each factor exact), and the relative error of its roundings,
    summed from each product's exact residual (fma): a compensated product."""
    p = x * 0.0 + 1.0
    rel = x * 0.0
    j = x * 0.0 + 1.0
    while j <= m:
        a = x - j
        q = p * a
        rel = rel + fma(p, a, -q) / q
        p = q
        j = j + 1.0
    return p, rel


@jit
def _tgamma_pos(x):
    """Gamma for x >= 1/2 (fp64): Gamma(1 + t) times the m factors down to it, m up to 179
    (a loop of its own length per element); beyond, inf."""
    xc = minimum(x, 180.0)
    m = floor(xc - 0.5)
    p, rel = map_elementwise(_shift_product, xc, m)
    r = exp(_lg1p(xc - m - 1.0)) * (p * (1.0 + rel))
    return where((p == INF) | (x > 180.0), INF, r)


@jit
def tgamma(x):
    _check(x, "libdevice.tgamma takes fp32 or fp64 (as Triton)")
    w = _wide(x)
    a = abs(w)
    pos = _tgamma_pos(where(w >= 0.5, w, 1.0))
    small = exp(_lg1p(where(a < 0.5, w, 0.0))) / w  # Gamma(1 + x) / x: +-0 give +-inf
    s, f = _sinpi_abs(where(w <= -0.5, w, 0.25))
    # Gamma(x) Gamma(-x) = -pi / (x sin(pi x)); sin(pi x) has the sign of (-1)**floor(x)
    odd = (floor(w) - 2.0 * floor(0.5 * floor(w))) != 0.0
    sgn = where(odd, -1.0, 1.0)
    refl = -PI / (w * (sgn * s) * _tgamma_pos(where(w <= -0.5, a, 1.0)))
    r = where(w >= 0.5, pos, where(w > -0.5, small, refl))
    r = where((w < -0.5) & (f == 0.0), NAN, r)
    r = where(w == -INF, NAN, where(w == INF, INF, r))
    return _narrow(r, x)
