"""The TMA-store epilogue on sm_90a (`CompileOptions.tma_store`): `desc.store` of a host
descriptor with a TMA plan is `tile.descriptor_store` -> the tile written to a shared buffer in
the box layout, `fence.proxy.async`, a barrier, one thread's
`cp.async.bulk.tensor.<r>d.global.shared::cta.bulk_group`, commit and `wait_group.read 0`.
The TMA store is used only where it is exact on the hardware (issue 9): every coordinate
provably >= 0 and the tensor's rows a multiple of 16 bytes (the specialization of the
descriptor's last shape argument); elsewhere the block-pointer store.  Compile-only checks
(PTX, ptxas), then the stores run on the SIMT emulator (simt_tma.py: the tensor map's box and
swizzle from the CUDA definitions, clipping at the tensor's edges, rows written in whole
16-byte chunks, negative coordinates an error as the GPU's fault) against numpy, guarded and
`tma_store="unguarded"` (which the emulator catches).  On the GPU: test_tma_store_gpu.py."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.backends.nvidia.compiler import find_ptxas
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import TensorDescriptor, tensor_descriptor_type

from simt_emulator import Emulator
from simt_tma import TensorMap, TmaError
from tma_kernels import (desc_matmul_store, ptr_matmul_desc_store, store_block, store_block3d,
                         store_block_rt)

SM90A = "sm_90a"


def _compile(fn, sig, consts, target=SM90A, attrs=None, **opts):
    return compile(ASTSource(fn, sig, consts, attrs or {}), target, CompileOptions(**opts),
                   cache=False)


def row_attrs(name, width, esize):
    """The specialization the launcher gives a descriptor `name` whose tensor is `width`
    elements of `esize` bytes wide (launcher.specialization: its last shape argument divisible
    by 16, or by 16 // esize where a row is a multiple of 16 bytes)."""
    div = 16 if width % 16 == 0 else 16 // esize if width * esize % 16 == 0 else None
    return {f"{name}.shape1": {"tile.divisibility": div}} if div else {}


def _store(dt=tl.float16, block=(64, 64), c0=0, r0=0, target=SM90A, width=64, **opts):
    sig = {"x": tl.pointer_type(dt), "o_desc": tensor_descriptor_type(dt, list(block))}
    esize = dt.primitive_bitwidth // 8
    return _compile(store_block, sig, {"BM": block[0], "BN": block[1], "R0": r0, "C0": c0},
                    target, attrs=row_attrs("o_desc", width, esize), **opts)


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
                                  "inner_offset", "negative_row", "negative_inner", "row_tail",
                                  "runtime_row"])
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
    elif case == "negative_row":
        kw["r0"] = -40  # the GPU faults at any negative coordinate of a store
    elif case == "negative_inner":
        kw["c0"] = -16
    elif case == "row_tail":
        kw["width"] = 70  # 140-byte rows: the copy would write columns 70, 71
    if case in ("negative_row", "negative_inner", "runtime_row"):
        # signs unknown at compile time: the run-time guard's branch holds both stores
        # (test_tma_store_guard.py); without it the block-pointer store alone
        opts["tma_store_guard"] = False
    if case == "nan_padding":
        sig = {"x": tl.pointer_type(tl.float16),
               "o_desc": tensor_descriptor_type(tl.float16, [64, 64], "nan")}
        ck = _compile(store_block, sig, {"BM": 64, "BN": 64, "R0": 0, "C0": 0}, **opts)
    elif case == "runtime_row":  # r0 + pid * BM: an int argument may be negative
        sig = {"x": tl.pointer_type(tl.float16),
               "o_desc": tensor_descriptor_type(tl.float16, [64, 64]), "r0": tl.int32}
        ck = _compile(store_block_rt, sig, {"BM": 64, "BN": 64},
                      attrs={"r0": {"tile.divisibility": 16}, **row_attrs("o_desc", 64, 2)},
                      **opts)
    else:
        ck = _store(**kw, **opts)
    assert "cp.async.bulk" not in ck.asm["ptx"] and "st.global" in ck.asm["ptx"]
    assert '"tile.descriptor_store"' not in ck.asm["tilegpu"] and "tma" not in ck.metadata
    # with tma_store and a plan the decision is the lowering's: the tile stage holds the TMA
    # store with its fallback, which tile-tma-guard takes (the tensor map dropped)
    guarded = case in ("inner_offset", "negative_row", "negative_inner", "row_tail",
                       "runtime_row")
    assert ('"tile.descriptor_store"' in ck.asm["tile"]) == guarded
    assert "tile.tma" not in ck.asm["tilegpu"]


@pytest.mark.parametrize("case", ["negative_row", "negative_inner", "row_tail"])
def test_unguarded_store_is_tma(case):
    """tma_store="unguarded" (the probe's and the emulator tests' switch) keeps the raw TMA
    store where the guards would not."""
    kw = {"negative_row": {"r0": -40}, "negative_inner": {"c0": -16},
          "row_tail": {"width": 70}}[case]
    assert "cp.async.bulk.tensor" in _store(tma_store="unguarded", **kw).asm["ptx"]
    assert "cp.async.bulk.tensor" not in _store(tma_store=True, tma_store_guard=False,
                                                **kw).asm["ptx"]


def test_tma_store_option():
    assert CompileOptions(tma_store=True).key() != CompileOptions().key()
    assert CompileOptions(tma_store="unguarded").key() != CompileOptions(tma_store=True).key()
    assert CompileOptions().tma_store is False
    with pytest.raises(ValueError, match="tma_store must be a bool or 'unguarded', got 1"):
        CompileOptions(tma_store=1)
    with pytest.raises(ValueError, match="tma_store must be a bool or 'unguarded', got 'raw'"):
        CompileOptions(tma_store="raw")


def test_environment_switch(monkeypatch):
    monkeypatch.setenv("TILEWORK_TMA_STORE", "1")
    assert CompileOptions.from_env().tma_store is True
    assert CompileOptions.from_env(tma_store=False).tma_store is False
    monkeypatch.setenv("TILEWORK_TMA_STORE", "0")
    assert CompileOptions.from_env().tma_store is False
    monkeypatch.setenv("TILEWORK_TMA_STORE", "unguarded")
    assert CompileOptions.from_env().tma_store == "unguarded"


def test_wide_rows_are_stored_as_several_boxes():
    ck = _store(block=(64, 128), tma_store=True)
    copies = re.findall(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group",
                        ck.asm["ptx"])
    assert len(copies) == 2 and ck.asm["ptx"].count("cp.async.bulk.commit_group") == 1
    assert ck.metadata["tma"][0]["box"] == [64, 64]


_ATTRS3D = {"o_desc.shape2": {"tile.divisibility": 4}}  # 8 fp32 elements: 32-byte rows


def test_3d_store_is_one_unswizzled_box():
    sig = {"x": tl.pointer_type(tl.float32),
           "o_desc": tensor_descriptor_type(tl.float32, [2, 4, 8])}
    ck = _compile(store_block3d, sig, {"R0": 0, "C1": 1, "B0": 2, "B1": 4, "B2": 8},
                  attrs=_ATTRS3D, tma_store=True)
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
                    num_stages=stages, attrs=row_attrs("c_desc", 256, 2), **opts)


@pytest.mark.parametrize("stm", [False, True], ids=["st_shared", "stmatrix"])
@pytest.mark.parametrize("out", [tl.float16, tl.bfloat16, tl.float32])
@pytest.mark.parametrize("block, warps", [((128, 128, 64), 4), ((128, 256, 64), 8),
                                          ((64, 128, 64), 4)])
def test_gemm_epilogue(out, block, warps, stm):
    """The descriptor GEMM's epilogue (benchmarks/tma_matmul.py's kernel): the accumulator
    written into the nvmma buffer in 4-byte or wider vectors (not element by element; with
    `stmatrix`, 16-bit outputs by stmatrix.x4, 16 bytes a thread each), whose bytes are the operand
    rings' after the loop (no more shared memory than the pointer store); ptxas accepts it
    with no spills."""
    ck = _gemm(out=out, block=block, warps=warps, tma_store=True, stmatrix=stm)
    base = _gemm(out=out, block=block, warps=warps)
    ptx = ck.asm["ptx"]
    bm, bn, _ = block
    ebytes = 4 if out == tl.float32 else 2
    sw = 128
    boxes = bn * ebytes // sw
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == boxes
    assert ck.metadata["shared"] == base.metadata["shared"]
    assert "st.global" not in ptx and "st.global" in base.asm["ptx"]
    if find_ptxas():
        assert "0 bytes spill stores" in ck.metadata["ptxas_info"], ck.metadata["ptxas_info"]
    stores = re.findall(r"st\.shared(\.v\d)?\.b(\d+)", ptx)
    per_thread = bm * bn * ebytes // (warps * 32)
    assert ("stmatrix" in ptx) == (stm and ebytes == 2)
    if stm and ebytes == 2:
        assert not stores
        assert ptx.count("stmatrix.sync.aligned.m8n8.x4.shared.b16") * 16 == per_thread
        return
    assert stores and all(int(bits) * (int(v[2:]) if v else 1) >= 32 for v, bits in stores)
    assert sum(int(bits) // 8 * (int(v[2:]) if v else 1) for v, bits in stores) == per_thread


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


def _run_store(dt, block, r0, c0, N, tma_store=True):
    """store_block's blocks of 2x (random bits for bf16: the emulator moves them) at row
    offsets r0 + pid0 * BM and column offsets c0 + pid1 * BN of a 100 x N tensor (rows padded
    to 16 bytes and 8 elements more, random padding), specialized as the launcher would: (whether it used the TMA
    store, the result, the expected result, the tensor before)."""
    bm, bn = block
    esize = dt.primitive_bitwidth // 8
    sig = {"x": tl.pointer_type(dt), "o_desc": tensor_descriptor_type(dt, list(block))}
    emu = Emulator.from_kernel(store_block, sig, {"BM": bm, "BN": bn, "R0": r0, "C0": c0},
                               SM90A, 4, attrs=row_attrs("o_desc", N, esize),
                               tma_store=tma_store)
    tma = "cp.async.bulk.tensor" in emu.compiled.asm["ptx"]
    rng = np.random.default_rng(bm * 1000 + bn + r0 * 7 + c0 + N)
    M = 100
    ld = -(-N * esize // 16) * 16 // esize + 8  # rows padded past the next 16 bytes
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
    args = [grid, x, out, M, N, ld]
    if tma:
        args.append(TensorMap.for_plan(out, [M, N], [ld, 1], emu.compiled.metadata["tma"][0]))
    emu.run(*args)
    blocks = {(pm, pn): doubled[pm * bm:(pm + 1) * bm, pn * bn:(pn + 1) * bn]
              for pm in range(grid[0]) for pn in range(grid[1])}
    return tma, out, _reference_store(before, N, blocks, r0, c0, bm, bn), before


@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16, tl.float32])
@pytest.mark.parametrize("block", [(64, 64), (16, 32), (64, 16), (32, 8)])
@pytest.mark.parametrize("r0, c0", [(0, 0), (-40, -16), (50, 32), (90, 64), (-64, 0)])
@pytest.mark.parametrize("N", [72, 70])
def test_store_emulated(dt, block, r0, c0, N):
    """The guarded store: tails, and boxes partly before the start and past the end; swizzles
    128/64/32 and unswizzled rows, from the compiled kernel's plan.  TMA where rows of N
    elements are a multiple of 16 bytes (72; not 70) and, at run time, the coordinates >= 0,
    else the block-pointer store; exact either way, the padding past N untouched."""
    esize = dt.primitive_bitwidth // 8
    if c0 * esize % 16:
        pytest.skip("inner offsets are multiples of 16 bytes here")
    if N == 70 and block not in ((64, 64), (32, 8)):
        pytest.skip("the 70-wide tails on two blocks (the other paths are the pointer store's)")
    tma, out, want, before = _run_store(dt, block, r0, c0, N)
    # coordinates of unknown sign (R0 + pid * BM): TMA under the run-time guard, programs at
    # a negative one on the pointer store (the emulator raises at a negative TMA coordinate)
    assert tma == (N * esize % 16 == 0)
    np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8))
    assert (out[:, N:].view(np.uint8) == before[:, N:].view(np.uint8)).all()


@pytest.mark.parametrize("dt", [tl.float16, tl.float32])
def test_unguarded_store_emulated_writes_past_the_row(dt):
    """The raw TMA store (`tma_store="unguarded"`) on a 70-wide tensor writes the last 16-byte
    chunk of each row whole: columns 70 and 71 (measured on an H200), which the guarded store's
    padding check above catches; the tensor itself is exact."""
    tma, out, want, before = _run_store(dt, (64, 64), 0, 0, 70, tma_store="unguarded")
    assert tma
    n = out.shape[0]
    np.testing.assert_array_equal(out[:, :70].view(np.uint8), want[:, :70].view(np.uint8))
    changed = (out[:, 70:].view(np.uint8) != before[:, 70:].view(np.uint8)).reshape(n, -1)
    esize = dt.primitive_bitwidth // 8
    assert changed[:, :2 * esize].any(axis=1).all()  # columns 70, 71 of every row
    assert not changed[:, 2 * esize:].any()           # nothing past the 16-byte chunk


@pytest.mark.parametrize("r0, c0", [(-40, 0), (0, -16), (-64, -64)])
def test_unguarded_store_emulated_negative_coordinate_faults(r0, c0):
    """A negative coordinate in a raw TMA store is the emulator's error (the GPU's illegal
    instruction); the guarded compiler stores those blocks by pointers (test_store_emulated)."""
    with pytest.raises(TmaError, match="a negative coordinate"):
        _run_store(tl.float16, (64, 64), r0, c0, 128, tma_store="unguarded")


def test_store3d_emulated():
    B = (2, 4, 8)
    sig = {"x": tl.pointer_type(tl.float32),
           "o_desc": tensor_descriptor_type(tl.float32, list(B))}
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3 * B[0], B[1], B[2])).astype(np.float32)
    shape = (5, 6, 8)
    for r0, c1, tma in ((-1, -2, False), (0, 1, True), (1, 3, True)):
        emu = Emulator.from_kernel(store_block3d, sig, {"R0": r0, "C1": c1, "B0": B[0],
                                                        "B1": B[1], "B2": B[2]}, SM90A, 4,
                                   attrs=_ATTRS3D, tma_store=True)
        assert ("cp.async.bulk.tensor.3d" in emu.compiled.asm["ptx"]) == tma
        out = np.full(shape, -9, np.float32)
        extra = [TensorMap.for_plan(out, shape, [48, 8, 1], emu.compiled.metadata["tma"][0])] \
            if tma else []
        emu.run((3,), x, out, *shape, 48, 8, *extra)
        want = np.full(shape, -9, np.float32)
        for p in range(3):
            for i in range(B[0]):
                for j in range(B[1]):
                    r, c = r0 + p * B[0] + i, c1 + j
                    if 0 <= r < shape[0] and 0 <= c < shape[1]:
                        want[r, c] = x[p * B[0] + i, j] + 1
        np.testing.assert_array_equal(out, want)


def _bf16_of(x: np.ndarray) -> np.ndarray:
    """float64 -> bf16 bits, rounded to nearest even."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def _bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


@pytest.mark.parametrize("out, n", [(tl.float16, 72), (tl.bfloat16, 72), (tl.float32, 72),
                                    (tl.float16, 70)])
def test_gemm_epilogue_emulated(out, n):
    """The wgmma accumulator (its mma v3 layout) to the TMA store's nvmma buffer, M, N and K
    not multiples of the block: C against numpy within the output type's rounding.  N = 70
    (140-byte fp16 rows): the block-pointer store, the padding untouched."""
    m, k, bm, bn, bk = 100, 80, 64, 64, 32
    rng = np.random.default_rng(11)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    sig = {"a_ptr": tl.pointer_type(tl.float16), "b_ptr": tl.pointer_type(tl.float16),
           "c_desc": tensor_descriptor_type(out, [bm, bn]), "M": tl.int32, "N": tl.int32,
           "K": tl.int32}
    esize = 4 if out == tl.float32 else 2
    emu = Emulator.from_kernel(ptr_matmul_desc_store, sig, {"BM": bm, "BN": bn, "BK": bk},
                               SM90A, 4, attrs=row_attrs("c_desc", n, esize), tma_store=True)
    tg = emu.compiled.asm["tilegpu"]
    tma = n * esize % 16 == 0
    assert '"tilegpu.warpgroup_dot"' in tg and ('"tilegpu.tma_store"' in tg) == tma
    ld = -(-n * esize // 16) * 16 // esize + 8
    c = np.full((m, ld), 0x7E00 if esize == 2 else np.nan, _NP[out] if esize == 4 else np.uint16)
    if out == tl.float16:
        c = c.view(np.float16)
    maps = [TensorMap.for_plan(c, [m, n], [ld, 1], emu.compiled.metadata["tma"][0])] \
        if tma else []
    emu.run((2, 2), a, b, c, m, n, ld, m, n, k, *maps)
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
           "o_desc": tensor_descriptor_type(tl.float16, [64, 64])}
    emu = Emulator.from_kernel(store_block, sig, {"BM": 64, "BN": 64, "R0": 0, "C0": 0}, SM90A,
                               4, attrs=row_attrs("o_desc", 64, 2), tma_store=True)
    x = np.ones((64, 64), np.float16)
    out = np.zeros((64, 64), np.float16)
    with pytest.raises(TmaError, match="with no fence.proxy.async after"):
        emu.run((1, 1), x, out, 64, 64, 64,
                TensorMap.for_plan(out, [64, 64], [64, 1], emu.compiled.metadata["tma"][0]))


def test_store_loop_emulated():
    """One TMA store per loop iteration into the same buffer: the emulator's race check needs
    the barrier before each iteration's writes (after the previous copy has read them)."""
    from tma_kernels import store_loop
    bm, bn = 32, 64
    sig = {"x": tl.pointer_type(tl.float16),
           "o_desc": tensor_descriptor_type(tl.float16, [bm, bn]), "n": tl.int32}
    emu = Emulator.from_kernel(store_loop, sig, {"BM": bm, "BN": bn}, SM90A, 4,
                               attrs=row_attrs("o_desc", bn, 2), tma_store=True)
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


# ---- through the launcher's specialization ---------------------------------------------------

@pytest.mark.parametrize("kernel, shape, dt, block, consts, tma", [
    ("store", (100, 72), np.float16, (64, 64), {"R0": 0, "C0": 0}, True),
    ("store", (100, 70), np.float16, (64, 64), {"R0": 0, "C0": 0}, False),
    ("store", (100, 72), np.float32, (16, 32), {"R0": 50, "C0": 32}, True),
    ("store", (100, 70), np.float32, (16, 32), {"R0": 50, "C0": 32}, False),
    ("store", (100, 72), np.float16, (64, 16), {"R0": -40, "C0": -16}, True),  # guarded
    ("gemm", (77, 188), np.float32, (64, 64), {}, True),    # 752-byte rows
    ("gemm", (77, 190), np.float16, (64, 64), {}, False),   # 380-byte rows
    ("gemm", (200, 136), np.float16, (64, 64), {}, True),   # 272-byte rows: 8 | 136
])
def test_launch_specialization_picks_the_store(kernel, shape, dt, block, consts, tma):
    """test_tma_store_gpu.py's cases without a GPU: the launcher's key and specialization of a
    descriptor over a [M, N] tensor (rows padded: fake CUDA arrays), compiled as a launch
    would, get the TMA store exactly where the GPU test expects it."""
    from tilework.runtime import launcher
    from test_tensor_descriptor_launch import FakeGpuArray
    M, N = shape
    esize = np.dtype(dt).itemsize
    ld = -(-N * esize // 16) * 16 // esize + 8
    out = FakeGpuArray(0x10000, dt, (M, ld))
    d = TensorDescriptor(out, [M, N], [ld, 1], list(block))
    if kernel == "store":
        fn = store_block
        x = FakeGpuArray(0x80000, dt, (128, 192))
        values = (x, d, consts["R0"], consts["C0"], block[0], block[1])
    else:
        fn = desc_matmul_store
        a = FakeGpuArray(0x80000, np.float16, (M, 72))
        b = FakeGpuArray(0x90000, np.float16, (70, N + 8))
        ad = TensorDescriptor(a, [M, 70], [72, 1], [64, 32])
        bd = TensorDescriptor(b, [70, N], [N + 8 - (N + 8) % 8, 1], [32, 64])
        values = (ad, bd, d, M, N, 70, 64, 64, 32)
    sig, constants, attrs = launcher.specialization(fn, values)
    ck = compile(ASTSource(fn, sig, constants, attrs), SM90A, CompileOptions(tma_store=True),
                 cache=False)
    assert ("bulk_group" in ck.asm["ptx"]) == tma
