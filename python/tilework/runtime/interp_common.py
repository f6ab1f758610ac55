"""Helpers the interpreter and its op-family rows (`interp_*.py`) share."""
from __future__ import annotations

import os

import mlir.ir as ir
import numpy as np

from tilework.dialects import tile as T

from ..compiler.driver import parse_target

UNSIGNED = {np.dtype(s): np.dtype(u) for s, u in (
    (np.int8, np.uint8), (np.int16, np.uint16), (np.int32, np.uint32), (np.int64, np.uint64),
    (np.bool_, np.uint8))}


def unsigned(a):
    """The unsigned view of an integer value (i1 as 0/1)."""
    a = np.asarray(a)
    t = UNSIGNED.get(a.dtype)
    return a if t is None else (a.astype(t) if a.dtype == np.bool_ else a.view(t))


def operand_segments(name, ops, at):
    """Named operands of an op with optional operands (as dialects.verify.named_operands)."""
    sizes = list(ir.DenseI32ArrayAttr(at["operandSegmentSizes"]))
    out, i = {}, 0
    for seg, n in zip(T.OPERAND_SEGMENTS[name], sizes):
        out[seg] = ops[i] if n else None
        i += n
    return out


def emulated_target(options: dict):
    """The target the interpreter stands in for (tl.target_info's answers): the launch option
    `target`, else $TILEWORK_TARGET, else None (no GPU target)."""
    name = options.get("target") or os.environ.get("TILEWORK_TARGET")
    return parse_target(name) if name else None
