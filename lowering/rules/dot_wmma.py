"""`tile.dot` on RDNA matrix cores: `v_wmma_*_16x16x16_*` through `rocdl.wmma.*` (gfx11: version
1, gfx12: version 2; f16, bf16, int8 and on gfx12 OCP fp8: `dot_amd_layout.wmma_kind`), called
from `rules/dot_mfma.py` (the one tile.dot rule of AMD).

Fragments (RDNA3 / RDNA4 ISA, "Wave Matrix Multiply Accumulate"), wave32: lane l holds A row
l % 16 and B column l % 16; version 1 passes all 16 K elements (lanes 16-31 repeat lanes
0-15), version 2 eight, K 8 (l / 16) + e.  The f32 accumulator's 8 values i of lane l are row
2 i + l / 16 (version 1) or i + 8 (l / 16) (version 2), column l % 16.  As for MFMA, each
register's coordinates come from the layouts' linear maps at lane 0 of warp 0.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T

from ..dot_amd_layout import wmma_kind
from ..registry import LoweringError
from ..regs import Regs
from ..shared_memory import smem_type, to_smem


def _fragments(lin, nregs, place):
    out = {}
    for r in range(1 << lin.in_bits("register")):
        origin, slot = place(lin.apply(register=r))
        out.setdefault(origin, [None] * nregs)[slot] = r
    if any(None in regs for regs in out.values()):
        raise LoweringError("tile.dot: registers do not fill a WMMA fragment")
    return out


def _acc_place(version):
    def place(c):
        r, n = c
        rr = r % 16
        if n % 16 or (version == 1 and rr % 2) or (version == 2 and rr >= 8):
            raise LoweringError("tile.dot: accumulator registers are not a WMMA fragment")
        return (r - rr, n), rr // 2 if version == 1 else rr
    return place


def _operand_place(kw, op_idx):
    def place(c):
        x, k = (c[0], c[1]) if op_idx == 0 else (c[1], c[0])
        e = k % 16
        if x % 16 or e >= kw:
            raise LoweringError("tile.dot: operand registers are not a WMMA fragment")
        return (x, k - e), e
    return place


def _vector(ctx, vals, vt):
    v = ctx.op1("llvm.mlir.poison", [], vt)
    for i, x in enumerate(vals):
        v = ctx.op1("llvm.insertelement", [v, x, ctx.const(i)], vt)
    return v


def _operand(ctx, kind, vals):
    """A lane's k_width elements as the instruction's operand: f16 as they are, bf16 as their
    bits, 8-bit elements packed into i32s (the first lowest)."""
    t = ir.VectorType(ir.Type.parse(kind.operand))
    et = t.element_type
    if str(et) == "i32":
        vals = [to_smem(ctx, v, smem_type(v.type)) for v in vals]
        vt = ir.VectorType.get([len(vals)], vals[0].type)
    else:
        if str(et) == "i16":
            vals = [ctx.op1("arith.bitcast", [v], et) for v in vals]
        vt = t
    v = _vector(ctx, vals, vt)
    return v if vt == t else ctx.op1("llvm.bitcast", [v], t)


def dot_wmma(ctx, op, args, layouts):
    acc_l, la, lb = layouts
    version, kw = acc_l.version, la.k_width
    ea, eb, ec = (T.element_type(v.type) for v in op.operands)
    kind = wmma_kind(ctx.facts, str(ea), str(eb), str(ec))
    if isinstance(kind, str):
        raise LoweringError(f"tile.dot: {kind}")
    if kw != (16 if version == 1 else 8) or lb.k_width != kw:
        raise LoweringError(f"tile.dot: WMMA v{version} operands hold "
                            f"{16 if version == 1 else 8} K elements per lane, not {kw}")
    a, b, c = args
    shape = tuple(T.shape_of(op.results[0].type))
    fc = _fragments(acc_l.linear(shape), 8, _acc_place(version))
    fa = _fragments(la.linear(a.shape), kw, _operand_place(kw, 0))
    fb = _fragments(lb.linear(b.shape), kw, _operand_place(kw, 1))
    acc_t = ir.F32Type.get() if kind.acc == "f32" else ir.IntegerType.get_signless(32)
    vt = ir.VectorType.get([8], acc_t)
    # (iu8: both operands signed, no clamping)
    attrs = {"signA": ir.BoolAttr.get(True), "signB": ir.BoolAttr.get(True)} \
        if kind.acc == "i32" else None
    packed = {}

    def operand(key, frag, vals):
        if key not in packed:
            packed[key] = _operand(ctx, kind, [vals[r] for r in frag])
        return packed[key]
    accs = {}
    for org, regs in fc.items():
        vals = [c.values[r] for r in regs]
        if ec != acc_t:
            vals = [ctx.op1("arith.extf", [v], acc_t) for v in vals]
        accs[org] = _vector(ctx, vals, vt)
    for k0 in sorted({k for (_, k) in fa}):
        for (m0, n0) in sorted(accs):
            x = operand(("a", m0, k0), fa[(m0, k0)], a.values)
            y = operand(("b", n0, k0), fb[(n0, k0)], b.values)
            accs[(m0, n0)] = ctx.op1(kind.op, [x, y, accs[(m0, n0)]], vt, attrs)
    out = [None] * len(c.values)
    for org, regs in fc.items():
        for slot, r in enumerate(regs):
            v = ctx.op1("llvm.extractelement", [accs[org], ctx.const(slot)], acc_t)
            out[r] = v if ec == acc_t else ctx.op1("arith.truncf", [v], ec)
    return [Regs(acc_l, shape, out)]
