"""Lowering rules of the atomic family: `tile.atomic_rmw` and `tile.atomic_cas`.

Each element is one atomic instruction, under `scf.if` on its mask bit.  Elements are applied
once: where a layout replicates a tile (threads holding copies of an element, a tile smaller
than the threads, or a Slice layout) only the owning thread (the first copy: the thread id
bits that make copies are zero) issues the atomic, and the old values reach the other copies
through a shared-memory round trip (owners store, a barrier, everyone loads; the op's scratch,
`ctx.smem`, sized by `_atomic_scratch`).  A scalar atomic is issued by thread 0 and its old
value broadcast the same way.  Masked-off lanes return 0.

* NVIDIA: read-modify-writes are inline PTX `atom.global.<scope>.<sem>.<op>.<type>` (LLVM's
  NVPTX backend drops the ordering and scope of `atomicrmw`; the modifier order is Triton's,
  whose tests look for `atom.global.gpu.acq_rel`), `red.` when the old value is unused and
  the semantic allows it (relaxed/release); bf16 add before sm_90 (no native instruction) is
  an `llvm.atomicrmw`, which LLVM expands to a `cmpxchg` loop.  Compare-and-swap is inline
  `atom.global.<sem>.<scope>.cas.b<bits>` (Triton's order for cas).
* AMD: `llvm.atomicrmw` / `llvm.cmpxchg` with `syncscope("workgroup"|"agent"|"")` (cta, gpu,
  sys) and the LLVM ordering; floats compare-and-swap through integers of their width.
"""
from __future__ import annotations

import math

import mlir.ir as ir
from mlir.dialects import scf

from tilework.dialects import tile as T
from tilework.dialects.layout import layout_of
from tilework.dialects.verify import named_operands

from ..registry import LoweringError, lower
from ..target import arch_capability
from ..shared_memory import scratch, smem_gep
from ..regs import Regs

ORDERING = {"relaxed": 2, "acquire": 4, "release": 5, "acq_rel": 6}  # LLVM AtomicOrdering
FAILURE_ORDERING = {"relaxed": 2, "acquire": 4, "release": 2, "acq_rel": 4}
BIN_OP = {"xchg": 0, "add": 1, "and": 3, "or": 5, "xor": 6, "max": 7, "min": 8, "umax": 9,
          "umin": 10, "fadd": 11}
SYNCSCOPE = {"nvidia": {"cta": "block", "gpu": "device", "sys": ""},
             "amd": {"cta": "workgroup", "gpu": "agent", "sys": ""}}

_PTX_OP = {"add": "add", "fadd": "add", "max": "max", "min": "min", "umax": "max",
           "umin": "min", "and": "and", "or": "or", "xor": "xor", "xchg": "exch"}


def _bits(t: ir.Type) -> int:
    s = str(t)
    return 16 if s == "bf16" else int("".join(c for c in s if c.isdigit()))


def _is_float(t: ir.Type) -> bool:
    return not T.isa(t, ir.IntegerType)


def _int_type(t: ir.Type) -> ir.Type:
    return ir.IntegerType.get_signless(_bits(t))


def _zero(ctx, t: ir.Type) -> ir.Value:
    attr = ir.FloatAttr.get(t, 0.0) if _is_float(t) else ir.IntegerAttr.get(t, 0)
    return ctx.op1("arith.constant", [], t, {"value": attr})


def _cmp(ctx, pred: str, a, b) -> ir.Value:
    p = {"eq": 0, "ult": 6}[pred]
    return ctx.op1("arith.cmpi", [a, b], ctx.i1, {"predicate": ir.IntegerAttr.get(ctx.i64, p)})


def _and(ctx, a, b):
    if a is None:
        return b
    if b is None:
        return a
    return ctx.op1("arith.andi", [a, b], ctx.i1)


# ---- one atomic --------------------------------------------------------------------------------

def _ptx_type(kind, t, sm):
    bits = _bits(t)
    if kind == "fadd":
        s = str(t)
        if s in ("f16", "bf16"):
            return None if s == "bf16" and sm < 90 else f"noftz.{s}"
        return s
    if kind in ("max", "min"):
        return f"s{bits}"
    if kind in ("add", "umax", "umin"):
        return f"u{bits}"
    return f"b{bits}"


def _rmw_ptx(ctx, kind, sem, scope, p, v, t, used):
    """Inline PTX atom/red, or None when PTX has no instruction for it (bf16 before sm_90)."""
    ty = _ptx_type(kind, t, arch_capability(ctx.arch))
    if ty is None:
        return None
    s = str(t)
    if s in ("f16", "bf16"):  # 16-bit registers ("h") hold integers
        reg, cons, it = ctx.op1("arith.bitcast", [v], _int_type(t)), "h", _int_type(t)
    elif s in ("f32", "f64"):
        reg, cons, it = v, {"f32": "f", "f64": "d"}[s], t
    else:
        reg, cons, it = v, {32: "r", 64: "l"}[_bits(t)], t
    op = _PTX_OP[kind]
    if not used and sem in ("relaxed", "release") and kind != "xchg":
        ctx.create("llvm.inline_asm", [p, reg], [], {
            "asm_string": ir.StringAttr.get(f"red.global.{scope}.{sem}.{op}.{ty} [$0], $1;"),
            "constraints": ir.StringAttr.get(f"l,{cons},~{{memory}}"),
            "has_side_effects": ir.UnitAttr.get(), "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})
        return _zero(ctx, t)
    r = ctx.op1("llvm.inline_asm", [p, reg], it, {
        "asm_string": ir.StringAttr.get(f"atom.global.{scope}.{sem}.{op}.{ty} $0, [$1], $2;"),
        "constraints": ir.StringAttr.get(f"={cons},l,{cons},~{{memory}}"),
        "has_side_effects": ir.UnitAttr.get(), "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})
    return r if it == t else ctx.op1("arith.bitcast", [r], t)


def _syncscope(ctx, scope, attrs):
    name = SYNCSCOPE[ctx.target][scope]
    if name:
        attrs["syncscope"] = ir.StringAttr.get(name)
    return attrs


# backend -> its native read-modify-write (None: no instruction, use llvm.atomicrmw)
NATIVE_RMW = {"nvidia": _rmw_ptx}


def _rmw(ctx, kind, sem, scope, p, v, t, used):
    native = NATIVE_RMW.get(ctx.target)
    if native is not None:
        r = native(ctx, kind, sem, scope, p, v, t, used)
        if r is not None:
            return r
    attrs = _syncscope(ctx, scope, {
        "bin_op": ir.IntegerAttr.get(ctx.i64, BIN_OP[kind]),
        "ordering": ir.IntegerAttr.get(ctx.i64, ORDERING[sem]),
        "alignment": ir.IntegerAttr.get(ctx.i64, max(1, _bits(t) // 8))})
    return ctx.op1("llvm.atomicrmw", [p, v], t, attrs)


def _cas_ptx(ctx, sem, scope, p, c, v, it):
    """Inline PTX compare-and-swap on the integer view `it` (16, 32 or 64 bits)."""
    bits = _bits(it)
    cons = {16: "h", 32: "r", 64: "l"}[bits]
    return ctx.op1("llvm.inline_asm", [p, c, v], it, {
        "asm_string": ir.StringAttr.get(f"atom.global.{sem}.{scope}.cas.b{bits} $0, [$1], $2, $3;"),
        "constraints": ir.StringAttr.get(f"={cons},l,{cons},{cons},~{{memory}}"),
        "has_side_effects": ir.UnitAttr.get(), "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})


# backend -> its native compare-and-swap on integers (None: llvm.cmpxchg)
NATIVE_CAS = {"nvidia": _cas_ptx}


def _cas(ctx, sem, scope, p, c, v, t):
    it = _int_type(t)
    if it != t:
        c, v = (ctx.op1("arith.bitcast", [x], it) for x in (c, v))
    native = NATIVE_CAS.get(ctx.target)
    if native is not None:
        old = native(ctx, sem, scope, p, c, v, it)
        return old if it == t else ctx.op1("arith.bitcast", [old], t)
    st = ir.Type.parse(f"!llvm.struct<({it}, i1)>")
    attrs = _syncscope(ctx, scope, {
        "success_ordering": ir.IntegerAttr.get(ctx.i64, ORDERING[sem]),
        "failure_ordering": ir.IntegerAttr.get(ctx.i64, FAILURE_ORDERING[sem]),
        "alignment": ir.IntegerAttr.get(ctx.i64, max(1, _bits(t) // 8))})
    pair = ctx.op1("llvm.cmpxchg", [p, c, v], st, attrs)
    old = ctx.op1("llvm.extractvalue", [pair], it,
                  {"position": ir.DenseI64ArrayAttr.get([0])})
    return old if it == t else ctx.op1("arith.bitcast", [old], t)


def _guarded(ctx, pred, build, t):
    """build() where `pred` holds (always when None), else 0."""
    if pred is None:
        return build()
    if_op = scf.IfOp(pred, [t], has_else=True)
    with ir.InsertionPoint(if_op.then_block):
        scf.YieldOp([build()])
    with ir.InsertionPoint(if_op.else_block):
        scf.YieldOp([_zero(ctx, t)])
    return if_op.results[0]


# ---- ownership and sharing ---------------------------------------------------------------------

def _copy_masks(layout, shape):
    """{in dim: mask of its bits that only make copies} of the layout's linear map."""
    return layout.linear(shape).free_variable_masks()


def owner_predicate(ctx, layout, shape):
    """i1: this thread owns (holds the first copy of) its elements of a tile of `layout` and
    `shape`: the thread id bits that only make copies (the free lane and warp bits of the
    layout's linear map) are zero; None when the layout does not replicate the tile."""
    masks = _copy_masks(layout, shape)
    if masks.get("register"):
        raise LoweringError(f"atomics on tiles of layout {layout} are not supported: registers "
                            f"of one thread hold copies")
    mask = masks.get("lane", 0) | masks.get("warp", 0) << (ctx.warp_size.bit_length() - 1)
    if not mask:
        return None
    low = mask & -mask
    if mask == (1 << ctx.tid_bits()) - low:  # the top bits: the first `low` threads own
        return _cmp(ctx, "ult", ctx.thread_id(), ctx.const(low))
    bits = ctx.op1("arith.andi", [ctx.thread_id(), ctx.const(mask)], ctx.i32)
    return _cmp(ctx, "eq", bits, ctx.const(0))


def _share_bytes(t, nslots):
    return nslots * max(1, _bits(t) // 8)


@scratch("tile.atomic_rmw", "tile.atomic_cas")
def _atomic_scratch(op):
    """The old values' round trip (`share`): a scalar's, or a replicated tile's."""
    if not len(list(op.results[0].uses)):
        return 0
    pt = op.operands[0].type
    if not T.is_tensor(pt):
        return _share_bytes(T.element_type(op.results[0].type), 1)
    shape = T.shape_of(pt)
    masks = _copy_masks(layout_of(pt), shape)
    if not (masks.get("lane") or masks.get("warp")):  # owner_predicate is None: no sharing
        return 0
    return _share_bytes(T.element_type(op.results[0].type), math.prod(shape))


def share(ctx, owner, slots, values, t, nslots):
    """Every thread gets, for each (slot index, value) pair, the value its owner holds: owners
    store into shared memory, a barrier, then everyone loads."""
    base = ctx.smem(_share_bytes(t, nslots))
    ptrs = [smem_gep(ctx, base, s, t) for s in slots]
    ctx.smem_begin()
    if_op = scf.IfOp(owner, [], has_else=False)
    with ir.InsertionPoint(if_op.then_block):
        for p, v in zip(ptrs, values):
            ctx.create("llvm.store", [v, p], [])
        scf.YieldOp([])
    ctx.smem_publish()
    return [ctx.op1("llvm.load", [p], t) for p in ptrs]


def _lower_atomic(ctx, op, ptr, mask, build):
    """The per-element loop shared by atomic_rmw and atomic_cas; build(k, p) issues the atomic
    of element k (None for a scalar) at pointer p."""
    t = T.element_type(op.results[0].type)
    used = len(list(op.results[0].uses)) > 0
    if not isinstance(ptr, Regs):  # a scalar: thread 0, then a broadcast
        first = _cmp(ctx, "eq", ctx.thread_id(), ctx.const(0))
        old = _guarded(ctx, _and(ctx, first, mask), lambda: build(None, ptr, used), t)
        if used:
            old = share(ctx, first, [ctx.const(0)], [old], t, 1)[0]
        return [old]
    owner = owner_predicate(ctx, ptr.layout, ptr.shape)
    out = []
    for k, p in enumerate(ptr.values):
        m = mask.values[k] if mask is not None else None
        out.append(_guarded(ctx, _and(ctx, owner, m), lambda: build(k, p, used), t))
    if owner is not None and used:
        slots = [ctx.linear_index(ptr.layout, ptr.shape, c) for c in ptr.coords()]
        out = share(ctx, owner, slots, out, t, math.prod(ptr.shape))
    return [ptr.like(out)]


@lower("tile.atomic_rmw")
def _atomic_rmw(ctx, op, args):
    names = named_operands(op)
    lowered = dict(zip([k for k, v in names.items() if v is not None], args))
    ptr, val, mask = lowered["ptr"], lowered["value"], lowered.get("mask")
    kind, sem, scope = (ir.StringAttr(op.attributes[a]).value for a in ("kind", "sem", "scope"))
    t = T.element_type(op.results[0].type)

    def build(k, p, used):
        v = val if k is None else val.values[k]
        return _rmw(ctx, kind, sem, scope, p, v, t, used)
    return _lower_atomic(ctx, op, ptr, mask, build)


@lower("tile.atomic_cas")
def _atomic_cas(ctx, op, args):
    ptr, cmp, val = args
    sem, scope = (ir.StringAttr(op.attributes[a]).value for a in ("sem", "scope"))
    t = T.element_type(op.results[0].type)

    def build(k, p, used):
        c, v = (cmp, val) if k is None else (cmp.values[k], val.values[k])
        return _cas(ctx, sem, scope, p, c, v, t)
    return _lower_atomic(ctx, op, ptr, None, build)
