"""`tile.inline_asm`: inline assembly applied elementwise (`tl.inline_asm_elementwise`)."""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T
from .base import EFFECT, ELEMENTWISE, INT, SAME_SHAPE, STRING, Attr, any_type, group
from .core import TILE

MAX_ASM_ARGS = 8     # tiles one inline_asm reads (IRDL groups are optional segments)
MAX_ASM_RESULTS = 8  # and writes


def _inline_asm(op):
    pack = ir.IntegerAttr(op.attributes["pack"]).value
    if pack < 1:
        return f"inline_asm pack must be at least 1, got {pack}"
    shapes = {tuple(T.shape_of(v.type)) if T.is_tensor(v.type) else ()
              for v in list(op.operands) + list(op.results)}
    if len(shapes) > 1:
        return f"inline_asm operands and results must have one shape, got {sorted(shapes)}"


TILE.op("inline_asm", "the assembly `asm` run on each group of `pack` elements of `args` "
        "(LLVM inline asm with `constraints`; outputs first); `pure` 0 marks side effects",
        operands=group("arg", any_type, MAX_ASM_ARGS),
        results=group("result", any_type, MAX_ASM_RESULTS),
        attrs=[Attr("asm", STRING), Attr("constraints", STRING), Attr("pure", INT),
               Attr("pack", INT)],
        traits={EFFECT, ELEMENTWISE, SAME_SHAPE}, verify=_inline_asm)
