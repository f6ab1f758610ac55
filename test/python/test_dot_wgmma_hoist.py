"""A loop-invariant wgmma operand (attention's q) is written to its shared buffer once, before
the loops (tilegpu-warpgroup-dot, lowering/dot_wgmma_hoist.py), nested loops included: the
tilegpu IR, and the kernel run on the SIMT emulator (barriers, proxy fences and shared-memory
races checked) against numpy."""
import numpy as np
import pytest

import mlir.ir as ir

import tilework
import tilework.language as tl
from tilework.dialects import tile as T

from simt_emulator import Emulator

SM90A = "sm_90a"


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def _next(op):
    ops = [o.operation for o in op.block.operations]
    return ops[ops.index(op) + 1]


@tilework.jit
def invariant_dot(a_ptr, b_ptr, o_ptr, M: tl.constexpr, K: tl.constexpr, N: tl.constexpr,
                  OUTER: tl.constexpr, INNER: tl.constexpr):
    """a (loaded once) times blocks of b: in a loop with a column sum (cross-warp scratch in
    shared memory, live while a's buffer is), in a second loop, and in nested loops."""
    rm = tl.arange(0, M)
    rk = tl.arange(0, K)
    rn = tl.arange(0, N)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    acc = tl.zeros((M, N), dtype=tl.float32)
    for j in range(INNER):
        b = tl.load(b_ptr + j * K * N + rk[:, None] * N + rn[None, :])
        s = tl.dot(a, b)
        acc += s - tl.sum(s, 0)[None, :] * 0.125
    for j in range(INNER):
        b = tl.load(b_ptr + (INNER - 1 - j) * K * N + rk[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    for i in range(OUTER):
        for j in range(INNER):
            b = tl.load(b_ptr + (i * INNER + j) * K * N + rk[:, None] * N + rn[None, :])
            acc = tl.dot(a, b, acc)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc)


def _innermost_loop(op) -> bool:
    return op.name == "scf.for" and not any(o.name == "scf.for" for o in T.walk_ops(op)[1:])


@pytest.mark.parametrize("m, k, n, nw", [(64, 32, 64, 4), (128, 64, 64, 8)])
def test_invariant_operand_hoisted_emulated(m, k, n, nw, rng):
    outer, inner = 2, 3
    sig = dict(a_ptr=tl.pointer_type(tl.float16), b_ptr=tl.pointer_type(tl.float16),
               o_ptr=tl.pointer_type(tl.float32))
    emu = Emulator.from_kernel(invariant_dot, sig, dict(M=m, K=k, N=n, OUTER=outer,
                                                        INNER=inner), SM90A, num_warps=nw)
    # a's buffer: written once, before the first loop, and read by the wgmmas of all three
    # loop nests (the buffers hoisted before the second loop and before the outer of the nested
    # loops reuse it: _reuse_earlier), never in a loop
    with T.new_context():
        mod = ir.Module.parse(emu.compiled.asm["tilegpu"])
        allocs = [op for op in T.walk_ops(mod.operation) if op.name == "tilegpu.local_alloc"
                  and len(op.operands) and T.shape_of(op.operands[0].type) == (m, k)]
        nexts = []
        for op in allocs:
            nxt = op
            while nxt.name == "tilegpu.local_alloc":  # (b's pipeline buffers may come next)
                nxt = _next(nxt)
            nexts.append(nxt)
        assert [_innermost_loop(x) for x in nexts] == [True]
        assert allocs[0].parent.name == "func.func"
        loops = [op for op in T.walk_ops(mod.operation) if op.name == "scf.for"
                 and op.parent.name == "func.func"]
        readers = {next(lp for lp in loops if u.owner in T.walk_ops(lp))
                   for u in allocs[0].results[0].uses if u.owner.name == "tilegpu.warpgroup_dot"}
        assert len(loops) == 3 and len(readers) == 3
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((outer * inner, k, n)).astype(np.float16)
    o = np.zeros((m, n), np.float32)
    emu.run((1,), a, b, o)  # (the emulator checks the barriers, fences and shared-memory races)
    av, bv = a.astype(np.float64), b.astype(np.float64)
    ref = np.zeros((m, n))
    for j in range(inner):
        s = av @ bv[j]
        ref += s - s.sum(0)[None, :] * 0.125
    for j in range(inner):
        ref += av @ bv[j]
    for t in range(outer * inner):
        ref += av @ bv[t]
    np.testing.assert_allclose(o, ref, rtol=1e-4, atol=1e-2)
