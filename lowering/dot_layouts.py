"""Which layouts a `tile.dot` gets: tensor-core (mma) layouts where the target and the dot
allow them, else None (the portable FMA path of `rules/dot.py` keeps whatever layouts the
operands have).

`choose_dot_layouts(target, op, num_warps)` -> (acc layout, a layout, b layout) or None.
`tilegpu-assign-layouts` gives the result and the accumulator the first, converts a and b to
the others; `rules/dot_mma.py` lowers a dot in these layouts with `mma.sync`.  A leaf of the
lowering (it imports only the dialects), shared by the pass and the rules.

mma.sync (v2) instructions, per element type of a and b (PTX ISA, "Warp-level matrix multiply:
mma"): the instruction K and `k_width`, the elements of one 32-bit operand register.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir

from tilework.dialects import tile as T
from tilework.dialects.layout import DotOperand, NvidiaMma, layout_of

from .dot_amd_layout import amd_dot_layouts, amd_operands
from .dot_wgmma_layout import wgmma_layout

M_INSTR, N_INSTR = 16, 8


@dataclass(frozen=True)
class MmaKind:
    """One mma.sync flavour: operand type name (PTX), K of the instruction, operand elements
    per 32-bit register, the accumulator types it takes, the minimum capability."""
    ptx: str
    k: int
    k_width: int
    accs: tuple
    min_cap: int = 80


_KINDS = {
    "f16": MmaKind("f16", 16, 2, ("f32", "f16")),
    "bf16": MmaKind("bf16", 16, 2, ("f32",)),
    "f32": MmaKind("tf32", 8, 1, ("f32",)),
    "i8": MmaKind("s8", 32, 4, ("i32",)),
}
# fp8 (m16n8k32 e4m3/e5m2, sm_89+) is not here yet: MLIR 22's nvvm.mma.sync verifier refuses
# those multiplicand types; LLVM 22 has `llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32`
# (and e5m2), selectable from PTX 8.4 only, while the target table emits PTX 8.0 up to sm_90a.
# fp8 dots stay on the FMA path.
_TF32_PRECISIONS = ("tf32", "tf32x3")
# fp32 (tf32) operands take one register per element: above this many operand-fragment
# registers per thread the conversions' hoisted shared-memory addresses plus the fragments
# spill (64x64x32, 4 warps: 64), so such dots stay on the FMA path for now.
TF32_FRAGMENT_REGS = 32


def mma_kind(a_elem: str, b_elem: str, acc_elem: str, precision: str, capability: int):
    """The mma.sync flavour of a dot with these element types (MLIR type names), or None."""
    if a_elem != b_elem or a_elem not in _KINDS:
        return None
    kind = _KINDS[a_elem]
    if acc_elem not in kind.accs or capability < kind.min_cap:
        return None
    if a_elem == "f32" and precision not in _TF32_PRECISIONS:
        return None  # "ieee" (and the bf16x3/x6 splits) stay on FMAs
    return kind


def warps_per_tile(shape, num_warps: int) -> tuple:
    """Warps along (M, N) as Triton's mma v2 does: double the dimension with more
    instruction tiles left per warp, M first on ties, while the warp tile fits the shape;
    warps that do not fit along either end up along N (copies)."""
    m, n = shape
    wm = wn = 1
    while wm * wn < num_warps:
        if m // M_INSTR // wm >= n // N_INSTR // wn and wm < m // M_INSTR:
            wm *= 2
        elif wn < n // N_INSTR:
            wn *= 2
        elif wm < m // M_INSTR:
            wm *= 2
        else:
            wn *= 2
    return wm, wn


def fragment_regs(shape, k: int, warps, elem_bytes: int) -> int:
    """32-bit registers of a thread's A and B fragments (each warp holds its M/wm x K slice
    of A and K x N/wn slice of B)."""
    (m, n), (wm, wn) = shape, warps
    per_warp = (max(m // wm, M_INSTR) + max(n // wn, N_INSTR)) * k * elem_bytes
    return per_warp // (32 * 4)


def _elem(t) -> str:
    return str(T.element_type(t))


def _shape(t) -> tuple:
    return tuple(T.shape_of(t))


def _precision(op) -> str:
    return ir.StringAttr(op.attributes["input_precision"]).value


def choose_dot_layouts(target, op, num_warps: int, options=None):
    """(acc, a, b) layouts of the tensor-core path for `tile.dot` `op` on `target`, or None.
    `options` (CompileOptions): AMD's matrix_instr_nonkdim and kpack."""
    if target is not None and target.backend == "amd":
        return amd_dot_layouts(target, op, num_warps, options)
    if target is None or target.backend != "nvidia" or target.warp_size != 32:
        return None
    v3 = wgmma_layout(target, op, num_warps)  # sm_90a: operands through shared memory
    if v3 is not None:
        return v3, None, None
    if not target.has("mma_v2"):
        return None
    a, b, c = (op.operands[i].type for i in range(3))
    shape = _shape(c)
    if len(shape) != 2:
        return None  # batched dots stay on the FMA path
    kind = mma_kind(_elem(a), _elem(b), _elem(c), _precision(op), target.capability)
    if kind is None:
        return None
    m, n = shape
    k = _shape(a)[1]
    if m < M_INSTR or n < N_INSTR or k < kind.k:
        return None  # below one instruction tile
    wm, wn = warps_per_tile(shape, num_warps)
    if kind.ptx == "tf32" and fragment_regs(shape, k, (wm, wn), 4) > TF32_FRAGMENT_REGS:
        return None
    acc = NvidiaMma(2, (wm, wn), (M_INSTR, N_INSTR))
    return acc, DotOperand(0, acc, kind.k_width), DotOperand(1, acc, kind.k_width)


def mma_operands(op):
    """(acc layout, a layout, b layout) when `op` (a tile.dot with layouts) is on the mma v2
    path: a and b in dot_operand layouts of an mma v2 result; else None."""
    amd = amd_operands(op)  # AMD's MFMA (dot_amd_layout.py)
    if amd is not None:
        return amd
    la, lb, lc = (layout_of(op.operands[i].type) for i in range(3))
    lr = layout_of(op.results[0].type)
    if not (isinstance(lr, NvidiaMma) and lr.version == 2 and lc == lr):
        return None
    if not all(isinstance(x, DotOperand) and x.parent == lr and x.op_idx == i
               for i, x in enumerate((la, lb))):
        return None
    return lr, la, lb
