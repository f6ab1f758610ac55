"""The attention forward with tilegpu-overlap-dots on (off by default; lowering/dot_overlap.py)
on the GPU against SDPA: every forward config, causal and not, fp16, a masked tail (N=1000)
and an even N.  The other forward changes of issue 10 are on by default and covered by
test_attention_gpu.py."""
import pytest

torch = pytest.importorskip("torch")

import attention as A  # noqa: E402
from test_attention_gpu import inputs, maxerr, reference  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_every_forward_config_overlap(monkeypatch, tmp_path, causal, d, n):
    from tilework.lowering import dot_overlap
    monkeypatch.setattr(dot_overlap, "ENABLED", True)
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))  # (the flag is not in the key)
    monkeypatch.setattr(A.attn_fwd_kernel, "cache", {})
    z, h = 1, 2
    q, k, v, do = inputs(z, h, h, n, d, torch.float16)
    ro, rlse, *_ = reference(q, k, v, do, causal, 0.125)
    for cfg in A.FWD_CONFIGS:
        if not A.fwd_config_fits(cfg, d):
            continue
        o = torch.empty_like(q)
        lse = torch.empty(z, h, n, device="cuda")
        st = [q.stride(i) for i in range(3)]
        ck = A.attn_fwd_kernel[(A.cdiv(n, cfg.kwargs["BLOCK_M"]), z * h)](
            q, k, v, o, lse, 0.125, *st, *st, *st, *st, h, 1, n, HEAD_DIM=d, CAUSAL=causal,
            EVEN_N=n % 128 == 0, num_warps=cfg.num_warps, num_stages=cfg.num_stages,
            **cfg.kwargs)
        assert maxerr(o, ro) < 1e-2, cfg
        assert maxerr(lse, rlse) < 1e-3, cfg
        if cfg.kwargs["BLOCK_M"] * d // (32 * cfg.num_warps) < 128:  # (else left alone)
            assert "wgmma.wait_group.sync.aligned 1" in ck.asm["ptx"], cfg
