"""tl.bitonic_merge (`language/standard.py`): bitonic runs along either dimension come out
sorted (ascending / descending, Triton's 0 / 1 too), any other input as the network's numpy
model permutes it; interpreted, and compiled for sm_90a and gfx942 and run on the SIMT
emulator; the rejected arguments with their messages."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile
from simt_emulator import Emulator


@tilework.jit
def merge_k(x, y, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr, DESC: tl.constexpr):
    i = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(y + i, tl.bitonic_merge(tl.load(x + i), DIM, DESC))


@tilework.jit
def merge_default_k(x, y, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(y + i, tl.bitonic_merge(tl.load(x + i)))


def bitonic(rng, m, n, dim, dt):
    """Random runs along dim rising then falling, rotated by a random amount (still bitonic)."""
    x = rng.permutation(m * n * 4)[:m * n].reshape(m, n).astype(dt)  # distinct values
    x = np.moveaxis(x, dim, -1).copy()
    for r in x:
        k = rng.integers(0, n + 1)
        r[:k] = np.sort(r[:k])
        r[k:] = -np.sort(-r[k:])
        r[:] = np.roll(r, rng.integers(0, n))
    return np.ascontiguousarray(np.moveaxis(x, -1, dim))


def network(x, dim, desc):
    """numpy model: compare-exchange at distances n/2 .. 1, lower index takes the smaller."""
    y = np.moveaxis(x, dim, -1).copy()
    n = y.shape[-1]
    d = n // 2
    while d:
        idx = np.arange(n)
        lo = idx[(idx & d) == 0]
        a, b = y[..., lo].copy(), y[..., lo + d].copy()
        swap = (a < b) if desc else (a > b)
        y[..., lo] = np.where(swap, b, a)
        y[..., lo + d] = np.where(swap, a, b)
        d //= 2
    return np.moveaxis(y, -1, dim)


CASES = [(4, 16, 1, False), (2, 64, 1, True), (16, 8, 0, True), (8, 4, 0, 0), (1, 32, 1, 1),
         (4, 1, 1, False)]


@pytest.mark.parametrize("m, n, dim, desc", CASES)
@pytest.mark.parametrize("dt", [np.float32, np.int32])
def test_interpreted(m, n, dim, desc, dt):
    rng = np.random.default_rng(m * 100 + n)
    x = bitonic(rng, m, n, dim, dt)
    y = np.zeros_like(x)
    tilework.jit(merge_k.fn, interpret=True)[(1,)](x, y, M=m, N=n, DIM=dim, DESC=desc)
    want = np.sort(x, axis=dim)
    np.testing.assert_array_equal(y, np.flip(want, dim) if desc else want)
    z = rng.standard_normal((m, n)).astype(dt)  # not bitonic: the network's permutation
    tilework.jit(merge_k.fn, interpret=True)[(1,)](z, y, M=m, N=n, DIM=dim, DESC=desc)
    np.testing.assert_array_equal(y, network(z, dim, desc))


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
@pytest.mark.parametrize("m, n, dim, desc", [(4, 64, 1, True), (32, 8, 0, False)])
def test_emulated(target, m, n, dim, desc):
    rng = np.random.default_rng(n)
    x = bitonic(rng, m, n, dim, np.float32)
    z = rng.standard_normal((m, n)).astype(np.float32)
    sig = {"x": tl.pointer_type(tl.float32), "y": tl.pointer_type(tl.float32)}
    for inp, want in ((x, np.sort(x, axis=dim)), (z, None)):
        y = np.zeros_like(inp)
        emu = Emulator.from_kernel(merge_k, sig, dict(M=m, N=n, DIM=dim, DESC=desc), target, 4)
        emu.run((1,), inp, y)
        if want is None:
            want = network(z, dim, desc)
        elif desc:
            want = np.flip(want, dim)
        np.testing.assert_array_equal(y, want)


def test_default_is_last_dim_ascending():
    x = bitonic(np.random.default_rng(9), 1, 128, 1, np.float32)[0]
    y = np.zeros_like(x)
    tilework.jit(merge_default_k.fn, interpret=True)[(1,)](x, y, N=128)
    np.testing.assert_array_equal(y, np.sort(x))


@pytest.mark.parametrize("dim, desc, msg", [
    (2, False, "bitonic_merge: dim is out of range for the tile"),
    (-3, False, "bitonic_merge: dim is out of range for the tile"),
    (1, 2, "bitonic_merge: descending must be a constexpr bool"),
])
def test_rejects(dim, desc, msg):
    sig = {"x": tl.pointer_type(tl.float32), "y": tl.pointer_type(tl.float32)}
    with pytest.raises(CompilationError, match=msg):
        compile(ASTSource(merge_k, sig, dict(M=4, N=8, DIM=dim, DESC=desc), {}), "sm_90a",
                cache=False)
