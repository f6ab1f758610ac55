"""Lowering rules of join, split and cat, and a generic "gather through shared memory" helper.

* `tile.join` ([..] x [..] -> [.., 2]): the result layout is the operands' with a last
  dimension of 2 that every thread holds in registers (`join_layout`, chosen by
  tilegpu-assign-layouts; `join_in_registers` checks it on the linear maps; both in
  `lowering/layout_choice.py`), so the result is the operands' registers interleaved (`a0 b0 a1 b1 ...`): no data moves.
* `tile.split` ([.., 2] -> two [..]): the inverse, when each thread holds both halves
  (`split_layout`; the same check; the layout pass converts the operand first otherwise).
* `tile.cat` (two [n] -> [2n]): when n spans at least one CTA tile, the result in the
  operands' layout is thread by thread the registers of the first then the second operand;
  otherwise (replicated small tiles, slice layouts) through shared memory.

Other layout combinations (hand-written IR) go through shared memory (`gather_through_smem`):
each source element is written at an index of its own, a barrier, and each thread reads its
result elements at the indices the op's element map gives.
"""
from __future__ import annotations

import itertools
import math

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import layout_of

from ..regs import Regs
from ..layout_choice import cat_in_registers, join_in_registers
from ..registry import lower
from ..shared_memory import elems_bytes, from_smem, scratch, smem_gep, smem_type, to_smem


# ---- the generic path ------------------------------------------------------------------------

def _regs(layout, shape, values):
    return Regs(layout, shape, values)


def row_major(ctx, idx: list, shape) -> "ir.Value":
    """The row-major linear index of logical indices `idx` (i32 values) in `shape`."""
    v, stride = None, 1
    for i, n in reversed(list(zip(idx, shape))):
        if n != 1:
            t = i if stride == 1 else ctx.op1("arith.muli", [i, ctx.const(stride)], ctx.i32)
            v = t if v is None else ctx.op1("arith.addi", [v, t], ctx.i32)
        stride *= n
    return v if v is not None else ctx.const(0)


def logical(ctx, layout, shape, coord) -> list:
    """The logical indices (i32 values) of the element at per-thread `coord`."""
    return [ctx.logical_index(layout, shape, d, k) if shape[d] > 1 else ctx.const(0)
            for d, k in enumerate(coord)]


def gather_through_smem(ctx, writes, reads, nelems: int, scalar_type):
    """Moves elements between layouts through the shared scratch buffer.

    `writes`: [(Regs, index(logical indices) -> smem index)]: every element of each source is
    stored at its index.  `reads`: [(layout, shape, index(logical indices) -> smem index)]:
    each result element is read from its index.  `nelems` bounds the indices.  Returns one
    Regs per read."""
    st = smem_type(scalar_type)
    base = ctx.smem(elems_bytes(nelems, scalar_type))
    ctx.smem_begin()
    for src, index in writes:
        for coord in src.coords():
            p = smem_gep(ctx, base, index(logical(ctx, src.layout, src.shape, coord)), st)
            ctx.create("llvm.store", [to_smem(ctx, src[coord], st), p], [])
    ctx.smem_publish()
    out = []
    for layout, shape, index in reads:
        vals = []
        for coord in itertools.product(*[range(n) for n in layout.elems_per_thread(shape)]):
            p = smem_gep(ctx, base, index(logical(ctx, layout, shape, coord)), st)
            vals.append(from_smem(ctx, ctx.op1("llvm.load", [p], st), scalar_type))
        out.append(_regs(layout, shape, vals))
    return out


# ---- scratch: what goes through shared memory (the rules below decide the same way) ----------

def _join_in_registers(a, a_shape, b, dst, dst_shape) -> bool:
    return a == b and join_in_registers(a, a_shape, dst, dst_shape)


def _split_in_registers(src, src_shape, dst, dst_shape) -> bool:
    return join_in_registers(dst, dst_shape, src, src_shape)


def _cat_in_registers(a, b, dst, shape) -> bool:
    return a == b == dst and cat_in_registers(dst, shape)


@scratch("tile.join", "tile.split", "tile.cat")
def _shape_join_scratch(op):
    a, rt = op.operands[0].type, op.results[0].type
    la, dst = layout_of(a), layout_of(rt)
    ashape, rshape = tuple(T.shape_of(a)), tuple(T.shape_of(rt))
    if op.name == "tile.join":
        inreg = _join_in_registers(la, ashape, layout_of(op.operands[1].type), dst, rshape)
    elif op.name == "tile.split":
        inreg = _split_in_registers(la, ashape, dst, rshape)
    else:
        inreg = _cat_in_registers(la, layout_of(op.operands[1].type), dst, rshape)
    n = math.prod(ashape)
    return 0 if inreg else elems_bytes(n if op.name == "tile.split" else 2 * n,
                                       T.element_type(rt))


# ---- rules -------------------------------------------------------------------------------------

@lower("tile.join")
def _join(ctx, op, args):
    a, b = args
    rt = op.results[0].type
    dst, shape = layout_of(rt), T.shape_of(rt)
    if _join_in_registers(a.layout, a.shape, b.layout, dst, shape):
        vals = []
        for x, y in zip(a.values, b.values):
            vals += [x, y]
        return [_regs(dst, shape, vals)]
    n = math.prod(a.shape)

    def lin(idx):
        return row_major(ctx, idx, a.shape)
    # element (i.., j) of the result is element i of operand j
    writes = [(a, lin), (b, lambda idx: _add(ctx, lin(idx), n))]
    read = (dst, shape, lambda idx: _add(ctx, lin(idx[:-1]), ctx.op1(
        "arith.muli", [idx[-1], ctx.const(n)], ctx.i32)))
    return gather_through_smem(ctx, writes, [read], 2 * n, ctx.scalar_type(rt))


def _add(ctx, v, off):
    """v + off (an i32 value, or a Python int)."""
    if isinstance(off, int):
        return ctx.op1("arith.addi", [v, ctx.const(off)], ctx.i32) if off else v
    return ctx.op1("arith.addi", [v, off], ctx.i32)


@lower("tile.split")
def _split(ctx, op, args):
    src = args[0]
    rt = op.results[0].type
    dst, shape = layout_of(rt), T.shape_of(rt)
    if _split_in_registers(src.layout, src.shape, dst, shape):
        return [_regs(dst, shape, src.values[0::2]), _regs(dst, shape, src.values[1::2])]

    def read(j):
        return (dst, shape, lambda idx: _add(ctx, ctx.op1(
            "arith.muli", [row_major(ctx, idx, shape), ctx.const(2)], ctx.i32), j))
    return gather_through_smem(ctx, [(src, lambda idx: row_major(ctx, idx, src.shape))],
                               [read(0), read(1)], math.prod(src.shape), ctx.scalar_type(rt))


@lower("tile.cat")
def _cat(ctx, op, args):
    a, b = args
    rt = op.results[0].type
    dst, shape = layout_of(rt), T.shape_of(rt)
    if _cat_in_registers(a.layout, b.layout, dst, shape):
        return [_regs(dst, shape, a.values + b.values)]
    n = a.shape[0]
    return gather_through_smem(
        ctx, [(a, lambda idx: idx[0]),
              (b, lambda idx: _add(ctx, idx[0], n))],
        [(dst, shape, lambda idx: idx[0])], 2 * n, ctx.scalar_type(rt))
