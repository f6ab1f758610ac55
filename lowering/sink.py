"""tilegpu-sink: side-effect-free tile ops computed before a loop but used only after it move
to just before their first use.

A tile op is one value per element a thread holds: the row offsets of a 128x128 epilogue
store, written before the k-loop (`rm = ... + tl.arange(0, 128)` also feeds the A pointers),
are 64 registers a thread live across the whole loop in the store's layout.  LLVM does not
sink code past a loop, so the tile IR does it: an op whose every use (or the op holding it)
comes after a loop in the same block is moved to just before the earliest such op.  Moving a
pure op later within its block keeps its operands dominating it and it dominating its uses,
so the program computes the same values.  Ops are visited last to first, so a chain follows
its users down.  Only tile-valued ops move (a scalar is one register either way).
"""
from __future__ import annotations

from tilework.dialects import opdefs
from tilework.dialects import tile as T

from .module_info import kernels
from .pass_base import Pass, register

_LOOPS = ("scf.for", "scf.while")


def _sinkable(op) -> bool:
    if op.regions or not op.results or not all(T.is_tensor(r.type) for r in op.results):
        return False
    return op.name in opdefs.PURE_OPS or op.name.startswith(("arith.", "math."))


def _sink_block(block) -> None:
    ops = [o.operation for o in block.operations]
    for op in ops:
        for region in op.regions:
            for inner in region.blocks:
                _sink_block(inner)
    for op in reversed(ops):
        if not _sinkable(op):
            continue
        users = [T.ancestor_in(u.owner, block) for r in op.results for u in r.uses]
        if not users or any(u is None for u in users):
            continue
        first = users[0]
        for u in users[1:]:
            if u.is_before_in_block(first):
                first = u
        cur = [o.operation for o in block.operations]
        between = cur[cur.index(op) + 1:cur.index(first)]
        if any(o.name in _LOOPS for o in between):
            op.move_before(first)


def _sink(module_op, pctx):
    for f in kernels(module_op):
        _sink_block(f.regions[0].blocks[0])


register(Pass("tilegpu-sink", "Move side-effect-free tile ops used only after a loop to just "
                              "before their first use (shorter live ranges across the loop)",
              run=_sink))
