"""`tilegpu-pipeline-tma`: software pipelining of the TMA loads (`tile.descriptor_load`) of an
scf.for whose body feeds a dot (NVIDIA sm_90; the cp.async pipeliner, pipeline.py, handles
`tile.load`s).

Depth S as tilegpu-pipeline's (`tile.num_stages` on the loop, else `num_stages`; S <= 1: the
loop is left to tilegpu-tma-loads, one copy and wait per load).  A descriptor_load directly
in the body is pipelined when its coordinates are computed, in the body, by side-effect-free
ops from the (i32) induction variable and values from outside the loop, and its tensor map
(a parameter, or one a descriptor made in the kernel wrote) comes from outside the loop.
Each such load gets a ring of S buffers in its swizzle's layout; the loop one ring of S
mbarriers, each initialized for one arrival per load (every load's tma_load arrives with its
bytes):

    before:   rings; mbarrier_init of each slot's barrier;
              for j in 0 .. S-2: the loads of iteration j into slot j (pred: lb + j*step < ub)
    loop i:   (k = (i - lb) / step)  the loads of iteration k+S-1 into slot (k+S-1) % S
              (pred: i + (S-1)*step < ub); mbarrier_wait on slot k % S, phase (k / S) % 2;
              each load's uses read slot k % S: a local_alloc of it in the slot's layout (the
              wgmma operand buffer) becomes the slot, one of its `tl.trans` in the transposed
              layout (`tl.dot(a, b.T)` on a [N, K] block: a K-major B) a memdesc_trans of
              the slot, other uses a local_load of it
    after:    mbarrier_inval of each slot's barrier; the rings' deallocs

The copies of iteration k+S-1 go into the slot iteration k-1 read: tilegpu-insert-barriers
puts one barrier before them (every warp's reads of it are done).  With a synchronous
warpgroup_dot they come first in the body; when the body's one warpgroup_dot reads two ring
slots and carries its accumulator alone (tilegpu-pipeline's asynchronous wgmma), it commits
without waiting, `warpgroup_wait {num = 1}` follows it (wgmma(k-1) done) and the copies come
after that; `warpgroup_wait {num = 0}` on the loop's result after the loop.  Every copy issued is waited for inside the loop (those past the end are
never issued), so nothing is in flight after it.  If S rings do not fit in the target's shared
memory next to the kernel's largest scratch, S shrinks (`tilegpu.pipeline_note` says so).
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import tile as T

from .pass_base import Pass, register
from .pipeline_common import (NOTE_ATTR, arith, clone_slice, cmp_lt, in_flight_acc, kernel_loops,
                              loop_depth, next_op, reserve_bytes, wait_result)
from .pipeline_tiles import (ahead, outer_tiles, prepare, prologue_iteration, thresholds,
                             trip_count)
from .shared_memory import alloc_bytes
from .tile_passes import PURE_OPS
from .tma import barrier_type, buffer_layout, coords, read_transposed, trans_readers

_SLICE_OPS = frozenset(PURE_OPS) - {"tile.dot", "tile.reduce", "tile.scan"}


def pure_op(op) -> bool:
    return not len(op.regions) and (op.name in _SLICE_OPS or op.name.startswith("arith."))


def carried_step(loop, arg):
    """(init, step) if the loop-carried `arg` advances by a loop-invariant step each iteration
    (`offset += BLOCK_N`: its yielded value is `arith.addi` of it and a value from outside the
    loop), else None: its value at iteration k is then init + k * step."""
    body = loop.regions[0].blocks[0]
    args = list(body.arguments)
    if arg not in args[1:] or str(arg.type) not in ("i32", "i64"):
        return None
    i = args.index(arg) - 1
    nxt = body.operations[len(body.operations) - 1].operation.operands[i]
    op = nxt.owner
    if isinstance(op, ir.Block) or op.name != "arith.addi" or op.operation.block != body:
        return None
    a, b = op.operands
    step = b if a == arg else a if b == arg else None
    if step is None or not _outside(body, step):
        return None
    return loop.operands[3 + i], step


def _slice(loop, iv, values, out: set, carried: dict) -> bool:
    """Adds to `out` the body's ops computing `values` from `iv`, outside values and carried
    values that advance by a loop-invariant step (recorded in `carried`: arg -> (init,
    step)); False if one depends on anything else (another carried value, an op with
    effects)."""
    body = loop.regions[0].blocks[0]
    for v in values:
        owner = v.owner
        if isinstance(owner, ir.Block):
            if owner == body and v != iv:
                cs = carried_step(loop, v)
                if cs is None:
                    return False
                carried[v] = cs
            continue
        op = owner.operation if hasattr(owner, "operation") else owner
        if op.block != body:
            continue  # defined outside the loop
        if not pure_op(op):
            return False
        if op not in out:
            out.add(op)
            if not _slice(loop, iv, list(op.operands), out, carried):
                return False
    return True


def _outside(body, v) -> bool:
    """Whether `v` is defined outside the loop: the tensor map its copies are issued from
    before the loop too (a kernel parameter, or the map a descriptor made before the loop
    wrote; one made in the body, or carried, leaves the load to tilegpu-tma-loads)."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return owner != body
    op = owner.operation if hasattr(owner, "operation") else owner
    return op.block != body  # (the load is directly in the body: its map dominates it)


def _i32(v: int) -> ir.Value:
    t = ir.IntegerType.get_signless(32)
    return ir.Operation.create("arith.constant", results=[t],
                               attributes={"value": ir.IntegerAttr.get(t, v)}).results[0]


def slot_view(ring, slot):
    md = T.memdesc_of(ring.type)
    one = T.memdesc_type(md.shape, md.elem, md.layout, 1)
    return B.build_memdesc_index(None, ring, slot, result_type=one)


def _issue(loads, ops, iv, new_iv, kk, carried, rings, bars, slot, pred, tile_env=None):
    """The loads (`[(desc, coordinates)]`) of iteration `kk` (its induction variable `new_iv`)
    into `slot` (at the insertion point); a carried coordinate there is init + kk * step.
    `tile_env`: the values of a persistent loop's body the coordinates take for the copies'
    tile (pipeline_tiles.py)."""
    env = dict(tile_env or {})
    env[iv] = new_iv
    for arg, (init, step) in carried.items():
        init = env.get(init, init)
        kx = kk if kk.type == arg.type else \
            ir.Operation.create("arith.extsi", results=[arg.type], operands=[kk]).results[0]
        env[arg] = arith("arith.addi", init, arith("arith.muli", kx, step))
    clone_slice(ops, env)  # the coordinates' slice, in program order
    bar = slot_view(bars, slot)
    for (desc, xs), ring in zip(loads, rings):
        xs = [env.get(c, c) for c in xs]
        B.build_tma_load(None, desc, slot_view(ring, slot), bar, xs, pred)


def consume_load(load, view):
    """`load`'s uses read the slot `view` (a transposed tile through its `memdesc_trans`)."""
    read_transposed(trans_readers(load.results[0], view.type), view, free=False)
    for use in list(load.results[0].uses):
        user = use.owner
        if user.name == "tilegpu.local_alloc" and user.results[0].type == view.type:
            for u in list(user.results[0].uses):
                if u.owner.name == "tilegpu.local_dealloc":
                    u.owner.erase()  # (the ring is freed after the loop)
            user.results[0].replace_all_uses_with(view)
            user.erase()
    if len(list(load.results[0].uses)):
        with ir.InsertionPoint(load), load.location:
            v = B.build_local_load(None, view, result_type=load.results[0].type)
        load.results[0].replace_all_uses_with(v)
    load.erase()


def feeds_dot(body) -> bool:
    return any(o.operation.name in ("tile.dot", "tilegpu.warpgroup_dot")
               for o in body.operations)


def pipeline_loop(loop, pctx, reserve: int) -> bool:
    depth = loop_depth(loop, pctx, 3)
    body = loop.regions[0].blocks[0]
    iv = body.arguments[0]
    if depth <= 1 or str(iv.type) != "i32" or not feeds_dot(body):
        return False
    loads, ops, carried = [], set(), {}
    for o in body.operations:
        o = o.operation
        if o.name == "tile.descriptor_load":
            s, c = set(), {}
            nbytes = alloc_bytes(T.MemDesc(T.shape_of(o.results[0].type),
                                           T.element_type(o.results[0].type), "unit", 1))
            # (slots start at multiples of the buffer's bytes: TMA needs 128-byte alignment)
            if nbytes % 128 == 0 and _outside(body, o.operands[0]) and \
                    _slice(loop, iv, coords(o), s, c):
                loads.append(o)
                ops |= s
                carried.update(c)
    if not loads:
        return False
    mds = [T.MemDesc(T.shape_of(ld.results[0].type), T.element_type(ld.results[0].type),
                     buffer_layout(ld), 1) for ld in loads]
    budget = pctx.target.shared_memory if pctx is not None else 1 << 62
    ordered = [o.operation for o in body.operations if o.operation in ops]  # (ops: a set)
    tiles = outer_tiles(loop, [v for o in ordered for v in o.operands] +
                        [init for init, _ in carried.values()] +
                        [v for ld in loads for v in [ld.operands[0], *coords(ld)]], pure_op)
    if tiles is not None and _ring_bytes(mds, depth) + _tiles_reserve(tiles.loop) > budget:
        tiles = None  # the rings, living across the tiles, would leave no room for the epilogue
    stages = depth
    while stages > 1 and _ring_bytes(mds, stages) + reserve > budget:
        stages -= 1
    if stages < depth:
        loop.attributes[NOTE_ATTR] = ir.StringAttr.get(
            f"num_stages {depth} -> {stages}: the TMA buffers of {depth} stages (and "
            f"{reserve} bytes of scratch) exceed the {budget} bytes of shared memory")
    if stages <= 1:
        return False
    _rewrite(loop, body, iv, loads, ordered, carried, mds, stages, tiles)
    return True


def _ring_bytes(mds, stages) -> int:
    return sum(alloc_bytes(m.with_buffers(stages)) + 1024 for m in mds) + 8 * stages


def _tiles_reserve(outer) -> int:
    """Shared bytes the persistent loop's body needs beside rings living across it: its ops'
    scratch, and a descriptor store's block (the TMA store's buffer, made later)."""
    blocks = [alloc_bytes(T.MemDesc(T.shape_of(o.operands[1].type),
                                    T.element_type(o.operands[1].type), "unit", 1))
              for o in T.walk_ops(outer) if o.name == "tile.descriptor_store"]
    return max([reserve_bytes(outer)] + blocks)


def _rewrite(loop, body, iv, loads, ops, carried, mds, S, tiles=None):
    """`tiles`: the persistent loop the rings live across (pipeline_tiles.py), else None."""
    lb, ub, step = loop.operands[0], loop.operands[1], loop.operands[2]
    ops = [o.operation for o in ops]
    specs = [(ld.operands[0], coords(ld)) for ld in loads]
    host = loop if tiles is None else tiles.loop  # the rings live around it
    with ir.InsertionPoint(host), loop.location:
        rings = [B.build_local_alloc(None, result_type=m.with_buffers(S).type()) for m in mds]
        bt = T.memdesc_of(barrier_type())
        bars = B.build_local_alloc(None, result_type=bt.with_buffers(S).type())
        for j in range(S):
            B.build_mbarrier_init(None, slot_view(bars, _i32(j)), count=len(loads))
        if tiles is not None:
            tiles.n = trip_count(lb, ub, step)
            thresholds(tiles, S - 1)
        for j in range(S - 1):
            if tiles is None:
                it = lb if j == 0 else arith("arith.addi", lb,
                                             arith("arith.muli", step, _i32(j)))
                sj = _i32(j)
                _issue(specs, ops, iv, it, sj, carried, rings, bars, sj, cmp_lt(it, ub))
                continue
            sj = _i32(j)
            tenv, kj, pred = prologue_iteration(tiles, j)
            it = arith("arith.addi", lb, arith("arith.muli", step, kj))
            _issue(specs, ops, iv, it, kj, carried, rings, bars, sj, pred, tenv)
    if tiles is not None:
        with ir.InsertionPoint(loop), loop.location:
            prepare(tiles, S - 1)
            base = arith("arith.muli", tiles.t, tiles.n)
    first = body.operations[0].operation
    with ir.InsertionPoint(first), loop.location:
        k = arith("arith.divsi", arith("arith.subi", iv, lb), step)
        g = k if tiles is None else arith("arith.addi", base, k)  # the global iteration
    with ir.InsertionPoint(loads[0]), loop.location:
        slot = arith("arith.remsi", g, _i32(S))
        phase = arith("arith.andi", arith("arith.divsi", g, _i32(S)), _i32(1))
        B.build_mbarrier_wait(None, slot_view(bars, slot), phase)
        views = [slot_view(r, slot) for r in rings]
    for load, view in zip(loads, views):
        consume_load(load, view)
    wg = async_dot(loop, body, views)
    if wg is not None:  # wgmma(k-1) done, then the copies into the slot it read
        dot, c = wg
        with ir.InsertionPoint(next_op(dot)), loop.location:
            waited = B.build_warpgroup_wait(None, dot.results[0], num=1,
                                            result_type=dot.results[0].type)
        body.operations[len(body.operations) - 1].operation.operands[c] = waited
        ip = next_op(waited.owner)
    else:  # (a synchronous dot: at the top, into the slot iteration k-1 read)
        ip = next_op(k.owner)
    with ir.InsertionPoint(ip), loop.location:
        if tiles is None:
            nxt = arith("arith.addi", iv, arith("arith.muli", step, _i32(S - 1)))
            k_n = arith("arith.addi", k, _i32(S - 1))
            slot_n = arith("arith.remsi", k_n, _i32(S))
            _issue(specs, ops, iv, nxt, k_n, carried, rings, bars, slot_n, cmp_lt(nxt, ub))
        else:  # possibly a later tile's
            slot_n = arith("arith.remsi", arith("arith.addi", g, _i32(S - 1)), _i32(S))
            tenv, k_n, pred = ahead(tiles, k, S - 1)
            nxt = arith("arith.addi", lb, arith("arith.muli", step, k_n))
            _issue(specs, ops, iv, nxt, k_n, carried, rings, bars, slot_n, pred, tenv)
    for op in reversed(ops):  # the original coordinates, now unused
        if not any(True for r in op.results for _ in r.uses):
            op.erase()
    after, host_after = next_op(loop), next_op(host)
    with ir.InsertionPoint(after), loop.location:
        if wg is not None:  # the last wgmma reads its slots until done
            wait_result(loop.results[wg[1]])
    with ir.InsertionPoint(host_after), loop.location:
        for j in range(S):
            B.build_mbarrier_inval(None, slot_view(bars, _i32(j)))
        for r in rings + [bars]:
            B.build_local_dealloc(None, r)


def slot_of(v):
    """The memdesc `v` is a `memdesc_trans` view of (itself if none)."""
    if not isinstance(v.owner, ir.Block) and v.owner.name == "tilegpu.memdesc_trans":
        return v.owner.operands[0]
    return v


def async_dot(loop, body, views):
    """(the body's warpgroup_dot, its carried index) if it can stay in flight across
    iterations (tilegpu-pipeline's conditions: both operands ring slots or their transposed
    views, an f32/i32 accumulator carried for it alone, its result yielded in the same place),
    else None."""
    dots = [getattr(o, "operation", o) for o in T.walk_ops(loop)
            if o.name == "tilegpu.warpgroup_dot"]
    if len(dots) != 1 or dots[0].block != body:
        return None
    dot = dots[0]
    if any(slot_of(v) not in views for v in dot.operands[:2]):
        return None
    c = in_flight_acc(dot, list(body.arguments)[1:],
                      body.operations[len(body.operations) - 1].operation)
    return None if c is None else (dot, c)


def pipeline_tma(module_op, pctx=None):
    for f, reserve, loop in kernel_loops(module_op):
        pipeline_loop(loop, pctx, reserve)


register(Pass("tilegpu-pipeline-tma",
              "Software-pipeline the TMA loads (tile.descriptor_load) of scf.for loops feeding "
              "dots: num_stages rings of buffers and mbarriers", run=pipeline_tma))
