"""`tilegpu-hoist-loop-converts`: a loop-carried tile converted on entry to the body and
converted back before the yield is carried in the converted layout instead.

tilegpu-assign-layouts keeps a carried tile in the layout of its initial value unless that is a
constant (`_Assigner.flexible`).  An accumulator carried through nested loops (attention
backward's dK/dV: the loop over a group's heads around three query loops, each starting from
the previous one's result) then starts the inner loops from a value that is not a constant, and
every iteration moved it to the mma layout and back through shared memory (four conversions
per iteration of the dK/dV kernel).

For an scf.for result i whose block argument is used only by `convert_layout`s to one layout L
and whose yielded value is `convert_layout(z)` with z in L:

    init' = convert(init -> L) before the loop; the argument and the result in L;
    the argument's conversions dropped; z yielded; convert(result -> old layout) after the
    loop for the users that are not conversions to L (those read the result directly).

Repeated to a fixed point, so the conversion leaves the inner loop, then the outer one; a
conversion of a conversion made here is folded as it is made (tilegpu-remove-converts folds
the rest, and rematerializes a converted constant initial value)."""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T

from .axis_info import defining_op
from .pass_base import Pass, register

CONVERT = "tilegpu.convert_layout"


def _convert(v: ir.Value, ty, before) -> ir.Value:
    """`v` in type `ty`: itself, the source of a conversion it came from, or a new conversion
    placed before `before`."""
    if v.type == ty:
        return v
    src = defining_op(v)
    if src is not None and src.name == CONVERT and src.operands[0].type == ty:
        return src.operands[0]
    with ir.InsertionPoint(before), before.location:
        return ir.Operation.create(CONVERT, results=[ty], operands=[v]).results[0]


def _erase_if_dead(op):
    if op is not None and op.name == CONVERT and not list(op.results[0].uses):
        op.erase()


def _hoist_one(loop, i: int) -> bool:
    body = loop.regions[0].blocks[0]
    arg = body.arguments[i + 1]
    if not T.is_tensor(arg.type):
        return False
    uses = [u.owner for u in arg.uses]
    if not uses or any(u.name != CONVERT for u in uses):
        return False
    ty = uses[0].results[0].type
    if any(u.results[0].type != ty for u in uses) or ty == arg.type:
        return False
    yld = [o.operation for o in body.operations][-1]
    yielded = defining_op(yld.operands[i])
    if yielded is None or yielded.name != CONVERT or yielded.operands[0].type != ty:
        return False
    old = arg.type
    init = loop.operands[3 + i]
    loop.operands[3 + i] = _convert(init, ty, loop)
    _erase_if_dead(defining_op(init))
    arg.set_type(ty)
    for u in uses:
        u.results[0].replace_all_uses_with(arg)
        u.erase()
    yld.operands[i] = yielded.operands[0]
    _erase_if_dead(yielded)
    res = loop.results[i]
    users = [(u.owner, u.operand_number) for u in res.uses]
    res.set_type(ty)
    back = None
    for owner, n in users:
        if owner.name == CONVERT and owner.results[0].type == ty:
            owner.results[0].replace_all_uses_with(res)
            owner.erase()
            continue
        if back is None:
            with ir.InsertionPoint(loop), loop.location:  # (placed, then moved after the loop)
                back = ir.Operation.create(CONVERT, results=[old], operands=[res])
            back.move_after(loop)
        owner.operands[n] = back.results[0]
    return True


def hoist_loop_converts(module_op, pctx=None) -> None:
    changed = True
    while changed:
        changed = False
        for loop in [op for op in T.walk_ops(module_op) if op.name == "scf.for"]:
            for i in range(len(loop.results)):
                changed |= _hoist_one(loop, i)


register(Pass("tilegpu-hoist-loop-converts",
              "Carry a loop's tile in the layout its body converts it to (no conversion per "
              "iteration)", run=hoist_loop_converts))
