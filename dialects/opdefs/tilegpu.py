"""The `tilegpu` dialect: layout encodings (attributes) and the ops of the GPU form."""
from __future__ import annotations

from .. import ir_types as T
from .base import PURE, SAME_SHAPE, Dialect, operand, result, tensor

TILEGPU = Dialect("tilegpu", "the GPU form: layouts on tensor types")

# The layout attributes, verbatim IRDL (they move to dialects/layout_attrs.py, which exports
# this text; splice that string here instead).
LAYOUT_ATTRS_IRDL = r"""
irdl.attribute @blocked {
  %a = irdl.base "#builtin.dense_array"
  %b = irdl.base "#builtin.dense_array"
  %c = irdl.base "#builtin.dense_array"
  %d = irdl.base "#builtin.dense_array"
  irdl.parameters(size_per_thread: %a, threads_per_warp: %b, warps_per_cta: %c, order: %d)
}
irdl.attribute @slice {
  %d = irdl.base "#builtin.integer"
  %p = irdl.any
  irdl.parameters(dim: %d, parent: %p)
}
"""
TILEGPU.raw_irdl.append(LAYOUT_ATTRS_IRDL)


def _convert(op):
    src, res = op.operands[0].type, op.results[0].type
    if T.shape_of(src) != T.shape_of(res) or T.element_type(src) != T.element_type(res):
        return "convert_layout changes only the layout"


TILEGPU.op("convert_layout", "`src` moved to the result's layout (the values are unchanged)",
           operands=[operand("src", tensor())], results=[result("result", tensor())],
           traits={PURE, SAME_SHAPE}, verify=_convert, interp=None)
