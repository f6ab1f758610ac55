"""`tilegpu-pipeline`: software pipelining of the loads that feed `tile.dot` in an scf.for
(cp.async multi-buffering, Triton's `num_stages`), and of any load in a loop without dots that
`tl.range(..., num_stages=)` asks for (the fused-softmax tutorial's row loop: the next rows
are copied while this one is reduced; a fill `other` is allowed there when the mask is the
same in every iteration, put back after the read; num_stages - 1 buffers, as Triton's).  The
copies run ahead of the body's stores: as in Triton, a loop asking for stages must not store
what a later iteration loads.

Depth S: the loop's `tile.num_stages` (from `tl.range(..., num_stages=)`), else the compile
option `num_stages`; S <= 1 leaves the loop alone.  A `tile.load` directly in the loop body is
pipelined when

* its result feeds `tile.dot` operands only: directly or through transposes and conversions
  (one `tilegpu.convert_layout` whose users are dots is folded: the local_load gives its
  layout), or through one `tilegpu.local_alloc` (the wgmma path: the slot of the
  multi-buffered memdesc replaces that buffer, in its shared layout; its `memdesc_trans` views,
  tilegpu-warpgroup-dot's one buffer for x and tl.trans(x), then read the slot), also after a
  `tile.trans` (attention's `tl.trans(k)`: the copies' pointers and mask are transposed the
  same way, a relabelling of registers, so they fill the transposed buffer directly; taken
  when its layout keeps the copies' vectors contiguous: a K-major B);
* its pointer and mask are computed, in the body, by side-effect-free ops (no dot) from the
  induction variable, values from outside the loop and *stage-0 carried values*: loop-carried
  values whose next value is computed the same way (`a_ptrs += BLOCK_K * stride`).  A pointer
  that depends on another load of the same iteration is not;
* its `other` is absent or a zero constant (cp.async zero-fills masked elements; any other
  `other` leaves the load alone: the fill would need the consumer iteration's mask);
* its elements are integers or floats, and its accesses (the width tilegpu-vector-width will
  give the copy: contiguity, alignment, mask constancy) move 4, 8 or 16 bytes, what cp.async
  can; a narrower copy would be a synchronous load and store (no overlap, more registers).

The loads of one loop, with that slice of ops, form stage 0; the rest of the body is the last
stage.  With S buffers per load (`!tilegpu.memdesc<..., S>`, a `#tilegpu.swizzled_shared`
layout planned by `plan_shared` from the copy's and the consumer's register layouts, or the
local_alloc's layout):

    prologue:  for j in 0 .. S-2: slice(lb + j*step); async_copy -> slot j (masked off when
               lb + j*step >= ub); commit; the carried pointers' increments
    loop i:    async_wait S-2; async_copy of iteration i + (S-1)*step -> slot (k+S-1) % S
               (masked off past ub); commit; local_load slot k % S (k: the iteration's
               number) into the consumer's layout; the rest of the body; the increments
    after:     async_wait 0; local_dealloc

Each iteration commits one group, so at its top S-1+k groups are committed and waiting for all
but the S-2 newest completes iteration k's.  The copy into slot (k-1) % S comes after the wait
and before the local_load: tilegpu-insert-barriers puts one barrier before it, which orders
both the landed copies before every thread's reads and the previous iteration's reads of that
slot before its overwrite.  The stage-0 carried values are carried S-1 iterations ahead (new
iter_args); the originals are dropped when nothing else uses them.  If S buffers do not fit in
`target.shared_memory` (next to the kernel's largest scratch), S is reduced and the loop gets
`tilegpu.pipeline_note` saying so.

Asynchronous wgmma (Triton's "WGMMA pipelining"): when the body's one `tilegpu.warpgroup_dot`
reads pipelined slots only (directly or through memdesc_trans views: `x @ x^T` reads one
slot twice) and accumulates into a carried value used by it alone (its result
yielded in the same place, f32/i32: see `async_dot`), the loop keeps one wgmma group in flight:

    loop i:    async_wait S-2; the body (warpgroup_dot(k) commits, no wait);
               warpgroup_wait {num = 1} (wgmma(k-1) done: the slot it read is free);
               async_copy of iteration i + (S-1)*step -> slot (k+S-1) % S = (k-1) % S; commit
    after:     warpgroup_wait {num = 0} on the loop's result; async_wait 0; local_dealloc

tilegpu-insert-barriers counts the dot's reads at the wait, so it puts a barrier between the
wait and the copies (another warpgroup may still be reading the slot until its own wait).

With `CompileOptions.wgmma_cp_async_fence` off every copy carries `tilegpu.no_proxy_fence`
(tilegpu-proxy-fences then fences no `async_wait` for it; Triton's and CUTLASS's loops fence
no cp.async data) and the asynchronous dot above is marked so too.
"""
from __future__ import annotations

import math

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects import builders as B
from tilework.dialects import opdefs
from tilework.dialects import tile as T
from tilework.dialects.layout import Blocked, fastest_dim, layout_of, with_layout
from tilework.dialects.layout_nvidia import SwizzledShared
from tilework.dialects.linear_layout import plan_shared
from tilework.dialects.verify import named_operands

from . import rules  # noqa: F401  (registers the scratch sizes)
from .axis_info import AxisAnalysis, elem_bytes, vector_width
from .pass_base import Pass, register
from .module_info import kernels
from .pipeline_invariant import hoist_invariant_operands
from .pipeline_views import plan_reads, read_views, view_reads
from .pipeline_common import (NOTE_ATTR, STAGES_ATTR, arith, clone_slice, cmp_lt,
                              in_flight_acc, kernel_loops, loop_depth, next_op, stage_bytes,
                              wait_result)
from .shared_memory import NO_PROXY_FENCE, shared_contiguity, smem_type

# side-effect-free ops the stage-0 slice may duplicate (not the dot: too costly to repeat)
_SLICE_OPS = frozenset(opdefs.PURE_OPS) - {"tile.dot", "tile.reduce", "tile.scan"}


def _pure(op) -> bool:
    if len(op.regions):
        return False
    return op.name in _SLICE_OPS or op.name.startswith(("arith.", "math."))


def _owner(v):
    return None if isinstance(v.owner, ir.Block) else v.owner


def _is_zero_const(v) -> bool:
    op = _owner(v)
    if op is None or op.name != "arith.constant":
        return False
    try:
        attr = ir.DenseElementsAttr(op.attributes["value"])
        if not attr.is_splat:
            return False
        attr = attr.get_splat_value()
    except (ValueError, TypeError):
        attr = op.attributes["value"]
    try:
        return ir.FloatAttr(attr).value == 0.0 and not str(attr).startswith("-")
    except (ValueError, TypeError):
        return ir.IntegerAttr(attr).value == 0


class _Loop:
    """What the pass knows of one scf.for: its body's ops, the stage-0 carried values (indices
    into the iter_args) and which values stage 0 can compute."""

    def __init__(self, loop):
        self.loop = loop
        self.body = loop.regions[0].blocks[0]
        self.iv = self.body.arguments[0]
        self.carried = list(self.body.arguments)[1:]
        self.ops = [op.operation for op in self.body.operations]
        self.yield_op = self.ops[-1]
        self.yielded = list(self.yield_op.operands)
        self.in_body = set(self.ops)
        # greatest fixed point: carried values whose next value stage 0 computes
        self.stage0 = set(range(len(self.carried)))
        while True:
            self._memo = {}
            keep = {c for c in self.stage0 if self.computable(self.yielded[c])}
            if keep == self.stage0:
                break
            self.stage0 = keep

    def computable(self, v) -> bool:
        """`v` is computed by stage 0 (from the iv, outside values, stage-0 carried values)."""
        key = v
        if key in self._memo:
            return self._memo[key]
        op = _owner(v)
        if op is None:
            if v.owner == self.body:
                ok = v == self.iv or (v.arg_number - 1) in self.stage0
            else:
                ok = not self._inside(v.owner.owner)
        elif op not in self.in_body:
            ok = not self._inside(op)
        else:
            self._memo[key] = False  # cycles cannot happen in a block; be safe
            ok = _pure(op) and all(self.computable(x) for x in op.operands)
        self._memo[key] = ok
        return ok

    def _inside(self, op) -> bool:
        """`op` is nested in the loop body (not defined outside the loop)."""
        op = op.operation
        while op is not None and op.name != "func.func":
            if op == self.loop:
                return True
            op = op.parent.operation if op.parent is not None else None
        return False

    def slice_ops(self, roots) -> list:
        """The body ops (in order) stage 0 runs to compute `roots`."""
        need, stack = set(), list(roots)
        while stack:
            op = _owner(stack.pop())
            if op is None or op not in self.in_body or op in need:
                continue
            need.add(op)
            stack.extend(op.operands)
        return [op for op in self.ops if op in need]


def _consumer(load, an):
    """(kind, op, type) of what a pipelinable load feeds: ("dot", None, load type),
    ("convert", convert_layout, its type), ("alloc", local_alloc, memdesc type); None if
    anything else uses it.  Same-width bitcasts (an fp8 operand loaded as uint8) may come
    first: an "alloc" then reads the slot as the alloc's type (cp.async copies bits); where
    the alloc's layout cannot take the copy's vectors (a K-major fp8 B loaded along N), the
    load is staged: ("stage", None, the type it is read back in: `_transposing_type`), the
    casts and the alloc kept."""
    v, casts = load.results[0], []
    while len(list(v.uses)) == 1 and _same_width_cast(next(iter(v.uses)).owner):
        v = next(iter(v.uses)).owner.results[0]
        casts.append(v)
    uses = [(u.owner, u.operand_number) for u in v.uses]
    if not uses:
        return None
    alloc = _trans_alloc(v) if not casts else None
    if alloc is not None:
        return "trans", alloc, alloc.results[0].type
    if _leads_to_dot(v):
        if not casts and len(uses) == 1 and uses[0][0].name == "tilegpu.convert_layout" and \
                _feeds_dot(uses[0][0].results[0]):
            user = uses[0][0]  # the local_load gives the converted layout itself
            return "convert", user, user.results[0].type
        return "dot", None, load.results[0].type
    if len(uses) != 1:
        return None
    user = uses[0][0]
    if user.name == "tilegpu.local_alloc" and all(_reads_for_dot(u.owner)
                                                  for u in user.results[0].uses):
        if casts and not _copyable(an, load, user):
            return "stage", None, _transposing_type(load, user)
        return "alloc", user, user.results[0].type
    return None


def _trans_alloc(v):
    """The local_alloc (of dot operands) of `tile.trans(v)`, `v`'s only use, else None: the
    slot is that buffer, the copies' pointers and mask transposed alike (a relabelling of
    their registers), so K through `tl.trans` lands where a K-major B is read."""
    uses = list(v.uses)
    if len(uses) != 1 or uses[0].owner.name != "tile.trans" or \
            len(T.shape_of(v.type)) != 2:
        return None
    t = uses[0].owner.results[0]
    users = [u.owner for u in t.uses]
    if len(users) != 1 or users[0].name != "tilegpu.local_alloc" or \
            not all(_reads_for_dot(u.owner) for u in users[0].results[0].uses):
        return None
    return users[0]


def _transposed(x, trans, elem=None):
    """`x` (a pointer or mask tile of the load) transposed as `trans` transposes the load."""
    tt = ir.RankedTensorType(trans.results[0].type)
    rt = ir.RankedTensorType.get(list(tt.shape), elem or T.element_type(x.type), tt.encoding)
    return ir.Operation.create("tile.trans", results=[rt], operands=[x],
                               attributes={"order": trans.attributes["order"]}).results[0]


def _retype_casts(v, layout):
    while len(list(v.uses)) == 1 and _same_width_cast(next(iter(v.uses)).owner):
        v = next(iter(v.uses)).owner.results[0]
        v.set_type(with_layout(v.type, layout))


def _erase_casts(load):
    """Drop the bitcast chain left without users after its alloc became a slot."""
    chain, v = [], load.results[0]
    while len(list(v.uses)) == 1 and _same_width_cast(next(iter(v.uses)).owner):
        chain.append(next(iter(v.uses)).owner)
        v = chain[-1].results[0]
    if chain and not list(v.uses):
        for op in reversed(chain):
            op.erase()


def _transposing_type(load, alloc):
    """The register type a staged load is read back in, for an alloc whose contiguous dim
    is not the copies' (a K-major fp8 B loaded along N): 4x4 blocks of bytes per thread, so
    the slot is read and the alloc written 4 bytes at a time (LLVM permutes the bytes), 8
    threads along the alloc's dim and 4 along the copies' (a store of 32 lanes then touches
    16 banks).  Else the load's own type."""
    lt = load.results[0].type
    lay, shape = layout_of(lt), T.shape_of(lt)
    md = T.memdesc_of(alloc.results[0].type)
    fast, _ = fastest_dim(lay)
    cont = next((d for d in range(len(shape)) if shared_contiguity(
        md.layout, md.shape, d) >= 4), None)
    if not isinstance(lay, Blocked) or len(shape) != 2 or fast is None or cont is None or \
            cont == fast or elem_bytes(T.element_type(lt)) != 1:
        return lt
    spt, tpw, wpc = [1, 1], [1, 1], [1, 1]
    spt[fast] = spt[cont] = 4
    tpw[cont], tpw[fast] = 8, 4
    warps = math.prod(lay.warps_per_cta)
    if math.prod(lay.threads_per_warp) != 32:
        return lt
    for d in (fast, cont):  # warps along the copies' dim first, then the other
        room = max(1, shape[d] // (spt[d] * tpw[d]))
        wpc[d] = min(room, warps // math.prod(wpc))
    new = Blocked(tuple(spt), tuple(tpw), tuple(wpc), (fast, cont))
    if math.prod(wpc) != warps or any(shape[d] % (spt[d] * tpw[d] * wpc[d]) for d in (0, 1)):
        return lt  # (a tile too small for the blocks: copies)
    return with_layout(lt, new)


def _same_width_cast(op) -> bool:
    if op.name != "arith.bitcast" or not T.is_tensor(op.results[0].type):
        return False
    a, b = (T.element_type(x.type) for x in (op.operands[0], op.results[0]))
    return elem_bytes(a) == elem_bytes(b)


def _copyable(an, load, alloc) -> bool:
    """Whether the alloc's shared layout keeps each copy's elements contiguous along the
    pointers' contiguous dim."""
    fast, _ = fastest_dim(layout_of(named_operands(load)["ptr"].type))
    md = T.memdesc_of(alloc.results[0].type)
    return fast is not None and \
        shared_contiguity(md.layout, md.shape, fast) >= copy_width(an, load)


_VIEWS = ("tile.trans", "tilegpu.convert_layout")


def _leads_to_dot(v) -> bool:
    """Every use of `v` is a dot operand, directly or through transposes and conversions."""
    return all((u.owner.name == "tile.dot" and u.operand_number in (0, 1)) or
               (u.owner.name in _VIEWS and _leads_to_dot(u.owner.results[0])) for u in v.uses)


def _feeds_dot(v) -> bool:
    return all(u.owner.name == "tile.dot" and u.operand_number in (0, 1) for u in v.uses)


def _reads_for_dot(op) -> bool:
    """A user of a local_alloc'd operand buffer: a dot reading it from shared memory (wgmma),
    a local_load feeding dots, its dealloc, or a transposed view of it read so (the other
    operand of tilegpu-warpgroup-dot's `x` / `tl.trans(x)` pair: the slot's view)."""
    if op.name == "tilegpu.local_load":
        return _feeds_dot(op.results[0])
    if op.name == "tilegpu.memdesc_trans":
        return all(u.owner.name != "tilegpu.local_dealloc" and _reads_for_dot(u.owner)
                   for u in op.results[0].uses)
    return op.name in ("tilegpu.warpgroup_dot", "tilegpu.local_dealloc")


def _viewed(v):
    """The memdesc `v` is a memdesc_trans view of (itself if none)."""
    while not isinstance(v.owner, ir.Block) and v.owner.name == "tilegpu.memdesc_trans":
        v = v.owner.operands[0]
    return v


def copy_width(an, load) -> int:
    """Elements per access of the load (as tilegpu-vector-width will find them for its
    copy: the `valid` bit added to the mask is uniform)."""
    args = named_operands(load)
    ptr = args["ptr"]
    fast, spt = fastest_dim(layout_of(ptr.type))
    if fast is None:
        return 1
    return vector_width(an, ptr, args["mask"], fast, min(spt, T.shape_of(ptr.type)[fast]))


def _plain_loop(info: _Loop) -> bool:
    """A loop whose loads may be pipelined whatever they feed: `tl.range(..., num_stages=)`
    asked for it and the body has no dot (a dot's loop pipelines its operands only)."""
    dots = ("tile.dot", "tilegpu.warpgroup_dot")
    return STAGES_ATTR in info.loop.attributes and not any(
        o.name in dots for op in info.ops for o in (op, *_nested(op)))


def _invariant(info: _Loop, v) -> bool:
    """`v` is the same in every iteration: computed without the iv or carried values."""
    op = _owner(v)
    if op is None:
        return v.owner != info.body and not info._inside(v.owner.owner)
    if op not in info.in_body:
        return not info._inside(op)
    return _pure(op) and all(_invariant(info, x) for x in op.operands)


def buffered_loads(info: _Loop):
    """(op, its named operands, element type) of the body's tile.loads whose elements a
    shared buffer holds as loaded (integers or floats of a width shared memory stores)."""
    for op in info.ops:
        if op.name != "tile.load":
            continue
        elem = T.element_type(op.results[0].type)
        if not (T.isa(elem, ir.IntegerType) or T.isa(elem, ir.FloatType)) or \
                smem_type(elem) != elem:
            continue
        yield op, named_operands(op), elem


def _candidates(info: _Loop, an) -> list:
    out = []
    plain = _plain_loop(info)
    for op, args, elem in buffered_loads(info):
        fill = args["other"] is not None and not _is_zero_const(args["other"])
        if fill and not (plain and _invariant(info, args["mask"])):
            continue  # (the fill needs the consumer iteration's mask: one that never changes)
        if not all(info.computable(v) for v in (args["ptr"], args["mask"]) if v is not None):
            continue
        cons = _consumer(op, an)
        if cons is not None and cons[0] == "dot":
            reads = view_reads(op)
            lay = plan_reads(op, reads) if reads else None
            if lay is not None:  # (pipeline_views.py)
                cons = ("views", reads, lay)
        if cons is None and plain:
            cons = ("plain", None, op.results[0].type)
        if cons is None or (fill and cons[0] != "plain"):
            continue
        vec = copy_width(an, op)
        if vec * elem_bytes(elem) < 4:  # cp.async moves 4, 8 or 16 bytes: the copy would be
            continue                    # a synchronous load and store, no overlap
        if cons[0] == "trans":  # the transposed copies' contiguous dim, in the alloc's layout
            fast, _ = fastest_dim(layout_of(cons[1].operands[0].type))
            md = T.memdesc_of(cons[2])
            if fast is None or shared_contiguity(md.layout, md.shape, fast) < vec:
                continue
        out.append((op, args, cons, vec))
    return out


def _shared_layout(load, cons, vec: int) -> str:
    """The local_alloc's layout, else the swizzle `plan_shared` finds cheapest for the copy's
    writes (the pointers' layout) and the consumer's reads, if it keeps the copy's `vec`
    elements contiguous (else rows unswizzled along the pointers' contiguous dim)."""
    kind, user, ty = cons
    if kind in ("alloc", "trans"):
        return T.memdesc_of(ty).layout
    if kind == "views":
        return ty
    shape = T.shape_of(load.results[0].type)
    ptr_layout = layout_of(named_operands(load)["ptr"].type)
    src = ptr_layout.linear(shape)
    dst = layout_of(ty).linear(shape)
    eb = elem_bytes(T.element_type(load.results[0].type))
    sw = plan_shared(src, dst, shape, eb).swizzle
    text = SwizzledShared(sw.vec, sw.per_phase, sw.max_phase, tuple(sw.order)).text()
    fast, _ = fastest_dim(ptr_layout)
    if shared_contiguity(text, shape, fast) >= vec:
        return text
    order = (fast,) + tuple(d for d in reversed(range(len(shape))) if d != fast)
    return SwizzledShared(vec, 1, 1, order).text()


class _Consts:
    """Integer constants, each made once, at the insertion point current at the first ask
    (before the loop: they dominate its body too)."""

    def __init__(self, ip):
        self.ip, self.made = ip, {}

    def __call__(self, v, t):
        key = (int(v), str(t))
        if key not in self.made:
            with self.ip:
                self.made[key] = ir.Operation.create(
                    "arith.constant", results=[t],
                    attributes={"value": ir.IntegerAttr.get(t, int(v))}).results[0]
        return self.made[key]

    def times(self, step, j):
        """step * j, folded when the step is a constant."""
        op = _owner(step)
        if op is not None and op.name == "arith.constant":
            return self(ir.IntegerAttr(op.attributes["value"]).value * j, step.type)
        return step if j == 1 else arith("arith.muli", step, self(j, step.type))


def _issue(info, cands, allocs, slot, iv, valid, carried_vals, copy_ops, unfenced=False):
    """Stage 0 at the insertion point for the iteration with induction value `iv`, the
    stage-0 carried values `carried_vals` (index -> value): the ops computing the pointers and
    masks (`copy_ops`), the copies into `slot` masked by `valid`, and a commit.  `unfenced`:
    the copies carry NO_PROXY_FENCE (tilegpu-proxy-fences fences no wait for them).  Returns
    the value map, which `_advance` continues."""
    env = {info.iv: iv}
    for c, v in carried_vals.items():
        env[info.carried[c]] = v
    clone_slice(copy_ops, env)
    i1 = ir.IntegerType.get_signless(1)
    for (load, args, (kind, user, _)), alloc in zip(cands, allocs):
        ptr_t = args["ptr"].type
        mask_t = ir.RankedTensorType.get(T.shape_of(ptr_t), i1, T.as_tensor(ptr_t).encoding)
        keep = B.build_splat(None, valid, result_type=mask_t)
        mask = args["mask"]
        mask = keep if mask is None else arith("arith.andi", env.get(mask, mask), keep)
        md = T.memdesc_of(alloc.type)
        one = T.memdesc_type(md.shape, md.elem, md.layout, 1)
        dst = B.build_memdesc_index(None, alloc, slot, result_type=one)
        ptr = env.get(args["ptr"], args["ptr"])
        if kind == "trans":
            trans = user.operands[0].owner
            ptr, mask = _transposed(ptr, trans), _transposed(mask, trans, i1)
        B.build_async_copy(None, ptr, dst, mask, attributes={
            NO_PROXY_FENCE: ir.UnitAttr.get()} if unfenced else None)
    B.build_async_commit_group(None)
    return env


def _advance(info, env, next_ops, s0):
    """The next stage-0 carried values (cloning `next_ops`, the rest of the slice, at the
    insertion point: in the loop, at its end, as the original increments were, so the old and
    new pointers are not both live across the body)."""
    clone_slice(next_ops, env)
    return {c: env.get(info.yielded[c], info.yielded[c]) for c in s0}


def _live_carried(info, dropped_loads, candidates_c) -> set:
    """Stage-0 carried indices still needed once the pipelined loads are gone: used by an op
    with effects or regions, by another carried value's next value, or by the loop's
    results."""
    live = {c for c in candidates_c if any(True for _ in info.loop.results[c].uses)}
    roots = []
    for op in info.ops[:-1]:
        if op in dropped_loads:
            continue
        if not _pure(op):
            roots.extend(op.operands)
            for inner in _nested(op):
                roots.extend(inner.operands)
    roots.extend(v for c, v in enumerate(info.yielded) if c not in candidates_c)
    seen = set()
    while True:
        stack = list(roots) + [info.yielded[c] for c in live]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            op = _owner(v)
            if op is None:
                if v.owner == info.body and v != info.iv:
                    c = v.arg_number - 1
                    if c in candidates_c:
                        live.add(c)
                continue
            if op in info.in_body and op not in dropped_loads:
                stack.extend(op.operands)
        if all(info.yielded[c] in seen for c in live):
            return live


def _nested(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _nested(inner.operation)


def pipeline_loop(loop, pctx, reserve: int, an) -> bool:
    depth = loop_depth(loop, pctx, 3)
    if depth <= 1:
        return False
    info = _Loop(loop)
    cands = _candidates(info, an)
    if not cands:
        return False
    if _plain_loop(info) and depth > 2:
        # buffers as Triton's pipeliner gives such a loop (num_stages - 1): the occupancy a
        # host computes from metadata.shared (the softmax tutorial's grid) comes out alike
        depth -= 1
    layouts = [_shared_layout(load, cons, vec) for load, _, cons, vec in cands]
    cands = [c[:3] for c in cands]
    per_stage = stage_bytes([load for load, _, _ in cands], layouts)
    budget = pctx.target.shared_memory if pctx is not None else 1 << 62
    stages = depth
    while stages > 1 and stages * per_stage + reserve > budget:
        stages -= 1
    if stages < depth:
        loop.attributes[NOTE_ATTR] = ir.StringAttr.get(
            f"num_stages {depth} -> {stages}: {depth} x {per_stage} bytes of buffers (and "
            f"{reserve} of scratch) exceed the {budget} bytes of shared memory")
    if stages <= 1:
        return False
    unfenced = pctx is not None and not pctx.options.wgmma_cp_async_fence
    if unfenced:
        wg = async_dot(info, cands)
        if wg is not None:  # its operands: ring slots that only cp.async writes
            wg[0].attributes[NO_PROXY_FENCE] = ir.UnitAttr.get()
    _rewrite(info, cands, layouts, stages, unfenced)
    return True


def async_dot(info, cands):
    """(the body's warpgroup_dot, its carried index) if it can stay in flight across
    iterations (see the module docstring), else None."""
    dots = [op for op in info.ops if op.name == "tilegpu.warpgroup_dot"]
    nested = [o for op in info.ops for o in _nested(op) if o.name == "tilegpu.warpgroup_dot"]
    if len(dots) != 1 or nested:
        return None
    dot = dots[0]
    slots = {user.results[0] for _, _, (kind, user, _) in cands if kind in ("alloc", "trans")}
    if _viewed(dot.operands[0]) not in slots or _viewed(dot.operands[1]) not in slots:
        return None  # an operand buffer written in the body would race with the pending read
    c = in_flight_acc(dot, info.carried, info.yield_op)
    return None if c is None else (dot, c)


def _rewrite(info, cands, layouts, S, unfenced=False):
    loop = info.loop
    lb, ub, step = list(loop.operands)[:3]
    i32 = ir.IntegerType.get_signless(32)
    s0 = sorted(info.stage0)
    loads = {load for load, _, _ in cands}
    roots = [v for _, args, _ in cands for v in (args["ptr"], args["mask"]) if v is not None]
    copy_ops = info.slice_ops(roots)
    next_ops = [op for op in info.slice_ops(roots + [info.yielded[c] for c in s0])
                if op not in set(copy_ops)]
    live = _live_carried(info, loads, set(s0))
    kept = [c for c in range(len(info.carried)) if c not in s0 or c in live]
    inits = list(loop.operands)[3:]
    wg = async_dot(info, cands)
    with ir.InsertionPoint(loop), loop.location:
        allocs = []
        for (load, _, (kind, user, ty)), lay in zip(cands, layouts):
            lt = load.results[0].type  # (an "alloc" after bitcasts: the alloc's type)
            elem = T.memdesc_of(ty).elem if kind in ("alloc", "trans") else T.element_type(lt)
            shape = T.memdesc_of(ty).shape if kind == "trans" else T.shape_of(lt)
            allocs.append(B.build_local_alloc(None, result_type=T.memdesc_type(
                shape, elem, lay, S)))
        # constants go before the buffers: above the new loop, whenever they are made
        _const = _Consts(ir.InsertionPoint(allocs[0].owner))
        ahead = {c: inits[c] for c in s0}
        for j in range(S - 1):
            iv = lb if j == 0 else arith("arith.addi", lb, _const.times(step, j))
            env = _issue(info, cands, allocs, _const(j, i32), iv, cmp_lt(iv, ub), ahead,
                         copy_ops, unfenced)
            ahead = _advance(info, env, next_ops, s0)
        new = scf.ForOp(lb, ub, step, [inits[c] for c in kept] + [ahead[c] for c in s0]
                        + [_const(0, i32), _const(S - 1, i32)])
    nb = new.body
    n_iv, n_ahead, rd, wr = adopt(info, new, kept, s0)
    with ir.InsertionPoint(nb), loop.location:
        B.build_async_wait(None, num=S - 2)
        iv = arith("arith.addi", n_iv, _const.times(step, S - 1))
        if wg is None:
            env = _issue(info, cands, allocs, wr, iv, cmp_lt(iv, ub),
                         dict(zip(s0, n_ahead)), copy_ops, unfenced)
        for (load, _, (kind, user, ty)), alloc in zip(cands, allocs):
            md = T.memdesc_of(alloc.type)
            slot = B.build_memdesc_index(None, alloc, rd, result_type=T.memdesc_type(
                md.shape, md.elem, md.layout, 1))
            if kind == "views":
                read_views(slot, user)
            elif kind in ("alloc", "trans"):
                for u in list(user.results[0].uses):
                    if u.owner.name == "tilegpu.local_dealloc":
                        u.owner.erase()
                user.results[0].replace_all_uses_with(slot)
            else:
                val = B.build_local_load(None, slot, result_type=ty)
                args = named_operands(load)
                if args["other"] is not None and not _is_zero_const(args["other"]):
                    with ir.InsertionPoint(load):  # an invariant mask: the copy's, refilled
                        val = ir.Operation.create("arith.select", results=[ty], operands=[
                            args["mask"], val, args["other"]]).results[0]
                (user or load).results[0].replace_all_uses_with(val)
                if kind == "stage":  # the casts to the alloc follow the read's layout
                    _retype_casts(val, layout_of(ty))
            if user is not None and kind != "views":
                trans = user.operands[0].owner if kind == "trans" else None
                user.erase()
                if trans is not None:
                    trans.erase()
            _erase_casts(load)
            load.erase()
        one = _const(1, i32)
        last = _const(S - 1, i32)
        zero = _const(0, i32)
        incs = []
        for x in (rd, wr):
            wrap = ir.Operation.create("arith.cmpi", results=[ir.IntegerType.get_signless(1)],
                                       operands=[x, last], attributes={
                                           "predicate": ir.IntegerAttr.get(
                                               ir.IntegerType.get_signless(64), 0)}).results[0]
            incs.append(ir.Operation.create("arith.select", results=[i32], operands=[
                wrap, zero, arith("arith.addi", x, one)]).results[0])
    # the rest of the body, then the yield; the dropped carried values' updates die
    with ir.InsertionPoint(nb), loop.location:
        ny = scf.YieldOp([info.yielded[c] for c in kept] + list(n_ahead) + incs)
    move_body(info, ny)
    with ir.InsertionPoint(ny), loop.location:  # the ahead values' increments, last
        if wg is not None:  # wgmma(k-1) done, then the copies into the slot it read
            dot, c = wg
            waited = B.build_warpgroup_wait(None, dot.results[0], num=1,
                                            result_type=dot.results[0].type)
            ny.operation.operands[kept.index(c)] = waited
            env = _issue(info, cands, allocs, wr, iv, cmp_lt(iv, ub),
                         dict(zip(s0, n_ahead)), copy_ops, unfenced)
        nxt = _advance(info, env, next_ops, s0)
    for i, c in enumerate(s0):
        ny.operation.operands[len(kept) + i] = nxt[c]
    rewire(info, new, kept)
    # after the loop: wait for every copy (those past the end too), free the buffers
    with ir.InsertionPoint(next_op(loop)), loop.location:
        if wg is not None:  # (before the deallocs: the last wgmma reads its slots until done)
            wait_result(new.results[kept.index(wg[1])])
        B.build_async_wait(None, num=0)
        for a in allocs:
            B.build_local_dealloc(None, a)
    loop.erase()


def _erase_dead(block):
    """Side-effect-free ops whose results are unused (the dropped carried values' updates)."""
    changed = True
    while changed:
        changed = False
        for op in reversed([o.operation for o in block.operations]):
            if _pure(op) and not any(True for r in op.results for _ in r.uses):
                op.erase()
                changed = True


def adopt(info: _Loop, new, kept, s0):
    """The new loop `new` takes the old one's attributes.  -> its induction variable, the
    stage-0 values carried ahead (after the `kept` carried values) and the read and write
    slot indices (the last two iter_args)."""
    for name in [getattr(a, "name", a) for a in info.loop.attributes]:
        new.operation.attributes[name] = info.loop.attributes[name]
    nargs = list(new.body.arguments)
    return nargs[0], nargs[1 + len(kept):1 + len(kept) + len(s0)], nargs[-2], nargs[-1]


def move_body(info: _Loop, ny):
    """The old body's ops but its yield move before `ny` (the new loop's yield)."""
    for op in [o.operation for o in info.body.operations]:
        if op != info.yield_op:
            op.move_before(ny)
    info.yield_op.erase()


def rewire(info: _Loop, new, kept):
    """Uses of the old loop's iv, `kept` carried values and results read the new loop's; the
    dropped carried values' updates die."""
    nargs = list(new.body.arguments)
    info.iv.replace_all_uses_with(nargs[0])
    for c, a in zip(kept, nargs[1:1 + len(kept)]):
        info.carried[c].replace_all_uses_with(a)
    _erase_dead(new.body)
    for c, r in zip(kept, list(new.results)[:len(kept)]):
        info.loop.results[c].replace_all_uses_with(r)


def pipeline(module_op, pctx=None):
    held = {f: hoist_invariant_operands(f) for f in kernels(module_op)}  # (buffers kept)
    for f, reserve, loop in kernel_loops(module_op):
        pipeline_loop(loop, pctx, reserve + held.get(f, 0), AxisAnalysis(f))


register(Pass("tilegpu-pipeline",
              "Software-pipeline the loads feeding tile.dot in scf.for loops (cp.async into "
              "num_stages shared buffers)", run=pipeline))


# what AMD's stream pipelining (`pipeline_amd.py`) shares with this pass
LoopInfo, consumer, shared_layout = _Loop, _consumer, _shared_layout
live_carried, Consts, is_pure = _live_carried, _Consts, _pure
