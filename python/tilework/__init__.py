"""tilework: tile-level GPU kernels in Python, compiled through MLIR for NVIDIA and AMD.

    import tilework
    import tilework.language as tl

    @tilework.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

    add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)

GPU runtimes and toolchains are imported only when used: `import tilework` needs no GPU.
"""
from . import language  # noqa: F401
from .compiler.options import CompileOptions  # noqa: F401
from .errors import CompilationError, InterpreterError, TritonError  # noqa: F401
from .language.core import cdiv, next_power_of_2  # noqa: F401  (host helpers, as triton.cdiv)
from .runtime.allocation import set_allocator  # noqa: F401
from .runtime.autotuner import Config, autotune, heuristics  # noqa: F401
from .language.function import constexpr_function  # noqa: F401  (triton.constexpr_function)
from .language.aggregate import aggregate  # noqa: F401  (tl.core._aggregate; newer triton.aggregate)
from .runtime.jit import JITFunction, TensorWrapper, jit, reinterpret  # noqa: F401
from .runtime.profiler import profile  # noqa: F401
from .version import __version__  # noqa: F401


def compile(kernel, target=None, signature=None, constexprs=None, **options):
    """Compiles the @jit `kernel` ahead of time for `target` ("sm_90a", "gfx942", ...) with no
    GPU -> the CompiledKernel (`.asm[stage]`, `.metadata`); see `tilework.compiler.api`."""
    from .compiler.api import compile as compile_ahead  # MLIR loads at the first compile
    return compile_ahead(kernel, target, signature, constexprs, **options)
