"""Compile-only checks of the attention forward's key loops on sm_90a (issue 10): where the
async-proxy fences go (tilegpu-proxy-fences), read from the PTX."""
import re

import pytest

from test_attention import compile_fwd, spills


def loop_bodies(ptx):
    """The text of each loop: from a label to the branch back to it."""
    out = []
    for m in re.finditer(r"^(\$L__BB\d+_\d+):", ptx, re.M):
        back = re.search(rf"bra(\.uni)?\s+{re.escape(m.group(1))};", ptx[m.end():])
        if back:
            out.append(ptx[m.end():m.end() + back.start()])
    return out


def instrs(text):
    return [ln.strip() for ln in text.splitlines()
            if ln.strip() and not ln.strip().startswith(("//", "$", "{", "}", ".reg"))]


def key_loops(d, causal):
    """The forward compiled for sm_90a, and the instructions of each of its key loops (the
    loops with wgmmas: two when causal)."""
    ck = compile_fwd("sm_90a", d, causal)
    loops = [b for b in loop_bodies(ck.asm["ptx"]) if "wgmma.mma_async" in b]
    assert len(loops) == (2 if causal else 1)
    return ck, [instrs(b) for b in loops]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_forward_loop_fences_once_after_the_copies_land(d, causal):
    """One fence.proxy.async per key-loop iteration, right after cp.async.wait_group (the
    copies it completed, before the barrier and before the next copies are issued); none
    between that barrier and the wgmmas, and q's buffer, written before the loop, is not
    fenced again in it."""
    ck, loops = key_loops(d, causal)
    for ins in loops:
        fences = [i for i, x in enumerate(ins) if x.startswith("fence.proxy.async")]
        assert len(fences) == 1, fences
        assert ins[fences[0] - 1].startswith("cp.async.wait_group"), ins[fences[0] - 1]
        first_wgmma = next(i for i, x in enumerate(ins) if x.startswith("wgmma.fence"))
        bar = next(i for i, x in enumerate(ins) if x.startswith("bar.sync"))
        assert fences[0] < bar < first_wgmma
        assert ins.index(next(x for x in ins if x.startswith("cp.async.cg"))) > bar
    assert spills(ck)[0] == 0, spills(ck)[1]


# ---- tilegpu-overlap-dots (CompileOptions.overlap_dots): P @ V in flight across the back edge

@pytest.fixture
def overlap(monkeypatch, tmp_path):
    """The pass on (CompileOptions.overlap_dots through its environment variable)."""
    monkeypatch.setenv("TILEWORK_OVERLAP_DOTS", "1")
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))


def test_overlap_dots_option(monkeypatch):
    """CompileOptions.overlap_dots: off by default, filled from TILEWORK_OVERLAP_DOTS, in the
    cache key, a bool only."""
    import tilework
    assert not tilework.CompileOptions().overlap_dots
    monkeypatch.setenv("TILEWORK_OVERLAP_DOTS", "1")
    on = tilework.CompileOptions.from_env()
    assert on.overlap_dots and on.key() != tilework.CompileOptions().key()
    with pytest.raises(ValueError, match="overlap_dots must be a bool, got 1"):
        tilework.CompileOptions(overlap_dots=1)


@pytest.mark.parametrize("d, causal, n, even", [
    (64, False, 256, True), (64, True, 384, True), (128, False, 256, True),
    (64, True, 200, False)])
def test_overlap_forward_emulated(overlap, d, causal, n, even):
    """The whole forward on the SIMT emulator (which raises on a wgmma result read before its
    wait and on a copy landing in bytes a wgmma in flight reads) against float64 numpy."""
    from test_attention_emulated import test_forward_sm90a_emulated
    test_forward_sm90a_emulated(d, causal, n, even)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_overlap_forward_loop_order(overlap, d, causal):
    """Per key loop: S's wgmma waits (wait_group 0, which also completes the previous P @ V),
    then P @ V is issued, V's copies go out after it behind a barrier (Triton's order), and
    P @ V is left in flight (wait_group 1); after the loops every group is waited for."""
    ck, loops = key_loops(d, causal)
    for ins in loops:
        waits = [x for x in ins if x.startswith("wgmma.wait_group")]
        assert [w.split()[-1] for w in waits] == ["0;", "0;", "1;"], waits
        w0 = next(i for i, x in enumerate(ins) if x.startswith("wgmma.wait_group"))
        copies = [i for i, x in enumerate(ins) if x.startswith("cp.async.cg")]
        late = [i for i in copies if i > w0]
        last_mma = max(i for i, x in enumerate(ins) if x.startswith("wgmma.mma_async"))
        assert late and min(late) > last_mma
        bar = max(i for i, x in enumerate(ins[:min(late)]) if x.startswith("bar.sync"))
        assert bar > last_mma
    assert spills(ck)[0] == 0, spills(ck)[1]


# ---- dot_wgmma.RING_K_STEP (off by default): a ring slot's K steps as additions -------------

@pytest.fixture
def ring_k_step(monkeypatch, tmp_path):
    """The flag on, compiling into a fresh cache (the flag is not in the cache key)."""
    from tilework.lowering.rules import dot_wgmma
    monkeypatch.setattr(dot_wgmma, "RING_K_STEP", True)
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))


def _encodings(ins):
    return [x for x in ins if re.match(r"bfe\.u32\s+%r\d+, %r\d+, 4, 14;", x)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_forward_loop_descriptors_add_k_steps(ring_k_step, d, causal):
    """Each key loop encodes a wgmma descriptor's start address (`bfe.u32 .., 4, 14`) at most
    once per shared operand (K's slot, V's slot); the other K steps add a constant, as
    Triton's, also for K's 128-byte swizzled K-major tile, whose rows start at multiples of 8
    (encoded afresh each step with the flag off: 5 a loop at D=64, 7 at D=128; SASS 285 -> 275
    and 361 -> 337 instructions a loop, Triton's 273 and 337)."""
    ck, loops = key_loops(d, causal)
    for ins in loops:
        assert 1 <= len(_encodings(ins)) <= 2, _encodings(ins)
    assert spills(ck)[0] == 0, spills(ck)[1]


def test_forward_loop_descriptors_default():
    """Off (the default): K's swizzled K steps are encoded afresh, 5 a loop at D=64."""
    _, loops = key_loops(64, False)
    assert len(_encodings(loops[0])) == 5


@pytest.mark.parametrize("d, causal, n, even", [(64, False, 256, True), (128, True, 256, True),
                                                (64, True, 200, False)])
def test_forward_ring_k_step_emulated(ring_k_step, d, causal, n, even):
    """The forward with the flag on, on the SIMT emulator (descriptors decoded as the PTX ISA
    defines them, the swizzle applied on address bits) against numpy."""
    from test_attention_emulated import test_forward_sm90a_emulated
    test_forward_sm90a_emulated(d, causal, n, even)


# ---- CompileOptions.wgmma_cp_async_fence off: no fence for the K and V rings' copies ---------

@pytest.fixture
def no_copy_fence(monkeypatch):
    """The option off through its environment variable (part of the cache key)."""
    monkeypatch.setenv("TILEWORK_WGMMA_CP_ASYNC_FENCE", "0")


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_forward_loop_unfenced_with_option_off(no_copy_fence, d, causal):
    """No fence.proxy.async in the key loops (Triton's loop: no MEMBAR.ALL.CTA); q's
    st.shared, before the loops, are still fenced."""
    ck, loops = key_loops(d, causal)
    for ins in loops:
        assert not [x for x in ins if x.startswith("fence.proxy.async")]
    assert "tilegpu.no_proxy_fence" in ck.asm["tilegpu"]
    assert ck.asm["ptx"].count("fence.proxy.async") >= 1
    assert spills(ck)[0] == 0, spills(ck)[1]


@pytest.mark.parametrize("overlapped", [False, True])
def test_forward_unfenced_emulated(no_copy_fence, monkeypatch, tmp_path, overlapped):
    """The forward without the copies' fence, alone and with tilegpu-overlap-dots, on the
    emulator taking cp.async's landed bytes as visible to wgmma with no fence (Triton's and
    CUTLASS's model) against numpy; the emulator that wants the fence rejects it."""
    from simt_emulator import Emulator
    from simt_wgmma import WgmmaError
    from test_attention_emulated import test_forward_sm90a_emulated
    monkeypatch.setenv("TILEWORK_OVERLAP_DOTS", str(int(overlapped)))
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))
    with pytest.raises(WgmmaError, match="with no fence.proxy.async after"):
        test_forward_sm90a_emulated(64, False, 256, True)
    monkeypatch.setattr(Emulator, "cp_async_needs_proxy_fence", False)
    test_forward_sm90a_emulated(64, False, 256, True)
    test_forward_sm90a_emulated(64, True, 200, False)
