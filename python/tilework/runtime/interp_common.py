"""Helpers the interpreter and its op-family rows (`interp_*.py`) share."""
from __future__ import annotations

import os

import mlir.ir as ir
import numpy as np

from tilework.dialects import tile as T

from ..compiler.driver import parse_target
from ..frontend.kernel_forms import min_max, recursion_message
from ..language import core

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


def kernel_location(tb, codes) -> str | None:
    """"file:line:col" of the innermost frame of traceback `tb` running kernel code (`codes`:
    the code objects of the interpreted @jit functions), None if none does."""
    where = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code in codes:
            pos = list(code.co_positions())[tb.tb_lasti // 2] if tb.tb_lasti >= 0 else ()
            line = pos[0] if pos and pos[0] else tb.tb_lineno
            col = pos[2] + 1 if len(pos) > 2 and pos[2] is not None else 1
            where = f"{code.co_filename}:{line}:{col}"
        tb = tb.tb_next
    return where


def builtin_min_max(fn, *args, **kwargs):
    r = min_max(core.active_builder(), fn, args, kwargs)
    return r.value if isinstance(r, core.constexpr) else r  # (Python values here)


def recursion_error(e: RecursionError, codes) -> RecursionError:
    """A recursion that does not end, said as the compiler says it (the innermost kernel
    function in the traceback named), with `e`'s traceback."""
    name, tb = None, e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            name = tb.tb_frame.f_code.co_name
        tb = tb.tb_next
    if name is None:
        return e
    err = RecursionError(recursion_message(name)).with_traceback(e.__traceback__)
    err.__cause__ = e
    return err
