"""tile.scan: an inclusive scan along one axis, per thread, then across lanes, then warps.

Along the axis a thread's elements come in chunks of `spt` contiguous elements, one chunk per
repetition of the CTA tile; an element's logical index is `rep·cta_tile + (warp·lanes +
lane)·spt + e`, so the scan order is repetition, then warp, then lane, then element.  For
each repetition (and each coordinate of the other dimensions):

1. within the thread: the chunk is scanned sequentially (the thread's total is its last);
2. across the distinct lanes along the axis: an inclusive Hillis-Steele scan of the thread
   totals with shuffles up (`gpu.shuffle up`, or `down` for `reverse`), lanes that have no
   lane at the distance keeping their value; one more shuffle gives each lane the exclusive
   prefix of the lanes before it;
3. across the distinct warps along the axis: the last lane of each warp stores the warp's
   total in shared memory, and every thread combines the totals of the warps before its own,
   in order;
4. each element is combined with the prefix of everything before its thread: the carry of
   the earlier repetitions (their totals, combined in order), then the earlier warps, then
   the earlier lanes.

The combine function is associative, not necessarily commutative: earlier elements are
always its left operand, and with no identity element a missing prefix is skipped by a
`select` rather than combined with a neutral value.  `reverse` scans from the end: the same
steps over the mirrored order (elements, lanes, warps and repetitions counted from the end).
Replication is respected: when the tile is narrower along the axis than the threads laid
over it, threads hold copies; only the distinct lanes/warps take part (positions are taken
modulo their number), and copies compute the same results.
"""
from __future__ import annotations

import itertools
import math

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects import tile as T
from tilework.dialects.layout import Slice, axis_geometry, layout_of

from ..axis_info import elem_bytes
from ..registry import LoweringError, lower
from ..shared_memory import from_smem, regions, scratch, smem_gep, smem_type, to_smem
from .reduction import along_axis
from ..regs import Regs

_EQ, _NE, _UGE = 0, 1, 9


def _cmp(ctx, pred, a, b):
    return ctx.op1("arith.cmpi", [a, b], ctx.i1, {"predicate": ir.IntegerAttr.get(ctx.i64, pred)})


def _i32(ctx, name, a, b):
    return ctx.op1(name, [a, b], ctx.i32)


def _select(ctx, cond, a: list, b: list) -> list:
    """a where `cond` (an i1 value, or True) else b, element by element."""
    if cond is True:
        return list(a)
    return [ctx.op1("arith.select", [cond, x, y], x.type) for x, y in zip(a, b)]


def _then(ctx, fn, a, av, b, bv):
    """(a ∘ b, its validity) where either side may be absent.  A validity is True (present),
    False (absent) or an i1 value (present where true)."""
    if av is False:
        return b, bv
    if bv is False:
        return a, av
    c = ctx.inline_func(fn, list(a) + list(b))
    if av is True and bv is True:
        return c, True
    if av is True:
        return _select(ctx, bv, c, a), True
    if bv is True:
        return _select(ctx, av, c, b), True
    both = _select(ctx, bv, _select(ctx, av, c, b), a)
    return both, ctx.op1("arith.ori", [av, bv], ctx.i1)


def _position(ctx, ident, stride: int, count: int, reverse: bool):
    """(the raw distinct coordinate, the position in scan order) of this lane/warp along the
    axis: (ident / stride) % count, mirrored for `reverse`."""
    raw = ident
    if stride != 1:
        raw = _i32(ctx, "arith.divui", raw, ctx.const(stride))
    raw = _i32(ctx, "arith.remui", raw, ctx.const(count))
    pos = _i32(ctx, "arith.subi", ctx.const(count - 1), raw) if reverse else raw
    return raw, pos


def _totals(types, reps, rsize, warps):
    """(offsets, bytes) of the warp totals: [reps][rsize][warps] elements per operand."""
    return regions([reps * rsize * warps * elem_bytes(t) for t in types])


@scratch("tile.scan")
def _scan_scratch(op):
    """The warp totals of `_across_warps` (none when one warp spans the axis)."""
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    t = op.operands[0].type
    layout, shape = layout_of(t), T.shape_of(t)
    try:
        spt, _, _, warps, _ = axis_geometry(layout.linear(shape), axis)
    except ValueError:  # the rule rejects it
        return 0
    if warps == 1:
        return 0
    reps = layout.elems_per_thread(shape)[axis] // spt
    rsize = math.prod(shape[:axis] + shape[axis + 1:])
    return _totals([smem_type(T.element_type(v.type)) for v in op.operands], reps, rsize,
                   warps)[1]


@lower("tile.scan")
def _scan(ctx, op, args):
    reverse = bool(ir.IntegerAttr(op.attributes["reverse"]).value)
    axis, fn, srcs, lin, n = along_axis(op, args)
    src = srcs[0]
    shape, layout = src.shape, src.layout
    try:  # spt: elements of a chunk; lanes, warps: the distinct ones along the axis
        spt, lanes, lane_stride, warps, warp_stride = axis_geometry(lin, axis)
    except ValueError as e:
        raise LoweringError(f"cannot scan along axis {axis}: {e}") from None
    reps = src.per_thread[axis] // spt             # chunks (repetitions of the CTA tile)

    others = [range(c) for d, c in enumerate(src.per_thread) if d != axis]
    groups = list(itertools.product(*others))
    rep_order = list(reversed(range(reps))) if reverse else list(range(reps))
    elem_order = list(reversed(range(spt))) if reverse else list(range(spt))

    def coord(oc, k):
        c = list(oc)
        c.insert(axis, k)
        return tuple(c)

    # 1. within the thread: the inclusive scan of each chunk, and the chunk's total
    local, total = {}, {}
    for oc in groups:
        for r in range(reps):
            acc = None
            for e in elem_order:
                vals = [s[coord(oc, r * spt + e)] for s in srcs]
                acc = vals if acc is None else ctx.inline_func(fn, acc + vals)
                local[oc, r, e] = acc
            total[oc, r] = acc

    # 2. across lanes: Hillis-Steele over the thread totals, then the exclusive prefix
    lane_pre, lane_incl, lane_ok = {}, {}, False
    if lanes > 1:
        lane_raw, lane_pos = _position(ctx, ctx.lane_id(), lane_stride, lanes, reverse)
        direction = "down" if reverse else "up"
        ok = {}
        d = 1
        while d <= lanes - 1:
            ok[d] = _cmp(ctx, _UGE, lane_pos, ctx.const(d))
            d *= 2
        lane_ok = _cmp(ctx, _NE, lane_pos, ctx.const(0))
        for key, v in total.items():
            d = 1
            while d < lanes:
                other = [ctx.shuffle(x, d * lane_stride, direction) for x in v]
                v = _select(ctx, ok[d], ctx.inline_func(fn, other + v), v)
                d *= 2
            lane_incl[key] = v
            lane_pre[key] = [ctx.shuffle(x, lane_stride, direction) for x in v]

    # 3. across warps: warp totals through shared memory, combined in order
    warp_pre, warp_ok, rep_total = {}, False, {}
    if warps > 1:
        warp_pre, warp_ok, rep_total = _across_warps(
            ctx, fn, op, groups, reps, rep_order[-1], lanes, warps, lane_stride, warp_stride,
            reverse, lane_incl if lanes > 1 else total, layout, shape, axis)
    elif reps > 1:  # every thread needs each repetition's total: the last lane's inclusive
        if lanes > 1:
            off = _i32(ctx, "arith.muli", lane_raw if reverse else _i32(
                ctx, "arith.subi", ctx.const(lanes - 1), lane_raw), ctx.const(lane_stride))
            src_lane = _i32(ctx, "arith.subi" if reverse else "arith.addi", ctx.lane_id(), off)
            for (oc, r), v in lane_incl.items():
                if r != rep_order[-1]:  # the last repetition's total is needed by no one
                    rep_total[oc, r] = [ctx.shuffle(x, src_lane, "idx") for x in v]
        else:
            rep_total = total

    # 4. every element: (carry of earlier repetitions ∘ earlier warps ∘ earlier lanes) ∘ it
    out = [[None] * len(src.values) for _ in srcs]
    for oc in groups:
        carry = None
        for r in rep_order:
            pre, pv = (carry, True) if carry is not None else (None, False)
            if warps > 1:
                pre, pv = _then(ctx, fn, pre, pv, warp_pre[oc, r], warp_ok)
            if lanes > 1:
                pre, pv = _then(ctx, fn, pre, pv, lane_pre[oc, r], lane_ok)
            for e in elem_order:
                v = local[oc, r, e]
                if pv is not False:
                    v = _select(ctx, pv, ctx.inline_func(fn, pre + v), v)
                i = src.flat(coord(oc, r * spt + e))
                for j, x in enumerate(v):
                    out[j][i] = x
            if r != rep_order[-1]:
                t = rep_total[oc, r]
                carry = t if carry is None else ctx.inline_func(fn, carry + t)

    return [Regs(layout_of(res.type), shape, vals) for res, vals in zip(op.results, out)]


def _across_warps(ctx, fn, op, groups, reps, last_rep, lanes, warps, lane_stride, warp_stride,
                  reverse, warp_incl, layout, shape, axis):
    """Each warp's total (the inclusive value of its last lane in scan order) goes to shared
    memory at [rep][row-major index of the other coordinates][warp]; every thread reads the
    totals back and combines those of the warps before its own (in scan order), and the
    repetition's total (all of them).  Returns (warp prefix, its validity, repetition
    totals), keyed by (other coordinates, rep)."""
    rshape = shape[:axis] + shape[axis + 1:]
    rsize = 1
    for s in rshape:
        rsize *= s
    warp_raw, warp_pos = _position(ctx, ctx.warp_id(), warp_stride, warps, reverse)
    types = [smem_type(ctx.scalar_type(v.type)) for v in op.operands]
    offsets, off = _totals(types, reps, rsize, warps)
    smem = ctx.smem(off)
    i8 = ir.IntegerType.get_signless(8)
    bases = [smem_gep(ctx, smem, ctx.const(o), i8) for o in offsets]
    rlayout = Slice(axis, layout)
    ridx = {oc: ctx.linear_index(rlayout, rshape, oc) if rshape else ctx.const(0)
            for oc in groups}

    def slot(oc, r, w):
        row = _i32(ctx, "arith.addi", ctx.const(r * rsize), ridx[oc])
        return _i32(ctx, "arith.addi", _i32(ctx, "arith.muli", row, ctx.const(warps)), w)

    ctx.smem_begin()
    last = None
    if lanes > 1:  # only the warp's last lane (in scan order) holds its total
        lane_raw, _ = _position(ctx, ctx.lane_id(), lane_stride, lanes, False)
        last = _cmp(ctx, _EQ, lane_raw, ctx.const(0 if reverse else lanes - 1))
        if_op = scf.IfOp(last, [], has_else=False)
        ip = ir.InsertionPoint(if_op.then_block)
    else:
        ip = None

    def store_all():
        for (oc, r), v in warp_incl.items():
            s = slot(oc, r, warp_raw)
            for x, t, bp in zip(v, types, bases):
                ctx.create("llvm.store", [to_smem(ctx, x, t), smem_gep(ctx, bp, s, t)], [])
    if ip is not None:
        with ip:
            store_all()
            scf.YieldOp([])
    else:
        store_all()
    ctx.smem_publish()

    warp_ok = _cmp(ctx, _NE, warp_pos, ctx.const(0))
    after = [_cmp(ctx, _UGE, warp_pos, ctx.const(j + 1)) for j in range(warps - 1)]
    order = list(reversed(range(warps))) if reverse else list(range(warps))
    if reps == 1:  # the last warp's total is needed by no one
        order = order[:-1]
    warp_pre, rep_total = {}, {}
    for (oc, r), v in warp_incl.items():
        seq = []
        for w in order:
            s = slot(oc, r, ctx.const(w))
            seq.append([from_smem(ctx, ctx.op1("llvm.load", [smem_gep(ctx, bp, s, t)], t),
                                   x.type) for x, t, bp in zip(v, types, bases)])
        acc = seq[0]
        pre = acc                      # warps at position >= 1 see at least warp 0
        for j in range(1, warps - 1):  # position j + 1 sees the warps 0..j
            acc = ctx.inline_func(fn, acc + seq[j])
            pre = _select(ctx, after[j], acc, pre)
        warp_pre[oc, r] = pre
        if reps > 1 and r != last_rep:
            rep_total[oc, r] = ctx.inline_func(fn, acc + seq[warps - 1])
    return warp_pre, warp_ok, rep_total
