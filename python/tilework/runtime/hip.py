"""AMD runtime through hip-python: loads hsaco code objects into the current device and
launches on the current stream (PyTorch's when it is in use)."""
from __future__ import annotations

import ctypes
import struct
import sys

from .cuda import LoadedKernel

_PACK = {"p": "P", "i": "i", "l": "q", "L": "Q", "f": "f", "b": "?"}


class HipError(RuntimeError):
    pass


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
        return LoadedKernel(ck, mod, fn, block, ck.metadata.get("shared", 0))

    def stream(self):
        torch = sys.modules.get("torch")
        if torch is not None:
            return torch.cuda.current_stream().cuda_stream
        return None

    def launch(self, k, grid, values):
        # kernel arguments packed as one buffer with natural alignment (the AMDGPU ABI)
        fmt = "@" + "".join(_PACK[c] for c in k.metadata.get("param_kinds", ""))
        buf = ctypes.create_string_buffer(struct.pack(fmt, *values) or b"\0")
        size = ctypes.c_size_t(len(buf.raw))
        HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE, HIP_LAUNCH_PARAM_END = (
            0x01, 0x02, 0x03)
        extra = (ctypes.c_void_p * 5)(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buf),
                                      HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size),
                                      HIP_LAUNCH_PARAM_END)
        self._check(self.hip.hipModuleLaunchKernel(
            k.function, grid[0], grid[1], grid[2], k.block, 1, 1, k.shared, self.stream(),
            None, extra), f"launching {k.name}")
