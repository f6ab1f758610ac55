"""`tl.extra.cuda`, as Triton's: `libdevice` (target-independent here: see
`tl.extra.libdevice`), the special registers `globaltimer()` (ns, int64) and `smid()` (int32),
`num_warps()` / `num_threads()` of the compilation (constexprs), and grid dependency control
(`gdc_wait`, `gdc_launch_dependents`: `griddepcontrol`, sm_90+, no-ops unless the launch is a
programmatic dependent one).  The asm ones are PTX: NVIDIA targets only, and (as Triton's
interpreter) not interpreted."""
from .. import libdevice  # noqa: F401
from ... import core
from ...asm import inline_asm_elementwise
from ...core import builtin
from ...function import jit

__all__ = ["libdevice", "globaltimer", "smid", "num_warps", "num_threads", "gdc_wait",
           "gdc_launch_dependents"]


@jit
def globaltimer():
    """The GPU's global nanosecond timer (`%globaltimer`), an int64 scalar."""
    return inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=core.int64,
                                  is_pure=False, pack=1)


@jit
def smid():
    """The id of the SM running this program (`%smid`), an int32 scalar."""
    return inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=core.int32,
                                  is_pure=True, pack=1)


@builtin
def num_warps():
    """The warps of a program in this compilation (a constexpr)."""


@builtin
def num_threads():
    """The threads of a program in this compilation, num_warps * 32 (a constexpr)."""


@jit
def gdc_wait():
    """Waits for the grids this one depends on (programmatic dependent launch) to finish and
    their memory to be visible; returns at once otherwise."""
    inline_asm_elementwise("griddepcontrol.wait; // dummy $0", "=r", [], dtype=core.int32,
                           is_pure=False, pack=1)


@jit
def gdc_launch_dependents():
    """Lets a dependent grid (programmatic dependent launch) start once every program has
    called it or finished; no effect otherwise."""
    inline_asm_elementwise("griddepcontrol.launch_dependents; // dummy $0", "=r", [],
                           dtype=core.int32, is_pure=False, pack=1)
