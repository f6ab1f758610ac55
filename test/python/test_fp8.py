"""float8 tiles (fp8e4nv = f8E4M3FN, fp8e5 = f8E5M2): loads, stores and conversions.

The interpreter is checked against a numpy reference written here (decoder over all 256 bit
patterns; a nearest-even, saturating encoder); the compiled kernels are checked to compile on
sm_80, sm_90a and gfx942 and run (sm_80 `llir`) on the CPU through gpu_sim, bit for bit
against the same reference."""
import os
import sys

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

sys.path.insert(0, os.path.dirname(__file__))
import gpu_sim  # noqa: E402

KINDS = {"fp8e4nv": tl.float8e4nv, "fp8e5": tl.float8e5}
MAXBITS = {"fp8e4nv": 0x7E, "fp8e5": 0x7B}
MAXVAL = {"fp8e4nv": 448.0, "fp8e5": 57344.0}


def ref_decode(bits, kind):
    b = np.asarray(bits, np.int64)
    s = np.where(b & 0x80, -1.0, 1.0)
    if kind == "fp8e4nv":
        e, m = (b >> 3) & 15, b & 7
        v = np.where(e == 0, m * 2.0 ** -9, (1 + m / 8) * 2.0 ** (e - 7))
        v = np.where((e == 15) & (m == 7), np.nan, v)
    else:
        e, m = (b >> 2) & 31, b & 3
        v = np.where(e == 0, m * 2.0 ** -16, (1 + m / 4) * 2.0 ** (e - 15))
        v = np.where(e == 31, np.where(m == 0, np.inf, np.nan), v)
    return (s * v).astype(np.float32)


def ref_encode(x, kind):
    """Nearest finite fp8 (ties to the even pattern), finite overflow saturating, inf kept in
    e5m2 (e4m3fn has none: saturated); NaN -> 0x7f | sign."""
    x = np.asarray(x, np.float32)
    mx = MAXBITS[kind]
    table = ref_decode(np.arange(mx + 1), kind).astype(np.float64)
    a = np.abs(x.astype(np.float64))
    hi = np.clip(np.searchsorted(table, a), 0, mx)
    lo = np.clip(hi - 1, 0, mx)
    dlo, dhi = np.abs(a - table[lo]), np.abs(table[hi] - a)
    idx = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
    idx = np.where(a >= table[mx], mx, idx)
    sign = np.where(np.signbit(x), 0x80, 0)
    if kind == "fp8e5":
        idx = np.where(np.isinf(x), 0x7C, idx)
    idx = np.where(np.isnan(x), 0x7F, idx)
    return (idx | sign).astype(np.uint8)


def _same_bits_or_both_nan(a, b, kind):
    """Equal bit patterns, except that NaNs need only both be NaN (payloads may differ:
    MLIR folds truncf(extf(x)) into x, keeping the payload the conversion would canonicalize)."""
    nan = np.isnan(ref_decode(b, kind))
    np.testing.assert_array_equal(a[~nan], b[~nan])
    assert np.all(np.isnan(ref_decode(a[nan], kind)))


def boundary_values(kind):
    """Every fp8 value, the midpoints between neighbours and their float32 neighbours, the
    overflow edge, infinities, NaN and zeros, both signs."""
    mx = MAXBITS[kind]
    t = ref_decode(np.arange(mx + 1), kind)
    mids = ((t[:-1].astype(np.float64) + t[1:]) / 2).astype(np.float32)
    top = np.float32(MAXVAL[kind] + (t[mx] - t[mx - 1]) / 2)
    v = np.concatenate([t, mids, np.nextafter(mids, np.float32(0)),
                        np.nextafter(mids, np.float32(np.inf)),
                        [top, np.nextafter(top, np.float32(0)), np.float32(1e30),
                         np.float32(np.inf), np.float32(np.nan), np.float32(1e-30),
                         np.float32(1e-45), np.float32(0.0)]]).astype(np.float32)
    return np.concatenate([v, -v]).astype(np.float32)


@tilework.jit
def k_to_f32(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, tl.load(x + o, mask=m).to(tl.float32), mask=m)


@tilework.jit
def k_from_f32(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, tl.load(x + o, mask=m).to(y.dtype.element_ty), mask=m)


@tilework.jit
def k_bits_to_f32(x, y, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    v = tl.load(x + o, mask=m).to(KIND, bitcast=True)
    tl.store(y + o, v.to(tl.float32), mask=m)


@tilework.jit
def k_f32_to_bits(x, y, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    v = tl.load(x + o, mask=m).to(KIND).to(tl.uint8, bitcast=True)
    tl.store(y + o, v, mask=m)


@tilework.jit
def k_round_trip(x, y, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    v = tl.load(x + o, mask=m).to(KIND, bitcast=True)
    w = v.to(tl.float16).to(KIND).to(tl.bfloat16).to(KIND).to(tl.float32).to(KIND)
    tl.store(y + o, w.to(tl.uint8, bitcast=True), mask=m)


@tilework.jit
def k_copy(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, tl.load(x + o, mask=m, other=0.0), mask=m)


def interp(fn, grid, *args, **kw):
    fn.interpret = True
    try:
        fn[grid](*args, **kw)
    finally:
        fn.interpret = False


def sim(fn, sig, consts, grid, *args):
    ck = compile(ASTSource(fn, sig, consts, {}), "sm_80", cache=False)
    gpu_sim.run(ck, grid, *args)
    return ck


U8P, F32P = tl.pointer_type(tl.uint8), tl.pointer_type(tl.float32)


@pytest.mark.parametrize("kind", KINDS)
def test_decode_all_patterns(kind):
    x = np.arange(256, dtype=np.uint8)
    ref = ref_decode(x, kind)
    y = np.full(256, 7.0, np.float32)
    interp(k_bits_to_f32, (2,), x, y, 256, KIND=KINDS[kind], BLOCK=128)
    np.testing.assert_array_equal(y, ref)
    nan = np.isnan(ref)
    assert np.array_equal(np.signbit(y[nan]), np.signbit(ref[nan]) | (x[nan] >= 0x80))
    y2 = np.full(256, 7.0, np.float32)
    sim(k_bits_to_f32, {"x": U8P, "y": F32P, "n": tl.int32}, {"KIND": KINDS[kind], "BLOCK": 128},
        (2,), x, y2, 256)
    np.testing.assert_array_equal(y2, y)  # (NaN payloads may differ: the CPU quiets sNaN)


@pytest.mark.parametrize("kind", KINDS)
def test_encode_boundaries_and_random(kind):
    rng = np.random.default_rng(0)
    x = np.concatenate([boundary_values(kind),
                        (rng.standard_normal(3000) * 10.0 ** rng.uniform(-6, 6, 3000)).astype(np.float32)])
    n = len(x)
    ref = ref_encode(x, kind)
    y = np.zeros(n, np.uint8)
    interp(k_f32_to_bits, (triton_cdiv(n, 256),), x, y, n, KIND=KINDS[kind], BLOCK=256)
    bad = np.nonzero(y != ref)[0]
    assert not len(bad), [(x[i], hex(y[i]), hex(ref[i])) for i in bad[:8]]
    y2 = np.zeros(n, np.uint8)
    sim(k_f32_to_bits, {"x": F32P, "y": U8P, "n": tl.int32}, {"KIND": KINDS[kind], "BLOCK": 256},
        (triton_cdiv(n, 256),), x, y2, n)
    np.testing.assert_array_equal(y2, ref)


def triton_cdiv(a, b):
    return (a + b - 1) // b


@pytest.mark.parametrize("kind", KINDS)
def test_saturation_and_specials(kind):
    x = np.array([1e6, -1e6, np.inf, -np.inf, np.nan, 0.0, -0.0, MAXVAL[kind]], np.float32)
    y = np.zeros(len(x), np.uint8)
    interp(k_f32_to_bits, (1,), x, y, len(x), KIND=KINDS[kind], BLOCK=8)
    mx = MAXBITS[kind]
    inf = 0x7C if kind == "fp8e5" else mx  # e5m2 keeps inf; e4m3fn has none
    assert list(y) == [mx, 0x80 | mx, inf, 0x80 | inf, 0x7F, 0, 0x80, mx]


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip(kind):
    x = np.arange(256, dtype=np.uint8)
    y = np.zeros(256, np.uint8)
    interp(k_round_trip, (1,), x, y, 256, KIND=KINDS[kind], BLOCK=256)
    ref = ref_decode(x, kind)
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(y[fin], x[fin])
    assert np.all(np.isnan(ref_decode(y[np.isnan(ref)], kind)))
    y2 = np.zeros(256, np.uint8)
    sim(k_round_trip, {"x": U8P, "y": U8P, "n": tl.int32}, {"KIND": KINDS[kind], "BLOCK": 256},
        (1,), x, y2, 256)
    _same_bits_or_both_nan(y2, y, kind)


@pytest.mark.parametrize("kind", KINDS)
def test_fp8_to_fp8(kind):
    other = "fp8e5" if kind == "fp8e4nv" else "fp8e4nv"

    @tilework.jit
    def k(x, y, KIND: tl.constexpr, OTHER: tl.constexpr):
        o = tl.arange(0, 256)
        v = tl.load(x + o).to(KIND, bitcast=True).to(OTHER)
        tl.store(y + o, v.to(tl.uint8, bitcast=True))
    x = np.arange(256, dtype=np.uint8)
    y = np.zeros(256, np.uint8)
    interp(k, (1,), x, y, KIND=KINDS[kind], OTHER=KINDS[other])
    _same_bits_or_both_nan(y, ref_encode(ref_decode(x, kind), other), other)
    y2 = np.zeros(256, np.uint8)
    sim(k, {"x": U8P, "y": U8P}, {"KIND": KINDS[kind], "OTHER": KINDS[other]}, (1,), x, y2)
    _same_bits_or_both_nan(y2, y, other)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("target", ["sm_80", "sm_90a", "gfx942"])
def test_compiles(kind, target):
    p = tl.pointer_type(KINDS[kind])
    for fn, sig in [(k_to_f32, {"x": p, "y": F32P, "n": tl.int32}),
                    (k_from_f32, {"x": F32P, "y": p, "n": tl.int32}),
                    (k_copy, {"x": p, "y": p, "n": tl.int32})]:
        for bs in ({"x": tl.pointer_type(tl.float16), "y": p, "n": tl.int32},
                   {"x": p, "y": tl.pointer_type(tl.bfloat16), "n": tl.int32}):
            compile(ASTSource(k_from_f32, bs, {"BLOCK": 128}, {}), target, cache=False)
        ck = compile(ASTSource(fn, sig, {"BLOCK": 256}, {}), target, cache=False)
        assert ck.asm["ptx" if target.startswith("sm") else "amdgcn"]


@pytest.mark.parametrize("kind", KINDS)
def test_masked_copy_with_tail(kind):
    torch = pytest.importorskip("torch")
    tdt = torch.float8_e4m3fn if kind == "fp8e4nv" else torch.float8_e5m2
    n = 1000
    bits = np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8)
    x = torch.from_numpy(bits.copy()).view(tdt)
    y = torch.from_numpy(np.full(1024, 0x55, np.uint8)).view(tdt)
    interp(k_copy, (triton_cdiv(n, 256),), x, y, n, BLOCK=256)
    yb = y.view(torch.uint8).numpy()
    ref = ref_decode(bits, kind)
    fin = np.isfinite(ref) | np.isinf(ref)
    np.testing.assert_array_equal(yb[:n][fin], bits[fin])
    assert np.all(np.isnan(ref_decode(yb[:n][~fin], kind)))
    assert np.all(yb[n:] == 0x55)
    # compiled (sm_80 llir on the CPU): bytes moved unchanged, NaNs included
    p = tl.pointer_type(KINDS[kind])
    y2 = np.full(1024, 0x55, np.uint8)
    sim(k_copy, {"x": p, "y": p, "n": tl.int32}, {"BLOCK": 256}, (triton_cdiv(n, 256),),
        bits, y2, n)
    np.testing.assert_array_equal(y2[:n], bits)
    assert np.all(y2[n:] == 0x55)
