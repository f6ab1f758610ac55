"""Loop-invariant wgmma operands written once (part of `tilegpu-warpgroup-dot`, after its
rewrite): attention's `tl.dot(q, k)` in the key loop wrote q into its nvmma buffer every
iteration.

A `local_alloc` of a value defined outside the scf.for directly around it, whose users are one
`tilegpu.warpgroup_dot` of that loop body and its `local_dealloc`, moves before the outermost
loop around it in which the value is invariant (its dealloc after that loop); allocs of the
same value into the same memdesc type before one loop become one buffer.
tilegpu-allocate-shared keeps a buffer used in a loop live for the whole loop;
tilegpu-insert-barriers orders the write before the first wgmma, and tilegpu-proxy-fences has
the write fence itself (fence.proxy.async) where it is, once, before the loop.

All the way out: attention backward's dK/dV reads k and v in three query loops inside a loop
over a group's heads; written before the inner loops only, k and v stayed live in registers
across the outer loop (237 -> 255 registers and spills at D=64 causal); written before the
outer loop, their registers die there.  fp32 operands are rounded to tf32 in the loop (the
alloc reads the rounding, not the invariant value): they stay.

Then `share_equal_buffers`: allocs of one value into one memdesc type in one block, only read
by warpgroup_dots, become one buffer (the forward's q: one write for the peeled first key
block and every key loop instead of one per loop, which kept q's registers live across the
loops: D=256 spilled).
"""
from __future__ import annotations

from tilework.dialects import tile as T

from .pipeline_common import invariant_in, outermost_invariant

_LOOPS = ("scf.for", "scf.while")


def _hoistable(alloc):
    """(the loop to hoist before, the dealloc) if `alloc` can move out of the loop around it,
    else None."""
    loop = alloc.parent
    if loop is None or loop.name != "scf.for" or len(alloc.operands) != 1 or \
            not invariant_in(alloc.operands[0], loop):
        return None
    users = [u.owner for u in alloc.results[0].uses]
    dots = [u for u in users if u.name == "tilegpu.warpgroup_dot"]
    deallocs = [u for u in users if u.name == "tilegpu.local_dealloc"]
    if len(dots) != 1 or len(deallocs) != 1 or len(users) != 2 or dots[0].parent != loop:
        return None
    return outermost_invariant(loop, alloc.operands[0], _LOOPS), deallocs[0]


def hoist_invariant_operands(f) -> None:
    """Moves the hoistable operand buffers of the kernel `f` out of their loops (see above)."""
    kept = {}  # (value, memdesc type, loop) -> the hoisted alloc
    for alloc in [op for op in T.walk_ops(f) if op.name == "tilegpu.local_alloc"]:
        found = _hoistable(alloc)
        if found is None:
            continue
        loop, dealloc = found
        key = (alloc.operands[0], str(alloc.results[0].type), loop)
        if key in kept:  # one buffer for the value's every dot in this loop
            dealloc.erase()
            alloc.results[0].replace_all_uses_with(kept[key].results[0])
            alloc.erase()
            continue
        alloc.move_before(loop)
        dealloc.move_after(loop)
        kept[key] = alloc


def _read_by_dots(alloc) -> bool:
    """`alloc` (of a value) is only read, by warpgroup_dots, and freed."""
    return all(u.owner.name in ("tilegpu.warpgroup_dot", "tilegpu.local_dealloc")
               for u in alloc.results[0].uses)


def share_equal_buffers(f) -> None:
    """Allocs of one value into one memdesc type in one block, each only read by
    warpgroup_dots, become the first of them, freed after the last of their deallocs:
    attention's q, written before the peeled first key block and before each key loop, is
    written once, and its registers die there (at D=256 they stayed live across the loops:
    64 registers a thread, and ptxas spilled)."""
    groups = {}
    for alloc in [op for op in T.walk_ops(f) if op.name == "tilegpu.local_alloc"]:
        if len(alloc.operands) == 1 and _read_by_dots(alloc):
            groups.setdefault((alloc.operands[0], str(alloc.results[0].type)), []).append(alloc)
    for allocs in groups.values():
        first = allocs[0]
        same = [a for a in allocs if a.block == first.block]
        deallocs = [u.owner.operation for a in same for u in a.results[0].uses
                    if u.owner.name == "tilegpu.local_dealloc"]
        if len(same) < 2 or any(d.block != first.block for d in deallocs):
            continue
        pos = {op.operation: i for i, op in enumerate(first.block.operations)}
        last = max(deallocs, key=lambda d: pos[d], default=None)
        for d in deallocs:
            if d != last:
                d.erase()
        for a in same[1:]:  # (walk order: the first dominates the rest of its block)
            a.results[0].replace_all_uses_with(first.results[0])
            a.erase()
