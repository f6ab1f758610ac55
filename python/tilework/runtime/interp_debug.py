"""Interpreter rows of the debug family: numpy evaluations of its ops, added to
interpreter._OPS (one row per op name).

`tile.print` prints each element on its own line in the GPU's format
(`pid (x, y, z) idx (i, j)<prefix><value>`, see `format_lines`); `tile.assert` raises
AssertionError (it is only emitted when debug is on); `tile.assume` checks nothing."""
from __future__ import annotations

import math
import sys

import mlir.ir as ir
import numpy as np

from tilework.dialects import tile as T


def _bits(elem: str) -> int:
    if elem.startswith("!tile.ptr"):
        return 64
    return 16 if elem == "bf16" else int("".join(c for c in elem if c.isdigit()))


def format_value(v, elem: str, signed: bool, hex_: bool) -> str:
    """One element as the device's printf prints it (%f, %i/%u, %lli/%llu, 0x%0Nx, %p)."""
    if elem.startswith("!tile.ptr"):
        return hex(int(np.asarray(v).view(np.uint64)))
    bits = _bits(elem)
    a = np.asarray(v)
    if hex_:
        if a.dtype == np.bool_:
            u = int(a)
        elif elem == "bf16":  # held as float32
            u = int(a.astype(np.float32).view(np.uint32)) >> 16
        else:
            u = int(a.view(np.dtype(f"u{a.dtype.itemsize}")))
        return f"0x{u & ((1 << bits) - 1):0{max(1, bits // 4)}x}"
    if elem.startswith(("f", "bf")):
        return f"{float(a):f}"
    x = int(a)
    if not signed:
        x &= (1 << bits) - 1
    return str(x)


def format_lines(pid, prefix, arg, hex_, operand=-1) -> list:
    """The lines device_print prints for one value: `arg` = (numpy values, element type,
    signed), or None (a prefix alone); `operand` >= 0 numbers it among several."""
    head = f"pid ({pid[0]}, {pid[1]}, {pid[2]})"
    if arg is None:
        return [head + prefix]
    vals, elem, signed = arg
    a = np.asarray(vals)
    widths = [max(0, math.ceil(math.log10(d))) if d > 0 else 0 for d in a.shape]
    tag = f"(operand {operand}) " if operand >= 0 else ""
    lines = []
    for idx in np.ndindex(*a.shape):
        index = ", ".join(f"{i:>{w}}" if w else str(i) for i, w in zip(idx, widths))
        lines.append(f"{head} idx ({index}){prefix}{tag}"
                     f"{format_value(a[idx], elem, signed, hex_)}")
    return lines


def _print(b, ops, rt, at):
    prefix = ir.StringAttr(at["prefix"]).value
    hex_ = bool(ir.IntegerAttr(at["hex"]).value)
    signed = bool(ir.IntegerAttr(at["is_signed"]).value)
    operand = ir.IntegerAttr(at["operand"]).value
    arg = (np.asarray(ops[0]), str(T.element_type(ops[0].type)), signed) if ops else None
    for line in format_lines(b.pid, prefix, arg, hex_, operand):
        print(line)
    sys.stdout.flush()


def _assert(b, ops, rt, at):
    cond = np.asarray(ops[0])
    if cond.all():
        return None
    msg = ir.StringAttr(at["msg"]).value
    where = ""
    if cond.ndim:
        where = f" (element {tuple(int(i) for i in np.argwhere(~cond)[0])})"
    raise AssertionError(f"{b.memory.location()}: device_assert failed in program {b.pid}"
                         f"{where}: {msg}")


ROWS = {
    "tile.print": _print,
    "tile.assert": _assert,
    "tile.assume": lambda b, ops, rt, at: None,
    "tile.debug_barrier": lambda b, ops, rt, at: None,  # programs run one thread at a time
}
