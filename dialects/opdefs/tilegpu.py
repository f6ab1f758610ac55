"""The `tilegpu` dialect: layout encodings (attributes) and the ops of the GPU form."""
from __future__ import annotations

from .. import ir_types as T
from ..layout_attrs import LAYOUT_ATTRS_IRDL
from .base import PURE, SAME_SHAPE, Dialect, operand, result, tensor

TILEGPU = Dialect("tilegpu", "the GPU form: layouts on tensor types")

# The layout attributes (blocked, slice, mma, dot_operand, shared, mfma, wmma): verbatim IRDL
# from layout_attrs.py, next to the Layout classes that parse them.
TILEGPU.raw_irdl.append(LAYOUT_ATTRS_IRDL)


def _convert(op):
    src, res = op.operands[0].type, op.results[0].type
    if T.shape_of(src) != T.shape_of(res) or T.element_type(src) != T.element_type(res):
        return "convert_layout changes only the layout"


TILEGPU.op("convert_layout", "`src` moved to the result's layout (the values are unchanged)",
           operands=[operand("src", tensor())], results=[result("result", tensor())],
           traits={PURE, SAME_SHAPE}, verify=_convert, interp=None)
