"""tl.join, tl.split, tl.interleave, tl.cat (and tl.ravel) as Triton 3.6's: interpreted against
numpy, compiled for sm_80/sm_90a/gfx942, the compiled code run on the CPU simulator of
gpu_sim.py, the layouts (join/split relabel registers, no shared memory), and the rejections."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError, CompileOptions
from tilework.compiler.driver import ASTSource, compile

import gpu_sim
from shape_join_kernels import (cat_kernel, interleave_kernel, join_kernel, join_split_roundtrip,
                                scalar_join_split, split_kernel)

TARGETS = ["sm_80", "sm_90a", "gfx942"]
interpreted = tilework.jit(interpret=True)
F32 = tl.pointer_type(tl.float32)


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def test_exported():
    for name in ("join", "split", "interleave", "cat", "ravel", "dot", "softmax"):
        assert callable(getattr(tl, name)) and getattr(tl, name).__doc__, name


# ---- one runner for the three ways of executing a kernel ------------------------------------

SHAPES = [(8, 16), (1, 4), (32, 64), (2, 1)]


def _run(how, kernel, sig, const, args, grid=(1,), warps=4):
    if how == "interpreter":
        interpreted(kernel.fn)[grid](*args, **const)
    else:
        ck = compile(ASTSource(kernel, sig, const, {}), "sm_80",
                     CompileOptions(num_warps=warps), cache=False)
        gpu_sim.run(ck, grid, *args)


HOW = ["interpreter", "simulated"]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("m, n", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_join(how, m, n, dtype, rng):
    a = (rng.standard_normal((m, n)) * 100).astype(dtype)
    b = (rng.standard_normal((m, n)) * 100).astype(dtype)
    out = np.zeros((m, n, 2), dtype)
    P = tl.pointer_type(tl.float32 if dtype == np.float32 else tl.int16)
    _run(how, join_kernel, dict(a_ptr=P, b_ptr=P, out_ptr=P), dict(M=m, N=n), (a, b, out))
    np.testing.assert_array_equal(out, np.stack([a, b], -1))


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("m, n", SHAPES)
def test_split(how, m, n, rng):
    x = rng.standard_normal((m, n, 2)).astype(np.float32)
    lo, hi = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    _run(how, split_kernel, dict(x_ptr=F32, lo_ptr=F32, hi_ptr=F32), dict(M=m, N=n, SCALE=3.0),
         (x, lo, hi))
    np.testing.assert_array_equal(lo, x[..., 0] * 3)
    np.testing.assert_array_equal(hi, x[..., 1] * 3)


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("n, warps", [(256, 4), (4, 4), (1024, 8), (2, 1)])
def test_join_split_roundtrip(how, n, warps, rng):
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    lo, hi = np.zeros(n, np.float32), np.zeros(n, np.float32)
    _run(how, join_split_roundtrip, dict(a_ptr=F32, b_ptr=F32, lo_ptr=F32, hi_ptr=F32),
         dict(N=n), (a, b, lo, hi), warps=warps)
    np.testing.assert_array_equal(lo, a + 1)
    np.testing.assert_array_equal(hi, b * 2)


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("m, n", SHAPES)
def test_interleave(how, m, n, rng):
    a, b = rng.standard_normal((m, n)).astype(np.float32), rng.standard_normal((m, n)).astype(
        np.float32)
    out = np.zeros((m, 2 * n), np.float32)
    _run(how, interleave_kernel, dict(a_ptr=F32, b_ptr=F32, out_ptr=F32), dict(M=m, N=n),
         (a, b, out))
    np.testing.assert_array_equal(out, np.stack([a, b], -1).reshape(m, 2 * n))


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("n, warps", [(16, 4), (64, 4), (1024, 4), (4096, 8), (1, 1)])
def test_cat(how, n, warps, rng):
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out, s = np.zeros(2 * n, np.float32), np.zeros(1, np.float32)
    _run(how, cat_kernel, dict(a_ptr=F32, b_ptr=F32, out_ptr=F32, sum_ptr=F32), dict(N=n),
         (a, b, out, s), warps=warps)
    np.testing.assert_array_equal(out, np.concatenate([a, b]))  # (the order is kept here)
    both = np.concatenate([a, b])
    # an fp32 sum in tree order: its error grows with the sum of magnitudes, not the sum
    np.testing.assert_allclose(s[0], both.astype(np.float64).sum(), rtol=0,
                               atol=4e-7 * np.log2(both.size) * np.abs(both).sum())


@pytest.mark.parametrize("how", HOW)
def test_scalars(how):
    """join of scalars gives [2]; split of [2] gives scalars; interleave of scalars is join."""
    x, out = np.array([1.5, 2.5], np.float32), np.zeros(6, np.float32)
    _run(how, scalar_join_split, dict(x_ptr=F32, out_ptr=F32), {}, (x, out))
    np.testing.assert_array_equal(out, [1.5, 7.5, 7.5, 1.5, 1.5, 2.5])


# ---- compilation and layouts ----------------------------------------------------------------

CASES = [
    (join_kernel, dict(a_ptr=F32, b_ptr=F32, out_ptr=F32), dict(M=8, N=16)),
    (split_kernel, dict(x_ptr=F32, lo_ptr=F32, hi_ptr=F32), dict(M=8, N=16, SCALE=2.0)),
    (join_split_roundtrip, dict(a_ptr=F32, b_ptr=F32, lo_ptr=F32, hi_ptr=F32), dict(N=256)),
    (interleave_kernel, dict(a_ptr=F32, b_ptr=F32, out_ptr=F32), dict(M=8, N=16)),
    (cat_kernel, dict(a_ptr=F32, b_ptr=F32, out_ptr=F32, sum_ptr=F32), dict(N=64)),
    (cat_kernel, dict(a_ptr=F32, b_ptr=F32, out_ptr=F32, sum_ptr=F32), dict(N=1024)),
    (scalar_join_split, dict(x_ptr=F32, out_ptr=F32), {}),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kernel, sig, const", CASES, ids=[
    f"{k.fn.__name__}-{'-'.join(map(str, c.values()))}" for k, _, c in CASES])
def test_compiles(target, kernel, sig, const):
    ck = compile(ASTSource(kernel, sig, const, {}), target, cache=False)
    name = kernel.fn.__name__
    for op in ("join", "split", "cat"):
        if op in name:
            assert f'"tile.{op}"' in ck.asm["tile"]


def _layouts(text, op):
    return [ln for ln in text.splitlines() if f'"tile.{op}"' in ln]


def test_join_and_split_relabel_registers():
    """join's result keeps the operand's layout plus a last dimension of 2 held by each
    thread, split undoes it: no conversion, no shared memory."""
    ck = compile(ASTSource(join_split_roundtrip, dict(a_ptr=F32, b_ptr=F32, lo_ptr=F32,
                                                      hi_ptr=F32), dict(N=256), {}),
                 "sm_90a", cache=False)
    text = ck.asm["tilegpu"]
    (join,) = _layouts(text, "join")
    assert "tensor<256x2xf32, #tilegpu.blocked<array<i32: 2, 2>, array<i32: 32, 1>, " \
           "array<i32: 4, 1>, array<i32: 1, 0>>>" in join.split("->")[-1], join
    assert "tilegpu.convert_layout" not in text
    assert ck.metadata["shared"] == 0


def test_cat_of_whole_cta_tiles_is_register_concatenation():
    ck = compile(ASTSource(cat_kernel, CASES[5][1], dict(N=1024), {}), "sm_90a", cache=False)
    (cat,) = _layouts(ck.asm["tilegpu"], "cat")
    lay = re.findall(r"#tilegpu\.blocked<(?:array<[^>]*>,?\s*)+>", cat)
    assert len(lay) == 3 and len(set(lay)) == 1, cat  # operands and result in one layout
    # only the sum's cross-warp partials use shared memory
    assert ck.metadata["shared"] <= 16


# ---- rejections (Triton's rules) -------------------------------------------------------------

@tilework.jit
def _bad(x_ptr, WHAT: tl.constexpr):
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs)
    if WHAT == "cat_no_reorder":
        tl.store(x_ptr + tl.arange(0, 16), tl.cat(x, x))
    if WHAT == "cat_2d":
        y = x[:, None]
        tl.cat(y, y, can_reorder=True)
    if WHAT == "cat_shapes":
        tl.cat(x, tl.arange(0, 16).to(tl.float32), can_reorder=True)
    if WHAT == "split_last":
        tl.split(x)
    if WHAT == "split_scalar":
        tl.split(tl.load(x_ptr))
    if WHAT == "join_dtypes":
        tl.join(x, offs)
    if WHAT == "join_shapes":
        tl.join(x, tl.arange(0, 16).to(tl.float32))


@pytest.mark.parametrize("what, message", [
    ("cat_no_reorder", "current implementation of `cat` always may reorder elements"),
    ("cat_2d", "cat takes two 1-D tiles of one shape, got [8, 1] and [8, 1]"),
    ("cat_shapes", "cat takes two 1-D tiles of one shape, got [8] and [16]"),
    ("split_last", "split needs a tile whose last dimension is 2, got shape [8]"),
    ("split_scalar", "split needs a tile whose last dimension is 2, got shape []"),
    ("join_dtypes", "join operands must have the same dtype, got fp32 and int32"),
    ("join_shapes", "shape mismatch between operands: [8] and [16] in join"),
])
def test_rejections(what, message):
    with pytest.raises(CompilationError, match=re.escape(message)):
        compile(ASTSource(_bad, {"x_ptr": F32}, {"WHAT": what}, {}), "sm_90a", cache=False)


def test_member_functions_and_ravel_can_reorder(rng):
    @tilework.jit(interpret=True)
    def k(x_ptr, lo_ptr, hi_ptr, r_ptr):
        x = tl.load(x_ptr + tl.arange(0, 8)[:, None] * 2 + tl.arange(0, 2)[None, :])
        lo, hi = x.split()
        tl.store(lo_ptr + tl.arange(0, 8), lo)
        tl.store(hi_ptr + tl.arange(0, 8), hi)
        tl.store(r_ptr + tl.arange(0, 16), tl.ravel(x, can_reorder=True))

    x = rng.standard_normal((8, 2)).astype(np.float32)
    lo, hi, r = np.zeros(8, np.float32), np.zeros(8, np.float32), np.zeros(16, np.float32)
    k[(1,)](x, lo, hi, r)
    np.testing.assert_array_equal(lo, x[:, 0])
    np.testing.assert_array_equal(hi, x[:, 1])
    np.testing.assert_array_equal(r, x.reshape(-1))


@interpreted
def _shape_varargs(x_ptr, o_ptr, p_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(o_ptr + tl.arange(0, 16), tl.ravel(x.reshape(2, 4).broadcast_to(2, 2, 4)))
    y = tl.broadcast_to(tl.view(x, 1, 8), 2, 8)
    tl.store(p_ptr + tl.arange(0, 16), tl.ravel(y))


def test_shape_as_dimensions_one_by_one(rng):
    """reshape/view/broadcast_to take the shape as one tuple or dimension by dimension, as
    Triton's (`x.reshape(2, 4)`)."""
    x = rng.standard_normal(8).astype(np.float32)
    o, p = np.full(16, np.nan, np.float32), np.full(16, np.nan, np.float32)
    _shape_varargs[(1,)](x, o, p)
    np.testing.assert_array_equal(o, np.broadcast_to(x.reshape(2, 4), (2, 2, 4)).ravel())
    np.testing.assert_array_equal(p, np.broadcast_to(x, (2, 8)).ravel())
