"""libdevice's directed roundings (`language/extra/libdevice_round.py`): add/sub/mul/div/fma/
rcp/sqrt `_rd`/`_ru`/`_rz` in fp32 and fp64, the integer -> float conversions and
double2float, interpreted and compiled for sm_90a (run on gpu_sim) against exact references
(fractions) on random inputs with ties, exact results, subnormals, overflow, inf, NaN and
signed zeros; gfx942 and sm_80 compile; the dtype errors.  The GPU half is
test_libdevice_extra_gpu.py."""
from fractions import Fraction

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.language.extra import libdevice

import gpu_sim
from simt_emulator import Emulator

N = 256
NP = {"fp32": np.float32, "fp64": np.float64, "int32": np.int32, "uint32": np.uint32,
      "int64": np.int64, "uint64": np.uint64}
TL = {k: getattr(tl, {"fp32": "float32", "fp64": "float64"}.get(k, k)) for k in NP}
MODES = ("rd", "ru", "rz")


@tilework.jit
def k1(x, o, FN: tl.constexpr):
    i = tl.arange(0, 256)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i)))


@tilework.jit
def k2(x, y, o, FN: tl.constexpr):
    i = tl.arange(0, 256)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i), tl.load(y + i)))


@tilework.jit
def k3(x, y, z, o, FN: tl.constexpr):
    i = tl.arange(0, 256)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i), tl.load(y + i), tl.load(z + i)))


def _dt(a):
    return {"float32": "fp32", "float64": "fp64"}.get(str(a.dtype), str(a.dtype))


def run_both(name, ins, out_dt, target="sm_90a"):
    """The outputs of the interpreter and of the compiled kernel: for sm_90a (NVIDIA's
    one-instruction forms, on gpu_sim, which computes them exactly: sim_rounding.py) and for
    gfx942 (the computed roundings, on the SIMT emulator)."""
    k = (k1, k2, k3)[len(ins) - 1]
    names = ["x", "y", "z"][:len(ins)]
    sig = {n: tl.pointer_type(TL[_dt(a)]) for n, a in zip(names, ins)}
    sig["o"] = tl.pointer_type(TL[out_dt])
    oi = np.zeros(N, NP[out_dt])
    tilework.jit(k.fn, interpret=True)[(1,)](*ins, oi, FN=name)
    ck = compile(ASTSource(k, sig, {"FN": name}, {}), target, cache=False)
    oc = np.zeros(N, NP[out_dt])
    gpu_sim.run(ck, (1, 1, 1), *ins, oc)
    oa = np.zeros(N, NP[out_dt])
    Emulator.from_kernel(k, sig, {"FN": name}, "gfx942", 4).run((1,), *ins, oa)
    return oi, oc, oa


from sim_rounding import ref_op, round_frac  # noqa: E402  (the exact references)


# ---- inputs -------------------------------------------------------------------------------------

def floats(t, rng, n, lo=-60, hi=60):
    return (rng.standard_normal(n) * np.exp2(rng.integers(lo, hi, n))).astype(t)


def special(t):
    f = np.finfo(t)
    tiny = t(f.smallest_subnormal)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, f.max, -f.max, f.tiny, -f.tiny,
                     tiny, -tiny, 1.0, -1.0, 3 * tiny, f.eps, 2.0], t)


def inputs(op, t, rng):
    n_args = {"fma": 3, "rcp": 1, "sqrt": 1}.get(op, 2)
    f = np.finfo(t)
    bits = 24 if t == np.float32 else 53
    xs = [floats(t, rng, N) for _ in range(n_args)]
    sp = special(t)
    # every pair of special values in the first 16*16 positions? too many: the diagonals
    for k in range(n_args):
        xs[k][:16] = sp
        xs[k][16:32] = np.roll(sp, 3 * k + 1)
        xs[k][32:48] = np.roll(sp, 5 * k + 7)
    # subnormal operands and results
    for k in range(n_args):
        xs[k][48:64] = (rng.integers(-(1 << 20), 1 << 20, 16) * f.smallest_subnormal).astype(t)
    if op in ("add", "sub", "fma"):
        # ties and exact sums: y a small multiple of x's half ulp
        x = xs[0][64:96]
        ulp = np.spacing(np.abs(x))
        xs[1][64:96] = (rng.integers(-4, 5, 32) * ulp / 2).astype(t)
        xs[1][96:104] = -xs[0][96:104]  # exact zeros
        xs[0][104:112] = f.max
        xs[1][104:112] = (f.max * rng.random(8)).astype(t)  # overflow
        if op == "fma":
            xs[1][64:112] = 1.0
            xs[2][64:96] = (rng.integers(-4, 5, 32) * ulp / 2).astype(t)
            xs[2][96:104] = -xs[0][96:104]
            xs[0][104:112] = f.max
            xs[2][104:112] = (f.max * rng.random(8)).astype(t)
            # cancellation of the product's low part; products with tiny residuals
            a = floats(t, rng, 16, -10, 10)
            xs[0][112:128], xs[1][112:128] = a, a
            xs[2][112:128] = -(a.astype(np.float64) ** 2).astype(t)
    elif op in ("mul", "div"):
        # exact products and quotients; results at the subnormal and overflow edges
        xs[0][64:80] = rng.integers(-(1 << 12), 1 << 12, 16).astype(t)
        xs[1][64:80] = rng.integers(1, 1 << 10, 16).astype(t)
        e = -bits - (126 if t == np.float32 else 1022) + 2
        xs[0][80:96] = floats(t, rng, 16, e // 2 - 4, e // 2 + 4)
        xs[1][80:96] = floats(t, rng, 16, e // 2 - 4, e // 2 + 4) if op == "mul" else \
            floats(t, rng, 16, -e // 2 - 4, -e // 2 + 4)
        xs[0][96:104] = f.max
        xs[1][96:104] = (1 + rng.random(8)).astype(t) if op == "mul" else rng.random(8).astype(t)
    elif op in ("sqrt", "rcp"):
        xs[0][64:96] = np.abs(floats(t, rng, 32, -40, 40))
        xs[0][96:112] = rng.integers(1, 1 << 12, 16).astype(t) ** 2  # exact roots
        xs[0][112:128] = np.abs(xs[0][48:64])
    return xs


OPS = ["add", "sub", "mul", "div", "fma", "rcp", "sqrt"]
CASES = [(op, dt) for op in OPS for dt in ("fp32", "fp64")]


@pytest.mark.parametrize("op, dt", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_arith(op, dt):
    t = NP[dt]
    rng = np.random.default_rng(OPS.index(op) * 2 + (dt == "fp64"))
    xs = inputs(op, t, rng)
    wants = {}
    for mode in MODES:
        want = wants[mode] = np.array([ref_op(op, mode, args, t) for args in zip(*xs)], t)
        for got in run_both(f"{op}_{mode}", xs, dt):
            same = (got.view(f"u{t().itemsize}") == want.view(f"u{t().itemsize}")) | \
                (np.isnan(got) & np.isnan(want))
            bad = np.flatnonzero(~same)
            assert not bad.size, (op, mode, [(tuple(x[i] for x in xs), got[i], want[i])
                                             for i in bad[:5]])
    inexact = wants["rd"] != wants["ru"]
    assert N // 4 < inexact.sum() < N - 16  # both the inexact results and the exact ones


CONV = [("int2float", "int32", "fp32"), ("uint2float", "uint32", "fp32"),
        ("ll2float", "int64", "fp32"), ("ull2float", "uint64", "fp32"),
        ("ll2double", "int64", "fp64"), ("ull2double", "uint64", "fp64")]


def int_inputs(dt, rng):
    info = np.iinfo(NP[dt])
    w = info.bits
    x = np.empty(N, object)
    mags = rng.integers(0, w - 1 if info.min < 0 else w, N)
    for i, m in enumerate(mags):
        v = int(rng.integers(0, 1 << 62)) % (1 << int(m)) + (1 << int(m))
        x[i] = v if info.min == 0 or rng.random() < 0.5 else -v
    x[:8] = [0, 1, info.max, info.min, info.max - 1, info.min + 1, 1 << 24, (1 << 24) + 1]
    x[8:12] = [(1 << 53) + 1, (1 << 25) + 2, (1 << 25) + 3, (1 << 25) + 1]  # ties
    return np.array([min(max(v, info.min), info.max) for v in x]).astype(NP[dt])


@pytest.mark.parametrize("name, src, dst", CONV, ids=[c[0] for c in CONV])
def test_int_to_float(name, src, dst):
    t = NP[dst]
    x = int_inputs(src, np.random.default_rng(len(name)))
    for mode in MODES:
        want = np.array([t(0.0) if int(v) == 0 else round_frac(Fraction(int(v)), t, mode)
                         for v in x], t)
        for got in run_both(f"{name}_{mode}", [x], dst):
            np.testing.assert_array_equal(got, want, err_msg=f"{name}_{mode}")


def test_double2float():
    rng = np.random.default_rng(7)
    x = floats(np.float64, rng, N, -160, 140)
    x[:16] = special(np.float64)
    x[16:32] = (floats(np.float32, rng, 16).astype(np.float64) *
                (1 + rng.integers(-2, 3, 16) * 2.0 ** -24))  # ties and near-ties
    x[32:48] = rng.integers(-(1 << 20), 1 << 20, 16) * 2.0 ** -160  # fp32 subnormal results
    x[48:56] = np.finfo(np.float32).max * (1 + rng.random(8) * 2.0 ** -20)  # overflow
    for mode in MODES:
        want = np.array([np.float32(v) if not np.isfinite(v) or v == 0 else
                         round_frac(Fraction(float(v)), np.float32, mode) for v in x],
                        np.float32)
        for got in run_both(f"double2float_{mode}", [x], "fp32"):
            np.testing.assert_array_equal(got, want, err_msg=mode)


@pytest.mark.parametrize("target", ["gfx942", "sm_80"])
def test_compiles(target):
    sig = {n: tl.pointer_type(tl.float64) for n in "xyzo"}
    ck = compile(ASTSource(k3, sig, {"FN": "fma_rd"}, {}), target, cache=False)
    text = ck.asm["amdgcn" if target == "gfx942" else "ptx"]
    assert ("v_fma_f64" in text) if target == "gfx942" else ("fma.rm.f64" in text)
    sig = {"x": tl.pointer_type(tl.float32), "y": tl.pointer_type(tl.float32),
           "o": tl.pointer_type(tl.float32)}
    ck = compile(ASTSource(k2, sig, {"FN": "div_ru"}, {}), target, cache=False)
    text = ck.asm["amdgcn" if target == "gfx942" else "ptx"]
    assert ("v_fma_f64" in text) if target == "gfx942" else ("div.rp.f32" in text)


@tilework.jit
def k_mixed(x, y, o):
    i = tl.arange(0, 256)
    a = tl.load(x + i)
    b = tl.load(y + i)
    tl.store(o + i, libdevice.add_ru(a, b) + libdevice.mul_rd(a, 3) + libdevice.fma_rz(a, 0.1, b))


def test_operands_promote_as_triton():
    """fp32 with fp64 computes in fp64, fp32 with a Python int in fp32 (as Triton's
    extern_elementwise promotes)."""
    rng = np.random.default_rng(12)
    x = floats(np.float32, rng, N)
    y = floats(np.float64, rng, N)
    sig = {"x": tl.pointer_type(tl.float32), "y": tl.pointer_type(tl.float64),
           "o": tl.pointer_type(tl.float64)}
    got = np.zeros(N, np.float64)
    tilework.jit(k_mixed.fn, interpret=True)[(1,)](x, y, got)
    ck = compile(ASTSource(k_mixed, sig, {}, {}), "sm_90a", cache=False)
    gc = np.zeros(N, np.float64)
    gpu_sim.run(ck, (1, 1, 1), x, y, gc)
    t = np.float64
    with np.errstate(all="ignore"):
        want = np.array([ref_op("add", "ru", (a, b), t)
                         + t(ref_op("mul", "rd", (a, 3.0), np.float32))  # fp32 and an int
                         + ref_op("fma", "rz", (a, np.float32(0.1), b), t)
                         for a, b in zip(x, y)])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(gc, want)


@pytest.mark.parametrize("name, dts, msg", [
    ("add_rd", ("int32", "int32"), "libdevice.add_rd takes fp32 or fp64"),
    ("sqrt_ru", ("fp32",), None),
    ("div_rz", ("fp16", "fp16"), "libdevice.div_rz takes fp32 or fp64"),
    ("fma_ru", ("int32", "int64", "int32"), "libdevice.fma_ru takes fp32 or fp64"),
    ("int2float_rd", ("int64",), "libdevice.int2float_rd takes int32"),
    ("ull2double_ru", ("int64",), "libdevice.ull2double_ru takes uint64"),
    ("double2float_rz", ("fp32",), "libdevice.double2float_rz takes fp64"),
])
def test_rejects_wrong_dtype(name, dts, msg):
    if msg is None:  # fp16 is not among Triton's signatures either
        dts, msg = ("fp16",), "libdevice.sqrt_ru takes fp32 or fp64"
    k = (k1, k2, k3)[len(dts) - 1]
    tt = {"fp16": tl.float16, **TL}
    sig = {n: tl.pointer_type(tt[d]) for n, d in zip("xyz", dts)}
    sig["o"] = tl.pointer_type(tl.float32)
    with pytest.raises(tilework.CompilationError, match=msg):
        compile(ASTSource(k, sig, {"FN": name}, {}), "sm_90a", cache=False)


def test_rcp64h_portable():
    """AMD and the interpreter: 1/x's high word; subnormals flushed as rcp.approx.ftz.f64."""
    rng = np.random.default_rng(11)
    x = floats(np.float64, rng, N, -1000, 1000)
    x[:16] = special(np.float64)
    x[16:20] = [2.0 ** 1023, -(2.0 ** 1023), 1e-310, -1e-310]  # subnormal result / input
    o = np.zeros(N, np.float64)
    tilework.jit(k1.fn, interpret=True)[(1,)](x, o, FN="rcp64h")
    with np.errstate(all="ignore"):
        exact = 1.0 / x
    fin = np.isfinite(exact) & (np.abs(exact) >= np.finfo(np.float64).tiny)
    assert fin.sum() > N - 24
    assert (o.view(np.uint64)[fin] & 0xFFFFFFFF == 0).all()
    assert (np.abs(o[fin] / exact[fin] - 1) < 2.0 ** -20).all()
    np.testing.assert_array_equal(o[16:20], [0.0, -0.0, np.inf, -np.inf])
    assert np.signbit(o[17]) and not np.signbit(o[16])
    np.testing.assert_array_equal(o[:3], [np.inf, -np.inf, 0.0])  # 1/+-0, 1/inf


def test_rcp64h_targets():
    sig = {"x": tl.pointer_type(tl.float64), "o": tl.pointer_type(tl.float64)}
    ptx = compile(ASTSource(k1, sig, {"FN": "rcp64h"}, {}), "sm_90a", cache=False).asm["ptx"]
    assert "rcp.approx.ftz.f64" in ptx
    amd = compile(ASTSource(k1, sig, {"FN": "rcp64h"}, {}), "gfx942", cache=False).asm["amdgcn"]
    assert "rcp.approx" not in amd and "global_store_dwordx2" in amd
    sig["x"] = tl.pointer_type(tl.float32)
    with pytest.raises(tilework.CompilationError, match="libdevice.rcp64h takes fp64"):
        compile(ASTSource(k1, sig, {"FN": "rcp64h"}, {}), "sm_90a", cache=False)


# Triton 3.6's `triton.language.extra.cuda.libdevice` functions (their `def` names)
TRITON_LIBDEVICE = (
    "clz", "popc", "byte_perm", "mulhi", "mul24", "brev", "sad", "abs", "floor", "rcp64h",
    "rsqrt", "ceil", "trunc", "exp2", "saturatef", "fma_rn", "fma_rz", "fma_rd", "fma_ru",
    "fast_dividef", "div_rn", "div_rz", "div_rd", "div_ru", "rcp_rn", "rcp_rz", "rcp_rd",
    "rcp_ru", "sqrt_rn", "sqrt_rz", "sqrt_rd", "sqrt_ru", "sqrt", "add_rn", "add_rz", "add_rd",
    "add_ru", "mul_rn", "mul_rz", "mul_rd", "mul_ru", "double2float_rn", "double2float_rz",
    "double2float_rd", "double2float_ru", "double2int_rn", "double2int_rz", "double2int_rd",
    "double2int_ru", "double2uint_rn", "double2uint_rz", "double2uint_rd", "double2uint_ru",
    "int2double_rn", "uint2double_rn", "float2int_rn", "float2int_rz", "float2int_rd",
    "float2int_ru", "float2uint_rn", "float2uint_rz", "float2uint_rd", "float2uint_ru",
    "int2float_rn", "int2float_rz", "int2float_rd", "int2float_ru", "uint2float_rn",
    "uint2float_rz", "uint2float_rd", "uint2float_ru", "hiloint2double", "double2loint",
    "double2hiint", "float2ll_rn", "float2ll_rz", "float2ll_rd", "float2ll_ru", "float2ull_rn",
    "float2ull_rz", "float2ull_rd", "float2ull_ru", "double2ll_rn", "double2ll_rz",
    "double2ll_rd", "double2ll_ru", "double2ull_rn", "double2ull_rz", "double2ull_rd",
    "double2ull_ru", "ll2float_rn", "ll2float_rz", "ll2float_rd", "ll2float_ru",
    "ull2float_rn", "ull2float_rz", "ull2float_rd", "ull2float_ru", "ll2double_rn",
    "ll2double_rz", "ll2double_rd", "ll2double_ru", "ull2double_rn", "ull2double_rz",
    "ull2double_rd", "ull2double_ru", "int_as_float", "float_as_int", "uint_as_float",
    "float_as_uint", "longlong_as_double", "double_as_longlong", "fast_sinf", "fast_cosf",
    "fast_log2f", "fast_logf", "fast_expf", "fast_tanf", "fast_exp10f", "fast_log10f",
    "fast_powf", "hadd", "rhadd", "sub_rn", "sub_rz", "sub_rd", "sub_ru", "rsqrt_rn", "ffs",
    "rint", "llrint", "nearbyint", "isnan", "signbit", "copysign", "finitef", "isinf",
    "nextafter", "sin", "cos", "sinpi", "cospi", "tan", "log2", "exp", "exp10", "cosh", "sinh",
    "tanh", "atan2", "atan", "asin", "acos", "log", "log10", "log1p", "acosh", "asinh",
    "atanh", "expm1", "hypot", "rhypot", "norm3d", "rnorm3d", "norm4d", "rnorm4d", "cbrt",
    "rcbrt", "j0", "j1", "y0", "y1", "yn", "jn", "cyl_bessel_i0", "cyl_bessel_i1", "erf",
    "erfinv", "erfc", "erfcx", "erfcinv", "normcdfinv", "normcdf", "lgamma", "ldexp", "scalbn",
    "fmod", "remainder", "fma", "pow", "tgamma", "round", "llround", "fdim", "ilogb", "logb",
    "isfinited")


def test_every_triton_libdevice_function_exists():
    missing = [n for n in TRITON_LIBDEVICE if not callable(getattr(libdevice, n, None))]
    assert not missing, missing
    assert set(TRITON_LIBDEVICE) <= set(libdevice.__all__)
