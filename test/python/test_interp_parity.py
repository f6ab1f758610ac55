"""One behaviour for interpreter and compiler (issue 12, item 7): every kernel the compiler
rejects in test_surface_errors.py and test_errors.py is rejected by the interpreter too, with
the compiler's message; the ones found on the source alone (frontend/static_check.py) also at
the compiler's file:line as a CompilationError."""
import os

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile

import test_errors as E
import test_surface_errors as S
from located import line_of

THIS = os.path.abspath(__file__)

# The types loops and `if`s carry (e_carried_dtype, e_carried_shape, whose `while n > 0`
# would never end interpreted, e_constexpr_changes_in_loop) are the code generator's checks,
# run by the interpreter on the launch's specialization first (static_check.types_check).
CASES = [(f, m, {}, "# ERR") for f, m in S.COMPILE_ERRORS]
CASES += [(S.e_constexpr_value, "arange bounds must be constexpr ints", {"B": 16.5}, "# ERR")]
CASES += [(E.k_with, "unsupported Python construct: `with` statements", {}, "# MARK"),
          (E.k_lambda, "unsupported Python construct: lambdas", {}, "# MARK"),
          (E.k_listcomp, "comprehensions iterate over tuples (unrolled at compile time); got "
                         "range", {}, "# MARK"),
          (E.k_runtime_arange, "arange end must be a constexpr, got a runtime value", {},
           "# MARK"),
          (E.k_runtime_axis, "program_id axis must be a constexpr, got a runtime value", {},
           "# MARK"),
          (E.k_undefined, "not_defined_anywhere is not defined", {}, "# MARK"),
          (E.k_builtin, "unsupported builtin `sorted`", {}, "# MARK"),
          (E.k_kwarg, "tl.load: got an unexpected keyword argument 'maks'", {}, "# MARK"),
          (E.k_shape, "shape mismatch between operands: [16] and [32] in `+`", {}, "# MARK"),
          (E.k_dtype, "`&` is not defined for fp32 and fp32", {}, "# MARK"),
          (E.k_not_tile, "expected a tile or a number, got 'x'", {}, "# MARK"),
          (E.k_mask_shape, "load mask of shape [32] does not match pointer shape [16]", {},
           "# MARK"),
          (E.k_recursive, "recursion does not end at compile time: k_recursive() calls itself more than 16 levels deep", {},
           "# MARK"),
          (E.k_store_ptr_type, "store expects a pointer or a tile of pointers, got int32", {},
           "# MARK"),
          (E.k_arange_pow2, "arange(0, 100) has length 100, which is not a power of two",
           {"B": 100}, "# MARK"),
          (E.k_static_assert, "static_assert failed: B too small", {"B": 16}, "# MARK")]

# rejected on the source alone: a CompilationError at the compiler's line
# (a recursion that does not end is found when run, as the compiler finds it when inlining:
# Triton's specialized recursion is taken)
STATIC = {"e_undefined", "e_builtin", "k_with", "k_lambda", "k_undefined", "k_builtin"}


def _interpret(fn, constants):
    x = np.zeros(512, np.float32)
    tilework.jit(fn.fn, interpret=True)[(1,)](x, 4, **constants)


@pytest.mark.parametrize("fn, message, constants, marker", CASES,
                         ids=[c[0].__name__ for c in CASES])
def test_interpreter_rejects_what_the_compiler_rejects(fn, message, constants, marker):
    with pytest.raises(CompilationError) as ce:
        compile(ASTSource(fn, {"x": tl.pointer_type(tl.float32), "n": tl.int32}, constants,
                          {}), "sm_90a", cache=False)
    assert message in ce.value.message
    with pytest.raises(Exception) as ie:
        _interpret(fn, constants)
    assert message in str(ie.value), str(ie.value)
    if fn.__name__ == "k_recursive":  # at the compiler's line: the call
        assert f"{ce.value.filename}:{ce.value.lineno}:{ce.value.col + 1}: " in str(ie.value)
    if fn.__name__ in STATIC:
        assert isinstance(ie.value, CompilationError)
        assert ie.value.message == ce.value.message
        assert (ie.value.filename, ie.value.lineno, ie.value.col) == \
            (ce.value.filename, ce.value.lineno, ce.value.col)


@tilework.jit
def _helper_listcomp(v):
    return [v for _ in (1, 2) if v]  # HELPER


@tilework.jit
def k_calls_bad_helper(x, n):
    v = _helper_listcomp(n)  # CALL


def test_helper_errors_carry_the_call_chain():
    with pytest.raises(CompilationError) as ie:
        _interpret(k_calls_bad_helper, {})
    e = ie.value
    assert e.message == "comprehensions take one `for` and no `if` (Triton's tuple comprehension)"
    assert e.lineno == line_of(_helper_listcomp, "# HELPER")
    assert [c[1:] for c in e.call_chain] == \
        [(line_of(k_calls_bad_helper, "# CALL"), 8, "_helper_listcomp")]
    with pytest.raises(CompilationError) as ce:
        compile(ASTSource(k_calls_bad_helper, {"x": tl.pointer_type(tl.float32),
                                               "n": tl.int32}, {}, {}), "sm_90a", cache=False)
    assert str(ce.value) == str(e)


@tilework.jit
def k_len_of_tile(x, n):
    v = len(tl.arange(0, 16))  # ERR


def test_builtin_call_on_a_tile():
    msg = "unsupported call to `len` with tile arguments: only tl builtins and @jit functions"
    with pytest.raises(CompilationError, match="unsupported call to `len`"):
        compile(ASTSource(k_len_of_tile, {"x": tl.pointer_type(tl.float32), "n": tl.int32},
                          {}, {}), "sm_90a", cache=False)
    with pytest.raises(Exception) as ie:
        _interpret(k_len_of_tile, {})
    assert msg in str(ie.value)


SCALE = 3.0  # a plain global: not readable in a kernel


@tilework.jit
def k_plain_global(x, n):
    tl.store(x + tl.arange(0, 16), tl.zeros([16], tl.float32) + SCALE)  # ERR


def test_plain_global_rejected_in_both():
    with pytest.raises(CompilationError) as ce:
        compile(ASTSource(k_plain_global, {"x": tl.pointer_type(tl.float32), "n": tl.int32},
                          {}, {}), "sm_90a", cache=False)
    with pytest.raises(CompilationError) as ie:
        _interpret(k_plain_global, {})
    assert "cannot read global variable `SCALE`" in ie.value.message
    assert str(ie.value) == str(ce.value)


def test_interpreter_keeps_python_debugging_helpers():
    """int()/float() of a scalar and closures stay usable when interpreted."""
    k = 5

    @tilework.jit(interpret=True)
    def show(x, n):
        pid = tl.program_id(0)
        tl.store(x + tl.arange(0, 16), tl.zeros([16], tl.float32) + int(pid) + k)
    x = np.zeros(16, np.float32)
    show[(1,)](x, 4)
    assert (x == 5).all()


# Python control flow the compiler rejects and Python would run: rejected on the source by
# both, with the same message at the same file:line:col.
def _plain_helper(v):
    return v + 1


@tilework.jit
def k_break(x, n):
    i = 0
    while i < n:
        if i > 2:
            break  # ERR
        i += 1


@tilework.jit
def k_continue(x, n):
    for i in range(n):
        if i == 1:
            continue  # ERR


@tilework.jit
def k_for_else(x, n):
    s = 0
    for i in range(n):  # ERR
        s += 1
    else:
        s += 2


@tilework.jit
def k_while_else(x, n):
    while n > 0:  # ERR
        n -= 1
    else:
        n = 3


@tilework.jit
def k_chained(x, n):
    v = tl.arange(0, 16)
    tl.store(x + v, tl.zeros([16], tl.float32), mask=0 < v < n)  # ERR


@tilework.jit
def k_returns(x, n):
    return n + 1  # ERR


CONTROL = [(k_break, "`break` is not supported (as in Triton)"),
           (k_continue, "`continue` is not supported (as in Triton)"),
           (k_for_else, "`for ... else` is not supported"),
           (k_while_else, "`while ... else` is not supported"),
           (k_chained, "chained comparisons are not supported; split them with `&`"),
           (k_returns, "a kernel cannot return a value")]


@pytest.mark.parametrize("fn, message", CONTROL, ids=[c[0].__name__ for c in CONTROL])
def test_python_control_flow_rejected_in_both(fn, message):
    with pytest.raises(CompilationError) as ce:
        compile(ASTSource(fn, {"x": tl.pointer_type(tl.float32), "n": tl.int32}, {}, {}),
                "sm_90a", cache=False)
    with pytest.raises(CompilationError) as ie:
        _interpret(fn, {})
    assert message in ce.value.message
    assert str(ie.value) == str(ce.value)
    assert ie.value.lineno == line_of(fn, "# ERR")


@tilework.jit
def k_plain_call(x, n):
    tl.store(x + tl.arange(0, 16), tl.zeros([16], tl.float32) + _plain_helper(n))  # ERR


@tilework.jit
def k_plain_call_constexpr(x, n, B: tl.constexpr):
    tl.store(x + tl.arange(0, 16), tl.zeros([16], tl.float32) + _plain_helper(B))


def test_plain_function_takes_no_tiles_in_both():
    msg = ("unsupported call to `_plain_helper` with tile arguments: only tl builtins and @jit "
           "functions take tiles")
    with pytest.raises(CompilationError) as ce:
        compile(ASTSource(k_plain_call, {"x": tl.pointer_type(tl.float32), "n": tl.int32},
                          {}, {}), "sm_90a", cache=False)
    assert ce.value.message == msg
    with pytest.raises(Exception) as ie:
        _interpret(k_plain_call, {})
    assert msg in str(ie.value)
    # on a constexpr it runs (at compile time when compiled): 0 + (2 + 1) in both
    compile(ASTSource(k_plain_call_constexpr, {"x": tl.pointer_type(tl.float32),
                                               "n": tl.int32}, {"B": 2}, {}), "sm_90a",
            cache=False)
    x = np.zeros(512, np.float32)
    tilework.jit(k_plain_call_constexpr.fn, interpret=True)[(1,)](x, 4, B=2)
    assert (x[:16] == 3).all()


@tilework.jit
def k_defined_in_loop(x, n):
    for i in range(n):
        t = i * 2  # ERR
    tl.store(x + tl.arange(0, 16), tl.zeros([16], tl.float32) + t)


@tilework.jit
def k_one_branch(x, n):
    if n > 2:
        v = 1  # ERR
    tl.store(x + tl.arange(0, 16), tl.zeros([16], tl.float32) + v)


@tilework.jit
def k_branch_shapes(x, n):
    if n > 2:
        v = tl.zeros([16], tl.float32)  # ERR
    else:
        v = tl.zeros([32], tl.float32)


@tilework.jit
def k_carried_width(x, n):
    acc = 0
    for i in range(n):
        acc = acc + tl.full([], 1, tl.int64)  # ERR


TYPED = [(k_defined_in_loop, "`t` is assigned in a loop but not before it"),
         (k_one_branch, "`v` is defined in only one branch of the `if`"),
         (k_branch_shapes, "Mismatched type for v between then block (fp32[16]) and else "
                           "block (fp32[32])"),
         (k_carried_width, "loop-carried value `acc` changes type from int32 to int64")]


@pytest.mark.parametrize("fn, message", TYPED, ids=[c[0].__name__ for c in TYPED])
def test_carried_types_rejected_in_both(fn, message):
    """What the code generator finds on the types control flow carries, which Python's own
    loops and `if`s would run: the same CompilationError interpreted."""
    with pytest.raises(CompilationError) as ce:
        compile(ASTSource(fn, {"x": tl.pointer_type(tl.float32), "n": tl.int32}, {}, {}),
                "sm_90a", cache=False)
    assert message in ce.value.message
    with pytest.raises(CompilationError) as ie:
        _interpret(fn, {})
    assert str(ie.value) == str(ce.value)


@tilework.jit
def k_carried_ok(x, n):
    acc = 0
    v = tl.zeros([16], tl.float32)
    for i in range(n):
        acc = acc + 1.5
        v = v + i
    tl.store(x + tl.arange(0, 16), v + acc)


def test_carried_types_the_compiler_takes_run():
    """An int constexpr start that the loop makes a float, as compiled: runs interpreted."""
    x = np.zeros(512, np.float32)
    tilework.jit(k_carried_ok.fn, interpret=True)[(1,)](x, 4)
    assert (x[:16] == 6 + 6.0).all()
