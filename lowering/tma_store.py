"""`tilegpu-tma-stores`: each `tile.descriptor_store` (a host descriptor's block stored by TMA,
NVIDIA sm_90, `CompileOptions.tma_store`) becomes

    %buf = tilegpu.local_alloc %value : memdesc<block, layout>  (nvmma_shared<swizzle> or row-major)
    tilegpu.tma_store %desc, %buf, coords...
    tilegpu.local_dealloc %buf

The buffer is in the layout the tensor map's box describes (the plan's swizzle: the same
layout a descriptor_load of the block lands in), so the copy engine reads it as the map says;
the local_alloc's rule writes each thread's registers to their swizzled places.  The tma_store
rule fences the generic-proxy writes for the async proxy, synchronizes the CTA, and one thread
issues the bulk copies, commits them and waits until they have read the buffer
(`cp.async.bulk.wait_group.read 0`): after the op the buffer's bytes may be reused (the
barrier before another writer of them is tilegpu-insert-barriers'), and nothing is left in
flight at the kernel's end but the global writes, which the hardware completes.  The buffer
is an ordinary local_alloc, so tilegpu-allocate-shared places it, reusing the bytes of buffers
dead by then (a GEMM's operand rings after its loop).  Runs after tilegpu-tma-loads, before
tilegpu-vector-width and the shared-memory passes.

The stores reaching this pass are those tile-tma-guard (lowering/tma_guard.py) kept: exact on
the hardware.

`tilegpu-tma-store-wait-later`: in a persistent loop whose TMA ring lives across its tiles
(`tilegpu.ring_across_tiles`, lowering/pipeline_tiles.py), a tile's TMA store need not be read
out before the next tile's K loop starts: its buffer becomes one allocation before the loop
(`local_alloc` without a value, `local_dealloc` after it), the store is marked
`tilegpu.wait_later` (no read wait of its own) and a `tilegpu.tma_store_wait` (the issuing
thread's wait, then a barrier) goes before each write of the buffer (`local_store`, the next
tile's epilogue) and after the loop.  So the copy engine reads the tile while the next one's
wgmmas run, as Triton leaves its store in flight until the next epilogue.  The buffer then
lives beside the rings for the whole loop, which pipeline_tiles made room for (it keeps the
rings per tile where rings and epilogue would not fit), beside the largest scratch in the loop
(the guard's fallback conversion, which shared the buffer's bytes before): where that exceeds
the target's shared memory the store keeps its own wait.  Also inside tile-tma-guard's run-time
`scf.if`: the wait there covers a store the previous tile left in flight.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import tile as T
from tilework.dialects.opdefs.tma import WAIT_LATER

from .layout_passes import kernels
from .pass_base import Pass, register
from .pipeline_common import inside, next_op, reserve_bytes
from .shared_memory import alloc_bytes
from .pipeline_tiles import ACROSS_ATTR
from .tma import buffer_layout, coords
from .tma_guard import GUARD_ATTR


def _rewrite(op):
    desc, src, xs = op.operands[0], op.operands[1], coords(op)
    vt = src.type
    md_t = T.memdesc_type(T.shape_of(vt), T.element_type(vt), buffer_layout(op), 1)
    with ir.InsertionPoint(op), op.location:
        buf = B.build_local_alloc(None, src, result_type=md_t)
        B.build_tma_store(None, desc, buf, xs)
        B.build_local_dealloc(None, buf)
    op.erase()


def tma_stores(module_op, pctx=None):
    for f in kernels(module_op):
        for op in [o for o in T.walk_ops(f) if o.name == "tile.descriptor_store"]:
            _rewrite(op)


register(Pass("tilegpu-tma-stores",
              "tile.descriptor_store -> the tile written to a shared buffer in the tensor map's "
              "box layout, copied out by TMA (tilegpu.tma_store)",
              run=tma_stores))


def _tiles_loop(op):
    """The across-tiles loop whose body holds `op` (directly, or in a run-time guard's
    `scf.if` there), or None."""
    parent = op.parent
    if parent.name == "scf.if" and GUARD_ATTR in parent.attributes:
        parent = parent.parent
    return parent if parent.name == "scf.for" and ACROSS_ATTR in parent.attributes else None


def _buffer_ops(store):
    """(the local_alloc with the stored value, its local_dealloc) of a tma_store's buffer,
    beside the store in its block, or None."""
    buf = store.operands[1]
    alloc = buf.owner
    if isinstance(alloc, ir.Block) or alloc.name != "tilegpu.local_alloc" or \
            len(alloc.operands) != 1 or alloc.parent != store.parent:
        return None
    users = [u.owner for u in buf.uses]
    deallocs = [u for u in users if u.name == "tilegpu.local_dealloc"]
    if len(users) != 2 or len(deallocs) != 1 or deallocs[0].parent != store.parent:
        return None
    return alloc, deallocs[0]


def _fits(kernel, loop, alloc, pctx) -> bool:
    """Whether the buffer fits beside what lives across the loop (the rings, their barriers:
    the buffers allocated outside it) and the largest scratch in it (the guard's fallback
    conversion), which the buffer no longer shares bytes with."""
    budget = pctx.target.shared_memory if pctx is not None else 1 << 62
    outside = [o for o in T.walk_ops(kernel)
               if o.name == "tilegpu.local_alloc" and not inside(o, loop)]
    need = sum(alloc_bytes(T.memdesc_of(o.results[0].type)) for o in outside)
    need += alloc_bytes(T.memdesc_of(alloc.results[0].type)) + reserve_bytes(loop)
    return need <= budget


def _wait_later(store, loop, alloc, dealloc):
    """The buffer allocated before `loop`, written after a wait, its store left in flight."""
    value, md_t = alloc.operands[0], alloc.results[0].type
    with ir.InsertionPoint(loop), loop.location:
        buf = B.build_local_alloc(None, result_type=md_t)
    with ir.InsertionPoint(alloc), alloc.location:
        B.build_tma_store_wait(None)
        B.build_local_store(None, value, buf)
    store.operands[1] = buf
    store.attributes[WAIT_LATER] = ir.UnitAttr.get()
    dealloc.erase()
    alloc.erase()
    with ir.InsertionPoint(next_op(loop)), loop.location:
        B.build_tma_store_wait(None)
        B.build_local_dealloc(None, buf)


def tma_store_wait_later(module_op, pctx=None):
    for f in kernels(module_op):
        for st in [o for o in T.walk_ops(f) if o.name == "tilegpu.tma_store"]:
            loop, found = _tiles_loop(st), _buffer_ops(st)
            if loop is not None and found is not None and WAIT_LATER not in st.attributes \
                    and _fits(f, loop, found[0], pctx):
                _wait_later(st, loop, *found)


register(Pass("tilegpu-tma-store-wait-later",
              "in a persistent loop with its TMA ring across tiles, a tile's TMA store is left "
              "reading its buffer (hoisted out of the loop) until the next tile's epilogue "
              "writes it (tilegpu.tma_store_wait)",
              run=tma_store_wait_later))
