"""The memory-bound examples without a GPU: interpreted against numpy, and compiled for sm_90a
(16-byte loads, no local memory, no spills) and gfx942 (dwordx4 loads)."""
import math

import numpy as np
import pytest

import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from fused_epilogue import bias_gelu_rowsum
from layernorm import column_sum, layernorm_bwd, layernorm_fwd
from softmax import softmax_kernel, softmax_online_kernel, softmax_prefetch_kernel

rng = np.random.default_rng()
H, F = tl.pointer_type(tl.float16), tl.pointer_type(tl.float32)
ROWS = {"stride": tl.int32, "n_rows": tl.int32, "n_cols": tl.int32}


def _aligned(sig):
    return {k: {"tile.divisibility": 16} for k, v in sig.items() if v.is_ptr() or k in
            ("stride", "in_stride", "out_stride", "n_cols")}


KERNELS = {
    "softmax": (softmax_kernel, {"out_ptr": H, "in_ptr": H, "in_stride": tl.int32,
                                 "out_stride": tl.int32, "n_rows": tl.int32,
                                 "n_cols": tl.int32}, {"BLOCK_N": 1024, "ROWS": 4}, 8),
    "softmax_prefetch": (softmax_prefetch_kernel, {"out_ptr": H, "in_ptr": H,
                                                   "in_stride": tl.int32,
                                                   "out_stride": tl.int32, "n_rows": tl.int32,
                                                   "n_cols": tl.int32}, {"BLOCK_N": 32768}, 16),
    "softmax_online": (softmax_online_kernel, {"out_ptr": H, "in_ptr": H,
                                               "in_stride": tl.int32, "out_stride": tl.int32,
                                               "n_cols": tl.int32}, {"BLOCK_N": 4096}, 8),
    "layernorm_fwd": (layernorm_fwd, {"x_ptr": H, "y_ptr": H, "w_ptr": H, "b_ptr": H,
                                      "mean_ptr": F, "rstd_ptr": F, **ROWS, "eps": tl.float32},
                      {"BLOCK_N": 4096, "ROWS": 1, "RMS": False}, 8),
    "rmsnorm_fwd": (layernorm_fwd, {"x_ptr": H, "y_ptr": H, "w_ptr": H, "b_ptr": H,
                                    "mean_ptr": F, "rstd_ptr": F, **ROWS, "eps": tl.float32},
                    {"BLOCK_N": 4096, "ROWS": 1, "RMS": True}, 8),
    "layernorm_bwd": (layernorm_bwd, {"dy_ptr": H, "x_ptr": H, "w_ptr": H, "mean_ptr": F,
                                      "rstd_ptr": F, "dx_ptr": H, "dw_part_ptr": F,
                                      "db_part_ptr": F, **ROWS, "rows_per_prog": tl.int32},
                      {"BLOCK_N": 4096, "ROWS": 1, "RMS": False}, 8),
    "bias_gelu_rowsum": (bias_gelu_rowsum, {"x_ptr": H, "bias_ptr": H, "y_ptr": H,
                                            "sum_ptr": F, **ROWS},
                         {"BLOCK_N": 4096, "ROWS": 1}, 8),
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_sm90a_has_16_byte_loads_and_no_local_memory(name):
    fn, sig, cx, warps = KERNELS[name]
    ck = compile(ASTSource(fn, sig, cx, _aligned(sig)), "sm_90a",
                 CompileOptions(num_warps=warps), cache=False)
    ptx = ck.asm["ptx"]
    assert "ld.global.v4.b32" in ptx
    assert ".local" not in ptx
    info = ck.metadata["ptxas_info"]
    assert "0 bytes spill stores, 0 bytes spill loads" in info, info
    assert "0 bytes stack frame" in info, info


@pytest.mark.parametrize("name", list(KERNELS))
def test_gfx942_has_dwordx4_loads(name):
    fn, sig, cx, warps = KERNELS[name]
    ck = compile(ASTSource(fn, sig, cx, _aligned(sig)), "gfx942",
                 CompileOptions(num_warps=warps), cache=False)
    assert "global_load_dwordx4" in ck.asm["amdgcn"]
    assert "scratch_" not in ck.asm["amdgcn"]  # no spills to scratch memory


def _run(fn, grid, *args, **kw):
    fn.interpret = True
    try:
        fn[grid](*args, **kw)
    finally:
        fn.interpret = False


@pytest.mark.parametrize("m, n, block, rows", [(37, 200, 256, 4), (5, 1000, 1024, 1),
                                              (64, 16, 16, 16)])
def test_softmax_interpreted(m, n, block, rows):
    x = (rng.standard_normal((m, n)) * 3).astype(np.float32)
    out = np.full_like(x, np.nan)
    _run(softmax_kernel, (math.ceil(m / rows),), out, x, n, n, m, n, BLOCK_N=block, ROWS=rows)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("m, progs", [(11, 3), (2, 5), (9, 9)])
def test_prefetch_softmax_interpreted(m, progs):
    """Programs walk rows with a stride, loading the next row first: row counts that are not
    a multiple of the programs, and more programs than rows."""
    x = (rng.standard_normal((m, 300)) * 3).astype(np.float16)
    out = np.full_like(x, np.nan)
    _run(softmax_prefetch_kernel, (progs,), out, x, 300, 300, m, 300, BLOCK_N=512)
    xf = x.astype(np.float64)
    ref = np.exp(xf - xf.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-3, atol=1e-6)


def test_online_softmax_interpreted():
    x = (rng.standard_normal((3, 5000)) * 3).astype(np.float32)
    out = np.full_like(x, np.nan)
    _run(softmax_online_kernel, (3,), out, x, 5000, 5000, 5000, BLOCK_N=1024)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("rms", [False, True])
def test_norms_interpreted(rms):
    m, n = 37, 200
    x = rng.standard_normal((m, n)).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    y = np.full_like(x, np.nan)
    mean = np.full(m, np.nan, np.float32)
    rstd = np.full(m, np.nan, np.float32)
    _run(layernorm_fwd, (math.ceil(m / 4),), x, y, w, b, mean, rstd, n, m, n, 1e-5,
         BLOCK_N=256, ROWS=4, RMS=rms)
    xd = x.astype(np.float64)
    if rms:
        r = 1 / np.sqrt((xd * xd).mean(1) + 1e-5)
        xhat = xd * r[:, None]
        ref = xhat * w
    else:
        mu = xd.mean(1)
        r = 1 / np.sqrt(((xd - mu[:, None]) ** 2).mean(1) + 1e-5)
        xhat = (xd - mu[:, None]) * r[:, None]
        ref = xhat * w + b
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    dy = rng.standard_normal((m, n)).astype(np.float32)
    dx = np.full_like(x, np.nan)
    parts, rpp = 5, 8
    dwp = np.full((parts, n), np.nan, np.float32)
    dbp = np.full((parts, n), np.nan, np.float32)
    _run(layernorm_bwd, (parts,), dy, x, w, mean, rstd, dx, dwp, dbp, n, m, n, rpp,
         BLOCK_N=256, ROWS=4, RMS=rms)
    dw = np.full(n, np.nan, np.float32)
    _run(column_sum, (2,), dwp, dw, parts, n, BLOCK_P=4, BLOCK_N=128)
    wdy = dy * w
    if rms:
        dx_ref = (wdy - xhat * (xhat * wdy).mean(1)[:, None]) * r[:, None]
    else:
        dx_ref = (wdy - (xhat * (xhat * wdy).mean(1)[:, None] + wdy.mean(1)[:, None])) \
            * r[:, None]
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dw, (dy * xhat).sum(0), rtol=1e-4, atol=1e-4)


def test_bias_gelu_rowsum_interpreted():
    m, n = 37, 200
    x = rng.standard_normal((m, n)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    y = np.full_like(x, np.nan)
    s = np.full(m, np.nan, np.float32)
    _run(bias_gelu_rowsum, (math.ceil(m / 4),), x, b, y, s, n, m, n, BLOCK_N=256, ROWS=4)
    xb = (x + b).astype(np.float64)
    ref = 0.5 * xb * (1 + np.vectorize(math.erf)(xb / math.sqrt(2)))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, ref.sum(1), rtol=1e-4, atol=1e-4)


# ---- the matmul examples (autotuned; interpreted: the first config) -------------------------
from fp8_matmul import fp8_matmul_kernel  # noqa: E402
from linear_activation import ACTIVATIONS, linear_kernel  # noqa: E402
from matmul import ALL_CONFIGS as ALL_MM_CONFIGS  # noqa: E402
from matmul import grid as mm_grid  # noqa: E402
from matmul import prune_configs as mm_prune  # noqa: E402
from matmul import matmul_kernel  # noqa: E402
from test_fp8 import ref_decode, ref_encode  # noqa: E402


def _run_tuned(kernel, *args, **kw):
    kernel.base_fn.interpret = True
    try:
        kernel[mm_grid](*args, **kw)
    finally:
        kernel.base_fn.interpret = False


@pytest.mark.parametrize("m, n, k", [(100, 70, 45), (130, 257, 128), (1, 300, 64), (260, 1, 7)])
def test_matmul_interpreted(m, n, k):
    """Tails in every dimension; K a multiple of BLOCK_K (the EVEN_K heuristic) and not."""
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    _run_tuned(matmul_kernel, a, b, c, m, n, k, k, 1, n, 1, n, 1)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)
    # the first config the shape's pruning keeps (m = 1: the small-M tiles)
    first = mm_prune(ALL_MM_CONFIGS, {"M": m, "N": n, "K": k})[0]
    assert matmul_kernel.best_config == first
    assert (first.kwargs["BLOCK_M"] <= 32) == (m <= 32)
    # a transposed view of b (strides swapped)
    bt = np.ascontiguousarray(b.T)
    c2 = np.full((m, n), np.nan, np.float32)
    _run_tuned(matmul_kernel, a, bt, c2, m, n, k, k, 1, 1, k, n, 1)
    np.testing.assert_array_equal(c2, c)


def _act_ref(z, act):
    if act == "gelu":
        return 0.5 * z * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
    if act == "gelu_tanh":
        return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))
    if act == "silu":
        return z / (1 + np.exp(-z))
    return z


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_activation_interpreted(act, bias):
    m, n, k = 70, 90, 100
    x = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.standard_normal((k, n)).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float16)
    y = np.full((m, n), np.nan, np.float32)
    _run_tuned(linear_kernel, x, w, b if bias else None, y, m, n, k, k, 1, n, 1, n, 1,
               HAS_BIAS=bias, ACTIVATION=act)
    z = x.astype(np.float64) @ w.astype(np.float64) + (b if bias else 0)
    np.testing.assert_allclose(y, _act_ref(z, act), rtol=1e-4, atol=1e-4)


def test_fp8_matmul_interpreted():
    m, n, k = 70, 90, 300
    a8 = ref_encode(rng.standard_normal((m, k)) * 4, "fp8e4nv")
    b8 = ref_encode(rng.standard_normal((k, n)), "fp8e4nv")
    sa, sb = np.array([0.5], np.float32), np.array([3.0], np.float32)
    c = np.full((m, n), np.nan, np.float32)
    _run_tuned(fp8_matmul_kernel, a8, b8, c, sa, sb, m, n, k, k, 1, n, 1, n, 1)
    ref = ref_decode(a8, "fp8e4nv").astype(np.float64) @ \
        ref_decode(b8, "fp8e4nv").astype(np.float64) * 1.5
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


MM_SIG = {n: tl.int32 for n in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                                 "stride_bn", "stride_cm", "stride_cn")}
SMALL = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}
MM_KERNELS = {
    "matmul": (matmul_kernel, {"a_ptr": H, "b_ptr": H, "c_ptr": H, **MM_SIG},
               {**SMALL, "EVEN_K": False}),
    "linear_gelu": (linear_kernel, {"x_ptr": H, "w_ptr": H, "bias_ptr": H, "y_ptr": H,
                                    **{k.replace("am", "xm").replace("ak", "xk")
                                       .replace("bk", "wk").replace("bn", "wn")
                                       .replace("cm", "ym").replace("cn", "yn"): v
                                       for k, v in MM_SIG.items()}},
                    {**SMALL, "HAS_BIAS": True, "ACTIVATION": "gelu"}),
    "fp8_matmul": (fp8_matmul_kernel, {"a_ptr": tl.pointer_type(tl.uint8),
                                       "b_ptr": tl.pointer_type(tl.uint8), "c_ptr": H,
                                       "scale_a_ptr": F, "scale_b_ptr": F, **MM_SIG},
                   SMALL),
}


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
@pytest.mark.parametrize("name", list(MM_KERNELS))
def test_matmul_examples_compile(name, target):
    fn, sig, cx = MM_KERNELS[name]
    attrs = {k: {"tile.divisibility": 16} for k, v in sig.items() if v.is_ptr()}
    ck = compile(ASTSource(fn.base_fn, sig, cx, attrs), target, CompileOptions(num_warps=4))
    if target == "sm_90a":
        info = ck.metadata["ptxas_info"]
        assert "0 bytes spill stores, 0 bytes spill loads" in info, info
    else:
        assert "scratch_" not in ck.asm["amdgcn"]
