"""Implementations of the builtins of `language/standard.py` that are not `@jit` code
(histogram, gather: they check their operands with messages, then compare against a range and
reduce), `tensor.item()` and `debug_barrier` (`tile.debug_barrier`)."""
from __future__ import annotations

from tilework.dialects import builders as B

from ..language import core
from . import semantic as S
from .ops_core import arange, const, impl, mask_operand
from .ops_reduction import sum as sum_, xor_sum
from .ops_shape import normalize_axis, permute, reshape
from .semantic import SemanticError, expand_dims_1


def _int_tile(b, x, what):
    x = S.to_tensor(b, x)
    if not x.dtype.is_int() or x.dtype.is_bool():
        raise SemanticError(f"{what} must hold integers, got {x.dtype}")
    return x


def bits_type(dt: core.dtype):
    """The signed integer type of `dt`'s width, whose xor moves `dt`'s bits exactly; None for
    integers (they are their own bits)."""
    if dt.is_int() and not dt.is_bool():
        return None
    return {1: core.int8, 8: core.int8, 16: core.int16, 32: core.int32,
            64: core.int64}[dt.primitive_bitwidth]


@impl
def histogram(b, input, num_bins, mask=None):
    x = _int_tile(b, input, "histogram input")
    if len(x.shape) != 1:
        raise SemanticError(f"histogram input must be a 1-D tile, got shape {list(x.shape)}")
    nb = const(num_bins, "histogram num_bins")
    if not isinstance(nb, int) or nb <= 0 or nb & (nb - 1):
        raise SemanticError(f"histogram num_bins must be a power of two, got {nb!r}")
    bins = expand_dims_1(b, arange(b, 0, nb), 0)                       # [1, bins]
    hit = S.compare(b, "eq", expand_dims_1(b, x, 1), bins)             # [n, bins]
    m = mask_operand(b, mask, x.shape, "histogram")
    if m is not None:
        hit = S.binary(b, "and", hit, expand_dims_1(b, m, 1))
    return sum_(b, S.cast(b, hit, core.int32), 0)


@impl
def gather(b, src, index, axis):
    s = S.to_tensor(b, src)
    idx = _int_tile(b, index, "gather index")
    if not s.shape:
        raise SemanticError("gather src must be a tile, got a scalar")
    rank = len(s.shape)
    if len(idx.shape) != rank:
        raise SemanticError(f"gather src and index must have the same rank, got shapes "
                            f"{list(s.shape)} and {list(idx.shape)}")
    a = normalize_axis(axis, rank, "gather axis")
    if any(s.shape[d] != idx.shape[d] for d in range(rank) if d != a):
        raise SemanticError(f"gather index of shape {list(idx.shape)} must match src's shape "
                            f"{list(s.shape)} except along axis {a}")
    if s.dtype.is_ptr():
        raise SemanticError("gather of pointers is not supported")
    bt = bits_type(s.dtype)
    v = s if bt is None else S.cast(b, s, bt, bitcast=True)
    if s.dtype.is_bool():
        v = S.cast(b, s, core.int8)
    # src with its gathered axis moved to a new last axis: [..., 1 at a, ..., src.shape[a]]
    order = [d for d in range(rank) if d != a] + [a]
    if order != list(range(rank)):
        v = permute(b, v, *order)
    v = expand_dims_1(b, v, a)
    pos = arange(b, 0, s.shape[a])
    hit = S.compare(b, "eq", expand_dims_1(b, idx, rank), pos)       # [idx shape..., src axis]
    out = xor_sum(b, S.where(b, hit, v, 0), rank)                    # the one match (or 0)
    if s.dtype.is_bool():
        return S.cast(b, out, core.int1)
    return out if bt is None else S.cast(b, out, s.dtype, bitcast=True)


@impl
def item(b, input):
    x = S.to_tensor(b, input)
    if not x.shape:
        return x
    n = 1
    for d in x.shape:
        n *= d
    if n != 1:
        raise SemanticError(f"item() needs a tile of one element, got shape {list(x.shape)}")
    return reshape(b, x, ())


@impl
def debug_barrier(b):
    B.build_debug_barrier(b)


