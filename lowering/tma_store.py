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

`tile-tma-store-guard` runs first of the tilegpu stage, on the frontend's IR, and decides
which descriptor_stores stay TMA stores.  The frontend gives each one the block-pointer store
it falls back to (`ptr`, `mask`: its pointers and mask, the ops `store_block` emits) and the
tensor's row length (`width`); the TMA store is kept only where it is exact on the hardware
(measured on an H200, issue 9; docs/performance.md "TMA-store epilogue"): every coordinate
>= 0 (a negative one, inner or outer, faults with an illegal instruction where a load clips;
`AxisAnalysis.nonneg`), the inner coordinate a multiple of 16 bytes (else the copy faults too;
as for loads) and the rows a multiple of 16 bytes (the copy writes a row's last 16-byte chunk
whole, past the inner bound: the width's divisibility, specialized per launch by the
launcher's key).  `tma_store="unguarded"` (the probe's and the emulator tests' switch) keeps
every store whose inner coordinate is aligned.  A kept store drops its fallback operands (the
fallback's ops are then dead: tile-combine erases them); a refused one becomes
`tile.store %ptr, %value, %mask` in its place (what the frontend emits without `tma_store`),
and a tensor map no op uses any more leaves the kernel's parameters with its plan.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import tile as T

from tilework.dialects.verify import named_operands
from tilework.dialects.tensor_maps import drop_unused_tensor_maps

from .axis_info import AxisAnalysis, elem_bytes
from .layout_passes import kernels
from .pass_base import Pass, register
from .tma import buffer_layout

ROW_BYTES = 16  # TMA's copy granule: rows and inner coordinates in multiples of it


def _coords(args) -> list:
    return [v for k, v in args.items() if k.startswith("coord") and v is not None]


def _tma_exact(an: AxisAnalysis, args, unguarded: bool) -> bool:
    """Whether the TMA store of descriptor_store `args` writes exactly its block."""
    coords = _coords(args)
    nbytes = elem_bytes(T.element_type(args["src"].type))
    if an.get(coords[-1]).divisibility[0] * nbytes % ROW_BYTES:
        return False
    if unguarded:
        return True
    return all(an.nonneg(c) for c in coords) and \
        an.get(args["width"]).divisibility[0] * nbytes % ROW_BYTES == 0


def _guard(an, op, unguarded: bool):
    args = named_operands(op)
    if args["ptr"] is None:  # no fallback given: the IR asked for the TMA store
        return
    with ir.InsertionPoint(op), op.location:
        if _tma_exact(an, args, unguarded):
            B.build_descriptor_store(None, args["desc"], args["src"], _coords(args),
                                     swizzle=op.attributes["swizzle"])
        else:
            B.build_store(None, args["ptr"], args["src"], args["mask"])
    op.erase()


def tma_store_guard(module_op, pctx=None):
    unguarded = pctx is not None and getattr(pctx.options, "tma_store", None) == "unguarded"
    for f in kernels(module_op):
        ops = [o for o in T.walk_ops(f) if o.name == "tile.descriptor_store"]
        if not ops:
            continue
        an = AxisAnalysis(f)
        for op in ops:
            _guard(an, op, unguarded)
        drop_unused_tensor_maps(f)


def _rewrite(op):
    args = named_operands(op)
    desc, src, coords = args["desc"], args["src"], _coords(args)
    vt = src.type
    md_t = T.memdesc_type(T.shape_of(vt), T.element_type(vt), buffer_layout(op), 1)
    with ir.InsertionPoint(op), op.location:
        buf = B.build_local_alloc(None, src, result_type=md_t)
        B.build_tma_store(None, desc, buf, coords)
        B.build_local_dealloc(None, buf)
    op.erase()


def tma_stores(module_op, pctx=None):
    for f in kernels(module_op):
        for op in [o for o in T.walk_ops(f) if o.name == "tile.descriptor_store"]:
            _rewrite(op)


register(Pass("tile-tma-store-guard",
              "tile.descriptor_store -> itself without its fallback where the TMA store is "
              "exact (coordinates >= 0, rows and the inner coordinate in 16-byte multiples), "
              "else its fallback's masked tile.store",
              run=tma_store_guard))
register(Pass("tilegpu-tma-stores",
              "tile.descriptor_store -> the tile written to a shared buffer in the tensor map's "
              "box layout, copied out by TMA (tilegpu.tma_store)",
              run=tma_stores))
