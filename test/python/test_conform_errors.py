"""The structure of compile errors as Triton's (issue 14; Triton's test_compile_errors.py, run
with benchmarks/tools/triton_tests.py): Triton's position `at L:C:` under each caret (next to
tilework's file:line:col), `error_message` and `src`, a nested call's error raised at the call
with the callee's own error as `__cause__`, `CompileTimeAssertionFailure` without a cause,
Triton's exact words as `str()` of a builtin's error (the located message keeps tilework's),
`not` of a tuple refused, and Triton's words for an undefined name."""
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError, InterpreterError
from tilework.compiler.driver import ASTSource, compile
from tilework.errors import CompileTimeAssertionFailure
from tilework.frontend.semantic import SemanticError
from located import line_of


def aot(fn, constants=None):
    return compile(ASTSource(fn, {}, constants or {}, {}), "sm_90a", cache=False)


def compile_error(fn, constants=None):
    with pytest.raises(CompilationError) as ei:
        aot(fn, constants)
    return ei.value


def interpreted_error(fn, **consts):
    with pytest.raises(InterpreterError) as ei:
        tilework.jit(fn.fn, interpret=True)[(1,)](**consts)
    return ei.value


@tilework.jit
def k_binop():
    0 + "a"  # ERR


def test_position_is_tritons_and_tileworks():
    e = compile_error(k_binop)
    assert e.at == (2, 4, "k_binop")  # line 2 of the function (its `def` is 1), column 4
    assert "^ at 2:4: in k_binop" in str(e)
    assert f"test_conform_errors.py:{line_of(k_binop)}:5: error: " in str(e)
    assert e.error_message == e.message and "0 + \"a\"" not in e.message
    assert e.src.startswith("def k_binop():") and "# ERR" in e.src  # (Triton's: from `def`)


@tilework.jit
def nested_bad():
    xyz  # ERR  # noqa: F821


@tilework.jit
def k_nested():
    # a comment: the call is on line 3
    nested_bad()  # CALL


@tilework.jit
def k_twice():
    k_nested()


def test_nested_call_error_is_raised_at_the_call_with_the_callee_error_as_cause():
    e = compile_error(k_nested)
    # the error raised: at the call (Triton's), still naming the callee's line (tilework's)
    assert e.call_chain[0][1] == line_of(k_nested, "# CALL") and e.lineno == line_of(nested_bad)
    assert "^ at 3:4: in k_nested" in str(e) and "^ at 2:4: in nested_bad" in str(e)
    inner = e.__cause__
    assert isinstance(inner, CompilationError) and inner.call_chain == ()
    assert "at 2:4: in nested_bad" in str(inner) and "at 3:4" not in str(inner)
    assert inner.message == "xyz is not defined" and inner.__cause__ is None
    # two calls deep: each level's error is the cause of the one above
    e2 = compile_error(k_twice)
    assert len(e2.call_chain) == 2 and len(e2.__cause__.call_chain) == 1
    assert e2.__cause__.__cause__.call_chain == () and e2.__cause__.__cause__.__cause__ is None


@tilework.jit
def k_builtin():
    tl.arange(2, 7)  # ERR


@tilework.jit
def k_full():
    tl.full((33, ), 0, dtype=tl.int64)


def test_builtin_errors_say_tritons_words_and_keep_the_detail():
    e = compile_error(k_builtin)
    assert isinstance(e.__cause__, SemanticError)
    assert str(e.__cause__) == "arange's range must be a power of 2"
    assert e.message == "arange(2, 7) has length 5, which is not a power of two"
    e = compile_error(k_full)
    assert str(e.__cause__) == "Shape element 0 must be a power of 2"
    assert e.message == "shape [33]: every dimension must be a power of two"
    # interpreted: the located message is the detail too
    ei = interpreted_error(k_builtin)
    assert "has length 5, which is not a power of two" in str(ei)
    assert str(ei.__cause__) == "arange's range must be a power of 2"


@tilework.jit
def k_static(B: tl.constexpr):
    tl.static_assert(B > 16, "B too small")


@tilework.jit
def k_static_nested():
    k_static(4)


def test_static_assert_is_a_compile_time_assertion_failure_without_cause():
    e = compile_error(k_static, {"B": 8})
    assert type(e) is CompileTimeAssertionFailure and e.__cause__ is None
    assert e.message == "static_assert failed: B too small" and e.at == (2, 4, "k_static")
    e = compile_error(k_static_nested)
    assert isinstance(e, CompileTimeAssertionFailure)
    assert isinstance(e.__cause__, CompileTimeAssertionFailure) and e.__cause__.__cause__ is None
    aot(k_static, {"B": 32})  # (holds: compiles)


@tilework.jit
def k_not_tuple():
    not (0, 0)  # ERR


def test_not_of_a_tuple_is_refused_in_both():
    msg = "`not` of a tuple is not supported (as in Triton): test its length or members"
    e = compile_error(k_not_tuple)
    assert e.message == msg and e.__cause__ is None and e.at == (2, 4, "k_not_tuple")
    assert msg in str(interpreted_error(k_not_tuple))


def test_undefined_names_say_tritons_words():
    captured = 42

    @tilework.jit
    def k_captured():
        a = captured  # noqa: F841

    e = compile_error(k_captured)
    assert e.message.startswith("captured is not defined: a compiled kernel does not read the "
                                "variables of the function it is defined in")
    assert compile_error(nested_bad).message == "xyz is not defined"
