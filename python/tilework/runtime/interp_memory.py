"""Interpreter rows of the memory family: numpy evaluations of its ops, added to
interpreter._OPS (one row per op name).

Atomics run the lanes of a tile in order (lane 0 first), each seeing the effect of the
previous ones, so lanes hitting one address behave as a sequence of atomics; masked-off lanes
return 0.  Memory goes through the interpreter's `_Memory` (bounds and read-only checks).
Block pointers need no row: the frontend turns them into pointer tiles and masks."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from .interp_common import operand_segments
from .interp_common import unsigned as _u


def _as(x, like):
    return np.asarray(x).astype(like.dtype, copy=False) if np.asarray(x).dtype != like.dtype \
        else np.asarray(x)


def _umax(c, v):
    return np.maximum(_u(c), _u(v)).view(c.dtype)


def _umin(c, v):
    return np.minimum(_u(c), _u(v)).view(c.dtype)


# kind -> new value from (current, operand); integers wrap (numpy fixed-width arithmetic)
_RMW = {
    "add": lambda c, v: (_u(c) + _u(v)).view(c.dtype),
    "fadd": lambda c, v: (c + v).astype(c.dtype),
    "max": np.maximum, "min": np.minimum, "umax": _umax, "umin": _umin,
    "and": lambda c, v: (_u(c) & _u(v)).view(c.dtype),
    "or": lambda c, v: (_u(c) | _u(v)).view(c.dtype),
    "xor": lambda c, v: (_u(c) ^ _u(v)).view(c.dtype),
    "xchg": lambda c, v: v,
}


def _run(b, addrs, mask, rt, update, what):
    """Applies `update(current, lane) -> new` lane by lane; returns the old values."""
    info = rt  # loads and stores read only the element type of the _Info
    addrs = np.asarray(addrs, np.uint64).reshape(-1)
    mask = np.ones(addrs.shape, np.bool_) if mask is None else np.asarray(mask).reshape(-1)
    old = np.zeros(addrs.shape, rt.np)
    lanes = np.flatnonzero(mask)
    if lanes.size == 0:
        return old.reshape(rt.shape)
    a = addrs[lanes]
    b.memory.locate(a, rt.size, what, (lanes, addrs.size))  # bounds, named after the op
    if np.unique(a).size == a.size:  # distinct addresses: one vectorized step
        cur = b.memory.load(a, info, (lanes, addrs.size))
        b.memory.store(a, update(cur, lanes), info, (lanes, addrs.size))
        old[lanes] = cur
        return old.reshape(rt.shape)
    for i in lanes:  # lanes sharing an address: one at a time, in lane order
        one = addrs[i:i + 1]
        sel = np.array([i])
        cur = b.memory.load(one, info, (sel, addrs.size))
        b.memory.store(one, update(cur, sel), info, (sel, addrs.size))
        old[i] = cur[0]
    return old.reshape(rt.shape)


def _segments(ops, at):
    return operand_segments("tile.atomic_rmw", ops, at)


def _atomic_rmw(b, ops, rt, at):
    a = _segments(ops, at)
    kind = ir.StringAttr(at["kind"]).value
    f = _RMW[kind]
    vals = np.asarray(a["value"]).reshape(-1)
    return _run(b, a["ptr"], a["mask"], rt,
                lambda cur, lanes: _as(f(cur, _as(vals[lanes], cur)), cur), f"atomic_{kind}")


def _atomic_cas(b, ops, rt, at):
    cmp = np.asarray(ops[1]).reshape(-1)
    val = np.asarray(ops[2]).reshape(-1)

    def update(cur, lanes):
        c = _as(cmp[lanes], cur)
        # compare bits (as the GPU does: -0.0 != 0.0 and NaN == NaN when the bits agree)
        bits = np.dtype(f"u{cur.dtype.itemsize}")
        same = cur.view(bits) == c.view(bits)
        return np.where(same, _as(val[lanes], cur), cur)
    return _run(b, ops[0], None, rt, update, "atomic_cas")


ROWS = {
    "tile.atomic_rmw": _atomic_rmw,
    "tile.atomic_cas": _atomic_cas,
}
