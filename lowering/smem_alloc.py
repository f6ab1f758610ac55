"""`tilegpu-allocate-shared`: an offset in the kernel's shared memory for every buffer.

Buffers are the explicit `tilegpu.local_alloc`s and the scratch of ops whose rules move data
between threads through shared memory (`SCRATCH` in `shared_memory.py`: conversions, reshapes,
cross-warp reductions and scans, join/split/cat through memory, the portable dot, atomics whose
old values are shared).  Each is live over an interval of ops, numbered in program order
(pre-order, so a region op comes before its body):

* scratch: the op itself;
* local_alloc: from the alloc to its last use (through memdesc_index and memdesc_trans
  views); a use inside a loop (scf.for / scf.while) that does not contain the alloc keeps it
  live for the whole loop.

Buffers whose intervals are disjoint may share bytes.  In program order, each buffer takes the
lowest 16-byte-aligned (nvmma_shared buffers: 1 KiB-aligned) offset where it overlaps no placed buffer live at the same time (first
fit).  The pass writes `tilegpu.smem_offset` on each op that has a buffer (and removes stale
ones) and the kernel's total, `tilegpu.shared`, on the module (the largest over its kernels).
It may run again on IR it already allocated (offsets are recomputed).
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T

from . import rules  # noqa: F401  (registers the rules and their scratch sizes)
from .layout_passes import kernels
from .pass_base import Pass, register
from .shared_memory import (ALIGN, OFFSET_ATTR, SHARED_ATTR, align, alloc_bytes, buffer_align,
                            scratch_bytes)

LOOPS = ("scf.for", "scf.while")


def _i32(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


class Numbering:
    """Program-order positions of the ops under a function: `index[op]`, and `last[op]`, the
    position of the last op nested in `op` (itself when it has no regions)."""

    def __init__(self, f: ir.Operation):
        self.ops = T.walk_ops(f)
        self.index = {op: i for i, op in enumerate(self.ops)}
        self.last = {}
        for op in reversed(self.ops):
            end = self.index[op]
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        end = max(end, self.last[inner.operation])
            self.last[op] = end

    def ancestors(self, op: ir.Operation):
        """The ops enclosing `op`, innermost first."""
        p = op.parent
        while p is not None and p.name != "builtin.module":
            yield p
            p = p.parent


MEMDESC_USERS = ("tilegpu.local_store", "tilegpu.local_load", "tilegpu.local_dealloc",
                 "tilegpu.memdesc_index", "tilegpu.memdesc_trans", "tilegpu.async_copy",
                 "tilegpu.warpgroup_dot", "tilegpu.tma_load", "tilegpu.mbarrier_init",
                 "tilegpu.mbarrier_wait", "tilegpu.mbarrier_inval", "tilegpu.tma_store",
                 "tilegpu.mbarrier_arrive")
VIEWS = ("tilegpu.memdesc_index", "tilegpu.memdesc_trans")  # memdescs of (part of) a buffer


def memdesc_users(value: ir.Value) -> list:
    """The ops using a memdesc, through memdesc_index and memdesc_trans views.  Memdescs do
    not flow through control flow (yields, block arguments): their buffer could not be told
    statically."""
    out = []
    for use in value.uses:
        user = use.owner
        if user.name not in MEMDESC_USERS:
            raise ValueError(f"a memdesc can only be used by shared-memory ops, not by "
                             f"'{user.name}'")
        out.append(user)
        if user.name in VIEWS:
            out.extend(memdesc_users(user.results[0]))
    return out


def live_range(num: Numbering, alloc: ir.Operation) -> tuple[int, int]:
    start = end = num.index[alloc]
    inside = set(num.ancestors(alloc))
    for user in memdesc_users(alloc.results[0]):
        end = max(end, num.index[user])
        for anc in num.ancestors(user):
            if anc in inside:
                break
            if anc.name in LOOPS:  # later iterations use it again
                end = max(end, num.last[anc])
    return start, end


def buffers(f: ir.Operation, num: Numbering | None = None) -> list:
    """[(start, end, bytes, op)] of every shared buffer of the kernel `f`, in program order."""
    num = num or Numbering(f)
    out = []
    for op in num.ops:
        if op.name == "tilegpu.local_alloc":
            start, end = live_range(num, op)
            out.append((start, end, alloc_bytes(T.memdesc_of(op.results[0].type)), op))
        else:
            n = scratch_bytes(op)
            if n:
                i = num.index[op]
                out.append((i, i, n, op))
    return out


def alignment(op) -> int:
    """Where the buffer of `op` may start: nvmma_shared buffers at 1 KiB, others 16 bytes
    (128 where TMA writes or reads it: cp.async.bulk.tensor's shared-memory alignment)."""
    if op is not None and op.name == "tilegpu.local_alloc":
        a = buffer_align(T.memdesc_of(op.results[0].type))
        if any(u.name in ("tilegpu.tma_load", "tilegpu.tma_store")
               for u in memdesc_users(op.results[0])):
            a = max(a, TMA_ALIGN)
        return a
    return ALIGN


TMA_ALIGN = 128


def first_fit(bufs) -> tuple[list[int], int]:
    """Offsets for [(start, end, bytes, op)] in order, and the total bytes."""
    placed, offsets, total = [], [], 0
    for start, end, size, *rest in bufs:
        live = sorted((o, o + s) for (o, s, a, b) in placed if a <= end and start <= b)
        a = alignment(rest[0] if rest else None)
        off = 0
        for lo, hi in live:
            if off + size <= lo:
                break
            off = max(off, align(hi, a))
        placed.append((off, size, start, end))
        offsets.append(off)
        total = max(total, off + size)
    return offsets, total


def allocate_function(f: ir.Operation) -> int:
    bufs = buffers(f)
    offsets, total = first_fit(bufs)
    for op in T.walk_ops(f):
        if OFFSET_ATTR in op.attributes:
            del op.attributes[OFFSET_ATTR]
    for (_, _, _, op), off in zip(bufs, offsets):
        op.attributes[OFFSET_ATTR] = _i32(off)
    return total


def allocate_shared(module_op, pctx=None):
    total = 0
    for f in kernels(module_op):
        total = max(total, allocate_function(f))
    module_op.attributes[SHARED_ATTR] = _i32(total)


register(Pass("tilegpu-allocate-shared",
              "Give every shared-memory buffer and scratch an offset by liveness "
              "(tilegpu.smem_offset) and the module its total (tilegpu.shared)",
              run=allocate_shared))
