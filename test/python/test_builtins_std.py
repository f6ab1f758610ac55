"""tl.sort / topk / flip / histogram / gather / swizzle2d, tensor.item() / numel, dtype
attributes, tl.debug_barrier and `tl.const` pointers: values against numpy in the interpreter
and, compiled for sm_90a and gfx942 (every stage, ptxas included), run by the SIMT emulator on
random inputs; every rejected form with its message."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from builtins_kernels import (e4b15_k, flip_k, gather_k, hist_k, misc_k, np_from_e4b15,
                              np_gather, np_swizzle, np_to_e4b15, sort_k, swizzle_k, topk_k)
from simt_emulator import Emulator

TARGETS = ["sm_90a", "gfx942"]
NP = {tl.float32: np.float32, tl.int32: np.int32, tl.uint8: np.uint8, tl.float16: np.float16,
      tl.int64: np.int64, tl.int8: np.int8}


def P(dt):
    return tl.pointer_type(dt)


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def rand(rng, shape, dt, lo=-50, hi=50):
    t = NP[dt]
    if np.dtype(t).kind == "f":
        return (rng.standard_normal(shape) * 10).astype(t)
    info = np.iinfo(t)
    return rng.integers(max(lo, info.min), min(hi, info.max), shape, endpoint=True).astype(t)


def interp(fn, *args, **consts):
    tilework.jit(fn, interpret=True)[(1,)](*args, **consts)


def emulate(fn, sig, consts, target, *args, warps=4):
    emu = Emulator.from_kernel(tilework.jit(fn), sig, consts, target, warps)
    emu.run((1,), *args)
    return emu


# ---- sort / flip / topk ----------------------------------------------------------------------

def np_sort(x, dim, desc):
    s = np.sort(x, axis=dim, kind="stable")
    return np.flip(s, dim) if desc else s


@pytest.mark.parametrize("dt", [tl.float32, tl.int32, tl.uint8, tl.float16, tl.int64])
@pytest.mark.parametrize("m, n, dim, desc", [(1, 2, 1, False), (4, 16, 1, True), (2, 64, 1, False),
                                             (16, 4, 0, True), (8, 8, 0, False), (1, 256, 1, True)])
def test_sort_interpreted(rng, dt, m, n, dim, desc):
    x = rand(rng, (m, n), dt)
    y = np.zeros_like(x)
    interp(sort_k, x, y, M=m, N=n, DIM=dim, DESC=desc)
    np.testing.assert_array_equal(y, np_sort(x, dim, desc))


@pytest.mark.parametrize("dt", [tl.float32, tl.int8])
@pytest.mark.parametrize("m, n, dim", [(4, 16, 1), (8, 4, 0), (1, 32, 1)])
def test_flip_interpreted(rng, dt, m, n, dim):
    x = rand(rng, (m, n), dt)
    y = np.zeros_like(x)
    interp(flip_k, x, y, M=m, N=n, DIM=dim)
    np.testing.assert_array_equal(y, np.flip(x, dim))


@pytest.mark.parametrize("dt", [tl.float32, tl.int32])
@pytest.mark.parametrize("m, n, k", [(2, 16, 4), (4, 32, 1), (1, 8, 8), (2, 64, 16)])
def test_topk_interpreted(rng, dt, m, n, k):
    x = rand(rng, (m, n), dt, -1000, 1000)
    y = np.zeros((m, k), x.dtype)
    interp(topk_k, x, y, M=m, N=n, K=k)
    np.testing.assert_array_equal(y, -np.sort(-x, axis=1)[:, :k])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dt, m, n, dim, desc, warps",
                         [(tl.float32, 4, 64, 1, False, 4), (tl.int32, 1, 512, 1, True, 4),
                          (tl.float16, 32, 8, 0, True, 2), (tl.uint8, 2, 128, 1, False, 1)])
def test_sort_emulated(rng, target, dt, m, n, dim, desc, warps):
    x = rand(rng, (m, n), dt)
    y = np.zeros_like(x)
    emulate(sort_k, {"x": P(dt), "y": P(dt)}, dict(M=m, N=n, DIM=dim, DESC=desc), target, x, y,
            warps=warps)
    np.testing.assert_array_equal(y, np_sort(x, dim, desc))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("m, n, dim", [(4, 64, 1), (32, 8, 0)])
def test_flip_emulated(rng, target, m, n, dim):
    x = rand(rng, (m, n), tl.float32)
    y = np.zeros_like(x)
    emulate(flip_k, {"x": P(tl.float32), "y": P(tl.float32)}, dict(M=m, N=n, DIM=dim), target,
            x, y)
    np.testing.assert_array_equal(y, np.flip(x, dim))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("m, n, k", [(4, 128, 8), (2, 32, 1)])
def test_topk_emulated(rng, target, m, n, k):
    x = rand(rng, (m, n), tl.float32)
    y = np.zeros((m, k), np.float32)
    emulate(topk_k, {"x": P(tl.float32), "y": P(tl.float32)}, dict(M=m, N=n, K=k), target, x, y)
    np.testing.assert_array_equal(y, -np.sort(-x, axis=1)[:, :k])


def test_sort_1024_code_is_reasonable():
    """A 1024-element sort: data moves through shared memory only at the two reshapes and in
    exchanges across warps; no spills."""
    ck = tilework.compile(tilework.jit(sort_k), target="sm_90a",
                          signature={"x": "*i32", "y": "*i32"},
                          constexprs=dict(M=1, N=1024, DIM=1, DESC=False))
    info = ck.metadata.get("ptxas_info", "")
    assert "0 bytes spill stores" in info, info
    ptx = ck.asm["ptx"]
    assert ptx.count("shfl.sync") <= 400 and ptx.count("bar.sync") <= 32


# ---- histogram / gather / swizzle2d ----------------------------------------------------------

@pytest.mark.parametrize("n, block, bins", [(100, 128, 16), (1000, 1024, 64), (7, 8, 8)])
def test_histogram_interpreted(rng, n, block, bins):
    x = rng.integers(-3, bins + 3, block).astype(np.int32)  # some outside [0, bins)
    y = np.zeros(bins, np.int32)
    interp(hist_k, x, y, n, N=block, BINS=bins)
    np.testing.assert_array_equal(y, np.bincount(x[:n][(x[:n] >= 0) & (x[:n] < bins)],
                                                 minlength=bins))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n, block, bins", [(300, 512, 32), (5, 8, 4)])
def test_histogram_emulated(rng, target, n, block, bins):
    x = rng.integers(-3, bins + 3, block).astype(np.int32)
    y = np.zeros(bins, np.int32)
    emulate(hist_k, {"x": P(tl.int32), "y": P(tl.int32), "n": tl.int32}, dict(N=block, BINS=bins),
            target, x, y, n)
    np.testing.assert_array_equal(y, np.bincount(x[:n][(x[:n] >= 0) & (x[:n] < bins)],
                                                 minlength=bins))


GATHER = [(4, 8, 16, 8, 0), (8, 16, 8, 4, 1), (1, 32, 1, 64, 1), (16, 2, 4, 2, 0)]


@pytest.mark.parametrize("dt", [tl.float32, tl.int64, tl.float16])
@pytest.mark.parametrize("m, n, km, kn, axis", GATHER)
def test_gather_interpreted(rng, dt, m, n, km, kn, axis):
    src = rand(rng, (m, n), dt)
    idx = rng.integers(0, (m, n)[axis], (km, kn)).astype(np.int32)
    out = np.zeros((km, kn), src.dtype)
    interp(gather_k, src, idx, out, M=m, N=n, KM=km, KN=kn, AXIS=axis)
    np.testing.assert_array_equal(out, np_gather(src, idx, axis))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("m, n, km, kn, axis", GATHER[:2])
def test_gather_emulated(rng, target, m, n, km, kn, axis):
    src = rand(rng, (m, n), tl.float32)
    idx = rng.integers(0, (m, n)[axis], (km, kn)).astype(np.int32)
    out = np.zeros((km, kn), np.float32)
    emulate(gather_k, {"src": P(tl.float32), "idx": P(tl.int32), "out": P(tl.float32)},
            dict(M=m, N=n, KM=km, KN=kn, AXIS=axis), target, src, idx, out)
    np.testing.assert_array_equal(out, np_gather(src, idx, axis))


@pytest.mark.parametrize("size_i, size_j, size_g", [(7, 5, 3), (16, 16, 4), (10, 3, 16), (9, 12, 1)])
def test_swizzle2d(size_i, size_j, size_g):
    ni = np.full((16, 16), -1, np.int32)
    nj = np.full((16, 16), -1, np.int32)
    interp(swizzle_k, ni, nj, size_i, size_j, size_g, BI=16, BJ=16)
    ri, rj = np_swizzle(size_i, size_j, size_g)
    np.testing.assert_array_equal(ni[:size_i, :size_j], ri)
    np.testing.assert_array_equal(nj[:size_i, :size_j], rj)
    assert (ni[size_i:] == -1).all() and (ni[:, size_j:] == -1).all()
    # a bijection of the grid
    assert len({(a, b) for a, b in zip(ri.ravel(), rj.ravel())}) == size_i * size_j
    for target in TARGETS:
        ei = np.full((16, 16), -1, np.int32)
        ej = np.full((16, 16), -1, np.int32)
        emulate(swizzle_k, {"oi": P(tl.int32), "oj": P(tl.int32), "size_i": tl.int32,
                            "size_j": tl.int32, "size_g": tl.int32}, dict(BI=16, BJ=16), target,
                ei, ej, size_i, size_j, size_g)
        np.testing.assert_array_equal(ei, ni)
        np.testing.assert_array_equal(ej, nj)


# ---- item / numel / dtype attributes / debug_barrier ----------------------------------------

def test_misc_interpreted_and_emulated(rng):
    x = np.array([3.0], np.float32)
    y = rand(rng, 64, tl.float32)
    want = y * 3 + 64 + 23 + 10
    out = np.zeros_like(y)
    interp(misc_k, x, y, out, N=64)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    for target in TARGETS:
        out = np.zeros_like(y)
        emu = emulate(misc_k, {"x": P(tl.float32), "y": P(tl.float32), "out": P(tl.float32)},
                      dict(N=64), target, x, y, out)
        np.testing.assert_allclose(out, want, rtol=1e-6)
        if target == "sm_90a":
            assert "bar.sync" in emu.compiled.asm["ptx"]
        else:
            assert "s_barrier" in emu.compiled.asm["amdgcn"]


def test_dtype_attributes():
    assert [d.fp_mantissa_width for d in (tl.float8e4nv, tl.float8e5, tl.float16, tl.bfloat16,
                                          tl.float32, tl.float64)] == [3, 2, 10, 7, 23, 52]
    assert tl.float32.exponent_bias == 127 and tl.float16.exponent_bias == 15
    assert tl.int8.is_int8() and not tl.int8.is_uint8() and tl.uint64.is_uint64()
    assert tl.bfloat16.is_standard_floating() and not tl.float8e5.is_standard_floating()
    assert tl.int16.get_int_max_value() == 32767 and tl.int16.get_int_min_value() == -32768
    assert tl.uint8.get_int_max_value() == 255 and tl.int32.primitive_bitwidth == 32
    assert tl.pi32_t == tl.pointer_type(tl.int32)
    assert tl.pointer_type(tl.float16, const=True).is_const()
    assert tl.pointer_type(tl.float16, const=True) != tl.pointer_type(tl.float16)
    with pytest.raises(TypeError, match="fp_mantissa_width is defined for floating-point "
                                        "dtypes, not int32"):
        tl.int32.fp_mantissa_width


# ---- tl.const pointers -----------------------------------------------------------------------

def const_k(inp: tl.const, out, n, BAD: tl.constexpr):
    o = tl.arange(0, 128)
    v = tl.load(inp + o, mask=o < n)
    if BAD == 1:
        tl.store(inp + o, v, mask=o < n)
    elif BAD == 2:
        tl.atomic_add(inp + o, v, mask=o < n)
    tl.store(out + o, v * 2, mask=o < n)


@pytest.mark.parametrize("target", TARGETS)
def test_const_pointer_loads(rng, target):
    x = rand(rng, 128, tl.float32)
    out = np.zeros_like(x)
    interp(const_k, x, out, 100, BAD=0)
    np.testing.assert_array_equal(out[:100], x[:100] * 2)
    out = np.zeros_like(x)
    emulate(const_k, {"inp": P(tl.float32), "out": P(tl.float32), "n": tl.int32}, dict(BAD=0),
            target, x, out, 100)
    np.testing.assert_array_equal(out[:100], x[:100] * 2)


@pytest.mark.parametrize("bad, msg", [(1, "Cannot store to a constant pointer"),
                                      (2, "atomic_add writes memory: it cannot take a constant "
                                          "pointer")])
def test_const_pointer_writes_rejected(bad, msg):
    with pytest.raises(CompilationError, match=msg) as e:
        tilework.compile(tilework.jit(const_k), target="sm_90a",
                         signature={"inp": "*fp32", "out": "*fp32", "n": "i32"},
                         constexprs={"BAD": bad})
    assert "test_builtins_std.py" in str(e.value)  # located at the call
    with pytest.raises(Exception, match=msg):
        interp(const_k, np.zeros(128, np.float32), np.zeros(128, np.float32), 100, BAD=bad)


# ---- rejected forms --------------------------------------------------------------------------

def bad_k(x, y, WHAT: tl.constexpr):
    v = tl.load(x + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :])
    i = tl.arange(0, 8)
    if WHAT == "sort_dim":
        r = tl.sort(v, dim=2)
    elif WHAT == "flip_dim":
        r = tl.flip(v, dim=-3)
    elif WHAT == "topk_k":
        r = tl.topk(v, 3)
    elif WHAT == "topk_big":
        r = tl.topk(v, 16)
    elif WHAT == "hist_2d":
        r = tl.histogram(v.to(tl.int32), 8)
    elif WHAT == "hist_float":
        r = tl.histogram(i.to(tl.float32), 8)
    elif WHAT == "hist_bins":
        r = tl.histogram(i, 6)
    elif WHAT == "gather_rank":
        r = tl.gather(v, i, 0)
    elif WHAT == "gather_shape":
        r = tl.gather(v, tl.zeros((8, 4), tl.int32), 0)
    elif WHAT == "gather_float":
        r = tl.gather(v, v, 1)
    elif WHAT == "gather_axis":
        r = tl.gather(v, v.to(tl.int32), 2)
    elif WHAT == "item":
        r = v.item()
    tl.store(y, tl.sum(r) if len(r.shape) else r)


@pytest.mark.parametrize("what, msg", [
    ("sort_dim", "sort: dim is out of range for the tile"),
    ("flip_dim", "flip: dim is out of range for the tile"),
    ("topk_k", "topk: k must be a power of two"),
    ("topk_big", "topk: k is larger than the dimension"),
    ("hist_2d", r"histogram input must be a 1-D tile, got shape \[8, 8\]"),
    ("hist_float", "histogram input must hold integers, got fp32"),
    ("hist_bins", "histogram num_bins must be a power of two, got 6"),
    ("gather_rank", r"gather src and index must have the same rank, got shapes \[8, 8\] and \[8\]"),
    ("gather_shape", r"gather index of shape \[8, 4\] must match src's shape \[8, 8\] except "
                     r"along axis 0"),
    ("gather_float", "gather index must hold integers, got fp32"),
    ("gather_axis", "gather axis 2 is out of range for a tile of rank 2"),
    ("item", r"item\(\) needs a tile of one element, got shape \[8, 8\]"),
])
def test_rejected(what, msg):
    with pytest.raises(CompilationError, match=msg):
        tilework.compile(tilework.jit(bad_k), target="sm_90a",
                         signature={"x": "*fp32", "y": "*fp32"}, constexprs={"WHAT": what})
    with pytest.raises(Exception, match=msg):
        interp(bad_k, np.zeros(64, np.float32), np.zeros(1, np.float32), WHAT=what)


# ---- float8e4b15 -----------------------------------------------------------------------------

def test_float8e4b15_dtype():
    assert tl.float8e4b15.is_fp8() and tl.float8e4b15.is_fp8e4b15()
    assert tl.float8e4b15.fp_mantissa_width == 3 and tl.float8e4b15.exponent_bias == 15
    assert tl.str_to_ty("fp8e4b15") == tl.float8e4b15
    # the reference conversions: exact on every byte; back, Triton 3.6's compiled rule
    # (saturated to 1.75, so +-1.875 come back as +-1.75; ties away from zero)
    allb = np.arange(256, dtype=np.uint8)
    v = np_from_e4b15(allb)
    sat = np.where(allb & 0x7F == 0x7F, allb - 1, allb)
    assert v.max() == 1.875 and v[1] == 2.0 ** -17 and (np_to_e4b15(v) == sat).all()
    np.testing.assert_array_equal(
        np_to_e4b15([100.0, -3.0, 1.9, 1.0624, 1.0625, -1.1875, np.inf, np.nan, 2.0 ** -18]),
        [0x7E, 0xFE, 0x7E, 0x78, 0x79, 0xFA, 0x7E, 0x7E, 0x01])


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_float8e4b15_conversions(rng, where):
    x = np.arange(256, dtype=np.uint8)
    y = np.zeros(256, np.float32)
    z = np.zeros(256, np.uint8)
    w = np.zeros(256, np.uint8)
    if where == "interpreter":
        interp(e4b15_k, x, y, z, w, N=256)
    else:
        emulate(e4b15_k, {"x": P(tl.uint8), "y": P(tl.float32), "z": P(tl.uint8),
                          "w": P(tl.uint8)}, dict(N=256), where, x, y, z, w)
    d = np_from_e4b15(x)
    np.testing.assert_array_equal(y, d)
    np.testing.assert_array_equal(z, np_to_e4b15(d))  # (+-1.875 saturate to +-1.75)
    prod = np_from_e4b15(np_to_e4b15(d * d))
    np.testing.assert_array_equal(w, np_to_e4b15(prod + np.float32(0.5)))


@pytest.mark.parametrize("target", TARGETS)
def test_large_gather_and_histogram_compile(target):
    """Shared memory keeps them linear in the tile sizes: a 128x64 gather by 128x128 indices
    and a 4096-element histogram of 128 bins compile to modest code (ptxas: no spills)."""
    ck = tilework.compile(tilework.jit(gather_k), target=target,
                          signature={"src": "*fp32", "idx": "*i32", "out": "*fp32"},
                          constexprs=dict(M=128, N=64, KM=128, KN=128, AXIS=1))
    asm = ck.asm["ptx" if target.startswith("sm") else "amdgcn"]
    assert len(asm.splitlines()) < 4000
    ck2 = tilework.compile(tilework.jit(hist_k), target=target,
                           signature={"x": "*i32", "y": "*i32", "n": "i32"},
                           constexprs=dict(N=4096, BINS=128))
    asm2 = ck2.asm["ptx" if target.startswith("sm") else "amdgcn"]
    assert len(asm2.splitlines()) < 2000
    if target.startswith("sm"):
        for c in (ck, ck2):
            assert "0 bytes spill stores" in c.metadata.get("ptxas_info", "")
        assert "atom.shared" in asm2 and "atom.global" not in asm2
    else:
        assert "ds_add_u32" in asm2
