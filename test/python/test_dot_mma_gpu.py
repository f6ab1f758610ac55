"""tl.dot on tensor cores (mma.sync, ldmatrix) on an NVIDIA GPU (sm_80+) against torch and
float64 references, every dtype the mma path takes, tails that are not block multiples,
K-major operands and the GEMM configs of the benchmarks (skipped without a GPU).  Error bounds
are test_dot.py's (check_matmul)."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework.language as tl  # noqa: E402
from dot_gpu_inputs import matmul_inputs  # noqa: E402
from dot_kernels import dot_tile, matmul_kernel  # noqa: E402
from test_dot import CASES, cdiv, check_matmul, tf32_round  # noqa: E402

TORCH = {"fp32": torch.float32, "fp16_acc32": torch.float16, "fp16_acc16": torch.float16,
         "bf16": torch.bfloat16, "int8": torch.int8}
OUT = {np.float32: torch.float32, np.float16: torch.float16, np.int32: torch.int32}


def _run(case, m, n, k, bm, bn, bk, warps, plus_eq=False, a_kmajor=False, b_kmajor=False):
    a, b = matmul_inputs(TORCH[case], m, k, n, a_kmajor, b_kmajor)
    c = torch.full((m, n), 7, device="cuda", dtype=OUT[CASES[case][4]])
    matmul_kernel[(cdiv(m, bm), cdiv(n, bn))](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1], PLUS_EQ=plus_eq,
        num_warps=warps)
    torch.cuda.synchronize()
    check_matmul(c.cpu().double().numpy() if case != "int8" else c.cpu().numpy(),
                 a.cpu().double().numpy(), b.cpu().double().numpy(), case, bk)
    return a, b, c


@pytest.mark.parametrize("case", list(TORCH))
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps", [
    (100, 70, 45, 32, 32, 32, 4), (300, 200, 129, 128, 64, 32, 8),
    (512, 512, 512, 128, 128, 64, 8), (257, 255, 100, 128, 128, 32, 4),
    (64, 64, 64, 64, 64, 16, 4)])
@pytest.mark.parametrize("plus_eq", [False, True])
def test_matmul_mma(case, m, n, k, bm, bn, bk, warps, plus_eq):
    if case == "int8" and bk < 32:
        pytest.skip("int8 tl.dot needs K >= 32")
    a, b, c = _run(case, m, n, k, bm, bn, bk, warps, plus_eq)
    if case in ("fp16_acc32", "bf16"):
        torch.testing.assert_close(c.float(), torch.matmul(a, b).float(), rtol=2e-2, atol=2e-2)
    elif case == "fp32":
        ta = torch.from_numpy(tf32_round(a.cpu().numpy())).cuda()
        tb = torch.from_numpy(tf32_round(b.cpu().numpy())).cuda()
        torch.testing.assert_close(c, torch.matmul(ta, tb), rtol=k * 2e-7, atol=k * 2e-7)


@pytest.mark.parametrize("case", ["fp16_acc32", "bf16", "int8", "fp32"])
@pytest.mark.parametrize("a_kmajor, b_kmajor", [(True, False), (False, True), (True, True)])
def test_matmul_mma_k_major(case, a_kmajor, b_kmajor):
    _run(case, 190, 130, 96, 64, 64, 32, 4, a_kmajor=a_kmajor, b_kmajor=b_kmajor)


@pytest.mark.parametrize("prec", ["tf32", "tf32x3"])
@pytest.mark.parametrize("mode", ["plain", "acc", "trans_a", "trans_b"])
def test_dot_tile_fp32_mma(prec, mode):
    m, n, k = 32, 16, 16
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    c = torch.randn(m, n, device="cuda")
    d = torch.zeros(m, n, device="cuda")
    aa = a.T.contiguous() if mode == "trans_a" else a
    bb = b.T.contiguous() if mode == "trans_b" else b
    dot_tile[(1,)](aa, bb, c, d, M=m, N=n, K=k, MODE=mode, OUT=tl.float32, PRECISION=prec,
                   num_warps=2)
    torch.cuda.synchronize()
    a64, b64 = a.double().cpu().numpy(), b.double().cpu().numpy()
    cc = c.double().cpu().numpy() if mode == "acc" else 0
    absref = np.abs(a64) @ np.abs(b64) + np.abs(cc)
    got = d.double().cpu().numpy()
    if prec == "tf32":
        at, bt = (tf32_round(x.cpu().numpy()).astype(np.float64) for x in (a, b))
        assert (np.abs(got - (at @ bt + cc)) <= 2 * k * 2.0**-23 * absref).all()
    else:
        assert (np.abs(got - (a64 @ b64 + cc)) <= 2 * k * 2.0**-21 * absref).all()


@pytest.mark.parametrize("m, n, k, warps", [(8, 8, 16, 1), (16, 8, 32, 4), (8, 32, 16, 2)])
def test_small_shapes(m, n, k, warps):
    """Below one instruction tile (FMA path) and warps beyond the tile (copies)."""
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    d = torch.zeros(m, n, device="cuda")
    dot_tile[(1,)](a, b, d, d, M=m, N=n, K=k, MODE="plain", OUT=tl.float32, PRECISION="tf32",
                   num_warps=warps)
    torch.cuda.synchronize()
    torch.testing.assert_close(d, torch.matmul(a.float(), b.float()), rtol=1e-3, atol=1e-3)
