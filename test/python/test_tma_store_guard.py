"""tile-tma-guard's run-time guard (`CompileOptions.tma_store_guard`, on by default): a
`desc.store` the TMA store would serve exactly but for coordinates the axis analysis cannot
prove >= 0 (int arguments: the persistent GEMM's tile order, attention's `off_hz * N_CTX`)
becomes `scf.if (coords >= 0) { TMA store } else { block-pointer store }` (a negative
coordinate faults a TMA store on Hopper).  Compile-only: the branch in the tilegpu IR and both
stores in the PTX for sm_90a (the persistent GEMM, attention_tma, a store at a run-time row);
emulated (simt_tma.py: a negative TMA coordinate is an error, as the GPU's fault): a launch
whose programs take both branches, against numpy.  On the GPU: test_tma_store_guard_gpu.py."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tilework.language as tl
from tilework import CompileOptions
from tilework.backends.nvidia.compiler import find_ptxas
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type as TD

from simt_emulator import Emulator
from simt_tma import TensorMap
from tma_kernels import store_block_rt

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import attention_tma as A  # noqa: E402
from persistent_matmul import TMA_CONFIGS, TMA_FP8_CONFIGS, matmul_tma_persistent  # noqa: E402

SM90A = "sm_90a"
BULK_STORE = re.compile(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group")


def gemm(fp8=True, ws=False, guard=True, big=False):
    """matmul_tma_persistent for sm_90a with tma_store, specialized as the launcher keys the
    benchmark's aligned operands."""
    configs = TMA_FP8_CONFIGS if fp8 else TMA_CONFIGS
    cfg = [c for c in configs if c.kwargs["WARP_SPECIALIZE"] == ws
           and (c.kwargs["BN"] == 256) == big][0]
    k = cfg.kwargs
    bm, bn, bk = k["BM"], k["BN"], k["BK"]
    dt = tl.float8e4nv if fp8 else tl.float16
    sig = {"a_desc": TD(dt, [bm, bk]), "b_desc": TD(dt, [bn, bk] if fp8 else [bk, bn]),
           "c_desc": TD(tl.bfloat16 if fp8 else dt, [bm, bn]), "M": tl.int32, "N": tl.int32,
           "K": tl.int32}
    attrs = {f"{d}{x}": {"tile.divisibility": 16} for d in ("a_desc", "b_desc", "c_desc")
             for x in ("", ".shape0", ".shape1", ".stride0")}
    return compile(ASTSource(matmul_tma_persistent, sig, {**k, "NUM_SMS": 132, "B_NK": fp8},
                             attrs), SM90A,
                   CompileOptions(num_warps=cfg.num_warps, num_stages=cfg.num_stages,
                                  tma_store=True, tma_store_guard=guard), cache=False)


def attention(guard=True, ws=False, d=128):
    q = TD(tl.float16, [128, d], "zero")
    kv = TD(tl.float16, [64, d], "zero")
    sig = {"sm_scale": tl.float32, "LSE": tl.pointer_type(tl.float32),
           "O": tl.pointer_type(tl.float16), "desc_q": q, "desc_k": kv, "desc_v": kv,
           "desc_o": q, "H": tl.int32, "GROUP": tl.int32, "N_CTX": tl.int32}
    attrs = {n: {"tile.divisibility": 16}
             for n in ["LSE", "O", "N_CTX"] + [f"desc_{x}.shape1" for x in "qkvo"]}
    consts = dict(HEAD_DIM=d, BLOCK_M=128, BLOCK_N=64, CAUSAL=False, EVEN_N=True,
                  WARP_SPECIALIZE=ws)
    return compile(ASTSource(A.attn_fwd_tma_kernel, sig, consts, attrs), SM90A,
                   CompileOptions(num_warps=8, num_stages=3, tma_store=True,
                                  tma_store_guard=guard), cache=False)


def _guarded_ir(tg: str) -> bool:
    """The tilegpu IR holds `scf.if {... tilegpu.tma_store ...} else {... tile.store ...}`."""
    m = re.search(r"scf\.if %\w+ \{\n(?:(?!\} else \{).)*\"tilegpu\.tma_store\"(?:(?!\} else "
                  r"\{).)*\} else \{\n(?:(?!\n *\}\n).)*\"tile\.store\"", tg, re.S)
    return m is not None


def _branch_apart(ptx: str) -> bool:
    """The bulk store and the pointer stores lie in different basic blocks, past a predicated
    branch (the guard)."""
    i_bulk = BULK_STORE.search(ptx).start()
    i_st = ptx.index("st.global")
    lo, hi = sorted((i_bulk, i_st))
    between = ptx[lo:hi]
    return re.search(r"^\$L\w+:", between, re.M) is not None and \
        re.search(r"@%p\d+ bra", ptx[:hi]) is not None


def _check(ck, guard, waits=1):
    """`waits`: the read waits in the PTX (2 where tilegpu-tma-store-wait-later left the store
    in flight: the wait before the next tile's writes of the buffer, and the one after the
    loop)."""
    ptx, tg = ck.asm["ptx"], ck.asm["tilegpu"]
    if guard:
        assert BULK_STORE.search(ptx) and "st.global" in ptx
        assert _guarded_ir(tg)
        assert _branch_apart(ptx)
        assert ptx.count("cp.async.bulk.commit_group;") == 1
        assert ptx.count("cp.async.bulk.wait_group.read 0;") == waits
        assert ("tilegpu.wait_later" in tg) == (waits == 2)
        assert any(t["arg"] in ("c_desc", "desc_o", "o_desc") for t in ck.metadata["tma"])
    else:  # today's fallback: no TMA store, no branch
        assert not BULK_STORE.search(ptx) and "st.global" in ptx
        assert "tilegpu.tma_store" not in tg
    if find_ptxas():
        assert ck.asm.get("cubin")


@pytest.mark.parametrize("guard", [True, False], ids=["guard", "off"])
@pytest.mark.parametrize("fp8, ws", [(True, False), (True, True), (False, True)],
                         ids=["fp8", "fp8_ws", "fp16_ws"])
def test_persistent_gemm_epilogue_is_guarded(fp8, ws, guard):
    ck = gemm(fp8=fp8, ws=ws, guard=guard)
    _check(ck, guard, waits=1 if ws else 2)  # (plain: the ring lives across the tiles)
    if find_ptxas():
        info = ck.metadata["ptxas_info"]
        assert "0 bytes spill stores" in info, info
        assert ("setmaxnreg.dec" in ck.asm["ptx"]) == ws  # still warp-specialized
    assert ck.metadata["shared"] <= 227 * 1024


def test_persistent_gemm_guard_keeps_the_split():
    """128x256 with a producer warp group: the TMA store's buffer (then branch) and the
    fallback's conversion scratch (else branch) share bytes, so the rings keep 3 stages.
    (Known: ptxas spills 104 bytes here, in the consumers at 232 registers, where either
    branch alone spills none; the GPU A/B decides whether it costs.)"""
    ck = gemm(fp8=True, ws=True, big=True)
    _check(ck, True)
    assert "setmaxnreg.dec" in ck.asm["ptx"]
    assert "num_stages 3 ->" not in ck.asm["tilegpu"]
    assert ck.metadata["shared"] <= 227 * 1024


@pytest.mark.parametrize("guard", [True, False], ids=["guard", "off"])
@pytest.mark.parametrize("ws", [False, True], ids=["plain", "ws"])
def test_attention_epilogue_is_guarded(ws, guard):
    ck = attention(guard=guard, ws=ws)
    _check(ck, guard)
    if find_ptxas():
        assert "0 bytes spill stores" in ck.metadata["ptxas_info"]


def test_fallback_pointers_are_computed_in_the_else_branch():
    """The block-pointer store's offsets and mask sink into the else branch: the TMA path
    does not compute them."""
    tg = gemm(fp8=True).asm["tilegpu"]
    then, rest = tg.split("} else {", 1)
    tail = then[then.rindex("scf.if"):]
    assert "tile.make_range" not in tail and "tile.addptr" not in tail
    assert "tile.addptr" in rest.split("\n      }\n", 1)[0] or "tile.addptr" in rest


def _rt(guard=True, **opts):
    sig = {"x": tl.pointer_type(tl.float16), "o_desc": TD(tl.float16, [64, 64]),
           "r0": tl.int32}
    attrs = {"r0": {"tile.divisibility": 16}, "o_desc.shape1": {"tile.divisibility": 16}}
    return sig, attrs, dict(tma_store=True, tma_store_guard=guard, **opts)


def test_runtime_row_store_compiles_both_ways():
    sig, attrs, opts = _rt()
    ck = compile(ASTSource(store_block_rt, sig, {"BM": 64, "BN": 64}, attrs), SM90A,
                 CompileOptions(**opts), cache=False)
    _check(ck, True)
    sig, attrs, opts = _rt(guard=False)
    ck = compile(ASTSource(store_block_rt, sig, {"BM": 64, "BN": 64}, attrs), SM90A,
                 CompileOptions(**opts), cache=False)
    _check(ck, False)


@pytest.mark.parametrize("r0", [-64, -48, 0, 16, 80])
@pytest.mark.parametrize("guard", [True, False], ids=["guard", "off"])
def test_runtime_row_store_emulated(r0, guard):
    """store_block_rt's blocks (2x) at rows r0 + pid0 * 64 of a 150 x 128 fp16 tensor: with
    the guard, programs whose row is >= 0 store by TMA and the others by pointers in the same
    launch (the emulator raises at a negative TMA coordinate); the result, clipped at both
    ends, and the padding past the 128 columns are exact either way."""
    sig, attrs, opts = _rt(guard)
    emu = Emulator.from_kernel(store_block_rt, sig, {"BM": 64, "BN": 64}, SM90A, 4,
                               attrs=attrs, **opts)
    assert ("cp.async.bulk.tensor" in emu.compiled.asm["ptx"]) == guard
    rng = np.random.default_rng(100 + r0)
    M, N, ld, grid = 150, 128, 136, (4, 2)
    x = rng.standard_normal((grid[0] * 64, grid[1] * 64)).astype(np.float16)
    out = np.full((M, ld), np.nan, np.float16)
    before = out.copy()
    args = [grid, x, out, M, N, ld, r0]
    if guard:  # (the tensor maps are the last parameters)
        args.append(TensorMap.for_plan(out, [M, N], [ld, 1], emu.compiled.metadata["tma"][0]))
    emu.run(*args)
    want = before.copy()
    for pm in range(grid[0]):
        for i in range(64):
            r = r0 + pm * 64 + i
            if 0 <= r < M:
                want[r, :N] = x[pm * 64 + i] * 2
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


def test_option():
    assert CompileOptions().tma_store_guard is True
    assert CompileOptions(tma_store_guard=False).key() != CompileOptions().key()
    with pytest.raises(ValueError, match="tma_store_guard must be a bool, got 1"):
        CompileOptions(tma_store_guard=1)


def test_environment_switch(monkeypatch):
    monkeypatch.setenv("TILEWORK_TMA_STORE_GUARD", "0")
    assert CompileOptions.from_env().tma_store_guard is False
    assert CompileOptions.from_env(tma_store_guard=True).tma_store_guard is True
    monkeypatch.setenv("TILEWORK_TMA_STORE_GUARD", "1")
    assert CompileOptions.from_env().tma_store_guard is True
