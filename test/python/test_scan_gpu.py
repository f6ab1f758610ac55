"""Scans on the GPU against torch.cumsum / torch.cumprod / torch.cummax and a Python-loop
reference for custom (non-commutative) combines.  Every test draws fresh random inputs and
poisons its outputs (masked-off tails must stay poisoned).  Skipped without a GPU."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilework.language as tl  # noqa: E402
from scan_kernels import (  # noqa: E402
    affine_scan, compact, cumsum_loop, helper_scan, matmul_scan, np_affine, np_matmul2,
    np_segmented, ref_scan, rowsum_cumsum, scan_1d, scan_2d, scan_3d, segmented_scan,
)

DEV = "cuda"
T = torch


def acc_dtype(dtype, op):
    """Triton's scan dtypes: cumsum widens (u)int8/16 and bool to (u)int32; bf16 -> fp32."""
    if dtype == T.bfloat16:
        return T.float32
    if op.endswith("cumsum") and dtype in (T.int8, T.int16):
        return T.int32
    if op.endswith("cumsum") and dtype in (T.uint8, T.bool):
        return T.uint32
    return dtype


def identity(op, dtype):
    if op.endswith("cumprod"):
        return 1
    if op == "scan_max":
        return {T.int8: -128, T.uint8: 0}.get(dtype, -1000)
    return 0


def poison(shape, dtype):
    if dtype.is_floating_point:
        return T.full(shape, float("nan"), device=DEV, dtype=dtype)
    if dtype == T.bool:
        return T.ones(shape, device=DEV, dtype=dtype)
    return T.full(shape, 77, device=DEV, dtype=dtype)


def make_input(shape, dtype, op, exact=True):
    """Fresh random values.  exact: values whose scans are exact in every order (halves for
    sums, +-1 with rare 2 and 0.5 for float products, wrapping integers)."""
    if dtype == T.bool:
        return T.rand(shape, device=DEV) < 0.5
    if not dtype.is_floating_point:
        lo = 0 if dtype in (T.uint8,) else -3
        return T.randint(lo, 4, shape, device=DEV).to(dtype)
    if not exact:
        return T.randn(shape, device=DEV, dtype=T.float32).to(dtype)
    if op.endswith("cumprod"):
        choice = T.tensor([1.0, -1.0, 2.0, 0.5], device=DEV)
        idx = T.multinomial(T.tensor([0.49, 0.49, 0.01, 0.01], device=DEV),
                            int(np.prod(shape)), replacement=True)
        return choice[idx].reshape(shape).to(dtype)
    return (T.randint(-2, 3, shape, device=DEV) / 2).to(dtype)


def torch_scan(x, op, dim, rev, acc):
    """The reference: torch's cumsum/cumprod/cummax in float64 or int64, cast to `acc`
    (integer results wrap as the kernel's do)."""
    y = x.to(T.float64 if acc.is_floating_point else T.int64)
    if rev:
        y = y.flip(dim)
    if op in ("cumsum", "member_cumsum", "scan_add"):
        r = T.cumsum(y, dim)
    elif op in ("cumprod", "member_cumprod"):
        r = T.cumprod(y, dim)
    else:
        r = T.cummax(y, dim).values
    if rev:
        r = r.flip(dim)
    if acc == T.uint32:  # torch casts int64 -> uint32 on the host only
        return T.from_numpy(r.cpu().numpy().astype(np.uint32))
    return r.to(acc)


def assert_scan_equal(out, ref, exact=True, n=1):
    out = out.cpu()
    if out.dtype == T.uint32:
        out = T.from_numpy(out.numpy().astype(np.int64))
        ref = T.from_numpy(ref.cpu().numpy().astype(np.int64))
    ref = ref.cpu()
    if exact:
        assert T.equal(out, ref.to(out.dtype)), (out, ref)
    else:
        tol = 1e-5 * max(1.0, n ** 0.5) if out.dtype != T.float16 else 2e-2 * n ** 0.5
        T.testing.assert_close(out.to(T.float64), ref.to(T.float64), rtol=tol, atol=tol)


def assert_poisoned(t, dtype):
    t = t.cpu()
    if dtype.is_floating_point:
        assert T.isnan(t).all()
    elif dtype == T.uint32:
        assert (t.numpy() == 77).all()
    elif dtype == T.bool:
        assert t.all()
    else:
        assert (t == 77).all()


# ---- 1-D: every op, every dtype, tiles smaller than the threads to several CTA tiles ---------

OPS = ["cumsum", "cumprod", "member_cumsum", "member_cumprod", "scan_add", "scan_max"]
DTYPES = [T.float32, T.float16, T.bfloat16, T.float64, T.int32, T.int8, T.uint8, T.int16,
          T.int64, T.bool]
SIZES = [(1, 1, 1), (3, 4, 4), (50, 64, 4), (100, 128, 1), (1000, 1024, 4), (1000, 1024, 8),
         (4000, 4096, 8), (8192, 8192, 4), (70, 128, 8)]


def _run_1d(op, dtype, rev, n, block, warps, exact=True):
    x = make_input((n,), dtype, op, exact)
    acc = acc_dtype(dtype, op)
    out = poison((n + 5,), acc)
    scan_1d[(1,)](x, out, n, OP=op, REV=rev, BLOCK=block, OTHER=identity(op, dtype), DT=None,
                  num_warps=warps)
    torch.cuda.synchronize()
    assert_scan_equal(out[:n], torch_scan(x, op, 0, rev, acc), exact, n)
    assert_poisoned(out[n:], acc)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("n, block, warps", SIZES)
def test_scan_1d_ops(op, rev, n, block, warps):
    dtype = T.int32 if op.endswith("cumprod") else T.float32
    _run_1d(op, dtype, rev, n, block, warps)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "scan_max"])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("n, block, warps", [(50, 64, 4), (1000, 1024, 4), (3000, 4096, 8)])
def test_scan_1d_dtypes(dtype, op, rev, n, block, warps):
    if dtype == T.bool and op == "scan_max":
        pytest.skip("max of booleans: covered by cumprod (and)")
    if dtype == T.float16 and op == "cumprod" and n > 1000:
        pytest.skip("fp16 products of long runs leave the fp16 range")
    _run_1d(op, dtype, rev, n, block, warps)


@pytest.mark.parametrize("dtype", [T.float32, T.float64, T.float16])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("n, block, warps", [(1000, 1024, 4), (4000, 4096, 8), (100, 128, 1)])
def test_scan_random_floats(dtype, rev, n, block, warps):
    """Random normal values: within rounding of a float64 reference."""
    _run_1d("cumsum", dtype, rev, n, block, warps, exact=False)


def test_cumsum_explicit_dtype():
    x = T.full((1024,), 0.1, device=DEV, dtype=T.float16)
    out = poison((1024,), T.float32)
    scan_1d[(1,)](x, out, 1024, OP="cumsum", REV=False, BLOCK=1024, OTHER=0, DT=tl.float32,
                  num_warps=4)
    torch.cuda.synchronize()
    T.testing.assert_close(out, T.cumsum(x.float(), 0), rtol=1e-5, atol=1e-4)


# ---- 2-D and 3-D: every axis ----------------------------------------------------------------

SHAPES_2D = [(13, 37, 16, 64, 4), (64, 8, 64, 8, 4), (300, 2, 512, 2, 4), (1, 200, 1, 256, 2),
             (100, 100, 128, 128, 8), (32, 32, 32, 32, 1), (2, 2, 2, 2, 4), (7, 500, 8, 512, 8),
             (500, 7, 512, 8, 8)]


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "scan_max", "member_cumsum"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("m, n, bm, bn, warps", SHAPES_2D)
def test_scan_2d(op, axis, rev, m, n, bm, bn, warps):
    dtype = T.int32 if op == "cumprod" else T.float32
    x = make_input((m, n), dtype, op)
    out = poison((m + 1, n), dtype)  # an extra row that must stay poisoned
    scan_2d[(1,)](x, out, m, n, OP=op, AXIS=axis, REV=rev, BM=bm, BN=bn,
                  OTHER=identity(op, dtype), DT=None, num_warps=warps)
    torch.cuda.synchronize()
    assert_scan_equal(out[:m], torch_scan(x, op, axis, rev, dtype))
    assert_poisoned(out[m:], dtype)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("shape, warps", [((4, 8, 16), 4), ((2, 32, 4), 8), ((8, 2, 64), 1),
                                          ((16, 16, 16), 8), ((1, 4, 256), 4)])
@pytest.mark.parametrize("op, dtype", [("cumsum", T.float32), ("cumprod", T.int32),
                                       ("cumsum", T.int8)])
def test_scan_3d(axis, rev, shape, warps, op, dtype):
    x = make_input(shape, dtype, op)
    acc = acc_dtype(dtype, op)
    out = poison(shape, acc)
    scan_3d[(1,)](x, out, OP=op, AXIS=axis, REV=rev, B0=shape[0], B1=shape[1], B2=shape[2],
                  DT=None, num_warps=warps)
    torch.cuda.synchronize()
    assert_scan_equal(out, torch_scan(x, op, axis, rev, acc))


# ---- custom, non-commutative combines: a Python-loop reference ---------------------------------

@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("bm, bn, warps", [(8, 64, 4), (4, 256, 8), (32, 32, 1), (128, 4, 8),
                                           (1, 1024, 4), (1024, 1, 8)])
@pytest.mark.parametrize("dtype", [T.int32, T.float32])
def test_affine_scan(axis, rev, bm, bn, warps, dtype):
    if dtype == T.int32:
        a = T.randint(-5, 6, (bm, bn), device=DEV, dtype=dtype)
    else:
        a = (T.randint(0, 2, (bm, bn), device=DEV) * 2 - 1).to(dtype)  # +-1: exact
    b = T.randint(-5, 6, (bm, bn), device=DEV).to(dtype)
    oa, ob = poison((bm, bn), dtype), poison((bm, bn), dtype)
    affine_scan[(1,)](a, b, oa, ob, AXIS=axis, REV=rev, BM=bm, BN=bn, num_warps=warps)
    torch.cuda.synchronize()
    ra, rb = ref_scan((a.cpu().numpy(), b.cpu().numpy()), axis, rev, np_affine)
    np.testing.assert_array_equal(oa.cpu().numpy(), ra)
    np.testing.assert_array_equal(ob.cpu().numpy(), rb)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("bm, bn, warps", [(16, 32, 4), (4, 64, 2), (64, 64, 8)])
def test_matmul_scan(axis, rev, bm, bn, warps):
    m = T.randint(-2, 3, (4, bm, bn), device=DEV, dtype=T.int32)
    out = poison((4, bm, bn), T.int32)
    matmul_scan[(1,)](m, out, AXIS=axis, REV=rev, BM=bm, BN=bn, num_warps=warps)
    torch.cuda.synchronize()
    ref = np.stack(ref_scan(tuple(m.cpu().numpy()), axis, rev, np_matmul2))
    np.testing.assert_array_equal(out.cpu().numpy(), ref)


@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("n, block, warps", [(200, 256, 2), (1000, 1024, 4), (30, 32, 8),
                                             (4000, 4096, 8)])
def test_segmented_scan(rev, n, block, warps):
    f = (T.rand(n, device=DEV) < 0.1).to(T.int8)
    v = T.randint(-5, 6, (n,), device=DEV).to(T.float32)
    of, ov = poison((n,), T.int32), poison((n,), T.float32)
    segmented_scan[(1,)](f, v, of, ov, n, REV=rev, BLOCK=block, num_warps=warps)
    torch.cuda.synchronize()
    rf, rv = ref_scan((f.cpu().numpy().astype(bool), v.cpu().numpy()), 0, rev, np_segmented)
    np.testing.assert_array_equal(of.cpu().numpy(), rf)
    np.testing.assert_array_equal(ov.cpu().numpy(), rv)


# ---- scans mixed with reductions and loops ------------------------------------------------------

@pytest.mark.parametrize("bm, bn, warps", [(32, 64, 4), (8, 256, 8), (128, 16, 1)])
def test_rowsum_cumsum(bm, bn, warps):
    x = T.randint(-5, 6, (bm, bn), device=DEV).to(T.float32)
    o, e = poison((bm,), T.float32), poison((bm, bn), T.float32)
    rowsum_cumsum[(1,)](x, o, e, BM=bm, BN=bn, num_warps=warps)
    torch.cuda.synchronize()
    assert T.equal(o, T.cumsum(x.sum(1), 0))
    assert T.equal(e, T.cumsum(x, 1) - x)


@pytest.mark.parametrize("n, block, warps", [(1000, 128, 4), (100000, 1024, 8), (5, 64, 1)])
def test_cumsum_loop(n, block, warps):
    x = T.randint(-5, 6, (n,), device=DEV, dtype=T.int32)
    out = poison((n,), T.int32)
    cumsum_loop[(1,)](x, out, n, BLOCK=block, num_warps=warps)
    torch.cuda.synchronize()
    assert T.equal(out, T.cumsum(x, 0).to(T.int32))


@pytest.mark.parametrize("n, block, warps", [(1000, 1024, 4), (4000, 4096, 8), (7, 8, 1)])
def test_compaction(n, block, warps):
    """The positive elements in order, at offsets from a cumsum of the keep mask."""
    x = T.randint(-5, 6, (n,), device=DEV, dtype=T.int32)
    out, count = poison((block,), T.int32), poison((1,), T.int32)
    compact[(1,)](x, out, count, n, BLOCK=block, num_warps=warps)
    torch.cuda.synchronize()
    kept = x[x > 0]
    assert count.item() == kept.numel()
    assert T.equal(out[:kept.numel()], kept)
    assert_poisoned(out[kept.numel():], T.int32)


@pytest.mark.parametrize("rev", [False, True])
def test_combine_through_helper(rev):
    x = T.randint(-5, 6, (256,), device=DEV, dtype=T.int32)
    out = poison((256,), T.int32)
    helper_scan[(1,)](x, out, REV=rev, BLOCK=256, num_warps=4)
    torch.cuda.synchronize()
    assert T.equal(out, torch_scan(x, "cumsum", 0, rev, T.int32))

