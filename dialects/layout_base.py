"""The `Layout` interface of the tilegpu encodings and the builder of their linear maps.

Every distributed encoding (blocked, slice, MMA/WGMMA/MFMA/WMMA accumulators, dot operands)
describes one CTA tile by unit bases: which coordinate each register bit, lane bit and warp bit
moves to (a zero basis: copies).  `build_linear` repeats that tile over the tensor with more
register bits and wraps coordinates beyond the tensor (copies), giving a `LinearLayout`.

Register order is tilework's `Regs` order, the same for every encoding: row-major over the
per-dimension counts of a thread's elements (the last dimension's register bits lowest, each
dimension's in increasing coordinate).  An instruction's own fragment order (e.g. mma's c0..c3)
is a register permutation of it.  Shared-memory encodings map an `offset` input instead.
"""
from __future__ import annotations

import functools

from .linear_layout import IN_DIMS, LinearLayout, out_names


def arr_text(xs) -> str:
    return "array<i32: " + ", ".join(str(int(x)) for x in xs) + ">"


def ilog2(n: int) -> int:
    return max(0, int(n).bit_length() - 1)


def check_pow2(name, xs):
    if any(int(x) <= 0 or int(x) & (int(x) - 1) for x in xs):
        raise ValueError(f"layout {name} {list(xs)} must be powers of two")


def build_linear(shape, regs, lanes, warps) -> LinearLayout:
    """`regs`, `lanes`, `warps`: [(dim, value)] unit bases of one CTA tile (value 0: a copy).
    The tile repeats over `shape` (more register bits); coordinates wrap (copies)."""
    shape = tuple(int(s) for s in shape)
    rank = len(shape)
    check_pow2("tile shape", shape)
    tile = [1] * rank
    for d, v in list(regs) + list(lanes) + list(warps):
        if v:
            tile[d] = max(tile[d], 2 * v)
    allregs = list(regs)
    for d in range(rank):
        t = tile[d]
        while t < shape[d]:
            allregs.append((d, t))
            t *= 2

    def vec(d, v):
        v &= shape[d] - 1
        return tuple(v if i == d else 0 for i in range(rank))
    reg_bases = sorted(((d, v & (shape[d] - 1)) for d, v in allregs if v & (shape[d] - 1)),
                       key=lambda dv: (-dv[0], dv[1]))
    return LinearLayout.make({
        "register": [vec(d, v) for d, v in reg_bases],
        "lane": [vec(d, v) for d, v in lanes],
        "warp": [vec(d, v) for d, v in warps],
    }, list(zip(out_names(rank), shape)))


def warp_bases(dims_order, warps_per_cta, tile):
    """Warp bits tiling dims in `dims_order` (first fastest), each warp covering `tile`."""
    out = []
    for d in dims_order:
        out += [(d, tile[d] << j) for j in range(ilog2(warps_per_cta[d]))]
    return out


class Layout:
    """Interface every encoding implements."""
    rank: int

    def to_attr(self):
        import mlir.ir as ir
        return ir.Attribute.parse(self.text())

    def text(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def to_linear(self, shape) -> LinearLayout:  # pragma: no cover - interface
        raise NotImplementedError

    def linear(self, shape) -> LinearLayout:
        """`to_linear`, cached per (layout, shape)."""
        return _linear_cached(self, tuple(int(s) for s in shape))

    @property
    def is_shared(self) -> bool:
        return False

    def elems_per_thread(self, shape) -> tuple:
        """Per-dimension count of the elements one thread holds."""
        counts = [1] * len(shape)
        for v in self.linear(shape).basis("register"):
            for d, c in enumerate(v):
                if c:
                    counts[d] *= 2
        return tuple(counts)

    def tile_shape(self) -> tuple:  # pragma: no cover - interface
        """One CTA tile of the layout (no repetition, no copies)."""
        raise NotImplementedError

    def fastest(self):
        """(the dimension along which a thread's consecutive registers hold consecutive
        elements, how many) or (None, 1)."""
        return contiguity(self.linear(self.tile_shape()))

    def num_warps(self) -> int:
        return 1 << self.linear(self.tile_shape()).in_bits("warp")

    def warp_size(self) -> int:
        return 1 << self.linear(self.tile_shape()).in_bits("lane")

    def verify(self, shape, warp_size=None, num_warps=None):
        if len(shape) != self.rank:
            raise ValueError(f"layout of rank {self.rank} on a tile of rank {len(shape)}")
        check_pow2("tile shape", shape)
        if warp_size is not None and self.warp_size() != warp_size:
            raise ValueError(f"layout {self.text()} has {self.warp_size()} lanes, the target's "
                             f"warps have {warp_size}")
        if num_warps is not None and self.num_warps() != num_warps:
            raise ValueError(f"layout {self.text()} has {self.num_warps()} warps, "
                             f"num_warps={num_warps}")

    def __str__(self):
        return self.text()


@functools.lru_cache(maxsize=4096)
def _linear_cached(layout, shape):
    return layout.to_linear(shape)


def contiguity(lin: LinearLayout):
    """(dim, run) of the longest run of a thread's per-dimension register bits along one dim
    with values 1, 2, 4, ... (ties: the later dim), or (None, 1)."""
    rank = len(lin.outs)
    best = (None, 1)
    for d in reversed(range(rank)):
        vals = [v[d] for v in lin.basis("register") if v[d]]
        n = 0
        while n < len(vals) and vals[n] == 1 << n:
            n += 1
        if n and (1 << n) > best[1]:
            best = (d, 1 << n)
    return best


def dim_bits(lin: LinearLayout, in_dim: str, dim: int) -> list:
    """The bits of `in_dim` whose basis moves along `dim` (only), in increasing order."""
    out = []
    for i, v in enumerate(lin.basis(in_dim)):
        if v[dim]:
            if any(c for j, c in enumerate(v) if j != dim):
                raise ValueError(f"{in_dim} bit {i} of {lin} moves along several dims")
            out.append(i)
    return out


def thread_geometry(lin: LinearLayout, dim: int):
    """Along `dim`: (lanes, lane stride, warps, warp stride) of the distinct lanes and warps, as
    the runs of consecutive lane/warp bits that step the dim by consecutive multiples.
    Raises ValueError when the bits along `dim` are not one such run."""
    out = []
    for in_dim in ("lane", "warp"):
        bits = dim_bits(lin, in_dim, dim)
        if bits and bits != list(range(bits[0], bits[0] + len(bits))):
            raise ValueError(f"{in_dim}s along dim {dim} of {lin} are not consecutive bits")
        vals = [lin.basis(in_dim)[b][dim] for b in bits]
        if any(vals[i + 1] != 2 * vals[i] for i in range(len(vals) - 1)):
            raise ValueError(f"{in_dim}s along dim {dim} of {lin} are not in order")
        out += [1 << len(bits), 1 << bits[0] if bits else 1]
    return tuple(out)


class DotOperand(Layout):
    """Operand `op_idx` (0: A, M x K; 1: B, K x N) of a dot whose result has layout `parent`
    (an MMA, WGMMA, MFMA or WMMA accumulator); `k_width` consecutive K elements per register
    group of a thread.  The parent gives the bases (`operand_bases`)."""

    def __init__(self, op_idx: int, parent: Layout, k_width: int):
        self.op_idx, self.parent, self.k_width = int(op_idx), parent, int(k_width)

    def _key(self):
        return (self.op_idx, self.parent, self.k_width)

    def __eq__(self, other):
        return type(other) is DotOperand and self._key() == other._key()

    def __hash__(self):
        return hash(("dot", self._key()))

    def __repr__(self):
        return f"DotOperand({self.op_idx}, {self.parent!r}, {self.k_width})"

    @property
    def rank(self) -> int:
        return 2

    def text(self) -> str:
        return (f"#tilegpu.dot_operand<{self.op_idx} : i32, {self.parent.text()}, "
                f"{self.k_width} : i32>")

    def check(self):
        if self.op_idx not in (0, 1):
            raise ValueError(f"dot_operand op_idx {self.op_idx} must be 0 or 1")
        if not hasattr(self.parent, "operand_bases"):
            raise ValueError(f"dot_operand parent {self.parent.text()} is not an MMA layout")
        check_pow2("k_width", [self.k_width])

    def to_linear(self, shape) -> LinearLayout:
        self.check()
        regs, lanes, warps = self.parent.operand_bases(self.op_idx, self.k_width)
        return build_linear(shape, regs, lanes, warps)

    def tile_shape(self):
        self.check()
        regs, lanes, warps = self.parent.operand_bases(self.op_idx, self.k_width)
        tile = [1, 1]
        for d, v in regs + lanes + warps:
            if v:
                tile[d] = max(tile[d], 2 * v)
        return tuple(tile)

    def verify(self, shape, warp_size=None, num_warps=None):
        self.check()
        super().verify(shape, warp_size, num_warps)


__all__ = ["IN_DIMS", "Layout", "DotOperand", "build_linear", "warp_bases", "contiguity",
           "dim_bits", "thread_geometry", "arr_text", "ilog2", "check_pow2", "chunk", "axis_geometry"]


def chunk(lin: LinearLayout, dim: int) -> int:
    """How many of a thread's consecutive elements along `dim` (per-dimension register order)
    hold consecutive coordinates, the first a multiple of that count."""
    vals = [v[dim] for v in lin.basis("register") if v[dim]]
    n = 0
    while n < len(vals) and vals[n] == 1 << n:
        n += 1
    return 1 << n


def axis_geometry(lin: LinearLayout, dim: int):
    """(chunk, lanes, lane stride, warps, warp stride) along `dim` for layouts ordered like a
    blocked one along it: a thread's chunk, then the distinct lanes, then the distinct warps,
    then repetitions (more registers).  Raises ValueError for other orders."""
    c = chunk(lin, dim)
    lanes, lstride, warps, wstride = thread_geometry(lin, dim)
    expect = {"lane": c, "warp": c * lanes}
    for in_dim, count in (("lane", lanes), ("warp", warps)):
        vals = [lin.basis(in_dim)[b][dim] for b in dim_bits(lin, in_dim, dim)]
        if vals and vals[0] != expect[in_dim]:
            raise ValueError(f"{in_dim}s along dim {dim} of {lin} do not follow the "
                             f"thread's chunk")
    regs = [v[dim] for v in lin.basis("register") if v[dim]]
    if any(v < c * lanes * warps for v in regs[ilog2(c):]):
        raise ValueError(f"registers along dim {dim} of {lin} interleave with lanes or warps")
    return c, lanes, lstride, warps, wstride
