"""tl.dot on Hopper's wgmma (sm_90a) on the GPU against torch and float64 references (skipped
without a Hopper GPU): the tiled matmul with masked tails for every operand type, the large
8-warp tiles, fp8 operands, an accumulator operand and a transposed b."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework.language as tl  # noqa: E402
from tilework import CompileOptions  # noqa: E402
from tilework.compiler.driver import ASTSource, compile  # noqa: E402
from dot_gpu_inputs import matmul_inputs  # noqa: E402
from dot_kernels import dot_tile, matmul_kernel  # noqa: E402
from test_dot import CASES, cdiv, check_matmul, matmul_signature  # noqa: E402
from test_dot_wgmma import _fp8_dot, mm_contiguous  # noqa: E402


@pytest.fixture(autouse=True)
def _hopper():
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a Hopper (sm_90) GPU")


TORCH = {"fp32": torch.float32, "fp16_acc32": torch.float16, "fp16_acc16": torch.float16,
         "bf16": torch.bfloat16, "int8": torch.int8}
OUT = {np.float32: torch.float32, np.float16: torch.float16, np.int32: torch.int32}


@pytest.mark.parametrize("case", list(TORCH))
@pytest.mark.parametrize("m, n, k, bm, bn, bk, warps", [
    (100, 70, 45, 64, 64, 32, 4), (256, 256, 256, 128, 128, 64, 8),
    (300, 200, 129, 128, 64, 32, 8), (1000, 520, 300, 128, 256, 64, 8),
    (64, 64, 64, 64, 64, 64, 4)])
@pytest.mark.parametrize("plus_eq", [False, True])
def test_matmul(case, m, n, k, bm, bn, bk, warps, plus_eq):
    ck = compile(ASTSource(matmul_kernel, matmul_signature(case),
                           dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1],
                                PLUS_EQ=plus_eq), {}),
                 "sm_90a", CompileOptions(num_warps=warps), cache=False)
    assert "wgmma.mma_async" in ck.asm["ptx"]
    a, b = matmul_inputs(TORCH[case], m, k, n)
    c = torch.full((m, n), 7, device="cuda", dtype=OUT[CASES[case][4]])
    matmul_kernel[(cdiv(m, bm), cdiv(n, bn))](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACC=CASES[case][1], PLUS_EQ=plus_eq,
        num_warps=warps)
    torch.cuda.synchronize()
    check_matmul(c.cpu().double().numpy() if case != "int8" else c.cpu().numpy(),
                 a.cpu().double().numpy(), b.cpu().double().numpy(), case, bk)
    if case in ("fp16_acc32", "bf16"):
        torch.testing.assert_close(c.float(), torch.matmul(a, b).float(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("bm, bn, bk, warps", [(128, 128, 64, 8), (128, 256, 64, 8),
                                               (64, 128, 64, 4)])
def test_large_tiles(bm, bn, bk, warps):
    m = n = k = 1024
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    mm_contiguous[(m // bm, n // bn)](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0),
                                      BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, torch.matmul(a, b), rtol=1e-2, atol=1e-1)


@pytest.mark.parametrize("bm, bn, bk, warps", [(128, 128, 64, 8), (64, 128, 64, 4)])
def test_large_tiles_ring_k_step(bm, bn, bk, warps, monkeypatch, tmp_path):
    """dot_wgmma.RING_K_STEP on (off by default): the ring slots' K steps as additions."""
    from tilework.lowering.rules import dot_wgmma
    monkeypatch.setattr(dot_wgmma, "RING_K_STEP", True)
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))  # (the flag is not in the key)
    monkeypatch.setattr(mm_contiguous, "cache", {})
    test_large_tiles(bm, bn, bk, warps)


@pytest.mark.parametrize("ta, tb", [(torch.float8_e4m3fn, torch.float8_e4m3fn),
                                    (torch.float8_e5m2, torch.float8_e5m2)])
@pytest.mark.parametrize("imp", [0, 32])
def test_fp8(ta, tb, imp):
    m, n, k = 64, 32, 128
    a = (torch.randn(m, k, device="cuda") * 4).to(ta)
    b = (torch.randn(k, n, device="cuda") * 4).to(tb)
    d = torch.empty(m, n, device="cuda", dtype=torch.float32)
    _fp8_dot[(1,)](a, b, d, M=m, N=n, K=k, IMP=imp)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    bound = (a.double().abs() @ b.double().abs()) * 2.0**-9 + 1e-6  # fp8 wgmma accumulates coarsely
    assert ((d.double() - ref).abs() <= bound).all()


@pytest.mark.parametrize("mode", ["acc", "trans_b"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_dot_tile_modes(mode, dtype):
    m, n, k = 64, 64, 32
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(n, k, device="cuda", dtype=dtype) if mode == "trans_b" else \
        torch.randn(k, n, device="cuda", dtype=dtype)
    c = torch.randn(m, n, device="cuda", dtype=torch.float32)
    d = torch.empty(m, n, device="cuda", dtype=torch.float32)
    dot_tile[(1,)](a, b, c, d, M=m, N=n, K=k, MODE=mode, OUT=tl.float32, PRECISION="tf32")
    torch.cuda.synchronize()
    bb = b.T if mode == "trans_b" else b
    ref = a.double() @ bb.double() + (c.double() if mode == "acc" else 0)
    tol = 2e-3 if dtype == torch.float32 else 1e-4  # tf32 operands
    torch.testing.assert_close(d.double(), ref, rtol=tol, atol=tol * k)


@pytest.mark.parametrize("m, n, k, warps", [(64, 64, 32, 8), (128, 64, 64, 8), (256, 64, 16, 4)])
def test_dot_tile_warps(m, n, k, warps):
    """Warpgroups along N whose b tile starts mid swizzle row (64 x 64 with 8 warps: n32
    instructions in 128-byte rows), two along M, the tile repeated along M."""
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    d = torch.empty(m, n, device="cuda", dtype=torch.float32)
    dot_tile[(1,)](a, b, c, d, M=m, N=n, K=k, MODE="plain", OUT=tl.float32, PRECISION="tf32",
                   num_warps=warps)
    torch.cuda.synchronize()
    torch.testing.assert_close(d.double(), a.double() @ b.double(), rtol=1e-4, atol=1e-3)


# ---- pipelined loops with the wgmma in flight across iterations (test_pipeline_wgmma.py) ----

@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("bm, bn, bk, warps, stages", [
    (128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (128, 128, 32, 4, 4), (64, 128, 32, 4, 4),
    (64, 64, 32, 4, 2)])
@pytest.mark.parametrize("m, n, k", [(1000, 528, 336), (256, 256, 1024), (64, 64, 16)])
def test_async_wgmma_pipeline(dtype, bm, bn, bk, warps, stages, m, n, k):
    """M/N/K tails (336 = 5.25 blocks of 64), a long K, fewer K blocks than stages."""
    from test_pipeline_wgmma import build, wg_gemm
    kind = "fp16" if dtype == torch.float16 else "bf16"
    assert '"tilegpu.warpgroup_wait"' in build(kind, stages, bm, bn, bk, warps).asm["tilegpu"]
    a = torch.randn(m, k, device="cuda").to(dtype)
    b = torch.randn(k, n, device="cuda").to(dtype)
    c = torch.full((m, n), 7.0, device="cuda")
    wg_gemm[(cdiv(m, bm), cdiv(n, bn))](
        a, b, c, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, STAGES=stages, PREC="ieee",
        ACC=tl.float32, B_KN=True, IMP=0, num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()
    ref = torch.matmul(a.double(), b.double())
    torch.testing.assert_close(c.double(), ref, rtol=1e-3, atol=1e-2 * (k / 64) ** 0.5)
