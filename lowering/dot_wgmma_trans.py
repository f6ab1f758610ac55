"""One buffer for a wgmma operand and its transpose (part of `tilegpu-warpgroup-dot`, after its
rewrite and the hoist).  The attention backward feeds a loaded tile to two dots, one directly
and one through `tl.trans` (`dv = tl.dot(pT, do, dv)`, `dpT = tl.dot(v, tl.trans(do))`); the
rewrite gives each use its own buffer:

    %s = tilegpu.local_alloc %x : memdesc<[a, b], L>
    %t = tile.trans %x
    %u = tilegpu.local_alloc %t : memdesc<[b, a], L^T>     (the same bytes as %s)

When the second buffer's type is the transposed view of the first (`opdefs.shared.
transposed_view`: a 16-bit B is N-major in one dot and K-major in the other, the physical
order of the tile's registers either way), the second becomes `tilegpu.memdesc_trans %s`: x is
written to shared memory once, and a load of x has a single buffer the pipeliner can fill
(its views read the slot).  Only allocs in one block; the first buffer then lives until the
later of the two deallocs (the earlier alloc's place, if the transposed one came first)."""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.opdefs.shared import transposed_view


def _trans_source(v):
    """The tile `v` is the 2-D transpose of (through `tile.trans`), else None."""
    op = v.owner
    if isinstance(op, ir.Block) or op.name != "tile.trans" or len(T.shape_of(v.type)) != 2:
        return None
    return op.operands[0]


def _position(block):
    return {op.operation: i for i, op in enumerate(block.operations)}


def _deallocs(alloc):
    return [u.owner.operation for u in alloc.results[0].uses
            if u.owner.name == "tilegpu.local_dealloc"]


def _merge(direct, alloc):
    """`alloc` (of x^T) becomes a memdesc_trans of `direct` (of x), in one block."""
    pos = _position(direct.block)
    mine, theirs = _deallocs(direct), _deallocs(alloc)
    if any(d.block != direct.block for d in mine + theirs):
        return False
    if pos[alloc] < pos[direct]:  # (x dominates its transpose, so it dominates `alloc` too)
        direct.move_before(alloc)
    last = max(mine + theirs, key=lambda d: pos[d], default=None)
    for d in mine:
        if last is not None and last != d:
            d.move_after(last)
    with ir.InsertionPoint(alloc), alloc.location:
        view = ir.Operation.create("tilegpu.memdesc_trans", results=[alloc.results[0].type],
                                   operands=[direct.results[0]]).results[0]
    for d in theirs:
        d.erase()
    alloc.results[0].replace_all_uses_with(view)
    trans = alloc.operands[0].owner
    alloc.erase()
    if not any(True for _ in trans.results[0].uses):
        trans.erase()
    return True


def share_transposed_operands(f) -> None:
    """Rewrites the kernel `f`'s allocs of transposed tiles into views (see above)."""
    allocs = [op for op in T.walk_ops(f)
              if op.name == "tilegpu.local_alloc" and len(op.operands) == 1]
    by_value, merged = {}, set()
    for op in allocs:
        by_value.setdefault(op.operands[0], []).append(op)
    for op in allocs:
        x = _trans_source(op.operands[0])
        if x is None:
            continue
        view = T.memdesc_of(op.results[0].type)
        for direct in by_value.get(x, []):
            if id(direct) not in merged and direct.block == op.block and \
                    transposed_view(T.memdesc_of(direct.results[0].type), view) and \
                    _merge(direct, op):
                merged.add(id(op))  # (erased: its wrapper, kept in `allocs`, is stale)
                break
