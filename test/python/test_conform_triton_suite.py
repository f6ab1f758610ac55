"""Forms Triton's own test_core.py uses that tilework took differently (issue 14, measured with
benchmarks/tools/triton_tests.py): `@jit(debug=..., noinline=...)`, `:` past a tile's rank in
an index (`p[None, None, :]` of a scalar pointer), a runtime-scalar `a if c else b` whose sides
store (only the chosen side runs), and `.dtype` of a constant assigned in the kernel.  Values
against numpy in the interpreter and compiled (sm_90a and gfx942 run by the SIMT emulator);
each rejected form with its message."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from simt_emulator import Emulator

TARGETS = ["sm_90a", "gfx942"]
P = tl.pointer_type


def run(fn, where, sig, consts, *args, grid=(1,)):
    """`fn` interpreted, or compiled for `where` and emulated."""
    if where == "interpreter":
        fn = fn if isinstance(fn, tilework.JITFunction) else tilework.jit(fn)
        tilework.jit(fn.fn, interpret=True, debug=fn.debug)[grid](*args, **consts)
    else:
        fn = fn if isinstance(fn, tilework.JITFunction) else tilework.jit(fn)
        Emulator.from_kernel(fn, sig, consts, where, 4).run(grid, *args)


# ---- @jit(noinline=True), @jit(debug=True) ----------------------------------------------------

@tilework.jit(noinline=True)
def scaled(v, i):
    return v * i


@tilework.jit(noinline=True)
def store_sum(x, y, Z):
    tl.store(Z, x + y)


def k_noinline(x, out, rep, N: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    for i in range(1, rep):
        v = scaled(v, i)  # a tile argument: inlined, as every call
    store_sum(tl.sum(v, axis=0), 1.0, out + N)
    tl.store(out + r, v)


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_noinline_functions_give_the_inlined_values(where):
    x = np.random.default_rng(5).standard_normal(16).astype(np.float32)
    out = np.zeros(17, np.float32)
    run(k_noinline, where, {"x": P(tl.float32), "out": P(tl.float32), "rep": tl.int32},
        {"N": 16}, x, out, 4)
    np.testing.assert_allclose(out[:16], x * 6, rtol=1e-6)
    np.testing.assert_allclose(out[16], (x * 6).sum() + 1, rtol=1e-5)


def test_jit_options_are_kept():
    f = tilework.jit(noinline=True)(k_noinline)
    assert f.noinline and f.debug is None
    g = tilework.jit(debug=True)(k_noinline)
    assert g.debug is True and not g.noinline
    # the kernel's `debug` is the default of the launch option; the launch's own wins
    assert g._binder(1, 2, 3, 4)[1][g_opt("debug")] is True
    assert g._binder(1, 2, 3, 4, debug=False)[1][g_opt("debug")] is False
    assert tilework.jit(k_noinline)._binder(1, 2, 3, 4)[1][g_opt("debug")] is None


def g_opt(name):
    from tilework.language.function import LAUNCH_OPTIONS
    return LAUNCH_OPTIONS.index(name)


def k_checked(x, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.device_assert(v > 0, "non-positive")


def test_debug_jit_option_checks_device_asserts_in_the_interpreter():
    bad = -np.ones(4, np.float32)
    tilework.jit(k_checked, interpret=True)[(1,)](bad, N=4)  # not debug: not checked
    with pytest.raises(Exception, match="non-positive"):
        tilework.jit(k_checked, interpret=True, debug=True)[(1,)](bad, N=4)
    tilework.jit(k_checked, interpret=True, debug=True)[(1,)](bad, N=4, debug=False)


# ---- `:` past the rank (Triton's index rule) --------------------------------------------------

def k_colons(x, z, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    zp = z[None, None, :]  # a scalar pointer: 1 x 1
    tl.static_assert(zp.shape == [1, 1])
    w = v[None, :, :]  # 1 x N: the second `:` is past the rank
    tl.static_assert(w.shape == [1, N])
    tl.store(zp, tl.sum(w, axis=1, keep_dims=True))


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_colons_past_the_rank_are_accepted(where):
    x = np.random.default_rng(6).standard_normal(8).astype(np.float32)
    z = np.zeros(1, np.float32)
    run(k_colons, where, {"x": P(tl.float32), "z": P(tl.float32)}, {"N": 8}, x, z)
    np.testing.assert_allclose(z[0], x.sum(), rtol=1e-5)


def k_none_past_rank(x, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))[:, :, None]  # ERR
    tl.store(x + tl.arange(0, N), tl.sum(v, axis=1)[:, 0])


def test_none_past_the_rank_is_rejected():
    from tilework.compiler.driver import ASTSource, compile
    msg = "invalid axis 2"
    with pytest.raises(tilework.CompilationError, match=msg):
        compile(ASTSource(tilework.jit(k_none_past_rank), {"x": P(tl.float32)}, {"N": 8}, {}),
                "sm_90a", cache=False)
    with pytest.raises(Exception, match=msg):
        tilework.jit(k_none_past_rank, interpret=True)[(1,)](np.zeros(8, np.float32), N=8)


# ---- a runtime-scalar conditional expression runs one side --------------------------------------

def k_ifexp_stores(x, t, f, out, N: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, N)
    # only the chosen side's store happens (Triton's `if_exp_dynamic_void`)
    tl.store(out + pid * N + r, tl.load(t + r)) if pid % 2 == 0 else \
        tl.store(out + pid * N + r, tl.load(f + r))
    v = tl.load(x + pid) if pid % 2 == 0 else 3.5  # a value: the chosen side's
    tl.store(out + 4 * N + pid, v)


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_scalar_conditional_expression_runs_one_side(where):
    rng = np.random.default_rng(7)
    x, t, f = (rng.standard_normal(n).astype(np.float32) for n in (4, 8, 8))
    out = np.full(4 * 8 + 4, -1, np.float32)
    run(k_ifexp_stores, where, {"x": P(tl.float32), "t": P(tl.float32), "f": P(tl.float32),
                                "out": P(tl.float32)}, {"N": 8}, x, t, f, out, grid=(4,))
    np.testing.assert_array_equal(out[:32].reshape(4, 8), np.stack([t, f, t, f]))
    np.testing.assert_array_equal(out[32:], [x[0], 3.5, x[2], 3.5])


# ---- .dtype of a constant assigned in the kernel ------------------------------------------------

def k_const_dtype(out, N: tl.constexpr):
    one = 1
    big = 2**40
    half = 0.5
    yes = True
    tl.static_assert(one.dtype == tl.int32 and big.dtype == tl.int64)
    tl.static_assert(half.dtype == tl.float32 and yes.dtype == tl.int1)
    v = tl.full([N], one, dtype=one.dtype) + tl.full([N], half, dtype=half.dtype).to(one.dtype)
    tl.store(out + tl.arange(0, N), v)


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_dtype_of_an_assigned_constant(where):
    out = np.zeros(8, np.int32)
    run(k_const_dtype, where, {"out": P(tl.int32)}, {"N": 8}, out)
    np.testing.assert_array_equal(out, np.ones(8, np.int32))


# ---- triton.constexpr_function ----------------------------------------------------------------

@tilework.constexpr_function
def padded(n, multiple=8):
    return (n + multiple - 1) // multiple * multiple


def k_constexpr_function(out, N: tl.constexpr):
    M: tl.constexpr = padded(N)  # a compile-time value: it sizes a tile
    W: tl.constexpr = padded(N, multiple=tl.constexpr(4))
    r = tl.arange(0, M)
    tl.store(out + r, tl.where(r < N, r * W, -1))


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_constexpr_function_values(where):
    out = np.zeros(8, np.int32)
    run(k_constexpr_function, where, {"out": P(tl.int32)}, {"N": 5}, out)
    np.testing.assert_array_equal(out, [0, 8, 16, 24, 32, -1, -1, -1])
    assert padded(5) == 8 and padded(5, multiple=4) == 8  # from host code: the function


def test_constexpr_function_source_is_in_the_key(tmp_path):
    import importlib.util
    src = ("import tilework\nimport tilework.language as tl\n\n"
           "@tilework.constexpr_function\ndef width(n):\n    return n * 2\n\n"
           "@tilework.jit\ndef k(out, N: tl.constexpr):\n"
           "    tl.store(out + tl.arange(0, width(N)), 1)\n")
    keys = []
    for i, body in enumerate((src, src.replace("n * 2", "n * 4"))):
        f = tmp_path / f"cfmod{i}.py"
        f.write_text(body)
        spec = importlib.util.spec_from_file_location(f"cfmod{i}", f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        keys.append(mod.k.cache_key)
    assert keys[0] != keys[1]


def k_constexpr_function_of_a_tile(x, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.store(x + tl.arange(0, padded(v)), v)  # ERR


def test_constexpr_function_of_a_tile_is_rejected():
    from tilework.compiler.driver import ASTSource, compile
    msg = ("unsupported call to `padded` with tile arguments: only tl builtins and @jit "
           "functions take tiles")
    with pytest.raises(tilework.CompilationError, match=msg):
        compile(ASTSource(tilework.jit(k_constexpr_function_of_a_tile), {"x": P(tl.float32)},
                          {"N": 8}, {}), "sm_90a", cache=False)
    with pytest.raises(Exception, match=msg):
        tilework.jit(k_constexpr_function_of_a_tile, interpret=True)[(1,)](
            np.zeros(8, np.float32), N=8)


# ---- an int argument beyond 64 bits: OverflowError, as Triton's launch -------------------------

def k_value(v, x):
    tl.store(x, v.to(tl.float32))


@pytest.mark.parametrize("value", [2**64, -2**63 - 1])
def test_int_argument_beyond_64_bits_is_an_overflow_error(value):
    """Interpreted, and the compiled launch's argument binding (`arg_entry`, no GPU needed)."""
    from tilework.errors import IntegerOverflowError
    from tilework.runtime.launcher import arg_entry
    x = np.zeros(1, np.float32)
    msg = f"argument `v` of k_value: integer (constant )?{value} does not fit in 64 bits"
    with pytest.raises(OverflowError, match=msg) as e:
        tilework.jit(k_value, interpret=True)[(1,)](value, x)
    assert isinstance(e.value, ValueError) and isinstance(e.value, IntegerOverflowError)
    with pytest.raises(OverflowError, match=msg) as e:
        arg_entry(tilework.jit(k_value), "v", False, value)
    assert isinstance(e.value, ValueError)
    tilework.jit(k_value, interpret=True)[(1,)](2**64 - 1, x)  # (u64: fits)
    assert x[0] == np.float32(2.0**64)


# ---- a dtype equals a constexpr holding it (Triton's dtype.__eq__ unwraps) ----------------------

def k_dtype_eq(X, N: tl.constexpr):
    dtype_x: tl.constexpr = X.dtype.element_ty
    tl.static_assert(dtype_x == tl.constexpr(tl.int32) and tl.int32 == tl.constexpr(dtype_x))
    tl.static_assert(dtype_x != tl.constexpr(tl.int16))
    tl.static_assert(X.dtype == tl.constexpr(tl.pointer_type(tl.int32)))
    v = tl.load(X + tl.arange(0, N))
    tl.static_assert(v.type == tl.constexpr(tl.block_type(tl.int32, [N])))
    tl.store(X + tl.arange(0, N), v + 1)


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_dtype_equals_a_constexpr_of_it(where):
    x = np.arange(4, dtype=np.int32)
    run(k_dtype_eq, where, {"X": P(tl.int32)}, {"N": 4}, x)
    np.testing.assert_array_equal(x, np.arange(1, 5))
    assert tl.float16 == tl.constexpr(tl.float16) and tl.float16 != tl.constexpr(tl.float32)


# ---- `.to` of an assigned constant: the scalar Triton makes of it ------------------------------

def k_constant_to(out, lo, hi, IV: tl.constexpr):
    acc = 0
    acc = acc.to(tl.int64)  # an int64 scalar, carried through the runtime loop
    for i in range(lo, hi, IV):
        acc += i
    h = 0.5
    tl.store(out, acc)
    tl.store(out + 1, h.cast(tl.float16).to(tl.float32).to(tl.int64) + True.to(tl.int64))


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_to_of_an_assigned_constant(where):
    out = np.zeros(2, np.int64)
    lo, hi = 2**35, 2**35 + 20
    run(k_constant_to, where, {"out": P(tl.int64), "lo": tl.int64, "hi": tl.int64}, {"IV": 3},
        out, lo, hi)
    np.testing.assert_array_equal(out, [sum(range(lo, hi, 3)), 1])
