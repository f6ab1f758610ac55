"""TMA loads of host tensor descriptors on sm_90a, compile-only: the plan (box, swizzle) per
block, the tensor-map kernel parameter ptxas accepts (`.param .align 64 .b8 [128]`, a grid
constant addressed by `cvta.param`), the copies and mbarrier waits in the PTX, the wgmma path
reading the TMA buffer, the cases that keep the block-pointer path, the host tensor map's
parameters and the launch ABI.  On the GPU: test_tma_gpu.py."""
import ctypes
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends.nvidia.compiler import find_ptxas
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type, tma_plan
from tilework.runtime import abi
from tilework.runtime.tma import encode, tensor_map_params
from tilework.tools.tensor_descriptor import TensorDescriptor

from tma_kernels import desc_matmul


def copy2d(a_desc, o_desc, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    o_desc.store([pm * BM, pn * BN], a_desc.load([pm * BM, pn * BN]) + 1)


def copy3d(a_desc, o_desc, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr):
    p = tl.program_id(0)
    o_desc.store([p * B0, 0, 0], a_desc.load([p * B0, 0, 0]))


def _compile(fn, sig, consts, target="sm_90a", **opts):
    return compile(ASTSource(tilework.jit(fn), sig, consts, {}), target,
                   CompileOptions(**opts), cache=False)


def _copy2d(dt=tl.float16, block=(64, 64), target="sm_90a", padding="zero", **opts):
    T = tensor_descriptor_type(dt, list(block), padding)
    return _compile(copy2d, {"a_desc": T, "o_desc": T}, {"BM": block[0], "BN": block[1]},
                    target, **opts)


# ---- the plan -------------------------------------------------------------------------------

@pytest.mark.parametrize("bits, block, plan", [
    (16, [64, 64], ([64, 64], 128)),     # rows of 128 bytes: one 128-byte-swizzled box
    (16, [128, 128], ([128, 64], 128)),  # rows of 256 bytes: two boxes 128 bytes wide
    (16, [64, 32], ([64, 32], 64)),
    (16, [64, 16], ([64, 16], 32)),
    (32, [16, 8], ([16, 8], 32)),
    (8, [128, 64], ([128, 64], 64)),
    (16, [64, 8], ([64, 8], 0)),         # rows of 16 bytes: no swizzle fits
    (32, [2, 4, 8], ([2, 4, 8], 0)),     # 3-D: row-major, one box
    (64, [16, 16], ([16, 16], 0)),       # 64-bit elements: no nvmma layout
    (16, [256, 64], ([256, 64], 128)),
])
def test_tma_plan(bits, block, plan):
    assert tma_plan(bits, block, "zero") == (list(plan[0]), plan[1])


@pytest.mark.parametrize("bits, block, padding", [
    (16, [64, 64], "nan"),      # TMA fills zeros only
    (16, [512, 64], "zero"),    # a box is at most 256 per dimension
    (16, [64, 4], "zero"),      # rows under 16 bytes
    (1, [64, 256], "zero"),     # i1
])
def test_no_tma_plan(bits, block, padding):
    assert tma_plan(bits, block, padding) is None


# ---- the compiled kernel ----------------------------------------------------------------------

def test_load_is_a_tma_copy_with_a_grid_constant_tensor_map():
    ck = _copy2d()
    ptx = ck.asm["ptx"]
    # the tensor map: the last parameter, 128 bytes, 64-aligned, addressed generically
    params = re.findall(r"\.param (.*?)copy2d_param_(\d+)(\[128\])?", ptx)
    assert params[-1] == (".align 64 .b8 ", str(len(params) - 1), "[128]")
    assert sum(1 for p in params if p[2]) == 1  # only the loaded descriptor has one
    assert f"cvta.param.u64" in ptx
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx"
                     "::bytes") == 1
    assert "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r" in ptx and "8192;" in ptx
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx
    assert "mbarrier.init.shared::cta.b64" in ptx and "mbarrier.inval.shared::cta.b64" in ptx
    assert "fence.mbarrier_init.release.cluster" in ptx
    assert "ld.global" not in ptx  # the load is the copy; the store stays st.global
    assert "st.global" in ptx
    assert ck.metadata["tma"] == [{"arg": "a_desc", "box": [64, 64], "swizzle": 128}]
    assert ck.metadata["shared"] >= 64 * 64 * 2 + 8
    if find_ptxas():
        assert ck.asm.get("cubin")  # ptxas took the parameter and the instructions


@pytest.mark.parametrize("start", ["tilegpu", "llvm"])
def test_restart_keeps_the_tensor_map_plans(start):
    ck = _copy2d()
    again = compile(ck.asm[start], "sm_90a", start=start, cache=False)
    assert again.metadata["tma"] == ck.metadata["tma"]
    assert again.asm["ptx"] == ck.asm["ptx"]


def test_tile_ir_has_the_tensor_map_parameter():
    ck = _copy2d()
    head = ck.asm["tile"].splitlines()[1]
    assert head.endswith("%arg8: !tile.ptr<i8> {tile.tma}) attributes {tile.kernel, "
                         "tile.tma = [\"arg=a_desc;box=64,64;swizzle=128\"]} {")
    assert '"tile.descriptor_load"(%arg8' in ck.asm["tile"]
    assert abi.param_kinds(ck.metadata) == "piil" * 2 + "T"


def test_wide_rows_are_copied_as_several_boxes():
    ck = _copy2d(block=(64, 128))
    assert ck.asm["ptx"].count("cp.async.bulk.tensor.2d") == 2
    assert ck.metadata["tma"][0]["box"] == [64, 64]


def test_3d_block_is_one_unswizzled_box():
    T = tensor_descriptor_type(tl.float32, [2, 4, 8])
    ck = _compile(copy3d, {"a_desc": T, "o_desc": T}, {"B0": 2, "B1": 4, "B2": 8})
    assert ck.asm["ptx"].count("cp.async.bulk.tensor.3d") == 1
    assert ck.metadata["tma"] == [{"arg": "a_desc", "box": [2, 4, 8], "swizzle": 0}]


@pytest.mark.parametrize("case", ["tma_off", "nan_padding", "sm_80", "big_box"])
def test_block_pointer_path_stays(case):
    if case == "tma_off":
        ck = _copy2d(tma=False)
    elif case == "nan_padding":
        ck = _copy2d(padding="nan")
    elif case == "sm_80":
        ck = _copy2d(target="sm_80")
    else:
        ck = _copy2d(block=(512, 16))
    assert "cp.async.bulk.tensor" not in ck.asm["ptx"] and "tma" not in ck.metadata
    assert "ld.global" in ck.asm["ptx"] and "tile.tma" not in ck.asm["tile"]
    assert "T" not in abi.param_kinds(ck.metadata)


def test_tma_option_is_in_the_cache_key():
    assert CompileOptions(tma=False).key() != CompileOptions().key()
    with pytest.raises(ValueError, match="tma must be a bool, got 1"):
        CompileOptions(tma=1)


def _gemm(dt=tl.float16, stages=3, **kw):
    TA = tensor_descriptor_type(dt, [128, 64])
    TB = tensor_descriptor_type(dt, [64, 128])
    return _compile(desc_matmul, {"a_desc": TA, "b_desc": TB,
                                  "c_ptr": tl.pointer_type(tl.float32), "M": tl.int32,
                                  "N": tl.int32, "K": tl.int32},
                    {"BM": 128, "BN": 128, "BK": 64}, num_warps=4, num_stages=stages, **kw)


@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16])
@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_descriptor_gemm_feeds_wgmma_from_the_tma_buffer(dt, stages):
    """The loads of a descriptor GEMM are TMA copies; their buffers are the wgmma operands
    (no register round trip: no local_load of them, no local_alloc from registers).  With
    num_stages S > 1 the loop is pipelined (tilegpu-pipeline-tma): the copies of iterations
    0..S-2 before it, iteration k+S-1's in it, one ring slot and mbarrier per stage."""
    ck = _gemm(dt, stages)
    ptx, tg = ck.asm["ptx"], ck.asm["tilegpu"]
    assert "wgmma.mma_async" in ptx
    # a: one box; b: two 64-wide boxes; per issue site (the prologue's and the loop's)
    assert ptx.count("cp.async.bulk.tensor.2d") == 3 * (stages if stages > 1 else 1)
    assert ptx.count("mbarrier.try_wait.parity") == (1 if stages > 1 else 2)
    assert ptx.count("mbarrier.init.shared::cta.b64") == (stages if stages > 1 else 2)
    assert '"tilegpu.local_load"' not in tg and not re.search(r'"tilegpu.local_alloc"\(%', tg)
    assert '"tilegpu.warpgroup_dot"' in tg and '"tile.descriptor_load"' not in tg
    assert [p["box"] for p in ck.metadata["tma"]] == [[128, 64], [64, 64]]
    loop = tg[tg.index("scf.for"):tg.index("scf.yield")]
    # pipelined: one barrier, before the copies into the slot k-1 read; wgmma(k) in flight
    # while they are issued (after wgmma(k-1) completes)
    assert loop.count('"tilegpu.barrier"') == (1 if stages > 1 else 3)
    assert ('"tilegpu.warpgroup_wait"' in loop) == (stages > 1)
    if stages > 1:
        assert loop.index('"tilegpu.warpgroup_wait"') < loop.index('"tilegpu.tma_load"')
        assert "wgmma.wait_group.sync.aligned 1" in ptx
    if stages > 1:
        elem = "f16" if dt == tl.float16 else "bf16"
        ring = f"!tilegpu.memdesc<array<i64: 128, 64>, {elem}, #tilegpu.nvmma_shared<128 : i32, " \
               f"false, 16 : i32>, {stages} : i32>"
        assert ring in tg
    if find_ptxas():
        assert ck.asm.get("cubin")
        assert "0 bytes spill stores" in ck.metadata["ptxas_info"]


def test_pipeline_depth_shrinks_to_fit_shared_memory():
    ck = _gemm(stages=8)
    note = re.search(r'tilegpu.pipeline_note = "([^"]*)"', ck.asm["tilegpu"]).group(1)
    # (the epilogue's conversion after the loop reuses the buffers' bytes: only the scratch
    # of ops in the loop counts against the stages)
    assert note == ("num_stages 8 -> 7: the TMA buffers of 8 stages (and 0 bytes of "
                    "scratch) exceed the 232448 bytes of shared memory")
    assert "cp.async.bulk.tensor" in ck.asm["ptx"]


def test_pipelining_off_with_tma_off():
    ck = _gemm(stages=3, tma=False)
    assert "cp.async.bulk.tensor" not in ck.asm["ptx"] and "ld.global" in ck.asm["ptx"]
    assert "tilegpu.pipeline_note" not in ck.asm["tilegpu"]


# ---- the host side ----------------------------------------------------------------------------

def test_tensor_map_params():
    buf = np.zeros((100, 72), np.float16)  # rows of 144 bytes
    d = TensorDescriptor(buf[:, :70], [100, 70], [72, 1], [64, 64])
    p = tensor_map_params(d, {"box": [64, 64], "swizzle": 128})
    assert p == {"data_type": "FLOAT16", "rank": 2, "address": buf.ctypes.data,
                 "dims": [70, 100], "strides": [144], "box": [64, 64],
                 "element_strides": [1, 1], "interleave": "NONE", "swizzle": "128B",
                 "l2_promotion": "L2_128B", "oob_fill": "NONE"}
    x = np.zeros((4, 8, 16), np.float32)
    p = tensor_map_params(TensorDescriptor.from_tensor(x, [2, 4, 8]),
                          {"box": [2, 4, 8], "swizzle": 0})
    assert (p["dims"], p["strides"], p["box"], p["swizzle"], p["data_type"]) == \
        ([16, 8, 4], [64, 512], [8, 4, 2], "NONE", "FLOAT32")


def test_tensor_map_params_rejections():
    x = np.zeros((16, 16), np.float16)
    with pytest.raises(ValueError, match=r"tensor map box \[64\] does not have the "
                                         r"descriptor's rank 2"):
        tensor_map_params(TensorDescriptor.from_tensor(x, [16, 16]), {"box": [64], "swizzle": 0})
    b = np.zeros((16, 16), np.bool_)
    with pytest.raises(ValueError, match="TMA cannot copy tensors of bool"):
        tensor_map_params(TensorDescriptor.from_tensor(b, [16, 16]), {"box": [16, 16],
                                                                      "swizzle": 0})


def test_tensor_map_slot():
    slots = [t() for t in abi.ctypes_of("piT")]
    assert ctypes.sizeof(slots[2]) == 128
    slots[2].value = bytes(range(128))
    assert slots[2].value == bytes(range(128))
    assert abi.encode_values("T", [bytes(128)]) == [bytes(128)]


def test_bundles_refuse_tma_kernels(tmp_path):
    from tilework.runtime import bundle
    with pytest.raises(ValueError, match="kernel copy2d loads host tensor descriptors by TMA "
                                         r".*compile it with tma=False"):
        bundle.write([_copy2d()], str(tmp_path))
    assert bundle.write([_copy2d(tma=False)], str(tmp_path))


def test_encode_passes_the_c_arguments():
    """encode() calls cuTensorMapEncodeTiled's C signature with the enums' values, arrays
    innermost first and a 64-byte-aligned map (a stand-in records the call)."""
    seen = {}

    def fake(at, dt, rank, addr, dims, strides, box, es, il, sw, l2, oob):
        seen.update(at=at, args=(dt, rank, addr, list(dims[:rank]), list(strides[:rank - 1]),
                                 list(box[:rank]), list(es[:rank]), il, sw, l2, oob))
        ctypes.memmove(at, bytes(range(128)), 128)
        return 0
    buf = np.zeros((100, 72), np.float16)
    d = TensorDescriptor(buf[:, :70], [100, 70], [72, 1], [64, 64])
    out = encode(tensor_map_params(d, {"box": [64, 64], "swizzle": 128}), fake)
    assert out == bytes(range(128)) and seen["at"] % 64 == 0
    assert seen["args"] == (6, 2, buf.ctypes.data, [70, 100], [144], [64, 64], [1, 1], 0, 3,
                            2, 0)
    with pytest.raises(ValueError, match=r"cuTensorMapEncodeTiled failed \(CUresult 1\)"):
        encode(tensor_map_params(d, {"box": [64, 64], "swizzle": 128}), lambda *a: 1)


@tilework.jit
def window2d(a_desc, out, r0, c0, BM: tl.constexpr, BN: tl.constexpr):
    p = tl.program_id(0)
    v = a_desc.load([r0 + p * BM, c0 * 2 + 8])
    rm = p * BM + tl.arange(0, BM)
    tl.store(out + rm[:, None] * BN + tl.arange(0, BN)[None, :], v)


@pytest.mark.parametrize("dt, c0_div, tma", [(tl.float16, None, False), (tl.float16, 16, True),
                                             (tl.float32, None, False), (tl.float32, 16, True),
                                             (tl.int8, 16, False)])
def test_inner_offset_must_be_a_known_multiple_of_16_bytes(dt, c0_div, tma):
    """A TMA copy whose rows start off a 16-byte boundary faults (illegal instruction, seen on
    an H100): a load whose inner offset is not known to be such a multiple (from constants,
    sums, products and the arguments' specialization) keeps the block-pointer path, and its
    tensor-map parameter goes: the lowering's decision (tile-tma-guard), the tile stage holds
    the TMA load with its fallback either way."""
    sig = dict(a_desc=tensor_descriptor_type(dt, [64, 64], "zero"), out=tl.pointer_type(dt),
               r0=tl.int32, c0=tl.int32)
    attrs = {"c0": {"tile.divisibility": c0_div}} if c0_div else {}
    ck = compile(ASTSource(window2d, sig, dict(BM=64, BN=64), attrs), "sm_90a",
                 CompileOptions(num_warps=4), cache=False)
    # c0 * 2 + 8 with c0 a multiple of 16: a multiple of 8 elements, 16 bytes of fp16 but
    # 8 of int8; with c0 unknown, only of 2
    assert ("cp.async.bulk.tensor" in ck.asm["ptx"]) == tma
    assert '"tile.descriptor_load"' in ck.asm["tile"]
    assert (".tma" in ck.asm["tilegpu"]) == tma and ("tma" in ck.metadata) == tma
