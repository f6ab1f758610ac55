"""examples/attention_tma.py (the descriptor / TMA FlashAttention forward) on the GPU against
torch SDPA computed in fp32: fp16 and bf16, D 64 and 128, causal and not, N a multiple of the
blocks and not (the masked tail), grouped-query heads, outputs poisoned with NaN first (every
in-bounds element must be written).  Compile-only checks of its PTX: test_attention_tma.py."""
import math

import pytest

torch = pytest.importorskip("torch")

import attention_tma as A  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("sm90")]  # (conftest.py)


def _reference(q, k, v, causal, scale):
    g = q.shape[1] // k.shape[1]
    qf, kf, vf = (t.float() for t in (q, k, v))
    if g > 1:
        kf, vf = (t.repeat_interleave(g, dim=1) for t in (kf, vf))
    s = (qf @ kf.transpose(-1, -2)) * scale
    if causal:
        n = q.shape[2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1),
                          float("-inf"))
    return torch.softmax(s, -1) @ vf, torch.logsumexp(s, -1)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("causal", [False, True])
def test_forward_against_sdpa(dtype, d, n, causal, monkeypatch):
    dt = getattr(torch, dtype)
    torch.manual_seed(0)
    Z, H, HKV = 2, 4, 2
    q = torch.randn(Z, H, n, d, device="cuda", dtype=dt) * 0.5
    k, v = (torch.randn(Z, HKV, n, d, device="cuda", dtype=dt) * 0.5 for _ in range(2))
    scale = 1 / math.sqrt(d)
    poisoned = []
    real_empty = A._empty

    def nan_empty(like, shape, **kw):  # outputs start as NaN
        t = real_empty(like, shape, **kw).fill_(float("nan"))
        poisoned.append(t)
        return t
    monkeypatch.setattr(A, "_empty", nan_empty)
    o, lse = A.attention_forward(q, k, v, causal, scale)
    torch.cuda.synchronize()
    assert len(poisoned) == 2
    ref_o, ref_lse = _reference(q, k, v, causal, scale)
    assert not torch.isnan(o).any() and not torch.isnan(lse).any()
    tol = 2e-2 if dt == torch.bfloat16 else 4e-3
    torch.testing.assert_close(o.float(), ref_o, atol=tol, rtol=0)
    torch.testing.assert_close(lse, ref_lse, atol=1e-3, rtol=1e-3)


# fp8: P is rounded to fp8 for the second dot, each weight off by up to EPS of itself (half an
# ulp), so a row's output is off by at most EPS * max|v| (the weights' sum, l, is P's before
# rounding).  Rows attending to few keys come near that (a causal row 1 averages two values);
# a row spread over hundreds of keys averages its rounding errors out: about 3e-3 (e4m3) and
# 6e-3 (e5m2) at most here, checked against 3x that (FP8_TOL) from row FLAT_ROWS on.
FP8_EPS = {"float8_e4m3fn": 2.0 ** -4, "float8_e5m2": 2.0 ** -3}
FP8_TOL = {"float8_e4m3fn": 1e-2, "float8_e5m2": 2e-2}
FLAT_ROWS = 256


@pytest.mark.parametrize("dtype", list(FP8_TOL))
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("v_laid_out", [False, True])
def test_fp8_forward_against_sdpa(dtype, d, n, causal, v_laid_out, monkeypatch):
    """fp8 q, k, v (GQA), o fp16 against the fp32 reference of the same fp8 values; V given
    contiguous (copied transposed) or already laid out transposed (read in place)."""
    dt = getattr(torch, dtype)
    torch.manual_seed(1)
    q = (torch.randn(2, 4, n, d, device="cuda") * 0.5).to(dt)
    k, v = ((torch.randn(2, 2, n, d, device="cuda") * 0.5).to(dt) for _ in range(2))
    if v_laid_out:
        v = v.transpose(2, 3).contiguous().transpose(2, 3)
    poisoned = []
    real_empty = A._empty

    def nan_empty(like, shape, **kw):
        t = real_empty(like, shape, **kw).fill_(float("nan"))
        poisoned.append(t)
        return t
    monkeypatch.setattr(A, "_empty", nan_empty)
    o, lse = A.attention_forward(q, k, v, causal, 1 / math.sqrt(d))
    torch.cuda.synchronize()
    assert len(poisoned) == 2 and o.dtype == torch.float16
    ref_o, ref_lse = _reference(q, k, v, causal, 1 / math.sqrt(d))
    assert not torch.isnan(o).any() and not torch.isnan(lse).any()
    bound = FP8_EPS[dtype] * v.float().abs().max().item() + 1e-3
    torch.testing.assert_close(o.float(), ref_o, atol=bound, rtol=0)
    flat = slice(FLAT_ROWS if causal else 0, None)
    torch.testing.assert_close(o.float()[:, :, flat], ref_o[:, :, flat], atol=FP8_TOL[dtype],
                               rtol=0)
    torch.testing.assert_close(lse, ref_lse, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("causal", [False, True])
def test_warp_specialized_against_sdpa(d, n, causal):
    """The key loop under `tl.range(..., warp_specialize=True)` (a producer warp group issues
    the K and V copies), fp16."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, n, d, device="cuda", dtype=torch.float16) * 0.5
               for _ in range(3))
    o, lse = A.attention_forward(q, k, v, causal, 0.1, warp_specialize=True)
    ref_o, ref_lse = _reference(q, k, v, causal, 0.1)
    torch.testing.assert_close(o.float(), ref_o, atol=4e-3, rtol=0)
    torch.testing.assert_close(lse, ref_lse, atol=1e-3, rtol=1e-3)


def test_every_config_against_sdpa():
    """Each autotune config that fits (its variant compiled and run alone; the
    warp-specialized ones at D=128), fp16, D=64 and 128."""
    torch.manual_seed(0)
    for d in (64, 128):
        q, k, v = (torch.randn(1, 2, 1000, d, device="cuda", dtype=torch.float16) * 0.5
                   for _ in range(3))
        ref_o, _ = _reference(q, k, v, False, 0.1)
        for cfg in A.FWD_TMA_CONFIGS:
            if not A.config_fits(cfg, d):
                continue
            o = torch.full_like(q, float("nan"))
            lse = torch.empty(1, 2, 1000, device="cuda", dtype=torch.float32)
            descs = [A.TensorDescriptor(t, [2 * 1000, d], [d, 1], [8, d]) for t in (q, k, v, o)]
            nargs = dict(desc_q=descs[0], desc_k=descs[1], desc_v=descs[2], desc_o=descs[3],
                         HEAD_DIM=d, **cfg.kwargs)
            A.set_block_shapes(nargs)
            bm = cfg.kwargs["BLOCK_M"]
            A.attn_fwd_tma_kernel[(-(-1000 // bm), 2)](
                0.1, lse, o, *descs, 2, 1, 1000, HEAD_DIM=d, CAUSAL=False, EVEN_N=False,
                num_warps=cfg.num_warps, num_stages=cfg.num_stages, **cfg.kwargs)
            torch.cuda.synchronize()
            torch.testing.assert_close(o.float(), ref_o, atol=4e-3, rtol=0, msg=str(cfg))


@pytest.mark.parametrize("elect", [False, True])
@pytest.mark.parametrize("ws", [False, True])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("causal", [False, True])
def test_overlap_dots_against_sdpa(d, n, causal, ws, elect, monkeypatch):
    """CompileOptions.overlap_dots on (TILEWORK_OVERLAP_DOTS=1, in the cache key): P v in
    flight across the back edge, V's TMA copies issued after it (a warp-specialized consumer
    loop is left alone; causal's diagonal loop overlaps); with CompileOptions.tma_elect too
    (TILEWORK_TMA_ELECT: the copies by an elect.sync lane of warp 0).  Every config,
    autotuned and each alone, fp16."""
    monkeypatch.setenv("TILEWORK_OVERLAP_DOTS", "1")
    monkeypatch.setenv("TILEWORK_TMA_ELECT", str(int(elect)))
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, n, d, device="cuda", dtype=torch.float16) * 0.5
               for _ in range(3))
    o, lse = A.attention_forward(q, k, v, causal, 0.1, warp_specialize=ws)
    ref_o, ref_lse = _reference(q, k, v, causal, 0.1)
    torch.testing.assert_close(o.float(), ref_o, atol=4e-3, rtol=0)
    torch.testing.assert_close(lse, ref_lse, atol=1e-3, rtol=1e-3)
    for cfg in A.FWD_TMA_CONFIGS:
        if not A.config_fits(cfg, d):
            continue
        o = torch.full_like(q, float("nan"))
        lse = torch.empty(2, 4, n, device="cuda", dtype=torch.float32)
        descs = [A.TensorDescriptor(t, [8 * n, d], [d, 1], [8, d]) for t in (q, k, v, o)]
        kw = {**cfg.kwargs, "WARP_SPECIALIZE": ws}  # (each config's tile, the test's ws)
        nargs = dict(desc_q=descs[0], desc_k=descs[1], desc_v=descs[2], desc_o=descs[3],
                     HEAD_DIM=d, **kw)
        A.set_block_shapes(nargs)
        bm = cfg.kwargs["BLOCK_M"]
        A.attn_fwd_tma_kernel[(-(-n // bm), 8)](
            0.1, lse, o, *descs, 4, 1, n, HEAD_DIM=d, CAUSAL=causal,
            EVEN_N=n % cfg.kwargs["BLOCK_N"] == 0 and n % bm == 0,
            num_warps=cfg.num_warps, num_stages=cfg.num_stages, **kw)
        torch.cuda.synchronize()
        torch.testing.assert_close(o.float(), ref_o, atol=4e-3, rtol=0, msg=str(cfg))
        torch.testing.assert_close(lse, ref_lse, atol=1e-3, rtol=1e-3, msg=str(cfg))
