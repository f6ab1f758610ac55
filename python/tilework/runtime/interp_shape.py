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
