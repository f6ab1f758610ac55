"""Reductions and shape ops on the GPU against torch (skipped without a GPU)."""
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from reduction_kernels import custom_reduce, reduce_2d, reduce_all, shapes_kernel  # noqa: E402

OPS = ["sum", "max", "min", "argmax", "argmin", "xor_sum"]


def _ref(x, op, axis):
    if op == "sum":
        return x.sum(axis)
    if op in ("max", "min"):
        return getattr(x, op)(axis).values
    if op in ("argmax", "argmin"):
        return getattr(x, op)(axis).to(torch.int32)
    r = x[0] if axis == 0 else x[:, 0]
    for i in range(1, x.shape[axis]):
        r = r ^ (x[i] if axis == 0 else x[:, i])
    return r


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("m, n, bm, bn, warps", [
    (4, 64, 4, 64, 4), (13, 37, 16, 64, 4), (64, 8, 64, 8, 4), (100, 100, 128, 128, 8),
    (1, 200, 1, 256, 2), (300, 2, 512, 2, 4), (32, 32, 32, 32, 1)])
def test_reduce_2d(op, axis, m, n, bm, bn, warps):
    dtype = torch.int32 if op == "xor_sum" else torch.float32
    if dtype.is_floating_point:
        x = torch.randn(bm, bn, device="cuda")
    else:
        x = torch.randint(-1000, 1000, (bm, bn), device="cuda", dtype=dtype)
    x[m:, :] = 0
    x[:, n:] = 0  # the kernel reads 0 outside (m, n)
    out_n = bn if axis == 0 else bm
    odt = torch.int32 if op.startswith("arg") or op == "xor_sum" else dtype
    out = torch.full((out_n,), -7, device="cuda", dtype=odt)
    reduce_2d[(1,)](x, out, m, n, bn, OP=op, AXIS=axis, BM=bm, BN=bn, num_warps=warps)
    torch.cuda.synchronize()
    ref = _ref(x, op, axis)
    lim = n if axis == 0 else m
    if op == "sum":
        torch.testing.assert_close(out[:lim], ref[:lim], rtol=1e-5, atol=1e-4)
    else:
        assert torch.equal(out[:lim], ref[:lim]), (out[:lim], ref[:lim])


@pytest.mark.parametrize("n, block, warps", [(1000, 1024, 4), (5, 8, 1), (60000, 65536, 8),
                                             (3, 4, 4)])
def test_reduce_to_scalar(n, block, warps):
    x = torch.randn(n, device="cuda")
    out = torch.full((2,), float("nan"), device="cuda")
    reduce_all[(1,)](x, out, n, BLOCK=block, num_warps=warps)
    torch.cuda.synchronize()
    # an fp32 sum: its error grows with the magnitudes it adds
    tol = 4e-7 * max(1, n).bit_length() * x.abs().sum().item()
    torch.testing.assert_close(out[0].double(), x.double().sum(), rtol=0, atol=tol)
    assert out[1] == x.max()


def test_custom_combine():
    x = torch.randn(8, 32, device="cuda")
    x[3, 5] = x[3, 20] = 100.0
    v = torch.full((8,), float("nan"), device="cuda")
    i = torch.full((8,), -1, device="cuda", dtype=torch.int32)
    custom_reduce[(1,)](x, v, i, BM=8, BN=32)
    torch.cuda.synchronize()
    assert torch.equal(v, x.max(1).values)
    assert torch.equal(i, x.argmax(1).to(torch.int32))


@pytest.mark.parametrize("bm, bn, warps", [(8, 32, 4), (32, 8, 4), (16, 16, 1), (64, 64, 8)])
def test_shape_ops(bm, bn, warps):
    x = torch.randn(bm, bn, device="cuda")
    out = torch.full((bm * bn,), float("nan"), device="cuda")
    shapes_kernel[(1,)](x, out, BM=bm, BN=bn, num_warps=warps)
    torch.cuda.synchronize()
    ref = (x.T + x.sum(0)[:, None]).reshape(-1)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
