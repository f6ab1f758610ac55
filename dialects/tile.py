"""The `tile` and `tilegpu` dialects, loaded through IRDL from their declarations
(`opdefs/`, one per op).

`tile` is the target-independent form the frontend emits: tiles are builtin
ranked tensors, pointers are `!tile.ptr<elem>`, and elementwise arithmetic
reuses upstream `arith`/`math` on tensors.

`tilegpu` adds what the GPU form needs: the `#tilegpu.blocked<...>` layout
encoding carried on tensor types, `tilegpu.convert_layout`, and shared memory
(`!tilegpu.memdesc<...>` buffers and the ops on them, `opdefs/shared.py`).

IRDL dynamic dialects only have the generic syntax, so ops print as
`"tile.load"(%p) : (...) -> ...`.  IRDL checks operand/result kinds; relations
it cannot express (equal shapes, pointee matching the loaded type) are checked
by `tilework.dialects.verify`.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import irdl

from . import opdefs
from .ir_types import (MemDesc, ancestor_in, as_tensor, element_type, is_memdesc,  # noqa: F401
                       is_ptr, is_tensor, isa, memdesc_of, memdesc_type, pointee, ptr_type,
                       shape_of, walk_ops)

# Generated from the declarations in `opdefs/` (one per op).
_TILE_IRDL = opdefs.irdl_text()

# Ops of the tile dialect, with their operand segment names (for optional operands).
OPERAND_SEGMENTS = opdefs.OPERAND_SEGMENTS

_LOADED_ATTR = "_tilework_dialects_loaded"


_SEARCH_PREFIX_ADDED = False


def _add_search_prefix():
    """MLIR's Python bindings import `<prefix>.<namespace>` for every dialect namespace they
    meet, and retry on every failed lookup (about 20 us per type parsed).  Pointing them at
    this package, which has a module per namespace (`tile`, `tilegpu`), makes it one lookup."""
    global _SEARCH_PREFIX_ADDED
    if not _SEARCH_PREFIX_ADDED:
        from mlir._mlir_libs import _mlir
        _mlir.globals.append_dialect_search_prefix(__name__.rsplit(".", 1)[0])
        _SEARCH_PREFIX_ADDED = True


def load(context: ir.Context | None = None) -> ir.Context:
    """Registers the tile and tilegpu dialects in `context` (once per context)."""
    _add_search_prefix()
    ctx = context or ir.Context.current
    if getattr(ctx, _LOADED_ATTR, False):
        return ctx
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(_TILE_IRDL)
        irdl.load_dialects(module)
    # keep the IRDL module alive for the context's lifetime
    setattr(ctx, _LOADED_ATTR, True)
    setattr(ctx, "_tilework_irdl_module", module)
    return ctx


def new_context() -> ir.Context:
    """A fresh MLIR context with our dialects and the upstream ones loaded."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = False
    load(ctx)
    return ctx
