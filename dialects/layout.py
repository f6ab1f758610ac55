"""Layout encodings of the tilegpu stage.

A layout maps the elements of a tile onto the threads of one program (a CTA).
It is carried as the encoding attribute of a builtin tensor type, so every
value's layout is visible in the IR and checked by FileCheck.

`Blocked` is the first case: each thread owns `size_per_thread` contiguous
elements per dimension, threads of a warp then warps of the program tile the
dimensions in `order` (fastest-varying first).  When the tile is larger than
one such CTA tile the pattern repeats and each thread owns several chunks;
when it is smaller, threads hold copies (replication).  Later encodings (MMA
accumulators, dot operands, shared memory) implement the same `Layout`
interface: `elems_per_thread` and `logical_index`, so lowering rules that only
move elements around stay layout-agnostic.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import mlir.ir as ir


class Layout:
    """Interface every encoding implements."""

    def to_attr(self) -> ir.Attribute:  # pragma: no cover - interface
        raise NotImplementedError

    def elems_per_thread(self, shape) -> tuple[int, ...]:  # pragma: no cover
        raise NotImplementedError


def _arr(xs) -> str:
    return "array<i32: " + ", ".join(str(int(x)) for x in xs) + ">"


_BLOCKED_RE = re.compile(r"#tilegpu\.blocked<(.*)>$")
_ARRAY_RE = re.compile(r"array<i32(?::\s*([-0-9,\s]*))?>")


@dataclass(frozen=True)
class Blocked(Layout):
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]  # fastest-varying dimension first

    @property
    def rank(self) -> int:
        return len(self.order)

    def to_attr(self) -> ir.Attribute:
        return ir.Attribute.parse(
            f"#tilegpu.blocked<{_arr(self.size_per_thread)}, {_arr(self.threads_per_warp)}, "
            f"{_arr(self.warps_per_cta)}, {_arr(self.order)}>")

    @staticmethod
    def from_attr(attr) -> "Blocked":
        m = _BLOCKED_RE.match(str(attr).strip())
        if not m:
            raise ValueError(f"not a #tilegpu.blocked attribute: {attr}")
        arrays = [tuple(int(x) for x in (g or "").replace(" ", "").split(",") if x)
                  for g in _ARRAY_RE.findall(m.group(1))]
        if len(arrays) != 4 or len({len(a) for a in arrays}) != 1:
            raise ValueError(f"malformed #tilegpu.blocked attribute: {attr}")
        return Blocked(*arrays)

    def cta_tile(self) -> tuple[int, ...]:
        """Elements covered by one pass of all threads, per dimension."""
        return tuple(s * t * w for s, t, w in
                     zip(self.size_per_thread, self.threads_per_warp, self.warps_per_cta))

    def reps(self, shape) -> tuple[int, ...]:
        return tuple(max(1, math.ceil(n / c)) for n, c in zip(shape, self.cta_tile()))

    def elems_per_thread(self, shape) -> tuple[int, ...]:
        """Per-dimension count of the elements one thread holds."""
        return tuple(r * min(s, n) for r, s, n in zip(self.reps(shape), self.size_per_thread, shape))

    def strides(self, dim: int) -> tuple[int, int]:
        """(lane stride, warp stride) of `dim`: lanes (warps) `stride` apart are neighbours
        along `dim`, since dimensions earlier in `order` vary fastest."""
        lane = warp = 1
        for d in self.order:
            if d == dim:
                break
            lane *= self.threads_per_warp[d]
            warp *= self.warps_per_cta[d]
        return lane, warp

    def num_threads(self) -> int:
        return math.prod(self.threads_per_warp) * math.prod(self.warps_per_cta)

    def verify(self, shape, warp_size: int | None = None, num_warps: int | None = None):
        """Raises ValueError describing what is inconsistent."""
        n = self.rank
        if len(shape) != n:
            raise ValueError(f"layout of rank {n} on a tile of rank {len(shape)}")
        if sorted(self.order) != list(range(n)):
            raise ValueError(f"layout order {list(self.order)} is not a permutation of 0..{n - 1}")
        for name, xs in (("size_per_thread", self.size_per_thread),
                         ("threads_per_warp", self.threads_per_warp),
                         ("warps_per_cta", self.warps_per_cta)):
            if any(x <= 0 or x & (x - 1) for x in xs):
                raise ValueError(f"layout {name} {list(xs)} must be powers of two")
        if warp_size is not None and math.prod(self.threads_per_warp) != warp_size:
            raise ValueError(f"layout threads_per_warp {list(self.threads_per_warp)} does not "
                             f"multiply to the warp size {warp_size}")
        if num_warps is not None and math.prod(self.warps_per_cta) != num_warps:
            raise ValueError(f"layout warps_per_cta {list(self.warps_per_cta)} does not "
                             f"multiply to num_warps={num_warps}")


@dataclass(frozen=True)
class Slice(Layout):
    """The layout of a tile reduced along `dim` of a `parent`-layout tile: each thread keeps
    its parent elements of the other dimensions; threads that differed only along `dim` now
    hold copies.  Its per-thread values are exactly the parent's for a tile of size 1 along
    `dim`, so expand_dims of a Slice(parent, dim) tile back to `parent` moves nothing."""
    dim: int
    parent: Layout

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    def to_attr(self) -> ir.Attribute:
        return ir.Attribute.parse(f"#tilegpu.slice<{self.dim} : i32, {self.parent.to_attr()}>")

    def parent_shape(self, shape) -> tuple:
        s = list(shape)
        s.insert(self.dim, 1)
        return tuple(s)

    def parent_dim(self, d: int) -> int:
        return d if d < self.dim else d + 1

    def elems_per_thread(self, shape) -> tuple:
        e = list(self.parent.elems_per_thread(self.parent_shape(shape)))
        del e[self.dim]
        return tuple(e)

    def base(self):
        """(the Blocked layout at the root, the tile dims -> root dims map)."""
        lay, dims = self, list(range(self.rank))
        while isinstance(lay, Slice):
            dims = [lay.parent_dim(d) for d in dims]
            lay = lay.parent
        return lay, dims

    def verify(self, shape, warp_size=None, num_warps=None):
        if not 0 <= self.dim <= len(shape):
            raise ValueError(f"slice dim {self.dim} out of range for a tile of rank {len(shape)}")
        self.parent.verify(self.parent_shape(shape), warp_size, num_warps)


def base_layout(layout: Layout):
    """(root Blocked layout, map from the tile's dims to the root's dims)."""
    if isinstance(layout, Slice):
        return layout.base()
    return layout, list(range(layout.rank))


def fastest_dim(layout: Layout):
    """(the tile dimension along which each thread's elements are contiguous, how many there
    are per chunk), or (None, 1) when that dimension was sliced away."""
    base, dmap = base_layout(layout)
    f = base.order[0]
    if f not in dmap:
        return None, 1
    return dmap.index(f), base.size_per_thread[f]


def parse_layout(text: str) -> Layout:
    text = text.strip()
    if text.startswith("#tilegpu.blocked<"):
        return Blocked.from_attr(text)
    m = re.match(r"#tilegpu\.slice<\s*(-?\d+)\s*(?::\s*i\d+)?\s*,\s*(.*)>$", text, re.S)
    if m:
        return Slice(int(m.group(1)), parse_layout(m.group(2)))
    raise ValueError(f"unknown layout encoding: {text}")


def layout_of(t: ir.Type) -> Layout | None:
    """The layout encoding of a tensor type, or None."""
    if not isinstance(t, ir.RankedTensorType):
        try:
            t = ir.RankedTensorType(t)
        except ValueError:
            return None
    enc = t.encoding
    if enc is None:
        return None
    return parse_layout(str(enc))


def with_layout(t: ir.Type, layout: Layout | None) -> ir.Type:
    """`t` (a tensor type) with its encoding replaced."""
    t = t if isinstance(t, ir.RankedTensorType) else ir.RankedTensorType(t)
    return ir.RankedTensorType.get(list(t.shape), t.element_type,
                                   layout.to_attr() if layout is not None else None)


def default_blocked(shape, num_warps: int, warp_size: int, vec: int) -> Blocked:
    """A blocked layout for `shape` whose fastest dimension is the last, giving each thread
    up to `vec` contiguous elements there and spreading threads then warps over the rest."""
    rank = len(shape)
    order = tuple(reversed(range(rank)))
    numel = math.prod(shape)
    spt = [1] * rank
    fastest = order[0]
    # do not give a thread more elements than the tile has per thread
    per_thread = max(1, numel // (num_warps * warp_size))
    spt[fastest] = max(1, min(vec, per_thread, shape[fastest]))
    tpw = [1] * rank
    remaining = warp_size
    for d in order:
        room = max(1, shape[d] // spt[d])
        take = min(remaining, room) if d != order[-1] else remaining
        take = 1 << (take.bit_length() - 1)
        tpw[d] = take
        remaining //= take
    wpc = [1] * rank
    remaining = num_warps
    for d in order:
        room = max(1, shape[d] // (spt[d] * tpw[d]))
        take = min(remaining, room) if d != order[-1] else remaining
        take = 1 << (take.bit_length() - 1)
        wpc[d] = take
        remaining //= take
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), order)
