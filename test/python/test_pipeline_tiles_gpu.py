"""The persistent GEMM's TMA ring across its tiles (lowering/pipeline_tiles.py) on an sm_90
GPU: examples/persistent_matmul.py's `matmul_tma_persistent` with WARP_SPECIALIZE=False (its
tiles' loop `flatten=True`), few programs so each runs many tiles, K loops shorter than the
ring (one K step: the next copies wrap over several tiles) and longer, M/N tails, B as [K, N]
and [N, K] (fp8 too), outputs poisoned with NaN first; and the result equal, bit for bit, to
the warp-specialized kernel's (whose producer does not take this form: the same wgmmas in the
same order).  Compile-only checks: test_pipeline_tiles.py, tilegpu-pipeline-tma.mlir."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("TMA pipelines need an sm_90 GPU", allow_module_level=True)

from persistent_matmul import matmul_tma_persistent  # noqa: E402
from tilework.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

FP8 = getattr(torch, "float8_e4m3fn", None)


def _run(a, b, progs, ws=False, b_nk=False, out=torch.float16, cfg=(128, 128, 64, 8, 4),
         **opts):
    bm, bn, bk, warps, stages = cfg
    M, K = a.shape
    N = b.shape[0] if b_nk else b.shape[1]
    c = torch.full((M, N), float("nan"), device="cuda", dtype=out)
    ad = TensorDescriptor.from_tensor(a, [bm, bk])
    bd = TensorDescriptor.from_tensor(b, [bn, bk] if b_nk else [bk, bn])
    cd = TensorDescriptor.from_tensor(c, [bm, bn])
    grid = (min(progs, -(-M // bm) * -(-N // bn)),)
    matmul_tma_persistent[grid](ad, bd, cd, M, N, K, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                                NUM_SMS=progs, WARP_SPECIALIZE=ws, B_NK=b_nk,
                                num_warps=warps, num_stages=stages, **opts)
    torch.cuda.synchronize()
    return c


def _inputs(M, N, K, dtype=torch.float16):
    torch.manual_seed(M * 7 + N * 3 + K)
    return (torch.randn(M, K, device="cuda").to(dtype),
            torch.randn(K, N, device="cuda").to(dtype))


@pytest.mark.parametrize("cfg", [(128, 128, 64, 8, 4), (64, 128, 64, 4, 4),
                                 (128, 256, 64, 8, 3), (128, 64, 64, 4, 4)],
                         ids=lambda c: "x".join(map(str, c[:3])) + f"w{c[3]}s{c[4]}")
# (N and K multiples of 8: fp16 rows of 16 bytes, as TMA's strides need)
@pytest.mark.parametrize("M, N, K, progs", [
    (300, 200, 16, 2),      # one K step (a partial one): each copy ahead is 1-3 tiles on
    (520, 392, 64, 3),      # one K step, ~7 tiles a program: every slot reused across tiles
    (500, 264, 136, 5),     # three K steps, the last partial
    (700, 904, 1000, 7),    # sixteen
    (64, 64, 200, 4),       # one tile, fewer than the programs
    (1000, 1000, 1000, 132)])
def test_ring_across_tiles(cfg, M, N, K, progs):
    a, b = _inputs(M, N, K)
    c = _run(a, b, progs, cfg=cfg)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=5e-2)


@pytest.mark.parametrize("cfg", [(128, 128, 64, 8, 4), (64, 128, 64, 4, 4),
                                 (128, 256, 64, 8, 3), (128, 64, 64, 4, 4)],
                         ids=lambda c: "x".join(map(str, c[:3])) + f"w{c[3]}s{c[4]}")
@pytest.mark.parametrize("M, N, K, progs", [(300, 200, 16, 2), (520, 392, 64, 3),
                                            (700, 904, 1000, 7), (1000, 1000, 1000, 132)])
@pytest.mark.parametrize("opts", [dict(tma_store=True), dict(tma_store=True, stmatrix=True),
                                  dict(stmatrix=True)], ids=["tma", "tma-stmatrix", "stmatrix"])
def test_epilogues_equal_the_pointer_store(cfg, M, N, K, progs, opts):
    """`tma_store=True`: each tile's TMA store (under the run-time guard) reads its buffer
    while the next tile's K loop runs (tilegpu-tma-store-wait-later); `stmatrix=True`: the
    accumulator written to shared memory by stmatrix (the TMA store's buffer, or the pointer
    store's conversion).  The result equals the default epilogue's bit for bit (the same
    accumulators), every tile written (the output poisoned first)."""
    a, b = _inputs(M, N, K)
    want = _run(a, b, progs, cfg=cfg)
    got = _run(a, b, progs, cfg=cfg, **opts)
    assert torch.equal(got, want)
    torch.testing.assert_close(got.float(), a.float() @ b.float(), rtol=1e-2, atol=5e-2)


@pytest.mark.parametrize("M, N, K, progs", [(300, 200, 16, 2), (500, 264, 136, 5),
                                            (520, 392, 64, 3), (1000, 1000, 1000, 132)])
def test_equals_the_warp_specialized_kernel(M, N, K, progs):
    a, b = _inputs(M, N, K)
    assert torch.equal(_run(a, b, progs), _run(a, b, progs, ws=True))


@pytest.mark.parametrize("dtype", [torch.float16, FP8], ids=["fp16", "fp8"])
@pytest.mark.parametrize("M, N, K, progs", [(300, 200, 32, 3), (520, 392, 512, 3),
                                            (1000, 1000, 1008, 132)])
def test_b_stored_n_by_k(dtype, M, N, K, progs):
    a, b = _inputs(M, N, K)
    a, b_nk = a.to(dtype), b.T.contiguous().to(dtype)
    out = torch.bfloat16 if dtype == FP8 else torch.float16
    cfg = (128, 128, 128, 8, 4) if dtype == FP8 else (128, 128, 64, 8, 4)
    c = _run(a, b_nk, progs, b_nk=True, out=out, cfg=cfg)
    torch.testing.assert_close(c.float(), a.float() @ b_nk.float().T, rtol=2e-2, atol=0.1)
