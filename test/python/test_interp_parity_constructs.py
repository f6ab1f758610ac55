"""Interpreter/compiler parity on Python constructs (issue 12 item 7): `and`/`or`/`not` and
`x if c else y` on tiles (Triton's rule: elementwise, a deciding constexpr short-circuits),
a tile where one truth value is needed, and a dozen probes (nested functions, `global`,
walrus, f-strings (compile-time values only), comprehensions, star-args, tuple unpacking,
ranges, `while` on a constexpr, comparisons).
What both take gives the same values (the interpreter, the compiled sm_90a code on the CPU
stand-in gpu_sim, numpy); what both refuse, the same message."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile

import gpu_sim
from located import line_of

# (`and` on tiles warns as in Triton: checked once, below)
pytestmark = pytest.mark.filterwarnings("ignore:Logical operators 'and' and 'or'")

F32P = tl.pointer_type(tl.float32)
SIG = {"x": F32P, "y": F32P, "o": F32P, "n": tl.int32}


@tilework.jit
def k_bool_ops(x, y, o, n, B: tl.constexpr):
    i = tl.arange(0, B)
    a = tl.load(x + i)
    b = tl.load(y + i)
    m = (a > 0) and (b > 0) or (i < 3)
    z = not (a > b)
    q = a if a > b else b
    w = a if n > 100 else b
    r = B > 4 and a > 0.5
    s = (i % 3) and (i % 2)
    t = (i % 3) or n
    u = not (i.to(tl.float32) - 3)
    v = n > 2 and n < 10
    tl.store(o + i, m.to(tl.float32) + 2 * z.to(tl.float32) + 4 * q + 8 * w
             + 16 * r.to(tl.float32) + 32 * s.to(tl.float32) + 64 * t.to(tl.float32)
             + 128 * u.to(tl.float32) + 256 * v.to(tl.float32))


@tilework.jit
def k_constexpr_short_circuit(x, y, o, n, B: tl.constexpr):
    i = tl.arange(0, 16)
    # B == 0 decides both: the right sides (a shape error) are never compiled nor run
    m = B > 0 and tl.load(x + tl.arange(0, 32)) > 0
    k = B == 0 or tl.load(x + tl.arange(0, 32)) > 0
    p = B == 0 and i > 4  # B == 0 is neutral: the tile
    tl.store(o + i, tl.load(x + i) + m + 2 * k + 4 * p.to(tl.float32))


def _run_both(fn, constants, n, size=16):
    rng = np.random.default_rng(12)
    x = rng.standard_normal(32).astype(np.float32)
    y = rng.standard_normal(32).astype(np.float32)
    out_i = np.full(size, -7, np.float32)
    tilework.jit(fn.fn, interpret=True)[(1,)](x, y, out_i, n, **constants)
    ck = compile(ASTSource(fn, SIG, constants, {}), "sm_90a", cache=False)
    out_c = np.full(size, -7, np.float32)
    gpu_sim.run(ck, (1, 1, 1), x, y, out_c, n)
    return x, y, out_i, out_c


@pytest.mark.parametrize("n", [5, 200])
def test_bool_ops_on_tiles_elementwise_in_both(n):
    x, y, oi, oc = _run_both(k_bool_ops, {"B": 16}, n)
    a, b, i = x[:16], y[:16], np.arange(16)
    ref = ((((a > 0) & (b > 0)) | (i < 3)) + 2 * ~(a > b) + 4 * np.where(a > b, a, b)
           + 8 * (a if n > 100 else b) + 16 * (a > 0.5) + 32 * ((i % 3 != 0) & (i % 2 != 0))
           + 64 * ((i % 3 != 0) | (n != 0)) + 128 * (i == 3) + 256 * (2 < n < 10))
    np.testing.assert_allclose(oi, ref.astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(oc, oi, rtol=1e-6)


def test_constexpr_short_circuit_in_both():
    x, _, oi, oc = _run_both(k_constexpr_short_circuit, {"B": 0}, 5)
    ref = x[:16] + 0 + 2 * 1 + 4 * (np.arange(16) > 4)
    np.testing.assert_allclose(oi, ref, rtol=1e-6)
    np.testing.assert_allclose(oc, oi, rtol=1e-6)


# ---- constructs both take: the same values ----------------------------------------------

@tilework.jit
def k_taken(x, y, o, n, B: tl.constexpr):
    i = tl.arange(0, 16)
    args = (0, 16)
    a, b = tl.load(x + tl.arange(*args)), tl.load(y + i)           # star-args, unpacking
    (c, d) = (a + b, a - b)
    acc = tl.zeros([16], tl.float32)
    for k in range(10, 0, -3):                                      # negative constexpr step
        acc = acc * 0.5 + k
    for k in range(n, 0, -1):                                       # negative runtime step
        acc = acc * 0.5 + k
    for k in tl.static_range(0, 3):
        acc = acc + k * a
    j = 0
    while B < 0:                                                    # constexpr false: no loop
        j += 1
    cmp = (B > i).to(tl.float32) + (i == B).to(tl.float32) * 2 + (B == 4) * 4 + (B in (1, 4))
    t = (1, 2)
    t += (3,)
    tl.store(o + i, c * d + acc + cmp + j + t[2] + (i is None))


def test_constructs_both_take_give_the_same_values():
    x, y, oi, oc = _run_both(k_taken, {"B": 4}, 6)
    a, b, i = x[:16], y[:16], np.arange(16)
    acc = np.zeros(16, np.float32)
    for k in [*range(10, 0, -3), *range(6, 0, -1)]:
        acc = acc * 0.5 + k
    acc = acc + 0 * a + 1 * a + 2 * a
    ref = (a + b) * (a - b) + acc + (4 > i) + 2 * (i == 4) + 4 + 1 + 0 + 3
    np.testing.assert_allclose(oi, ref, rtol=1e-5)
    np.testing.assert_allclose(oc, oi, rtol=1e-6)


# ---- constructs both refuse: the same message ----------------------------------------------

G = 3


@tilework.jit
def e_if_tile(x, y, o, n):
    if tl.arange(0, 16) > 3:  # ERR
        n = 2


@tilework.jit
def e_while_tile(x, y, o, n):
    i = tl.arange(0, 16)
    while i > 3:  # ERR
        i = i - 1


@tilework.jit
def e_bool_tile(x, y, o, n):
    b = bool(tl.arange(0, 16))  # ERR


@tilework.jit
def e_int_tile(x, y, o, n):
    b = int(tl.arange(0, 16))  # ERR


@tilework.jit
def e_matmul(x, y, o, n):
    a = tl.zeros([16, 16], tl.float32)
    b = a @ a  # ERR


@tilework.jit
def e_pow(x, y, o, n):
    b = tl.arange(0, 16) ** 2  # ERR


@tilework.jit
def e_unpack_tile(x, y, o, n):
    a, b = tl.arange(0, 2)  # ERR


@tilework.jit
def e_static_range_runtime(x, y, o, n):
    for i in tl.static_range(0, n):  # ERR
        pass


@tilework.jit
def e_while_constexpr_true(x, y, o, n, B: tl.constexpr):
    j = 0
    while B > 0:  # ERR
        j += 1


@tilework.jit
def e_for_tuple(x, y, o, n):
    for v in (1, 2):  # ERR
        pass


@tilework.jit
def e_for_tile(x, y, o, n):
    for v in tl.arange(0, 4):  # ERR
        pass


@tilework.jit
def e_star_tuple(x, y, o, n):
    t = (1, 2)
    u = (*t, 3)  # ERR


@tilework.jit
def e_nested_def(x, y, o, n):
    def inner(v):  # ERR
        return v + 1


@tilework.jit
def e_global(x, y, o, n):
    global G  # ERR
    G = 4


@tilework.jit
def e_walrus(x, y, o, n):
    i = tl.arange(0, 16)
    tl.store(o + i, (v := i * 2).to(tl.float32))  # ERR


@tilework.jit
def e_fstring_runtime(x, y, o, n, B: tl.constexpr):
    tl.static_assert(B > 0, f"B={B}, n={n}")  # ERR  (f-strings of compile-time values only)


@tilework.jit
def e_fstring_assert(x, y, o, n, B: tl.constexpr):
    tl.static_assert(B > 100, f"B={B:03d} too small")  # ERR


@tilework.jit
def e_comprehension_if(x, y, o, n, B: tl.constexpr):
    t = [v for v in (x, y) if B > 2]  # ERR


@tilework.jit
def e_comprehension_tile(x, y, o, n, B: tl.constexpr):
    t = [v for v in tl.arange(0, B)]  # ERR


@tilework.jit
def e_subscript_assign(x, y, o, n, B: tl.constexpr):
    t = (x, y)
    t[0] = o  # ERR


TRUTH = "a tile of shape [16] has no single truth value (`if`, `while`): reduce it (tl.max, " \
        "tl.sum, ...) or choose elementwise with tl.where"
REFUSED = [
    (e_if_tile, TRUTH), (e_while_tile, TRUTH),
    (e_bool_tile, "unsupported call to `bool` with tile arguments: only tl builtins and @jit "
                  "functions take tiles"),
    (e_int_tile, "unsupported call to `int` with tile arguments"),
    (e_matmul, "operator MatMult is not supported on tiles"),
    (e_pow, "operator Pow is not supported on tiles"),
    (e_unpack_tile, "cannot unpack a tile of shape [2]: a tile is not a sequence"),
    (e_static_range_runtime, "tl.static_range bounds must be constexpr ints"),
    (e_fstring_runtime, "Cannot evaluate f-string containing non-constexpr conversion values: "
                        "an f-string takes compile-time values, got a runtime value of type "
                        "int32"),
    (e_fstring_assert, "static_assert failed: B=004 too small"),
    (e_comprehension_tile, "comprehensions iterate over tuples (unrolled at compile time); "
                           "got a tile"),
]
# found on the source (or the specialization) by both: the same CompilationError, file:line
REFUSED_STATIC = [
    (e_while_constexpr_true, "this `while` condition is always true and kernels have no "
                             "`break`: the loop would never end"),
    (e_for_tuple, "for loops iterate over range(), tl.range() or tl.static_range()"),
    (e_for_tile, "for loops iterate over range(), tl.range() or tl.static_range()"),
    (e_star_tuple, "unsupported Python construct: `Starred`"),
    (e_nested_def, "unsupported Python construct: nested function definitions"),
    (e_global, "unsupported Python construct: `global`"),
    (e_walrus, "unsupported Python construct: `NamedExpr`"),
    (e_comprehension_if, "comprehensions take one `for` and no `if` (Triton's tuple "
                         "comprehension)"),
    (e_subscript_assign, "only assignment to names and tuples of names is supported"),
]


def _both_errors(fn):
    constants = {"B": 4} if "B" in fn.arg_names else {}
    with pytest.raises(CompilationError) as ce:
        compile(ASTSource(fn, {k: v for k, v in SIG.items()}, constants, {}), "sm_90a",
                cache=False)
    buf = np.zeros(32, np.float32)
    with pytest.raises(Exception) as ie:
        tilework.jit(fn.fn, interpret=True)[(1,)](buf, buf, buf, 5, **constants)
    return ce.value, ie.value


@pytest.mark.parametrize("fn, message", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refused_with_the_same_message(fn, message):
    ce, ie = _both_errors(fn)
    assert message in ce.message
    assert ce.lineno == line_of(fn, "# ERR")
    assert message in str(ie), str(ie)
    assert ce.message in str(ie)  # the compiler's words, whole


@pytest.mark.parametrize("fn, message", REFUSED_STATIC,
                         ids=[c[0].__name__ for c in REFUSED_STATIC])
def test_refused_at_the_same_line(fn, message):
    ce, ie = _both_errors(fn)
    assert message in ce.message
    assert isinstance(ie, CompilationError)
    assert str(ie) == str(ce)
    assert ie.lineno == line_of(fn, "# ERR")


def test_rewritten_kernel_keeps_closures_and_jit_helpers():
    """A kernel (and a @jit helper) using `and`/`or` runs recompiled from its source: its
    closure cells and the helpers it calls are still there."""
    k, j = 5, 2

    @tilework.jit
    def helper(v):
        return v > 1 and v < 9

    @tilework.jit(interpret=True)
    def show(x, n):
        i = tl.arange(0, 16)
        tl.store(x + i, tl.zeros([16], tl.float32) + (helper(i) or (i == k)) + j)
    x = np.zeros(16, np.float32)
    show[(1,)](x, 4)
    i = np.arange(16)
    np.testing.assert_array_equal(x, ((i > 1) & (i < 9) | (i == k)) + j)


@tilework.jit
def k_and_warns(x, y, o, n):
    i = tl.arange(0, 16)
    m = (i > 2) and (i < 9)  # WARN
    s = n > 2 and n < 9  # (runtime scalars: no warning, as Triton)
    tl.store(o + i, m.to(tl.float32) + s)


def test_and_on_tiles_warns_as_triton_in_both():
    msg = "Logical operators 'and' and 'or' are deprecated for non-scalar tensors"
    with pytest.warns(UserWarning, match=msg) as cw:
        compile(ASTSource(k_and_warns, SIG, {}, {}), "sm_90a", cache=False)
    buf = np.zeros(32, np.float32)
    with pytest.warns(UserWarning, match=msg) as iw:
        tilework.jit(k_and_warns.fn, interpret=True)[(1,)](buf, buf, buf, 5)
    where = [(w.filename, w.lineno) for w in (*cw, *iw) if msg in str(w.message)]
    assert where == [(__file__, line_of(k_and_warns, "# WARN"))] * 2
    np.testing.assert_array_equal(buf[:16], ((np.arange(16) > 2) & (np.arange(16) < 9)) + 1)
