"""Descriptors made in the kernel (`tl.make_tensor_descriptor`) loaded by TMA on sm_90a,
compile-only: each program writes the tensor map in its 128-byte slot of the global scratch
(`tile.make_tensormap`: `tensormap.replace` of zeroed bytes, then the tensor-map proxy's
release and acquire fences), its loads copy from that address (`cp.async.bulk.tensor`, the
K loop pipelined), the metadata asks for the scratch, and the cases that keep the
block-pointer path.  On the GPU: test_device_tma_gpu.py."""
import re

import pytest

import tilework.language as tl
from tilework import CompileOptions
from tilework.backends.nvidia.compiler import find_ptxas, ptx_features
from tilework.compiler.driver import ASTSource, compile
from tilework.runtime import abi, allocation

from device_tma_kernels import (dev_box3d, dev_matmul, dev_remade, dev_rows, dev_two_maps,
                                dev_window)

F16 = tl.pointer_type(tl.float16)
MM_SIG = {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16, "M": tl.int32, "N": tl.int32,
          "K": tl.int32, "stride_am": tl.int32, "stride_bk": tl.int32, "stride_cm": tl.int32}
ALIGNED = {k: {"tile.divisibility": 16} for k in ("a_ptr", "b_ptr", "c_ptr", "stride_am",
                                                    "stride_bk", "stride_cm")}
MM_CONSTS = {"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}


def _matmul(target="sm_90a", attrs=ALIGNED, **opts):
    return compile(ASTSource(dev_matmul, MM_SIG, MM_CONSTS, attrs), target,
                   CompileOptions(num_warps=8, num_stages=3, **opts), cache=False)


def _window(dtype=tl.float16, block=(64, 64), attrs=None, target="sm_90a"):
    sig = {"a_ptr": tl.pointer_type(dtype), "out": tl.pointer_type(dtype), "R": tl.int32,
           "C": tl.int32, "stride_a": tl.int32, "r0": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in ("a_ptr", "out", "stride_a")} \
        if attrs is None else attrs
    return compile(ASTSource(dev_window, sig, {"BM": block[0], "BN": block[1]}, attrs),
                   target, CompileOptions(), cache=False)


@pytest.fixture(scope="module")
def matmul():
    return _matmul()


def test_matmul_writes_two_maps_in_its_scratch(matmul):
    """A and B get maps (slots 0 and 128 of a program's 256 bytes); C, only stored (the
    block-pointer store), gets none."""
    tile = matmul.asm["tile"]
    maps = re.findall(r'"tile.make_tensormap"\(.*?\{box = array<i32: (\d+), (\d+)>, '
                      r'offset = (\d+) : i32, .*?program_bytes = (\d+)', tile)
    assert maps == [("128", "64", "0", "256"), ("64", "64", "128", "256")]
    assert "{tile.global_scratch}" in tile and "tile.global_scratch = 256 : i32" in tile
    assert matmul.metadata["global_scratch_size"] == 256
    assert matmul.metadata["global_scratch_align"] == 128
    assert abi.param_kinds(matmul.metadata) == "ppp" + "i" * 6 + "p"  # scratch last


def test_matmul_ptx_fills_fences_and_copies_from_the_map(matmul):
    ptx = matmul.asm["ptx"]
    assert ".version 8.3" in ptx  # tensormap.replace is PTX 8.3 (other kernels keep 8.0)
    assert ptx.count("tensormap.replace.tile.global_address.global.b1024.b64") == 2
    assert ptx.count("tensormap.replace.tile.rank.global.b1024.b32") == 2
    assert "tensormap.replace.tile.global_stride.global.b1024.b64" in ptx
    assert "tensormap.replace.tile.swizzle_mode.global.b1024.b32" in ptx
    assert ptx.count("st.global.v4.b32 [") >= 16  # each map zeroed first (8 x 16 bytes)
    assert ptx.count("fence.proxy.tensormap::generic.release.gpu;") == 2
    assert ptx.count("fence.proxy.tensormap::generic.acquire.gpu") == 2
    # every copy's tensor map: a cvta.global of an address in the scratch parameter's slice
    params = re.findall(r"\.param \.u64 \.ptr \.global \.align \d+ (\w+)", ptx)
    scratch = params[-1]
    m = re.search(rf"ld\.param\.b64\s+(%rd\d+), \[{scratch}\]", ptx)
    assert m
    maps = set(re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::"
                          r"complete_tx::bytes \[%r\d+\], \[(%rd\d+),", ptx))
    assert maps
    for r in maps:
        assert re.search(rf"cvta\.global\.u64\s+{re.escape(r)}, %rd\d+;", ptx), r
    assert "mbarrier.try_wait.parity" in ptx


def test_matmul_k_loop_is_pipelined_on_the_maps(matmul):
    """tilegpu-pipeline-tma: rings of 3 slots, copies issued before the loop from the maps
    made before it."""
    tg = matmul.asm["tilegpu"]
    assert "!tilegpu.memdesc<array<i64: 1>, i64, unit, 3 : i32>" in tg
    first_map = tg.index("tile.make_tensormap")
    first_copy = tg.index('"tilegpu.tma_load"')
    assert first_map < first_copy < tg.index("scf.for")
    assert "tile.descriptor_load" not in tg and "warpgroup_dot" in tg


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas")
def test_ptxas_accepts_it(matmul):
    assert matmul.asm["cubin"] and "0 bytes spill" in matmul.metadata["ptxas_info"]


def test_two_maps_and_elemtypes():
    ck = compile(ASTSource(dev_two_maps, {"a_ptr": tl.pointer_type(tl.bfloat16),
                                          "b_ptr": tl.pointer_type(tl.bfloat16),
                                          "out": tl.pointer_type(tl.bfloat16), "R": tl.int32,
                                          "C": tl.int32, "stride": tl.int32},
                           {"BM": 32, "BN": 64},
                           {k: {"tile.divisibility": 16} for k in ("a_ptr", "b_ptr", "stride")}),
                 "sm_90a", CompileOptions(), cache=False)
    assert ck.metadata["global_scratch_size"] == 256
    assert ck.asm["ptx"].count("tensormap.replace.tile.elemtype.global.b1024.b32 [%rd") == 2
    assert re.search(r"elemtype\.global\.b1024\.b32 \[%rd\d+\], 10;", ck.asm["ptx"])  # bf16


@pytest.mark.parametrize("dtype, block, box, swizzle, elemtype", [
    (tl.float16, (64, 64), (64, 64), 3, 6), (tl.float32, (16, 32), (16, 32), 3, 7),
    (tl.float32, (8, 4), (8, 4), 0, 7), (tl.int8, (32, 256), (32, 128), 3, 0),
    (tl.int32, (4, 8), (4, 8), 0, 3)])
def test_map_fields_follow_the_plan(dtype, block, box, swizzle, elemtype):
    """The box (one swizzle wide where the block is several), the swizzle mode and the
    element type of the map, as the host map of the same block would have."""
    ptx = _window(dtype, block).asm["ptx"]
    assert re.search(rf"box_dim\.global\.b1024\.b32 \[%rd\d+\], 0, {box[1]};", ptx)
    assert re.search(rf"box_dim\.global\.b1024\.b32 \[%rd\d+\], 1, {box[0]};", ptx)
    assert re.search(rf"swizzle_mode\.global\.b1024\.b32 \[%rd\d+\], {swizzle};", ptx)
    assert re.search(rf"elemtype\.global\.b1024\.b32 \[%rd\d+\], {elemtype};", ptx)
    assert re.search(r"rank\.global\.b1024\.b32 \[%rd\d+\], 1;", ptx)


def _pointer_path(ck, stage="tile"):
    assert "tile.make_tensormap" not in ck.asm[stage]
    assert "global_scratch" not in ck.asm[stage]
    assert "global_scratch_size" not in ck.metadata
    assert "tensormap" not in ck.asm.get("ptx", "") and "cp.async.bulk.tensor" not in \
        ck.asm.get("ptx", "")


@pytest.mark.parametrize("drop", ["stride_am", "a_ptr"])
def test_unprovable_alignment_keeps_the_pointer_path(drop):
    """TMA needs a 16-byte aligned base and strides of 16-byte multiples; where the
    specialization does not show them, A's descriptor is a block pointer (B's still TMA).
    The frontend makes both maps; tile-tma-guard (the axis analysis) decides, and A's map
    goes with its scratch slot."""
    ck = _matmul(attrs={k: v for k, v in ALIGNED.items() if k != drop})
    assert ck.metadata["global_scratch_size"] == 128
    assert ck.asm["tile"].count('"tile.make_tensormap"') == 2
    assert ck.asm["tilegpu"].count('"tile.make_tensormap"') == 1
    assert "program_bytes = 128" in ck.asm["tilegpu"]


def test_unaligned_everything_is_all_pointer_path():
    ck = _window(attrs={})
    assert ck.asm["tile"].count('"tile.make_tensormap"') == 1  # (the pass decides)
    _pointer_path(ck, "tilegpu")


@pytest.mark.parametrize("target", ["sm_80", "sm_90", "gfx942"])
def test_other_targets_keep_the_pointer_path(target):
    _pointer_path(_window(target=target))


def test_tma_false_keeps_the_pointer_path():
    _pointer_path(_matmul(tma=False))


def test_a_tail_block_shape_without_a_plan_keeps_the_pointer_path():
    """A 512-row block exceeds TMA's box of 256: no plan, no map."""
    _pointer_path(_window(tl.float16, (512, 16)))


def test_no_allocator_is_triton_s_error(matmul):
    prev = allocation.get_allocator()
    allocation.set_allocator(None)
    try:
        with pytest.raises(RuntimeError, match="Kernel requires a runtime memory allocation, "
                                               "but no allocator was set"):
            allocation.global_scratch(matmul.metadata, (4, 1, 1), 0)
    finally:
        allocation.set_allocator(prev)


def test_ptx_version_is_raised_only_for_tensor_maps():
    assert ptx_features("call void asm \"tensormap.replace...\"", "+ptx80") == "+ptx83"
    assert ptx_features("define void @k()", "+ptx80") == "+ptx80"
    assert ptx_features("tensormap.replace", "+ptx86") == "+ptx86"
    ck = _window(attrs={})
    assert ".version 8.0" in ck.asm["ptx"]


F32 = tl.pointer_type(tl.float32)


def test_rank_1_and_3_maps():
    """Rank 1 (no stride to set: the builder's empty stride group) and rank 3 (two strides,
    ord 0 the middle dimension's): ptxas takes both."""
    one = compile(ASTSource(dev_rows, {"x": F32, "out": F32, "N": tl.int32}, {"B": 64},
                            {"x": {"tile.divisibility": 16}}), "sm_90a", CompileOptions(),
                  cache=False)
    assert re.search(r"rank\.global\.b1024\.b32 \[%rd\d+\], 0;", one.asm["ptx"])
    assert "global_stride" not in one.asm["ptx"] and "cp.async.bulk.tensor.1d" in one.asm["ptx"]
    attrs = {k: {"tile.divisibility": 16} for k in ("x", "s0", "s1")}
    three = compile(ASTSource(dev_box3d, {"x": F32, "out": F32, "A": tl.int32, "Bd": tl.int32,
                                          "C": tl.int32, "s0": tl.int32, "s1": tl.int32},
                              {"B0": 2, "B1": 4, "B2": 8}, attrs), "sm_90a", CompileOptions(),
                    cache=False)
    ptx = three.asm["ptx"]
    assert re.search(r"rank\.global\.b1024\.b32 \[%rd\d+\], 2;", ptx)
    assert len(re.findall(r"global_stride\.global\.b1024\.b64 \[%rd\d+\], [01], ", ptx)) == 2
    assert "cp.async.bulk.tensor.3d" in ptx
    if find_ptxas() is not None:
        assert one.asm["cubin"] and three.asm["cubin"]


def test_stores_stay_on_the_pointer_path_with_tma_store():
    """`tma_store=True` stores host descriptors by TMA; an in-kernel descriptor's store keeps
    the block-pointer store (and C, only stored, gets no map)."""
    ck = _matmul(tma_store=True)
    assert "tile.descriptor_store" not in ck.asm["tile"] and '"tile.store"' in ck.asm["tile"]
    assert ck.metadata["global_scratch_size"] == 256
    assert "cp.async.bulk.tensor.2d.global.shared::cta" not in ck.asm["ptx"]


def test_a_map_made_in_a_loop_is_rewritten_there():
    """A descriptor made in a loop body: its map (one slot) is written each iteration before
    that iteration's copy, which tilegpu-tma-loads waits for in the iteration."""
    sig = {"a_ptr": F32, "out": F32, "R": tl.int32, "C": tl.int32, "stride": tl.int32,
           "n": tl.int32}
    ck = compile(ASTSource(dev_remade, sig, {"BM": 32, "BN": 32},
                           {k: {"tile.divisibility": 16} for k in ("a_ptr", "stride")}),
                 "sm_90a", CompileOptions(), cache=False)
    tg = ck.asm["tilegpu"]
    loop = tg.index("scf.for")
    assert loop < tg.index("tile.make_tensormap") < tg.index('"tilegpu.tma_load"') < \
        tg.index("tilegpu.mbarrier_wait")
    assert ck.metadata["global_scratch_size"] == 128
