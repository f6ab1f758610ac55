"""Passes of the tile and tilegpu stages.

* `tile-combine`: small algebraic rewrites on tile IR.
* `tilegpu-assign-layouts`: tile -> tilegpu; gives every tile a blocked layout chosen for
  coalesced, up-to-16-byte accesses (one layout per rank; conversions come later).
* `tilegpu-vector-width`: records on each load/store how many elements one access moves.
"""
from __future__ import annotations

import math

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import Blocked, default_blocked, layout_of, with_layout

from .axis_info import AxisAnalysis, defining_op, elem_bytes, vector_width
from .pass_base import Pass, register


# ---------------------------------------------------------------------------------------------
# tile-combine

def _splat_of_constant(op, rewriter):
    """splat(arith.constant c) -> arith.constant dense<c>."""
    src = defining_op(op.operands[0])
    if src is None or src.name != "arith.constant":
        return True
    t = op.results[0].type
    with rewriter.ip, op.location:
        new = ir.Operation.create("arith.constant", results=[t], attributes={
            "value": ir.DenseElementsAttr.get_splat(t, src.attributes["value"])})
    rewriter.replace_op(op, new)


def _broadcast_of_splat(op, rewriter):
    """broadcast(splat x) -> splat x."""
    src = defining_op(op.operands[0])
    if src is None or src.name != "tile.splat":
        return True
    with rewriter.ip, op.location:
        new = ir.Operation.create("tile.splat", results=[op.results[0].type],
                                  operands=[src.operands[0]])
    rewriter.replace_op(op, new)


def _addptr_of_addptr(op, rewriter):
    """addptr(addptr(p, a), b) -> addptr(p, a + b) when a and b have one type."""
    src = defining_op(op.operands[0])
    if src is None or src.name != "tile.addptr":
        return True
    a, b = src.operands[1], op.operands[1]
    if a.type != b.type:
        return True
    with rewriter.ip, op.location:
        s = ir.Operation.create("arith.addi", results=[a.type], operands=[a, b])
        new = ir.Operation.create("tile.addptr", results=[op.results[0].type],
                                  operands=[src.operands[0], s.results[0]])
    rewriter.replace_op(op, new)


register(Pass("tile-combine", "Fold splats of constants, broadcasts of splats and chained addptrs",
              patterns=(("tile.splat", _splat_of_constant),
                        ("tile.broadcast", _broadcast_of_splat),
                        ("tile.addptr", _addptr_of_addptr))))


# ---------------------------------------------------------------------------------------------
# tilegpu-assign-layouts

def _i32(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


def module_config(module_op: ir.Operation, pctx) -> tuple[int, int]:
    """num_warps and warp size: from the module's attributes if set, else the pass context."""
    attrs = module_op.attributes
    nw = ir.IntegerAttr(attrs["tilegpu.num_warps"]).value if "tilegpu.num_warps" in attrs \
        else pctx.num_warps
    ws = ir.IntegerAttr(attrs["tilegpu.warp_size"]).value if "tilegpu.warp_size" in attrs \
        else pctx.warp_size
    return nw, ws


def _kernels(module_op):
    return [op for op in module_op.regions[0].blocks[0].operations
            if op.operation.name == "func.func"]


def _memory_ops(f):
    return [op for op in T.walk_ops(f) if op.name in ("tile.load", "tile.store")]


def _choose_layouts(f, num_warps, warp_size) -> dict[int, Blocked]:
    """One blocked layout per rank: its fastest dimension gets as many elements per thread as
    the widest contiguous access of that rank allows (16 bytes at most)."""
    an = AxisAnalysis(f)
    shapes: dict[int, tuple] = {}
    for op in T.walk_ops(f):
        for r in op.results:
            s = T.shape_of(r.type)
            if s and (len(s) not in shapes or math.prod(s) > math.prod(shapes[len(s)])):
                shapes[len(s)] = s
    vec: dict[int, int] = {}
    for op in _memory_ops(f):
        ptr = op.operands[0]
        s = T.shape_of(ptr.type)
        if not s:
            continue
        elem = T.pointee(T.element_type(ptr.type))
        v = min(an.get(ptr).contiguity[-1], max(1, 16 // elem_bytes(elem)))
        vec[len(s)] = max(vec.get(len(s), 1), v)
    return {r: default_blocked(s, num_warps, warp_size, vec.get(r, 1)) for r, s in shapes.items()}


def _retype(v: ir.Value, layouts):
    t = v.type
    if T.is_tensor(t):
        lay = layouts[len(T.shape_of(t))]
        if layout_of(t) != lay:
            v.set_type(with_layout(t, lay))


def _assign_layouts(module_op, pctx):
    nw, ws = module_config(module_op, pctx)
    module_op.attributes["tilegpu.num_warps"] = _i32(nw)
    module_op.attributes["tilegpu.warp_size"] = _i32(ws)
    for f in _kernels(module_op):
        layouts = _choose_layouts(f, nw, ws)
        for op in T.walk_ops(f):
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        _retype(a, layouts)
            for r in op.results:
                _retype(r, layouts)
            if op.name == "arith.constant" and T.is_tensor(op.results[0].type):
                attr = ir.DenseElementsAttr(op.attributes["value"])
                if not attr.is_splat:
                    raise NotImplementedError("non-splat tile constants are not supported yet")
                op.attributes["value"] = ir.DenseElementsAttr.get_splat(
                    op.results[0].type, attr.get_splat_value())


register(Pass("tilegpu-assign-layouts",
              "Give every tile a blocked layout for coalesced, vectorized accesses",
              run=_assign_layouts))


# ---------------------------------------------------------------------------------------------
# tilegpu-vector-width

def _set_vector_widths(module_op, pctx):
    from tilework.dialects.verify import named_operands
    for f in _kernels(module_op):
        an = AxisAnalysis(f)
        for op in _memory_ops(f):
            args = named_operands(op)
            ptr = args["ptr"]
            lay = layout_of(ptr.type)
            if lay is None:
                continue
            shape = T.shape_of(ptr.type)
            fast = lay.order[0]
            limit = min(lay.size_per_thread[fast], shape[fast])
            v = vector_width(an, ptr, args["mask"], fast, limit)
            op.attributes["tilegpu.vector_width"] = _i32(v)


register(Pass("tilegpu-vector-width",
              "Record each load/store's access width from the axis analysis and its layout",
              run=_set_vector_widths))
