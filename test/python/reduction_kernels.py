"""Kernels shared by the reduction tests (interpreted, compiled, and on the GPU)."""
import tilework
import tilework.language as tl


@tilework.jit
def reduce_2d(x_ptr, out_ptr, M, N, stride, OP: tl.constexpr, AXIS: tl.constexpr,
              BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0)
    if OP == "sum":
        r = tl.sum(x, axis=AXIS)
    elif OP == "max":
        r = tl.max(x, axis=AXIS)
    elif OP == "min":
        r = tl.min(x, axis=AXIS)
    elif OP == "argmax":
        r = tl.argmax(x, axis=AXIS)
    elif OP == "argmin":
        r = tl.argmin(x, axis=AXIS)
    else:
        r = tl.xor_sum(x, axis=AXIS)
    if AXIS == 0:
        tl.store(out_ptr + cols, r, mask=cols < N)
    else:
        tl.store(out_ptr + rows, r, mask=rows < M)


@tilework.jit
def reduce_all(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x, axis=0))
    tl.store(out_ptr + 1, tl.max(tl.where(offs < n, x, -float("inf")), axis=0))


@tilework.jit
def _pair_max(a, ia, b, ib):
    take_a = (a > b) | ((a == b) & (ia < ib))
    return tl.where(take_a, a, b), tl.where(take_a, ia, ib)


@tilework.jit
def custom_reduce(x_ptr, val_ptr, idx_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    idx = tl.broadcast_to(cols[None, :], (BM, BN))
    v, i = tl.reduce((x, idx), 1, _pair_max)
    tl.store(val_ptr + rows, v)
    tl.store(idx_ptr + rows, i)


@tilework.jit
def shapes_kernel(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """out = (x.T + column sums)[...] through trans, expand_dims, broadcast, reshape."""
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    t = tl.trans(x)                                # [BN, BM]
    s = tl.sum(x, axis=0)                          # [BN]
    y = t + s[:, None]                             # [BN, BM]
    flat = tl.reshape(y, (BN * BM,))
    tl.store(out_ptr + tl.arange(0, BN * BM), flat)
