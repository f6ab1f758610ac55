"""The TMA ring across a persistent loop's tiles (lowering/pipeline_tiles.py), compiled for
sm_90a without a GPU: examples/persistent_matmul.py's `matmul_tma_persistent` (tiles' loop
`flatten=True`) gets its rings, barriers and their inits before the tiles' loop and its
invals after it, for every plain config; the warp-specialized form, a loop without
`flatten` (`matmul_persistent`) and rings that would leave no room for the epilogue keep the
rings per tile.  On a GPU: test_pipeline_tiles_gpu.py; the IR: tilegpu-pipeline-tma.mlir."""
import pytest

import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type as T
from persistent_matmul import TMA_CONFIGS, matmul_persistent, matmul_tma_persistent


def _compile(kernel, bm, bn, bk, warps, stages, cx, **opts):
    sig = {"a_desc": T(tl.float16, [bm, bk]), "b_desc": T(tl.float16, [bk, bn]),
           "c_desc": T(tl.float16, [bm, bn]), "M": tl.int32, "N": tl.int32, "K": tl.int32}
    attrs = {f"{d}{x}": {"tile.divisibility": 16} for d in ("a_desc", "b_desc", "c_desc")
             for x in ("", ".shape0", ".shape1", ".stride0")}
    return compile(ASTSource(kernel, sig, cx, attrs), "sm_90a",
                   CompileOptions(num_warps=warps, num_stages=stages, **opts), cache=False)


def _across_tiles(ck) -> bool:
    """Whether the tiles' loop took the form (its mark), and the tilegpu IR inits the barriers
    before the first loop."""
    text = ck.asm["tilegpu"]
    marked = "tilegpu.ring_across_tiles" in text
    if marked:
        lines = text.splitlines()
        first_for = next(i for i, x in enumerate(lines) if "scf.for" in x)
        inits = [i for i, x in enumerate(lines) if "tilegpu.mbarrier_init" in x]
        assert inits and max(inits) < first_for
    return marked


def _tma_cx(c, ws):
    return {**c.kwargs, "WARP_SPECIALIZE": ws, "NUM_SMS": 132, "B_NK": False}


@pytest.mark.parametrize("cfg", [c for c in TMA_CONFIGS if not c.kwargs["WARP_SPECIALIZE"]],
                         ids=lambda c: f"{c.kwargs['BM']}x{c.kwargs['BN']}x{c.kwargs['BK']}")
def test_plain_configs_keep_the_ring_across_tiles(cfg):
    k = cfg.kwargs
    ck = _compile(matmul_tma_persistent, k["BM"], k["BN"], k["BK"], cfg.num_warps,
                  cfg.num_stages, _tma_cx(cfg, False))
    assert _across_tiles(ck)
    ptx = ck.asm["ptx"]
    assert ptx.count("mbarrier.init") == cfg.num_stages
    assert "0 bytes spill stores" in ck.metadata["ptxas_info"]


def test_warp_specialized_keeps_rings_per_tile():
    cfg = next(c for c in TMA_CONFIGS if c.kwargs["WARP_SPECIALIZE"])
    k = cfg.kwargs
    ck = _compile(matmul_tma_persistent, k["BM"], k["BN"], k["BK"], cfg.num_warps,
                  cfg.num_stages, _tma_cx(cfg, True))
    assert not _across_tiles(ck)


def test_loop_without_flatten_keeps_rings_per_tile():
    ck = _compile(matmul_persistent, 128, 128, 64, 8, 4,
                  dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, NUM_SMS=132))
    assert not _across_tiles(ck)


def test_rings_that_leave_no_room_for_the_epilogue_stay_per_tile():
    """128x256x64 at 4 stages: 192 KiB of rings, and the epilogue's 64 KiB C block would not
    fit beside them for the whole loop; per tile, the epilogue reuses the rings' bytes."""
    ck = _compile(matmul_tma_persistent, 128, 256, 64, 8, 4,
                  dict(BM=128, BN=256, BK=64, GROUP_M=8, WARP_SPECIALIZE=False, NUM_SMS=132,
                       B_NK=False))
    assert not _across_tiles(ck)
    assert ck.metadata["shared"] <= 227 * 1024


@pytest.mark.parametrize("cfg", TMA_CONFIGS,
                         ids=lambda c: f"{c.kwargs['BM']}x{c.kwargs['BN']}x{c.kwargs['BK']}"
                                       f"{'-ws' if c.kwargs['WARP_SPECIALIZE'] else ''}")
def test_tma_store_waits_for_its_reads_at_the_next_epilogue(cfg):
    """With `tma_store`, the plain kernel's store buffer is allocated before the tiles' loop and
    the store left in flight (tilegpu-tma-store-wait-later): one read wait before the next
    tile's writes of the buffer, one after the loop; its 16-bit accumulator written by
    stmatrix (`stmatrix=True`).  Not where the buffer, the rings and the guard's fallback conversion would
    exceed shared memory together (128x256x64 at 3 stages: 144 + 64 + 64 KiB), nor in the
    warp-specialized kernel (rings per tile): there the store keeps its own wait."""
    k = cfg.kwargs
    ws = k["WARP_SPECIALIZE"]
    ck = _compile(matmul_tma_persistent, k["BM"], k["BN"], k["BK"], cfg.num_warps,
                  cfg.num_stages, _tma_cx(cfg, ws), tma_store=True, stmatrix=True)
    tg, ptx = ck.asm["tilegpu"], ck.asm["ptx"]
    later = not ws and (k["BM"], k["BN"]) != (128, 256)
    assert ("tilegpu.wait_later" in tg) == later
    assert tg.count('"tilegpu.tma_store_wait"') == (2 if later else 0)
    assert ptx.count("cp.async.bulk.wait_group.read 0") == (2 if later else 1)
    assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert "0 bytes spill stores" in ck.metadata["ptxas_info"]
    assert ck.metadata["shared"] <= 227 * 1024
