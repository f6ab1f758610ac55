"""Linear layouts: thread -> element maps as linear maps over GF(2).

A layout of a tile whose sizes are powers of two is a map from hardware positions (a register
index, a lane, a warp, a block) to element coordinates.  Every layout we use is linear over
GF(2): each input bit has a basis vector (the coordinates it moves to), and the element held at
an input is the XOR of the bases of its set bits (the idea of Triton's linear layouts, Zhou et
al. 2025).  A zero basis means the bit does not change the element: positions differing in it
hold copies.  Conversions, ownership of copies and index arithmetic are then linear algebra on
bit vectors, independent of the encoding that produced the map.

Pure Python (no MLIR): inputs are named dims with their bases, outputs are named dims
(`dim0..dimN-1` for tiles) with power-of-two sizes.  Coordinates are flattened to one integer
(output dims in order, dim0 in the low bits) for the elimination.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from .word_exchange import WordExchange, plan_word_exchange

IN_DIMS = ("register", "lane", "warp", "block")


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{n} is not a power of two")
    return n.bit_length() - 1


def out_names(rank: int) -> tuple:
    return tuple(f"dim{i}" for i in range(rank))


@dataclass(frozen=True)
class LinearLayout:
    """`bases`: ((in dim, ((coord per out dim), ... one per input bit)), ...);
    `outs`: ((out dim, size), ...).  Build with `LinearLayout.make`."""
    bases: tuple
    outs: tuple
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    # ---- construction -------------------------------------------------------------------
    @staticmethod
    def make(bases: dict, outs) -> "LinearLayout":
        """`bases`: {in dim: [basis, ...]} where a basis is a sequence of coordinates (one per
        out dim); `outs`: [(name, size)] or {name: size}."""
        outs = tuple((str(n), int(s)) for n, s in (outs.items() if isinstance(outs, dict)
                                                   else outs))
        for _, s in outs:
            _log2(s)
        bs = []
        for d, vs in bases.items():
            vs = tuple(tuple(int(c) for c in v) for v in vs)
            for v in vs:
                if len(v) != len(outs):
                    raise ValueError(f"basis {v} of '{d}' has {len(v)} coordinates, "
                                     f"expected {len(outs)}")
                for c, (n, s) in zip(v, outs):
                    if not 0 <= c < s:
                        raise ValueError(f"basis {v} of '{d}' is outside {n} < {s}")
            bs.append((str(d), vs))
        return LinearLayout(tuple(bs), outs)

    @staticmethod
    def identity_1d(size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        return LinearLayout.make({in_dim: [(1 << i,) for i in range(_log2(size))]},
                                 [(out_dim, size)])

    @staticmethod
    def zeros_1d(size: int, in_dim: str, out_dim: str, out_size: int = 1) -> "LinearLayout":
        """`size` positions of `in_dim` all holding coordinate 0 (broadcast)."""
        return LinearLayout.make({in_dim: [(0,)] * _log2(size)}, [(out_dim, out_size)])

    # ---- queries --------------------------------------------------------------------------
    @property
    def in_dims(self) -> tuple:
        return tuple(d for d, _ in self.bases)

    @property
    def out_dims(self) -> tuple:
        return tuple(n for n, _ in self.outs)

    def out_size(self, d) -> int:
        return dict(self.outs)[d]

    def in_bits(self, d) -> int:
        return len(dict(self.bases).get(d, ()))

    def in_size(self, d) -> int:
        return 1 << self.in_bits(d)

    def basis(self, d) -> tuple:
        return dict(self.bases).get(d, ())

    def total_out(self) -> int:
        return math.prod(s for _, s in self.outs)

    def apply(self, **inputs) -> tuple:
        """The coordinates held at the given input positions (missing inputs are 0)."""
        out = [0] * len(self.outs)
        for d, vs in self.bases:
            x = inputs.get(d, 0)
            for i, v in enumerate(vs):
                if x >> i & 1:
                    out = [a ^ b for a, b in zip(out, v)]
        return tuple(out)

    # flattened coordinates: out dims in order, the first in the low bits
    def _shifts(self):
        sh, acc = [], 0
        for _, s in self.outs:
            sh.append(acc)
            acc += _log2(s)
        return sh, acc

    def flatten(self, coord) -> int:
        sh, _ = self._shifts()
        return sum(c << s for c, s in zip(coord, sh))

    def unflatten(self, x: int) -> tuple:
        sh, _ = self._shifts()
        return tuple(x >> s & (size - 1) for s, (_, size) in zip(sh, self.outs))

    def columns(self, dims=None) -> list:
        """[(in dim, bit, flattened basis)] in input order (restricted to `dims`)."""
        return [(d, i, self.flatten(v)) for d, vs in self.bases
                if dims is None or d in dims for i, v in enumerate(vs)]

    # ---- algebra ----------------------------------------------------------------------------
    def compose(self, inner: "LinearLayout") -> "LinearLayout":
        """self ∘ inner: inner's out dims are self's in dims (inner's coordinate along an out
        dim is the input value of self's in dim of the same name)."""
        out = {}
        for d, vs in inner.bases:
            out[d] = [self.apply(**dict(zip(inner.out_dims, v))) for v in vs]
        for n, s in inner.outs:
            if s > self.in_size(n):
                raise ValueError(f"compose: '{n}' of size {s} exceeds {self.in_size(n)}")
        return LinearLayout.make(out, self.outs)

    def __mul__(self, other: "LinearLayout") -> "LinearLayout":
        """Product: in dims present in both get other's bits above self's; out dims present in
        both get other's coordinates scaled above self's size (other tiles the blocks of self)."""
        outs = dict(self.outs)
        scale = {}
        for n, s in other.outs:
            scale[n] = outs.get(n, 1)
            outs[n] = outs.get(n, 1) * s
        names = list(outs)

        def embed(v, src_names, sc):
            full = dict(zip(src_names, v))
            return tuple(full.get(n, 0) * sc.get(n, 1) for n in names)
        bases = {}
        for d, vs in self.bases:
            bases.setdefault(d, []).extend(embed(v, self.out_dims, {}) for v in vs)
        for d, vs in other.bases:
            bases.setdefault(d, []).extend(embed(v, other.out_dims, scale) for v in vs)
        return LinearLayout.make(bases, list(outs.items()))

    def concat_ins(self, other: "LinearLayout") -> "LinearLayout":
        """Direct sum over inputs: other's bits appended after self's, same out dims."""
        if self.outs != other.outs:
            raise ValueError("concat_ins needs equal out dims")
        bases = {d: list(vs) for d, vs in self.bases}
        for d, vs in other.bases:
            bases.setdefault(d, []).extend(vs)
        return LinearLayout.make(bases, self.outs)

    def sublayout(self, in_dims, out_dims=None) -> "LinearLayout":
        """Restriction to `in_dims` (others fixed at 0), projected onto `out_dims`."""
        out_dims = list(self.out_dims if out_dims is None else out_dims)
        idx = [self.out_dims.index(n) for n in out_dims]
        return LinearLayout.make({d: [tuple(v[i] for i in idx) for v in vs]
                                  for d, vs in self.bases if d in in_dims},
                                 [(n, self.out_size(n)) for n in out_dims])

    def transpose_outs(self, order) -> "LinearLayout":
        """Out dims reordered to `order` (names)."""
        return self.sublayout(self.in_dims, order)

    def with_outs(self, outs) -> "LinearLayout":
        """Same bases, out dims renamed/resized (each at least as large as needed)."""
        return LinearLayout.make({d: list(vs) for d, vs in self.bases}, outs)

    def reshape_outs(self, outs) -> "LinearLayout":
        """Out dims reshaped row-major (the last dim fastest) to `outs` [(name, size)]."""
        outs = [(str(n), int(s)) for n, s in outs]
        if math.prod(s for _, s in outs) != self.total_out():
            raise ValueError("reshape_outs must keep the number of elements")

        def lin(v):
            x = 0
            for c, (_, s) in zip(v, self.outs):
                x = x * s + c
            return x

        def split(x):
            cs = []
            for _, s in reversed(outs):
                cs.append(x % s)
                x //= s
            return tuple(reversed(cs))
        return LinearLayout.make({d: [split(lin(v)) for v in vs] for d, vs in self.bases}, outs)

    def flatten_ins(self, name="in") -> "LinearLayout":
        return LinearLayout.make({name: [v for _, vs in self.bases for v in vs]}, self.outs)

    # ---- solving ------------------------------------------------------------------------------
    def _echelon(self, dims=None):
        """Gaussian elimination of the columns (in input order): [(pivot bit, reduced vector,
        combination of columns as a bit mask)], and the indices of free columns."""
        cols = self.columns(dims)
        key = ("ech", tuple(dims) if dims is not None else None)
        if key in self._cache:
            return cols, self._cache[key]
        rows, free = [], []
        for j, (_, _, v) in enumerate(cols):
            comb = 1 << j
            for p, rv, rc in rows:
                if v >> p & 1:
                    v ^= rv
                    comb ^= rc
            if v == 0:
                free.append(j)
            else:
                rows.append((v.bit_length() - 1, v, comb))
        self._cache[key] = (rows, free)
        return cols, (rows, free)

    def solve(self, target, dims=None):
        """An input (as {in dim: value}) over `dims` mapping to `target` (coordinates or a
        flattened int), using the earliest independent bits; None if out of the span."""
        x = target if isinstance(target, int) else self.flatten(target)
        cols, (rows, _) = self._echelon(dims)
        comb = 0
        for p, rv, rc in rows:
            if x >> p & 1:
                x ^= rv
                comb ^= rc
        if x:
            return None
        res = {}
        for j, (d, i, _) in enumerate(cols):
            if comb >> j & 1:
                res[d] = res.get(d, 0) | 1 << i
        return res

    def rank(self, dims=None) -> int:
        return len(self._echelon(dims)[1][0])

    def is_surjective(self) -> bool:
        return self.rank() == self._shifts()[1]

    def is_injective(self) -> bool:
        return self.rank() == len(self.columns())

    def free_variable_masks(self) -> dict:
        """{in dim: mask of its bits that are copies}: a bit is free when its basis is in the
        span of the bases before it (registers first, then lanes, warps, blocks)."""
        cols, (_, free) = self._echelon()
        masks = {d: 0 for d in self.in_dims}
        for j in free:
            d, i, _ = cols[j]
            masks[d] |= 1 << i
        return masks

    def pseudo_invert(self) -> "LinearLayout":
        """A right inverse of a surjective map (copies resolved to the earliest position):
        outs -> ins with self(inv(x)) = x."""
        if not self.is_surjective():
            raise ValueError("pseudo_invert needs a surjective layout")
        sizes = {d: self.in_size(d) for d in self.in_dims}
        bases = {n: [] for n in self.out_dims}
        for n, s in self.outs:
            for b in range(_log2(s)):
                v = [0] * len(self.outs)
                v[self.out_dims.index(n)] = 1 << b
                sol = self.solve(tuple(v))
                bases[n].append(tuple(sol.get(d, 0) for d in self.in_dims))
        return LinearLayout.make(bases, list(sizes.items()))

    def invert(self) -> "LinearLayout":
        """The inverse of a bijective map."""
        if not (self.is_surjective() and self.is_injective()):
            raise ValueError("invert needs a bijective layout")
        return self.pseudo_invert()

    def invert_and_compose(self, other: "LinearLayout") -> "LinearLayout":
        """self⁻¹ ∘ other: for each of other's inputs, an input of self holding the same
        element (self surjective; copies resolved to the earliest position)."""
        return self.pseudo_invert().compose(other)

    # ---- normal form ---------------------------------------------------------------------------
    def normalized(self) -> "LinearLayout":
        """Zero register bases dropped and register bases sorted: two layouts with equal normal
        forms hold the same elements in every thread (possibly in other registers)."""
        bases = {d: list(vs) for d, vs in self.bases}
        if "register" in bases:
            bases["register"] = sorted(v for v in bases["register"] if any(v))
        return LinearLayout.make(bases, self.outs)

    def equivalent(self, other: "LinearLayout") -> bool:
        return self.normalized() == other.normalized()

    def table(self) -> dict:
        """Brute force: {(input values in in_dims order): coordinates} (for tests)."""
        dims = self.in_dims
        return {xs: self.apply(**dict(zip(dims, xs)))
                for xs in itertools.product(*[range(self.in_size(d)) for d in dims])}

    def __str__(self):
        ins = ", ".join(f"{d}: {list(vs)}" for d, vs in self.bases)
        outs = ", ".join(f"{n}={s}" for n, s in self.outs)
        return f"LinearLayout({ins} -> {outs})"


# ---- conversions ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SharedSwizzle:
    """An xor-swizzled shared layout of a tile: dimension `order[0]` is contiguous, the others
    are flattened into rows (`order[1]` fastest); within a row, groups of `vec` elements are
    permuted by xor with `(row // per_phase) % max_phase` (max_phase == 1: no swizzle)."""
    vec: int
    per_phase: int
    max_phase: int
    order: tuple

    @property
    def col(self) -> int:
        return self.order[0]

    def offset_map(self, shape) -> LinearLayout:
        """Element coordinates -> element offset in the buffer (in dims `dim<i>`, one out dim
        `offset`): linear, since the swizzle is an xor of row bits into column bits."""
        shape = tuple(shape)
        cols = shape[self.col]
        rows_of = list(reversed(self.order[1:]))

        def off(coord):
            r = 0
            for d in rows_of:
                r = r * shape[d] + coord[d]
            c = coord[self.col]
            phase = (r // self.per_phase) % self.max_phase
            return r * cols + ((c // self.vec) ^ phase) * self.vec + c % self.vec
        bases = {}
        for d, n in enumerate(shape):
            bases[f"dim{d}"] = [(off(tuple(1 << b if i == d else 0 for i in range(len(shape)))),)
                                for b in range(_log2(n))]
        return LinearLayout.make(bases, [("offset", math.prod(shape))])


@dataclass(frozen=True)
class ConversionPlan:
    """How to move a tile from layout `src` to `dst` (their linear maps).
    kind: "none" (same elements in the same registers), "registers" (dst register r is src
    register `registers[r]`), "shuffle" (within warps: `source` maps a dst (register, lane,
    warp, block) to the src (register, lane) holding its element), "shared" (through shared
    memory laid out as `swizzle`, stored `store_vec` and loaded `load_vec` elements at a time;
    `ldmatrix`/`stmatrix` say whether those instructions' fragments match).  A "shuffle" plan
    of 8-bit elements may move 32-bit words: `word_bits` (the src register bits packed into a
    word, byte position bit i from bit `word_bits[i]`; see `packed_shuffles`), and then by
    `exchange` (word_exchange.py: one shuffle a dst word, the sender's lane picking its bytes)
    where one fits."""
    kind: str
    registers: tuple = ()
    source: LinearLayout | None = None
    shuffles: int = 0
    swizzle: SharedSwizzle | None = None
    store_vec: int = 1
    load_vec: int = 1
    store_wavefronts: int = 0
    load_wavefronts: int = 0
    ldmatrix: bool = False
    stmatrix: bool = False
    word_bits: tuple = ()
    exchange: WordExchange | None = None


def _flat_in(lay: LinearLayout, **x) -> int:
    return lay.flatten(lay.apply(**x))


def register_map(src: LinearLayout, dst: LinearLayout):
    """For each dst register, the src register of the same thread holding its element, or None
    when some dst element is not in the same thread's src registers at a static index."""
    for d in ("lane", "warp", "block"):
        if d in dst.in_dims and dst.basis(d) != src.basis(d):
            return None
    regs = []
    for r in range(dst.in_size("register")):
        sol = src.solve(dst.apply(register=r), dims=("register",))
        if sol is None:
            return None
        regs.append(sol.get("register", 0))
    return tuple(regs)


def shuffle_map(src: LinearLayout, dst: LinearLayout):
    """(dst (register, lane, warp, block) -> src (register, lane) as a LinearLayout, number of
    src registers a dst register may come from), or None when elements must leave the warp."""
    dims = [d for d in IN_DIMS if d in dst.in_dims]
    bases = {}
    for d in dims:
        bases[d] = []
        for i in range(dst.in_bits(d)):
            t = dst.flatten(dst.apply(**{d: 1 << i}))
            if d in ("warp", "block"):
                t ^= src.flatten(src.apply(**{d: 1 << i}))
            sol = src.solve(t, dims=("register", "lane"))
            if sol is None:
                return None
            bases[d].append((sol.get("register", 0), sol.get("lane", 0)))
    m = LinearLayout.make(bases, [("register", src.in_size("register")),
                                  ("lane", src.in_size("lane"))])
    coupled = LinearLayout.make({"x": [(b[0],) for d in dims if d != "register"
                                       for b in m.basis(d)]},
                                [("register", src.in_size("register"))])
    return m, 1 << coupled.rank()


def packed_shuffles(m: LinearLayout, elem_bytes: int):
    """Shuffles of whole 32-bit words for a shuffle map `m` (see `shuffle_map`) of 8-bit
    elements: (the 2 src register bits packed into a word, total shuffles), or None.

    A dst word is dst registers r..r+3 (its low register bits); a src word packs the src
    registers that differ in `word_bits`.  The bits are the ones a dst word's elements or the
    receiving lane select among src registers (so that choice is a byte select, not a
    shuffle).  Fits when the lanes and warps select src registers only within a word and
    every dst word's bytes come from at most two src (word, lane offset)s: those shuffles,
    then one byte permute (prmt) whose selector the receiving lane XORs (the accumulator of
    wgmma m64nNk32 to its 8-bit register A fragment: two shuffles a word)."""
    k = 2  # (the lowering's prmt selector has a nibble a byte)
    nreg = m.in_bits("register")
    src_bits = m.out_size("register").bit_length() - 1
    if elem_bytes != 1 or nreg < k or src_bits < k:
        return None
    cand = [v[0] for v in m.basis("register")[:k]]
    cand += [v[0] for d in m.in_dims if d != "register" for v in m.basis(d)]
    bits = []
    for c in cand:
        if c and not c & (c - 1) and c.bit_length() - 1 not in bits:
            bits.append(c.bit_length() - 1)
    bits += [b for b in range(src_bits) if b not in bits]
    bits = tuple(bits[:k])
    wmask = sum(1 << b for b in bits)
    for d in m.in_dims:
        if d != "register" and any(v[0] & ~wmask for v in m.basis(d)):
            return None
    total = 0
    for r in range(0, 1 << nreg, 1 << k):
        srcs = {(R & ~wmask, L) for R, L in (m.apply(register=r | j) for j in range(1 << k))}
        if len(srcs) > 2:
            return None
        total += len(srcs)
    return bits, total


def access_vec(lay: LinearLayout, col: int, max_elems: int) -> int:
    """How many consecutive registers of `lay` hold consecutive elements along `col`."""
    regs = lay.basis("register")
    v = 0
    while (v < len(regs) and 1 << (v + 1) <= max_elems
           and regs[v] == tuple(1 << v if i == col else 0 for i in range(len(regs[v])))):
        v += 1
    return 1 << v


def wavefronts(lay: LinearLayout, offsets: LinearLayout, vec: int, elem_bytes: int,
               max_groups: int = 8) -> int:
    """Shared-memory wavefronts of warp 0 accessing all its elements `vec` at a time (32 banks
    of 4 bytes; an access of v*b bytes is served per 128 bytes of lanes), simulated over at
    most `max_groups` register groups (the pattern repeats)."""
    lanes = lay.in_size("lane")
    nregs = lay.in_size("register")
    per_phase = max(1, min(lanes, 128 // max(4, vec * elem_bytes)))
    total = 0
    comp = offsets.compose(lay.with_outs(
        [(f"dim{i}", s) for i, (_, s) in enumerate(lay.outs)]))
    # apply is linear over XOR: a lane's offset and a register group's combine by XOR
    lane_off = [comp.apply(lane=lane)[0] for lane in range(lanes)]
    for g in range(0, min(nregs, vec * max_groups), vec):
        g_off = comp.apply(register=g)[0]
        for p0 in range(0, lanes, per_phase):
            banks = {}
            for lane in range(p0, p0 + per_phase):
                base = (g_off ^ lane_off[lane]) * elem_bytes
                for w in range(base // 4, (base + vec * elem_bytes + 3) // 4):
                    banks.setdefault(w % 32, set()).add(w)
            total += max(len(s) for s in banks.values())
    simulated = min(nregs, vec * max_groups)
    return total * nregs // simulated  # the later groups repeat the pattern


def _ldmatrix_fits(lay: LinearLayout, sw: SharedSwizzle, elem_bytes: int) -> bool:
    """ldmatrix/stmatrix 8x8 b16 fragments: a thread's two consecutive registers are adjacent
    columns, lanes 0-3 step the column pairs, lanes 4-31 the 8 rows; each row's 8 elements
    contiguous in shared memory."""
    if elem_bytes != 2 or lay.in_bits("lane") != 5 or lay.in_bits("register") < 1:
        return False
    rank = len(lay.outs)
    unit = [tuple(1 << b if i == sw.col else 0 for i in range(rank)) for b in range(3)]
    regs, lanes = lay.basis("register"), lay.basis("lane")
    if regs[0] != unit[0] or list(lanes[:2]) != unit[1:]:
        return False
    if any(v[sw.col] for v in lanes[2:]) or len({v for v in lanes[2:]}) != 3:
        return False
    return sw.max_phase == 1 or sw.vec >= 8


def _matrix_wavefronts(lay: LinearLayout, offs: LinearLayout, elem_bytes: int,
                       max_groups: int = 8) -> int:
    """Wavefronts of ldmatrix/stmatrix: per 8x8 matrix, 8 rows of 16 bytes (the row starts
    are lanes 0, 4, .., 28), over at most `max_groups` matrices (a thread's register pairs)."""
    comp = offs.compose(lay)
    total = 0
    row_off = [comp.apply(lane=4 * row)[0] for row in range(8)]  # (linear over XOR)
    for g in range(0, min(lay.in_size("register"), 2 * max_groups), 2):
        banks = {}
        g_off = comp.apply(register=g)[0]
        for row in range(8):
            w0 = (g_off ^ row_off[row]) * elem_bytes // 4
            for w in range(w0, w0 + 4):
                banks.setdefault(w % 32, set()).add(w)
        total += max(len(x) for x in banks.values())
    nregs = lay.in_size("register")
    return total * nregs // min(nregs, 2 * max_groups)


def _dim_of_first_register(lay: LinearLayout):
    regs = lay.basis("register")
    if regs and sum(1 for c in regs[0] if c) == 1 and 1 in regs[0]:
        return regs[0].index(1)
    return None


def plan_shared(src: LinearLayout, dst: LinearLayout, shape, elem_bytes: int) -> ConversionPlan:
    """The swizzle with the fewest store + load wavefronts (ties: less swizzling, wider vec)."""
    rank = len(shape)
    col = _dim_of_first_register(src)
    if col is None:
        col = _dim_of_first_register(dst)
    if col is None:
        col = rank - 1
    cols = shape[col]
    order = (col,) + tuple(d for d in reversed(range(rank)) if d != col)
    max_vec = max(1, 16 // elem_bytes)
    best = None
    vecs = [1 << i for i in range(_log2(cols) + 1) if 1 << i <= max(max_vec, 1)]
    for vec in vecs:
        for max_phase in [1 << i for i in range(_log2(cols // vec) + 1)] if rank > 1 else [1]:
            for per_phase in ([1 << i for i in range(4)] if max_phase > 1 else [1]):
                sw = SharedSwizzle(vec, per_phase, max_phase, order)
                offs = sw.offset_map(shape)
                limit = max_vec if max_phase == 1 else min(vec, max_vec)
                vs = access_vec(src, col, limit)
                vl = access_vec(dst, col, limit)
                ws = wavefronts(src, offs, vs, elem_bytes)
                wl = wavefronts(dst, offs, vl, elem_bytes)
                # ldmatrix/stmatrix move 8x8 fragments: count those where they fit
                if _ldmatrix_fits(dst, sw, elem_bytes):
                    wl = min(wl, _matrix_wavefronts(dst, offs, elem_bytes))
                if _ldmatrix_fits(src, sw, elem_bytes):
                    ws = min(ws, _matrix_wavefronts(src, offs, elem_bytes))
                key = (ws + wl, max_phase, -vec, per_phase)
                if best is None or key < best[0]:
                    best = (key, sw, vs, vl, ws, wl)
    _, sw, vs, vl, ws, wl = best
    return ConversionPlan("shared", swizzle=sw, store_vec=vs, load_vec=vl,
                          store_wavefronts=ws, load_wavefronts=wl,
                          ldmatrix=_ldmatrix_fits(dst, sw, elem_bytes),
                          stmatrix=_ldmatrix_fits(src, sw, elem_bytes))


_PLANS: dict = {}


def plan_conversion(src: LinearLayout, dst: LinearLayout, shape=None,
                    elem_bytes: int = 4) -> ConversionPlan:
    """The cheapest way the maps allow to move a tile from `src` to `dst` (both surjective onto
    the tile, over the same out dims and the same lanes/warps)."""
    key = (src, dst, elem_bytes)
    if key in _PLANS:
        return _PLANS[key]
    if src.outs != dst.outs:
        raise ValueError("plan_conversion: layouts of different tiles")
    if not src.is_surjective():
        raise ValueError("plan_conversion: the source layout does not cover the tile")
    shape = tuple(s for _, s in src.outs) if shape is None else tuple(shape)
    regs = register_map(src, dst)
    if regs is not None:
        same = regs == tuple(range(src.in_size("register")))
        plan = ConversionPlan("none" if same else "registers", registers=regs)
    else:
        sh = shuffle_map(src, dst)
        nsrc, ndst = src.in_size("register"), dst.in_size("register")
        # a shuffle per dst register and possible source register; shared memory costs a
        # store per src and a load per dst register, two barriers and address arithmetic
        if sh is not None and ndst * sh[1] <= nsrc + ndst + 8:
            # (8-bit: as words where that takes fewer shuffles; targets without a byte
            # permute move the elements, so the choice of path stays the same)
            ex = plan_word_exchange(sh[0]) if elem_bytes == 1 else None
            pk = packed_shuffles(sh[0], elem_bytes) if elem_bytes == 1 and ex is None else None
            if ex is not None and ndst // 4 < ndst * sh[1]:
                plan = ConversionPlan("shuffle", source=sh[0], shuffles=ndst // 4,
                                      word_bits=ex.word_bits, exchange=ex)
            elif pk is not None and pk[1] < ndst * sh[1]:
                plan = ConversionPlan("shuffle", source=sh[0], shuffles=pk[1], word_bits=pk[0])
            else:
                plan = ConversionPlan("shuffle", source=sh[0], shuffles=ndst * sh[1])
        else:
            plan = plan_shared(src, dst, shape, elem_bytes)
    _PLANS[key] = plan
    return plan
