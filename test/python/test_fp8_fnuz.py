"""The "fnuz" float8 formats of AMD's gfx942 (fp8e4b8 = f8E4M3FNUZ, fp8e5b16 = f8E5M2FNUZ,
Triton's `tl.float8e4b8`, `tl.float8e5b16`): biases 8 and 16, no inf, no negative zero, 0x80
the one NaN.  Conversions (interpreter, and the compiled code on the CPU through gpu_sim) bit
for bit against a reference written here from the definition; `tl.dot` on gfx942's fp8 MFMA
through the SIMT emulator; the formats per target: a dot in a format the architecture's matrix
cores lack runs on FMAs, and laid out for them is an error naming the architecture."""
import os
import sys

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile

sys.path.insert(0, os.path.dirname(__file__))
import gpu_sim  # noqa: E402

KINDS = {"fp8e4b8": tl.float8e4b8, "fp8e5b16": tl.float8e5b16}
FORMAT = {"fp8e4b8": (3, 8), "fp8e5b16": (2, 16)}  # mantissa bits, bias
U8P, F32P = tl.pointer_type(tl.uint8), tl.pointer_type(tl.float32)


def ref_decode(bits, kind):
    man, bias = FORMAT[kind]
    b = np.asarray(bits, np.int64)
    e, m = (b & 0x7F) >> man, b & ((1 << man) - 1)
    v = np.where(e == 0, m * 2.0 ** (1 - bias - man), (1 + m / 2 ** man) * 2.0 ** (e - bias))
    v = np.where(b & 0x80, -v, v)
    return np.where(b == 0x80, np.nan, v)


def ref_encode(x, kind):
    """Nearest value (ties to the even pattern), overflow and inf saturated to +-max, NaN ->
    0x80, zero (either sign, or a tiny value rounding to it) -> 0x00."""
    x = np.asarray(x, np.float32).astype(np.float64)
    table = ref_decode(np.arange(0x80), kind)
    a = np.abs(x)
    hi = np.clip(np.searchsorted(table, a), 0, 0x7F)
    lo = np.clip(hi - 1, 0, 0x7F)
    dlo, dhi = np.abs(a - table[lo]), np.abs(table[hi] - a)
    idx = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
    idx = np.where(a >= table[0x7F], 0x7F, idx)
    idx = np.where((idx != 0) & np.signbit(x), idx | 0x80, idx)
    return np.where(np.isnan(x), 0x80, idx).astype(np.uint8)


@tilework.jit
def k_bits_to_f32(x, y, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, tl.load(x + o, mask=m).to(KIND, bitcast=True).to(tl.float32), mask=m)


@tilework.jit
def k_f32_to_bits(x, y, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(y + o, tl.load(x + o, mask=m).to(KIND).to(tl.uint8, bitcast=True), mask=m)


def _interp(fn, grid, *args, **kw):
    fn.interpret = True
    try:
        fn[grid](*args, **kw)
    finally:
        fn.interpret = False


def _sim(fn, sig, consts, grid, *args):
    gpu_sim.run(compile(ASTSource(fn, sig, consts, {}), "sm_80", cache=False), grid, *args)


def test_reference_decoder_spot_values():
    # (the reference itself, against values from the formats' definition)
    assert ref_decode([0x08, 0x7F, 0x01, 0x00], "fp8e4b8").tolist() == [2.0 ** -7, 240.0,
                                                                         2.0 ** -10, 0.0]
    assert ref_decode([0x7F, 0x04, 0x01, 0xC0], "fp8e5b16").tolist() == [57344.0, 2.0 ** -15,
                                                                          2.0 ** -17, -1.0]
    assert np.isnan(ref_decode([0x80], "fp8e4b8")).all()


@pytest.mark.parametrize("kind", KINDS)
def test_decode_all_patterns(kind):
    x = np.arange(256, dtype=np.uint8)
    ref = ref_decode(x, kind).astype(np.float32)
    for run in ("interp", "sim"):
        y = np.full(256, 7.0, np.float32)
        if run == "interp":
            _interp(k_bits_to_f32, (2,), x, y, 256, KIND=KINDS[kind], BLOCK=128)
        else:
            _sim(k_bits_to_f32, {"x": U8P, "y": F32P, "n": tl.int32},
                 {"KIND": KINDS[kind], "BLOCK": 128}, (2,), x, y, 256)
        np.testing.assert_array_equal(y, ref, err_msg=run)


@pytest.mark.parametrize("kind", KINDS)
def test_encode_boundaries_and_random(kind):
    rng = np.random.default_rng(3)
    t = ref_decode(np.arange(0x80), kind).astype(np.float32)
    mids = ((t[:-1].astype(np.float64) + t[1:]) / 2).astype(np.float32)
    special = np.array([np.inf, np.nan, 1e30, 0.0, 1e-30, 1e-45], np.float32)
    v = np.concatenate([t, mids, np.nextafter(mids, np.float32(0)),
                        np.nextafter(mids, np.float32(np.inf)), special])
    x = np.concatenate([v, -v, (rng.standard_normal(3000) * 10.0 ** rng.uniform(-6, 6, 3000))
                        ]).astype(np.float32)
    n, ref = len(x), ref_encode(x, kind)
    for run in ("interp", "sim"):
        y = np.zeros(n, np.uint8)
        grid = ((n + 255) // 256,)
        if run == "interp":
            _interp(k_f32_to_bits, grid, x, y, n, KIND=KINDS[kind], BLOCK=256)
        else:
            _sim(k_f32_to_bits, {"x": F32P, "y": U8P, "n": tl.int32},
                 {"KIND": KINDS[kind], "BLOCK": 256}, grid, x, y, n)
        bad = np.nonzero(y != ref)[0]
        assert not len(bad), (run, [(x[i], hex(y[i]), hex(ref[i])) for i in bad[:8]])


def test_specials():
    x = np.array([-0.0, 1e6, -np.inf, np.nan, -1e-30], np.float32)
    y = np.zeros(5, np.uint8)
    _interp(k_f32_to_bits, (1,), x, y, 5, KIND=tl.float8e4b8, BLOCK=8)
    assert list(y) == [0x00, 0x7F, 0xFF, 0x80, 0x00]  # no -0; saturated; NaN is 0x80


def test_dtype_names():
    assert tl.float8e4b8.is_fp8() and tl.float8e4b8.is_fp8e4b8()
    assert tl.float8e5b16.is_fp8e5b16() and tl.float8e5b16.primitive_bitwidth == 8
    assert tl.str_to_ty("*fp8e4b8").element_ty is tl.float8e4b8


# ---- tl.dot per target ----------------------------------------------------------------------

def _dot_sig(ta, tb):
    from test_dot import ptr
    sig = {"a_ptr": ptr(ta), "b_ptr": ptr(tb), "c_ptr": ptr(tl.float32)}
    sig.update({p: tl.int32 for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                                      "stride_bn", "stride_cm", "stride_cn")})
    return sig


_CONSTS = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, ACC=tl.float32, PLUS_EQ=False)


@pytest.mark.parametrize("a_kind, b_kind, op", [
    ("fp8e4b8", "fp8e4b8", "rocdl.mfma.f32.32x32x16.fp8.fp8"),
    ("fp8e5b16", "fp8e4b8", "rocdl.mfma.f32.32x32x16.bf8.fp8"),
])
def test_fnuz_dot_on_gfx942_emulated(a_kind, b_kind, op):
    from dot_kernels import matmul_kernel
    from simt_emulator import Emulator
    ck = compile(ASTSource(matmul_kernel, _dot_sig(KINDS[a_kind], KINDS[b_kind]), _CONSTS, {}),
                 "gfx942", CompileOptions(num_warps=4), cache=False)
    assert op.replace("rocdl.mfma.", "v_mfma_").replace(".", "_") in ck.asm["amdgcn"]
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], "gfx942", 4)
    rng = np.random.default_rng(5)
    m, n, k = 70, 50, 80

    def draw(shape):  # finite values (no 0x80)
        r = rng.integers(0, 256, shape).astype(np.uint8)
        return np.where(r == 0x80, 0x40, r).astype(np.uint8)
    a, b = draw((m, k)), draw((k, n))
    c = np.zeros((m, n), np.float32)
    emu.run((2, 1), a, b, c, m, n, k, k, 1, n, 1, n, 1)
    a64, b64 = ref_decode(a, a_kind), ref_decode(b, b_kind)
    np.testing.assert_allclose(c, a64 @ b64, rtol=0, atol=(
        k * 2.0 ** -23 * (np.abs(a64) @ np.abs(b64))).max() + 1e-30)


@pytest.mark.parametrize("target, kinds, mfma", [
    ("gfx942", ("fp8e4b8", "fp8e4b8"), True),     # fnuz on gfx942's MFMA
    ("gfx942", ("fp8e4nv", "fp8e4nv"), False),    # OCP: gfx942 lacks it
    ("gfx950", ("fp8e4nv", "fp8e5"), True),       # OCP on gfx950
    ("gfx950", ("fp8e4b8", "fp8e4b8"), False),    # fnuz: gfx950 lacks it
    ("gfx90a", ("fp8e4b8", "fp8e4b8"), False),    # no fp8 MFMA
    ("gfx942", ("fp8e4b8", "fp8e4nv"), False),    # one of each
])
def test_fp8_formats_per_target(target, kinds, mfma):
    from dot_kernels import matmul_kernel
    tys = dict(KINDS, fp8e4nv=tl.float8e4nv, fp8e5=tl.float8e5)
    ck = compile(ASTSource(matmul_kernel, _dot_sig(*(tys[k] for k in kinds)), _CONSTS, {}),
                 target, CompileOptions(num_warps=4), cache=False)
    assert ("v_mfma_f32_32x32x16_" in ck.asm["amdgcn"]) == mfma
    assert ("#tilegpu.mfma<" in ck.asm["tilegpu"]) == mfma  # else the FMA path
