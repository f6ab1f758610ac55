"""What Triton's test_conversions.py (run in the interpreter by benchmarks/tools/triton_tests.py)
found: a helper's `else: raise ValueError(...)` after constexpr tests (its
`arbitrary_fp32_downcast`) is left out by the code generator, as Triton's, and was refused by
the interpreter's static check; a `raise` the code generator does compile (a runtime `if`, or
the constexpr branch taken) is refused by both with the same message."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.errors import CompilationError, InterpreterError

import gpu_sim


@tilework.jit
def rounded(x, rounding: tl.constexpr):
    if rounding == "up":
        y = x + 1.0
    elif rounding == "down":
        y = x - 1.0
    else:
        raise ValueError("unrecognized rounding mode")
    return y


def k_constexpr_raise(src, dst, rounding: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, rounded(tl.load(src + offs), rounding))


def k_runtime_raise(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if n > 3:
        raise ValueError("n too large")
    tl.store(dst + offs, tl.load(src + offs))


def k_top_raise(src, dst, BLOCK: tl.constexpr):
    raise ValueError("never")


RAISE = "unsupported Python construct: `raise`"


@pytest.mark.parametrize("rounding, delta", [("up", 1.0), ("down", -1.0)])
def test_a_raise_left_out_by_a_constexpr_test(rounding, delta):
    x = np.random.default_rng(0).standard_normal(32).astype(np.float32)
    y = np.zeros_like(x)
    tilework.jit(k_constexpr_raise, interpret=True)[(1,)](x, y, rounding, BLOCK=32)
    np.testing.assert_array_equal(y, x + np.float32(delta))
    ck = tilework.jit(k_constexpr_raise).warmup("*fp32:16", "*fp32:16", rounding, BLOCK=32,
                                                target="sm_90a")
    y = np.zeros_like(x)
    gpu_sim.run(ck, (1, 1, 1), x, y)
    np.testing.assert_array_equal(y, x + np.float32(delta))


def _refused_in_both(fn, compile_args, launch_args, line_of):
    with pytest.raises(CompilationError) as compiled:
        tilework.jit(fn).warmup(*compile_args, BLOCK=32, target="sm_90a")
    x = np.random.default_rng(1).standard_normal(32).astype(np.float32)
    y = np.zeros_like(x)
    with pytest.raises(CompilationError) as interpreted:
        tilework.jit(fn, interpret=True)[(1,)](x, y, *launch_args, BLOCK=32)
    assert isinstance(interpreted.value, InterpreterError)
    for e in (compiled.value, interpreted.value):
        assert RAISE in str(e) and line_of in str(e)
    assert not y.any()


def test_a_raise_the_code_generator_compiles_is_refused_in_both():
    _refused_in_both(k_constexpr_raise, ("*fp32:16", "*fp32:16", "sideways"), ("sideways",),
                     'raise ValueError("unrecognized rounding mode")')
    _refused_in_both(k_runtime_raise, ("*fp32:16", "*fp32:16", 5), (5,),
                     'raise ValueError("n too large")')
    _refused_in_both(k_top_raise, ("*fp32:16", "*fp32:16"), (), 'raise ValueError("never")')
