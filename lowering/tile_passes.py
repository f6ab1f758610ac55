"""Passes of the tile and tilegpu stages.

* `tile-combine`: small algebraic rewrites on tile IR (x + dot(a, b, 0) -> dot(a, b, x) among
  them: `acc += tl.dot(a, b)` accumulates in place).
* `tilegpu-vector-width`: records on each load/store how many elements one access moves.
* `tilegpu-compare-runs`: records on comparisons the runs of equal results a thread holds.
"""
from __future__ import annotations

import math

import mlir.ir as ir

from tilework.dialects import opdefs
from tilework.dialects import tile as T
from tilework.dialects.layout import fastest_dim, layout_of
from tilework.dialects.verify import named_operands

from .axis_info import AxisAnalysis, defining_op, vector_width
from .module_info import kernels, module_config  # noqa: F401
from .module_info import memory_ops as _memory_ops
from .pass_base import Pass, register, replace_with


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
    replace_with(rewriter, op, "tile.splat", [src.operands[0]])


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


def _is_zero_constant(v) -> bool:
    op = defining_op(v)
    if op is None or op.name != "arith.constant":
        return False
    attr = op.attributes["value"]
    try:
        dense = ir.DenseElementsAttr(attr)
        if not dense.is_splat:
            return False
        attr = dense.get_splat_value()
    except (ValueError, TypeError):
        pass
    for kind in (ir.FloatAttr, ir.IntegerAttr):
        try:
            return kind(attr).value == 0
        except (ValueError, TypeError):
            continue
    return False


def _add_of_dot(op, rewriter):
    """x + dot(a, b, 0) -> dot(a, b, x) (either operand order; the dot used only here): the
    tutorials' `acc += tl.dot(a, b)` then accumulates in place, as `tl.dot(a, b, acc)` does,
    instead of keeping a second accumulator and adding it every iteration."""
    for i in (0, 1):
        d = defining_op(op.operands[i])
        if d is None or d.name != "tile.dot" or not _is_zero_constant(d.operands[2]):
            continue
        if sum(1 for _ in d.results[0].uses) != 1 or d.results[0].type != op.results[0].type:
            continue
        if ir.IntegerAttr(d.attributes["max_num_imprecise_acc"]).value != 0:
            continue  # (the accumulator's precision is what that attribute is about)
        x = op.operands[1 - i]
        with rewriter.ip, op.location:
            new = ir.Operation.create("tile.dot", results=[op.results[0].type],
                                      operands=[d.operands[0], d.operands[1], x],
                                      attributes={n: d.attributes[n] for n in d.attributes})
        rewriter.replace_op(op, new)
        return
    return True


# ops declared pure (dialects/opdefs; IRDL cannot give them MLIR's traits, so MLIR's own cse and
# DCE skip them); upstream arith/math ops are left to MLIR's cse and canonicalize
PURE_OPS = opdefs.PURE_OPS


def _erase_dead(op, rewriter):
    """A side-effect-free tile op whose results are unused -> erased."""
    if any(True for r in op.results for _ in r.uses):
        return True
    rewriter.erase_op(op.operation)


def _erase_dead_pure_asm(op, rewriter):
    """tile.inline_asm is declared with an effect (its asm may have some); one marked pure
    (is_pure=True) whose results are unused is erased, as Triton does."""
    if not ir.IntegerAttr(op.attributes["pure"]).value:
        return True
    return _erase_dead(op, rewriter)


register(Pass("tile-combine", "Fold splats of constants, broadcasts of splats, chained "
                              "addptrs and x + dot(a, b, 0); erase dead tile ops",
              patterns=(("tile.splat", _splat_of_constant),
                        ("tile.broadcast", _broadcast_of_splat),
                        ("tile.addptr", _addptr_of_addptr),
                        ("arith.addf", _add_of_dot), ("arith.addi", _add_of_dot),
                        ("tile.inline_asm", _erase_dead_pure_asm))
              + tuple((name, _erase_dead) for name in PURE_OPS)))


# ---------------------------------------------------------------------------------------------
# tile-cse: MLIR's cse skips IRDL ops (their effects are unknown); ours are pure

def _op_key(op):
    return (op.name, tuple(op.operands), tuple(str(r.type) for r in op.results),
            tuple(sorted((n, str(op.attributes[n])) for n in op.attributes)))


def _cse_block(block, scope: dict):
    for op in list(block.operations):
        op = op.operation
        if op.name in PURE_OPS and not op.regions:
            key = _op_key(op)
            prev = scope.get(key)
            if prev is not None:
                for a, b in zip(op.results, prev.results):
                    a.replace_all_uses_with(b)
                op.erase()
                continue
            scope[key] = op
        for region in op.regions:
            for inner in region.blocks:
                _cse_block(inner, dict(scope))  # values of the outer scope dominate


def _tile_cse(module_op, pctx):
    for op in module_op.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "func.func":
            _cse_block(op.regions[0].blocks[0], {})


register(Pass("tile-cse", "Merge identical side-effect-free tile ops", run=_tile_cse))


# ---------------------------------------------------------------------------------------------
# tilegpu-vector-width

def _i32(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


def _set_vector_widths(module_op, pctx):
    for f in kernels(module_op):
        an = AxisAnalysis(f)
        copies = [op for op in T.walk_ops(f) if op.name == "tilegpu.async_copy"]
        for op in _memory_ops(f) + copies:
            args = named_operands(op)
            ptr = args["ptr"]
            lay = layout_of(ptr.type)
            if lay is None:
                continue
            shape = T.shape_of(ptr.type)
            fast, spt = fastest_dim(lay)
            if fast is None:  # the contiguous dimension was sliced away
                op.attributes["tilegpu.vector_width"] = _i32(1)
                continue
            limit = min(spt, shape[fast])
            v = vector_width(an, ptr, args["mask"], fast, limit)
            op.attributes["tilegpu.vector_width"] = _i32(v)


register(Pass("tilegpu-vector-width",
              "Record each load/store's access width from the axis analysis and its layout",
              run=_set_vector_widths))


# ---------------------------------------------------------------------------------------------
# tilegpu-compare-runs

def _set_compare_runs(module_op, pctx):
    """A mask like `cols < n` (n divisible by 16) is equal on each aligned group of a thread's
    contiguous elements: the lowering then compares once per group, not once per element."""
    for f in kernels(module_op):
        an = AxisAnalysis(f)
        for op in _walk(f):
            if op.name not in ("arith.cmpi", "arith.cmpf") or not T.is_tensor(op.results[0].type):
                continue
            lay = layout_of(op.results[0].type)
            fast, spt = fastest_dim(lay) if lay is not None else (None, 1)
            if fast is None or spt < 2:
                continue
            run = math.gcd(an.get(op.results[0]).constancy[fast], spt)
            if run > 1:
                op.attributes["tilegpu.runs"] = ir.DenseI32ArrayAttr.get([fast, run])


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _walk(inner.operation)


register(Pass("tilegpu-compare-runs",
              "Record on comparisons the runs of equal results along a thread's elements",
              run=_set_compare_runs))
