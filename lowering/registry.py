"""The lowering registry: rules per op, for every target or for a backend and optionally a range
of its architectures.

    @lower("tile.load")                                   # every target
    @lower("tile.load", target="nvidia")                  # NVIDIA: overrides the generic rule
    @lower("tile.load", target="nvidia", arch=(90, None)) # sm_90 and newer: overrides both
    @lower("tile.load", target="amd", arch=(0x900, 0x9ff))  # CDNA (gfx9xx)
    def _load(ctx: LoweringContext, op: ir.Operation, args: list) -> list: ...

`arch=(min, max)` is inclusive, either end may be None; it compares `target.arch_capability`:
the compute capability on NVIDIA (sm_90a -> 90), the gfx number read as hex on AMD (gfx942 ->
0x942).  A lookup picks the most specific matching rule: an arch range over a backend-only rule
over a generic one, the narrower of two matching ranges.  Registering the same (op, target,
range) twice is an error naming both functions; a missing rule raises `LoweringError` naming the
op and target.

Every rule has one signature: `args` are the lowered operands (an `ir.Value` for a scalar, a
`Regs` for a tile: the values this thread holds) and it returns the lowered results in the
same form.
"""
from __future__ import annotations

from dataclasses import dataclass

from .target import arch_capability

_INF = float("inf")


class LoweringError(Exception):
    def __init__(self, message, location=None):
        self.location = location
        self.message = message
        super().__init__(f"{location}: {message}" if location is not None else message)


@dataclass(frozen=True)
class Rule:
    op: str
    fn: object
    target: str | None = None      # backend name; None: every target
    arch: tuple | None = None      # (min, max) capability, inclusive; None: every arch

    def matches(self, backend: str, capability: int | None) -> bool:
        if self.target is not None and self.target != backend:
            return False
        if self.arch is None:
            return True
        lo, hi = self.arch
        return capability is not None and (lo is None or lo <= capability) and \
            (hi is None or capability <= hi)

    def specificity(self) -> tuple:
        """Larger is more specific: arch-ranged > backend-only > generic; narrower ranges win."""
        if self.arch is None:
            return (int(self.target is not None), 0)
        lo, hi = self.arch
        width = (_INF if hi is None else hi) - (-_INF if lo is None else lo)
        return (2, -width)

    def describe(self) -> str:
        where = self.target or "every target"
        if self.arch is not None:
            where += f", arch {_range(self.arch)}"
        return f"{_name(self.fn)} ({where})"


RULES: dict[str, list[Rule]] = {}


def _name(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _range(arch) -> str:
    lo, hi = arch
    f = lambda v: "*" if v is None else (hex(v) if v > 255 else str(v))  # noqa: E731
    return f"[{f(lo)}, {f(hi)}]"


def _check_arch(op_names, target, arch):
    if arch is None:
        return None
    if target is None:
        raise ValueError(f"@lower({', '.join(map(repr, op_names))}): an arch range needs a "
                         f"target (arch={arch!r})")
    if not (isinstance(arch, tuple) and len(arch) == 2 and
            all(v is None or isinstance(v, int) for v in arch) and arch != (None, None)):
        raise ValueError(f"@lower({', '.join(map(repr, op_names))}): arch must be (min, max) "
                         f"capabilities (ints or None), got {arch!r}")
    if None not in arch and arch[0] > arch[1]:
        raise ValueError(f"@lower({', '.join(map(repr, op_names))}): empty arch range {arch!r}")
    return arch


def lower(*op_names: str, target: str | None = None, arch: tuple | None = None):
    arch = _check_arch(op_names, target, arch)

    def deco(fn):
        for name in op_names:
            add_rule(Rule(name, fn, target, arch))
        return fn
    return deco


def add_rule(rule: Rule) -> Rule:
    rules = RULES.setdefault(rule.op, [])
    for r in rules:
        if (r.target, r.arch) == (rule.target, rule.arch):
            raise ValueError(f"two lowering rules for '{rule.op}' on the same target: "
                             f"{r.describe()} and {rule.describe()}")
    rules.append(rule)
    return rule


def remove_rule(rule: Rule):
    """Unregisters `rule` (tests that register their own)."""
    RULES[rule.op].remove(rule)


def lookup(op_name: str, target, arch: str | None = None):
    """The rule for `op_name` on `target`: a `Target`, or a backend name with an optional
    architecture name `arch`."""
    if isinstance(target, str):
        backend, arch_name = target, arch
    else:
        backend, arch_name = target.backend, target.arch
    capability = arch_capability(arch_name) if arch_name else None
    found = [r for r in RULES.get(op_name, ()) if r.matches(backend, capability)]
    if not found:
        raise LoweringError(f"no lowering rule for '{op_name}' on target '{backend}'")
    found.sort(key=Rule.specificity, reverse=True)
    if len(found) > 1 and found[0].specificity() == found[1].specificity():
        raise LoweringError(f"ambiguous lowering rules for '{op_name}' on {arch_name}: "
                            f"{found[0].describe()} and {found[1].describe()}")
    return found[0].fn
