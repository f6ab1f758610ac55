"""What the CPU launch benchmarks (launch_cpu.py, attn_host_cpu.py) share: a GPU faked so the
runtime's host side runs for real with no GPU.  A Python cuda-python stand-in loads kernels
(compiled for sm_90a, as on an H100/H200); the test suite's fake libcuda takes the native
path's cuLaunchKernel; tensors are `FakeTensor`s (the torch surface the launcher and the
examples read), allocated as torch's caching allocator would hand them out.

    with fake_driver() as env:          # in the parent: builds the fakes
        subprocess.run([...], env=dict(env, TILEWORK_NATIVE_TMA="1"))
    rt = install_fake_gpu()             # in the child, before any launch
"""
import contextlib
import ctypes
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
CHILD_ENV = "CPU_FAKES_DIR"  # set in the children: the folder of the fakes

FAKE_CUDA = '''
class CUdevice_attribute:
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
class CUfunction_attribute:
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
def cuInit(flags): return (0,)
def cuCtxGetCurrent(): return (0, 0xC0)
def cuCtxGetDevice(): return (0, 0)
def cuDeviceGetAttribute(attr, dev): return (0, 9 if attr == 75 else 0)
def cuModuleLoadData(binary): return (0, "module")
def cuModuleGetFunction(mod, name): return (0, 0xF00)
def cuFuncSetAttribute(fn, attr, value): return (0,)
def cuGetErrorName(err): return (0, b"CUDA_ERROR_FAKE")
def cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra): return (0,)
'''


@contextlib.contextmanager
def fake_driver():
    """A folder with the fake cuda-python module and the fake libcuda built; yields the
    environment a child process needs to use them (`install_fake_gpu`)."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "fake_cuda_driver.py"), "w") as f:
            f.write(FAKE_CUDA)
        lib = os.path.join(d, "libfakecuda.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", lib, os.path.join(
            ROOT, "test", "python", "native", "fake_libcuda.c")], check=True)
        yield dict(os.environ, **{CHILD_ENV: d, "TILEWORK_CUDA_DRIVER": "fake_cuda_driver",
                                  "TILEWORK_LIBCUDA": lib})


def in_child() -> bool:
    return bool(os.environ.get(CHILD_ENV))


class FakeDType:
    """torch.float16's surface where torch is not imported."""
    is_floating_point, itemsize = True, 2

    def __str__(self):
        return "torch.float16"


class FakeDevice:
    type, index = "cuda", 0


class FakeTensor:
    """A contiguous CUDA tensor as the launcher and the examples see it: address, shape,
    dtype (a torch dtype, or FakeDType), strides, device 0.  `owner`: the allocator that
    takes the address back when the tensor dies."""
    __module__ = "torch.fake"  # the launcher's and the examples' torch check
    is_cuda = True
    device = FakeDevice()

    def __init__(self, p, shape, dtype=None, owner=None):
        self.p, self.shape, self.dtype = p, tuple(shape), dtype or FakeDType()
        self.owner = owner
        st, n = [], 1
        for s in reversed(self.shape):
            st.append(n)
            n *= s
        self._stride = tuple(reversed(st))

    def __del__(self):
        if self.owner is not None:
            self.owner.free(self)

    def data_ptr(self):
        return self.p

    def get_device(self):
        return 0

    def element_size(self):
        return self.dtype.itemsize

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[dim]

    def is_contiguous(self):
        return True

    def contiguous(self):
        return self


class FakeAllocator:
    """torch's caching allocator as a benchmark loop sees it: a freed block is handed out
    again to the next request of its size, so a call's outputs land where the last call's
    did."""

    def __init__(self, base=0x7F0000000000):
        self.next, self.free_blocks = base, {}

    def empty(self, shape, dtype):
        t = FakeTensor(0, shape, dtype)
        nbytes = -(-t.numel() * dtype.itemsize // 512) * 512
        blocks = self.free_blocks.get(nbytes)
        if blocks:
            t.p = blocks.pop()
        else:
            t.p, self.next = self.next, self.next + nbytes
        t.owner = self
        return t

    def free(self, t):
        n = -(-t.numel() * t.dtype.itemsize // 512) * 512
        self.free_blocks.setdefault(n, []).append(t.p)


def patch_torch(torch, allocator):
    """torch (a CPU build) made to hand out FakeTensors for `device=<FakeDevice>` and to
    answer the launcher's device and stream queries (device 0, stream 0)."""
    empty = torch.empty

    def fake_empty(*shape, device=None, dtype=None, **kw):
        if isinstance(device, FakeDevice):
            if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
                shape = shape[0]
            return allocator.empty(shape, dtype or torch.float32)
        return empty(*shape, device=device, dtype=dtype, **kw)
    torch.empty = fake_empty
    torch._C._cuda_getDevice = lambda: 0
    torch._C._cuda_getCurrentRawStream = lambda dev: 0


def install_fake_gpu():
    """In a child (`fake_driver`'s environment): the CUDA runtime over the fakes, for every
    caller (the launcher's and `driver.active`'s); tensor maps not encoded (no libcuda: a
    stand-in of 128 bytes; encoding is memoized per descriptor state anyway); the scratch
    allocator set; torch, where installed (a CPU build), patched (`patch_torch`).  Returns
    the FakeAllocator that `torch.empty(..., device=FakeTensor.device)` takes from."""
    import tilework
    from tilework.runtime import device, launcher, native_launch, tma
    from tilework.runtime.cuda import CudaRuntime
    sys.path.insert(0, os.environ[CHILD_ENV])  # the fake cuda-python module
    lib = ctypes.CDLL(os.environ["TILEWORK_LIBCUDA"])
    lib.fake_set_context(ctypes.c_void_p(0xC0))  # the context the fake cuda-python reports
    native_launch.pin_stream_source(lambda: 0, lambda dev: 0)
    allocator = FakeAllocator()
    try:
        import torch
        patch_torch(torch, allocator)
    except ImportError:
        pass
    launcher._runtime = device._RUNTIMES["cuda"] = CudaRuntime()
    tma.encode = lambda p, fn=None: bytes(128)
    tilework.set_allocator(lambda size, align, stream: FakeTensor(0x9000000, (size,)))
    return allocator


def best_time(fn, calls, rounds=5) -> float:
    """The best of `rounds` loops of `calls` calls of `fn`: microseconds a call, of this
    thread's CPU time (a shared machine's other processes do not count)."""
    best = float("inf")
    for _ in range(rounds):
        t = time.thread_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.thread_time() - t) / calls * 1e6)
    return best
