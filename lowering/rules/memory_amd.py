"""Masked global loads and stores on AMD as buffer accesses: no branch per access (opt-in,
`buffer_ops`).

Without predication, a masked load elsewhere on AMD is a branch around its access (`scf.if`):
the attention backward's masked key loops became many basic blocks, and LLVM's AMDGPU
scheduler and register allocator worked on each alone (dK/dV at D=64 spilled on gfx1100).
A buffer load reads base + a 32-bit byte offset through a resource whose num_records bounds
the offset; an offset past it reads 0 in hardware.  So a masked-off access takes the offset
0x80000000 and reads 0, and a `select` puts `other` in (none where `other` is 0); a
masked-off store writes nothing.

Used where the pointer tile is one scalar pointer (`tile.splat`, then broadcasts) plus i32
offsets (`tile.addptr`s): their GEPs' indices are summed back into one element offset.  Where
the mask holds, the byte offset must lie in [0, 2^31 - 2] (non-negative offsets into less
than 2 GiB, which Triton's AMD buffer ops also require): not proven here, hence opt-in.
gfx9 (CDNA) and gfx11 (RDNA3) only: gfx12's resource word 3 differs.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T

from ..axis_info import elem_bytes

_OUT_OF_RANGE = -2**31       # the offset of a masked-off access: 0x80000000, past num_records
_NUM_RECORDS = 2**31 - 2     # bytes addressable from the base
_FORMAT = (7 << 12) | (4 << 15)  # word 3: a nonzero data format (these loads ignore it)


def _word3(arch: str) -> int:
    if arch.startswith("gfx11"):  # bit 24 reserved as 1; out-of-bounds check: the offset
        return _FORMAT | (1 << 24) | (3 << 28)
    return _FORMAT


def supported(arch: str) -> bool:
    return arch.startswith("gfx9") or arch.startswith("gfx11")


def buffer_plan(ctx, op):
    """(scalar base, k) where the pointer tile of `op` (a load or a store) is a scalar
    pointer splat, broadcast and offset by k tile.addptr of i32 offsets (each element's
    pointer is then k GEPs from the base); None where buffer ops are off or unsupported, the
    load is volatile, or the pointer is not of that form."""
    if not getattr(ctx, "buffer_ops", False) or ctx.target != "amd" or \
            not supported(ctx.arch) or "volatile" in op.attributes:
        return None
    v, k = op.operands[0], 0
    while True:
        if not T.is_tensor(v.type):
            return None
        owner = v.owner
        if isinstance(owner, ir.Block):
            return None  # a loop-carried pointer tile: its form is unknown here
        name = owner.operation.name
        if name == "tile.addptr":
            off = owner.operands[1]
            if not T.is_tensor(off.type) or str(T.element_type(off.type)) != "i32":
                return None
            v, k = owner.operands[0], k + 1
        elif name == "tile.broadcast":
            v = owner.operands[0]
        elif name == "tile.splat":
            base = owner.operands[0]
            return (ctx.lowered(base), k) if k and not T.is_tensor(base.type) else None
        else:
            return None


def element_offset(ctx, p, plan):
    """The i32 element offset of the lowered pointer `p` from the plan's base, or None."""
    base, k = plan
    idxs = []
    for _ in range(k):
        o = p.owner
        if isinstance(o, ir.Block) or o.operation.name != "llvm.getelementptr" or \
                len(o.operands) != 2 or str(o.operands[1].type) != "i32":
            return None
        idxs.append(o.operands[1])
        p = o.operands[0]
    if p != base:
        return None
    off = idxs[-1]
    for x in reversed(idxs[:-1]):
        off = ctx.op1("arith.addi", [off, x], ctx.i32)
    return off


def resource(ctx, base):
    """The buffer resource of `base` (LLVM hoists and merges repeats)."""
    return ctx.op1("rocdl.make.buffer.rsrc",
                   [base, ctx.const(0, ir.IntegerType.get_signless(16)),
                    ctx.const(_NUM_RECORDS, ctx.i64), ctx.const(_word3(ctx.arch))],
                   ir.Type.parse("!llvm.ptr<8>"))


def _word_type(nbytes):
    """What the load returns: i8/i16 below a dword, else dwords."""
    if nbytes < 4:
        return ir.IntegerType.get_signless(8 * nbytes)
    i32 = ir.IntegerType.get_signless(32)
    return i32 if nbytes == 4 else ir.VectorType.get([nbytes // 4], i32)


def buffer_load(ctx, rsrc, off, m, others, mem, vec):
    """`vec` elements of `mem` at element offset `off` from the resource's base where `m`,
    else `others` (memory values, one per element; None: zeros)."""
    vt = mem if vec == 1 else ir.VectorType.get([vec], mem)
    nbytes = elem_bytes(mem) * vec
    byte_off = ctx.op1("arith.muli", [off, ctx.const(elem_bytes(mem))], ctx.i32)
    byte_off = ctx.op1("arith.select", [m, byte_off, ctx.const(_OUT_OF_RANGE)], ctx.i32)
    wt = _word_type(nbytes)
    v = ctx.op1("rocdl.raw.ptr.buffer.load", [rsrc, byte_off, ctx.const(0), ctx.const(0)], wt)
    if wt != vt:
        v = ctx.op1("llvm.bitcast", [v], vt)
    if others is None or all(_is_zero(o) for o in others):
        return v
    if vec == 1:
        fill = others[0]
    else:
        fill = ctx.op1("llvm.mlir.poison", [], vt)
        for j, x in enumerate(others):
            fill = ctx.op1("llvm.insertelement", [fill, x, ctx.const(j)], vt)
    return ctx.op1("arith.select", [m, v, fill], vt)


def buffer_store(ctx, rsrc, off, m, value, mem, vec):
    """Stores `value` (`vec` elements of `mem`: one value or a vector) at element offset `off`
    from the resource's base where `m`; elsewhere the offset is out of range: no write."""
    nbytes = elem_bytes(mem) * vec
    byte_off = ctx.op1("arith.muli", [off, ctx.const(elem_bytes(mem))], ctx.i32)
    if m is not None:
        byte_off = ctx.op1("arith.select", [m, byte_off, ctx.const(_OUT_OF_RANGE)], ctx.i32)
    wt = _word_type(nbytes)
    if wt != value.type:
        value = ctx.op1("llvm.bitcast", [value], wt)
    ctx.create("rocdl.raw.ptr.buffer.store", [value, rsrc, byte_off, ctx.const(0),
                                              ctx.const(0)], [])


def _is_zero(v) -> bool:
    """Whether `v` is a constant whose bits are all 0 (not -0.0)."""
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return False
    attr = owner.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return attr.value == 0
    if isinstance(attr, ir.FloatAttr):
        return attr.value == 0.0 and not str(attr).lstrip().startswith("-")
    return False
