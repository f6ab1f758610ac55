"""The attention forward with tilegpu-overlap-dots on (`CompileOptions.overlap_dots`), with
CompileOptions.wgmma_cp_async_fence off (no fence for the K and V rings' copies; alone and with
overlap-dots), and with dot_wgmma.RING_K_STEP on (descriptor additions), on the GPU against
SDPA: every forward config, causal and not, fp16, a masked tail (N=1000) and an even N.  The
other forward changes of issue 10 are on by default and covered by test_attention_gpu.py."""
import pytest

torch = pytest.importorskip("torch")

import attention as A  # noqa: E402
from test_attention_gpu import every_forward_config  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_every_forward_config_overlap(monkeypatch, tmp_path, causal, d, n):
    monkeypatch.setenv("TILEWORK_OVERLAP_DOTS", "1")
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(A.attn_fwd_kernel, "cache", {})
    for cfg, ck in every_forward_config(1, 2, n, d, causal, even_n=n % 128 == 0):
        if cfg.kwargs["BLOCK_M"] * d // (32 * cfg.num_warps) < 128:  # (else left alone)
            assert "wgmma.wait_group.sync.aligned 1" in ck.asm["ptx"], cfg


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_every_forward_config_unfenced(monkeypatch, tmp_path, causal, d, n, overlap):
    monkeypatch.setenv("TILEWORK_OVERLAP_DOTS", str(int(overlap)))
    monkeypatch.setenv("TILEWORK_WGMMA_CP_ASYNC_FENCE", "0")
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(A.attn_fwd_kernel, "cache", {})
    for cfg, ck in every_forward_config(1, 2, n, d, causal, even_n=n % 128 == 0):
        assert "tilegpu.no_proxy_fence" in ck.asm["tilegpu"], cfg


@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_every_forward_config_ring_k_step(monkeypatch, tmp_path, causal, d, n):
    from tilework.lowering.rules import dot_wgmma
    monkeypatch.setattr(dot_wgmma, "RING_K_STEP", True)
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))  # (the flag is not in the key)
    monkeypatch.setattr(A.attn_fwd_kernel, "cache", {})
    for _ in every_forward_config(1, 2, n, d, causal, even_n=n % 128 == 0):
        pass
