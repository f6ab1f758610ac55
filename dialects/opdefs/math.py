"""`tile` ops of the math family (elementwise math without an upstream `arith`/`math` op)."""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T
from .base import ELEMENTWISE, PURE, SAME_SHAPE, any_type, operand, result
from .core import TILE


def _umulhi(op):
    t = T.element_type(op.results[0].type)
    if not isinstance(t, ir.IntegerType) or ir.IntegerType(t).width not in (32, 64):
        return f"umulhi takes 32- or 64-bit integers, got {t}"


_t = any_type()
TILE.op("umulhi", "the high half of the full product of two unsigned integers",
        operands=[operand("lhs", _t), operand("rhs", _t)], results=[result("result", _t)],
        traits={PURE, ELEMENTWISE, SAME_SHAPE}, verify=_umulhi)
