"""Masked loads and stores of large tiles on NVIDIA are predicated inline PTX
(`lowering/rules/memory_ptx.py`): `@p ld.global` with the words tied to `other`, `@p
st.global`.  The compiled code (llir through gpu_sim, one OS thread per GPU thread) against
numpy on random inputs, for every access width the lowering picks (v4.b32, b32, b16, u8 in a
16-bit register, v2.b64), tails included; the PTX has no branch per access."""
import numpy as np
import pytest

import gpu_sim
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile
from tilework.lowering.rules.memory import PREDICATE_MIN_ACCESSES
from tilework import jit

rng = np.random.default_rng(7)
BLOCK = 8192  # 256 elements per thread of one warp: 16 (int8, 16 bytes) to 256 accesses per op


@jit
def scale_masked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=3)
    tl.store(out_ptr + offs, x + x, mask=m)


DTYPES = {"f32": (tl.float32, np.float32), "f16": (tl.float16, np.float16),
          "i8": (tl.int8, np.int8), "f64": (tl.float64, np.float64), "i16": (tl.int16, np.int16)}


def _compile(ty, divisible):
    P = tl.pointer_type(ty)
    sig = {"x_ptr": P, "out_ptr": P, "n": tl.int32}
    attrs = {"x_ptr": {"tile.divisibility": 16}, "out_ptr": {"tile.divisibility": 16}}
    if divisible:
        attrs["n"] = {"tile.divisibility": 16}
    return compile(ASTSource(scale_masked, sig, {"BLOCK": BLOCK}, attrs), "sm_90a",
                   CompileOptions(num_warps=1), cache=False)


@pytest.mark.parametrize("divisible", [True, False])
@pytest.mark.parametrize("name", list(DTYPES))
def test_predicated_masked_load_and_store(name, divisible):
    ty, dt = DTYPES[name]
    ck = _compile(ty, divisible)
    ptx = ck.asm["ptx"]
    assert "@%p" in ptx and " ld.global" in ptx
    assert ptx.count("bra") <= 2, "a branch per masked access"
    n = BLOCK + (1008 if divisible else 1005)  # a tail in the second program
    if dt in (np.float32, np.float16, np.float64):
        x = rng.standard_normal(2 * BLOCK).astype(dt)
    else:
        x = rng.integers(-50, 50, 2 * BLOCK).astype(dt)
    out = np.full(2 * BLOCK, 77, dt)
    gpu_sim.run(ck, (2,), x, out, n)
    want = np.where(np.arange(2 * BLOCK) < n, x + x, 77).astype(dt)
    np.testing.assert_array_equal(out, want)


def test_widths_of_the_ptx():
    """16 bytes a thread's access where n is divisible by 16 (v4.b32; v2.b64 for fp64); one
    element (b32, b16, u8) where the mask may change inside a group."""
    assert "ld.global.v4.b32" in _compile(tl.float16, True).asm["ptx"]
    assert "ld.global.v2.b64" in _compile(tl.float64, True).asm["ptx"]
    assert "@%p1 ld.global.u8" in _compile(tl.int8, False).asm["ptx"]
    assert "ld.global.b16" in _compile(tl.float16, False).asm["ptx"]
    assert "st.global.u8" in _compile(tl.int8, False).asm["ptx"]


def test_few_accesses_branch():
    """Below PREDICATE_MIN_ACCESSES accesses per thread a masked access is a branch."""
    P = tl.pointer_type(tl.float32)
    sig = {"x_ptr": P, "out_ptr": P, "n": tl.int32}
    attrs = {k: {"tile.divisibility": 16} for k in sig}
    ck = compile(ASTSource(scale_masked, sig, {"BLOCK": 512}, attrs), "sm_90a",
                 CompileOptions(num_warps=4), cache=False)
    assert 512 // 128 // 4 < PREDICATE_MIN_ACCESSES
    assert "@%p" in ck.asm["ptx"] and "ld.global.v4" in ck.asm["ptx"]
    assert "asm" not in ck.asm["llir"]
