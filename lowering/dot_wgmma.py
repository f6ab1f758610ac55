"""`tilegpu-warpgroup-dot`: a `tile.dot` whose result has an mma v3 layout (chosen by
tilegpu-assign-layouts, see dot_wgmma_layout.py) becomes

    %a_s = tilegpu.local_alloc %a : memdesc<MxK, #tilegpu.nvmma_shared<sw, false, bits>>
    %b_s = tilegpu.local_alloc %b : memdesc<KxN, #tilegpu.nvmma_shared<sw, t, bits>>
    %r = tilegpu.warpgroup_dot %a_s, %b_s, %acc
    tilegpu.local_dealloc %a_s, %b_s

with the widest swizzle (128, 64 or 32 bytes) the contiguous dim allows: a K-major; b N-major
for 16-bit types (the layout its loads usually have: vector stores) unless its registers run
along K (a transposed load, attention's `tl.trans(k)`: K-major keeps the stores, and the
pipeliner's copies, vectorized), K-major (`transposed`) for tf32, fp8 and int8, which wgmma
cannot transpose.  fp32 operands are first rounded to
tf32 (to nearest, ties away from zero, as the FMA path does).  Runs after the layout passes, before
tilegpu-allocate-shared.  A pipeliner may instead feed warpgroup_dot memdescs of its own
buffers (any one-buffer nvmma_shared memdesc works).

Register A (FlashAttention-3's P): a 16-bit a that is computed (not a load, which the
pipeliner can copy into shared memory) and whose layout the planner converts to wgmma's A
fragment (`#tilegpu.dot_operand<0, acc, 2>`) for free (plan none or registers) stays in
registers: `tilegpu.warpgroup_dot %a_regs, %b_s, %acc`, after a `convert_layout` that moves
nothing.  The A fragment of m64nNk16 is the accumulator's pattern over 16 columns, so
`p = s.to(f16)` in the accumulator layout of a dot whose N is this dot's K (warps along M only)
qualifies.  Other layouts (e.g. a transposed accumulator) would need a real conversion through
shared memory, no cheaper than the local_alloc: they keep the shared-memory A.

fp8 (e4m3/e5m2) A: the m64nNk32 fragment (`dot_operand<0, acc, 4>`) holds 4 consecutive-k
bytes a register, the accumulator pairs of columns 8 apart: not free, but the planner moves it
within quads as 32-bit words (a word exchange: one shuffle and two prmts a word,
dialects/word_exchange.py), cheaper than the shared-memory round trip (stores, two
barriers); such a plan keeps A in registers.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import DotOperand, layout_of, with_layout
from tilework.dialects.layout_nvidia import NvidiaMma, NvmmaShared
from tilework.dialects.linear_layout import plan_conversion

from .axis_info import elem_bytes
from .dot_wgmma_hoist import hoist_invariant_operands, share_equal_buffers
from .dot_wgmma_trans import share_transposed_operands
from .layout_passes import kernels
from .pass_base import Pass, register
from .shared_memory import smem_type

SWIZZLES = (128, 64, 32)


def widest_swizzle(contiguous_bytes: int) -> int:
    """The widest nvmma swizzle whose rows fit in the contiguous dim (0: none fits)."""
    return next((s for s in SWIZZLES if contiguous_bytes >= s), 0)


def operand_layout(elem: ir.Type, shape, k_major_dim: int, k_major: bool) -> NvmmaShared:
    """The nvmma_shared layout of an operand tile of `shape`; `k_major_dim` is K's dim (1 for
    a, 0 for b), contiguous when `k_major`."""
    eb = elem_bytes(smem_type(elem))
    cont = k_major_dim if k_major else 1 - k_major_dim
    return NvmmaShared(widest_swizzle(shape[cont] * eb), cont == 0, 8 * eb)


TF32_DROPPED_BITS = 13  # fp32 has 23 explicit mantissa bits, tf32 10


def round_tf32(v: ir.Value) -> ir.Value:
    """An fp32 tile rounded to the nearest tf32 values, ties away from zero (PTX's
    `cvt.rna.tf32.f32`, the FMA path's and cuBLAS's rounding; wgmma itself would drop the low
    13 bits): half a tf32 ulp added to the bits, the low 13 cleared; NaN kept as it is."""
    t = ir.RankedTensorType(v.type)
    i32 = ir.IntegerType.get_signless(32)
    ti = ir.RankedTensorType.get(t.shape, i32, t.encoding)
    tb = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(1), t.encoding)

    def op(name, operands, rt, attrs=None):
        return ir.Operation.create(name, results=[rt], operands=operands,
                                   attributes=attrs or {}).results[0]

    def const(x):
        return op("arith.constant", [], ti,
                  {"value": ir.DenseElementsAttr.get_splat(ti, ir.IntegerAttr.get(i32, x))})
    u = op("arith.bitcast", [v], ti)
    r = op("arith.andi", [op("arith.addi", [u, const(1 << (TF32_DROPPED_BITS - 1))], ti),
                          const(-(1 << TF32_DROPPED_BITS))], ti)
    mag = op("arith.andi", [u, const(0x7FFFFFFF)], ti)
    nan = op("arith.cmpi", [mag, const(0x7F800000)], tb,
             {"predicate": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 8)})  # ugt
    return op("arith.bitcast", [op("arith.select", [nan, u, r], ti)], t)


def _is_wgmma_dot(op) -> bool:
    lay = layout_of(op.results[0].type)
    return isinstance(lay, NvidiaMma) and lay.version == 3


def register_a_layout(op):
    """The A-fragment layout a stays in registers in (see the module docstring), or None."""
    a = op.operands[0]
    ea = str(T.element_type(a.type))
    kw = {"f16": 2, "bf16": 2, "f8E4M3FN": 4, "f8E5M2": 4}.get(ea)
    if kw is None:
        return None
    owner = None if isinstance(a.owner, ir.Block) else a.owner
    if owner is None or owner.name == "tile.load":
        return None
    want = DotOperand(0, layout_of(op.results[0].type), kw)
    have = layout_of(a.type)
    if have == want:
        return want
    shape = T.shape_of(a.type)
    plan = plan_conversion(have.linear(shape), want.linear(shape), shape, 4 // kw)
    free = plan.kind in ("none", "registers")
    return want if free or plan.kind == "shuffle" and plan.word_bits else None


def _rewrite(op):
    a, b, acc = op.operands[0], op.operands[1], op.operands[2]
    ea = T.element_type(a.type)
    sa, sb = T.shape_of(a.type), T.shape_of(b.type)
    b_k_major = elem_bytes(smem_type(ea)) != 2 or (
        len(sb) == 2 and layout_of(b.type).fastest()[0] == 0 and sb[0] * 2 >= 32)
    la = operand_layout(ea, sa, 1, True)
    lb = operand_layout(T.element_type(b.type), sb, 0, b_k_major)
    reg_a = register_a_layout(op)
    with ir.InsertionPoint(op), op.location:
        if str(ea) == "f32":  # (eligible only with input_precision "tf32")
            a, b = round_tf32(a), round_tf32(b)
        mds = []
        if reg_a is not None:
            if layout_of(a.type) != reg_a:  # (a relabelling: no instruction)
                a = ir.Operation.create("tilegpu.convert_layout",
                                        results=[with_layout(a.type, reg_a)],
                                        operands=[a]).results[0]
            operands = [a]
        for v, lay in ((a, la), (b, lb))[1 if reg_a is not None else 0:]:
            t = T.memdesc_type(T.shape_of(v.type), T.element_type(v.type), lay.text(), 1)
            mds.append(ir.Operation.create("tilegpu.local_alloc", results=[t],
                                           operands=[v]).results[0])
        attrs = {n: op.attributes[n] for n in ("input_precision", "max_num_imprecise_acc")}
        new = ir.Operation.create("tilegpu.warpgroup_dot", results=[op.results[0].type],
                                  operands=(operands if reg_a is not None else []) + mds
                                  + [acc], attributes=attrs)
        for md in mds:
            ir.Operation.create("tilegpu.local_dealloc", results=[], operands=[md])
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()


def _warpgroup_dot(module_op, pctx):
    for f in kernels(module_op):
        for op in [o for o in T.walk_ops(f) if o.name == "tile.dot" and _is_wgmma_dot(o)]:
            _rewrite(op)
        hoist_invariant_operands(f)  # (attention's q: written once, before the key loop)
        share_equal_buffers(f)  # (... and once for all the key loops)
        share_transposed_operands(f)  # (x and tl.trans(x): one buffer, and a view of it)


register(Pass("tilegpu-warpgroup-dot",
              "tile.dot with an mma v3 result -> operands to nvmma_shared buffers + "
              "tilegpu.warpgroup_dot (Hopper wgmma)",
              run=_warpgroup_dot))
