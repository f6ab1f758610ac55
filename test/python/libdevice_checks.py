"""What the libdevice tests share: `k1` (libdevice.FN of 128 elements), running it interpreted
and compiled, that it compiles for a target, and the dtype error."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.language.extra import libdevice

import gpu_sim
from simt_emulator import Emulator

N = 128
NP = {"fp32": np.float32, "fp64": np.float64}
TL = {"fp32": tl.float32, "fp64": tl.float64}


@tilework.jit
def k1(x, o, FN: tl.constexpr):
    i = tl.arange(0, 128)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i)))


def run_both(name, x, dt, target="sm_90a", emulated=True):
    """libdevice.`name` of x (N elements of dt, "fp32" or "fp64"): interpreted, compiled for
    `target` (run on gpu_sim) and, if `emulated`, compiled for gfx942 (on the SIMT emulator)."""
    sig = {"x": tl.pointer_type(TL[dt]), "o": tl.pointer_type(TL[dt])}
    oi = np.zeros(N, NP[dt])
    tilework.jit(k1.fn, interpret=True)[(1,)](x, oi, FN=name)
    ck = compile(ASTSource(k1, sig, {"FN": name}, {}), target, cache=False)
    oc = np.zeros(N, NP[dt])
    gpu_sim.run(ck, (1, 1, 1), x, oc)
    if not emulated:
        return oi, oc
    oa = np.zeros(N, NP[dt])  # compiled for gfx942, on the SIMT emulator
    Emulator.from_kernel(k1, sig, {"FN": name}, "gfx942", 4).run((1,), x, oa)
    return oi, oc, oa


def assert_compiles(fn, dtype, target):
    """`fn` on `dtype` compiles for `target` (gfx942's or NVIDIA's store in the assembly)."""
    sig = {"x": tl.pointer_type(dtype), "o": tl.pointer_type(dtype)}
    ck = compile(ASTSource(k1, sig, {"FN": fn}, {}), target, cache=False)
    assert ("global_store" if target == "gfx942" else "st.global") in \
        ck.asm["amdgcn" if target == "gfx942" else "ptx"]


def assert_rejects_ints(fn):
    """`fn` on int32 fails to compile with libdevice's message."""
    sig = {"x": tl.pointer_type(tl.int32), "o": tl.pointer_type(tl.float32)}
    with pytest.raises(tilework.CompilationError, match=f"libdevice.{fn} takes fp32 or fp64"):
        compile(ASTSource(k1, sig, {"FN": fn}, {}), "sm_90a", cache=False)
