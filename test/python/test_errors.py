"""Every rejection names the kernel's file, line and column (compile errors also show the
source line with a caret), and never surfaces an MLIR traceback."""
import inspect
import os

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile

THIS = os.path.abspath(__file__)


def line_of(fn, marker):
    """The file line holding `marker` in the source of `fn` (a JITFunction)."""
    lines, start = inspect.getsourcelines(fn.fn)
    for i, text in enumerate(lines):
        if marker in text:
            return start + i, text.index(marker.split("#")[0].strip() or marker)
    raise AssertionError(marker)


def aot(fn, signature=None, constants=None):
    sig = {"x": tl.pointer_type(tl.float32), "n": tl.int32}
    if signature is not None:
        sig = signature
    return compile(ASTSource(fn, sig, constants or {}, {}), "sm_90a", cache=False)


def expect(fn, message, marker, **kw):
    with pytest.raises(CompilationError) as ei:
        aot(fn, **kw)
    e = ei.value
    assert message in e.message, e.message
    line, _ = line_of(fn, marker)
    assert os.path.abspath(e.filename) == THIS
    assert e.lineno == line, (e.lineno, line, str(e))
    text = str(e)
    assert f"{os.path.basename(THIS)}:{line}:" in text
    assert "^" in text  # the caret under the source line
    assert "MLIR" not in text and "Traceback" not in text
    return e


# ---- kernels with one mistake each ----------------------------------------------------------

@tilework.jit
def k_with(x, n):
    with open("f"):  # MARK
        pass


@tilework.jit
def k_lambda(x, n):
    f = lambda v: v  # MARK  # noqa: E731


@tilework.jit
def k_listcomp(x, n):
    a = [i for i in range(3)]  # MARK


@tilework.jit
def k_runtime_arange(x, n):
    r = tl.arange(0, n)  # MARK


@tilework.jit
def k_runtime_axis(x, n):
    p = tl.program_id(n)  # MARK


@tilework.jit
def k_arange_pow2(x, n, B: tl.constexpr):
    r = tl.arange(0, B)  # MARK


@tilework.jit
def k_undefined(x, n):
    y = not_defined_anywhere + 1  # MARK  # noqa: F821


@tilework.jit
def k_builtin(x, n):
    y = sorted(n)  # MARK


@tilework.jit
def k_kwarg(x, n):
    offs = tl.arange(0, 16)
    y = tl.load(x + offs, maks=offs < n)  # MARK


@tilework.jit
def k_shape(x, n):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    c = a + b  # MARK


@tilework.jit
def k_dtype(x, n):
    v = tl.load(x + tl.arange(0, 16))
    w = v & 1  # MARK


@tilework.jit
def k_not_tile(x, n):
    v = tl.load("x")  # MARK


@tilework.jit
def k_mask_shape(x, n):
    offs = tl.arange(0, 16)
    v = tl.load(x + offs, mask=tl.arange(0, 32) < n)  # MARK


@tilework.jit
def k_return_value(x, n):
    return n  # MARK


@tilework.jit
def k_static_assert(x, n, B: tl.constexpr):
    tl.static_assert(B > 64, "B too small")  # MARK


@tilework.jit
def helper_bad(v):
    return v + tl.arange(0, 32)  # MARK


@tilework.jit
def k_nested(x, n):
    v = tl.arange(0, 16)
    w = helper_bad(v)  # CALLSITE


@tilework.jit
def k_recursive(x, n):
    k_recursive(x, n)  # MARK


@tilework.jit
def k_store_ptr_type(x, n):
    tl.store(n, 1.0)  # MARK


@pytest.mark.parametrize("fn, message", [
    (k_with, "unsupported Python construct: `with` statements"),
    (k_lambda, "unsupported Python construct: lambdas"),
    (k_listcomp, "comprehensions iterate over tuples (unrolled at compile time); got range"),
    (k_runtime_arange, "arange end must be a constexpr, got a runtime value"),
    (k_runtime_axis, "program_id axis must be a constexpr, got a runtime value"),
    (k_undefined, "not_defined_anywhere is not defined"),
    (k_builtin, "unsupported builtin `sorted`"),
    (k_kwarg, "tl.load: got an unexpected keyword argument 'maks'"),
    (k_shape, "shape mismatch between operands: [16] and [32] in `+`"),
    (k_dtype, "`&` is not defined for fp32 and fp32"),
    (k_not_tile, "expected a tile or a number, got 'x'"),
    (k_mask_shape, "load mask of shape [32] does not match pointer shape [16]"),
    (k_return_value, "a kernel cannot return a value"),
    (k_recursive, "recursion does not end at compile time: k_recursive() calls itself more than 16 levels deep"),
    (k_store_ptr_type, "store expects a pointer or a tile of pointers, got int32"),
])
def test_compile_errors(fn, message):
    expect(fn, message, "# MARK")


def test_arange_length_must_be_power_of_two():
    e = expect(k_arange_pow2, "arange(0, 100) has length 100, which is not a power of two",
               "# MARK", constants={"B": 100})
    assert "r = tl.arange(0, B)" in str(e)


def test_static_assert_message():
    expect(k_static_assert, "static_assert failed: B too small", "# MARK", constants={"B": 16})


def test_nested_call_chain_is_reported():
    with pytest.raises(CompilationError) as ei:
        aot(k_nested)
    e = ei.value
    line, _ = line_of(helper_bad, "# MARK")
    call, _ = line_of(k_nested, "# CALLSITE")
    assert e.lineno == line
    assert e.call_chain and e.call_chain[0][1] == call and e.call_chain[0][3] == "helper_bad"
    text = str(e)
    assert f":{call}:" in text and "in call to helper_bad()" in text
    assert "w = helper_bad(v)" in text


# ---- launch-time errors: raised before any GPU work, so they run everywhere -------------------

@tilework.jit
def k_add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _def_line(fn):
    return inspect.getsourcelines(fn.fn)[1]


def test_wrong_argument_count():
    with pytest.raises(TypeError) as ei:
        k_add[(1,)](1, 2, BLOCK=16)
    msg = str(ei.value)
    assert "missing 1 required positional argument: 'n'" in msg
    assert f"{THIS}:{_def_line(k_add)}:" in msg


def test_unexpected_keyword():
    with pytest.raises(TypeError, match="unexpected keyword argument 'BLOK'"):
        k_add[(1,)](1, 2, 3, BLOK=16)


def test_wrong_argument_type():
    with pytest.raises(TypeError) as ei:
        k_add[(1,)]("a", "b", 16, BLOCK=16)
    msg = str(ei.value)
    assert "argument `x_ptr` of k_add has unsupported type str" in msg
    assert f"{THIS}:{_def_line(k_add)}:" in msg


def test_host_numpy_array_rejected():
    a = np.ones(16, np.float32)
    with pytest.raises(ValueError, match="argument `x_ptr` of k_add is a host \\(numpy\\) array"):
        k_add[(1,)](a, a, 16, BLOCK=16)


class _CpuTensor:
    """Stands in for a CPU torch.Tensor (the check reads only these attributes)."""
    __module__ = "torch"
    is_cuda = False
    dtype = "torch.float32"

    def data_ptr(self):
        return 4096


def test_cpu_tensor_rejected():
    with pytest.raises(ValueError) as ei:
        k_add[(1,)](_CpuTensor(), _CpuTensor(), 16, BLOCK=16)
    msg = str(ei.value)
    assert "argument `x_ptr` of k_add is a CPU tensor" in msg and ".cuda()" in msg
    assert f"{THIS}:{_def_line(k_add)}:" in msg


def test_real_cpu_torch_tensor_rejected():
    torch = pytest.importorskip("torch")
    x = torch.ones(16)
    with pytest.raises(ValueError, match="is a CPU tensor"):
        k_add[(1,)](x, x, 16, BLOCK=16)


@tilework.jit
def k_scalar(n):
    pass


def test_integer_out_of_range():
    with pytest.raises(ValueError, match="integer 18446744073709551616 does not fit in 64 bits"):
        k_scalar[(1,)](2**64)


@pytest.mark.parametrize("opts, message", [
    ({"num_warps": 3}, "num_warps must be a power of 2 between 1 and 32, got 3"),
    ({"num_stages": 0}, "num_stages must be a positive int"),
    ({"opt_level": 7}, "opt_level must be 0..3"),
    ({"maxnreg": 8}, "maxnreg must be an int between 16 and 255, got 8"),
    ({"maxnreg": 40.0}, "maxnreg must be an int between 16 and 255, got 40.0"),
])
def test_bad_options(opts, message):
    with pytest.raises(ValueError, match=message):
        tilework.CompileOptions(**opts)


def test_unknown_option():
    with pytest.raises(TypeError, match="unknown compile option"):
        tilework.CompileOptions.from_env(nope=1)


def test_calling_a_kernel_directly():
    with pytest.raises(RuntimeError, match=r"launched with k_add\[grid\]"):
        k_add(1, 2, 3, 4)


def test_builtin_outside_kernel():
    with pytest.raises(RuntimeError, match="tl.program_id can only be called inside"):
        tl.program_id(0)


@tilework.jit
def k_fp8_load(x, n):
    v = tl.load(x + tl.arange(0, 16))
    w = v & v  # MARK


@tilework.jit
def k_fp8_cast(x, n):
    v = tl.load(x + tl.arange(0, 16)).to(tl.float8e4nv)
    w = tl.clamp(v, v, v)  # MARK


@pytest.mark.parametrize("dt", [tl.float8e4nv, tl.float8e5])
def test_fp8_is_rejected_cleanly(dt):
    # arithmetic on float8 tiles follows Triton's promotion (test_fp8.py); bitwise ops,
    # tl.clamp and tl.fma on two float8 tiles are rejected
    expect(k_fp8_load, f"`&` on {dt} tiles is not supported: convert them first", "# MARK",
           signature={"x": tl.pointer_type(dt), "n": tl.int32})


def test_fp8_cast_is_rejected_cleanly():
    # the cast itself is supported; clamping float8 tiles is not
    expect(k_fp8_cast, "`clamp` on fp8e4nv tiles is not supported", "# MARK")


@tilework.jit
def k_likes(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x + tl.zeros_like(x) + tl.full_like(x, 2))


def test_zeros_like_and_full_like():
    x = np.random.randn(32).astype(np.float32)
    y = np.full(32, np.nan, np.float32)
    k_likes.interpret = True
    try:
        k_likes[(1,)](x, y, BLOCK=32)
    finally:
        k_likes.interpret = False
    np.testing.assert_array_equal(y, x + 2)
    aot(k_likes, {"x_ptr": tl.pointer_type(tl.float32), "y_ptr": tl.pointer_type(tl.float32)},
        {"BLOCK": 32})


@tilework.jit
def k_min_one_arg(x, n):
    v = min(n)  # MARK


@tilework.jit
def k_max_runtime(x_ptr, y_ptr, n):
    tl.store(y_ptr, max(n, tl.load(x_ptr), 3))


def test_min_of_one_runtime_value():
    expect(k_min_one_arg, "min() of runtime values takes two or more positional arguments",
           "# MARK")


def test_max_of_runtime_values_is_elementwise():
    x = np.array([5], np.int32)
    for n, want in ((1, 5), (9, 9), (-4, 5)):
        y = np.array([-99], np.int32)
        k_max_runtime.interpret = True
        try:
            k_max_runtime[(1,)](x, y, n)
        finally:
            k_max_runtime.interpret = False
        assert y[0] == want
    aot(k_max_runtime, {"x_ptr": tl.pointer_type(tl.int32), "y_ptr": tl.pointer_type(tl.int32),
                        "n": tl.int32})
