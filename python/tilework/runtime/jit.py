"""`@jit` and the launch path: `kernel[grid](*args, num_warps=..., BLOCK=...)`.

A launch binds the arguments, computes the specialization key (argument dtypes, pointer
alignment to 16 bytes, integers divisible by 16 or equal to 1, constexpr values), finds or
compiles the variant for the device's target, and launches it on the current stream.
`JITFunction` and `jit` live in the language layer (`language/function.py`, which the
frontend may import); this module gives them the launch path of `launcher.py`.
"""
from __future__ import annotations

from ..language.function import LAUNCH_OPTIONS, JITFunction, install_launcher, jit  # noqa: F401
from . import launcher
from .tensor_wrapper import TensorWrapper, reinterpret  # noqa: F401  (triton.runtime.jit's)

install_launcher(launcher.run, launcher.warmup, native=True)
