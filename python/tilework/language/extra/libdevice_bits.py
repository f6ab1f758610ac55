"""libdevice's bit and integer intrinsics, builtins of the compiler (implementations in
tilework.frontend.ops_bits).  Argument dtypes must match one of the listed signatures exactly
(as Triton's `extern_elementwise` dispatch: no promotion); the results are libdevice's."""
from ..core import builtin

__all__ = ["popc", "clz", "ffs", "brev", "byte_perm", "sad", "mul24"]


@builtin
def popc(x):
    """The number of set bits: int32 -> int32, int64 -> int32."""


@builtin
def clz(x):
    """The number of leading zero bits (the width for 0): int32 -> int32, int64 -> int32."""


@builtin
def ffs(x):
    """1 + the position of the lowest set bit, 0 for 0: int32 -> int32, int64 -> int32."""


@builtin
def brev(x):
    """The bits in reverse order: int32 -> int32, int64 -> int64."""


@builtin
def byte_perm(x, y, s):
    """Bytes chosen from the 8 bytes of (y:x) (x's are 0-3): byte n of the result is byte
    `(s >> 4n) & 7` (CUDA's __byte_perm; bit 3 of each nibble is ignored).  int32 x3 -> int32."""


@builtin
def sad(x, y, z):
    """|x - y| + z, wrapping at 32 bits: (int32, int32, uint32) -> int32,
    (uint32, uint32, uint32) -> uint32."""


@builtin
def mul24(x, y):
    """The low 32 bits of the product of the low 24 bits of x and y (sign-extended from bit 23
    for int32): (int32, int32) -> int32, (uint32, uint32) -> uint32."""
