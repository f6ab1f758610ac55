"""Lowering rules of the TMA ops (NVIDIA sm_90; dialects/opdefs/tma.py), as inline PTX.

One thread (thread 0 of the CTA: `ctx.issuer_id()`; under warp specialization the lane
`elect.sync` picks in the producer's one running warp; a predicate inside the asm: no branch
in the IR) initializes, arms and invalidates a barrier and issues the copies; every thread
waits:

* `mbarrier_init`: `mbarrier.init.shared::cta.b64 [bar], count`, then
  `fence.mbarrier_init.release.cluster` (the async proxy, which completes the copies'
  transactions, must see the initialized barrier) and a CTA barrier (every thread may then
  wait on it, even when the pipeliner's waits sit in a loop);
* `tma_load`: `mbarrier.arrive.expect_tx` of all the block's bytes (TMA counts whole boxes,
  zero-filled out-of-bounds elements included), then one `cp.async.bulk.tensor.<r>d` per box
  (with `CompileOptions.tma_elect` the boxes go under the lane `elect.sync` picks in warp 0,
  whose id is broadcast from lane 0: a predicate ptxas sees is warp-uniform, where thread 0's
  makes it loop over the active lanes around each copy):
  an nvmma_shared buffer of swizzle S is copied as boxes S bytes wide, box j at byte
  j * rows * S of the buffer (the layout's column blocks) and inner coordinate + j * S /
  elem_bytes; a row-major buffer is one box.  Coordinates go innermost first;
* `mbarrier_wait`: `mbarrier.try_wait.parity` in a loop (labels scoped by the braces);
* `mbarrier_inval`: `mbarrier.inval`;
* `mbarrier_arrive`: lane 0 of each warp `mbarrier.arrive` (its default `.release.cta`: the
  warp's reads of what the barrier guards come first);
* `tma_store`: every thread `fence.proxy.async.shared::cta` (its generic writes of the buffer
  visible to the async proxy), a CTA barrier, then thread 0 issues one
  `cp.async.bulk.tensor.<r>d.global.shared::cta.bulk_group` per box (the boxes as a load's),
  `cp.async.bulk.commit_group` and `cp.async.bulk.wait_group.read 0` (the buffer has been
  read: its bytes may be written again once the other threads pass a barrier after this);
  marked `tilegpu.wait_later` (tilegpu-tma-store-wait-later), without the wait, which a
  `tma_store_wait` (the same thread's wait, then a CTA barrier) does before the buffer's next
  write.

* `make_tensormap` (a descriptor made in the kernel): thread 0 zeroes the 128 bytes at the
  map's global address (the kernel's global-scratch parameter + the linear program id times
  `program_bytes` + `offset`), fills every field a tiled map uses with `tensormap.replace`
  (sm_90a, PTX 8.3: the base, rank - 1, boxes, dims and byte strides innermost first, element
  strides 1, the element type, no interleave, the swizzle, zero fill), then
  `fence.proxy.tensormap::generic.release.gpu` and, as the one thread that issues the copies,
  `fence.proxy.tensormap::generic.acquire.gpu` on the map before any `cp.async.bulk.tensor`
  reads it through the tensor-map proxy.  The map's address is a global pointer: the copies
  take it generic (`addrspacecast`, i.e. `cvta.global`).

The ops only exist on sm_90 and newer (tilegpu-tma-loads runs there; the verifier-checked
IR of another target cannot hold a tensor map).  The tensor map is the kernel's by-value parameter: its generic address (`cvta.param`, which
LLVM emits for a `byval` grid-constant argument) is the copy's `[tmap, {coords}]` operand.
`tile.descriptor_load` / `descriptor_store` have no rule of their own: tilegpu-tma-loads /
tilegpu-tma-stores rewrite them first.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import gpu

from tilework.dialects import tile as T
from tilework.dialects.opdefs.tma import MAP_BYTES, WAIT_LATER, dst_swizzle
from tilework.dialects.verify import named_operands

from ..axis_info import elem_bytes
from ..registry import LoweringError, lower
from ..shared_memory import buffer_bytes, smem_type



def _asm(ctx, text: str, operands, constraints: str):
    ctx.create("llvm.inline_asm", operands, [], {
        "asm_string": ir.StringAttr.get(text),
        "constraints": ir.StringAttr.get(constraints + ",~{memory}"),
        "has_side_effects": ir.UnitAttr.get(), "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})


def _addr(ctx, p) -> ir.Value:
    """A shared-memory pointer as the 32-bit address `.shared::cta` operands take."""
    return ctx.op1("llvm.ptrtoint", [p], ctx.i32)


_ONE = "{ .reg .pred %%p; setp.eq.u32 %%p, $0, 0; %s }"  # the body under thread 0's predicate
_ELECTED = "{ .reg .pred %%p; elect.sync _|%%p, 0xffffffff; %s }"  # ... one lane's of the warp
_WARP0 = "{ .reg .pred %%p, %%e, %%q; setp.eq.u32 %%p, $0, 0; %s }"  # (tma_elect: %e, warp 0's)


def _generic(ctx, desc) -> ir.Value:
    """A tensor map's address as the copies take it: generic (a kernel parameter's already is;
    a map in global scratch is a global pointer)."""
    if str(desc.type) == "!llvm.ptr":
        return desc
    return ctx.op1("llvm.addrspacecast", [desc], ir.Type.parse("!llvm.ptr"))


# `.elemtype` of tensormap.replace (PTX ISA): what the copies move; ints of a width alike
_ELEMTYPES = {"i8": 0, "i16": 1, "i32": 3, "i64": 5, "f16": 6, "f32": 7, "f64": 9, "bf16": 10}
_SWIZZLE_MODES = {0: 0, 32: 1, 64: 2, 128: 3}


def _elemtype(t: ir.Type) -> int:
    name = str(t)
    if name in _ELEMTYPES:
        return _ELEMTYPES[name]
    if name.startswith("f8"):  # (fp8: bytes)
        return 0
    raise LoweringError(f"make_tensormap: TMA cannot copy {name}")


def _program_linear_id(ctx) -> ir.Value:
    """x + nx * (y + ny * z) of this program, as i64 (the runtime's scratch has a slice per
    program of the grid, in this order)."""
    def dim(f, d):
        return ctx.op1("arith.index_cast", [f(d)], ctx.i64)
    x, y, z = (dim(gpu.block_id, d) for d in (gpu.Dimension.x, gpu.Dimension.y,
                                                gpu.Dimension.z))
    nx, ny = (dim(gpu.grid_dim, d) for d in (gpu.Dimension.x, gpu.Dimension.y))
    yz = ctx.op1("arith.addi", [y, ctx.op1("arith.muli", [ny, z], ctx.i64)], ctx.i64)
    return ctx.op1("arith.addi", [x, ctx.op1("arith.muli", [nx, yz], ctx.i64)], ctx.i64)


@lower("tile.make_tensormap", target="nvidia")
def _make_tensormap(ctx, op, args):
    named = named_operands(op)
    box = list(ir.DenseI32ArrayAttr(op.attributes["box"]))
    rank = len(box)
    elem = T.pointee(named["base"].type)
    eb = elem_bytes(smem_type(elem))
    sw = ir.IntegerAttr(op.attributes["swizzle"]).value
    per_program = ir.IntegerAttr(op.attributes["program_bytes"]).value
    offset = ir.IntegerAttr(op.attributes["offset"]).value
    scratch, base = args[0], args[1]
    dims = list(args[2:2 + rank])[::-1]  # innermost first
    strides = [ctx.op1("arith.muli", [s, ctx.const(eb, ctx.i64)], ctx.i64)  # bytes
               for s in list(args[2 + rank:2 + rank + rank - 1])[::-1]]
    at = ctx.op1("arith.addi", [ctx.op1("arith.muli", [_program_linear_id(ctx),
                                                       ctx.const(per_program, ctx.i64)],
                                        ctx.i64), ctx.const(offset, ctx.i64)], ctx.i64)
    tmap = ctx.op1("llvm.getelementptr", [scratch, at], ctx.gptr, {
        "rawConstantIndices": ir.DenseI32ArrayAttr.get([-2147483648]),
        "elem_type": ir.TypeAttr.get(ir.IntegerType.get_signless(8))})
    rep = "@%p tensormap.replace.tile"
    body = [f"@%p st.global.v4.b32 [$1+{i}], {{%z, %z, %z, %z}};"
            for i in range(0, MAP_BYTES, 16)]
    body += [f"{rep}.global_address.global.b1024.b64 [$1], $2;",
             f"{rep}.rank.global.b1024.b32 [$1], {rank - 1};"]
    ops = [ctx.thread_id(), tmap, base]
    for i in range(rank):
        body.append(f"{rep}.box_dim.global.b1024.b32 [$1], {i}, {box[rank - 1 - i]};")
        body.append(f"{rep}.global_dim.global.b1024.b32 [$1], {i}, ${len(ops)};")
        ops.append(dims[i])
        body.append(f"{rep}.element_stride.global.b1024.b32 [$1], {i}, 1;")
    for i, s in enumerate(strides):
        body.append(f"{rep}.global_stride.global.b1024.b64 [$1], {i}, ${len(ops)};")
        ops.append(s)
    body += [f"{rep}.elemtype.global.b1024.b32 [$1], {_elemtype(elem)};",
             f"{rep}.interleave_layout.global.b1024.b32 [$1], 0;",
             f"{rep}.swizzle_mode.global.b1024.b32 [$1], {_SWIZZLE_MODES[sw]};",
             f"{rep}.fill_mode.global.b1024.b32 [$1], 0;",
             "@%p fence.proxy.tensormap::generic.release.gpu;",
             f"@%p fence.proxy.tensormap::generic.acquire.gpu [$1], {MAP_BYTES};"]
    text = "{ .reg .pred %p; .reg .b32 %z; setp.eq.u32 %p, $0, 0; mov.b32 %z, 0; " + \
        " ".join(body) + " }"
    _asm(ctx, text, ops, "r,l,l" + ",r" * rank + ",l" * (rank - 1))
    return [tmap]


@lower("tile.descriptor_load", target="nvidia")
def _descriptor_load(ctx, op, args):
    raise LoweringError("tile.descriptor_load is rewritten by tilegpu-tma-loads (NVIDIA sm_90); "
                        "run that pass before tilegpu-to-llvm", op.location)


@lower("tile.descriptor_store", target="nvidia")
def _descriptor_store(ctx, op, args):
    raise LoweringError("tile.descriptor_store is rewritten by tilegpu-tma-stores (NVIDIA "
                        "sm_90); run that pass before tilegpu-to-llvm", op.location)


@lower("tilegpu.mbarrier_init", target="nvidia")
def _mbarrier_init(ctx, op, args):
    count = ir.IntegerAttr(op.attributes["count"]).value
    _asm(ctx, _ONE % f"@%p mbarrier.init.shared::cta.b64 [$1], {count};"
         + " fence.mbarrier_init.release.cluster;", [ctx.issuer_id(), _addr(ctx, args[0])],
         "r,r")
    ctx.barrier()  # its own (smem_barriers.accesses): the waits after it see the init
    return []


@lower("tilegpu.mbarrier_inval", target="nvidia")
def _mbarrier_inval(ctx, op, args):
    _asm(ctx, _ONE % "@%p mbarrier.inval.shared::cta.b64 [$1];",
         [ctx.issuer_id(), _addr(ctx, args[0])], "r,r")
    return []


@lower("tilegpu.mbarrier_arrive", target="nvidia")
def _mbarrier_arrive(ctx, op, args):
    lane = ctx.op1("arith.andi", [ctx.thread_id(), ctx.const(ctx.warp_size - 1)], ctx.i32)
    if named_operands(op)["pred"] is not None:  # lane 0 where pred holds: 0, else 1 (nobody)
        lane = ctx.op1("arith.select", [args[1], lane, ctx.const(1)], ctx.i32)
    _asm(ctx, _ONE % "@%p mbarrier.arrive.shared::cta.b64 _, [$1];",
         [lane, _addr(ctx, args[0])], "r,r")
    return []


@lower("tilegpu.mbarrier_wait", target="nvidia")
def _mbarrier_wait(ctx, op, args):
    _asm(ctx, "{ .reg .pred %done; tw_wait: mbarrier.try_wait.parity.shared::cta.b64 %done, "
              "[$0], $1; @!%done bra.uni tw_wait; }",
         [_addr(ctx, args[0]), args[1]], "r,r")
    return []


def boxes(md) -> list:
    """[(byte offset in the buffer, inner-coordinate offset)] of the boxes a buffer is copied
    as (see the module docstring)."""
    sw = dst_swizzle(md)
    if not sw:
        return [(0, 0)]
    eb = elem_bytes(smem_type(md.elem))
    width = sw // eb
    return [(j * md.shape[0] * sw, j * width) for j in range(md.shape[1] // width)]


def _box_operands(ctx, md, addr, coords, ops):
    """Per box of the buffer: its shared address and coordinates appended to the asm operands
    `ops`, yielded as (the address's `$n`, the coordinates' `$n, ...`)."""
    for off, dc in boxes(md):
        a = addr if not off else ctx.op1("arith.addi", [addr, ctx.const(off)], ctx.i32)
        c0 = coords[0] if not dc else ctx.op1("arith.addi", [coords[0], ctx.const(dc)], ctx.i32)
        base = len(ops)
        ops += [a, c0] + coords[1:]
        yield f"${base}", ", ".join(f"${base + 1 + i}" for i in range(len(coords)))


@lower("tilegpu.tma_load", target="nvidia")
def _tma_load(ctx, op, args):
    named = named_operands(op)
    md = T.memdesc_of(named["dst"].type)
    desc, dst, bar = _generic(ctx, args[0]), args[1], args[2]
    rank = sum(1 for k, v in named.items() if k.startswith("coord") and v is not None)
    coords = list(args[3:3 + rank])[::-1]  # innermost first
    dst_addr, bar_addr = _addr(ctx, dst), _addr(ctx, bar)
    elected = ctx.ws_role == "producer" and named["pred"] is None
    if elected:  # (the producer's one warp: a lane elect.sync picks; $0 unused)
        issuer = ctx.const(0)
    else:
        issuer = ctx.issuer_id()
    # CompileOptions.tma_elect: the copies by the lane elect.sync picks in warp 0 (the warp id
    # broadcast from lane 0, which ptxas sees is uniform), thread 0 arming the barrier
    warp0 = not elected and getattr(ctx, "tma_elect", False) and ctx.ws_role != "producer"
    uniform = ctx.warp_id_uniform() if warp0 else None
    if named["pred"] is not None:  # thread 0 where pred holds: issuer 0, else 1 (nobody)
        issuer = ctx.op1("arith.select", [args[-1], issuer, ctx.const(1)], ctx.i32)
        if warp0:
            uniform = ctx.op1("arith.select", [args[-1], uniform, ctx.const(1)], ctx.i32)
    ops = [issuer, bar_addr, desc] + ([uniform] if warp0 else [])
    body = [f"@%p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], {buffer_bytes(md)};"]
    if warp0:
        body.append("setp.eq.u32 %e, $3, 0; elect.sync _|%q, 0xffffffff; and.pred %e, %e, %q;")
    for smem, cs in _box_operands(ctx, md, dst_addr, coords, ops):
        body.append(f"@%{'e' if warp0 else 'p'} cp.async.bulk.tensor.{rank}d.shared::cluster."
                    f"global.mbarrier::complete_tx::bytes [{smem}], [$2, {{{cs}}}], [$1];")
    text = (_WARP0 if warp0 else _ELECTED if elected else _ONE) % " ".join(body)
    _asm(ctx, text, ops, "r,r,l" + ",r" * (len(ops) - 3))
    return []


@lower("tilegpu.tma_store", target="nvidia")
def _tma_store(ctx, op, args):
    named = named_operands(op)
    md = T.memdesc_of(named["src"].type)
    desc, src = _generic(ctx, args[0]), args[1]
    rank = sum(1 for k, v in named.items() if k.startswith("coord") and v is not None)
    coords = list(args[2:2 + rank])[::-1]  # innermost first
    ctx.create("nvvm.fence.proxy", [], [], {
        "kind": ir.Attribute.parse("#nvvm.proxy_kind<async.shared>"),
        "space": ir.Attribute.parse("#nvvm.shared_space<cta>")})
    ctx.barrier()  # its own (smem_barriers.accesses): every thread's writes, then the copy
    src_addr = _addr(ctx, src)
    ops = [ctx.issuer_id(), desc]
    body = []
    for smem, cs in _box_operands(ctx, md, src_addr, coords, ops):
        body.append(f"@%p cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group "
                    f"[$1, {{{cs}}}], [{smem}];")
    body.append("@%p cp.async.bulk.commit_group;")
    if WAIT_LATER not in op.attributes:
        body.append("@%p cp.async.bulk.wait_group.read 0;")
    _asm(ctx, _ONE % " ".join(body), ops, "r,l" + ",r" * (len(ops) - 2))
    return []


@lower("tilegpu.tma_store_wait", target="nvidia")
def _tma_store_wait(ctx, op, args):
    _asm(ctx, _ONE % "@%p cp.async.bulk.wait_group.read 0;", [ctx.issuer_id()], "r")
    ctx.barrier()  # (the other threads write the buffers only after the issuer saw the reads)
    return []
