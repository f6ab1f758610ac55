"""Part of `tilegpu-pipeline`: a pipelined load whose tile feeds several dots in other register
layouts, some through `tl.trans` (the attention backward's `qT` and `do` on mma.sync: `dk +=
dsT @ tl.trans(qT)` after `qkT = k @ qT`), is read from its slot once per dot-operand layout,
each by `ldmatrix` (`.trans` where the layout's rows run along the other dim), the transposed
ones through a `tilegpu.memdesc_trans` view of the slot:

    %x = local_load %slot : blocked        %a = local_load %slot : dot_operand<1, P>
    %a = convert_layout %x : dot_operand   %v = memdesc_trans %slot
    %t = tile.trans %x                 ->  %b = local_load %v : dot_operand<1, Q>
    %b = convert_layout %t : dot_operand

instead of one read into the load's layout kept in registers until the last dot and moved
through scratch shared memory once per dot.  Each read is placed where its conversion was (the
registers are live from there to the dot).  The slot's swizzle is chosen for the copies' writes
and the reads together (`plan_reads`); a load whose reads would not all be ldmatrix from it
keeps the single read.  `tilework.lowering.pipeline_views.ENABLED = False` turns it off
(`benchmarks/tools/ab_attention.py --off slot-views`)."""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import tile as T
from tilework.dialects.layout import fastest_dim, layout_of, parse_layout
from tilework.dialects.layout_nvidia import SwizzledShared
from tilework.dialects.linear_layout import (LinearLayout, SharedSwizzle, access_vec,
                                             wavefronts)
from tilework.dialects.verify import named_operands

from .rules.layout import ldmatrix_plan

ENABLED = True


def _feeds_dot(v) -> bool:
    uses = list(v.uses)
    return bool(uses) and all(u.owner.name == "tile.dot" and u.operand_number in (0, 1)
                              for u in uses)


def _converts_to_dots(v) -> list | None:
    """The convert_layouts that are `v`'s only uses, each feeding dot operands only."""
    uses = [u.owner for u in v.uses]
    if not uses or any(u.name != "tilegpu.convert_layout" or not _feeds_dot(u.results[0])
                       for u in uses):
        return None
    return uses


def view_reads(load):
    """[(convert_layout, transposed)] when every use of the 16-bit 2-D `load` is a conversion
    to dot operands, directly or of its `tile.trans`, and some use is transposed or two
    conversions differ; else None."""
    v = load.results[0]
    shape = T.shape_of(v.type)
    if not ENABLED or len(shape) != 2 or str(T.element_type(v.type)) not in ("f16", "bf16"):
        return None
    reads = []
    for u in v.uses:
        op = u.owner
        if op.name == "tile.trans":
            convs = _converts_to_dots(op.results[0])
            if convs is None:
                return None
            reads += [(c, True) for c in convs]
        elif op.name == "tilegpu.convert_layout" and _feeds_dot(op.results[0]):
            reads.append((op, False))
        else:
            return None
    if not reads or (all(not t for _, t in reads) and len(reads) < 2):
        return None  # (one plain conversion: the pipeliner's "convert" consumer)
    return reads


def _ldmatrix_wavefronts(ld, lm, get) -> int:
    """Shared-memory wavefronts of the `ldmatrix.x4` reads of layout `ld` (as `by_ldmatrix`
    addresses them): per 8x8 matrix, its 8 rows of 16 bytes."""
    trans, pair, (p1, p2) = lm
    srcs = [("register", 1 << pair), ("lane", 1), ("lane", 2)] if trans else \
        [("lane", 4), ("lane", 8), ("lane", 16)]
    srcs += [("register", 1 << p1), ("register", 1 << p2)]
    step = (1 << pair) | (1 << p1) | (1 << p2)
    total = 0
    for r0 in range(1 << ld.in_bits("register")):
        if r0 & step:
            continue
        for q in range(4):
            banks = {}
            for i in range(8):
                a, reg, lane = 8 * q + i, r0, 0
                for k, (d, val) in enumerate(srcs):
                    if a >> k & 1:
                        reg, lane = (reg ^ val, lane) if d == "register" else (reg, lane ^ val)
                w0 = get.apply(register=reg, lane=lane)[0] * 2 // 4
                for w in range(w0, w0 + 4):
                    banks.setdefault(w % 32, set()).add(w)
            total += max(len(s) for s in banks.values())
    return total


def _vectors_first(lay, col):
    """`lay` with the register bits stepping `col` by 1, 2, 4 first (a copy's vector, in
    whatever order the layout numbers its registers), as `wavefronts` counts accesses."""
    regs = list(lay.basis("register"))
    unit = [tuple(1 << b if i == col else 0 for i in range(len(lay.outs))) for b in range(3)]
    first = [u for u in unit if u in regs]
    bases = {d: list(lay.basis(d)) for d in lay.in_dims}
    bases["register"] = first + [r for r in regs if r not in first]
    return LinearLayout.make(bases, lay.outs)


def plan_reads(load, reads):
    """The swizzled_shared layout text of the slot with the fewest wavefronts of the copies'
    writes and every read (ldmatrix), each read ldmatrix-able; None if no swizzle is."""
    shape = tuple(T.shape_of(load.results[0].type))
    ptr_layout = layout_of(named_operands(load)["ptr"].type)
    col, _ = fastest_dim(ptr_layout)  # (the copies' contiguous dim)
    if col is None:
        return None
    ptr = _vectors_first(ptr_layout.linear(shape), col)
    order = (col, 1 - col)
    lds = [(layout_of(c.results[0].type).linear(shape[::-1] if t else shape), t)
           for c, t in reads]
    best = None
    for max_phase in (1, 2, 4, 8):
        if 8 * max_phase > shape[col]:
            break
        for per_phase in ([1, 2, 4, 8] if max_phase > 1 else [1]):
            sw = SharedSwizzle(8, per_phase, max_phase, order)
            swt = SharedSwizzle(8, per_phase, max_phase, order[::-1])
            cost = wavefronts(ptr, sw.offset_map(shape), access_vec(ptr, col, 8), 2)
            for ld, t in lds:
                s, sh = (swt, shape[::-1]) if t else (sw, shape)
                lm = ldmatrix_plan(ld, s, 2)
                if lm is None:
                    cost = None
                    break
                cost += _ldmatrix_wavefronts(ld, lm, s.offset_map(sh).compose(ld))
            if cost is not None and (best is None or cost < best[0]):
                best = (cost, sw)
    if best is None:
        return None
    sw = best[1]
    return SwizzledShared(sw.vec, sw.per_phase, sw.max_phase, sw.order).text()


def read_views(slot, reads):
    """Each conversion of `reads` becomes a local_load of `slot` (through its memdesc_trans
    view for a transposed one) in its place; the transposes left unused are erased."""
    md = T.memdesc_of(slot.type)
    sw = parse_layout(md.layout)
    vt = T.memdesc_type(list(md.shape)[::-1], md.elem, SwizzledShared(
        sw.vec, sw.per_phase, sw.max_phase, tuple(sw.order)[::-1]).text(), 1)
    trans_ops = []
    for conv, t in reads:
        with ir.InsertionPoint(conv), conv.location:
            src = slot
            if t:
                src = ir.Operation.create("tilegpu.memdesc_trans", results=[vt],
                                          operands=[slot]).results[0]
                if conv.operands[0].owner not in trans_ops:
                    trans_ops.append(conv.operands[0].owner)
            val = B.build_local_load(None, src, result_type=conv.results[0].type)
        conv.results[0].replace_all_uses_with(val)
        conv.erase()
    for op in trans_ops:  # (every use was one of the conversions)
        op.erase()
