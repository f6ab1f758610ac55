"""What the passes read of a module: its kernels, num_warps and warp size, its memory ops.
A leaf (MLIR and the tile dialect only), so that passes and rules can share it."""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T


def module_config(module_op: ir.Operation, pctx) -> tuple[int, int]:
    """num_warps and warp size: from the module's attributes if set, else the pass context."""
    attrs = module_op.attributes
    nw = ir.IntegerAttr(attrs["tilegpu.num_warps"]).value if "tilegpu.num_warps" in attrs \
        else pctx.num_warps
    ws = ir.IntegerAttr(attrs["tilegpu.warp_size"]).value if "tilegpu.warp_size" in attrs \
        else pctx.warp_size
    return nw, ws


def kernels(module_op):
    """The kernels of a module (combine functions of reductions are private helpers)."""
    return [op.operation for op in module_op.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and "tile.kernel" in op.operation.attributes]


def memory_ops(f):
    """The loads and stores of function `f`."""
    return [op for op in T.walk_ops(f) if op.name in ("tile.load", "tile.store")]
