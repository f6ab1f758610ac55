"""Stores of a dot's result through pointers that allow only 1-element accesses (a base pointer
loaded from memory, an odd row stride: the tutorials' grouped GEMM epilogue) take a layout
with one element a thread along the rows (a warp's 32 stores in 2 sectors, as Triton's
coalescing), and the store's address chain is computed after the k-loop (tilegpu-sink), not
held in registers across it.  Checked on the tilegpu text, ptxas's counts and the SIMT
emulator (wgmma, the mma -> blocked conversion through shared memory)."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl

from simt_emulator import Emulator


@tilework.jit
def dot_store_loaded_ptr(A, B, C, off, K, N, ldc, BM: tl.constexpr, BN: tl.constexpr,
                         BK: tl.constexpr, LOADED: tl.constexpr = True):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    if LOADED:
        c = (C.to(tl.int64) + tl.load(off)).to(tl.pointer_type(tl.float16))
    else:
        c = C
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = A + rm[:, None] * K + rk[None, :]
    pb = B + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in range(0, K // BK):
        acc += tl.dot(tl.load(pa), tl.load(pb))
        pa += BK
        pb += BK * N
    tl.store(c + ldc * rm[:, None] + rn[None, :], acc.to(tl.float16))


SIG = "*fp16:16,*fp16:16,*fp16:16,*i64:16,i32:16,i32:16,i32"


def _compile(bm=64, bn=64, bk=32, warps=4):
    return tilework.compile(dot_store_loaded_ptr, target="sm_90a", signature=SIG,
                            constexprs=dict(BM=bm, BN=bn, BK=bk), num_warps=warps, cache=False)


def _store(text):
    return [l for l in text.splitlines() if '"tile.store"' in l][-1]


def test_store_of_a_dot_through_a_loaded_pointer_is_one_element_a_thread():
    text = _compile().asm["tilegpu"]
    st = _store(text)
    assert "tilegpu.vector_width = 1" in st
    # lanes along the row, one element each: a warp's stores are 64 contiguous bytes
    assert "#tilegpu.blocked<array<i32: 1, 1>, array<i32: 1, 32>" in st, st
    # the store's row offsets are made after the k-loop, not carried across it
    loop_end = text.rindex("scf.yield")
    lay = re.search(r"#tilegpu\.blocked<array<i32: 1, 1>, array<i32: 1, 32>, [^>]*>[^>]*>",
                    st).group(0)
    ranges = [m.start() for m in re.finditer(r'"tile.make_range"\(\).*' + re.escape(lay), text)]
    assert ranges and min(ranges) > loop_end


def test_aligned_store_of_a_dot_keeps_the_wide_layout():
    """With the base pointer an argument (16-byte aligned) and ldc divisible by 16 the store is
    16 bytes wide: no narrow layout asked."""
    ck = tilework.compile(dot_store_loaded_ptr, target="sm_90a",
                          signature=SIG.rsplit(",", 1)[0] + ",i32:16",
                          constexprs=dict(BM=64, BN=64, BK=32, LOADED=False), num_warps=4,
                          cache=False)
    st = _store(ck.asm["tilegpu"])
    assert "tilegpu.vector_width = 8" in st, st
    assert "array<i32: 1, 1>, array<i32: 1, 32>" not in st


@pytest.mark.parametrize("ldc_pad", [1, 3])
def test_dot_store_loaded_pointer_emulated(ldc_pad):
    rng = np.random.default_rng(ldc_pad)
    bm, bn, bk = 64, 64, 32
    m, n, k = 128, 64, 64
    ck = _compile(bm, bn, bk)
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], "sm_90a", 4)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    ldc = n + ldc_pad
    c = np.full((m, ldc), 7, np.float16)
    off = np.zeros(1, np.int64)
    emu.run((m // bm, n // bn), a, b, c, off, k, n, ldc)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c[:, :n].astype(np.float32), ref, atol=2e-2, rtol=1e-2)
    assert (c[:, n:] == 7).all()


def test_grouped_gemm_epilogue_coalesced_without_spills():
    """The benchmark's grouped GEMM (128x128x64, 8 warps, 3 stages): Triton's store layout,
    no spills (the row offsets made after the k-loop)."""
    import test_tutorial_style as tts
    ck = tts._compile(tts.tutorial_style.build("tilework"), "grouped_matmul",
                      {"BLOCK_SIZE_K": 64}, 8, num_stages=3)
    st = _store(ck.asm["tilegpu"])
    assert "#tilegpu.blocked<array<i32: 1, 1>, array<i32: 1, 32>, array<i32: 2, 4>" in st, st
    if ck.n_spills is None:
        pytest.skip("no ptxas")
    assert ck.n_spills == 0, ck.metadata["ptxas_info"]
