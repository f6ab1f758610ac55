"""Issue 3's error list in one place: each error a kernel can make is rejected with its message
at its line (and column, with the source line and a caret), compiled ahead of time; the ones
the interpreter also raises are checked there too (message, and the kernel's line in the
traceback).  Some of these are also covered by the family test files; this file is the
checklist."""
import os
import traceback

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile
from located import assert_located, line_of

THIS = os.path.abspath(__file__)
F32, I32 = tl.pointer_type(tl.float32), tl.pointer_type(tl.int32)
SIG = {"x": F32, "n": tl.int32}


# ---- one kernel per error, the offending line marked `# ERR` ------------------------------------

@tilework.jit
def e_shape_binary(x, n):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    c = a * b  # ERR


@tilework.jit
def e_shape_where(x, n):
    v = tl.where(tl.arange(0, 16) < n, tl.arange(0, 32), 0)  # ERR


@tilework.jit
def e_shape_dot(x, n):
    a = tl.load(x + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    b = tl.load(x + tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :])
    c = tl.dot(a, b)  # ERR


@tilework.jit
def e_shape_dot_acc(x, n):
    a = tl.load(x + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    c = tl.dot(a, a, tl.zeros([16, 32], tl.float32))  # ERR


@tilework.jit
def e_dtype_bitwise(x, n):
    v = tl.load(x + tl.arange(0, 16))
    w = v ^ v  # ERR


@tilework.jit
def e_dtype_math(x, n):
    i = tl.arange(0, 16)
    w = tl.exp(i)  # ERR


@tilework.jit
def e_dtype_dot(x, n):
    a = tl.load(x + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    c = tl.dot(a, a.to(tl.float16))  # ERR


@tilework.jit
def e_dtype_shift(x, n):
    v = tl.load(x + tl.arange(0, 16))
    w = v << 1  # ERR


@tilework.jit
def e_not_tile_load(x, n):
    v = tl.load("x")  # ERR


@tilework.jit
def e_not_tile_binary(x, n):
    v = tl.arange(0, 16) + tl.float32  # ERR


@tilework.jit
def e_not_tile_reduce(x, n):
    s = tl.sum(n, axis=0)  # ERR


@tilework.jit
def e_undefined(x, n):
    y = undefined_anywhere * 2  # ERR  # noqa: F821


@tilework.jit
def e_carried_dtype(x, n):
    v = tl.zeros([16], tl.float32)
    for i in range(n):
        v = v.to(tl.int32)  # ERR


@tilework.jit
def e_carried_shape(x, n):
    v = tl.zeros([16], tl.float32)
    while n > 0:
        v = tl.zeros([32], tl.float32)  # ERR


@tilework.jit
def e_builtin(x, n):
    y = sorted(n)  # ERR


@tilework.jit
def e_builtin_call(x, n):
    y = abs(tl.arange(0, 16))  # ERR


@tilework.jit
def e_kwarg_load(x, n):
    v = tl.load(x + tl.arange(0, 16), msk=tl.arange(0, 16) < n)  # ERR


@tilework.jit
def e_kwarg_sum(x, n):
    s = tl.sum(tl.arange(0, 16), axes=0)  # ERR


@tilework.jit
def e_kwarg_method(x, n):
    v = tl.arange(0, 16).to(tl.float32, bitcst=True)  # ERR


@tilework.jit
def e_constexpr_arange(x, n):
    r = tl.arange(0, n)  # ERR


@tilework.jit
def e_constexpr_shape(x, n):
    z = tl.zeros([n], tl.float32)  # ERR


@tilework.jit
def e_constexpr_static_assert(x, n):
    tl.static_assert(n > 0)  # ERR


@tilework.jit
def e_constexpr_static_range(x, n):
    for i in tl.static_range(n):  # ERR
        pass


@tilework.jit
def e_constexpr_axis(x, n):
    s = tl.sum(tl.arange(0, 16), axis=n)  # ERR


@tilework.jit
def e_constexpr_value(x, n, B: tl.constexpr):
    r = tl.arange(0, B)  # ERR


@tilework.jit
def e_constexpr_changes_in_loop(x, n):
    dt = tl.float32
    for i in range(n):
        dt = tl.float16  # ERR


@tilework.jit
def _needs_constexpr(v, N: tl.constexpr):
    return v + tl.arange(0, N)


@tilework.jit
def e_constexpr_param(x, n):
    y = _needs_constexpr(1, n)  # ERR


COMPILE_ERRORS = [
    # shape mismatch in binary ops and dot
    (e_shape_binary, "shape mismatch between operands: [16] and [32] in `*`"),
    (e_shape_where, "shape mismatch between where operands: [16] and [32]"),
    (e_shape_dot, "First input shape ([16, 16]) and second input shape [32, 16] are not "
                  "compatible for matmul"),
    (e_shape_dot_acc, "dot accumulator must have shape [16, 16] and the dtype out_dtype=fp32, "
                      "got shape [16, 32]"),
    # dtype errors
    (e_dtype_bitwise, "`^` is not defined for fp32 and fp32"),
    (e_dtype_math, "tl.exp: Expected dtype ['fp32', 'fp64'] but got int32"),
    (e_dtype_dot, "Both operands must be same dtype. Got fp32 and fp16"),
    (e_dtype_shift, "`<<` is not defined for fp32 and fp32"),
    # a non-tensor where a tile is needed
    (e_not_tile_load, "expected a tile or a number, got 'x'"),
    (e_not_tile_binary, "expected a tile or a number, got dtype"),
    (e_not_tile_reduce, "sum needs a tile, got a scalar"),
    # undefined name, unsupported builtins
    (e_undefined, "undefined_anywhere is not defined"),
    (e_builtin, "unsupported builtin `sorted` in a kernel"),
    (e_builtin_call, "unsupported call to `abs` with tile arguments"),
    # loop-carried type change
    (e_carried_dtype, "loop-carried value `v` changes type from fp32[16] to int32[16]"),
    (e_carried_shape, "loop-carried value `v` changes type from fp32[16] to fp32[32]"),
    # wrong keyword arguments
    (e_kwarg_load, "tl.load: got an unexpected keyword argument 'msk'"),
    (e_kwarg_sum, "tl.sum: got an unexpected keyword argument 'axes'"),
    (e_kwarg_method, "tl.cast: got an unexpected keyword argument 'bitcst'"),
    # a runtime value where a constexpr is needed (constexpr mismatch)
    (e_constexpr_arange, "arange end must be a constexpr, got a runtime value"),
    (e_constexpr_shape, "shape must be a constexpr, got a runtime value"),
    (e_constexpr_static_assert, "static_assert condition must be a constexpr, got a runtime value"),
    (e_constexpr_static_range, "tl.static_range bounds must be constexpr ints"),
    (e_constexpr_axis, "axis must be a constexpr, got a runtime value"),
    (e_constexpr_changes_in_loop, "`dt` holds a compile-time value (the constexpr fp32) that "
                                  "cannot change in a runtime loop"),
]


def _compile(fn, constants=None):
    return compile(ASTSource(fn, SIG, constants or {}, {}), "sm_90a", cache=False)


def expect_located(fn, message, constants=None):
    with pytest.raises(CompilationError) as ei:
        _compile(fn, constants)
    e = ei.value
    line = line_of(fn, "# ERR")
    assert_located(e, message, THIS, line)
    text = str(e)
    assert f"{os.path.basename(THIS)}:{line}:" in text and "^" in text  # line and caret
    return e


@pytest.mark.parametrize("fn, message", COMPILE_ERRORS, ids=[f.__name__ for f, _ in COMPILE_ERRORS])
def test_compile_error(fn, message):
    expect_located(fn, message)


def test_constexpr_value_of_the_wrong_kind():
    """A constexpr parameter given a value the op cannot take (a float arange bound)."""
    expect_located(e_constexpr_value, "arange bounds must be constexpr ints", {"B": 16.5})


def test_runtime_value_for_a_constexpr_parameter_is_rejected_at_the_call():
    with pytest.raises(CompilationError) as ei:
        _compile(e_constexpr_param)
    e = ei.value
    assert e.lineno == line_of(e_constexpr_param, "# ERR"), (e.lineno, e.message)
    assert ("_needs_constexpr(): `N` is a tl.constexpr parameter, got a runtime value of type "
            "int32") in e.message


# ---- the same mistakes in the interpreter: the message, and the kernel's line in the traceback

INTERPRETED_ERRORS = [
    (e_shape_binary, "shape mismatch between operands: [16] and [32] in `*`"),
    (e_shape_dot, "First input shape ([16, 16]) and second input shape [32, 16] are not "
                  "compatible for matmul"),
    (e_dtype_bitwise, "`^` is not defined for fp32 and fp32"),
    (e_dtype_math, "tl.exp: Expected dtype ['fp32', 'fp64'] but got int32"),
    (e_dtype_dot, "Both operands must be same dtype. Got fp32 and fp16"),
    (e_not_tile_load, "expected a tile or a number, got 'x'"),
    (e_kwarg_load, "unexpected keyword argument 'msk'"),
    (e_kwarg_sum, "unexpected keyword argument 'axes'"),
]


@pytest.mark.parametrize("fn, message", INTERPRETED_ERRORS,
                         ids=[f.__name__ for f, _ in INTERPRETED_ERRORS])
def test_interpreted_error(fn, message):
    x = np.zeros(512, np.float32)
    with pytest.raises(Exception) as ei:
        tilework.jit(fn.fn, interpret=True)[(1,)](x, 4)
    assert message in str(ei.value), str(ei.value)
    frames = [f for f in traceback.extract_tb(ei.value.__traceback__)
              if os.path.abspath(f.filename) == THIS and f.name == fn.__name__]
    assert frames and frames[-1].lineno == line_of(fn, "# ERR"), frames
