"""Launching a kernel for torch tensors: compiled on CUDA tensors, interpreted (numpy, on the
CPU) on CPU tensors, so every wrapper also runs, slowly, without a GPU (tests, gradcheck)."""
from __future__ import annotations

from ..language.function import LAUNCH_OPTIONS
from ..runtime.interpreter import interpret
from ..runtime.launcher import bind


def on_cpu(*tensors) -> bool:
    return any(t is not None and t.device.type == "cpu" for t in tensors)


def launch(kernel, grid, *args, **kwargs):
    """`kernel[grid](*args, **kwargs)`, through the interpreter when a tensor argument is on
    the CPU.  An autotuned kernel (`base_fn`) interpreted runs the config given in kwargs."""
    tensors = [a for a in list(args) + list(kwargs.values()) if hasattr(a, "device")]
    if not on_cpu(*tensors):
        return kernel[grid](*args, **kwargs)
    fn = getattr(kernel, "base_fn", kernel)
    values, opts = bind(fn, args, kwargs)
    interpret(fn, grid, values, dict(zip(LAUNCH_OPTIONS, opts)))
    return None
