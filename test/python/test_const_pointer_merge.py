"""A `tl.const` pointer and a plain one merged by a runtime `if`, a conditional expression or a
helper's two returns: refused as Triton 3.6 refuses them (test_core.py's test_const: "Mismatched
type for final_out", "Ternary expression with dynamic condition has inconsistent types",
"Inconsistent return types"), compiled and interpreted; a compile-time choice is no merge
(storing through the constant one: "Cannot store to a constant pointer"); two constant
pointers merge and load."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.errors import CompilationError, InterpreterError

import gpu_sim


@tilework.jit
def pass_const(a, b, choose_b):
    if choose_b:
        return b
    else:
        return a


def k_if(in_ptr: tl.const, out, c_out: tl.const, choose, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    val = tl.load(in_ptr + offs, mask=m)
    if choose:
        final_out = c_out
    else:
        final_out = out
    tl.store(final_out + offs, val, mask=m)


def k_ternary(in_ptr: tl.const, out, c_out: tl.const, choose, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    val = tl.load(in_ptr + offs, mask=m)
    final_out = c_out if choose else out
    tl.store(final_out + offs, val, mask=m)


def k_call(in_ptr: tl.const, out, c_out: tl.const, choose, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    val = tl.load(in_ptr + offs, mask=m)
    final_out = pass_const(out, c_out, choose)
    tl.store(final_out + offs, val, mask=m)


def k_if_constexpr(in_ptr: tl.const, out, c_out: tl.const, choose: tl.constexpr, n,
                   BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    val = tl.load(in_ptr + offs, mask=m)
    if choose:
        final_out = c_out
    else:
        final_out = out
    tl.store(final_out + offs, val, mask=m)


def k_two_consts(a: tl.const, b: tl.const, out, choose, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    src = b if choose else a
    if choose > 1:
        src = a
    tl.store(out + offs, tl.load(pass_const(a, src, choose) + offs, mask=m) * 2.0, mask=m)


MERGES = [(k_if, "Mismatched type for final_out between then block (*const fp32) and else "
                 "block (*fp32)"),
          (k_ternary, "Ternary expression with dynamic condition has inconsistent types "
                      "*const fp32 and *fp32"),
          (k_call, "Inconsistent return types: *const fp32 and *fp32")]


@pytest.mark.parametrize("choose", [True, False])
@pytest.mark.parametrize("fn, message", MERGES, ids=[f.__name__ for f, _ in MERGES])
def test_merging_a_const_pointer_with_a_plain_one_is_refused(fn, message, choose):
    k = tilework.jit(fn, do_not_specialize=["choose"])
    with pytest.raises(CompilationError) as ce:
        k.warmup("*fp32:16", "*fp32:16", "*fp32:16", choose, 128, BLOCK=128, target="sm_90a")
    assert message in ce.value.message
    x = np.random.default_rng(0).standard_normal(128).astype(np.float32)
    out = np.zeros_like(x)
    ki = tilework.jit(fn, interpret=True, do_not_specialize=["choose"])
    with pytest.raises(CompilationError) as ie:  # (Triton's class, as compiled)
        ki[(1,)](x, out, out, choose, 128, BLOCK=128)
    assert isinstance(ie.value, InterpreterError) and message in str(ie.value)
    assert not out.any()  # refused before anything ran


@pytest.mark.parametrize("interpret", [True, False])
def test_a_compile_time_choice_is_no_merge(interpret):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(100).astype(np.float32)
    out = np.zeros(128, np.float32)
    if interpret:
        tilework.jit(k_if_constexpr, interpret=True)[(1,)](x, out, out, False, 100, BLOCK=128)
    else:
        ck = tilework.jit(k_if_constexpr).warmup("*fp32:16", "*fp32:16", "*fp32:16", False,
                                                 100, BLOCK=128, target="sm_90a")
        gpu_sim.run(ck, (1, 1, 1), x, out, out, 100)
    np.testing.assert_array_equal(out[:100], x)
    assert not out[100:].any()
    with pytest.raises(CompilationError, match="Cannot store to a constant pointer"):
        tilework.jit(k_if_constexpr).warmup("*fp32:16", "*fp32:16", "*fp32:16", True, 100,
                                            BLOCK=128, target="sm_90a")
    # (interpreted, the store's own error as an InterpreterError, as Triton's interpreter)
    with pytest.raises(InterpreterError, match="Cannot store to a constant pointer"):
        tilework.jit(k_if_constexpr, interpret=True)[(1,)](x, out, out, True, 100, BLOCK=128)


@pytest.mark.parametrize("choose", [0, 1, 2])
def test_two_const_pointers_merge(choose):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    want = (a if choose != 1 else b) * np.float32(2.0)
    out = np.zeros_like(a)
    tilework.jit(k_two_consts, interpret=True, do_not_specialize=["choose"])[(1,)](
        a, b, out, choose, 64, BLOCK=64)
    np.testing.assert_array_equal(out, want)
    ck = tilework.jit(k_two_consts, do_not_specialize=["choose"]).warmup(
        "*fp32:16", "*fp32:16", "*fp32:16", choose, 64, BLOCK=64, target="sm_90a")
    out = np.zeros_like(a)
    gpu_sim.run(ck, (1, 1, 1), a, b, out, choose, 64)
    np.testing.assert_array_equal(out, want)
