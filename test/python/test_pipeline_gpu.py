"""tilegpu-pipeline on the GPU (skipped without one): the kernels of test_pipeline.py launched
with num_stages 1..4 (tl.range's and the launch option), against torch."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework.language as tl  # noqa: E402
from dot_kernels import matmul_kernel  # noqa: E402
from test_pipeline import attention_like, cdiv, gemm  # noqa: E402


def _gemm_ref(a, b, lo, step, bk):
    k = a.shape[1]
    keep = torch.zeros(k, device=a.device, dtype=torch.float64)
    for blk in range(lo, cdiv(k, bk), step):
        keep[blk * bk:(blk + 1) * bk] = 1
    return (a.double() * keep) @ b.double()


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("m, n, k, bm, bn, bk", [
    (256, 256, 256, 64, 64, 32), (100, 70, 45, 32, 32, 16), (64, 64, 16, 64, 64, 32),
    (130, 96, 1000, 64, 32, 64)])
def test_gemm(stages, dtype, m, n, k, bm, bn, bk):
    a = torch.randn(m, k, device="cuda").to(dtype)
    b = torch.randn(k, n, device="cuda").to(dtype)
    c = torch.full((m, n), 7.0, device="cuda")
    gemm[(cdiv(m, bm), cdiv(n, bn))](a, b, c, m, n, k, 0, 1, BLOCK_M=bm, BLOCK_N=bn,
                                     BLOCK_K=bk, STAGES=stages)
    torch.cuda.synchronize()
    torch.testing.assert_close(c.double(), _gemm_ref(a, b, 0, 1, bk), rtol=1e-3,
                               atol=1e-3 * k ** 0.5)


@pytest.mark.parametrize("lo, step, k", [(0, 2, 1000), (1, 3, 513), (40, 1, 300), (0, 1, 0)])
def test_gemm_bounds(lo, step, k):
    """Dynamic bounds, step > 1, zero-trip loops."""
    m = n = 64
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    c = torch.full((m, n), 7.0, device="cuda")
    gemm[(1, 1)](a, b, c, m, n, k, lo, step, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, STAGES=3)
    torch.cuda.synchronize()
    torch.testing.assert_close(c.double(), _gemm_ref(a, b, lo, step, 32), rtol=1e-3,
                               atol=1e-3 * max(k, 1) ** 0.5)


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("length", [200, 16])
def test_two_dots(stages, length):
    q = (torch.randn(32, 32, device="cuda") / 4).half()
    k = (torch.randn(length, 32, device="cuda") / 4).half()
    v = torch.randn(length, 32, device="cuda").half()
    o = torch.zeros(32, 32, device="cuda")
    attention_like[(1,)](q, k, v, o, length, D=32, BLOCK=32, STAGES=stages)
    torch.cuda.synchronize()
    ref = torch.zeros(32, 32, device="cuda", dtype=torch.float64)
    for s0 in range(0, length, 32):
        s = (q.float() @ k[s0:s0 + 32].float().T).half()
        ref += s.double() @ v[s0:s0 + 32].double()
    torch.testing.assert_close(o.double(), ref, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_matmul_kernel_num_stages_option(stages):
    """No hint on the loop: the launch option num_stages."""
    m, n, k = 300, 200, 520
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    c = torch.empty(m, n, device="cuda")
    matmul_kernel[(cdiv(m, 64), cdiv(n, 64))](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, ACC=tl.float32, PLUS_EQ=False,
        num_stages=stages)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, (a.float() @ b.float()), rtol=1e-2, atol=1e-2)
