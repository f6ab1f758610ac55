"""The TMA-store epilogue on sm_90a (`CompileOptions.tma_store`): `desc.store` of a host
descriptor with a TMA plan is `tile.descriptor_store` -> the tile written to a shared buffer in
the box layout, `fence.proxy.async`, a barrier, one thread's
`cp.async.bulk.tensor.<r>d.global.shared::cta.bulk_group`, commit and `wait_group.read 0`.
Compile-only checks (PTX, ptxas), then the stores run on the SIMT emulator (simt_tma.py: the
tensor map's box and swizzle from the CUDA definitions, clipping at the tensor's edges)
against numpy.  On the GPU: test_tma_store_gpu.py."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends.nvidia.compiler import find_ptxas
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type

from simt_emulator import Emulator
from simt_tma import TensorMap, TmaError
from tma_kernels import desc_matmul_store, ptr_matmul_desc_store, store_block, store_block3d

SM90A = "sm_90a"


def _compile(fn, sig, consts, target=SM90A, attrs=None, **opts):
    return compile(ASTSource(fn, sig, consts, attrs or {}), target, CompileOptions(**opts),
                   cache=False)


def _store(dt=tl.float16, block=(64, 64), c0=0, target=SM90A, **opts):
    sig = {"x": tl.pointer_type(dt), "o_desc": tensor_descriptor_type(dt, list(block)),
           "r0": tl.int32}
    return _compile(store_block, sig, {"BM": block[0], "BN": block[1], "C0": c0}, target,
                    **opts)


# ---- the compiled kernel ----------------------------------------------------------------------

def test_store_is_a_fenced_bulk_copy_committed_and_waited():
    ck = _store(tma_store=True)
    ptx, tg = ck.asm["ptx"], ck.asm["tilegpu"]
    assert '"tile.descriptor_store"' in ck.asm["tile"]
    assert '"tilegpu.tma_store"' in tg and '"tile.descriptor_store"' not in tg
    i_st = ptx.rindex("st.shared")
    i_fence = ptx.index("fence.proxy.async.shared::cta;")
    i_bar = ptx.index("bar.sync", i_fence)
    i_copy = ptx.index("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd")
    i_commit = ptx.index("cp.async.bulk.commit_group;")
    i_wait = ptx.index("cp.async.bulk.wait_group.read 0;")
    assert i_st < i_fence < i_bar < i_copy < i_commit < i_wait
    assert ptx.count("cp.async.bulk.tensor") == 1
    assert "st.global" not in ptx  # no masks, no pointer stores: the hardware clips
    assert ck.metadata["tma"] == [{"arg": "o_desc", "box": [64, 64], "swizzle": 128}]
    if find_ptxas():
        assert ck.asm.get("cubin")
        assert "0 bytes spill stores" in ck.metadata["ptxas_info"]


@pytest.mark.parametrize("case", ["default", "tma_store_off", "tma_off", "sm_80", "nan_padding",
                                  "inner_offset"])
def test_block_pointer_store_stays(case):
    opts = {"tma_store": True}
    kw = {}
    if case == "default":
        opts = {}
    elif case == "tma_store_off":
        opts = {"tma_store": False}
    elif case == "tma_off":
        opts["tma"] = False
    elif case == "sm_80":
        kw["target"] = "sm_80"
    elif case == "inner_offset":
        kw["c0"] = 4  # 8 bytes of fp16: not a multiple of 16 (the GPU faults)
    if case == "nan_padding":
        sig = {"x": tl.pointer_type(tl.float16),
               "o_desc": tensor_descriptor_type(tl.float16, [64, 64], "nan"), "r0": tl.int32}
        ck = _compile(store_block, sig, {"BM": 64, "BN": 64, "C0": 0}, **opts)
    else:
        ck = _store(**kw, **opts)
    assert "cp.async.bulk" not in ck.asm["ptx"] and "st.global" in ck.asm["ptx"]
    assert '"tile.descriptor_store"' not in ck.asm["tile"] and "tma" not in ck.metadata


def test_tma_store_option():
    assert CompileOptions(tma_store=True).key() != CompileOptions().key()
    assert CompileOptions().tma_store is False
    with pytest.raises(ValueError, match="tma_store must be a bool, got 1"):
        CompileOptions(tma_store=1)


def test_environment_switch(monkeypatch):
    monkeypatch.setenv("TILEWORK_TMA_STORE", "1")
    assert CompileOptions.from_env().tma_store is True
    assert CompileOptions.from_env(tma_store=False).tma_store is False
    monkeypatch.setenv("TILEWORK_TMA_STORE", "0")
    assert CompileOptions.from_env().tma_store is False


def test_wide_rows_are_stored_as_several_boxes():
    ck = _store(block=(64, 128), tma_store=True)
    copies = re.findall(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group",
                        ck.asm["ptx"])
    assert len(copies) == 2 and ck.asm["ptx"].count("cp.async.bulk.commit_group") == 1
    assert ck.metadata["tma"][0]["box"] == [64, 64]


def test_3d_store_is_one_unswizzled_box():
    sig = {"x": tl.pointer_type(tl.float32),
           "o_desc": tensor_descriptor_type(tl.float32, [2, 4, 8]), "r0": tl.int32}
    ck = _compile(store_block3d, sig, {"B0": 2, "B1": 4, "B2": 8}, tma_store=True)
    assert ck.asm["ptx"].count("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group") == 1
    assert ck.metadata["tma"] == [{"arg": "o_desc", "box": [2, 4, 8], "swizzle": 0}]


def _atomic(x, o_desc, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    o_desc.atomic_add([0, 0], tl.load(x + rm[:, None] * BN + rn[None, :]))


def test_atomics_keep_the_block_pointer_path():
    T = tensor_descriptor_type(tl.float32, [16, 32])
    ck = _compile(tilework.jit(_atomic), {"x": tl.pointer_type(tl.float32), "o_desc": T},
                  {"BM": 16, "BN": 32}, tma_store=True)
    assert "cp.async.bulk" not in ck.asm["ptx"]
    assert "red.global.gpu.relaxed.add.f32" in ck.asm["ptx"]
    assert "tma" not in ck.metadata


def _gemm(kernel=desc_matmul_store, dt=tl.float16, out=tl.float16, block=(128, 128, 64),
          warps=4, stages=3, **opts):
    bm, bn, bk = block
    if kernel is desc_matmul_store:
        sig = {"a_desc": tensor_descriptor_type(dt, [bm, bk]),
               "b_desc": tensor_descriptor_type(dt, [bk, bn])}
    else:
        sig = {"a_ptr": tl.pointer_type(dt), "b_ptr": tl.pointer_type(dt)}
    sig.update({"c_desc": tensor_descriptor_type(out, [bm, bn]), "M": tl.int32, "N": tl.int32,
                "K": tl.int32})
    return _compile(kernel, sig, {"BM": bm, "BN": bn, "BK": bk}, num_warps=warps,
                    num_stages=stages, **opts)


@pytest.mark.parametrize("out", [tl.float16, tl.bfloat16, tl.float32])
@pytest.mark.parametrize("block, warps", [((128, 128, 64), 4), ((128, 256, 64), 8),
                                          ((64, 128, 64), 4)])
def test_gemm_epilogue(out, block, warps):
    """The descriptor GEMM's epilogue (benchmarks/tma_matmul.py's kernel): the accumulator
    written in 4-byte or wider vectors (not element by element) into the nvmma buffer, whose
    bytes are the operand rings' after the loop (no more shared memory than the pointer
    store); ptxas accepts it with no spills."""
    ck = _gemm(out=out, block=block, warps=warps, tma_store=True)
    base = _gemm(out=out, block=block, warps=warps)
    ptx = ck.asm["ptx"]
    bm, bn, _ = block
    ebytes = 4 if out == tl.float32 else 2
    sw = 128
    boxes = bn * ebytes // sw
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == boxes
    assert ck.metadata["shared"] == base.metadata["shared"]
    assert "st.global" not in ptx and "st.global" in base.asm["ptx"]
    stores = re.findall(r"st\.shared(\.v\d)?\.b(\d+)", ptx)
    assert stores and all(int(bits) * (int(v[2:]) if v else 1) >= 32 for v, bits in stores)
    per_thread = bm * bn * ebytes // (warps * 32)
    assert sum(int(bits) // 8 * (int(v[2:]) if v else 1) for v, bits in stores) == per_thread
    if find_ptxas():
        assert "0 bytes spill stores" in ck.metadata["ptxas_info"], ck.metadata["ptxas_info"]


# ---- emulated ---------------------------------------------------------------------------------

_NP = {tl.float16: np.float16, tl.float32: np.float32, tl.bfloat16: np.uint16}


def _reference_store(out, N, blocks, r0, c0, bm, bn):
    """numpy: each block (pm, pn) at (r0 + pm * bm, c0 + pn * bn) of `out`, clipped to its
    rows and its first N columns."""
    want = out.copy()
    M = out.shape[0]
    for (pm, pn), blk in blocks.items():
        for i in range(bm):
            r = r0 + pm * bm + i
            if not 0 <= r < M:
                continue
            cs = [c0 + pn * bn + j for j in range(bn)]
            js = [j for j, c in enumerate(cs) if 0 <= c < N]
            if js:
                want[r, cs[js[0]]:cs[js[-1]] + 1] = blk[i, js[0]:js[-1] + 1]
    return want


@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16, tl.float32])
@pytest.mark.parametrize("block", [(64, 64), (16, 32), (64, 16), (32, 8)])
@pytest.mark.parametrize("r0, c0", [(0, 0), (-40, -16), (50, 32), (90, 64), (-64, 0)])
def test_store_emulated(dt, block, r0, c0):
    """Blocks of 2x (random bits for bf16: the emulator moves them) stored at row offsets
    r0 + pid0 * BM and column offsets c0 + pid1 * BN of a 100 x 70 tensor (rows padded to 16
    bytes, its tail columns kept): tails, and boxes partly before the start and past the end;
    swizzles 128/64/32 and unswizzled rows, from the compiled kernel's plan."""
    bm, bn = block
    esize = 4 if dt == tl.float32 else 2
    if c0 * esize % 16:
        pytest.skip("inner offsets are multiples of 16 bytes here")
    sig = {"x": tl.pointer_type(dt), "o_desc": tensor_descriptor_type(dt, list(block)),
           "r0": tl.int32}
    emu = Emulator.from_kernel(store_block, sig, {"BM": bm, "BN": bn, "C0": c0}, SM90A, 4,
                               tma_store=True)
    assert "cp.async.bulk.tensor" in emu.compiled.asm["ptx"]
    plan = emu.compiled.metadata["tma"][0]
    rng = np.random.default_rng(bm * 1000 + bn + r0 * 7 + c0)
    M, N = 100, 70
    ld = -(-N * esize // 16) * 16 // esize
    grid = (2, 3)
    if dt == tl.bfloat16:  # exact doubles: bits of small floats
        xf = rng.integers(-64, 64, (grid[0] * bm, grid[1] * bn)).astype(np.float32) / 4
        x = (xf.view(np.uint32) >> 16).astype(np.uint16)
        doubled = ((xf * 2).view(np.uint32) >> 16).astype(np.uint16)
    else:
        x = rng.standard_normal((grid[0] * bm, grid[1] * bn)).astype(_NP[dt])
        doubled = x * 2
    out = rng.integers(0, 1 << 15, (M, ld)).astype(np.uint16).view(np.uint8).view(_NP[dt]) \
        if esize == 2 else rng.standard_normal((M, ld)).astype(np.float32)
    before = out.copy()
    emu.run(grid, x, out, M, N, ld, r0, TensorMap.for_plan(out, [M, N], [ld, 1], plan))
    blocks = {(pm, pn): doubled[pm * bm:(pm + 1) * bm, pn * bn:(pn + 1) * bn]
              for pm in range(grid[0]) for pn in range(grid[1])}
    want = _reference_store(before, N, blocks, r0, c0, bm, bn)
    np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8))
    assert (out[:, N:].view(np.uint8) == before[:, N:].view(np.uint8)).all()


def test_store3d_emulated():
    B = (2, 4, 8)
    sig = {"x": tl.pointer_type(tl.float32),
           "o_desc": tensor_descriptor_type(tl.float32, list(B)), "r0": tl.int32}
    emu = Emulator.from_kernel(store_block3d, sig, {"B0": B[0], "B1": B[1], "B2": B[2]}, SM90A,
                               4, tma_store=True)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3 * B[0], B[1], B[2])).astype(np.float32)
    shape = (5, 6, 8)
    out = np.full(shape, -9, np.float32)
    emu.run((3,), x, out, *shape, 48, 8, -1,
            TensorMap.for_plan(out, shape, [48, 8, 1], emu.compiled.metadata["tma"][0]))
    want = np.full(shape, -9, np.float32)
    for p in range(3):
        for i in range(B[0]):
            for j in range(B[1]):
                r, c = -1 + p * B[0] + i, -(B[1] // 2) + j
                if 0 <= r < shape[0] and 0 <= c < shape[1]:
                    want[r, c] = x[p * B[0] + i, j] + 1
    np.testing.assert_array_equal(out, want)


def _bf16_of(x: np.ndarray) -> np.ndarray:
    """float64 -> bf16 bits, rounded to nearest even."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def _bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


@pytest.mark.parametrize("out", [tl.float16, tl.bfloat16, tl.float32])
def test_gemm_epilogue_emulated(out):
    """The wgmma accumulator (its mma v3 layout) to the TMA store's nvmma buffer, M, N and K
    not multiples of the block: C against numpy within the output type's rounding."""
    m, n, k, bm, bn, bk = 100, 72, 80, 64, 64, 32
    rng = np.random.default_rng(11)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    sig = {"a_ptr": tl.pointer_type(tl.float16), "b_ptr": tl.pointer_type(tl.float16),
           "c_desc": tensor_descriptor_type(out, [bm, bn]), "M": tl.int32, "N": tl.int32,
           "K": tl.int32}
    emu = Emulator.from_kernel(ptr_matmul_desc_store, sig, {"BM": bm, "BN": bn, "BK": bk},
                               SM90A, 4, tma_store=True)
    tg = emu.compiled.asm["tilegpu"]
    assert '"tilegpu.warpgroup_dot"' in tg and '"tilegpu.tma_store"' in tg
    esize = 4 if out == tl.float32 else 2
    ld = -(-n * esize // 16) * 16 // esize
    c = np.full((m, ld), 0x7E00 if esize == 2 else np.nan, _NP[out] if esize == 4 else np.uint16)
    if out == tl.float16:
        c = c.view(np.float16)
    emu.run((2, 2), a, b, c, m, n, ld, m, n, k,
            TensorMap.for_plan(c, [m, n], [ld, 1], emu.compiled.metadata["tma"][0]))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    got = _bf16_values(c[:, :n]) if out == tl.bfloat16 else c[:, :n].astype(np.float64)
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    eps = {tl.float16: 2.0**-11, tl.bfloat16: 2.0**-8, tl.float32: 2.0**-22}[out]
    err = np.abs(got - ref)
    assert (err <= np.abs(ref) * eps * 1.01 + mag * 2.0**-22 * 8 + 1e-6).all(), err.max()
    assert (c[:, n:].view(np.uint8) == (np.full((m, ld - n), c.flat[-1], c.dtype)
                                        .view(np.uint8))).all()  # the padding: not written


def test_missing_fence_is_caught(monkeypatch):
    """The emulator's check that the TMA store reads only fenced bytes (so the tests above
    would fail without the rule's fence.proxy.async)."""
    from tilework.lowering import to_llvm
    create = to_llvm.LoweringContext.create

    def no_fence(name, *a, **kw):
        if name == "nvvm.fence.proxy":
            return None
        return create(name, *a, **kw)
    monkeypatch.setattr(to_llvm.LoweringContext, "create", staticmethod(no_fence))
    sig = {"x": tl.pointer_type(tl.float16),
           "o_desc": tensor_descriptor_type(tl.float16, [64, 64]), "r0": tl.int32}
    emu = Emulator.from_kernel(store_block, sig, {"BM": 64, "BN": 64, "C0": 0}, SM90A, 4,
                               tma_store=True)
    x = np.ones((64, 64), np.float16)
    out = np.zeros((64, 64), np.float16)
    with pytest.raises(TmaError, match="with no fence.proxy.async after"):
        emu.run((1, 1), x, out, 64, 64, 64, 0,
                TensorMap.for_plan(out, [64, 64], [64, 1], emu.compiled.metadata["tma"][0]))


def test_store_loop_emulated():
    """One TMA store per loop iteration into the same buffer: the emulator's race check needs
    the barrier before each iteration's writes (after the previous copy has read them)."""
    from tma_kernels import store_loop
    bm, bn = 32, 64
    sig = {"x": tl.pointer_type(tl.float16),
           "o_desc": tensor_descriptor_type(tl.float16, [bm, bn]), "n": tl.int32}
    emu = Emulator.from_kernel(store_loop, sig, {"BM": bm, "BN": bn}, SM90A, 4, tma_store=True)
    tg = emu.compiled.asm["tilegpu"]
    loop = tg[tg.index("scf.for"):tg.index("return")]
    assert '"tilegpu.tma_store"' in loop and '"tilegpu.barrier"' in loop
    x = np.random.default_rng(5).standard_normal((bm, bn)).astype(np.float16)
    out = np.zeros((3 * bm + 5, bn), np.float16)
    emu.run((1,), x, out, *out.shape, bn, 4,
            TensorMap.for_plan(out, out.shape, [bn, 1], emu.compiled.metadata["tma"][0]))
    want = np.concatenate([(x.astype(np.float32) + i).astype(np.float16) for i in range(4)])
    np.testing.assert_array_equal(out, want[:out.shape[0]])


@pytest.mark.parametrize("start", ["tilegpu", "llvm"])
def test_restart_keeps_the_store_and_its_plan(start):
    ck = _store(tma_store=True)
    again = compile(ck.asm[start], SM90A, start=start, cache=False)
    assert again.metadata["tma"] == ck.metadata["tma"]
    assert again.asm["ptx"] == ck.asm["ptx"]


@pytest.mark.parametrize("bits, swizzle, shape, wn, ratio", [
    (16, 128, (128, 128), 1, 1), (16, 128, (128, 256), 2, 1), (16, 64, (64, 32), 1, 1),
    (16, 32, (64, 16), 1, 1),
    (32, 128, (128, 128), 1, 2),  # fp32: 8-byte column pairs of rows g and g ^ 1 share banks
])
def test_accumulator_store_wavefronts(bits, swizzle, shape, wn, ratio):
    """The wgmma accumulator's vector stores into the TMA store's nvmma buffer (warp 0's
    wavefronts, simulated by the planner's bank model): 16-bit outputs conflict-free (the
    minimum for their bytes), fp32 2-way (the 128-byte swizzle maps the column pairs of rows
    g and g ^ 1 to the same 16-byte chunks; the register layout and the tensor map fix both)."""
    from tilework.dialects.layout import parse_layout
    from tilework.dialects.layout_nvidia import NvmmaShared
    from tilework.dialects.linear_layout import wavefronts
    from tilework.lowering.rules.layout import linear_vec
    from tilework.lowering.shared_memory import shared_map
    m, n = shape
    acc = parse_layout(f"#tilegpu.mma<3 : i32, array<i32: 4, {wn}>, array<i32: 64, {n // wn}, "
                       f"16>>")
    lay = acc.linear(shape)
    offs = shared_map(NvmmaShared(swizzle, False, bits).text(), shape)
    eb = bits // 8
    vec = linear_vec(offs.compose(lay), eb)
    assert vec == 2
    ideal = lay.in_size("register") // vec * max(1, 32 * vec * eb // 128)
    assert wavefronts(lay, offs, vec, eb, max_groups=1 << 12) == ideal * ratio


# ---- rejections: the TMA path words them as the block-pointer path ---------------------------

@tilework.jit
def k_store_offsets_count(o_desc):
    o_desc.store([0], tl.zeros((64, 64), tl.float16))  # ERR


@tilework.jit
def k_store_value_shape(o_desc):
    o_desc.store([0, 0], tl.zeros((64,), tl.float16))  # ERR


@pytest.mark.parametrize("tma_store", [True, False])
@pytest.mark.parametrize("fn, message", [
    (k_store_offsets_count, "store_tensor_descriptor: expected 2 offsets, but got 1"),
    (k_store_value_shape, "store_tensor_descriptor: the value must be a tile of the block "
                          "shape [64, 64], got shape [64]"),
])
def test_store_rejections(fn, message, tma_store):
    import os
    from tilework import CompilationError
    from located import assert_located, line_of
    sig = {"o_desc": tensor_descriptor_type(tl.float16, [64, 64])}
    with pytest.raises(CompilationError) as ei:
        _compile(fn, sig, {}, tma_store=tma_store)
    assert_located(ei.value, message, os.path.abspath(__file__), line_of(fn))
