"""tilegpu-pipeline: loops feeding tl.dot compiled for sm_80 with num_stages 1..4, run by the SIMT
emulator (cp.async data lands only at the wait that completes its group; shared memory
race-checked) against numpy; the pass's decisions on the IR; the PTX of sm_80 (cp.async) and
sm_70 (none)."""
import re

import mlir.ir as ir
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.dialects import tile as T

from simt_emulator import EmulationError, Emulator


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def cdiv(a, b):
    return (a + b - 1) // b


F16, F32 = tl.pointer_type(tl.float16), tl.pointer_type(tl.float32)


@tilework.jit
def gemm(a_ptr, b_ptr, c_ptr, M, N, K, LO, STEP, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
         BLOCK_K: tl.constexpr, STAGES: tl.constexpr):
    """C = A @ B (row-major, contiguous) over k blocks LO, LO+STEP, .. < cdiv(K, BLOCK_K); the
    pointers advance by STEP blocks each iteration (Triton's `ptrs += BLOCK_K`)."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + (LO * BLOCK_K + offs_k)[None, :]
    b_ptrs = b_ptr + (LO * BLOCK_K + offs_k)[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(LO, tl.cdiv(K, BLOCK_K), STEP, num_stages=STAGES):
        kk = k * BLOCK_K + offs_k
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += STEP * BLOCK_K
        b_ptrs += STEP * BLOCK_K * N
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


GEMM_SIG = dict(a_ptr=F16, b_ptr=F16, c_ptr=F32, M=tl.int32, N=tl.int32, K=tl.int32,
                LO=tl.int32, STEP=tl.int32)
GEMM_SIG32 = dict(GEMM_SIG, a_ptr=F32, b_ptr=F32)


DIV16 = {"tile.divisibility": 16}


def build(kernel, sig, consts, target="sm_80", num_warps=4, num_stages=3, attrs=None):
    """`attrs`: param -> {"tile.divisibility": 16}, as the launcher's specialization gives
    (pointers 16-byte aligned, ints divisible by 16): wide cp.async needs them."""
    return compile(ASTSource(kernel, sig, consts, attrs or {}), target,
                   CompileOptions(num_warps=num_warps, num_stages=num_stages), cache=False)


def emulate(ck, grid, *args, text=None, num_warps=4):
    emu = Emulator.from_tilegpu(text or ck.asm["tilegpu"], "sm_80", num_warps)
    emu.run(grid, *args)


def gemm_ref(a, b, lo, step, bk):
    """Only the k blocks the loop visits."""
    k = a.shape[1]
    keep = np.zeros(k, bool)
    for blk in range(lo, cdiv(k, bk), step):
        keep[blk * bk:(blk + 1) * bk] = True
    return (a.astype(np.float64) * keep) @ b.astype(np.float64)


def aligned(*params):
    return {p: DIV16 for p in params}


def gemm_attrs(n, k):
    """The launcher's specialization of gemm's arguments for these sizes."""
    attrs = {p: DIV16 for p in ("a_ptr", "b_ptr", "c_ptr")}
    attrs.update({p: DIV16 for p, v in (("N", n), ("K", k)) if v % 16 == 0})
    return attrs


def run_gemm(rng, m, n, k, stages, lo=0, step=1, bm=16, bn=16, bk=16, text=None, ck=None,
             dt=np.float16):
    """fp16 (accesses of 4+ bytes need K and N divisible by 16: the launcher's
    specialization) or fp32 operands (4-byte copies even where masks vary per element)."""
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    c = np.full((m, n), 7, np.float32)
    sig = GEMM_SIG if dt == np.float16 else GEMM_SIG32
    ck = ck or build(gemm, sig, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, STAGES=stages),
                     attrs=gemm_attrs(n, k))
    emulate(ck, (cdiv(m, bm), cdiv(n, bn)), a, b, c, m, n, k, lo, step, text=text)
    np.testing.assert_allclose(c, gemm_ref(a, b, lo, step, bk), rtol=1e-3, atol=1e-3)
    return ck


def loop_text(ck):
    return ck.asm["tilegpu"]


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
@pytest.mark.parametrize("m, n, k, dt", [(20, 24, 70, np.float32), (16, 16, 16, np.float16),
                                         (16, 32, 40, np.float32), (24, 32, 48, np.float16)])
def test_gemm_stages(stages, m, n, k, dt, rng):
    """K tails (masked), K shorter than S-1 blocks (16, 40 with 3 or 4 stages), M tails."""
    ck = run_gemm(rng, m, n, k, stages, dt=dt)
    text = loop_text(ck)
    if stages == 1:
        assert "async_copy" not in text
    else:
        assert text.count('"tilegpu.async_copy"') == 2 * stages  # S-1 prologue copies + 1
        assert f'"tilegpu.async_wait"() {{num = {stages - 2} : i32}}' in text
        assert re.search(rf"!tilegpu\.memdesc<array<i64: 16, 16>, f(16|32), "
                         rf"#tilegpu\.swizzled_shared<[^>]*>>, {stages} : i32>", text)


@pytest.mark.parametrize("lo, step, k", [(0, 2, 100), (1, 3, 130), (5, 1, 40), (0, 1, 0)])
def test_gemm_bounds(lo, step, k, rng):
    """Dynamic bounds, step > 1, zero-trip loops (lo past the end, K = 0)."""
    ck = run_gemm(rng, 16, 16, k, 3, lo=lo, step=step, dt=np.float32)
    assert loop_text(ck).count('"tilegpu.async_copy"') == 6


def test_wrong_wait_count_is_caught(rng):
    """The emulator lands copies only at their wait: one group too few waited for reads stale
    data (or races), so these tests can fail."""
    ck = build(gemm, GEMM_SIG, dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, STAGES=3),
               attrs=gemm_attrs(16, 64))
    text = loop_text(ck)
    assert re.search(r'"tilegpu.async_copy".*tilegpu.vector_width = [248] : i32', text)
    bad = text.replace('"tilegpu.async_wait"() {num = 1 : i32}',
                       '"tilegpu.async_wait"() {num = 2 : i32}', 1)
    assert bad != text
    with pytest.raises((AssertionError, EmulationError)):
        run_gemm(rng, 16, 16, 64, 3, ck=ck, text=bad)


def test_one_barrier_per_iteration():
    """The slot overwritten in iteration k was read in k-1: one barrier (after the wait, before
    the copy) orders both the landed copies and those reads; none between the copy and the
    local_loads."""
    ck = build(gemm, GEMM_SIG, dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, STAGES=3),
               attrs=gemm_attrs(16, 16))
    body = loop_text(ck).split("scf.for")[1].split("scf.yield")[0]
    ops = [m for m in re.findall(r'"(tilegpu\.\w+|tile\.dot)"', body)]
    first_copy = ops.index("tilegpu.async_copy")
    assert ops[first_copy - 1:first_copy] == ["tilegpu.barrier"] or \
        ops[first_copy - 2:first_copy] == ["tilegpu.barrier", "tilegpu.memdesc_index"]
    assert ops[0] == "tilegpu.async_wait"
    between = ops[first_copy:ops.index("tilegpu.local_load")]
    assert "tilegpu.barrier" not in between
    assert ops.index("tilegpu.local_load") < ops.index("tile.dot")


@tilework.jit
def attention_like(q_ptr, k_ptr, v_ptr, o_ptr, L, D: tl.constexpr, BLOCK: tl.constexpr,
                   STAGES: tl.constexpr):
    """o = sum over blocks of (q @ k_blk^T) @ v_blk: two dots in one loop, k's block
    transposed by tl.trans between its load and the dot."""
    rm = tl.arange(0, BLOCK)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BLOCK, D), dtype=tl.float32)
    for start in tl.range(0, L, BLOCK, num_stages=STAGES):
        rn = start + tl.arange(0, BLOCK)
        kb = tl.load(k_ptr + rn[:, None] * D + rd[None, :], mask=rn[:, None] < L, other=0.0)
        s = tl.dot(q, tl.trans(kb))
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :], mask=rn[:, None] < L, other=0.0)
        acc = tl.dot(s.to(tl.float16), v, acc)
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc)


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("length", [40, 16])
def test_two_dots(stages, length, rng):
    ck = build(attention_like, dict(q_ptr=F16, k_ptr=F16, v_ptr=F16, o_ptr=F32, L=tl.int32),
               dict(D=16, BLOCK=16, STAGES=stages), attrs=aligned("q_ptr", "k_ptr", "v_ptr"))
    assert loop_text(ck).count('"tilegpu.async_copy"') == 2 * stages
    q = (rng.standard_normal((16, 16)) / 4).astype(np.float16)
    k = (rng.standard_normal((length, 16)) / 4).astype(np.float16)
    v = rng.standard_normal((length, 16)).astype(np.float16)
    o = np.zeros((16, 16), np.float32)
    emulate(ck, (1,), q, k, v, o, length)
    ref = np.zeros((16, 16))
    for s0 in range(0, length, 16):
        s = (q.astype(np.float64) @ k[s0:s0 + 16].T.astype(np.float64)).astype(np.float32)
        ref += s.astype(np.float16).astype(np.float64) @ v[s0:s0 + 16]
    np.testing.assert_allclose(o, ref, rtol=1e-2, atol=1e-2)


@tilework.jit
def gemm_and_sum(a_ptr, b_ptr, x_ptr, c_ptr, s_ptr, K, BLOCK: tl.constexpr):
    """A dot's operands are pipelined, the load of x (a row sum, no dot) is not; nor is a
    load whose pointer depends on another load (the index gather)."""
    r = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    tot = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + r[:, None] * K + (k + r)[None, :])
        b = tl.load(b_ptr + (k + r)[:, None] * BLOCK + r[None, :])
        acc = tl.dot(a, b, acc)
        tot += tl.load(x_ptr + k + r)
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], acc)
    tl.store(s_ptr + r, tot)


def test_load_not_feeding_a_dot(rng):
    ck = build(gemm_and_sum, dict(a_ptr=F16, b_ptr=F16, x_ptr=F32, c_ptr=F32, s_ptr=F32,
                                  K=tl.int32), dict(BLOCK=16),
               attrs=aligned("a_ptr", "b_ptr", "x_ptr", "K"))
    text = loop_text(ck)
    assert text.count('"tilegpu.async_copy"') == 2 * 3
    body = text.split("scf.for")[1].split("scf.yield")[0]
    assert body.count('"tile.load"') == 1 and "tensor<16x!tile.ptr<f32>" in \
        next(ln for ln in body.splitlines() if '"tile.load"' in ln)
    k = 48
    a = rng.standard_normal((16, k)).astype(np.float16)
    b = rng.standard_normal((k, 16)).astype(np.float16)
    x = rng.standard_normal(k).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    s = np.zeros(16, np.float32)
    emulate(ck, (1,), a, b, x, c, s, k)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(s, x.reshape(-1, 16).sum(0), rtol=1e-5, atol=1e-5)


@tilework.jit
def gather_gemm(a_ptr, b_ptr, idx_ptr, c_ptr, NB, BLOCK: tl.constexpr):
    """B's rows come from an index loaded in the same iteration: not pipelined; A is."""
    r = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, NB):
        rows = tl.load(idx_ptr + k * BLOCK + r)
        a = tl.load(a_ptr + r[:, None] * (NB * BLOCK) + (k * BLOCK + r)[None, :])
        b = tl.load(b_ptr + rows[:, None] * BLOCK + r[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], acc)


def test_pointer_from_a_load_is_not_pipelined(rng):
    ck = build(gather_gemm, dict(a_ptr=F16, b_ptr=F16, idx_ptr=tl.pointer_type(tl.int32),
                                 c_ptr=F32, NB=tl.int32), dict(BLOCK=16),
               attrs=aligned("a_ptr", "b_ptr", "idx_ptr"))
    text = loop_text(ck)
    assert text.count('"tilegpu.async_copy"') == 3  # A only: 2 in the prologue, 1 in the loop
    nb = 3
    a = rng.standard_normal((16, nb * 16)).astype(np.float16)
    b = rng.standard_normal((40, 16)).astype(np.float16)
    idx = rng.integers(0, 40, nb * 16).astype(np.int32)
    c = np.zeros((16, 16), np.float32)
    emulate(ck, (1,), a, b, idx, c, nb)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b[idx], rtol=1e-3, atol=1e-3)


@tilework.jit
def gemm_other(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    """A's masked elements read as 1: not zero, so A is not pipelined (cp.async only
    zero-fills); B is."""
    r = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + r[:, None] * K + (k + r)[None, :], mask=(k + r)[None, :] < K,
                    other=1.0)
        b = tl.load(b_ptr + (k + r)[:, None] * BLOCK + r[None, :], mask=(k + r)[:, None] < K,
                    other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], acc)


def test_nonzero_other_is_not_pipelined(rng):
    ck = build(gemm_other, dict(a_ptr=F16, b_ptr=F16, c_ptr=F32, K=tl.int32), dict(BLOCK=16),
               attrs=aligned("a_ptr", "b_ptr"))
    assert loop_text(ck).count('"tilegpu.async_copy"') == 3
    k = 40
    a = rng.standard_normal((16, k)).astype(np.float16)
    b = rng.standard_normal((k, 16)).astype(np.float16)
    c = np.zeros((16, 16), np.float32)
    emulate(ck, (1,), a, b, c, k)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3)


def test_stages_reduced_to_fit_shared_memory():
    """sm_80 opts in to 163 KiB: 8 stages of two 128x64 fp16 tiles (256 KiB) do not fit."""
    ck = build(gemm, GEMM_SIG, dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, STAGES=8),
               attrs=gemm_attrs(16, 16))
    text = loop_text(ck)
    note = re.search(r'tilegpu.pipeline_note = "([^"]*)"', text).group(1)
    m = re.match(r"num_stages 8 -> (\d+): ", note)
    assert m and 1 < int(m.group(1)) < 8, note
    s = int(m.group(1))
    assert f", {s} : i32>" in text and text.count('"tilegpu.async_copy"') == 2 * s
    assert ck.metadata["shared"] <= 163 * 1024


def test_ptx_has_cp_async_on_sm80_only(monkeypatch):
    consts = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, STAGES=3)
    ptx80 = build(gemm, GEMM_SIG, consts, "sm_80", attrs=gemm_attrs(64, 64)).asm["ptx"]
    assert "cp.async.ca.shared.global" in ptx80 or "cp.async.cg.shared.global" in ptx80
    assert "cp.async.wait_group" in ptx80 and "cp.async.commit_group" in ptx80
    from tilework.backends.nvidia import compiler as nvc
    monkeypatch.setattr(nvc, "find_ptxas", lambda: None)  # this CUDA's ptxas has no sm_70
    ck70 = build(gemm, GEMM_SIG, consts, "sm_70", attrs=gemm_attrs(64, 64))
    assert "cp.async" not in ck70.asm["ptx"] and "async_copy" not in ck70.asm["tilegpu"]


def test_default_num_stages_option():
    """No num_stages on the loop: the compile option decides (1: no pipelining)."""
    from dot_kernels import matmul_kernel
    sig = dict(a_ptr=F32, b_ptr=F32, c_ptr=F32)
    sig.update({p: tl.int32 for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                                       "stride_bn", "stride_cm", "stride_cn")})
    consts = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, ACC=tl.float32, PLUS_EQ=False)
    for s in (1, 2, 4):
        text = build(matmul_kernel, sig, consts, num_stages=s).asm["tilegpu"]
        assert text.count('"tilegpu.async_copy"') == (2 * s if s > 1 else 0)


def test_gemm_operand_layout_without_copies(rng):
    """64x64x32 blocks over 4 warps (the matmul example's): the rank's default layout, made for
    the 64x64 accumulator, would hold the 64x32 A tile twice (two threads copying each
    element); the load asks for a layout of its own (lowering/layout_hints.py), so each
    element is copied once, 4 per cp.async."""
    ck = run_gemm(rng, 70, 64, 96, 3, bm=64, bn=64, bk=32, dt=np.float32)
    text = loop_text(ck)
    assert text.count('"tilegpu.async_copy"') == 6
    own = ("tensor<64x32x!tile.ptr<f32>, #tilegpu.blocked<array<i32: 1, 4>, array<i32: 4, 8>, "
           "array<i32: 4, 1>, array<i32: 1, 0>>>")
    assert sum(own in line for line in text.splitlines() if '"tilegpu.async_copy"' in line) == 3


def test_gemm_replicated_operand_layout(rng):
    """16x16x16 blocks over 16 warps: 512 threads for 256-element tiles (a layout of 32x16),
    so two threads copy every element into the same buffer slot (the emulator checks the
    duplicate writes agree)."""
    m, n, k = 20, 24, 40
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), 7, np.float32)
    ck = build(gemm, GEMM_SIG32, dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, STAGES=3),
               num_warps=16, attrs=gemm_attrs(n, k))
    assert "array<i32: 2, 16>, array<i32: 16, 1>" in loop_text(ck)  # (32 rows of threads)
    emulate(ck, (cdiv(m, 16), cdiv(n, 16)), a, b, c, m, n, k, 0, 1, num_warps=16)
    np.testing.assert_allclose(c, gemm_ref(a, b, 0, 1, 16), rtol=1e-3, atol=1e-3)
    assert loop_text(ck).count('"tilegpu.async_copy"') == 6


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("dt, bm, bn, bk, stages", [
    (F16, 64, 64, 32, 4), (F32, 32, 32, 16, 3), (F16, 64, 32, 64, 2)])
def test_gpu_configs_compile(target, dt, bm, bn, bk, stages):
    """test_pipeline_gpu.py's configurations: cp.async in the PTX, ptxas accepts it (when
    present), no spills."""
    attrs = gemm_attrs(256, 256)
    ck = build(gemm, dict(GEMM_SIG, a_ptr=dt, b_ptr=dt),
               dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, STAGES=stages), target, attrs=attrs)
    assert "cp.async.wait_group" in ck.asm["ptx"]
    info = ck.metadata.get("ptxas_info")
    if info is not None:
        assert "0 bytes spill stores" in info, info


@tilework.jit
def tiles_loop(a_ptr, b_ptr, c_ptr, p_ptr, T, K, BLOCK: tl.constexpr):
    """A persistent-style outer loop over T output tiles (row blocks of A), each with its own
    pipelined K loop; the last tile's advanced A pointers are used after the loop (the carried
    original is kept next to the one S-1 iterations ahead)."""
    r = tl.arange(0, BLOCK)
    for t in range(0, T):
        a_ptrs = a_ptr + (t * BLOCK + r)[:, None] * K + r[None, :]
        b_ptrs = b_ptr + r[:, None] * BLOCK + r[None, :]
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k in range(0, K, BLOCK):
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
            acc = tl.dot(a, b, acc, input_precision="ieee")
            a_ptrs += BLOCK
            b_ptrs += BLOCK * BLOCK
        tl.store(c_ptr + (t * BLOCK + r)[:, None] * BLOCK + r[None, :], acc)
        tl.store(p_ptr + t * BLOCK * BLOCK + r[:, None] * BLOCK + r[None, :],
                 tl.load(a_ptrs - BLOCK))  # the tile's last block of A, again


def test_nested_loops_and_kept_pointer(rng):
    ck = build(tiles_loop, dict(a_ptr=F32, b_ptr=F32, c_ptr=F32, p_ptr=F32,
                                T=tl.int32, K=tl.int32), dict(BLOCK=16),
               attrs=aligned("a_ptr", "b_ptr", "K"))
    text = loop_text(ck)
    assert text.count('"tilegpu.async_copy"') == 6
    # acc, A's pointers (used after the loop) and both ahead, the two slot indices; B's
    # original pointers are dropped
    assert re.search(r"%\w+:6 = scf.for", text)
    t, k = 2, 48
    a = rng.standard_normal((t * 16, k)).astype(np.float32)
    b = rng.standard_normal((k, 16)).astype(np.float32)
    c = np.zeros((t * 16, 16), np.float32)
    p = np.zeros((t, 16, 16), np.float32)
    emulate(ck, (1,), a, b, c, p, t, k)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(p, a[:, k - 16:].reshape(t, 16, 16))


@tilework.jit
def x_and_xt(w_ptr, x_ptr, c_ptr, d_ptr, L, BLOCK: tl.constexpr, STAGES: tl.constexpr):
    """c = sum over blocks x_b of w @ x_b, d = sum of w @ x_b^T: one load, two dots in
    different operand layouts (as the attention backward's qT and do)."""
    r = tl.arange(0, BLOCK)
    w = tl.load(w_ptr + r[:, None] * BLOCK + r[None, :])
    c = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    d = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for start in tl.range(0, L, BLOCK, num_stages=STAGES):
        rows = start + r
        x = tl.load(x_ptr + rows[:, None] * BLOCK + r[None, :], mask=rows[:, None] < L,
                    other=0.0)
        c = tl.dot(w, x, c)
        d = tl.dot(w, tl.trans(x), d)
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], c)
    tl.store(d_ptr + r[:, None] * BLOCK + r[None, :], d)


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("length", [96, 80])
def test_slot_read_per_dot_layout(stages, length, rng):
    """The slot is read into each dot's operand layout (ldmatrix, .trans through the
    memdesc_trans view), no tile.trans or conversion of x left in the loop."""
    ck = build(x_and_xt, dict(w_ptr=F16, x_ptr=F16, c_ptr=F32, d_ptr=F32, L=tl.int32),
               dict(BLOCK=32, STAGES=stages), attrs=aligned("w_ptr", "x_ptr"))
    body = loop_text(ck)
    assert "tile.trans" not in body and body.count('"tilegpu.memdesc_trans"') == 1
    assert body.count('"tilegpu.local_load"') == 2
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ck.asm["ptx"]
    w = (rng.standard_normal((32, 32)) / 4).astype(np.float16)
    x = rng.standard_normal((length, 32)).astype(np.float16)
    c = np.zeros((32, 32), np.float32)
    d = np.zeros((32, 32), np.float32)
    emulate(ck, (1,), w, x, c, d, length)
    xs = np.zeros((-(-length // 32) * 32, 32))
    xs[:length] = x
    blocks = xs.reshape(-1, 32, 32)
    w64 = w.astype(np.float64)
    np.testing.assert_allclose(c, sum(w64 @ b for b in blocks), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(d, sum(w64 @ b.T for b in blocks), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("stages", [1, 3])
def test_invariant_operand_written_once(stages, rng, monkeypatch):
    """(Default-off: lowering/pipeline_invariant.py.)  w, invariant in the loop, converted to
    its dot-operand layout through shared memory every iteration, is written to a buffer once
    before the loop and read from it by ldmatrix in the loop: no conversion left in it."""
    import tilework.lowering.pipeline_invariant as P
    monkeypatch.setattr(P, "ENABLED", True)  # (build() compiles without the disk cache)
    ck = build(x_and_xt, dict(w_ptr=F16, x_ptr=F16, c_ptr=F32, d_ptr=F32, L=tl.int32),
               dict(BLOCK=32, STAGES=stages), attrs=aligned("w_ptr", "x_ptr"))
    with T.new_context():
        mod = ir.Module.parse(ck.asm["tilegpu"])
        loop = next(op for op in T.walk_ops(mod.operation) if op.name == "scf.for")
        w_buf = [op for op in T.walk_ops(mod.operation) if op.name == "tilegpu.local_alloc"
                 and len(op.operands) == 1]
        assert len(w_buf) == 1 and w_buf[0].parent.name == "func.func"
        assert not [op for op in T.walk_ops(loop) if op.name == "tilegpu.convert_layout"
                    and op.operands[0] == w_buf[0].operands[0]]
        reads = [op for op in T.walk_ops(loop) if op.name == "tilegpu.local_load"
                 and op.operands[0] == w_buf[0].results[0]]
        assert len(reads) == 1 and "dot_operand<0" in str(reads[0].results[0].type)
    w = (rng.standard_normal((32, 32)) / 4).astype(np.float16)
    x = rng.standard_normal((80, 32)).astype(np.float16)
    c = np.zeros((32, 32), np.float32)
    d = np.zeros((32, 32), np.float32)
    emulate(ck, (1,), w, x, c, d, 80)
    xs = np.zeros((96, 32))
    xs[:80] = x
    w64 = w.astype(np.float64)
    blocks = xs.reshape(-1, 32, 32)
    np.testing.assert_allclose(c, sum(w64 @ b for b in blocks), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(d, sum(w64 @ b.T for b in blocks), rtol=1e-3, atol=1e-3)
