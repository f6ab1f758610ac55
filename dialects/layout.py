"""Layout encodings of the tilegpu stage.

A layout maps the elements of a tile onto the threads of one program (a CTA).  It is carried as
the encoding attribute of a builtin tensor type, so every value's layout is visible in the IR
and checked by FileCheck.  Every encoding gives its map as a `LinearLayout` (`to_linear(shape)`,
see `linear_layout.py`): lowering asks that map for index arithmetic, contiguity, the lanes and
warps along a dimension, copies and conversions, so rules stay encoding-agnostic.

`Blocked`: each thread owns `size_per_thread` contiguous elements per dimension, threads of a
warp then warps of the program tile the dimensions in `order` (fastest-varying first); larger
tiles repeat the pattern (more registers), smaller ones wrap (copies).  `Slice`: a tile reduced
along a dim of its parent.  NVIDIA encodings live in `layout_nvidia.py`, AMD ones in
`layout_amd.py`, the interface and `DotOperand` in `layout_base.py`.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from .layout_base import (DotOperand, Layout, arr_text, axis_geometry, build_linear,  # noqa: F401
                          chunk, contiguity,
                          dim_bits, ilog2, thread_geometry, warp_bases)
from .layout_amd import AmdMfma, AmdWmma
from .layout_nvidia import NvidiaMma, NvmmaShared, SwizzledShared
from .linear_layout import out_names


@dataclass(frozen=True)
class Blocked(Layout):
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]  # fastest-varying dimension first

    @property
    def rank(self) -> int:
        return len(self.order)

    def text(self) -> str:
        return (f"#tilegpu.blocked<{arr_text(self.size_per_thread)}, "
                f"{arr_text(self.threads_per_warp)}, {arr_text(self.warps_per_cta)}, "
                f"{arr_text(self.order)}>")

    @staticmethod
    def from_attr(attr) -> "Blocked":
        lay = parse_layout(str(attr))
        if not isinstance(lay, Blocked):
            raise ValueError(f"not a #tilegpu.blocked attribute: {attr}")
        return lay

    def to_linear(self, shape):
        """Register bits: the thread's `size_per_thread` elements; lane (warp) bits: the
        threads (warps) along `order`, each step one thread's (warp's) extent."""
        rank = self.rank
        regs = [(d, 1 << j) for d in range(rank) for j in range(ilog2(self.size_per_thread[d]))]
        lane_tile = list(self.size_per_thread)
        warp_tile = [s * t for s, t in zip(self.size_per_thread, self.threads_per_warp)]
        return build_linear(shape, regs, warp_bases(self.order, self.threads_per_warp, lane_tile),
                            warp_bases(self.order, self.warps_per_cta, warp_tile))

    def tile_shape(self):
        return self.cta_tile()

    def fastest(self):
        f = self.order[0]
        return f, self.size_per_thread[f]

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

    def text(self) -> str:
        return f"#tilegpu.slice<{self.dim} : i32, {self.parent.text()}>"

    def to_linear(self, shape):
        """The parent's map for a tile of size 1 along `dim`, without that output dim."""
        lin = self.parent.linear(self.parent_shape(shape))
        keep = [n for i, n in enumerate(lin.out_dims) if i != self.dim]
        return lin.sublayout(lin.in_dims, keep).with_outs(list(zip(out_names(self.rank),
                                                                   shape)))

    def tile_shape(self):
        t = list(self.parent.tile_shape())
        del t[self.dim]
        return tuple(t)

    def fastest(self):
        f, n = self.parent.fastest()
        if f is None or f == self.dim:
            return None, 1
        return (f if f < self.dim else f - 1), n

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
    are per chunk), or (None, 1) when there is none (e.g. that dimension was sliced away)."""
    return layout.fastest()


# ---- parsing: `#tilegpu.<name><params>` in MLIR's generic attribute syntax ------------------

def split_top(text: str, opening: str = "<[(", closing: str = ">])") -> list:
    """Splits at the commas outside the brackets `opening`/`closing` (by default <...>, [...]
    and (...)); empty trailing text is dropped."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


_ARRAY_RE = re.compile(r"array<i32(?::\s*([-0-9,\s]*))?>$")
_INT_RE = re.compile(r"(-?\d+)\s*(?::\s*i\d+)?$")


def _param(text: str):
    text = text.strip()
    if text.startswith("#tilegpu."):
        return parse_layout(text)
    if text in ("true", "false"):
        return text == "true"
    m = _ARRAY_RE.match(text)
    if m:
        return tuple(int(x) for x in (m.group(1) or "").replace(" ", "").split(",") if x)
    m = _INT_RE.match(text)
    if m:
        return int(m.group(1))
    raise ValueError(f"unknown layout parameter: {text}")


def _make(name, ps):
    def want(kinds):
        if len(ps) != len(kinds) or not all(
                (k is tuple and isinstance(p, tuple)) or (k is bool and isinstance(p, bool))
                or (k is int and isinstance(p, int) and not isinstance(p, bool))
                or (k is Layout and isinstance(p, Layout)) for p, k in zip(ps, kinds)):
            raise ValueError(f"malformed #tilegpu.{name} attribute")
    if name == "blocked":
        want([tuple] * 4)
        if len({len(a) for a in ps}) != 1:
            raise ValueError("malformed #tilegpu.blocked attribute")
        return Blocked(*ps)
    if name == "slice":
        want([int, Layout])
        return Slice(*ps)
    if name == "mma":
        want([int, tuple, tuple])
        return NvidiaMma(*ps)
    if name == "dot_operand":
        want([int, Layout, int])
        return DotOperand(*ps)
    if name == "swizzled_shared":
        want([int, int, int, tuple])
        return SwizzledShared(*ps)
    if name == "nvmma_shared":
        want([int, bool, int])
        return NvmmaShared(*ps)
    if name == "mfma":
        want([tuple, tuple, bool])
        return AmdMfma(*ps)
    if name == "wmma":
        want([int, tuple])
        return AmdWmma(*ps)
    raise ValueError(f"unknown layout encoding: #tilegpu.{name}")


@functools.lru_cache(maxsize=1024)
def parse_layout(text: str) -> Layout:
    """The layout of an attribute's text (each distinct text parsed once)."""
    text = text.strip()
    m = re.match(r"#tilegpu\.(\w+)<(.*)>$", text, re.S)
    if not m:
        raise ValueError(f"unknown layout encoding: {text}")
    try:
        ps = [_param(p) for p in split_top(m.group(2))]
    except ValueError as e:
        if "unknown layout encoding" in str(e):
            raise
        raise ValueError(f"malformed #tilegpu.{m.group(1)} attribute: {text}") from None
    try:
        return _make(m.group(1), ps)
    except ValueError as e:
        raise ValueError(f"{e}: {text}") if "malformed" in str(e) else e


def layout_of(t) -> Layout | None:
    """The layout encoding of a tensor type, or None."""
    import mlir.ir as ir
    if not isinstance(t, ir.RankedTensorType):
        try:
            t = ir.RankedTensorType(t)
        except ValueError:
            return None
    enc = t.encoding
    if enc is None:
        return None
    return parse_layout(str(enc))


def with_layout(t, layout: Layout | None):
    """`t` (a tensor type) with its encoding replaced."""
    import mlir.ir as ir
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
