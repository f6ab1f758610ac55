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
    tl.static_assert(t.type == tl.tuple_type([tl.float32] * 3))
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


def test_host_side_classes():
    t = tl.tuple([1, 2, 3])
    assert t[1:] == (2, 3) and isinstance(t[1:], tl.tuple)
    assert t[tl.slice(0, 3, 2)] == (1, 3) and t[tl.constexpr(2)] == 3
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
