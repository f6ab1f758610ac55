"""test_memdesc_trans.py's kernels on the GPU (skipped without one; sm_90a: wgmma): x @ x^T
with one in-flight wgmma reading a cp.async slot and its memdesc_trans view, and the
attention backward's pattern (x read by one dot directly and by another through tl.trans),
against torch."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from test_memdesc_trans import gram, two_dots  # noqa: E402


def _hopper():
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


@pytest.mark.skipif(not _hopper(), reason="wgmma: sm_90a")
@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("m, k, bm, nw", [(64, 1000, 64, 4), (256, 512, 128, 8)])
def test_gram(stages, m, k, bm, nw):
    x = torch.randn(m, k, device="cuda").half()
    c = torch.full((m, m), 7.0, device="cuda")
    gram[(m // bm,)](x, c, m, k, BLOCK_M=bm, BLOCK_K=64, STAGES=stages, num_warps=nw)
    torch.cuda.synchronize()
    ref = x.double() @ x.double().T
    for i in range(m // bm):  # (each program writes its rows' diagonal block)
        rows = slice(i * bm, (i + 1) * bm)
        torch.testing.assert_close(c[rows, rows].double(), ref[rows, rows], rtol=1e-4,
                                   atol=1e-2)


@pytest.mark.skipif(not _hopper(), reason="wgmma: sm_90a")
@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("trans_first", [False, True])
def test_two_dots(stages, d, trans_first):
    n = 1024
    x = torch.randn(n, d, device="cuda").half()
    p = torch.randn(64, n, device="cuda").half()
    w = torch.randn(64, d, device="cuda").half()
    acc = torch.full((64, d), 7.0, device="cuda")
    s = torch.full((64, n), 7.0, device="cuda")
    two_dots[(1,)](x, p, w, acc, s, n, BLOCK_M=64, BLOCK_N=64, D=d, STAGES=stages,
                   TRANS_FIRST=trans_first)
    torch.cuda.synchronize()
    torch.testing.assert_close(acc.double(), p.double() @ x.double(), rtol=1e-4, atol=1e-2)
    torch.testing.assert_close(s.double(), w.double() @ x.double().T, rtol=1e-4, atol=1e-2)
