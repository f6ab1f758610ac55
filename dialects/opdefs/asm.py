"""Elementwise ops whose per-element code is the user's: `tile.inline_asm` (inline assembly,
`tl.inline_asm_elementwise`) and `tile.map_elementwise` (a scalar function, `tl.map_elementwise`:
its body is a private func.func, as tile.reduce's combine, since IRDL ops cannot be region
terminators)."""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T
from .base import EFFECT, ELEMENTWISE, INT, SAME_SHAPE, STRING, SYMBOL, Attr, any_type, group
from .core import TILE

MAX_ASM_ARGS = 8     # tiles one inline_asm reads (IRDL groups are optional segments)
MAX_ASM_RESULTS = 8  # and writes


def _packed(what):
    def check(op):
        pack = ir.IntegerAttr(op.attributes["pack"]).value
        if pack < 1:
            return f"{what} pack must be at least 1, got {pack}"
        shapes = {tuple(T.shape_of(v.type)) if T.is_tensor(v.type) else ()
                  for v in list(op.operands) + list(op.results)}
        if len(shapes) > 1:
            return f"{what} operands and results must have one shape, got {sorted(shapes)}"
    return check


TILE.op("inline_asm", "the assembly `asm` run on each group of `pack` elements of `args` "
        "(LLVM inline asm with `constraints`; outputs first); `pure` 0 marks side effects; "
        "without args, once, its results scalars",
        operands=group("arg", any_type, MAX_ASM_ARGS, required=False),
        results=group("result", any_type, MAX_ASM_RESULTS),
        attrs=[Attr("asm", STRING), Attr("constraints", STRING), Attr("pure", INT),
               Attr("pack", INT)],
        traits={EFFECT, ELEMENTWISE, SAME_SHAPE}, verify=_packed("inline_asm"))

TILE.op("map_elementwise", "the private scalar function `fn` applied to each group of `pack` "
        "elements of `args` (its arguments: each arg's pack elements in turn; its results: "
        "each result's pack elements in turn)",
        operands=group("arg", any_type, MAX_ASM_ARGS),
        results=group("result", any_type, MAX_ASM_RESULTS),
        attrs=[Attr("fn", SYMBOL), Attr("pack", INT)],
        traits={EFFECT, ELEMENTWISE, SAME_SHAPE}, verify=_packed("map_elementwise"),
        interp="builtin")
