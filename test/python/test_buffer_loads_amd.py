"""Masked global loads as AMD buffer loads (CompileOptions.buffer_loads, rules/memory_amd.py):
a masked-off access reads past num_records (0 in hardware) and `other` is selected, so the
body keeps no branch per access.  Run on the SIMT emulator (out-of-range buffer reads give 0,
in-range ones must lie in the arrays) against numpy; the AMDGCN checked for buffer loads."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from simt_emulator import Emulator


@tilework.jit
def masked_copy(X, Y, n, BLOCK: tl.constexpr, OTHER: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=OTHER)
    tl.store(Y + offs, x * 2.0 + 1.0)


def _lowered(emu):
    return str(emu.module)


@pytest.mark.parametrize("target", ["gfx942", "gfx1100"])
@pytest.mark.parametrize("other", [0.0, -1.5])
def test_masked_load_emulated(target, other):
    n, block = 200, 128
    ck = tilework.compile(masked_copy, target=target,
                          signature={"X": "*fp32", "Y": "*fp32", "n": "i32"},
                          constexprs={"BLOCK": block, "OTHER": other}, num_warps=4,
                          buffer_loads=True)
    asm = ck.asm["amdgcn"]
    assert re.search(r"\bbuffer_load_(dword|b32|b64|b128)", asm)
    assert not re.search(r"\bglobal_load", asm)
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], target, 4, buffer_loads=True)
    ir_text = _lowered(emu)
    assert "rocdl.raw.ptr.buffer.load" in ir_text and "scf.if" not in ir_text
    assert ("arith.select" in ir_text.split("rocdl.raw.ptr.buffer.load", 1)[1]) == (other != 0)
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    y = np.full(2 * block, np.nan, np.float32)
    emu.run((2,), x, y, n)
    ref = np.concatenate([x, np.full(2 * block - n, other, np.float32)]) * 2 + 1
    np.testing.assert_allclose(y, ref, rtol=1e-6)


def test_masked_load_branches_without_option():
    ck = tilework.compile(masked_copy, target="gfx1100",
                          signature={"X": "*fp32", "Y": "*fp32", "n": "i32"},
                          constexprs={"BLOCK": 128, "OTHER": 0.0}, num_warps=4)
    assert not re.search(r"\bbuffer_load", ck.asm["amdgcn"])
    assert re.search(r"\bglobal_load", ck.asm["amdgcn"])


def _bwd(target, which, buffer_loads):
    import attention as A
    from test_attention import bwd_signature
    cfg = A.default_bwd_configs(64)[0 if which == "dkdv" else 1]
    return cfg, tilework.compile(
        A.attn_bwd_dkdv if which == "dkdv" else A.attn_bwd_dq, target=target,
        signature=bwd_signature(which), constexprs=dict(HEAD_DIM=64, CAUSAL=True, **cfg.kwargs),
        num_warps=cfg.num_warps, num_stages=cfg.num_stages, buffer_loads=buffer_loads)


def _scratch(asm) -> int:
    return int(re.search(r"\.private_segment_fixed_size:\s+(\d+)", asm).group(1))


def test_attention_dkdv_gfx1100_buffer_loads():
    """The masked loops' loads are buffer loads, none is branched around: 284 -> 36 bytes of
    scratch (what is left: the masked stores' addresses, live across the loops)."""
    _, plain = _bwd("gfx1100", "dkdv", False)
    _, buf = _bwd("gfx1100", "dkdv", True)
    asm = buf.asm["amdgcn"]
    assert len(re.findall(r"\bbuffer_load_b(32|128)", asm)) >= 16
    assert _scratch(asm) < _scratch(plain.asm["amdgcn"])
    assert _scratch(asm) <= 36


@pytest.mark.parametrize("which", ["dkdv", "dq"])
def test_attention_backward_gfx1100_buffer_loads_emulated(which):
    """The D=64 causal backward on gfx1100 with buffer loads, a masked tail (n = 80), against
    float64 numpy."""
    from test_attention import _elem_strides, _inputs, ref_backward, ref_forward
    cfg, ck = _bwd("gfx1100", which, True)
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], "gfx1100", cfg.num_warps, buffer_loads=True)
    assert "rocdl.raw.ptr.buffer.load" in str(emu.module)
    n, d = 80, 64
    q, k, v = _inputs(1, 1, 1, n, d, np.float16)
    do = np.random.default_rng(n).standard_normal(q.shape).astype(np.float16)
    scale = 0.7 / np.sqrt(d)
    ro, rl = ref_forward(q, k, v, True, scale)
    delta = (ro.astype(np.float16).astype(np.float64) * do).sum(-1).astype(np.float32)
    rdq, rdk, rdv = ref_backward(q, k, v, do, True, scale)
    outs = [np.full_like(q, np.nan)] if which == "dq" else [np.full_like(k, np.nan),
                                                             np.full_like(v, np.nan)]
    blk = cfg.kwargs["BLOCK_M" if which == "dq" else "BLOCK_N"]
    st = [int(s) for x in (q, k, v, do) for s in _elem_strides(x)]
    emu.run((-(-n // blk), 1), q, k, v, do, *outs, rl.astype(np.float32), delta,
            np.float32(scale), *st, 1, 1, n)
    for got, ref in zip(outs, [rdq] if which == "dq" else [rdk, rdv]):
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2e-2, atol=2e-2)
