"""examples/matmul.py on skinny shapes (issue 9), without a GPU: the small-M, short-K and
split-K configs compile to tensor-core code on sm_80 and sm_90a with no ptxas spills; the
split-K kernel against numpy interpreted and, compiled for sm_80, on gpu_sim (tails in M, N
and K, a split with no K slices); the autotuner's pruning and matmul()'s split-K choice.
On the GPU: benchmarks/tools/skinny_sweep.py."""
import os
import re
import sys

import numpy as np
import pytest

import tilework

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

import gpu_sim  # noqa: E402
import matmul as mm  # noqa: E402

rng = np.random.default_rng(9)


def signature(dt="fp16", out=None, k_sig="i32:16"):
    """A launch's specialization of the skinny shapes (M = 16 or 8192, N = 8192, K = 512 or
    8192): divisible pointers, N, K and row strides (the unit strides constexprs); M any (M = 1
    too: rows wrap, loads stay contiguous along K).  (N not divisible by 16 breaks B's
    contiguity at `% N`: B is then loaded synchronously, not pipelined.)"""
    sig = {"a_ptr": f"*{dt}:16", "b_ptr": f"*{dt}:16", "c_ptr": f"*{out or dt}:16"}
    sig.update({k: "i32" if k == "M" else "i32:16"
                for k in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")})
    sig["K"] = k_sig
    return sig


def compile_config(config, target, split=False, dt="fp16", even=True, k_sig="i32:16"):
    kern = mm.matmul_splitk_kernel if split else mm.matmul_kernel
    cx = dict(config.kwargs, EVEN_K=even, stride_ak=1, stride_bn=1, stride_cn=1)
    return tilework.compile(kern.base_fn, target=target,
                            signature=signature(dt, "fp32" if split else None, k_sig),
                            constexprs=cx, num_warps=config.num_warps,
                            num_stages=config.num_stages)


def spills(ck):
    info = ck.metadata.get("ptxas_info")
    if info is None:
        pytest.skip("no ptxas: the PTX is not assembled")
    return int(re.search(r"(\d+) bytes spill stores", info).group(1)), info


NEW = ([(c, False) for c in mm.SMALL_M_CONFIGS + mm.SHORT_K_CONFIGS]
       + [(c, True) for c in mm.SPLITK_CONFIGS])


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("config, split", NEW, ids=lambda x: str(x) if x is not True
                         and x is not False else ("splitk" if x else "plain"))
def test_config_compiles_without_spills(config, split, target):
    ck = compile_config(config, target, split)
    ptx = ck.asm["ptx"]
    if target == "sm_90a" and config.kwargs["BLOCK_M"] >= 64:
        assert "wgmma.mma_async" in ptx
    else:  # wgmma needs 64 rows: BLOCK_M 16 / 32 take mma.sync, also on sm_90a
        assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
        assert "wgmma" not in ptx
    assert "cp.async.cg.shared.global" in ptx  # pipelined
    if split:
        assert re.search(r"red\.global\.gpu\.relaxed\.add\.f32", ptx)
    n, info = spills(ck)
    assert n == 0, info
    if target == "sm_90a":  # every stage asked for (sm_80's 163 KiB take fewer of the wide)
        assert "pipeline_note" not in ck.asm["tilegpu"]


def test_wide_tile_keeps_its_stages_sm90a():
    """128x256x64 fp16, 4 stages: 4 x 48 KiB of operand buffers; the epilogue's 64 KiB
    conversion after the loop reuses their bytes (it cost a stage before)."""
    c = tilework.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8},
                        num_warps=8, num_stages=4)
    ck = compile_config(c, "sm_90a")
    assert "pipeline_note" not in ck.asm["tilegpu"]
    assert ck.metadata["shared"] == 4 * 48 * 1024


def test_wgmma_cp_async_fence_option_rejects_non_bool():
    with pytest.raises(ValueError, match="wgmma_cp_async_fence must be a bool, got 0"):
        tilework.CompileOptions(wgmma_cp_async_fence=0)


@pytest.mark.parametrize("fence", [True, False])
def test_wgmma_cp_async_fence_option(fence, monkeypatch):
    """CompileOptions.wgmma_cp_async_fence (env TILEWORK_WGMMA_CP_ASYNC_FENCE; default on):
    off, the pipelined wgmma whose operands only cp.async writes gets no fence.proxy.async
    (Triton's code: a MEMBAR.ALL.CTA and a FENCE.VIEW.ASYNC.S less per K step); on, one."""
    assert tilework.CompileOptions().wgmma_cp_async_fence
    monkeypatch.setenv("TILEWORK_WGMMA_CP_ASYNC_FENCE", "1" if fence else "0")
    c = mm.SHORT_K_CONFIGS[0]
    ck = compile_config(c, "sm_90a")
    ptx = ck.asm["ptx"]
    # (on: tilegpu-proxy-fences fences after each async_wait, the loop's and the one after it)
    assert ptx.count("wgmma.mma_async") and (ptx.count("fence.proxy.async") > 0) == fence
    assert ("tilegpu.no_proxy_fence" in ck.asm["tilegpu"]) is not fence
    assert spills(ck)[0] == 0


def test_ldmatrix_groups_mma_fragments():
    """A 16-row tile's mma.sync operands (4 warps along N): each ldmatrix.x4 loads A's four
    8x8 matrices of one m16k16 fragment in a0..a3's order (rows + 8, then K + 8), and B's in
    b0, b1 pairs (K + 8 first), so ptxas takes its registers as they are.  (The two lowest
    register bits were K + 8 and K + 16 for A: each fragment gathered from two loads, 80 ->
    64 registers and 177 -> 89 SASS instructions a K step at 16x64x128, Triton's 96.)"""
    from tilework.dialects.layout import Blocked, DotOperand
    from tilework.dialects.layout_nvidia import NvidiaMma
    from tilework.dialects.linear_layout import plan_conversion
    from tilework.lowering.rules.layout import ldmatrix_plan
    mma = NvidiaMma(2, (1, 4), (16, 8))
    cases = [(0, (16, 128), Blocked((1, 8), (2, 16), (4, 1), (1, 0)), False, [(8, 0), (0, 8)]),
             (1, (128, 64), Blocked((1, 8), (4, 8), (4, 1), (1, 0)), True, [(8, 0), (0, 32)])]
    for op, shape, copy, trans, want in cases:
        d = DotOperand(op, mma, 2).linear(shape)
        plan = plan_conversion(copy.linear(shape), d, shape, 2)
        got_trans, pair, bits = ldmatrix_plan(d, plan.swizzle, 2)
        regs = list(d.basis("register"))
        assert got_trans is trans and regs[pair] == ((1, 0) if trans else (0, 1))
        assert [regs[b] for b in bits] == want


def _interpret_splitk(a, b, c, bm, bn, bk, split):
    m, k = a.shape
    n = b.shape[1]
    fn = mm.matmul_splitk_kernel.base_fn
    fn.interpret = True
    try:
        fn[(-(-m // bm) * -(-n // bn), split)](
            a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
            GROUP_M=8, SPLIT_K=split, EVEN_K=k % bk == 0)
    finally:
        fn.interpret = False


@pytest.mark.parametrize("m, n, k, split", [
    (37, 100, 300, 3),   # K slices 5 -> runs of 2, 2, 1 (the last one masked)
    (37, 100, 300, 4),   # runs of 2, 2, 1 and an empty one (k_first past the end)
    (16, 64, 512, 2),    # no tails (EVEN_K)
    (1, 70, 130, 8)])    # one row; more splits than K slices
def test_splitk_interpreted(m, n, k, split):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    _interpret_splitk(a, b, c, 16, 32, 64, split)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


def test_splitk_interpreted_adds_into_c():
    """The kernel adds its sums into c (matmul() zeroes it first): what was there stays."""
    m, n, k = 20, 40, 200
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c0 = rng.standard_normal((m, n)).astype(np.float32)
    c = c0.copy()
    _interpret_splitk(a, b, c, 16, 32, 64, 2)
    np.testing.assert_allclose(c, c0 + a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m, n, k, even, split", [(19, 40, 208, False, 3),
                                                  (16, 32, 256, True, 3),
                                                  (19, 40, 160, True, 4)])
def test_splitk_on_gpu_sim(m, n, k, even, split):
    """The compiled sm_80 code (mma.sync, the cp.async pipeline, red.global) on gpu_sim: a
    16 x 32 tile, 2 warps, K slices of 32: 7 slices, the last one half masked, in runs of 3,
    3, 1; 8 slices in 3, 3, 2; 5 slices in 2, 2, 1 and an empty run (a zero-trip loop, its
    prologue's copies masked off: zeros added).  Rows padded to multiples of 16 elements (the
    strides' and pointers' divisibility, as a launch specializes them: cp.async needs it)."""
    bm, bn, bk = 16, 32, 32
    c = tilework.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, SPLIT_K=split),
                        num_warps=2, num_stages=3)
    ck = compile_config(c, "sm_80", split=True, even=even)
    assert "llvm.nvvm.mma.m16n8k16" in ck.asm["llir"]
    assert "cp.async.cg.shared.global" in ck.asm["ptx"]
    pk, pn = -(-k // 16) * 16, -(-n // 16) * 16
    a = np.zeros((m, pk), np.float16)
    b = np.zeros((k, pn), np.float16)
    a[:, :k] = rng.standard_normal((m, k))
    b[:, :n] = rng.standard_normal((k, n))
    c = np.zeros((m, pn), np.float32)
    gpu_sim.run(ck, (-(-m // bm) * -(-n // bn), split), a, b, c, m, n, k, pk, pn, pn)
    ref = a[:, :k].astype(np.float64) @ b[:, :n].astype(np.float64)
    np.testing.assert_allclose(c[:, :n], ref, rtol=1e-3, atol=1e-3)
    assert not c[:, n:].any()  # nothing past N


# ---- which configs the autotuner times; when matmul() splits K --------------------------

def _shapes(configs):
    return [mm._shape_of(c) for c in configs]


def test_prune_small_m():
    got = mm.prune_configs(mm.ALL_CONFIGS, {"M": 16, "N": 8192, "K": 8192})
    assert _shapes(got) == _shapes(mm.SMALL_M_CONFIGS)


def test_prune_small_m_fp32_keeps_the_list():
    """fp32 inputs on 16 rows would take CUDA-core FMAs (tf32 wgmma needs 64 rows): M <= 32
    keeps the regular list for them."""
    a32 = np.zeros((16, 8), np.float32)
    got = mm.prune_configs(mm.ALL_CONFIGS, {"M": 16, "N": 8192, "K": 8192, "a_ptr": a32})
    assert _shapes(got) == _shapes(mm.CONFIGS)
    a16 = np.zeros((16, 8), np.float16)
    got = mm.prune_configs(mm.ALL_CONFIGS, {"M": 16, "N": 8192, "K": 8192, "a_ptr": a16})
    assert _shapes(got) == _shapes(mm.SMALL_M_CONFIGS)


def test_prune_short_k():
    got = mm.prune_configs(mm.ALL_CONFIGS, {"M": 8192, "N": 8192, "K": 512})
    assert _shapes(got) == _shapes(mm.CONFIGS + mm.SHORT_K_CONFIGS)


def test_prune_large_keeps_the_six():
    """Square shapes time Triton's six configs, as before (the autotuning time unchanged)."""
    got = mm.prune_configs(mm.ALL_CONFIGS, {"M": 4096, "N": 4096, "K": 4096})
    assert _shapes(got) == _shapes(mm.CONFIGS)


def test_prune_foreign_list_whole():
    """A caller's list without the shape's group is timed whole (never an empty list)."""
    assert mm.prune_configs(mm.CONFIGS, {"M": 16, "N": 64, "K": 64}) == mm.CONFIGS
    assert mm.prune_configs(mm.SMALL_M_CONFIGS, {"M": 512, "N": 64, "K": 64}) == \
        mm.SMALL_M_CONFIGS


def test_prune_splitk():
    for m, bm in ((1, 16), (16, 16), (17, 32), (32, 32), (33, 64), (4096, 64)):
        got = mm.prune_splitk(mm.SPLITK_CONFIGS, {"M": m, "N": 64, "K": 64})
        assert got and {c.kwargs["BLOCK_M"] for c in got} == {bm}, (m, got)
    got = mm.prune_splitk(mm.SPLITK_CONFIGS, {"M": 16, "a_ptr": np.zeros(1, np.float32)})
    assert {c.kwargs["BLOCK_M"] for c in got} == {64}


@pytest.mark.parametrize("m, n, k, want", [
    (16, 8192, 8192, False),   # 128 tiles of 16 x 64: most of 132 SMs busy
    (16, 4096, 8192, True),    # 64 tiles
    (32, 2048, 4096, True),
    (16, 4096, 1024, False),   # K too short to share out
    (1024, 1024, 8192, True),  # 64 tiles of 128 x 128
    (4096, 4096, 4096, False)])
def test_use_split_k(m, n, k, want):
    assert mm.use_split_k(m, n, k, 132) is want


# ---- on the GPU: matmul() through both kernels -------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("m, n, k", [(16, 8192, 8192), (16, 2048, 8192), (5, 1000, 4100),
                                     (8192, 8192, 512), (30, 4096, 3000)])
def test_matmul_skinny_gpu(dtype, m, n, k):
    """Against torch; the kernel matmul() chose (use_split_k) was tuned for the shape."""
    torch = pytest.importorskip("torch")
    dt = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", dtype=dt)
    b = torch.randn(k, n, device="cuda", dtype=dt)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    mm.matmul(a, b, c)
    ref = a.float() @ b.float()
    tol = (1e-2 if dt != torch.bfloat16 else 2e-2) * k ** 0.5  # fp32: tf32 products
    torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=tol)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    kern = mm.matmul_splitk_kernel if mm.use_split_k(m, n, k, sms) else mm.matmul_kernel
    assert any(key[:3] == (m, n, k) for key in kern.cache)
