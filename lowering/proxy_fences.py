"""`tilegpu-proxy-fences`: `fence.proxy.async` where the generic-proxy writes of wgmma operands
happen, instead of before every wgmma.

wgmma reads its shared operands through the async proxy, so the generic writes of those bytes
(st.shared of a `local_alloc` with a value or a `local_store`; `cp.async`'s copies, which land
in the generic proxy when an `async_wait` completes them) need a `fence.proxy.async` by the
writing thread before the barrier that publishes them.  Without this pass each
`warpgroup_dot`'s rule fences before its own barrier: in attention's key loop that is one fence
per dot per iteration (ptxas: `MEMBAR.ALL.CTA` + `FENCE.VIEW.ASYNC.S`, twice an iteration),
and q's buffer, written once before the loop, was fenced again every iteration.

Here the writers fence instead, right after their writes, where they are:

* a `local_alloc` with a value or a `local_store` whose bytes a wgmma reads (any
  `warpgroup_dot` operand's interval overlaps them) gets `tilegpu.proxy_fence`; a write
  hoisted before a loop is fenced there, once;
* if an `async_copy` writes such bytes, every `async_wait` gets it: the fence follows the wait
  (each thread fences the copies it issued and the wait completed), before the barrier the
  loop has after it anyway (tilegpu-pipeline's), and before the next copies are issued;
* every `warpgroup_dot` then gets `tilegpu.writers_fence` and its rule emits no fence.

TMA loads write through the async proxy (no fence); the mbarrier ops (a warp-specialized
consumer's arrive releasing a slot too) write no operand bytes.  This pass also owns the decision of
`CompileOptions.wgmma_cp_async_fence` (reading the option itself): off, a dot whose operands
are ring slots only cp.async writes (`tilegpu.cp_async_operands`, the fact tilegpu-pipeline
records) gets `tilegpu.no_proxy_fence` (Triton's code: its rule emits no fence), and so does
every cp.async copy: no wait is fenced for cp.async data, as Triton's and CUTLASS's cp.async +
wgmma loops do (attention's K and V rings: the key loop's `MEMBAR.ALL.CTA` +
`FENCE.VIEW.ASYNC.S` go; q's generic writes stay fenced).  A kernel with a memdesc op this
pass does not know (or memdescs carried through control flow) is left alone otherwise: its
dots keep their own fence.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T

from .module_info import kernels
from .pass_base import Pass, register
from .shared_memory import CP_ASYNC_OPERANDS, NO_PROXY_FENCE
from .smem_barriers import memdesc_interval

FENCE_ATTR = "tilegpu.proxy_fence"     # on a writer: fence.proxy.async after its writes
WRITERS_ATTR = "tilegpu.writers_fence"  # on a warpgroup_dot: its operands' writers fence

# ops that may take or give memdescs, and whether they write a wgmma operand's bytes
_KNOWN = frozenset({
    "tilegpu.local_alloc", "tilegpu.local_store", "tilegpu.local_load",
    "tilegpu.local_dealloc", "tilegpu.memdesc_index", "tilegpu.memdesc_trans",
    "tilegpu.async_copy", "tilegpu.warpgroup_dot", "tilegpu.tma_load", "tilegpu.tma_store",
    "tilegpu.mbarrier_init", "tilegpu.mbarrier_inval", "tilegpu.mbarrier_wait",
    "tilegpu.mbarrier_arrive"})


def _overlaps(iv, ivs) -> bool:
    return any(iv[0] < o[1] and o[0] < iv[1] for o in ivs)


def _touches_memdesc(op) -> bool:
    return any(T.is_memdesc(v.type) for v in list(op.operands) + list(op.results)) or \
        any(T.is_memdesc(a.type) for r in op.regions for b in r.blocks for a in b.arguments)


def plan(f):
    """(writers, waits, dots) to mark in kernel `f`, or None to leave it alone."""
    ops = T.walk_ops(f)
    dots = [op for op in ops if op.name == "tilegpu.warpgroup_dot"]
    if not dots:
        return None
    try:
        read = [memdesc_interval(v)[:2] for d in dots for v in list(d.operands)[:2]
                if T.is_memdesc(v.type)]
        # (a NO_PROXY_FENCE dot reads ring slots only cp.async writes, and the option says
        # those go unfenced: its copies need no fence at the wait)
        fenced = [memdesc_interval(v)[:2] for d in dots if NO_PROXY_FENCE not in d.attributes
                  for v in list(d.operands)[:2] if T.is_memdesc(v.type)]
        writers, copies = [], False
        for op in ops:
            if not _touches_memdesc(op):
                continue
            if op.name not in _KNOWN:
                return None
            if op.name == "tilegpu.local_alloc" and len(op.operands):
                iv = memdesc_interval(op.results[0])[:2]
            elif op.name == "tilegpu.local_store":
                iv = memdesc_interval(op.operands[1])[:2]
            elif op.name == "tilegpu.async_copy":
                if NO_PROXY_FENCE not in op.attributes:  # (the option off: not fenced)
                    copies |= _overlaps(memdesc_interval(op.operands[1])[:2], fenced)
                continue
            else:
                continue
            if _overlaps(iv, read):
                writers.append(op)
    except ValueError:  # a memdesc whose buffer cannot be told
        return None
    waits = [op for op in ops if op.name == "tilegpu.async_wait"] if copies else []
    return writers, waits, dots


def place_proxy_fences(module_op, pctx=None):
    unfenced = pctx is not None and not pctx.options.wgmma_cp_async_fence
    for f in kernels(module_op):
        for op in T.walk_ops(f):
            for a in (FENCE_ATTR, WRITERS_ATTR, NO_PROXY_FENCE):
                if a in op.attributes:
                    del op.attributes[a]
            if unfenced and (op.name == "tilegpu.async_copy" or (
                    op.name == "tilegpu.warpgroup_dot" and CP_ASYNC_OPERANDS in op.attributes)):
                op.attributes[NO_PROXY_FENCE] = ir.UnitAttr.get()
        p = plan(f)
        if p is None:
            continue
        writers, waits, dots = p
        for op in writers + waits:
            op.attributes[FENCE_ATTR] = ir.UnitAttr.get()
        for op in dots:
            op.attributes[WRITERS_ATTR] = ir.UnitAttr.get()


register(Pass("tilegpu-proxy-fences",
              "fence.proxy.async after the generic writes of wgmma operands (not per wgmma)",
              run=place_proxy_fences))
