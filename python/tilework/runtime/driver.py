"""Device queries in the shape of `triton.runtime.driver`, so host code written for Triton
(the fused-softmax tutorial's occupancy grid, persistent kernels' SM count) runs unchanged:

    from tilework.runtime import driver
    dev = driver.active.get_active_torch_device()
    props = driver.active.utils.get_device_properties(dev.index)
    props["multiprocessor_count"], props["max_num_regs"], props["max_shared_mem"], props["warpSize"]

Nothing is imported until a query is made: cuda-python (NVIDIA) or hip-python (AMD, when
torch is a ROCm build), and torch only by the torch-facing queries.
"""
from __future__ import annotations

import dataclasses
import sys

from .device import runtime_for

__all__ = ["active", "DeviceUtils", "ActiveDriver", "GPUTarget"]

# Triton's property names -> the CUDA driver attribute each is read from
_CUDA_PROPERTIES = {
    "max_shared_mem": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "max_num_regs": "MAX_REGISTERS_PER_BLOCK",
    "multiprocessor_count": "MULTIPROCESSOR_COUNT",
    "warpSize": "WARP_SIZE",
    "sm_clock_rate": "CLOCK_RATE",
    "mem_clock_rate": "MEMORY_CLOCK_RATE",
    "mem_bus_width": "GLOBAL_MEMORY_BUS_WIDTH",
}
# ... and the hipDeviceProp_t field
_HIP_PROPERTIES = {
    "max_shared_mem": "sharedMemPerBlock",
    "max_num_regs": "regsPerBlock",
    "multiprocessor_count": "multiProcessorCount",
    "warpSize": "warpSize",
    "sm_clock_rate": "clockRate",
    "mem_clock_rate": "memoryClockRate",
    "mem_bus_width": "memoryBusWidth",
}


def _is_hip() -> bool:
    torch = sys.modules.get("torch")
    return bool(torch is not None and getattr(torch.version, "hip", None))


def _index(device) -> int:
    """A device index from an int, a torch.device or a 'cuda:1' string (None: current)."""
    if device is None:
        return active.get_current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        _, _, idx = device.partition(":")
        return int(idx) if idx else active.get_current_device()
    idx = getattr(device, "index", None)
    return idx if idx is not None else active.get_current_device()


def _cuda():
    try:
        from cuda.bindings import driver as cu
    except ImportError as e:
        raise RuntimeError("device queries need cuda-python: pip install 'tilework[cuda]'") from e
    return cu


def _hip():
    try:
        from hip import hip
    except ImportError as e:
        raise RuntimeError("device queries need hip-python: pip install 'tilework[rocm]'") from e
    return hip


def _check(res, what):
    err = res[0] if isinstance(res, tuple) else res
    if int(err) != 0:
        raise RuntimeError(f"{what} failed (error {int(err)})")
    return res[1] if isinstance(res, tuple) and len(res) == 2 else None


def cuda_properties(cu, device: int) -> dict:
    """Triton's property dict of CUDA device `device`, read through the driver module `cu`."""
    _check(cu.cuInit(0), "cuInit")
    dev = _check(cu.cuDeviceGet(device), "cuDeviceGet")
    A = cu.CUdevice_attribute
    return {name: int(_check(cu.cuDeviceGetAttribute(getattr(A, f"CU_DEVICE_ATTRIBUTE_{attr}"),
                                                     dev), f"cuDeviceGetAttribute({attr})"))
            for name, attr in _CUDA_PROPERTIES.items()}


def hip_properties(hip, device: int) -> dict:
    """The same dict for a HIP device, from `hipGetDeviceProperties`."""
    props = hip.hipDeviceProp_t()
    _check(hip.hipGetDeviceProperties(props, device), "hipGetDeviceProperties")
    return {name: int(getattr(props, field)) for name, field in _HIP_PROPERTIES.items()}


class DeviceUtils:
    """`driver.active.utils`: `get_device_properties(device)` -> dict with
    `multiprocessor_count`, `max_num_regs` (per block), `max_shared_mem` (bytes a block may
    opt in to), `warpSize`, `sm_clock_rate`, `mem_clock_rate` (kHz), `mem_bus_width` (bits)."""

    def __init__(self):
        self._cache = {}

    def get_device_properties(self, device=None) -> dict:
        idx = _index(device)
        props = self._cache.get(idx)
        if props is None:
            props = hip_properties(_hip(), idx) if _is_hip() else cuda_properties(_cuda(), idx)
            self._cache[idx] = props
        return dict(props)


@dataclasses.dataclass(frozen=True)
class GPUTarget:
    """What `get_current_target()` gives (Triton's `GPUTarget` fields)."""
    backend: str
    arch: object  # int (CUDA: 90) or str (HIP: 'gfx942')
    warp_size: int


_TARGETS: dict = {}  # target name -> GPUTarget


class ActiveDriver:
    """`driver.active`: the current GPU backend, as Triton's."""

    def __init__(self):
        self.utils = DeviceUtils()

    @staticmethod
    def get_device_interface():
        """`torch.cuda` (also on ROCm builds of torch), as Triton's."""
        import torch
        return torch.cuda

    def get_active_torch_device(self):
        """The torch.device of the current GPU."""
        import torch
        return torch.device("cuda", torch.cuda.current_device())

    def get_current_device(self) -> int:
        """The current device index: torch's when torch is imported, else the CUDA
        context's (0 without one)."""
        torch = sys.modules.get("torch")
        if torch is not None:
            return torch.cuda.current_device()
        if _is_hip():
            return int(_check(_hip().hipGetDevice(), "hipGetDevice"))
        cu = _cuda()
        _check(cu.cuInit(0), "cuInit")
        err, dev = cu.cuCtxGetDevice()
        return int(dev) if int(err) == 0 else 0

    def get_current_stream(self, device=None):
        """The raw handle of the current stream (torch's when torch is in use)."""
        return runtime_for(None).stream()

    def get_current_target(self) -> GPUTarget:
        """(backend, arch, warp_size): ('cuda', 90, 32) or ('hip', 'gfx942', 64); one
        immutable object per target (routing code asks on every call)."""
        arch = runtime_for(None).target()
        t = _TARGETS.get(arch)
        if t is None:
            if arch.startswith("gfx"):
                t = GPUTarget("hip", arch, 64 if arch.startswith("gfx9") else 32)
            else:
                t = GPUTarget("cuda", int(arch[3:].rstrip("a")), 32)
            _TARGETS[arch] = t
        return t


active = ActiveDriver()
