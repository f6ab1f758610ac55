"""Implementations of the builtins of `language/standard.py` that are not `@jit` code
(histogram: `tile.histogram`, counted with shared-memory atomics; gather: checks its operands,
then compares against a range (one-hot) and reduces), `tensor.item()` and `debug_barrier` (`tile.debug_barrier`)."""
from __future__ import annotations

from tilework.dialects import builders as B

from ..language import core
from . import semantic as S
from .ops_core import arange, const, impl, mask_operand
from .ops_reduction import xor_sum
from .ops_shape import normalize_axis, permute, reshape
from .semantic import SemanticError, expand_dims_1
from .types import tensor_ir_type


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
    # 32 or 64 bits, extended after the signedness (negative values then compare large)
    if x.dtype.primitive_bitwidth < 32:
        x = S.cast(b, x, core.uint32 if x.dtype.is_int_unsigned() else core.int32)
    m = mask_operand(b, mask, x.shape, "histogram")
    h = B.build_histogram(b, x.handle, m.handle if m is not None else None,
                          result_type=tensor_ir_type(core.int32, (nb,)), num_bins=nb)
    return core.tensor(h, core.int32, (nb,))


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


