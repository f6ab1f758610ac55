"""`tile.dot` on NVIDIA tensor cores: `mma.sync.aligned.m16n8k*` (sm_80+).

tilegpu-assign-layouts puts such a dot's result and accumulator in `#tilegpu.mma<2, [wm, wn],
[16, 8]>` and a and b in its `#tilegpu.dot_operand` layouts (`lowering/dot_layouts.py`); other
dots go to the FMA rule (`rules/dot.py`, `dot_fma`), called from here since the registry has
one rule per op and target.

Each warp holds whole 16x8 accumulator tiles, 16xK_instr A tiles and K_instr x 8 B tiles; per
k-step the rule issues one mma per (m tile, n tile) of the warp.  Registers are in tilework's
row-major order, the instruction wants its fragment order (PTX ISA, "Matrix fragments for
mma.m16n8k*"): the rule reads each register's coordinates off the layouts' linear maps (at
lane 0 of warp 0, where the thread part is zero) and places it by its offset in the
instruction tile.  The lanes must be the instruction's (checked): lane = 4 * group + t, with
C rows group (+8) and columns 2t (+1); A rows group (+8), K t * k_width (+ 4 * k_width); B the
transpose of A's pattern.  Operand registers are 32 bits: k_width elements packed, the lowest
K in the low bits.

Types: f16 (f32 or f16 accumulator) and bf16 (f32) m16n8k16; f32 with input_precision "tf32"
m16n8k8 on operands rounded to tf32 (to nearest, ties away, as the FMA path), "tf32x3" three
mmas on the hi/lo split (a_lo b_hi + a_hi b_lo + a_hi b_hi); int8 m16n8k32 -> int32
(wrapping).  (fp8 stays on the FMA path: see `dot_layouts.py`.)
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T

from ..dot_layouts import M_INSTR, N_INSTR, mma_kind, mma_operands
from ..registry import LoweringError, lower
from ..regs import Regs
from ..shared_memory import to_smem, smem_type
from ..target import arch_capability
from .dot import dot_fma, round_tf32


def _lanes_ok(lin, dims) -> bool:
    """The lane bases are the instruction's: lanes 0-1 (t) step `dims[0]` by `dims[1]`, 2
    `dims[1]`; lanes 2-4 (group) step `dims[2]` by 1, 2, 4."""
    d_t, step, d_g = dims
    want = []
    for d, v in [(d_t, step), (d_t, 2 * step), (d_g, 1), (d_g, 2), (d_g, 4)]:
        want.append(tuple(v if i == d else 0 for i in range(2)))
    return list(lin.basis("lane")) == want


def _fragments(lin, nregs, place):
    """{tile origin: [register index per fragment slot]} from `place(coord) -> (origin,
    slot)` applied to every register's coordinates at lane 0 of warp 0."""
    out = {}
    for r in range(1 << lin.in_bits("register")):
        origin, slot = place(lin.apply(register=r))
        out.setdefault(origin, [None] * nregs)[slot] = r
    for origin, regs in out.items():
        if None in regs:
            raise LoweringError(f"tile.dot: registers of the tile at {origin} do not fill an "
                                f"mma fragment")
    return out


def _acc_place(c):
    m, n = c
    if n % N_INSTR > 1 or m % 8:
        raise LoweringError("tile.dot: accumulator registers are not an mma fragment")
    return (m - m % M_INSTR, n - n % N_INSTR), 2 * (m % M_INSTR >= 8) + n % 2


def _operand_place(kind, op_idx):
    kw, kinst = kind.k_width, kind.k

    def place(c):
        x, k = (c[0], c[1]) if op_idx == 0 else (c[1], c[0])
        kk = k % kinst
        if kk % (4 * kw) >= kw or (op_idx == 0 and x % 8) or (op_idx == 1 and x % N_INSTR):
            raise LoweringError("tile.dot: operand registers are not an mma fragment")
        j = kk // (4 * kw)
        if op_idx == 0:
            origin, j = (x - x % M_INSTR, k - kk), 2 * j + (x % M_INSTR >= 8)
        else:
            origin = (k - kk, x - x % N_INSTR)
        return origin, j * kw + kk % kw
    return place


def _struct(types) -> ir.Type:
    return ir.Type.parse("!llvm.struct<(" + ", ".join(str(t) for t in types) + ")>")


def _pack(ctx, vals, kind):
    """k_width operand elements -> one 32-bit mma register (the first element lowest)."""
    if kind.ptx == "f16":
        vt = ir.VectorType.get([2], vals[0].type)
        v = ctx.op1("llvm.mlir.poison", [], vt)
        for i, x in enumerate(vals):
            v = ctx.op1("llvm.insertelement", [v, x, ctx.const(i)], vt)
        return v
    if kind.ptx == "tf32":
        return ctx.op1("arith.bitcast", [vals[0]], ctx.i32)
    elems = [to_smem(ctx, x, smem_type(x.type)) for x in vals]  # (i8 stays i8)
    vt = ir.VectorType.get([len(elems)], elems[0].type)
    v = ctx.op1("llvm.mlir.poison", [], vt)
    for i, x in enumerate(elems):
        v = ctx.op1("llvm.insertelement", [v, x, ctx.const(i)], vt)
    return ctx.op1("llvm.bitcast", [v], ctx.i32)


class _Mma:
    """Emits `nvvm.mma.sync` of one flavour; accumulators as 4 scalars per 16x8 tile."""

    def __init__(self, ctx, kind, acc_type):
        self.ctx, self.kind, self.acc = ctx, kind, acc_type
        self.f16_acc = str(acc_type) == "f16"
        self.attrs = {
            "layoutA": ir.Attribute.parse("#nvvm.mma_layout<row>"),
            "layoutB": ir.Attribute.parse("#nvvm.mma_layout<col>"),
            "shape": ir.Attribute.parse(f"#nvvm.shape<m = 16, n = 8, k = {kind.k}>"),
        }
        for x in "AB":
            self.attrs[f"multiplicand{x}PtxType"] = ir.Attribute.parse(
                f"#nvvm.mma_type<{kind.ptx}>")
        if kind.ptx == "s8":
            self.attrs["intOverflowBehavior"] = ir.Attribute.parse(
                "#nvvm.mma_int_overflow<wrapped>")
        nc = 2 if self.f16_acc else 4
        self.attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([4, 2, nc])
        self.ctype = ir.VectorType.get([2], acc_type) if self.f16_acc else acc_type
        self.rtype = _struct([self.ctype] * nc)

    def __call__(self, a, b, c):
        ctx = self.ctx
        if self.f16_acc:  # (c0, c1), (c2, c3) as f16x2
            cs = []
            for p in (c[:2], c[2:]):
                v = ctx.op1("llvm.mlir.poison", [], self.ctype)
                for i, x in enumerate(p):
                    v = ctx.op1("llvm.insertelement", [v, x, ctx.const(i)], self.ctype)
                cs.append(v)
        else:
            cs = list(c)
        d = ctx.op1("nvvm.mma.sync", list(a) + list(b) + cs, self.rtype, self.attrs)
        outs = [ctx.op1("llvm.extractvalue", [d], self.ctype,
                        {"position": ir.DenseI64ArrayAttr.get([i])}) for i in range(len(cs))]
        if not self.f16_acc:
            return outs
        return [ctx.op1("llvm.extractelement", [v, ctx.const(i)], self.acc)
                for v in outs for i in range(2)]


def _split_tf32(ctx, vals):
    """fp32 values -> (tf32 hi, tf32 lo) with x ~ hi + lo (for tf32x3)."""
    hi = [round_tf32(ctx, v) for v in vals]
    lo = [round_tf32(ctx, ctx.op1("arith.subf", [v, h], v.type)) for v, h in zip(vals, hi)]
    return hi, lo


@lower("tile.dot", target="nvidia", arch=(80, None))
def dot_mma(ctx, op, args):
    layouts = mma_operands(op)
    if layouts is None:
        return dot_fma(ctx, op, args)
    acc_l, la, lb = layouts
    a, b, c = args
    ea, eb, ec = (str(T.element_type(v.type)) for v in op.operands)
    precision = ir.StringAttr(op.attributes["input_precision"]).value
    kind = mma_kind(ea, eb, ec, precision, arch_capability(ctx.arch))
    if kind is None or la.k_width != kind.k_width:
        raise LoweringError(f"tile.dot: no mma.sync for {ea} x {eb} -> {ec} ({precision}, "
                            f"k_width {la.k_width}) on {ctx.arch}")
    shape = tuple(T.shape_of(op.results[0].type))
    K = a.shape[1]
    lin_c, lin_a, lin_b = acc_l.linear(shape), la.linear(a.shape), lb.linear(b.shape)
    kw = kind.k_width
    if not (_lanes_ok(lin_c, (1, 2, 0)) and _lanes_ok(lin_a, (1, kw, 0))
            and _lanes_ok(lin_b, (0, kw, 1))):
        raise LoweringError("tile.dot: the layouts' lanes are not mma.sync's")
    fc = _fragments(lin_c, 4, _acc_place)
    fa = _fragments(lin_a, 4 * kw, _operand_place(kind, 0))
    fb = _fragments(lin_b, 2 * kw, _operand_place(kind, 1))

    av, bv = a.values, b.values
    hi_lo = None
    if kind.ptx == "tf32":
        if precision == "tf32x3":
            ah, al = _split_tf32(ctx, av)
            bh, bl = _split_tf32(ctx, bv)
            hi_lo = (al, bh), (ah, bl)
            av, bv = ah, bh
        else:
            av = [round_tf32(ctx, v) for v in av]
            bv = [round_tf32(ctx, v) for v in bv]

    packed = {}

    def regs(frag, vals):  # each operand tile packed once (A is used by every n tile)
        key = (id(vals), tuple(frag))
        if key not in packed:
            packed[key] = [_pack(ctx, [vals[r] for r in frag[i:i + kw]], kind)
                           for i in range(0, len(frag), kw)]
        return packed[key]
    mma = _Mma(ctx, kind, T.element_type(op.results[0].type))
    acc = {org: [c.values[r] for r in regs_] for org, regs_ in fc.items()}
    for k0 in range(0, K, kind.k):
        for (m0, n0) in sorted(acc):
            ra, rb = fa[(m0, k0)], fb[(k0, n0)]
            d = acc[(m0, n0)]
            for xa, xb in (hi_lo or ()) + ((av, bv),):
                d = mma(regs(ra, xa), regs(rb, xb), d)
            acc[(m0, n0)] = d
    out = [None] * len(c.values)
    for org, regs_ in fc.items():
        for slot, r in enumerate(regs_):
            out[r] = acc[org][slot]
    return [Regs(acc_l, shape, out)]
