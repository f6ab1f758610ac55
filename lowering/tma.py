"""`tilegpu-tma-loads`: each `tile.descriptor_load` (a host descriptor's block copied by TMA,
NVIDIA sm_90) becomes

    %buf = tilegpu.local_alloc : memdesc<block, layout>   (nvmma_shared<swizzle> or row-major)
    %bar = tilegpu.local_alloc : memdesc<[1] x i64>
    tilegpu.mbarrier_init %bar {count = 1}
    tilegpu.tma_load %desc, %buf, %bar, coords...
    tilegpu.mbarrier_wait %bar, 0
    %v = tilegpu.local_load %buf          (into the descriptor_load's layout)
    tilegpu.mbarrier_inval %bar
    tilegpu.local_dealloc %buf, %bar

A user that is a `local_alloc` of the value in the buffer's own layout (tilegpu-warpgroup-dot's
operand buffer, when the block's swizzle is the one wgmma wants) reads `%buf` instead: the
block goes from TMA to the tensor cores without the round trip through registers.  So does a
`tile.trans` of the value read only by a `local_alloc` whose type is the buffer's transposed
view (attention's `q @ k.T`): it becomes `tilegpu.memdesc_trans %buf`.  Runs after
tilegpu-pipeline, before tilegpu-vector-width and the shared-memory passes (which place the
barriers: after the init, before the inval, and before a copy over bytes other threads read).
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B
from tilework.dialects import tile as T
from tilework.dialects.layout_nvidia import NvmmaShared
from tilework.dialects.opdefs.shared import transposed_view
from tilework.dialects.verify import named_operands

from .layout_passes import kernels
from .pass_base import Pass, register

ROW_MAJOR = "unit"  # a memdesc layout that is no swizzled one: row-major


def buffer_layout(op) -> str:
    """The shared layout a descriptor_load's block lands in, or a descriptor_store's block is
    written in (its `swizzle`)."""
    sw = ir.IntegerAttr(op.attributes["swizzle"]).value
    if not sw:
        return ROW_MAJOR
    et = T.element_type((op.results[0] if len(op.results) else op.operands[1]).type)
    bits = ir.IntegerType(et).width if T.isa(et, ir.IntegerType) else ir.FloatType(et).width
    return NvmmaShared(sw, False, bits).text()


def coords(op) -> list:
    """The coordinates (`coord<i>` operands) of a descriptor_load or descriptor_store."""
    return [v for k, v in named_operands(op).items() if k.startswith("coord") and v is not None]


def barrier_type() -> ir.Type:
    return T.memdesc_type([1], ir.IntegerType.get_signless(64), ROW_MAJOR, 1)


def _i32(v: int) -> ir.Value:
    t = ir.IntegerType.get_signless(32)
    return ir.Operation.create("arith.constant", results=[t],
                               attributes={"value": ir.IntegerAttr.get(t, v)}).results[0]


def trans_readers(value, md_t):
    """[(trans, alloc)]: the `tile.trans` users of `value` whose result only a `local_alloc`
    reads, that alloc's type the transposed view of `md_t` (the K tile of attention's
    `q @ k.T`: wgmma reads k's buffer through `memdesc_trans`, no round trip through
    registers)."""
    found = []
    src = T.memdesc_of(md_t)
    for u in value.uses:
        t = u.owner
        if t.name != "tile.trans":
            continue
        users = [w.owner for w in t.results[0].uses]
        if len(users) == 1 and users[0].name == "tilegpu.local_alloc" and \
                transposed_view(src, T.memdesc_of(users[0].results[0].type)):
            found.append((t, users[0]))
    return found


def read_transposed(pairs, buf, free: bool):
    """Each (trans, alloc) of `trans_readers` becomes a `memdesc_trans` view of `buf`; with
    `free`, the alloc's last dealloc frees `buf` (else `buf`, a ring slot, is freed after the
    loop), its others go."""
    last = None
    for t, alloc in pairs:
        with ir.InsertionPoint(alloc), alloc.location:
            view = ir.Operation.create("tilegpu.memdesc_trans", results=[alloc.results[0].type],
                                       operands=[buf]).results[0]
        for u in list(alloc.results[0].uses):
            if u.owner.name == "tilegpu.local_dealloc":
                if free and last is None and \
                        u.owner.operation.block == buf.owner.operation.block:
                    last = u.owner
                    last.operands[0] = buf
                else:
                    u.owner.erase()
        alloc.results[0].replace_all_uses_with(view)
        alloc.erase()
        if not len(list(t.results[0].uses)):
            t.erase()
    return last is not None


def _rewrite(op):
    rt = op.results[0].type
    desc, xs = op.operands[0], coords(op)
    layout = buffer_layout(op)
    md_t = T.memdesc_type(T.shape_of(rt), T.element_type(rt), layout, 1)
    direct = [u.owner for u in op.results[0].uses
              if u.owner.name == "tilegpu.local_alloc" and u.owner.results[0].type == md_t]
    transposed = [] if direct else trans_readers(op.results[0], md_t)
    with ir.InsertionPoint(op), op.location:
        buf = B.build_local_alloc(None, result_type=md_t)
        bar = B.build_local_alloc(None, result_type=barrier_type())
        B.build_mbarrier_init(None, bar, count=1)
        B.build_tma_load(None, desc, buf, bar, xs)
        B.build_mbarrier_wait(None, bar, _i32(0))
        for alloc in direct:  # its readers take the TMA buffer; its dealloc frees that
            alloc.results[0].replace_all_uses_with(buf)
            alloc.erase()
        freed = read_transposed(transposed, buf, free=True)
        if len(list(op.results[0].uses)):
            v = B.build_local_load(None, buf, result_type=rt)
            op.results[0].replace_all_uses_with(v)
        B.build_mbarrier_inval(None, bar)
        if not direct and not freed:
            B.build_local_dealloc(None, buf)
        B.build_local_dealloc(None, bar)
    op.erase()


def tma_loads(module_op, pctx=None):
    for f in kernels(module_op):
        for op in [o for o in T.walk_ops(f) if o.name == "tile.descriptor_load"]:
            _rewrite(op)


register(Pass("tilegpu-tma-loads",
              "tile.descriptor_load -> TMA copy into shared memory on an mbarrier "
              "(tilegpu.tma_load, mbarrier_*), read back or fed to wgmma",
              run=tma_loads))
