"""tile.reduce: within each thread, then across the lanes of a warp (xor shuffles), then
across warps (shared memory).  The combine function is inlined at every step.

Replication is respected: when the tile is narrower along the axis than the threads laid over
it, threads hold copies, and only the distinct lanes/warps are combined (a butterfly over
aligned groups of distinct lanes gives every lane the full result).
"""
from __future__ import annotations

import itertools

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import Slice, base_layout, layout_of

from ..axis_info import elem_bytes
from ..registry import lower
from ..shared_memory import from_smem, regions, scratch, smem_gep, smem_type, to_smem


def _combine(ctx, fn, a: list, b: list) -> list:
    return ctx.inline_func(fn, list(a) + list(b))


def along_axis(op, args):
    """What reduce and scan start from: (axis, combine function, operands, the root blocked
    layout, its dimension under the axis, the axis length, elements per thread chunk)."""
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    fn = ir.FlatSymbolRefAttr(op.attributes["combine"]).value
    srcs = list(args)
    base, dmap = base_layout(srcs[0].layout)
    pa = dmap[axis]
    n = srcs[0].shape[axis]
    return axis, fn, srcs, base, pa, n, min(base.size_per_thread[pa], n)


def cross_warps(base, pa, n, spt) -> int:
    """The distinct warps along the reduced axis (root dimension `pa`, length `n`)."""
    return max(1, min(base.warps_per_cta[pa], n // (spt * base.threads_per_warp[pa])))


def _partials(types, warps, rsize):
    """(offsets, bytes) of the cross-warp partials: [warps][rsize] elements per result."""
    return regions([warps * rsize * elem_bytes(t) for t in types])


@scratch("tile.reduce")
def _reduce_scratch(op):
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    t = op.operands[0].type
    shape = T.shape_of(t)
    base, dmap = base_layout(layout_of(t))
    pa, n = dmap[axis], shape[axis]
    warps = cross_warps(base, pa, n, min(base.size_per_thread[pa], n))
    if warps == 1:
        return 0
    rsize = 1
    for i, s in enumerate(shape):
        rsize *= s if i != axis else 1
    return _partials([smem_type(T.element_type(r.type)) for r in op.results], warps, rsize)[1]


@lower("tile.reduce")
def _reduce(ctx, op, args):
    from ..to_llvm import Regs
    axis, fn, srcs, base, pa, n, spt = along_axis(op, args)
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
    lanes = max(1, min(base.threads_per_warp[pa], n // spt))
    stride = base.strides(pa)[0]
    step = 1
    while step < lanes:
        for oc, acc in groups.items():
            other = [ctx.shuffle_xor(v, stride * step) for v in acc]
            groups[oc] = _combine(ctx, fn, acc, other)
        step *= 2

    # 3. across warps: partials through shared memory, combined in warp order
    warps = cross_warps(base, pa, n, spt)
    if warps > 1:
        groups = _across_warps(ctx, op, fn, groups, base, pa, warps, shape, axis, layout)

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


def _across_warps(ctx, op, fn, groups, base, pa, warps, shape, axis, layout):
    rshape = shape[:axis] + shape[axis + 1:]
    rsize = 1
    for s in rshape:
        rsize *= s
    wstride = base.strides(pa)[1]
    warp_a = ctx.op1("arith.remui", [ctx.op1("arith.divui", [ctx.warp_id(), ctx.const(wstride)],
                                             ctx.i32), ctx.const(warps)], ctx.i32)  # copies of warps share slots
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
