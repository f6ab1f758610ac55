"""`tile.inline_asm` (tl.inline_asm_elementwise): one `llvm.inline_asm` per group of `pack`
elements a thread holds, on every target (the asm text is the user's: PTX or AMDGCN).

Operands: each argument's `pack` elements in turn, elements narrower than 32 bits packed
min(32 / bits, pack) to a register (a vector bitcast to one integer, first element in the low
bits), as Triton packs them; results likewise, outputs first (a struct when there are several
registers).  A thread whose element count is not a multiple of `pack` pads its last group with
undef inputs and drops the extra outputs."""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import ir_types as T

from ..regs import Regs
from ..registry import lower


def _bits(t: ir.Type) -> int:
    if isinstance(t, ir.IntegerType):
        return ir.IntegerType(t).width
    if T.isa(t, ir.FloatType):
        return ir.FloatType(t).width
    return 64  # pointers


def per_register(t: ir.Type, pack: int) -> int:
    """Elements of type `t` sharing one asm register (frontend/ops_asm.py counts the same)."""
    return min(max(32 // _bits(t), 1), pack)


def _reg_type(t: ir.Type, per: int) -> ir.Type:
    return t if per == 1 else ir.IntegerType.get_signless(_bits(t) * per)


def _pack_in(ctx, vals, t, per):
    if per == 1:
        return list(vals)
    vt = ir.VectorType.get([per], t)
    out = []
    for j in range(0, len(vals), per):
        v = ctx.op1("llvm.mlir.undef", [], vt)
        for k in range(per):
            v = ctx.op1("llvm.insertelement", [v, vals[j + k], ctx.const(k)], vt)
        out.append(ctx.op1("llvm.bitcast", [v], _reg_type(t, per)))
    return out


def _unpack_out(ctx, reg, t, per):
    if per == 1:
        return [reg]
    v = ctx.op1("llvm.bitcast", [reg], ir.VectorType.get([per], t))
    return [ctx.op1("llvm.extractelement", [v, ctx.const(k)], t) for k in range(per)]


@lower("tile.inline_asm")
def _inline_asm(ctx, op, args):
    pack = ir.IntegerAttr(op.attributes["pack"]).value
    regs = next((a for a in args if isinstance(a, Regs)), None)
    cols = [a.values if isinstance(a, Regs) else [a] for a in args]
    n = len(cols[0]) if cols else 1  # (no arguments: scalar results, one asm)
    groups = -(-n // pack)
    in_types = [v[0].type for v in cols]
    cols = [c + [ctx.op1("llvm.mlir.undef", [], t)] * (groups * pack - n)
            for c, t in zip(cols, in_types)]
    rtypes = [ctx.scalar_type(r.type) for r in op.results]
    pers = [per_register(t, pack) for t in rtypes]
    asm_types = [_reg_type(t, p) for t, p in zip(rtypes, pers) for _ in range(pack // p)]
    rt = asm_types[0] if len(asm_types) == 1 else ir.Type.parse(
        f"!llvm.struct<({', '.join(str(t) for t in asm_types)})>")
    attrs = {"asm_string": op.attributes["asm"], "constraints": op.attributes["constraints"],
             "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)}
    if not ir.IntegerAttr(op.attributes["pure"]).value:
        attrs["has_side_effects"] = ir.UnitAttr.get()
    outs = [[] for _ in rtypes]
    for g in range(groups):
        operands = []
        for c, t in zip(cols, in_types):
            operands += _pack_in(ctx, c[g * pack:(g + 1) * pack], t, per_register(t, pack))
        res = ctx.op1("llvm.inline_asm", operands, rt, attrs)
        regs_out = [res] if len(asm_types) == 1 else [
            ctx.op1("llvm.extractvalue", [res], t, {"position": ir.DenseI64ArrayAttr.get([i])})
            for i, t in enumerate(asm_types)]
        i = 0
        for r, (t, p) in enumerate(zip(rtypes, pers)):
            for _ in range(pack // p):
                outs[r] += _unpack_out(ctx, regs_out[i], t, p)
                i += 1
    if regs is None:
        return [o[0] for o in outs]
    return [regs.like(o[:n]) for o in outs]


@lower("tile.map_elementwise")
def _map_elementwise(ctx, op, args):
    """The private scalar function inlined once per group of `pack` elements (its arguments:
    each operand's pack elements in turn; its results: each result's in turn); the last
    group of a thread padded with undef and its extra results dropped."""
    pack = ir.IntegerAttr(op.attributes["pack"]).value
    fn = ir.FlatSymbolRefAttr(op.attributes["fn"]).value
    regs = next((a for a in args if isinstance(a, Regs)), None)
    cols = [a.values if isinstance(a, Regs) else [a] for a in args]
    n = len(cols[0])
    groups = -(-n // pack)
    cols = [c + [ctx.op1("llvm.mlir.undef", [], c[0].type)] * (groups * pack - n) for c in cols]
    outs = [[] for _ in op.results]
    for g in range(groups):
        res = ctx.inline_func(fn, [v for c in cols for v in c[g * pack:(g + 1) * pack]])
        for r in range(len(outs)):
            outs[r] += res[r * pack:(r + 1) * pack]
    if regs is None:
        return [o[0] for o in outs]
    return [regs.like(o[:n]) for o in outs]
