"""`tl.inline_asm_elementwise` and `tl.map_elementwise` (implementations:
tilework.frontend.ops_asm)."""
from .core import builtin

__all__ = ["inline_asm_elementwise", "map_elementwise"]


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


@builtin
def map_elementwise(scalar_fn, *args, pack=1):
    """Applies the @jit function `scalar_fn` to each element of `args` (broadcast to one
    shape; Python numbers become constants), with its own control flow per element: an `if`
    in it runs only the branch taken, where `tl.where` computes both.  It returns a value or a
    tuple of values per element; the result is a tile, or a tuple of tiles.  With `pack` > 1
    it takes `pack` elements of each argument at once (x0, x1, ..., y0, y1, ...) and returns
    `pack` values of each result in turn (r0, r1, ..., s0, s1, ...).  The interpreter calls
    it once per element group."""
