"""tl.join / split / interleave / cat on the GPU against torch (skipped without a GPU)."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from shape_join_kernels import (cat_kernel, interleave_kernel, join_kernel,  # noqa: E402
                                join_split_roundtrip, scalar_join_split, split_kernel)

SHAPES = [(8, 16, 4), (1, 4, 1), (32, 64, 8), (2, 1, 2), (64, 64, 4)]
DTYPES = [torch.float32, torch.float16, torch.int16, torch.int64]


def _rand(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, device="cuda").to(dtype)
    return torch.randint(-1000, 1000, shape, device="cuda", dtype=dtype)


@pytest.mark.parametrize("m, n, warps", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_join(m, n, warps, dtype):
    a, b = _rand((m, n), dtype), _rand((m, n), dtype)
    out = torch.zeros(m, n, 2, device="cuda", dtype=dtype)
    join_kernel[(1,)](a, b, out, M=m, N=n, num_warps=warps)
    torch.cuda.synchronize()
    assert torch.equal(out, torch.stack([a, b], -1))


@pytest.mark.parametrize("m, n, warps", SHAPES)
def test_split(m, n, warps):
    x = torch.randn(m, n, 2, device="cuda")
    lo, hi = torch.zeros(m, n, device="cuda"), torch.zeros(m, n, device="cuda")
    split_kernel[(1,)](x, lo, hi, M=m, N=n, SCALE=3.0, num_warps=warps)
    torch.cuda.synchronize()
    assert torch.equal(lo, x[..., 0] * 3) and torch.equal(hi, x[..., 1] * 3)


@pytest.mark.parametrize("n, warps", [(256, 4), (4, 4), (1024, 8), (2, 1), (8192, 4)])
def test_join_split_roundtrip(n, warps):
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    lo, hi = torch.zeros_like(a), torch.zeros_like(a)
    join_split_roundtrip[(1,)](a, b, lo, hi, N=n, num_warps=warps)
    torch.cuda.synchronize()
    assert torch.equal(lo, a + 1) and torch.equal(hi, b * 2)


@pytest.mark.parametrize("m, n, warps", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_interleave(m, n, warps, dtype):
    a, b = _rand((m, n), dtype), _rand((m, n), dtype)
    out = torch.zeros(m, 2 * n, device="cuda", dtype=dtype)
    interleave_kernel[(1,)](a, b, out, M=m, N=n, num_warps=warps)
    torch.cuda.synchronize()
    assert torch.equal(out, torch.stack([a, b], -1).reshape(m, 2 * n))


@pytest.mark.parametrize("n, warps", [(16, 4), (64, 4), (1024, 4), (4096, 8), (1, 1)])
def test_cat(n, warps):
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out, s = torch.zeros(2 * n, device="cuda"), torch.zeros(1, device="cuda")
    cat_kernel[(1,)](a, b, out, s, N=n, num_warps=warps)
    torch.cuda.synchronize()
    assert torch.equal(out, torch.cat([a, b]))  # tilework keeps the order (Triton may not)
    both = torch.cat([a, b]).double()
    # an fp32 sum: its error grows with the magnitudes it adds
    tol = 4e-7 * max(2, 2 * n).bit_length() * both.abs().sum().item()
    torch.testing.assert_close(s[0].double(), both.sum(), rtol=0, atol=tol)


def test_scalars():
    x, out = torch.tensor([1.5, 2.5], device="cuda"), torch.zeros(6, device="cuda")
    scalar_join_split[(1,)](x, out)
    torch.cuda.synchronize()
    assert out.tolist() == [1.5, 7.5, 7.5, 1.5, 1.5, 2.5]
