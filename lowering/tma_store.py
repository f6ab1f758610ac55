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
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import tile as T

from .layout_passes import kernels
from .pass_base import Pass, register
from .tma import buffer_layout, coords


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
