"""Kernels shared by the join/split/interleave/cat tests (interpreted, compiled, on the GPU)."""
import tilework
import tilework.language as tl


@tilework.jit
def join_kernel(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    """out[M, N, 2] = join(a, b)."""
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + rm * N + rn)
    b = tl.load(b_ptr + rm * N + rn)
    c = tl.join(a, b)
    r2 = tl.arange(0, 2)[None, None, :]
    tl.store(out_ptr + rm[:, :, None] * (2 * N) + rn[:, :, None] * 2 + r2, c)


@tilework.jit
def split_kernel(x_ptr, lo_ptr, hi_ptr, M: tl.constexpr, N: tl.constexpr, SCALE: tl.constexpr):
    """lo, hi = split(x * SCALE) of x[M, N, 2] (the multiply keeps the loaded layout)."""
    rm = tl.arange(0, M)[:, None, None]
    rn = tl.arange(0, N)[None, :, None]
    r2 = tl.arange(0, 2)[None, None, :]
    x = tl.load(x_ptr + rm * (2 * N) + rn * 2 + r2) * SCALE
    lo, hi = tl.split(x)
    om = tl.arange(0, M)[:, None]
    on = tl.arange(0, N)[None, :]
    tl.store(lo_ptr + om * N + on, lo)
    tl.store(hi_ptr + om * N + on, hi)


@tilework.jit
def join_split_roundtrip(a_ptr, b_ptr, lo_ptr, hi_ptr, N: tl.constexpr):
    """lo, hi = split(join(a + 1, b * 2)) on 1-D tiles (registers only)."""
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    lo, hi = tl.split(tl.join(a + 1, b * 2))
    tl.store(lo_ptr + offs, lo)
    tl.store(hi_ptr + offs, hi)


@tilework.jit
def interleave_kernel(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    """out[M, 2N] = interleave(a, b) (columns a0 b0 a1 b1 ...)."""
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + rm * N + rn)
    b = tl.load(b_ptr + rm * N + rn)
    c = tl.interleave(a, b)
    r2n = tl.arange(0, 2 * N)[None, :]
    tl.store(out_ptr + rm * (2 * N) + r2n, c)


@tilework.jit
def cat_kernel(a_ptr, b_ptr, out_ptr, sum_ptr, N: tl.constexpr):
    """out[2N] = cat(a, b, can_reorder=True); sum_ptr[0] = its sum (order-independent)."""
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c = tl.cat(a, b, can_reorder=True)
    tl.store(out_ptr + tl.arange(0, 2 * N), c)
    tl.store(sum_ptr, tl.sum(c, axis=0))


@tilework.jit
def scalar_join_split(x_ptr, out_ptr):
    """join of two scalars is a [2] tile; split of a [2] tile gives two scalars."""
    x = tl.load(x_ptr)
    y = tl.load(x_ptr + 1)
    j = tl.join(x, y * 3)
    tl.store(out_ptr + tl.arange(0, 2), j)
    lo, hi = tl.split(j)
    tl.store(out_ptr + 2, hi)
    tl.store(out_ptr + 3, lo)
    tl.store(out_ptr + 4 + tl.arange(0, 2), tl.interleave(x, y))
