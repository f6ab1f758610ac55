"""tilework.torch's own backward kernels as the GPU runs them, without a GPU: compiled for
sm_90a (16-byte loads, no spills at the configs the ops launch) and executed by the SIMT
emulator (the per-thread code tilegpu-to-llvm emits) against numpy."""
import numpy as np
import pytest

import tilework.language as tl
from simt_emulator import Emulator
from tilework.torch import kernels as K

rng = np.random.default_rng(0)
F32, F16 = tl.pointer_type(tl.float32), tl.pointer_type(tl.float16)


def softmax_rows(n_rows, n_cols, dtype):
    x = rng.standard_normal((n_rows, n_cols))
    y = np.exp(x - x.max(1, keepdims=True))
    y /= y.sum(1, keepdims=True)
    return y.astype(dtype), rng.standard_normal((n_rows, n_cols)).astype(dtype)


def softmax_grad(y, dy):
    y, dy = y.astype(np.float64), dy.astype(np.float64)
    return y * (dy - (y * dy).sum(1, keepdims=True))


@pytest.mark.parametrize("n_rows,n_cols,block_n,rows", [(5, 100, 128, 4), (3, 64, 64, 2)])
def test_softmax_bwd_kernel_emulated(n_rows, n_cols, block_n, rows):
    sig = dict(dx_ptr=F32, dy_ptr=F32, y_ptr=F32, stride=tl.int32, n_rows=tl.int32,
               n_cols=tl.int32)
    emu = Emulator.from_kernel(K.softmax_bwd_kernel, sig, dict(BLOCK_N=block_n, ROWS=rows),
                               "sm_90a", 2)
    y, dy = softmax_rows(n_rows, n_cols, np.float32)
    dx = np.full_like(y, np.nan)
    emu.run(((n_rows + rows - 1) // rows, 1, 1), dx, dy, y, n_cols, n_rows, n_cols)
    np.testing.assert_allclose(dx, softmax_grad(y, dy), atol=1e-6)


def test_softmax_bwd_online_kernel_emulated():
    sig = dict(dx_ptr=F16, dy_ptr=F16, y_ptr=F16, stride=tl.int32, n_cols=tl.int32)
    emu = Emulator.from_kernel(K.softmax_bwd_online_kernel, sig, dict(BLOCK_N=64), "sm_90a", 1)
    y, dy = softmax_rows(2, 150, np.float16)
    dx = np.full_like(y, np.nan)
    emu.run((2, 1, 1), dx, dy, y, 150, 150)
    np.testing.assert_allclose(dx.astype(np.float64), softmax_grad(y, dy), atol=2e-3)


REF = {
    "gelu": lambda z: 0.5 * (1 + np.vectorize(__import__("math").erf)(z / 2 ** 0.5)) +
    z * np.exp(-z * z / 2) / (2 * np.pi) ** 0.5,
    "silu": lambda z: (s := 1 / (1 + np.exp(-z))) + z * s * (1 - s),
    "none": lambda z: np.ones_like(z),
}


@pytest.mark.parametrize("activation", list(REF))
def test_linear_act_grad_kernel_emulated(activation):
    """mma.sync on sm_80 (the emulator runs it), M, N, K not block multiples, with bias."""
    m, n, k = 40, 24, 40
    sig = dict(x_ptr=F16, w_ptr=F16, bias_ptr=F16, dy_ptr=F16, dz_ptr=F16,
               **{s: tl.int32 for s in ("M", "N", "K", "stride_xm", "stride_xk", "stride_wk",
                                        "stride_wn", "stride_ym", "stride_yn")})
    cx = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=2, HAS_BIAS=True,
              ACTIVATION=activation)
    emu = Emulator.from_kernel(K.linear_act_grad_kernel.base_fn, sig, cx, "sm_80", 4)
    x = (rng.standard_normal((m, k)) / 4).astype(np.float16)
    w = (rng.standard_normal((k, n)) / 4).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float16)
    dy = rng.standard_normal((m, n)).astype(np.float16)
    dz = np.full((m, n), np.nan, np.float16)
    grid = (2 * 1, 1, 1)
    emu.run(grid, x, w, b, dy, dz, m, n, k, k, 1, n, 1, n, 1)
    z = x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64)
    np.testing.assert_allclose(dz.astype(np.float64), dy * REF[activation](z), atol=2e-2,
                               rtol=1e-2)


@pytest.mark.parametrize("kernel,sig,cx,warps", [
    ("softmax_bwd_kernel", dict(dx_ptr=F16, dy_ptr=F16, y_ptr=F16, stride=tl.int32,
                                n_rows=tl.int32, n_cols=tl.int32),
     dict(BLOCK_N=4096, ROWS=1), 8),
    ("softmax_bwd_online_kernel", dict(dx_ptr=F16, dy_ptr=F16, y_ptr=F16, stride=tl.int32,
                                       n_cols=tl.int32), dict(BLOCK_N=4096), 8),
])
def test_softmax_bwd_sm90a_loads_16_bytes_without_spills(kernel, sig, cx, warps):
    from tilework import CompileOptions
    from tilework.compiler.driver import ASTSource, compile
    attrs = {k: {"tile.divisibility": 16} for k in sig}
    ck = compile(ASTSource(getattr(K, kernel), sig, cx, attrs), "sm_90a",
                 CompileOptions(num_warps=warps), cache=False)
    assert "ld.global.v4.b32" in ck.asm["ptx"]
    assert "0 bytes spill stores, 0 bytes spill loads" in ck.metadata["ptxas_info"]
