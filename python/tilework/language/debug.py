"""tl builtins of the debug family, and the `assume`/`max_constancy` hints (stubs documented
here; implementations in tilework.frontend.ops_debug and tilework.frontend.ops)."""
from .core import builtin

__all__ = ["device_print", "device_assert", "assume", "max_constancy", "debug_barrier"]


@builtin
def device_print(prefix, *args, hex=False):
    """Prints `args` from the device, one line per element:
    `pid (x, y, z) idx (i, j) <prefix>: <value>` (with `(operand n)` before the value when
    there are several `args`).  Scalars print once per program.  `hex=True` prints the bits
    in hexadecimal.  NVIDIA: through `vprintf`; AMD: not printed (a warning says so); the
    interpreter prints to stdout."""


@builtin
def device_assert(cond, msg="", mask=None):
    """When compiled with `debug=True` (or TILEWORK_DEBUG=1): where `cond` is false (and
    `mask`, if given, is true) the kernel stops, reporting `msg`, the file and the line
    (NVIDIA: `__assertfail`; AMD: a trap without the message; the interpreter raises
    AssertionError).  Without debug it compiles to nothing."""


@builtin
def assume(cond):
    """Tells the compiler that `cond` holds (an `llvm.assume`); nothing is checked."""


@builtin
def max_constancy(input, values):
    """Hints that `input` is constant in runs of `values[d]` elements along each dimension."""


@builtin
def debug_barrier():
    """Every thread of the program waits here until all have arrived (a CTA barrier)."""
