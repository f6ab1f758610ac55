"""Descriptors made in the kernel (`tl.make_tensor_descriptor`) loaded by TMA on an sm_90
GPU against torch: the tensor map each program writes in global scratch (from
`tilework.set_allocator`), a device-descriptor GEMM (fp16, M, N, K not multiples of the
block, output poisoned) and windows of 2-D tensors at odd shapes and offsets, blocks past
every edge zero-filled; batched maps (one base per program) show each program has its own
slot.  Compile-only checks: test_device_tma.py."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("TMA needs an sm_90 GPU", allow_module_level=True)

import tilework  # noqa: E402
from tilework.runtime import allocation  # noqa: E402
from device_tma_kernels import (dev_batched, dev_box3d, dev_matmul, dev_remade,  # noqa: E402
                                dev_rows, dev_two_maps, dev_window)


def cdiv(a, b):
    return (a + b - 1) // b


@pytest.fixture(autouse=True)
def scratch_allocator():
    prev = allocation.get_allocator()
    calls = []

    def alloc(size, alignment, stream):
        calls.append((size, alignment))
        return torch.empty(size, dtype=torch.int8, device="cuda")
    tilework.set_allocator(alloc)
    yield calls
    tilework.set_allocator(prev)


def padded(rows, cols, dtype, gen=None):
    """A random [rows, cols] CUDA tensor whose row stride is a multiple of 16 elements (what
    the specialization shows), and that stride."""
    ld = cdiv(cols, 16) * 16
    if dtype.is_floating_point:
        buf = (torch.randn(rows, ld, device="cuda") * 2).to(dtype)
    else:
        lim = 100 if dtype == torch.int8 else 1000
        buf = torch.randint(-lim, lim, (rows, ld), device="cuda", dtype=dtype)
    return buf[:, :cols], ld


def window(a, r0, c0, bm, bn):
    out = torch.zeros(bm, bn, dtype=a.dtype, device=a.device)
    rs, cs = max(r0, 0), max(c0, 0)
    re, ce = min(r0 + bm, a.shape[0]), min(c0 + bn, a.shape[1])
    if rs < re and cs < ce:
        out[rs - r0:re - r0, cs - c0:ce - c0] = a[rs:re, cs:ce]
    return out


@pytest.mark.parametrize("M, N, K", [(300, 208, 176), (129, 80, 1000), (512, 512, 512),
                                     (77, 144, 100)])
@pytest.mark.parametrize("bm, bn, bk, warps, stages", [(128, 128, 64, 8, 3),
                                                       (64, 64, 32, 4, 4)])
def test_device_descriptor_matmul(M, N, K, bm, bn, bk, warps, stages, scratch_allocator):
    torch.manual_seed(0)
    a, sa = padded(M, K, torch.float16)
    b, sb = padded(K, N, torch.float16)
    c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    grid = (cdiv(M, bm) * cdiv(N, bn),)
    k = dev_matmul[grid](a, b, c, M, N, K, sa, sb, N, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                         num_warps=warps, num_stages=stages)
    ref = (a.float() @ b.float()).half()
    torch.testing.assert_close(c, ref, rtol=1e-2, atol=5e-2)
    ptx = k.asm["ptx"]
    # strides of 16-element multiples and aligned bases: A and B by TMA from their maps
    assert ptx.count("tensormap.replace.tile.global_address") == 2
    assert "cp.async.bulk.tensor.2d" in ptx
    assert scratch_allocator[-1] == (256 * grid[0], 128)


def test_device_descriptor_matmul_launched_natively(scratch_allocator):
    """After the first launch the variant goes through the native launcher, which asks the
    allocator for each launch's scratch (grids of different sizes) and passes it last."""
    from tilework.runtime import native_launch
    M, N, K = 256, 384, 128
    for grid_n in (3, 2, 3):  # programs over the first grid_n * 128 columns only
        a, sa = padded(M, K, torch.float16)
        b, sb = padded(K, N, torch.float16)
        c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
        n = grid_n * 128
        grid = (cdiv(M, 128) * grid_n,)
        k = dev_matmul[grid](a, b, c, M, n, K, sa, sb, N, BM=128, BN=128, BK=64, GROUP_M=8,
                             num_warps=8, num_stages=3)
        torch.testing.assert_close(c[:, :n], (a.float() @ b[:, :n].float()).half(),
                                   rtol=1e-2, atol=5e-2)
        assert scratch_allocator[-1] == (256 * grid[0], 128)
        if native_launch.cuda_driver(Exception) is not None and native_launch.tensor_maps():
            assert k.native is not None


@pytest.mark.parametrize("dtype, bm, bn", [(torch.float16, 64, 64), (torch.bfloat16, 32, 128),
                                           (torch.float32, 16, 32), (torch.int32, 8, 4),
                                           (torch.float16, 16, 8), (torch.int8, 32, 256)])
@pytest.mark.parametrize("r0", [0, -5, 90, -40])
def test_device_descriptor_window(dtype, bm, bn, r0):
    a, sa = padded(100, 70, dtype)
    grid = (2, cdiv(70, bn) + 1)  # (the last column of blocks lies past the edge)
    out = torch.full((grid[0] * bm, grid[1] * bn), 77, dtype=dtype, device="cuda")
    k = dev_window[grid](a, out, 100, 70, sa, r0, BM=bm, BN=bn)
    want = torch.cat([torch.cat([window(a, r0 + p * bm, q * bn, bm, bn)
                                 for q in range(grid[1])], 1) for p in range(grid[0])])
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    assert "tensormap.replace" in k.asm["ptx"] and "cp.async.bulk.tensor" in k.asm["ptx"]


def test_two_maps():
    a, s = padded(70, 64, torch.float16)
    b = torch.randn_like(a)
    b_buf = torch.zeros(70, s, dtype=torch.float16, device="cuda")
    b_buf[:, :64] = b
    out = torch.full((128, 64), float("nan"), dtype=torch.float16, device="cuda")
    dev_two_maps[(2,)](a, b_buf, out, 70, 64, s, BM=64, BN=64)
    want = torch.cat([window(a, p * 64, 0, 64, 64) + window(b, p * 64, 0, 64, 64)
                      for p in range(2)])
    torch.testing.assert_close(out, want)


def test_each_program_has_its_own_map():
    B, R, C, bm, bn = 6, 40, 32, 16, 32
    x = torch.randn(B, R, C, device="cuda")
    out = torch.full((B, 3 * bm, bn), float("nan"), device="cuda")
    k = dev_batched[(3, B)](x, out, R, C, R * C, C, BM=bm, BN=bn)
    assert k.metadata["global_scratch_size"] == 128
    want = torch.zeros(B, 3 * bm, bn, device="cuda")
    want[:, :R] = x
    torch.testing.assert_close(out, want, rtol=0, atol=0)


def test_map_rewritten_in_a_loop():
    n, R, C = 5, 50, 32
    x = torch.randn(n, R, C, device="cuda")
    out = torch.full((64, 32), float("nan"), device="cuda")
    k = dev_remade[(2,)](x, out, R, C, C, n, BM=32, BN=32)
    want = torch.zeros(64, 32, device="cuda")
    want[:R] = x.sum(0)
    torch.testing.assert_close(out, want)
    assert "tensormap.replace" in k.asm["ptx"]


def test_rank_1():
    x = torch.randn(200, device="cuda")
    out = torch.full((256,), float("nan"), device="cuda")
    k = dev_rows[(4,)](x, out, 200, B=64)
    want = torch.zeros(256, device="cuda")
    want[:200] = x * 3
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    assert "cp.async.bulk.tensor.1d" in k.asm["ptx"]


def test_rank_3():
    x = torch.randn(5, 3, 16, device="cuda")  # blocks [2, 4, 8]: past dims 0 and 1
    out = torch.full((6, 4, 8), float("nan"), device="cuda")
    k = dev_box3d[(3,)](x, out, 5, 3, 16, 48, 16, B0=2, B1=4, B2=8)
    want = torch.zeros(6, 4, 8, device="cuda")
    want[:5, :3] = x[:, :, :8]
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    assert "cp.async.bulk.tensor.3d" in k.asm["ptx"]


def test_no_allocator_is_triton_s_error():
    tilework.set_allocator(None)
    a, sa = padded(64, 64, torch.float16)
    out = torch.empty(64, 64, dtype=torch.float16, device="cuda")
    with pytest.raises(RuntimeError, match="no allocator was set. Use tilework.set_allocator"):
        dev_window[(1, 1)](a, out, 64, 64, sa, 0, BM=64, BN=64)
