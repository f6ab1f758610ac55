"""Asynchronous wgmma in pipelined loops (tilegpu-pipeline on sm_90a, see lowering/pipeline.py):
the loop's warpgroup_dot stays in flight across iterations (`warpgroup_wait {num = 1}` after it,
the copies into the slot the previous one read after that, `warpgroup_wait {num = 0}` after
the loop).  GEMMs run on the SIMT emulator against float64 numpy (num_stages 2..4, M/N/K tails,
fp16/bf16/tf32/fp8/int8); the emulator's checks of the order fail on wrong orders; the dots
that must stay synchronous do."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.dialects import tile as T

from simt_emulator import EmulationError, Emulator
from simt_wgmma import WgmmaError
from test_dot_wgmma import KINDS

SM90A = "sm_90a"
DIV16 = {"tile.divisibility": 16}


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2**32)


def cdiv(a, b):
    return (a + b - 1) // b


@tilework.jit
def wg_gemm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
            BLOCK_K: tl.constexpr, STAGES: tl.constexpr, PREC: tl.constexpr,
            ACC: tl.constexpr, B_KN: tl.constexpr, IMP: tl.constexpr):
    """C = A @ B, A [M, K] row-major; B [K, N] row-major (B_KN) or given as B^T [N, K]
    row-major (K contiguous: tf32 and fp8 B must be K-major in shared memory)."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    if B_KN:
        b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
        b_step = BLOCK_K * N
    else:
        b_ptrs = b_ptr + offs_k[:, None] + offs_n[None, :] * K
        b_step = BLOCK_K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=STAGES):
        kk = k * BLOCK_K + offs_k
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0)
        b = tl.load(b_ptrs, mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, input_precision=PREC, max_num_imprecise_acc=IMP,
                     out_dtype=ACC)
        a_ptrs += BLOCK_K
        b_ptrs += b_step
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


_OUT = {tl.float32: np.float32, tl.int32: np.int32, tl.float16: np.float16}


def build(kind, stages, bm=64, bn=64, bk=32, nw=4, acc=tl.float32, imp=0, b_kn=True):
    dt = KINDS[kind][0]
    P = tl.pointer_type
    sig = dict(a_ptr=P(dt), b_ptr=P(dt), c_ptr=P(acc), M=tl.int32, N=tl.int32, K=tl.int32)
    attrs = {p: DIV16 for p in ("a_ptr", "b_ptr", "c_ptr", "N", "K")}
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, STAGES=stages,
                  PREC="tf32" if kind == "fp32" else "ieee", ACC=acc, B_KN=b_kn, IMP=imp)
    return compile(ASTSource(wg_gemm, sig, consts, attrs), SM90A,
                   CompileOptions(num_warps=nw, num_stages=stages), cache=False)


def run(ck, kind, rng, m, n, k, bm=64, bn=64, nw=4, acc=tl.float32, b_kn=True, text=None):
    """Emulates the kernel on random inputs; returns (C, float64 reference, |A| @ |B|)."""
    a, av = KINDS[kind][1](rng, (m, k))
    b, bv = KINDS[kind][1](rng, (k, n))
    if not b_kn:
        b = np.ascontiguousarray(b.T)
    c = np.full((m, n), 7, _OUT[acc])
    emu = Emulator.from_tilegpu(text or ck.asm["tilegpu"], SM90A, nw)
    emu.run((cdiv(m, bm), cdiv(n, bn)), a, b, c, m, n, k)
    return c, av @ bv, np.abs(av) @ np.abs(bv)


def check(c, ref, mag, kind):
    if kind == "int8":
        np.testing.assert_array_equal(c, ref.astype(np.int64).astype(np.int32))
    else:
        err = np.abs(c.astype(np.float64) - ref)
        assert (err <= mag * 2.0**-20 + 1e-6).all(), err.max()


def is_async(text) -> bool:
    return '"tilegpu.warpgroup_wait"' in text


def order(text):
    """The tilegpu ops of the loop body in order, and the first ones after it."""
    i = text.index("scf.for")
    j = text.index("scf.yield", i)
    body = re.findall(r'"(tilegpu\.\w+)"(?:\([^)]*\))? (\{num = \d+)?', text[i:j])
    after = re.findall(r'"(tilegpu\.\w+)"(?:\([^)]*\))? (\{num = \d+)?', text[j:])[:2]
    fmt = [f"{n}{' ' + w[1:] if w else ''}" for n, w in body + after]
    return fmt


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("m, n, k", [(64, 64, 256), (70, 112, 208), (64, 64, 32)])
def test_gemm_stages_emulated(stages, m, n, k, rng):
    """M, N and K tails (208 = 6.5 blocks of 32), one iteration (fewer than S-1)."""
    ck = build("fp16", stages)
    text = ck.asm["tilegpu"]
    assert is_async(text)
    c, ref, mag = run(ck, "fp16", rng, m, n, k)
    check(c, ref, mag, "fp16")


def test_loop_order():
    """wait for copies k; barrier; wgmma(k) (committed); wait 1; barrier; copies k+S-1; after
    the loop: wait 0 before the copies' wait and the deallocs."""
    text = build("fp16", 3).asm["tilegpu"]
    assert order(text) == [
        "tilegpu.async_wait num = 1", "tilegpu.memdesc_index", "tilegpu.memdesc_index",
        "tilegpu.barrier", "tilegpu.warpgroup_dot", "tilegpu.warpgroup_wait num = 1",
        "tilegpu.memdesc_index", "tilegpu.barrier", "tilegpu.async_copy",
        "tilegpu.memdesc_index", "tilegpu.async_copy", "tilegpu.async_commit_group",
        "tilegpu.warpgroup_wait num = 0", "tilegpu.async_wait num = 0"]


@pytest.mark.parametrize("kind, acc, bk", [
    ("bf16", tl.float32, 32), ("int8", tl.int32, 64), ("fp16", tl.float32, 64)])
def test_gemm_types_emulated(kind, acc, bk, rng):
    ck = build(kind, 3, bk=bk, acc=acc)
    assert is_async(ck.asm["tilegpu"])
    c, ref, mag = run(ck, kind, rng, 80, 80, 5 * bk + 16, acc=acc)
    check(c, ref, mag, kind)


@pytest.mark.parametrize("kind", ["fp32", "e4m3", "e5m2"])
def test_k_major_b_is_not_pipelined_yet(kind, rng):
    """tf32 and fp8 B must be K-major in shared memory: tilegpu-pipeline does not pipeline
    those loads yet (the loop keeps its synchronous dot); the result is still right."""
    bk = 32 if kind == "fp32" else 64
    ck = build(kind, 3, bk=bk, b_kn=False)
    assert '"tilegpu.warpgroup_dot"' in ck.asm["tilegpu"]
    assert not is_async(ck.asm["tilegpu"])
    c, ref, mag = run(ck, kind, rng, 64, 64, 4 * bk, b_kn=False)
    check(c, ref, mag, kind)


@tilework.jit
def wg_gemm_u8(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr):
    """fp8 e4m3 operands passed as uint8 and bitcast after the load (examples/fp8_matmul.py's
    way); B [K, N] row-major, so its loads run along N while wgmma wants it K-major."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + offs_k
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0)
        b = tl.load(b_ptrs, mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0)
        acc = tl.dot(a.to(tl.float8e4nv, bitcast=True), b.to(tl.float8e4nv, bitcast=True), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@pytest.mark.parametrize("stages", [2, 3])
def test_fp8_bitcast_operands_pipelined(stages, rng):
    """A (K-contiguous) is copied straight into its wgmma buffer: cp.async copies bits, so the
    uint8 load fills the e4m3 slot and the bitcast goes; B, loaded along N, is staged: copied
    into a slot of its own, read back into registers and written K-major by the body's
    local_alloc (synchronous dot: that buffer is rewritten every iteration).  Emulated
    against float64 numpy with M, N and K tails."""
    P = tl.pointer_type
    sig = dict(a_ptr=P(tl.uint8), b_ptr=P(tl.uint8), c_ptr=P(tl.float32), M=tl.int32,
               N=tl.int32, K=tl.int32)
    attrs = {p: DIV16 for p in ("a_ptr", "b_ptr", "c_ptr", "N", "K")}
    ck = compile(ASTSource(wg_gemm_u8, sig, dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=64), attrs),
                 SM90A, CompileOptions(num_warps=4, num_stages=stages), cache=False)
    text = ck.asm["tilegpu"]
    body = text[text.index("scf.for"):text.index("scf.yield")]
    assert body.count('"tilegpu.async_copy"') == 2
    assert body.count('"tilegpu.local_alloc"') == 1 and body.count("arith.bitcast") == 1
    assert "memdesc<array<i64: 64, 64>, f8E4M3FN" in body and not is_async(text)
    m, n, k = 70, 80, 64 * 3 + 16
    a, av = KINDS["e4m3"][1](rng, (m, k))
    b, bv = KINDS["e4m3"][1](rng, (k, n))
    c = np.full((m, n), 7, np.float32)
    emu = Emulator.from_tilegpu(text, SM90A, 4)
    emu.run((cdiv(m, 64), cdiv(n, 64)), a.view(np.uint8), b.view(np.uint8), c, m, n, k)
    check(c, av @ bv, np.abs(av) @ np.abs(bv), "e4m3")


def test_eight_warps_two_warpgroups_emulated(rng):
    """Two warpgroups read one B slot: the barrier after the wait orders both waits before
    the copies that overwrite it."""
    ck = build("fp16", 3, bm=128, bn=64, nw=8)
    assert is_async(ck.asm["tilegpu"])
    c, ref, mag = run(ck, "fp16", rng, 130, 64, 160, bm=128, nw=8)
    check(c, ref, mag, "fp16")


def test_fp16_accumulator_stays_synchronous(rng):
    """An fp16 accumulator is converted after the wait: the pipelined loop keeps wait 0."""
    ck = build("fp16", 3, bk=64, acc=tl.float16)
    text = ck.asm["tilegpu"]
    assert '"tilegpu.async_copy"' in text
    assert not is_async(text)
    c, ref, mag = run(ck, "fp16", rng, 64, 64, 256, acc=tl.float16)
    err = np.abs(c.astype(np.float64) - ref)
    assert (err <= mag * 4 * 2.0**-11 + 1e-3).all()


# ---- wrong orders fail in the emulator -----------------------------------------------------

def _with_wait(text, num):
    out = re.sub(r'("tilegpu\.warpgroup_wait"\(%\w+\)) \{num = 1 : i32\}',
                 rf'\1 {{num = {num} : i32}}', text)
    assert out != text
    return out


@pytest.mark.parametrize("stages, message", [
    (2, "is overwritten while a wgmma that reads it is in flight"),
    (3, "was issued while a wgmma that reads it was in flight"),
    (4, "was issued while a wgmma that reads it was in flight")])
def test_copy_before_the_wait_is_caught(stages, message, rng):
    """wait_group 2 instead of 1: the copies overwrite the slot wgmma(k-1) still reads (they
    land while it is in flight with 2 stages, are issued while it is with 3 and 4)."""
    ck = build("fp16", stages)
    text = _with_wait(ck.asm["tilegpu"], 2)
    with pytest.raises(WgmmaError, match=re.escape(message)):
        run(ck, "fp16", rng, 64, 64, 256, text=text)


def _lowered(ck, nw=4):
    return Emulator.from_tilegpu(ck.asm["tilegpu"], SM90A, nw)


def test_missing_barrier_after_the_wait_is_caught(rng):
    """Without the barrier between wait_group 1 and the copies, a thread overwrites bytes the
    other threads' (warpgroups') wgmma may still read."""
    ck = build("fp16", 3, bm=128, nw=8)
    emu = _lowered(ck, 8)
    with emu.context:
        loop = next(op for op in T.walk_ops(emu.module.operation) if op.name == "scf.for")
        ops = [o.operation for o in loop.regions[0].blocks[0].operations]
        wait = next(i for i, o in enumerate(ops) if o.name == "llvm.inline_asm" and
                    "wgmma.wait_group" in str(o.attributes["asm_string"]))
        bar = next(o for o in ops[wait:] if o.name == "gpu.barrier")
        bar.erase()
    a = np.random.default_rng(1).standard_normal((128, 128)).astype(np.float16)
    c = np.zeros((128, 64), np.float32)
    with pytest.raises(EmulationError, match="shared-memory race"):
        emu.run((1, 1), a, a, c, 128, 64, 128)


def test_missing_final_wait_is_caught(rng):
    """The loop's result read without the wait_group 0 after the loop."""
    ck = build("fp16", 3)
    text = re.sub(r'(%\w+) = "tilegpu\.warpgroup_wait"\((%\w+#0)\) \{num = 0 : i32\} : '
                  r'\([^)]*\) -> [^\n]*\n', "", ck.asm["tilegpu"])
    name = re.search(r'(%\w+) = "tilegpu\.warpgroup_wait"\((%\w+#0)\) \{num = 0',
                     ck.asm["tilegpu"])
    text = text.replace(name.group(1) + ")", name.group(2) + ")").replace(
        name.group(1) + " ", name.group(2) + " ").replace(name.group(1) + ",", name.group(2) + ",")
    with pytest.raises(WgmmaError, match="read before a wgmma.wait_group completes it"):
        run(ck, "fp16", rng, 64, 64, 256, text=text)


def test_zero_trip_loop(rng):
    ck = build("fp16", 3)
    c, ref, mag = run(ck, "fp16", rng, 64, 64, 0)
    np.testing.assert_array_equal(c, np.zeros((64, 64), np.float32))


# ---- the PTX -------------------------------------------------------------------------------

def loop_ptx(ptx):
    """The lines of the loop holding the wgmma: from its label to its back branch."""
    lines = [ln.strip() for ln in ptx.splitlines()]
    mma = next(i for i, ln in enumerate(lines) if ln.startswith("wgmma.mma_async"))
    for i in range(mma, len(lines)):
        m = re.match(r"(@%p\d+ )?bra(\.uni)?\s+(\$L__BB\d+_\d+);", lines[i])
        if m and m.group(3) + ":" in lines[:mma]:
            return lines[lines.index(m.group(3) + ":"):i + 1]
    raise AssertionError("no loop around the wgmma")


def test_ptx_loop_keeps_one_group_in_flight():
    ptx = build("fp16", 3, bm=128, bn=128, bk=64, nw=8).asm["ptx"]
    loop = [re.sub(r"\s+", " ", ln) for ln in loop_ptx(ptx)]
    assert loop.count("wgmma.wait_group.sync.aligned 1;") == 1
    assert "wgmma.wait_group.sync.aligned 0;" not in loop
    assert loop.count("wgmma.commit_group.sync.aligned;") == 1
    first = {k: next(i for i, ln in enumerate(loop) if ln.startswith(k)) for k in (
        "cp.async.wait_group", "wgmma.mma_async", "wgmma.wait_group", "cp.async.cg",
        "cp.async.commit_group")}
    assert first["cp.async.wait_group"] < first["wgmma.mma_async"] < first["wgmma.wait_group"] \
        < first["cp.async.cg"] < first["cp.async.commit_group"]
    assert sum(ln == "bar.sync 0;" for ln in loop) == 2
    # a thread's copies: 4 per operand (A in its own layout: no copies twice), each
    # operand's at one shared address plus immediates (rules/shared.py register_offsets),
    # not one 64-bit address register each
    bases = re.findall(r"cp\.async\.cg\.shared\.global \[(%rd\d+)(?:\+\d+)?\]",
                       "\n".join(loop))
    assert len(bases) == 8 and len(set(bases)) == 2, bases
    assert all(bases.count(b) == 4 for b in bases), bases
    flat = [re.sub(r"\s+", " ", ln.strip()) for ln in ptx.splitlines()]
    after = flat[flat.index(loop[-1]) + 1:]
    assert after.index("wgmma.wait_group.sync.aligned 0;") < after.index("cp.async.wait_group 0;")
