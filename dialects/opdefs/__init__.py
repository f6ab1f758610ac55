"""Every op and type of the `tile` and `tilegpu` dialects, declared once (one module per op
family; `base.py` says how).  Generated from the declarations: the IRDL text the dialects are
loaded from (`irdl_text`), the operand segment names (`OPERAND_SEGMENTS`), the purity set of
`tile-cse` and dead-op erasure (`PURE_OPS`), the verifier dispatch (`check`) and the typed
builders (`tilework.dialects.builders`)."""
from __future__ import annotations

from . import core, debug, math, asm, memory, shape, tilegpu, shared, wgmma, tma, warp_spec  # noqa: F401  (declaration order)
from .base import (DIALECTS, EFFECTS, PURE, TARGETS, TRAITS, OpDef, all_ops, get,  # noqa: F401
                   named_operands)


def irdl_text() -> str:
    return "\n".join(d.irdl() for d in DIALECTS.values()) + "\n"


# op name -> operand names, for ops with optional operands (operandSegmentSizes)
OPERAND_SEGMENTS = {d.name: d.segment_names() for d in all_ops() if d.segment_names()}

# ops without side effects (IRDL cannot say so, so MLIR's own cse/DCE skip them)
PURE_OPS = tuple(d.name for d in all_ops() if PURE in d.traits)


def check(op) -> str | None:
    """The declared checks of `op` (None for an op declared elsewhere, or a valid one)."""
    d = get(op.name)
    return d.check(op) if d is not None else None
