"""Triton's host API (issue 14): `tilework.cdiv` / `next_power_of_2`, `warmup()`'s handle
(`n_regs`, `n_spills`, `metadata.shared`), `tilework.runtime.driver` device queries,
`extern_libs=`, `@jit` of a function built by `exec` (interpreter), errors keeping their cause,
and `tl.extra.libdevice` (values against numpy in the interpreter, compiled on both targets)."""
import math
import types
import zlib

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource, compile
from tilework.language.extra import libdevice
from tilework.runtime import driver

interpreted = tilework.jit(interpret=True)
P = tl.pointer_type
F32 = P(tl.float32)


# ---- cdiv / next_power_of_2 ------------------------------------------------------------------------

def test_cdiv_and_next_power_of_2():
    assert [tilework.cdiv(n, 4) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]
    assert tilework.cdiv(tl.constexpr(10), 3) == 4
    assert [tilework.next_power_of_2(n) for n in (0, 1, 2, 3, 5, 16, 17, 1000)] == \
        [1, 1, 2, 4, 8, 16, 32, 1024]
    assert tilework.next_power_of_2(tl.constexpr(33)) == 64


# ---- warmup's handle -----------------------------------------------------------------------------

@tilework.jit
def k_softmax_like(x, out, n, B: tl.constexpr):
    o = tl.arange(0, B)
    v = tl.load(x + tl.program_id(0) * n + o, mask=o < n, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out + tl.program_id(0) * n + o, e / tl.sum(e, axis=0), mask=o < n)


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
def test_warmup_handle_has_registers_spills_and_shared(target):
    k = k_softmax_like.warmup("*fp32:16", "*fp32:16", "i32", B=1024, num_warps=4, grid=(1,),
                              target=target)
    assert isinstance(k.n_regs, int) and 0 < k.n_regs <= 255
    assert k.n_spills == 0
    assert k.metadata.shared == k.metadata["shared"] > 0  # the reductions' scratch
    assert k.metadata.num_warps == 4
    with pytest.raises(AttributeError):
        k.metadata.no_such_field
    if target == "sm_90a":  # ptxas's own report
        assert f"Used {k.n_regs} registers" in k.metadata["ptxas_info"]


# ---- driver ----------------------------------------------------------------------------------------

class _FakeAttr:
    def __getattr__(self, name):
        return name


def _fake_cuda(values):
    cu = types.SimpleNamespace()
    cu.CUdevice_attribute = _FakeAttr()
    cu.cuInit = lambda flags: (0,)
    cu.cuDeviceGet = lambda i: (0, f"dev{i}")
    cu.cuDeviceGetAttribute = lambda attr, dev: (0, values[attr.replace("CU_DEVICE_ATTRIBUTE_", "")])
    return cu


def test_device_properties_from_the_cuda_driver():
    values = {"MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448, "MAX_REGISTERS_PER_BLOCK": 65536,
              "MULTIPROCESSOR_COUNT": 132, "WARP_SIZE": 32, "CLOCK_RATE": 1980000,
              "MEMORY_CLOCK_RATE": 2619000, "GLOBAL_MEMORY_BUS_WIDTH": 5120}
    props = driver.cuda_properties(_fake_cuda(values), 0)
    assert props == {"max_shared_mem": 232448, "max_num_regs": 65536,
                     "multiprocessor_count": 132, "warpSize": 32, "sm_clock_rate": 1980000,
                     "mem_clock_rate": 2619000, "mem_bus_width": 5120}


def test_device_properties_from_hip():
    class Props:
        sharedMemPerBlock, regsPerBlock, multiProcessorCount, warpSize = 65536, 512, 304, 64
        clockRate, memoryClockRate, memoryBusWidth = 2100000, 1300000, 8192
    hip = types.SimpleNamespace(hipDeviceProp_t=Props, hipGetDeviceProperties=lambda p, d: (0,))
    props = driver.hip_properties(hip, 0)
    assert props["multiprocessor_count"] == 304 and props["warpSize"] == 64
    assert props["max_shared_mem"] == 65536 and props["max_num_regs"] == 512


def test_current_target_is_one_immutable_object_per_target(monkeypatch):
    """`driver.active.get_current_target()` (asked by routing code on every call): Triton's
    fields, one frozen object per target name."""
    import dataclasses
    name = ["sm_90a"]
    monkeypatch.setattr(driver, "runtime_for", lambda dev: types.SimpleNamespace(
        target=lambda: name[0]))
    t = driver.active.get_current_target()
    assert (t.backend, t.arch, t.warp_size) == ("cuda", 90, 32)
    assert driver.active.get_current_target() is t
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.arch = 80
    for name[0], want in (("sm_80", ("cuda", 80, 32)), ("gfx942", ("hip", "gfx942", 64)),
                          ("gfx1201", ("hip", "gfx1201", 32))):
        t = driver.active.get_current_target()
        assert (t.backend, t.arch, t.warp_size) == want


def test_driver_failure_names_the_call():
    cu = _fake_cuda({})
    cu.cuDeviceGet = lambda i: (100, None)
    with pytest.raises(RuntimeError, match="cuDeviceGet failed"):
        driver.cuda_properties(cu, 3)


def test_driver_is_importable_without_a_gpu():
    assert tilework.runtime.driver.active is driver.active
    assert callable(driver.active.utils.get_device_properties)
    assert callable(driver.active.get_active_torch_device)


# ---- extern_libs, exec-built kernels, causes -----------------------------------------------------

@tilework.jit
def k_asin(x, out, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(out + o, libdevice.asin(tl.load(x + o)))


def test_extern_libs_accepted_and_ignored():
    x = np.linspace(-1, 1, 64).astype(np.float32)
    out = np.zeros_like(x)
    interpreted(k_asin.fn)[(1,)](x, out, B=64, extern_libs={"libdevice": "/nonexistent.bc"})
    np.testing.assert_allclose(out, np.arcsin(x), rtol=2e-7, atol=1e-7)
    ck = k_asin.warmup("*fp32", "*fp32", B=64, grid=(1,), target="sm_90a",
                       extern_libs={"libdevice": "/nonexistent.bc"})
    assert "ptx" in ck.asm


EXEC_SRC = """
def scale(x, out, n, B: tl.constexpr):
    o = tl.arange(0, B)
    m = o < n
    tl.store(out + o, tl.load(x + o, mask=m) * 3, mask=m)
"""


def test_jit_of_an_exec_built_function_runs_in_the_interpreter():
    ns = {"tl": tl}
    exec(EXEC_SRC, ns)
    k = tilework.jit(ns["scale"], interpret=True)
    x = np.arange(20, dtype=np.float32)
    out = np.zeros(20, np.float32)
    k[(1,)](x, out, 20, B=32)
    np.testing.assert_array_equal(out, x * 3)


def test_jit_of_an_exec_built_function_needs_its_source_to_compile():
    ns = {"tl": tl}
    exec(EXEC_SRC, ns)
    with pytest.raises(TypeError, match="@jit needs the source of scale"):
        tilework.jit(ns["scale"], interpret=False)
    k = tilework.jit(ns["scale"], interpret=True)
    with pytest.raises(TypeError, match="needs the source of scale to compile it"):
        compile(ASTSource(k, {"x": F32, "out": F32, "n": tl.int32}, {"B": 32}, {}), "sm_90a")


@tilework.jit
def k_bad_call(x):
    v = tl.load(x + tl.arange(0, 16))
    tl.store(x + tl.arange(0, 16), tl.exp(v.to(tl.int32)))


def test_compile_errors_keep_their_cause():
    with pytest.raises(CompilationError) as e:
        compile(ASTSource(k_bad_call, {"x": F32}, {}, {}), "sm_90a", cache=False)
    cause = e.value.__cause__
    assert cause is not None and "Expected dtype" in str(cause)
    assert str(cause) in e.value.message


# ---- libdevice -------------------------------------------------------------------------------------

UNARY = {
    "trunc": np.trunc, "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    "rint": np.rint, "nearbyint": np.rint, "expm1": np.expm1, "log1p": np.log1p,
    "exp10": lambda x: 10.0 ** x, "log10": np.log10, "cbrt": np.cbrt, "rcbrt": lambda x: 1 / np.cbrt(x),
    "tan": np.tan, "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "erfc": np.vectorize(math.erfc), "sinpi": lambda x: np.sin(np.pi * x),
    "cospi": lambda x: np.cos(np.pi * x), "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "fabs": np.abs, "floor": np.floor, "ceil": np.ceil, "erf": np.vectorize(math.erf),
    "saturatef": lambda x: np.clip(x, 0, 1),
}
BINARY = {
    "pow": np.power, "hypot": np.hypot, "atan2": np.arctan2, "fmod": np.fmod,
    "copysign": np.copysign, "fdim": lambda a, b: np.where(a > b, a - b, 0),
    "fmin": np.fmin, "fmax": np.fmax,
}
PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "signbit": np.signbit,
              "isfinited": np.isfinite, "finitef": np.isfinite}


def _domain(name, rng, n, dt):
    x = rng.standard_normal(n) * 4
    if name in ("asin", "acos", "atanh"):
        x = rng.uniform(-1, 1, n)
    elif name == "acosh":
        x = 1 + np.abs(x) * 10
    elif name in ("log", "log10", "sqrt"):
        x = np.abs(x) * 100 + 1e-3
    elif name == "log1p":
        x = np.abs(x) * np.where(rng.uniform(size=n) < 0.5, 1e-7, 1.0)
    elif name == "erfc":
        x = rng.uniform(-3, 12, n)
    elif name in ("round", "rint", "nearbyint", "trunc"):
        x = np.round(x * 4) / 4  # halves and quarters
    return x.astype(dt)


@tilework.jit
def k_unary(x, out, NAME: tl.constexpr, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(out + o, getattr(libdevice, NAME)(tl.load(x + o)))


@tilework.jit
def k_binary(x, y, out, NAME: tl.constexpr, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(out + o, getattr(libdevice, NAME)(tl.load(x + o), tl.load(y + o)))


def _close(got, want, dt):
    # fp32 results are the fp64 computation rounded once: within ~1 ulp; fp64 a few ulp
    tol = 2.5e-7 if dt == np.float32 else 4e-15
    tiny = np.finfo(dt).tiny  # below it (subnormal results) the error is absolute
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])  # infinities and NaNs
    got, want = got[finite], want[finite]
    big = np.abs(want) >= tiny
    err = np.abs(got.astype(np.float64) - want) / np.where(big, np.abs(want), 1.0)
    assert np.all(err[big] <= tol), (float(err[big].max()), tol)
    assert np.all(np.abs(got[~big] - want[~big]) <= tiny)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_libdevice_unary(name, dt):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = _domain(name, rng, 256, dt)
    out = np.zeros_like(x)
    interpreted(k_unary.fn)[(1,)](x, out, NAME=name, B=256)
    want = UNARY[name](x.astype(np.float64))
    if name == "exp10" and dt == np.float64:  # exp(x ln 10): |x ln 10| * 2**-53 relative
        np.testing.assert_allclose(out, want, rtol=1e-14)
    elif name == "erfc" and dt == np.float64:  # 1 - erf(x) below 2: absolute accuracy
        np.testing.assert_allclose(out, want, rtol=4e-15, atol=3e-16)
    else:
        _close(out, want, dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_libdevice_binary(name, dt):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = (rng.standard_normal(256) * 3).astype(dt)
    y = (rng.standard_normal(256) * 3).astype(dt)
    if name == "pow":
        x = np.abs(x)
        x[:8] = [-2, -2, -0.5, 0, 0, 1, 3, -3]
        y[:8] = [3, 2, 2.5, 2, -1, np.nan, 0, 1]
    out = np.zeros_like(x)
    interpreted(k_binary.fn)[(1,)](x, y, out, NAME=name, B=256)
    with np.errstate(all="ignore"):
        want = BINARY[name](x.astype(np.float64), y.astype(np.float64))
    if name == "pow" and dt == np.float64:
        np.testing.assert_allclose(out, want, rtol=1e-13)
    else:
        _close(out, want, dt)


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_libdevice_predicates(name):
    x = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e-40] * 2, np.float32)
    out = np.full(16, 7, np.int32)
    interpreted(k_unary.fn)[(1,)](x, out, NAME=name, B=16)
    np.testing.assert_array_equal(out, PREDICATES[name](x).astype(np.int32))


@tilework.jit
def k_ldexp(x, n, out, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(out + o, libdevice.ldexp(tl.load(x + o), tl.load(n + o)))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_libdevice_ldexp(dt):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(64).astype(dt)
    n = rng.integers(-140, 140, 64).astype(np.int32)
    n[:3] = [2000, -2000, 0]
    out = np.zeros_like(x)
    interpreted(k_ldexp.fn)[(1,)](x, n, out, B=64)
    with np.errstate(over="ignore", under="ignore"):
        np.testing.assert_array_equal(out, np.ldexp(x, n).astype(dt))


def test_libdevice_special_values():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, 1e30, -1e30], np.float32)
    for name in ("tanh", "sinh", "cosh", "atan", "asinh", "expm1", "log1p", "cbrt", "erfc"):
        out = np.zeros_like(x)
        interpreted(k_unary.fn)[(1,)](x, out, NAME=name, B=8)
        with np.errstate(all="ignore"):
            want = UNARY[name](x.astype(np.float64)).astype(np.float32)
        np.testing.assert_array_equal(np.isnan(out), np.isnan(want), err_msg=name)
        ok = ~np.isnan(want)
        np.testing.assert_allclose(out[ok], want[ok], rtol=3e-7, err_msg=name)


@tilework.jit
def k_many(x, y, out, B: tl.constexpr):
    o = tl.arange(0, B)
    v = tl.load(x + o)
    w = tl.load(y + o)
    r = libdevice.asin(v) + libdevice.erfc(v) + libdevice.tanh(v) + libdevice.pow(v, w)
    r += libdevice.atan2(v, w) + libdevice.round(v) + libdevice.cbrt(w) + libdevice.log1p(v)
    r += libdevice.ldexp(v, o) + libdevice.signbit(w).to(tl.float32)
    tl.store(out + o, r)


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
@pytest.mark.parametrize("elem", [tl.float32, tl.float64])
def test_libdevice_compiles_self_contained(target, elem):
    """No extern calls (no bitcode to link) on either target, and no spills."""
    ck = compile(ASTSource(k_many, {"x": P(elem), "y": P(elem), "out": P(elem)}, {"B": 128}, {}),
                 target)
    llir = ck.asm["llir"]
    assert "__nv_" not in llir and "__ocml_" not in llir
    assert not [ln for ln in llir.splitlines() if ln.startswith("declare") and "llvm." not in ln]
    assert ck.n_spills == 0


def test_libdevice_namespaces_are_one_module():
    from tilework.language.extra.cuda import libdevice as cuda_libdevice
    from tilework.language.extra.hip import libdevice as hip_libdevice
    assert cuda_libdevice is libdevice is hip_libdevice is tl.extra.libdevice
    assert set(libdevice.__all__) <= set(dir(libdevice))
