"""AMD runtime through hip-python: loads hsaco code objects into the current device and
launches on the current stream (PyTorch's when it is in use).

device_print: a kernel that prints has `print` in its metadata.  Its module gets a buffer
(allocated once per module, kept for its lifetime) whose address is stored into the module's
global `tilework_print_buf`; after each launch of that kernel the runtime waits for the
stream, formats the records (`printbuf`) to stdout, reports dropped ones and resets the
counter.  TILEWORK_PRINT_BUFFER_SIZE sets the buffer's bytes (default 8 MiB)."""
from __future__ import annotations

import ctypes
import os
import struct
import sys

from . import native_launch, printbuf
from .abi import kernarg_buffer
from .cuda import LoadedKernel
from .gpu_errors import HipError  # noqa: F401  (raised here; imported from here too)


class HipKernel(LoadedKernel):
    __slots__ = ("printbuf",)  # device address of the print buffer, or None

    def _attribute(self, name) -> int:  # the amdgcn text reports registers and scratch
        return 0


def print_buffer_size() -> int:
    raw = os.environ.get("TILEWORK_PRINT_BUFFER_SIZE", "")
    try:
        size = int(raw, 0) if raw else 8 << 20
    except ValueError:
        size = -1
    if size < printbuf.HEADER + printbuf.RECORD:
        raise ValueError(f"TILEWORK_PRINT_BUFFER_SIZE={raw!r}: want a number of bytes, at "
                         f"least {printbuf.HEADER + printbuf.RECORD}")
    return size


class HipRuntime:
    def __init__(self):
        try:
            from hip import hip
        except ImportError as e:
            raise RuntimeError("the AMD runtime needs hip-python: pip install "
                               "'tilework[rocm]'") from e
        self.hip = hip

    def _check(self, res, what):
        err = res[0] if isinstance(res, tuple) else res
        if int(err) != 0:
            raise HipError(f"{what} failed: {self.hip.hipGetErrorString(err)}")
        return res[1] if isinstance(res, tuple) and len(res) == 2 else res[1:]

    def target(self) -> str:
        hip = self.hip
        dev = self._check(hip.hipGetDevice(), "hipGetDevice")
        props = hip.hipDeviceProp_t()
        self._check(hip.hipGetDeviceProperties(props, dev), "hipGetDeviceProperties")
        arch = props.gcnArchName
        arch = arch.decode() if isinstance(arch, bytes) else str(arch)
        return arch.split(":")[0]

    def load(self, ck) -> LoadedKernel:
        hip = self.hip
        mod = self._check(hip.hipModuleLoadData(ck.binary), f"loading {ck.name}")
        fn = self._check(hip.hipModuleGetFunction(mod, ck.name.encode()), f"finding {ck.name}")
        block = ck.metadata["num_warps"] * ck.metadata["warp_size"]
        k = HipKernel(ck, mod, fn, block, ck.metadata.get("shared", 0))
        k.printbuf = self._print_buffer(mod, ck) if "print" in ck.metadata else None
        # the device it is loaded on: a launch on another one loads it there (on_device)
        k.device = int(self._check(hip.hipGetDevice(), "hipGetDevice"))
        if ck.metadata.get("launch_cooperative_grid"):
            # hipModuleLaunchCooperativeKernel takes a pointer per parameter, where this
            # runtime (and the native path) pass one packed buffer: refused, not run plainly
            raise HipError(f"{ck.name}: launch_cooperative_grid is not supported by "
                           f"tilework's HIP runtime yet (NVIDIA only); launch without it")
        # the native launcher (native_launch: the same C code as CUDA's, calling
        # hipModuleLaunchKernel with one packed buffer) takes kernels without prints (they
        # read their buffer back after each launch) or global scratch; the rest stay here
        nat = native_launch.hip_runtime(HipError)
        if nat is not None and k.printbuf is None and not ck.metadata.get("global_scratch_size") \
                and len(k.kinds) <= 256:
            try:
                address = int(fn)  # hip-python's handles are Pointers: int() is the address
            except (TypeError, ValueError):  # a handle without an address: the Python path
                address = None
            if address:
                k.native = nat.Kernel(address, k.block, k.shared, k.kinds, ck.name, k.device,
                                      hip=True)
        return k

    def on_device(self, k, device: int):
        """`k` loaded on `device` (the current one: the caller switched to it), once."""
        kd = k.on_devices.get(device)
        if kd is None:
            kd = k.on_devices[device] = self.load(k.compiled)
        return kd

    def _print_buffer(self, mod, ck) -> int:
        """Allocates the module's print buffer and points its global at it."""
        hip, sym = self.hip, ck.metadata["print"]["buffer"]
        size = print_buffer_size()
        gptr, nbytes = self._check(hip.hipModuleGetGlobal(mod, sym.encode()),
                                   f"{ck.name}: finding {sym}")
        if nbytes != 8:
            raise HipError(f"{ck.name}: {sym} has {nbytes} bytes, expected a pointer (8)")
        buf = int(self._check(hip.hipMalloc(size), f"{ck.name}: allocating {size} bytes "
                                                    "for device_print"))
        self._check(hip.hipMemcpyHtoD(buf, printbuf.header(size - printbuf.HEADER),
                                      printbuf.HEADER), f"{ck.name}: initializing {sym}")
        self._check(hip.hipMemcpyHtoD(int(gptr), struct.pack("<Q", buf), 8),
                    f"{ck.name}: setting {sym}")
        return buf

    def _flush_prints(self, k):
        """Prints the records the launch left in k's buffer and empties it."""
        hip, buf = self.hip, k.printbuf
        self._check(hip.hipStreamSynchronize(self.stream()), f"running {k.name}")
        head = bytearray(printbuf.HEADER)
        self._check(hip.hipMemcpyDtoH(head, buf, len(head)), f"{k.name}: reading prints")
        written, dropped = printbuf.counts(head)
        data = bytearray(written * printbuf.RECORD)
        if data:
            self._check(hip.hipMemcpyDtoH(data, buf + printbuf.HEADER, len(data)),
                        f"{k.name}: reading prints")
        self._check(hip.hipMemcpyHtoD(buf, bytes(8), 8), f"{k.name}: resetting prints")
        lines = printbuf.format_records(k.metadata["print"]["formats"], data)
        if lines:
            print("\n".join(lines), flush=True)
        if dropped:
            print(f"tilework: {k.name}: {dropped} device_print records dropped (the buffer "
                  f"is full; raise TILEWORK_PRINT_BUFFER_SIZE)", file=sys.stderr, flush=True)

    def stream(self):
        torch = sys.modules.get("torch")
        if torch is not None:
            return torch.cuda.current_stream().cuda_stream
        return None

    def launch(self, k, grid, values):
        # kernel arguments packed as one buffer with natural alignment (the AMDGPU ABI),
        # exactly the kernarg segment (the hsaco note's kernarg_segment_size: a multiple of 4)
        data = kernarg_buffer(k.kinds, values)
        buf = ctypes.create_string_buffer(data, max(len(data), 1))
        size = ctypes.c_size_t(len(data))
        HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END = (
            0x01, 0x02, 0x03)
        extra = (ctypes.c_void_p * 5)(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buf),
                                      HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size),
                                      HIP_LAUNCH_PARAM_END)
        self._check(self.hip.hipModuleLaunchKernel(
            k.function, grid[0], grid[1], grid[2], k.block, 1, 1, k.shared, self.stream(),
            None, extra), f"launching {k.name}")
        if k.printbuf is not None:
            self._flush_prints(k)
