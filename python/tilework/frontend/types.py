"""dtype <-> MLIR type mapping.  Signedness lives in the frontend dtype; MLIR integers are
signless, and ops pick signed or unsigned variants from the dtype."""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T

from ..language import core

_IR_NAMES = {
    "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "i8", "uint16": "i16", "uint32": "i32", "uint64": "i64",
    "fp8e4nv": "f8E4M3FN", "fp8e5": "f8E5M2", "fp8e4b15": "i8", "fp8e4b8": "f8E4M3FNUZ", "fp8e5b16": "f8E5M2FNUZ", "fp16": "f16", "bf16": "bf16", "fp32": "f32",
    "fp64": "f64",
}


def to_ir(dt: core.dtype) -> ir.Type:
    """The MLIR type of one element of `dt` (in the current context)."""
    if dt.is_ptr():
        return T.ptr_type(to_ir(dt.element_ty))
    return ir.Type.parse(_IR_NAMES[dt.name])


def tensor_ir_type(dt: core.dtype, shape) -> ir.Type:
    elem = to_ir(dt)
    if not shape:
        return elem
    return ir.RankedTensorType.get(list(shape), elem)
