"""tl.sort / topk / flip / histogram / gather / swizzle2d / item / debug_barrier / tl.const and
the atomics' sem/scope on the GPU, against torch on fresh random inputs.  Skipped without a
GPU."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework  # noqa: E402
import tilework.language as tl  # noqa: E402
from builtins_kernels import (flip_k, gather_k, hist_k, misc_k, np_swizzle, sort_k,  # noqa: E402
                              swizzle_k, topk_k)

DEV = "cuda"
SORT = tilework.jit(sort_k)
FLIP = tilework.jit(flip_k)
TOPK = tilework.jit(topk_k)
HIST = tilework.jit(hist_k)
GATHER = tilework.jit(gather_k)
SWIZZLE = tilework.jit(swizzle_k)
MISC = tilework.jit(misc_k)


def rand(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, device=DEV).mul(10).to(dtype)
    return torch.randint(-100 if dtype != torch.uint8 else 0, 100, shape, device=DEV, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16, torch.uint8,
                                   torch.int64])
@pytest.mark.parametrize("m, n, dim, desc", [(4, 64, 1, False), (1, 1024, 1, True),
                                             (32, 8, 0, False), (8, 256, 1, True)])
def test_sort(dtype, m, n, dim, desc):
    x = rand((m, n), dtype)
    y = torch.empty_like(x)
    SORT[(1,)](x, y, M=m, N=n, DIM=dim, DESC=desc)
    torch.testing.assert_close(y, torch.sort(x, dim=dim, descending=desc).values, rtol=0, atol=0)


@pytest.mark.parametrize("m, n, dim", [(4, 64, 1), (32, 8, 0), (1, 1024, 1)])
def test_flip(m, n, dim):
    x = rand((m, n), torch.float32)
    y = torch.empty_like(x)
    FLIP[(1,)](x, y, M=m, N=n, DIM=dim)
    torch.testing.assert_close(y, torch.flip(x, (dim,)), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
@pytest.mark.parametrize("m, n, k", [(4, 128, 8), (2, 1024, 16), (8, 32, 1), (1, 64, 64)])
def test_topk(dtype, m, n, k):
    x = rand((m, n), dtype)
    y = torch.empty((m, k), device=DEV, dtype=dtype)
    TOPK[(1,)](x, y, M=m, N=n, K=k)
    torch.testing.assert_close(y, torch.topk(x, k, dim=1).values, rtol=0, atol=0)


@pytest.mark.parametrize("n, block, bins", [(1000, 1024, 64), (37, 64, 16), (4096, 4096, 128)])
def test_histogram(n, block, bins):
    x = torch.randint(-3, bins + 3, (block,), device=DEV, dtype=torch.int32)
    y = torch.empty(bins, device=DEV, dtype=torch.int32)
    HIST[(1,)](x, y, n, N=block, BINS=bins)
    v = x[:n]
    want = torch.bincount(v[(v >= 0) & (v < bins)].long(), minlength=bins)
    torch.testing.assert_close(y, want.to(torch.int32), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
@pytest.mark.parametrize("m, n, km, kn, axis", [(4, 8, 16, 8, 0), (8, 16, 8, 4, 1),
                                                (64, 64, 64, 64, 1), (32, 16, 64, 16, 0)])
def test_gather(dtype, m, n, km, kn, axis):
    src = rand((m, n), dtype)
    idx = torch.randint(0, (m, n)[axis], (km, kn), device=DEV, dtype=torch.int32)
    out = torch.empty((km, kn), device=DEV, dtype=dtype)
    GATHER[(1,)](src, idx, out, M=m, N=n, KM=km, KN=kn, AXIS=axis)
    torch.testing.assert_close(out, torch.gather(src, axis, idx.long()), rtol=0, atol=0)


@pytest.mark.parametrize("size_i, size_j, size_g", [(7, 5, 3), (16, 16, 4), (10, 3, 16)])
def test_swizzle2d(size_i, size_j, size_g):
    ni = torch.full((16, 16), -1, device=DEV, dtype=torch.int32)
    nj = torch.full((16, 16), -1, device=DEV, dtype=torch.int32)
    SWIZZLE[(1,)](ni, nj, size_i, size_j, size_g, BI=16, BJ=16)
    ri, rj = np_swizzle(size_i, size_j, size_g)
    np.testing.assert_array_equal(ni.cpu().numpy()[:size_i, :size_j], ri)
    np.testing.assert_array_equal(nj.cpu().numpy()[:size_i, :size_j], rj)


def test_item_numel_barrier():
    x = torch.tensor([3.0], device=DEV)
    y = torch.randn(64, device=DEV)
    out = torch.empty_like(y)
    MISC[(1,)](x, y, out, N=64)
    torch.testing.assert_close(out, y * 3 + 64 + 23 + 10)


@tilework.jit
def const_copy(inp: tl.const, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(inp + o, mask=o < n) + 1, mask=o < n)


def test_const_pointer():
    x = torch.randn(1000, device=DEV)
    y = torch.empty_like(x)
    const_copy[(8,)](x, y, 1000, BLOCK=128)
    torch.testing.assert_close(y, x + 1)


@tilework.jit
def counter(c, out, SEM: tl.constexpr, SCOPE: tl.constexpr):
    old = tl.atomic_add(c, 1, sem=SEM, scope=SCOPE)
    tl.store(out + tl.program_id(0), old)
    tl.atomic_max(c + 1, tl.program_id(0), sem=SEM, scope=SCOPE)
    tl.atomic_cas(c + 2, 0, 7, sem=SEM, scope=SCOPE)


@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
@pytest.mark.parametrize("scope", ["gpu", "cta", "sys"])
def test_atomic_sem_scope(sem, scope):
    c = torch.zeros(3, device=DEV, dtype=torch.int32)
    out = torch.empty(512, device=DEV, dtype=torch.int32)
    counter[(512,)](c, out, SEM=sem, SCOPE=scope)
    assert c.tolist() == [512, 511, 7]
    assert sorted(out.tolist()) == list(range(512))
