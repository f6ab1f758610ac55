"""Reductions along an axis.  They run within each thread first, then across the lanes of a
warp (shuffles), then across warps (shared memory); `axis=None` reduces every dimension."""
from .core import builtin

__all__ = ["reduce", "sum", "max", "min", "argmax", "argmin", "xor_sum"]


@builtin
def reduce(input, axis, combine_fn, keep_dims=False):
    """Reduces `input` (a tile or a tuple of up to 4 tiles of one shape) along `axis` with
    `combine_fn`, a @jit function of two elements (or two tuples) returning their combination.
    `combine_fn` must be associative; it is applied in a tree order."""


@builtin
def sum(input, axis=None, keep_dims=False, dtype=None):
    """Sum along `axis`.  Integers narrower than 32 bits accumulate in (u)int32; floats in
    their own type unless `dtype` is given."""


@builtin
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False):
    """Maximum along `axis` (NaN is ignored unless every element is NaN); with
    `return_indices`, also the index of the maximum (the first one on ties)."""


@builtin
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False):
    """Minimum along `axis`; see `max`."""


@builtin
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    """Index of the maximum along `axis` (int32)."""


@builtin
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    """Index of the minimum along `axis` (int32)."""


@builtin
def xor_sum(input, axis=None, keep_dims=False):
    """Bitwise xor of the elements along `axis` (integers)."""
