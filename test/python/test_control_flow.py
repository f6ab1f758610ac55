"""Control flow in kernels: runtime `if`/`elif`/`else`, `for` over range/tl.range/
tl.static_range, `while`, `return` inside runtime `if`s, and the rejected constructs.

Each kernel compiles for sm_90a and gfx942 (no GPU needed) and runs in the interpreter
against numpy on fresh random inputs, outputs poisoned first.  test_control_flow_gpu.py runs
the same kernels compiled, on a GPU."""
import os
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile
from located import line_of  # noqa: E402

THIS = os.path.abspath(__file__)
SENTINEL = -777
F32, I32, I64 = tl.pointer_type(tl.float32), tl.pointer_type(tl.int32), tl.pointer_type(tl.int64)


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def interp(fn):
    """`fn` as a kernel run by the CPU interpreter."""
    return tilework.jit(fn.fn, interpret=True)


def compile_both(fn, sig, constants=None, aligned=()):
    """Compiles for sm_90a and gfx942; returns {target: CompiledKernel}."""
    attrs = {p: {"tile.divisibility": 16} for p in aligned}
    out = {}
    for target in ("sm_90a", "gfx942"):
        ck = compile(ASTSource(fn, sig, constants or {}, attrs), target, cache=False)
        if target == "sm_90a":
            assert f".entry {fn.__name__}" in ck.asm["ptx"]
        else:
            assert f".amdhsa_kernel {fn.__name__}" in ck.asm["amdgcn"]
            assert ck.asm["hsaco"][:4] == b"\x7fELF"
        out[target] = ck
    return out


def poisoned(n, dtype):
    return np.full(n, np.nan if np.dtype(dtype).kind == "f" else SENTINEL, dtype)


# ---- for: every form of range, checked by the sequence the loop variable takes -------------

@tilework.jit
def _record(out_ptr, cnt, i):
    tl.store(out_ptr + 1 + cnt, i)
    return cnt + 1


@tilework.jit
def k_seq(out_ptr, start, end, step, MODE: tl.constexpr, STEP: tl.constexpr):
    cnt = 0  # a Python int carried by the loops: becomes a runtime int32
    if MODE == 0:
        for i in range(end):
            cnt = _record(out_ptr, cnt, i)
    elif MODE == 1:
        for i in range(start, end):
            cnt = _record(out_ptr, cnt, i)
    elif MODE == 2:
        for i in range(start, end, STEP):  # constexpr step, either sign
            cnt = _record(out_ptr, cnt, i)
    elif MODE == 3:
        for i in range(start, end, step):  # runtime step, either sign
            cnt = _record(out_ptr, cnt, i)
    elif MODE == 4:
        for i in tl.range(start, end, STEP, num_stages=3, loop_unroll_factor=2, flatten=True):
            cnt = _record(out_ptr, cnt, i)
    else:
        for i in tl.static_range(3, 11, STEP):
            cnt = _record(out_ptr, cnt, i)
    tl.store(out_ptr, cnt)


SEQ_SIG = {"out_ptr": I32, "start": tl.int32, "end": tl.int32, "step": tl.int32}
SEQ_CASES = [  # mode, start, end, step (runtime), STEP (constexpr)
    (0, 0, 13, 1, 1), (0, 0, 0, 1, 1), (0, 0, -4, 1, 1),
    (1, -5, 7, 1, 1), (1, 9, 3, 1, 1),
    (2, 2, 23, 1, 5), (2, 20, 2, 1, -3), (2, 20, 21, 1, -3), (2, -7, 11, 1, -2),
    (2, 11, -7, 1, -4),
    (3, 1, 30, 4, 1), (3, 30, 1, -4, 1), (3, 30, 1, 4, 1), (3, 5, 5, -1, 1), (3, 2, -9, -1, 1),
    (4, 3, 40, 1, 7), (4, 40, 3, 1, -7),
    (5, 0, 0, 1, 3), (5, 0, 0, 1, 2),
]


@pytest.mark.parametrize("mode, start, end, step, STEP", SEQ_CASES)
def test_range_sequences_interpreter(mode, start, end, step, STEP):
    out = poisoned(64, np.int32)
    interp(k_seq)[(1,)](out, start, end, step, MODE=mode, STEP=STEP)
    lo, hi = {0: (0, end), 5: (3, 11)}.get(mode, (start, end))
    st = step if mode == 3 else (1 if mode in (0, 1) else STEP)
    seq = list(range(lo, hi, st))
    want = np.array([len(seq)] + seq + [SENTINEL] * (63 - len(seq)), np.int32)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("mode, STEP", [(0, 1), (1, 1), (2, 5), (2, -3), (3, 1), (4, 7),
                                        (4, -7), (5, 3)])
def test_range_forms_compile(mode, STEP):
    cks = compile_both(k_seq, SEQ_SIG, {"MODE": mode, "STEP": STEP})
    tile = cks["sm_90a"].asm["tile"]
    if mode == 5:  # static_range: unrolled, no loop
        assert "scf.for" not in tile and tile.count('"tile.store"') == 4
    else:
        assert tile.count("scf.for") == 1, tile
    if mode == 4:
        assert re.search(r"tile.flatten, tile.loop_unroll_factor = 2 : i32, "
                         r"tile.num_stages = 3 : i32", tile), tile


@tilework.jit
def k_seq64(out_ptr, start, end):
    cnt = 0
    for i in range(start, end):  # int64 bounds: an int64 loop variable
        cnt = _record(out_ptr, cnt, i)
    tl.store(out_ptr, cnt)


def test_int64_loop_variable():
    tile = compile_both(k_seq64, {"out_ptr": I64, "start": tl.int64, "end": tl.int64})[
        "sm_90a"].asm["tile"]
    assert re.search(r"scf.for .* : i64", tile), tile
    out = poisoned(8, np.int64)
    interp(k_seq64)[(1,)](out, 2**33 + 1, 2**33 + 4)
    np.testing.assert_array_equal(out[:5], [3, 2**33 + 1, 2**33 + 2, 2**33 + 3, SENTINEL])


# ---- loop-carried tiles: a running sum over column blocks of a 2-D problem ------------------

@tilework.jit
def k_rowsum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for c in range(0, n_cols, BLOCK):
        acc += tl.load(x_ptr + row * stride + c + offs, mask=c + offs < n_cols, other=0.0)
    tl.store(out_ptr + row * BLOCK + offs, acc)


def rowsum_ref(x, n_cols, block):
    rows = x.shape[0]
    acc = np.zeros((rows, block), np.float32)
    for c in range(0, n_cols, block):
        part = x[:, c:c + block]
        acc[:, :part.shape[1]] += part
    return acc


ROWSUM_SIG = {"x_ptr": F32, "out_ptr": F32, "n_cols": tl.int32, "stride": tl.int32}


@pytest.mark.parametrize("n_cols", [0, 1, 100, 128, 333])
def test_rowsum_interpreter(rng, n_cols):
    rows, block = 5, 32
    x = (rng.standard_normal((rows, max(n_cols, 1))) * 10).astype(np.float32)
    out = poisoned(rows * block, np.float32)
    interp(k_rowsum)[(rows,)](x, out, n_cols, x.shape[1], BLOCK=block)
    np.testing.assert_allclose(out.reshape(rows, block), rowsum_ref(x, n_cols, block),
                               rtol=1e-6, atol=1e-5)


def test_rowsum_compiles_vectorized():
    cks = compile_both(k_rowsum, ROWSUM_SIG, {"BLOCK": 1024}, aligned=ROWSUM_SIG)
    # the loop variable is a multiple of BLOCK (its lower bound 0 and its step): the loads
    # in the loop stay 16-byte accesses
    assert "ld.global.v4.b32" in cks["sm_90a"].asm["ptx"]
    assert "global_load_dwordx4" in cks["gfx942"].asm["amdgcn"]


@tilework.jit
def k_pointer_walk(x_ptr, out_ptr, n_blocks, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ptrs = x_ptr + offs  # a carried tile of pointers, advanced each iteration
    acc = tl.zeros([BLOCK], tl.float32)
    for _ in range(n_blocks):
        acc += tl.load(ptrs)
        ptrs += BLOCK
    tl.store(out_ptr + offs, acc)


def test_pointer_walk(rng):
    sig = {"x_ptr": F32, "out_ptr": F32, "n_blocks": tl.int32}
    cks = compile_both(k_pointer_walk, sig, {"BLOCK": 512}, aligned=sig)
    # the carried pointers stay contiguous and 16-byte aligned (axis analysis fixed point)
    assert "ld.global.v4.b32" in cks["sm_90a"].asm["ptx"]
    x = rng.standard_normal((7, 64)).astype(np.float32)
    for n in (0, 7):
        out = poisoned(64, np.float32)
        interp(k_pointer_walk)[(1,)](x, out, n, BLOCK=64)
        np.testing.assert_allclose(out, x[:n].sum(0), rtol=1e-6, atol=1e-5)


@tilework.jit
def k_online_max_sum(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    """Carried scalars fed by reductions: the running max and sum of exp of a row (online
    softmax statistics), starting from Python floats."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = -float("inf")
    s = 0.0
    for c in range(0, n_cols, BLOCK):
        v = tl.load(x_ptr + row * stride + c + offs, mask=c + offs < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(v, 0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(v - m_new), 0)
        m = m_new
    tl.store(out_ptr + row * 2, m)
    tl.store(out_ptr + row * 2 + 1, s)


@tilework.jit
def k_rowsum_2d(x_ptr, out_ptr, n_cols, stride, BM: tl.constexpr, BN: tl.constexpr):
    """A carried tile produced by a reduction of 2-D tiles (a slice layout in the loop)."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    acc = tl.zeros([BM], tl.float32)
    for c in range(0, n_cols, BN):
        v = tl.load(x_ptr + rows[:, None] * stride + (c + cols)[None, :],
                    mask=(c + cols)[None, :] < n_cols, other=0.0)
        acc += tl.sum(v, axis=1)
    tl.store(out_ptr + rows, acc)


def test_loops_with_reductions(rng):
    compile_both(k_online_max_sum, ROWSUM_SIG, {"BLOCK": 128})
    compile_both(k_rowsum_2d, ROWSUM_SIG, {"BM": 16, "BN": 64})
    x = rng.standard_normal((32, 300)).astype(np.float32)
    out = poisoned(64, np.float32)
    interp(k_online_max_sum)[(32,)](x, out, 300, 300, BLOCK=128)
    m = x.max(1)
    np.testing.assert_array_equal(out[0::2], m)
    np.testing.assert_allclose(out[1::2], np.exp(x - m[:, None]).sum(1), rtol=1e-5)
    out = poisoned(32, np.float32)
    interp(k_rowsum_2d)[(2,)](x, out, 300, 300, BM=16, BN=64)
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-5, atol=1e-5)


@tilework.jit
def k_nested(out_ptr, n, m):
    total = 0
    count = 0
    for i in range(n):
        for j in range(i, m):
            total += i * j + 1
        count += 1
    tl.store(out_ptr, total)
    tl.store(out_ptr + 1, count)


def test_nested_loops():
    compile_both(k_nested, {"out_ptr": I32, "n": tl.int32, "m": tl.int32})
    for n, m in ((0, 5), (6, 0), (7, 11), (13, 4)):
        out = poisoned(2, np.int32)
        interp(k_nested)[(1,)](out, n, m)
        want = sum(i * j + 1 for i in range(n) for j in range(i, m))
        np.testing.assert_array_equal(out, [want, n])


# ---- runtime if / elif / else producing tiles and scalars -----------------------------------

@tilework.jit
def k_branches(x_ptr, sel_ptr, out_ptr, s_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    sel = tl.load(sel_ptr + pid)
    scale = 1.0
    if sel == 0:
        y = x * 2.0
        s = 1  # a Python number merged with the fp32 of the other branch: fp32
    elif sel == 1:
        y = x + 1.0
        s = 2.5
        scale = 3.0
    else:
        y = -x
        s = sel.to(tl.float32)
    if sel > 5:  # no else: `y` keeps its value on the other path
        y = y * 0.5
    tl.store(out_ptr + offs, y * scale)
    tl.store(s_ptr + pid, s)


def branches_ref(x, sel, block):
    y = x.reshape(-1, block).copy()
    s = np.zeros(len(sel), np.float32)
    for p, v in enumerate(sel):
        if v == 0:
            y[p], s[p] = y[p] * 2, 1
        elif v == 1:
            y[p], s[p] = (y[p] + 1) * 3, 2.5
        else:
            y[p], s[p] = -y[p], v
        if v > 5:
            y[p] = y[p] * np.float32(0.5)
    return y.reshape(-1), s


def test_branches(rng):
    block, progs = 16, 12
    sig = {"x_ptr": F32, "sel_ptr": I32, "out_ptr": F32, "s_ptr": F32}
    tile = compile_both(k_branches, sig, {"BLOCK": block})["sm_90a"].asm["tile"]
    assert tile.count("scf.if") == 3, tile
    x = (rng.standard_normal(block * progs) * 10).astype(np.float32)
    sel = rng.integers(0, 9, progs).astype(np.int32)
    sel[:3] = [0, 1, 7]
    out, s = poisoned(block * progs, np.float32), poisoned(progs, np.float32)
    interp(k_branches)[(progs,)](x, sel, out, s, BLOCK=block)
    want_y, want_s = branches_ref(x, sel, block)
    np.testing.assert_array_equal(out, want_y)
    np.testing.assert_array_equal(s, want_s)


@tilework.jit
def k_mixed(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """`if` inside a loop, a loop inside an `if`; a carried fp32 that starts as a Python
    float (-inf)."""
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    best = -float("inf")
    for i in range(n):
        v = tl.load(x_ptr + i * BLOCK + offs)
        t = tl.load(x_ptr + i * BLOCK)
        if t > best:
            best = t
            acc = v
        else:
            acc = acc + v * 0.5
    if n > 2:
        k = 0
        while k < n:
            acc = acc + 1.0
            k += 2
    tl.store(out_ptr + offs, acc)
    tl.store(out_ptr + BLOCK, best)


def mixed_ref(x, n, block):
    acc, best = np.zeros(block, np.float32), np.float32(-np.inf)
    for i in range(n):
        v = x[i]
        if v[0] > best:
            best, acc = v[0], v.copy()
        else:
            acc = acc + v * np.float32(0.5)
    if n > 2:
        for _ in range(0, n, 2):
            acc = acc + np.float32(1)
    return np.concatenate([acc, [best]]).astype(np.float32)


def test_mixed(rng):
    compile_both(k_mixed, {"x_ptr": F32, "out_ptr": F32, "n": tl.int32}, {"BLOCK": 32})
    x = (rng.standard_normal((9, 32)) * 10).astype(np.float32)
    for n in (0, 1, 5, 9):
        out = poisoned(33, np.float32)
        interp(k_mixed)[(1,)](x, out, n, BLOCK=32)
        np.testing.assert_array_equal(out, mixed_ref(x, n, 32))


# ---- while ----------------------------------------------------------------------------------

@tilework.jit
def k_collatz(x_ptr, out_ptr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    tl.store(out_ptr + pid, steps)


def collatz_ref(v):
    n = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        n += 1
    return n


def test_while_collatz(rng):
    compile_both(k_collatz, {"x_ptr": I32, "out_ptr": I32})
    x = rng.integers(1, 5000, 20).astype(np.int32)
    x[0] = 1  # zero iterations
    out = poisoned(20, np.int32)
    interp(k_collatz)[(20,)](x, out)
    np.testing.assert_array_equal(out, [collatz_ref(int(v)) for v in x])


@tilework.jit
def k_while_tile(x_ptr, out_ptr, n_iter, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + offs)
    i = 0
    while i < n_iter:
        acc = acc * 0.5 + 1.0
        i += 1
    tl.store(out_ptr + offs, acc)


def test_while_tile(rng):
    compile_both(k_while_tile, {"x_ptr": F32, "out_ptr": F32, "n_iter": tl.int32},
                 {"BLOCK": 64})
    x = (rng.standard_normal(64) * 10).astype(np.float32)
    for n in (0, 1, 6):
        out = poisoned(64, np.float32)
        interp(k_while_tile)[(1,)](x, out, n, BLOCK=64)
        want = x.copy()
        for _ in range(n):
            want = want * np.float32(0.5) + np.float32(1)
        np.testing.assert_array_equal(out, want)


# ---- return inside runtime `if`s -------------------------------------------------------------

@tilework.jit
def _scaled(v, lim):
    if lim < 0:
        return v * 0.0 - 1.0
    if lim == 0:
        return v
    return v * lim


@tilework.jit
def _sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    return 0


@tilework.jit
def k_early_exit(x_ptr, lim_ptr, out_ptr, sign_ptr, n_progs, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= n_progs:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    lim = tl.load(lim_ptr + pid)
    tl.store(out_ptr + offs, _scaled(tl.load(x_ptr + offs), lim))
    tl.store(sign_ptr + pid, _sign(lim))


def test_early_returns(rng):
    block, progs, live = 8, 10, 7
    sig = {"x_ptr": F32, "lim_ptr": F32, "out_ptr": F32, "sign_ptr": I32, "n_progs": tl.int32}
    compile_both(k_early_exit, sig, {"BLOCK": block})
    x = (rng.standard_normal(block * progs) * 10).astype(np.float32)
    lim = (rng.standard_normal(progs) * 3).astype(np.float32)
    lim[:2] = [0.0, -1.5]
    out, sign = poisoned(block * progs, np.float32), poisoned(progs, np.int32)
    interp(k_early_exit)[(progs,)](x, lim, out, sign, live, BLOCK=block)
    xs = x.reshape(progs, block)
    for p in range(progs):
        got = out[p * block:(p + 1) * block]
        if p >= live:  # exited early: nothing written
            assert np.isnan(got).all() and sign[p] == SENTINEL
            continue
        want = -np.ones(block, np.float32) if lim[p] < 0 else xs[p] if lim[p] == 0 \
            else xs[p] * lim[p]
        np.testing.assert_array_equal(got, want)
        assert sign[p] == np.sign(lim[p])


def test_early_exit_tile_ir():
    tile = compile(ASTSource(k_early_exit, {"x_ptr": F32, "lim_ptr": F32, "out_ptr": F32,
                                            "sign_ptr": I32, "n_progs": tl.int32},
                             {"BLOCK": 8}, {}), "sm_90a", cache=False).asm["tile"]
    # the kernel's tail runs in the else branch of the early exit; _scaled yields its value
    assert re.search(r"scf.if %\S+ \{\n\s*\} else \{", tile), tile
    assert "-> (tensor<8xf32>)" in tile and "-> (i32)" in tile


@tilework.jit
def _clamp(v, hi):
    if v > hi:
        return hi
    return v


@tilework.jit
def _ordered(a, b):
    if a > b:
        return b, a  # tuples merge leaf by leaf
    return a, b


@tilework.jit
def _one_or_half(c):
    if c > 0:
        return 1
    return 2.5  # with the 1 of the other path: an fp32 result


@tilework.jit
def k_misc(out_ptr, n, m, EXIT: tl.constexpr):
    """Tuples and Python ints carried by a loop, a helper with early returns called in a
    loop, an early exit under a constexpr `if`, four nested loops, a float condition."""
    if EXIT:
        if tl.program_id(0) > 0:
            return
    a, b = 0, 1
    t = (0, 1)
    acc = 0
    for i in range(n):
        a, b = b, a + b
        t = (t[1], t[0] + t[1])
        acc += _clamp(i, m)
    lo, hi = _ordered(n, m)
    x = 0
    for i in range(2):
        for j in range(2):
            for k in range(2):
                for q in range(n):
                    x += i + j + k + q
    f = 0
    if (n * 0.5).to(tl.float32):
        f = 1
    vals = (a, t[0], acc, lo, hi, tl.cast(_one_or_half(n) * 2, tl.int32), x, f)
    for k in tl.static_range(len(vals)):  # k is a constexpr: it indexes the tuple
        tl.store(out_ptr + k, vals[k])


def misc_ref(n, m):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    nest = sum(i + j + k + q for i in range(2) for j in range(2) for k in range(2)
               for q in range(n))
    return [a, a, sum(min(i, m) for i in range(n)), min(n, m), max(n, m), 2 if n > 0 else 5,
            nest, int(n != 0), SENTINEL]


@pytest.mark.parametrize("n, m", [(10, 4), (0, 3), (3, -1)])
def test_misc(n, m):
    compile_both(k_misc, {"out_ptr": I32, "n": tl.int32, "m": tl.int32}, {"EXIT": True})
    out = poisoned(9 * 2, np.int32)
    interp(k_misc)[(2,)](out, n, m, EXIT=True)
    np.testing.assert_array_equal(out[:9], misc_ref(n, m))
    assert (out[9:] == SENTINEL).all()


# ---- interpreter: tl.range / tl.static_range iterate like Python's range ---------------------

def test_language_iterators_outside_kernels():
    assert list(tl.range(3)) == [0, 1, 2]
    assert list(tl.range(10, 0, -4, num_stages=2)) == [10, 6, 2]
    assert list(tl.static_range(2, 7, 2)) == [2, 4, 6]
    assert list(tl.static_range(tl.constexpr(3))) == [0, 1, 2]


# ---- rejected constructs: message and line ---------------------------------------------------



def expect(fn, message, where=None):
    """Compiling `fn` fails with `message` at the `# MARK` line of `where` (default `fn`)."""
    sig = {"x": F32, "n": tl.int32}
    with pytest.raises(CompilationError) as ei:
        compile(ASTSource(fn, sig, {}, {}), "sm_90a", cache=False)
    e = ei.value
    assert message in e.message, e.message
    assert os.path.abspath(e.filename) == THIS
    assert e.lineno == line_of(where or fn, "# MARK"), (e.lineno, str(e))
    assert "^" in str(e) and "Traceback" not in str(e)
    return e


@tilework.jit
def e_carried_dtype(x, n):
    v = tl.load(x)
    for i in range(n):
        v = v.to(tl.float16)  # MARK


@tilework.jit
def e_carried_shape(x, n):
    v = tl.load(x)
    for i in range(n):
        v = v + tl.zeros([16], tl.float32)  # MARK


@tilework.jit
def e_carried_while(x, n):
    v = tl.zeros([16], tl.float32)
    i = 0
    while i < n:
        i += 1
        v = tl.zeros([16], tl.int32)  # MARK


@tilework.jit
def e_carried_number(x, n):
    k = 0.5
    for i in range(n):
        k = tl.load(x + i).to(tl.int32)  # MARK


@tilework.jit
def e_constexpr_in_loop(x, n):
    dt = tl.float32
    for i in range(n):
        dt = tl.float16  # MARK


@tilework.jit
def e_one_branch(x, n):
    if n > 0:
        y = 1.0
    tl.store(x, y)  # MARK


@tilework.jit
def e_branch_types(x, n):
    y = tl.load(x)
    if n > 0:
        y = y.to(tl.float16)  # MARK


@tilework.jit
def e_tile_if(x, n):
    if tl.arange(0, 16) < n:  # MARK
        tl.store(x, 1.0)


@tilework.jit
def e_tile_while(x, n):
    while tl.arange(0, 16) < n:  # MARK
        tl.store(x, 1.0)


@tilework.jit
def e_break(x, n):
    for i in range(n):
        break  # MARK


@tilework.jit
def e_continue(x, n):
    i = 0
    while i < n:
        i += 1
        continue  # MARK


@tilework.jit
def e_return_in_loop(x, n):
    for i in range(n):
        return  # MARK


@tilework.jit
def e_return_in_if_in_loop(x, n):
    for i in range(n):
        if i > 3:
            return  # MARK


@tilework.jit
def _half_return(v):
    if v > 0:
        return v  # MARK


@tilework.jit
def e_half_return(x, n):
    y = _half_return(n)


@tilework.jit
def _mixed_returns(v):
    if v > 0:
        return v
    return v.to(tl.float32)  # MARK


@tilework.jit
def e_mixed_returns(x, n):
    y = _mixed_returns(n)


@tilework.jit
def e_kernel_value(x, n):
    if n > 0:
        return n  # MARK


@tilework.jit
def e_loop_local(x, n):
    for i in range(n):
        t = i * 2
    tl.store(x, t)  # MARK


@tilework.jit
def e_loop_var(x, n):
    for i in range(n):
        pass
    tl.store(x, i)  # MARK


@tilework.jit
def e_float_bound(x, n):
    for i in range(tl.load(x)):  # MARK
        pass


@tilework.jit
def e_static_runtime(x, n):
    for i in tl.static_range(n):  # MARK
        pass


@tilework.jit
def e_zero_step(x, n):
    for i in range(0, n, 0):  # MARK
        pass


@tilework.jit
def e_while_true(x, n):
    while True:  # MARK
        tl.store(x, 1.0)


@tilework.jit
def e_for_iter(x, n):
    for i in (1, 2):  # MARK
        pass


@tilework.jit
def e_for_else(x, n):
    for i in range(n):  # MARK
        pass
    else:
        pass


@tilework.jit
def e_range_kwarg(x, n):
    for i in tl.range(n, num_stage=2):  # MARK
        pass


@pytest.mark.parametrize("fn, message", [
    (e_carried_dtype, "loop-carried value `v` changes type from fp32 to fp16"),
    (e_carried_shape, "loop-carried value `v` changes type from fp32 to fp32[16]"),
    (e_carried_while, "loop-carried value `v` changes type from fp32[16] to int32[16]"),
    (e_carried_number, "loop-carried value `k` changes type from fp32 to int32"),
    (e_constexpr_in_loop, "`dt` holds a compile-time value (the constexpr fp32) that cannot "
                          "change in a runtime loop"),
    (e_one_branch, "`y` is defined in only one branch of the `if`"),
    (e_branch_types, "Mismatched type for y between then block (fp16) and else block (fp32)"),
    (e_tile_if, "a tile of shape [16] has no single truth value (`if`, `while`): reduce it"),
    (e_tile_while, "a tile of shape [16] has no single truth value (`if`, `while`): reduce it"),
    (e_break, "`break` is not supported (as in Triton)"),
    (e_continue, "`continue` is not supported (as in Triton)"),
    (e_return_in_loop, "Cannot have `return` statements inside `while` or `for` statements "
                       "in triton: keep a flag in the loop and test it after"),
    (e_return_in_if_in_loop, "Cannot have `return` statements inside `while` or `for` "
                             "statements in triton: keep a flag in the loop and test it after"),
    (e_half_return, "returns a value on some paths and nothing on others"),
    (e_mixed_returns, "Inconsistent return types: int32 and fp32"),
    (e_kernel_value, "a kernel cannot return a value"),
    (e_loop_local, "`t` is assigned in a loop but not before it"),
    (e_loop_var, "the loop variable `i` is not defined after its loop"),
    (e_float_bound, "range() end must be an integer scalar, got fp32"),
    (e_static_runtime, "tl.static_range bounds must be constexpr ints"),
    (e_zero_step, "range() step must not be zero"),
    (e_while_true, "this `while` condition is always true"),
    (e_for_iter, "for loops iterate over range(), tl.range() or tl.static_range()"),
    (e_for_else, "`for ... else` is not supported"),
    (e_range_kwarg, "unexpected keyword argument 'num_stage'"),
])
def test_rejected(fn, message):
    expect(fn, message, {e_half_return: _half_return, e_mixed_returns: _mixed_returns}.get(fn))


@tilework.jit
def _ifexp_guarded_load(x_ptr, out_ptr, n):
    v = tl.load(x_ptr) if n > 0 else 0.0
    tl.store(out_ptr, v)


def test_conditional_expression_on_a_runtime_scalar_evaluates_one_side():
    """`a if c else b` with a runtime scalar `c` is an scf.if (only the chosen side runs, so a
    guarded load never reads out of bounds), as in Triton."""
    import numpy as np
    from tilework.compiler.driver import ASTSource, compile
    p = tl.pointer_type(tl.float32)
    ck = compile(ASTSource(_ifexp_guarded_load, {"x_ptr": p, "out_ptr": p, "n": tl.int32}, {},
                           {}), "sm_90a", cache=False)
    tile_ir = ck.asm["tile"]
    assert "scf.if" in tile_ir
    assert tile_ir.index("scf.if") < tile_ir.index("tile.load")  # the load is inside the if
    x = np.array([np.random.randn()], np.float32)
    for n, want in ((1, x[0]), (0, 0.0)):
        out = np.array([np.nan], np.float32)
        _ifexp_guarded_load.interpret = True
        try:
            _ifexp_guarded_load[(1,)](x, out, n)
        finally:
            _ifexp_guarded_load.interpret = False
        assert out[0] == want
