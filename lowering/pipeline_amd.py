"""`tilegpu-stream-pipeline`: AMD's software pipelining of the loads that feed `tile.dot` in an
scf.for (CDNA and RDNA have no cp.async: the next iteration's operands go through registers).

A loop whose depth (`tile.num_stages`, else the `num_stages` option) is 2 or more, and a load in
its body whose result reaches the dot through one `tilegpu.convert_layout` (the MFMA/WMMA
operand layout, otherwise a round trip through LDS scratch) and whose pointer and mask stage 0
computes (`pipeline.LoopInfo`: from the induction variable, outside values and carried values
whose next value is computed the same way), is rewritten with an LDS double buffer per load:

    prologue:  x = load(lb) if lb < ub; local_store x -> slot 0; increments
    loop k:    x' = load(iv + step) into registers, if iv + step < ub (the global loads of
               iteration k+1 are issued first); the rest of the body, the conversion replaced
               by a = local_load slot rd in the dot's operand layout, where it was (next to
               the dot, so the operand is not live through what precedes it);
               local_store x' -> slot wr; increments; yield ..., rd <- wr, wr <- rd
    after:     local_dealloc

A depth above 2 is taken as 2: a deeper register prefetch would hold more tiles in VGPRs.
The slots' `memdesc_index` ops say `tilegpu.stream_slot = "read"` / `"write"`: within one
iteration they are different buffers, so tilegpu-insert-barriers puts a single barrier per
iteration, before the first local_load (the previous iteration's store and reads are then both
ordered), not one more between the reads and the store.  Loads in other forms (operands
already in a dot layout, more than one use, a pointer that depends on another load) are left
alone, as are loops whose two buffers per load do not fit the LDS next to the kernel's
scratch (the loop gets `tilegpu.pipeline_note`)."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects import builders as B
from tilework.dialects import tile as T

from .axis_info import AxisAnalysis
from .pass_base import Pass, register
from .pipeline import (Consts, LoopInfo, adopt, buffered_loads, consumer, copy_width,
                       live_carried, move_body, rewire, shared_layout)
from .pipeline_common import (NOTE_ATTR, arith, clone_slice, cmp_lt, kernel_loops, loop_depth,
                              next_op, stage_bytes)
from .smem_barriers import SLOT_ATTR  # ("read", "write": distinct buffers in an iteration)


def _candidates(info, an) -> list:
    out = []
    for op, args, _ in buffered_loads(info):
        if not all(info.computable(v) for v in (args["ptr"], args["mask"], args["other"])
                   if v is not None):
            continue
        cons = consumer(op, an)
        if cons is None or cons[0] != "convert":
            continue
        out.append((op, args, cons, copy_width(an, op)))
    return out


def _zeros(t):
    elem = T.element_type(t)
    zero = ir.FloatAttr.get(elem, 0.0) if T.isa(elem, ir.FloatType) else ir.IntegerAttr.get(elem, 0)
    return ir.Operation.create("arith.constant", results=[t], attributes={
        "value": ir.DenseElementsAttr.get_splat(t, zero)}).results[0]


def _prefetch(info, cands, iv, valid, carried_vals, copy_ops):
    """Stage 0 for the iteration at `iv` at the insertion point: the pointer and mask ops, then
    the loads into registers under one `scf.if valid` (zeros else: the slot they are stored
    to is never read; a branch per wave, not a mask on every access).  -> (value map, values)."""
    env = {info.iv: iv}
    for c, v in carried_vals.items():
        env[info.carried[c]] = v
    clone_slice(copy_ops, env)
    types = [load.results[0].type for load, _, _ in cands]
    branch = scf.IfOp(valid, types, has_else=True)
    with ir.InsertionPoint(branch.then_block):
        vals = []
        for load, args, _ in cands:
            names = [getattr(a, "name", a) for a in load.attributes]
            attrs = {n: load.attributes[n] for n in names
                     if n not in ("operandSegmentSizes", "tilegpu.vector_width")}
            vals.append(B.build_load(None, *(None if x is None else env.get(x, x) for x in (
                args["ptr"], args["mask"], args["other"])),
                result_type=load.results[0].type, attributes=attrs))
        scf.YieldOp(vals)
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([_zeros(t) for t in types])
    return env, list(branch.results)


def _slot(alloc, index, role):
    md = T.memdesc_of(alloc.type)
    v = B.build_memdesc_index(None, alloc, index, result_type=T.memdesc_type(
        md.shape, md.elem, md.layout, 1))
    if role:
        v.owner.attributes[SLOT_ATTR] = ir.StringAttr.get(role)
    return v


def pipeline_loop(loop, pctx, reserve: int, an) -> bool:
    depth = loop_depth(loop, pctx, 2)
    if depth <= 1:
        return False
    info = LoopInfo(loop)
    cands = _candidates(info, an)
    if not cands:
        return False
    layouts = [shared_layout(load, cons, vec) for load, _, cons, vec in cands]
    cands = [c[:3] for c in cands]
    per_stage = stage_bytes([load for load, _, _ in cands], layouts)
    budget = pctx.target.shared_memory if pctx is not None else 1 << 62
    if 2 * per_stage + reserve > budget:
        loop.attributes[NOTE_ATTR] = ir.StringAttr.get(
            f"not pipelined: 2 x {per_stage} bytes of buffers (and {reserve} of scratch) "
            f"exceed the {budget} bytes of LDS")
        return False
    _rewrite(info, cands, layouts)
    return True


def _rewrite(info, cands, layouts):
    loop = info.loop
    lb, ub, step = list(loop.operands)[:3]
    i32 = ir.IntegerType.get_signless(32)
    s0 = sorted(info.stage0)
    loads = {load for load, _, _ in cands}
    roots = [v for _, args, _ in cands for v in (args["ptr"], args["mask"], args["other"])
             if v is not None]
    copy_ops = info.slice_ops(roots)
    next_ops = [op for op in info.slice_ops(roots + [info.yielded[c] for c in s0])
                if op not in set(copy_ops)]
    live = live_carried(info, loads, set(s0))
    kept = [c for c in range(len(info.carried)) if c not in s0 or c in live]
    inits = list(loop.operands)[3:]
    with ir.InsertionPoint(loop), loop.location:
        allocs = [B.build_local_alloc(None, result_type=T.memdesc_type(
            T.shape_of(load.results[0].type), T.element_type(load.results[0].type), lay, 2))
            for (load, _, _), lay in zip(cands, layouts)]
        const = Consts(ir.InsertionPoint(allocs[0].owner))
        env, vals = _prefetch(info, cands, lb, cmp_lt(lb, ub), {c: inits[c] for c in s0},
                              copy_ops)
        for alloc, v in zip(allocs, vals):
            B.build_local_store(None, v, _slot(alloc, const(0, i32), None))
        clone_slice(next_ops, env)
        ahead = {c: env.get(info.yielded[c], info.yielded[c]) for c in s0}
        new = scf.ForOp(lb, ub, step, [inits[c] for c in kept] + [ahead[c] for c in s0]
                        + [const(0, i32), const(1, i32)])
    nb = new.body
    n_iv, n_ahead, rd, wr = adopt(info, new, kept, s0)
    with ir.InsertionPoint(nb), loop.location:
        iv = arith("arith.addi", n_iv, step)
        env, vals = _prefetch(info, cands, iv, cmp_lt(iv, ub), dict(zip(s0, n_ahead)),
                              copy_ops)
    for (load, _, (_, user, ty)), alloc in zip(cands, allocs):
        # read where the conversion was, next to the dot: read at the top, the operand
        # (attention's V: 64 VGPRs a lane at D=128 on RDNA4, 128 on RDNA3) would stay live
        # through everything before the dot (the scores' dot and softmax)
        with ir.InsertionPoint(user), loop.location:
            got = B.build_local_load(None, _slot(alloc, rd, "read"), result_type=ty)
        user.results[0].replace_all_uses_with(got)
        user.erase()
        load.erase()
    with ir.InsertionPoint(nb), loop.location:
        ny = scf.YieldOp([info.yielded[c] for c in kept] + list(n_ahead) + [wr, rd])
    move_body(info, ny)
    with ir.InsertionPoint(ny), loop.location:  # after the dots: the next slot, increments
        for alloc, v in zip(allocs, vals):
            B.build_local_store(None, v, _slot(alloc, wr, "write"))
        clone_slice(next_ops, env)
    for i, c in enumerate(s0):
        ny.operation.operands[len(kept) + i] = env.get(info.yielded[c], info.yielded[c])
    rewire(info, new, kept)
    with ir.InsertionPoint(next_op(loop)), loop.location:
        for a in allocs:
            B.build_local_dealloc(None, a)
    loop.erase()


def stream_pipeline(module_op, pctx=None):
    for f, reserve, loop in kernel_loops(module_op):
        pipeline_loop(loop, pctx, reserve, AxisAnalysis(f))


register(Pass("tilegpu-stream-pipeline",
              "AMD: prefetch the loads feeding tile.dot in scf.for loops into registers one "
              "iteration ahead, through an LDS double buffer (num_stages >= 2)",
              run=stream_pipeline))
