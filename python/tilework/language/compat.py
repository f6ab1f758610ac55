"""Triton's small conveniences, written on the builtins: `tl.add`/`sub`/`mul` (the operators;
`sanitize_overflow` is accepted and ignored: tilework does not check integer overflow),
`tl.reduce_or` (also `x.reduce_or(axis)`) and `TRITON_MAX_TENSOR_NUMEL` (the most elements
a tile holds: `arange` refuses longer ones)."""
from .core import MEMBER_FUNCTIONS, TRITON_MAX_TENSOR_NUMEL, constexpr, static_assert
from .function import jit
from .reduction import reduce

__all__ = ["add", "sub", "mul", "reduce_or", "TRITON_MAX_TENSOR_NUMEL"]


@jit
def add(x, y, sanitize_overflow: constexpr = True):
    """`x + y`."""
    return x + y


@jit
def sub(x, y, sanitize_overflow: constexpr = True):
    """`x - y`."""
    return x - y


@jit
def mul(x, y, sanitize_overflow: constexpr = True):
    """`x * y`."""
    return x * y


@jit
def _or(a, b):
    return a | b


@jit
def reduce_or(input, axis, keep_dims: constexpr = False):
    """Bitwise or along `axis` (integer tiles)."""
    static_assert(input.dtype.is_int(), "reduce_or only supported for integers")
    return reduce(input, axis, _or, keep_dims=keep_dims)


MEMBER_FUNCTIONS.update(reduce_or=reduce_or)
