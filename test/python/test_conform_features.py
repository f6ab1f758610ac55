"""The Triton language features issue 14's audit still listed as missing: `triton.reinterpret`
(a tensor passed with another element type), `repr(dtype)` as Triton's, interpreter errors as
Triton's `InterpreterError` with the original error as `__cause__`, Python's `assert` as
`tl.device_assert`, and `.to(tl.float8e4b15)` with Triton 3.6's compiled rule.  Values against
numpy in the interpreter and compiled (sm_90a and gfx942 run by the SIMT emulator); each
rejected form with its message.  On the GPU: test_conform_features_gpu.py."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile
from tilework.errors import CompilationError, InterpreterError, TritonError
from tilework.frontend.semantic import SemanticError
from builtins_kernels import np_from_e4b15, np_to_e4b15
from simt_emulator import Emulator

TARGETS = ["sm_90a", "gfx942"]
P = tl.pointer_type
ALL_DTYPES = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float8e4nv", "float8e5", "float8e4b15", "float8e4b8", "float8e5b16", "float16",
              "bfloat16", "float32", "float64"]


def emulate(fn, sig, consts, target, *args):
    Emulator.from_kernel(tilework.jit(fn), sig, consts, target, 4).run((1,), *args)


def tile_text(fn, sig, consts, **options):
    ck = compile(ASTSource(tilework.jit(fn), sig, consts, {}), "sm_90a",
                 tilework.CompileOptions(**options), cache=False)
    return ck.asm["tile"]


# ---- repr(dtype) ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL_DTYPES)
def test_dtype_repr_is_tritons(name):
    d = getattr(tl, name)
    assert repr(d) == f"triton.language.{name}"  # Triton's test_dtype_codegen
    assert eval(repr(d), {"triton": tilework}) == d  # evaluable where `triton` is tilework
    assert str(d) == d.name and f"{d}" == d.name  # str stays Triton's short name


def test_pointer_and_block_types_repr_as_their_str():
    assert repr(P(tl.float16)) == str(P(tl.float16))
    assert repr(tl.block_type(tl.float32, [4])) == str(tl.block_type(tl.float32, [4]))
    assert repr(tl.constexpr(tl.int8)) == "constexpr[triton.language.int8]"


# ---- triton.reinterpret ------------------------------------------------------------------------

class FakeDeviceArray:
    """A GPU array standing in for a CUDA tensor (the launch path's `__cuda_array_interface__`
    rule), so the launch key and signature are checked without a GPU."""

    def __init__(self, addr, typestr, n):
        self.__cuda_array_interface__ = {"data": (addr, False), "typestr": typestr,
                                         "shape": (n,), "version": 3}
        self.data, self.device, self.shape, self.dtype = self, "cuda:0", (n,), typestr

    def data_ptr(self):
        return self.__cuda_array_interface__["data"][0]

    def stride(self, *args):
        return (1,) if not args else 1


def test_reinterpret_wrapper_on_the_host():
    torch = pytest.importorskip("torch")
    t = torch.arange(-8, 8, dtype=torch.int8)
    w = tilework.reinterpret(t, tl.float8e4nv)
    assert isinstance(w, tilework.TensorWrapper) and w.dtype is tl.float8e4nv and w.base is t
    assert w.data_ptr() == t.data_ptr() and w.shape == t.shape and w.stride() == t.stride()
    assert w.stride(0) == 1 and w.element_size() == 1 and w.device == t.device
    assert str(w).startswith("TensorWrapper[fp8e4nv](tensor(")
    assert tilework.reinterpret(w, torch.int8) is t  # back to the base's own dtype: the base
    w2 = tilework.reinterpret(w, tl.float8e5)
    assert type(w2) is tilework.TensorWrapper and w2.base is t and w2.dtype is tl.float8e5
    c = w.clone()
    assert type(c) is tilework.TensorWrapper and c.dtype is tl.float8e4nv and c.base is not t
    c.copy_(w2)
    assert torch.equal(c.base, t)
    import sys
    assert tilework.reinterpret is sys.modules["tilework.runtime.jit"].reinterpret is \
        tilework.runtime.reinterpret
    with pytest.raises(TypeError, match="Cannot reinterpret a <class 'int'>."):
        tilework.reinterpret(3, tl.float8e5)


def k_fp8_roundtrip(x, y, z, N: tl.constexpr):
    """y = the fp8 elements of `x` in fp32; z = y * 0.5 stored back in x's type."""
    r = tl.arange(0, N)
    v = tl.load(x + r)
    tl.static_assert(v.dtype.is_fp8())
    f = v.to(tl.float32)
    tl.store(y + r, f)
    tl.store(z + r, (f * 0.5).to(v.dtype))


FP8 = [("float8e4nv", "float8_e4m3fn"), ("float8e5", "float8_e5m2"), ("float8e4b15", None)]


def np_fp8(bits, name):
    """fp8 bytes -> float32, from torch's own fp8 dtypes (e4b15: its fp16 form)."""
    torch = pytest.importorskip("torch")
    if name == "float8e4b15":
        return np_from_e4b15(bits)
    return torch.from_numpy(bits.view(np.int8)).view(getattr(torch, dict(FP8)[name])) \
        .float().numpy()


def np_fp8_from_f32(f, name):
    torch = pytest.importorskip("torch")
    if name == "float8e4b15":
        return np_to_e4b15(f)
    return torch.from_numpy(f).to(getattr(torch, dict(FP8)[name])).view(torch.uint8).numpy()


@pytest.mark.parametrize("name", [n for n, _ in FP8])
def test_reinterpret_interpreted(name):
    torch = pytest.importorskip("torch")
    bits = np.arange(256, dtype=np.uint8)
    x = torch.from_numpy(bits.copy()).view(torch.int8)  # int8 storage
    y = torch.zeros(256)
    z = torch.zeros(256, dtype=torch.uint8)
    k = tilework.jit(k_fp8_roundtrip, interpret=True)
    k[(1,)](tilework.reinterpret(x, getattr(tl, name)), y,
            tilework.reinterpret(z, getattr(tl, name)), N=256)
    want = np_fp8(bits, name)
    np.testing.assert_array_equal(np.isnan(y.numpy()), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(y.numpy()[ok], want[ok])
    half = np_fp8_from_f32((want * np.float32(0.5))[ok], name)
    np.testing.assert_array_equal(z.numpy()[ok], half)
    # a torch dtype as the new type, as Triton's (uint8 bytes of the int8 storage)
    u = torch.zeros(256, dtype=torch.uint8)
    tilework.jit(k_copy, interpret=True)[(1,)](tilework.reinterpret(x, torch.uint8), u, N=256)
    np.testing.assert_array_equal(u.numpy(), bits)


def k_copy(x, y, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.static_assert(x.dtype.element_ty == y.dtype.element_ty)
    tl.store(y + r, tl.load(x + r))


def test_reinterpret_specialization_and_key():
    """The launch path takes a wrapper as a pointer of the given element type, aligned as its
    base, that type in the variant key (Triton's `*fp8e4nv` signature entry)."""
    from tilework.runtime import launcher
    kern = tilework.jit(k_fp8_roundtrip)
    base = FakeDeviceArray(0x10000, "|i1", 256)
    odd = FakeDeviceArray(0x10001, "|i1", 256)
    y = FakeDeviceArray(0x20000, "<f4", 256)
    for name in ("float8e4nv", "float8e5", "float8e4b15"):
        dt = getattr(tl, name)
        w = tilework.reinterpret(base, dt)
        vals = (w, y, tilework.reinterpret(base, dt), 256)
        sig, consts, attrs = launcher.specialization(kern, vals)
        assert sig == {"x": P(dt), "y": P(tl.float32), "z": P(dt)} and consts == {"N": 256}
        assert attrs["x"] == {"tile.divisibility": 16}
        key, params = launcher.key_and_params(kern, vals)
        assert key[0] == (dt, True) and params[0] == 0x10000
        assert key != launcher.key_and_params(kern, (base, y, base, 256))[0]  # not the int8's
        key_odd, _ = launcher.key_and_params(kern, (tilework.reinterpret(odd, dt), y, w, 256))
        assert key_odd[0] == (dt, False)
    # the warmup signature of a wrapper is the same as a '*fp8e4nv' placeholder's
    sig, _, _ = launcher.specialization(
        kern, (tilework.reinterpret(base, tl.float8e4nv), y, "*fp8e4nv:16", 256),
        placeholders=True)
    assert sig["x"] == sig["z"] == P(tl.float8e4nv)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", [n for n, _ in FP8])
def test_reinterpret_compiled(target, name):
    """The variant a reinterpreted int8 tensor selects, emulated on int8 bytes."""
    from tilework.runtime import launcher
    dt = getattr(tl, name)
    base = FakeDeviceArray(0x10000, "|i1", 256)
    y = FakeDeviceArray(0x20000, "<f4", 256)
    w = tilework.reinterpret(base, dt)
    sig, consts, attrs = launcher.specialization(tilework.jit(k_fp8_roundtrip), (w, y, w, 256))
    bits = np.arange(256, dtype=np.uint8)
    yv = np.zeros(256, np.float32)
    zv = np.zeros(256, np.uint8)
    Emulator.from_kernel(tilework.jit(k_fp8_roundtrip), sig, consts, target, 4,
                         attrs=attrs).run((1,), bits.view(np.int8).copy(), yv, zv)
    want = np_fp8(bits, name)
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(yv[ok], want[ok])
    np.testing.assert_array_equal(zv[ok], np_fp8_from_f32((want * np.float32(0.5))[ok], name))


def test_reinterpret_to_a_non_scalar_type_rejected():
    torch = pytest.importorskip("torch")
    from tilework.runtime import launcher
    msg = re.escape("is reinterpreted as *fp16: a tensor is reinterpreted as a scalar tl or "
                    "torch dtype")
    x = torch.zeros(16, dtype=torch.int8)
    with pytest.raises(TypeError, match=msg):
        tilework.jit(k_copy, interpret=True)[(1,)](tilework.reinterpret(x, P(tl.float16)),
                                                   torch.zeros(16, dtype=torch.int8), N=16)
    base = FakeDeviceArray(0x10000, "|i1", 16)
    for bad in (P(tl.float16), tl.void, "fp8e4nv"):
        with pytest.raises(TypeError, match="a tensor is reinterpreted as a scalar tl or torch"):
            launcher.key_and_params(tilework.jit(k_copy),
                                    (tilework.reinterpret(base, bad), base, 16))


# ---- interpreter errors: InterpreterError, the cause kept ---------------------------------------

@tilework.jit
def k_helper_or(v):
    return v | 1  # ERR helper


def k_errors(x, WHAT: tl.constexpr):
    v = tl.load(x + tl.arange(0, 16))
    if WHAT == "bitwise":
        v = v & v  # ERR bitwise
    elif WHAT == "helper":
        v = k_helper_or(v)
    elif WHAT == "assert":
        tl.device_assert(v > 100, "too small")  # ERR assert
    elif WHAT == "python":
        v = v + 1 // ((WHAT == "python") * 0)  # ERR python
    tl.store(x + tl.arange(0, 16), v)


def _line(marker):
    import inspect
    lines, first = inspect.getsourcelines(k_errors) if marker != "helper" else \
        inspect.getsourcelines(k_helper_or.fn)
    return first + next(i for i, t in enumerate(lines) if f"# ERR {marker}" in t)


@pytest.mark.parametrize("what, cls, msg", [
    ("bitwise", SemanticError, "invalid operands of type fp32 and fp32"),
    ("helper", SemanticError, "`|` is not defined for fp32 and fp32"),
    ("assert", AssertionError, "device_assert failed in program (0, 0, 0) (element (0,)): too "
                               "small"),
    ("python", ZeroDivisionError, "integer division or modulo by zero"),
])
def test_interpreter_errors_are_interpreter_errors_with_their_cause(what, cls, msg):
    with pytest.raises(InterpreterError) as e:
        tilework.jit(k_errors, interpret=True)[(1,)](np.zeros(16, np.float32), WHAT=what,
                                                     debug=True)
    err = e.value
    assert isinstance(err, TritonError) and isinstance(err, cls)  # (`except cls` still works)
    assert type(err.__cause__) is cls  # Triton's tests read the cause
    assert msg in str(err) and msg in str(err.__cause__)
    line = _line(what)
    assert f"{__file__}:{line}:" in str(err)  # the kernel's file:line(:col)
    assert any("while interpreting k_errors at program id (0, 0, 0)" in n
               for n in err.__notes__)


def test_interpreter_error_exports_and_static_errors():
    assert tilework.InterpreterError is InterpreterError
    assert tilework.runtime.InterpreterError is InterpreterError
    from tilework.runtime.errors import InterpreterError as rt_ie
    assert rt_ie is InterpreterError and issubclass(CompilationError, TritonError)
    assert str(InterpreterError("boom")) == "boom" and str(InterpreterError()) == ""
    # a form the compiler rejects on the source alone (static_check): an InterpreterError
    # that is also the CompilationError, located

    def k_static(x):
        while True:  # ERR
            pass
    with pytest.raises(InterpreterError) as e:
        tilework.jit(k_static, interpret=True)[(1,)](np.zeros(4, np.float32))
    assert isinstance(e.value, CompilationError) and type(e.value.__cause__) is \
        CompilationError and "while True" in str(e.value)
    # argument binding stays as Triton's (its interpreter binds before running)
    with pytest.raises(TypeError) as e2:
        tilework.jit(k_static, interpret=True)[(1,)]([1, 2])
    assert not isinstance(e2.value, InterpreterError)


# ---- assert: tl.device_assert ------------------------------------------------------------------

def k_asserts(x, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, 16))
    assert v < 100, "v below 100"
    assert N % 16 == 0, "N a multiple of 16"  # (compile-time: checked only under debug)
    assert tl.sum(v, axis=0) > -1000.0
    tl.store(x + tl.arange(0, 16), v + 1)


def test_assert_is_device_assert_interpreted():
    x = np.arange(16, dtype=np.float32) * 10  # v < 100 fails on 10 of them
    k = tilework.jit(k_asserts, interpret=True)
    k[(1,)](x, N=8)  # without debug: no-ops, the false compile-time one too (Triton's)
    np.testing.assert_array_equal(x, np.arange(16, dtype=np.float32) * 10 + 1)
    with pytest.raises(AssertionError, match=r"device_assert failed .*: v below 100"):
        k[(1,)](x, N=16, debug=True)
    with pytest.raises(AssertionError, match=r":\d+: device_assert failed in program "
                                             r"\(0, 0, 0\): N a multiple of 16"):
        k[(1,)](np.zeros(16, np.float32), N=8, debug=True)
    y = np.zeros(16, np.float32)
    k[(1,)](y, N=16, debug=True)  # every condition true
    np.testing.assert_array_equal(y, np.ones(16, np.float32))


def test_assert_is_device_assert_compiled():
    sig = {"x": P(tl.float32)}
    assert "tile.assert" not in tile_text(k_asserts, sig, {"N": 8})
    text = tile_text(k_asserts, sig, {"N": 8}, debug=True)
    assert text.count('"tile.assert"') == 3 and "N a multiple of 16" in text
    assert "v below 100" in text


def test_assert_message_must_be_a_string():
    def k_bad(x):
        v = tl.load(x + tl.arange(0, 16))
        assert v > 0, v  # ERR

    msg = "device_assert message must be a constexpr string"
    with pytest.raises(CompilationError, match=msg):
        tile_text(k_bad, {"x": P(tl.float32)}, {})
    with pytest.raises(InterpreterError, match=msg):
        tilework.jit(k_bad, interpret=True)[(1,)](np.ones(16, np.float32))


# ---- .to(tl.float8e4b15): Triton 3.6's compiled rule ------------------------------------------

def k_to_e4b15(h, f, oh, of, ofz, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(h + r).to(tl.float8e4b15)
    b = tl.load(f + r).to(tl.float8e4b15)
    c = tl.load(f + r).to(tl.float8e4b15, fp_downcast_rounding="rtne")  # (not used: Triton's)
    tl.store(oh + r, a.to(tl.uint8, bitcast=True))
    tl.store(of + r, b.to(tl.uint8, bitcast=True))
    tl.store(ofz + r, c.to(tl.uint8, bitcast=True))


def e4b15_inputs(n, seed=7):
    rng = np.random.default_rng(seed)
    h = np.arange(n, dtype=np.uint32).astype(np.uint16).view(np.float16)
    h = np.concatenate([h] * (n // len(h))) if len(h) < n else h
    f = (rng.standard_normal(n) * np.exp2(rng.uniform(-22, 3, n))).astype(np.float32)
    # ties and the fp32 -> fp16 toward-zero step that decides them
    one16 = np.float32(2.0 ** -4)
    f[:10] = [1 + one16, -(1 + 3 * one16), np.nextafter(np.float32(1 + one16), np.float32(2)),
              1.75, 1.8125, 1.99, np.inf, -np.nan, 2.0 ** -18, np.float32(2.0 ** -18) * 0.999]
    return h, f


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_to_e4b15_every_fp16_and_fp32(where):
    n = 65536 if where == "interpreter" else 4096
    h, f = e4b15_inputs(65536)
    if where != "interpreter":  # (the emulator: every 16th half, and 4096 of the floats)
        h, f = h[::16].copy(), f[:n].copy()
    oh, of, ofz = (np.zeros(n, np.uint8) for _ in range(3))
    if where == "interpreter":
        tilework.jit(k_to_e4b15, interpret=True)[(1,)](h, f, oh, of, ofz, N=n)
    else:
        emulate(k_to_e4b15, {"h": P(tl.float16), "f": P(tl.float32), "oh": P(tl.uint8),
                             "of": P(tl.uint8), "ofz": P(tl.uint8)}, {"N": n}, where,
                h, f, oh, of, ofz)
    # (exact widening)
    np.testing.assert_array_equal(oh, np_to_e4b15(h.astype(np.float32), half=True))
    np.testing.assert_array_equal(of, np_to_e4b15(f))
    np.testing.assert_array_equal(ofz, of)
    assert list(of[:10]) == [0x79, 0xFA, 0x79, 0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0x01, 0x00]


def test_e4b15_constants_take_the_same_rule():
    from tilework.frontend.semantic import e4b15_bits
    for v in [0.0, -0.0, 1.0625, -1.1875, 1.8, 5.0, -1e9, float("inf"), float("nan"),
              2.0 ** -18, 2.0 ** -18 * 0.999, 1.0 + 2.0 ** -4 - 2.0 ** -20, 0.3, -0.7]:
        assert e4b15_bits(v) == int(np_to_e4b15([v])[0]), v


# ---- tl.dot of fp8e4b15 operands: as fp16 (Triton's semantic) -------------------------------

def k_dot_e4b15(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(a + rm[:, None] * K + rk[None, :]).to(tl.float8e4b15, bitcast=True)
    y = tl.load(b + rk[:, None] * N + rn[None, :]).to(tl.float8e4b15, bitcast=True)
    tl.store(c + rm[:, None] * N + rn[None, :], tl.dot(x, y))


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_dot_of_e4b15_is_the_fp16_dot(where):
    """No matrix instruction takes fp8e4b15: the operands are converted to fp16 first, as
    Triton does (the interpreter used to multiply the bytes as integers)."""
    rng = np.random.default_rng(31)
    M = N = K = 32
    a = rng.integers(0, 256, (M, K), dtype=np.uint8)
    b = rng.integers(0, 256, (K, N), dtype=np.uint8)
    c = np.zeros((M, N), np.float32)
    if where == "interpreter":
        tilework.jit(k_dot_e4b15, interpret=True)[(1,)](a, b, c, M=M, N=N, K=K)
    else:
        emulate(k_dot_e4b15, {"a": P(tl.uint8), "b": P(tl.uint8), "c": P(tl.float32)},
                {"M": M, "N": N, "K": K}, where, a, b, c)
    want = np_from_e4b15(a).astype(np.float64) @ np_from_e4b15(b).astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
