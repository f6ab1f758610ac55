"""The HIP launch path against a fake hip-python (test_print_amd.py's): the argument buffer
runtime/hip.py hands hipModuleLaunchKernel (HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE) is the
kernarg segment the hsaco's metadata note describes: its size, and every argument's value at
the note's offset and size, for pointers and every scalar kind; block size and dynamic LDS
from the compiled kernel; torch's HIP stream; the runtime picked from torch.version.hip."""
import ctypes
import struct
import sys
import types

import pytest

import tilework
import tilework.language as tl
from tilework.backends.amd.codeobject import kernel_note
from tilework.compiler.driver import ASTSource, compile

from test_print_amd import FakeHip, _runtime


def scalars(p, a, b, c, d, e, f, g, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = a.to(tl.float32) + b.to(tl.float32) + c + d.to(tl.float32) + e.to(tl.float32) \
        + f.to(tl.float32) + g.to(tl.float32)
    tl.store(p + offs, v + offs.to(tl.float32))


SIG = {"p": tl.pointer_type(tl.float32), "a": tl.int8, "b": tl.int64, "c": tl.float32,
       "d": tl.float16, "e": tl.int16, "f": tl.float64, "g": tl.uint32}
VALUES = (0x123456789A, -5, -(2**40), 1.5, 2.5, -300, 3.25, 4000000000)


class LaunchRecorder(FakeHip):
    def hipModuleLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        ptrs = [extra[i] for i in range(5)]
        assert ptrs[0] == 1 and ptrs[2] == 2 and ptrs[4] == 3  # BUFFER_POINTER, SIZE, END
        size = ctypes.c_size_t.from_address(ptrs[3]).value
        self.launched = dict(grid=(gx, gy, gz), block=(bx, by, bz), shared=shared,
                             stream=stream, params=params, buf=ctypes.string_at(ptrs[1], size))
        return (0,)


@pytest.mark.parametrize("target", ["gfx942", "gfx1201"])
def test_packed_arguments_are_the_kernarg_segment(target):
    ck = compile(ASTSource(tilework.jit(scalars), SIG, {"BLOCK": 64}, {}), target, cache=False)
    note = kernel_note(ck.binary, ck.name)
    fake = LaunchRecorder()
    rt = _runtime(fake)
    rt.stream = lambda: "the-stream"
    k = rt.load(ck)
    rt.launch(k, (3, 2, 1), VALUES)
    got = fake.launched
    assert got["grid"] == (3, 2, 1) and got["stream"] == "the-stream" and got["params"] is None
    assert got["block"] == (ck.metadata["num_warps"] * ck.metadata["warp_size"], 1, 1)
    assert got["shared"] == ck.metadata.get("shared", 0)
    buf = got["buf"]
    assert len(buf) == note[".kernarg_segment_size"]
    fmts = ["<Q", "<b", "<q", "<f", "<e", "<h", "<d", "<I"]
    args = note[".args"]
    assert len(args) == len(VALUES)
    for a, fmt, v in zip(args, fmts, VALUES):
        assert a[".size"] == struct.calcsize(fmt), a
        assert struct.unpack_from(fmt, buf, a[".offset"])[0] == v, a


def test_runtime_follows_torch_version_hip(monkeypatch):
    from tilework.runtime import device
    fake_torch = types.SimpleNamespace(version=types.SimpleNamespace(hip="6.2.0"))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setattr(device, "_RUNTIMES", {})
    made = []
    monkeypatch.setattr(device, "HipRuntime", lambda: made.append("hip") or "hip-runtime")
    monkeypatch.setattr(device, "CudaRuntime", lambda: made.append("cuda") or "cuda-runtime")
    assert device.runtime_for(None) == "hip-runtime"
    fake_torch.version.hip = None
    assert device.runtime_for(None) == "cuda-runtime" and made == ["hip", "cuda"]


def test_stream_is_torchs_current_hip_stream(monkeypatch):
    from tilework.runtime.hip import HipRuntime
    stream = types.SimpleNamespace(cuda_stream=0xABC)
    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(current_stream=lambda: stream))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    assert HipRuntime.stream(HipRuntime.__new__(HipRuntime)) == 0xABC
