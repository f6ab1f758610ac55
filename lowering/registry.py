"""The lowering registry: one rule per op (and per target where it differs).

    @lower("tile.load")                    # every target
    @lower("tile.load", target="nvidia")   # overrides it on NVIDIA
    def _load(ctx: LoweringContext, op: ir.Operation, args: list) -> list: ...

Every rule has that one signature: `args` are the lowered operands (an `ir.Value` for a
scalar, a `Regs` for a tile: the values this thread holds) and it returns the lowered
results in the same form.  A missing rule raises `LoweringError` naming the op and target.
"""
from __future__ import annotations

RULES: dict[tuple[str, str | None], object] = {}


class LoweringError(Exception):
    def __init__(self, message, location=None):
        self.location = location
        self.message = message
        super().__init__(f"{location}: {message}" if location is not None else message)


def lower(*op_names: str, target: str | None = None):
    def deco(fn):
        for name in op_names:
            RULES[(name, target)] = fn
        return fn
    return deco


def lookup(op_name: str, target: str):
    rule = RULES.get((op_name, target)) or RULES.get((op_name, None))
    if rule is None:
        raise LoweringError(f"no lowering rule for '{op_name}' on target '{target}'")
    return rule
