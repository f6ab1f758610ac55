"""Wrap-around offsets `(pid * BLOCK + arange(BLOCK)) % n` (Triton's matmuls): the axis analysis
keeps runs of gcd(BLOCK, divisibility of n) contiguous, so loads are vectorized exactly as far as
the wrap allows.  Checked through the SIMT emulator against numpy, for n divisible by 16 (the
launcher's specialization), by 2 and not at all, with the vector widths that follow."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompileOptions
from tilework.compiler.driver import ASTSource, compile

from simt_emulator import Emulator


@tilework.jit
def gather_wrapped(x, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o + offs, tl.load(x + offs % n) * 2)


@pytest.mark.parametrize("n, div, width", [(48, 16, 8), (96, 16, 8), (50, 2, 2), (45, 1, 1)])
def test_wrapped_loads(n, div, width):
    attrs = {"x": {"tile.divisibility": 16}, "o": {"tile.divisibility": 16}}
    if div > 1:
        attrs["n"] = {"tile.divisibility": div}
    sig = {"x": tl.pointer_type(tl.float16), "o": tl.pointer_type(tl.float16), "n": tl.int32}
    ck = compile(ASTSource(gather_wrapped, sig, {"BLOCK": 1024}, attrs), "sm_80",
                 CompileOptions(num_warps=4), cache=False)
    load = next(ln for ln in ck.asm["tilegpu"].splitlines() if '"tile.load"' in ln)
    assert f"tilegpu.vector_width = {width} : i32" in load
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], "sm_80", 4)
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float16)
    o = np.full(2048, np.nan, np.float16)
    emu.run((2,), x, o, n)
    np.testing.assert_array_equal(o, x[np.arange(2048) % n] * 2)
