"""Interpreter rows of the shape family (reductions compute directly in
frontend.ops_reduction, as a tree over numpy halves)."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from tilework.dialects import tile as T

from .interp_common import operand_segments, unsigned


def _attr_int(at, name):
    return ir.IntegerAttr(at[name]).value


def _order(at):
    return list(ir.DenseI32ArrayAttr(at["order"]))


def _histogram(b, ops, rt, at):
    a = operand_segments("tile.histogram", ops, at)
    x = unsigned(a["src"]).astype(np.uint64)
    keep = x < rt.shape[0]
    if a["mask"] is not None:
        keep &= np.asarray(a["mask"], bool)
    return np.bincount(x[keep].astype(np.int64), minlength=rt.shape[0]).astype(np.int32)


ROWS = {
    "tile.histogram": _histogram,
    "tile.expand_dims": lambda b, ops, rt, at: np.expand_dims(np.asarray(ops[0]),
                                                             _attr_int(at, "axis")),
    "tile.trans": lambda b, ops, rt, at: np.transpose(np.asarray(ops[0]), _order(at)),
    "tile.reshape": lambda b, ops, rt, at: np.reshape(np.asarray(ops[0]), rt.shape),
    # NaN-ignoring max/min (the combine of tl.max/tl.min)
    "arith.maxnumf": lambda b, ops, rt, at: np.fmax(np.asarray(ops[0]), np.asarray(ops[1])),
    "arith.minnumf": lambda b, ops, rt, at: np.fmin(np.asarray(ops[0]), np.asarray(ops[1])),
}


# ---- join/cat and dot (frontend/ops_join.py, ops_dot.py; split evaluates in the frontend) ----

def round_tf32(x):
    """float32 values rounded to the nearest tf32 value, ties away from zero (PTX's
    cvt.rna.tf32.f32), as float32: the integer arith of lowering/rules/dot.py's round_tf32
    (half a tf32 ulp added to the bits, the low 13 bits cleared; NaN kept)."""
    u = np.asarray(x, np.float32).view(np.uint32)
    r = (u + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(nan, u, r).astype(np.uint32).view(np.float32)


def _dot(b, ops, rt, at):
    """np.matmul in the precision of the FMA path: int8 in int32 (wrapping), fp64 in fp64,
    everything else in fp32 (fp16 results rounded once, by the interpreter's cast); fp32
    operands rounded to tf32 first with input_precision "tf32"."""
    x, y, c = (np.asarray(o) for o in ops)
    if np.issubdtype(x.dtype, np.integer):
        return (np.matmul(x.astype(np.int64), y.astype(np.int64)) + c).astype(np.int32)
    if str(T.element_type(ops[0].type)) == "f32" and str(T.element_type(ops[1].type)) == "f32" \
            and ir.StringAttr(at["input_precision"]).value == "tf32":
        x, y = round_tf32(x), round_tf32(y)
    ct = np.float64 if c.dtype == np.float64 else np.float32
    return np.matmul(x.astype(ct), y.astype(ct)) + c.astype(ct)


ROWS.update({
    "tile.join": lambda b, ops, rt, at: np.stack([np.asarray(ops[0]), np.asarray(ops[1])], -1),
    "tile.cat": lambda b, ops, rt, at: np.concatenate([np.asarray(ops[0]), np.asarray(ops[1])]),
    "tile.dot": _dot,
})


def _gather(b, ops, rt, at):
    axis = ir.IntegerAttr(at["axis"]).value
    src, idx = np.asarray(ops[0]), np.asarray(ops[1]).astype(np.int64)
    return np.take_along_axis(src, idx, axis)


ROWS["tile.gather"] = _gather
