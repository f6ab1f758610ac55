"""`tilegpu-overlap-dots`: in a loop of several wgmma dots (attention's key loop: S = q k^T,
then acc = P v + acc), the last dot stays in flight across the back edge, as Triton's: its
wgmma group is waited for by the next iteration's first dot (whose `wgmma.wait_group 0` waits
for every group), so the warps issue the loop's copies and the next S while P v(j-1) runs,
instead of waiting for it at the end of each iteration.

    loop j:  async_wait; <copies of j+S-1; commit>; S = dot0(..); ..; acc' = dot(.., acc)
             (acc' waited at once: wgmma.wait_group 0)
    becomes
    loop j:  async_wait; <other copies>; S = dot0(..); acc = warpgroup_wait {num = 0}(acc);
             ..; acc' = dot(.., acc) (async); <copies into dot's buffers; commit>;
             yield warpgroup_wait {num = 1}(acc')
    after:   warpgroup_wait {num = 0} on the loop's result

The copies into the in-flight dot's buffers (cp.async's, with the commits after the first of
them; or the TMA pipeliner's `tma_load`s, which arrive on a later slot's mbarrier and may pass
this slot's `mbarrier_wait`), and the address computations only they use, move after the last
dot, Triton's order: they are issued while it runs, and the slot they overwrite held the
previous iteration's operands, which the previous dot may read until dot0's wait
(tilegpu-insert-barriers puts the barrier between, after the last dot's issue, as Triton's
second barrier).  `LATE_COPIES` off puts them right after dot0's wait instead (registers: D=64
128x64x3 123, D=128 153, against 118 and 152 late).  Other copies (K's) stay ahead of dot0, in
the shadow of the previous iteration's dot.

Taken when, in one scf.for body, with dot0 the first and dot the last `warpgroup_dot` of the
body (both synchronous, distinct):

* dot accumulates in f32/i32 (no fp8 partial sums), its result's only use is the yield, at the
  position of a carried value `acc` whose every use follows dot0 in the body (a carried
  accumulator started from zeros is carried in dot's layout: tilegpu-assign-layouts'
  `dot_carried`, else a conversion would sit between);
* dot's shared operands are buffers allocated before the loop (live across it) that the loop
  writes by async copies only (a slot of the pipeliner's ring, a hoisted invariant operand): a
  buffer written in the body would be overwritten under the dot in flight;
* no `async_wait` lies between the first copy that moves and dot0;
* a warp-specialized consumer's slot release (one `mbarrier_arrive` after dot, no predicate,
  on `memdesc_index(empty ring, slot)` with the slot computed from the induction variable by
  arith ops) is delayed: iteration k's goes to iteration k + 1, right after dot0's wait (dot(k)
  done; predicated off at the first iteration), the last iteration's after the loop's wait when
  the loop is nested in another (a persistent producer goes on; tilegpu-warp-specialize's own
  asynchronous GEMM consumer releases the same way); any other
  `mbarrier_arrive` after dot0 leaves the loop alone (the producer would refill a slot dot
  still reads).

`CompileOptions.overlap_dots` (`TILEWORK_OVERLAP_DOTS=1`, in the cache key) runs it on NVIDIA
wgmma targets; off by default; tilework-opt runs it when named.  Correct on the SIMT emulator
(the pointer forward); it costs registers (P, wgmma's register A, and the accumulator stay
live across the back edge: attention D=64 128x64, 8 warps, 3 stages 114 -> 118, still two
programs per SM; D=128 136 -> 152; some configs cross 128 registers, some fall below it).
`benchmarks/tools/ab_attention.py --on overlap-dots` switches it on.  Skipped when the
accumulator holds 128 or more registers a thread (where ptxas already spills, it spilled
more).
"""
from __future__ import annotations

import math

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import opdefs
from tilework.dialects import tile as T
from tilework.dialects.opdefs.wgmma import is_async

from .module_info import kernels
from .pass_base import Pass, register
from .pipeline_common import (arith, clone_slice, cmpi, enclosing_loop, inside, int_const,
                              invariant_in, next_op, wait_result)

LATE_COPIES = True  # the moved copies go after the last dot, not right after dot0's wait
_MAX_ACC_REGS = 128  # accumulator registers a thread at which the loop is left alone
_PURE = frozenset(opdefs.PURE_OPS) - {"tile.dot", "tile.reduce", "tile.scan"}
_COPIES = ("tilegpu.async_copy", "tilegpu.tma_load")  # (cp.async; TMA's, by the TMA pipeliner)


def _root(v):
    """The local_alloc a memdesc views (through memdesc_index / memdesc_trans)."""
    while not isinstance(v.owner, ir.Block) and v.owner.name in ("tilegpu.memdesc_index",
                                                                  "tilegpu.memdesc_trans"):
        v = v.owner.operands[0]
    return v.owner


def _pure(op) -> bool:
    return not len(op.regions) and (op.name in _PURE or op.name.startswith(("arith.", "math.")))


def _copied_only(v, loop) -> bool:
    """The buffer `v` views is allocated before the loop (live across it: no other buffer
    takes its bytes there) and written in the loop by async copies only (which move)."""
    root = _root(v)
    if isinstance(root, ir.Block) or root.name != "tilegpu.local_alloc" or inside(root, loop):
        return False
    views = [root.results[0]]
    while views:
        x = views.pop()
        for u in x.uses:
            o = u.owner
            if o.name in ("tilegpu.memdesc_index", "tilegpu.memdesc_trans"):
                views.append(o.results[0])
            elif o.name == "tilegpu.local_store" and inside(o, loop):
                return False
    return True


def plan(loop, threads: int = 128):
    """(dot0, dot, carried index, copy ops to move) for an scf.for of a kernel of `threads`
    threads, or None."""
    body = loop.regions[0].blocks[0]
    ops = [o.operation for o in body.operations]
    pos = {op: i for i, op in enumerate(ops)}
    dots = [op for op in ops if op.name == "tilegpu.warpgroup_dot"]
    if len(dots) < 2 or any(is_async(d) for d in dots):
        return None
    dot0, dot = dots[0], dots[-1]
    if str(T.element_type(dot.results[0].type)) not in ("f32", "i32"):
        return None
    if math.prod(T.shape_of(dot.results[0].type)) // threads >= _MAX_ACC_REGS:
        return None
    md = T.memdesc_of(dot.operands[1].type)
    if str(md.elem).startswith("f8") and \
            0 < ir.IntegerAttr(dot.attributes["max_num_imprecise_acc"]).value:
        return None  # (fp8 partial sums are added after the wait)
    uses = list(dot.results[0].uses)
    yield_op = ops[-1]
    if len(uses) != 1 or uses[0].owner != yield_op:
        return None
    c = uses[0].operand_number
    acc = list(body.arguments)[1 + c]
    if acc.type != dot.results[0].type:
        return None
    for u in acc.uses:  # every use after dot0, in the body itself
        owner = u.owner
        while owner is not None and owner.operation.parent != loop and owner != loop:
            owner = owner.operation.parent
        if owner is None or owner.operation not in pos or pos[owner.operation] <= pos[dot0]:
            return None
    if not all(_copied_only(v, loop) for v in list(dot.operands)[:2] if T.is_memdesc(v.type)):
        return None
    release = _release(loop, ops, pos, dot0, dot)
    if release is False:
        return None
    roots = {_root(v) for v in list(dot.operands)[:2] if T.is_memdesc(v.type)}
    before = ops[:pos[dot0]]
    copies = [op for op in before if op.name in _COPIES and _root(op.operands[1]) in roots]
    if not copies:
        return dot0, dot, c, [], release
    first = pos[copies[0]]
    if any(op.name == "tilegpu.async_wait" for op in ops[first:pos[dot0]]):
        return None  # (a TMA copy may pass an mbarrier_wait: it arrives on a later slot's)
    moved = set(copies) | {op for op in ops[first:pos[dot0]]
                           if op.name == "tilegpu.async_commit_group"}
    for op in reversed(before):  # their address slices, when nothing else uses them
        if op not in moved and _pure(op) and len(op.results) and all(
                u.owner in moved for r in op.results for u in r.uses):
            moved.add(op)
    return dot0, dot, c, [op for op in before if op in moved], release


def _iv_slice(v, body, iv):
    """The body's ops computing `v` from the induction variable and values from outside the
    loop (arith only), in program order; None if it needs anything else."""
    out, todo = set(), [v]
    while todo:
        x = todo.pop()
        owner = x.owner
        if isinstance(owner, ir.Block):
            if owner == body and x != iv:
                return None  # (a carried value)
            continue
        op = owner.operation if hasattr(owner, "operation") else owner
        if op.block != body or op in out:
            continue
        if op.regions or not op.name.startswith("arith."):
            return None
        out.add(op)
        todo += list(op.operands)
    return [o.operation for o in body.operations if o.operation in out]


def _release(loop, ops, pos, dot0, dot):
    """A warp-specialized consumer's slot release after the last dot (tilegpu-warp-specialize:
    `mbarrier_arrive` on the slot's empty barrier, handing the slot back to the producer):
    (arrive, its barrier view, the view's index slice), to be delayed until dot is done, or
    None if there is none; False if there are several, one with a predicate or before dot,
    or one whose slot the iteration's induction variable alone does not give."""
    arrives = [op for op in ops[pos[dot0]:] if op.name == "tilegpu.mbarrier_arrive"]
    if not arrives:
        return None
    arrive = arrives[0]
    if len(arrives) != 1 or pos[arrive] < pos[dot] or len(arrive.operands) != 1:
        return False
    view = arrive.operands[0].owner
    if isinstance(view, ir.Block) or view.name != "tilegpu.memdesc_index" or \
            not invariant_in(view.operands[0], loop):
        return False
    body = loop.regions[0].blocks[0]
    sl = _iv_slice(view.operands[1], body, body.arguments[0])
    return False if sl is None else (arrive, view, view.operands[0], view.operands[1],
                                     view.results[0].type, sl)


def _release_at(loop, release, iv_value, pred):
    """The release's arrive for the iteration whose induction variable is `iv_value` (at the
    insertion point), where `pred` holds."""
    ring, index, ty, sl = release[2:]
    env = {loop.regions[0].blocks[0].arguments[0]: iv_value}
    clone_slice(sl, env)
    bar = B.build_memdesc_index(None, ring, env.get(index, index), result_type=ty)
    B.build_mbarrier_arrive(None, bar, pred)


def _delay_release(loop, release, after_wait):
    """Iteration k's release moves to iteration k + 1, after dot0's wait (dot(k) is then
    done; predicated off at k = 0); the caller releases the last iteration's after the loop."""
    arrive, view = release[:2]
    lb, ub, step = list(loop.operands)[:3]
    iv = loop.regions[0].blocks[0].arguments[0]
    with ir.InsertionPoint(next_op(after_wait)), arrive.location:
        _release_at(loop, release, arith("arith.subi", iv, step), cmpi("ne", iv, lb))  # ne
    arrive.erase()
    if not list(view.results[0].uses):
        view.erase()
    return lb, ub, step


def _release_last(loop, release, lb, ub, step):
    n = arith("arith.divsi", arith("arith.subi", arith("arith.addi", ub, step), arith(
        "arith.addi", lb, int_const(lb.type, 1))), step)  # (trips: ceil((ub - lb) / step), step > 0)
    last = arith("arith.addi", lb, arith("arith.muli", arith("arith.subi", n, int_const(n.type, 1)), step))
    _release_at(loop, release, last, cmpi("slt", lb, ub))  # slt


def overlap_dots(module_op, pctx=None):
    threads = pctx.num_warps * pctx.warp_size if pctx is not None else 128
    for f in kernels(module_op):
        for loop in [op for op in T.walk_ops(f) if op.name == "scf.for"]:
            p = plan(loop, threads)
            if p is None:
                continue
            dot0, dot, c, moved, release = p
            acc = list(loop.regions[0].blocks[0].arguments)[1 + c]
            yield_op = list(loop.regions[0].blocks[0].operations)[-1].operation
            with ir.InsertionPoint(next_op(dot0)), dot0.location:
                done = B.build_warpgroup_wait(None, acc, num=0, result_type=acc.type)
            for u in list(acc.uses):
                if u.owner != done.owner:
                    u.owner.operands[u.operand_number] = done
            # the copies after the last dot's issue (Triton's order: issued while it runs),
            # or (LATE_COPIES off) right after dot0's wait
            after = next_op(dot) if LATE_COPIES else next_op(done.owner)
            for op in moved:
                op.move_before(after)
            with ir.InsertionPoint(yield_op), dot.location:
                yield_op.operands[c] = B.build_warpgroup_wait(None, dot.results[0], num=1,
                                                              result_type=dot.results[0].type)
            bounds = _delay_release(loop, release, done.owner) if release else None
            with ir.InsertionPoint(next_op(loop)), loop.location:
                wait_result(loop.results[c])
                # (nested: a persistent producer issues past the last iteration and waits for that
                # slot; else nothing waits for it, and an arrive after the loop's wait makes ptxas
                # serialize every wgmma of a causal forward, C7515)
                if release and enclosing_loop(loop) is not None:
                    _release_last(loop, release, *bounds)


register(Pass("tilegpu-overlap-dots",
              "the last wgmma dot of a multi-dot loop stays in flight across the back edge",
              run=overlap_dots))
