"""`tl.inline_asm_elementwise` (implementation: tilework.frontend.ops_asm)."""
from .core import builtin

__all__ = ["inline_asm_elementwise"]


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """Runs the assembly `asm` (PTX on NVIDIA, AMDGCN on AMD) on the elements of `args`
    (broadcast to one shape), `pack` elements per asm statement.  `constraints` are LLVM's
    inline-asm constraints, outputs first (`"=r,r"`); `$0, $1, ...` number the outputs then
    the inputs.  Elements narrower than 32 bits are packed into one register when `pack` > 1
    (min(32 / bits, pack) per register, the first in the low bits); wider ones take one each.
    `dtype` is the result dtype, or a tuple of dtypes for several results (then a tuple is
    returned).  `is_pure=False` keeps the statement even when its results are unused.  The
    interpreter cannot run it (asm is GPU code)."""
