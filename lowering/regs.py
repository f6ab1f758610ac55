"""`Regs`: how a tile looks in per-thread code (the scalars one thread holds).  A leaf module:
rules and `to_llvm` both import it, so neither imports the other for it."""
from __future__ import annotations

import itertools
import math

from tilework.dialects.layout import Layout


class Regs:
    """The elements of a tile held by one thread."""

    def __init__(self, layout: Layout, shape, values: list):
        self.layout = layout
        self.shape = tuple(shape)
        self.per_thread = layout.elems_per_thread(self.shape)
        self.values = list(values)
        assert len(self.values) == math.prod(self.per_thread), (len(self.values), self.per_thread)

    def coords(self):
        return itertools.product(*[range(n) for n in self.per_thread])

    def flat(self, coord) -> int:
        i = 0
        for c, n in zip(coord, self.per_thread):
            i = i * n + c
        return i

    def __getitem__(self, coord):
        return self.values[self.flat(coord)]

    def like(self, values) -> "Regs":
        return Regs(self.layout, self.shape, values)
