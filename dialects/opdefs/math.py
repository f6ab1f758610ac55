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


def _int32_or_64(what):
    def check(op):
        t = T.element_type(op.results[0].type)
        if not isinstance(t, ir.IntegerType) or ir.IntegerType(t).width not in (32, 64):
            return f"{what} takes 32- or 64-bit integers, got {t}"
    return check


def _int32(op):
    t = T.element_type(op.results[0].type)
    if not isinstance(t, ir.IntegerType) or ir.IntegerType(t).width != 32:
        return f"byte_perm takes 32-bit integers, got {t}"


_b = any_type()
TILE.op("bitreverse", "the bits of an integer in reverse order (libdevice's brev)",
        operands=[operand("x", _b)], results=[result("result", _b)],
        traits={PURE, ELEMENTWISE, SAME_SHAPE}, verify=_int32_or_64("bitreverse"))
_p = any_type()
TILE.op("byte_perm", "bytes of (y:x) chosen by the low 3 bits of each selector nibble "
        "(libdevice's byte_perm; the nibbles' high bits are ignored)",
        operands=[operand("x", _p), operand("y", _p), operand("selector", _p)],
        results=[result("result", _p)], traits={PURE, ELEMENTWISE, SAME_SHAPE}, verify=_int32)
