"""Compile-only checks of examples/attention_tma.py (the descriptor FlashAttention forward,
Triton's Hopper tutorial form) on sm_90a, read from the PTX: K and V copied by TMA into
num_stages rings inside the key loop at the loop-carried coordinates (tilegpu-pipeline-tma),
mbarrier waits, K read transposed by the first wgmma straight from its slot and P from
registers by the second (no shared-memory traffic of the threads in the loop), no spills; and
its values against numpy under the interpreter.  On the GPU: test_attention_tma_gpu.py."""
import re

import numpy as np
import pytest

import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type

import attention_tma as A
from test_attention_fwd_codegen import loop_bodies


def compile_tma_fwd(d=128, causal=False, even=True, dt="fp16", bm=128, bn=64, warps=8,
                    stages=3, ws=False, **opts):
    et = {"fp16": tl.float16, "bf16": tl.bfloat16, "e4m3": tl.float8e4nv,
          "e5m2": tl.float8e5}[dt]
    fp8 = dt in ("e4m3", "e5m2")  # (o fp16, V read transposed, as attention_forward does)
    q = tensor_descriptor_type(et, [bm, d], "zero")
    k = tensor_descriptor_type(et, [bn, d], "zero")
    v = tensor_descriptor_type(et, [d, bn] if fp8 else [bn, d], "zero")
    ot = tl.float16 if fp8 else et
    o = tensor_descriptor_type(ot, [bm, d], "zero")
    sig = {"sm_scale": tl.float32, "LSE": tl.pointer_type(tl.float32),
           "O": tl.pointer_type(ot), "desc_q": q, "desc_k": k, "desc_v": v, "desc_o": o,
           "H": tl.int32, "GROUP": tl.int32, "N_CTX": tl.int32}
    div = ["LSE", "O"] + (["N_CTX"] if even else [])
    return compile(ASTSource(A.attn_fwd_tma_kernel, sig,
                             dict(HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal,
                                  EVEN_N=even, WARP_SPECIALIZE=ws, V_T=fp8),
                             {n: {"tile.divisibility": 16} for n in div}),
                   "sm_90a", CompileOptions(num_warps=warps, num_stages=stages, **opts),
                   cache=False)


def key_loops(ck):
    """The PTX text of each loop with wgmmas (inline asm included: the copies and waits)."""
    return [b for b in loop_bodies(ck.asm["ptx"]) if "wgmma.mma_async" in b]


def spills_and_regs(ck):
    info = ck.metadata["ptxas_info"]
    return (int(re.search(r"(\d+) bytes spill stores", info).group(1)),
            int(re.search(r"Used (\d+) registers", info).group(1)))


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal, even", [(False, True), (True, True), (False, False),
                                          (True, False)])
def test_key_loops_pipeline_k_and_v_by_tma(d, causal, even, dt):
    ck = compile_tma_fwd(d, causal, even, dt)
    loops = key_loops(ck)
    # causal: left of the diagonal, then the diagonal; else the full blocks (and the tail)
    assert len(loops) == (1 if even and not causal else 2)
    boxes = d * 2 // 128  # (a 128-byte swizzle copies boxes 64 fp16 wide)
    for text in loops:
        # iteration k + 2's copies of K and V, into the slot wgmma(k - 1) read
        assert len(re.findall(r"cp\.async\.bulk\.tensor\.2d", text)) == 2 * boxes, text
        assert "mbarrier.try_wait.parity" in text
        assert "mbarrier.arrive.expect_tx" in text
        # q k^T: both operands descriptors (Q's buffer, K's slot read transposed); p v: P
        # from registers, V's slot
        assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.(b?f16)\.\1 "
                         r"\{[^}]*\}, %rd\d+, %rd\d+", text)
        assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n{d}k16\.f32\.(b?f16)\.\1 "
                         r"\{[^}]*\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+", text)
        # no thread reads or writes shared memory in the loop: K is not moved through
        # registers, and the carried statistics keep the dots' layouts (no conversions)
        assert not re.search(r"\b(ld|st)\.shared", text), text
    ptx = ck.asm["ptx"]
    assert "ld.local" not in ptx and "st.local" not in ptx
    n, regs = spills_and_regs(ck)
    assert n == 0, ck.metadata["ptxas_info"]
    assert regs <= 168, ck.metadata["ptxas_info"]  # (Triton 3.6: 138 at D=128, 128x64, 8 warps)


def test_ring_depth_follows_num_stages():
    """Iterations 0 .. S-2 are issued before the loop: 4 stages issue three ahead."""
    for stages in (2, 3, 4):
        ck = compile_tma_fwd(128, stages=stages)
        ptx = ck.asm["ptx"]
        head = ptx[:ptx.index(loop_bodies(ptx)[0])] if loop_bodies(ptx) else ptx
        # Q's two boxes, then (S - 1) iterations of K and V, two boxes each
        assert len(re.findall(r"cp\.async\.bulk\.tensor\.2d", head)) == 2 + 4 * (stages - 1)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n", [40, 64])
def test_interpreted_against_numpy(monkeypatch, causal, n):
    monkeypatch.setattr(A.attn_fwd_tma_kernel, "interpret", True)
    rng = np.random.default_rng(0)
    Z, H, HKV, D = 1, 2, 1, 16
    q = (rng.standard_normal((Z, H, n, D)) * 0.5).astype(np.float16)
    k, v = ((rng.standard_normal((Z, HKV, n, D)) * 0.5).astype(np.float16) for _ in range(2))
    o, lse = A.attention_forward(q, k, v, causal, 0.3)
    kf, vf = (np.repeat(t.astype(np.float32), H // HKV, 1) for t in (k, v))
    s = q.astype(np.float32) @ kf.transpose(0, 1, 3, 2) * 0.3
    if causal:
        s = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, s)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    l = p.sum(-1, keepdims=True)
    np.testing.assert_allclose(o.astype(np.float32), (p / l) @ vf, atol=2e-3)
    np.testing.assert_allclose(lse, (m + np.log(l))[..., 0], atol=1e-4)


def test_shape_errors():
    q = np.zeros((1, 2, 8, 16), np.float16)
    with pytest.raises(ValueError, match=r"attention: head dim 12 is not one of 16, 32, 64, "
                                         r"128, 256"):
        A.attention_forward(np.zeros((1, 2, 8, 12), np.float16),
                            np.zeros((1, 2, 8, 12), np.float16),
                            np.zeros((1, 2, 8, 12), np.float16), False, 1.0)
    with pytest.raises(ValueError, match=r"attention: k and v \(1, 3, 8, 16\) do not match q"):
        A.attention_forward(q, np.zeros((1, 3, 8, 16), np.float16),
                            np.zeros((1, 3, 8, 16), np.float16), False, 1.0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_warp_specialized_key_loop(d, causal):
    """`tl.range(..., warp_specialize=True)` on the key loop (two loads at carried coordinates,
    two dots): a producer warp group (setmaxnreg.dec 40) runs a loop of its own that waits
    for empty slots and issues K's and V's copies, and computes no wgmma; the consumers'
    loop waits for full slots, runs both wgmmas and releases the slot.  Causal: the first
    loop (left of the diagonal) is specialized, the diagonal one keeps the pipeliner."""
    ck = compile_tma_fwd(d, causal, ws=True)
    ptx = ck.asm["ptx"]
    assert "setmaxnreg.dec.sync.aligned.u32 40" in ptx
    assert "setmaxnreg.inc.sync.aligned.u32" in ptx
    loops = loop_bodies(ptx)
    producer = [b for b in loops if "cp.async.bulk.tensor" in b and "wgmma" not in b]
    consumer = [b for b in loops if "wgmma.mma_async" in b]
    assert len(producer) == 1 and len(consumer) == (2 if causal else 1)
    boxes = d * 2 // 128
    copies = len(re.findall(r"cp\.async\.bulk\.tensor\.2d", producer[0]))
    assert copies and copies % (2 * boxes) == 0  # (LLVM may unroll the producer's loop)
    assert "mbarrier.try_wait.parity" in producer[0]  # (an empty slot)
    assert "cp.async.bulk.tensor" not in consumer[0]
    assert re.search(r"mbarrier\.arrive\.shared::cta\.b64", consumer[0])  # (the slot back)
    assert ('warp_specialize ignored: another loop of the kernel is warp-specialized'
            in ck.asm["tilegpu"]) == causal
    n, _ = spills_and_regs(ck)
    assert n == 0, ck.metadata["ptxas_info"]


@pytest.mark.parametrize("dt", ["e4m3", "e5m2"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal, even", [(False, True), (True, False)])
def test_fp8_forward(d, causal, even, dt):
    """fp8: both dots are fp8 wgmmas (Q K^T with K read transposed from its ring; P V with V
    copied from V^T's view, K-major as fp8 wgmma needs, and P from registers), P converted by
    the hardware's `cvt.rn.satfinite`, K and V copied by TMA in the loop, no spill."""
    ck = compile_tma_fwd(d, causal, even, dt)
    loops = key_loops(ck)
    assert len(loops) == (1 if even and not causal else 2)
    for text in loops:
        kinds = set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k32\.f32\.(\w+)\.(\w+)",
                               text))
        assert kinds == {("64", dt, dt), (str(d), dt, dt)}, kinds
        assert f"cvt.rn.satfinite.{dt}x2.f32" in text
        assert len(re.findall(r"cp\.async\.bulk\.tensor\.2d", text)) == 2
        # P from registers: its k32 fragment by a word exchange, a shuffle a 32-bit word (64 x
        # 64 bytes, 8 words a thread), a prmt each side of it; no shared-memory round trip (the
        # one barrier is the ring's, as in fp16).  P converted 4 values a word (two cvt x2),
        # its signs gathered by 3 prmts a word
        assert re.search(rf"m64n{d}k32\.f32\.{dt}\.{dt}\s+\{{[^}}]*\}},\s*"
                         r"\{%r\d+, %r\d+, %r\d+, %r\d+\}", text)
        assert not re.search(r"(st|ld)\.shared", text)
        assert len(re.findall(r"bar\.sync", text)) == 1
        assert len(re.findall(r"shfl\.sync\.idx\.b32", text)) == 8
        assert len(re.findall(r"prmt\.b32", text)) == 8 + 8 + 3 * 8
        assert len(re.findall(r"cvt\.rn\.satfinite", text)) == 16
    assert spills_and_regs(ck)[0] == 0


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_overlap_dots_key_loops(d, causal):
    """CompileOptions.overlap_dots: in every key loop (causal: left of the diagonal and the
    diagonal) K's copies and the slot's mbarrier wait come first, then S = q k^T, whose
    wait_group 0 also completes the previous iteration's P v; P v is issued and left in
    flight (wait_group 1 at the back edge), and V's copies into the slot the previous P v read
    are issued after it, behind a barrier (Triton's order); every group is waited for after
    the loops.  Without the option, P v is waited at once and both copies lead the loop."""
    pat = re.compile(r"(wgmma\.mma_async)|wgmma\.wait_group\.sync\.aligned\s+(\d)|(bar\.sync)|"
                     r"(cp\.async\.bulk\.tensor)|(mbarrier\.try_wait)")
    boxes = d * 2 // 128

    def events(text):
        out = []
        for m in pat.finditer(text):
            ev = ("mma" if m[1] else f"wait{m[2]}" if m[2] else "bar" if m[3] else
                  "tma" if m[4] else "mbwait")
            if not out or out[-1] != ev or ev == "wait0":
                out.append(ev)
        return out

    ck = compile_tma_fwd(d, causal, overlap_dots=True)
    loops = key_loops(ck)
    assert len(loops) == (2 if causal else 1)
    for text in loops:
        assert events(text) == ["tma", "mbwait", "mma", "wait0", "wait0", "mma", "bar", "tma",
                                "wait1"], events(text)
        tail = text[text.rindex("wgmma.mma_async"):]
        assert len(re.findall(r"cp\.async\.bulk\.tensor\.2d", tail)) == boxes  # V's
    ptx = ck.asm["ptx"]
    after = ptx[ptx.index(loops[-1]) + len(loops[-1]):]
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+0", after)
    n, regs = spills_and_regs(ck)
    assert n == 0 and regs <= 168, ck.metadata["ptxas_info"]
    assert "C7515" not in ck.metadata["ptxas_info"]  # (ptxas keeps the wgmmas pipelined)
    for text in key_loops(compile_tma_fwd(d, causal)):  # the option off: as before
        assert events(text) == ["bar", "tma", "mbwait", "mma", "wait0", "mma", "wait0"], \
            events(text)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_overlap_dots_warp_specialized_consumer(d, causal):
    """A warp-specialized consumer releases each slot to the producer (mbarrier.arrive on its
    empty barrier) after both dots: with P v(k) in flight the release of slot k moves to
    iteration k + 1, right after S(k + 1)'s wait (P v(k) done); nothing waits for the last
    slot (an arrive after the loop's wait made ptxas serialize every wgmma of the causal
    kernel: C7515).  Causal's diagonal loop, which keeps the pipeliner, overlaps as without
    warp specialization."""
    pat = re.compile(r"(wgmma\.mma_async)|wgmma\.wait_group\.sync\.aligned\s+(\d)|"
                     r"(mbarrier\.arrive\.shared)|(mbarrier\.try_wait)")
    ck = compile_tma_fwd(d, causal, ws=True, overlap_dots=True)
    ptx = ck.asm["ptx"]
    loops = [b for b in loop_bodies(ptx) if "wgmma.mma_async" in b]
    assert len(loops) == (2 if causal else 1)
    ev = []
    for m in pat.finditer(loops[0]):
        e = "mma" if m[1] else f"wait{m[2]}" if m[2] else "arrive" if m[3] else "mbwait"
        if not ev or ev[-1] != e or e == "wait0":
            ev.append(e)
    assert ev == ["mbwait", "mma", "wait0", "wait0", "arrive", "mma", "wait1"], ev
    if causal:
        assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+1", loops[1])
    assert spills_and_regs(ck)[0] == 0, ck.metadata["ptxas_info"]
    assert "C7515" not in ck.metadata["ptxas_info"]  # (wgmmas not serialized)


def test_tma_elect_option(monkeypatch):
    """CompileOptions.tma_elect: off by default, filled from TILEWORK_TMA_ELECT, in the cache
    key, a bool only; on, every TMA load of the forward is issued by the lane elect.sync picks
    in warp 0 (thread 0 arms the barrier), off, by thread 0 (ptxas makes that a loop over the
    active lanes: ELECT, BRA.U.ANY per copy)."""
    from tilework import CompileOptions as O
    assert not O().tma_elect
    monkeypatch.setenv("TILEWORK_TMA_ELECT", "1")
    assert O.from_env().tma_elect and O.from_env().key() != O().key()
    with pytest.raises(ValueError, match="tma_elect must be a bool, got 1"):
        O(tma_elect=1)
    for elect in (False, True):
        ptx = compile_tma_fwd(128, True, tma_elect=elect, overlap_dots=True).asm["ptx"]
        copies = re.findall(r"@%(\w) cp\.async\.bulk\.tensor\.2d\.shared", ptx)
        assert copies and set(copies) == {"e" if elect else "p"}, copies
        assert ("elect.sync _|%q, 0xffffffff" in ptx) == elect
        assert "mbarrier.arrive.expect_tx" in ptx
