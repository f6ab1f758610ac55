"""Reductions and shape ops: interpreted against numpy, and compiled for sm_80/sm_90a/gfx942."""
import numpy as np
import pytest

import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from reduction_kernels import custom_reduce, reduce_2d, reduce_all, shapes_kernel

rng = np.random.default_rng()
OPS = ["sum", "max", "min", "argmax", "argmin", "xor_sum"]


def _ref(x, op, axis):
    if op == "xor_sum":
        return np.bitwise_xor.reduce(x, axis=axis)
    return getattr(np, op)(x, axis=axis)


def _input(dtype, m, n):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, size=(m, n)).astype(dtype)
    return rng.standard_normal((m, n)).astype(dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("m, n, bm, bn", [(4, 64, 4, 64), (13, 37, 16, 64), (64, 8, 64, 8)])
def test_reduce_2d_interpreted(op, axis, m, n, bm, bn):
    dtype = np.int32 if op == "xor_sum" else np.float32
    x = _input(dtype, m, n)
    out_n = n if axis == 0 else m
    out = np.full(out_n, -7, np.int32 if op.startswith("arg") or op == "xor_sum" else dtype)
    reduce_2d.interpret = True
    try:
        reduce_2d[(1,)](x, out, m, n, n, OP=op, AXIS=axis, BM=bm, BN=bn)
    finally:
        reduce_2d.interpret = False
    # the kernel pads with 0 outside the valid region: compare on a padded reference
    pad = np.zeros((bm, bn), dtype)
    pad[:m, :n] = x
    ref = _ref(pad, op, axis)[:out_n]
    if op == "sum":
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a", "gfx942"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("bm, bn, warps", [(4, 64, 4), (64, 8, 4), (128, 128, 8), (1, 256, 2)])
def test_reduce_2d_compiles(target, op, axis, bm, bn, warps):
    dt = tl.int32 if op == "xor_sum" else tl.float32
    out_dt = tl.int32 if op.startswith("arg") or op == "xor_sum" else dt
    sig = {"x_ptr": tl.pointer_type(dt), "out_ptr": tl.pointer_type(out_dt), "M": tl.int32,
           "N": tl.int32, "stride": tl.int32}
    from tilework import CompileOptions
    ck = compile(ASTSource(reduce_2d, sig, {"OP": op, "AXIS": axis, "BM": bm, "BN": bn}, {}),
                 target, CompileOptions(num_warps=warps), cache=False)
    asm = ck.asm.get("ptx") or ck.asm["amdgcn"]
    assert "reduce_2d" in asm
    assert "tile.reduce" in ck.asm["tile"]
    assert "#tilegpu.slice" in ck.asm["tilegpu"]
    if target.startswith("sm") and bm * bn // (warps * 32) <= 16:
        # tiles of realistic size per thread stay in registers (huge ones may spill)
        assert "0 bytes spill" in ck.metadata["ptxas_info"]


def test_reduce_1d_to_scalar_interpreted():
    x = rng.standard_normal(1000).astype(np.float32)
    out = np.full(2, np.nan, np.float32)
    reduce_all.interpret = True
    try:
        reduce_all[(1,)](x, out, 1000, BLOCK=1024)
    finally:
        reduce_all.interpret = False
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-5, atol=1e-4)
    assert out[1] == x.max()


def test_custom_combine_interpreted():
    x = rng.standard_normal((8, 32)).astype(np.float32)
    x[3, 5] = x[3, 20] = 100.0  # a tie: the first index wins
    v = np.full(8, np.nan, np.float32)
    i = np.full(8, -1, np.int32)
    custom_reduce.interpret = True
    try:
        custom_reduce[(1,)](x, v, i, BM=8, BN=32)
    finally:
        custom_reduce.interpret = False
    np.testing.assert_array_equal(v, x.max(1))
    np.testing.assert_array_equal(i, x.argmax(1))


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
def test_custom_combine_compiles(target):
    sig = {"x_ptr": tl.pointer_type(tl.float32), "val_ptr": tl.pointer_type(tl.float32),
           "idx_ptr": tl.pointer_type(tl.int32)}
    ck = compile(ASTSource(custom_reduce, sig, {"BM": 8, "BN": 32}, {}), target, cache=False)
    assert "_pair_max" not in ck.asm["llvm"]  # inlined


@pytest.mark.parametrize("bm, bn", [(8, 32), (32, 8), (16, 16)])
def test_shape_ops_interpreted(bm, bn):
    x = rng.standard_normal((bm, bn)).astype(np.float32)
    out = np.full(bm * bn, np.nan, np.float32)
    shapes_kernel.interpret = True
    try:
        shapes_kernel[(1,)](x, out, BM=bm, BN=bn)
    finally:
        shapes_kernel.interpret = False
    ref = (x.T + x.sum(0)[:, None]).reshape(-1)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a", "gfx942"])
def test_shape_ops_compile(target):
    sig = {"x_ptr": tl.pointer_type(tl.float32), "out_ptr": tl.pointer_type(tl.float32)}
    ck = compile(ASTSource(shapes_kernel, sig, {"BM": 16, "BN": 32}, {}), target, cache=False)
    assert "tilegpu.convert_layout" in ck.asm["tilegpu"] or "tile.reshape" in ck.asm["tilegpu"]
    assert ck.metadata["shared"] > 0
