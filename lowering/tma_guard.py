"""`tile-tma-guard`: which host-descriptor accesses stay TMA copies, decided from the axis
analysis.  It runs first of the tilegpu stage (NVIDIA sm_90+), on the frontend's IR.

The frontend emits `tile.descriptor_load` / `tile.descriptor_store` for a descriptor with a
TMA plan, each holding the block-pointer access it falls back to (`ptr`, `mask`: its pointers
and mask, the very ops the frontend's block-pointer path emits; a load's `other`, its zero
padding; a store's `width`, the tensor's row length).  The TMA copy is kept only where it is
exact on the hardware:

* its inner coordinate a multiple of 16 bytes (divisibility; an inner coordinate of 7 fp16
  elements faults with an illegal instruction, measured on an H100);
* a store's every coordinate >= 0 (`AxisAnalysis.nonneg`; a negative one, inner or outer,
  faults where a load clips) and rows a multiple of 16 bytes (the width's divisibility,
  specialized per launch by the launcher's key: the copy writes a row's last 16-byte chunk
  whole, past the inner bound).  Measured on an H200, issue 9; docs/performance.md
  "TMA-store epilogue".  `tma_store="unguarded"` (the probe's and the emulator tests'
  switch) keeps every store whose inner coordinate is aligned.

A store exact but for coordinates the analysis cannot prove >= 0 (a persistent GEMM's tile
order, attention's `off_hz * N_CTX + ...`: int arguments) is guarded at run time
(`CompileOptions.tma_store_guard`, on by default): `scf.if (those coordinates >= 0) { the TMA
store } else { the fallback }`, one uniform branch on scalars, marked `GUARD_ATTR` (which
tilegpu-warp-specialize reads).  The TMA store completes inside its own op
(tilegpu-tma-stores: commit and `wait_group.read 0`), so the branch holds it whole.

A load whose map a descriptor made in the kernel writes (`tile.make_tensormap`) is kept only
where that map is exact too: its base 16-byte aligned and its strides (all but the last, which
is 1) multiples of 16 bytes, from the same analysis (the arguments' specialization, constants,
`tl.multiple_of`).  Triton asks that of the caller; a map it cannot prove so is never read,
which keeps the copy exact whatever the tensor.

A kept access drops its fallback operands (the fallback's ops are then dead: tile-combine
erases them); a refused one becomes the masked `tile.load` / `tile.store` of its fallback in
its place (what the frontend emits without TMA), and a tensor map no op uses any more leaves
the kernel's parameters with its plan (a map made in the kernel goes with its scratch slot:
`settle_global_scratch`, and the scratch parameter with the last).  An access without
fallback operands (hand-written IR) is left alone.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects import builders as B
from tilework.dialects import opdefs
from tilework.dialects import tile as T
from tilework.dialects.tensor_maps import drop_unused_tensor_maps, settle_global_scratch
from tilework.dialects.verify import named_operands

from .axis_info import AxisAnalysis, elem_bytes
from .layout_passes import kernels
from .pass_base import Pass, register
from .pipeline_common import arith, cmpi, int_const
from .tma import coords

TMA_BYTES = 16  # TMA's granule: inner coordinates (and a store's rows) in multiples of it
# on the scf.if of a run-time guard (then: the TMA store; else: its fallback), which
# tilegpu-warp-specialize counts as one store's buffer, not both branches'
GUARD_ATTR = "tilegpu.tma_store_guard"


def _aligned(an: AxisAnalysis, v: ir.Value, nbytes: int) -> bool:
    return an.get(v).divisibility[0] * nbytes % TMA_BYTES == 0


def _map_exact(an, desc: ir.Value, nbytes: int) -> bool:
    """Whether the map `desc` holds is exact: a host descriptor's parameter (the launcher
    checks its tensor: TensorDescriptor's assertions) or a `tile.make_tensormap` whose base
    and strides the analysis proves 16-byte multiples."""
    owner = desc.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "tile.make_tensormap":
        return True
    args = named_operands(owner.operation)
    strides = [v for k, v in args.items() if k.startswith("stride") and v is not None]
    return _aligned(an, args["base"], 1) and all(_aligned(an, s, nbytes) for s in strides)


def _load_exact(an, op) -> bool:
    nbytes = elem_bytes(T.element_type(op.results[0].type))
    return _aligned(an, coords(op)[-1], nbytes) and \
        _map_exact(an, named_operands(op)["desc"], nbytes)


def _store_exact(an, op, args, unguarded: bool) -> bool:
    xs = coords(op)
    nbytes = elem_bytes(T.element_type(args["src"].type))
    if not _aligned(an, xs[-1], nbytes):
        return False
    return unguarded or (all(an.nonneg(x) for x in xs) and _aligned(an, args["width"], nbytes))


def _negative_constant(x: ir.Value) -> bool:
    owner = x.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return False
    return ir.IntegerAttr(owner.operation.attributes["value"]).value < 0


def _guardable(an, op, args) -> list | None:
    """The coordinates a run-time test must find >= 0 for the TMA store to be exact (those
    the analysis does not prove so), or None where the store cannot be TMA for other reasons
    (the inner coordinate or the rows not 16-byte multiples, a coordinate constant < 0)."""
    xs = coords(op)
    nbytes = elem_bytes(T.element_type(args["src"].type))
    if not (_aligned(an, xs[-1], nbytes) and _aligned(an, args["width"], nbytes)) or \
            any(_negative_constant(x) for x in xs):
        return None
    return [x for x in xs if not an.nonneg(x)]


def _all_nonneg(xs) -> ir.Value:
    cond = None
    for x in xs:
        c = cmpi("sge", x, int_const(x.type, 0))
        cond = c if cond is None else arith("arith.andi", cond, c)
    return cond


def _guard_load(an, op):
    args = named_operands(op)
    if args["ptr"] is None:  # no fallback given: the IR asked for the TMA load
        return
    rt = op.results[0].type
    with ir.InsertionPoint(op), op.location:
        if _load_exact(an, op):
            v = B.build_descriptor_load(None, args["desc"], coords(op), result_type=rt,
                                        swizzle=op.attributes["swizzle"])
        else:
            v = B.build_load(None, args["ptr"], args["mask"], args["other"], result_type=rt)
    op.results[0].replace_all_uses_with(v)
    op.erase()


def _sink_into(branch, block):
    """Moves the tile ops before `branch` used only in `block` (the fallback's pointers and
    mask) into it, last to first so a chain follows: the TMA path does not compute them,
    and they hold no registers across the branch."""
    ops = []
    for o in branch.operation.block.operations:
        if o.operation == branch.operation:
            break
        ops.append(o.operation)
    for o in reversed(ops):
        if o.regions or not o.results or not all(T.is_tensor(r.type) for r in o.results) or \
                not (o.name in opdefs.PURE_OPS or o.name.startswith(("arith.", "math."))):
            continue
        uses = [u.owner for r in o.results for u in r.uses]
        if uses and all(T.ancestor_in(u, block) is not None for u in uses):
            o.move_before(block.operations[0])


def _guard_store(an, op, unguarded: bool, runtime: bool, pending: list):
    args = named_operands(op)
    if args["ptr"] is None:
        return
    tma = lambda: B.build_descriptor_store(None, args["desc"], args["src"], coords(op),
                                           swizzle=op.attributes["swizzle"])
    fallback = lambda: B.build_store(None, args["ptr"], args["src"], args["mask"])
    with ir.InsertionPoint(op), op.location:
        if _store_exact(an, op, args, unguarded):
            tma()
        elif runtime and (xs := _guardable(an, op, args)):
            # the coordinates are scalars: one uniform branch, TMA where they are >= 0
            branch = scf.IfOp(_all_nonneg(xs), [], has_else=True)
            branch.operation.attributes[GUARD_ATTR] = ir.UnitAttr.get()
            with ir.InsertionPoint(branch.then_block):
                tma()
                scf.YieldOp([])
            with ir.InsertionPoint(branch.else_block):
                fallback()
                scf.YieldOp([])
            pending.append(branch)
        else:
            fallback()
    op.erase()


def tma_guard(module_op, pctx=None):
    opts = pctx.options if pctx is not None else None
    unguarded = getattr(opts, "tma_store", None) == "unguarded"
    runtime = getattr(opts, "tma_store_guard", True)
    for f in kernels(module_op):
        ops = [o for o in T.walk_ops(f)
               if o.name in ("tile.descriptor_load", "tile.descriptor_store")]
        if not ops:
            continue
        an = AxisAnalysis(f)
        branches = []
        for op in ops:
            if op.name == "tile.descriptor_load":
                _guard_load(an, op)
            else:
                _guard_store(an, op, unguarded, runtime, branches)
        for b in branches:  # (after the rewrite: the descriptor ops' operands are gone)
            _sink_into(b, b.else_block)
        drop_unused_tensor_maps(f)
        settle_global_scratch(f)


register(Pass("tile-tma-guard",
              "tile.descriptor_load/store -> themselves without their fallback where the TMA "
              "copy is exact (the inner coordinate in 16-byte multiples; a store's "
              "coordinates >= 0 and rows in 16-byte multiples; a map made in the kernel, its "
              "base and strides in 16-byte multiples), else their fallback's masked "
              "tile.load/tile.store; a store exact but for coordinates of unknown sign: "
              "scf.if (those >= 0) the TMA store, else the fallback (tma_store_guard)",
              run=tma_guard))
