"""Forms of Triton's test_frontend.py beyond aggregates (test_conform_aggregates.py): a @jit
function calling itself while the recursion ends at compile time (Triton's specialized
recursion; inlined here), and the refusal of one that does not end.  Values against numpy
interpreted and compiled (sm_90a and gfx942 by the SIMT emulator)."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from simt_emulator import Emulator
from located import line_of

TARGETS = ["sm_90a", "gfx942"]
P = tl.pointer_type


@tilework.jit
def pairwise_sum(x):
    # halves the tile each level: ends on its (compile-time) shape
    if x.shape[0] == 1:
        return x
    else:
        x0, x1 = x.reshape((x.shape[0] // 2, 2)).split()
        return pairwise_sum(x0) + pairwise_sum(x1)


@tilework.jit
def power(v, K: tl.constexpr):
    if K == 0:
        return v * 0 + 1
    return v * power(v, K - 1)  # ends on a constexpr


def k_recursion(x, out, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.store(out, tl.sum(pairwise_sum(v), 0))
    tl.store(out + 1 + tl.arange(0, N), power(v, 3))


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_recursion_that_ends_at_compile_time(where):
    x = np.random.default_rng(3).standard_normal(16).astype(np.float32)
    out = np.zeros(17, np.float32)
    if where == "interpreter":
        tilework.jit(k_recursion, interpret=True)[(1,)](x, out, N=16)
    else:
        Emulator.from_kernel(tilework.jit(k_recursion), {"x": P(tl.float32),
                             "out": P(tl.float32)}, {"N": 16}, where, 4).run((1,), x, out)
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[1:], x ** 3, rtol=1e-5)


@tilework.jit
def countdown(v, n):
    if n > 0:  # a runtime condition: the inlined recursion never ends
        v = countdown(v + 1, n - 1)  # ERR
    return v


def k_endless(out, n):
    tl.store(out, countdown(0, n))


def test_recursion_that_does_not_end_is_refused():
    msg = ("recursion does not end at compile time: countdown() calls itself more than 16 "
           "levels deep (a recursive @jit function must stop on constexpr values or shapes)")
    with pytest.raises(tilework.CompilationError) as ei:
        compile(ASTSource(tilework.jit(k_endless), {"out": P(tl.int32), "n": tl.int32}, {}, {}),
                "sm_90a", cache=False)
    assert ei.value.message == msg and ei.value.lineno == line_of(countdown)
    # interpreted, Python runs the recursion on the runtime `n` and it ends (as in Triton's
    # interpreter); one that never ends: test_interp_parity.py's k_recursive, the same words
    out = np.zeros(1, np.int32)
    tilework.jit(k_endless, interpret=True)[(1,)](out, 3)
    assert out[0] == 3


def k_min_max(x, out, N: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    lo: tl.constexpr = min(1, 2, -3)
    hi: tl.constexpr = max((3, 4, 5))
    tl.static_assert(lo == -3 and hi == 5)
    tl.store(out + r, min(v, 0.5, v * 2) + max(v, lo) * hi)  # runtime: elementwise


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_builtin_min_max(where):
    x = np.random.default_rng(4).standard_normal(8).astype(np.float32)
    out = np.zeros(8, np.float32)
    if where == "interpreter":  # (the interpreter took Python's min of tiles: an error)
        tilework.jit(k_min_max, interpret=True)[(1,)](x, out, N=8)
    else:
        Emulator.from_kernel(tilework.jit(k_min_max), {"x": P(tl.float32),
                             "out": P(tl.float32)}, {"N": 8}, where, 4).run((1,), x, out)
    ref = np.minimum(np.minimum(x, 0.5), x * 2) + np.maximum(x, -3) * 5
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def k_min_nan(x, A: tl.constexpr):
    m: tl.constexpr = min(1.0, A)  # ERR


def k_max_nan(x, A: tl.constexpr):
    m: tl.constexpr = max(1.0, A)  # ERR


@pytest.mark.parametrize("kernel", [k_min_nan, k_max_nan])
@pytest.mark.parametrize("value", [float("nan"), -0.0])
def test_min_max_of_nan_or_negative_zero_refused(kernel, value):
    name = kernel.__name__[2:5]
    msg = (f"{name}() of compile-time values takes no NaN or -0.0 (as Triton: their order is "
           f"not defined), got {value}")
    with pytest.raises(tilework.CompilationError) as ei:
        compile(ASTSource(tilework.jit(kernel), {"x": P(tl.float32)}, {"A": value}, {}),
                "sm_90a", cache=False)
    assert ei.value.message == msg and ei.value.lineno == line_of(kernel)
    with pytest.raises(TypeError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        tilework.jit(kernel, interpret=True)[(1,)](np.zeros(1, np.float32), A=value)
