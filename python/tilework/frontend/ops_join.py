"""Implementations of `join`, `split`, `interleave` and `cat` (Triton 3.6 semantics).

`join` adds a last dimension of size 2 and `split` removes it; both keep the elements in
registers (the layouts are derived so that each thread holds both halves: see
`lowering/rules/shape_join.py`).  `interleave` is `join` then `reshape`.  `cat` puts two 1-D
tiles end to end (Triton requires `can_reorder=True`; the order here is always the plain
concatenation).
"""
from __future__ import annotations

from tilework.dialects import builders as B

from ..language.core import tensor
from . import semantic as S
from .ops_core import const, impl
from .ops_shape import reshape
from .semantic import SemanticError, expand_dims_1
from .types import tensor_ir_type


def _pair(b, a, c, what):
    """Both operands as tensors of one dtype and shape (Python scalars typed after the other
    operand, shapes broadcast as Triton's broadcast_impl_value)."""
    x, y = S.weak_pair(b, a, c)
    if x.dtype != y.dtype:
        raise SemanticError(f"{what} operands must have the same dtype, got {x.dtype} and "
                            f"{y.dtype}")
    try:
        return S.broadcast_pair(b, x, y)
    except SemanticError as e:
        raise SemanticError(f"{e} in {what}") from None


@impl
def join(b, a, b_):
    x, y = _pair(b, a, b_, "join")
    scalars = not x.shape
    if scalars:  # two scalars: joined as [1] tiles, then reshaped to [2] (as Triton)
        x, y = S.splat(b, x, (1,)), S.splat(b, y, (1,))
    shape = x.shape + (2,)
    h = B.build_join(b, x.handle, y.handle, result_type=tensor_ir_type(x.dtype, shape))
    r = tensor(h, x.dtype, shape)
    return reshape(b, r, (2,)) if scalars else r


@impl
def split(b, a):
    x = S.to_tensor(b, a)
    if not x.shape or x.shape[-1] != 2:
        raise SemanticError(f"split needs a tile whose last dimension is 2, got shape "
                            f"{list(x.shape)}")
    rank1 = len(x.shape) == 1
    if rank1:  # [2] -> [1, 2] -> two [1] tiles -> two scalars (as Triton)
        x = expand_dims_1(b, x, 0)
    shape = x.shape[:-1]
    if getattr(b, "is_interpreter", False):
        import numpy as np
        v = np.asarray(x.handle)
        lo, hi = b.wrap(v[..., 0], x.dtype), b.wrap(v[..., 1], x.dtype)
    else:
        rt = tensor_ir_type(x.dtype, shape)
        h0, h1 = B.build_split(b, x.handle, lhs_type=rt, rhs_type=rt)
        lo, hi = tensor(h0, x.dtype, shape), tensor(h1, x.dtype, shape)
    if rank1:
        lo, hi = reshape(b, lo, ()), reshape(b, hi, ())
    return lo, hi


@impl
def interleave(b, a, b_):
    c = join(b, a, b_)
    if len(c.shape) == 1:  # two scalars
        return c
    return reshape(b, c, c.shape[:-2] + (2 * c.shape[-2],))


@impl
def cat(b, input, other, can_reorder=False):
    if not const(can_reorder, "can_reorder"):
        raise SemanticError("current implementation of `cat` always may reorder elements")
    x, y = S.to_tensor(b, input), S.to_tensor(b, other)
    if len(x.shape) != 1 or x.shape != y.shape:
        raise SemanticError(f"cat takes two 1-D tiles of one shape, got {list(x.shape)} and "
                            f"{list(y.shape)}")
    if x.dtype != y.dtype:
        raise SemanticError(f"cat operands must have the same dtype, got {x.dtype} and "
                            f"{y.dtype}")
    shape = (2 * x.shape[0],)
    h = B.build_cat(b, x.handle, y.handle, result_type=tensor_ir_type(x.dtype, shape))
    return tensor(h, x.dtype, shape)
