"""tl.softmax as Triton 3.6's (`x - max(x, dim)`, `exp`, `sum`, `fdiv`; dim 0 by default;
fp16/bf16 computed and returned in fp32): interpreted against numpy, its dtypes and tile IR,
and compiled for sm_80/sm_90a/gfx942."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile

from dot_kernels import softmax_2d, softmax_rows

TARGETS = ["sm_80", "sm_90a", "gfx942"]
interpreted = tilework.jit(interpret=True)


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def _softmax(x, axis):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("n_cols, block", [(1000, 1024), (77, 128), (1, 2), (16, 16)])
@pytest.mark.parametrize("ieee", [False, True])
def test_softmax_rows_interpreted(n_cols, block, ieee, rng):
    x = (rng.standard_normal((5, n_cols)) * 4).astype(np.float32)
    y = np.full_like(x, np.nan)
    interpreted(softmax_rows.fn)[(5,)](x, y, n_cols, n_cols, BLOCK=block, IEEE=ieee)
    np.testing.assert_allclose(y, _softmax(x, 1), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dim, keep, axis", [("default", False, 0), (0, False, 0), (0, True, 0),
                                             (1, True, 1), (-1, True, 1)])
def test_softmax_2d_interpreted(dim, keep, axis, rng):
    x = rng.standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    interpreted(softmax_2d.fn)[(1,)](x, y, M=16, N=32, DIM=dim, KEEP=keep)
    np.testing.assert_allclose(y, _softmax(x, axis), rtol=1e-6, atol=1e-7)


def test_softmax_dim1_without_keep_dims_broadcasts_as_triton():
    """As in Triton, `x - max(x, 1)` without keep_dims broadcasts the [M] maxima along the
    last axis, which only fits when M == N (and then is not a row softmax): [16, 32] fails."""
    x = np.zeros((16, 32), np.float32)
    with pytest.raises(Exception, match="shape mismatch"):
        interpreted(softmax_2d.fn)[(1,)](x, x.copy(), M=16, N=32, DIM=1, KEEP=False)


@tilework.jit
def _softmax_dtype(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    y = tl.softmax(tl.load(x_ptr + offs))
    tl.static_assert(y.dtype == tl.float32 or y.dtype == tl.float64)
    tl.store(y_ptr + offs, y)


@pytest.mark.parametrize("din, dout", [(tl.float16, "f32"), (tl.bfloat16, "f32"),
                                       (tl.float32, "f32"), (tl.float64, "f64")])
def test_softmax_dtypes(din, dout):
    """Triton's max reduces fp16/bf16 in fp32, so the whole softmax is fp32 for them."""
    ck = compile(ASTSource(_softmax_dtype, {"x_ptr": tl.pointer_type(din),
                                           "y_ptr": tl.pointer_type(tl.float32)}, {"N": 64}, {}),
                 "sm_90a", cache=False)
    tile = ck.asm["tile"]
    assert "tile.reduce" in tile and "math.exp" in tile
    assert re.search(rf"arith\.divf .*tensor<64x{dout}>", tile)


def test_softmax_rejects_ints():
    with pytest.raises(CompilationError, match=re.escape(
            "tl.exp: Expected dtype ['fp32', 'fp64'] but got int32")):
        compile(ASTSource(_softmax_dtype, {"x_ptr": tl.pointer_type(tl.int32),
                                           "y_ptr": tl.pointer_type(tl.float32)}, {"N": 64},
                          {}), "sm_90a", cache=False)


def test_softmax_fp16_interpreted(rng):
    x = rng.standard_normal(64).astype(np.float16)
    y = np.zeros(64, np.float32)
    interpreted(_softmax_dtype.fn)[(1,)](x, y, N=64)
    np.testing.assert_allclose(y, _softmax(x, 0), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("target", TARGETS)
def test_softmax_compiles(target):
    ck = compile(ASTSource(softmax_rows, {"x_ptr": tl.pointer_type(tl.float32),
                                          "y_ptr": tl.pointer_type(tl.float32),
                                          "n_cols": tl.int32, "stride": tl.int32},
                           {"BLOCK": 1024, "IEEE": False}, {}), target, cache=False)
    assert "tile.reduce" in ck.asm["tile"]
    ck = compile(ASTSource(softmax_2d, {"x_ptr": tl.pointer_type(tl.float32),
                                        "y_ptr": tl.pointer_type(tl.float32)},
                           {"M": 16, "N": 32, "DIM": 1, "KEEP": True}, {}), target, cache=False)
    assert "#tilegpu.slice" in ck.asm["tilegpu"]
