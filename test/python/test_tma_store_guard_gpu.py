"""tile-tma-guard's run-time guard on an sm_90 GPU (`tma_store=True`, `tma_store_guard` on
and off): the persistent GEMM (examples/persistent_matmul.py, fp8 and fp16, with and without
the producer warp group) and the TMA attention forward (examples/attention_tma.py), whose
epilogue coordinates come from int arguments; outputs poisoned with NaN, M/N tails, the row
padding past C checked untouched; and a store at a negative run-time row, whose program must
take the block-pointer branch (no fault; clipped as that store clips).  Compile-only and
emulated checks: test_tma_store_guard.py."""
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("TMA needs an sm_90 GPU", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import attention_tma as A  # noqa: E402
from persistent_matmul import (TMA_CONFIGS, TMA_FP8_CONFIGS, matmul_tma_persistent,  # noqa
                               num_sms, tma_grid)
from tilework.tools.tensor_descriptor import TensorDescriptor  # noqa: E402
from tma_kernels import store_block_rt  # noqa: E402


def _config(fp8, ws, big=False):
    return [c for c in (TMA_FP8_CONFIGS if fp8 else TMA_CONFIGS)
            if c.kwargs["WARP_SPECIALIZE"] == ws and (c.kwargs["BN"] == 256) == big][0]


@pytest.mark.parametrize("guard", [True, False], ids=["guard", "off"])
@pytest.mark.parametrize("fp8, ws, big", [(True, False, False), (True, True, False),
                                          (True, True, True), (False, True, False),
                                          (False, False, True)],
                         ids=["fp8", "fp8_ws", "fp8_ws_128x256", "fp16_ws", "fp16_128x256"])
def test_persistent_gemm(fp8, ws, big, guard):
    cfg = _config(fp8, ws, big)
    k = cfg.kwargs
    torch.manual_seed(0)
    M, N, K = 1000, 776, 528  # tails in M and N; rows of 16-byte multiples
    a = torch.randn(M, K, device="cuda") * 0.5
    b = torch.randn(N, K, device="cuda") * 0.5  # B [N, K]
    if fp8:
        a, b = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        bt, out_dt = b, torch.bfloat16
    else:
        a, b = a.half(), b.half()
        bt, out_dt = b.t().contiguous(), torch.float16  # [K, N]
    buf = torch.full((M, N + 8), float("nan"), device="cuda", dtype=out_dt)
    c = buf[:, :N]
    bd = TensorDescriptor(bt, list(bt.shape), [bt.shape[1], 1],
                          [k["BN"], k["BK"]] if fp8 else [k["BK"], k["BN"]])
    ad = TensorDescriptor(a, [M, K], [K, 1], [k["BM"], k["BK"]])
    cd = TensorDescriptor(c, [M, N], [N + 8, 1], [k["BM"], k["BN"]])
    kern = matmul_tma_persistent[tma_grid](
        ad, bd, cd, M, N, K, NUM_SMS=num_sms(), B_NK=fp8, num_warps=cfg.num_warps,
        num_stages=cfg.num_stages, tma_store=True, tma_store_guard=guard,
        **{n: v for n, v in k.items() if n != "B_NK"})
    torch.cuda.synchronize()
    assert ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in kern.asm["ptx"]) == guard
    ref = a.float() @ b.float().t()
    assert not torch.isnan(c).any()
    torch.testing.assert_close(c.float(), ref, atol=0.1 if fp8 else 2e-2, rtol=1e-2)
    assert torch.isnan(buf[:, N:]).all()  # the padding past N: untouched


def _reference(q, k, v, scale):
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    return torch.softmax(s, -1) @ v.float()


@pytest.mark.parametrize("guard", [True, False], ids=["guard", "off"])
@pytest.mark.parametrize("ws", [False, True], ids=["plain", "ws"])
@pytest.mark.parametrize("d", [64, 128])
def test_attention(d, ws, guard):
    torch.manual_seed(0)
    Z, H, n, bm, bn = 2, 3, 1024, 128, 64
    q, k, v = (torch.randn(Z, H, n, d, device="cuda", dtype=torch.float16) * 0.5
               for _ in range(3))
    o = torch.full_like(q, float("nan"))
    lse = torch.full((Z, H, n), float("nan"), device="cuda")
    rows = Z * H * n
    descs = [TensorDescriptor(t, [rows, d], [d, 1], [bm if t is q or t is o else bn, d])
             for t in (q, k, v, o)]
    kern = A.attn_fwd_tma_kernel[(n // bm, Z * H)](
        0.1, lse, o, *descs, H, 1, n, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=False,
        EVEN_N=True, WARP_SPECIALIZE=ws, num_warps=8, num_stages=3, tma_store=True,
        tma_store_guard=guard)
    torch.cuda.synchronize()
    assert ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in kern.asm["ptx"]) == guard
    assert not torch.isnan(o).any()
    torch.testing.assert_close(o.float(), _reference(q, k, v, 0.1), atol=4e-3, rtol=0)


@pytest.mark.parametrize("guard", [True, False], ids=["guard", "off"])
@pytest.mark.parametrize("r0", [-40, -64, -128, 48])
def test_negative_row(r0, guard):
    """Rows r0 + pid * 64 of a 150 x 64 fp16 tensor (4 programs): those at a negative row take
    the block-pointer store (the TMA store would fault), clipped; the others TMA."""
    M, N, ld = 150, 64, 72
    buf = torch.full((M, ld), float("nan"), device="cuda", dtype=torch.float16)
    out = buf[:, :N]
    grid = (4, 1)
    x = (torch.randn(grid[0] * 64, N, device="cuda") * 4).half()
    d = TensorDescriptor(out, [M, N], [ld, 1], [64, 64])
    kern = store_block_rt[grid](x, d, r0, BM=64, BN=64, tma_store=True, tma_store_guard=guard)
    torch.cuda.synchronize()
    assert ("bulk_group" in kern.asm["ptx"]) == guard
    want = torch.full_like(out, float("nan"))
    for pm in range(grid[0]):
        lo, hi = max(r0 + pm * 64, 0), min(r0 + pm * 64 + 64, M)
        if lo < hi:
            want[lo:hi] = x[pm * 64 + lo - (r0 + pm * 64):pm * 64 + hi - (r0 + pm * 64)] * 2
    torch.testing.assert_close(out, want, rtol=0, atol=0, equal_nan=True)
    assert torch.isnan(buf[:, N:]).all()
