"""`tl.target_info`: what the kernel is compiled for, as compile-time constants (Triton's
`triton.language.target_info`; implementations in tilework.frontend.ops_target).

Triton asks the active GPU driver; tilework answers for the compile target (`target=` of
`compile`/`warmup`/the launch, else the device's), so a kernel compiled ahead of time for
gfx942 takes its `is_hip()` branch on a machine without an AMD GPU.  The interpreter answers
for the target it stands in for: the launch option `target=` or `TILEWORK_TARGET`, else none
(every predicate False, `current_target()` None).  Each returns a constexpr, so
`if tl.target_info.is_cuda():` picks a branch at compile time."""
from collections import namedtuple

from .core import builtin

__all__ = ["GPUTarget", "current_target", "is_cuda", "cuda_capability_geq", "is_hip",
           "is_hip_cdna3", "is_hip_cdna4"]

GPUTarget = namedtuple("GPUTarget", "backend arch warp_size")
GPUTarget.__doc__ = """Triton's target triple: backend "cuda" or "hip", arch the compute
capability as an int (sm_90a -> 90) on CUDA and the gfx name ("gfx942") on HIP, warp_size."""


@builtin
def current_target():
    """The compile target as a `GPUTarget`, or None (the interpreter without a target)."""


@builtin
def is_cuda():
    """The target is an NVIDIA GPU."""


@builtin
def cuda_capability_geq(major, minor=0):
    """The target is an NVIDIA GPU of compute capability (major, minor) or newer."""


@builtin
def is_hip():
    """The target is an AMD GPU."""


@builtin
def is_hip_cdna3():
    """The target is gfx942 (MI300)."""


@builtin
def is_hip_cdna4():
    """The target is gfx950 (MI350)."""
