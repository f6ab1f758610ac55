"""tile-speculate-loads: a tile load at the head of an `scf.if` branch moves before the `if` when
the same pointers, under the same mask, are stored to right after it (then they are valid to
read whichever way the `if` goes).

LayerNorm backward's critical section (the tutorial's) reads the count, branches on it, and
only then reads the partial sums it adds to: two memory round trips one after the other, on
the path every row of a group passes one at a time.  Loaded before the `if`, the partial sums
are in flight with the count.  What may move: a non-volatile tile load whose operands are
defined outside the `if`, preceded in its branch only by side-effect-free ops and plain loads
(nothing it could read from is written before it on that path), when a later op of the `if`'s block, reached with
only side-effect-free ops or stores in between, stores through the same pointer value under
the same mask value (or none).  On the other path the load's value is never used; the
addresses are the store's, so reading them cannot fault.

The backends run it only with `CompileOptions.speculate_loads` (`TILEWORK_SPECULATE_LOADS=1`),
off by default: the loaded values are live while the branch waits, and the N=8192 dx kernel (8
warps) goes from 128 registers (two programs an SM) to 144 (one); untimed so far.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import opdefs
from tilework.dialects import tile as T

from .module_info import kernels
from .pass_base import Pass, register


def _pure(op) -> bool:
    return not op.regions and (op.name in opdefs.PURE_OPS or
                               op.name.startswith(("arith.", "math.")))


def _inside(v, op) -> bool:
    """Whether value `v` is defined inside `op`'s regions."""
    owner = v.owner.owner if isinstance(v.owner, ir.Block) else v.owner
    return T.ancestor_in(owner, op.block) == op


def _stored_after(if_op, ptr, mask):
    """Whether a store through `ptr` under `mask` follows `if_op` in its block, with only
    side-effect-free ops and stores before it."""
    ops = [o.operation for o in if_op.block.operations]
    for op in ops[ops.index(if_op) + 1:]:
        if op.name == "tile.store":
            smask = op.operands[2] if len(op.operands) > 2 else None
            if op.operands[0] == ptr and (smask is None or smask == mask):
                return True
            continue
        if not _pure(op):
            return False
    return False


def _speculate(if_op) -> None:
    for region in if_op.regions:
        for block in region.blocks:
            for op in [o.operation for o in block.operations]:
                plain = op.name == "tile.load" and "volatile" not in op.attributes
                if plain and T.is_tensor(op.results[0].type) \
                        and not any(_inside(v, if_op) for v in op.operands):
                    mask = op.operands[1] if len(op.operands) > 1 else None
                    if _stored_after(if_op, op.operands[0], mask):
                        op.move_before(if_op)
                        continue
                if not (plain or _pure(op)):  # (a load that stays writes nothing)
                    break


def _walk(block) -> None:
    for op in [o.operation for o in block.operations]:
        for region in op.regions:
            for inner in region.blocks:
                _walk(inner)
        if op.name == "scf.if":
            _speculate(op)


def _run(module_op, pctx):
    for f in kernels(module_op):
        _walk(f.regions[0].blocks[0])


register(Pass("tile-speculate-loads",
              "Load before an scf.if what one branch loads first and the code after the if "
              "stores to under the same mask (one memory round trip less on that path)",
              run=_run))
