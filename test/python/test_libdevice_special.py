"""libdevice's special functions (`language/extra/libdevice_special.py`): erfcx, erfinv,
erfcinv, normcdf, normcdfinv, lgamma, tgamma, interpreted, compiled for sm_90a (run on
gpu_sim) and for gfx942 (run on the SIMT emulator; not tgamma, whose loop it lacks), their error in ulp against mpmath (40 digits) on random inputs over each domain
(and its tails) with the special values checked exactly; gfx942 and sm_80 compile; the dtype
errors.  The bounds are the measured maxima, rounded up: fp32 is computed in fp64 and rounds
once (half an ulp, 1 allowed); fp64's are in the module's docstring."""
import mpmath as mp
import numpy as np
import pytest

import tilework.language as tl

from libdevice_checks import N, NP, assert_compiles, assert_rejects_ints, run_both

mp.mp.dps = 40


def _erfcinv(z):
    z = mp.mpf(z)
    if z > mp.mpf("1e-5"):
        return -mp.erfinv(z - 1)
    return mp.findroot(lambda s: mp.log(mp.erfc(s)) - mp.log(z), mp.sqrt(-mp.log(z)))


REF = {
    "erfcx": lambda v: mp.exp(mp.mpf(v) ** 2) * mp.erfc(v),
    "erfinv": lambda v: mp.erfinv(v),
    "erfcinv": _erfcinv,
    "normcdf": lambda v: mp.ncdf(v),
    "normcdfinv": lambda v: -mp.sqrt(2) * _erfcinv(2 * mp.mpf(v)),
    "lgamma": lambda v: mp.log(abs(mp.gamma(v))),
    "tgamma": lambda v: mp.gamma(v),
}
# (domain of the random inputs, fp64 bound in ulp)
CASES = {"erfcx": ((-8, 30), 4), "erfinv": ((-1, 1), 6), "erfcinv": ((0, 2), 6),
         "normcdf": ((-35, 9), 8), "normcdfinv": ((0, 1), 6), "lgamma": ((-30, 250), 4),
         "tgamma": ((-170, 171.5), 4)}
EXACT = {  # special values: (x, result)
    "erfcx": [(0.0, 1.0), (np.inf, 0.0), (-np.inf, np.inf), (np.nan, np.nan)],
    "erfinv": [(0.0, 0.0), (1.0, np.inf), (-1.0, -np.inf), (1.5, np.nan), (np.nan, np.nan)],
    "erfcinv": [(1.0, 0.0), (0.0, np.inf), (2.0, -np.inf), (-1.0, np.nan), (np.nan, np.nan)],
    "normcdf": [(0.0, 0.5), (np.inf, 1.0), (-np.inf, 0.0), (np.nan, np.nan)],
    "normcdfinv": [(0.5, 0.0), (0.0, -np.inf), (1.0, np.inf), (np.nan, np.nan)],
    "lgamma": [(1.0, 0.0), (2.0, 0.0), (0.0, np.inf), (-3.0, np.inf), (np.inf, np.inf),
               (-np.inf, np.inf), (np.nan, np.nan)],
    "tgamma": [(1.0, 1.0), (5.0, 24.0), (0.0, np.inf), (-0.0, -np.inf), (-3.0, np.nan),
               (np.inf, np.inf), (-np.inf, np.nan), (np.nan, np.nan)],
}


def inputs(fn, t, rng):
    (lo, hi), _ = CASES[fn]
    x = (lo + (hi - lo) * rng.random(N)).astype(t)
    deep = 1000 if t == np.float64 else 120
    if fn == "erfinv":  # toward +-1
        x[:32] = ((1 - np.exp2(-rng.integers(1, 52 if t == np.float64 else 24, 32)))
                  * rng.choice([-1, 1], 32)).astype(t)
    if fn in ("erfcinv", "normcdfinv"):  # toward 0
        x[:32] = np.exp2(-rng.integers(1, deep, 32) - rng.random(32)).astype(t)
    if fn in ("lgamma", "tgamma"):  # near the roots 1 and 2, and small
        x[:16] = (rng.choice([1.0, 2.0], 16) + rng.standard_normal(16) * 1e-6).astype(t)
        x[16:24] = (rng.standard_normal(8) * 1e-30).astype(t)
    ex = EXACT[fn]
    x[-len(ex):] = [v for v, _ in ex]
    return x


def ulps(got, want, t):
    wf = t(float(want))
    if not np.isfinite(wf):
        return 0.0 if got == wf else np.inf
    sp = np.spacing(np.abs(wf)) if wf != 0 else np.finfo(t).smallest_subnormal
    return float(abs(mp.mpf(float(got)) - want) / float(sp))


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
@pytest.mark.parametrize("fn", list(CASES))
def test_special(fn, dt):
    t = NP[dt]
    x = inputs(fn, t, np.random.default_rng(len(fn) + (dt == "fp64")))
    n_ex = len(EXACT[fn])
    bound = 1.0 if dt == "fp32" else CASES[fn][1]
    wants = [REF[fn](float(v)) for v in x[:-n_ex]]
    for got in run_both(fn, x, dt, emulated=fn != "tgamma"):  # (tgamma's loop: not emulated)
        errs = [ulps(g, w, t) for g, w in zip(got[:-n_ex], wants)]
        worst = int(np.argmax(errs))
        assert errs[worst] <= bound, (fn, x[worst], got[worst], float(wants[worst]), errs[worst])
        want_ex = np.array([w for _, w in EXACT[fn]], t)
        np.testing.assert_array_equal(got[-n_ex:], want_ex)


def test_tgamma_fp64_small_and_moderate():
    """tgamma's product of up to 179 shifts is compensated: a few ulp at any size."""
    rng = np.random.default_rng(5)
    x = ((0.5 + 30 * rng.random(N)) * rng.choice([-1, 1], N)).astype(np.float64)
    x[:8] = [171.5, 171.7, 1000.0, -0.5, 0.5, 12.0, 100.0, 170.0]
    for got in run_both("tgamma", x, "fp64", emulated=False):
        errs = [ulps(g, mp.gamma(float(v)), np.float64) for g, v in zip(got, x)]
        assert max(errs) <= 4, x[int(np.argmax(errs))]
        assert got[1] == np.inf and got[2] == np.inf  # beyond the fp64 range


@pytest.mark.parametrize("target", ["gfx942", "sm_80"])
def test_compiles(target):
    for fn in CASES:
        assert_compiles(fn, tl.float32, target)


@pytest.mark.parametrize("fn", list(CASES))
def test_rejects_ints(fn):
    assert_rejects_ints(fn)
