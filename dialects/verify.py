"""Checks of tile/tilegpu ops that IRDL constraints cannot express (shape and type relations).

`verify(op)` runs MLIR's own verifier, then on every op under `op` its declared checks (each
op's verifier sits next to its declaration in `opdefs/`) and the layout checks here, and
raises `VerificationError` with the op's location and a message.
"""
from __future__ import annotations

import mlir.ir as ir

from . import ir_types as T
from . import opdefs
from .layout import layout_of
from .opdefs import named_operands  # noqa: F401  (public here as before)


class VerificationError(Exception):
    def __init__(self, message: str, location: ir.Location | None = None):
        self.location = location
        self.message = message
        loc = f"{location}: " if location is not None else ""
        super().__init__(f"{loc}{message}")


def _check_layout(v, config):
    """The layout of `v` (if any) is well formed and fits the module's warp configuration."""
    try:
        lay = layout_of(v.type)
        if lay is not None:
            lay.verify(T.shape_of(v.type), *config)
    except ValueError as e:
        return str(e)


def _check_layouts(op, config):
    for v in list(op.results):
        err = _check_layout(v, config)
        if err:
            return err


def _module_config(op):
    """(warp size, num_warps) set on the enclosing module by tilegpu-assign-layouts."""
    m = op
    while m is not None and m.name != "builtin.module":
        m = m.parent.operation if m.parent is not None else None
    if m is None:
        return (None, None)
    a = m.attributes
    ws = ir.IntegerAttr(a["tilegpu.warp_size"]).value if "tilegpu.warp_size" in a else None
    nw = ir.IntegerAttr(a["tilegpu.num_warps"]).value if "tilegpu.num_warps" in a else None
    return (ws, nw)


def verify(root: ir.Operation | ir.Module) -> None:
    """Verifies `root` and every tile op in it; raises VerificationError."""
    op = root.operation if hasattr(root, "operation") else root
    try:
        op.verify()
    except ir.MLIRError as e:  # pragma: no cover - message formatting only
        raise VerificationError(str(e)) from None

    config = _module_config(op) if op.name == "builtin.module" else (None, None)
    for o in T.walk_ops(op):
        err = opdefs.check(o)
        if err is None:
            err = _check_layouts(o, config)
        if err is None:
            for region in o.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        err = err or _check_layout(a, config)
        if err:
            raise VerificationError(f"'{o.name}' op {err}", o.location)
