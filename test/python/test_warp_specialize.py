"""`tl.range(..., warp_specialize=True)` on sm_90a, compile-only (tilegpu-warp-specialize,
lowering/warp_specialize.py): the PTX's producer warp group (setmaxnreg.dec, then its first
warp alone: waits on the empty barriers, the only TMA load copies, issued by elect.sync's
lane) and consumers (setmaxnreg.inc, waits on the full barriers, the wgmmas, the slots' release, named barriers), the launch's thread count
(`.maxntid`, metadata num_warps) and `.maxnreg`, the persistent form, and the loops where the
hint is ignored with a note.  The SIMT emulator does not run TMA loads (test/python/
simt_tma.py models the store only), so the split runs on a GPU only:
test_warp_specialize_gpu.py."""
import re

import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends.nvidia.compiler import find_ptxas
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type
from tilework.lowering.warp_specialize import register_split

from ws_kernels import ws_matmul, ws_persistent, ws_scaled

LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global"  # a TMA load (not a store)
BAR0 = re.compile(r"bar\.sync\s+0;")


def _sig(dt, bm, bn, bk):
    return {"a_desc": tensor_descriptor_type(dt, [bm, bk]),
            "b_desc": tensor_descriptor_type(dt, [bk, bn]),
            "c_desc": tensor_descriptor_type(dt, [bm, bn]),
            "M": tl.int32, "N": tl.int32, "K": tl.int32}


def _simple(dt=tl.float16, nw=8, ws=True, target="sm_90a", bm=128, bn=128, bk=64, **opts):
    return compile(ASTSource(ws_matmul, _sig(dt, bm, bn, bk),
                             {"BM": bm, "BN": bn, "BK": bk, "WS": ws}, {}), target,
                   CompileOptions(num_warps=nw, num_stages=3, **opts), cache=False)


def _persistent(dt=tl.float16, nw=8, ws=True, bm=128, bn=256, bk=64, num_stages=3,
                b_nk=False):
    sig = _sig(dt, bm, bn, bk)
    if b_nk:  # (B stored [N, K], read as b.T)
        sig["b_desc"] = tensor_descriptor_type(dt, [bn, bk])
    if dt == tl.float8e4nv:
        sig["c_desc"] = tensor_descriptor_type(tl.bfloat16, [bm, bn])
    return compile(ASTSource(ws_persistent, sig,
                             {"BM": bm, "BN": bn, "BK": bk, "GROUP_M": 8, "NUM_SMS": 132,
                              "WARP_SPECIALIZE": ws, "B_NK": b_nk}, {}), "sm_90a",
                   CompileOptions(num_warps=nw, num_stages=num_stages), cache=False)


def _sides(ptx):
    """(before the split, the producer, the consumers) of a kernel with two consumer warp
    groups: the PTX around its setmaxnreg.dec and setmaxnreg.inc."""
    dec, inc = ptx.index("setmaxnreg.dec"), ptx.index("setmaxnreg.inc")
    assert dec < inc
    return ptx[:dec], ptx[dec:inc], ptx[inc:]


def _check_split(ck, nw, stages=3, wait_group=1):
    ptx = ck.asm["ptx"]
    before, producer, consumer = _sides(ptx)
    # the launch: the consumers' warps and the producer warp group
    assert ck.metadata["num_warps"] == nw + 4
    assert f".maxntid {(nw + 4) * 32}, 1, 1" in ptx
    entry, dec, inc = register_split(nw)
    assert f".maxnreg {entry}" in ptx
    assert f"setmaxnreg.dec.sync.aligned.u32 {dec};" in producer
    assert f"setmaxnreg.inc.sync.aligned.u32 {inc};" in consumer
    # the barriers' init before the split (every thread: bar.sync 0), none after it
    assert before.count("mbarrier.init.shared::cta.b64") == 2 * stages  # full, empty
    assert BAR0.search(before) and not BAR0.search(producer) and not BAR0.search(consumer)
    # the producer: waits for an empty slot, arms the full barrier, copies; no wgmma
    assert "mbarrier.try_wait.parity" in producer
    assert "mbarrier.arrive.expect_tx" in producer and LOAD in producer
    assert "wgmma" not in producer and "bar.sync" not in producer
    # its program runs on its first warp only (the others leave after setmaxnreg), where one
    # lane, elect.sync's, issues each copy
    first = re.search(r"setp\.ne\.b32\s+%p\d+, %r\d+, (\d+);\s*@%p\d+ bra", producer)
    assert first and int(first.group(1)) == nw and first.start() < producer.index(LOAD)
    copies = [ln for ln in producer.splitlines() if LOAD in ln]
    assert copies and all("elect.sync _|%p, 0xffffffff;" in ln for ln in copies)
    assert "elect.sync" not in consumer and "elect.sync" not in before
    # the consumers: wait for a full slot, wgmma, release the slot (lane 0 per warp); the
    # copies are the producer's only; their barriers are named, of their own threads
    assert "mbarrier.try_wait.parity" in consumer and "wgmma.mma_async" in consumer
    assert "mbarrier.arrive.shared::cta.b64 _" in consumer
    assert re.search(rf"wgmma\.wait_group\.sync\.aligned\s+{wait_group}", consumer)
    assert LOAD not in consumer and LOAD not in before
    assert re.search(rf"bar\.sync\s+1, {nw * 32};", consumer)
    if find_ptxas():
        info = ck.metadata["ptxas_info"]
        assert "0 bytes spill stores" in info and "setmaxnreg' ignored" not in info
        assert f"Used {entry} registers" in info
        assert "min_ctas_per_sm" not in ck.metadata  # (.maxnreg: no occupancy hint)


@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16])
def test_loop_split_into_producer_and_consumers(dt):
    ck = _simple(dt)
    _check_split(ck, 8)
    tg = ck.asm["tilegpu"]
    assert "tilegpu.producer_warps = 4 : i32" in tg and "warp_specialize_note" not in tg
    # the producer recomputes the coordinates: a loop without the wgmma
    producer = tg[tg.index('"tilegpu.setmaxnreg"'):tg.index("} else {")]
    assert producer.count('"tilegpu.tma_load"') == 2 and "warpgroup_dot" not in producer


def test_one_consumer_warp_group_takes_no_registers():
    """num_warps 4: the launch's even share (248 at 256 threads) is already the most one
    group can use: the producer gives back, nobody takes (no setmaxnreg.inc)."""
    ck = _simple(nw=4)
    ptx = ck.asm["ptx"]
    assert ck.metadata["num_warps"] == 8 and ".maxntid 256, 1, 1" in ptx
    assert ".maxnreg 248" in ptx and "setmaxnreg.dec.sync.aligned.u32 40;" in ptx
    assert "setmaxnreg.inc" not in ptx
    assert re.search(r"bar\.sync\s+1, 128;", ptx)


def test_persistent_loop_split():
    """Tutorial 09's form: the producer loops over the same tiles and K steps, its ring
    counter running on across tiles; the consumers release each tile's last slot after the
    K loop and store the tile while the producer fills the next one's slots.  The slots are
    written by TMA (the async proxy) only: no fence.proxy.async before the wgmmas
    (tilegpu-proxy-fences knows the barrier arrive that releases a slot)."""
    ck = _persistent()
    _check_split(ck, 8)
    assert "fence.proxy.async" not in _sides(ck.asm["ptx"])[2]
    tg = ck.asm["tilegpu"]
    producer = tg[tg.index('"tilegpu.setmaxnreg"'):tg.index("} else {")]
    assert producer.count("scf.for") == 2 and "tile.store" not in producer
    consumer = tg[tg.index("} else {"):]
    assert consumer.count('"tilegpu.mbarrier_arrive"') == 2  # in the K loop, after it


def test_persistent_bf16_four_stages():
    ck = _persistent(tl.bfloat16, bn=128, num_stages=4)
    _check_split(ck, 8, stages=4)


@pytest.mark.parametrize("dt, bk, kind", [(tl.float8e4nv, 128, "e4m3.e4m3"),
                                          (tl.float16, 64, "f16.f16"),
                                          (tl.bfloat16, 64, "bf16.bf16")],
                         ids=["fp8", "fp16", "bf16"])
@pytest.mark.parametrize("ws", [True, False], ids=["ws", "plain"])
def test_persistent_b_transposed(dt, bk, kind, ws):
    """B stored [N, K] and read as `b.T` (Triton's fp8 tutorials; wgmma fp8 needs both operands
    K-major): the dot reads the TMA slot through a memdesc_trans view, so the wgmma stays
    asynchronous (wait_group 1) with nothing copied through registers (no shared-memory
    stores or loads, no spills), warp-specialized or in the plain TMA pipeline."""
    ck = _persistent(dt, bn=256, bk=bk, b_nk=True, ws=ws)
    ptx = ck.asm["ptx"]
    if ws:
        _check_split(ck, 8)
    assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n256k{32 if bk == 128 else 16}"
                     rf"\.f32\.{kind}", ptx)
    assert LOAD in ptx and "ld.shared" not in ptx and "st.shared" not in ptx
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx)
    tg = ck.asm["tilegpu"]
    assert '"tilegpu.memdesc_trans"' in tg and '"tile.trans"' not in tg
    if find_ptxas():
        assert "0 bytes spill stores" in ck.metadata["ptxas_info"]


def test_synchronous_dot_releases_the_slot_at_the_end_of_the_iteration():
    """A slot read into registers (A scaled before the dot) feeds a synchronous wgmma: the
    consumers release the slot (unpredicated) just before the yield."""
    ck = compile(ASTSource(ws_scaled, _sig(tl.float16, 128, 128, 64),
                           {"BM": 128, "BN": 128, "BK": 64}, {}), "sm_90a",
                 CompileOptions(num_warps=8, num_stages=3), cache=False)
    _check_split(ck, 8, wait_group=0)
    assert "fence.proxy.async" in _sides(ck.asm["ptx"])[2]  # (2 A: a generic write)
    tg = ck.asm["tilegpu"]
    loop = tg[tg.index("} else {"):]
    loop = loop[loop.index("scf.for"):loop.index("scf.yield")]
    assert '"tilegpu.local_load"' in loop and '"tilegpu.warpgroup_wait"' not in loop
    arrive = loop[loop.rindex('"tilegpu.mbarrier_arrive"'):]
    assert "operandSegmentSizes = array<i32: 1, 0>" in arrive  # no predicate
    assert loop.index('"tilegpu.warpgroup_dot"') < loop.index('"tilegpu.mbarrier_arrive"')


def test_off_is_the_plain_pipeline():
    ck = _simple(ws=False)
    assert ck.metadata["num_warps"] == 8 and "setmaxnreg" not in ck.asm["ptx"]
    assert "producer_warps" not in ck.asm["tilegpu"]


def _note(ck):
    m = re.search(r'tilegpu.warp_specialize_note = "([^"]*)"', ck.asm["tilegpu"])
    return m and m.group(1)


@tilework.jit
def ptr_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A K loop of pointer loads (cp.async's pipeline): nothing for a TMA producer."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


@pytest.mark.parametrize("case, why", [
    ("sm_80", "the target has no wgmma (sm_90a only)"),
    ("tma_off", "no TMA (descriptor) loads in the loop or in one loop directly inside it"),
    ("pointers", "no TMA (descriptor) loads in the loop or in one loop directly inside it"),
])
def test_hint_ignored_with_a_note(case, why):
    """Where the loop does not qualify the hint is ignored, as Triton ignores it: the kernel
    is the one without the hint (no producer, the launch's warps unchanged), and the note on
    the loop says why."""
    if case == "pointers":
        p16, p32 = tl.pointer_type(tl.float16), tl.pointer_type(tl.float32)
        ck = compile(ASTSource(ptr_matmul, {"a": p16, "b": p16, "c": p32, "M": tl.int32,
                                            "N": tl.int32, "K": tl.int32},
                               {"BM": 128, "BN": 128, "BK": 64}, {}), "sm_90a",
                     CompileOptions(num_warps=8), cache=False)
    else:
        ck = _simple(target="sm_80" if case == "sm_80" else "sm_90a",
                     **({"tma": False} if case == "tma_off" else {}))
    assert _note(ck) == f"warp_specialize ignored: {why}"
    assert ck.metadata["num_warps"] == 8 and "setmaxnreg" not in ck.asm["ptx"]
    assert ".maxntid 256, 1, 1" in ck.asm["ptx"]


def test_no_room_for_the_producer():
    ck = _simple(nw=32, bm=256, bn=128)
    assert _note(ck) == "warp_specialize ignored: num_warps 32 leaves no room for the " \
                        "producer warp group (32 warps a block at most)"
    assert ck.metadata["num_warps"] == 32 and "setmaxnreg" not in ck.asm["ptx"]


@pytest.mark.parametrize("nw, split", [(4, (248, 40, 248)), (8, (168, 40, 232)),
                                       (16, (96, 40, 104))])
def test_register_split(nw, split):
    """The entry count is the launch's even share; the consumers take what the producer's
    dec to 40 frees (the whole register file at most: 65536 per SM)."""
    assert register_split(nw) == split
    entry, dec, inc = split
    assert nw * 32 * inc + 128 * dec <= (nw + 4) * 32 * entry <= 65536


def test_register_split_under_maxnreg():
    assert register_split(8, cap=128) == (128, 40, 168)


@pytest.mark.parametrize("start", ["tilegpu", "llvm", "llir", "ptx"])
def test_restart_launches_the_producer_too(start):
    """A restart from a later stage's text launches the producer warps as well (from the
    module's tilegpu.launch_warps, or the PTX's .maxntid): launching only the consumers would
    leave them waiting for copies nobody issues."""
    ck = _simple()
    again = compile(ck.asm[start], "sm_90a", CompileOptions(num_warps=8), start=start,
                    cache=False)
    assert again.metadata["num_warps"] == 12
    assert again.asm["ptx"] == ck.asm["ptx"]
