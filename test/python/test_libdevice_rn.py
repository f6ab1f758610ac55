"""libdevice's `remainder` (IEEE remainder, exact, from fmod) and `rsqrt_rn` (correctly
rounded 1/sqrt, fp32): interpreted and compiled for sm_90a (run on gpu_sim) against exact
references on random inputs (ties, subnormals, powers of two, signed zeros, inf, NaN), gfx942
compile-only, and the proof that rsqrt_rn's double rounding is exact for every fp32 input.
The GPU half is test_language_extras_gpu.py."""
import math
from fractions import Fraction

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.language.extra import libdevice

import gpu_sim

N = 256
NP = {"fp32": np.float32, "fp64": np.float64}
TL = {"fp32": tl.float32, "fp64": tl.float64}


@tilework.jit
def k_rem(x, y, o):
    i = tl.arange(0, 256)
    tl.store(o + i, libdevice.remainder(tl.load(x + i), tl.load(y + i)))


@tilework.jit
def k_rsqrt(x, o):
    i = tl.arange(0, 256)
    tl.store(o + i, libdevice.rsqrt_rn(tl.load(x + i)))


def _run(kernel, ins, dt, target="sm_90a"):
    names = ["x", "y"][:len(ins)]
    sig = {n: tl.pointer_type(TL[dt]) for n in names} | {"o": tl.pointer_type(TL[dt])}
    oi = np.zeros(N, NP[dt])
    tilework.jit(kernel.fn, interpret=True)[(1,)](*ins, oi)
    ck = compile(ASTSource(kernel, sig, {}, {}), target, cache=False)
    oc = np.zeros(N, NP[dt])
    gpu_sim.run(ck, (1, 1, 1), *ins, oc)
    return oi, oc


def remainder_inputs(dt, rng):
    t = NP[dt]
    y = (rng.standard_normal(N) * np.exp2(rng.integers(-20, 20, N))).astype(t)
    # ties and multiples: y of 12 significant bits, |q| < 2**10, so (q + 1/2) y is exact
    y[:128] = (rng.integers(1, 1 << 12, 128) * np.exp2(rng.integers(-20, 20, 128))).astype(t)
    q = rng.integers(-(1 << 10), 1 << 10, N).astype(np.float64)
    x = np.empty(N, t)
    x[:64] = ((q[:64] + 0.5) * y[:64].astype(np.float64)).astype(t)  # ties
    x[64:128] = (q[64:128] * y[64:128].astype(np.float64)).astype(t)  # multiples: +-0 results
    x[128:] = (rng.standard_normal(N - 128) * np.exp2(rng.integers(-30, 60, N - 128))).astype(t)
    x[200:208] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5.0, -7.5, 1e-40], t)
    y[200:208] = np.array([3.0, 3.0, 2.0, 2.0, 1.0, 0.0, np.inf, 3e-41], t)
    x[208:216] = t(np.finfo(t).max) * np.array([1, -1, 0.75, 1, 1, -1, 0.5, 1], t)
    y[208:216] = t(np.finfo(t).max) * np.array([0.75, 0.6, 1, 0.5, 0.3, 0.9, 0.75, 1], t)
    return x, y


def remainder_ref(x, y):
    out = np.empty(N, x.dtype)
    for i, (a, b) in enumerate(zip(x.astype(np.float64), y.astype(np.float64))):
        out[i] = math.remainder(a, b) if math.isfinite(a) and b != 0 and not math.isnan(b) \
            else math.nan
    return out


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
def test_remainder(dt):
    x, y = remainder_inputs(dt, np.random.default_rng(1 if dt == "fp32" else 2))
    want = remainder_ref(x, y)
    ties = np.abs(np.abs(want[:64]) - np.abs(y[:64]) / 2) == 0
    assert ties.all()  # the halfway cases, rounded to both sides (even quotients)
    assert (want[:64][ties] > 0).any() and (want[:64][ties] < 0).any()
    for got in _run(k_rem, [x, y], dt):
        np.testing.assert_array_equal(got, want)  # NaNs match NaNs
        num = ~np.isnan(want)
        assert (np.signbit(got) == np.signbit(want))[num].all()  # zeros keep x's sign


def rsqrt_inputs(rng):
    x = np.empty(N, np.float32)
    x[:96] = (rng.random(96) * np.exp2(rng.integers(-126, 127, 96))).astype(np.float32)
    x[96:128] = np.exp2(rng.integers(-149, 128, 32)).astype(np.float32)  # powers of two
    x[128:160] = (rng.integers(1, 1 << 23, 32) * 2.0 ** -149).astype(np.float32)  # subnormal
    u = rng.integers(0x3F800000, 0x40800000, 64, dtype=np.uint32)  # [1, 4): every mantissa
    x[160:224] = u.view(np.float32)
    x[224:232] = np.array([0.0, -0.0, np.inf, -1.0, np.nan, -np.inf, 1.0, 4.0], np.float32)
    x[232:] = (rng.random(N - 232) * 1e30).astype(np.float32)
    return x


def rsqrt_exact_ok(x: np.float32, r: np.float32) -> bool:
    """r is 1/sqrt(x) correctly rounded (x > 0 finite): the exact value lies strictly between
    the midpoints around r (never on one: 1/x is no square of a 25-bit midpoint)."""
    below = np.nextafter(r, np.float32(0))
    above = np.nextafter(r, np.float32(np.inf))
    lo = (Fraction(float(below)) + Fraction(float(r))) / 2
    hi = (Fraction(float(r)) + Fraction(float(above))) / 2
    xv = Fraction(float(x))
    return lo * lo * xv < 1 < hi * hi * xv


def test_rsqrt_rn():
    x = rsqrt_inputs(np.random.default_rng(3))
    with np.errstate(all="ignore"):
        want = (1.0 / np.sqrt(x.astype(np.float64))).astype(np.float32)
    pos = np.isfinite(x) & (x > 0)
    assert all(rsqrt_exact_ok(a, r) for a, r in zip(x[pos], want[pos]))  # the reference is exact
    assert want[225] == -np.inf and want[224] == np.inf and want[226] == 0
    for got in _run(k_rsqrt, [x], "fp32"):
        np.testing.assert_array_equal(got, want)


def test_rsqrt_rn_double_rounding_is_exact_for_every_fp32():
    """1/sqrt in fp64 (sqrt and division each correctly rounded, as on both GPUs) rounded to
    fp32 is the correctly rounded fp32 result for every positive fp32 x: rsqrt(4x) =
    rsqrt(x) / 2 exactly, so [1, 4) (2**24 inputs, normal results in (0.5, 1]) decides all of
    them, subnormal inputs included.  Where fp64's result is within 2**-49 (relative) of an
    fp32 midpoint (its error is below 2**-52) the rounding is checked exactly."""
    k = np.arange(1 << 23, dtype=np.float64)
    checked = 0
    for base, step in ((1.0, 2.0 ** -23), (2.0, 2.0 ** -22)):
        for part in np.array_split(k, 4):
            xs = base + part * step
            r64 = 1.0 / np.sqrt(xs)
            r32 = r64.astype(np.float32).astype(np.float64)
            half_ulp = np.where(r32 < 1.0, 2.0 ** -25, 2.0 ** -24)
            d = np.minimum(np.abs(r64 - (r32 - 2.0 ** -25)), np.abs(r64 - (r32 + half_ulp)))
            for i in np.flatnonzero(d / r64 < 2.0 ** -49):
                assert rsqrt_exact_ok(np.float32(xs[i]), np.float32(r32[i])), xs[i]
                checked += 1
    assert checked >= 1  # the close calls exist (and were checked exactly)


def test_gfx942_compiles():
    sig = {"x": tl.pointer_type(tl.float32), "o": tl.pointer_type(tl.float32)}
    asm = compile(ASTSource(k_rsqrt, sig, {}, {}), "gfx942", cache=False).asm["amdgcn"]
    assert "v_sqrt_f64" in asm or "v_rsq_f64" in asm
    sig = {"x": tl.pointer_type(tl.float64), "y": tl.pointer_type(tl.float64),
           "o": tl.pointer_type(tl.float64)}
    asm = compile(ASTSource(k_rem, sig, {}, {}), "gfx942", cache=False).asm["amdgcn"]
    assert "global_store_dwordx2" in asm


def test_rsqrt_rn_takes_fp32_only():
    sig = {"x": tl.pointer_type(tl.float64), "o": tl.pointer_type(tl.float64)}
    with pytest.raises(tilework.CompilationError, match="libdevice.rsqrt_rn takes fp32"):
        compile(ASTSource(k_rsqrt, sig, {}, {}), "sm_90a", cache=False)
