"""Lowering rules of the scf family: scf.for, scf.if, scf.while and their terminators.

Each op is rebuilt with per-thread types: every tile it carries (iter args, results, block
arguments, yielded values) becomes the scalars one thread holds (`ctx.flatten`), in the
order of `ctx.flat_types`, and the bodies are lowered into the new op's blocks after their
block arguments are mapped back to tiles (`ctx.unflatten`).  Loop hints (`tile.*`
attributes) are dropped: nothing after this stage reads them.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects.layout import layout_of

from ..registry import LoweringError, lower
from ..regs import Regs


def _map_args(ctx, src: ir.Block, new_args):
    """Maps the block arguments of `src` to the per-thread values `new_args`."""
    vals = ctx.unflatten([a.type for a in src.arguments], list(new_args))
    for a, v in zip(src.arguments, vals):
        ctx.values[a] = v


def _lower_into(ctx, src: ir.Block, dst: ir.Block):
    with ir.InsertionPoint(dst):
        ctx.lower_block(src)


def _results(ctx, op, new_op):
    return ctx.unflatten([r.type for r in op.results], list(new_op.results))


@lower("scf.for")
def _for(ctx, op, args):
    lb, ub, step, *inits = args
    new = scf.ForOp(lb, ub, step, ctx.flatten(inits))
    body = op.regions[0].blocks[0]
    new_args = list(new.body.arguments)
    ctx.values[body.arguments[0]] = new_args[0]
    src_carried = list(body.arguments)[1:]
    for a, v in zip(src_carried, ctx.unflatten([a.type for a in src_carried], new_args[1:])):
        ctx.values[a] = v
    _lower_into(ctx, body, new.body)
    return _results(ctx, op, new)


WS_ATTR = "tilegpu.warp_specialize"  # (lowering/warp_specialize.py) then: producer, else: consumers


@lower("scf.if")
def _if(ctx, op, args):
    then_src = op.regions[0].blocks[0]
    has_else = len(op.regions[1].blocks) > 0
    new = scf.IfOp(args[0], ctx.flat_types([r.type for r in op.results]), has_else=has_else)
    split = WS_ATTR in op.attributes  # each side's barriers are its own threads' (ctx.barrier)
    outer = ctx.ws_role
    ctx.ws_role = "producer" if split else outer
    if split:
        _producer(ctx, then_src, new.then_block)
    else:
        _lower_into(ctx, then_src, new.then_block)
    if has_else:
        ctx.ws_role = "consumer" if split else outer
        _lower_into(ctx, op.regions[1].blocks[0], new.else_block)
    ctx.ws_role = outer
    return _results(ctx, op, new)


def _producer(ctx, src: ir.Block, dst: ir.Block):
    """The producer warp group's side of a split: its setmaxnreg (every warp of the group),
    then the rest on the group's first warp only (`scf.if` on the warp-uniform warp id): one
    warp polls the empty barriers and issues the copies (`elect.sync`, rules/tma.py)."""
    ops = [o.operation for o in src.operations]
    head = 1 if ops and ops[0].name == "tilegpu.setmaxnreg" else 0
    with ir.InsertionPoint(dst):
        ctx.lower_ops(ops[:head])
        first = ctx.op1("arith.cmpi", [ctx.warp_id_uniform(), ctx.const(ctx.num_warps)], ctx.i1,
                        {"predicate": ir.IntegerAttr.get(ctx.i64, 0)})  # eq
        lead = scf.IfOp(first, [], has_else=False)
        with ir.InsertionPoint(lead.then_block):
            ctx.lower_ops(ops[head:-1])
            scf.YieldOp([])
        ctx.lower_ops(ops[-1:])  # (the producer yields nothing)


@lower("scf.while")
def _while(ctx, op, args):
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    inits = ctx.flatten(args)
    new = scf.WhileOp(ctx.flat_types([r.type for r in op.results]), inits)
    loc = op.location
    before_types = ctx.flat_types([a.type for a in before.arguments])
    after_types = ctx.flat_types([a.type for a in after.arguments])
    new_before = new.before.blocks.append(*before_types, arg_locs=[loc] * len(before_types))
    new_after = new.after.blocks.append(*after_types, arg_locs=[loc] * len(after_types))
    _map_args(ctx, before, new_before.arguments)
    _map_args(ctx, after, new_after.arguments)
    _lower_into(ctx, before, new_before)
    _lower_into(ctx, after, new_after)
    return _results(ctx, op, new)


@lower("scf.yield")
def _yield(ctx, op, args):
    _check_layouts(ctx, op, args)
    scf.YieldOp(ctx.flatten(args))
    return []


@lower("scf.condition")
def _condition(ctx, op, args):
    _check_layouts(ctx, op, args[1:], first=1)
    scf.ConditionOp(args[0], ctx.flatten(args[1:]))
    return []


def _check_layouts(ctx, op, args, first=0):
    """A yielded tile must hold its elements as the receiving value does (same layout):
    otherwise the flattened scalars would be reinterpreted.  Layout assignment keeps them
    equal today (one layout per rank); say so clearly if that ever changes."""
    parent = op.parent.operation
    if parent.name == "scf.while" and op.name == "scf.yield":
        targets = list(parent.regions[0].blocks[0].arguments)
    elif parent.name == "scf.while":
        targets = list(parent.regions[1].blocks[0].arguments)
    else:
        targets = list(parent.results)
    for i, (a, t) in enumerate(zip(args, targets)):
        if isinstance(a, Regs):
            want = layout_of(t.type)
            if want != a.layout:
                raise LoweringError(f"'{op.name}' operand {i + first} has layout {a.layout} "
                                    f"but its {parent.name} value has {want}: a "
                                    f"tilegpu.convert_layout is needed")
