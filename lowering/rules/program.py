"""Program ids, grid size, function return."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import gpu

from ..registry import lower
from .math_approx import call_intrinsic

_DIMS = (gpu.Dimension.x, gpu.Dimension.y, gpu.Dimension.z)


def _axis(op) -> int:
    return ir.IntegerAttr(op.attributes["axis"]).value


@lower("tile.get_program_id")
def _program_id(ctx, op, args):
    return [ctx.op1("arith.index_cast", [gpu.block_id(_DIMS[_axis(op)])], ctx.i32)]


@lower("tile.get_num_programs")
def _num_programs(ctx, op, args):
    return [ctx.op1("arith.index_cast", [gpu.grid_dim(_DIMS[_axis(op)])], ctx.i32)]


@lower("tile.get_num_programs", target="amd")
def _num_programs_amd(ctx, op, args):
    """From the HSA dispatch packet: grid_size (work-items, u32 at byte 12 + 4 * axis) over
    workgroup_size (u16 at byte 4 + 2 * axis).  rocdl.grid.dim would become a call of the
    device library (__ockl_get_num_groups), which is not linked here."""
    axis = _axis(op)
    packet = call_intrinsic("llvm.amdgcn.dispatch.ptr", [], ir.Type.parse("!llvm.ptr<4>"))
    i8, i16 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(16)

    def field(offset, ty, nbytes):
        p = ctx.op1("llvm.getelementptr", [packet], ir.Type.parse("!llvm.ptr<4>"), {
            "rawConstantIndices": ir.DenseI32ArrayAttr.get([offset]),
            "elem_type": ir.TypeAttr.get(i8)})
        return ctx.op1("llvm.load", [p], ty, {"alignment": ir.IntegerAttr.get(ctx.i64, nbytes),
                                              "invariant": ir.UnitAttr.get()})
    grid = field(12 + 4 * axis, ctx.i32, 4)
    group = ctx.op1("arith.extui", [field(4 + 2 * axis, i16, 2)], ctx.i32)
    return [ctx.op1("arith.divui", [grid, group], ctx.i32)]


@lower("func.return")
def _return(ctx, op, args):
    gpu.ReturnOp([])
    return []
