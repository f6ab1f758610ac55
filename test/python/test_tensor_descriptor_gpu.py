"""Tensor descriptors on the GPU against torch: device- and host-side descriptors, 1-D..3-D,
shapes that are not block multiples, blocks past the ends (zero and NaN padding, stores that
write only inside), atomics, and the persistent matmul example (fp16, fp32 accumulation)."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework  # noqa: E402
from tilework.tools.tensor_descriptor import TensorDescriptor  # noqa: E402
from persistent_matmul import matmul  # noqa: E402
from test_tensor_descriptor import (dev_atomic_add, dev_copy1d, dev_copy2d, dev_copy3d,  # noqa: E402
                                    dev_store_window2d, dev_window2d, host_copy1d,
                                    host_copy2d, host_copy3d, host_window)

dev_copy2d_k, dev_window2d_k, dev_store_k = (tilework.jit(f) for f in
                                             (dev_copy2d, dev_window2d, dev_store_window2d))
dev_copy1d_k, dev_copy3d_k, dev_atomic_k = (tilework.jit(f) for f in
                                            (dev_copy1d, dev_copy3d, dev_atomic_add))
host_window_k, host_copy1d_k, host_copy2d_k, host_copy3d_k = (
    tilework.jit(f) for f in (host_window, host_copy1d, host_copy2d, host_copy3d))

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.int32]


@pytest.fixture(autouse=True)
def scratch_allocator():
    """In-kernel descriptors on sm_90a keep their TMA maps in global scratch, which a launch
    gets from the allocator (Triton's tests set one the same way)."""
    from tilework.runtime import allocation
    prev = allocation.get_allocator()
    tilework.set_allocator(lambda size, align, stream:
                           torch.empty(size, dtype=torch.int8, device="cuda"))
    yield
    tilework.set_allocator(prev)


def cdiv(a, b):
    return (a + b - 1) // b


def padded(shape, dtype, fill=None):
    """A random CUDA tensor of `shape` whose rows are padded to 16 bytes: (buffer, view)."""
    item = torch.empty((), dtype=dtype).element_size()
    last = cdiv(shape[-1] * item, 16) * 16 // item
    full = tuple(shape[:-1]) + (last,)
    if dtype.is_floating_point:
        buf = torch.randn(full, device="cuda").to(dtype) * 4
    else:
        buf = torch.randint(-1000, 1000, full, device="cuda", dtype=dtype)
    if fill is not None:
        buf.fill_(fill)
    return buf, buf[..., :shape[-1]]


def window(a, starts, block, fill):
    out = torch.full(block, fill, dtype=a.dtype, device=a.device)
    src = tuple(slice(max(s, 0), min(s + b, n)) for s, b, n in zip(starts, block, a.shape))
    dst = tuple(slice(x.start - s, x.stop - s) for x, s in zip(src, starts))
    if all(x.start < x.stop for x in src):
        out[dst] = a[src]
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("M, N, BM, BN", [(1000, 1000, 64, 64), (37, 50, 16, 32),
                                          (4096, 256, 128, 64)])
def test_dev_copy2d(dtype, M, N, BM, BN):
    abuf, a = padded((M, N), dtype)
    obuf, out = padded((M, N), dtype, fill=77)
    dev_copy2d_k[(cdiv(M, BM), cdiv(N, BN))](abuf, obuf, M, N, abuf.stride(0), obuf.stride(0),
                                             BM=BM, BN=BN)
    torch.testing.assert_close(out, a * 2, rtol=0, atol=0)
    assert (obuf[:, N:] == 77).all()


@pytest.mark.parametrize("pad, fill", [("zero", 0.0), ("nan", float("nan"))])
@pytest.mark.parametrize("r0, c0", [(-3, -5), (7, 40), (30, 2), (100, 100)])
def test_dev_window(pad, fill, r0, c0):
    M, N, BM, BN = 33, 45, 16, 8
    abuf, a = padded((M, N), torch.float32)
    out = torch.full((BM, BN), -777.0, device="cuda")
    dev_window2d_k[(1,)](abuf, out, M, N, abuf.stride(0), r0, c0, BM=BM, BN=BN, PAD=pad)
    torch.testing.assert_close(out, window(a, (r0, c0), (BM, BN), fill), equal_nan=True,
                               rtol=0, atol=0)


@pytest.mark.parametrize("r0, c0", [(-3, -5), (25, 40), (40, 0)])
def test_dev_store_window(r0, c0):
    M, N, BM, BN = 33, 45, 16, 8
    src = torch.randint(-100, 100, (BM, BN), device="cuda", dtype=torch.int32)
    obuf, out = padded((M, N), torch.int32, fill=-1)
    dev_store_k[(1,)](src, obuf, M, N, obuf.stride(0), r0, c0, BM=BM, BN=BN)
    want = torch.full_like(obuf, -1)
    blk = src + 1
    for i in range(BM):
        for j in range(BN):
            if 0 <= r0 + i < M and 0 <= c0 + j < N:
                want[r0 + i, c0 + j] = blk[i, j]
    assert torch.equal(obuf, want)


def test_dev_copy1d_3d():
    a = torch.randn(1000, device="cuda")
    out = torch.zeros_like(a)
    dev_copy1d_k[(cdiv(1000, 128),)](a, out, 1000, B=128)
    torch.testing.assert_close(out, a - 3, rtol=0, atol=0)
    D = (7, 9, 30)
    abuf, a3 = padded(D, torch.float16)
    obuf, o3 = padded(D, torch.float16, fill=float("nan"))
    B = (2, 4, 8)
    dev_copy3d_k[tuple(cdiv(d, b) for d, b in zip(D, B))](
        abuf, obuf, *D, abuf.stride(0), abuf.stride(1), obuf.stride(0), obuf.stride(1),
        B0=2, B1=4, B2=8)
    torch.testing.assert_close(o3, a3, rtol=0, atol=0)


def test_dev_atomic_add():
    M, N, BM, BN = 20, 13, 8, 16
    src = torch.randint(-50, 50, (BM, BN), device="cuda", dtype=torch.int32)
    obuf, out = padded((M, N), torch.int32, fill=5)
    dev_atomic_k[(6,)](src, obuf, M, N, obuf.stride(0), BM=BM, BN=BN)
    want = torch.full_like(obuf, 5)
    for p in range(6):
        r0 = p * BM // 2
        rows = min(r0 + BM, M) - r0
        want[r0:r0 + rows, 3:N] += src[:rows, :N - 3]
    assert torch.equal(obuf, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_host_descriptors(dtype):
    abuf, a = padded((1000, 999), dtype)
    obuf, out = padded((1000, 999), dtype, fill=9)
    host_copy2d_k[(cdiv(1000, 64), cdiv(999, 64))](
        TensorDescriptor(a, a.shape, a.stride(), [64, 64]),
        TensorDescriptor(out, out.shape, out.stride(), [64, 64]), BM=64, BN=64)
    torch.testing.assert_close(out, a * 2, rtol=0, atol=0)
    assert (obuf[:, 999:] == 9).all()

    a1 = padded((1000,), dtype)[0][:1000]
    o1 = torch.zeros_like(a1)
    host_copy1d_k[(cdiv(1000, 128),)](TensorDescriptor.from_tensor(a1, [128]),
                                      TensorDescriptor.from_tensor(o1, [128]), B=128)
    torch.testing.assert_close(o1, a1 - 3, rtol=0, atol=0)

    _, a3 = padded((5, 7, 33), dtype)
    _, o3 = padded((5, 7, 33), dtype)
    host_copy3d_k[(3, 2, 2)](TensorDescriptor(a3, a3.shape, a3.stride(), [2, 4, 32]),
                             TensorDescriptor(o3, o3.shape, o3.stride(), [2, 4, 32]),
                             B0=2, B1=4, B2=32)
    torch.testing.assert_close(o3, a3, rtol=0, atol=0)


@pytest.mark.parametrize("r0, c0", [(-3, -5), (25, 40)])
def test_host_nan_window(r0, c0):
    abuf, a = padded((33, 45), torch.float32)
    out = torch.zeros((16, 8), device="cuda")
    host_window_k[(1,)](TensorDescriptor(a, a.shape, a.stride(), [16, 8], padding="nan"), out,
                        r0, c0, BM=16, BN=8)
    torch.testing.assert_close(out, window(a, (r0, c0), (16, 8), float("nan")),
                               equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("device", [False, True], ids=["host", "device"])
@pytest.mark.parametrize("M, N, K", [(4096, 4096, 4096), (1000, 1000, 1000), (77, 296, 64),
                                     (512, 136, 200)])
def test_persistent_matmul(device, M, N, K):
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = matmul(a, b, device_descriptors=device)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=5e-2)

