"""Lowering rules of the warp-specialization ops (dialects/opdefs/warp_spec.py; NVIDIA
sm_90a): the warp group from the warp-uniform warp id, `setmaxnreg` as inline PTX.  The split
itself is the marked `scf.if` (rules/scf.py sets the role its barriers follow)."""
from __future__ import annotations

import mlir.ir as ir

from ..registry import lower

WARPS_PER_GROUP = 4


@lower("tilegpu.warp_group_id", target="nvidia")
def _warp_group_id(ctx, op, args):
    return [ctx.op1("arith.divui", [ctx.warp_id_uniform(), ctx.const(WARPS_PER_GROUP)],
                    ctx.i32)]


@lower("tilegpu.setmaxnreg", target="nvidia")
def _setmaxnreg(ctx, op, args):
    n = ir.IntegerAttr(op.attributes["count"]).value
    mode = ir.StringAttr(op.attributes["mode"]).value
    ctx.create("llvm.inline_asm", [], [], {
        "asm_string": ir.StringAttr.get(f"setmaxnreg.{mode}.sync.aligned.u32 {n};"),
        "constraints": ir.StringAttr.get("~{memory}"), "has_side_effects": ir.UnitAttr.get(),
        "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})
    return []
