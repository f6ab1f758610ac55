"""The native launch path (runtime/native/launch.c) on the CPU, against a fake driver: the
key it computes equals the Python path's, the parameter bytes it passes to cuLaunchKernel
equal the Python path's slots, and everything it does not handle falls back to Python."""
import ctypes
import inspect
import math
import os
import random
import struct
import subprocess
import sys
import types

import pytest

import tilework
import tilework.language as tl
from tilework.runtime import launcher, native_launch
from tilework.runtime.cuda import CudaError, LoadedKernel

from native_fakes import compile_fake, fake_native, open_fake

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = "pilLfbcsCSIdhB"


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    """The native module and the fake driver (libcuda stand-in), built once."""
    with fake_native(tmp_path_factory, "native", "fake_libcuda.c", "libfakecuda.so",
                     "TILEWORK_LIBCUDA", lambda: native_launch.cuda_driver(CudaError),
                     native_launch.driver_path, 0x5000) as ns:
        yield ns


def _record(lib, nparams):
    r = lib.fake_record()
    head = [r[i] for i in range(10)]
    return head, b"".join(struct.pack("<Q", r[16 + i]) for i in range(nparams))


def _loaded(kinds):
    """A LoadedKernel (the Python path's slots) of a kernel with these parameter kinds."""
    names = {"p": "*fp32", "i": "int32", "l": "int64", "L": "uint64", "f": "fp32", "b": "int1",
             "c": "int8", "s": "int16", "C": "uint8", "S": "uint16", "I": "uint32",
             "d": "fp64", "h": "fp16", "B": "bf16"}
    ck = types.SimpleNamespace(asm={}, name="k", metadata={
        "signature": {f"a{i}": names[k] for i, k in enumerate(kinds)}})
    return LoadedKernel(ck, None, None, 128, 0)


_INTS = [0, 1, -1, 127, 128, -129, 255, 256, 2**15, -2**15 - 1, 2**16 + 3, 2**31 - 1, 2**31,
         -2**31, 2**32 + 7, 2**63 - 1, -2**63, 2**64 - 1]
_FLOATS = [0.0, -0.0, 1.5, -2.25, 1e-8, 6e-8, 65504.0, 65520.0, 1e5, -1e5, 3.4e38, 3.5e38,
           -1e39, 1e300, 1.00048828125, 1.0009765625 + 2**-12, math.inf, -math.inf, math.nan,
           2**-149, 2**-133]


def _value(rng, kind):
    if kind in "fdhB":
        return rng.choice(_FLOATS + [rng.uniform(-1e4, 1e4)])
    if kind == "b":
        return rng.choice([True, False, 0, 1])
    if kind == "p":
        return rng.choice([0, 0x7F0000001000, 2**64 - 16])
    return rng.choice(_INTS + [rng.randrange(-2**63, 2**64)])


def test_packed_bytes_equal_the_python_slots(native):
    rng = random.Random(0)
    for _ in range(400):
        kinds = "".join(rng.choice(KINDS) for _ in range(rng.randrange(1, 12)))
        k = _loaded(kinds)
        nk = native.mod.Kernel(0x1000, 128, 0, kinds, "k", 0)
        assert nk.kinds == kinds
        for _ in range(5):
            values = [_value(rng, c) for c in kinds]
            k.fill(values)
            assert nk.pack(values) == k.slot_bytes(), (kinds, values)


def test_kernel_launch_passes_the_packed_bytes(native):
    kinds = "pihBfdb"
    values = [0x7F00_0000_1230, -7, 1.5, -3.25, 0.1, 2.5, True]
    nk = native.mod.Kernel(0xABC0, 256, 1024, kinds, "k", 0)
    native.lib.fake_set_nparams(len(kinds))
    nk.launch(3, 2, 1, 0x77, values)
    head, params = _record(native.lib, len(kinds))
    assert head[:9] == [0xABC0, 3, 2, 1, 256, 1, 1, 1024, 0x77]
    k = _loaded(kinds)
    k.fill(values)
    assert params == k.slot_bytes()


def test_kernel_rejects(native):
    with pytest.raises(ValueError, match="unknown parameter kind x"):
        native.mod.Kernel(1, 128, 0, "px", "k", 0)
    nk = native.mod.Kernel(1, 128, 0, "pi", "kern", 0)
    with pytest.raises(ValueError, match="kern takes 2 parameters, got 1"):
        nk.launch(1, 1, 1, 0, [5])
    native.lib.fake_fail_next(719)
    with pytest.raises(CudaError, match="launching kern failed: CUDA_ERROR_LAUNCH_FAILED"):
        nk.launch(1, 1, 1, 0, [5, 6])
    with pytest.raises(OSError, match="cannot load /nonexistent/libcuda.so"):
        native.mod.load_driver("/nonexistent/libcuda.so", CudaError)


# ---- the per-kernel signature ------------------------------------------------------------

class _FakeCudaTensor:
    """Takes the torch path (registered as a torch tensor type in the tests); device -1: a
    CPU tensor."""
    __module__ = "torch.fake"  # what the Python path's torch check looks for

    def __init__(self, p, dtype="torch.float32", device=0):
        self.p, self.dtype, self.device = p, dtype, device

    def data_ptr(self):
        return self.p

    def get_device(self):
        return self.device

    @property
    def is_cuda(self):
        return self.device >= 0


class _CAI:
    def __init__(self, p):
        self.__cuda_array_interface__ = {"typestr": "<f4", "data": (p, False), "shape": (4,),
                                         "version": 3}


@tilework.jit
def _k(x, n, m, f, flag, none, B: tl.constexpr):
    pass


@tilework.jit(do_not_specialize=("n",))
def _k2(x, n, m, B: tl.constexpr):
    pass


@pytest.fixture
def fake_torch_types():
    launcher._TORCH_TYPES.add(_FakeCudaTensor)
    yield
    launcher._TORCH_TYPES.discard(_FakeCudaTensor)


def test_native_key_equals_the_python_key(native, fake_torch_types):
    sig, sig2 = launcher.native_signature(_k), launcher.native_signature(_k2)
    ints = [1, 0, 16, -16, 17, -1, 2**31, 2**31 - 1, -2**31, -2**31 - 1, 2**40, 2**63 + 5, 3]
    rng = random.Random(1)
    fingerprinted = 0
    for _ in range(3000):
        ptr = rng.choice([0x1000, 0x1004, 0x2010])
        x = rng.choice([_CAI(ptr), _FakeCudaTensor(ptr, rng.choice(["f32", "f16"]))])
        args = (x, rng.choice(ints), rng.choice(ints), rng.random(), rng.random() < 0.5,
                None, rng.choice([16, tl.constexpr(32)]))
        key, params, _ = sig.key_and_params(args)
        assert (key, params) == launcher.key_and_params(_k, args), args
        fkey = sig.fingerprint_key(args)  # the key the fingerprint memo's path builds
        assert fkey is None or fkey == key, args
        fingerprinted += fkey is not None
        args2 = (x, rng.choice(ints), tl.constexpr(rng.choice(ints)), 64)
        key, params, _ = sig2.key_and_params(args2)
        assert (key, params) == launcher.key_and_params(_k2, args2), args2
        assert sig2.fingerprint_key(args2) is None  # a runtime argument wrapped in constexpr
    assert fingerprinted > 600


@tilework.jit
def _kb(x, n, num_stages: tl.constexpr = 2, flag=None, B: tl.constexpr = 8):
    pass


def test_c_binding_equals_the_binder(native):
    """The C binding (values, opts) equals the generated binder's for every call it takes,
    and leaves every other call (missing, repeated, unexpected arguments) to the binder."""
    sig = launcher.native_signature(_kb)

    def refusing(*a, **k):
        raise AssertionError("the binder was called")
    strict = native.mod.Signature(
        _kb, tuple(_kb._is_constexpr), tuple(_kb._nospec), tuple(_kb.arg_names),
        launcher._TORCH_TYPES, tl.constexpr, launcher.arg_entry, launcher._NOPARAM,
        launcher._Several, launcher._grid, refusing, launcher.run,
        tuple(p.default for p in _kb.signature.parameters.values()),
        inspect.Parameter.empty, tilework.language.function.LAUNCH_OPTIONS,
        ("extern_libs",))
    rng = random.Random(4)
    names = ["x", "n", "num_stages", "flag", "B", "num_warps", "debug", "extern_libs", "target",
             "maxnreg", "bogus"]
    taken = refused = 0
    for _ in range(3000):
        args = [object() for _ in range(rng.randrange(0, 7))]
        kwargs = {k: rng.choice([None, 3, "s"]) for k in rng.sample(names, rng.randrange(0, 5))}
        try:
            want = _kb._binder(*args, **kwargs)
        except TypeError as e:
            with pytest.raises(TypeError) as got:
                sig.bind(*args, **kwargs)
            assert str(got.value) == str(e)
            with pytest.raises(AssertionError):
                strict.bind(*args, **kwargs)
            refused += 1
            continue
        assert sig.bind(*args, **kwargs) == want
        assert strict.bind(*args, **kwargs) == want  # taken in C
        taken += 1
    assert taken > 300 and refused > 300


def test_native_key_reports_the_device(native, fake_torch_types):
    sig = launcher.native_signature(_k2)
    assert sig.key_and_params((_FakeCudaTensor(16, device=1), 3, 4, 64))[2] == 1
    assert sig.key_and_params((_CAI(16), 3, 4, 64))[2] is None
    with pytest.raises(ValueError, match="argument `x` of _k2 is a CPU tensor"):
        sig.key_and_params((_FakeCudaTensor(16, device=-1), 3, 4, 64))


@tilework.jit
def _add(x_ptr, y_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * s + tl.load(y_ptr + offs, mask=m),
             mask=m)


def _install(native, fn, args, kwargs, function=0x4000, device=0):
    """A loaded variant for these arguments in fn.cache (compiled for sm_90a, no GPU), with a
    native handle on the fake driver; fn's native launcher set."""
    ck = fn.warmup(*["*fp32:16" if type(a) is _FakeCudaTensor else a for a in args],
                   target="sm_90a", **kwargs)
    k = LoadedKernel(ck, None, None, 128, 0)
    k.native = native.mod.Kernel(function, 128, 0, k.kinds, ck.name, device)
    k.device = device
    values, opts = launcher.bind(fn, args, kwargs)
    fn.cache.clear()
    fn.cache[launcher.variant_key(fn, values, opts)] = k
    fn._native_launch = launcher.native_signature(fn)
    return k


def test_launch_goes_through_the_native_path(native, fake_torch_types):
    x, y, o = (_FakeCudaTensor(0x10000 * i) for i in (1, 2, 3))
    k = _install(native, _add, (x, y, o, 1000, 2.5), {"BLOCK": 256})
    native.lib.fake_set_nparams(len(k.kinds))
    before = _record(native.lib, 0)[0][9]
    assert _add[(4,)](x, y, o, 1000, 2.5, BLOCK=256) is k
    head, params = _record(native.lib, len(k.kinds))
    assert head == [0x4000, 4, 1, 1, 128, 1, 1, 0, 0x5000, before + 1]
    k.fill([0x10000, 0x20000, 0x30000, 1000, 2.5])
    assert params == k.slot_bytes()
    # a grid function, then an empty grid (nothing launched)
    _add[lambda meta: (meta["n"] // meta["BLOCK"], 2)](x, y, o, 1000, 2.5, BLOCK=256)
    assert _record(native.lib, 0)[0][1:4] == [3, 2, 1]
    _add[(0,)](x, y, o, 1000, 2.5, BLOCK=256)
    assert _record(native.lib, 0)[0][9] == before + 2


def _variant(native, fn, key_args, kwargs, function):
    """Another loaded variant in fn.cache (for these arguments), with its own function."""
    k = LoadedKernel(types.SimpleNamespace(asm={}, name=fn.__name__, metadata={
        "signature": {"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "int32", "s": "fp32"}}),
        None, None, 128, 0)
    k.native = native.mod.Kernel(function, 128, 0, k.kinds, fn.__name__, 0)
    k.device = 0
    values, opts = launcher.bind(fn, key_args, kwargs)
    fn.cache[launcher.variant_key(fn, values, opts)] = k
    return k


def test_the_fingerprint_memo_follows_fn_cache(native, fake_torch_types):
    """Launches alternating between more variants than the memo holds each find their own
    kernel; a variant replaced in or dropped from fn.cache is seen at once."""
    x16 = _FakeCudaTensor(0x1000, "torch.float16")
    x32, x32u = _FakeCudaTensor(0x1000), _FakeCudaTensor(0x1004)
    _install(native, _add, (x32, x32, x32, 1000, 2.5), {"BLOCK": 256})
    sig = _add._native_launch
    native.lib.fake_set_nparams(5)
    cases = []
    for i, (t, n, block) in enumerate([(a, n, b) for a in (x16, x32, x32u) for n in (1000, 1008)
                                       for b in (64, 128, 256)]):
        k = _variant(native, _add, (t, t, t, n, 2.5), {"BLOCK": block}, 0x9000 + 16 * i)
        cases.append(((t, t, t, n, 2.5), {"BLOCK": block}, k))
    assert len(_add.cache) == len(cases) > 8  # all distinct, more than the memo holds
    rng = random.Random(3)
    for _ in range(300):
        args, kw, k = rng.choice(cases)
        assert _add[(1,)](*args, **kw) is k
        assert _record(native.lib, 0)[0][0] == 0x9000 + 16 * cases.index((args, kw, k))
    args, kw, k = cases[0]
    values, opts = launcher.bind(_add, args, kw)
    vkey = launcher.variant_key(_add, values, opts)
    assert sig(values, opts, _add.cache, (1,)) is k
    k2 = _variant(native, _add, args, kw, 0xA000)  # replaces the entry
    assert sig(values, opts, _add.cache, (1,)) is k2 and _record(native.lib, 0)[0][0] == 0xA000
    del _add.cache[vkey]
    assert sig(values, opts, _add.cache, (1,)) is None  # unseen: the Python path compiles
    fresh = {launcher.variant_key(_add, values, opts): k}  # an equal key of another object
    assert sig(values, opts, fresh, (1,)) is k


def test_launch_object_falls_back_with_pythons_messages(native, fake_torch_types):
    x = _FakeCudaTensor(0x1000)
    k = _install(native, _add, (x, x, x, 64, 1.0), {"BLOCK": 64})
    launch = _add[(1,)]
    assert type(launch).__name__ == "Launch"
    with pytest.raises(TypeError, match=r"_add\[grid\]\(\.\.\.\): .*missing 1 required "
                                        r"positional argument: 's'"):
        launch(x, x, x, 64, BLOCK=64)
    with pytest.raises(TypeError, match="grid of _add must be a tuple of ints"):
        _add["x"](x, x, x, 64, 1.0, BLOCK=64)
    with pytest.raises(ValueError, match="grid of _add must have 1 to 3 non-negative sizes"):
        _add[lambda meta: (-1,)](x, x, x, 64, 1.0, BLOCK=64)
    assert _add[lambda meta: meta["n"] // 32](x, x, x, 64, 1.0, BLOCK=64) is k
    assert _record(native.lib, 0)[0][1:4] == [2, 1, 1]
    from tilework.runtime import profiler
    with profiler.profile(print_table=False) as prof:  # another launcher: not the Launch
        assert type(_add[(1,)]).__name__ == "function"
    assert type(_add[(1,)]).__name__ == "Launch" and prof is not None


def test_the_launch_floor_and_the_timing_build(native, fake_torch_types, tmp_path):
    """Kernel.bench launches n times with no Python between; the timing build's `timings()`
    sums every phase of native launches (None in the normal build)."""
    nk = native.mod.Kernel(0xC000, 128, 0, "pif", "k", 0)
    native.lib.fake_set_nparams(3)
    before = _record(native.lib, 0)[0][9]
    assert nk.bench(1, 1, 1, 0, [0x1000, 7, 1.5], 100) >= 0
    assert _record(native.lib, 0)[0][9] == before + 100
    assert nk.bench(1, 1, 1, 0, [0x1000, 7, 1.5], 5, True) >= 0  # one packed buffer
    from tilework.runtime import abi
    want = struct.pack(abi.struct_format("pif"), *abi.encode_values("pif", [0x1000, 7, 1.5]))
    r = native.lib.fake_record()
    assert r[9] == before + 105 and r[10] == len(want)
    assert b"".join(struct.pack("<Q", r[16 + i]) for i in range(2)) == want
    assert native.mod.timings() is None
    tmod = native_launch._load(native_launch.build(str(tmp_path), timed=True))
    assert "timing" in native_launch.library_name(True)
    tmod.load_driver(os.environ["TILEWORK_LIBCUDA"], CudaError)
    assert os.path.samefile(tmod.driver_path(), os.environ["TILEWORK_LIBCUDA"])
    tmod.set_stream_source(lambda: 0, lambda dev: 0x5000 + dev)
    try:
        x = _FakeCudaTensor(0x1000)
        k = _install(native, _add, (x, x, x, 64, 1.0), {"BLOCK": 64})
        k.native = tmod.Kernel(0x4000, 128, 0, k.kinds, "_add", 0)
        sig = tmod.Signature(_add, tuple(_add._is_constexpr), tuple(_add._nospec),
                             tuple(_add.arg_names), launcher._TORCH_TYPES, tl.constexpr,
                             launcher.arg_entry, launcher._NOPARAM, launcher._Several,
                             launcher._grid, _add._binder, launcher.run)
        tmod.reset_timings()
        for _ in range(50):
            assert sig[(2,)](x, x, x, 64, 1.0, BLOCK=64) is k
        t = tmod.timings()
        assert t["launches"] == 50 and t["clock_ns"] > 0
        for phase in ("total", "bind", "get_device", "data_ptr", "dtype", "key", "lookup",
                      "grid", "device", "stream", "pack", "driver"):
            assert t[phase] > 0, phase
        assert t["key"] >= t["get_device"] + t["data_ptr"] + t["dtype"]
        assert t["total"] >= t["bind"] + t["key"] + t["lookup"] + t["driver"]
        tmod.reset_timings()
        assert tmod.timings()["total"] == 0
    finally:
        tmod.set_stream_source(None, None)


def test_a_variant_in_the_current_context_needs_no_device_query(native, fake_torch_types,
                                                                monkeypatch):
    """A variant that knows its context launches natively when it is the thread's current one
    (torch's current device is not asked), and goes to the Python path when it is not."""
    x = _FakeCudaTensor(0x1000, device=1)
    k = _install(native, _add, (x, x, x, 64, 1.0), {"BLOCK": 64}, device=1)
    k.native = native.mod.Kernel(0x4000, 128, 0, k.kinds, "_add", 1, context=0xC1)
    asked = []
    native_launch.pin_stream_source(lambda: asked.append(1) or 0, lambda dev: 0x5000 + dev)
    native.lib.fake_set_nparams(len(k.kinds))
    native.lib.fake_set_context(ctypes.c_void_p(0xC1))
    try:
        before = _record(native.lib, 0)[0][9]
        assert _add[(3,)](x, x, x, 64, 1.0, BLOCK=64) is k
        head = _record(native.lib, 0)[0]
        assert head[9] == before + 1 and head[8] == 0x5001 and not asked  # device 1's stream
        rt = _FakeRuntime()
        monkeypatch.setattr(launcher, "_runtime", rt)
        monkeypatch.setitem(sys.modules, "torch", None)
        native.lib.fake_set_context(ctypes.c_void_p(0xC0))  # another context is current
        _add[(3,)](x, x, x, 64, 1.0, BLOCK=64)
        assert len(rt.launches) == 1 and _record(native.lib, 0)[0][9] == before + 1
    finally:
        native.lib.fake_set_context(None)
        native_launch.pin_stream_source(lambda: 0, lambda dev: 0x5000 + dev)


def test_native_launch_error_is_a_cuda_error(native, fake_torch_types):
    x = _FakeCudaTensor(0x1000)
    _install(native, _add, (x, x, x, 64, 1.0), {"BLOCK": 64})
    native.lib.fake_fail_next(719)
    with pytest.raises(CudaError, match="launching _add failed: CUDA_ERROR_LAUNCH_FAILED"):
        _add[(1,)](x, x, x, 64, 1.0, BLOCK=64)


class _FakeRuntime:
    def __init__(self):
        self.launches, self.loads = [], []

    def on_device(self, k, dev):
        self.loads.append(dev)
        return types.SimpleNamespace(on=dev, metadata={})

    def launch(self, k, grid, params):
        self.launches.append((k, grid, params))


def test_unhandled_launches_fall_back_to_python(native, fake_torch_types, monkeypatch):
    """A tensor on another device than the loaded variant's: the Python path loads the
    variant there and launches it; a new variant is compiled by the Python path."""
    rt = _FakeRuntime()
    monkeypatch.setattr(launcher, "_runtime", rt)
    monkeypatch.setitem(sys.modules, "torch", None)  # a GPU machine's torch switches no device
    x = _FakeCudaTensor(0x1000, device=1)
    _install(native, _add, (x, x, x, 64, 1.0), {"BLOCK": 64}, device=0)
    before = _record(native.lib, 0)[0][9]
    _add[(2,)](x, x, x, 64, 1.0, BLOCK=64)
    assert rt.loads == [1] and len(rt.launches) == 1
    k, grid, params = rt.launches[0]
    assert (k.on, grid, params) == (1, (2, 1, 1), [0x1000] * 3 + [64, 1.0])
    assert _record(native.lib, 0)[0][9] == before  # not launched natively


@tilework.jit
def _tup(t, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(t[1] + offs, tl.load(t[0] + offs, mask=m) * t[2], mask=m)


def test_tuple_arguments_are_launched_by_python(native, fake_torch_types, monkeypatch):
    """A tuple argument goes back to launcher.run (which sees its members' devices and
    flattens them); the native key and parameters equal the Python path's all the same."""
    rt = _FakeRuntime()
    monkeypatch.setattr(launcher, "_runtime", rt)
    monkeypatch.setitem(sys.modules, "torch", None)
    x, y = _FakeCudaTensor(0x1000), _FakeCudaTensor(0x2000)
    ck = _tup.warmup(("*fp32:16", "*fp32:16", 2.5), 64, BLOCK=64, target="sm_90a")
    k = LoadedKernel(ck, None, None, 128, 0)
    k.native = native.mod.Kernel(0x4000, 128, 0, k.kinds, ck.name, 0)
    k.device = 0
    values, opts = launcher.bind(_tup, ((x, y, 2.5), 64), {"BLOCK": 64})
    _tup.cache.clear()
    _tup.cache[launcher.variant_key(_tup, values, opts)] = k
    _tup._native_launch = sig = launcher.native_signature(_tup)
    key, params, _ = sig.key_and_params(values)
    assert (key, params) == launcher.key_and_params(_tup, values)
    assert params == [0x1000, 0x2000, 2.5, 64] and k.kinds == "ppfi"
    before = _record(native.lib, 0)[0][9]
    assert sig(values, opts, _tup.cache, (1,)) is None  # handed back
    assert _tup[(3,)]((x, y, 2.5), 64, BLOCK=64) is k
    assert rt.launches == [(k, (3, 1, 1), [0x1000, 0x2000, 2.5, 64])] and rt.loads == []
    # a member on another device: the variant loaded there, as for any argument
    x1, y1 = _FakeCudaTensor(0x1000, device=1), _FakeCudaTensor(0x2000, device=1)
    _tup[(1,)]((x1, y1, 2.5), 64, BLOCK=64)
    assert rt.loads == [1]
    assert _record(native.lib, 0)[0][9] == before  # nothing launched natively
    with pytest.raises(ValueError, match=r"_tup: arguments on different devices: `t\[0\]` is "
                                         r"on cuda:0 and `t\[1\]` on cuda:1"):
        _tup[(1,)]((x, y1, 2.5), 64, BLOCK=64)


def test_mixing_devices_is_an_error(native, fake_torch_types):
    a, b = _FakeCudaTensor(0x1000, device=0), _FakeCudaTensor(0x2000, device=1)
    _install(native, _add, (a, a, a, 64, 1.0), {"BLOCK": 64})
    with pytest.raises(ValueError, match=r"_add: arguments on different devices: `x_ptr` is on "
                                         r"cuda:0 and `out_ptr` on cuda:1"):
        _add[(1,)](a, a, b, 64, 1.0, BLOCK=64)


def test_mixing_devices_is_an_error_without_native(fake_torch_types, monkeypatch):
    monkeypatch.setattr(_k2, "_native_launch", False)
    a, b = _FakeCudaTensor(0x1000, device=0), _FakeCudaTensor(0x2000, device=2)
    with pytest.raises(ValueError, match=r"`x` is on cuda:2 and `m` on cuda:0"):
        launcher.launch_device(_k2, (b, 1, a, 4))


def test_no_compiler_means_the_python_path(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.delenv("TILEWORK_NATIVE_LIB", raising=False)
    saved = native_launch.reset()
    try:
        with pytest.raises(OSError):
            native_launch.build(str(tmp_path / "b"))
        assert native_launch.module() is None
        assert "no-such-cc" in native_launch.why_not()
        assert launcher.native_signature(_k) is None
        native_launch.reset()
        monkeypatch.setenv("TILEWORK_NATIVE_LAUNCH", "0")
        assert native_launch.module() is None
        assert native_launch.why_not() == "TILEWORK_NATIVE_LAUNCH=0"
    finally:
        native_launch.restore(saved)


def test_the_first_launch_builds_in_the_background(monkeypatch, tmp_path):
    """With nothing built, `start_build` runs the C compiler in a thread (the first kernel
    compiles meanwhile, launched by Python) and `module()` waits for it; once built or loaded
    there is nothing to start.  A failed build leaves the Python path and says why."""
    monkeypatch.delenv("TILEWORK_NATIVE_LIB", raising=False)
    monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path / "cache"))
    saved = native_launch.reset()
    try:
        assert native_launch.start_build()  # (the C compiler takes far longer than this)
        assert native_launch.start_build()  # still the same build
        mod = native_launch.module()
        assert mod is not None and not native_launch.start_build()
        built = os.listdir(tmp_path / "cache" / "native")
        assert built == [native_launch.library_name()]
        native_launch.reset()
        assert not native_launch.start_build()  # built: `module()` just loads it
        native_launch.reset()
        monkeypatch.setenv("TILEWORK_CACHE_DIR", str(tmp_path / "other"))
        monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
        native_launch.start_build()
        assert native_launch.module() is None and "no-such-cc" in native_launch.why_not()
        assert not native_launch.start_build()
        native_launch.reset()
        monkeypatch.setenv("TILEWORK_NATIVE_LAUNCH", "0")
        assert not native_launch.start_build()
    finally:
        native_launch.restore(saved)


def test_the_build_is_cached_by_source_and_abi(native, tmp_path):
    p1 = native_launch.build(str(tmp_path))
    mtime = os.stat(p1).st_mtime_ns
    assert native_launch.build(str(tmp_path)) == p1 and os.stat(p1).st_mtime_ns == mtime
    import sysconfig
    assert p1.endswith(sysconfig.get_config_var("EXT_SUFFIX"))
    assert not [f for f in os.listdir(tmp_path) if f != os.path.basename(p1)]


def test_warm_cache_key_is_the_drivers(monkeypatch):
    """A kernel the driver cached is found by `warm_cache` (same key, same files) in a
    process that never imported the compiler."""
    from tilework.compiler.driver import ASTSource, compile, compiler_hash
    from tilework.compiler.options import CompileOptions
    from tilework.runtime import warm_cache
    assert warm_cache.compiler_hash() == compiler_hash()
    sig = {"x_ptr": tl.pointer_type(tl.float32), "y_ptr": tl.pointer_type(tl.float32),
           "out_ptr": tl.pointer_type(tl.float32), "n": tl.int32, "s": tl.float32}
    attrs = {"x_ptr": {"tile.divisibility": 16}, "n": {"tile.divisibility": 16}}
    opts = CompileOptions(num_warps=2)
    ck = compile(ASTSource(_add, sig, {"BLOCK": 128}, attrs), "sm_90a", opts)
    hit = warm_cache.lookup(_add, sig, {"BLOCK": 128}, attrs, opts, "sm_90a")
    assert hit is not None and hit.key == ck.key and hit.name == ck.name
    assert hit.asm == ck.asm and hit.metadata["signature"] == ck.metadata["signature"]
    assert hit.binary == ck.binary
    assert warm_cache.lookup(_add, sig, {"BLOCK": 64}, attrs, opts, "sm_90a") is None
    monkeypatch.setenv("TILEWORK_WARM_CACHE", "0")
    assert warm_cache.lookup(_add, sig, {"BLOCK": 128}, attrs, opts, "sm_90a") is None


def test_warm_start_imports_no_compiler(tmp_path):
    """A fresh process finding its variant in the disk cache imports no MLIR, llvmlite or
    compiler driver (blocked in the second process; the driver call itself is faked)."""
    script = tmp_path / "warm.py"
    script.write_text(f"""
import sys, types
if sys.argv[1] == "warm":
    for m in ("mlir", "llvmlite", "tilework.compiler.driver"):
        sys.modules[m] = None  # importing them fails
sys.path.insert(0, {HERE!r})
import tilework
from tilework.runtime import launcher
from test_native_launch import _add

class RT:
    def target(self): return "sm_90a"
    def load(self, ck): return types.SimpleNamespace(compiled=ck, metadata=ck.metadata)
    def launch(self, k, g, p): pass

class D:
    def __str__(self): return "torch.float32"

class T:
    __module__ = "torch.fake"
    is_cuda = True
    dtype = D()
    def __init__(self, p): self.p = p
    def data_ptr(self): return self.p
    def get_device(self): return 0

launcher._runtime = RT()
launcher._TORCH_TYPES.add(T)
_add._native_launch = False
x = T(0x1000)
k = launcher.run(_add, (1,), (x, x, x, 64, 1.0), {{"BLOCK": 64}})
print("OK", type(k.compiled).__name__)
""")
    for mode, kind in (("cold", "CompiledKernel"), ("warm", "CachedKernel")):
        out = subprocess.run([sys.executable, str(script), mode], capture_output=True,
                             text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["OK", kind]


def test_native_launch_leaks_no_references(native, fake_torch_types):
    x = _FakeCudaTensor(0x1000)
    k = _install(native, _add, (x, x, x, 5000, 1.0), {"BLOCK": 64})
    sig = _add._native_launch
    values, opts = launcher.bind(_add, (x, x, x, 5000, 1.0), {"BLOCK": 64})
    other, _ = launcher.bind(_add, (x, x, x, 5008, 1.0), {"BLOCK": 64})  # not in the cache
    grid = (2,)
    assert sig(values, opts, _add.cache, grid) is k  # the fingerprint memo holds `opts` now
    assert _add[grid](x, x, x, 5000, 1.0, BLOCK=64) is k  # the Signature holds sig[grid] now
    objs = (x, k, k.native, opts, values, other, grid, _add.cache)
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(1000):
        assert sig(values, opts, _add.cache, grid) is k
        assert sig(other, opts, _add.cache, grid) is None
        assert sig(values, opts, _add.cache, lambda m: (1,)) is k
        assert _add[grid](x, x, x, 5000, 1.0, BLOCK=64) is k
        assert _add[lambda m: (1,)](x, x, x, 5000, 1.0, BLOCK=64) is k
        assert sig.bind(x, x, x, 5000, 1.0, BLOCK=64) == (values, opts)
    native.lib.fake_fail_next(719)
    with pytest.raises(CudaError):
        sig(values, opts, _add.cache, grid)
    assert [sys.getrefcount(o) for o in objs] == before


def test_a_kernel_and_its_signature_are_collected(native):
    """fn holds its Signature, which holds fn and its last Launch: a cycle the garbage
    collector frees."""
    import gc
    import weakref

    @tilework.jit
    def tmp(x, B: tl.constexpr):
        pass
    sig = tmp._native_launch = launcher.native_signature(tmp)
    grid = (1,)
    launch = sig[grid]
    assert sig[grid] is launch and sig[(int("1"),)] is not launch  # kept for this object
    refs = [weakref.ref(tmp)]
    del tmp, sig, launch
    gc.collect()
    assert refs[0]() is None


# ---- HIP --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fake_hip(native, tmp_path_factory):
    path = compile_fake(tmp_path_factory.mktemp("hip"), "fake_libamdhip64.c", "libfakehip.so")
    from tilework.runtime.hip import HipError
    native.mod.load_hip(path, HipError)
    return open_fake(path, args=True)


def test_hip_buffer_equals_the_python_paths(native, fake_hip):
    """The packed argument buffer (natural alignment, padded to 4 bytes) is the one
    HipRuntime.launch packs."""
    from tilework.runtime import abi
    rng = random.Random(2)
    for _ in range(300):
        kinds = "".join(rng.choice(KINDS) for _ in range(rng.randrange(1, 12)))
        nk = native.mod.Kernel(0xB000, 256, 64, kinds, "hk", 0, hip=True)
        values = [_value(rng, c) for c in kinds]
        want = abi.kernarg_buffer(kinds, values)
        assert len(want) % 4 == 0 and len(want) - 3 <= struct.calcsize(abi.struct_format(kinds))
        assert nk.pack(values) == want, (kinds, values)
        nk.launch(2, 3, 4, 0x99, values)
        r = fake_hip.fake_record()
        assert [r[i] for i in range(9)] + [r[10]] == [0xB000, 2, 3, 4, 256, 1, 1, 64, 0x99,
                                                       len(want)]
        assert bytes(fake_hip.fake_args()[:len(want)]) == want


def test_hip_launch_error_is_a_hip_error(native, fake_hip):
    from tilework.runtime.hip import HipError
    nk = native.mod.Kernel(0xB000, 256, 0, "p", "hk", 0, hip=True)
    fake_hip.fake_fail_next(719)
    with pytest.raises(HipError, match="launching hk failed: hipErrorLaunchFailure"):
        nk.launch(1, 1, 1, 0, [0x1000])
    with pytest.raises(OSError, match="cannot load /nonexistent/libamdhip64.so"):
        native.mod.load_hip("/nonexistent/libamdhip64.so", HipError)
