"""examples/attention.py compiled for sm_90a and run on the SIMT emulator (every thread of a
program in lockstep, wgmma and cp.async from the PTX ISA, shared-memory races and missing
fences or barriers raised) against float64 numpy: the forward with P as wgmma's register A,
q written once before each key loop and K (through `tl.trans`) pipelined; the backward's dQ
(q and do written once before its loops) and dK/dV.  The RDNA forward and gfx1201's backward
the same way, on 32-lane waves with WMMA."""
import numpy as np
import pytest

import attention as A
from simt_emulator import Emulator
from test_attention import _elem_strides, _inputs, compile_bwd, compile_fwd, ref_backward, \
    ref_forward


def _strides(x):
    return [int(s) for s in _elem_strides(x)]


def _check_forward(ck, target, cfg, d, causal, n):
    """The compiled forward `ck` (config `cfg`) on the emulator, one head of n random rows of
    q, k, v, against numpy."""
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], target, cfg.num_warps)
    rng = np.random.default_rng(d + n + causal)
    q, k, v = (rng.standard_normal((1, 1, n, d)).astype(np.float16) for _ in range(3))
    o = np.full_like(q, np.nan)
    lse = np.full((1, 1, n), np.nan, np.float32)
    scale = 0.7 / np.sqrt(d)
    bm = cfg.kwargs["BLOCK_M"]
    emu.run((-(-n // bm), 1), q, k, v, o, lse, np.float32(scale), *_strides(q), *_strides(k),
            *_strides(v), *_strides(o), 1, 1, n)
    ro, rl = ref_forward(q, k, v, causal, scale)
    np.testing.assert_allclose(o.astype(np.float64), ro, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(lse, rl, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("d, causal, n, even", [
    (64, False, 256, True),    # the peeled block, then 3 iterations of the key loop
    (64, True, 384, True),     # the diagonal loop and the unmasked one
    (128, False, 256, True),
    (64, True, 200, False),    # a masked tail
    (256, True, 256, True),    # q's one buffer for the peeled block and both key loops
])
def test_forward_sm90a_emulated(d, causal, n, even):
    ck = compile_fwd("sm_90a", d, causal, even=even)
    cfg = A.default_fwd_config(d)
    _check_forward(ck, "sm_90a", cfg, d, causal, n)


@pytest.mark.parametrize("which", ["dq", "dkdv"])
@pytest.mark.parametrize("target, d, causal, n", [
    ("sm_90a", 64, False, 128), ("sm_90a", 64, True, 192), ("sm_90a", 256, True, 128),
    ("sm_90a", 128, False, 96), ("sm_90a", 128, True, 80),
    ("gfx1201", 64, True, 192),  # RDNA4's WMMA chains on shared warps (no scratch there)
])
def test_backward_emulated(which, target, d, causal, n):
    ck = compile_bwd(target, which, d, causal)
    cfg = A.default_bwd_configs(d)[0 if which == "dkdv" else 1]
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], target, cfg.num_warps)
    q, k, v = _inputs(1, 1, 1, n, d, np.float16)
    do = np.random.default_rng(n).standard_normal(q.shape).astype(np.float16)
    scale = 0.7 / np.sqrt(d)
    ro, rl = ref_forward(q, k, v, causal, scale)
    lse = rl.astype(np.float32)
    delta = (ro.astype(np.float16).astype(np.float64) * do).sum(-1).astype(np.float32)
    rdq, rdk, rdv = ref_backward(q, k, v, do, causal, scale)
    outs = [np.full_like(q, np.nan)] if which == "dq" else [np.full_like(k, np.nan),
                                                             np.full_like(v, np.nan)]
    blk = cfg.kwargs["BLOCK_M" if which == "dq" else "BLOCK_N"]
    emu.run((-(-n // blk), 1), q, k, v, do, *outs, lse, delta, np.float32(scale),
            *_strides(q), *_strides(k), *_strides(v), *_strides(do), 1, 1, n)
    refs = [rdq] if which == "dq" else [rdk, rdv]
    for got, ref in zip(outs, refs):
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("causal, n", [(False, 96), (True, 80)])
def test_backward_dkdv_invariant_operands_emulated(causal, n, monkeypatch, tmp_path):
    """dK/dV D=128 (mma.sync) with the default-off lowering/pipeline_invariant.py on: k and v
    written to shared memory once, before the heads' loop, read by ldmatrix in every query
    loop (a fresh disk cache: the switch is no part of its key)."""
    import tilework.lowering.pipeline_invariant as P
    monkeypatch.setattr(P, "ENABLED", True)
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path))
    ck = compile_bwd("sm_90a", "dkdv", 128, causal)
    assert ck.asm["tilegpu"].count('"tilegpu.local_alloc"(%') == 2  # (k's and v's)
    cfg = A.default_bwd_configs(128)[0]
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], "sm_90a", cfg.num_warps)
    q, k, v = _inputs(1, 1, 1, n, 128, np.float16)
    do = np.random.default_rng(n).standard_normal(q.shape).astype(np.float16)
    scale = 0.7 / np.sqrt(128)
    ro, rl = ref_forward(q, k, v, causal, scale)
    delta = (ro.astype(np.float16).astype(np.float64) * do).sum(-1).astype(np.float32)
    _, rdk, rdv = ref_backward(q, k, v, do, causal, scale)
    dk, dv = np.full_like(k, np.nan), np.full_like(v, np.nan)
    emu.run((-(-n // cfg.kwargs["BLOCK_N"]), 1), q, k, v, do, dk, dv, rl.astype(np.float32),
            delta, np.float32(scale), *_strides(q), *_strides(k), *_strides(v),
            *_strides(do), 1, 1, n)
    for got, ref in ((dk, rdk), (dv, rdv)):
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("target, d, causal, n", [
    ("gfx1201", 128, True, 128),   # the diagonal loop and the unmasked one, 8 waves of WMMA
    ("gfx1100", 128, False, 128),  # RDNA3's operand layout: the peeled block and 3 iterations
])
def test_forward_rdna_emulated(target, d, causal, n):
    """The RDNA forward (64x32 tiles, 8 waves: the two dots on the same warps, the stream-
    pipelined V read beside its dot, LDS offsets pinned in the loop) against numpy."""
    from tilework.backends import parse_target
    cfg = A.default_fwd_config(d, parse_target(target))
    ck = compile_fwd(target, d, causal, config=cfg)
    _check_forward(ck, target, cfg, d, causal, n)
