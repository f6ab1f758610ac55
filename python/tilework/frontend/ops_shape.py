"""Implementations of the shape builtins.  `expand_dims` and `trans` keep the elements in
registers (their layouts are derived from the operand's); `reshape` goes through memory."""
from __future__ import annotations

import math

from tilework.dialects import builders as B

from ..language.core import constexpr, tensor
from . import semantic as S
from .ops_core import const, shape_varargs, impl
from .semantic import SemanticError, expand_dims_1
from .types import tensor_ir_type


def normalize_axis(axis, rank, what="axis"):
    a = const(axis, what)
    if not isinstance(a, int):
        raise SemanticError(f"{what} must be a constexpr int, got {a!r}")
    if not -rank <= a < rank:
        raise SemanticError(f"invalid axis {a}: {what} {a} is out of range for a tile of rank "
                            f"{rank}")  # (Triton's words first)
    return a % rank


@impl
def expand_dims(b, input, axis):
    x = S.to_tensor(b, input)
    axes = const(axis, "axis")
    axes = list(axes) if isinstance(axes, (tuple, list)) else [axes]
    new_rank = len(x.shape) + len(axes)
    axes = sorted(normalize_axis(a, new_rank) for a in axes)
    if len(set(axes)) != len(axes):
        raise SemanticError(f"duplicate axes, normalized axes = {axes}: expand_dims axes "
                            f"repeat")  # (Triton's words first)
    for a in axes:
        x = expand_dims_1(b, x, a)
    return x


def _shape_arg(shape):
    shape = const(shape, "shape")
    if isinstance(shape, int):
        shape = (shape,)
    return tuple(int(const(s, "shape")) for s in shape)


@impl
def reshape(b, input, *shape, can_reorder=False):
    x = S.to_tensor(b, input)
    shape = _shape_arg(shape_varargs(shape))
    if math.prod(shape) != math.prod(x.shape or (1,)):
        raise SemanticError(f"reshape of {list(x.shape)} ({math.prod(x.shape or (1,))} elements) "
                            f"to {list(shape)} ({math.prod(shape)} elements)")
    for s in shape:
        if s <= 0 or s & (s - 1):
            raise SemanticError(f"reshape to {list(shape)}: every dimension must be a power of two")
    if shape == x.shape:
        return x
    if not x.shape:
        return S.splat(b, x, shape)
    h = B.build_reshape(b, x.handle, result_type=tensor_ir_type(x.dtype, shape))
    return tensor(h, x.dtype, shape)


@impl
def view(b, input, *shape):
    return reshape(b, input, shape_varargs(shape))


@impl
def ravel(b, x, can_reorder=False):  # can_reorder: accepted (Triton 3.6); order kept
    x = S.to_tensor(b, x)
    return reshape(b, x, (math.prod(x.shape),)) if x.shape else x


def _perm(dims, rank, default):
    dims = [const(d, "dims") for d in dims]
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = [const(d, "dims") for d in dims[0]]
    if not dims:
        dims = default
    if sorted(dims) != list(range(rank)):
        raise SemanticError(f"permutation {list(dims)} is not a permutation of 0..{rank - 1}")
    return list(dims)


def _transpose(b, x, perm):
    if perm == list(range(len(x.shape))):
        return x
    shape = [x.shape[p] for p in perm]
    h = B.build_trans(b, x.handle, result_type=tensor_ir_type(x.dtype, shape), order=perm)
    return tensor(h, x.dtype, shape)


@impl
def trans(b, input, *dims):
    x = S.to_tensor(b, input)
    return _transpose(b, x, _perm(dims, len(x.shape), list(reversed(range(len(x.shape))))))


@impl
def permute(b, input, *dims):
    x = S.to_tensor(b, input)
    if not dims:
        raise SemanticError("permute needs the dimension order")
    return _transpose(b, x, _perm(dims, len(x.shape), None))


@impl
def broadcast(b, input, other):
    x, y = S.to_tensor(b, input), S.to_tensor(b, other)
    return S.broadcast_pair(b, x, y)


def subscript(b, x: tensor, idx):
    """`x[None, :]`-style indexing, Triton's rule: the item at place i, if None, inserts a
    size-1 dimension at axis i; `:` moves on, past the tile's rank too (`p[None, None, :]` of
    a scalar is 1 x 1, as Triton's test_reduce stores through)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    for axis, it in enumerate(items):
        it = it.value if isinstance(it, constexpr) else it
        if it is None:
            normalize_axis(axis, len(x.shape) + 1)  # (Triton's expand_dims: at most the rank)
            x = expand_dims_1(b, x, axis)
        elif not (isinstance(it, slice) and it == slice(None, None, None)):
            raise SemanticError(f"unsupported tensor index: tiles are indexed only with None and "
                                f"`:`, got {it!r}")  # (Triton's words first)
    return x
