"""Scans (`tl.cumsum`, `tl.cumprod`, `tl.associative_scan`) without a GPU.

* interpreted: the CPU interpreter against numpy (and a Python-loop reference for custom,
  non-commutative combines);
* emulated: compiled for sm_80 / sm_90a / gfx942 (every stage, ptxas and the AMD linker
  included), then the per-thread code of `tilegpu-to-llvm` run by the SIMT emulator of
  `simt_emulator.py` (warps of 32 and 64 lanes, shuffles, shared memory with race checks);
  also with random layouts forced onto the kernel (replication, repetitions, orders);
* compile-only checks of the assembly, dtype promotion, error messages.
"""
import os
import random
import re
import zlib

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError, CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.dialects.layout import Blocked

from scan_kernels import (
    affine_scan, compact, cumsum_loop, helper_scan, matmul_scan, np_affine, np_matmul2, np_scan,
    np_segmented, ref_scan, rowsum_cumsum, scan_1d, scan_2d, scan_3d, segmented_scan,
)
from simt_emulator import Emulator

P = tl.pointer_type
THIS = os.path.abspath(__file__)

TL = {np.float32: tl.float32, np.float16: tl.float16, np.float64: tl.float64,
      np.int32: tl.int32, np.int8: tl.int8, np.uint8: tl.uint8, np.int64: tl.int64,
      np.int16: tl.int16, np.uint32: tl.uint32, np.bool_: tl.int1}


def _seed(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def acc_dtype(dtype, op):
    """Triton's scan dtype: cumsum widens integers narrower than 32 bits (bool: uint32)."""
    if op.endswith("cumsum") and dtype in (np.int8, np.int16):
        return np.int32
    if op.endswith("cumsum") and dtype in (np.uint8, np.bool_):
        return np.uint32
    return dtype


def identity(op, dtype):
    if op.endswith("cumprod"):
        return 1
    if op == "scan_max":
        return {np.int8: -128, np.uint8: 0}.get(dtype, -1000)
    return 0


def make_input(rng, shape, dtype, op):
    """Values whose scans are exact in every order (so the tree order of the interpreter and
    the lane/warp order of the GPU agree with numpy's sequential one)."""
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if op.endswith("cumprod"):
        if np.issubdtype(dtype, np.integer):  # wrapping products are exact in any order
            lo = 0 if dtype == np.uint8 else -3
            return rng.integers(lo, 4, shape).astype(dtype)
        return rng.choice(np.array([1, -1, 2, 0.5], dtype), shape, p=[0.49, 0.49, 0.01, 0.01])
    if np.issubdtype(dtype, np.integer):
        lo = 0 if dtype == np.uint8 else -3
        return rng.integers(lo, 4, shape).astype(dtype)
    return (rng.integers(-2, 3, shape) / 2).astype(dtype)  # halves: exact sums up to 1024


def interpret(kernel, grid, *args, **kw):
    kernel.interpret = True
    try:
        kernel[grid](*args, **kw)
    finally:
        kernel.interpret = False


# ---- interpreted ---------------------------------------------------------------------------------

OPS = ["cumsum", "cumprod", "member_cumsum", "member_cumprod", "scan_add", "scan_max"]
DTYPES = [np.float32, np.float16, np.int32, np.int8, np.uint8, np.int64, np.float64]


def _check_1d(run, op, dtype, rev, n, block):
    rng = _seed(op, str(dtype), rev, n, block)
    x = make_input(rng, n, dtype, op)
    acc = acc_dtype(dtype, op)
    out = np.full(n + 3, 7, acc)  # poisoned, with a tail that must stay untouched
    run(x, out, n)
    ref = np_scan(x, op, 0, rev, acc)
    np.testing.assert_array_equal(out[:n], ref)
    assert (out[n:] == np.array(7).astype(acc)).all()


@pytest.mark.parametrize("op, dtype", [(o, d) for o in OPS for d in DTYPES
                                       if o != "scan_add" or d in (np.float32, np.int32)])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("n, block", [(1, 1), (5, 8), (100, 128), (1000, 1024)])
def test_scan_1d_interpreted(op, dtype, rev, n, block):
    def run(x, out, n):
        interpret(scan_1d, (1,), x, out, n, OP=op, REV=rev, BLOCK=block,
                  OTHER=identity(op, dtype))
    _check_1d(run, op, dtype, rev, n, block)


def test_scan_bool_interpreted():
    def run(x, out, n):
        interpret(scan_1d, (1,), x, out, n, OP="cumsum", REV=False, BLOCK=128, OTHER=0)
    _check_1d(run, "cumsum", np.bool_, False, 100, 128)


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "scan_max"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("m, n, bm, bn", [(13, 37, 16, 64), (64, 8, 64, 8), (1, 200, 1, 256),
                                          (300, 2, 512, 2)])
def test_scan_2d_interpreted(op, axis, rev, m, n, bm, bn):
    dtype = np.int32 if op == "cumprod" else np.float32
    x = make_input(_seed(op, axis, rev, m, n), (m, n), dtype, op)
    out = np.full((m, n), 7, dtype)
    interpret(scan_2d, (1,), x, out, m, n, OP=op, AXIS=axis, REV=rev, BM=bm, BN=bn,
              OTHER=identity(op, dtype))
    np.testing.assert_array_equal(out, np_scan(x, op, axis % 2, rev, dtype))


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("shape", [(4, 8, 16), (2, 32, 2)])
@pytest.mark.parametrize("op, dtype", [("cumsum", np.float32), ("cumprod", np.int32)])
def test_scan_3d_interpreted(axis, rev, shape, op, dtype):
    x = make_input(_seed(axis, rev, shape, op), shape, dtype, op)
    out = np.zeros(shape, dtype)
    interpret(scan_3d, (1,), x, out, OP=op, AXIS=axis, REV=rev, B0=shape[0], B1=shape[1],
              B2=shape[2])
    np.testing.assert_array_equal(out, np_scan(x, op, axis, rev, dtype))


def _affine_inputs(rng, shape, dtype):
    if dtype == np.int32:
        return (rng.integers(-5, 6, shape).astype(dtype), rng.integers(-5, 6, shape).astype(dtype))
    return (rng.choice(np.array([1, -1], dtype), shape), rng.integers(-5, 6, shape).astype(dtype))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_affine_scan_interpreted(axis, rev, dtype):
    a, b = _affine_inputs(_seed(axis, rev, str(dtype)), (8, 64), dtype)
    oa, ob = np.zeros_like(a), np.zeros_like(b)
    interpret(affine_scan, (1,), a, b, oa, ob, AXIS=axis, REV=rev, BM=8, BN=64)
    ra, rb = ref_scan((a, b), axis, rev, np_affine)
    np.testing.assert_array_equal(oa, ra)
    np.testing.assert_array_equal(ob, rb)


def test_noncommutative_reference():
    """The affine combine is not commutative: a commutative-only scan would differ."""
    rng = _seed("nc")
    a, b = _affine_inputs(rng, (1, 64), np.int32)
    ra, rb = ref_scan((a, b), 1, False, np_affine)
    sa, sb = ref_scan((a, b), 1, False, lambda l, r: np_affine(r, l))
    assert not np.array_equal(rb, sb)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
def test_matmul_scan_interpreted(axis, rev):
    m = _seed("mm", axis, rev).integers(-2, 3, (4, 4, 64)).astype(np.int32)
    out = np.zeros_like(m)
    interpret(matmul_scan, (1,), m, out, AXIS=axis, REV=rev, BM=4, BN=64)
    np.testing.assert_array_equal(out, np.stack(ref_scan(tuple(m), axis, rev, np_matmul2)))


@pytest.mark.parametrize("rev", [False, True])
def test_segmented_scan_interpreted(rev):
    rng = _seed("seg", rev)
    n = 200
    f = (rng.random(n) < 0.1).astype(np.int8)
    v = rng.integers(-5, 6, n).astype(np.float32)
    of, ov = np.full(n, -1, np.int32), np.full(n, np.nan, np.float32)
    interpret(segmented_scan, (1,), f, v, of, ov, n, REV=rev, BLOCK=256)
    rf, rv = ref_scan((f.astype(bool), v), 0, rev, np_segmented)
    np.testing.assert_array_equal(of, rf)
    np.testing.assert_array_equal(ov, rv)


def test_mixed_kernels_interpreted():
    rng = _seed("mixed")
    x = rng.integers(-5, 6, (32, 64)).astype(np.float32)
    o, e = np.zeros(32, np.float32), np.zeros_like(x)
    interpret(rowsum_cumsum, (1,), x, o, e, BM=32, BN=64)
    np.testing.assert_array_equal(o, np.cumsum(x.sum(1)))
    np.testing.assert_array_equal(e, np.cumsum(x, 1) - x)
    y = rng.integers(-5, 6, 1000).astype(np.int32)
    out = np.zeros(1000, np.int32)
    interpret(cumsum_loop, (1,), y, out, 1000, BLOCK=128)
    np.testing.assert_array_equal(out, np.cumsum(y))


@pytest.mark.parametrize("rev", [False, True])
def test_combine_through_helper(rev):
    x = _seed("helper", rev).integers(-5, 6, 256).astype(np.int32)
    ref = np_scan(x, "cumsum", 0, rev, np.int32)
    out = np.zeros_like(x)
    interpret(helper_scan, (1,), x, out, REV=rev, BLOCK=256)
    np.testing.assert_array_equal(out, ref)
    out = np.zeros_like(x)
    emulate(helper_scan, {"x_ptr": P(tl.int32), "o_ptr": P(tl.int32)}, dict(REV=rev, BLOCK=256),
            "sm_80", 4, x, out)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("mode, target, warps", [("interpreted", None, None),
                                                 ("emulated", "sm_80", 4),
                                                 ("emulated", "gfx942", 8)])
def test_compaction(mode, target, warps):
    """cumsum of a boolean mask (uint32) as store offsets."""
    x = _seed("compact", mode, target).integers(-5, 6, 1000).astype(np.int32)
    out, count = np.full(1024, -99, np.int32), np.full(1, -1, np.int32)
    if mode == "interpreted":
        interpret(compact, (1,), x, out, count, 1000, BLOCK=1024)
    else:
        emulate(compact, {"x_ptr": P(tl.int32), "o_ptr": P(tl.int32), "count_ptr": P(tl.int32),
                          "n": tl.int32}, dict(BLOCK=1024), target, warps, x, out, count, 1000)
    kept = x[x > 0]
    assert count[0] == len(kept)
    np.testing.assert_array_equal(out[:len(kept)], kept)
    assert (out[len(kept):] == -99).all()


def test_float_rounding_interpreted():
    """Random floats: the interpreter's tree order stays within rounding of numpy's."""
    x = _seed("float").standard_normal(1000).astype(np.float32)
    out = np.zeros(1000, np.float32)
    interpret(scan_1d, (1,), x, out, 1000, OP="cumsum", REV=False, BLOCK=1024, OTHER=0)
    np.testing.assert_allclose(out, np.cumsum(x.astype(np.float64)), rtol=1e-4, atol=1e-4)


# ---- emulated: compiled, then run by the SIMT emulator ------------------------------------------

def emulate(kernel, sig, consts, target, warps, *args, rewrite=None):
    emu = Emulator.from_kernel(kernel, sig, consts, target, warps, rewrite=rewrite)
    emu.run((1,), *args)
    return emu


@pytest.mark.parametrize("target", ["sm_80", "gfx942"])
@pytest.mark.parametrize("warps", [1, 4, 8])
@pytest.mark.parametrize("n, block", [(3, 4), (50, 64), (1000, 1024), (4000, 4096)])
@pytest.mark.parametrize("rev", [False, True])
def test_scan_1d_emulated(target, warps, n, block, rev):
    """Tiles smaller than the threads (copies), about one CTA tile, and several."""
    op = "cumsum" if (warps + rev + n) % 2 else "scan_max"
    sig = {"x_ptr": P(tl.int32), "o_ptr": P(tl.int32), "n": tl.int32}
    consts = dict(OP=op, REV=rev, BLOCK=block, OTHER=identity(op, np.int32), DT=None)
    _check_1d(lambda x, out, n: emulate(scan_1d, sig, consts, target, warps, x, out, n),
              op, np.int32, rev, n, block)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint8, np.int64,
                                   np.float64, np.int16, np.bool_])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("rev", [False, True])
def test_scan_dtypes_emulated(dtype, op, rev):
    acc = acc_dtype(dtype, op)
    sig = {"x_ptr": P(TL[dtype]), "o_ptr": P(TL[acc]), "n": tl.int32}
    consts = dict(OP=op, REV=rev, BLOCK=512, OTHER=identity(op, dtype), DT=None)
    _check_1d(lambda x, out, n: emulate(scan_1d, sig, consts, "sm_90a", 4, x, out, n),
              op, dtype, rev, 500, 512)


def test_scan_explicit_dtype_emulated():
    """dtype= casts the input first: fp16 summed in fp32."""
    x = np.full(512, 0.1, np.float16)
    out = np.zeros(512, np.float32)
    sig = {"x_ptr": P(tl.float16), "o_ptr": P(tl.float32), "n": tl.int32}
    emulate(scan_1d, sig, dict(OP="cumsum", REV=False, BLOCK=512, OTHER=0, DT=tl.float32),
            "sm_80", 4, x, out, 512)
    np.testing.assert_allclose(out, np.cumsum(x.astype(np.float32)), rtol=1e-5)
    assert out[-1] > 50  # an fp16 accumulator would have stalled at 32


@pytest.mark.parametrize("target, warps", [("sm_80", 1), ("sm_80", 8), ("gfx942", 4),
                                           ("sm_90a", 2)])
@pytest.mark.parametrize("m, n, bm, bn", [(13, 37, 16, 64), (64, 8, 64, 8), (300, 2, 512, 2),
                                          (1, 200, 1, 256), (50, 60, 64, 64), (2, 2, 2, 2)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
def test_scan_2d_emulated(target, warps, m, n, bm, bn, axis, rev):
    op = "cumsum" if (m + axis) % 2 else "scan_max"
    x = make_input(_seed(target, warps, m, axis, rev), (m, n), np.int32, op)
    out = np.full((m, n), 7, np.int32)
    sig = {"x_ptr": P(tl.int32), "o_ptr": P(tl.int32), "M": tl.int32, "N": tl.int32}
    emulate(scan_2d, sig, dict(OP=op, AXIS=axis, REV=rev, BM=bm, BN=bn,
                               OTHER=identity(op, np.int32), DT=None),
            target, warps, x, out, m, n)
    np.testing.assert_array_equal(out, np_scan(x, op, axis, rev, np.int32))


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("target, warps, shape", [("sm_80", 2, (4, 8, 16)),
                                                  ("gfx942", 8, (2, 32, 4)),
                                                  ("sm_90a", 4, (8, 2, 64))])
def test_scan_3d_emulated(axis, rev, target, warps, shape):
    x = make_input(_seed(axis, rev, shape), shape, np.float32, "cumsum")
    out = np.zeros(shape, np.float32)
    emulate(scan_3d, {"x_ptr": P(tl.float32), "o_ptr": P(tl.float32)},
            dict(OP="cumsum", AXIS=axis, REV=rev, B0=shape[0], B1=shape[1], B2=shape[2],
                 DT=None), target, warps, x, out)
    np.testing.assert_array_equal(out, np_scan(x, "cumsum", axis, rev, np.float32))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("target, warps, bm, bn", [("sm_80", 4, 8, 64), ("gfx942", 8, 4, 256),
                                                   ("sm_90a", 1, 32, 32),
                                                   ("sm_80", 8, 128, 4)])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_affine_scan_emulated(axis, rev, target, warps, bm, bn, dtype):
    a, b = _affine_inputs(_seed("aff", axis, rev, target, bm, str(dtype)), (bm, bn), dtype)
    oa, ob = np.zeros_like(a), np.zeros_like(b)
    sig = {k: P(TL[dtype]) for k in ("a_ptr", "b_ptr", "oa_ptr", "ob_ptr")}
    emulate(affine_scan, sig, dict(AXIS=axis, REV=rev, BM=bm, BN=bn), target, warps,
            a, b, oa, ob)
    ra, rb = ref_scan((a, b), axis, rev, np_affine)
    np.testing.assert_array_equal(oa, ra)
    np.testing.assert_array_equal(ob, rb)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("target, warps", [("sm_80", 4), ("gfx942", 2)])
def test_matmul_scan_emulated(axis, rev, target, warps):
    m = _seed("mm", axis, rev, target).integers(-2, 3, (4, 16, 32)).astype(np.int32)
    out = np.zeros_like(m)
    emulate(matmul_scan, {"m_ptr": P(tl.int32), "o_ptr": P(tl.int32)},
            dict(AXIS=axis, REV=rev, BM=16, BN=32), target, warps, m, out)
    np.testing.assert_array_equal(out, np.stack(ref_scan(tuple(m), axis, rev, np_matmul2)))


@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("target, warps, n, block", [("sm_80", 2, 200, 256),
                                                     ("gfx942", 4, 1000, 1024),
                                                     ("sm_90a", 8, 30, 32)])
def test_segmented_scan_emulated(rev, target, warps, n, block):
    rng = _seed("seg", rev, target)
    f = (rng.random(n) < 0.1).astype(np.int8)
    v = rng.integers(-5, 6, n).astype(np.float32)
    of, ov = np.full(n, -1, np.int32), np.full(n, np.nan, np.float32)
    sig = {"f_ptr": P(tl.int8), "v_ptr": P(tl.float32), "of_ptr": P(tl.int32),
           "ov_ptr": P(tl.float32), "n": tl.int32}
    emulate(segmented_scan, sig, dict(REV=rev, BLOCK=block), target, warps, f, v, of, ov, n)
    rf, rv = ref_scan((f.astype(bool), v), 0, rev, np_segmented)
    np.testing.assert_array_equal(of, rf)
    np.testing.assert_array_equal(ov, rv)


@pytest.mark.parametrize("target, warps", [("sm_80", 4), ("gfx942", 8), ("sm_90a", 1)])
def test_mixed_kernels_emulated(target, warps):
    rng = _seed("mixed", target)
    x = rng.integers(-5, 6, (32, 64)).astype(np.float32)
    o, e = np.zeros(32, np.float32), np.zeros_like(x)
    emulate(rowsum_cumsum, {"x_ptr": P(tl.float32), "o_ptr": P(tl.float32),
                            "e_ptr": P(tl.float32)}, dict(BM=32, BN=64), target, warps, x, o, e)
    np.testing.assert_array_equal(o, np.cumsum(x.sum(1)))
    np.testing.assert_array_equal(e, np.cumsum(x, 1) - x)
    y = rng.integers(-5, 6, 1000).astype(np.int32)
    out = np.zeros(1000, np.int32)
    emulate(cumsum_loop, {"x_ptr": P(tl.int32), "o_ptr": P(tl.int32), "n": tl.int32},
            dict(BLOCK=128), target, warps, y, out, 1000)
    np.testing.assert_array_equal(out, np.cumsum(y))


# ---- emulated with random layouts forced onto the kernel -------------------------------------

def _pow2_split(total, rank, rnd):
    out = [1] * rank
    while total > 1:
        out[rnd.randrange(rank)] *= 2
        total //= 2
    return tuple(out)


def _random_layout(rank, warp_size, warps, rnd):
    return Blocked(tuple(rnd.choice([1, 1, 2, 4]) for _ in range(rank)),
                   _pow2_split(warp_size, rank, rnd), _pow2_split(warps, rank, rnd),
                   tuple(rnd.sample(range(rank), rank)))


def relayout(rank, layout):
    """A rewrite of the tilegpu text putting every rank-`rank` blocked layout into `layout`
    (loads and stores then move one element at a time)."""
    arr = r"array<i32: " + ", ".join([r"-?\d+"] * rank) + ">"
    pat = re.compile(r"#tilegpu\.blocked<" + ", ".join([arr] * 4) + ">")
    new = "#tilegpu.blocked<" + ", ".join(
        "array<i32: " + ", ".join(str(x) for x in a) + ">"
        for a in (layout.size_per_thread, layout.threads_per_warp, layout.warps_per_cta,
                  layout.order)) + ">"

    def rewrite(text):
        text, k = pat.subn(new, text)
        assert k, "no layout replaced"
        return re.sub(r"tilegpu\.vector_width = \d+ : i32", "tilegpu.vector_width = 1 : i32",
                      text)
    return rewrite


@pytest.mark.parametrize("seed", range(48))
def test_scan_2d_random_layouts(seed):
    rnd = random.Random(seed)
    target = rnd.choice(["sm_80", "gfx942"])
    warps = rnd.choice([1, 2, 4, 8])
    bm, bn = rnd.choice([1, 2, 4, 16, 64]), rnd.choice([1, 2, 8, 32, 128])
    while bm * bn > 32 * warps * 32:
        bm, bn = (bm // 2, bn) if bm > bn else (bm, bn // 2)
    layout = _random_layout(2, 64 if target == "gfx942" else 32, warps, rnd)
    axis, rev = rnd.choice([0, 1]), rnd.choice([False, True])
    op = ["cumsum", "scan_max", "cumprod"][seed % 3]
    m, n = max(1, bm - rnd.choice([0, 1, 3])), max(1, bn - rnd.choice([0, 2]))
    x = make_input(np.random.default_rng(seed), (m, n), np.int32, op)
    out = np.full((m, n), 7, np.int32)
    sig = {"x_ptr": P(tl.int32), "o_ptr": P(tl.int32), "M": tl.int32, "N": tl.int32}
    emulate(scan_2d, sig, dict(OP=op, AXIS=axis, REV=rev, BM=bm, BN=bn,
                               OTHER=identity(op, np.int32), DT=None),
            target, warps, x, out, m, n, rewrite=relayout(2, layout))
    np.testing.assert_array_equal(out, np_scan(x, op, axis, rev, np.int32),
                                  err_msg=f"{target} {warps} warps {layout}")


@pytest.mark.parametrize("seed", range(24))
def test_affine_scan_random_layouts(seed):
    """The non-commutative combine through every path (lanes, warps, repetitions, copies)."""
    rnd = random.Random(1000 + seed)
    target = rnd.choice(["sm_80", "gfx942"])
    warps = rnd.choice([1, 2, 4, 8])
    bm, bn = rnd.choice([1, 4, 16, 128]), rnd.choice([1, 2, 32, 256])
    while bm * bn > 32 * warps * 32:  # at most 32 elements a thread: quick to compile
        bm, bn = (bm // 2, bn) if bm > bn else (bm, bn // 2)
    layout = _random_layout(2, 64 if target == "gfx942" else 32, warps, rnd)
    axis, rev = rnd.choice([0, 1]), rnd.choice([False, True])
    a, b = _affine_inputs(np.random.default_rng(seed), (bm, bn), np.int32)
    oa, ob = np.zeros_like(a), np.zeros_like(b)
    sig = {k: P(tl.int32) for k in ("a_ptr", "b_ptr", "oa_ptr", "ob_ptr")}
    emulate(affine_scan, sig, dict(AXIS=axis, REV=rev, BM=bm, BN=bn), target, warps,
            a, b, oa, ob, rewrite=relayout(2, layout))
    ra, rb = ref_scan((a, b), axis, rev, np_affine)
    np.testing.assert_array_equal(oa, ra, err_msg=f"{target} {warps} warps {layout}")
    np.testing.assert_array_equal(ob, rb, err_msg=f"{target} {warps} warps {layout}")


@pytest.mark.parametrize("seed", range(12))
def test_scan_3d_random_layouts(seed):
    rnd = random.Random(2000 + seed)
    target = rnd.choice(["sm_80", "gfx942"])
    warps = rnd.choice([1, 2, 4, 8])
    shape = tuple(rnd.choice([1, 2, 4, 8, 16]) for _ in range(3))
    layout = _random_layout(3, 64 if target == "gfx942" else 32, warps, rnd)
    axis, rev = rnd.choice([0, 1, 2]), rnd.choice([False, True])
    x = make_input(np.random.default_rng(seed), shape, np.float32, "cumsum")
    out = np.zeros(shape, np.float32)
    emulate(scan_3d, {"x_ptr": P(tl.float32), "o_ptr": P(tl.float32)},
            dict(OP="cumsum", AXIS=axis, REV=rev, B0=shape[0], B1=shape[1], B2=shape[2],
                 DT=None), target, warps, x, out, rewrite=relayout(3, layout))
    np.testing.assert_array_equal(out, np_scan(x, "cumsum", axis, rev, np.float32),
                                  err_msg=f"{target} {warps} warps {layout}")


def test_emulator_catches_a_missing_barrier(monkeypatch):
    """The emulator's race check is live: without the barrier between the warp totals'
    stores and loads, a race is reported."""
    from simt_emulator import EmulationError
    from tilework.lowering.to_llvm import LoweringContext
    calls = []
    orig = LoweringContext.barrier

    def barrier(self):
        calls.append(1)
        if len(calls) % 2 == 0:  # drop every second barrier (the one after the stores)
            return
        orig(self)
    monkeypatch.setattr(LoweringContext, "barrier", barrier)
    sig = {"x_ptr": P(tl.int32), "o_ptr": P(tl.int32), "n": tl.int32}
    x = np.ones(1024, np.int32)
    with pytest.raises(EmulationError, match="shared-memory race"):
        emulate(scan_1d, sig, dict(OP="cumsum", REV=False, BLOCK=1024, OTHER=0, DT=None),
                "sm_80", 4, x, np.zeros(1024, np.int32), 1024)


# ---- compile-only -----------------------------------------------------------------------------

def _compile(kernel, sig, consts, target, warps=4):
    return compile(ASTSource(kernel, sig, consts, {}), target, CompileOptions(num_warps=warps),
                   cache=False)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a", "gfx942"])
@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("warps", [1, 4, 8])
def test_scan_compiles(target, rev, warps):
    sig = {"x_ptr": P(tl.float32), "o_ptr": P(tl.float32), "M": tl.int32, "N": tl.int32}
    ck = _compile(scan_2d, sig, dict(OP="cumsum", AXIS=1, REV=rev, BM=16, BN=256, OTHER=0,
                                     DT=None), target, warps)
    assert re.search(r'"tile\.scan".*reverse = %d : i32' % int(rev), ck.asm["tile"])
    assert '"tile.scan"' in ck.asm["tilegpu"]
    llvm = ck.asm["llvm"]
    assert "combine" not in llvm  # the combine function is inlined
    if target.startswith("sm"):
        ptx = ck.asm["ptx"]
        assert ("shfl.sync.down" if rev else "shfl.sync.up") in ptx
        assert "0 bytes spill" in ck.metadata["ptxas_info"]
    else:
        assert "ds_bpermute" in ck.asm["amdgcn"]


@pytest.mark.parametrize("target", ["sm_80", "sm_90a", "gfx942"])
def test_bf16_and_tuple_scans_compile(target):
    sig = {"x_ptr": P(tl.bfloat16), "o_ptr": P(tl.float32), "n": tl.int32}
    ck = _compile(scan_1d, sig, dict(OP="cumsum", REV=False, BLOCK=256, OTHER=0, DT=None),
                  target)
    assert re.search(r'"tile\.scan".*-> tensor<256xf32>', ck.asm["tile"])
    sig = {k: P(tl.int32) for k in ("m_ptr", "o_ptr")}
    ck = _compile(matmul_scan, sig, dict(AXIS=0, REV=True, BM=64, BN=8), target, 8)
    assert ck.metadata["shared"] > 0  # warp totals go through shared memory


@pytest.mark.parametrize("src, op, dt, expect", [
    (tl.int8, "cumsum", None, tl.int32), (tl.int16, "cumsum", None, tl.int32),
    (tl.uint8, "cumsum", None, tl.uint32), (tl.int1, "cumsum", None, tl.uint32),
    (tl.bfloat16, "cumsum", None, tl.float32), (tl.float16, "cumsum", None, tl.float16),
    (tl.float16, "cumsum", tl.float32, tl.float32), (tl.int64, "cumsum", None, tl.int64),
    (tl.int8, "cumprod", None, tl.int8), (tl.bfloat16, "cumprod", None, tl.float32),
    (tl.int16, "cumprod", tl.int64, tl.int64), (tl.int1, "cumprod", None, tl.int1),
    (tl.int32, "cumsum", "fp64", tl.float64)])
@pytest.mark.parametrize("mode", ["compiled", "interpreted"])
def test_scan_dtypes(src, op, dt, expect, mode):
    @tilework.jit
    def k(x_ptr, o_ptr, OP: tl.constexpr, DT: tl.constexpr, EXPECT: tl.constexpr):
        offs = tl.arange(0, 16)
        x = tl.load(x_ptr + offs)
        if OP == "cumsum":
            y = tl.cumsum(x, 0, dtype=DT)
        else:
            y = tl.cumprod(x, 0, dtype=DT)
        tl.static_assert(y.dtype == EXPECT, "wrong scan dtype")
        tl.store(o_ptr + offs, y)
    if mode == "compiled":
        _compile(k, {"x_ptr": P(src), "o_ptr": P(expect)}, dict(OP=op, DT=dt, EXPECT=expect),
                 "sm_90a")
        return
    if src == tl.bfloat16:
        pytest.skip("numpy has no bfloat16")
    npdt = {v: k for k, v in TL.items()}
    x = np.ones(16, npdt[src])
    out = np.zeros(16, npdt[expect])
    interpret(k, (1,), x, out, OP=op, DT=dt, EXPECT=expect)
    assert out[-1] == (16 if op == "cumsum" else 1)


# ---- errors -----------------------------------------------------------------------------------

@tilework.jit
def _one(a, b, c, d):
    return a * c  # MARK-COUNT


@tilework.jit
def _to_float(a, b):
    return (a + b).to(tl.float32)  # MARK-TYPE


def _not_jit(a, b):
    return a + b


@tilework.jit
def k_errors(x_ptr, CASE: tl.constexpr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    if CASE == "scalar":
        y = tl.cumsum(tl.load(x_ptr), 0)  # MARK-scalar
    elif CASE == "axis":
        y = tl.cumsum(x, axis=1)  # MARK-axis
    elif CASE == "axis_none":
        y = tl.cumprod(x, axis=None)  # MARK-axis_none
    elif CASE == "count":
        y = tl.associative_scan((x, x), 0, _one)  # MARK-count
    elif CASE == "type":
        y = tl.associative_scan(x, 0, _to_float)  # MARK-type
    elif CASE == "not_jit":
        y = tl.associative_scan(x, 0, _not_jit)  # MARK-not_jit
    elif CASE == "shapes":
        y = tl.associative_scan((x, tl.arange(0, 32)), 0, _one)  # MARK-shapes
    elif CASE == "five":
        y = tl.associative_scan((x, x, x, x, x), 0, _one)  # MARK-five
    else:
        y = tl.cumsum(x, axis=tl.load(x_ptr))  # MARK-runtime
    tl.store(x_ptr + offs, y)


ERRORS = [
    ("scalar", "cumsum needs a tile, got a scalar"),
    ("axis", "cumsum axis 1 is out of range for a tile of rank 1"),
    ("axis_none", "cumprod needs an axis"),
    ("count", "the combine function of associative_scan returned 1 value for 2 scanned tiles"),
    ("type", "the combine function of associative_scan returned fp32 for a tile of int32"),
    ("not_jit", "associative_scan needs a @jit combine function"),
    ("shapes", "associative_scan operands have different shapes: [[16], [32]]"),
    ("five", "associative_scan takes 1 to 4 tiles, got 5"),
    ("runtime", "cumsum axis must be a constexpr, got a runtime value"),
]


def _line_of(marker):
    import inspect
    lines, start = inspect.getsourcelines(k_errors.fn)
    for i, text in enumerate(lines):
        if marker in text:
            return start + i
    raise AssertionError(marker)


@pytest.mark.parametrize("case, message", ERRORS)
def test_scan_errors_compiled(case, message):
    with pytest.raises(CompilationError) as ei:
        _compile(k_errors, {"x_ptr": P(tl.int32)}, {"CASE": case}, "sm_90a")
    e = ei.value
    assert message in e.message, e.message
    assert os.path.abspath(e.filename) == THIS
    if case not in ("count", "type"):  # those point into the combine function or the call
        assert e.lineno == _line_of(f"# MARK-{case}"), str(e)
    assert "Traceback" not in str(e) and "MLIR" not in str(e)


@pytest.mark.parametrize("case, message", [c for c in ERRORS if c[0] != "not_jit"])
def test_scan_errors_interpreted(case, message):
    x = np.zeros(16, np.int32)
    with pytest.raises(Exception, match=re.escape(message)):
        interpret(k_errors, (1,), x, CASE=case)
