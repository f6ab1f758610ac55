"""The launch path, the interpreter and the autotuner (`tilework.runtime.Autotuner`, `Config`,
`Heuristics`, `autotune`, `heuristics`, `KernelInterface`, as in `triton.runtime`); `load`
opens a bundle of ahead-of-time kernels (`tilework compile --emit bundle`)."""
from .autotuner import (Autotuner, AutotuneError, Config, Heuristics, KernelInterface,  # noqa: F401
                        autotune, heuristics)
from . import driver  # noqa: F401  (device queries, as triton.runtime.driver)
from .errors import InterpreterError  # noqa: F401
from .jit import JITFunction, TensorWrapper, jit, reinterpret  # noqa: F401
from .bundle import load  # noqa: F401
