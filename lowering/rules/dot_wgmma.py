"""`tilegpu.warpgroup_dot` on sm_90a: wgmma.mma_async with operands in shared memory.

Per warpgroup (4 consecutive warps, `warps_per_cta[0]` / 4 of them along M, the rest along N)
and per 64 x N tile of the accumulator it owns (the layout repeats the CTA tile: `rm`, `rn`),
one `wgmma.mma_async.sync.aligned.m64nNkK` per K step (K = 32 bytes of the operand type),
chained on the accumulator registers, then one `commit_group` and `wait_group 0`:

    fence.proxy.async.shared::cta   generic-proxy writes (local_alloc's stores) -> async proxy
    bar.sync                        the barrier tilegpu-insert-barriers placed, if any
    wgmma.fence                     the accumulator registers are ready
    wgmma.mma_async ... x (tiles x K steps)
    wgmma.commit_group; wgmma.wait_group 0

The fence comes before the barrier (the rule is registered with no scratch, so the barrier
before it is deferred to its `smem_begin`): each writer fences its own writes, then the
barrier orders them before every warpgroup's reads.  On sm_90a tilegpu-proxy-fences moves the
fences to the writers (`tilegpu.writers_fence` on the dot: none here; lowering/proxy_fences.py).

Matrix descriptors (PTX ISA, "Matrix Descriptor Format"): bits 0-13 the start address >> 4,
16-29 the leading dimension byte offset >> 4, 32-45 the stride dimension byte offset >> 4,
62-63 the swizzle (1: 128 bytes, 2: 64, 3: 32).  All from the memdesc's layout (its offset
map): the start is the offset of the tile's first element (row0, k0); K-major operands have
8-row groups `SBO` apart (LBO unused with swizzling: 1); MN-major ones have 8-row (K) groups
SBO apart and swizzle-wide column blocks LBO apart.  Buffers start aligned to the swizzle's
repeat (8 rows; tilegpu-allocate-shared aligns nvmma buffers to 1024 bytes), so the hardware's
address-bit swizzle is the layout's.

Asynchronous (the dot's only user is a `tilegpu.warpgroup_wait`, see dialects/opdefs/wgmma.py):
no `wait_group` after the commit; the accumulator registers are the mma_async results as they
are (fp32/s32, no split: the verifier checks), and the wait op lowers to `wgmma.wait_group
num` in inline asm that ties every register (so nothing reads them before it).

Register A (`a` a tile in `#tilegpu.dot_operand<0, acc, 2>`, f16/bf16, or `<0, acc, 4>`,
e4m3/e5m2: 4 consecutive-k bytes a register, k32, no imm-trans-b): the same loop, each
mma_async as inline PTX (`wgmma.mma_async ... {d}, {a0, a1, a2, a3}, descB, p, 1, 1, tB`: the
NVVM op takes descriptors only), A's four 32-bit registers per (64-row tile, K step) taken
from the thread's values by their coordinates in the layout (PTX ISA, "wgmma .m64nNk16 register
fragment layout for matrix A": register r holds row g + 8 (r % 2), columns 2t + 8 (r / 2) and
the next, the same pattern as the accumulator's).

Accumulators are fp32 (or s32): an fp16 accumulator is extended first and rounded once at the
end, as the FMA path does.  With fp8 operands and 0 < max_num_imprecise_acc < K, every
max_num_imprecise_acc / K-per-instruction steps accumulate into a fresh zero accumulator that
is then added in fp32 (Triton's split: the fp8 tensor-core accumulator keeps fewer bits).
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import layout_of, parse_layout
from tilework.dialects.opdefs.wgmma import is_async

from ..axis_info import elem_bytes
from ..registry import LoweringError, lower
from ..regs import Regs
from ..shared_memory import NO_PROXY_FENCE, buffer_bytes, scratch, shared_offset, smem_type

_TYPES = {"f16": "f16", "bf16": "bf16", "f32": "tf32", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2",
          "i8": "s8"}
SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}


@scratch("tilegpu.warpgroup_dot")
def _no_scratch(op):
    return 0  # registered so that the barrier before it waits for the rule's proxy fence


class Operand:
    """One operand's descriptors: `mn_dim`/`k_dim` of its memdesc shape, the constant high
    bits, and the byte offset of any (mn0, k0) from its layout."""

    def __init__(self, ctx, base, md, mn_dim: int):
        self.ctx, self.md, self.mn_dim, self.k_dim = ctx, md, mn_dim, 1 - mn_dim
        self.lay = parse_layout(md.layout)
        self.eb = elem_bytes(smem_type(md.elem))
        lin = parse_layout(md.layout).linear(md.shape).invert()  # coords -> offset
        self.k_major = lin.basis(f"dim{self.k_dim}")[0] == (1,)

        def off(dim, n):  # byte offset of the element n along dim (a power of two)
            b = n.bit_length() - 1
            if b >= len(lin.basis(f"dim{dim}")):  # one block: the field is not read
                return buffer_bytes(md)
            return lin.basis(f"dim{dim}")[b][0] * self.eb
        sw = self.lay.swizzle_bytes
        if self.k_major:
            lbo, sbo = 16, off(self.mn_dim, 8)
        else:
            lbo, sbo = off(self.mn_dim, sw // self.eb), off(self.k_dim, 8)
        high = ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (SWIZZLE_MODE[sw] << 62)
        self.high = high - (1 << 64) if high >> 63 else high  # as a signed i64
        self.base = ctx.op1("llvm.ptrtoint", [base], ctx.i32)
        self.lin = lin
        self.tiles = []  # (mn0, descriptor at (mn0, 0)) made so far

    def k_step(self, k0: int, align: int = 1) -> int | None:
        """The descriptor increment from (mn0, 0) to (mn0, k0) for every mn0 that is a
        multiple of `align` (a power of two), if the layout's offset of k0 shares no bit with
        the offsets of those mn0 (the swizzle's XOR is then an addition) and is whole 16-byte
        units; else None.  (A 128-byte swizzle XORs k's 16-byte units with rows 1, 2, 4 of
        each 8: from a tile's first row, a multiple of 8, k's offset adds.)"""
        kb = lin_off = 0
        for b, v in enumerate(self.lin.basis(f"dim{self.k_dim}")):
            if k0 >> b & 1:
                lin_off ^= v[0]
        for b, v in enumerate(self.lin.basis(f"dim{self.mn_dim}")):
            if 1 << b >= align:
                kb |= v[0]
        nbytes = lin_off * self.eb
        return nbytes >> 4 if not (kb & lin_off) and nbytes % 16 == 0 else None

    def descriptor(self, mn0, k0: int, align: int = 1):
        """The i64 descriptor of the operand's tile at (mn0 (i32 value, a multiple of
        `align`), k0): the tile's descriptor at (mn0, 0) plus a constant where the k offset
        adds (as Triton's), the start address adding without carry out of its 14 bits (shared
        addresses < 256 KiB)."""
        step = self.k_step(k0, align) if k0 else 0
        if step is None:
            return self._descriptor(mn0, k0)
        d = next((d for m, d in self.tiles if m == mn0), None)
        if d is None:
            d = self._descriptor(mn0, 0)
            self.tiles.append((mn0, d))
        if not step:
            return d
        return self.ctx.op1("arith.addi", [d, self.ctx.const(step, self.ctx.i64)],
                            self.ctx.i64)

    def _descriptor(self, mn0, k0: int):
        ctx = self.ctx
        coords = [None, None]
        coords[self.mn_dim], coords[self.k_dim] = mn0, ctx.const(k0)
        off = shared_offset(self.md.layout, self.md.shape, coords, ctx)
        if self.eb != 1:
            off = ctx.op1("arith.muli", [off, ctx.const(self.eb)], ctx.i32)
        addr = ctx.op1("arith.addi", [self.base, off], ctx.i32)
        start = ctx.op1("arith.andi", [ctx.op1("arith.shrui", [addr, ctx.const(4)], ctx.i32),
                                       ctx.const(0x3FFF)], ctx.i32)
        start = ctx.op1("arith.extui", [start], ctx.i64)
        return ctx.op1("arith.ori", [start, ctx.const(self.high, ctx.i64)], ctx.i64)


# A ring slot's K steps as additions across a swizzle's rows 1..7 (`_slot`): with
# CompileOptions.wgmma_ring_k_step (`ctx.ring_k_step`), or this flag (tests).  Off by default:
# attention's key loops lose 10-24 SASS instructions an iteration (Triton's count) and the GEMM
# K loops 3-13, but at D=128 causal ptxas then allocates worse (128x64w4s3 spills 16 -> 200
# bytes; 128x64w8s2 no longer fits 128 registers for two programs per SM): untimed.
RING_K_STEP = False


def _slot(v, on: bool) -> bool:
    """Whether memdesc `v` is (a view of) a slot of a multi-buffered ring picked by a computed
    index (the pipeliner's), so its descriptors change every iteration (and `on` or
    RING_K_STEP).  A fixed buffer's are loop-invariant: as one base plus a constant per K step, LLVM
    hoists every K step's 64-bit descriptor out of the loops (dQ at D=256: 0 -> 72 bytes of
    spills), while the descriptors computed from the address keep their last `or` in the loop."""
    if not (on or RING_K_STEP):
        return False
    while T.is_memdesc(v.type) and not isinstance(v.owner, ir.Block):
        o = v.owner
        if o.name == "tilegpu.memdesc_trans":
            v = o.operands[0]
        elif o.name == "tilegpu.memdesc_index":
            i = o.operands[1]
            return isinstance(i.owner, ir.Block) or i.owner.name != "arith.constant"
        else:
            return False
    return False


def _struct(elem: ir.Type, n: int) -> ir.Type:
    return ir.Type.parse(f"!llvm.struct<({', '.join([str(elem)] * n)})>")


def _pack(ctx, st, vals):
    s = ctx.op1("llvm.mlir.undef", [], st)
    for i, v in enumerate(vals):
        s = ctx.op1("llvm.insertvalue", [s, v], st,
                    {"position": ir.DenseI64ArrayAttr.get([i])})
    return s


def _is_zero(v) -> bool:
    """Whether `v` is the constant +0 (integer or float bits all zero)."""
    op = v.owner
    if isinstance(op, ir.Block) or op.name not in ("arith.constant", "llvm.mlir.constant"):
        return False
    a = op.attributes["value"]
    if isinstance(a, ir.IntegerAttr):
        return a.value == 0
    if isinstance(a, ir.FloatAttr):
        return a.value == 0.0 and str(a).lstrip().startswith("0")
    return False


def _unpack(ctx, s, elem, n):
    return [ctx.op1("llvm.extractvalue", [s], elem, {"position": ir.DenseI64ArrayAttr.get([i])})
            for i in range(n)]


def _attr(text):
    return ir.Attribute.parse(text)


def _need_sm90a(ctx, op):
    if ctx.arch != "sm_90a":
        raise LoweringError(f"{op.name} needs sm_90a (wgmma), not {ctx.arch}")


# (no arch range: any NVIDIA target finds the rule, and one other than sm_90a gets this message)
@lower("tilegpu.warpgroup_dot", target="nvidia")
def _warpgroup_dot(ctx, op, args):
    _need_sm90a(ctx, op)
    a_base, b_base, acc = args
    reg_a = not T.is_memdesc(op.operands[0].type)
    ma = T.MemDesc(T.shape_of(op.operands[0].type), T.element_type(op.operands[0].type), "",
                   1) if reg_a else T.memdesc_of(op.operands[0].type)
    mb = T.memdesc_of(op.operands[1].type)
    rt = op.results[0].type
    layout, (M, N) = layout_of(rt), T.shape_of(rt)
    wm, wn = layout.warps_per_cta
    _, n_instr, k_instr = layout.instr_shape
    K = ma.shape[1]
    ec = str(T.element_type(rt))
    ea, eb = str(ma.elem), str(mb.elem)
    is_int = ec == "i32"
    ct = ctx.i32 if is_int else ir.F32Type.get()
    f32 = ir.F32Type.get()
    vals = [v if ec != "f16" else ctx.op1("arith.extf", [v], f32) for v in acc.values]

    opa = None if reg_a else Operand(ctx, a_base, ma, 0)
    opb = Operand(ctx, b_base, mb, 1)
    # the warpgroup's first row and column: warps 16 rows apart along M, then along N
    warp = ctx.warp_id_uniform()
    wg_m = ctx.op1("arith.remui", [ctx.op1("arith.divui", [warp, ctx.const(4)], ctx.i32),
                                   ctx.const(wm // 4)], ctx.i32)
    wg_n = ctx.op1("arith.divui", [warp, ctx.const(wm)], ctx.i32)
    row_wg = ctx.op1("arith.muli", [wg_m, ctx.const(64)], ctx.i32)
    col_wg = ctx.op1("arith.muli", [wg_n, ctx.const(n_instr)], ctx.i32)

    rep_m, rep_n = M // (16 * wm), N // (n_instr * wn)
    # powers of two dividing every row0 (64 a warpgroup, 16 * wm a repeat) and col0 below,
    # for a ring slot's descriptors only (`_slot`), with the option or RING_K_STEP on
    on = bool(getattr(ctx, "ring_k_step", False))
    align_m = (min(64, 16 * wm) if rep_m > 1 else 64) if _slot(op.operands[0], on) else 1
    align_n = (n_instr & -n_instr) if _slot(op.operands[1], on) else 1
    per_n = (n_instr // 4) * rep_n  # the thread's columns
    nfrag = n_instr // 2
    st = _struct(ct, nfrag)
    attrs = {
        "shape": _attr(f"#nvvm.shape<m = 64, n = {n_instr}, k = {k_instr}>"),
        "typeA": _attr(f"#nvvm.wgmma_type<{_TYPES[ea]}>"),
        "typeB": _attr(f"#nvvm.wgmma_type<{_TYPES[eb]}>"),
        "typeD": _attr(f"#nvvm.wgmma_type<{'s32' if is_int else 'f32'}>"),
        "scaleA": _attr("#nvvm.wgmma_scale_in<one>"), "scaleB": _attr("#nvvm.wgmma_scale_in<one>"),
        "scaleD": _attr("#nvvm.wgmma_scale_out<one>"),
        # row: K-major A; col: K-major B (PTX's imm-trans-a/-b 0)
        "layoutA": _attr("#nvvm.mma_layout<row>"),
        "layoutB": _attr(f"#nvvm.mma_layout<{'col' if opb.k_major else 'row'}>"),
    }
    steps = K // k_instr
    split = steps
    mnia = ir.IntegerAttr(op.attributes["max_num_imprecise_acc"]).value
    if ea.startswith("f8") and 0 < mnia < K:
        split = max(1, mnia // k_instr)

    def frag_index(rm, rn, i):
        """Flat index in the thread's values of fragment register i of tile (rm, rn): i bit 0
        is the column's low bit, bit 1 the row + 8, bits 2.. the column's 8-blocks."""
        c0 = ((i >> 1) & 1) + 2 * rm
        c1 = (i & 1) + 2 * (i >> 2) + (n_instr // 4) * rn
        return c0 * per_n + c1

    # fence our generic-proxy writes (unless tilegpu-proxy-fences had their writers fence, or
    # decided that these operands, ring slots only cp.async writes, go unfenced: the option),
    # then the deferred barrier, then the wgmma fence
    if NO_PROXY_FENCE not in op.attributes and "tilegpu.writers_fence" not in op.attributes:
        ctx.create("nvvm.fence.proxy", [], [], {
            "kind": _attr("#nvvm.proxy_kind<async.shared>"),
            "space": _attr("#nvvm.shared_space<cta>")})
    ctx.smem_begin()
    # A's registers are packed before the wgmma fence: a register written between the fence
    # and the mma_async that reads it makes ptxas insert a warpgroup.arrive (serializing)
    a_regs = {(rm, s): a_fragment(ctx, a_base, rm * 16 * wm, s * k_instr)
              for rm in range(rep_m) for s in range(K // k_instr)} if reg_a else {}
    ctx.create("nvvm.wgmma.fence.aligned", [], [])
    zero_acc = all(_is_zero(v) for v in acc.values)
    attrs_zero = dict(attrs, scaleD=_attr("#nvvm.wgmma_scale_out<zero>"))
    partials = []  # (tile indices, struct) whose sum is added after the wait
    for rm in range(rep_m):
        row0 = ctx.op1("arith.addi", [row_wg, ctx.const(rm * 16 * wm)], ctx.i32)
        for rn in range(rep_n):
            col0 = ctx.op1("arith.addi", [col_wg, ctx.const(rn * n_instr * wn)], ctx.i32)
            idx = [frag_index(rm, rn, i) for i in range(nfrag)]
            # a zero accumulator is not written to registers (after the wgmma fence that would
            # make ptxas serialize): the first mma_async ignores d (scale-d 0)
            fresh = zero_acc
            d = ctx.op1("llvm.mlir.poison", [], st) if fresh else \
                _pack(ctx, st, [vals[j] for j in idx])
            for s in range(steps):
                if s and s % split == 0:  # fp8: a fresh accumulator, added in fp32 later
                    partials.append((idx, d))
                    d, fresh = ctx.op1("llvm.mlir.poison", [], st), True
                if reg_a:
                    db = opb.descriptor(col0, s * k_instr, align_n)
                    d = _mma_async_rs(ctx, d, a_regs[rm, s], db, st, n_instr, ea, opb.k_major,
                                      accumulate=not fresh, eb=eb)
                else:
                    da = opa.descriptor(row0, s * k_instr, align_m)
                    db = opb.descriptor(col0, s * k_instr, align_n)
                    d = ctx.op1("nvvm.wgmma.mma_async", [d, da, db], st,
                                attrs_zero if fresh else attrs)
                fresh = False
            partials.append((idx, d))
    ctx.create("nvvm.wgmma.commit.group.sync.aligned", [], [])
    if not is_async(op):
        _wait(ctx, 0)
    out = list(vals)
    seen = set()
    for idx, d in partials:
        parts = _unpack(ctx, d, ct, nfrag)
        for j, v in zip(idx, parts):
            if j in seen:
                v = ctx.op1("arith.addf", [out[j], v], ct)
            seen.add(j)
            out[j] = v
    if ec == "f16":
        out = [ctx.op1("arith.truncf", [v], T.element_type(rt)) for v in out]
    return [Regs(layout, (M, N), out)]


def a_fragment(ctx, a, row0: int, k0: int) -> list:
    """The four 32-bit A registers of the 64 x K-step tile at (row0 + the warpgroup's rows,
    k0): register r holds the kw = 32 / bits elements (g + 8 (r % 2), kw t + 4 kw (r / 2) + j)
    of the thread (PTX ISA, m64nNk16 and m64nNk32 A fragments), found by their coordinates (the
    register part of the layout's map: lanes and warps add the rest)."""
    lin = a.layout.linear(a.shape)
    index = {}
    bases = lin.basis("register")
    for r in range(len(a.values)):
        c = (0, 0)
        for b, v in enumerate(bases):
            if r >> b & 1:
                c = (c[0] ^ v[0], c[1] ^ v[1])
        index.setdefault(c, r)
    bits = elem_bytes(smem_type(a.values[0].type)) * 8
    kw = 32 // bits
    it = ir.IntegerType.get_signless(bits)
    out = []
    for r in range(4):
        row, col = row0 + 8 * (r % 2), k0 + 4 * kw * (r // 2)
        elems = [a.values[index[(row, col + j)]] for j in range(kw)]
        if kw == 2:
            vt = ir.VectorType.get([2], elems[0].type)
            v = ctx.op1("llvm.mlir.poison", [], vt)
            for j, x in enumerate(elems):
                v = ctx.op1("llvm.insertelement", [v, x, ctx.const(j)], vt)
            out.append(ctx.op1("llvm.bitcast", [v], ctx.i32))
            continue
        w = None  # (8-bit: bytes into the word, low k first)
        for j, x in enumerate(elems):
            x = x if x.type == it else ctx.op1("arith.bitcast", [x], it)
            x = ctx.op1("arith.extui", [x], ctx.i32)
            if j:
                x = ctx.op1("arith.shli", [x, ctx.const(bits * j)], ctx.i32)
            w = x if w is None else ctx.op1("arith.ori", [w, x], ctx.i32)
        out.append(w)
    return out


RS_ASM = ("{{\n.reg .pred p;\nsetp.ne.b32 p, ${scale}, 0;\n"
          "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ta}.{tb} {{{d}}}, {{{a}}}, ${b}, p, 1, 1"
          "{trans};\n}}")


def _mma_async_rs(ctx, d, a_regs, desc_b, st, n: int, ea: str, b_k_major: bool,
                  accumulate: bool = True, eb: str | None = None):
    """One wgmma.mma_async with A from registers, as inline PTX: the accumulators are outputs
    tied to the inputs `d` (a struct), then the four A registers, B's descriptor and the
    scale-d predicate's source (1: accumulate, 0: d = A B).  16-bit types take imm-trans-b;
    fp8 ones (k32) have none (B is K-major)."""
    nf = n // 2
    wide = _TYPES[ea] in ("f16", "bf16")
    ins = _unpack(ctx, d, ir.F32Type.get(), nf) + list(a_regs) + [desc_b,
                                                                   ctx.const(int(accumulate))]
    text = RS_ASM.format(n=n, k=16 if wide else 32, ta=_TYPES[ea], tb=_TYPES[eb or ea],
                         d=", ".join(f"${i}" for i in range(nf)),
                         a=", ".join(f"${2 * nf + i}" for i in range(4)), b=2 * nf + 4,
                         scale=2 * nf + 5, trans=f", {0 if b_k_major else 1}" if wide else "")
    cons = ",".join(["=f"] * nf + [str(i) for i in range(nf)] + ["r"] * 4 + ["l", "r"])
    return ctx.op1("llvm.inline_asm", ins, st, {
        "asm_string": ir.StringAttr.get(text), "constraints": ir.StringAttr.get(cons),
        "has_side_effects": ir.UnitAttr.get(), "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})


def _wait(ctx, num: int):
    ctx.create("nvvm.wgmma.wait.group.sync.aligned", [], [],
               {"group": ir.IntegerAttr.get(ctx.i64, num)})


WAIT_ASM = "wgmma.wait_group.sync.aligned {};"


@lower("tilegpu.warpgroup_wait", target="nvidia")
def _warpgroup_wait(ctx, op, args):
    """The wait as inline asm that reads and redefines every accumulator register ("=f" tied
    to its input): LLVM cannot move a use of them above it, and ptxas sees none between the
    mma_async and the wait (it would serialize the wgmmas).  The values are the same."""
    _need_sm90a(ctx, op)
    acc = args[0]
    vals = list(acc.values)
    et = T.element_type(op.results[0].type)
    cons = "r" if T.isa(et, ir.IntegerType) else "f"
    n = len(vals)
    st = _struct(vals[0].type, n)
    res = ctx.op1("llvm.inline_asm", vals, st, {
        "asm_string": ir.StringAttr.get(WAIT_ASM.format(
            ir.IntegerAttr(op.attributes["num"]).value)),
        "constraints": ir.StringAttr.get(",".join([f"={cons}"] * n + [str(i) for i in range(n)])),
        "has_side_effects": ir.UnitAttr.get(), "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})
    return [Regs(acc.layout, acc.shape, _unpack(ctx, res, vals[0].type, n))]
