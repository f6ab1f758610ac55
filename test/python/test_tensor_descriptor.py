"""Tensor descriptors (tl.make_tensor_descriptor, desc.load/store/atomic_*, host
TensorDescriptor arguments): interpreted against numpy and compiled through the SIMT emulator
against numpy, 1-D..3-D with tails and blocks past the ends; the compiled form (the vector
widths of a block pointer); every rejection with its message and line."""
import os
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError, CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type
from tilework.tools.tensor_descriptor import TensorDescriptor
from located import assert_located, line_of  # noqa: E402
from simt_emulator import Emulator  # noqa: E402

THIS = os.path.abspath(__file__)
interpreted = tilework.jit(interpret=True)


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def cdiv(a, b):
    return (a + b - 1) // b


def window(a, starts, block, fill):
    """numpy: the block of `a` at `starts` (anywhere), `fill` outside `a`."""
    idx = [np.arange(b) + s for s, b in zip(starts, block)]
    inside = np.ones(block, bool)
    for d, i in enumerate(idx):
        ok = (i >= 0) & (i < a.shape[d])
        inside &= ok.reshape([-1 if e == d else 1 for e in range(len(block))])
    vals = a[np.ix_(*[np.clip(i, 0, n - 1) for i, n in zip(idx, a.shape)])]
    return np.where(inside, vals, fill).astype(a.dtype)


def stored(want, block, r0, c0, M, N):
    """numpy: `want` with the part of `block` at (r0, c0) inside [0, M) x [0, N) written."""
    for i in range(block.shape[0]):
        for j in range(block.shape[1]):
            if 0 <= r0 + i < M and 0 <= c0 + j < N:
                want[r0 + i, c0 + j] = block[i, j]
    return want


def padded(rng, shape, dtype, pad_to=16):
    """A random array of `shape` whose rows are padded so that every stride but the last is a
    multiple of 16 bytes (returns the padded buffer and the view)."""
    item = np.dtype(dtype).itemsize
    last = cdiv(shape[-1] * item, 16) * 16 // item
    buf = (rng.standard_normal(tuple(shape[:-1]) + (last,)) * 8).astype(dtype)
    return buf, buf[..., :shape[-1]]


def strides_of(a):
    return [s // a.itemsize for s in a.strides]


# ---- kernels: device-side descriptors --------------------------------------------------------

def dev_copy2d(a, out, M, N, stride_a, stride_o, BM: tl.constexpr, BN: tl.constexpr):
    """out = 2 * a, one BM x BN block per program (tails masked)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    src = tl.make_tensor_descriptor(a, [M, N], [stride_a, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(out, shape=(M, N), strides=(stride_o, 1),
                                    block_shape=(BM, BN))
    x = src.load([pm * BM, pn * BN])
    dst.store([pm * BM, pn * BN], x * 2)


def dev_window2d(a, out, M, N, stride_a, r0, c0, BM: tl.constexpr, BN: tl.constexpr,
                 PAD: tl.constexpr):
    """The block of `a` at (r0, c0), in or out of bounds, into out[BM, BN]."""
    src = tl.make_tensor_descriptor(a, [M, N], [stride_a, 1], [BM, BN], padding_option=PAD)
    dst = tl.make_tensor_descriptor(out, [BM, BN], [BN, 1], [BM, BN])
    tl.store_tensor_descriptor(dst, [0, 0], tl.load_tensor_descriptor(src, [r0, c0]))


def dev_store_window2d(a, out, M, N, stride_o, r0, c0, BM: tl.constexpr, BN: tl.constexpr):
    """a[BM, BN] + 1 stored at (r0, c0) of out[M, N]: only what is inside is written."""
    src = tl.make_tensor_descriptor(a, [BM, BN], [BN, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(out, [M, N], [stride_o, 1], [BM, BN])
    dst.store([r0, c0], src.load([0, 0]) + 1)


def dev_copy1d(a, out, n, B: tl.constexpr):
    d_in = tl.make_tensor_descriptor(a, [n], [1], [B])
    d_out = tl.make_tensor_descriptor(out, [n], [1], [B])
    off = tl.program_id(0) * B
    d_out.store([off], d_in.load([off]) - 3)


def dev_copy3d(a, out, D0, D1, D2, s0, s1, o0, o1, B0: tl.constexpr, B1: tl.constexpr,
               B2: tl.constexpr):
    src = tl.make_tensor_descriptor(a, [D0, D1, D2], [s0, s1, 1], [B0, B1, B2])
    dst = tl.make_tensor_descriptor(out, [D0, D1, D2], [o0, o1, 1], [B0, B1, B2])
    i, j, k = tl.program_id(0) * B0, tl.program_id(1) * B1, tl.program_id(2) * B2
    dst.store([i, j, k], src.load([i, j, k]))


def dev_rowsum_loop(a, out, M, N, stride_a, BM: tl.constexpr, BN: tl.constexpr):
    """A runtime K loop over a descriptor (offsets past the end in the last step)."""
    pm = tl.program_id(0)
    src = tl.make_tensor_descriptor(a, [M, N], [stride_a, 1], [BM, BN])
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, N, BN):
        acc += src.load([pm * BM, k])
    dst = tl.make_tensor_descriptor(out, [M, BN], [BN, 1], [BM, BN])
    dst.store([pm * BM, 0], acc)


def dev_atomic_add(a, out, M, N, stride_o, BM: tl.constexpr, BN: tl.constexpr):
    """Every program adds the same block a[BM, BN] into out at (pid * BM / 2, 3)."""
    src = tl.make_tensor_descriptor(a, [BM, BN], [BN, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(out, [M, N], [stride_o, 1], [BM, BN])
    dst.atomic_add([tl.program_id(0) * (BM // 2), 3], src.load([0, 0]))


def dev_attributes(a, out, M, N, stride_a, BM: tl.constexpr, BN: tl.constexpr):
    """desc.shape, .strides, .block_shape, .dtype and .block_type inside a kernel."""
    d = tl.make_tensor_descriptor(a, [M, N], [stride_a, 1], [BM, BN])
    tl.static_assert(d.dtype == tl.float32)
    tl.static_assert(d.block_shape[1] == BN)
    tl.static_assert(d.block_type.shape == (BM, BN))
    o = tl.arange(0, 4)
    vals = tl.where(o == 0, d.shape[0], tl.where(o == 1, d.shape[1], tl.where(
        o == 2, d.strides[0].to(tl.int32), d.strides[1].to(tl.int32))))
    tl.store(out + o, vals)


# ---- kernels: host-side descriptors (the same accesses; the parameter is a descriptor) ------

def host_window(a_desc, out, r0, c0, BM: tl.constexpr, BN: tl.constexpr):
    o = tl.make_tensor_descriptor(out, [BM, BN], [BN, 1], [BM, BN])
    o.store([0, 0], a_desc.load([r0, c0]))


def host_copy2d(a_desc, o_desc, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    o_desc.store([pm * BM, pn * BN], a_desc.load([pm * BM, pn * BN]) * 2)


def host_copy1d(a_desc, o_desc, B: tl.constexpr):
    off = tl.program_id(0) * B
    tl.store_tensor_descriptor(o_desc, [off], tl.load_tensor_descriptor(a_desc, [off]) - 3)


def host_copy3d(a_desc, o_desc, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    i, j, k = tl.program_id(0) * B0, tl.program_id(1) * B1, tl.program_id(2) * B2
    o_desc.store([i, j, k], a_desc.load([i, j, k]))


# ---- interpreted: against numpy ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
@pytest.mark.parametrize("M, N, BM, BN", [(37, 50, 16, 16), (64, 64, 32, 16), (5, 3, 8, 8)])
def test_dev_copy2d(rng, dtype, M, N, BM, BN):
    abuf, a = padded(rng, (M, N), dtype)
    obuf, out = padded(rng, (M, N), dtype)
    obuf[:] = 77
    interpreted(dev_copy2d)[(cdiv(M, BM), cdiv(N, BN))](
        abuf, obuf, M, N, abuf.shape[1], obuf.shape[1], BM=BM, BN=BN)
    np.testing.assert_array_equal(out, (a * 2).astype(dtype))
    assert (obuf[:, N:] == 77).all()  # the row padding is past N: never written


@pytest.mark.parametrize("pad, fill", [("zero", 0.0), ("nan", np.nan)])
@pytest.mark.parametrize("r0, c0", [(-3, -5), (7, 40), (30, 2), (100, 100), (0, 0)])
def test_dev_window_padding(rng, pad, fill, r0, c0):
    M, N, BM, BN = 33, 45, 16, 8
    abuf, a = padded(rng, (M, N), np.float32)
    out = np.full((BM, BN), -777, np.float32)
    interpreted(dev_window2d)[(1,)](abuf, out, M, N, abuf.shape[1], r0, c0, BM=BM, BN=BN,
                                    PAD=pad)
    np.testing.assert_array_equal(out, window(a, (r0, c0), (BM, BN), fill))


@pytest.mark.parametrize("r0, c0", [(-3, -5), (25, 40), (0, 0), (40, 0)])
def test_dev_store_window(rng, r0, c0):
    M, N, BM, BN = 33, 45, 16, 8
    src = rng.integers(-100, 100, (BM, BN)).astype(np.int32)
    obuf, out = padded(rng, (M, N), np.int32)
    obuf[:] = -1
    interpreted(dev_store_window2d)[(1,)](src, obuf, M, N, obuf.shape[1], r0, c0, BM=BM,
                                          BN=BN)
    np.testing.assert_array_equal(obuf, stored(np.full_like(obuf, -1), src + 1, r0, c0, M, N))


@pytest.mark.parametrize("n", [1, 100, 128])
def test_dev_copy1d(rng, n):
    a = rng.integers(-1000, 1000, n).astype(np.int64)
    out = np.full(n, -777, np.int64)
    interpreted(dev_copy1d)[(cdiv(n, 32),)](a, out, n, B=32)
    np.testing.assert_array_equal(out, a - 3)


def test_dev_copy3d(rng):
    D = (3, 5, 6)
    abuf, a = padded(rng, D, np.float32)
    obuf, out = padded(rng, D, np.float32)
    obuf[:] = np.nan
    B = (2, 4, 4)
    interpreted(dev_copy3d)[tuple(cdiv(d, b) for d, b in zip(D, B))](
        abuf, obuf, *D, *strides_of(abuf)[:2], *strides_of(obuf)[:2], B0=2, B1=4, B2=4)
    np.testing.assert_array_equal(out, a)


def test_dev_runtime_loop(rng):
    M, N = 21, 77
    abuf, a = padded(rng, (M, N), np.float32)
    out = np.full((M, 32), np.nan, np.float32)
    interpreted(dev_rowsum_loop)[(cdiv(M, 16),)](abuf, out, M, N, abuf.shape[1], BM=16, BN=32)
    pad = np.zeros((M, 96), np.float32)
    pad[:, :N] = a
    np.testing.assert_allclose(out, pad.reshape(M, 3, 32).sum(1), rtol=1e-5, atol=1e-5)


def test_dev_atomic_add(rng):
    M, N, BM, BN = 20, 13, 8, 16
    src = rng.integers(-50, 50, (BM, BN)).astype(np.int32)
    obuf, out = padded(rng, (M, N), np.int32)
    obuf[:] = 5
    progs = 6  # blocks at rows 0, 4, .., 20: overlapping, the last ones past M
    interpreted(dev_atomic_add)[(progs,)](src, obuf, M, N, obuf.shape[1], BM=BM, BN=BN)
    want = np.full_like(obuf, 5)
    for p in range(progs):
        r0 = p * BM // 2
        rows = slice(r0, min(r0 + BM, M))
        want[rows, 3:N] += src[:rows.stop - r0, :N - 3]
    np.testing.assert_array_equal(obuf, want)


def test_dev_attributes(rng):
    a = np.zeros((4, 16), np.float32)
    out = np.zeros(4, np.int32)
    interpreted(dev_attributes)[(1,)](a, out, 3, 10, 16, BM=4, BN=8)
    np.testing.assert_array_equal(out, [3, 10, 16, 1])


@pytest.mark.parametrize("r0, c0", [(-3, -5), (7, 40), (0, 0)])
def test_host_window(rng, r0, c0):
    M, N, BM, BN = 33, 45, 16, 8
    abuf, a = padded(rng, (M, N), np.float32)
    out = np.full((BM, BN), -777, np.float32)
    desc = TensorDescriptor(a, a.shape, strides_of(a), [BM, BN], padding="nan")
    interpreted(host_window)[(1,)](desc, out, r0, c0, BM=BM, BN=BN)
    np.testing.assert_array_equal(out, window(a, (r0, c0), (BM, BN), np.nan))


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_host_copy_1d_2d_3d(rng, dtype):
    abuf, a = padded(rng, (37, 50), dtype)
    obuf, out = padded(rng, (37, 50), dtype)
    obuf[:] = 9
    interpreted(host_copy2d)[(3, 4)](TensorDescriptor(a, a.shape, strides_of(a), [16, 16]),
                                     TensorDescriptor(out, out.shape, strides_of(out),
                                                      [16, 16]), BM=16, BN=16)
    np.testing.assert_array_equal(out, (a * 2).astype(dtype))
    assert (obuf[:, 50:] == 9).all()

    a1 = (rng.standard_normal(100) * 8).astype(dtype)
    o1 = np.zeros(100, dtype)
    interpreted(host_copy1d)[(4,)](TensorDescriptor.from_tensor(a1, [32]),
                                   TensorDescriptor.from_tensor(o1, [32]), B=32)
    np.testing.assert_array_equal(o1, (a1 - 3).astype(dtype))

    abuf, a = padded(rng, (3, 5, 6), dtype)
    obuf, out = padded(rng, (3, 5, 6), dtype)
    interpreted(host_copy3d)[(2, 2, 2)](TensorDescriptor(a, a.shape, strides_of(a), [2, 4, 4]),
                                        TensorDescriptor(out, out.shape, strides_of(out),
                                                         [2, 4, 4]), B0=2, B1=4, B2=4)
    np.testing.assert_array_equal(out, a)


# ---- compiled: the SIMT emulator against numpy ---------------------------------------------------

def emulate(fn, sig, consts, attrs=None, target="sm_80", num_warps=4):
    ck = compile(ASTSource(tilework.jit(fn), sig, consts, attrs or {}), target,
                 CompileOptions(num_warps=num_warps), cache=False)
    return ck, Emulator.from_tilegpu(ck.asm["tilegpu"], target, num_warps)


F32, I32 = tl.pointer_type(tl.float32), tl.pointer_type(tl.int32)


@pytest.mark.parametrize("M, N", [(37, 50), (32, 64)])
def test_emulated_dev_copy2d(rng, M, N):
    sig = {"a": F32, "out": F32, "M": tl.int32, "N": tl.int32, "stride_a": tl.int32,
           "stride_o": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in ("a", "out", "stride_a", "stride_o")}
    if N % 16 == 0:
        attrs["N"] = {"tile.divisibility": 16}
    _, emu = emulate(dev_copy2d, sig, {"BM": 16, "BN": 32}, attrs)
    abuf, a = padded(rng, (M, N), np.float32)
    obuf = np.full((M, abuf.shape[1]), 77, np.float32)
    emu.run((cdiv(M, 16), cdiv(N, 32)), abuf, obuf, M, N, abuf.shape[1], obuf.shape[1])
    np.testing.assert_array_equal(obuf[:, :N], a * 2)
    assert (obuf[:, N:] == 77).all()


@pytest.mark.parametrize("pad, fill", [("zero", 0.0), ("nan", np.nan)])
@pytest.mark.parametrize("r0, c0", [(-3, -5), (7, 40), (30, 2), (0, 0)])
def test_emulated_dev_window(rng, pad, fill, r0, c0):
    M, N, BM, BN = 33, 45, 16, 8
    sig = {"a": F32, "out": F32, "M": tl.int32, "N": tl.int32, "stride_a": tl.int32,
           "r0": tl.int32, "c0": tl.int32}
    _, emu = emulate(dev_window2d, sig, {"BM": BM, "BN": BN, "PAD": pad})
    abuf, a = padded(rng, (M, N), np.float32)
    out = np.full((BM, BN), -777, np.float32)
    emu.run((1,), abuf, out, M, N, abuf.shape[1], r0, c0)
    np.testing.assert_array_equal(out, window(a, (r0, c0), (BM, BN), fill))


@pytest.mark.parametrize("r0, c0", [(-3, -5), (25, 40), (40, 0)])
def test_emulated_dev_store_window(rng, r0, c0):
    M, N, BM, BN = 33, 45, 16, 8
    sig = {"a": I32, "out": I32, "M": tl.int32, "N": tl.int32, "stride_o": tl.int32,
           "r0": tl.int32, "c0": tl.int32}
    _, emu = emulate(dev_store_window2d, sig, {"BM": BM, "BN": BN})
    src = rng.integers(-100, 100, (BM, BN)).astype(np.int32)
    obuf = np.full((M, 48), -1, np.int32)
    emu.run((1,), src, obuf, M, N, 48, r0, c0)
    np.testing.assert_array_equal(obuf, stored(np.full_like(obuf, -1), src + 1, r0, c0, M, N))


def test_emulated_dev_copy1d_and_3d(rng):
    _, emu = emulate(dev_copy1d, {"a": F32, "out": F32, "n": tl.int32}, {"B": 64})
    a = rng.standard_normal(100).astype(np.float32)
    out = np.zeros(100, np.float32)
    emu.run((2,), a, out, 100)
    np.testing.assert_array_equal(out, a - 3)

    sig = {"a": F32, "out": F32, **{k: tl.int32 for k in
                                    ("D0", "D1", "D2", "s0", "s1", "o0", "o1")}}
    _, emu = emulate(dev_copy3d, sig, {"B0": 2, "B1": 4, "B2": 4})
    D = (3, 5, 6)
    abuf, a = padded(rng, D, np.float32)
    obuf = np.full(abuf.shape, np.nan, np.float32)
    emu.run((2, 2, 2), abuf, obuf, *D, *strides_of(abuf)[:2], *strides_of(obuf)[:2])
    np.testing.assert_array_equal(obuf[..., :6], a)


def host_args(desc_args):
    """The emulator's arguments for host descriptors: base, shape, strides but the last."""
    out = []
    for buf, shape, strides in desc_args:
        out += [buf, *shape, *strides[:-1]]
    return out


def test_emulated_host_copy2d(rng):
    M, N = 37, 50
    T = tensor_descriptor_type(tl.float16, [16, 32])
    attrs = {"a_desc": {"tile.divisibility": 16}, "o_desc": {"tile.divisibility": 16},
             "a_desc.stride0": {"tile.divisibility": 16},
             "o_desc.stride0": {"tile.divisibility": 16}}
    ck, emu = emulate(host_copy2d, {"a_desc": T, "o_desc": T}, {"BM": 16, "BN": 32}, attrs)
    abuf, a = padded(rng, (M, N), np.float16)
    obuf = np.full(abuf.shape, 5, np.float16)
    emu.run((3, 2), *host_args([(abuf, (M, N), (56, 1)), (obuf, (M, N), (56, 1))]))
    np.testing.assert_array_equal(obuf[:, :N], a * 2)
    assert (obuf[:, N:] == 5).all()
    assert ck.metadata["signature"] == {"a_desc": "tensordesc<fp16[16, 32]>",
                                        "o_desc": "tensordesc<fp16[16, 32]>"}


def test_emulated_host_1d_3d(rng):
    T1 = tensor_descriptor_type(tl.int32, [32])
    _, emu = emulate(host_copy1d, {"a_desc": T1, "o_desc": T1}, {"B": 32})
    a = rng.integers(-9, 9, 70).astype(np.int32)
    out = np.zeros(70, np.int32)
    emu.run((3,), *host_args([(a, (70,), (1,)), (out, (70,), (1,))]))
    np.testing.assert_array_equal(out, a - 3)

    T3 = tensor_descriptor_type(tl.float32, [2, 4, 4])
    _, emu = emulate(host_copy3d, {"a_desc": T3, "o_desc": T3}, {"B0": 2, "B1": 4, "B2": 4})
    abuf, a = padded(rng, (3, 5, 6), np.float32)
    obuf = np.full(abuf.shape, np.nan, np.float32)
    st = strides_of(abuf)
    emu.run((2, 2, 2), *host_args([(abuf, a.shape, st), (obuf, a.shape, st)]))
    np.testing.assert_array_equal(obuf[..., :6], a)


def test_emulated_host_nan_window(rng):
    T = tensor_descriptor_type(tl.float32, [16, 8], "nan")
    _, emu = emulate(host_window, {"a_desc": T, "out": F32, "r0": tl.int32, "c0": tl.int32},
                     {"BM": 16, "BN": 8})
    abuf, a = padded(rng, (33, 45), np.float32)
    out = np.zeros((16, 8), np.float32)
    emu.run((1,), *host_args([(abuf, a.shape, strides_of(abuf))]), out, 25, -3)
    np.testing.assert_array_equal(out, window(a, (25, -3), (16, 8), np.nan))


# ---- compiled form -------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["sm_80", "sm_90a", "gfx942"])
def test_descriptors_get_block_pointer_vector_widths(target):
    """Aligned base and row strides, unit last stride, N divisible by 16: 16-byte accesses,
    as a block pointer gets; host descriptors the same from their specialization."""
    sig = {"a": F32, "out": F32, "M": tl.int32, "N": tl.int32, "stride_a": tl.int32,
           "stride_o": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in ("a", "out", "N", "stride_a", "stride_o")}
    dev = compile(ASTSource(tilework.jit(dev_copy2d), sig, {"BM": 32, "BN": 64}, attrs),
                  target, CompileOptions(tma=False),
                  cache=False)  # (sm_90a loads in-kernel descriptors by TMA: test_device_tma.py)
    T = tensor_descriptor_type(tl.float32, [32, 64])
    hattrs = {k: {"tile.divisibility": 16} for k in
              ("a_desc", "o_desc", "a_desc.shape1", "o_desc.shape1", "a_desc.stride0",
               "o_desc.stride0")}
    host = compile(ASTSource(tilework.jit(host_copy2d), {"a_desc": T, "o_desc": T},
                             {"BM": 32, "BN": 64}, hattrs), target, CompileOptions(tma=False),
                   cache=False)  # (sm_90a loads host descriptors by TMA: test_tma.py)
    for ck in (dev, host):
        if target.startswith("sm"):
            assert "ld.global.v4.b32" in ck.asm["ptx"] and "st.global.v4.b32" in ck.asm["ptx"]
        else:
            assert "global_load_dwordx4" in ck.asm["amdgcn"]


def test_unaligned_stride_gets_narrow_accesses():
    """Without the divisibility of the row stride the width drops (still correct)."""
    sig = {"a": F32, "out": F32, "M": tl.int32, "N": tl.int32, "stride_a": tl.int32,
           "stride_o": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in ("a", "out", "N")}
    ck = compile(ASTSource(tilework.jit(dev_copy2d), sig, {"BM": 32, "BN": 64}, attrs),
                 "sm_90a", cache=False)
    assert "ld.global.v4.b32" not in ck.asm["ptx"]


def test_host_descriptor_parameters_in_the_tile_ir():
    """A host descriptor is base, shape (i32) and the strides but the last (i64) in the
    kernel's signature, with their divisibility; the last stride is the constant 1."""
    T = tensor_descriptor_type(tl.float16, [16, 32, 64])
    attrs = {"a_desc": {"tile.divisibility": 16}, "a_desc.stride1": {"tile.divisibility": 16}}
    ck = compile(ASTSource(tilework.jit(host_copy3d), {"a_desc": T, "o_desc": T},
                           {"B0": 16, "B1": 32, "B2": 64}, attrs), "sm_80", cache=False)
    head = ck.asm["tile"].splitlines()[1]  # (sm_90a adds a tensor map: test_tma.py)
    assert ("(%arg0: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %arg1: i32, %arg2: i32, "
            "%arg3: i32, %arg4: i64, %arg5: i64 {tile.divisibility = 16 : i32}, "
            "%arg6: !tile.ptr<f16>, %arg7: i32, %arg8: i32, %arg9: i32, %arg10: i64, "
            "%arg11: i64)") in head
    from tilework.runtime.abi import param_kinds
    assert param_kinds(ck.metadata) == "piiill" * 2


def test_descriptor_is_desugared_to_masked_accesses():
    sig = {"a": F32, "out": F32, "M": tl.int32, "N": tl.int32, "stride_a": tl.int32,
           "stride_o": tl.int32}
    ck = compile(ASTSource(tilework.jit(dev_copy2d), sig, {"BM": 16, "BN": 32}, {}),
                 "sm_90a", cache=False)
    tile = ck.asm["tile"]
    assert tile.count("arith.cmpi sge") == 4 and tile.count("arith.cmpi slt") == 4
    assert '"tile.store"' in tile
    # (the load's map, of strides unknown to be 16-byte multiples: tile-tma-guard's fallback)
    assert '"tile.load"' in ck.asm["tilegpu"] and "make_tensormap" not in ck.asm["tilegpu"]


@pytest.mark.parametrize("target, instr", [("sm_90a", "red.global.gpu.relaxed.add.u32"),
                                           ("gfx942", "global_atomic_add")])
def test_descriptor_atomic_compiles_to_one_masked_reduction(target, instr):
    """desc.atomic_add is one relaxed tile.atomic_rmw under the bounds mask (no old values
    used: a reduction)."""
    sig = {"a": I32, "out": I32, "M": tl.int32, "N": tl.int32, "stride_o": tl.int32}
    ck = compile(ASTSource(tilework.jit(dev_atomic_add), sig, {"BM": 8, "BN": 16}, {}), target,
                 cache=False)
    rmw = [ln for ln in ck.asm["tile"].splitlines() if '"tile.atomic_rmw"' in ln]
    assert len(rmw) == 1 and 'kind = "add"' in rmw[0] and 'sem = "relaxed"' in rmw[0]
    assert rmw[0].count("%") == 4  # result, pointers, values, mask
    assert instr in (ck.asm.get("ptx") or ck.asm["amdgcn"])


# ---- rejections --------------------------------------------------------------------------------

@tilework.jit
def k_rank0(x, n):
    d = tl.make_tensor_descriptor(x, [], [], [])  # ERR


@tilework.jit
def k_rank6(x, n):
    d = tl.make_tensor_descriptor(x, [n] * 6, [n] * 5 + [1], [1] * 5 + [4])  # ERR


@tilework.jit
def k_strides_count(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [1], [16, 16])  # ERR


@tilework.jit
def k_block_count(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [n, 1], [16])  # ERR


@tilework.jit
def k_last_stride(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [n, 2], [16, 16])  # ERR


@tilework.jit
def k_last_stride_runtime(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [n, n], [16, 16])  # ERR


@tilework.jit
def k_pow2(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [n, 1], [16, 12])  # ERR


@tilework.jit
def k_runtime_block(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [n, 1], [n, 16])  # ERR


@tilework.jit
def k_16_bytes(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [n, 1], [16, 2])  # ERR


@tilework.jit
def k_stride_alignment(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [3, 1], [16, 16])  # ERR


@tilework.jit
def k_bad_padding(x, n):
    d = tl.make_tensor_descriptor(x, [n], [1], [16], padding_option="inf")  # ERR


@tilework.jit
def k_tile_base(x, n):
    d = tl.make_tensor_descriptor(x + tl.arange(0, 16), [n], [1], [16])  # ERR


@tilework.jit
def k_float_shape(x, n):
    d = tl.make_tensor_descriptor(x, [2.5], [1], [16])  # ERR


@tilework.jit
def k_offsets_count(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [n, 1], [16, 16])
    d.load([0])  # ERR


@tilework.jit
def k_offsets_tile(x, n):
    d = tl.make_tensor_descriptor(x, [n], [1], [16])
    d.load([tl.arange(0, 16)])  # ERR


@tilework.jit
def k_store_shape(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [n, 1], [16, 16])
    d.store([0, 0], tl.arange(0, 16).to(tl.float32))  # ERR


@tilework.jit
def k_store_scalar(x, n):
    d = tl.make_tensor_descriptor(x, [n, n], [n, 1], [16, 16])
    tl.store_tensor_descriptor(d, [0, 0], 1.0)  # ERR


@tilework.jit
def k_not_a_descriptor(x, n):
    tl.load_tensor_descriptor(x, [0])  # ERR


@tilework.jit
def k_block_pointer_not_descriptor(x, n):
    p = tl.make_block_ptr(x, (n,), (1,), (0,), (16,), (0,))
    tl.store_tensor_descriptor(p, [0], tl.zeros((16,), tl.float32))  # ERR


@tilework.jit
def k_atomic_type(x, n):
    d = tl.make_tensor_descriptor(x, [n], [1], [16])
    d.atomic_max([0], tl.zeros((16,), tl.float32))  # ERR


@tilework.jit
def k_no_attribute(x, n):
    d = tl.make_tensor_descriptor(x, [n], [1], [16])
    d.gather([0])  # ERR


@pytest.mark.parametrize("fn, message", [
    (k_rank0, "Expected 1 <= ndim <= 5 but got 0 dimensions"),
    (k_rank6, "Expected 1 <= ndim <= 5 but got 6 dimensions"),
    (k_strides_count, "Expected 2 strides but got 1"),
    (k_block_count, "Expected block_shape to have 2 dimensions but got 1"),
    (k_last_stride, "Tensor descriptor last dim must be 1 but got 2"),
    (k_last_stride_runtime, "Tensor descriptor last dim must be 1 but got a runtime value"),
    (k_pow2, "Shape element 1 must be a power of 2"),
    (k_runtime_block, "Shape element 0 must have type `constexpr[int]`, got a runtime value"),
    (k_16_bytes, "Descriptor block shape must have at least 16 bytes in the last dimension, "
                 "but got 2 * 4 = 8 bytes"),
    (k_stride_alignment, "Tensor descriptor strides must be 16-byte aligned: stride 0 is 3 "
                         "elements of 4 bytes"),
    (k_bad_padding, "padding_option must be 'zero' or 'nan'; got 'inf'"),
    (k_tile_base, "make_tensor_descriptor expects a pointer (not a tile of pointers) as "
                  "`base`, got a tile of shape [16]"),
    (k_float_shape, "tensor descriptor shape must be integers, got 2.5"),
    (k_offsets_count, "load_tensor_descriptor: expected 2 offsets, but got 1"),
    (k_offsets_tile, "tensor descriptor offsets must be scalars, got a tile of shape [16]"),
    (k_store_shape, "store_tensor_descriptor: the value must be a tile of the block shape "
                    "[16, 16], got shape [16]"),
    (k_store_scalar, "store_tensor_descriptor: the value must be a tile of the block shape "
                     "[16, 16], got 1.0"),
    (k_not_a_descriptor, "load_tensor_descriptor expects a tensor descriptor (from "
                         "tl.make_tensor_descriptor or a TensorDescriptor argument), got *fp32"),
    (k_block_pointer_not_descriptor, "store_tensor_descriptor expects a tensor descriptor "
                                     "(from tl.make_tensor_descriptor or a TensorDescriptor "
                                     "argument), got a block pointer"),
    (k_atomic_type, "descriptor_atomic_max does not support fp32; it takes int32, uint32, "
                    "int64, uint64"),
    (k_no_attribute, "has no attribute `gather`"),
])
def test_rejections(fn, message):
    with pytest.raises(CompilationError) as ei:
        compile(ASTSource(fn, {"x": F32, "n": tl.int32}, {}, {}), "sm_90a", cache=False)
    assert_located(ei.value, message, THIS, line_of(fn))


@tilework.jit
def k_nan_int(y, n):
    d = tl.make_tensor_descriptor(y, [n], [1], [16], padding_option="nan")  # ERR


def test_nan_padding_of_integers_is_rejected():
    with pytest.raises(CompilationError) as ei:
        compile(ASTSource(k_nan_int, {"y": I32, "n": tl.int32}, {}, {}), "sm_90a",
                cache=False)
    assert_located(ei.value, "Padding option `nan` is not supported for integer blocks", THIS,
                   line_of(k_nan_int))


def test_interpreter_rejects_as_the_compiler():
    @interpreted
    def k(x, n):
        tl.make_tensor_descriptor(x, [n, n], [n, 2], [16, 16])

    with pytest.raises(Exception, match="Tensor descriptor last dim must be 1 but got 2"):
        k[(1,)](np.zeros(16, np.float32), 4)


# ---- the host TensorDescriptor's checks (Triton's assertions) ---------------------------------

@pytest.mark.parametrize("make, message", [
    (lambda a: TensorDescriptor(a, [4, 8], [8], [4, 8]), "rank mismatch"),
    (lambda a: TensorDescriptor(a, [4, 8], [8, 1], [4]), "rank mismatch"),
    (lambda a: TensorDescriptor(a, [], [], []), "rank must not be zero"),
    (lambda a: TensorDescriptor(a, [1] * 6, [1] * 6, [1] * 6), "rank cannot be more than 5"),
    (lambda a: TensorDescriptor(a[1:], [31], [1], [8]), "base must be 16-byte aligned"),
    (lambda a: TensorDescriptor(a, [4, 6], [6, 1], [4, 8]), "strides must be 16-byte aligned"),
    (lambda a: TensorDescriptor(a, [4, 8], [8, 2], [4, 8]), "Last dimension must be contiguous"),
    (lambda a: TensorDescriptor(a, [32], [1], [8], padding="inf"), "Illegal value for padding"),
    (lambda a: TensorDescriptor(a.view(np.int32), [32], [1], [8], padding="nan"),
     "Padding option `nan` is only supported for floating point tensors"),
    (lambda a: TensorDescriptor(a, [4, 8], [8, 1], [4, 6]), "Shape element 1 must be a power of 2"),
    (lambda a: TensorDescriptor(a, [4, 8], [8, 1], [0, 8]), "Shape element 0 must be a power of 2"),
    (lambda a: TensorDescriptor(a, [4, 8], [8, 1], [4, 8.0]),
     "Shape element 1 must have type `constexpr[int]`, got `constexpr[float]"),
    (lambda a: TensorDescriptor(a, [4, 8], [8, 1], [True, 8]),
     "Shape element 0 must have type `constexpr[int]`, got `constexpr[bool]"),
    (lambda a: TensorDescriptor(a, [4, 8], [8, 1], [2048, 1024]),
     "numel (2097152) exceeds triton maximum tensor numel (1048576)"),
])
def test_host_descriptor_checks(make, message):
    a = np.zeros(64, np.float32)
    assert a.ctypes.data % 16 == 0
    with pytest.raises((AssertionError, ValueError, TypeError), match=re.escape(message)):
        make(a)


def test_from_tensor():
    a = np.zeros((8, 12, 16), np.float16)
    d = TensorDescriptor.from_tensor(a, [2, 4, 8])
    assert (d.shape, d.strides, d.block_shape, d.padding) == \
        ([8, 12, 16], [192, 16, 1], [2, 4, 8], "zero")


def test_checked_geometry_is_remembered_not_trusted():
    """A geometry that passed is taken from the memo, never another that compares equal to it
    (a float or bool block element), and the base's alignment is checked every time; each
    descriptor's fields are lists of its own (ints where floats were given)."""
    a = np.zeros(64, np.float32)
    d = TensorDescriptor(a, [4, 8], [8, 1], [4, 8])
    e = TensorDescriptor(a, (4.0, 8), [8.0, 1], (4, 8))  # (the memo's entry: equal, hashed alike)
    assert (e.shape, e.strides, e.block_shape) == ([4, 8], [8, 1], [4, 8])
    assert all(type(v) is int for v in e.shape + e.strides)
    e.shape.append(1)
    e.block_shape[0] = 2
    assert (d.shape, d.block_shape) == ([4, 8], [4, 8])
    f = TensorDescriptor(a, iter([4, 8]), iter([8, 1]), iter([4, 8]))  # iterators: read once
    assert (f.shape, f.strides, f.block_shape) == ([4, 8], [8, 1], [4, 8])
    with pytest.raises(AssertionError, match="base must be 16-byte aligned"):
        TensorDescriptor(a[1:], [4, 8], [8, 1], [4, 8])
    with pytest.raises(TypeError, match=re.escape("Shape element 1 must have type "
                                                  "`constexpr[int]`, got `constexpr[float]")):
        TensorDescriptor(a, [4, 8], [8, 1], [4, 8.0])
    with pytest.raises(TypeError, match=re.escape("Shape element 0 must have type "
                                                  "`constexpr[int]`, got `constexpr[bool]")):
        TensorDescriptor(a, [2, 8], [8, 1], [True, 8])
    TensorDescriptor(a, [4, 8], [8, 1], [1, 8])
    with pytest.raises(TypeError, match="Shape element 0"):
        TensorDescriptor(a, [4, 8], [8, 1], [True, 8])
    with pytest.raises(AssertionError, match="Padding option `nan` is only supported"):
        TensorDescriptor(a.view(np.int32), [4, 8], [8, 1], [4, 8], padding="nan")
    TensorDescriptor(a, [4, 8], [8, 1], [4, 8], padding="nan")
    with pytest.raises(AssertionError, match="Padding option `nan` is only supported"):
        TensorDescriptor(a.view(np.int32), [4, 8], [8, 1], [4, 8], padding="nan")
