"""Kernels of the builtins tests (test_builtins_std.py, test_builtins_std_gpu.py): sort, topk,
flip, histogram, gather, swizzle2d, item/numel/dtype attributes and debug_barrier, and numpy
references."""
import numpy as np

import tilework.language as tl


def sort_k(x, y, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr, DESC: tl.constexpr):
    r = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    v = tl.load(x + r)
    if DIM == 1:
        s = v.sort(descending=DESC)  # (the tile method)
    else:
        s = tl.sort(v, dim=DIM, descending=DESC)
    tl.store(y + r, s)


def flip_k(x, y, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr):
    r = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(y + r, tl.flip(tl.load(x + r), DIM))


def topk_k(x, y, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    v = tl.load(x + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(y + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(v, K))


def hist_k(x, y, n, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x + offs, mask=offs < n, other=-1)
    tl.store(y + tl.arange(0, BINS), tl.histogram(v, BINS, mask=offs < n))


def gather_k(src, idx, out, M: tl.constexpr, N: tl.constexpr, KM: tl.constexpr,
             KN: tl.constexpr, AXIS: tl.constexpr):
    s = tl.load(src + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    r = tl.arange(0, KM)[:, None] * KN + tl.arange(0, KN)[None, :]
    tl.store(out + r, tl.gather(s, tl.load(idx + r), AXIS))


def swizzle_k(oi, oj, size_i, size_j, size_g, BI: tl.constexpr, BJ: tl.constexpr):
    i = tl.arange(0, BI)[:, None] + tl.zeros((BI, BJ), tl.int32)
    j = tl.arange(0, BJ)[None, :] + tl.zeros((BI, BJ), tl.int32)
    ni, nj = tl.swizzle2d(i, j, size_i, size_j, size_g)
    m = (i < size_i) & (j < size_j)
    tl.store(oi + i * BJ + j, ni, mask=m)
    tl.store(oj + i * BJ + j, nj, mask=m)


def misc_k(x, y, out, N: tl.constexpr):
    one = tl.load(x + tl.arange(0, 1))
    s = one.item()  # a scalar
    offs = tl.arange(0, N)
    v = tl.load(y + offs)
    tl.debug_barrier()
    r = v * s + v.numel + v.dtype.fp_mantissa_width + tl.float16.fp_mantissa_width
    tl.store(out + offs, r)


def np_swizzle(size_i, size_j, size_g):
    """(new_i, new_j) for every cell: linear index i*size_j+j read in groups of size_g rows,
    each group column-major (the last group may have fewer rows)."""
    ni = np.zeros((size_i, size_j), np.int64)
    nj = np.zeros((size_i, size_j), np.int64)
    for i in range(size_i):
        for j in range(size_j):
            lin = i * size_j + j
            g, within = divmod(lin, size_g * size_j)
            rows = min(size_g, size_i - g * size_g)
            ni[i, j] = g * size_g + within % rows
            nj[i, j] = within // rows
    return ni, nj


def np_gather(src, idx, axis):
    return np.take_along_axis(src, idx, axis)


def e4b15_k(x, y, z, w, N: tl.constexpr):
    """x: fp8e4b15 bytes (uint8 memory, bitcast); y = their fp32 values; z = y converted
    back; w = x * x + 0.5 in fp8e4b15 (computed in fp32, rounded back)."""
    o = tl.arange(0, N)
    v = tl.load(x + o).to(tl.float8e4b15, bitcast=True)
    f = v.to(tl.float32)
    tl.store(y + o, f)
    tl.store(z + o, f.to(tl.float8e4b15).to(tl.uint8, bitcast=True))
    a = v * v + tl.full((N,), 0.5, tl.float8e4b15)
    tl.store(w + o, a.to(tl.uint8, bitcast=True))


def np_from_e4b15(b):
    """fp8e4b15 bytes -> float32: sign, then the 7 bits as an fp16 with the same bias."""
    b = np.asarray(b).astype(np.uint16)
    h = ((b & 0x80) << 8) | ((b & 0x7F) << 7)
    return h.astype(np.uint16).view(np.float16).astype(np.float32)


def np_to_e4b15(f, half=False):
    """float -> fp8e4b15 bytes as Triton 3.6 compiles it: as fp32, to fp16 toward zero, the
    magnitude saturated to 1.75 (inf and NaN too), rounded to 3 mantissa bits with ties away
    from zero, the sign kept (a NaN is positive: the GPU's f32 -> f16 cvt drops its sign;
    `half`: `f` holds halves, converted without that step, a NaN's sign kept)."""
    x = np.asarray(f, np.float32)
    if not half:
        x = np.where(np.isnan(x), np.float32(np.nan), x)
    with np.errstate(over="ignore", invalid="ignore"):
        h = x.astype(np.float16)
        away = np.isfinite(x) & (np.abs(h.astype(np.float32)) > np.abs(x))
    hb = h.view(np.uint16).astype(np.int64)
    hb[away] -= 1  # toward zero: one step down in sign-magnitude bits
    mag = np.minimum(hb & 0x7FFF, 0x3F00)
    return ((((mag << 1) + 0x80) >> 8) | ((hb >> 8) & 0x80)).astype(np.uint8)