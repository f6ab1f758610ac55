"""Ops that create or reshape tiles: make_range, splat, broadcast, constants, layout conversion."""
from __future__ import annotations


import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import layout_of

from ..registry import LoweringError, lower
from ..regs import Regs


def _new_regs(ctx, result: ir.Value, values_for):
    """A Regs for `result` whose element at each per-thread coordinate is values_for(coord)."""
    layout = layout_of(result.type)
    if layout is None:
        raise LoweringError(f"tile {result.type} has no layout; run tilegpu-assign-layouts first")
    shape = T.shape_of(result.type)
    per_thread = layout.elems_per_thread(shape)
    import itertools
    vals = [values_for(c) for c in itertools.product(*[range(n) for n in per_thread])]
    return Regs(layout, shape, vals)


@lower("tile.make_range")
def _make_range(ctx, op, args):
    start = ir.IntegerAttr(op.attributes["start"]).value
    r = op.results[0]
    layout, shape = layout_of(r.type), T.shape_of(r.type)

    def value(coord):
        v = ctx.logical_index(layout, shape, 0, coord[0])
        return ctx.op1("arith.addi", [v, ctx.const(start)], ctx.i32) if start else v
    return [_new_regs(ctx, r, value)]


@lower("tile.splat")
def _splat(ctx, op, args):
    return [_new_regs(ctx, op.results[0], lambda c: args[0])]


@lower("tile.broadcast")
def _broadcast(ctx, op, args):
    src = args[0]
    r = op.results[0]
    if layout_of(r.type) != src.layout:
        raise LoweringError("broadcast between different layouts needs a convert_layout first")
    sshape = src.shape
    rshape = T.shape_of(r.type)
    return [_new_regs(ctx, r, lambda c: src[tuple(
        k if sshape[d] == rshape[d] else 0 for d, k in enumerate(c))])]


@lower("arith.constant")
def _constant(ctx, op, args):
    t = op.results[0].type
    if not T.is_tensor(t):
        return [ctx.op1("arith.constant", [], t, {"value": op.attributes["value"]})]
    attr = ir.DenseElementsAttr(op.attributes["value"])
    if not attr.is_splat:
        raise LoweringError("non-splat tile constants are not supported yet")
    scalar = ctx.op1("arith.constant", [], T.element_type(t), {"value": attr.get_splat_value()})
    return [_new_regs(ctx, op.results[0], lambda c: scalar)]
