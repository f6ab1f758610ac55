"""`tile.dot` on CDNA matrix cores: `v_mfma_*` through `rocdl.mfma.*` (gfx90a, gfx942, gfx950);
RDNA's WMMA is `rules/dot_wmma.py`, called from here (one tile.dot rule per backend).

tilegpu-assign-layouts puts such a dot's result and accumulator in `#tilegpu.mfma<[wm, wn],
[m, m], false>` and a and b in its dot_operand layouts (`lowering/dot_amd_layout.py` picks the
instruction); other dots go to the FMA rule (`rules/dot.py`).

Fragments (CDNA3 ISA, "Dependency and register layout of MFMA"): in an M x N x K instruction
lane l holds A row l % M, K elements k_width (l / M) .. + k_width - 1 (B the same with column
l % N); for 32x32 the 16 accumulator values i are row 8 (i / 4) + 4 (l / 32) + i % 4, column
l % 32, for 16x16 the 4 values are row 4 (l / 16) + i, column l % 16.  The rule reads each
register's coordinates off the layouts' linear maps at lane 0 of warp 0 and places it by its
offset in the instruction tile, after checking the lanes are the instruction's.  With kpack 2
a lane's 2 k_width K elements feed two instructions (first and second half), the same split
for A and B, so the sum over K is unchanged.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout_amd import AmdMfma

from ..dot_amd_layout import amd_operands, mfma_kind
from ..registry import LoweringError, lower
from ..regs import Regs
from ..shared_memory import smem_type, to_smem
from .dot import dot_fma, round_tf32
from .dot_wmma import dot_wmma


def _lanes_ok(lin, want) -> bool:
    return [tuple(v) for v in lin.basis("lane")] == [tuple(w) for w in want]


def _lane_bases(m, kw, op_idx):
    """Operand lanes: log2(m) bits along M (N), then K in steps of k_width."""
    bits = m.bit_length() - 1
    out = [(1 << j, 0) for j in range(bits)] + [(0, kw << j) for j in range(6 - bits)]
    return out if op_idx == 0 else [(b, a) for a, b in out]


def _acc_lanes(m):
    bits = m.bit_length() - 1
    return [(0, 1 << j) for j in range(bits)] + [(4 << j, 0) for j in range(6 - bits)]


def _fragments(lin, nregs, place):
    out = {}
    for r in range(1 << lin.in_bits("register")):
        origin, slot = place(lin.apply(register=r))
        out.setdefault(origin, [None] * nregs)[slot] = r
    for origin, regs in out.items():
        if None in regs:
            raise LoweringError(f"tile.dot: registers of the tile at {origin} do not fill an "
                                f"MFMA fragment")
    return out


def _acc_place(m):
    def place(c):
        r, n = c
        rr = r % m
        if n % m or (m == 32 and rr % 8 >= 4) or (m == 16 and rr >= 4):
            raise LoweringError("tile.dot: accumulator registers are not an MFMA fragment")
        slot = (rr // 8) * 4 + rr % 4 if m == 32 else rr
        return (r - rr, n), slot
    return place


def _operand_place(kind, kw, op_idx):
    """A register at (x, k) (x: the row of A, the column of B) -> ((x, K block, half), slot)."""
    tile_k = kw * (64 // kind.m)

    def place(c):
        x, k = (c[0], c[1]) if op_idx == 0 else (c[1], c[0])
        e = k % tile_k
        if x % kind.m or e >= kw:
            raise LoweringError("tile.dot: operand registers are not an MFMA fragment")
        return (x, k - e, e // kind.k_width), e % kind.k_width
    return place


def _operand(ctx, kind, vals):
    """A lane's k_width elements as the instruction's operand."""
    t = ir.Type.parse(kind.operand)
    if isinstance(t, ir.IntegerType):  # 8-bit elements packed, the first lowest
        elems = [to_smem(ctx, v, smem_type(v.type)) for v in vals]
        vt = ir.VectorType.get([len(elems)], elems[0].type)
    else:
        elems = vals
        if str(ir.VectorType(t).element_type) == "i16":  # bf16 as its bits
            elems = [ctx.op1("arith.bitcast", [v], ir.IntegerType.get_signless(16))
                     for v in vals]
        vt = t
    v = ctx.op1("llvm.mlir.poison", [], vt)
    for i, x in enumerate(elems):
        v = ctx.op1("llvm.insertelement", [v, x, ctx.const(i)], vt)
    return v if vt == t else ctx.op1("llvm.bitcast", [v], t)


def _vector(ctx, vals, vt):
    v = ctx.op1("llvm.mlir.poison", [], vt)
    for i, x in enumerate(vals):
        v = ctx.op1("llvm.insertelement", [v, x, ctx.const(i)], vt)
    return v


@lower("tile.dot", target="amd")
def dot_mfma(ctx, op, args):
    layouts = amd_operands(op)
    if layouts is None:
        return dot_fma(ctx, op, args)
    acc_l, la, lb = layouts
    if not isinstance(acc_l, AmdMfma):  # RDNA
        return dot_wmma(ctx, op, args, layouts)
    kind = mfma_kind(ctx.facts, op, la.k_width)
    if isinstance(kind, str):
        raise LoweringError(kind)
    a, b, c = args
    kw, m = la.k_width, kind.m
    shape = tuple(T.shape_of(op.results[0].type))
    lin_c, lin_a, lin_b = acc_l.linear(shape), la.linear(a.shape), lb.linear(b.shape)
    if not (_lanes_ok(lin_c, _acc_lanes(m)) and _lanes_ok(lin_a, _lane_bases(m, kw, 0))
            and _lanes_ok(lin_b, _lane_bases(m, kw, 1))):
        raise LoweringError("tile.dot: the layouts' lanes are not the MFMA's")
    nacc = m * m // 64
    fc = _fragments(lin_c, nacc, _acc_place(m))
    fa = _fragments(lin_a, kind.k_width, _operand_place(kind, kw, 0))
    fb = _fragments(lin_b, kind.k_width, _operand_place(kind, kw, 1))

    av, bv = a.values, b.values
    if str(T.element_type(op.operands[0].type)) == "f32":  # xf32 reads tf32 values
        av = [round_tf32(ctx, v) for v in av]
        bv = [round_tf32(ctx, v) for v in bv]
    ec = T.element_type(op.results[0].type)
    acc_t = ir.F32Type.get() if kind.acc == "f32" else ir.IntegerType.get_signless(32)
    vt = ir.VectorType.get([nacc], acc_t)
    packed = {}

    def operand(frag, vals, key):
        if key not in packed:
            packed[key] = _operand(ctx, kind, [vals[r] for r in frag])
        return packed[key]
    zero = ctx.const(0)
    accs = {}
    for org, regs in fc.items():
        vals = [c.values[r] for r in regs]
        if acc_t != ec:
            vals = [ctx.op1("arith.extf", [v], acc_t) for v in vals]
        accs[org] = _vector(ctx, vals, vt)
    ksteps = sorted({(k0, j) for (_, k0, j) in fa})
    for k0, j in ksteps:
        for (m0, n0) in sorted(accs):
            x = operand(fa[(m0, k0, j)], av, ("a", m0, k0, j))
            y = operand(fb[(n0, k0, j)], bv, ("b", n0, k0, j))
            accs[(m0, n0)] = ctx.op1(kind.op, [x, y, accs[(m0, n0)], zero, zero, zero], vt)
    out = [None] * len(c.values)
    for org, regs in fc.items():
        for slot, r in enumerate(regs):
            v = ctx.op1("llvm.extractelement", [accs[org], ctx.const(slot)], acc_t)
            out[r] = v if acc_t == ec else ctx.op1("arith.truncf", [v], ec)
    return [Regs(acc_l, shape, out)]
