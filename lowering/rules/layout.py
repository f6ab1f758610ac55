"""Moving elements between layouts: convert_layout, expand_dims, trans, reshape.

expand_dims and trans only relabel registers (their layouts are derived so that the same
thread holds the same elements).  convert_layout takes the path `plan_conversion` finds on the
two linear maps: nothing, a register permutation, warp shuffles (`gpu.shuffle idx`, when every
element stays in its warp), or shared memory in an xor-swizzled layout chosen against bank
conflicts on both sides, stored and loaded in vectors where the maps give each thread
consecutive elements.  reshape goes through shared memory at row-major indices.
"""
from __future__ import annotations

import math

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import layout_of
from tilework.dialects.linear_layout import plan_conversion
from tilework.dialects.word_exchange import exchange_tables

from ..registry import LoweringError, lower
from ..target import arch_capability
from ..shared_memory import elems_bytes, from_smem, scratch, smem_gep, smem_type, to_smem
from ..regs import Regs
from .math_approx import call_intrinsic


def _regs(values_layout, shape, values):
    return Regs(values_layout, shape, values)


def through_smem(ctx, src, src_shape, dst_layout, dst_shape, scalar_type):
    """Moves the tile `src` (Regs) to `dst_layout`: written at row-major indices of
    `src_shape`, read back at row-major indices of `dst_shape` (equal numbers of elements)."""
    st = smem_type(scalar_type)
    base = ctx.smem(elems_bytes(math.prod(src_shape), scalar_type))
    ctx.smem_begin()
    for coord in src.coords():
        idx = ctx.linear_index(src.layout, src_shape, coord)
        p = smem_gep(ctx, base, idx, st)
        ctx.create("llvm.store", [to_smem(ctx, src[coord], st), p], [])
    ctx.smem_publish()
    per_thread = dst_layout.elems_per_thread(dst_shape)
    vals = []
    import itertools
    for coord in itertools.product(*[range(n) for n in per_thread]):
        idx = ctx.linear_index(dst_layout, dst_shape, coord)
        p = smem_gep(ctx, base, idx, st)
        vals.append(from_smem(ctx, ctx.op1("llvm.load", [p], st), scalar_type))
    return _regs(dst_layout, dst_shape, vals)


def conversion_plan(src_layout, dst_layout, shape, scalar_type):
    """The path `plan_conversion` takes from `src_layout` to `dst_layout` for a tile of `shape`
    (the rule and its scratch size ask the same question); None when no conversion is needed or
    possible (equal layouts; a shared layout, which the rule rejects)."""
    if src_layout == dst_layout or src_layout.is_shared or dst_layout.is_shared:
        return None
    return plan_conversion(src_layout.linear(shape), dst_layout.linear(shape), shape,
                           elems_bytes(1, scalar_type))


def swizzled_bytes(plan, shape, scalar_type) -> int:
    """Bytes of the swizzled buffer of a "shared" plan: the whole range of its offset map."""
    return elems_bytes(plan.swizzle.offset_map(shape).out_size("offset"), scalar_type)


@scratch("tilegpu.convert_layout")
def _convert_layout_scratch(op):
    src, rt = op.operands[0].type, op.results[0].type
    shape, st = tuple(T.shape_of(rt)), T.element_type(rt)
    plan = conversion_plan(layout_of(src), layout_of(rt), shape, st)
    if plan is None or plan.kind != "shared":  # none, a register permutation, shuffles
        return 0
    return swizzled_bytes(plan, shape, st)


@scratch("tile.reshape")
def _reshape_scratch(op):
    rt = op.results[0].type
    if not T.is_tensor(rt):
        return 0
    src = op.operands[0].type
    return elems_bytes(math.prod(T.shape_of(src)), T.element_type(rt))


def _vec_type(t, n):
    return t if n == 1 else ir.VectorType.get([n], t)


def _offset_parts(ctx, lin):
    """(the thread's part of a linear map to one int (a buffer offset), as an i32, the mask of
    the bits it may set)."""
    lane_bits = ctx.warp_size.bit_length() - 1
    terms = [(i, v[0]) for i, v in enumerate(lin.basis("lane")) if v[0]]
    terms += [(lane_bits + i, v[0]) for i, v in enumerate(lin.basis("warp")) if v[0]]
    mask = 0
    for _, v in terms:
        mask |= v
    return pinned(ctx, ctx.gather_bits(tuple(terms))), mask


def pinned(ctx, v):
    """On AMD, `v` through an empty `sideeffect` asm (a `v_mov_b32`-free copy): the offsets
    derived from it (`_plus`) are then computed beside each LDS access, not hoisted out of the
    loop by LLVM, where each of them held a VGPR across it (ISel folds no add across blocks, and
    an xor never): the RDNA attention forward's loop had 145 such registers live."""
    if ctx.target != "amd":
        return v
    return ctx.op1("llvm.inline_asm", [v], ctx.i32, {
        "asm_string": ir.StringAttr.get(""), "constraints": ir.StringAttr.get("=v,0"),
        "has_side_effects": ir.UnitAttr.get(), "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})


def _plus(ctx, v, const: int, mask: int):
    """v + const where their bits are disjoint (a constant offset), else v xor const."""
    if not const:
        return v
    return ctx.op1("arith.addi" if not const & mask else "arith.xori", [v, ctx.const(const)],
                   ctx.i32)


def _through_swizzled(ctx, src, ls, dst, ld, shape, plan, scalar_type):
    """Every thread stores its elements at their swizzled offsets (`store_vec` at a time), a
    barrier, every thread loads what `dst` gives it (`load_vec` at a time)."""
    st = smem_type(scalar_type)
    eb = elems_bytes(1, scalar_type)
    offs = plan.swizzle.offset_map(shape)
    base = ctx.smem(swizzled_bytes(plan, shape, scalar_type))
    ctx.smem_begin()
    put = offs.compose(ls)
    sm = stmatrix_plan(ctx, put, ls, st) if len(src.values) == 1 << ls.in_bits("register") \
        else None
    tpart, tmask = _offset_parts(ctx, put)
    vs = plan.store_vec
    if sm is not None:
        by_stmatrix(ctx, base, put, sm, st, [to_smem(ctx, v, st) for v in src.values])
    for g in range(0, len(src.values) if sm is None else 0, vs):
        idx = _plus(ctx, tpart, put.apply(register=g)[0], tmask)
        vals = [to_smem(ctx, v, st) for v in src.values[g:g + vs]]
        if vs == 1:
            val = vals[0]
        else:
            val = ctx.op1("llvm.mlir.poison", [], _vec_type(st, vs))
            for j, x in enumerate(vals):
                val = ctx.op1("llvm.insertelement", [val, x, ctx.const(j)], _vec_type(st, vs))
        ctx.create("llvm.store", [val, smem_gep(ctx, base, idx, st)], [],
                   {"alignment": ir.IntegerAttr.get(ctx.i64, vs * eb)})
    ctx.smem_publish()
    get = offs.compose(ld)
    lm = None
    if ctx.target == "nvidia" and arch_capability(ctx.arch) >= 75 and \
            str(st) in ("f16", "bf16", "i16"):  # ldmatrix: sm_75+
        lm = ldmatrix_plan(ld, plan.swizzle, eb)
    if lm is not None:
        return _regs(dst, shape, by_ldmatrix(ctx, base, get, ld, lm, st, scalar_type))
    return _regs(dst, shape, read_linear(ctx, base, get, ld, st, scalar_type, plan.load_vec))


def read_linear(ctx, base, get, ld, st, scalar_type, vl: int) -> list:
    """The values of layout `ld` (register order) read from the buffer at `base`, where `get`
    maps (register, lane, warp) to element offsets, `vl` consecutive registers per load."""
    eb = elems_bytes(1, st)
    tpart, tmask = _offset_parts(ctx, get)
    out = []
    for g in range(0, 1 << ld.in_bits("register"), vl):
        idx = _plus(ctx, tpart, get.apply(register=g)[0], tmask)
        v = ctx.op1("llvm.load", [smem_gep(ctx, base, idx, st)], _vec_type(st, vl),
                    {"alignment": ir.IntegerAttr.get(ctx.i64, vl * eb)})
        parts = [v] if vl == 1 else [ctx.op1("llvm.extractelement", [v, ctx.const(j)], st)
                                     for j in range(vl)]
        out += [from_smem(ctx, x, scalar_type) for x in parts]
    return out


def write_linear(ctx, base, get, ld, st, values, vl: int):
    """`values` (layout `ld`, register order) stored to the buffer at `base` as `read_linear`
    reads them: `vl` consecutive registers per store (copies store the same values)."""
    eb = elems_bytes(1, st)
    tpart, tmask = _offset_parts(ctx, get)
    for g in range(0, 1 << ld.in_bits("register"), vl):
        idx = _plus(ctx, tpart, get.apply(register=g)[0], tmask)
        v = values[g]
        if vl > 1:
            v = ctx.op1("llvm.mlir.poison", [], _vec_type(st, vl))
            for j in range(vl):
                v = ctx.op1("llvm.insertelement", [v, values[g + j], ctx.const(j)],
                            _vec_type(st, vl))
        ctx.create("llvm.store", [v, smem_gep(ctx, base, idx, st)], [],
                   {"alignment": ir.IntegerAttr.get(ctx.i64, vl * eb)})


def linear_vec(get, elem_bytes: int) -> int:
    """Registers per load for `read_linear`: the first registers' offsets are 0, 1, .., v-1
    and every other basis of `get` is a multiple of v (aligned vectors), v*elem_bytes <= 16."""
    regs = [b[0] for b in get.basis("register")]
    others = regs + [b[0] for d in ("lane", "warp") for b in get.basis(d)]
    k = 0
    while k < len(regs) and regs[k] == 1 << k and (2 << k) * elem_bytes <= 16:
        k += 1
    while k and any(o % (1 << k) for o in others[k:]):
        k -= 1
    return 1 << k


def _unit(rank, d, v):
    return tuple(v if i == d else 0 for i in range(rank))


def ldmatrix_plan(ld, sw, elem_bytes):
    """How `ldmatrix.x4` (8x8 b16 matrices, rows of 16 contiguous bytes in shared memory) loads
    a tile in layout `ld` (its linear map) from the swizzle `sw`, or None.  Each 32-bit result
    register holds two of a thread's registers differing in bit `pair`; matrix q of the four
    selects register bits `sel` (q's bits).  Without .trans, lane l of a matrix holds row l / 4,
    column pair l % 4 (along the contiguous dim); with .trans, column l / 4 and row pair l % 4.
    Returns (trans, pair, sel): the register bits, read off the map."""
    if elem_bytes != 2 or ld.in_bits("lane") != 5 or ld.in_bits("register") < 3:
        return None
    if sw.max_phase > 1 and sw.vec < 8:  # a matrix row must be 16 contiguous bytes
        return None
    rank, col = len(ld.outs), sw.col
    regs, lanes = list(ld.basis("register")), list(ld.basis("lane"))
    for trans in (False, True):
        if trans:  # lanes 2-4 step the contiguous dim; pairs and lanes 0-1 another one
            if lanes[2:] != [_unit(rank, col, v) for v in (1, 2, 4)]:
                continue
            other = [d for d in range(rank) if d != col and lanes[0][d]]
            if len(other) != 1 or lanes[:2] != [_unit(rank, other[0], v) for v in (2, 4)]:
                continue
            pair_basis = _unit(rank, other[0], 1)
        else:
            if lanes[:2] != [_unit(rank, col, v) for v in (2, 4)] or \
                    any(v[col] for v in lanes[2:]) or len(set(lanes[2:])) != 3:
                continue
            pair_basis = _unit(rank, col, 1)
        if pair_basis not in regs:
            continue
        pair = regs.index(pair_basis)
        rest = [b for b in range(len(regs)) if b != pair]
        # matrix order: rows + 8 (the other dim), then columns + 8, then the lowest other
        # bits: an mma.sync operand's 8x8 matrices in its fragment order (A: a0..a3 one
        # x4, B: b0, b1 its halves), so ptxas takes the x4's registers as they are; any
        # two bits load correctly (the addresses follow p1, p2)
        row = other[0] if trans else next(d for d in range(rank) if lanes[2][d])
        want = [_unit(rank, row, 8), _unit(rank, col, 8)]
        rest = [b for w in want for b in rest if regs[b] == w] + \
            [b for b in rest if regs[b] not in want]
        return trans, pair, tuple(rest[:2])
    return None


def _matrix_address(ctx, get, srcs):
    """(the addressing lane's part of an 8x8-matrix instruction's offset, its mask): lane l
    addresses row l % 8 of matrix l / 8, bit i of l moving the offset by `get` of `srcs[i]`
    (and the warp's bits by the warps' bases)."""
    lane_bits = ctx.warp_size.bit_length() - 1
    terms = [(i, get.apply(**{d: v})[0]) for i, (d, v) in enumerate(srcs)]
    terms += [(lane_bits + i, v[0]) for i, v in enumerate(get.basis("warp")) if v[0]]
    mask = 0
    for _, v in terms:
        mask |= v
    return ctx.gather_bits(tuple(t for t in terms if t[1])), mask


_MATRIX_ATTRS = {"shape": "#nvvm.ld_st_matrix_shape<m = 8, n = 8>",
                 "eltType": "#nvvm.ld_st_matrix_elt_type<b16>"}


def _matrix_attrs(trans: bool) -> dict:
    attrs = {k: ir.Attribute.parse(v) for k, v in _MATRIX_ATTRS.items()}
    attrs["layout"] = ir.Attribute.parse(f"#nvvm.mma_layout<{'col' if trans else 'row'}>")
    return attrs


def by_ldmatrix(ctx, base, get, ld, lm, st, scalar_type):
    """The dst registers by `nvvm.ldmatrix` x4 (see `ldmatrix_plan`): lane l addresses row
    l % 8 of matrix l / 8, a linear function of l's bits (and the warp's), plus a constant per
    group of four matrices."""
    trans, pair, (p1, p2) = lm
    # what each bit of the addressing lane moves the offset by (lanes 0-2: the row in the
    # matrix; 3-4: which matrix)
    if trans:
        srcs = [("register", 1 << pair), ("lane", 1), ("lane", 2)]
    else:
        srcs = [("lane", 4), ("lane", 8), ("lane", 16)]
    tpart, mask = _matrix_address(ctx, get, srcs + [("register", 1 << p1),
                                                    ("register", 1 << p2)])
    nregs = 1 << ld.in_bits("register")
    step = (1 << pair) | (1 << p1) | (1 << p2)
    i32 = ctx.i32
    rty = ir.Type.parse("!llvm.struct<(i32, i32, i32, i32)>")
    attrs = {"num": ir.IntegerAttr.get(i32, 4), **_matrix_attrs(trans)}
    vt = ir.VectorType.get([2], st)
    out = [None] * nregs
    for r0 in range(nregs):
        if r0 & step:
            continue
        idx = _plus(ctx, tpart, get.apply(register=r0)[0], mask)
        d = ctx.op1("nvvm.ldmatrix", [smem_gep(ctx, base, idx, st)], rty, attrs)
        for q in range(4):
            r = r0 | (q & 1) << p1 | (q >> 1) << p2
            w = ctx.op1("llvm.extractvalue", [d], i32,
                        {"position": ir.DenseI64ArrayAttr.get([q])})
            v = ctx.op1("llvm.bitcast", [w], vt)
            for j in range(2):
                x = ctx.op1("llvm.extractelement", [v, ctx.const(j)], st)
                out[r | j << pair] = from_smem(ctx, x, scalar_type)
    return out


def stmatrix_plan(ctx, put, ld, st):
    """How `stmatrix.x4` (sm_90: four 8x8 b16 matrices, each row 16 contiguous bytes) stores
    the registers of layout `ld` to the offsets `put` maps them to, or None.  As the fragment
    has it: a register bit (`pair`) and lanes 0-1 step the offset by 1, 2, 4 elements (a
    thread's column pair within the row's 16 bytes); every other register and lane basis is a
    nonzero multiple of 8 (rows 16-byte aligned; lanes 2-4 pick the row, two register bits the
    matrix).  Returns (pair, (p1, p2)).  Only with `CompileOptions.stmatrix`."""
    if not getattr(ctx, "stmatrix", False) or ctx.target != "nvidia" or \
            arch_capability(ctx.arch) < 90 or \
            str(st) not in ("f16", "bf16", "i16") or ld.in_bits("lane") != 5 or \
            ld.in_bits("register") < 3:
        return None
    regs = [b[0] for b in put.basis("register")]
    lanes = [b[0] for b in put.basis("lane")]
    if 1 not in regs or lanes[:2] != [2, 4]:
        return None
    pair = regs.index(1)
    rest = [b for b in range(len(regs)) if b != pair]
    warps = [b[0] for b in put.basis("warp")]
    if any(v == 0 or v % 8 for v in [regs[b] for b in rest] + lanes[2:]) or \
            any(v % 8 for v in warps):  # (a warp basis 0: warps storing the same values)
        return None
    return pair, tuple(rest[:2])


def by_stmatrix(ctx, base, put, plan, st, values):
    """`values` (register order, in the shared-memory type `st`) stored by `nvvm.stmatrix` x4
    (see `stmatrix_plan`), addressed as `by_ldmatrix` reads."""
    pair, (p1, p2) = plan
    tpart, mask = _matrix_address(ctx, put, [("lane", 4), ("lane", 8), ("lane", 16),
                                             ("register", 1 << p1), ("register", 1 << p2)])
    step = (1 << pair) | (1 << p1) | (1 << p2)
    vt = ir.VectorType.get([2], st)
    attrs = _matrix_attrs(False)
    for r0 in range(len(values)):
        if r0 & step:
            continue
        words = []
        for q in range(4):
            r = r0 | (q & 1) << p1 | (q >> 1) << p2
            v = ctx.op1("llvm.mlir.poison", [], vt)
            for j in range(2):
                v = ctx.op1("llvm.insertelement", [v, values[r | j << pair], ctx.const(j)], vt)
            words.append(ctx.op1("llvm.bitcast", [v], ctx.i32))
        idx = _plus(ctx, tpart, put.apply(register=r0)[0], mask)
        ctx.create("nvvm.stmatrix", [smem_gep(ctx, base, idx, st)] + words, [], attrs)


def _by_shuffles(ctx, src, dst, shape, plan):
    """Within warps: dst register r of lane l takes src register R(r, l) of lane L(r, l),
    both linear (plan.source); one `gpu.shuffle idx` per register a dst register may come
    from, selected by the receiving lane."""
    m = plan.source
    lane_bits = ctx.warp_size.bit_length() - 1

    def terms(col):
        ts = [(i, v[col]) for i, v in enumerate(m.basis("lane")) if v[col]]
        ts += [(lane_bits + i, v[col]) for i, v in enumerate(m.basis("warp")) if v[col]]
        mask = 0
        for _, v in ts:
            mask |= v
        return tuple(ts), mask
    lterms, lmask = terms(1)
    rterms, _ = terms(0)
    lane_part = ctx.gather_bits(lterms)
    reg_part = ctx.gather_bits(rterms) if rterms else None
    choices = [0]
    for _, v in rterms:  # the span of the registers the receiving lanes may need
        choices += [c ^ v for c in choices if c ^ v not in choices]
    choices = sorted(set(choices))
    wants = {c: ctx.op1("arith.cmpi", [reg_part, ctx.const(c)], ctx.i1,
                        {"predicate": ir.IntegerAttr.get(ctx.i64, 0)}) for c in choices[1:]}
    out = []
    for r in range(1 << m.in_bits("register")):
        r0, l0 = m.apply(register=r)
        src_lane = _plus(ctx, lane_part, l0, lmask)
        val = None
        for c in choices:
            got = ctx.shuffle(src.values[r0 ^ c], src_lane, "idx")
            val = got if val is None else ctx.op1("arith.select", [wants[c], got, val],
                                                  got.type)
        out.append(val)
    return _regs(dst, shape, out)


def packed_word(ctx, src, w, wb, eb, it, words):
    """The i32 packing src registers `w | (j's bits at wb)`, j = 0.., each `eb` bits (`it`),
    j's at bit eb * j; memoized in `words`."""
    if w not in words:
        acc = None
        for j in range(1 << len(wb)):
            reg = w | sum((j >> i & 1) << b for i, b in enumerate(wb))
            x = src.values[reg]
            x = x if T.isa(x.type, ir.IntegerType) else ctx.op1("arith.bitcast", [x], it)
            x = ctx.op1("arith.extui", [x], ctx.i32)
            if j:
                x = ctx.op1("arith.shli", [x, ctx.const(eb * j)], ctx.i32)
            acc = x if acc is None else ctx.op1("arith.ori", [acc, x], ctx.i32)
        words[w] = acc
    return words[w]


def _by_word_shuffles(ctx, src, dst, shape, plan):
    """`_by_shuffles` a 32-bit word at a time (plan.word_bits: see `packed_shuffles`): src
    registers packed into words, one `gpu.shuffle idx` per (word, lane offset) a dst word
    takes bytes from (at most two), then `prmt` picks its bytes, the selector XORed by the
    receiving lane's byte position (the lanes choose among src registers within a word)."""
    m, wb = plan.source, plan.word_bits
    per, eb = 1 << len(wb), 32 >> len(wb)
    wmask = sum(1 << b for b in wb)
    it = ir.IntegerType.get_signless(eb)
    lane_bits = ctx.warp_size.bit_length() - 1

    def pos(reg):  # byte position in its word of a src register
        return sum((reg >> b & 1) << i for i, b in enumerate(wb))

    def terms(f):
        ts = [(i, f(v)) for i, v in enumerate(m.basis("lane")) if f(v)]
        ts += [(lane_bits + i, f(v)) for i, v in enumerate(m.basis("warp")) if f(v)]
        mask = 0
        for _, v in ts:
            mask |= v
        return tuple(ts), mask
    lterms, lmask = terms(lambda v: v[1])
    bterms, _ = terms(lambda v: pos(v[0]))
    lane_part = ctx.gather_bits(lterms)
    # the lane's byte position, in every nibble of the selector (`per` of them)
    spread = sum(1 << 4 * j for j in range(per))
    sel_lane = ctx.op1("arith.muli", [ctx.gather_bits(bterms), ctx.const(spread)], ctx.i32) \
        if bterms else None
    words = {}

    def word(w):
        return packed_word(ctx, src, w, wb, eb, it, words)
    st = src.values[0].type
    out = []
    for r in range(0, 1 << m.in_bits("register"), per):
        srcs, nib = [], 0
        for j in range(per):
            R, L = m.apply(register=r | j)
            if (R & ~wmask, L) not in srcs:
                srcs.append((R & ~wmask, L))
            nib |= (4 * srcs.index((R & ~wmask, L)) + pos(R)) << 4 * j
        got = [ctx.shuffle(word(w), _plus(ctx, lane_part, lo, lmask), "idx") for w, lo in srcs]
        identity = sum(j << 4 * j for j in range(per))
        if sel_lane is None and len(got) == 1 and nib == identity:
            v = got[0]
        else:
            sel = ctx.const(nib) if sel_lane is None else \
                ctx.op1("arith.xori", [sel_lane, ctx.const(nib)], ctx.i32)
            v = call_intrinsic("llvm.nvvm.prmt", [got[0], got[-1], sel], ctx.i32)
        for j in range(per):
            x = ctx.op1("arith.shrui", [v, ctx.const(eb * j)], ctx.i32) if j else v
            if T.isa(st, ir.IntegerType):  # (i8, or i1 travelling as a byte)
                out.append(ctx.op1("arith.trunci", [x], st))
            else:
                out.append(ctx.op1("arith.bitcast", [ctx.op1("arith.trunci", [x], it)], st))
    return _regs(dst, shape, out)


def _by_word_exchange(ctx, src, dst, shape, plan):
    """One `gpu.shuffle idx` a dst word (plan.exchange, dialects/word_exchange.py): each round
    the sender prmts its word's bytes out of (at most) two packed src words, the selector
    XORed by its lane; each dst word is a prmt of (at most) two received words, likewise."""
    m, wb = plan.source, plan.word_bits
    tabs = exchange_tables(m, plan.exchange)
    eb = 32 >> len(wb)
    it = ir.IntegerType.get_signless(eb)
    lane_bits = ctx.warp_size.bit_length() - 1
    st = src.values[0].type
    nl = m.in_bits("lane")
    words = {}

    def word(w):  # (LLVM folds an fp8 tile's own packing back)
        return packed_word(ctx, src, w, wb, eb, it, words)

    def by_lane(vals):
        """vals[lane] (linear in the lane's bits): a constant, or the constant XOR the lane's
        part (one value a lane bit, gathered from the thread id)."""
        terms = tuple((i, vals[1 << i] ^ vals[0]) for i in range(nl) if vals[1 << i] ^ vals[0])
        if not terms:
            return ctx.const(vals[0])
        mask = 0
        for _, v in terms:
            mask |= v
        return _plus(ctx, ctx.gather_bits(terms), vals[0], mask)

    def prmt(a, b, sels):
        if a is b and all(x == 0x3210 for x in sels):
            return a
        return call_intrinsic("llvm.nvvm.prmt", [a, b, by_lane(sels)], ctx.i32)
    got = []
    for ws, sels, lanes in tabs.rounds:
        sent = prmt(word(ws[0]), word(ws[-1]), sels)
        got.append(ctx.shuffle(sent, by_lane(lanes), "idx"))
    out = []
    for ts, sels in tabs.words:
        v = prmt(got[ts[0]], got[ts[-1]], sels)
        for j in range(4):
            x = ctx.op1("arith.shrui", [v, ctx.const(8 * j)], ctx.i32) if j else v
            if T.isa(st, ir.IntegerType):  # (i8, or i1 travelling as a byte)
                out.append(ctx.op1("arith.trunci", [x], st))
            else:
                out.append(ctx.op1("arith.bitcast", [ctx.op1("arith.trunci", [x], it)], st))
    return _regs(dst, shape, out)


@lower("tilegpu.convert_layout")
def _convert_layout(ctx, op, args):
    src = args[0]
    dst = layout_of(op.results[0].type)
    if dst == src.layout:
        return [src]
    if dst.is_shared or src.layout.is_shared:
        raise LoweringError(f"convert_layout between {src.layout} and {dst}: tiles live in "
                            f"registers, shared-memory layouts only describe buffers")
    shape = tuple(T.shape_of(op.results[0].type))
    st = ctx.scalar_type(op.results[0].type)
    ls, ld = src.layout.linear(shape), dst.linear(shape)
    plan = conversion_plan(src.layout, dst, shape, st)
    if plan.kind in ("none", "registers"):
        return [_regs(dst, shape, [src.values[r] for r in plan.registers])]
    if plan.kind == "shuffle":
        if plan.exchange is not None and ctx.target == "nvidia":
            return [_by_word_exchange(ctx, src, dst, shape, plan)]
        if plan.word_bits and ctx.target == "nvidia":
            return [_by_word_shuffles(ctx, src, dst, shape, plan)]
        return [_by_shuffles(ctx, src, dst, shape, plan)]  # (AMD: a byte at a time)
    return [_through_swizzled(ctx, src, ls, dst, ld, shape, plan, st)]


@lower("tile.reshape")
def _reshape(ctx, op, args):
    src = args[0]
    rt = op.results[0].type
    if not T.is_tensor(rt):  # a single element: every thread holds it
        return [src.values[0]]
    return [through_smem(ctx, src, src.shape, layout_of(rt), T.shape_of(rt),
                         ctx.scalar_type(rt))]


@lower("tile.expand_dims")
def _expand_dims(ctx, op, args):
    src = args[0]
    dst = layout_of(op.results[0].type)
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    shape = T.shape_of(op.results[0].type)
    lin = dst.linear(shape)
    keep = [n for i, n in enumerate(lin.out_dims) if i != axis]
    if lin.sublayout(lin.in_dims, keep).bases != src.layout.linear(src.shape).bases:
        raise LoweringError("expand_dims needs its operand in a slice of the result's layout; "
                            "run tilegpu-assign-layouts")
    return [_regs(dst, T.shape_of(op.results[0].type), src.values)]


@lower("tile.trans")
def _trans(ctx, op, args):
    src = args[0]
    perm = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
    dst = layout_of(op.results[0].type)
    shape = T.shape_of(op.results[0].type)
    out = _regs(dst, shape, [None] * len(src.values))
    for c in out.coords():
        sc = [0] * len(c)
        for i, p in enumerate(perm):
            sc[p] = c[i]
        out.values[out.flat(c)] = src[tuple(sc)]
    return [out]
