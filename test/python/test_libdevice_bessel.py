"""libdevice's Bessel functions (`language/extra/libdevice_bessel.py`): j0, j1, y0, y1,
cyl_bessel_i0, cyl_bessel_i1, interpreted and compiled for sm_90a (run on gpu_sim) and gfx942
(run on the SIMT emulator; jn and yn on gpu_sim only: their loop is not emulated) against
mpmath (40 digits) on random inputs across the three methods' ranges (series below 2, Miller
below 20, Hankel above; I's series below 25, asymptotic above), negative ones, and the
special values exactly; gfx942 and sm_80 compile; the dtype errors.  J and Y are measured
absolutely where |f| < 1 (their zeros), else relatively, in units of the dtype's epsilon; I
relatively.  The bounds are the measured maxima rounded up."""
import mpmath as mp
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.language.extra import libdevice

import gpu_sim
from libdevice_checks import N, NP, TL, assert_compiles, assert_rejects_ints, run_both

mp.mp.dps = 40


REF = {"j0": lambda v: mp.besselj(0, v), "j1": lambda v: mp.besselj(1, v),
       "y0": lambda v: mp.bessely(0, v), "y1": lambda v: mp.bessely(1, v),
       "cyl_bessel_i0": lambda v: mp.besseli(0, v), "cyl_bessel_i1": lambda v: mp.besseli(1, v)}
BOUND = {"fp32": 1.0, "fp64": 4.0}  # in eps; I in fp64: 8
EXACT = {
    "j0": [(0.0, 1.0), (np.inf, 0.0), (-np.inf, 0.0), (np.nan, np.nan)],
    "j1": [(0.0, 0.0), (np.inf, 0.0), (-np.inf, 0.0), (np.nan, np.nan)],
    "y0": [(0.0, -np.inf), (-1.0, np.nan), (np.inf, 0.0), (np.nan, np.nan)],
    "y1": [(0.0, -np.inf), (-1.0, np.nan), (np.inf, 0.0), (np.nan, np.nan)],
    "cyl_bessel_i0": [(0.0, 1.0), (np.inf, np.inf), (-np.inf, np.inf), (np.nan, np.nan)],
    "cyl_bessel_i1": [(0.0, 0.0), (np.inf, np.inf), (-np.inf, -np.inf), (np.nan, np.nan)],
}


def inputs(fn, t, rng):
    if fn.startswith("cyl"):
        top = 88.0 if t == np.float32 else 700.0
        x = (rng.random(N) * top).astype(t)
        x[:32] = (rng.random(32) * 30).astype(t)  # series and its switch at 25
    else:
        x = (rng.random(N) * 60).astype(t)
        x[:32] = (rng.random(32) * 2.5).astype(t)  # the series
        x[32:40] = np.exp2(-rng.integers(1, 40, 8)).astype(t)  # small
        x[40:48] = (200 + rng.random(8) * 5000).astype(t)  # far in Hankel's range
    if not fn.startswith("y"):
        x[48:64] *= -1
    ex = EXACT[fn]
    x[-len(ex):] = [v for v, _ in ex]
    return x


def error(fn, got, want, t):
    """J, Y: |got - want| / max(1, |want|); I: relative; in eps of t."""
    g = mp.mpf(float(got))
    scale = abs(want) if fn.startswith("cyl") else max(1, abs(want))
    return float(abs(g - want) / scale) / float(np.finfo(t).eps)


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", list(REF))
def test_bessel(fn, dt):
    t = NP[dt]
    x = inputs(fn, t, np.random.default_rng(len(fn) * 3 + (dt == "fp64")))
    n_ex = len(EXACT[fn])
    bound = 8.0 if (dt == "fp64" and fn.startswith("cyl")) else BOUND[dt]
    wants = [REF[fn](float(v)) for v in x[:-n_ex]]
    for got in run_both(fn, x, dt):
        errs = []
        for g, w in zip(got[:-n_ex], wants):
            wf = t(float(w))
            errs.append(error(fn, g, w, t) if np.isfinite(wf) else (0.0 if g == wf else np.inf))
        worst = int(np.argmax(errs))
        assert errs[worst] <= bound, (fn, x[worst], got[worst], float(wants[worst]), errs[worst])
        np.testing.assert_array_equal(got[-n_ex:], np.array([w for _, w in EXACT[fn]], t))


@pytest.mark.parametrize("target", ["gfx942", "sm_80"])
def test_compiles(target):
    for fn in ("j0", "y1", "cyl_bessel_i1"):
        assert_compiles(fn, tl.float64, target)


@pytest.mark.parametrize("fn", list(REF))
def test_rejects_ints(fn):
    assert_rejects_ints(fn)


@tilework.jit
def k_order(n, x, o, FN: tl.constexpr):
    i = tl.arange(0, 128)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(n + i), tl.load(x + i)))


def order_inputs(t, rng):
    n = rng.integers(-12, 40, N).astype(np.int32)
    x = (rng.random(N) * 60).astype(t)
    x[:24] = (rng.random(24) * 2).astype(t)  # n > x: Miller's recurrence, huge Y_n
    x[24:32] = -x[24:32]  # J's parity (Y: NaN)
    x[32:36] = [0.0, np.inf, np.nan, 1e-30]
    n[36:40] = [0, 1, -1, 2]
    return n, x


def run_order(fn, n, x, dt):
    sig = {"n": tl.pointer_type(tl.int32), "x": tl.pointer_type(TL[dt]),
           "o": tl.pointer_type(TL[dt])}
    oi = np.zeros(N, NP[dt])
    tilework.jit(k_order.fn, interpret=True)[(1,)](n, x, oi, FN=fn)
    ck = compile(ASTSource(k_order, sig, {"FN": fn}, {}), "sm_90a", cache=False)
    oc = np.zeros(N, NP[dt])
    gpu_sim.run(ck, (1, 1, 1), n, x, oc)
    return oi, oc


def order_errors(fn, n, x, got, t):
    errs = []
    for a, b, g in zip(n, x, got):
        if np.isnan(b) or (fn == "yn" and b < 0):
            errs.append(0.0 if np.isnan(g) else np.inf)
            continue
        w = (mp.besselj if fn == "jn" else mp.bessely)(int(a), float(b)) if np.isfinite(b) \
            else mp.mpf(0)
        wf = t(float(w)) if abs(w) < 1e308 else t(np.inf if w > 0 else -np.inf)
        if not np.isfinite(wf):
            errs.append(0.0 if g == wf else np.inf)
            continue
        errs.append(float(abs(mp.mpf(float(g)) - w) / max(1, abs(w))) / float(np.finfo(t).eps))
    return errs


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", ["jn", "yn"])
def test_integer_order(fn, dt):
    """Measured: jn within 1 fp64 epsilon, yn 9.3 (the forward recurrence, up to about n / 4
    epsilons at order n; n < 40 here)."""
    t = NP[dt]
    n, x = order_inputs(t, np.random.default_rng(17 + (dt == "fp64")))
    bound = 1.0 if dt == "fp32" else {"jn": 2.0, "yn": 12.0}[fn]
    for got in run_order(fn, n, x, dt):
        errs = order_errors(fn, n, x, got, t)
        worst = int(np.argmax(errs))
        assert errs[worst] <= bound, (fn, n[worst], x[worst], got[worst], errs[worst])


def test_integer_order_rejects():
    sig = {"n": tl.pointer_type(tl.int64), "x": tl.pointer_type(tl.float32),
           "o": tl.pointer_type(tl.float32)}
    with pytest.raises(tilework.CompilationError, match="the order n is int32"):
        compile(ASTSource(k_order, sig, {"FN": "jn"}, {}), "sm_90a", cache=False)
    sig = {"n": tl.pointer_type(tl.int32), "x": tl.pointer_type(tl.int32),
           "o": tl.pointer_type(tl.float32)}
    with pytest.raises(tilework.CompilationError, match=r"libdevice.yn takes \(int32, fp32\)"):
        compile(ASTSource(k_order, sig, {"FN": "yn"}, {}), "sm_90a", cache=False)
    sig = {"n": tl.pointer_type(tl.int32), "x": tl.pointer_type(tl.float64),
           "o": tl.pointer_type(tl.float64)}
    asm = compile(ASTSource(k_order, sig, {"FN": "jn"}, {}), "gfx942", cache=False).asm["amdgcn"]
    assert "global_store_dwordx2" in asm
