"""Picks the runtime (CUDA or HIP) from the tensors' device (the runtimes import their GPU
libraries on first use)."""
from __future__ import annotations

import sys

from .cuda import CudaRuntime
from .hip import HipRuntime

_RUNTIMES = {}


def _is_hip() -> bool:
    torch = sys.modules.get("torch")
    return bool(torch is not None and getattr(torch.version, "hip", None))


def runtime_for(device):
    """The runtime of `device` (a torch.device, or None for other tensor-likes)."""
    kind = "hip" if _is_hip() else "cuda"
    rt = _RUNTIMES.get(kind)
    if rt is None:
        if kind == "hip":
            rt = HipRuntime()
        else:
            rt = CudaRuntime()
        _RUNTIMES[kind] = rt
    return rt


def gpu_available() -> bool:
    """True when a CUDA or HIP device can be used (no error if neither library exists)."""
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # noqa: F401
        except ImportError:
            torch = None
    if torch is not None:
        try:
            return bool(torch.cuda.is_available())
        except Exception:
            return False
    try:
        from cuda.bindings import driver as cu
        err, = cu.cuInit(0)[:1]
        if int(err) != 0:
            return False
        err, n = cu.cuDeviceGetCount()
        return int(err) == 0 and n > 0
    except Exception:
        return False
