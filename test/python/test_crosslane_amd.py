"""Cross-lane code on AMD pinned in the ISA: a row reduction (softmax's max and sum over a row
held by a wave's lanes) and a layout conversion within a wave (the bottom of this file).  The reduction is a butterfly of `gpu.shuffle xor` steps of width
= the wave size, which the ROCDL lowering and the AMDGPU backend turn into:

- CDNA (wave64): `ds_swizzle_b32 ... swizzle(SWAP,k)` for the steps inside 32 lanes (k = 1, 2,
  4, 8, 16) and `ds_bpermute_b32` for the step across the halves (lane ^ 32, byte address ^ 128);
  gfx950 does the 16 and 32 steps with `v_permlane16_swap`/`v_permlane32_swap`;
- RDNA (wave32): `ds_bpermute_b32` for every step, addressed by `tid & 31` xor-ed with the
  step's byte offset (4..64): a shuffle never reaches a lane beyond 31, and the exec masks are
  32-bit (`exec_lo`).

No DPP is emitted (docs/backends.md, "Not done yet"): ds_swizzle and ds_bpermute go through
the LDS crossbar without touching LDS memory.  Only the cross-wave step stores to LDS."""
import re

import pytest

from test_codeobject_amd import _check_note, _compile

_SCRATCH = re.compile(r"^\s*(scratch|buffer)_(load|store)", re.M)


def _lines(asm):
    return [ln.split(";")[0].strip() for ln in asm.splitlines()]


def _bpermute_xors(asm):
    """For each ds_bpermute_b32: the constant its address was xor-ed with (None: not a xor, e.g.
    the cross-wave broadcast), and the masks applied to the thread id (`v_and_b32 vX, M, v0`)."""
    xor_of, and_mask, found = {}, {}, []
    for ln in _lines(asm):
        m = re.match(r"v_xor_b32_e32 (v\d+), (0x[0-9a-f]+|\d+), (v\d+)$", ln)
        if m:
            xor_of[m[1]] = int(m[2], 0)
            continue
        m = re.match(r"v_and_b32_e32 (v\d+), (0x[0-9a-f]+|\d+), v0$", ln)
        if m:
            and_mask[m[1]] = int(m[2], 0)
        m = re.match(r"ds_bpermute_b32 v\d+, (v\d+), v\d+", ln)
        if m:
            found.append(xor_of.get(m[1]))
        m = re.match(r"\w+ (v\d+),", ln)
        if m and not ln.startswith("v_xor_b32") and not ln.startswith("ds_bpermute"):
            xor_of.pop(m[1], None)  # redefined
    return found, set(and_mask.values())


@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
def test_softmax_reduction_cdna_wave64(target):
    ck = _compile("softmax", target)
    asm = ck.asm["amdgcn"]
    swaps = {int(k) for k in re.findall(r"ds_swizzle_b32 v\d+, v\d+ offset:swizzle\(SWAP,(\d+)\)",
                                        asm)}
    assert swaps == {1, 2, 4, 8, 16}, swaps
    xors, masks = _bpermute_xors(asm)
    assert set(filter(None, xors)) == {128}, xors  # lane ^ 32, in bytes
    assert 63 in masks  # the lane: tid & 63
    assert "_dpp" not in asm
    assert not _SCRATCH.search(asm)
    _check_note(ck, target)


def test_softmax_reduction_gfx950_permlane_swaps():
    """gfx950 swaps lanes 16 and 32 apart in VALU (`v_permlane16_swap`, `v_permlane32_swap`):
    no ds_bpermute left in the butterfly."""
    ck = _compile("softmax", "gfx950")
    asm = ck.asm["amdgcn"]
    swaps = {int(k) for k in re.findall(r"ds_swizzle_b32 v\d+, v\d+ offset:swizzle\(SWAP,(\d+)\)",
                                        asm)}
    assert swaps == {1, 2, 4, 8}, swaps
    assert "v_permlane16_swap_b32" in asm and "v_permlane32_swap_b32" in asm
    xors, _ = _bpermute_xors(asm)
    assert not list(filter(None, xors)), xors
    assert "_dpp" not in asm
    assert not _SCRATCH.search(asm)
    _check_note(ck, "gfx950")


@pytest.mark.parametrize("target", ["gfx1100", "gfx1201"])
def test_softmax_reduction_rdna_wave32(target):
    ck = _compile("softmax", target)
    asm = ck.asm["amdgcn"]
    assert "ds_swizzle" not in asm and "_dpp" not in asm
    xors, masks = _bpermute_xors(asm)
    butterfly = [x for x in xors if x is not None]
    assert len(butterfly) >= 10, xors  # max and sum: 5 steps each
    assert set(butterfly) == {4, 8, 16, 32, 64}, xors  # lanes ^ 1 .. ^ 16, in bytes
    assert 31 in masks and 63 not in masks, masks  # the lane: tid & 31, never 32..63
    assert re.search(r"wavefront_size:\s*32", asm)
    assert "exec_lo" in asm and not re.search(r"s_\w+_b64\s[^\n]*\bexec\b", asm)
    assert not _SCRATCH.search(asm)
    _check_note(ck, target)


# A layout conversion within a wave (copy2d's loaded blocked tile -> another blocked layout of
# the same waves): the planner's shuffle path, `gpu.shuffle idx` of the wave's width, which is
# ds_bpermute_b32 in the ISA with no LDS store and no barrier.
_SAME_WAVES = {"gfx1100": ((2, 2), (4, 8)), "gfx1201": ((2, 2), (4, 8)),
               "gfx942": ((2, 1), (4, 16))}


@pytest.mark.parametrize("target", list(_SAME_WAVES))
def test_conversion_within_a_wave(target):
    import tilework.language as tl
    from tilework import CompileOptions
    from tilework.backends import parse_target
    from tilework.compiler.driver import ASTSource, compile
    from tilework.dialects.layout import Blocked
    from test_linear_layout import _copy_kernel, emulate_roundtrip, through

    spt, tpw = _SAME_WAVES[target]
    chain = [Blocked(spt, tpw, (4, 1), (1, 0))]
    width = parse_target(target).warp_size
    # the values survive blocked -> chain -> blocked on the emulator's waves of `width` lanes
    lowered = str(emulate_roundtrip(chain, (32, 16), target, 4).module)
    shuffles = re.findall(r"gpu\.shuffle +idx [^\n]*", lowered)
    assert shuffles and all(s.split(", ")[2].startswith(f"%c{width}_i32") for s in shuffles), \
        shuffles
    assert "gpu.barrier" not in lowered
    P = tl.pointer_type(tl.float32)
    ck = compile(ASTSource(_copy_kernel(), {"x": P, "o": P}, {"BM": 32, "BN": 16}, {}), target,
                 CompileOptions(num_warps=4), cache=False)
    ck = compile(through(chain)(ck.asm["tilegpu"]), target, CompileOptions(num_warps=4),
                 start="tilegpu", cache=False)
    asm = ck.asm["amdgcn"]
    assert "ds_bpermute_b32" in asm
    assert not re.search(r"\bds_(write|store)|\bs_barrier\b", asm)
    assert re.search(rf"wavefront_size:\s*{width}\b", asm)
    assert not _SCRATCH.search(asm)
