"""Implementations of the reduction builtins.

Every reduction is one `tile.reduce` op whose region combines two elements (or two tuples of
elements); `sum`, `max`, `argmax`, ... only supply the combine body.  Under the interpreter the
same combine body runs vectorized over numpy halves of the tile (a tree reduction).
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects.opdefs.shape import MAX_OPERANDS  # declared with the ops

from ..language import core
from ..language.core import tensor
from . import semantic as S
from .ops_core import arange, const, impl
from .ops_shape import normalize_axis
from .semantic import SemanticError, expand_dims_1
from .types import tensor_ir_type, to_ir


def check_operands(inputs: list, what: str) -> int:
    """1 to MAX_OPERANDS tiles of one shape (reduce, scan); returns how many."""
    n = len(inputs)
    if not 1 <= n <= MAX_OPERANDS:
        raise SemanticError(f"{what} takes 1 to {MAX_OPERANDS} tiles, got {n}")
    if any(t.shape != inputs[0].shape for t in inputs):
        raise SemanticError(f"{what} operands have different shapes: "
                            f"{[list(t.shape) for t in inputs]}")
    return n


def reduce_tiles(b, inputs: list, axis: int, combine) -> list:
    """Reduces same-shape `inputs` along `axis` with `combine(lhs, rhs) -> list` (lists of
    scalar tensors, one per input)."""
    check_operands(inputs, "reduce")
    shape = inputs[0].shape
    rshape = shape[:axis] + shape[axis + 1:]
    if getattr(b, "is_interpreter", False):
        return _interpret_reduce(b, inputs, axis, combine)
    fn_name = combine_function(b, inputs, combine)
    res = B.build_reduce(b, [t.handle for t in inputs],
                         result_types=[tensor_ir_type(t.dtype, rshape) for t in inputs],
                         axis=axis, combine=fn_name)
    return [tensor(r, t.dtype, rshape) for r, t in zip(res, inputs)]


def combine_function(b, inputs, combine) -> str:
    """Emits `combine` as a private func.func of two tuples of scalars returning one tuple;
    returns its symbol name."""
    from mlir.dialects import func as func_d
    elems = [to_ir(t.dtype) for t in inputs]
    n = len(inputs)
    b.combine_count = getattr(b, "combine_count", 0) + 1
    name = f"{b.kernel_name}__combine{b.combine_count}"
    with ir.InsertionPoint(b.module.body), b.loc:
        f = func_d.FuncOp(name, ir.FunctionType.get(elems + elems, elems))
        f.sym_visibility = ir.StringAttr.get("private")
        block = f.add_entry_block()
    with ir.InsertionPoint(block):
        lhs = [tensor(block.arguments[i], t.dtype) for i, t in enumerate(inputs)]
        rhs = [tensor(block.arguments[n + i], t.dtype) for i, t in enumerate(inputs)]
        outs = _check_combined(b, combine(lhs, rhs), inputs)
        with b.loc:
            func_d.ReturnOp([o.handle for o in outs])
    return name


def _check_combined(b, outs, inputs):
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    if len(outs) != len(inputs):
        raise SemanticError(f"the combine function returned {len(outs)} values for "
                            f"{len(inputs)} reduced tiles")
    res = []
    for o, t in zip(outs, inputs):
        o = S.to_tensor(b, o, hint=t.dtype)
        if o.shape:
            raise SemanticError("the combine function must return scalars")
        if o.dtype != t.dtype:
            raise SemanticError(f"the combine function returned {o.dtype} for a tile of "
                                f"{t.dtype}")
        res.append(o)
    return res


def _interpret_reduce(b, inputs, axis, combine):
    """Tree reduction over numpy halves, running the same combine body vectorized."""
    import numpy as np
    vals = [np.asarray(t.handle) for t in inputs]
    while vals[0].shape[axis] > 1:
        h = vals[0].shape[axis] // 2
        lo = [b.wrap(np.take(v, range(h), axis=axis), t.dtype) for v, t in zip(vals, inputs)]
        hi = [b.wrap(np.take(v, range(h, 2 * h), axis=axis), t.dtype)
              for v, t in zip(vals, inputs)]
        outs = combine(lo, hi)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        vals = [np.asarray(S.broadcast_to(b, S.to_tensor(b, o, hint=t.dtype), lo[0].shape).handle)
                for o, t in zip(outs, inputs)]
    return [b.wrap(np.take(v, 0, axis=axis), t.dtype) for v, t in zip(vals, inputs)]


# ---- the builtin reductions ------------------------------------------------------------------

def _reduce_all_axes(b, inputs, axis, keep_dims, combine):
    """`axis=None` reduces every dimension (last first); keep_dims keeps size-1 dims."""
    x = inputs[0]
    if axis is None:
        outs = inputs
        for a in reversed(range(len(x.shape))):
            outs = reduce_tiles(b, outs, a, combine)
        if keep_dims:
            outs = [_keep(b, o, len(x.shape)) for o in outs]
        return outs
    if not x.shape:
        raise SemanticError("cannot reduce a scalar along an axis")
    a = normalize_axis(axis, len(x.shape))
    outs = reduce_tiles(b, inputs, a, combine)
    if keep_dims:
        outs = [expand_dims_1(b, o, a) for o in outs]
    return outs


def _keep(b, x, rank):
    for _ in range(rank):
        x = expand_dims_1(b, x, 0)
    return x


def as_tile(b, input, what):
    x = S.to_tensor(b, input)
    if not x.shape:
        raise SemanticError(f"{what} needs a tile, got a scalar")
    if x.dtype.is_ptr():
        raise SemanticError(f"{what} of pointers is not supported")
    return x


def _max_combine(b, kind):
    def combine(lhs, rhs):
        x, y = lhs[0], rhs[0]
        if x.dtype.is_floating():
            name = "arith.maxnumf" if kind == "max" else "arith.minnumf"
            return [tensor(b.create1(name, [x.handle, y.handle], x.handle.type), x.dtype, x.shape)]
        return [S.binary(b, "maximum" if kind == "max" else "minimum", x, y)]
    return combine


def _arg_combine(b, kind, tie_break_left):
    """(value, index) pairs: keep the larger (smaller) value; on ties the smaller index."""
    def combine(lhs, rhs):
        (v0, i0), (v1, i1) = lhs, rhs
        better = S.compare(b, "gt" if kind == "max" else "lt", v0, v1)
        tie = S.compare(b, "eq", v0, v1)
        first = S.compare(b, "lt" if tie_break_left else "gt", i0, i1)
        if v0.dtype.is_floating():  # a NaN wins, as in numpy's argmax
            nan0 = S.compare(b, "ne", v0, v0)
            better = S.binary(b, "or", better, nan0)
        take0 = S.binary(b, "or", better, S.binary(b, "and", tie, first))
        return [S.where(b, take0, v0, v1), S.where(b, take0, i0, i1)]
    return combine


def _indices(b, x, axis):
    """int32 indices of `x`'s elements along `axis` (axis None: the flat index)."""
    idx = None
    shape = x.shape
    dims = range(len(shape)) if axis is None else [normalize_axis(axis, len(shape))]
    stride = 1
    for d in reversed(list(dims)):
        r = arange(b, 0, shape[d])
        for _ in range(d):
            r = expand_dims_1(b, r, 0)
        for _ in range(len(shape) - d - 1):
            r = expand_dims_1(b, r, len(r.shape))
        r = S.broadcast_to(b, r, shape)
        if stride != 1:
            r = S.binary(b, "mul", r, stride)
        idx = r if idx is None else S.binary(b, "add", idx, r)
        stride *= shape[d]
    return idx


@impl
def reduce(b, input, axis, combine_fn, keep_dims=False):
    inputs = list(input) if isinstance(input, (tuple, list)) else [input]
    inputs = [as_tile(b, t, "reduce") for t in inputs]
    inline = getattr(b, "inline_jit", None)

    def combine(lhs, rhs):
        args = (lhs + rhs) if len(inputs) > 1 else [lhs[0], rhs[0]]
        if getattr(b, "is_interpreter", False):
            out = combine_fn.fn(*args) if hasattr(combine_fn, "fn") else combine_fn(*args)
        elif inline is not None:
            out = inline(combine_fn, args)
        else:
            raise SemanticError("reduce needs a @jit combine function")
        return list(out) if isinstance(out, (tuple, list)) else [out]
    outs = _reduce_all_axes(b, inputs, const(axis, "axis"), const(keep_dims, "keep_dims"),
                            combine)
    return tuple(outs) if isinstance(input, (tuple, list)) else outs[0]


@impl
def sum(b, input, axis=None, keep_dims=False, dtype=None):
    x = as_tile(b, input, "sum")
    dtype = const(dtype, "dtype")
    if dtype is None:
        if x.dtype.is_bool() or (x.dtype.is_int_signed() and x.dtype.primitive_bitwidth < 32):
            dtype = core.int32
        elif x.dtype.is_int_unsigned() and x.dtype.primitive_bitwidth < 32:
            dtype = core.uint32
    if dtype is not None:
        x = S.cast(b, x, dtype)
    return _reduce_all_axes(b, [x], const(axis, "axis"), const(keep_dims, "keep_dims"),
                            lambda l, r: [S.binary(b, "add", l[0], r[0])])[0]


def _minmax(b, kind, input, axis, return_indices, tie_break_left, keep_dims):
    x = as_tile(b, input, kind)
    axis, keep_dims = const(axis, "axis"), const(keep_dims, "keep_dims")
    if x.dtype.is_bf16():  # as Triton: bf16 compares in fp32
        x = S.cast(b, x, core.float32)
    if const(return_indices, "return_indices"):
        idx = _indices(b, x, axis)
        v, i = _reduce_all_axes(b, [x, idx], axis, keep_dims,
                                _arg_combine(b, kind, const(tie_break_left, "tie_break_left")))
        return v, i
    if x.dtype.primitive_bitwidth < 32:  # as Triton: narrow values reduce in 32 bits
        x = S.cast(b, x, core.float32 if x.dtype.is_floating() else
                   (core.uint32 if x.dtype.is_int_unsigned() else core.int32))
    return _reduce_all_axes(b, [x], axis, keep_dims, _max_combine(b, kind))[0]


@impl
def max(b, input, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False):
    return _minmax(b, "max", input, axis, return_indices, return_indices_tie_break_left,
                   keep_dims)


@impl
def min(b, input, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False):
    return _minmax(b, "min", input, axis, return_indices, return_indices_tie_break_left,
                   keep_dims)


@impl
def argmax(b, input, axis, tie_break_left=True, keep_dims=False):
    return _minmax(b, "max", input, axis, True, tie_break_left, keep_dims)[1]


@impl
def argmin(b, input, axis, tie_break_left=True, keep_dims=False):
    return _minmax(b, "min", input, axis, True, tie_break_left, keep_dims)[1]


@impl
def xor_sum(b, input, axis=None, keep_dims=False):
    x = as_tile(b, input, "xor_sum")
    if not x.dtype.is_int():
        raise SemanticError(f"xor_sum needs integers, got {x.dtype}")
    return _reduce_all_axes(b, [x], const(axis, "axis"), const(keep_dims, "keep_dims"),
                            lambda l, r: [S.binary(b, "xor", l[0], r[0])])[0]
