"""tl.dot on the GPU (the portable FMA path) against torch.matmul and float64 references
(skipped without a GPU).  Same kernels and error bounds as test_dot.py."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework.language as tl  # noqa: E402
from dot_kernels import batched_dot, dot_tile, matmul_kernel, softmax_2d, softmax_rows  # noqa: E402
from test_dot import CASES, cdiv, check_matmul  # noqa: E402

TORCH = {"fp32": torch.float32, "fp16_acc32": torch.float16, "fp16_acc16": torch.float16,
         "bf16": torch.bfloat16, "int8": torch.int8, "fp64": torch.float64}
OUT = {np.float32: torch.float32, np.float16: torch.float16, np.int32: torch.int32,
       np.float64: torch.float64}


def _inputs(case, m, k, n):
    dt = TORCH[case]
    if case == "int8":
        return (torch.randint(-128, 128, (m, k), device="cuda", dtype=dt),
                torch.randint(-128, 128, (k, n), device="cuda", dtype=dt))
    return (torch.randn(m, k, device="cuda").to(dt), torch.randn(k, n, device="cuda").to(dt))


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps", [
    (100, 70, 45, 32, 32, 32, 4), (256, 256, 256, 64, 64, 32, 4), (1, 130, 17, 16, 64, 32, 2),
    (300, 200, 129, 128, 64, 32, 8), (64, 64, 64, 64, 64, 64, 4)])
@pytest.mark.parametrize("plus_eq", [False, True])
def test_matmul(case, m, n, k, bm, bn, bk, warps, plus_eq):
    a, b = _inputs(case, m, k, n)
    c = torch.full((m, n), 7, device="cuda", dtype=OUT[CASES[case][4]])
    matmul_kernel[(cdiv(m, bm), cdiv(n, bn))](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1], PLUS_EQ=plus_eq,
        num_warps=warps)
    torch.cuda.synchronize()
    check_matmul(c.cpu().double().numpy() if case != "int8" else c.cpu().numpy(),
                 a.cpu().double().numpy(), b.cpu().double().numpy(), case, bk)
    if case in ("fp32", "fp64"):  # and against torch.matmul itself (no tf32 in torch by default)
        torch.testing.assert_close(c, torch.matmul(a, b), rtol=k * 2e-7, atol=k * 2e-7)
    elif case in ("fp16_acc32", "bf16"):  # (fp16_acc16 rounds per K block: only the bound)
        torch.testing.assert_close(c.float(), torch.matmul(a, b).float(), rtol=2e-2, atol=2e-2)


def test_matmul_strided_inputs():
    """A transposed view of a and a column slice of b (strides from the tensors)."""
    m, n, k = 96, 80, 70
    a = torch.randn(k, m, device="cuda").t()
    b = torch.randn(k, 2 * n, device="cuda")[:, ::2]
    c = torch.empty(m, n, device="cuda")
    matmul_kernel[(cdiv(m, 32), cdiv(n, 32))](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, ACC=tl.float32, PLUS_EQ=False)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["plain", "acc", "trans_a", "trans_b"])
@pytest.mark.parametrize("m, n, k, warps", [(16, 16, 16, 4), (64, 32, 16, 4), (32, 64, 32, 8),
                                            (8, 8, 16, 1), (128, 16, 16, 2), (64, 64, 64, 4)])
@pytest.mark.parametrize("precision", ["tf32", "ieee"])
def test_dot_tile(mode, m, n, k, warps, precision):
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    c = torch.randn(m, n, device="cuda")
    d = torch.empty(m, n, device="cuda")
    aa = a.t().contiguous() if mode == "trans_a" else a
    bb = b.t().contiguous() if mode == "trans_b" else b
    dot_tile[(1,)](aa, bb, c, d, M=m, N=n, K=k, MODE=mode, OUT=tl.float32, PRECISION=precision,
                   num_warps=warps)
    torch.cuda.synchronize()
    ref = a.double() @ b.double() + (c.double() if mode == "acc" else 0)
    # the FMA path computes in fp32 whatever the input_precision
    torch.testing.assert_close(d.double(), ref, rtol=0, atol=k * 2.0**-22 * (
        a.abs().double() @ b.abs().double() + c.abs().double()).max().item())


@pytest.mark.parametrize("out", [tl.float16, tl.float32])
def test_dot_tile_fp16(out):
    m = n = k = 32
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    d = torch.empty(m, n, device="cuda", dtype=torch.float16 if out == tl.float16 else
                    torch.float32)
    dot_tile[(1,)](a, b, a, d, M=m, N=n, K=k, MODE="plain", OUT=out, PRECISION="ieee")
    torch.cuda.synchronize()
    torch.testing.assert_close(d.float(), torch.matmul(a.float(), b.float()).to(d.dtype).float(),
                               rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("bsz, m, n, k, warps", [(2, 16, 32, 16, 4), (4, 32, 32, 32, 8),
                                                 (8, 16, 16, 16, 1)])
def test_batched_dot(bsz, m, n, k, warps):
    a = torch.randn(bsz, m, k, device="cuda")
    b = torch.randn(bsz, k, n, device="cuda")
    c = torch.empty(bsz, m, n, device="cuda")
    batched_dot[(1,)](a, b, c, B=bsz, M=m, N=n, K=k, num_warps=warps)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, torch.bmm(a, b), rtol=1e-4, atol=1e-4)


# ---- softmax ----------------------------------------------------------------------------------

@pytest.mark.parametrize("n_cols, block, warps", [(1000, 1024, 4), (77, 128, 1), (4096, 4096, 8)])
@pytest.mark.parametrize("ieee", [False, True])
def test_softmax_rows(n_cols, block, warps, ieee):
    x = torch.randn(33, n_cols, device="cuda") * 4
    y = torch.empty_like(x)
    softmax_rows[(33,)](x, y, n_cols, x.stride(0), BLOCK=block, IEEE=ieee, num_warps=warps)
    torch.cuda.synchronize()
    # tl.exp is ex2.approx-based on NVIDIA, as in Triton
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dim, keep", [("default", False), (0, True), (1, True)])
def test_softmax_2d(dim, keep):
    x = torch.randn(16, 32, device="cuda")
    y = torch.empty_like(x)
    softmax_2d[(1,)](x, y, M=16, N=32, DIM=dim, KEEP=keep)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.softmax(x, dim=0 if dim == "default" else dim),
                               rtol=1e-5, atol=1e-6)
