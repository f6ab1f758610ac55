"""libdevice's conversions with a rounding mode, bit reinterpretations and round-to-nearest
arithmetic (`language/extra/libdevice_convert.py`): interpreted and compiled for sm_90a (run
on the CPU stand-in gpu_sim) against numpy, and compiled for gfx942."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.language.extra import libdevice

import gpu_sim

NP = {"fp32": np.float32, "fp64": np.float64, "int32": np.int32, "uint32": np.uint32,
      "int64": np.int64, "uint64": np.uint64}
TL = {"fp32": tl.float32, "fp64": tl.float64, "int32": tl.int32, "uint32": tl.uint32,
      "int64": tl.int64, "uint64": tl.uint64}


@tilework.jit
def k_unary(x, o, FN: tl.constexpr):
    i = tl.arange(0, 16)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i)))


@tilework.jit
def k_binary(x, y, o, FN: tl.constexpr):
    i = tl.arange(0, 16)
    tl.store(o + i, getattr(libdevice, FN)(tl.load(x + i), tl.load(y + i)))


ROUND = {"rd": np.floor, "ru": np.ceil, "rn": np.rint, "rz": np.trunc}
INTS = {"int": "int32", "uint": "uint32", "ll": "int64", "ull": "uint64"}
UNARY = []  # (name, in dtype, out dtype, reference)
for src, sty in (("float", "fp32"), ("double", "fp64")):
    for iname, ity in INTS.items():
        for r, f in ROUND.items():
            UNARY.append((f"{src}2{iname}_{r}", sty, ity,
                          lambda x, f=f, ity=ity: f(x).astype(NP[ity])))
for iname, ity in INTS.items():
    UNARY.append((f"{iname}2float_rn", ity, "fp32", lambda x: x.astype(np.float32)))
    UNARY.append((f"{iname}2double_rn", ity, "fp64", lambda x: x.astype(np.float64)))
UNARY += [("double2float_rn", "fp64", "fp32", lambda x: x.astype(np.float32)),
          ("float_as_uint", "fp32", "uint32", lambda x: x.view(np.uint32)),
          ("uint_as_float", "uint32", "fp32", lambda x: x.view(np.float32)),
          ("double2hiint", "fp64", "int32", lambda x: x.view(np.int32)[1::2]),
          ("double2loint", "fp64", "int32", lambda x: x.view(np.int32)[0::2]),
          ("rint", "fp32", "fp32", np.rint),
          ("rcp_rn", "fp32", "fp32", lambda x: np.float32(1) / x),
          ("llrint", "fp64", "int64", lambda x: np.rint(x).astype(np.int64)),
          ("llround", "fp32", "int64",  # halves away from zero
           lambda x: (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(np.int64))]

BINARY = [("add_rn", "fp32", lambda x, y: x + y), ("sub_rn", "fp32", lambda x, y: x - y),
          ("mul_rn", "fp32", lambda x, y: x * y),
          ("mulhi", "int32", lambda x, y: ((x.astype(np.int64) * y) >> 32).astype(np.int32)),
          ("hadd", "int32", lambda x, y: ((x.astype(np.int64) + y) >> 1).astype(np.int32)),
          ("rhadd", "int32", lambda x, y: ((x.astype(np.int64) + y + 1) >> 1).astype(np.int32))]


def _input(dt, rng, positive=False):
    if dt in ("fp32", "fp64"):
        # halves and quarters, where the rounding modes differ, and non-integers
        x = rng.integers(-4000, 4000, 16) / 4 + rng.choice([0, 0.5, 0.3], 16)
        return np.abs(x).astype(NP[dt]) if positive else x.astype(NP[dt])
    if dt == "uint32":
        return rng.integers(0, 1 << 32, 16, dtype=np.uint64).astype(np.uint32)
    hi = {"int32": 1 << 31, "int64": 1 << 62, "uint64": 1 << 63}[dt]
    lo = 0 if dt.startswith("u") else -hi
    return rng.integers(lo, hi, 16, dtype=np.int64).astype(NP[dt])  # beyond 2**24 / 2**53


def _run(fn, ins, out_dt, consts, target="sm_90a"):
    names = ["x", "y"][:len(ins)]
    sig = {n: tl.pointer_type(TL[str(a.dtype).replace("float", "fp")
                                 if a.dtype.kind == "f" else str(a.dtype)])
           for n, a in zip(names, ins)} | {"o": tl.pointer_type(TL[out_dt])}
    oi = np.zeros(16, NP[out_dt])
    tilework.jit(fn.fn, interpret=True)[(1,)](*ins, oi, **consts)
    ck = compile(ASTSource(fn, sig, consts, {}), target, cache=False)
    if target != "sm_90a":
        return oi, None
    oc = np.zeros(16, NP[out_dt])
    gpu_sim.run(ck, (1, 1, 1), *ins, oc)
    return oi, oc


@pytest.mark.parametrize("name, in_dt, out_dt, ref", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, in_dt, out_dt, ref):
    rng = np.random.default_rng(hash(name) % 1000)
    x = _input(in_dt, rng, positive="uint" in name.split("2")[-1] or "ull" in name[6:])
    oi, oc = _run(k_unary, [x], out_dt, {"FN": name})
    want = ref(x)
    np.testing.assert_array_equal(oi, want)
    np.testing.assert_array_equal(oc, want)


@pytest.mark.parametrize("name, dt, ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, dt, ref):
    rng = np.random.default_rng(len(name))
    x, y = _input(dt, rng), _input(dt, rng)
    oi, oc = _run(k_binary, [x, y], dt, {"FN": name})
    np.testing.assert_array_equal(oi, ref(x, y))
    np.testing.assert_array_equal(oc, ref(x, y))


@pytest.mark.parametrize("name", ["float2int_rd", "double2ull_ru", "float2ll_rn",
                                  "double2hiint", "float_as_uint", "hiloint2double", "ilogb"])
def test_gfx942_compiles(name):
    if name == "hiloint2double":
        fn, sig = k_binary, {"x": tl.pointer_type(tl.int32), "y": tl.pointer_type(tl.int32),
                             "o": tl.pointer_type(tl.float64)}
    else:
        fn, sig = k_unary, {"x": tl.pointer_type(tl.float64 if name.startswith("double")
                                                 else tl.float32),
                            "o": tl.pointer_type(tl.int64)}
        if name in ("float2int_rd", "double2hiint", "ilogb"):
            sig["o"] = tl.pointer_type(tl.int32)
        if name == "float_as_uint":
            sig["o"] = tl.pointer_type(tl.uint32)
    ck = compile(ASTSource(fn, sig, {"FN": name}, {}), "gfx942", cache=False)
    assert "global_store" in ck.asm["amdgcn"]


def test_hiloint2double():
    rng = np.random.default_rng(3)
    d = _input("fp64", rng)
    hi, lo = d.view(np.int32)[1::2].copy(), d.view(np.int32)[0::2].copy()
    oi, oc = _run(k_binary, [hi, lo], "fp64", {"FN": "hiloint2double"})
    np.testing.assert_array_equal(oi, d)
    np.testing.assert_array_equal(oc, d)


@tilework.jit
def k_norms(x, y, z, w, o, FN: tl.constexpr):
    i = tl.arange(0, 16)
    a, b, c, d = tl.load(x + i), tl.load(y + i), tl.load(z + i), tl.load(w + i)
    if FN == "norm3d":
        r = libdevice.norm3d(a, b, c)
    elif FN == "rnorm3d":
        r = libdevice.rnorm3d(a, b, c)
    elif FN == "norm4d":
        r = libdevice.norm4d(a, b, c, d)
    elif FN == "rnorm4d":
        r = libdevice.rnorm4d(a, b, c, d)
    else:
        r = libdevice.scalbn(a, (b * 10).to(tl.int32))
    tl.store(o + i, r)


NORMS = {"norm3d": lambda a, b, c, d: np.sqrt(a * a + b * b + c * c),
         "rnorm3d": lambda a, b, c, d: 1 / np.sqrt(a * a + b * b + c * c),
         "norm4d": lambda a, b, c, d: np.sqrt(a * a + b * b + c * c + d * d),
         "rnorm4d": lambda a, b, c, d: 1 / np.sqrt(a * a + b * b + c * c + d * d),
         "scalbn": lambda a, b, c, d: np.ldexp(a, (b.astype(np.float32) * 10).astype(np.int32))}


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
@pytest.mark.parametrize("name", list(NORMS))
def test_norms_and_scalbn(name, dt):
    rng = np.random.default_rng(len(name))
    ins = [(rng.standard_normal(16) * 10.0 ** rng.integers(-3, 3, 16)).astype(NP[dt])
           for _ in range(4)]
    ins[0][:2] = [1e30 if dt == "fp32" else 1e300, 0]  # no overflow; one all-zero row
    for a in ins[1:]:
        a[1] = 0
    sig = {n: tl.pointer_type(TL[dt]) for n in ("x", "y", "z", "w", "o")}
    oi = np.zeros(16, NP[dt])
    with np.errstate(divide="ignore", over="ignore"):
        want = NORMS[name](*[a.astype(np.float64) for a in ins]).astype(NP[dt]) \
            if dt == "fp32" else NORMS[name](*ins)
        tilework.jit(k_norms.fn, interpret=True)[(1,)](*ins, oi, FN=name)
        if dt == "fp64" and name != "scalbn":  # (numpy's own fp64 formula overflows at 1e300)
            want[0] = NORMS[name](*[np.float64(a[0]) / 1e300 for a in ins]) * \
                (1e300 if name.startswith("n") else 1e-300)
    ck = compile(ASTSource(k_norms, sig, {"FN": name}, {}), "sm_90a", cache=False)
    oc = np.zeros(16, NP[dt])
    gpu_sim.run(ck, (1, 1, 1), *ins, oc)
    rtol = 2e-7 if dt == "fp32" else 1e-15
    np.testing.assert_allclose(oi, want, rtol=rtol)
    np.testing.assert_allclose(oc, oi, rtol=rtol)
    compile(ASTSource(k_norms, sig, {"FN": name}, {}), "gfx942", cache=False)


def _specials(dt, rng):
    x = (rng.standard_normal(16) * 10.0 ** rng.integers(-30, 30, 16)).astype(NP[dt])
    tiny = np.finfo(NP[dt]).smallest_subnormal
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, tiny * 3, -tiny, np.finfo(NP[dt]).max]
    return x


def _logb(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        e = (np.frexp(x)[1] - 1).astype(x.dtype)
    return np.where(x == 0, -np.inf, np.where(np.isinf(x), np.inf, np.where(np.isnan(x), x, e)))


def _ilogb(x):
    e = np.frexp(np.where(np.isfinite(x) & (x != 0), x, 1))[1] - 1
    return np.where(np.isinf(x), 2**31 - 1, np.where((x == 0) | np.isnan(x), -2**31, e)) \
        .astype(np.int32)


@pytest.mark.parametrize("dt", ["fp32", "fp64"])
@pytest.mark.parametrize("name", ["logb", "ilogb", "nextafter"])
def test_logb_ilogb_nextafter(name, dt):
    rng = np.random.default_rng(len(name) + len(dt))
    x = _specials(dt, rng)
    if name == "nextafter":
        y = np.where(rng.random(16) < 0.5, np.inf, -np.inf).astype(NP[dt])
        y[:6] = [1.0, -1.0, 0.0, 0.0, 1.0, 0.0]
        y[8] = x[8]  # equal: y
        oi, oc = _run(k_binary, [x, y], dt, {"FN": name})
        want = np.nextafter(x, y)
    else:
        out_dt = "int32" if name == "ilogb" else dt
        oi, oc = _run(k_unary, [x], out_dt, {"FN": name})
        want = (_ilogb if name == "ilogb" else _logb)(x)
    np.testing.assert_array_equal(oi, want)
    np.testing.assert_array_equal(oc, want)
