"""`tl.tuple`, `tl.tuple_type`, `tl.constexpr_type` and `tl.slice` in kernels: a tuple built
with tl.tuple, returned from a @jit helper, concatenated, sliced, read by field name and
carried through a runtime loop; values against numpy in the interpreter and compiled (sm_90a
and gfx942, run by the SIMT emulator); the rejected forms with their messages."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from simt_emulator import Emulator

P = tl.pointer_type


@tilework.jit
def _pair(v):
    return tl.tuple([v * 2, v + 1])


@tilework.jit
def _named(a, b):
    return tl.tuple([a, b], tl.tuple_type([a.dtype, b.dtype], ["lo", "hi"]))


def k_tuple_ret(x, out, n, N: tl.constexpr):
    o = tl.arange(0, N)
    v = tl.load(x + o)
    t = _pair(v) + tl.tuple([v - 3.0])  # from a helper, concatenated
    tl.static_assert(isinstance(t, tl.tuple) and len(t) == 3)
    tl.static_assert(t.type == tl.tuple_type([tl.block_type(tl.float32, [N])] * 3))
    tl.static_assert(tl.constexpr(N).type == tl.constexpr_type(N))
    head = t[tl.slice(0, 2, None)]  # a tl.tuple of the first two
    acc = tl.tuple([tl.zeros_like(v), tl.zeros_like(v)])
    for _ in range(0, n):  # carried through a runtime loop
        acc = tl.tuple([acc[0] + head[0], acc[1] + head[1]])
    nm = _named(acc[0], t[-1])
    tl.store(out + o, nm.lo)
    tl.store(out + N + o, acc[1])
    tl.store(out + 2 * N + o, nm.hi + t[1:][0])


def np_tuple_ret(x, n=3):
    return np.concatenate([n * (x * 2), n * (x + 1), (x - 3) + (x + 1)]).astype(np.float32)


def test_tuple_values_interpreted():
    x = np.random.default_rng(20).standard_normal(64).astype(np.float32)
    out = np.zeros(3 * 64, np.float32)
    tilework.jit(k_tuple_ret, interpret=True)[(1,)](x, out, 3, N=64)
    np.testing.assert_allclose(out, np_tuple_ret(x), rtol=1e-6)


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
def test_tuple_values_compiled(target):
    x = np.random.default_rng(21).standard_normal(64).astype(np.float32)
    out = np.zeros(3 * 64, np.float32)
    emu = Emulator.from_kernel(tilework.jit(k_tuple_ret), {"x": P(tl.float32), "out":
                               P(tl.float32), "n": tl.int32}, {"N": 64}, target, 4)
    emu.run((1,), x, out, 3)
    np.testing.assert_allclose(out, np_tuple_ret(x), rtol=1e-6)


@tilework.jit
def _plain_pair(a, b):
    return a, b  # a tuple literal: a tl.tuple, as in Triton


def k_literals(x, out, N: tl.constexpr, S: tl.constexpr):
    o = tl.arange(0, N)
    v = tl.load(x + o)
    t = (v, v * 2)
    tl.static_assert(isinstance(t, tl.tuple) and isinstance([v, S], tl.tuple))
    tl.static_assert(isinstance(_plain_pair(v, S), tl.tuple))
    tl.static_assert(t.type == tl.tuple_type([tl.block_type(tl.float32, [N])] * 2))
    tl.static_assert(tl.tuple((v, N)).type ==
                     tl.tuple_type([tl.block_type(tl.float32, [N]), tl.constexpr_type(N)]))
    tl.static_assert(N.type == tl.constexpr_type(N) and S.type == tl.constexpr_type(S))
    tl.static_assert(N.type != tl.constexpr_type(N + 1))
    tl.static_assert((1, N) == (1, N) and (1, 2) != (1, 3))
    r = (S, N) * 2  # repeated by a compile-time int: a tl.tuple
    tl.static_assert(isinstance(r, tl.tuple) and len(r) == 4 and r[2] == S)
    u = t + (v + S,)  # concatenated with a literal
    tl.static_assert(isinstance(u, tl.tuple) and len(u) == 3)
    w = u[1:]
    tl.static_assert(isinstance(w, tl.tuple) and isinstance(u[::2], tl.tuple))
    nest = ((v, S), (v - 1.0,))
    tl.static_assert(isinstance(nest[0], tl.tuple) and len(nest[0] + nest[1]) == 3)
    a, b = _plain_pair(w[0], nest[1][0])
    tl.store(out + o, a + b + u[::2][1] * r[0])


def np_literals(x, s):
    return ((x * 2) + (x - 1) + (x + s) * s).astype(np.float32)


def test_tuple_literals_are_tl_tuples_interpreted():
    x = np.random.default_rng(22).standard_normal(32).astype(np.float32)
    out = np.zeros(32, np.float32)
    tilework.jit(k_literals, interpret=True)[(1,)](x, out, N=32, S=3)
    np.testing.assert_allclose(out, np_literals(x, 3), rtol=1e-6)


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
def test_tuple_literals_are_tl_tuples_compiled(target):
    x = np.random.default_rng(23).standard_normal(32).astype(np.float32)
    out = np.zeros(32, np.float32)
    emu = Emulator.from_kernel(tilework.jit(k_literals), {"x": P(tl.float32), "out":
                               P(tl.float32)}, {"N": 32, "S": 3}, target, 4)
    emu.run((1,), x, out)
    np.testing.assert_allclose(out, np_literals(x, 3), rtol=1e-6)


def k_param_type(out, N: tl.constexpr, F: tl.constexpr, NAME: tl.constexpr):
    # a constexpr parameter's `.type` (the interpreter passes it as a plain Python value)
    tl.static_assert(N.type == tl.constexpr_type(N) and F.type.value == F)
    tl.static_assert(NAME.type == tl.constexpr(NAME).type)
    tl.store(out + tl.arange(0, N), tl.full((N,), F, tl.float32))


def test_constexpr_parameter_type_interpreted_and_compiled():
    out = np.zeros(8, np.float32)
    tilework.jit(k_param_type, interpret=True)[(1,)](out, N=8, F=1.5, NAME="x")
    np.testing.assert_array_equal(out, np.full(8, 1.5, np.float32))
    tilework.compile(tilework.jit(k_param_type), target="sm_90a", signature={"out": "*fp32"},
                     constexprs={"N": 8, "F": 1.5, "NAME": "x"})


def k_bad_literal(x, WHAT: tl.constexpr):
    v = tl.load(x + tl.arange(0, 8))
    t = (v, v)
    if WHAT == "mul_tile":
        r = t * v  # ERR
    elif WHAT == "mul_float":
        r = t * 2.0  # ERR
    elif WHAT == "field":
        r = (t.lo, v)  # ERR
    else:
        r = t[v]  # ERR
    tl.store(x + tl.arange(0, 8), r[0])


@pytest.mark.parametrize("what, msg", [
    ("mul_tile", "expected a tile or a number, got tuple"),
    ("mul_float", "can't multiply sequence by non-int of type 'float'"),
    ("field", r"tl.tuple.* has no attribute `lo`"),
    ("index", "tl.tuple indices must be compile-time ints or slices"),
])
def test_tuple_literal_rejections(what, msg):
    with pytest.raises(CompilationError, match=msg) as e:
        tilework.compile(tilework.jit(k_bad_literal), target="sm_90a",
                         signature={"x": "*fp32"}, constexprs={"WHAT": what})
    assert "test_tuple_values.py" in str(e.value)
    with pytest.raises(Exception, match=msg):
        tilework.jit(k_bad_literal, interpret=True)[(1,)](np.zeros(8, np.float32), WHAT=what)


def test_host_side_classes():
    t = tl.tuple([1, 2, 3])
    assert t[1:] == (2, 3) and isinstance(t[1:], tl.tuple)
    assert t[tl.slice(0, 3, 2)] == (1, 3) and t[tl.constexpr(2)] == 3
    assert t * tl.constexpr(2) == (1, 2, 3, 1, 2, 3) and isinstance(2 * t, tl.tuple)
    assert t.type == tl.tuple_type([tl.constexpr_type(1), tl.constexpr_type(2),
                                    tl.constexpr_type(3)])
    assert tl.constexpr_type(4) != tl.constexpr_type(5) and tl.constexpr(7).type.value == 7
    assert list(tl.tuple_type([tl.int32, tl.float16])) == [tl.int32, tl.float16]
    assert str(tl.tuple_type([tl.int32], ["a"])) == "[a:int32]"


def k_bad(x, WHAT: tl.constexpr):
    v = tl.load(x + tl.arange(0, 8))
    t = tl.tuple([v, v])
    if WHAT == "range":
        r = t[2]  # ERR
    elif WHAT == "field":
        r = t.lo  # ERR
    else:
        r = t[v]  # ERR
    tl.store(x + tl.arange(0, 8), r)


@pytest.mark.parametrize("what, msg", [
    ("range", "tuple index out of range"),
    ("field", r"tl.tuple.* has no attribute `lo`"),
    ("tile", "tl.tuple indices must be compile-time ints or slices"),
])
def test_rejected(what, msg):
    with pytest.raises(CompilationError, match=msg) as e:
        tilework.compile(tilework.jit(k_bad), target="sm_90a", signature={"x": "*fp32"},
                         constexprs={"WHAT": what})
    assert "test_tuple_values.py" in str(e.value)
    with pytest.raises(Exception, match=msg):
        tilework.jit(k_bad, interpret=True)[(1,)](np.zeros(8, np.float32), WHAT=what)
