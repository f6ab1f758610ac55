"""`tl.extra.cuda`, as Triton's: `libdevice` (target-independent here: see
`tl.extra.libdevice`), the special registers `globaltimer()` (ns, int64) and `smid()` (int32),
`num_warps()` / `num_threads()` of the compilation (constexprs), and grid dependency control
(`gdc_wait`, `gdc_launch_dependents`: `griddepcontrol`, sm_90+, no-ops unless the launch is a
programmatic dependent one), and Triton's fp8e4b15 conversions `convert_custom_float8_sm70` /
`_sm80` (written in the tile language: any target, interpreted too).  The asm ones are PTX:
NVIDIA targets only, and (as Triton's interpreter) not interpreted."""
from .. import libdevice  # noqa: F401
from ... import core
from ...asm import inline_asm_elementwise
from ...core import builtin
from ...function import jit

__all__ = ["libdevice", "globaltimer", "smid", "num_warps", "num_threads", "gdc_wait",
           "gdc_launch_dependents", "convert_custom_float8_sm70", "convert_custom_float8_sm80"]


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


# ---- fp8e4b15 <-> fp16/fp32, as Triton's conversion hooks for that type ------------------------

@jit
def _convert_custom_float8(arg, dst_ty: core.constexpr):
    if arg.dtype.is_fp8e4b15():
        up = arg.to(core.float16)  # exact
        if dst_ty.scalar.is_fp32():
            up = up.to(core.float32)
        return up
    core.static_assert(arg.dtype.is_fp16() or arg.dtype.is_fp32(),
                       "convert_custom_float8 converts fp8e4b15 to fp16/fp32, or fp16/fp32 to "
                       "fp8e4b15")
    return arg.to(core.float8e4b15)  # (fp32 first to fp16 toward zero: the cast's rule)


@jit
def convert_custom_float8_sm80(arg, dst_ty: core.constexpr,
                               fp_downcast_rounding: core.constexpr = None):
    """Triton's fp8e4b15 conversion: fp8e4b15 `arg` -> fp16 (fp32 where `dst_ty`'s element type
    is fp32); fp16 or fp32 `arg` (fp32 first to fp16 toward zero) -> fp8e4b15, saturated to
    +-1.75 and rounded half away from zero.  `fp_downcast_rounding` is not used, as Triton's."""
    return _convert_custom_float8(arg, dst_ty)


@jit
def convert_custom_float8_sm70(arg, dst_ty: core.constexpr,
                               fp_downcast_rounding: core.constexpr = None):
    """`convert_custom_float8_sm80` (Triton's sm_70 form only computes the same otherwise)."""
    return _convert_custom_float8(arg, dst_ty)
