"""libdevice's Bessel functions `j0`, `j1`, `y0`, `y1`, `cyl_bessel_i0`, `cyl_bessel_i1`,
written in the language (fp32 computes in fp64 and rounds once; fp64 in fp64):

- |x| < 2: the power series (q = x*x/4; terms at most 1, so fp64 keeps 1e-16 absolute);
  Y0 and Y1 with their log terms and harmonic (digamma) weights.
- 2 <= |x| < 20: Miller's backward recurrence J(k-1) = (2k/x) J(k) - J(k+1) from k = 64,
  normalised by J0 + 2 (J2 + J4 + ...) = 1; Y0 from Neumann's series
  Y0 = (2/pi) ((log(x/2) + gamma) J0 - 2 sum (-1)**k J(2k) / k) and Y1 = -Y0' from it, all
  terms bounded by 1 (no cancellation of large terms).
- |x| >= 20: Hankel's asymptotic expansion (28 terms; its remainder is below e**-2x), the
  phase x - pi/4 (- pi/2) through cos x +- sin x so pi's rounding does not enter.
- jn, yn (integer order n, per element: `tl.map_elementwise`, a loop of its own length per
  element): Y_n by the forward recurrence from Y0, Y1 (stable for Y); J_n by it where x > n,
  else Miller's backward recurrence from 2 floor((n + 16 + sqrt(60 n)) / 2), rescaled by
  1e-250 whenever it passes 1e250, normalised by J0 + 2 (J2 + J4 + ...) = 1; negative n and x
  by the parities J_-n = (-1)**n J_n, J_n(-x) = (-1)**n J_n(x), Y_-n = (-1)**n Y_n.
- I0, I1: the series (positive terms) below 25, above it e**x / sqrt(2 pi x) times the
  asymptotic series (e**(x/2) twice, so results up to the fp64 maximum stay finite).

Errors (test_libdevice_bessel.py): J and Y absolute (as CUDA states them: near their zeros
relative accuracy is not kept), I relative.
"""
from ..control import static_range
from ..asm import map_elementwise
from ..core import float64, int32, static_assert, where
from ..function import jit
from .libdevice_common import check_float as _check, narrow as _narrow, wide as _wide
from ..math import abs, cos, exp, floor, log, sin, sqrt
from ..random import to_tensor

__all__ = ["j0", "j1", "y0", "y1", "jn", "yn", "cyl_bessel_i0", "cyl_bessel_i1"]

TWO_OVER_PI = 0.6366197723675814
INV_PI = 0.3183098861837907
EULER = 0.5772156649015329
INV_SQRT_PI = 0.5641895835477563
INV_SQRT_2PI = 0.3989422804014327
INF = float("inf")
NAN = float("nan")
MILLER_N = 64


@jit
def _series(x):
    """(J0, J1, Y0, Y1) for 0 < x < 2 by the power series."""
    q = 0.25 * x * x
    t0 = x * 0.0 + 1.0  # (-q)**k / k!**2
    t1 = x * 0.0 + 1.0  # (-q)**k / (k! (k+1)!)
    j0 = t0
    j1 = t1
    h = x * 0.0  # H_k
    s0 = x * 0.0  # sum (-1)**(k+1) H_k q**k / k!**2
    psi = -2.0 * EULER + 1.0  # psi(k+1) + psi(k+2) at k = 0
    s1 = psi * t1  # sum (psi(k+1) + psi(k+2)) (-q)**k / (k! (k+1)!)
    for k in static_range(1, 24):
        t0 = t0 * (-q) / (k * k)
        t1 = t1 * (-q) / (k * (k + 1))
        h = h + 1.0 / k
        j0 = j0 + t0
        j1 = j1 + t1
        s0 = s0 - h * t0
        psi = psi + 1.0 / k + 1.0 / (k + 1)
        s1 = s1 + psi * t1
    half = 0.5 * x
    j1 = half * j1
    lg = log(half)
    y0 = TWO_OVER_PI * ((lg + EULER) * j0 + s0)
    y1 = -TWO_OVER_PI / x + TWO_OVER_PI * lg * j1 - INV_PI * half * s1
    return j0, j1, y0, y1


@jit
def _miller(x):
    """(J0, J1, Y0, Y1) for 2 <= x < 20: backward recurrence and Neumann's series."""
    inv = 1.0 / x
    jn1 = x * 0.0  # J(k+1)
    jk = x * 0.0 + 1e-30  # J(k), k = MILLER_N (even)
    norm = x * 0.0
    t0 = x * 0.0  # sum (-1)**k J(2k) / k
    t1 = x * 0.0  # sum (-1)**k (J(2k-1) - J(2k+1)) / k
    jodd_above = x * 0.0  # J(2k+1) once k's odd neighbours are known
    for i in static_range(MILLER_N):
        k = MILLER_N - i
        jm1 = (2.0 * k) * inv * jk - jn1  # J(k-1)
        if k % 2 == 0:
            norm = norm + 2.0 * jk
            sgn = 1.0 - 2.0 * ((k // 2) % 2)
            t0 = t0 + (sgn / (k // 2)) * jk
            # J(k-1) - J(k+1) for the term k/2
            t1 = t1 + (sgn / (k // 2)) * (jm1 - jn1)
        jn1 = jk
        jk = jm1
    # now jk = J(0), jn1 = J(1) (unnormalised)
    s = 1.0 / (norm + jk)
    j0 = jk * s
    j1 = jn1 * s
    lg = log(0.5 * x) + EULER
    y0 = TWO_OVER_PI * (lg * j0 - 2.0 * t0 * s)
    y1 = TWO_OVER_PI * (lg * j1 - j0 * inv) + TWO_OVER_PI * t1 * s
    return j0, j1, y0, y1


@jit
def _hankel_pq(x, mu):
    """Hankel's P and Q of order nu (mu = 4 nu**2) at x >= 20."""
    r = 1.0 / x
    a = x * 0.0 + 1.0  # a_k(nu) / x**k
    p = a
    q = x * 0.0
    for k in static_range(1, 29):
        a = a * ((mu - (2 * k - 1) * (2 * k - 1)) / (8.0 * k)) * r
        if k % 4 == 1:
            q = q + a
        elif k % 4 == 2:
            p = p - a
        elif k % 4 == 3:
            q = q - a
        else:
            p = p + a
    return p, q


@jit
def _hankel(x):
    """(J0, J1, Y0, Y1) for x >= 20."""
    c = cos(x)
    s = sin(x)
    amp = sqrt(2.0 / x) * INV_SQRT_PI  # sqrt(2 / (pi x))
    amp = amp * 0.7071067811865476  # cos(x - pi/4) = (c + s) / sqrt 2, ...
    p0, q0 = _hankel_pq(x, 0.0)
    p1, q1 = _hankel_pq(x, 4.0)
    j0 = amp * (p0 * (c + s) - q0 * (s - c))
    y0 = amp * (p0 * (s - c) + q0 * (c + s))
    # order 1: chi = x - 3 pi / 4: cos chi = (s - c) / sqrt 2, sin chi = -(s + c) / sqrt 2
    j1 = amp * (p1 * (s - c) + q1 * (s + c))
    y1 = amp * (q1 * (s - c) - p1 * (s + c))
    return j0, j1, y0, y1


@jit
def _jy(x):
    """(J0, J1, Y0, Y1) of a = |x| (fp64); Y of negative x NaN, of 0 -inf."""
    a = abs(x)
    sj0, sj1, sy0, sy1 = _series(where(a < 2.0, a, 1.0))
    mj0, mj1, my0, my1 = _miller(where((a >= 2.0) & (a < 20.0), a, 2.0))
    hj0, hj1, hy0, hy1 = _hankel(where((a >= 20.0) & (a < INF), a, 20.0))
    small = a < 2.0
    mid = a < 20.0
    j0 = where(small, sj0, where(mid, mj0, hj0))
    j1 = where(small, sj1, where(mid, mj1, hj1))
    y0 = where(small, sy0, where(mid, my0, hy0))
    y1 = where(small, sy1, where(mid, my1, hy1))
    j0 = where(a == INF, 0.0, where(a == 0.0, 1.0, j0))
    j1 = where(a == INF, 0.0, where(a == 0.0, 0.0, j1))
    y0 = where(a == INF, 0.0, where(a == 0.0, -INF, y0))
    y1 = where(a == INF, 0.0, where(a == 0.0, -INF, y1))
    y0 = where((x < 0) | (x != x), NAN, y0)
    y1 = where((x < 0) | (x != x), NAN, y1)
    j0 = where(x != x, NAN, j0)
    j1 = where(x != x, NAN, j1)
    return j0, j1, y0, y1


@jit
def j0(x):
    _check(x, "libdevice.j0 takes fp32 or fp64 (as Triton)")
    r, _, _, _ = _jy(_wide(x))
    return _narrow(r, x)


@jit
def j1(x):
    _check(x, "libdevice.j1 takes fp32 or fp64 (as Triton)")
    _, r, _, _ = _jy(_wide(x))
    r = where(_wide(x) < 0, -r, r)
    return _narrow(r, x)


@jit
def y0(x):
    _check(x, "libdevice.y0 takes fp32 or fp64 (as Triton)")
    _, _, r, _ = _jy(_wide(x))
    return _narrow(r, x)


@jit
def y1(x):
    _check(x, "libdevice.y1 takes fp32 or fp64 (as Triton)")
    _, _, _, r = _jy(_wide(x))
    return _narrow(r, x)


@jit
def _yn_scalar(nf, x, a, b):
    """Y_n(x) for n = nf >= 2, x > 0, from a = Y0(x), b = Y1(x)."""
    k = x * 0.0 + 1.0
    while k < nf:
        c = (2.0 * k / x) * b - a
        c = where(abs(b) == INF, b, c)  # past the overflow: stay at -inf
        a = b
        b = c
        k = k + 1.0
    return b


@jit
def _jn_scalar(nf, x, j0v, j1v):
    """J_n(x) for n = nf >= 2, x > 0 finite, from j0v = J0(x), j1v = J1(x)."""
    r = x * 0.0
    if x > nf:
        a = j0v
        b = j1v
        k = x * 0.0 + 1.0
        while k < nf:
            c = (2.0 * k / x) * b - a
            a = b
            b = c
            k = k + 1.0
        r = b
    else:
        k = 2.0 * floor(0.5 * (nf + 16.0 + sqrt(60.0 * nf)))
        jp = x * 0.0  # J(k+1)
        jk = x * 0.0 + 1e-30  # J(k)
        norm = x * 0.0  # 2 (J2 + J4 + ...) so far
        res = x * 0.0
        while k > 0.5:
            jm = (2.0 * k / x) * jk - jp
            if k == nf:
                res = jk
            if k - 2.0 * floor(0.5 * k) == 0.0:
                norm = norm + 2.0 * jk
            jp = jk
            jk = jm
            k = k - 1.0
            if abs(jk) > 1e250:
                jk = jk * 1e-250
                jp = jp * 1e-250
                norm = norm * 1e-250
                res = res * 1e-250
        r = res / (norm + jk)
    return r


@jit
def _order(n):
    n = to_tensor(n)
    static_assert(n.dtype == int32, "libdevice.jn / yn: the order n is int32 (as Triton)")
    na = abs(n)
    return n, na, na.to(float64)


@jit
def jn(n, x):
    _check(x, "libdevice.jn takes (int32, fp32) or (int32, fp64) (as Triton)")
    n, na, nf = _order(n)
    w = _wide(x)
    a = abs(w)
    c0, c1, _, _ = _jy(w)  # J0(|x|), J1(|x|)
    ok = (a > 0.0) & (a < INF) & (na >= 2)
    big = map_elementwise(_jn_scalar, where(ok, nf, 2.0), where(ok, a, 1.0), where(ok, c0, 0.0),
                          where(ok, c1, 0.0))
    r = where(na == 0, c0, where(na == 1, c1, big))
    r = where((na >= 2) & ((a == 0.0) | (a == INF)), 0.0, r)
    r = where(((na % 2) == 1) & ((n < 0) != (w < 0)), -r, r)
    return _narrow(where(w != w, w, r), x)


@jit
def yn(n, x):
    _check(x, "libdevice.yn takes (int32, fp32) or (int32, fp64) (as Triton)")
    n, na, nf = _order(n)
    w = _wide(x)
    _, _, c0, c1 = _jy(w)  # Y0(x), Y1(x): NaN below 0, -inf at 0
    ok = (w > 0.0) & (w < INF) & (na >= 2)
    big = map_elementwise(_yn_scalar, where(ok, nf, 2.0), where(ok, w, 1.0), where(ok, c0, 0.0),
                          where(ok, c1, 0.0))
    r = where(na == 0, c0, where(na == 1, c1, where(ok, big, c1)))
    r = where(((na % 2) == 1) & (n < 0), -r, r)
    return _narrow(r, x)


@jit
def _bessel_i(x, nu):
    """I_nu(|x|) for nu 0 or 1 (fp64)."""
    a = abs(x)
    s = where(a < 25.0, a, 1.0)
    q = 0.25 * s * s
    t = s * 0.0 + 1.0
    if nu == 1:
        t = 0.5 * s
    acc = t
    for k in static_range(1, 60):
        t = t * q / (k * (k + nu))
        acc = acc + t
    b = where(a >= 25.0, a, 25.0)
    r = 1.0 / b
    term = b * 0.0 + 1.0
    ser = term
    mu = 4.0 * nu * nu
    for k in static_range(1, 26):
        term = term * (-(mu - (2 * k - 1) * (2 * k - 1)) / (8.0 * k)) * r
        ser = ser + term
    e = exp(0.5 * b)
    big = e * ((e * INV_SQRT_2PI / sqrt(b)) * ser)
    return where(a < 25.0, acc, where(a != a, NAN, where(a == INF, INF, big)))


@jit
def cyl_bessel_i0(x):
    _check(x, "libdevice.cyl_bessel_i0 takes fp32 or fp64 (as Triton)")
    return _narrow(_bessel_i(_wide(x), 0), x)


@jit
def cyl_bessel_i1(x):
    _check(x, "libdevice.cyl_bessel_i1 takes fp32 or fp64 (as Triton)")
    w = _wide(x)
    r = _bessel_i(w, 1)
    return _narrow(where(w < 0, -r, r), x)
