"""`tilegpu` shared memory: the `memdesc` type (a buffer in shared memory) and the ops that
allocate, fill, read and free buffers, copy into them asynchronously, and order threads.

`tilegpu-allocate-shared` sets `tilegpu.smem_offset` on local_alloc (and on every op that needs
scratch); `tilegpu-insert-barriers` places `barrier`.  None of these ops is pure: each touches
shared memory or orders threads, so tile-cse and dead-op erasure leave them alone."""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T
from .base import (EFFECT, INT, READS, WRITES, Attr, any_type, base, is_type, named_operands,
                   operand, optional, result, tensor)
from ..layout import parse_layout
from .checks import check_mask, int_attr, same_shape
from .tilegpu import TILEGPU

# The textual form is `!tilegpu.memdesc<array<i64: 16, 32>, f16, unit, 3 : i32>` (read back by
# ir_types.memdesc_of).  The layout is any attribute; swizzled_shared and nvmma_shared buffers are
# addressed through their linear map, others row-major (lowering/shared_memory.py shared_offset);
# `buffers` > 1 is multi-buffering: memdesc_index
# selects one, a memdesc of 1 buffer.
MEMDESC = TILEGPU.type(
    "memdesc", "a buffer in shared memory: shape, element type, shared layout, number of buffers",
    params=[("shape", base("#builtin.dense_array")), ("element_type", any_type()),
            ("layout", any_type()), ("buffers", base("#builtin.integer"))])


def memdesc() -> object:
    """A constraint: any `!tilegpu.memdesc` (a fresh variable)."""
    return base(MEMDESC)


# ---- checks (messages are asserted by lit invalid_tilegpu_shared_memory.mlir and tests) ------

def _well_formed(op) -> str | None:
    """Every memdesc the op touches: a non-empty positive shape, >= 1 buffer, int/float
    elements."""
    for t in [v.type for v in op.operands] + [r.type for r in op.results]:
        if T.is_memdesc(t):
            md = T.memdesc_of(t)
            if not md.shape or any(n <= 0 for n in md.shape):
                return f"memdesc shape must be non-empty and positive, got {list(md.shape)}"
            if md.buffers < 1:
                return f"memdesc needs at least one buffer, got {md.buffers}"
            if not (T.isa(md.elem, ir.IntegerType) or T.isa(md.elem, ir.FloatType)):
                return f"memdesc elements must be integers or floats, got {md.elem}"
            if md.layout.startswith(("#tilegpu.swizzled_shared<", "#tilegpu.nvmma_shared<")):
                try:  # the buffer is addressed through the layout's map
                    parse_layout(md.layout).verify(md.shape)
                except ValueError as e:
                    return f"memdesc layout: {e}"
    return None


def _one_buffer(md, what):
    if md.buffers != 1:
        return f"{what} a memdesc of {md.buffers} buffers: select one with memdesc_index"


def _same_tile(tile_t, md, what):
    if T.shape_of(tile_t) != md.shape or T.element_type(tile_t) != md.elem:
        return f"{what} {tile_t} does not match the buffer ({list(md.shape)} x {md.elem})"


def _checked(check):
    """`check` after the memdesc well-formedness checks."""
    def verify(op):
        return _well_formed(op) or check(op)
    verify.__name__ = check.__name__
    return verify


checked = _checked  # (for the op families built on memdescs: opdefs/tma.py)


@_checked
def _local_alloc(op):
    md = T.memdesc_of(op.results[0].type)
    if len(op.operands):
        return _one_buffer(md, "local_alloc initializes") or \
            _same_tile(op.operands[0].type, md, "local_alloc initial value")


@_checked
def _local_store(op):
    md = T.memdesc_of(op.operands[1].type)
    return _one_buffer(md, "local_store to") or \
        _same_tile(op.operands[0].type, md, "local_store value")


@_checked
def _local_load(op):
    md = T.memdesc_of(op.operands[0].type)
    return _one_buffer(md, "local_load from") or \
        _same_tile(op.results[0].type, md, "local_load result")


@_checked
def _local_dealloc(op):
    src = op.operands[0]
    if not isinstance(src.owner, ir.Block) and src.owner.name != "tilegpu.local_alloc":
        return "local_dealloc takes the result of a local_alloc"


@_checked
def _memdesc_index(op):
    md, rd = T.memdesc_of(op.operands[0].type), T.memdesc_of(op.results[0].type)
    if rd.buffers != 1 or (rd.shape, rd.elem, rd.layout) != (md.shape, md.elem, md.layout):
        return f"memdesc_index must give one buffer of {op.operands[0].type}"


# layouts whose buffers have a transposed view: those addressed through a linear map
_MAPPED = ("#tilegpu.swizzled_shared<", "#tilegpu.nvmma_shared<")


def transposed_view(src: T.MemDesc, dst: T.MemDesc) -> bool:
    """`dst` is a [b, a] view of the bytes of the [a, b] memdesc `src`: element (j, i) of `dst`
    at the offset of element (i, j) of `src` (nvmma_shared with `transposed` flipped,
    swizzled_shared with its order reversed), as their linear maps say."""
    if len(src.shape) != 2 or tuple(dst.shape) != tuple(src.shape)[::-1] or \
            (src.elem, src.buffers) != (dst.elem, dst.buffers) or \
            not (src.layout.startswith(_MAPPED) and dst.layout.startswith(_MAPPED)):
        return False
    try:
        a = parse_layout(src.layout).linear(tuple(src.shape))
        b = parse_layout(dst.layout).linear(tuple(dst.shape))
    except ValueError:  # (a layout that does not fit its shape)
        return False
    return a.transpose_outs(["dim1", "dim0"]).with_outs(
        [("dim0", src.shape[1]), ("dim1", src.shape[0])]) == b


@_checked
def _memdesc_trans(op):
    md, rd = T.memdesc_of(op.operands[0].type), T.memdesc_of(op.results[0].type)
    if len(md.shape) != 2:
        return f"memdesc_trans takes a 2-D memdesc, got shape {list(md.shape)}"
    if not md.layout.startswith(_MAPPED):
        return f"memdesc_trans needs a swizzled_shared or nvmma_shared buffer (a row-major " \
               f"one has no transposed view), got {md.layout}"
    if list(rd.shape) != list(md.shape)[::-1] or (rd.elem, rd.buffers) != (md.elem, md.buffers):
        return f"memdesc_trans of {op.operands[0].type} must give a " \
               f"{list(md.shape)[::-1]} memdesc of {md.elem} and {md.buffers} buffer(s)"
    if not transposed_view(md, rd):
        return f"memdesc_trans result layout {rd.layout} does not hold the bytes of " \
               f"{md.layout} transposed"


def _bits(t) -> int:
    """Bit width of an element type (cp.async copies bits: i8 into an f8 buffer is fine)."""
    return ir.IntegerType(t).width if T.isa(t, ir.IntegerType) else ir.FloatType(t).width


@_checked
def _async_copy(op):
    args = named_operands(op)
    md = T.memdesc_of(args["dst"].type)
    pt = args["ptr"].type
    pe = T.element_type(pt)
    if not T.is_ptr(pe) or _bits(T.pointee(pe)) != _bits(md.elem):
        return f"async_copy needs pointers to {md.elem} (or a type of its width), got {pt}"
    err = _one_buffer(md, "async_copy to") or \
        (f"async_copy pointer shape {list(T.shape_of(pt))} does not match the buffer "
         f"{list(md.shape)}" if T.shape_of(pt) != md.shape else None) or \
        check_mask(args["mask"], pt, "async_copy")
    if err:
        return err
    o = args["other"]
    if o is not None and (T.element_type(o.type) != T.pointee(pe) or
                          not same_shape(o.type, pt)):
        return f"async_copy other must be a tile of {T.pointee(pe)} of the pointers' shape"
    if o is not None and args["mask"] is None:
        return "async_copy other needs a mask"


@_checked
def _async_wait(op):
    if int_attr(op, "num") < 0:
        return "async_wait num must be >= 0"


# ---- ops (never emitted by the frontend: interp=None) ----------------------------------------

# local_alloc's one optional operand goes without operandSegmentSizes (as IRDL allows), the
# form the passes and lit tests write
TILEGPU.op("local_alloc", "a new shared-memory buffer, initialized from the tile `src` if given",
           operands=[optional("src", tensor())], results=[result("result", memdesc())],
           traits={WRITES}, verify=_local_alloc, interp=None, segment_sizes=False)
TILEGPU.op("local_store", "stores the tile `src` into the buffer `dst`",
           operands=[operand("src", tensor()), operand("dst", memdesc())],
           traits={WRITES}, verify=_local_store, interp=None)
TILEGPU.op("local_load", "the tile held in the buffer `src` (in the result's layout)",
           operands=[operand("src", memdesc())], results=[result("result", tensor())],
           traits={READS}, verify=_local_load, interp=None)
# frees the buffer: an effect on it, so it is never erased or moved as a pure op would be
TILEGPU.op("local_dealloc", "ends the lifetime of the buffer `src` (a local_alloc's result)",
           operands=[operand("src", memdesc())],
           traits={WRITES}, verify=_local_dealloc, interp=None)
# a view, pure in principle; declared with an effect so tile-cse and dead-op erasure leave it
# as they did before these ops were declared here (smem_alloc and smem_barriers follow buffers
# through memdesc_index ops; merging or erasing them there is untested)
TILEGPU.op("memdesc_index", "buffer `index` of a multi-buffered memdesc, as a memdesc of one",
           operands=[operand("src", memdesc()), operand("index", is_type("i32"))],
           results=[result("result", memdesc())],
           traits={EFFECT}, verify=_memdesc_index, interp=None)
# a view as memdesc_index (same effect, for the same reason); its rule is the identity on the
# buffer's address, and smem_alloc / smem_barriers follow buffers through it
TILEGPU.op("memdesc_trans", "the [b, a] transposed view of the [a, b] buffer `src`: the same "
                            "bytes, in the layout that reads them transposed",
           operands=[operand("src", memdesc())], results=[result("result", memdesc())],
           traits={EFFECT}, verify=_memdesc_trans, interp=None)
TILEGPU.op("async_copy", "global -> shared: `ptr`'s values into `dst`, `other` (zero if "
                         "absent) where `mask` is false; the data is there once async_wait "
                         "leaves at most `num` newer committed groups pending",
           operands=[operand("ptr", tensor()), operand("dst", memdesc()),
                     optional("mask", tensor()), optional("other", tensor())],
           traits={READS, WRITES}, verify=_async_copy, interp=None)
TILEGPU.op("async_commit_group", "closes the group of async_copies issued since the last one",
           traits={EFFECT}, interp=None)
TILEGPU.op("async_wait", "waits until at most `num` committed groups are still in flight",
           attrs=[Attr("num", INT)], traits={EFFECT}, verify=_async_wait, interp=None)
TILEGPU.op("barrier", "every thread of the CTA waits here (gpu.barrier); placed by "
                      "tilegpu-insert-barriers",
           traits={EFFECT}, interp=None)
