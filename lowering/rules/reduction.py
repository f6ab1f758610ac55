"""tile.reduce: within each thread, then across the lanes of a warp (xor shuffles), then
across warps (shared memory).  The combine function is inlined at every step.

Replication is respected: when the tile is narrower along the axis than the threads laid over
it, threads hold copies, and only the distinct lanes/warps are combined (a butterfly over
aligned groups of distinct lanes gives every lane the full result).
"""
from __future__ import annotations

import itertools
import math

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import Slice, dim_bits, layout_of

from ..axis_info import elem_bytes
from ..registry import LoweringError, lower
from ..shared_memory import from_smem, regions, scratch, smem_gep, smem_type, to_smem
from ..regs import Regs


def _combine(ctx, fn, a: list, b: list) -> list:
    return ctx.inline_func(fn, list(a) + list(b))


def along_axis(op, args):
    """What reduce and scan start from: (axis, combine function, operands, the operands'
    linear layout, the axis length)."""
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    fn = ir.FlatSymbolRefAttr(op.attributes["combine"]).value
    srcs = list(args)
    return axis, fn, srcs, srcs[0].layout.linear(srcs[0].shape), srcs[0].shape[axis]


def axis_bits(lin, in_dim, axis):
    """The lane (warp) bits whose basis moves along `axis`: the distinct lanes (warps)."""
    try:
        return dim_bits(lin, in_dim, axis)
    except ValueError as e:
        raise LoweringError(f"cannot reduce along axis {axis}: {e}") from None


def _partials(types, warps, rsize):
    """(offsets, bytes) of the cross-warp partials: [warps][rsize] elements per result."""
    return regions([warps * rsize * elem_bytes(t) for t in types])


@scratch("tile.reduce")
def _reduce_scratch(op):
    """The cross-warp partials of `_across_warps` (none when one warp spans the axis)."""
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    t = op.operands[0].type
    shape = T.shape_of(t)
    try:
        wbits = dim_bits(layout_of(t).linear(shape), "warp", axis)
    except ValueError:  # the rule rejects it
        return 0
    if not wbits:
        return 0
    rsize = math.prod(shape[:axis] + shape[axis + 1:])
    return _partials([smem_type(T.element_type(r.type)) for r in op.results],
                     1 << len(wbits), rsize)[1]


@lower("tile.reduce")
def _reduce(ctx, op, args):
    axis, fn, srcs, lin, n = along_axis(op, args)
    src = srcs[0]
    shape, layout = src.shape, src.layout

    # 1. within the thread: combine along the axis, one accumulator per other coordinate
    others = [range(c) for d, c in enumerate(src.per_thread) if d != axis]
    groups = {}
    for oc in itertools.product(*others):
        acc = None
        for k in range(src.per_thread[axis]):
            coord = list(oc)
            coord.insert(axis, k)
            vals = [s[tuple(coord)] for s in srcs]
            acc = vals if acc is None else _combine(ctx, fn, acc, vals)
        groups[oc] = acc

    # 2. across lanes: xor butterflies over the distinct lanes along the axis
    for bit in axis_bits(lin, "lane", axis):
        for oc, acc in groups.items():
            other = [ctx.shuffle_xor(v, 1 << bit) for v in acc]
            groups[oc] = _combine(ctx, fn, acc, other)

    # 3. across warps: partials through shared memory, combined in warp order
    wbits = axis_bits(lin, "warp", axis)
    if wbits:
        groups = _across_warps(ctx, op, fn, groups, wbits, shape, axis, layout)

    results = []
    rshape = shape[:axis] + shape[axis + 1:]
    for i, r in enumerate(op.results):
        if not T.is_tensor(r.type):
            results.append(groups[()][i])
            continue
        out = Regs(layout_of(r.type), rshape, [None] * len(groups))
        for oc, acc in groups.items():
            out.values[out.flat(oc)] = acc[i]
        results.append(out)
    return results


def _across_warps(ctx, op, fn, groups, wbits, shape, axis, layout):
    rshape = shape[:axis] + shape[axis + 1:]
    rsize = 1
    for s in rshape:
        rsize *= s
    warps = 1 << len(wbits)
    # this warp's index among the distinct warps along the axis (copies share slots)
    lane_bits = ctx.warp_size.bit_length() - 1
    warp_a = ctx.gather_bits(tuple((lane_bits + b, 1 << j) for j, b in enumerate(wbits)))
    types = [smem_type(v.type) for v in next(iter(groups.values()))]
    # one region per reduced operand: [warps][rsize] elements each
    offsets, off = _partials(types, warps, rsize)
    smem = ctx.smem(off)
    i8 = ir.IntegerType.get_signless(8)
    bases = [smem_gep(ctx, smem, ctx.const(o), i8) for o in offsets]
    # the reduced tile's row-major index of each group, from the operand's layout
    rlayout = Slice(axis, layout)
    ctx.smem_begin()
    idx = {}
    for oc in groups:
        idx[oc] = ctx.linear_index(rlayout, rshape, oc) if rshape else ctx.const(0)
    for oc, acc in groups.items():
        slot = ctx.op1("arith.addi", [ctx.op1("arith.muli", [warp_a, ctx.const(rsize)], ctx.i32),
                                      idx[oc]], ctx.i32)
        for v, t, bptr in zip(acc, types, bases):
            ctx.create("llvm.store", [to_smem(ctx, v, t), smem_gep(ctx, bptr, slot, t)], [])
    ctx.smem_publish()
    out = {}
    for oc, acc in groups.items():
        total = None
        for w in range(warps):
            slot = ctx.op1("arith.addi", [ctx.const(w * rsize), idx[oc]], ctx.i32)
            vals = [from_smem(ctx, ctx.op1("llvm.load", [smem_gep(ctx, bptr, slot, t)], t),
                               v.type)
                    for v, t, bptr in zip(acc, types, bases)]
            total = vals if total is None else _combine(ctx, fn, total, vals)
        out[oc] = total
    return out
