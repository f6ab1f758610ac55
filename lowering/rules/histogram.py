"""Lowering rules of `tile.histogram` (tl.histogram) and `tile.gather` (tl.gather), both
through shared memory.

histogram: the bins live in shared memory.

Every thread zeroes its share of the bins; a barrier; each element whose value is a bin (one
unsigned compare: negative values are huge) and whose mask bit is set adds one to its bin
with a shared-memory atomic (`atom.shared.add` / `ds_add_u32`), issued by the owning thread
only where the layout holds copies; a barrier; each thread reads the counts its result
elements need.  n elements cost n/threads atomics a thread, whatever the number of bins."""
from __future__ import annotations

import itertools
import math

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects.layout import layout_of
from tilework.dialects import tile as T

from ..registry import lower
from ..regs import Regs
from ..shared_memory import elems_bytes, from_smem, scratch, smem_gep, smem_type, to_smem
from .atomic import SYNCSCOPE, owner_predicate


@scratch("tile.histogram")
def _histogram_scratch(op):
    return 4 * ir.IntegerAttr(op.attributes["num_bins"]).value


def _when(ctx, pred, body):
    """body() under `pred` (always when None)."""
    if pred is None:
        body()
        return
    if_op = scf.IfOp(pred, [], has_else=False)
    with ir.InsertionPoint(if_op.then_block):
        body()
        scf.YieldOp([])


def _and(ctx, a, b):
    if a is None or b is None:
        return b if a is None else a
    return ctx.op1("arith.andi", [a, b], ctx.i1)


@lower("tile.histogram")
def _histogram(ctx, op, args):
    src = args[0]
    mask = args[1] if len(args) > 1 else None
    nb = ir.IntegerAttr(op.attributes["num_bins"]).value
    i32 = ctx.i32
    base = ctx.smem(4 * nb)
    ctx.smem_begin()
    # zero the bins: thread t clears t, t + threads, ...
    threads = ctx.num_warps * ctx.warp_size
    tid = ctx.thread_id()
    zero = ctx.const(0)
    for k in range(0, nb, threads):
        idx = tid if k == 0 else ctx.op1("arith.addi", [tid, ctx.const(k)], i32)
        inside = None if k + threads <= nb else \
            ctx.op1("arith.cmpi", [idx, ctx.const(nb)], ctx.i1,
                    {"predicate": ir.IntegerAttr.get(ctx.i64, 6)})  # ult
        _when(ctx, inside, lambda idx=idx: ctx.create(
            "llvm.store", [zero, smem_gep(ctx, base, idx, i32)], []))
    ctx.smem_publish()
    # count
    owner = owner_predicate(ctx, src.layout, src.shape)
    et = T.element_type(op.operands[0].type)
    one = ctx.const(1)
    scope = SYNCSCOPE[ctx.target]["cta"]
    for k, v in enumerate(src.values):
        nbv = ctx.const(nb, et)
        ok = ctx.op1("arith.cmpi", [v, nbv], ctx.i1, {"predicate": ir.IntegerAttr.get(ctx.i64, 6)})
        ok = _and(ctx, _and(ctx, ok, owner), mask.values[k] if mask is not None else None)

        def add(v=v):
            idx = v if et == i32 else ctx.op1("arith.trunci", [v], i32)
            attrs = {"bin_op": ir.IntegerAttr.get(ctx.i64, 1),  # add
                     "ordering": ir.IntegerAttr.get(ctx.i64, 2),  # monotonic
                     "alignment": ir.IntegerAttr.get(ctx.i64, 4)}
            if scope:
                attrs["syncscope"] = ir.StringAttr.get(scope)
            ctx.op1("llvm.atomicrmw", [smem_gep(ctx, base, idx, i32), one], i32, attrs)
        _when(ctx, ok, add)
    ctx.smem_publish()
    # read the counts in the result's layout
    rt = op.results[0].type
    dst, shape = layout_of(rt), tuple(T.shape_of(rt))
    per = dst.elems_per_thread(shape)
    vals = [ctx.op1("llvm.load", [smem_gep(ctx, base, ctx.linear_index(dst, shape, c), i32)],
                    i32) for c in itertools.product(*[range(n) for n in per])]
    return [Regs(dst, shape, vals)]


# ---- gather --------------------------------------------------------------------------------------

def _gather_bytes(op):
    src = op.operands[0].type
    return elems_bytes(math.prod(T.shape_of(src)), T.element_type(src))


@scratch("tile.gather")
def _gather_scratch(op):
    return _gather_bytes(op)


@lower("tile.gather")
def _gather(ctx, op, args):
    """`src` stored row-major in shared memory (copies store equal values), a barrier, then
    each result element loads src at its own coordinates with the axis one replaced by its
    index."""
    src, idx = args
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    et = T.element_type(op.operands[0].type)
    st = smem_type(et)
    base = ctx.smem(_gather_bytes(op))
    ctx.smem_begin()
    for c in src.coords():
        p = smem_gep(ctx, base, ctx.linear_index(src.layout, src.shape, c), st)
        ctx.create("llvm.store", [to_smem(ctx, src[c], st), p], [])
    ctx.smem_publish()
    strides, acc = [], 1
    for n in reversed(src.shape):
        strides.insert(0, acc)
        acc *= n
    it = T.element_type(op.operands[1].type)
    vals = []
    for c in idx.coords():
        i = idx[c] if str(it) == "i32" else ctx.op1("arith.trunci", [idx[c]], ctx.i32)
        if strides[axis] != 1:
            i = ctx.op1("arith.muli", [i, ctx.const(strides[axis])], ctx.i32)
        for d, k in enumerate(c):  # the element's own coordinates on the other axes
            if d == axis or idx.shape[d] == 1:
                continue
            term = ctx.logical_index(idx.layout, idx.shape, d, k)
            if strides[d] != 1:
                term = ctx.op1("arith.muli", [term, ctx.const(strides[d])], ctx.i32)
            i = ctx.op1("arith.addi", [term, i], ctx.i32)
        vals.append(from_smem(ctx, ctx.op1("llvm.load", [smem_gep(ctx, base, i, st)], st), et))
    return [idx.like(vals)]
