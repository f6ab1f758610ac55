"""Checks shared by the verifiers of several op families (messages are part of the tests)."""
from __future__ import annotations

import mlir.ir as ir

from .. import ir_types as T


def same_shape(a: ir.Type, b: ir.Type) -> bool:
    return T.shape_of(a) == T.shape_of(b)


def check_ptr_value(ptr_t, val_t, what):
    pe = T.element_type(ptr_t)
    if not T.is_ptr(pe):
        return f"{what} takes pointers, got {ptr_t}"
    if T.pointee(pe) != T.element_type(val_t):
        return f"{what} of {pe} must have elements of {T.pointee(pe)}, got {T.element_type(val_t)}"
    if not same_shape(ptr_t, val_t):
        return f"{what} pointer shape {list(T.shape_of(ptr_t))} differs from value shape {list(T.shape_of(val_t))}"


def check_mask(mask, ptr_t, what):
    if mask is None:
        return None
    mt = mask.type
    if str(T.element_type(mt)) != "i1":
        return f"{what} mask must be i1, got {T.element_type(mt)}"
    if not same_shape(mt, ptr_t):
        return f"{what} mask shape {list(T.shape_of(mt))} differs from pointer shape {list(T.shape_of(ptr_t))}"


def int_attr(op, name) -> int:
    return ir.IntegerAttr(op.attributes[name]).value
