"""Moving elements between layouts: convert_layout, expand_dims, trans, reshape.

expand_dims and trans only relabel registers (their layouts are derived so that the same
thread holds the same elements).  convert_layout and reshape go through shared memory: every
thread writes its elements at their row-major index, a barrier, every thread reads the
elements its new layout gives it, and a barrier before the buffer is reused.
"""
from __future__ import annotations

import math

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import Slice, layout_of

from ..registry import LoweringError, lower
from ..shared_memory import elems_bytes, from_smem, scratch, smem_gep, smem_type, to_smem


def _regs(values_layout, shape, values):
    from ..to_llvm import Regs
    return Regs(values_layout, shape, values)


def through_smem(ctx, src, src_shape, dst_layout, dst_shape, scalar_type):
    """Moves the tile `src` (Regs) to `dst_layout`: written at row-major indices of
    `src_shape`, read back at row-major indices of `dst_shape` (equal numbers of elements)."""
    st = smem_type(scalar_type)
    base = ctx.smem(elems_bytes(math.prod(src_shape), scalar_type))
    ctx.smem_begin()
    for coord in src.coords():
        idx = ctx.linear_index(src.layout, src_shape, coord)
        p = smem_gep(ctx, base, idx, st)
        ctx.create("llvm.store", [to_smem(ctx, src[coord], st), p], [])
    ctx.smem_publish()
    per_thread = dst_layout.elems_per_thread(dst_shape)
    vals = []
    import itertools
    for coord in itertools.product(*[range(n) for n in per_thread]):
        idx = ctx.linear_index(dst_layout, dst_shape, coord)
        p = smem_gep(ctx, base, idx, st)
        vals.append(from_smem(ctx, ctx.op1("llvm.load", [p], st), scalar_type))
    return _regs(dst_layout, dst_shape, vals)


@scratch("tilegpu.convert_layout")
def _convert_layout_scratch(op):
    src, rt = op.operands[0].type, op.results[0].type
    if layout_of(src) == layout_of(rt):
        return 0
    return elems_bytes(math.prod(T.shape_of(rt)), T.element_type(rt))


@scratch("tile.reshape")
def _reshape_scratch(op):
    rt = op.results[0].type
    if not T.is_tensor(rt):
        return 0
    src = op.operands[0].type
    return elems_bytes(math.prod(T.shape_of(src)), T.element_type(rt))


@lower("tilegpu.convert_layout")
def _convert_layout(ctx, op, args):
    src = args[0]
    dst = layout_of(op.results[0].type)
    if dst == src.layout:
        return [src]
    shape = T.shape_of(op.results[0].type)
    return [through_smem(ctx, src, shape, dst, shape, ctx.scalar_type(op.results[0].type))]


@lower("tile.reshape")
def _reshape(ctx, op, args):
    src = args[0]
    rt = op.results[0].type
    if not T.is_tensor(rt):  # a single element: every thread holds it
        return [src.values[0]]
    return [through_smem(ctx, src, src.shape, layout_of(rt), T.shape_of(rt),
                         ctx.scalar_type(rt))]


@lower("tile.expand_dims")
def _expand_dims(ctx, op, args):
    src = args[0]
    dst = layout_of(op.results[0].type)
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    if not (isinstance(src.layout, Slice) and src.layout.dim == axis
            and src.layout.parent == dst):
        raise LoweringError("expand_dims needs its operand in a slice of the result's layout; "
                            "run tilegpu-assign-layouts")
    return [_regs(dst, T.shape_of(op.results[0].type), src.values)]


@lower("tile.trans")
def _trans(ctx, op, args):
    src = args[0]
    perm = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
    dst = layout_of(op.results[0].type)
    shape = T.shape_of(op.results[0].type)
    out = _regs(dst, shape, [None] * len(src.values))
    for c in out.coords():
        sc = [0] * len(c)
        for i, p in enumerate(perm):
            sc[p] = c[i]
        out.values[out.flat(c)] = src[tuple(sc)]
    return [out]
