"""`tilegpu-warp-specialize`: `tl.range(..., warp_specialize=True)` on NVIDIA sm_90a.  A marked
loop whose TMA loads (`tile.descriptor_load`) feed a wgmma gets a producer warp group of its
own, which only issues the copies, while the kernel's num_warps (the consumers) run the dots
and everything else.

Which loops: the marked scf.for is in the kernel's top block and either holds the loads
itself (the loop L) or, the persistent form (tutorial 09: an outer loop O over tiles, the K
loop inside), holds one scf.for L that does, whose bounds are defined outside O.  Every
descriptor_load directly in L must have its coordinates computed by side-effect-free ops from
L's (i32) induction variable, O's, and values of the kernel's top block computed the same way
from its arguments; L must feed a warpgroup_dot.  Any other loop keeps its mark unread (as
Triton ignores the hint where it does not apply) and says why in `tilegpu.warp_specialize_note`;
so does a marked loop on a target without wgmma.

The kernel becomes (S = num_stages rings, as tilegpu-pipeline-tma would give the loop):

    rings of S buffers per load; full[S] (count: the loads), empty[S] (count: num_warps)
    scf.if warp_group_id == num_warps / 4 {tilegpu.warp_specialize}   (the producer)
      setmaxnreg.dec 40
      the coordinates' slice; [O': for each tile] L': for each k:
        c = t * n + k (t: O's iteration, n: L's trip count; c = k without O)
        wait empty[c % S] phase ((c / S) & 1) ^ 1   (a fresh barrier passes phase 1)
        tma_load of each load into slot c % S, arriving on full[c % S] with its bytes
    else                                                               (the consumers)
      setmaxnreg.inc R
      the kernel; in L: wait full[c % S] phase (c / S) & 1, the dot reads the slot;
        an asynchronous wgmma: warpgroup_wait {1}, then empty[(c - 1) % S] arrives (k > 0);
        after L, warpgroup_wait {0} and (with O) empty[(c_last) % S] arrives;
        a synchronous dot: empty[c % S] arrives at the end of the iteration
      after the outermost loop: the barriers' invals, the deallocs

The producer runs up to S iterations ahead of the consumers; with O it runs on into the next
tile while the consumers finish this one (the epilogue overlaps the next tile's loads).  The
kernel gets `tilegpu.producer_warps = 4`: tilegpu-to-llvm launches (num_warps + 4) warps and
lowers the barriers inside the split as named barriers of each side's threads (rules/scf.py,
`ctx.barrier`); after the producer group's setmaxnreg only its first warp runs the
producer's loops (rules/scf.py): one warp polls the empty barriers, and one of its lanes,
`elect.sync`'s, issues the copies (rules/tma.py).
Registers (`register_split`): the launch gives each thread R0 = 65536 / threads (a multiple
of 8, at most 255, at most the `maxnreg` option), which tilegpu-to-llvm gives ptxas as
`.maxnreg`; the producer keeps 40, the consumers take what that frees (a multiple of 8, at
most 240; none when that is no more than R0, as for a single consumer warp group).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects import builders as B
from tilework.dialects import tile as T

from .layout_passes import kernels
from .module_info import module_config
from .pass_base import Pass, register
from .pipeline_common import arith, clone_slice, cmpi, int_const, invariant_in, loop_depth, \
    next_op, reserve_bytes, wait_result
from .pipeline_tma import async_dot, carried_step, consume_load, feeds_dot, pure_op, \
    slot_view
from .shared_memory import alloc_bytes
from .tma import barrier_type, buffer_layout, coords
from .tma_guard import GUARD_ATTR

HINT = "tile.warp_specialize"
NOTE_ATTR = "tilegpu.warp_specialize_note"  # why a marked loop was left alone
PRODUCER_ATTR = "tilegpu.producer_warps"  # (lowering/to_llvm.py)
SPLIT_ATTR = "tilegpu.warp_specialize"  # the scf.if of the split (rules/scf.py)
PRODUCER_WARPS = 4
PRODUCER_REGS = 40
MAX_CONSUMER_REGS = 240
MAX_WARPS = 32  # 1024 threads a block
_REGS_PER_SM = 65536


def register_split(num_warps: int, cap: int | None = None, warp_size: int = 32) \
        -> tuple[int, int, int]:
    """(registers at entry, the producer's, the consumers') for num_warps consumers and one
    producer warp group.  The entry count is the launch's even share (`cap`, the `maxnreg`
    option, if lower), given to ptxas as `.maxnreg` (without it ptxas cannot tell the count at
    entry and ignores setmaxnreg); the consumers take what the producer frees of it."""
    total = (num_warps + PRODUCER_WARPS) * warp_size
    r0 = min(255, _REGS_PER_SM // total, cap or 255) // 8 * 8
    dec = min(PRODUCER_REGS, r0)
    freed = PRODUCER_WARPS * warp_size * (r0 - dec)
    inc = (r0 * num_warps * warp_size + freed) // (num_warps * warp_size) // 8 * 8
    return r0, dec, max(r0, min(MAX_CONSUMER_REGS, inc))


def _i32(v: int) -> ir.Value:
    return int_const(ir.IntegerType.get_signless(32), v)


# ---- which loops ----------------------------------------------------------------------------

class _Plan:
    """What the rewrite needs: the loops, the loads, the ops of each block to clone into the
    producer (top: the kernel's block, outer: O's body, inner: L's body)."""

    def __init__(self, f, outer, inner, loads):
        self.f, self.outer, self.inner, self.loads = f, outer, inner, loads
        self.slices = {"top": set(), "outer": set(), "inner": set()}
        self.carried = {}  # L's carried coordinates: block argument -> (init, step)


def _where(plan, block) -> str | None:
    if block == plan.f.regions[0].blocks[0]:
        return "top"
    if plan.outer is not None and block == plan.outer.regions[0].blocks[0]:
        return "outer"
    if block == plan.inner.regions[0].blocks[0]:
        return "inner"
    return None


def _collect(plan, values) -> str | None:
    """Adds the ops computing `values` to the plan's slices; why not, if one cannot be
    recomputed by the producer."""
    for v in values:
        owner = v.owner
        if isinstance(owner, ir.Block):
            where = _where(plan, owner)
            if where == "top":
                continue  # a kernel argument
            if where == "inner" and v != owner.arguments[0] and v not in plan.carried:
                cs = carried_step(plan.inner, v)  # `offset += BLOCK_N`: init + k * step
                if cs is not None:
                    plan.carried[v] = cs
                    why = _collect(plan, list(cs))
                    if why:
                        return why
                    continue
            if where is None or (v != owner.arguments[0] and v not in plan.carried):
                return "a load's coordinates or the loop bounds depend on a loop-carried " \
                       "value other than one advanced by a loop-invariant step"
            continue  # an induction variable, or a carried coordinate
        op = owner.operation if hasattr(owner, "operation") else owner
        where = _where(plan, op.block)
        if where is None or not pure_op(op):
            return f"a load's coordinates or the loop bounds come from '{op.name}', which " \
                   "the producer cannot recompute"
        if op not in plan.slices[where]:
            plan.slices[where].add(op)
            why = _collect(plan, list(op.operands))
            if why:
                return why
    return None


def _loads(body) -> list:
    return [o.operation for o in body.operations if o.operation.name == "tile.descriptor_load"]


def _plan(f, loop, num_warps) -> "_Plan | str":
    """The plan for the marked `loop`, or why it does not qualify."""
    if num_warps % PRODUCER_WARPS:
        return f"num_warps {num_warps} is not whole warp groups"
    if num_warps + PRODUCER_WARPS > MAX_WARPS:
        return f"num_warps {num_warps} leaves no room for the producer warp group " \
               f"({MAX_WARPS} warps a block at most)"
    top = f.regions[0].blocks[0]
    if loop.block != top:
        return "the loop is nested in other control flow"
    if len(top.operations[len(top.operations) - 1].operation.operands):
        return "the kernel returns values"
    body = loop.regions[0].blocks[0]
    outer, inner = None, loop
    if not _loads(body):
        inners = [o.operation for o in body.operations
                  if o.operation.name == "scf.for" and _loads(o.operation.regions[0].blocks[0])]
        if len(inners) != 1:
            return "no TMA (descriptor) loads in the loop or in one loop directly inside it"
        outer, inner = loop, inners[0]
        if not all(invariant_in(v, outer) for v in list(inner.operands)[:3]):
            return "the inner loop's bounds change with the outer loop's iterations"
    ibody = inner.regions[0].blocks[0]
    if str(ibody.arguments[0].type) != "i32" or \
            (outer is not None and str(body.arguments[0].type) != "i32"):
        return "the induction variable is not i32"
    if not feeds_dot(ibody):
        return "the loop feeds no dot"
    if not any(o.name == "tilegpu.warpgroup_dot" for o in T.walk_ops(inner)):
        return "the loop's dot is not a wgmma"
    plan = _Plan(f, outer, inner, _loads(ibody))
    for ld in plan.loads:
        nbytes = alloc_bytes(T.MemDesc(T.shape_of(ld.results[0].type),
                                       T.element_type(ld.results[0].type), "unit", 1))
        if nbytes % 128:
            return "a load's block is not a multiple of 128 bytes (TMA's slot alignment)"
    why = _collect(plan, [v for ld in plan.loads for v in ld.operands]
                   + list(inner.operands)[:3] + (list(outer.operands)[:3] if outer else []))
    return why or plan


def _stages(plan, pctx) -> int:
    """num_stages of the loop (L's mark, else O's, else the option), shrunk until the rings,
    the barriers and the largest scratch beside them fit the shared memory."""
    inner, outer = plan.inner, plan.outer
    src = outer if outer is not None and "tile.num_stages" not in inner.attributes and \
        "tile.num_stages" in outer.attributes else inner
    depth = loop_depth(src, pctx, 3)
    scope = outer if outer is not None else inner
    reserve = reserve_bytes(scope)
    if outer is not None:  # an epilogue's TMA store buffer lives beside the rings
        stores = [o for o in T.walk_ops(outer) if o.name == "tile.descriptor_store"]
        size = [alloc_bytes(T.MemDesc(T.shape_of(o.operands[1].type),
                                      T.element_type(o.operands[1].type), "unit", 1)) + 1024
                for o in stores]
        # one under tile-tma-guard's run-time branch excludes its fallback (the else
        # branch), whose scratch is in `reserve`: the same bytes serve either (a store under
        # any other `if` adds its buffer to the scratch)
        guarded = [n for o, n in zip(stores, size) if GUARD_ATTR in o.parent.attributes]
        reserve = max([reserve] + guarded) + sum(size) - sum(guarded)
    mds = [T.MemDesc(T.shape_of(ld.results[0].type), T.element_type(ld.results[0].type),
                     buffer_layout(ld), 1) for ld in plan.loads]
    budget = pctx.target.shared_memory
    s = depth
    while s > 1 and sum(alloc_bytes(m.with_buffers(s)) + 1024 for m in mds) + 32 * s \
            + reserve > budget:
        s -= 1
    if s < depth:
        src.attributes["tilegpu.pipeline_note"] = ir.StringAttr.get(
            f"num_stages {depth} -> {s}: the TMA buffers of {depth} stages (and {reserve} "
            f"bytes of scratch) exceed the {budget} bytes of shared memory")
    return s


# ---- the rewrite ----------------------------------------------------------------------------

def _in_order(block, ops) -> list:
    return [o.operation for o in block.operations if o.operation in ops]


def _counter(iv, lb, step, outer=None):
    """The ring counter c of the iteration at `iv` (at the insertion point): k = (iv - lb) /
    step, or t * n + k in the persistent form (`outer`: O's induction variable, lower bound,
    step and L's trip count n; t = O's iteration)."""
    k = arith("arith.divsi", arith("arith.subi", iv, lb), step)
    if outer is None:
        return k
    oiv, olb, ostep, n = outer
    t = arith("arith.divsi", arith("arith.subi", oiv, olb), ostep)
    return arith("arith.addi", arith("arith.muli", t, n), k)


def _trips(lb, ub, step):
    """max(0, ceil((ub - lb) / step)) for a positive step."""
    span = arith("arith.subi", arith("arith.addi", ub, step), _i32(1))
    n = arith("arith.divsi", arith("arith.subi", span, lb), step)
    return arith("arith.maxsi", n, _i32(0))


def _slot_phase(c, S):
    return arith("arith.remsi", c, _i32(S)), \
        arith("arith.andi", arith("arith.divsi", c, _i32(S)), _i32(1))


def _producer(plan, S, rings, full, empty, regs):
    """The producer's program at the insertion point (the split's then block)."""
    B.build_setmaxnreg(None, count=regs, mode="dec")
    env = {}
    top = plan.f.regions[0].blocks[0]
    clone_slice(_in_order(top, plan.slices["top"]), env)
    m = lambda v: env.get(v, v)  # noqa: E731
    inner, outer = plan.inner, plan.outer
    lb, ub, step = (m(v) for v in list(inner.operands)[:3])
    if outer is not None:
        olb, oub, ostep = (m(v) for v in list(outer.operands)[:3])
        n = _trips(lb, ub, step)
        o = scf.ForOp(olb, oub, ostep)
        with ir.InsertionPoint(o.body):
            env[outer.regions[0].blocks[0].arguments[0]] = o.induction_variable
            clone_slice(_in_order(outer.regions[0].blocks[0], plan.slices["outer"]), env)
            loop = scf.ForOp(lb, ub, step)
            scf.YieldOp([])
        where = o.induction_variable
    else:
        loop = scf.ForOp(lb, ub, step)
    with ir.InsertionPoint(loop.body):
        iv = loop.induction_variable
        env[inner.regions[0].blocks[0].arguments[0]] = iv
        if plan.carried:  # the producer's own copy of each carried coordinate
            k = _counter(iv, lb, step)
            for arg, (init, cstep) in plan.carried.items():
                kx = k if k.type == arg.type else ir.Operation.create(
                    "arith.extsi", results=[arg.type], operands=[k]).results[0]
                env[arg] = arith("arith.addi", m(init), arith("arith.muli", kx, m(cstep)))
        clone_slice(_in_order(inner.regions[0].blocks[0], plan.slices["inner"]), env)
        c = _counter(iv, lb, step, (where, olb, ostep, n) if outer is not None else None)
        slot, phase = _slot_phase(c, S)
        B.build_mbarrier_wait(None, slot_view(empty, slot), arith("arith.xori", phase, _i32(1)))
        bar = slot_view(full, slot)
        for ld, ring in zip(plan.loads, rings):
            B.build_tma_load(None, ld.operands[0], slot_view(ring, slot), bar,
                             [m(v) for v in coords(ld)])
        scf.YieldOp([])
    scf.YieldOp([])


def _consumer(plan, S, rings, full, empty, regs, else_block):
    """The kernel's own ops, moved into the split's else block, with L reading the rings."""
    inner, outer = plan.inner, plan.outer
    ibody = inner.regions[0].blocks[0]
    lb, ub, step = list(inner.operands)[:3]
    if regs is not None:
        with ir.InsertionPoint.at_block_begin(else_block), inner.location:
            B.build_setmaxnreg(None, count=regs, mode="inc")
    n = None
    if outer is not None:
        obody = outer.regions[0].blocks[0]
        with ir.InsertionPoint(obody.operations[0]), inner.location:
            n = _trips(lb, ub, step)
            olb, ostep = outer.operands[0], outer.operands[2]
            t = arith("arith.divsi", arith("arith.subi", obody.arguments[0], olb), ostep)
            base = arith("arith.muli", t, n)
    with ir.InsertionPoint(ibody.operations[0]), inner.location:
        k = arith("arith.divsi", arith("arith.subi", ibody.arguments[0], lb), step)
        c = k if n is None else arith("arith.addi", base, k)
        slot, phase = _slot_phase(c, S)
        B.build_mbarrier_wait(None, slot_view(full, slot), phase)
        views = [slot_view(r, slot) for r in rings]
    for ld, view in zip(plan.loads, views):
        consume_load(ld, view)
    scope = outer if outer is not None else inner
    with ir.InsertionPoint(next_op(scope)), inner.location:  # (what follows L goes before)
        for bars in (full, empty):
            for j in range(S):
                B.build_mbarrier_inval(None, slot_view(bars, _i32(j)))
        for r in rings + [full, empty]:
            B.build_local_dealloc(None, r)
    wg = async_dot(inner, ibody, views)
    yield_op = ibody.operations[len(ibody.operations) - 1].operation
    if wg is not None:  # wgmma(c - 1) done: its slot goes back to the producer
        dot, ci = wg
        with ir.InsertionPoint(next_op(dot)), inner.location:
            waited = B.build_warpgroup_wait(None, dot.results[0], num=1,
                                            result_type=dot.results[0].type)
            yield_op.operands[ci] = waited
            prev = arith("arith.remsi", arith("arith.addi", c, _i32(S - 1)), _i32(S))
            B.build_mbarrier_arrive(None, slot_view(empty, prev), cmpi("sgt", k, _i32(0)))  # sgt
        with ir.InsertionPoint(next_op(inner)), inner.location:
            wait_result(inner.results[ci])
            if n is not None:  # the tile's last slot, once its wgmma is done
                last = arith("arith.remsi", arith("arith.addi", base, arith(
                    "arith.addi", n, _i32(S - 1))), _i32(S))
                B.build_mbarrier_arrive(None, slot_view(empty, last), cmpi("sgt", n, _i32(0)))
    else:  # a synchronous dot: the slot is read by the end of the iteration
        with ir.InsertionPoint(yield_op), inner.location:
            B.build_mbarrier_arrive(None, slot_view(empty, slot))


def _rewrite(plan, S, num_warps, cap):
    f = plan.f
    top = f.regions[0].blocks[0]
    ops = [o.operation for o in top.operations]
    moved, ret = ops[:-1], ops[-1]
    r0, dec, inc = register_split(num_warps, cap)
    inc = inc if inc > r0 else None  # (nothing to take: one consumer group has the most)
    loc = plan.inner.location
    with ir.InsertionPoint(ops[0]), loc:
        mds = [T.MemDesc(T.shape_of(ld.results[0].type), T.element_type(ld.results[0].type),
                         buffer_layout(ld), 1) for ld in plan.loads]
        rings = [B.build_local_alloc(None, result_type=m.with_buffers(S).type()) for m in mds]
        bt = T.memdesc_of(barrier_type()).with_buffers(S).type()
        full = B.build_local_alloc(None, result_type=bt)
        empty = B.build_local_alloc(None, result_type=bt)
        for bars, count in ((full, len(plan.loads)), (empty, num_warps)):
            for j in range(S):
                B.build_mbarrier_init(None, slot_view(bars, _i32(j)), count=count)
        wg = B.build_warp_group_id(None, result_type=ir.IntegerType.get_signless(32))
        split = scf.IfOp(cmpi("eq", wg, _i32(num_warps // PRODUCER_WARPS)), [], has_else=True)
        split.operation.attributes[SPLIT_ATTR] = ir.UnitAttr.get()
    with ir.InsertionPoint(split.then_block), loc:
        _producer(plan, S, rings, full, empty, dec)
    with ir.InsertionPoint(split.else_block), loc:
        end = scf.YieldOp([])
    for op in moved:
        op.move_before(end)
    _consumer(plan, S, rings, full, empty, inc, split.else_block)
    assert ret.name == "func.return"
    f.attributes[PRODUCER_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32),
                                                     PRODUCER_WARPS)


def _note(loop, why: str):
    loop.attributes[NOTE_ATTR] = ir.StringAttr.get(f"warp_specialize ignored: {why}")


def warp_specialize(module_op, pctx=None):
    num_warps = module_config(module_op, pctx)[0]
    for f in kernels(module_op):
        marked = [op for op in T.walk_ops(f) if op.name == "scf.for" and HINT in op.attributes]
        done = False
        for loop in marked:
            if pctx is None or not pctx.target.has("wgmma"):
                _note(loop, "the target has no wgmma (sm_90a only)")
                continue
            if done:
                _note(loop, "another loop of the kernel is warp-specialized")
                continue
            plan = _plan(f, loop, num_warps)
            if isinstance(plan, str):
                _note(loop, plan)
                continue
            S = _stages(plan, pctx)
            if S <= 1:
                _note(loop, "num_stages <= 1: nothing to run ahead")
                continue
            _rewrite(plan, S, num_warps, getattr(pctx.options, "maxnreg", None))
            done = True


register(Pass("tilegpu-warp-specialize",
              "tl.range(..., warp_specialize=True) on sm_90a: a producer warp group issues the "
              "loop's TMA loads into num_stages rings (full/empty mbarriers), the kernel's "
              "warps consume them with wgmma", run=warp_specialize))
