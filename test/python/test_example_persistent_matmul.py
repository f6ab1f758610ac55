"""examples/persistent_matmul.py without a GPU (test_examples.py's style): interpreted against
numpy with host and device descriptors (shapes not multiples of the blocks, more tiles than
programs), and compiled for sm_90a (16-byte loads and stores, no spills); the tutorial-09
kernel `matmul_tma_persistent` interpreted with B as [K, N] and as [N, K], and its configs'
pre_hook.  Its compiled forms: test_warp_specialize.py; on a GPU: test_warp_specialize_gpu.py."""
import numpy as np
import pytest

import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.language.descriptor import tensor_descriptor_type
from tilework.tools.tensor_descriptor import TensorDescriptor
from persistent_matmul import TMA_CONFIGS, TMA_FP8_CONFIGS, matmul_persistent, \
    matmul_persistent_device, matmul_tma_persistent, tma_block_shapes

rng = np.random.default_rng()
CFG = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=2)


def _run(fn, grid, *args, **kw):
    fn.interpret = True
    try:
        fn[grid](*args, **kw)
    finally:
        fn.interpret = False


def _padded(x, width):
    """`x` in a zero buffer `width` columns wide (16-byte aligned rows); (buffer, view)."""
    buf = np.zeros((x.shape[0], width), x.dtype)
    buf[:, :x.shape[1]] = x
    return buf, buf[:, :x.shape[1]]


def _operands(M, N, K):
    w = lambda n: (n + 7) // 8 * 8  # noqa: E731  (fp16: 8 elements are 16 bytes)
    ab, a = _padded(rng.standard_normal((M, K)).astype(np.float16), w(K))
    bb, b = _padded(rng.standard_normal((K, N)).astype(np.float16), w(N))
    cb, c = _padded(np.full((M, N), np.nan, np.float16), w(N))
    cb[:] = np.nan
    ref = a.astype(np.float32) @ b.astype(np.float32)
    return ab, a, bb, b, cb, c, ref


@pytest.mark.parametrize("M, N, K, progs", [(70, 90, 75, 3), (32, 32, 16, 1), (100, 33, 40, 7),
                                            (5, 64, 130, 4)])
def test_persistent_matmul_host_descriptors_interpreted(M, N, K, progs):
    ab, a, bb, b, cb, c, ref = _operands(M, N, K)
    _run(matmul_persistent, (progs,),
         TensorDescriptor(a, a.shape, [ab.shape[1], 1], [32, 16]),
         TensorDescriptor(b, b.shape, [bb.shape[1], 1], [16, 32]),
         TensorDescriptor(c, c.shape, [cb.shape[1], 1], [32, 32]), M, N, K, NUM_SMS=progs,
         **CFG)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-3, atol=2e-2)
    assert np.isnan(cb[:, N:]).all()  # past N: never written


@pytest.mark.parametrize("M, N, K, progs", [(70, 90, 75, 3), (33, 100, 24, 5)])
def test_persistent_matmul_device_descriptors_interpreted(M, N, K, progs):
    ab, a, bb, b, cb, c, ref = _operands(M, N, K)
    _run(matmul_persistent_device, (progs,), ab, bb, cb, M, N, K, ab.shape[1], bb.shape[1],
         cb.shape[1], NUM_SMS=progs, **CFG)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-3, atol=2e-2)
    assert np.isnan(cb[:, N:]).all()


H = tl.pointer_type(tl.float16)
BIG = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "NUM_SMS": 132}


@pytest.mark.parametrize("device", [False, True], ids=["host", "device"])
def test_persistent_matmul_compiles_for_sm90a(device):
    if device:
        fn = matmul_persistent_device
        sig = {"a_ptr": H, "b_ptr": H, "c_ptr": H, "M": tl.int32, "N": tl.int32, "K": tl.int32,
               "stride_am": tl.int32, "stride_bk": tl.int32, "stride_cm": tl.int32}
        aligned = ["a_ptr", "b_ptr", "c_ptr", "stride_am", "stride_bk", "stride_cm", "K", "N"]
    else:
        fn = matmul_persistent
        T = tensor_descriptor_type
        sig = {"a_desc": T(tl.float16, [128, 64]), "b_desc": T(tl.float16, [64, 128]),
               "c_desc": T(tl.float16, [128, 128]), "M": tl.int32, "N": tl.int32,
               "K": tl.int32}
        aligned = [f"{d}{s}" for d in ("a_desc", "b_desc", "c_desc")
                   for s in ("", ".stride0", ".shape1")]
    ck = compile(ASTSource(fn, sig, BIG, {k: {"tile.divisibility": 16} for k in aligned}),
                 "sm_90a", CompileOptions(num_warps=8), cache=False)
    ptx = ck.asm["ptx"]
    # TMA copies pipelined on mbarriers (tilegpu-pipeline-tma), from the host descriptors'
    # tensor-map parameters or the maps the device variant writes in its global scratch (A's
    # and B's: 256 bytes a program); the output stored 16 bytes at a time
    assert "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait.parity" in ptx
    assert "cp.async.cg.shared.global" not in ptx
    assert "tilegpu.pipeline_note" not in ck.asm["tilegpu"]
    assert ("tensormap.replace" in ptx) == device
    assert ck.metadata.get("global_scratch_size") == (256 if device else None)
    assert "st.global.v4.b32" in ptx
    assert "wgmma.mma_async" in ptx
    assert "0 bytes spill stores, 0 bytes spill loads" in ck.metadata["ptxas_info"]


@pytest.mark.parametrize("b_nk", [False, True], ids=["b_kn", "b_nk"])
@pytest.mark.parametrize("M, N, K, progs", [(70, 90, 75, 3), (5, 64, 130, 4)])
def test_tma_persistent_interpreted(M, N, K, progs, b_nk):
    ab, a, bb, b, cb, c, ref = _operands(M, N, K)
    if b_nk:  # B stored [N, K]
        bb, b = _padded(np.ascontiguousarray(b.T), (K + 7) // 8 * 8)
    bd = TensorDescriptor(b, b.shape, [bb.shape[1], 1], [32, 16] if b_nk else [16, 32])
    _run(matmul_tma_persistent, (progs,),
         TensorDescriptor(a, a.shape, [ab.shape[1], 1], [32, 16]), bd,
         TensorDescriptor(c, c.shape, [cb.shape[1], 1], [32, 32]), M, N, K, BM=32, BN=32,
         BK=16, GROUP_M=2, NUM_SMS=progs, WARP_SPECIALIZE=True,
         B_NK=b_nk)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-3, atol=2e-2)
    assert np.isnan(cb[:, N:]).all()


@pytest.mark.parametrize("b_nk", [False, True])
def test_tma_configs_set_the_descriptors_blocks(b_nk):
    x = np.zeros((256, 256), np.float16)
    descs = {k: TensorDescriptor(x, x.shape, [256, 1], [16, 16]) for k in ("a_desc", "b_desc",
                                                                         "c_desc")}
    for cfg in TMA_CONFIGS + TMA_FP8_CONFIGS:
        cfg.pre_hook({**descs, **cfg.all_kwargs(), "B_NK": b_nk})
        bm, bn, bk = (cfg.kwargs[k] for k in ("BM", "BN", "BK"))
        assert descs["a_desc"].block_shape == [bm, bk]
        assert descs["b_desc"].block_shape == ([bn, bk] if b_nk else [bk, bn])
        assert descs["c_desc"].block_shape == [bm, bn]


def _config_id(cfg):
    k = cfg.kwargs
    return (f"{k['BM']}x{k['BN']}x{k['BK']}_w{cfg.num_warps}s{cfg.num_stages}_"
            f"{'ws' if k['WARP_SPECIALIZE'] else 'plain'}")


@pytest.mark.parametrize("fp8, cfg", [(False, c) for c in TMA_CONFIGS] +
                         [(True, c) for c in TMA_FP8_CONFIGS],
                         ids=[f"fp16_{_config_id(c)}" for c in TMA_CONFIGS] +
                         [f"fp8_{_config_id(c)}" for c in TMA_FP8_CONFIGS])
@pytest.mark.parametrize("aligned", [True, False], ids=["aligned", "unaligned"])
def test_tma_configs_compile_for_sm90a(fp8, cfg, aligned):
    """Every autotuned config compiles for sm_90a (fp8 with B [N, K]), both WARP_SPECIALIZE
    values among them: the split's producer warp group only where asked, no spills, no wgmma
    waits that ptxas had to inject, within the shared memory of an sm_90 CTA.  `aligned`:
    descriptors, shapes and strides divisible by 16, as the launcher keys the benchmark's."""
    k = cfg.kwargs
    bm, bn, bk, ws = k["BM"], k["BN"], k["BK"], k["WARP_SPECIALIZE"]
    dt = tl.float8e4nv if fp8 else tl.float16
    T = tensor_descriptor_type
    sig = {"a_desc": T(dt, [bm, bk]), "b_desc": T(dt, [bn, bk] if fp8 else [bk, bn]),
           "c_desc": T(tl.bfloat16 if fp8 else dt, [bm, bn]), "M": tl.int32, "N": tl.int32,
           "K": tl.int32}
    attrs = {f"{d}{x}": {"tile.divisibility": 16} for d in ("a_desc", "b_desc", "c_desc")
             for x in ("", ".shape0", ".shape1", ".stride0")} if aligned else {}
    ck = compile(ASTSource(matmul_tma_persistent, sig, {**k, "NUM_SMS": 132, "B_NK": fp8},
                           attrs), "sm_90a", CompileOptions(num_warps=cfg.num_warps, num_stages=cfg.num_stages),
                 cache=False)
    ptx, info = ck.asm["ptx"], ck.metadata["ptxas_info"]
    assert ck.metadata["num_warps"] == cfg.num_warps + (4 if ws else 0)
    assert ("setmaxnreg.dec" in ptx) == ws
    assert "wgmma.mma_async" in ptx and ("e4m3" in ptx) == fp8
    assert "0 bytes spill stores, 0 bytes spill loads" in info
    assert "is injected" not in info  # (C7517/C7519: ptxas serializing the wgmmas)
    assert ck.metadata["shared"] <= 227 * 1024


def test_tma_configs_have_both_warp_specialize_values():
    for configs in (TMA_CONFIGS, TMA_FP8_CONFIGS):
        tiles = {}
        for c in configs:
            tile = (c.kwargs["BM"], c.kwargs["BN"], c.kwargs["BK"], c.num_warps, c.num_stages)
            tiles.setdefault(tile, set()).add(c.kwargs["WARP_SPECIALIZE"])
        assert sum(v == {True, False} for v in tiles.values()) >= 2
