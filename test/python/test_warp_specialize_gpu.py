"""`tl.range(..., warp_specialize=True)` on an sm_90 GPU against torch: the descriptor GEMM
with its K loop warp-specialized (a producer warp group issuing the TMA copies, the kernel's
warps running the wgmmas) and the persistent form (the tiles' loop marked, the producer
running into the next tile), fp16 and bf16, shapes with M/N/K tails and fewer K steps than
stages, outputs poisoned with NaN first; the persistent kernel (examples/persistent_matmul.py)
with B stored [N, K] too (read as b.T: fp8 e4m3 as well), and its autotuned `matmul_tma`.
The split's results equal the unsplit kernel's bit for bit (the same wgmmas in the same
order).  Compile-only checks:
test_warp_specialize.py.  A broken split hangs rather than fails: run under `timeout`."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("warp specialization needs an sm_90 GPU", allow_module_level=True)

from tilework.tools.tensor_descriptor import TensorDescriptor  # noqa: E402
from ws_kernels import ws_matmul, ws_persistent, ws_scaled  # noqa: E402

SHAPES = [(1000, 1000, 1000), (4096, 4096, 4096), (8192, 8192, 512), (300, 200, 72)]
DTYPES = [torch.float16, torch.bfloat16]


def _sms():
    return torch.cuda.get_device_properties(0).multi_processor_count


def _run(kernel, a, b, ws, bm=128, bn=128, bk=64, warps=8, stages=3):
    M, K = a.shape
    N = b.shape[1]
    c = torch.full((M, N), float("nan"), device="cuda", dtype=a.dtype)
    ad = TensorDescriptor.from_tensor(a, [bm, bk])
    bd = TensorDescriptor.from_tensor(b, [bk, bn])
    cd = TensorDescriptor.from_tensor(c, [bm, bn])
    tiles_m, tiles_n = -(-M // bm), -(-N // bn)
    if kernel == "persistent":
        grid = (min(_sms(), tiles_m * tiles_n),)
        k = ws_persistent[grid](ad, bd, cd, M, N, K, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                                NUM_SMS=_sms(), WARP_SPECIALIZE=ws, B_NK=False, num_warps=warps,
                                num_stages=stages)
    else:
        k = ws_matmul[(tiles_m, tiles_n)](ad, bd, cd, M, N, K, BM=bm, BN=bn, BK=bk, WS=ws,
                                          num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()
    return c, k


def _inputs(M, N, K, dtype):
    torch.manual_seed(M + N + K)
    return torch.randn(M, K, device="cuda").to(dtype), torch.randn(K, N, device="cuda").to(dtype)


@pytest.mark.parametrize("kernel", ["simple", "persistent"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp16", "bf16"])
@pytest.mark.parametrize("M, N, K", SHAPES)
def test_warp_specialized_matmul(kernel, dtype, M, N, K):
    a, b = _inputs(M, N, K, dtype)
    c, k = _run(kernel, a, b, ws=True)
    assert k.metadata["num_warps"] == 12  # 8 consumers + the producer warp group
    assert "setmaxnreg.dec" in k.asm["ptx"]
    assert not torch.isnan(c).any()
    ref = a.float() @ b.float()
    tol = 1e-2 if dtype == torch.float16 else 2e-2
    torch.testing.assert_close(c.float(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("kernel", ["simple", "persistent"])
@pytest.mark.parametrize("M, N, K", [(1000, 1000, 1000), (8192, 8192, 512)])
def test_split_equals_unsplit(kernel, M, N, K):
    a, b = _inputs(M, N, K, torch.float16)
    c_ws, k_ws = _run(kernel, a, b, ws=True)
    c, k = _run(kernel, a, b, ws=False)
    assert k.metadata["num_warps"] == 8 and k_ws.metadata["num_warps"] == 12
    assert torch.equal(c_ws, c)


@pytest.mark.parametrize("cfg", [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (64, 128, 64, 4, 2),
                                 (128, 128, 64, 8, 5)])
def test_configs(cfg):
    """Other tiles, one consumer warp group (no setmaxnreg.inc), 2..5 stages, persistent."""
    bm, bn, bk, w, s = cfg
    a, b = _inputs(1000, 1000, 1000, torch.float16)
    ref = a.float() @ b.float()
    for kernel in ("simple", "persistent"):
        c, k = _run(kernel, a, b, ws=True, bm=bm, bn=bn, bk=bk, warps=w, stages=s)
        assert k.metadata["num_warps"] == w + 4
        torch.testing.assert_close(c.float(), ref, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("M, N, K", [(1000, 1000, 1000), (256, 384, 8192)])
def test_synchronous_dot(M, N, K):
    """The slot read into registers, a synchronous wgmma, the slot released at the end of
    each iteration."""
    a, b = _inputs(M, N, K, torch.float16)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=a.dtype)
    ad = TensorDescriptor.from_tensor(a, [128, 64])
    bd = TensorDescriptor.from_tensor(b, [64, 128])
    cd = TensorDescriptor.from_tensor(c, [128, 128])
    k = ws_scaled[(-(-M // 128), -(-N // 128))](ad, bd, cd, M, N, K, BM=128, BN=128, BK=64,
                                                 num_warps=8, num_stages=3)
    torch.cuda.synchronize()
    assert k.metadata["num_warps"] == 12
    torch.testing.assert_close(c.float(), 2 * (a.float() @ b.float()), rtol=1e-2, atol=5e-2)


def _run_b_nk(a, b_nk, ws, out_dtype, bm=128, bn=256, bk=64, warps=8, stages=3):
    """The persistent kernel on B stored [N, K]."""
    M, K = a.shape
    N = b_nk.shape[0]
    c = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
    ad = TensorDescriptor.from_tensor(a, [bm, bk])
    bd = TensorDescriptor.from_tensor(b_nk, [bn, bk])
    cd = TensorDescriptor.from_tensor(c, [bm, bn])
    grid = (min(_sms(), -(-M // bm) * -(-N // bn)),)
    k = ws_persistent[grid](ad, bd, cd, M, N, K, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                            NUM_SMS=_sms(), WARP_SPECIALIZE=ws, B_NK=True, num_warps=warps,
                            num_stages=stages)
    torch.cuda.synchronize()
    return c, k


FP8 = getattr(torch, "float8_e4m3fn", None)


@pytest.mark.parametrize("ws", [True, False], ids=["ws", "plain"])
@pytest.mark.parametrize("dtype", DTYPES + [FP8], ids=["fp16", "bf16", "fp8"])
# (K * 1 byte a multiple of 16: TMA's row strides)
@pytest.mark.parametrize("M, N, K", [(1000, 1000, 1008), (300, 200, 80), (4096, 4096, 4096),
                                     (8192, 8192, 512)])
def test_persistent_b_transposed(dtype, ws, M, N, K):
    """B [N, K] read as b.T: the wgmma's B is the TMA slot's transposed view (K-major: fp8
    needs it); against torch in fp32, outputs NaN-poisoned, tails in M, N and K."""
    if dtype is None:
        pytest.skip("torch has no float8_e4m3fn")
    torch.manual_seed(M + N + K)
    fp8 = dtype == FP8
    a = torch.randn(M, K, device="cuda").to(dtype)
    b_nk = torch.randn(N, K, device="cuda").to(dtype)
    out = torch.bfloat16 if fp8 else dtype
    c, k = _run_b_nk(a, b_nk, ws, out, bk=128 if fp8 else 64)
    assert k.metadata["num_warps"] == (12 if ws else 8)
    assert ("e4m3.e4m3" in k.asm["ptx"]) == fp8
    assert not torch.isnan(c).any()
    ref = a.float() @ b_nk.float().T
    tol = 2e-2 if dtype == torch.float16 else 4e-2
    torch.testing.assert_close(c.float(), ref, rtol=tol, atol=tol * (K ** 0.5))


@pytest.mark.parametrize("M, N, K", [(1000, 1000, 1008), (8192, 8192, 512)])
def test_b_transposed_split_equals_unsplit(M, N, K):
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda").to(FP8 or torch.float16)
    b_nk = torch.randn(N, K, device="cuda").to(a.dtype)
    out = torch.bfloat16 if a.element_size() == 1 else torch.float16
    bk = 128 if a.element_size() == 1 else 64
    c_ws, _ = _run_b_nk(a, b_nk, True, out, bk=bk)
    c, _ = _run_b_nk(a, b_nk, False, out, bk=bk)
    assert torch.equal(c_ws, c)


@pytest.mark.parametrize("ws", [None, True, False], ids=["tuned", "ws", "plain"])
@pytest.mark.parametrize("dtype", DTYPES + [FP8], ids=["fp16", "bf16", "fp8"])
def test_matmul_tma_autotuned(dtype, ws):
    """The example's host wrapper: autotuned over its configs (each config's pre_hook sets the
    descriptors' blocks), B [K, N] for 16-bit types, [N, K] for fp8; over all of them (the
    autotuner chooses WARP_SPECIALIZE) or over those of one WARP_SPECIALIZE value."""
    if dtype is None:
        pytest.skip("torch has no float8_e4m3fn")
    import persistent_matmul as pm
    torch.manual_seed(1)
    M, N, K = 1000, 1496, 720  # (tails; rows of 16-byte multiples, as TMA needs)
    a = torch.randn(M, K, device="cuda").to(dtype)
    b = torch.randn(K, N, device="cuda").to(dtype)
    fp8 = dtype == FP8
    c = pm.matmul_tma(a, b.T.contiguous(), b_nk=True, ws=ws) if fp8 else \
        pm.matmul_tma(a, b, ws=ws)
    chosen = pm.tuned_matmul_tma(fp8, ws).best_config.kwargs["WARP_SPECIALIZE"]
    assert ws is None or chosen == ws
    assert c.dtype == (torch.bfloat16 if fp8 else dtype)
    ref = a.float() @ b.float()
    torch.testing.assert_close(c.float(), ref, rtol=4e-2, atol=4e-2 * (K ** 0.5))
