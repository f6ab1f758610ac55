"""`tilegpu.memdesc_trans` (the transposed view of a shared buffer), the one buffer
tilegpu-warpgroup-dot gives a wgmma operand x and `tl.trans(x)`, and tilegpu-pipeline filling
that buffer by cp.async (the views read the slot): the view's layout predicate, a buffer read
through the view on the SIMT emulator, kernels with x and tl.trans(x) as wgmma operands
(`x @ x^T` kept in flight, an attention-like loop with two dots) emulated against numpy, and
the attention backward's loops on sm_90a."""
import re

import numpy as np
import pytest

import mlir.ir as ir

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.dialects import tile as T
from tilework.dialects.ir_types import MemDesc
from tilework.dialects.layout_nvidia import NvmmaShared, SwizzledShared
from tilework.dialects.opdefs.shared import transposed_view

from simt_emulator import EmulationError, Emulator
from test_shared_memory import PIPELINE, Kernel, layouts, random_input

SM90A = "sm_90a"
DIV16 = {"tile.divisibility": 16}


# ---- the view's layout -----------------------------------------------------------------------

def _md(shape, elem, layout):
    return MemDesc(tuple(shape), elem, layout.text(), 1)


@pytest.mark.parametrize("bits, sw", [(16, 128), (16, 64), (16, 32), (16, 0), (32, 128),
                                      (8, 128), (8, 32)])
@pytest.mark.parametrize("transposed", [False, True])
def test_nvmma_view_flips_transposed(bits, sw, transposed):
    with T.new_context():
        elem = {8: ir.IntegerType.get_signless(8), 16: ir.F16Type.get(),
                32: ir.F32Type.get()}[bits]
        width = (sw or 128) * 8 // bits  # elements of the contiguous dim's columns
        shape = (2 * width, 8) if transposed else (8, 2 * width)  # (not square)
        src = _md(shape, elem, NvmmaShared(sw, transposed, bits))
        flip = _md(shape[::-1], elem, NvmmaShared(sw, not transposed, bits))
        same = _md(shape[::-1], elem, NvmmaShared(sw, transposed, bits))
        assert transposed_view(src, flip) and transposed_view(flip, src)
        assert not transposed_view(src, same)
        assert not transposed_view(src, _md(shape, elem, NvmmaShared(sw, not transposed,
                                                                     bits)))


def test_swizzled_view_reverses_order():
    with T.new_context():
        f32 = ir.F32Type.get()
        for vec, pp, mp in [(4, 1, 8), (2, 2, 4), (1, 1, 1)]:
            src = _md((16, 32), f32, SwizzledShared(vec, pp, mp, (1, 0)))
            good = _md((32, 16), f32, SwizzledShared(vec, pp, mp, (0, 1)))
            bad = _md((32, 16), f32, SwizzledShared(vec, pp, mp, (1, 0)))
            assert transposed_view(src, good)
            assert not transposed_view(src, bad)
        # row-major buffers have no view; neither do other element types or buffer counts
        assert not transposed_view(MemDesc((16, 32), f32, "unit", 1),
                                   MemDesc((32, 16), f32, "unit", 1))
        src = _md((16, 32), f32, SwizzledShared(4, 1, 8, (1, 0)))
        assert not transposed_view(src, MemDesc((32, 16), ir.F16Type.get(),
                                                SwizzledShared(4, 1, 8, (0, 1)).text(), 1))
        assert not transposed_view(src, MemDesc((32, 16), f32,
                                                SwizzledShared(4, 1, 8, (0, 1)).text(), 2))


# ---- a buffer read through the view (emulated) ---------------------------------------------

VIEWS = [  # (elem, the buffer's layout, the view's layout) on x [32, 64]
    ("f16", "#tilegpu.nvmma_shared<128 : i32, false, 16 : i32>",
     "#tilegpu.nvmma_shared<128 : i32, true, 16 : i32>"),
    ("f16", "#tilegpu.nvmma_shared<64 : i32, false, 16 : i32>",
     "#tilegpu.nvmma_shared<64 : i32, true, 16 : i32>"),
    ("f32", "#tilegpu.swizzled_shared<4 : i32, 1 : i32, 8 : i32, array<i32: 1, 0>>",
     "#tilegpu.swizzled_shared<4 : i32, 1 : i32, 8 : i32, array<i32: 0, 1>>"),
]


def view_kernel(elem, layout, view, first, second):
    """x [32, 64] (register layout `first`) -> local_alloc in `layout` -> memdesc_trans ->
    local_load [64, 32] (`second`) -> out = x^T."""
    k = Kernel((32, 64), elem, 32, layout)
    x = k.load("%x", first)
    m = k.emit(f'"tilegpu.local_alloc"({x}) : ({k.ty(first)}) -> {k.md()}')
    src_md = k.md()
    k.shape, k.md_layout = (64, 32), view
    t = k.emit(f'"tilegpu.memdesc_trans"({m}) : ({src_md}) -> {k.md()}')
    y = k.emit(f'"tilegpu.local_load"({t}) : ({k.md()}) -> {k.ty(second)}')
    k.store("%o", y, second)
    k.stmt(f'"tilegpu.local_dealloc"({m}) : ({src_md}) -> ()')
    p = f"!tile.ptr<{elem}>"
    return k.module("view", [("x", p), ("o", p)])


@pytest.mark.parametrize("elem, layout, view", VIEWS)
@pytest.mark.parametrize("swap", [False, True])
def test_read_through_view_emulated(elem, layout, view, swap):
    """The rule is the buffer's address: the view's layout reads the bytes transposed."""
    a, b = layouts(32)
    first, second = (b, a) if swap else (a, b)
    emu = Emulator.from_tilegpu(view_kernel(elem, layout, view, first, second), "sm_80", 4,
                                PIPELINE)
    x = random_input((32, 64), elem, hash((elem, layout, swap)) % 1000)
    out = np.zeros((64, 32), x.dtype)
    emu.run((1,), x, out)
    np.testing.assert_array_equal(out, x.T)
    assert emu.shared == x.nbytes  # (one buffer)


def test_read_through_view_needs_the_barrier():
    """Without tilegpu-insert-barriers the view's reads race with the buffer's writes (the
    pass, following the view to its buffer, puts the barrier between them)."""
    a, b = layouts(32)
    elem, layout, view = VIEWS[0]
    emu = Emulator.from_tilegpu(view_kernel(elem, layout, view, a, b), "sm_80", 4,
                                ("tilegpu-allocate-shared", "tilegpu-to-llvm"))
    x = random_input((32, 64), elem, 0)
    with pytest.raises(EmulationError, match="shared-memory race"):
        emu.run((1,), x, np.zeros((64, 32), x.dtype))


# ---- x and tl.trans(x) as wgmma operands -------------------------------------------------

@tilework.jit
def gram(x_ptr, c_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
         STAGES: tl.constexpr):
    """C = X @ X^T for BLOCK_M rows of X [M, K]: one dot reads x and its transpose."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    ptrs = x_ptr + offs_m[:, None] * K + offs_k[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_M), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=STAGES):
        x = tl.load(ptrs, mask=(k * BLOCK_K + offs_k)[None, :] < K, other=0.0)
        acc = tl.dot(x, tl.trans(x), acc)
        ptrs += BLOCK_K
    tl.store(c_ptr + offs_m[:, None] * M + offs_m[None, :], acc)


@tilework.jit
def two_dots(x_ptr, p_ptr, w_ptr, acc_ptr, s_ptr, N, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, D: tl.constexpr, STAGES: tl.constexpr,
             TRANS_FIRST: tl.constexpr):
    """The attention backward's pattern: x = X[j:j+BLOCK_N] feeds acc += P[:, j:] @ x and
    S[:, j:] = W @ x^T (in either order)."""
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    w = tl.load(w_ptr + offs_m[:, None] * D + offs_d[None, :])
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    for j in tl.range(0, N, BLOCK_N, num_stages=STAGES):
        x = tl.load(x_ptr + (j + offs_n)[:, None] * D + offs_d[None, :])
        p = tl.load(p_ptr + offs_m[:, None] * N + (j + offs_n)[None, :])
        if TRANS_FIRST:
            s = tl.dot(w, tl.trans(x))
            acc = tl.dot(p, x, acc)
        else:
            acc = tl.dot(p, x, acc)
            s = tl.dot(w, tl.trans(x))
        tl.store(s_ptr + offs_m[:, None] * N + (j + offs_n)[None, :], s)
    tl.store(acc_ptr + offs_m[:, None] * D + offs_d[None, :], acc)


def build_gram(stages, bm=64, bk=64, nw=4):
    P = tl.pointer_type
    sig = dict(x_ptr=P(tl.float16), c_ptr=P(tl.float32), M=tl.int32, K=tl.int32)
    return compile(ASTSource(gram, sig, dict(BLOCK_M=bm, BLOCK_K=bk, STAGES=stages),
                             {p: DIV16 for p in ("x_ptr", "c_ptr", "M", "K")}),
                   SM90A, CompileOptions(num_warps=nw, num_stages=stages), cache=False)


def build_two_dots(stages, d, trans_first, bm=64, bn=64, nw=4):
    P = tl.pointer_type
    sig = dict(x_ptr=P(tl.float16), p_ptr=P(tl.float16), w_ptr=P(tl.float16),
               acc_ptr=P(tl.float32), s_ptr=P(tl.float32), N=tl.int32)
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, D=d, STAGES=stages, TRANS_FIRST=trans_first)
    return compile(ASTSource(two_dots, sig, consts, {p: DIV16 for p in sig}),
                   SM90A, CompileOptions(num_warps=nw, num_stages=stages), cache=False)


def loop_ops(text):
    """The names of the tilegpu/tile ops in the (first) loop body, in order."""
    i = text.index("scf.for")
    j = text.index("scf.yield", i)
    return re.findall(r'"((?:tilegpu|tile)\.\w+)"', text[i:j])


def views_of_slots(text):
    """How many memdesc_trans in the loop read a memdesc_index (a slot) of a buffer allocated
    before the loop with num_stages buffers."""
    with T.new_context():
        mod = ir.Module.parse(text)
        loop = next(op for op in T.walk_ops(mod.operation) if op.name == "scf.for")
        n = 0
        for op in T.walk_ops(loop):
            if op.name == "tilegpu.memdesc_trans":
                src = op.operands[0].owner
                assert src.name == "tilegpu.memdesc_index", src.name
                assert src.operands[0].owner.name == "tilegpu.local_alloc"
                assert T.memdesc_of(src.operands[0].type).buffers > 1
                n += 1
        return n


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("k", [256, 200, 64])
def test_gram_in_flight_emulated(stages, k):
    """x @ x^T: the one dot reads a slot and its view, so it stays in flight (the copies of
    iteration k + S - 1 after wgmma(k-1) is done); K tails and one iteration."""
    ck = build_gram(stages)
    text = ck.asm["tilegpu"]
    ops = loop_ops(text)
    assert "tile.load" not in ops and "tilegpu.local_alloc" not in ops
    assert ops.count("tilegpu.memdesc_trans") == 1 and views_of_slots(text) == 1
    assert ops.index("tilegpu.warpgroup_wait") < ops.index("tilegpu.async_copy")
    assert "cp.async.cg.shared.global" in ck.asm["ptx"]
    rng = np.random.default_rng(stages * 1000 + k)
    x = rng.standard_normal((64, k)).astype(np.float16)
    c = np.full((64, 64), 7, np.float32)
    Emulator.from_tilegpu(text, SM90A, 4).run((1,), x, c, 64, k)
    ref = x.astype(np.float64) @ x.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


def test_gram_two_warpgroups_emulated():
    """8 warps (two warpgroups along M, 128 rows): each warpgroup's wgmma reads the slot
    through the view until its own wait, so the barrier after the wait orders the copies
    after both (the emulator checks the wgmma reads and the races)."""
    ck = build_gram(3, bm=128, nw=8)
    text = ck.asm["tilegpu"]
    assert views_of_slots(text) == 1 and '"tilegpu.warpgroup_wait"' in text
    rng = np.random.default_rng(8)
    x = rng.standard_normal((128, 192)).astype(np.float16)
    c = np.full((128, 128), 7, np.float32)
    Emulator.from_tilegpu(text, SM90A, 8).run((1,), x, c, 128, 192)
    ref = x.astype(np.float64) @ x.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("stages, d, trans_first", [(2, 64, False), (3, 64, True),
                                                    (3, 128, False), (2, 128, True)])
def test_two_dots_one_buffer_emulated(stages, d, trans_first):
    """x feeds a dot directly and one through tl.trans: one multi-buffered slot filled by
    cp.async, read by both (the second through memdesc_trans); the dots stay synchronous and
    the barriers order every thread's reads of the slot before its next copy."""
    ck = build_two_dots(stages, d, trans_first)
    text = ck.asm["tilegpu"]
    ops = loop_ops(text)
    assert "tile.load" not in ops and "tile.trans" not in ops
    assert ops.count("tilegpu.memdesc_trans") == 1 and views_of_slots(text) == 1
    assert ops.count("tilegpu.local_alloc") == 0  # (w is written once, before the loop)
    assert "tilegpu.warpgroup_wait" not in ops
    n = 256
    rng = np.random.default_rng(stages + d + trans_first)
    x = rng.standard_normal((n, d)).astype(np.float16)
    p = rng.standard_normal((64, n)).astype(np.float16)
    w = rng.standard_normal((64, d)).astype(np.float16)
    acc = np.full((64, d), 7, np.float32)
    s = np.full((64, n), 7, np.float32)
    Emulator.from_tilegpu(text, SM90A, 4).run((1,), x, p, w, acc, s, n)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(acc, p.astype(np.float64) @ x64, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(s, w.astype(np.float64) @ x64.T, rtol=1e-4, atol=1e-3)


def test_two_dots_one_buffer_without_pipelining():
    """num_stages 1: no slots, still one buffer (x is written to shared memory once) and a
    view of it, live until the later dot's read."""
    ck = build_two_dots(1, 64, True)
    text = ck.asm["tilegpu"]
    ops = loop_ops(text)
    assert ops.count("tile.load") == 2 and "tile.trans" not in ops
    assert ops.count("tilegpu.local_alloc") == 2  # (x and p)
    assert ops.count("tilegpu.memdesc_trans") == 1
    # the view (the first dot's B) comes after x's alloc, which moved up to it
    i = ops.index("tilegpu.memdesc_trans")
    assert ops[i - 1] == "tilegpu.local_alloc"
    rng = np.random.default_rng(5)
    x = rng.standard_normal((128, 64)).astype(np.float16)
    p = rng.standard_normal((64, 128)).astype(np.float16)
    w = rng.standard_normal((64, 64)).astype(np.float16)
    acc = np.zeros((64, 64), np.float32)
    s = np.zeros((64, 128), np.float32)
    Emulator.from_tilegpu(text, SM90A, 4).run((1,), x, p, w, acc, s, 128)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(acc, p.astype(np.float64) @ x64, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(s, w.astype(np.float64) @ x64.T, rtol=1e-4, atol=1e-3)


# ---- the attention backward (compile-only, sm_90a) -----------------------------------------

def _bwd_loops(which, d, causal):
    """(the compiled kernel, [(loop, its body's ops)] of the loops holding the dots)."""
    from test_attention import compile_bwd
    ck = compile_bwd(SM90A, which, d, causal)
    ctx = T.new_context()
    with ctx:
        mod = ir.Module.parse(ck.asm["tilegpu"])
        loops = [op for op in T.walk_ops(mod.operation) if op.name == "scf.for" and any(
            o.name in ("tilegpu.warpgroup_dot", "tile.dot") for o in T.walk_ops(op)
            if o.parent == op)]
        return ck, [(str(loop), [o for o in T.walk_ops(loop) if o.parent == loop])
                    for loop in loops], ctx, mod


def _loaded(v):
    """The tile.load a value comes from through tile.trans, else None."""
    while not isinstance(v.owner, ir.Block) and v.owner.name == "tile.trans":
        v = v.owner.operands[0]
    return None if isinstance(v.owner, ir.Block) or v.owner.name != "tile.load" else v.owner


BWD = [("dkdv", 64), ("dkdv", 128), ("dq", 64), ("dq", 128)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("which, d", BWD)
def test_backward_loops_write_each_tile_once(which, d, causal):
    """In the key/query loops no tile loaded there is written to shared memory twice (x and
    tl.trans(x) share a buffer), and every such tile a wgmma reads whose copies could be
    cp.async (4 bytes or more a thread) arrives by cp.async: no such tile.load is left."""
    ck, loops, ctx, mod = _bwd_loops(which, d, causal)
    with ctx:
        assert loops
        for _, ops in loops:
            allocs = [o for o in ops if o.name == "tilegpu.local_alloc" and len(o.operands)]
            sources = [_loaded(o.operands[0]) for o in allocs]
            sources = [s for s in sources if s is not None and s in ops]  # (k, v: invariant)
            assert len(sources) == len(set(sources)), "a loaded tile written twice"
            for load in sources:
                width = ir.IntegerAttr(load.attributes["tilegpu.vector_width"]).value
                elem = T.element_type(load.results[0].type)
                assert width * ir.FloatType(elem).width // 8 < 4, \
                    f"a copyable load left in the loop: {load}"


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("which, d", [
    ("dkdv", 64), ("dkdv", 128),  # (D=128's config is 32 x 32: mma.sync, copied already)
    ("dq", 64), ("dq", 128)])  # (kT, vT: coalesced along D by layout_hints, then copied)
def test_backward_loops_copy_by_cp_async(which, d, causal):
    """The key/query loops' operands arrive by cp.async; dK/dV's do (D=64: N-major for dV,
    K-major through tl.trans for dP^T) is one slot read directly and through memdesc_trans."""
    ck, loops, ctx, mod = _bwd_loops(which, d, causal)
    ptx = ck.asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx
    with ctx:
        for text, ops in loops:
            names = [o.name for o in ops]
            assert "tilegpu.async_copy" in names, text[:200]
            if which == "dkdv" and d == 64:
                views = [o for o in ops if o.name == "tilegpu.memdesc_trans"]
                assert any(v.operands[0].owner.name == "tilegpu.memdesc_index"
                           for v in views)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("which, d", [("dkdv", 64), ("dq", 64), ("dq", 128)])
def test_backward_fewer_shared_stores(which, d, causal, monkeypatch):
    """Against the same compile without the shared buffer (each use its own): fewer st.shared
    in the PTX (x^T is not written again), and still no spills."""
    import tilework.lowering.dot_wgmma as W
    from test_attention import A, bwd_signature, spills

    def build():
        cfg = A.default_bwd_configs(d)[0 if which == "dkdv" else 1]
        return tilework.compile(A.attn_bwd_dkdv if which == "dkdv" else A.attn_bwd_dq,
                                target=SM90A, signature=bwd_signature(which),
                                constexprs=dict(HEAD_DIM=d, CAUSAL=causal, **cfg.kwargs),
                                num_warps=cfg.num_warps, num_stages=cfg.num_stages,
                                cache=False)
    after = build()
    monkeypatch.setattr(W, "share_transposed_operands", lambda f: None)
    before = build()
    count = lambda ck: len(re.findall(r"\bst\.shared", ck.asm["ptx"]))  # noqa: E731
    assert count(after) < count(before), (count(after), count(before))
    assert spills(after)[0] == 0, spills(after)[1]


@tilework.jit
def desc_gram(x_desc, c_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    """gram with x read through a tensor descriptor (TMA on sm_90a)."""
    pm = tl.program_id(0)
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = x_desc.load([pm * BM, k * BK])
        acc = tl.dot(x, tl.trans(x), acc)
    rm = pm * BM + tl.arange(0, BM)
    tl.store(c_ptr + rm[:, None] * M + rm[None, :], acc)


@pytest.mark.parametrize("stages", [1, 3])
def test_tma_buffer_and_its_view(stages):
    """A TMA-loaded x (tilegpu-tma-loads' buffer, or tilegpu-pipeline-tma's ring slot)
    replaces x's alloc; the view of x^T reads it (compile-only: the emulator has no TMA)."""
    from test_tma import _compile, tensor_descriptor_type
    ck = _compile(desc_gram, {"x_desc": tensor_descriptor_type(tl.float16, [128, 64]),
                              "c_ptr": tl.pointer_type(tl.float32), "M": tl.int32,
                              "K": tl.int32}, {"BM": 128, "BK": 64}, num_warps=8,
                  num_stages=stages)
    ops = loop_ops(ck.asm["tilegpu"])
    assert ops.count("tilegpu.memdesc_trans") == 1 and "tilegpu.tma_load" in ops
    assert not re.search(r'"tilegpu.local_alloc"\(%', ck.asm["tilegpu"])  # (none from registers)
    with T.new_context():
        mod = ir.Module.parse(ck.asm["tilegpu"])
        view = next(o for o in T.walk_ops(mod.operation) if o.name == "tilegpu.memdesc_trans")
        src = view.operands[0]
        assert any(u.owner.name == "tilegpu.tma_load" for u in src.uses) or \
            src.owner.name == "tilegpu.memdesc_index"
    assert "wgmma.mma_async" in ck.asm["ptx"]
    assert "0 bytes spill stores" in ck.metadata["ptxas_info"]
