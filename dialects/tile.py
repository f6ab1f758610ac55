"""The `tile` and `tilegpu` dialects, defined once here through IRDL.

`tile` is the target-independent form the frontend emits: tiles are builtin
ranked tensors, pointers are `!tile.ptr<elem>`, and elementwise arithmetic
reuses upstream `arith`/`math` on tensors.

`tilegpu` adds what the GPU form needs: the `#tilegpu.blocked<...>` layout
encoding carried on tensor types, and `tilegpu.convert_layout`.

IRDL dynamic dialects only have the generic syntax, so ops print as
`"tile.load"(%p) : (...) -> ...`.  IRDL checks operand/result kinds; relations
it cannot express (equal shapes, pointee matching the loaded type) are checked
by `tilework.dialects.verify`.
"""
from __future__ import annotations

import re

import mlir.ir as ir
from mlir.dialects import irdl

from .layout_attrs import LAYOUT_ATTRS_IRDL

# Constraint shorthands used in the IRDL text below.
_TILE_IRDL = r"""
irdl.dialect @tile {
  irdl.type @ptr {
    %0 = irdl.any
    irdl.parameters(pointee: %0)
  }
  irdl.operation @get_program_id {
    %i32 = irdl.is i32
    %axis = irdl.base "#builtin.integer"
    irdl.attributes {"axis" = %axis}
    irdl.results(result: %i32)
  }
  irdl.operation @get_num_programs {
    %i32 = irdl.is i32
    %axis = irdl.base "#builtin.integer"
    irdl.attributes {"axis" = %axis}
    irdl.results(result: %i32)
  }
  irdl.operation @make_range {
    %t = irdl.base "!builtin.tensor"
    %s = irdl.base "#builtin.integer"
    %e = irdl.base "#builtin.integer"
    irdl.attributes {"start" = %s, "end" = %e}
    irdl.results(result: %t)
  }
  irdl.operation @splat {
    %s = irdl.any
    %t = irdl.base "!builtin.tensor"
    irdl.operands(src: %s)
    irdl.results(result: %t)
  }
  irdl.operation @broadcast {
    %t = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    irdl.operands(src: %t)
    irdl.results(result: %r)
  }
  irdl.operation @addptr {
    %p = irdl.any
    %o = irdl.any
    irdl.operands(ptr: %p, offset: %o)
    irdl.results(result: %p)
  }
  irdl.operation @load {
    %p = irdl.any
    %m = irdl.any
    %o = irdl.any
    %r = irdl.any
    irdl.operands(ptr: %p, mask: optional %m, other: optional %o)
    irdl.results(result: %r)
  }
  irdl.operation @store {
    %p = irdl.any
    %v = irdl.any
    %m = irdl.any
    irdl.operands(ptr: %p, value: %v, mask: optional %m)
    irdl.results()
  }
  irdl.operation @int_to_ptr {
    %i = irdl.is i64
    %p = irdl.any
    irdl.operands(src: %i)
    irdl.results(result: %p)
  }
  irdl.operation @ptr_to_int {
    %p = irdl.any
    %i = irdl.is i64
    irdl.operands(src: %p)
    irdl.results(result: %i)
  }
  // ---- op families: each keeps its ops between its markers ----
  // [control flow]
  // [end control flow]
  // [math]
  irdl.operation @umulhi {
    %t = irdl.any
    irdl.operands(lhs: %t, rhs: %t)
    irdl.results(result: %t)
  }
  // [end math]
  // [memory: atomics, block pointers]
  // atomic_rmw: kind is add|fadd|max|umax|min|umin|and|or|xor|xchg, sem is
  // relaxed|acquire|release|acq_rel, scope is cta|gpu|sys; the result is the old value.
  // Block pointers are frontend objects (desugared to pointer tiles and masks): no op.
  irdl.operation @atomic_rmw {
    %p = irdl.any
    %v = irdl.any
    %m = irdl.any
    %k = irdl.base "#builtin.string"
    %s = irdl.base "#builtin.string"
    %c = irdl.base "#builtin.string"
    irdl.attributes {"kind" = %k, "sem" = %s, "scope" = %c}
    irdl.operands(ptr: %p, value: %v, mask: optional %m)
    irdl.results(result: %v)
  }
  irdl.operation @atomic_cas {
    %p = irdl.any
    %v = irdl.any
    %s = irdl.base "#builtin.string"
    %c = irdl.base "#builtin.string"
    irdl.attributes {"sem" = %s, "scope" = %c}
    irdl.operands(ptr: %p, cmp: %v, value: %v)
    irdl.results(result: %v)
  }
  // [end memory]
  // [debug]
  // print: one line per element of `arg` (pid, index, prefix, value); device_print of several
  // values is one print per value, `operand` numbering them (-1: the only one)
  irdl.operation @print {
    %a = irdl.any
    %s = irdl.base "#builtin.string"
    %h = irdl.base "#builtin.integer"
    %g = irdl.base "#builtin.integer"
    %o = irdl.base "#builtin.integer"
    irdl.attributes {"prefix" = %s, "hex" = %h, "is_signed" = %g, "operand" = %o}
    irdl.operands(arg: optional %a)
    irdl.results()
  }
  // assert: traps (reporting msg, file and line) where cond is false; emitted only in debug
  irdl.operation @assert {
    %c = irdl.any
    %s = irdl.base "#builtin.string"
    irdl.attributes {"msg" = %s}
    irdl.operands(cond: %c)
    irdl.results()
  }
  irdl.operation @assume {
    %c = irdl.any
    irdl.operands(cond: %c)
    irdl.results()
  }
  // [end debug]
  // [shape and reductions]
  // reduce/scan name their combine function (a private func.func of scalars, inlined by the
  // lowering): IRDL ops cannot be region terminators, so the body is not a region
  irdl.operation @expand_dims {
    %t = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    %a = irdl.base "#builtin.integer"
    irdl.attributes {"axis" = %a}
    irdl.operands(src: %t)
    irdl.results(result: %r)
  }
  irdl.operation @trans {
    %t = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    %o = irdl.base "#builtin.dense_array"
    irdl.attributes {"order" = %o}
    irdl.operands(src: %t)
    irdl.results(result: %r)
  }
  irdl.operation @reshape {
    %t = irdl.base "!builtin.tensor"
    %r = irdl.any
    irdl.operands(src: %t)
    irdl.results(result: %r)
  }
  // join: a new last dimension of size 2 ([..] x [..] -> [.., 2]); split: its inverse (two
  // results); cat: two 1-D tiles end to end.  dot: acc + a @ b ([B,]M,K x [B,]K,N -> [B,]M,N);
  // input_precision is tf32|tf32x3|ieee|bf16x3|bf16x6 (the FMA path computes in fp32)
  irdl.operation @join {
    %t = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %t, rhs: %t)
    irdl.results(result: %r)
  }
  irdl.operation @split {
    %t = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    irdl.operands(src: %t)
    irdl.results(lhs: %r, rhs: %r)
  }
  irdl.operation @cat {
    %t = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %t, rhs: %t)
    irdl.results(result: %r)
  }
  irdl.operation @dot {
    %a = irdl.base "!builtin.tensor"
    %b = irdl.base "!builtin.tensor"
    %c = irdl.base "!builtin.tensor"
    %p = irdl.base "#builtin.string"
    %n = irdl.base "#builtin.integer"
    irdl.attributes {"input_precision" = %p, "max_num_imprecise_acc" = %n}
    irdl.operands(a: %a, b: %b, acc: %c)
    irdl.results(result: %c)
  }
  irdl.operation @reduce {
    %a0 = irdl.base "!builtin.tensor"
    %a1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "!builtin.tensor"
    %a3 = irdl.base "!builtin.tensor"
    %r0 = irdl.any
    %r1 = irdl.any
    %r2 = irdl.any
    %r3 = irdl.any
    %axis = irdl.base "#builtin.integer"
    %fn = irdl.any
    irdl.attributes {"axis" = %axis, "combine" = %fn}
    irdl.operands(src0: %a0, src1: optional %a1, src2: optional %a2, src3: optional %a3)
    irdl.results(result0: %r0, result1: optional %r1, result2: optional %r2, result3: optional %r3)
  }
  irdl.operation @scan {
    %a0 = irdl.base "!builtin.tensor"
    %a1 = irdl.base "!builtin.tensor"
    %a2 = irdl.base "!builtin.tensor"
    %a3 = irdl.base "!builtin.tensor"
    %r0 = irdl.base "!builtin.tensor"
    %r1 = irdl.base "!builtin.tensor"
    %r2 = irdl.base "!builtin.tensor"
    %r3 = irdl.base "!builtin.tensor"
    %axis = irdl.base "#builtin.integer"
    %rev = irdl.base "#builtin.integer"
    %fn = irdl.any
    irdl.attributes {"axis" = %axis, "reverse" = %rev, "combine" = %fn}
    irdl.operands(src0: %a0, src1: optional %a1, src2: optional %a2, src3: optional %a3)
    irdl.results(result0: %r0, result1: optional %r1, result2: optional %r2, result3: optional %r3)
  }
  // [end shape and reductions]
}
irdl.dialect @tilegpu {
""" + LAYOUT_ATTRS_IRDL + r"""  irdl.operation @convert_layout {
    %t = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    irdl.operands(src: %t)
    irdl.results(result: %r)
  }
  // [shared memory]
  // memdesc: a buffer in shared memory: shape, element type, a shared layout (any attribute
  // for now: addressed row-major, see lowering/shared_memory.py shared_offset) and the number
  // of buffers (multi-buffering: memdesc_index selects one, a memdesc of 1 buffer).
  // tilegpu-allocate-shared sets `tilegpu.smem_offset` on local_alloc and on every op that
  // needs scratch; tilegpu-insert-barriers places `barrier` (gpu.barrier).
  irdl.type @memdesc {
    %s = irdl.base "#builtin.dense_array"
    %e = irdl.any
    %l = irdl.any
    %n = irdl.base "#builtin.integer"
    irdl.parameters(shape: %s, element_type: %e, layout: %l, buffers: %n)
  }
  irdl.operation @local_alloc {
    %t = irdl.base "!builtin.tensor"
    %m = irdl.base @tilegpu::@memdesc
    irdl.operands(src: optional %t)
    irdl.results(result: %m)
  }
  irdl.operation @local_store {
    %t = irdl.base "!builtin.tensor"
    %m = irdl.base @tilegpu::@memdesc
    irdl.operands(src: %t, dst: %m)
    irdl.results()
  }
  irdl.operation @local_load {
    %m = irdl.base @tilegpu::@memdesc
    %t = irdl.base "!builtin.tensor"
    irdl.operands(src: %m)
    irdl.results(result: %t)
  }
  irdl.operation @local_dealloc {
    %m = irdl.base @tilegpu::@memdesc
    irdl.operands(src: %m)
    irdl.results()
  }
  irdl.operation @memdesc_index {
    %m = irdl.base @tilegpu::@memdesc
    %r = irdl.base @tilegpu::@memdesc
    %i = irdl.is i32
    irdl.operands(src: %m, index: %i)
    irdl.results(result: %r)
  }
  // async_copy: global -> shared, `other` (zero if absent) where `mask` is false; the data is
  // there once async_wait leaves at most `num` newer committed groups pending
  irdl.operation @async_copy {
    %p = irdl.base "!builtin.tensor"
    %m = irdl.base @tilegpu::@memdesc
    %k = irdl.base "!builtin.tensor"
    %o = irdl.base "!builtin.tensor"
    irdl.operands(ptr: %p, dst: %m, mask: optional %k, other: optional %o)
    irdl.results()
  }
  irdl.operation @async_commit_group {
    irdl.operands()
    irdl.results()
  }
  irdl.operation @async_wait {
    %n = irdl.base "#builtin.integer"
    irdl.attributes {"num" = %n}
    irdl.operands()
    irdl.results()
  }
  irdl.operation @barrier {
    irdl.operands()
    irdl.results()
  }
  // [end shared memory]
}
"""

# Ops of the tile dialect, with their operand segment names (for optional operands).
OPERAND_SEGMENTS = {
    "tile.load": ("ptr", "mask", "other"),
    "tile.store": ("ptr", "value", "mask"),
    "tile.atomic_rmw": ("ptr", "value", "mask"),
    "tilegpu.async_copy": ("ptr", "dst", "mask", "other"),
}

_LOADED_ATTR = "_tilework_dialects_loaded"


_SEARCH_PREFIX_ADDED = False


def _add_search_prefix():
    """MLIR's Python bindings import `<prefix>.<namespace>` for every dialect namespace they
    meet, and retry on every failed lookup (about 20 us per type parsed).  Pointing them at
    this package, which has a module per namespace (`tile`, `tilegpu`), makes it one lookup."""
    global _SEARCH_PREFIX_ADDED
    if not _SEARCH_PREFIX_ADDED:
        from mlir._mlir_libs import _mlir
        _mlir.globals.append_dialect_search_prefix(__name__.rsplit(".", 1)[0])
        _SEARCH_PREFIX_ADDED = True


def load(context: ir.Context | None = None) -> ir.Context:
    """Registers the tile and tilegpu dialects in `context` (once per context)."""
    _add_search_prefix()
    ctx = context or ir.Context.current
    if getattr(ctx, _LOADED_ATTR, False):
        return ctx
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(_TILE_IRDL)
        irdl.load_dialects(module)
    # keep the IRDL module alive for the context's lifetime
    setattr(ctx, _LOADED_ATTR, True)
    setattr(ctx, "_tilework_irdl_module", module)
    return ctx


def new_context() -> ir.Context:
    """A fresh MLIR context with our dialects and the upstream ones loaded."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = False
    load(ctx)
    return ctx


# ---------------------------------------------------------------------------------------------
# Type helpers.  Dynamic (IRDL) types have no Python accessors, so their parameters are read
# back from their textual form.

_PTR_RE = re.compile(r"^!tile\.ptr<(.*)>$")


def ptr_type(pointee: ir.Type) -> ir.Type:
    return ir.Type.parse(f"!tile.ptr<{pointee}>")


def is_ptr(t: ir.Type) -> bool:
    return str(t).startswith("!tile.ptr<")


def pointee(t: ir.Type) -> ir.Type:
    m = _PTR_RE.match(str(t))
    if not m:
        raise TypeError(f"not a !tile.ptr type: {t}")
    return ir.Type.parse(m.group(1))


def isa(t: ir.Type, cls) -> bool:
    """isinstance for MLIR types whether or not the Python object was downcast."""
    if isinstance(t, cls):
        return True
    try:
        cls(t)
        return True
    except (ValueError, TypeError):
        return False


def walk_ops(root) -> list:
    """Every operation under `root` (pre-order), collected first so callers may raise or mutate."""
    ops = []
    (root.operation if hasattr(root, "operation") else root).walk(
        lambda o: (ops.append(o.operation), ir.WalkResult.ADVANCE)[1], ir.WalkOrder.PRE_ORDER)
    return ops


def is_tensor(t: ir.Type) -> bool:
    if isinstance(t, ir.RankedTensorType):
        return True
    try:
        ir.RankedTensorType(t)
        return True
    except ValueError:
        return False


def as_tensor(t: ir.Type) -> ir.RankedTensorType:
    return t if isinstance(t, ir.RankedTensorType) else ir.RankedTensorType(t)


def element_type(t: ir.Type) -> ir.Type:
    """The element type of a tensor, or the type itself for a scalar."""
    return as_tensor(t).element_type if is_tensor(t) else t


def shape_of(t: ir.Type) -> tuple[int, ...]:
    return tuple(as_tensor(t).shape) if is_tensor(t) else ()


# ---- shared-memory descriptors (`!tilegpu.memdesc<shape, element type, layout, buffers>`) ----

_MEMDESC_RE = re.compile(r"^!tilegpu\.memdesc<array<i64(?::\s*([-\d,\s]*))?>,\s*([^,]+),\s*(.*),"
                         r"\s*(-?\d+)\s*:\s*i\d+>$", re.S)


class MemDesc:
    """The parameters of a memdesc type: `shape` (of one buffer), `elem`, `layout` (the shared
    layout attribute, text) and `buffers`."""

    def __init__(self, shape, elem: ir.Type, layout: str, buffers: int):
        self.shape, self.elem, self.layout, self.buffers = tuple(shape), elem, layout, buffers

    def with_buffers(self, n: int) -> "MemDesc":
        return MemDesc(self.shape, self.elem, self.layout, n)

    def type(self) -> ir.Type:
        return memdesc_type(self.shape, self.elem, self.layout, self.buffers)


def memdesc_type(shape, elem: ir.Type, layout: str = "unit", buffers: int = 1) -> ir.Type:
    dims = ", ".join(str(int(n)) for n in shape)
    return ir.Type.parse(f"!tilegpu.memdesc<array<i64{': ' + dims if dims else ''}>, {elem}, "
                         f"{layout}, {int(buffers)} : i32>")


def is_memdesc(t: ir.Type) -> bool:
    return str(t).startswith("!tilegpu.memdesc<")


def memdesc_of(t: ir.Type) -> MemDesc:
    m = _MEMDESC_RE.match(str(t))
    if not m:
        raise TypeError(f"not a !tilegpu.memdesc type: {t}")
    dims = [int(x) for x in m.group(1).split(",")] if m.group(1) and m.group(1).strip() else []
    return MemDesc(dims, ir.Type.parse(m.group(2).strip()), m.group(3).strip(), int(m.group(4)))
