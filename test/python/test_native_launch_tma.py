"""TMA kernels on the native launch path, on the CPU against the fake driver: host
descriptors' tensor-map parameters (kind T, 128 bytes by address) pack as the Python path's
slots, reach cuLaunchKernel byte for byte, follow the descriptor when it changes, and the
misuses of kind T are refused; in-kernel descriptors' global scratch comes from the allocator
per launch (programs, alignment, stream) as the last parameter; `CudaRuntime.load` gives such
kernels a native handle unless TILEWORK_NATIVE_TMA=0."""
import ctypes
import hashlib
import struct
import types

import numpy as np
import pytest

import tilework
from tilework.runtime import allocation, launcher, native_launch, tma
from tilework.runtime.cuda import CudaError, LoadedKernel
from tilework.tools.tensor_descriptor import TensorDescriptor

from native_fakes import fake_native
from device_tma_kernels import dev_matmul
from tma_kernels import desc_matmul


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    with fake_native(tmp_path_factory, "native_tma", "fake_libcuda.c", "libfakecuda_tma.so",
                     "TILEWORK_LIBCUDA", lambda: native_launch.cuda_driver(CudaError),
                     native_launch.driver_path, 0x5000) as ns:
        ns.lib.fake_map.restype = ctypes.POINTER(ctypes.c_ubyte * 128)
        yield ns


@pytest.fixture
def fake_encode(monkeypatch):
    """tma.encode without libcuda: 128 bytes from the map's parameters; `calls` counts."""
    calls = []

    def encode(p, fn=None):
        calls.append(p)
        return hashlib.sha512(repr(sorted(p.items())).encode()).digest() * 2
    monkeypatch.setattr(tma, "encode", encode)
    monkeypatch.setattr(tma, "_CACHE", {})
    return calls


class FakeGpuArray:
    def __init__(self, p, shape, dtype=np.float16):
        self.dtype = np.dtype(dtype)
        self.shape = shape
        self.__cuda_array_interface__ = {"typestr": self.dtype.str, "data": (p, False),
                                         "shape": shape, "version": 3}


def _desc(a, block):
    return TensorDescriptor(a, list(a.shape), [a.shape[1], 1], block)


def _loaded(kinds, nmaps):
    names = {"p": "*fp16", "i": "int32", "l": "int64"}
    ck = types.SimpleNamespace(asm={}, name="k", metadata={
        "signature": {f"a{i}": names[k] for i, k in enumerate(kinds)},
        "tma": [{"arg": f"a{i}", "box": [8, 8], "swizzle": 0} for i in range(nmaps)]})
    return LoadedKernel(ck, None, None, 128, 0)


def _no_maps(fn, values):
    raise AssertionError("not called")


def test_tensor_map_slots_pack_as_the_python_slots(native):
    k = _loaded("pil", 2)
    assert k.kinds == "pilTT"
    nk = native.mod.Kernel(0x1000, 128, 0, k.kinds, "k", 0, maps=_no_maps)
    values = [0x7F00_0000_1000, -5, 2**40, bytes(range(128)), bytes(range(128, 256))]
    k.fill(values)
    assert nk.pack(values) == k.slot_bytes()
    assert len(nk.pack(values)) == 3 * 8 + 2 * 128


def test_kind_t_is_refused_where_it_cannot_go(native):
    with pytest.raises(ValueError, match=r"tensor map parameters \(kind T\) are CUDA's"):
        native.mod.Kernel(1, 128, 0, "pT", "k", 0, hip=True, maps=_no_maps)
    with pytest.raises(ValueError, match=r"tensor map parameters \(kind T\) need maps"):
        native.mod.Kernel(1, 128, 0, "pT", "k", 0)
    with pytest.raises(ValueError, match=r"tensor map parameters \(kind T\) come last"):
        native.mod.Kernel(1, 128, 0, "pTi", "k", 0, maps=_no_maps)
    for kinds, scratch in (("pTi", _no_maps), ("pTp", 5), ("", _no_maps)):
        with pytest.raises(ValueError, match=r"global scratch is a callable scratch\(programs, "
                                             r"stream\) and the last parameter, a pointer"):
            native.mod.Kernel(1, 128, 0, kinds, "k", 0, maps=_no_maps, scratch=scratch)
    assert native.mod.Kernel(1, 128, 0, "pTp", "k", 0, maps=_no_maps, scratch=_no_maps)
    nk = native.mod.Kernel(1, 128, 0, "pT", "k", 0, maps=_no_maps)
    with pytest.raises(TypeError, match="a tensor map parameter is 128 bytes"):
        nk.pack([0x1000, bytes(127)])
    with pytest.raises(ValueError, match="bench: tensor maps go as slot pointers only"):
        nk.bench(1, 1, 1, 0, [0x1000, bytes(128)], 1, True)


def _install(native, fn, args, kwargs, placeholders=None):
    """The variant of these arguments compiled for sm_90a (no GPU) in fn.cache, with a native
    handle taking its tensor maps from `tma.launch_maps`, its scratch from
    `allocation.launch_scratch`."""
    ck = fn.warmup(*(placeholders or args), target="sm_90a", **kwargs)
    k = LoadedKernel(ck, None, None, 128, 0)
    md = ck.metadata
    k.native = native.mod.Kernel(
        0x4000, 128, 0, k.kinds, ck.name, 0,
        maps=tma.launch_maps(md["tma"]) if "tma" in md else None,
        scratch=allocation.launch_scratch(md) if allocation.scratch_size(md) else None)
    k.device = 0
    values, opts = launcher.bind(fn, args, kwargs)
    fn.cache.clear()
    fn.cache[launcher.variant_key(fn, values, opts)] = k
    fn._native_launch = launcher.native_signature(fn)
    return k


def _launched(native, nparams, nmaps):
    r = native.lib.fake_record()
    params = b"".join(struct.pack("<Q", r[16 + i]) for i in range(nparams - nmaps))
    maps = [bytes(native.lib.fake_map(i).contents) for i in range(nmaps)]
    return r[9], params, maps


def test_host_descriptor_kernel_launches_natively(native, fake_encode):
    a, b = FakeGpuArray(0x100000, (256, 128)), FakeGpuArray(0x200000, (128, 256))
    ad, bd = _desc(a, [64, 64]), _desc(b, [64, 64])
    args, kw = (ad, bd, FakeGpuArray(0x300000, (256, 256), np.float32), 256, 256, 128), \
        dict(BM=64, BN=64, BK=64, num_warps=4, num_stages=2)
    k = _install(native, desc_matmul, args, kw)
    assert k.kinds.endswith("TT") and "tma" in k.metadata
    n = len(k.kinds)
    native.lib.fake_set_nparams(n)
    native.lib.fake_set_map_params(n - 2)
    try:
        for trial in range(3):
            count = _launched(native, n, 2)[0]
            assert desc_matmul[(4, 4)](*args, **kw) is k
            got_count, params, maps = _launched(native, n, 2)
            assert got_count == count + 1  # launched here, not by the Python path
            values, _ = launcher.bind(desc_matmul, args, kw)
            _, py_params = launcher.key_and_params(desc_matmul, values)
            py_maps = tma.tensor_maps(desc_matmul, values, k.metadata["tma"])
            k.fill(py_params + py_maps)
            assert params == k.slot_bytes()[:8 * (n - 2)]
            assert maps == py_maps
            assert maps[0] == tma.encode(tma.tensor_map_params(ad, k.metadata["tma"][0]))
            fake_encode.pop()  # (that call's)
            if trial == 0:  # the maps were encoded once, then come from the memo
                assert len(fake_encode) == 2
                ad.shape = [192, 128]  # the descriptor changes: new parameters and map
            elif trial == 1:
                assert len(fake_encode) == 3 and fake_encode[-1]["dims"] == [128, 192]
                assert struct.unpack("<i", params[8:12])[0] == 192
                ad.base = FakeGpuArray(0x180000, (192, 128))
            else:
                assert fake_encode[-1]["address"] == 0x180000
                assert struct.unpack("<Q", params[:8])[0] == 0x180000
    finally:
        native.lib.fake_set_map_params(1 << 30)
        desc_matmul.cache.clear()
        desc_matmul._native_launch = None


def test_native_launch_hands_maps_its_entries_and_follows_changes(native, fake_encode):
    """The native launcher hands `launch_maps` this launch's argument entries (a descriptor's
    carries its state's maps, so the state is looked up once a launch): shape and strides
    changed in place and a moved base reach the launched map and parameters."""
    a, b = FakeGpuArray(0x100000, (256, 128)), FakeGpuArray(0x200000, (128, 256))
    ad, bd = _desc(a, [64, 64]), _desc(b, [64, 64])
    args, kw = (ad, bd, FakeGpuArray(0x300000, (256, 256), np.float32), 256, 256, 128), \
        dict(BM=64, BN=64, BK=64, num_warps=4, num_stages=2)
    k = _install(native, desc_matmul, args, kw)
    inner, seen = tma.launch_maps(k.metadata["tma"]), []

    def spy(fn, values, entries=None):
        seen.append(entries)
        return inner(fn, values, entries)
    k.native = native.mod.Kernel(0x4000, 128, 0, k.kinds, k.name, 0, maps=spy)
    n = len(k.kinds)
    native.lib.fake_set_nparams(n)
    native.lib.fake_set_map_params(n - 2)
    plan = k.metadata["tma"][0]
    try:
        changes = [lambda: ad.shape.__setitem__(0, 192), lambda: ad.strides.__setitem__(0, 256),
                   lambda: a.__cuda_array_interface__.__setitem__("data", (0x140000, False)),
                   lambda: None]
        for change in changes:
            count = _launched(native, n, 2)[0]
            assert desc_matmul[(4, 4)](*args, **kw) is k
            got_count, params, maps = _launched(native, n, 2)
            assert got_count == count + 1
            entries = seen[-1]
            assert len(entries) == len(desc_matmul.arg_names) and entries[2] is None
            assert entries[0].maps is tma.descriptor_memo(ad).maps
            assert maps[0] == tma.encode(tma.tensor_map_params(ad, plan))
            assert struct.unpack("<Qi4xi4xi", params[:28]) == \
                (tma.address(a), *ad.shape, ad.strides[0])  # (8-byte slots)
            change()
        assert fake_encode[-1]["dims"] == [128, 192] and fake_encode[-1]["strides"] == [512]
        assert fake_encode[-1]["address"] == 0x140000
    finally:
        native.lib.fake_set_map_params(1 << 30)
        desc_matmul.cache.clear()
        desc_matmul._native_launch = None


class _F16:
    is_floating_point, itemsize = True, 2

    def __str__(self):
        return "torch.float16"


F16 = _F16()  # (one object: the variant key holds the dtype)


class TorchLike:
    """A CUDA tensor of the torch path with what a descriptor's base needs."""
    __module__ = "torch.fake"
    is_cuda = True

    def __init__(self, p, shape, dtype=None):
        self.p, self.shape, self.dtype = p, shape, dtype or F16

    reads = 0  # data_ptr calls, all instances

    def data_ptr(self):
        TorchLike.reads += 1
        return self.p

    def get_device(self):
        return 0

    def element_size(self):
        return self.dtype.itemsize


def test_native_launch_finds_known_descriptor_states_in_c(native, fake_encode, monkeypatch):
    """A descriptor over a torch tensor whose state `tma.descriptor_memo` knows takes its key
    entry from the memo in C (no Python call); a changed state (in place, a new base) takes
    the Python rule once, then C again; what C does not read (a tuple field, an array
    interface base) always takes the Python rule.  Launched parameters and maps follow."""
    launcher._TORCH_TYPES.add(TorchLike)
    py_calls = []
    real = launcher.arg_entry

    def spy(fn, name, nospec, a):
        if type(a) is TensorDescriptor:
            py_calls.append(name)
        return real(fn, name, nospec, a)
    monkeypatch.setattr(launcher, "arg_entry", spy)
    a = TorchLike(0x100000, (256, 128))
    ad, bd = _desc(a, [64, 64]), _desc(TorchLike(0x200000, (128, 256)), [64, 64])
    args, kw = (ad, bd, FakeGpuArray(0x300000, (256, 256), np.float32), 256, 256, 128), \
        dict(BM=64, BN=64, BK=64, num_warps=4, num_stages=2)
    k = _install(native, desc_matmul, args, kw)
    n = len(k.kinds)
    native.lib.fake_set_nparams(n)
    native.lib.fake_set_map_params(n - 2)
    plan = k.metadata["tma"][0]
    sig = desc_matmul._native_launch

    def launch(python_calls):
        del py_calls[:]
        assert desc_matmul[(4, 4)](*args, **kw) is k
        _, params, maps = _launched(native, n, 2)
        assert py_calls == python_calls
        assert maps[0] == tma.encode(tma.tensor_map_params(ad, plan))
        assert struct.unpack("<Qi4xi4xi", params[:28]) == \
            (tma.address(ad.base), *ad.shape, ad.strides[0])
        values, _ = launcher.bind(desc_matmul, args, kw)
        assert sig.key_and_params(values)[:2] == launcher.key_and_params(desc_matmul, values)
    try:
        launch([])
        TorchLike.reads = 0
        assert desc_matmul[(4, 4)](*args, **kw) is k
        assert TorchLike.reads == 2  # each descriptor's base read once
        ad.shape[0] = 192  # in place: a new state, computed by Python once
        launch(["a_desc"])
        launch([])
        ad.base = TorchLike(0x180000, (192, 128))
        launch(["a_desc"])
        launch([])
        ad.shape = (192, 128)  # not a list: the Python rule
        launch(["a_desc"])
        launch(["a_desc"])
        ad.shape = [192, 128]
        values, _ = launcher.bind(desc_matmul, args, kw)
        f32 = type("F32", (), {"is_floating_point": True, "itemsize": 4})()
        for change in (lambda: setattr(ad, "block_shape", [32, 64]),
                       lambda: setattr(ad, "base", TorchLike(0x180000, (192, 128), f32))):
            change()  # (other variants' keys: looked at, not launched)
            for calls in (["a_desc"], []):
                del py_calls[:]
                got = sig.key_and_params(values)[:2]
                assert py_calls == calls
                assert got == launcher.key_and_params(desc_matmul, values)
        assert got[0][0][1:3] == (f32, (32, 64))
        ad.base = FakeGpuArray(0x1C0000, (192, 128))  # not a torch tensor: the Python rule
        for _ in range(2):  # (another variant's key: looked at, not launched)
            del py_calls[:]
            key, params, _ = sig.key_and_params(values)
            assert py_calls == ["a_desc"] and params[0] == 0x1C0000
    finally:
        launcher._TORCH_TYPES.discard(TorchLike)
        native.lib.fake_set_map_params(1 << 30)
        desc_matmul.cache.clear()
        desc_matmul._native_launch = None


def test_launch_maps_trusts_only_descriptor_entries(fake_encode):
    """`launch_maps`' maps from the entries `arg_entry` gives (a new block or dtype: a new
    state, new maps), and from a fresh look-up where an entry carries none (None, a plain
    list, a tuple member's)."""
    a = FakeGpuArray(0x100000, (256, 128))
    ad, bd = _desc(a, [64, 64]), _desc(FakeGpuArray(0x200000, (128, 256)), [64, 64])
    plans = [{"arg": "a_desc", "box": [64, 64], "swizzle": 128},
             {"arg": "b_desc", "box": [64, 64], "swizzle": 128}]
    fn = types.SimpleNamespace(arg_names=["a_desc", "b_desc", "M"], __name__="k")
    maps = tma.launch_maps(plans)
    values = (ad, bd, 7)

    def entries():
        return tuple(launcher.arg_entry(desc_matmul, "a_desc", False, v)[1]
                     if type(v) is TensorDescriptor else None for v in values)

    def fresh():
        return [tma.encode(tma.tensor_map_params(d, p)) for d, p in zip(values, plans)]
    first = entries()
    assert maps(fn, values, first) == fresh() == maps(fn, values)
    ad.block_shape = [32, 64]
    again = entries()
    assert again[0].maps is not first[0].maps and again[1].maps is first[1].maps
    ad.base = FakeGpuArray(0x100000, (256, 128), np.float32)  # same address, fp32
    ad.strides = [128, 1]
    now = entries()
    assert now[0].maps is not again[0].maps
    assert maps(fn, values, now) == fresh() and fake_encode[-2]["data_type"] == "FLOAT32"
    for foreign in ((None, None, None), ([0x100000], [1], None)):
        assert maps(fn, values, foreign) == fresh()


def test_runtime_target_is_known_per_current_context(native):
    """CudaRuntime.target answers from the native module's current context once it knows
    that context (no cuda-python call); an unknown context asks the driver."""
    from tilework.runtime import cuda
    asked, dev = [], [0]
    attrs = types.SimpleNamespace(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR=75,
                                  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR=76)
    rt = object.__new__(cuda.CudaRuntime)
    rt.cu = types.SimpleNamespace(
        cuCtxGetCurrent=lambda: asked.append("ctx") or (0, 0xC0),
        cuCtxGetDevice=lambda: asked.append("dev") or (0, dev[0]),
        cuDeviceGetAttribute=lambda a, d: asked.append("cc") or (0, (9, 8)[d] if a == 75 else 0),
        CUdevice_attribute=attrs)
    rt._targets, rt._ctx_targets = {}, {}
    try:
        native.lib.fake_set_context(None)
        assert native_launch.current_context() is None
        assert rt.target() == "sm_90a" and "cc" in asked  # (no native context: the driver)
        native.lib.fake_set_context(ctypes.c_void_p(0xA000))
        assert native_launch.current_context() == 0xA000
        asked.clear()
        assert rt.target() == "sm_90a" and asked == ["ctx", "dev"]  # the context remembered
        asked.clear()
        assert rt.target() == "sm_90a" and asked == []
        native.lib.fake_set_context(ctypes.c_void_p(0xB000))  # another context, on device 1
        dev[0] = 1
        assert rt.target() == "sm_80" and asked[-1] == "cc"
        asked.clear()
        assert rt.target() == "sm_80" and asked == []
    finally:
        native.lib.fake_set_context(None)


def test_runtime_load_gives_tma_kernels_a_native_handle(native, monkeypatch):
    """CudaRuntime.load: a kernel with tensor maps gets a native handle (maps from
    tma.launch_maps) unless TILEWORK_NATIVE_TMA=0."""
    from tilework.runtime import cuda
    a = FakeGpuArray(0x100000, (256, 128))
    ad = _desc(a, [64, 64])
    ck = desc_matmul.warmup(ad, ad, "*fp32:16", 256, 256, 128, BM=64, BN=64, BK=64,
                            num_warps=4, num_stages=2, target="sm_90a")
    fake_cu = types.SimpleNamespace(
        cuModuleLoadData=lambda b: (0, "m"), cuModuleGetFunction=lambda m, n: (0, 0x4000),
        cuCtxGetDevice=lambda: (0, 0), cuCtxGetCurrent=lambda: (0, 0xC0),
        cuFuncSetAttribute=lambda *a: (0,), CUfunction_attribute=types.SimpleNamespace(
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES=8))
    rt = object.__new__(cuda.CudaRuntime)
    rt.cu = fake_cu
    rt.ensure_context = lambda: None
    k = rt.load(ck)
    assert k.native is not None and k.native.kinds == k.kinds and k.kinds.endswith("TT")
    dev = dev_matmul.warmup("*fp16:16", "*fp16:16", "*fp16:16", 256, 256, 128, 128, 256, 256,
                            BM=64, BN=64, BK=64, GROUP_M=8, num_warps=4, num_stages=2,
                            target="sm_90a")
    assert allocation.scratch_size(dev.metadata) and rt.load(dev).native is not None
    monkeypatch.setenv("TILEWORK_NATIVE_TMA", "0")
    assert rt.load(ck).native is None and rt.load(dev).native is None


class FakeTensor:
    """Takes the torch path (registered as a torch tensor type below)."""
    __module__ = "torch.fake"
    is_cuda = True

    def __init__(self, p, dtype="torch.float16"):
        self.p, self.dtype = p, dtype

    def data_ptr(self):
        return self.p

    def get_device(self):
        return 0


@pytest.fixture
def allocator(monkeypatch):
    """An allocator recording (size, alignment, stream) and the buffers it gave."""
    calls, bufs = [], []

    def alloc(size, alignment, stream):
        calls.append((size, alignment, stream))
        bufs.append(FakeTensor(0xA00000 + 0x1000 * len(bufs)))
        return bufs[-1]
    prev = allocation.get_allocator()
    tilework.set_allocator(alloc)
    launcher._TORCH_TYPES.add(FakeTensor)
    yield calls, bufs
    launcher._TORCH_TYPES.discard(FakeTensor)
    tilework.set_allocator(prev)


def test_device_descriptor_kernel_gets_its_scratch_natively(native, allocator):
    calls, bufs = allocator
    a, b, c = FakeTensor(0x100000), FakeTensor(0x200000), FakeTensor(0x300000)
    args = (a, b, c, 256, 256, 128, 128, 256, 256)
    kw = dict(BM=64, BN=64, BK=64, GROUP_M=8, num_warps=4, num_stages=2)
    k = _install(native, dev_matmul, args, kw,
                 placeholders=("*fp16:16",) * 3 + args[3:])
    per_program = allocation.scratch_size(k.metadata)
    assert per_program and k.kinds.endswith("p") and "T" not in k.kinds
    n = len(k.kinds)
    native.lib.fake_set_nparams(n)
    try:
        before = native.lib.fake_record()[9]
        assert dev_matmul[(16,)](*args, **kw) is k
        assert dev_matmul[(4, 2)](*args, **kw) is k
        r = native.lib.fake_record()
        assert r[9] == before + 2  # both launched here
        assert calls == [(per_program * 16, 128, 0x5000), (per_program * 8, 128, 0x5000)]
        assert r[16 + n - 1] == bufs[-1].p  # the last parameter: this launch's buffer
        values, _ = launcher.bind(dev_matmul, args, kw)
        _, py_params = launcher.key_and_params(dev_matmul, values)
        k.fill(py_params + [bufs[-1].p])
        assert b"".join(struct.pack("<Q", r[16 + i]) for i in range(n)) == k.slot_bytes()
        tilework.set_allocator(None)
        with pytest.raises(RuntimeError, match="no allocator was set"):
            dev_matmul[(16,)](*args, **kw)
    finally:
        dev_matmul.cache.clear()
        dev_matmul._native_launch = None
