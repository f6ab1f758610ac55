"""Reductions along an axis.  They run within each thread first, then across the lanes of a
warp (shuffles), then across warps (shared memory); `axis=None` reduces every dimension."""
from .core import builtin

__all__ = ["reduce", "sum", "max", "min", "argmax", "argmin", "xor_sum"]
__all__ += ["associative_scan", "cumsum", "cumprod"]


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


# ---- scans (inclusive, along one axis; lowered in lowering/rules/scan.py) --------------------

@builtin
def associative_scan(input, axis, combine_fn, reverse=False):
    """Inclusive scan of `input` (a tile or a tuple of up to 4 tiles of one shape) along `axis`
    with `combine_fn`, a @jit function of two elements (or of the two tuples' elements, flat:
    `f(a0, a1, b0, b1)`) returning their combination (one value or a tuple).  `combine_fn`
    must be associative; it need not be commutative: element i is
    `x[0] ∘ x[1] ∘ ... ∘ x[i]` with earlier elements on the left.  `reverse=True` scans from
    the end (the scan of the tile flipped along `axis`, flipped back:
    `x[n-1] ∘ ... ∘ x[i]`).  Returns a tile, or a tuple for a tuple."""


@builtin
def cumsum(input, axis=0, reverse=False, dtype=None):
    """Inclusive cumulative sum along `axis` (as Triton): signed integers narrower than 32
    bits accumulate in int32, unsigned ones and booleans in uint32, bfloat16 in float32, other
    types in their own; with `dtype` the input is cast to `dtype` first."""


@builtin
def cumprod(input, axis=0, reverse=False, dtype=None):
    """Inclusive cumulative product along `axis`.  As Triton, bfloat16 is computed in
    float32 and other types in their own (no widening of small integers); with `dtype` the
    input is cast to `dtype` first."""
