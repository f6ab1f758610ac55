"""float8 tiles (fp8e4nv = f8E4M3FN, fp8e5 = f8E5M2): loads, stores, conversions and
arithmetic with Triton's promotion.

The interpreter is checked against a numpy reference written here (decoder over all 256 bit
patterns; a nearest-even, saturating encoder; arithmetic computed exactly in float64 and
rounded once to the result type); the compiled kernels are checked to compile on sm_80, sm_90a
and gfx942 and run (sm_80 `llir`) on the CPU through gpu_sim, bit for bit against the same
reference."""
import os
import re
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
    e5m2 (e4m3fn has none: saturated); NaN -> 0x7f | sign.  float64 input is rounded once
    (an exact result of arithmetic on fp8 values); anything else is taken as float32."""
    x = np.asarray(x)
    if x.dtype != np.float64:
        x = x.astype(np.float32)
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


def encode_inputs(kind, n, seed):
    """f32 values to encode: the kind's boundaries, the specials, +-1e9, and `n` random ones
    over 12 decades."""
    rng = np.random.default_rng(seed)
    return np.concatenate([boundary_values(kind),
                           np.float32([np.inf, -np.inf, np.nan, -np.nan, 1e9, -1e9]),
                           (rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6, n))
                           .astype(np.float32)])


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


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("block", [128, 256, 1024])
def test_hardware_encode_on_sm90(kind, block):
    """sm_89+ converts f32 -> fp8 by `cvt.rn.satfinite.<kind>x2.f32` (sm_80 by the integer
    expansion); its fix-ups keep every result the expansion's: run on the SIMT emulator
    (which executes that cvt as PTX defines it) against the reference, specials included.
    A thread's 1, 2 or 4 elements: one cvt of (x, x), one of a pair, two into a packed word
    (their fix-ups on the packed bytes)."""
    from simt_emulator import Emulator
    sig = {"x": F32P, "y": U8P, "n": tl.int32}
    cvt = f"cvt.rn.satfinite.{'e4m3' if kind == 'fp8e4nv' else 'e5m2'}x2.f32"
    ptx = {t: compile(ASTSource(k_f32_to_bits, sig, {"KIND": KINDS[kind], "BLOCK": block},
                                {}), t, cache=False).asm for t in ("sm_80", "sm_90a")}
    assert cvt not in ptx["sm_80"]["ptx"] and cvt in ptx["sm_90a"]["ptx"]
    assert len(re.findall(r"cvt\.rn\.satfinite", ptx["sm_90a"]["ptx"])) == max(1, block // 256)
    x = encode_inputs(kind, 2000, seed=1)
    n = len(x)
    y = np.zeros(n, np.uint8)
    Emulator.from_tilegpu(ptx["sm_90a"]["tilegpu"], "sm_90a", 4).run(
        (triton_cdiv(n, block),), x, y, n)
    ref = ref_encode(x, kind)
    bad = np.nonzero(y != ref)[0]
    assert not len(bad), [(x[i], hex(y[i]), hex(ref[i])) for i in bad[:8]]


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


# ---- arithmetic on float8 tiles ---------------------------------------------------------------
#
# Triton's `computation_type_impl` (python/triton/language/semantic.py) and its
# test_fp8_div_mod_promotion: a float8 kind with itself stays that kind (computed here in fp32
# and rounded back once: correctly rounded, saturating as `.to()`), two kinds give fp16, fp16
# wins over float8, bf16 and fp32 with float8 give fp32; `/` and `%` compute in fp32 (fp64
# with fp64).  A Python number takes the tile's dtype, except in `/` and `%` where it is fp32.

TL = {"fp8e4nv": tl.float8e4nv, "fp8e5": tl.float8e5, "fp16": tl.float16, "bf16": tl.bfloat16,
      "fp32": tl.float32, "fp64": tl.float64, "int32": tl.int32, "int1": tl.int1}
WIDTH = {"fp8e4nv": 8, "fp8e5": 8, "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64, "int32": 32,
         "int1": 8}
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
N, BLOCK = 1000, 256  # 4 programs, the last one masked after 232 elements
SENTINEL = 0x55


@tilework.jit
def k_arith(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, XT: tl.constexpr, YT: tl.constexpr,
            RT: tl.constexpr, BLOCK: tl.constexpr):
    """out = x OP y on tiles of XT and YT (loaded as those dtypes, or bitcast from raw bits);
    the result must have dtype RT (stored as it is, as its bits, or int1 as uint8)."""
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    if x.dtype != XT:
        x = x.to(XT, bitcast=True)
    y = tl.load(y_ptr + o, mask=m)
    if y.dtype != YT:
        y = y.to(YT, bitcast=True)
    if OP == "add":
        r = x + y
    elif OP == "sub":
        r = x - y
    elif OP == "mul":
        r = x * y
    elif OP == "truediv":
        r = x / y
    elif OP == "floordiv":
        r = x // y
    elif OP == "mod":
        r = x % y
    elif OP == "maximum":
        r = tl.maximum(x, y)
    elif OP == "minimum":
        r = tl.minimum(x, y)
    elif OP == "lt":
        r = x < y
    elif OP == "le":
        r = x <= y
    elif OP == "gt":
        r = x > y
    elif OP == "ge":
        r = x >= y
    elif OP == "eq":
        r = x == y
    elif OP == "ne":
        r = x != y
    elif OP == "where":
        r = tl.where(o % 3 == 0, x, y)
    elif OP == "fdiv":
        r = tl.fdiv(x, y)
    elif OP == "add_s":
        r = x + 1
    elif OP == "mul_s":
        r = 0.3 * x  # 0.3 is rounded to x's float8 kind first (weak typing)
    elif OP == "div_s":
        r = x / 0.3  # an fp32 0.3
    elif OP == "rdiv_s":
        r = 3.0 / x
    elif OP == "mod_s":
        r = x % 3
    elif OP == "where_s":
        r = tl.where(x > 1.0, x, 0.5)
    elif OP == "neg":
        r = -x
    elif OP == "abs":
        r = tl.abs(x)
    tl.static_assert(r.dtype == RT, "unexpected result dtype")
    if RT == tl.int1:
        tl.store(out_ptr + o, r.to(tl.uint8), mask=m)
    elif out_ptr.dtype.element_ty == RT:
        tl.store(out_ptr + o, r, mask=m)
    else:
        tl.store(out_ptr + o, r.to(out_ptr.dtype.element_ty, bitcast=True), mask=m)


def fp8_patterns(rng, kind, n):
    """Random fp8 bit patterns, every one but the two zeros (NaN and e5m2 infinities
    included)."""
    b = rng.integers(1, 255, n, dtype=np.uint8)
    return np.where(b == 0x80, np.uint8(0x81), b).astype(np.uint8)


def random_bits(rng, t, n):
    """Random nonzero values of dtype `t` as their bit patterns (uint8/16/32/64)."""
    if t in KINDS:
        return fp8_patterns(rng, t, n)
    if t == "int32":
        v = rng.integers(1, 1000, n) * rng.choice([-1, 1], n)
        return v.astype(np.int32).view(np.uint32)
    v = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
    v = np.where(v == 0, 1.5, v)
    if t == "bf16":
        b = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        return (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF).astype(np.uint16)
    return v.astype({"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}[t]).view(
        UINT[WIDTH[t]])


def values(bits, t):
    """Bit patterns of dtype `t` -> their values as float64 (exact)."""
    if t in KINDS:
        return ref_decode(bits, t).astype(np.float64)
    if t == "int32":
        return bits.view(np.int32).astype(np.float64)
    if t == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return bits.view({"fp16": np.float16, "fp32": np.float32,
                          "fp64": np.float64}[t]).astype(np.float64)


def rounded(v64, t):
    """float64 values rounded once to dtype `t`, as bit patterns (fp8 by ref_encode; the
    exact result of one fp8/fp16 op is exact in float64, and one float64 rounding of an fp32
    op's result rounds it correctly since 53 >= 2 * 24 + 2)."""
    if t in KINDS:
        return ref_encode(v64, t)
    if t == "int1":
        return v64.astype(np.uint8)
    dt = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}[t]
    with np.errstate(over="ignore"):  # overflow to inf, as the GPU's
        return v64.astype(dt).view(UINT[WIDTH[t]])


def round_scalar(v, t):
    """A Python float as a constant of dtype `t` (float64)."""
    return values(rounded(np.array([v], np.float64), t), t)[0]


def reference(op, xt, yt, rt, xb, yb):
    """The expected bits of `x op y` (or of the unary/scalar forms), computed in float64."""
    if op == "neg":  # sign-bit operations (NaN included)
        return xb ^ np.uint8(0x80)
    if op == "abs":
        return xb & np.uint8(0x7F)
    x, y = values(xb, xt), values(yb, yt)
    o = np.arange(len(xb))
    with np.errstate(all="ignore"):
        f32 = lambda v: v.astype(np.float32).astype(np.float64)  # noqa: E731
        r = {
            "add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
            "truediv": lambda: x / y, "mod": lambda: np.fmod(x, y),
            "floordiv": lambda: np.floor(f32(x / y)),
            # tl.maximum/minimum as Triton's default (PropagateNan.NONE): NaN gives the other
            "maximum": lambda: np.fmax(x, y), "minimum": lambda: np.fmin(x, y),
            "lt": lambda: x < y, "le": lambda: x <= y, "gt": lambda: x > y,
            "ge": lambda: x >= y, "eq": lambda: x == y, "ne": lambda: x != y,
            "where": lambda: np.where(o % 3 == 0, x, y), "fdiv": lambda: x / y,
            "add_s": lambda: x + 1.0, "mul_s": lambda: round_scalar(0.3, xt) * x,
            "div_s": lambda: x / float(np.float32(0.3)), "rdiv_s": lambda: 3.0 / x,
            "mod_s": lambda: np.fmod(x, 3.0),
            "where_s": lambda: np.where(x > 1.0, x, 0.5),
            "neg": lambda: -x, "abs": lambda: np.abs(x),
        }[op]()
    return rounded(np.asarray(r, np.float64), rt)


def check_bits(out, ref, rt):
    """Same bit patterns, except that NaNs need only be NaN (in both)."""
    out, ref = out[:N], ref[:N]
    if rt == "int1" or rt == "int32":
        np.testing.assert_array_equal(out, ref)
        return
    ro, rr = values(out, rt), values(ref, rt)
    nan = np.isnan(rr)
    bad = np.nonzero((out != ref) & ~nan)[0]
    assert not len(bad), [(int(i), hex(int(out[i])), hex(int(ref[i]))) for i in bad[:8]]
    assert np.isnan(ro[nan]).all()


def _arith_args(rng, xt, yt, rt):
    xb, yb = random_bits(rng, xt, N), random_bits(rng, yt, N)
    out = np.full(triton_cdiv(N, BLOCK) * BLOCK, SENTINEL, UINT[WIDTH[rt]])
    return xb, yb, out


def _arith_consts(op, xt, yt, rt):
    return dict(OP=op, XT=TL[xt], YT=TL[yt], RT=TL[rt], BLOCK=BLOCK)


UTL = {8: tl.uint8, 16: tl.uint16, 32: tl.uint32, 64: tl.uint64}


def _arith_sig(xt, yt, rt):
    return {"x_ptr": tl.pointer_type(UTL[WIDTH[xt]]), "y_ptr": tl.pointer_type(UTL[WIDTH[yt]]),
            "out_ptr": tl.pointer_type(UTL[WIDTH[rt]]), "n": tl.int32}


# Float `%` (arith.remf) lowers to a device-library call (__nv_fmodf / __ocml_fmod_f32), and no
# device library is linked: on every float type, fp32 included, it runs in the interpreter
# only (test_float_mod_needs_a_device_library).
MOD_OPS = ("mod", "mod_s")
# fp32 `/` is div.full.f32 on NVIDIA (at most 2 ulp, as Triton), which gpu_sim cannot run: the
# interpreter checks these bit for bit (correctly rounded), the GPU tests within 2 ulp.
DIV_OPS = ("truediv", "floordiv", "fdiv", "div_s", "rdiv_s")


def simulated(op, rt):
    return op not in MOD_OPS and not (op in DIV_OPS and rt == "fp32")


def run_arith(op, xt, yt, rt, rng):
    """The interpreter and the compiled kernel (sm_80 llir on gpu_sim), both against the
    float64 reference, bit for bit; the masked tail untouched."""
    xb, yb, out = _arith_args(rng, xt, yt, rt)
    ref = reference(op, xt, yt, rt, xb, yb)
    grid = (triton_cdiv(N, BLOCK),)
    interp(k_arith, grid, xb, yb, out, N, **_arith_consts(op, xt, yt, rt))
    check_bits(out, ref, rt)
    assert (out[N:] == SENTINEL).all()
    if not simulated(op, rt):
        return
    out2 = np.full_like(out, SENTINEL)
    sim(k_arith, _arith_sig(xt, yt, rt), _arith_consts(op, xt, yt, rt), grid, xb, yb, out2, N)
    check_bits(out2, ref, rt)
    assert (out2[N:] == SENTINEL).all()


SAME_KIND = [("add", "k"), ("sub", "k"), ("mul", "k"), ("maximum", "k"), ("minimum", "k"),
             ("where", "k"), ("truediv", "fp32"), ("floordiv", "fp32"), ("mod", "fp32"),
             ("fdiv", "fp32"), ("lt", "int1"), ("le", "int1"), ("gt", "int1"), ("ge", "int1"),
             ("eq", "int1"), ("ne", "int1"), ("add_s", "k"), ("mul_s", "k"),
             ("div_s", "fp32"), ("rdiv_s", "fp32"), ("mod_s", "fp32"), ("where_s", "k"),
             ("neg", "k"), ("abs", "k")]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op, result", SAME_KIND, ids=[o for o, _ in SAME_KIND])
def test_same_kind_arithmetic(kind, op, result, request):
    rng = np.random.default_rng(abs(hash(request.node.name)) % 2**32)
    run_arith(op, kind, kind, kind if result == "k" else result, rng)


# (x dtype, y dtype, op, result dtype): Triton's promotion with a float8 operand
MIXED = [
    ("fp8e4nv", "fp8e5", "add", "fp16"), ("fp8e5", "fp8e4nv", "mul", "fp16"),
    ("fp8e4nv", "fp8e5", "maximum", "fp16"), ("fp8e5", "fp8e4nv", "where", "fp16"),
    ("fp8e4nv", "fp8e5", "truediv", "fp32"), ("fp8e5", "fp8e4nv", "mod", "fp32"),
    ("fp8e4nv", "fp8e5", "lt", "int1"),
    ("fp8e4nv", "fp16", "add", "fp16"), ("fp16", "fp8e5", "sub", "fp16"),
    ("fp8e5", "fp16", "mul", "fp16"), ("fp8e4nv", "fp16", "truediv", "fp32"),
    ("fp16", "fp8e4nv", "mod", "fp32"), ("fp8e5", "fp16", "where", "fp16"),
    ("fp8e5", "bf16", "add", "fp32"), ("bf16", "fp8e4nv", "mul", "fp32"),
    ("fp8e4nv", "bf16", "truediv", "fp32"), ("fp8e5", "bf16", "maximum", "fp32"),
    ("fp8e4nv", "fp32", "sub", "fp32"), ("fp32", "fp8e5", "truediv", "fp32"),
    ("fp8e5", "fp32", "ge", "int1"),
    ("fp8e5", "fp64", "truediv", "fp64"), ("fp64", "fp8e4nv", "mul", "fp64"),
    ("fp8e4nv", "int32", "add", "fp32"),  # Triton raises here; tilework computes in fp32
]


@pytest.mark.parametrize("xt, yt, op, rt", MIXED, ids=["-".join(c) for c in MIXED])
def test_mixed_arithmetic(xt, yt, op, rt, request):
    rng = np.random.default_rng(abs(hash(request.node.name)) % 2**32)
    run_arith(op, xt, yt, rt, rng)


@tilework.jit
def k_arith_all(x_ptr, y_ptr, h_ptr, bf_ptr, f_ptr, out_ptr, n, KIND: tl.constexpr,
                OTHER: tl.constexpr, BLOCK: tl.constexpr):
    """Every float8 operation of this file (but `%`) in one kernel, for the compile tests."""
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m).to(KIND, bitcast=True)
    y = tl.load(y_ptr + o, mask=m).to(KIND, bitcast=True)
    z = tl.load(y_ptr + o, mask=m).to(OTHER, bitcast=True)
    h = tl.load(h_ptr + o, mask=m)
    bf = tl.load(bf_ptr + o, mask=m)
    f = tl.load(f_ptr + o, mask=m)
    s8 = x + y - x * y + tl.maximum(x, y) - tl.minimum(x, y) + tl.where(x < y, x, y)
    s8 += 1 + 0.3 * x - x + tl.where(x > 1.0, x, 0.5) - tl.abs(x)
    acc = s8.to(tl.float32) + x / y + x // y + tl.fdiv(x, y) + x / 0.3 + 3.0 / x
    acc += ((x <= y) & (x >= y) | (x == y) ^ (x != y) | (x > y)).to(tl.float32)
    acc += (x + z + tl.maximum(x, z) + tl.where(x < z, x, z) + x * h - h + x).to(tl.float32)
    acc += x / z + x / h + x * bf + x - f + (x < f).to(tl.float32)
    acc += tl.sum(x, 0).to(tl.float32) + tl.max(x, 0) + tl.cumsum(x, 0).to(tl.float32)
    v, i = tl.min(x, 0, return_indices=True)
    acc += v.to(tl.float32) + i
    tl.store(out_ptr + o, acc, mask=m)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a", "gfx942"])
@pytest.mark.parametrize("kind", KINDS)
def test_arithmetic_compiles(kind, target):
    other = "fp8e5" if kind == "fp8e4nv" else "fp8e4nv"
    sig = {"x_ptr": U8P, "y_ptr": U8P, "h_ptr": tl.pointer_type(tl.float16),
           "bf_ptr": tl.pointer_type(tl.bfloat16), "f_ptr": F32P, "out_ptr": F32P,
           "n": tl.int32}
    ck = compile(ASTSource(k_arith_all, sig, dict(KIND=KINDS[kind], OTHER=KINDS[other],
                                                  BLOCK=256), {}), target, cache=False)
    asm = ck.asm["ptx" if target.startswith("sm") else "amdgcn"]
    assert asm
    llir = ck.asm["llir"]
    assert "@__nv_" not in llir and "@__ocml" not in llir  # no device library is needed


@pytest.mark.parametrize("dt", [tl.float8e4nv, tl.float32])
def test_float_mod_needs_no_device_library(dt):
    """Float `%` is expanded in place (exact fmod), on both targets."""
    sig = _arith_sig("fp32", "fp32", "fp32")
    const = dict(OP="mod", XT=tl.float32, YT=tl.float32, RT=tl.float32, BLOCK=BLOCK)
    if dt != tl.float32:
        sig = _arith_sig("fp8e4nv", "fp8e4nv", "fp32")
        const.update(XT=dt, YT=dt)
    for target in ("sm_80", "gfx942"):
        ck = compile(ASTSource(k_arith, sig, const, {}), target, cache=False)
        assert "@__nv_" not in ck.asm["llir"] and "@__ocml" not in ck.asm["llir"]
        assert "llvm.frexp" in ck.asm["llir"] and "llvm.ldexp" in ck.asm["llir"]


# ---- reductions of float8 tiles ---------------------------------------------------------------
# As Triton's standard.py: `sum` (and `cumsum`) of float8 add in the float8 type (each step
# rounded), `max`/`min` compute floats narrower than 32 bits in fp32, and with
# `return_indices=True` keep the float8 values.

RBLOCK, RN = 128, 100  # 100 valid elements, a masked tail of 28


@tilework.jit
def k_reduce8(x_ptr, sum_ptr, sum32_ptr, max_ptr, min_ptr, argmin_ptr, cumsum_ptr, n,
              KIND: tl.constexpr, BIG: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m, other=0).to(KIND, bitcast=True)
    s = tl.sum(x, 0)
    tl.static_assert(s.dtype == KIND, "sum of float8 stays float8")
    tl.store(sum_ptr, s.to(tl.uint8, bitcast=True))
    tl.store(sum32_ptr, tl.sum(x, 0, dtype=tl.float32))
    mx = tl.max(tl.where(m, x, -BIG), 0)
    tl.static_assert(mx.dtype == tl.float32, "max of float8 is fp32")
    tl.store(max_ptr, mx)
    mn, i = tl.min(tl.where(m, x, BIG), 0, return_indices=True)
    tl.static_assert(mn.dtype == KIND, "min with indices keeps float8")
    tl.store(min_ptr, mn.to(tl.uint8, bitcast=True))
    tl.store(argmin_ptr, i)
    c = tl.cumsum(x, 0)
    tl.static_assert(c.dtype == KIND, "cumsum of float8 stays float8")
    tl.store(cumsum_ptr + o, c.to(tl.uint8, bitcast=True), mask=m)


def _reduce_inputs(rng, kind):
    """Random fp8 patterns of magnitude in [1/8, 4), both signs (no saturation in the sums)."""
    man, bias = (3, 7) if kind == "fp8e4nv" else (2, 15)
    e = rng.integers(bias - 3, bias + 2, RN)
    mant = rng.integers(0, 1 << man, RN)
    sign = rng.integers(0, 2, RN) << 7
    bits = (sign | (e << man) | mant).astype(np.uint8)
    return np.concatenate([bits, rng.integers(1, 255, RBLOCK - RN).astype(np.uint8)])


def _halves_tree_sum(v, kind):
    """The interpreter's order (halves of the tile, rounded to fp8 after every add)."""
    v = v.astype(np.float64)
    while len(v) > 1:
        h = len(v) // 2
        v = values(rounded(v[:h] + v[h:2 * h], kind), kind)
    return v[0]


def _reduce_outputs():
    return (np.full(1, SENTINEL, np.uint8), np.full(1, 7.0, np.float32),
            np.full(1, 7.0, np.float32), np.full(1, SENTINEL, np.uint8),
            np.full(1, 77, np.int32), np.full(RBLOCK, SENTINEL, np.uint8))


def check_reductions(kind, bits, outs, interpreted):
    s8, s32, mx, mn, am, cs = outs
    v = values(bits[:RN], kind)
    u = 2.0 ** -4 if kind == "fp8e4nv" else 2.0 ** -3  # unit roundoff
    depth = int(np.ceil(np.log2(RBLOCK))) + 3  # additions on any path of the tree, at most
    got = values(s8, kind)[0]
    assert abs(got - v.sum()) <= depth * u * np.abs(v).sum(), (got, v.sum())
    if interpreted:  # the interpreter's order, bit for bit: each step is rounded to fp8
        padded = np.concatenate([v, np.zeros(RBLOCK - RN)])
        assert got == _halves_tree_sum(padded, kind), (got, _halves_tree_sum(padded, kind))
    assert s32[0] == v.sum()  # exact: few significant bits
    assert mx[0] == v.max()
    assert values(mn, kind)[0] == v.min() and am[0] == np.argmin(v)
    partial = np.cumsum(v)
    bound = depth * u * np.cumsum(np.abs(v))
    assert (np.abs(values(cs[:RN], kind) - partial) <= bound).all()
    assert (cs[RN:] == SENTINEL).all()


@pytest.mark.parametrize("kind", KINDS)
def test_reductions(kind, request):
    rng = np.random.default_rng(abs(hash(request.node.name)) % 2**32)
    bits = _reduce_inputs(rng, kind)
    const = dict(KIND=KINDS[kind], BIG=MAXVAL[kind], BLOCK=RBLOCK)
    outs = _reduce_outputs()
    interp(k_reduce8, (1,), bits, *outs, RN, **const)
    check_reductions(kind, bits, outs, True)
    outs = _reduce_outputs()
    I32P = tl.pointer_type(tl.int32)
    sig = {"x_ptr": U8P, "sum_ptr": U8P, "sum32_ptr": F32P, "max_ptr": F32P, "min_ptr": U8P,
           "argmin_ptr": I32P, "cumsum_ptr": U8P, "n": tl.int32}
    sim(k_reduce8, sig, const, (1,), bits, *outs, RN)
    check_reductions(kind, bits, outs, False)


# ---- result dtypes (the interpreter runs the frontend's rules) -------------------------------

@tilework.jit
def k_dtypes(x_ptr, h_ptr, bf_ptr, f_ptr, d_ptr, i_ptr, KIND: tl.constexpr,
             OTHER: tl.constexpr):
    o = tl.arange(0, 16)
    x = tl.load(x_ptr + o).to(KIND, bitcast=True)
    z = tl.load(x_ptr + o).to(OTHER, bitcast=True)
    h = tl.load(h_ptr + o)
    bf = tl.load(bf_ptr + o)
    f = tl.load(f_ptr + o)
    d = tl.load(d_ptr + o)
    i = tl.load(i_ptr + o)
    # Triton's test_fp8_div_mod_promotion
    tl.static_assert((x / x).dtype == tl.float32)
    tl.static_assert((x / z).dtype == tl.float32)
    tl.static_assert((x % x).dtype == tl.float32)
    tl.static_assert((x * x).dtype == KIND)
    tl.static_assert((x * z).dtype == tl.float16)
    tl.static_assert((2.0 / x).dtype == tl.float32)
    tl.static_assert((x / 2.0).dtype == tl.float32)
    tl.static_assert((x % 2).dtype == tl.float32)
    tl.static_assert((x * 2.0).dtype == KIND)
    # computation_type_impl's order with the other float types
    tl.static_assert((x + h).dtype == tl.float16)
    tl.static_assert((h - x).dtype == tl.float16)
    tl.static_assert((x / h).dtype == tl.float32)
    tl.static_assert((x + bf).dtype == tl.float32)
    tl.static_assert((x * f).dtype == tl.float32)
    tl.static_assert((x + d).dtype == tl.float64)
    tl.static_assert((x / d).dtype == tl.float64)
    tl.static_assert((x + 1).dtype == KIND)
    tl.static_assert((x - z).dtype == tl.float16)
    tl.static_assert((x // x).dtype == tl.float32)
    tl.static_assert((x + i).dtype == tl.float32)  # Triton raises; tilework: fp32
    tl.static_assert((x < z).dtype == tl.int1)
    tl.static_assert(tl.where(o < 3, x, x).dtype == KIND)
    tl.static_assert(tl.where(o < 3, x, 0.5).dtype == KIND)
    tl.static_assert(tl.where(o < 3, x, z).dtype == tl.float16)
    tl.static_assert(tl.maximum(x, x).dtype == KIND)
    tl.static_assert(tl.minimum(x, h).dtype == tl.float16)
    tl.static_assert((-x).dtype == KIND)
    tl.static_assert(tl.abs(x).dtype == KIND)
    tl.static_assert(tl.fdiv(x, x).dtype == tl.float32)
    tl.static_assert(tl.sum(x, 0).dtype == KIND)
    tl.static_assert(tl.max(x, 0).dtype == tl.float32)
    tl.static_assert(tl.cumsum(x, 0).dtype == KIND)


@pytest.mark.parametrize("kind", KINDS)
def test_result_dtypes(kind):
    other = "fp8e5" if kind == "fp8e4nv" else "fp8e4nv"
    z = np.ones(16)
    interp(k_dtypes, (1,), np.full(16, 0x3A, np.uint8), z.astype(np.float16),
           z.astype(np.float32).view(np.uint32), z.astype(np.float32), z, z.astype(np.int32),
           KIND=KINDS[kind], OTHER=KINDS[other])
    sig = {"x_ptr": U8P, "h_ptr": tl.pointer_type(tl.float16),
           "bf_ptr": tl.pointer_type(tl.bfloat16), "f_ptr": F32P,
           "d_ptr": tl.pointer_type(tl.float64), "i_ptr": tl.pointer_type(tl.int32)}
    compile(ASTSource(k_dtypes, sig, dict(KIND=KINDS[kind], OTHER=KINDS[other]), {}), "sm_90a",
            cache=False)


# ---- what stays rejected ---------------------------------------------------------------------

@tilework.jit
def k_rejected(x_ptr, y_ptr, OP: tl.constexpr, KIND: tl.constexpr):
    o = tl.arange(0, 16)
    x = tl.load(x_ptr + o).to(KIND, bitcast=True)
    if OP == "and":
        r = x & x
    elif OP == "clamp":
        r = tl.clamp(x, x, x)
    elif OP == "fma":
        r = tl.fma(x, x, x)
    elif OP == "exp":
        r = tl.exp(x)
    elif OP == "sqrt":
        r = tl.sqrt(x)
    tl.store(y_ptr + o, r.to(tl.float32))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op, message", [
    ("and", "`&` on {k} tiles is not supported: convert them first, e.g. x.to(tl.float32)"),
    ("clamp", "`clamp` on {k} tiles is not supported: convert them first"),
    ("fma", "`fma` on {k} tiles is not supported: convert them first"),
    ("exp", "tl.exp: Expected dtype ['fp32', 'fp64'] but got {k}"),  # as Triton's math
    ("sqrt", "tl.sqrt: Expected dtype ['fp32', 'fp64'] but got {k}"),
])
def test_rejected_ops(kind, op, message):
    from tilework import CompilationError
    message = message.format(k=kind)
    with pytest.raises(CompilationError, match=re.escape(message)):
        compile(ASTSource(k_rejected, {"x_ptr": U8P, "y_ptr": F32P},
                          dict(OP=op, KIND=KINDS[kind]), {}), "sm_90a", cache=False)
    with pytest.raises(Exception, match=re.escape(message)):
        interp(k_rejected, (1,), np.full(16, 0x3A, np.uint8), np.zeros(16, np.float32),
               OP=op, KIND=KINDS[kind])
