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

# Not yet the same: a loop-carried value changing type is seen by the compiler's dry run of
# the body; the interpreter runs Python's loop (it would need the body's types per iteration).
# e_carried_shape also never ends interpreted (`while n > 0` with n unchanged).
# `dt = tl.float16` rebinding a constexpr in a runtime loop is Python's business interpreted.
KNOWN_GAPS = {"e_carried_dtype", "e_carried_shape", "e_constexpr_changes_in_loop"}

CASES = [(f, m, {}, "# ERR") for f, m in S.COMPILE_ERRORS if f.__name__ not in KNOWN_GAPS]
CASES += [(S.e_constexpr_value, "arange bounds must be constexpr ints", {"B": 16.5}, "# ERR")]
CASES += [(E.k_with, "unsupported Python construct: `with` statements", {}, "# MARK"),
          (E.k_lambda, "unsupported Python construct: lambdas", {}, "# MARK"),
          (E.k_listcomp, "unsupported Python construct: `ListComp`", {}, "# MARK"),
          (E.k_runtime_arange, "arange end must be a constexpr, got a runtime value", {},
           "# MARK"),
          (E.k_runtime_axis, "program_id axis must be a constexpr, got a runtime value", {},
           "# MARK"),
          (E.k_undefined, "name `not_defined_anywhere` is not defined", {}, "# MARK"),
          (E.k_builtin, "unsupported builtin `sorted`", {}, "# MARK"),
          (E.k_kwarg, "tl.load: got an unexpected keyword argument 'maks'", {}, "# MARK"),
          (E.k_shape, "shape mismatch between operands: [16] and [32] in `+`", {}, "# MARK"),
          (E.k_dtype, "`&` is not defined for fp32 and fp32", {}, "# MARK"),
          (E.k_not_tile, "expected a tile or a number, got 'x'", {}, "# MARK"),
          (E.k_mask_shape, "load mask of shape [32] does not match pointer shape [16]", {},
           "# MARK"),
          (E.k_recursive, "recursion is not supported: k_recursive() calls itself", {},
           "# MARK"),
          (E.k_store_ptr_type, "store expects a pointer or a tile of pointers, got int32", {},
           "# MARK"),
          (E.k_arange_pow2, "arange(0, 100) has length 100, which is not a power of two",
           {"B": 100}, "# MARK"),
          (E.k_static_assert, "static_assert failed: B too small", {"B": 16}, "# MARK")]

# rejected on the source alone: a CompilationError at the compiler's line
STATIC = {"e_undefined", "e_builtin", "k_with", "k_lambda", "k_listcomp", "k_undefined",
          "k_builtin", "k_recursive"}


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
    if fn.__name__ in STATIC:
        assert isinstance(ie.value, CompilationError)
        assert ie.value.message == ce.value.message
        assert (ie.value.filename, ie.value.lineno, ie.value.col) == \
            (ce.value.filename, ce.value.lineno, ce.value.col)


@tilework.jit
def _helper_listcomp(v):
    return [v for _ in range(2)]  # HELPER


@tilework.jit
def k_calls_bad_helper(x, n):
    v = _helper_listcomp(n)  # CALL


def test_helper_errors_carry_the_call_chain():
    with pytest.raises(CompilationError) as ie:
        _interpret(k_calls_bad_helper, {})
    e = ie.value
    assert e.message == "unsupported Python construct: `ListComp`"
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
