"""tl.dot on the portable (FMA) path: Triton 3.6's argument rules and messages, result dtypes,
the interpreter against float64 numpy (a tiled matmul with a masked K loop and sizes that are
not multiples of the blocks), the compiled code run on the CPU simulator of gpu_sim.py, and
compilation for sm_80/sm_90a/gfx942 (no spills at 64x64x32 with 4 warps, the K loop not
unrolled, no library calls).  fp32 operands are rounded to tf32 (to nearest, ties away from
zero) with input_precision "tf32", Triton's default: references round them with tf32_round."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError, CompileOptions
from tilework.compiler.driver import ASTSource, compile

import gpu_sim
from dot_kernels import batched_dot, dot_slices, dot_tile, matmul_kernel

TARGETS = ["sm_80", "sm_90a", "gfx942"]
interpreted = tilework.jit(interpret=True)


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def cdiv(a, b):
    return (a + b - 1) // b


def ptr(d):
    return tl.pointer_type(d)


# ---- inputs and error bounds --------------------------------------------------------------

# name -> (input dtype, accumulator dtype, output dtype, numpy input dtype, numpy output dtype)
CASES = {
    "fp32": (tl.float32, tl.float32, tl.float32, np.float32, np.float32),
    "fp16_acc32": (tl.float16, tl.float32, tl.float16, np.float16, np.float16),
    "fp16_acc16": (tl.float16, tl.float16, tl.float16, np.float16, np.float16),
    "bf16": (tl.bfloat16, tl.float32, tl.float32, np.uint16, np.float32),
    "int8": (tl.int8, tl.int32, tl.int32, np.int8, np.int32),
    "fp64": (tl.float64, tl.float64, tl.float64, np.float64, np.float64),
}


def _bf16_bits(x):
    """float32 values rounded to bf16 (ties to even): their 16-bit patterns."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF).astype(np.uint16)


def _bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def tf32_round(x):
    """float32 values rounded to the nearest tf32 value (10 explicit mantissa bits), ties away
    from zero (PTX's cvt.rna.tf32.f32), as float32.  Computed from the two tf32 neighbours in
    float64, not with the implementation's bit trick; inf and NaN unchanged, and a value at
    least half a tf32 ulp above the largest tf32 value becomes inf."""
    x = np.asarray(x, np.float32)
    with np.errstate(invalid="ignore"):
        x64 = x.astype(np.float64)
    fin = np.isfinite(x64)
    a = np.where(fin, np.abs(x64), 0.0)
    _, e = np.frexp(a)  # a = m * 2**e, 0.5 <= m < 1
    ulp = np.where(a >= 2.0**-126, np.ldexp(1.0, e - 11), 2.0**-136)  # tf32 spacing
    lo = np.floor(a / ulp) * ulp
    hi = lo + ulp
    r = np.copysign(np.where(a - lo >= hi - a, hi, lo), x64)
    with np.errstate(over="ignore"):
        return np.where(fin, r.astype(np.float32), x)


def _operands(rng, case, m, k, n):
    """(a, b as passed to the kernel, a, b as float64 values)."""
    npin = CASES[case][3]
    if case == "int8":
        a = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b = rng.integers(-128, 128, (k, n)).astype(np.int8)
        return a, b, a.astype(np.float64), b.astype(np.float64)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    if case == "bf16":
        a, b = _bf16_bits(a), _bf16_bits(b)
        return a, b, _bf16_values(a).astype(np.float64), _bf16_values(b).astype(np.float64)
    a, b = a.astype(npin), b.astype(npin)
    return a, b, a.astype(np.float64), b.astype(np.float64)


def check_matmul(c, a64, b64, case, bk, precision="tf32"):
    """Each element within the error bound of its accumulation: fp32 (fp64) products summed in
    fp32 (fp64); an fp16 accumulator rounded once per K block; fp16 outputs rounded once.
    fp32 operands are rounded to tf32 first with `precision` "tf32" (matmul_kernel's default;
    products of tf32 values are exact in fp32)."""
    if case == "fp32" and precision == "tf32":
        a64, b64 = (tf32_round(v).astype(np.float64) for v in (a64, b64))
    ref = a64 @ b64
    if case == "int8":  # int32 accumulation wraps, as on the GPU
        np.testing.assert_array_equal(c, ((ref.astype(np.int64) + 2**31) % 2**32 - 2**31))
        return
    k = a64.shape[1]
    absref = np.abs(a64) @ np.abs(b64)
    eps = 2.0**-52 if case == "fp64" else 2.0**-23
    tol = k * eps * absref
    if case == "fp16_acc16":
        tol += cdiv(k, bk) * 2.0**-10 * absref
    if CASES[case][4] == np.float16:
        tol += 2.0**-11 * np.abs(ref)
    err = np.abs(c.astype(np.float64) - ref)
    assert (err <= tol + 1e-300).all(), (err.max(), (err - tol).max())


MATMUL_SIG = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk",
              "stride_bn", "stride_cm", "stride_cn")


def matmul_signature(case):
    din, _, dout, _, _ = CASES[case]
    sig = {"a_ptr": ptr(din), "b_ptr": ptr(din), "c_ptr": ptr(dout)}
    sig.update({p: tl.int32 for p in MATMUL_SIG[3:]})
    return sig


def compile_matmul(case, bm, bn, bk, plus_eq=False, target="sm_80", num_warps=4):
    return compile(ASTSource(matmul_kernel, matmul_signature(case),
                             dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1],
                                  PLUS_EQ=plus_eq), {}),
                   target, CompileOptions(num_warps=num_warps), cache=False)


# ---- the interpreter ------------------------------------------------------------------------

def _torch_bf16(bits):
    torch = pytest.importorskip("torch")
    return torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("m, n, k, bm, bn, bk", [
    (100, 70, 45, 32, 32, 32), (64, 64, 64, 64, 64, 32), (1, 130, 17, 16, 64, 32),
    (37, 16, 96, 64, 16, 32)])
def test_matmul_interpreted(case, m, n, k, bm, bn, bk, rng):
    din, acc, dout, npin, npout = CASES[case]
    a, b, a64, b64 = _operands(rng, case, m, k, n)
    c = np.full((m, n), 7, npout)
    if case == "bf16":  # numpy has no bfloat16: CPU torch tensors
        a, b = _torch_bf16(a), _torch_bf16(b)
    interpreted(matmul_kernel.fn)[(cdiv(m, bm), cdiv(n, bn))](
        a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=acc,
        PLUS_EQ=False)
    check_matmul(c, a64, b64, case, bk)


@pytest.mark.parametrize("case", ["fp32", "fp16_acc16", "int8"])
def test_matmul_plus_equals_interpreted(case, rng):
    """`acc += tl.dot(a, b)` (Triton's tutorial form) instead of `acc = tl.dot(a, b, acc)`."""
    din, acc, dout, npin, npout = CASES[case]
    m, n, k = 50, 40, 100
    a, b, a64, b64 = _operands(rng, case, m, k, n)
    c = np.zeros((m, n), npout)
    interpreted(matmul_kernel.fn)[(2, 1)](a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=32,
                                           BLOCK_N=64, BLOCK_K=32, ACC=acc, PLUS_EQ=True)
    check_matmul(c, a64, b64, case, 32)


@pytest.mark.parametrize("mode", ["plain", "acc", "trans_a", "trans_b"])
def test_dot_tile_interpreted(mode, rng):
    m, n, k = 16, 32, 64
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    d = np.zeros((m, n), np.float32)
    aa = np.ascontiguousarray(a.T) if mode == "trans_a" else a
    bb = np.ascontiguousarray(b.T) if mode == "trans_b" else b
    interpreted(dot_tile.fn)[(1,)](aa, bb, c, d, M=m, N=n, K=k, MODE=mode, OUT=tl.float32,
                                   PRECISION="tf32")
    a, b = tf32_round(a), tf32_round(b)  # the accumulator is not rounded
    ref = a.astype(np.float64) @ b + (c if mode == "acc" else 0)
    np.testing.assert_allclose(d, ref, rtol=0, atol=k * 2.0**-22 * (np.abs(a) @ np.abs(b) +
                                                                   np.abs(c)).max())


def test_batched_dot_interpreted(rng):
    bsz, m, n, k = 4, 16, 32, 16
    a = rng.standard_normal((bsz, m, k)).astype(np.float32)
    b = rng.standard_normal((bsz, k, n)).astype(np.float32)
    c = np.zeros((bsz, m, n), np.float32)
    interpreted(batched_dot.fn)[(1,)](a, b, c, B=bsz, M=m, N=n, K=k)
    np.testing.assert_allclose(c, tf32_round(a).astype(np.float64) @ tf32_round(b), rtol=1e-5,
                               atol=1e-5)


# ---- compiled code, run on the CPU simulator (gpu_sim.py) -----------------------------------

@pytest.mark.parametrize("case, m, n, k, bm, bn, bk, warps", [
    ("fp32", 100, 70, 45, 32, 64, 16, 4), ("fp16_acc32", 70, 33, 40, 32, 32, 16, 4),
    ("fp16_acc16", 40, 40, 64, 64, 32, 32, 2), ("bf16", 33, 20, 24, 32, 32, 16, 1),
    ("int8", 50, 60, 70, 64, 64, 32, 4), ("fp64", 20, 20, 20, 16, 32, 16, 8)])
def test_matmul_compiled_simulated(case, m, n, k, bm, bn, bk, warps, rng):
    ck = compile_matmul(case, bm, bn, bk, num_warps=warps)
    a, b, a64, b64 = _operands(rng, case, m, k, n)
    c = np.full((m, n), 7, CASES[case][4])
    gpu_sim.run(ck, (cdiv(m, bm), cdiv(n, bn)), a, b, c, m, n, k, k, 1, n, 1, n, 1)
    check_matmul(c, a64, b64, case, bk)


@pytest.mark.parametrize("mode", ["plain", "acc", "trans_a", "trans_b"])
@pytest.mark.parametrize("m, n, k, warps", [(16, 16, 16, 4), (64, 32, 16, 4), (32, 64, 32, 8),
                                            (8, 8, 16, 1), (128, 16, 16, 2)])
def test_dot_tile_compiled_simulated(mode, m, n, k, warps, rng):
    """Whole tiles in every layout the defaults give them, replicated ones included."""
    P = ptr(tl.float32)
    ck = compile(ASTSource(dot_tile, dict(a_ptr=P, b_ptr=P, c_ptr=P, d_ptr=P),
                           dict(M=m, N=n, K=k, MODE=mode, OUT=tl.float32, PRECISION="ieee"),
                           {}), "sm_80", CompileOptions(num_warps=warps), cache=False)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    d = np.zeros((m, n), np.float32)
    aa = np.ascontiguousarray(a.T) if mode == "trans_a" else a
    bb = np.ascontiguousarray(b.T) if mode == "trans_b" else b
    gpu_sim.run(ck, (1,), aa, bb, c, d)
    ref = a.astype(np.float64) @ b + (c if mode == "acc" else 0)
    np.testing.assert_allclose(d, ref, rtol=0, atol=k * 2.0**-22 * (np.abs(a) @ np.abs(b) +
                                                                   np.abs(c)).max())


def test_batched_dot_compiled_simulated(rng):
    bsz, m, n, k = 2, 16, 32, 16
    P = ptr(tl.float32)
    ck = compile(ASTSource(batched_dot, dict(a_ptr=P, b_ptr=P, c_ptr=P),
                           dict(B=bsz, M=m, N=n, K=k), {}), "sm_80", cache=False)
    a = rng.standard_normal((bsz, m, k)).astype(np.float32)
    b = rng.standard_normal((bsz, k, n)).astype(np.float32)
    c = np.zeros((bsz, m, n), np.float32)
    gpu_sim.run(ck, (1,), a, b, c)
    np.testing.assert_allclose(c, tf32_round(a).astype(np.float64) @ tf32_round(b), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("how", ["interpreter", "simulated"])
@pytest.mark.parametrize("m, n, k, warps", [(16, 32, 16, 4), (32, 16, 32, 2)])
def test_dot_of_slice_layouts(how, m, n, k, warps, rng):
    a = rng.standard_normal((m, k, 2)).astype(np.float32)
    b = rng.standard_normal((k, n, 2)).astype(np.float32)
    c = rng.standard_normal((m, n, 2)).astype(np.float32)
    d = np.zeros((m, n), np.float32)
    if how == "interpreter":
        interpreted(dot_slices.fn)[(1,)](a, b, c, d, M=m, N=n, K=k)
    else:
        P = ptr(tl.float32)
        # sm_75: no m16n8k16 mma.sync, so the FMA path keeps the operands' slice layouts (on sm_80 the
        # tensor-core path converts them to its own, test_dot_mma.py)
        ck = compile(ASTSource(dot_slices, dict(a_ptr=P, b_ptr=P, c_ptr=P, d_ptr=P),
                               dict(M=m, N=n, K=k), {}), "sm_75",
                     CompileOptions(num_warps=warps), cache=False)
        line = next(ln for ln in ck.asm["tilegpu"].splitlines() if '"tile.dot"' in ln)
        assert line.count("#tilegpu.slice") == 4, line
        gpu_sim.run(ck, (1,), a, b, c, d)
    ref = tf32_round(a.sum(2)).astype(np.float64) @ tf32_round(b.sum(2)) + c.sum(2)
    np.testing.assert_allclose(d, ref, rtol=0, atol=1e-4)


# ---- compilation for the three targets -------------------------------------------------------

# sm_90 rather than sm_90a: on sm_90a these dots become tilegpu.warpgroup_dot (wgmma; its own
# no-spill checks are in test_dot_wgmma.py)
@pytest.mark.parametrize("target", ["sm_80", "sm_90", "gfx942"])
@pytest.mark.parametrize("case", ["fp32", "fp16_acc32", "fp16_acc16", "bf16", "int8"])
def test_matmul_compiles_without_spills(target, case):
    ck = compile_matmul(case, 64, 64, 32, target=target)
    assert "tile.dot" in ck.asm["tilegpu"]
    llir = ck.asm["llir"]
    assert "@__nv_" not in llir and "@__ocml" not in llir  # no device library is linked
    if target.startswith("sm"):
        assert "0 bytes spill stores" in ck.metadata["ptxas_info"], ck.metadata["ptxas_info"]
    else:
        assert ".vgpr_spill_count: 0" in ck.asm["amdgcn"]
        assert ".sgpr_spill_count: 0" in ck.asm["amdgcn"]
    assert ck.metadata["shared"] >= 64 * 32 * 2  # A and B went through shared memory


@pytest.mark.parametrize("target", TARGETS)
def test_k_loop_is_not_unrolled(target):
    """One fma per accumulator element in the loop body (64x64 over 128 threads: 32; over 256
    lanes of gfx942: 16), not K times as many."""
    P = ptr(tl.float32)
    ck = compile(ASTSource(dot_tile, dict(a_ptr=P, b_ptr=P, c_ptr=P, d_ptr=P),
                           dict(M=64, N=64, K=32, MODE="plain", OUT=tl.float32,
                                PRECISION="ieee"), {}), target, cache=False)
    if target.startswith("sm"):
        assert len(re.findall(r"\bfma\.rn\.f32", ck.asm["ptx"])) == 32
        assert "ld.shared.v4" in ck.asm["ptx"]  # the thread's B columns in one access
        assert "0 bytes spill stores" in ck.metadata["ptxas_info"]
    else:
        assert len(re.findall(r"v_fma\w*_f32", ck.asm["amdgcn"])) == 16
    assert "scf.for" not in ck.asm["tilegpu"]  # the loop is made by the lowering


@pytest.mark.parametrize("target", TARGETS)
def test_batched_dot_compiles(target):
    P = ptr(tl.float32)
    ck = compile(ASTSource(batched_dot, dict(a_ptr=P, b_ptr=P, c_ptr=P),
                           dict(B=2, M=16, N=16, K=16), {}), target, cache=False)
    assert re.search(r'"tile\.dot".*tensor<2x16x16xf32', ck.asm["tile"])


# ---- result dtypes and Triton's checks ------------------------------------------------------

@tilework.jit
def _dot_check(a_ptr, b_ptr, c_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr,
               K: tl.constexpr, K2: tl.constexpr, RANK: tl.constexpr, USE_ACC: tl.constexpr,
               PREC: tl.constexpr, ALLOW: tl.constexpr, IMP: tl.constexpr, OUT: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    if RANK == 1:
        a = tl.load(a_ptr + tl.arange(0, K))
        b = tl.load(b_ptr + tl.arange(0, K))
    else:
        a = tl.load(a_ptr + rm * K + tl.arange(0, K)[None, :])
        b = tl.load(b_ptr + tl.arange(0, K2)[:, None] * N + rn)
    acc = None
    if USE_ACC:
        acc = tl.load(c_ptr + rm * N + rn)
    d = tl.dot(a, b, acc, input_precision=PREC, allow_tf32=ALLOW, max_num_imprecise_acc=IMP,
               out_dtype=OUT)
    tl.store(out_ptr + rm * N + rn, d)


def _check(da, db=None, dc=tl.float32, dout=tl.float32, target="sm_90a", options=None, **kw):
    const = dict(M=16, N=16, K=16, K2=None, RANK=2, USE_ACC=False, PREC=None, ALLOW=None,
                 IMP=None, OUT=tl.float32)
    const.update(kw)
    if const["K2"] is None:
        const["K2"] = const["K"]
    sig = {"a_ptr": ptr(da), "b_ptr": ptr(db or da), "c_ptr": ptr(dc), "out_ptr": ptr(dout)}
    return compile(ASTSource(_dot_check, sig, const, {}), target,
                   options or CompileOptions(), cache=False)


def _dot_line(ck):
    return next(ln for ln in ck.asm["tile"].splitlines() if '"tile.dot"' in ln)


@pytest.mark.parametrize("da, kw, result", [
    (tl.float32, {}, "f32"), (tl.bfloat16, {}, "f32"), (tl.float64, {}, "f64"),
    (tl.float16, {}, "f32"), (tl.float16, {"OUT": tl.float16}, "f16"),
    (tl.int8, {"K": 32}, "i32"), (tl.int8, {"K": 32, "OUT": tl.int32}, "i32"),
    (tl.float32, {"OUT": tl.float16}, "f32"),  # fp32 inputs ignore out_dtype, as in Triton
])
def test_result_dtypes(da, kw, result):
    line = _dot_line(_check(da, dout=tl.float32, **kw))
    assert line.rstrip().endswith(f"-> tensor<16x16x{result}>"), line


@pytest.mark.parametrize("kw, prec", [
    ({}, "tf32"), ({"ALLOW": True}, "tf32"), ({"ALLOW": False}, "ieee"),
    ({"PREC": "ieee"}, "ieee"), ({"PREC": "TF32X3"}, "tf32x3"), ({"PREC": "bf16x3"}, "bf16x3")])
def test_input_precision(kw, prec):
    assert f'input_precision = "{prec}"' in _dot_line(_check(tl.float32, **kw))


def test_accumulator_operand():
    line = _dot_line(_check(tl.float16, dc=tl.float16, USE_ACC=True, OUT=tl.float16))
    assert "tensor<16x16xf16>" in line.split("->")[-1]
    line = _dot_line(_check(tl.int8, dc=tl.int32, K=32, USE_ACC=True, OUT=tl.int32))
    assert "tensor<16x16xi32>" in line.split("->")[-1]


def test_small_m_n_are_accepted_as_in_triton_3_6():
    """Triton 3.6 pads small M/N for the tensor cores: only K has a lower bound on NVIDIA."""
    _check(tl.float32, M=1, N=8, K=16)
    _check(tl.float16, M=8, N=1, K=16)
    _check(tl.int8, M=2, N=2, K=32)


@pytest.mark.parametrize("da, db, dc, kw, message", [
    (tl.float32, tl.float16, tl.float32, {}, "Both operands must be same dtype. Got fp32 and fp16"),
    (tl.int16, None, tl.float32, {}, "Unsupported lhs dtype int16"),
    (tl.uint8, None, tl.float32, {"K": 32}, "only int8 supported!"),
    (tl.float32, None, tl.float32, {"RANK": 1}, "Both inputs must be either 2D or 3D; "
                                                 "(lhs: [16] vs rhs: [16])"),
    (tl.float32, None, tl.float32, {"K2": 32},
     "First input shape ([16, 16]) and second input shape [32, 16] are not compatible for "
     "matmul (second index of first shape (16) must be equal to first index of second shape "
     "(32)"),
    (tl.float32, None, tl.float32, {"K": 8, "K2": 8},
     "Input shapes should have M >= 1, N >= 1 and K >= 16"),
    (tl.float16, None, tl.float32, {"K": 8, "K2": 8},
     "Input shapes should have M >= 1, N >= 1 and K >= 16"),
    (tl.int8, None, tl.float32, {}, "Input shapes should have M >= 1, N >= 1 and K >= 32"),
    (tl.float16, None, tl.float32, {"OUT": tl.bfloat16},
     "out_dtype=bfloat16 is unsupported. Please use out_dtype=float32/float16 and cast with "
     "`.to(tl.bfloat16)`"),
    (tl.float32, None, tl.float32, {"PREC": "fp64"},
     "input_precision must be one of ('tf32', 'tf32x3', 'ieee', 'bf16x3', 'bf16x6'). Got fp64"),
    (tl.float32, None, tl.float32, {"PREC": "ieee", "ALLOW": True},
     "Only one of input_precision and allow_tf32 can be specified"),
    (tl.float16, None, tl.float16, {"USE_ACC": True},
     "dot accumulator must have shape [16, 16] and the dtype out_dtype=fp32"),
    (tl.int8, None, tl.int32, {"K": 32, "USE_ACC": True},
     "dot accumulator must have shape [16, 16] and the dtype out_dtype=fp32"),
    (tl.float16, None, tl.float32, {"OUT": tl.int32},
     "out_dtype must be float32 or float16 for fp16 inputs"),
])
def test_rejections(da, db, dc, kw, message):
    with pytest.raises(CompilationError, match=re.escape(message)):
        _check(da, db, dc, **kw)


def test_amd_minimum_sizes_follow_the_target():
    """Triton's HIP backend: no bound for fp16/fp32 on CDNA, M, N >= 16 otherwise; tf32 on
    CDNA3 only."""
    opts = CompileOptions(target="gfx942")
    _check(tl.float16, K=8, K2=8, target="gfx942", options=opts)
    _check(tl.float32, M=1, N=1, K=1, K2=1, target="gfx942", options=opts)
    with pytest.raises(CompilationError, match=re.escape(
            "Input shapes should have M >= 16, N >= 16 and K >= 1")):
        _check(tl.bfloat16, M=8, target="gfx942", options=opts)
    with pytest.raises(CompilationError, match=re.escape(
            "input_precision must be one of ('ieee', 'bf16x3', 'bf16x6', 'tf32'). Got tf32x3")):
        _check(tl.float32, PREC="tf32x3", target="gfx942", options=opts)


def test_rejection_in_the_interpreter():
    a = np.ones((16, 16), np.float32)
    with pytest.raises(Exception, match=re.escape("Both operands must be same dtype")):
        interpreted(_dot_check.fn)[(1,)](a, a.astype(np.float16), a, a, M=16, N=16, K=16,
                                         K2=16, RANK=2, USE_ACC=False, PREC=None, ALLOW=None,
                                         IMP=None, OUT=tl.float32)


def _tile_module(sig, target=None, **kw):
    """The tile IR of _dot_check (the frontend only), for `target`'s options when given."""
    import mlir.ir as ir
    from tilework.dialects import new_context
    from tilework.frontend.codegen import build_kernel
    const = dict(M=16, N=16, K=32, K2=32, RANK=2, USE_ACC=False, PREC=None, ALLOW=None,
                 IMP=None, OUT=tl.float32)
    const.update(kw)
    options = CompileOptions(target=target) if target else CompileOptions()
    with new_context() as ctx, ir.Location.unknown():
        return str(build_kernel(_dot_check, sig, const, {}, ctx, options=options))


FP8_SIG = {"a_ptr": ptr(tl.float8e4nv), "b_ptr": ptr(tl.float8e5), "c_ptr": ptr(tl.float32),
           "out_ptr": ptr(tl.float32)}


def test_fp8_operands_in_the_frontend():
    """fp8 x fp8 (any two kinds) is a valid tl.dot with out_dtype fp32 or fp16."""
    text = _tile_module(FP8_SIG)
    assert re.search(r'"tile\.dot".*tensor<16x32xf8E4M3FN>.*tensor<32x16xf8E5M2>.*'
                     r'-> tensor<16x16xf32>', text)
    assert "-> tensor<16x16xf16>" in _tile_module(FP8_SIG, OUT=tl.float16)
    assert "max_num_imprecise_acc = 32" in _tile_module(FP8_SIG, IMP=32)
    with pytest.raises(CompilationError, match=re.escape(
            "max_num_imprecise_acc (64) must be <= K (32)")):
        _tile_module(FP8_SIG, IMP=64)
    with pytest.raises(CompilationError, match=re.escape(
            "Input shapes should have M >= 1, N >= 1 and K >= 32")):
        _tile_module(FP8_SIG, K=16, K2=16)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a", "gfx942"])
def test_fp8_dot_compiles(target):
    """fp8 operands are decoded from their bytes in the FMA loop (no LLVM float8 type)."""
    from tilework.compiler.driver import ASTSource, compile
    const = dict(M=16, N=16, K=32, K2=32, RANK=2, USE_ACC=False, PREC=None, ALLOW=None,
                 IMP=None, OUT=tl.float32)
    ck = compile(ASTSource(_dot_check, FP8_SIG, const, {}), target, cache=False)
    assert "tile.dot" in ck.asm["tile"]


# ---- tf32: fp32 operands rounded as the tensor cores' operands -------------------------------

def _f32(bits):
    return np.array(bits, np.uint32).view(np.float32)


# (fp32 bits, tf32 bits): ties (low 13 bits 0x1000) go away from zero, both signs; carries
# into the exponent; subnormals; the largest finite values; infinities
TF32_CASES = [
    (0x3F800000, 0x3F800000), (0x3F801000, 0x3F802000), (0xBF801000, 0xBF802000),
    (0x3F800FFF, 0x3F800000), (0x3F801001, 0x3F802000), (0x3F803000, 0x3F804000),
    (0x3F802FFF, 0x3F802000), (0x3FFFF000, 0x40000000), (0xC07FF800, 0xC0800000),
    (0x00001000, 0x00002000), (0x00000FFF, 0x00000000), (0x807FF000, 0x80800000),
    (0x00003000, 0x00004000), (0x7F7FE000, 0x7F7FE000), (0x7F7FEFFF, 0x7F7FE000),
    (0x7F7FF000, 0x7F800000), (0xFF7FFFFF, 0xFF800000), (0x7F800000, 0x7F800000),
    (0xFF800000, 0xFF800000),
]


def test_tf32_round_reference():
    """The test reference, and the interpreter's bit trick, on the edge cases; NaN kept."""
    from tilework.runtime.interp_shape import round_tf32
    x = _f32([c[0] for c in TF32_CASES])
    want = np.array([c[1] for c in TF32_CASES], np.uint32)
    np.testing.assert_array_equal(tf32_round(x).view(np.uint32), want)
    np.testing.assert_array_equal(round_tf32(x).view(np.uint32), want)
    nans = _f32([0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x7F801000])
    np.testing.assert_array_equal(round_tf32(nans).view(np.uint32), nans.view(np.uint32))
    assert np.isnan(tf32_round(nans)).all()
    rng = np.random.default_rng(7)
    r = (rng.standard_normal(100000) * 10.0 ** rng.uniform(-40, 38, 100000)).astype(np.float32)
    np.testing.assert_array_equal(tf32_round(r).view(np.uint32), round_tf32(r).view(np.uint32))


def _identity_operand(rng, m=16):
    """[m, 16] fp32 values: rows 0..7 carry an edge case at their diagonal element (read
    there only: an inf times the identity's zeros makes NaN elsewhere in its row), rows 8..15
    finite ties, near-ties, subnormals and random values."""
    a = (rng.standard_normal((m, 16)) * 10.0 ** rng.uniform(-3, 3, (m, 16))).astype(np.float32)
    hi = rng.integers(0, 1 << 19, (8, 16)).astype(np.uint32) << np.uint32(13)
    low = rng.choice(np.array([0x1000, 0x0FFF, 0x1001, 0x1FFF, 0x0001], np.uint32), (8, 16))
    ordinary = (hi | low) & np.uint32(0xBFFFFFFF)  # exponents below 128: finite
    ordinary[:, :4] = rng.integers(1, 1 << 23, (8, 4)).astype(np.uint32)  # subnormals
    a[8:] = ordinary.view(np.float32)
    special = _f32([0x7F800000, 0xFF800000, 0x7FC00000, 0x7F7FFFFF, 0xFF7FF000, 0x7F7FEFFF,
                    0x3F801000, 0xBF801000])
    a[np.arange(8), np.arange(8)] = special
    return a


def _check_identity(d, a, precision):
    want = tf32_round(a) if precision == "tf32" else a
    np.testing.assert_array_equal(d[8:].view(np.uint32), want[8:].view(np.uint32))
    diag, wdiag = d[np.arange(8), np.arange(8)], want[np.arange(8), np.arange(8)]
    assert np.array_equal(np.isnan(diag), np.isnan(wdiag))
    ok = ~np.isnan(wdiag)
    np.testing.assert_array_equal(diag[ok].view(np.uint32), wdiag[ok].view(np.uint32))


@pytest.mark.parametrize("how", ["interpreter", "simulated"])
@pytest.mark.parametrize("precision", ["tf32", "ieee"])
def test_tf32_rounding_of_operands(how, precision, rng):
    """a @ I: each result element is one operand element rounded as the dot rounds it."""
    a = _identity_operand(rng)
    eye = np.eye(16, dtype=np.float32)
    d = np.full((16, 16), 7.0, np.float32)
    const = dict(M=16, N=16, K=16, MODE="plain", OUT=tl.float32, PRECISION=precision)
    if how == "interpreter":
        interpreted(dot_tile.fn)[(1,)](a, eye, eye, d, **const)
    else:
        P = ptr(tl.float32)
        ck = compile(ASTSource(dot_tile, dict(a_ptr=P, b_ptr=P, c_ptr=P, d_ptr=P), const, {}),
                     "sm_80", cache=False)
        gpu_sim.run(ck, (1,), a, eye, eye, d)
    _check_identity(d, a, precision)
    d2 = np.full((16, 16), 7.0, np.float32)  # and the identity on the left: b's rounding
    if how == "interpreter":
        interpreted(dot_tile.fn)[(1,)](eye, np.ascontiguousarray(a.T), eye, d2, **const)
    else:
        gpu_sim.run(ck, (1,), eye, np.ascontiguousarray(a.T), eye, d2)
    _check_identity(np.ascontiguousarray(d2.T), a, precision)


# input_precision / allow_tf32 -> what the FMA path computes: tf32-rounded operands, or fp32
PRECISION_KW = [("default", {}, "tf32"), ("tf32", {"PREC": "tf32"}, "tf32"),
                ("allow_tf32", {"ALLOW": True}, "tf32"), ("ieee", {"PREC": "ieee"}, "ieee"),
                ("no_tf32", {"ALLOW": False}, "ieee"), ("tf32x3", {"PREC": "tf32x3"}, "ieee"),
                ("bf16x3", {"PREC": "bf16x3"}, "ieee"), ("bf16x6", {"PREC": "bf16x6"}, "ieee")]


def _run_dot_check(how, a, b, **kw):
    m, k = a.shape
    n = b.shape[1]
    const = dict(M=m, N=n, K=k, K2=k, RANK=2, USE_ACC=False, PREC=None, ALLOW=None, IMP=None,
                 OUT=tl.float32)
    const.update(kw)
    out = np.full((m, n), 7.0, np.float32)
    c = np.zeros((m, n), np.float32)
    if how == "interpreter":
        interpreted(_dot_check.fn)[(1,)](a, b, c, out, **const)
    else:
        P = ptr(tl.float32)
        # sm_75 (no tf32 mma.sync): the FMA path's exact rounding (tf32x3 = ieee bit for bit)
        ck = compile(ASTSource(_dot_check, dict(a_ptr=P, b_ptr=P, c_ptr=P, out_ptr=P), const,
                               {}), "sm_75", cache=False)
        gpu_sim.run(ck, (1,), a, b, c, out)
    return out


def check_tf32_vs_ieee(outs, a, b):
    """`outs`: name -> result of PRECISION_KW.  tf32 results: within the fp32 accumulation
    bound of the product of the tf32-rounded operands (their products are exact in fp32), and
    not within it of the fp32 product; ieee ones: within the bound of the float64 product."""
    k = a.shape[1]
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    at, bt = tf32_round(a).astype(np.float64), tf32_round(b).astype(np.float64)
    tol_ieee = k * 2.0**-23 * (np.abs(a64) @ np.abs(b64))
    tol_tf32 = k * 2.0**-23 * (np.abs(at) @ np.abs(bt))
    for name, _, computed in PRECISION_KW:
        d = outs[name].astype(np.float64)
        if computed == "tf32":
            assert (np.abs(d - at @ bt) <= tol_tf32).all(), name
            np.testing.assert_array_equal(outs[name], outs["default"])  # the same code
        else:
            assert (np.abs(d - a64 @ b64) <= tol_ieee).all(), name
            np.testing.assert_array_equal(outs[name], outs["ieee"])
    tf, ieee = outs["default"], outs["ieee"]
    assert (tf != ieee).mean() > 0.9  # tf32 is emulated: nearly every element differs
    assert (np.abs(tf - a64 @ b64) > tol_ieee).mean() > 0.5  # beyond fp32 accumulation


@pytest.mark.parametrize("how", ["interpreter", "simulated"])
@pytest.mark.parametrize("m, n, k", [(32, 32, 64), (16, 64, 32)])
def test_tf32_differs_from_ieee(how, m, n, k, rng):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    outs = {name: _run_dot_check(how, a, b, **kw) for name, kw, _ in PRECISION_KW}
    check_tf32_vs_ieee(outs, a, b)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("prec", ["tf32", "ieee"])
def test_tf32_rounding_compiles(target, prec):
    """Integer ops on the operands' bits, before shared memory, on every target (gfx942 allows
    tf32, as Triton's CDNA3); none with "ieee"."""
    P = ptr(tl.float32)
    ck = compile(ASTSource(dot_tile, dict(a_ptr=P, b_ptr=P, c_ptr=P, d_ptr=P),
                           dict(M=32, N=32, K=32, MODE="plain", OUT=tl.float32,
                                PRECISION=prec), {}), target, cache=False)
    llvm = ck.asm["llvm"]
    assert ("llvm.mlir.constant(-8192 : i32)" in llvm) == (prec == "tf32")
    assert "@__nv_" not in ck.asm["llir"] and "@__ocml" not in ck.asm["llir"]
    assert ck.asm["ptx" if target.startswith("sm") else "amdgcn"]


@pytest.mark.parametrize("target, prec, message", [
    ("gfx90a", "tf32", "input_precision must be one of ('ieee', 'bf16x3', 'bf16x6'). Got tf32"),
    ("gfx942", "tf32x3",
     "input_precision must be one of ('ieee', 'bf16x3', 'bf16x6', 'tf32'). Got tf32x3"),
    ("sm_90a", "tf32x5",
     "input_precision must be one of ('tf32', 'tf32x3', 'ieee', 'bf16x3', 'bf16x6'). Got tf32x5"),
    ("sm_80", "fp32",
     "input_precision must be one of ('tf32', 'tf32x3', 'ieee', 'bf16x3', 'bf16x6'). Got fp32"),
])
def test_input_precision_per_target(target, prec, message):
    """Triton's allowed_dot_input_precisions: CUDA's list; HIP's, with tf32 on CDNA3 only."""
    sig = {"a_ptr": ptr(tl.float32), "b_ptr": ptr(tl.float32), "c_ptr": ptr(tl.float32),
           "out_ptr": ptr(tl.float32)}
    with pytest.raises(CompilationError, match=re.escape(message)):
        _tile_module(sig, PREC=prec, K=16, K2=16, target=target)


def test_default_precision_per_target():
    """tf32 where the target allows it (NVIDIA, gfx942), else ieee (other AMD chips)."""
    sig = {"a_ptr": ptr(tl.float32), "b_ptr": ptr(tl.float32), "c_ptr": ptr(tl.float32),
           "out_ptr": ptr(tl.float32)}
    for target, want in [("sm_80", "tf32"), ("gfx942", "tf32"), ("gfx90a", "ieee")]:
        text = _tile_module(sig, K=16, K2=16, target=target)
        assert f'input_precision = "{want}"' in text, (target, text)
    assert 'input_precision = "ieee"' in _tile_module(sig, K=16, K2=16, target="gfx942",
                                                       ALLOW=False)
