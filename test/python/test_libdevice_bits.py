"""libdevice's bit and integer intrinsics (popc, clz, ffs, brev, byte_perm, sad, mul24;
frontend/ops_bits.py): interpreted and compiled for sm_90a (run on gpu_sim) against numpy on
random inputs, the PTX and gfx942's AMDGCN instructions, byte_perm's AMD expansion on the SIMT
emulator, and the dtype dispatch's message.  The GPU half is test_language_extras_gpu.py."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.language.extra import libdevice

import gpu_sim
from simt_emulator import Emulator

NP = {"int32": np.int32, "int64": np.int64, "uint32": np.uint32}
TL = {"int32": tl.int32, "int64": tl.int64, "uint32": tl.uint32}
N = 64


@tilework.jit
def k1(x, o, FN: tl.constexpr):
    i = tl.arange(0, 64)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i)))


@tilework.jit
def k2(x, y, o, FN: tl.constexpr):
    i = tl.arange(0, 64)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i), tl.load(y + i)))


@tilework.jit
def k3(x, y, z, o, FN: tl.constexpr):
    i = tl.arange(0, 64)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i), tl.load(y + i), tl.load(z + i)))


def bits(dt, rng):
    """Random values of every magnitude (a random number of low bits, shifted left by a random
    amount in every other one), zero, -1, the minimum and 1."""
    w = np.dtype(NP[dt]).itemsize * 8
    u = rng.integers(0, 1 << 62, N, dtype=np.uint64) * np.uint64(4) + \
        rng.integers(0, 4, N, dtype=np.uint64)
    keep = rng.integers(0, w + 1, N).astype(np.uint64)
    u = np.where(keep >= 64, u, u & ((np.uint64(1) << keep) - np.uint64(1)))
    shift = rng.integers(0, w, N).astype(np.uint64)  # and of every number of trailing zeros
    u = np.where(np.arange(N) % 2 == 1, u << shift, u)
    u[:4] = [0, (1 << w) - 1, 1 << (w - 1), 1]
    if w == 32:
        return u.astype(np.uint32).view(NP[dt])
    return u.view(np.int64)


def _u(x):
    return x.view({4: np.uint32, 8: np.uint64}[x.dtype.itemsize]).astype(object)


def ref_popc(x):
    return np.array([bin(v).count("1") for v in _u(x)], np.int32)


def ref_clz(x):
    w = x.dtype.itemsize * 8
    return np.array([w - int(v).bit_length() for v in _u(x)], np.int32)


def ref_ffs(x):
    return np.array([(int(v) & -int(v)).bit_length() for v in _u(x)], np.int32)


def ref_brev(x):
    w = x.dtype.itemsize * 8
    out = [int(format(int(v), f"0{w}b")[::-1], 2) for v in _u(x)]
    return np.array(out, np.uint64 if w == 64 else np.uint32).view(x.dtype)


def ref_byte_perm(x, y, s):
    out = []
    for a, b, c in zip(_u(x), _u(y), _u(s)):
        w = (int(b) << 32) | int(a)
        out.append(sum(((w >> (8 * ((int(c) >> 4 * n) & 7))) & 0xFF) << 8 * n for n in range(4)))
    return np.array(out, np.uint32).view(np.int32)


def ref_sad(x, y, z):
    d = np.where(x < y, y.astype(np.int64) - x, x.astype(np.int64) - y)
    return (d + z.astype(np.int64)).astype(np.uint64).astype(np.uint32).view(x.dtype)


def ref_mul24(x, y):
    def low24(v):
        v = v.astype(np.int64) & 0xFFFFFF
        return np.where(v >= 1 << 23, v - (1 << 24), v) if x.dtype == np.int32 else v
    p = (low24(x) * low24(y)).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    return p.astype(np.uint32).view(x.dtype)


CASES = [  # (function, argument dtypes, result dtype, reference)
    ("popc", ("int32",), "int32", ref_popc), ("popc", ("int64",), "int32", ref_popc),
    ("clz", ("int32",), "int32", ref_clz), ("clz", ("int64",), "int32", ref_clz),
    ("ffs", ("int32",), "int32", ref_ffs), ("ffs", ("int64",), "int32", ref_ffs),
    ("brev", ("int32",), "int32", ref_brev), ("brev", ("int64",), "int64", ref_brev),
    ("byte_perm", ("int32",) * 3, "int32", ref_byte_perm),
    ("sad", ("int32", "int32", "uint32"), "int32", ref_sad),
    ("sad", ("uint32",) * 3, "uint32", ref_sad),
    ("mul24", ("int32", "int32"), "int32", ref_mul24),
    ("mul24", ("uint32", "uint32"), "uint32", ref_mul24),
]
IDS = [f"{c[0]}-{'-'.join(c[1])}" for c in CASES]
KERNELS = {1: k1, 2: k2, 3: k3}


def _inputs(name, dts, seed):
    rng = np.random.default_rng(seed)
    xs = [bits(dt, rng) for dt in dts]
    if name == "byte_perm":  # selectors: random nibbles, the 4th bit of each too
        xs[2] = rng.integers(0, 1 << 16, N).astype(np.int32) | \
            (rng.integers(0, 2, N).astype(np.int32) << 16)
    return xs


def _sig(kernel, dts, out_dt):
    names = ["x", "y", "z"][:len(dts)]
    return {n: tl.pointer_type(TL[d]) for n, d in zip(names, dts)} | \
        {"o": tl.pointer_type(TL[out_dt])}


@pytest.mark.parametrize("name, dts, out_dt, ref", CASES, ids=IDS)
def test_interpreted_and_compiled(name, dts, out_dt, ref):
    xs = _inputs(name, dts, len(IDS[CASES.index((name, dts, out_dt, ref))]))
    want = ref(*xs)
    assert want.dtype == NP[out_dt]
    kernel = KERNELS[len(dts)]
    oi = np.zeros(N, NP[out_dt])
    tilework.jit(kernel.fn, interpret=True)[(1,)](*xs, oi, FN=name)
    np.testing.assert_array_equal(oi, want)
    ck = compile(ASTSource(kernel, _sig(kernel, dts, out_dt), {"FN": name}, {}), "sm_90a",
                 cache=False)
    oc = np.zeros(N, NP[out_dt])
    gpu_sim.run(ck, (1, 1, 1), *xs, oc)
    np.testing.assert_array_equal(oc, want)
    assert len(set(want.tolist())) > 8  # (varied inputs: a test that can fail)


PTX = {("popc", "int32"): r"popc\.b32", ("popc", "int64"): r"popc\.b64",
       ("clz", "int32"): r"clz\.b32", ("clz", "int64"): r"clz\.b64",
       ("brev", "int32"): r"brev\.b32", ("brev", "int64"): r"brev\.b64",
       ("byte_perm", "int32"): r"prmt\.b32"}
AMD = {("popc", "int32"): r"v_bcnt_u32_b32", ("clz", "int32"): r"v_ffbh_u32",
       ("ffs", "int32"): r"v_ffbl_b32", ("brev", "int32"): r"v_bfrev_b32",
       ("brev", "int64"): r"v_bfrev_b32"}


@pytest.mark.parametrize("key", sorted(set(PTX) | set(AMD)), ids=lambda k: "-".join(k))
def test_instructions(key):
    name, dt = key
    dts = ("int32",) * 3 if name == "byte_perm" else (dt,)
    out_dt = dt if name == "brev" else "int32"
    kernel = KERNELS[len(dts)]
    src = ASTSource(kernel, _sig(kernel, dts, out_dt), {"FN": name}, {})
    if key in PTX:
        ptx = compile(src, "sm_90a", cache=False).asm["ptx"]
        assert re.search(PTX[key], ptx), ptx
        if name == "byte_perm":  # the selector's nibbles cut to 3 bits first
            assert re.search(r"and\.b32\s+%r\d+, %r\d+, 30583;", ptx), ptx
    amd = compile(src, "gfx942", cache=False).asm["amdgcn"]
    if key in AMD:
        assert re.search(AMD[key], amd), amd


def test_byte_perm_amd_expansion_on_the_emulator():
    """gfx942's byte_perm is shifts and masks of the 64-bit (y:x) (no prmt), run per lane."""
    xs = _inputs("byte_perm", ("int32",) * 3, 5)
    emu = Emulator.from_kernel(k3, _sig(k3, ("int32",) * 3, "int32"), {"FN": "byte_perm"},
                               "gfx942", num_warps=1)
    o = np.zeros(N, np.int32)
    emu.run((1, 1, 1), *xs, o)
    np.testing.assert_array_equal(o, ref_byte_perm(*xs))


@tilework.jit
def k_scalar_args(x, o):
    i = tl.arange(0, 64)
    v = tl.load(x + i)
    tl.store(o + i, libdevice.popc(v) + libdevice.byte_perm(v, 0x01020304, 0x3210) * 0 +
             libdevice.mul24(v, 3) * 0)


def test_python_int_arguments_are_int32():
    x = bits("int32", np.random.default_rng(2))
    o = np.zeros(N, np.int32)
    tilework.jit(k_scalar_args.fn, interpret=True)[(1,)](x, o)
    np.testing.assert_array_equal(o, ref_popc(x))


@pytest.mark.parametrize("name, dts, msg", [
    ("popc", ("uint32",), r"libdevice.popc: input arg type does not match. Expect one of "
                          r"\[\('int32',\), \('int64',\)\], got \('uint32',\)"),
    ("sad", ("int32", "int32", "int32"), r"libdevice.sad: input arg type does not match"),
    ("mul24", ("int32", "uint32"), r"libdevice.mul24: input arg type does not match"),
])
def test_dtype_dispatch_errors(name, dts, msg):
    kernel = KERNELS[len(dts)]
    with pytest.raises(tilework.CompilationError, match=msg):
        compile(ASTSource(kernel, _sig(kernel, dts, "int32"), {"FN": name}, {}), "sm_90a",
                cache=False)
    xs = [np.ones(N, NP[d]) for d in dts]
    with pytest.raises(Exception, match=msg):
        tilework.jit(kernel.fn, interpret=True)[(1,)](*xs, np.zeros(N, np.int32), FN=name)
