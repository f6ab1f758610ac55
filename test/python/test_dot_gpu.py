"""tl.dot on the GPU (the portable FMA path) against torch.matmul and float64 references
(skipped without a GPU).  Same kernels and error bounds as test_dot.py; fp32 operands are
rounded to tf32 (ties away from zero) with input_precision "tf32", the default, so the
references round them too (tf32_round)."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework.language as tl  # noqa: E402
from dot_gpu_inputs import matmul_inputs  # noqa: E402
from dot_kernels import batched_dot, dot_tile, matmul_kernel, softmax_2d, softmax_rows  # noqa: E402
from test_dot import (CASES, PRECISION_KW, _dot_check, _identity_operand,  # noqa: E402
                      _check_identity, cdiv, check_matmul, check_tf32_vs_ieee, tf32_round)

TORCH = {"fp32": torch.float32, "fp16_acc32": torch.float16, "fp16_acc16": torch.float16,
         "bf16": torch.bfloat16, "int8": torch.int8, "fp64": torch.float64}
OUT = {np.float32: torch.float32, np.float16: torch.float16, np.int32: torch.int32,
       np.float64: torch.float64}


def _tf32(t):
    """An fp32 CUDA tensor with its elements rounded to tf32 (the test reference's rounding;
    torch.matmul of these, in fp32, is the reference of a tf32 tl.dot)."""
    return torch.from_numpy(tf32_round(t.cpu().numpy())).to(t.device)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps", [
    (100, 70, 45, 32, 32, 32, 4), (256, 256, 256, 64, 64, 32, 4), (1, 130, 17, 16, 64, 32, 2),
    (300, 200, 129, 128, 64, 32, 8), (64, 64, 64, 64, 64, 64, 4)])
@pytest.mark.parametrize("plus_eq", [False, True])
def test_matmul(case, m, n, k, bm, bn, bk, warps, plus_eq):
    a, b = matmul_inputs(TORCH[case], m, k, n)
    c = torch.full((m, n), 7, device="cuda", dtype=OUT[CASES[case][4]])
    matmul_kernel[(cdiv(m, bm), cdiv(n, bn))](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1], PLUS_EQ=plus_eq,
        num_warps=warps)
    torch.cuda.synchronize()
    check_matmul(c.cpu().double().numpy() if case != "int8" else c.cpu().numpy(),
                 a.cpu().double().numpy(), b.cpu().double().numpy(), case, bk)
    if case == "fp32":  # and against torch.matmul of the tf32-rounded operands (in fp32)
        torch.testing.assert_close(c, torch.matmul(_tf32(a), _tf32(b)), rtol=k * 2e-7,
                                   atol=k * 2e-7)
    elif case == "fp64":  # and against torch.matmul itself
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
    torch.testing.assert_close(c, _tf32(a) @ _tf32(b), rtol=1e-4, atol=1e-4)


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
    if precision == "tf32":  # the operands rounded to tf32 (not the accumulator)
        a, b = _tf32(a), _tf32(b)
    ref = a.double() @ b.double() + (c.double() if mode == "acc" else 0)
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
    ref = torch.matmul(a.double(), b.double())
    if out == tl.float16:
        # fp16 accumulators (mma.sync f16.f16): each of the k additions may round at fp16's
        # unit roundoff (2^-11), the standard bound for recursive summation; plus the final
        # rounding.  (A fixed 2e-3 failed about one run in two at K=32.)
        bound = (k + 1) * 2.0**-11 * (a.abs().double() @ b.abs().double()).max().item()
        torch.testing.assert_close(d.double(), ref, rtol=0, atol=bound)
    else:
        torch.testing.assert_close(d.float(), ref.float(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("bsz, m, n, k, warps", [(2, 16, 32, 16, 4), (4, 32, 32, 32, 8),
                                                 (8, 16, 16, 16, 1)])
def test_batched_dot(bsz, m, n, k, warps):
    a = torch.randn(bsz, m, k, device="cuda")
    b = torch.randn(bsz, k, n, device="cuda")
    c = torch.empty(bsz, m, n, device="cuda")
    batched_dot[(1,)](a, b, c, B=bsz, M=m, N=n, K=k, num_warps=warps)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, torch.bmm(_tf32(a), _tf32(b)), rtol=1e-4, atol=1e-4)


# ---- tf32 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("precision", ["tf32", "ieee"])
@pytest.mark.parametrize("seed", [0, 1])
def test_tf32_rounding_of_operands(precision, seed):
    """a @ I and I @ a: one rounded operand element per result element (ties, subnormals,
    the largest finite values, inf and NaN)."""
    a = _identity_operand(np.random.default_rng(seed))
    eye = torch.eye(16, device="cuda")
    ta = torch.from_numpy(a).cuda()
    d = torch.full((16, 16), 7.0, device="cuda")
    d2 = torch.full((16, 16), 7.0, device="cuda")
    const = dict(M=16, N=16, K=16, MODE="plain", OUT=tl.float32, PRECISION=precision)
    dot_tile[(1,)](ta, eye, eye, d, **const)
    dot_tile[(1,)](eye, ta.t().contiguous(), eye, d2, **const)
    torch.cuda.synchronize()
    _check_identity(d.cpu().numpy(), a, precision)
    _check_identity(np.ascontiguousarray(d2.cpu().numpy().T), a, precision)


@pytest.mark.parametrize("m, n, k, warps", [(32, 32, 64, 4), (16, 64, 32, 2), (64, 64, 128, 8)])
def test_tf32_differs_from_ieee(m, n, k, warps):
    """Every way of asking for tf32 (the default, input_precision, allow_tf32) rounds the
    operands; ieee, allow_tf32=False, tf32x3, bf16x3 and bf16x6 compute in fp32."""
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    c = torch.zeros(m, n, device="cuda")
    outs = {}
    for name, kw, _ in PRECISION_KW:
        const = dict(M=m, N=n, K=k, K2=k, RANK=2, USE_ACC=False, PREC=None, ALLOW=None,
                     IMP=None, OUT=tl.float32)
        const.update(kw)
        out = torch.full((m, n), 7.0, device="cuda")
        _dot_check[(1,)](a, b, c, out, num_warps=warps, **const)
        torch.cuda.synchronize()
        outs[name] = out.cpu().numpy()
    check_tf32_vs_ieee(outs, a.cpu().numpy(), b.cpu().numpy())


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
