"""`tl.map_elementwise` (frontend/ops_asm.py, `tile.map_elementwise` + a private scalar
func.func, lowering/rules/asm.py): per-element control flow (an `if` with returns, a `while`
whose trip count differs per element), pack=2 with two results, broadcast and scalar
arguments; interpreted and compiled for sm_90a (run on gpu_sim) against numpy, gfx942 on the
SIMT emulator, and the rejecting paths.  The GPU half is test_language_extras_gpu.py."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

import gpu_sim
from simt_emulator import Emulator

P = tl.pointer_type


@tilework.jit
def selu_scalar(x, alpha):
    if x > 0:
        return x
    else:
        return alpha * (tl.exp(x) - 1)


@tilework.jit
def k_selu(X, Y, alpha, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Y + o, tl.map_elementwise(selu_scalar, tl.load(X + o), alpha))


def test_selu_branches_per_element():
    x = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    e = np.exp(x.astype(np.float64)).astype(np.float32)  # fp32 exp, then fp32 arithmetic
    want = np.where(x > 0, x, np.float32(1.5) * (e - np.float32(1)))
    y = np.zeros_like(x)
    tilework.jit(k_selu.fn, interpret=True)[(1,)](x, y, 1.5, BLOCK=256)
    np.testing.assert_array_equal(y, want)
    sig = {"X": P(tl.float32), "Y": P(tl.float32), "alpha": tl.float32}
    ck = compile(ASTSource(k_selu, sig, {"BLOCK": 256}, {}), "sm_90a", cache=False)
    assert "scf.if" in ck.asm["tile"] and "tile.map_elementwise" in ck.asm["tile"]
    yc = np.zeros_like(x)
    gpu_sim.run(ck, (1, 1, 1), x, yc, 1.5)
    # (exp on NVIDIA is ex2.approx of x * log2 e, rounded first: a few ulp of exp)
    np.testing.assert_allclose(yc, want, rtol=0, atol=1e-6)
    assert (yc[x > 0] == x[x > 0]).all()


@tilework.jit
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@tilework.jit
def k_collatz(X, Y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Y + o, tl.map_elementwise(collatz_steps, tl.load(X + o)))


def collatz_ref(x):
    out = []
    for n in x.tolist():
        s = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            s += 1
        out.append(s)
    return np.array(out, np.int32)


def test_loop_trip_counts_differ_per_element():
    x = np.random.default_rng(1).integers(1, 10000, 128).astype(np.int32)
    want = collatz_ref(x)
    assert len(set(want.tolist())) > 32
    y = np.zeros_like(x)
    tilework.jit(k_collatz.fn, interpret=True)[(1,)](x, y, BLOCK=128)
    np.testing.assert_array_equal(y, want)
    sig = {"X": P(tl.int32), "Y": P(tl.int32)}
    ck = compile(ASTSource(k_collatz, sig, {"BLOCK": 128}, {}), "sm_90a", cache=False)
    yc = np.zeros_like(x)
    gpu_sim.run(ck, (1, 1, 1), x, yc)
    np.testing.assert_array_equal(yc, want)


@tilework.jit
def third_or_odd(x):
    if x % 3 == 0:
        return x // 3
    return 2 * x + 1


@tilework.jit
def k_branchy(X, Y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Y + o, tl.map_elementwise(third_or_odd, tl.load(X + o)))


def test_gfx942_on_the_emulator():
    x = np.random.default_rng(2).integers(-1000, 1000, 256).astype(np.int32)
    want = np.where(x % 3 == 0, (x / 3).astype(np.int32), 2 * x + 1)  # (C division)
    y = np.zeros_like(x)
    tilework.jit(k_branchy.fn, interpret=True)[(1,)](x, y, BLOCK=256)
    np.testing.assert_array_equal(y, want)
    emu = Emulator.from_kernel(k_branchy, {"X": P(tl.int32), "Y": P(tl.int32)},
                               {"BLOCK": 256}, "gfx942", num_warps=2)
    y = np.zeros_like(x)
    emu.run((1, 1, 1), x, y)
    np.testing.assert_array_equal(y, want)


@tilework.jit
def sum_prod2(x0, x1, y0, y1):
    """pack=2: both elements of x, then both of y; both sums, then both products."""
    return x0 + y0, x1 + y1, x0 * y0, x1 * y1


@tilework.jit
def k_pack2(X, Y, S, M, R: tl.constexpr, C: tl.constexpr):
    x = tl.load(X + tl.arange(0, R))[:, None]
    y = tl.load(Y + tl.arange(0, C))[None, :]
    s, m = tl.map_elementwise(sum_prod2, x, y, pack=2)
    o = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(S + o, s)
    tl.store(M + o, m)


def test_pack2_two_results_broadcast():
    rng = np.random.default_rng(3)
    x = rng.integers(-1000, 1000, 16).astype(np.int32)
    y = rng.integers(-1000, 1000, 32).astype(np.int32)
    ws, wm = x[:, None] + y[None, :], x[:, None] * y[None, :]
    s, m = np.zeros((16, 32), np.int32), np.zeros((16, 32), np.int32)
    tilework.jit(k_pack2.fn, interpret=True)[(1,)](x, y, s, m, R=16, C=32)
    np.testing.assert_array_equal(s, ws)
    np.testing.assert_array_equal(m, wm)
    sig = {"X": P(tl.int32), "Y": P(tl.int32), "S": P(tl.int32), "M": P(tl.int32)}
    ck = compile(ASTSource(k_pack2, sig, {"R": 16, "C": 32}, {}), "sm_90a", cache=False)
    assert "pack = 2 : i32" in ck.asm["tile"]
    s, m = np.zeros((16, 32), np.int32), np.zeros((16, 32), np.int32)
    gpu_sim.run(ck, (1, 1, 1), x, y, s, m)
    np.testing.assert_array_equal(s, ws)
    np.testing.assert_array_equal(m, wm)


@tilework.jit
def not_jit_target(x):
    return x


def plain(x):
    return x


@tilework.jit
def returns_three(x0, x1):
    return x0, x1, x0


@tilework.jit
def mixed_pack(x0, x1):
    return x0, x1.to(tl.float32)


@tilework.jit
def k_plain(X, Y):
    o = tl.arange(0, 16)
    tl.store(Y + o, tl.map_elementwise(plain, tl.load(X + o)))


@tilework.jit
def k_three(X, Y):
    o = tl.arange(0, 16)
    tl.store(Y + o, tl.map_elementwise(returns_three, tl.load(X + o), pack=2))


@tilework.jit
def k_mixed(X, Y):
    o = tl.arange(0, 16)
    tl.store(Y + o, tl.map_elementwise(mixed_pack, tl.load(X + o), pack=2))


@pytest.mark.parametrize("kernel, msg", [
    (k_plain, "tl.map_elementwise needs a @jit function, got 'plain'"),
    (k_three, "with pack=2 the function returns pack values per result, got 3"),
    (k_mixed, "the function's results disagree in type across the 2 packed elements"),
], ids=["plain", "three", "mixed"])
def test_rejects(kernel, msg):
    with pytest.raises(tilework.CompilationError, match=msg):
        compile(ASTSource(kernel, {"X": P(tl.int32), "Y": P(tl.int32)}, {}, {}), "sm_90a",
                cache=False)
    if kernel is not k_plain:  # (the interpreter runs any Python function)
        x = np.arange(16, dtype=np.int32)
        with pytest.raises(Exception, match=msg):
            tilework.jit(kernel.fn, interpret=True)[(1,)](x, np.zeros_like(x))


@tilework.jit
def returns_nothing(x):
    x + 1


@tilework.jit
def returns_tile(x):
    return tl.zeros([4], tl.int32) + x


@tilework.jit
def k_bad(X, Y, WHAT: tl.constexpr):
    o = tl.arange(0, 16)
    x = tl.load(X + o)
    if WHAT == "pack":
        y = tl.map_elementwise(third_or_odd, x, pack=0)
    elif WHAT == "none":
        y = tl.map_elementwise(returns_nothing, x)
    else:
        y = tl.map_elementwise(returns_tile, x)
    tl.store(Y + o, y)


@pytest.mark.parametrize("what, msg", [
    ("pack", "tl.map_elementwise: pack must be a positive int, got 0"),
    ("none", "tl.map_elementwise: the function must return a value (or a tuple of values)"),
    ("tile", "tl.map_elementwise: the function must return scalars"),
])
def test_rejects_results(what, msg):
    with pytest.raises(tilework.CompilationError, match=re.escape(msg)):
        compile(ASTSource(k_bad, {"X": P(tl.int32), "Y": P(tl.int32)}, {"WHAT": what}, {}),
                "sm_90a", cache=False)


@tilework.jit
def k_in_loop(X, Y, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.int32)
    for k in range(n):
        o = k * BLOCK + tl.arange(0, BLOCK)
        acc += tl.map_elementwise(third_or_odd, tl.load(X + o))
    tl.store(Y + tl.arange(0, BLOCK), acc)


def test_inside_a_loop():
    x = np.random.default_rng(4).integers(-1000, 1000, 4 * 128).astype(np.int32)
    f = np.where(x % 3 == 0, (x / 3).astype(np.int32), 2 * x + 1)
    want = f.reshape(4, 128).sum(0).astype(np.int32)
    y = np.zeros(128, np.int32)
    tilework.jit(k_in_loop.fn, interpret=True)[(1,)](x, y, 4, BLOCK=128)
    np.testing.assert_array_equal(y, want)
    sig = {"X": P(tl.int32), "Y": P(tl.int32), "n": tl.int32}
    ck = compile(ASTSource(k_in_loop, sig, {"BLOCK": 128}, {}), "sm_90a", cache=False)
    y = np.zeros(128, np.int32)
    gpu_sim.run(ck, (1, 1, 1), x, y, 4)
    np.testing.assert_array_equal(y, want)
