"""Interpreter rows of the shape family (reductions compute directly in
frontend.ops_reduction, as a tree over numpy halves)."""
from __future__ import annotations

import numpy as np


def _attr_int(at, name):
    import mlir.ir as ir
    return ir.IntegerAttr(at[name]).value


def _order(at):
    import mlir.ir as ir
    return list(ir.DenseI32ArrayAttr(at["order"]))


ROWS = {
    "tile.expand_dims": lambda b, ops, rt, at: np.expand_dims(np.asarray(ops[0]),
                                                             _attr_int(at, "axis")),
    "tile.trans": lambda b, ops, rt, at: np.transpose(np.asarray(ops[0]), _order(at)),
    "tile.reshape": lambda b, ops, rt, at: np.reshape(np.asarray(ops[0]), rt.shape),
    # NaN-ignoring max/min (the combine of tl.max/tl.min)
    "arith.maxnumf": lambda b, ops, rt, at: np.fmax(np.asarray(ops[0]), np.asarray(ops[1])),
    "arith.minnumf": lambda b, ops, rt, at: np.fmin(np.asarray(ops[0]), np.asarray(ops[1])),
}


# ---- join/cat and dot (frontend/ops_join.py, ops_dot.py; split evaluates in the frontend) ----

def _dot(b, ops, rt, at):
    """np.matmul in the precision of the FMA path: int8 in int32 (wrapping), fp64 in fp64,
    everything else in fp32 (fp16 results rounded once, by the interpreter's cast)."""
    x, y, c = (np.asarray(o) for o in ops)
    if np.issubdtype(x.dtype, np.integer):
        return (np.matmul(x.astype(np.int64), y.astype(np.int64)) + c).astype(np.int32)
    ct = np.float64 if c.dtype == np.float64 else np.float32
    return np.matmul(x.astype(ct), y.astype(ct)) + c.astype(ct)


ROWS.update({
    "tile.join": lambda b, ops, rt, at: np.stack([np.asarray(ops[0]), np.asarray(ops[1])], -1),
    "tile.cat": lambda b, ops, rt, at: np.concatenate([np.asarray(ops[0]), np.asarray(ops[1])]),
    "tile.dot": _dot,
})
