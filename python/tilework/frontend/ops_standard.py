"""Implementations of the builtins of `language/standard.py` that are not `@jit` code
(histogram: `tile.histogram`, counted with shared-memory atomics; gather: `tile.gather`, src
read back from shared memory at the indices), `tensor.item()` and `debug_barrier` (`tile.debug_barrier`)."""
from __future__ import annotations

from tilework.dialects import builders as B

from ..language import core
from . import semantic as S
from .ops_core import const, impl, mask_operand
from .ops_shape import normalize_axis, reshape
from .semantic import SemanticError
from .types import tensor_ir_type


def _int_tile(b, x, what):
    x = S.to_tensor(b, x)
    if not x.dtype.is_int() or x.dtype.is_bool():
        raise SemanticError(f"{what} must hold integers, got {x.dtype}")
    return x


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
    if idx.dtype.primitive_bitwidth < 32:
        idx = S.cast(b, idx, core.uint32 if idx.dtype.is_int_unsigned() else core.int32)
    h = B.build_gather(b, s.handle, idx.handle, result_type=tensor_ir_type(s.dtype, idx.shape),
                       axis=a)
    return core.tensor(h, s.dtype, idx.shape)


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


