"""`tile` ops of the memory family: atomics.  (Block pointers are frontend objects, desugared
to pointer tiles and masks: they have no op.)"""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T
from .base import READS, SAME_SHAPE, STRING, WRITES, Attr, any_type, named_operands, operand, \
    optional, result
from .checks import check_mask, check_ptr_value, same_shape
from .core import TILE

ATOMIC_KINDS = ("add", "fadd", "max", "umax", "min", "umin", "and", "or", "xor", "xchg")
ATOMIC_SEMS = ("relaxed", "acquire", "release", "acq_rel")
ATOMIC_SCOPES = ("cta", "gpu", "sys")


def _width(t: ir.Type) -> int:
    s = str(t)
    return 16 if s == "bf16" else int("".join(c for c in s if c.isdigit()) or 0)


def _atomic_rmw(op):
    args = named_operands(op)
    ptr_t, val_t = args["ptr"].type, args["value"].type
    kind = ir.StringAttr(op.attributes["kind"]).value
    err = check_mask(args["mask"], ptr_t, "atomic_rmw")
    if err:
        return err
    pe, ve = T.element_type(ptr_t), T.element_type(val_t)
    is_int = T.isa(ve, ir.IntegerType)
    if kind == "fadd" and is_int or kind != "fadd" and kind != "xchg" and not is_int:
        return f"atomic_rmw {kind} does not apply to {ve}"
    if is_int and T.is_ptr(pe) and T.pointee(pe) != ve:
        # integer views of float memory (float max/min): the widths must agree
        if _width(T.pointee(pe)) != _width(ve) or not same_shape(ptr_t, val_t):
            return f"atomic_rmw of {pe} cannot operate on {ve}"
        return None
    return check_ptr_value(ptr_t, val_t, "atomic_rmw")


_v = any_type()
TILE.op("atomic_rmw", "atomically combines `value` into memory where `mask` holds (`kind`); "
                      "the result is the old value",
        operands=[operand("ptr", any_type()), operand("value", _v), optional("mask", any_type())],
        results=[result("result", _v)],
        attrs=[Attr("kind", STRING, ATOMIC_KINDS), Attr("sem", STRING, ATOMIC_SEMS),
               Attr("scope", STRING, ATOMIC_SCOPES)],
        traits={READS, WRITES, SAME_SHAPE}, verify=_atomic_rmw)


def _atomic_cas(op):
    return check_ptr_value(op.operands[0].type, op.operands[2].type, "atomic_cas")


_v = any_type()
TILE.op("atomic_cas", "atomically stores `value` where memory equals `cmp`; the result is the "
                      "old value",
        operands=[operand("ptr", any_type()), operand("cmp", _v), operand("value", _v)],
        results=[result("result", _v)],
        attrs=[Attr("sem", STRING, ATOMIC_SEMS), Attr("scope", STRING, ATOMIC_SCOPES)],
        traits={READS, WRITES, SAME_SHAPE}, verify=_atomic_cas)
