"""The native launch path on HIP (runtime/native/launch.c's HIP driver), on the CPU: HipRuntime,
over a fake hip-python, loads a gfx942 kernel and gives it a native handle; `kernel[grid]`
then launches it in C through a fake libamdhip64 (test/python/native/fake_libamdhip64.c,
recording the function, grid, block, LDS, stream and the packed argument buffer).  The buffer
equals what the Python HIP path packs for the same arguments (pointers, i32, i64, fp32, fp16
and i1 scalars, None and constexpr arguments) and is the kernarg segment the hsaco's metadata
note describes; unseen variants, another device and a missing libamdhip64 go to the Python
path; mixed devices are an error."""
import ctypes
import os
import random
import struct
import sys
import types

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.backends.amd.codeobject import kernel_note
from tilework.runtime import abi, launcher, native_launch
from tilework.runtime.hip import HipError, HipRuntime

from native_fakes import fake_native

STREAM = 0x7000  # torch's current stream on device d is STREAM + d (the pinned fake source)


@pytest.fixture(scope="module")
def hipnat(tmp_path_factory):
    """The native module with the fake libamdhip64 loaded as its HIP runtime."""
    with fake_native(tmp_path_factory, "hipnative", "fake_libamdhip64.c", "libamdhip64.so",
                     "TILEWORK_LIBAMDHIP", lambda: native_launch.hip_runtime(HipError),
                     native_launch.hip_path, STREAM, args=True) as ns:
        yield ns


def _native_record(lib):
    """(function, grid x3, block x3, shared, stream), launch count, the packed buffer."""
    r = lib.fake_record()
    return [r[i] for i in range(9)], r[9], bytes(lib.fake_args()[:r[10]])


class _Handle:
    """hip-python's hipFunction_t: a Pointer whose int() is the address."""

    def __init__(self, address):
        self.address = address

    def __int__(self):
        return self.address


class FakeHipPython:
    """The hip-python calls HipRuntime makes; a launch records its arguments and buffer."""

    def __init__(self):
        self.device, self.functions, self.launched = 0, 0, []

    def hipGetErrorString(self, err):
        return f"hipError {err}"

    def hipModuleLoadData(self, image):
        return 0, "module"

    def hipModuleGetFunction(self, mod, name):
        self.functions += 1
        return 0, _Handle(0xF000 + 0x100 * self.functions)

    def hipGetDevice(self):
        return 0, self.device

    def hipModuleLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        ptrs = [extra[i] for i in range(5)]
        assert params is None and (ptrs[0], ptrs[2], ptrs[4]) == (1, 2, 3)
        size = ctypes.c_size_t.from_address(ptrs[3]).value
        self.launched.append(([int(fn), gx, gy, gz, bx, by, bz, shared, stream],
                              ctypes.string_at(ptrs[1], size)))
        return (0,)


class _Dtype:
    __module__ = "torch.fake"

    def __str__(self):
        return "torch.float32"


F32 = _Dtype()


class _Tensor:
    """A ROCm torch tensor (torch.cuda's API): takes the torch path once registered."""
    __module__ = "torch.fake"

    def __init__(self, p, device=0, dtype=F32):
        self.p, self.device, self.dtype = p, device, dtype

    def data_ptr(self):
        return self.p

    def get_device(self):
        return self.device

    @property
    def is_cuda(self):
        return self.device >= 0


@tilework.jit
def _hk(x_ptr, out_ptr, n, big, s, h, flag, none, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) * s + h.to(tl.float32) + big.to(tl.float32) + \
        flag.to(tl.float32)
    tl.store(out_ptr + offs, v, mask=m)


@pytest.fixture
def hip_rt(hipnat, monkeypatch):
    """HipRuntime over FakeHipPython as the launcher's runtime (target gfx942, no torch);
    `_hk` without variants."""
    fake = FakeHipPython()
    rt = HipRuntime.__new__(HipRuntime)  # without hip-python
    rt.hip, rt.stream, rt.target = fake, lambda: STREAM, lambda: "gfx942"
    monkeypatch.setattr(launcher, "_runtime", rt)
    monkeypatch.setitem(sys.modules, "torch", None)  # a GPU machine's torch switches no device
    launcher._TORCH_TYPES.add(_Tensor)
    _hk.cache.clear()
    _hk._native_launch = None
    try:
        yield types.SimpleNamespace(rt=rt, fake=fake, lib=hipnat.lib, mod=hipnat.mod)
    finally:
        launcher._TORCH_TYPES.discard(_Tensor)
        _hk.cache.clear()
        _hk._native_launch = None


X, O = _Tensor(0x10000), _Tensor(0x20000)
ARGS = (X, O, 1000, 2**40, 1.5, np.float16(2.5), True, None)


def _first_launch(env, args=ARGS, grid=(4,)):
    """Compiles, loads and launches `_hk` (the Python path); -> the loaded kernel."""
    n = len(env.fake.launched)
    k = _hk[grid](*args, BLOCK=256)
    assert len(env.fake.launched) == n + 1
    assert k.native is not None and k.native.kinds == k.kinds == "ppilfhb"
    return k


def test_native_hip_launch_passes_the_python_paths_buffer(hip_rt):
    k = _first_launch(hip_rt)
    py_head, py_buf = hip_rt.fake.launched[0]
    _, count, _ = _native_record(hip_rt.lib)
    launch = _hk[(4,)]
    assert type(launch).__name__ == "Launch"
    assert launch(*ARGS, BLOCK=256) is k
    head, count2, buf = _native_record(hip_rt.lib)
    assert count2 == count + 1 and len(hip_rt.fake.launched) == 1  # not the Python path
    assert head == py_head == [0xF100, 4, 1, 1, k.block, 1, 1, k.shared, STREAM]
    assert k.block == k.metadata["num_warps"] * 64
    assert buf == py_buf
    # the kernarg segment the hsaco's metadata note describes: its size (39 bytes of
    # arguments, the segment rounded to 4 by LLVM), each argument at its offset (None and the
    # constexpr are not parameters)
    note = kernel_note(k.compiled.binary, k.name)
    assert len(buf) == note[".kernarg_segment_size"] == abi.kernarg_size(k.kinds) == 40
    fmts = ["<Q", "<Q", "<i", "<q", "<f", "<e", "<?"]
    want = [0x10000, 0x20000, 1000, 2**40, 1.5, 2.5, True]
    assert len(note[".args"]) == len(want)
    for a, fmt, v in zip(note[".args"], fmts, want):
        assert a[".size"] == struct.calcsize(fmt), a
        assert struct.unpack_from(fmt, buf, a[".offset"])[0] == v, a
    # random values of the same variant: the native buffer is the Python path's every time
    rng = random.Random(5)
    for _ in range(100):
        args = (_Tensor(rng.randrange(1, 2**44) * 16), _Tensor(rng.randrange(1, 2**44) * 16),
                rng.randrange(-2**27, 2**27) * 16 + 8,  # (the key: n % 16 == 8, big % 16 == 0)
                rng.choice([-1, 1]) * rng.randrange(2**27, 2**59) * 16, rng.uniform(-1e30, 1e30),
                np.float16(rng.uniform(-6e4, 6e4)), rng.random() < 0.5, None)
        grid = rng.choice([(1,), (7, 3), (2, 5, 9)])
        assert _hk[grid](*args, BLOCK=256) is k
        head, _, buf = _native_record(hip_rt.lib)
        values, opts = launcher.bind(_hk, args, {"BLOCK": 256})
        _, params = launcher.key_and_params(_hk, values)
        hip_rt.rt.launch(k, (grid + (1, 1))[:3], params)  # the Python path, same arguments
        assert [head, buf] == list(hip_rt.fake.launched[-1]), args


def test_an_unseen_variant_goes_to_the_python_path(hip_rt):
    k = _first_launch(hip_rt)
    _, count, _ = _native_record(hip_rt.lib)
    args = ARGS[:2] + (1008,) + ARGS[3:]  # n divisible by 16: another variant
    k2 = _hk[(2,)](*args, BLOCK=256)
    assert k2 is not k and len(hip_rt.fake.launched) == 2  # compiled and launched in Python
    assert _native_record(hip_rt.lib)[1] == count
    assert _hk[(2,)](*args, BLOCK=256) is k2  # then natively, its own function
    head, count2, buf = _native_record(hip_rt.lib)
    assert count2 == count + 1 and head[0] == 0xF200 and buf == hip_rt.fake.launched[1][1]
    assert _hk[(2,)](*ARGS, BLOCK=128) is not k  # a constexpr changed: Python again
    assert len(hip_rt.fake.launched) == 3 and _native_record(hip_rt.lib)[1] == count + 1


def test_another_device_goes_to_the_python_path(hip_rt):
    k = _first_launch(hip_rt)
    assert k.device == 0
    _, count, _ = _native_record(hip_rt.lib)
    x1, o1 = _Tensor(0x30000, device=1), _Tensor(0x40000, device=1)
    hip_rt.fake.device = 1  # what torch.cuda.device(1) would make current
    k1 = _hk[(3,)](x1, o1, *ARGS[2:], BLOCK=256)
    assert _native_record(hip_rt.lib)[1] == count  # torch's current device is 0: not native
    assert k1 is k.on_devices[1] and k1.device == 1 and k1.native is not None
    head, _ = hip_rt.fake.launched[-1]
    assert head[0] == 0xF200 and head[1:4] == [3, 1, 1]  # loaded again, on device 1


def test_mixed_devices_are_an_error(hip_rt):
    _first_launch(hip_rt)
    with pytest.raises(ValueError, match=r"_hk: arguments on different devices: `x_ptr` is on "
                                         r"cuda:0 and `out_ptr` on cuda:1"):
        _hk[(1,)](X, _Tensor(0x50000, device=1), *ARGS[2:], BLOCK=256)


def test_a_failed_native_launch_is_a_hip_error(hip_rt):
    _first_launch(hip_rt)
    hip_rt.lib.fake_fail_next(719)
    with pytest.raises(HipError, match="launching _hk failed: hipErrorLaunchFailure"):
        _hk[(1,)](*ARGS, BLOCK=256)


def test_hip_bench_launches_the_packed_buffer(hip_rt):
    nk = hip_rt.mod.Kernel(0xB100, 128, 0, "pihf", "hk", 0, hip=True)
    _, count, _ = _native_record(hip_rt.lib)
    values = [0x1000, -3, 0.5, 2.0]
    assert nk.bench(1, 1, 1, 0x99, values, 25) >= 0
    head, count2, buf = _native_record(hip_rt.lib)
    assert count2 == count + 25 and head[8] == 0x99
    assert buf == struct.pack(abi.struct_format("pihf"), *abi.encode_values("pihf", values))


@pytest.mark.parametrize("missing", ["libamdhip64", "compiler"])
def test_without_libamdhip64_or_a_compiler_kernels_take_the_python_path(hipnat, monkeypatch,
                                                                         tmp_path, missing):
    if missing == "libamdhip64":
        monkeypatch.setenv("TILEWORK_LIBAMDHIP", "/nonexistent/libamdhip64.so")
        why = "cannot load /nonexistent/libamdhip64.so"
    else:  # nothing built in this test's cache folder, and no compiler to build it
        monkeypatch.delenv("TILEWORK_NATIVE_LIB")
        monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
        why = "no-such-cc"
    saved = native_launch.reset()
    try:
        fake = FakeHipPython()
        rt = HipRuntime.__new__(HipRuntime)
        rt.hip, rt.stream = fake, lambda: None
        ck = types.SimpleNamespace(asm={}, name="k", binary=b"", metadata={
            "signature": {"x": "*fp32", "n": "int32"}, "num_warps": 4, "warp_size": 64})
        k = rt.load(ck)
        assert k.native is None and k.device == 0
        assert why in native_launch.why_not()
        assert native_launch.hip_path() is None
        rt.launch(k, (1, 1, 1), [0x1000, 7])
        assert fake.launched[-1][1] == struct.pack("<Qi", 0x1000, 7)
    finally:
        native_launch.restore(saved)
