"""Kernels shared by the scan tests (interpreted, compiled, emulated and on the GPU), and the
numpy references they are checked against."""
import numpy as np

import tilework
import tilework.language as tl


# ---- builtin scans ----------------------------------------------------------------------------

@tilework.jit
def _scan_op(x, OP: tl.constexpr, AXIS: tl.constexpr, REV: tl.constexpr, DT: tl.constexpr):
    if OP == "cumsum":
        y = tl.cumsum(x, axis=AXIS, reverse=REV, dtype=DT)
    elif OP == "cumprod":
        y = tl.cumprod(x, AXIS, REV, dtype=DT)
    elif OP == "member_cumsum":
        y = x.cumsum(AXIS, reverse=REV)
    elif OP == "member_cumprod":
        y = x.cumprod(AXIS, reverse=REV)
    elif OP == "scan_add":
        y = tl.associative_scan(x, AXIS, _add, reverse=REV)
    else:
        y = x.associative_scan(AXIS, _max, REV)
    return y


@tilework.jit
def _add(a, b):
    return a + b


@tilework.jit
def _max(a, b):
    return tl.maximum(a, b)


@tilework.jit
def scan_1d(x_ptr, o_ptr, n, OP: tl.constexpr, REV: tl.constexpr, BLOCK: tl.constexpr,
            OTHER: tl.constexpr, DT: tl.constexpr = None):
    """A masked tail: elements at n.. read OTHER (the combine's identity) and are not stored."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=OTHER)
    tl.store(o_ptr + offs, _scan_op(x, OP, 0, REV, DT), mask=offs < n)


@tilework.jit
def scan_2d(x_ptr, o_ptr, M, N, OP: tl.constexpr, AXIS: tl.constexpr, REV: tl.constexpr,
            BM: tl.constexpr, BN: tl.constexpr, OTHER: tl.constexpr, DT: tl.constexpr = None):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=OTHER)
    tl.store(o_ptr + offs, _scan_op(x, OP, AXIS, REV, DT), mask=mask)


@tilework.jit
def scan_3d(x_ptr, o_ptr, OP: tl.constexpr, AXIS: tl.constexpr, REV: tl.constexpr,
            B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr, DT: tl.constexpr = None):
    i = tl.arange(0, B0)[:, None, None]
    j = tl.arange(0, B1)[None, :, None]
    k = tl.arange(0, B2)[None, None, :]
    offs = i * (B1 * B2) + j * B2 + k
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, _scan_op(x, OP, AXIS, REV, DT))


# ---- custom, non-commutative combines ---------------------------------------------------------

@tilework.jit
def _affine(a, b, c, d):
    """Affine maps x -> a*x + b applied in order: first (a, b), then (c, d)."""
    return a * c, b * c + d


@tilework.jit
def _matmul2(a0, b0, c0, d0, a1, b1, c1, d1):
    """2x2 matrices [[a, b], [c, d]]: the product of the left one by the right one."""
    return (a0 * a1 + b0 * c1, a0 * b1 + b0 * d1, c0 * a1 + d0 * c1, c0 * b1 + d0 * d1)


@tilework.jit
def _segmented(f0, v0, f1, v1):
    """Segmented sum: a set flag starts a new segment."""
    return f0 | f1, tl.where(f1, v1, v0 + v1)


@tilework.jit
def affine_scan(a_ptr, b_ptr, oa_ptr, ob_ptr, AXIS: tl.constexpr, REV: tl.constexpr,
                BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    ra, rb = tl.associative_scan((a, b), AXIS, _affine, reverse=REV)
    tl.store(oa_ptr + offs, ra)
    tl.store(ob_ptr + offs, rb)


@tilework.jit
def matmul_scan(m_ptr, o_ptr, AXIS: tl.constexpr, REV: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr):
    """m: [4, BM, BN] (the four entries of a 2x2 matrix per element)."""
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    S = BM * BN
    a = tl.load(m_ptr + offs)
    b = tl.load(m_ptr + S + offs)
    c = tl.load(m_ptr + 2 * S + offs)
    d = tl.load(m_ptr + 3 * S + offs)
    ra, rb, rc, rd = tl.associative_scan((a, b, c, d), AXIS, _matmul2, reverse=REV)
    tl.store(o_ptr + offs, ra)
    tl.store(o_ptr + S + offs, rb)
    tl.store(o_ptr + 2 * S + offs, rc)
    tl.store(o_ptr + 3 * S + offs, rd)


@tilework.jit
def segmented_scan(f_ptr, v_ptr, of_ptr, ov_ptr, n, REV: tl.constexpr, BLOCK: tl.constexpr):
    """Boolean flags (i1 tiles) and fp32 values; flags read 0 and values 0 past n."""
    offs = tl.arange(0, BLOCK)
    f = tl.load(f_ptr + offs, mask=offs < n, other=0) != 0
    v = tl.load(v_ptr + offs, mask=offs < n, other=0.0)
    rf, rv = tl.associative_scan((f, v), 0, _segmented, reverse=REV)
    tl.store(of_ptr + offs, rf.to(tl.int32), mask=offs < n)
    tl.store(ov_ptr + offs, rv, mask=offs < n)


@tilework.jit
def _scan_with(x, fn, REV: tl.constexpr):
    return tl.associative_scan(x, 0, fn, reverse=REV)


@tilework.jit
def helper_scan(x_ptr, o_ptr, REV: tl.constexpr, BLOCK: tl.constexpr):
    """The combine function passed through a @jit helper's parameter."""
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, _scan_with(tl.load(x_ptr + offs), _add, REV))


# ---- scans mixed with other ops --------------------------------------------------------------

@tilework.jit
def rowsum_cumsum(x_ptr, o_ptr, e_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """A scan of a reduced tile (slice layout), and an exclusive scan (cumsum - x)."""
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    s = tl.sum(x, axis=1)
    tl.store(o_ptr + rows, tl.cumsum(s, 0))
    tl.store(e_ptr + rows[:, None] * BN + cols[None, :], tl.cumsum(x, 1) - x)


@tilework.jit
def cumsum_loop(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    """A long cumulative sum in blocks: each block's scan plus the carry of the earlier ones."""
    carry = tl.zeros((1,), tl.int32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0)
        c = tl.cumsum(x, 0)
        tl.store(o_ptr + offs, c + carry, mask=offs < n)
        carry += tl.sum(x, axis=0)


@tilework.jit
def compact(x_ptr, o_ptr, count_ptr, n, BLOCK: tl.constexpr):
    """Stream compaction: the positive elements, in order, at the offsets an exclusive
    cumsum of the keep mask gives (a scan result used as pointer offsets)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    keep = (x > 0) & (offs < n)
    pos = tl.cumsum(keep, 0) - 1
    tl.store(o_ptr + pos, x, mask=keep)
    tl.store(count_ptr, tl.sum(keep.to(tl.int32), 0))


# ---- references ------------------------------------------------------------------------------

def ref_scan(arrays, axis, reverse, combine):
    """Sequential inclusive scan of a tuple of numpy arrays along `axis` with `combine(lhs,
    rhs)` on tuples of slices (earlier elements on the left); reverse: from the end."""
    arrays = [np.moveaxis(np.asarray(a), axis, 0) for a in arrays]
    n = arrays[0].shape[0]
    order = range(n - 1, -1, -1) if reverse else range(n)
    outs = [np.empty_like(a) for a in arrays]
    acc = None
    with np.errstate(over="ignore"):
        for i in order:
            cur = tuple(a[i] for a in arrays)
            acc = cur if acc is None else tuple(combine(acc, cur))
            for o, v in zip(outs, acc):
                o[i] = v
    return [np.moveaxis(o, 0, axis) for o in outs]


def np_affine(l, r):
    (a, b), (c, d) = l, r
    return a * c, b * c + d


def np_matmul2(l, r):
    (a0, b0, c0, d0), (a1, b1, c1, d1) = l, r
    return a0 * a1 + b0 * c1, a0 * b1 + b0 * d1, c0 * a1 + d0 * c1, c0 * b1 + d0 * d1


def np_segmented(l, r):
    (f0, v0), (f1, v1) = l, r
    return f0 | f1, np.where(f1, v1, v0 + v1)


def np_scan(x, op, axis, reverse, acc_dtype):
    """cumsum/cumprod (and the custom add/max scans) of x in acc_dtype, wrapping integers."""
    x = np.asarray(x).astype(acc_dtype)
    if reverse:
        x = np.flip(x, axis)
    with np.errstate(over="ignore"):
        if op in ("cumsum", "member_cumsum", "scan_add"):
            y = np.cumsum(x, axis=axis, dtype=acc_dtype)
        elif op in ("cumprod", "member_cumprod"):
            y = np.cumprod(x, axis=axis, dtype=acc_dtype)
        else:
            y = np.maximum.accumulate(x, axis=axis)
    return np.flip(y, axis) if reverse else y
