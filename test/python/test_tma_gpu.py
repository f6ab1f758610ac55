"""TMA loads on an sm_90 GPU against torch: host-descriptor loads copied by
`cp.async.bulk.tensor` (2-D swizzled and several boxes wide, 3-D unswizzled, blocks past every
edge zero-filled), and a descriptor GEMM (fp16, bf16; M, N, K not multiples of the block;
several num_stages) whose operands go from TMA to wgmma; each also with `tma=False` (the
block-pointer path) to show both agree.  Compile-only checks: test_tma.py."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("TMA needs an sm_90 GPU", allow_module_level=True)

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402
from tilework.tools.tensor_descriptor import TensorDescriptor  # noqa: E402
from tma_kernels import desc_matmul  # noqa: E402


@tilework.jit
def window2d(a_desc, out, r0, c0, BM: tl.constexpr, BN: tl.constexpr):
    """The block of `a_desc` at (r0 + pid * BM, c0), stored row-major to `out`."""
    p = tl.program_id(0)
    v = a_desc.load([r0 + p * BM, c0])
    rm = p * BM + tl.arange(0, BM)
    tl.store(out + rm[:, None] * BN + tl.arange(0, BN)[None, :], v)


@tilework.jit
def copy3d(a_desc, o_desc, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    p, q = tl.program_id(0), tl.program_id(1)
    o_desc.store([p * B0, q * B1, 0], a_desc.load([p * B0, q * B1, 0]) * 2)


def cdiv(a, b):
    return (a + b - 1) // b


def padded(rows, cols, dtype):
    """A random [rows, cols] CUDA tensor whose row stride is a multiple of 16 bytes, and its
    descriptor-ready (view, strides)."""
    item = torch.empty((), dtype=dtype).element_size()
    ld = cdiv(cols * item, 16) * 16 // item
    if dtype.is_floating_point:
        buf = (torch.randn(rows, ld, device="cuda") * 2).to(dtype)
    else:
        lim = 100 if dtype == torch.int8 else 1000
        buf = torch.randint(-lim, lim, (rows, ld), device="cuda", dtype=dtype)
    return buf[:, :cols], [ld, 1]


def window(a, r0, c0, bm, bn):
    """torch: a's [bm, bn] block at (r0, c0), zero outside."""
    out = torch.zeros(bm, bn, dtype=a.dtype, device=a.device)
    rs, cs = max(r0, 0), max(c0, 0)
    re, ce = min(r0 + bm, a.shape[0]), min(c0 + bn, a.shape[1])
    if rs < re and cs < ce:
        out[rs - r0:re - r0, cs - c0:ce - c0] = a[rs:re, cs:ce]
    return out


@pytest.mark.parametrize("tma", [True, False])
@pytest.mark.parametrize("dtype, bm, bn", [(torch.float16, 64, 64), (torch.bfloat16, 32, 128),
                                           (torch.float32, 16, 32), (torch.int32, 8, 4),
                                           (torch.float16, 16, 8), (torch.int8, 32, 256)])
@pytest.mark.parametrize("r0, c0", [(0, 0), (-5, 7), (90, 61), (-40, -70)])
def test_window(dtype, bm, bn, r0, c0, tma):
    a, strides = padded(100, 70, dtype)
    grid = 2
    out = torch.full((grid * bm, bn), 77, dtype=dtype, device="cuda")
    d = TensorDescriptor(a, list(a.shape), strides, [bm, bn])
    k = window2d[(grid,)](d, out, r0, c0, BM=bm, BN=bn, **({} if tma else {"tma": False}))
    want = torch.cat([window(a, r0 + p * bm, c0, bm, bn) for p in range(grid)])
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    # TMA needs the inner offset a known multiple of 16 bytes (0: specialized divisible by
    # 16; 7, 61 and -70 take the block-pointer path, whose answer is the same)
    assert ("cp.async.bulk.tensor" in k.asm["ptx"]) == (tma and c0 == 0)


def test_copy3d():
    x = torch.randn(6, 10, 16, device="cuda")
    o = torch.zeros_like(x)
    B = (2, 4, 16)
    copy3d[(3, 3)](TensorDescriptor.from_tensor(x, list(B)),
                   TensorDescriptor.from_tensor(o, list(B)), B0=B[0], B1=B[1], B2=B[2])
    torch.testing.assert_close(o, x * 2, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("M, N, K", [(256, 256, 256), (200, 136, 120), (77, 190, 70)])
@pytest.mark.parametrize("num_stages", [1, 2, 3, 4])
@pytest.mark.parametrize("BM, BN, BK, warps", [(128, 128, 64, 4), (64, 64, 32, 4),
                                               (128, 256, 64, 8)])
def test_desc_matmul(dtype, M, N, K, num_stages, BM, BN, BK, warps):
    a, sa = padded(M, K, dtype)
    b, sb = padded(K, N, dtype)
    c = torch.full((M, N), float("nan"), device="cuda")
    ad = TensorDescriptor(a, [M, K], sa, [BM, BK])
    bd = TensorDescriptor(b, [K, N], sb, [BK, BN])
    k = desc_matmul[(cdiv(M, BM), cdiv(N, BN))](ad, bd, c, M, N, K, BM=BM, BN=BN, BK=BK,
                                               num_warps=warps, num_stages=num_stages)
    assert "cp.async.bulk.tensor" in k.asm["ptx"] and "wgmma.mma_async" in k.asm["ptx"]
    want = a.float() @ b.float()
    torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-2)


def test_desc_matmul_launches_natively_again_and_again():
    """After the first launch (the Python path) the same variant goes through the native
    launcher with its tensor maps (runtime/tma.py `launch_maps`): new tensors, a descriptor
    reused, and one whose shape changed each get their own maps."""
    from tilework.runtime import native_launch
    M = N = K = 256
    BM, BN, BK = 128, 128, 64
    c = torch.full((M, N), float("nan"), device="cuda")
    kw = dict(BM=BM, BN=BN, BK=BK, num_warps=4, num_stages=3)
    ad = None
    for trial in range(4):
        a, sa = padded(M, K, torch.float16)
        b, sb = padded(K, N, torch.float16)
        if trial != 2:  # trial 2: the descriptor of trial 1 again
            ad = TensorDescriptor(a, [M, K], sa, [BM, BK])
        else:
            a = ad.base
        bd = TensorDescriptor(b, [K, N], sb, [BK, BN])
        m = M if trial != 3 else 200  # a descriptor clipping A's rows
        ad.shape = [m, K]
        c.fill_(float("nan"))
        k = desc_matmul[(cdiv(M, BM), cdiv(N, BN))](ad, bd, c, M, N, K, **kw)
        want = a.float() @ b.float()
        want[m:] = 0  # rows past the descriptor's shape read as zeros
        torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-2)
        if native_launch.cuda_driver(Exception) is not None and native_launch.tensor_maps():
            assert k.native is not None and k.native.kinds.endswith("TT")
