"""A TMA store left in flight across a persistent loop's tiles (tilegpu-tma-store-wait-later,
lowering/tma_store.py) and stmatrix writes of 16-bit accumulators (lowering/rules/layout.py
`stmatrix_plan`), on the SIMT emulator against numpy and compile-only.

The pass applies to loops whose TMA ring lives across tiles (`tilegpu.ring_across_tiles`),
which needs TMA loads the emulator does not model; here its loop test is widened to any tiles'
loop (monkeypatched), so a loop of descriptor stores runs it: the buffer written again only
after the issuing thread's read wait and a barrier (the emulator raises on a write of bytes a
store may still read).  The persistent GEMM on the GPU: test_pipeline_tiles_gpu.py."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.language.descriptor import tensor_descriptor_type
from tilework.lowering import tma_store as wait_later_pass

from dot_kernels import matmul_kernel
from simt_emulator import Emulator
from simt_tma import TensorMap, TmaError
from test_tma_store import row_attrs

SM90A = "sm_90a"


@tilework.jit
def store_tiles(x_ptr, o_desc, n_tiles, BM: tl.constexpr, BN: tl.constexpr):
    """Tile t of x (rows t*BM ..), doubled, stored by the descriptor at row t*BM: a program
    loops over tiles pid, pid + nprog, .."""
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    for t in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        x = tl.load(x_ptr + (t * BM + rows)[:, None] * BN + cols[None, :])
        o_desc.store([t * BM, 0], x * 2)


@pytest.fixture
def any_tiles_loop(monkeypatch):
    """The pass takes any scf.for around the store as the tiles' loop."""
    def loop(op):
        p = op.parent
        return p if p.name == "scf.for" else None
    monkeypatch.setattr(wait_later_pass, "_tiles_loop", loop)


def _emulate(rewrite=None, tiles=5, grid=2, bm=32, bn=64):
    dt = tl.float16
    sig = {"x_ptr": tl.pointer_type(dt), "o_desc": tensor_descriptor_type(dt, [bm, bn]),
           "n_tiles": tl.int32}
    emu = Emulator.from_kernel(store_tiles, sig, {"BM": bm, "BN": bn}, SM90A, 4,
                               attrs=row_attrs("o_desc", bn, 2), tma_store=True,
                               rewrite=rewrite)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((tiles * bm, bn)).astype(np.float16)
    out = np.full((tiles * bm, bn), np.nan, np.float16)
    tmap = TensorMap.for_plan(out, [tiles * bm, bn], [bn, 1], emu.compiled.metadata["tma"][0])
    emu.run((grid,), x, out, tiles * bm, bn, bn, tiles, tmap)
    return emu, x, out


def test_store_left_in_flight_across_tiles_emulated(any_tiles_loop):
    emu, x, out = _emulate()
    tg, ptx = emu.compiled.asm["tilegpu"], emu.compiled.asm["ptx"]
    loop = tg[tg.index("scf.for"):]
    assert loop.index('"tilegpu.tma_store_wait"') < loop.index('"tilegpu.local_store"') < \
        loop.index("tilegpu.wait_later")
    # one read wait in the loop (before the write) and one after it; the store commits only
    assert ptx.count("cp.async.bulk.wait_group.read 0") == 2
    assert re.search(r"cp\.async\.bulk\.commit_group;\s*}", ptx)
    np.testing.assert_array_equal(out, x * np.float16(2))


def test_missing_wait_is_caught_by_the_emulator(any_tiles_loop):
    """Without the in-loop wait, the next tile writes bytes the previous store may still read."""
    def drop_first_wait(text):
        i = text.index('"tilegpu.tma_store_wait"')
        j = text.index("\n", i)
        return text[:text.rindex("\n", 0, i)] + text[j:]
    with pytest.raises(TmaError, match="written while a TMA store may still read it"):
        _emulate(rewrite=drop_first_wait)


def test_without_the_mark_the_store_waits_at_once():
    """A loop not marked across tiles keeps the store's own read wait (and its buffer per
    tile): tilegpu-tma-store-wait-later leaves it alone."""
    emu, x, out = _emulate()
    assert "tilegpu.wait_later" not in emu.compiled.asm["tilegpu"]
    assert '"tilegpu.tma_store_wait"' not in emu.compiled.asm["tilegpu"]
    np.testing.assert_array_equal(out, x * np.float16(2))


# ---- stmatrix ---------------------------------------------------------------------------------

@pytest.mark.parametrize("out, bm, bn, nw", [(tl.float16, 64, 64, 4), (tl.bfloat16, 64, 64, 4),
                                             (tl.float16, 128, 128, 8)])
def test_accumulator_stored_by_stmatrix_emulated(out, bm, bn, nw):
    """A wgmma accumulator rounded to 16 bits goes through shared memory (to the store's
    coalesced layout) by stmatrix.x4 on sm_90a (`CompileOptions.stmatrix`); masked tails;
    values against numpy."""
    m, n, k = 100, 72 if bn == 64 else 136, 80
    rng = np.random.default_rng(bm + nw)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    npo = np.float16 if out == tl.float16 else np.uint16
    c = np.full((m, n), 0x7E00 if out == tl.float16 else 0x7FC0, np.uint16).view(npo)
    sig = {"a_ptr": tl.pointer_type(tl.float16), "b_ptr": tl.pointer_type(tl.float16),
           "c_ptr": tl.pointer_type(out)}
    sig.update({p: tl.int32 for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                                      "stride_bn", "stride_cm", "stride_cn")})
    emu = Emulator.from_kernel(matmul_kernel, sig, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=32,
                                                        ACC=tl.float32, PLUS_EQ=False),
                               SM90A, num_warps=nw, stmatrix=True)
    ptx = emu.compiled.asm["ptx"]
    assert "stmatrix.sync.aligned" in ptx and "st.shared.v2.b16" not in ptx
    emu.run((-(-m // bm), -(-n // bn)), a, b, c, m, n, k, k, 1, n, 1, n, 1)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    got = c.astype(np.float64) if out == tl.float16 else \
        (c.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    ulp = 2.0**-10 if out == tl.float16 else 2.0**-7
    assert (np.abs(got - ref) <= np.abs(ref) * ulp + 1e-2).all()


@pytest.mark.parametrize("target, on", [("sm_80", True), ("sm_90a", False)])
def test_shared_stores_without_stmatrix(target, on):
    """stmatrix is sm_90's, and opt-in: sm_80, and sm_90a without the option, write the same
    conversion with st.shared."""
    sig = {"a_ptr": tl.pointer_type(tl.float16), "b_ptr": tl.pointer_type(tl.float16),
           "c_ptr": tl.pointer_type(tl.float16)}
    sig.update({p: tl.int32 for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk",
                                      "stride_bn", "stride_cm", "stride_cn")})
    emu = Emulator.from_kernel(matmul_kernel, sig, dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                                                        ACC=tl.float32, PLUS_EQ=False),
                               target, num_warps=4, stmatrix=on)
    ptx = emu.compiled.asm["ptx"]
    assert "stmatrix" not in ptx and "st.shared" in ptx


def test_stmatrix_option(monkeypatch):
    """`CompileOptions.stmatrix`: off by default, in the cache key, filled by
    TILEWORK_STMATRIX, a bool only."""
    from tilework import CompileOptions as O
    assert not O().stmatrix
    monkeypatch.setenv("TILEWORK_STMATRIX", "1")
    assert O.from_env().stmatrix and O.from_env().key() != O().key()
    with pytest.raises(ValueError, match="stmatrix must be a bool, got 1"):
        O(stmatrix=1)
