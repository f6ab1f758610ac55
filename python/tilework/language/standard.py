"""Builtins written in the tile language itself: sort, topk, flip, histogram, gather and
swizzle2d.  They are `@jit` functions, inlined into the kernel that calls them (plain Python
under the interpreter), so both backends and the interpreter run them through existing ops.

sort, topk and flip view the tile as a hypercube: the dimension they work on (2**n long) is
reshaped into n axes of size 2, between the dimensions before it (one axis) and after it (one
axis).  Bit j of an element's index along the dimension is then hypercube axis `n - j`, and
the element whose index differs in bit j (its partner) is `v ^ xor_sum(v, axis, keep_dims)`
(the pair's xor, xor-ed with itself), computed on the integer bits.  Only the two reshapes at
the ends move data through memory; each step in between is an xor reduction over an axis of
two (in registers, or one shuffle), a broadcast and selects.

* sort: a bitonic sorting network.  Stage s (1..n) builds sorted runs of 2**s elements,
  ascending where bit s of the index is 0 and descending where it is 1 (the last stage in the
  asked order), by compare-exchanges at bits s-1 .. 0.
* topk: runs of k sorted in alternating order; then, while runs remain, the elementwise
  maximum of two neighbouring runs (one ascending, one descending: a bitonic run holding the
  k largest of both) is merged again.  The result is descending, as Triton.
* bitonic_merge: sort's last stage alone (a bitonic run comes out sorted).
* flip: every index bit exchanged with its partner (index i -> 2**n - 1 - i).
* histogram (`tile.histogram`: shared-memory atomics) and gather (`tile.gather`: src in
  shared memory, read back at the indices) are builtins of `frontend/ops_standard.py`.
"""
from .control import static_range
from .core import (MEMBER_FUNCTIONS, arange, builtin, constexpr, int1, int8, int16, int32, int64, minimum,
                   static_assert, where)
from .function import jit
from .reduction import max as _max_reduce, xor_sum
from .shape import expand_dims, reshape

__all__ = ["sort", "topk", "bitonic_merge", "flip", "histogram", "gather", "swizzle2d"]


# ---- compile-time helpers (plain Python on constexpr values) -------------------------------

def _v(x):
    return x.value if isinstance(x, constexpr) else x


def _log2(n):
    """log2 of the power of two `n` (a dimension length)."""
    n = int(_v(n))
    return n.bit_length() - 1


def _is_pow2(n):
    n = int(_v(n))
    return n > 0 and n & (n - 1) == 0


def _dim(shape, dim):
    """The dimension `dim` (None: the last) of a tile of `shape`, normalized; -1 if invalid."""
    rank = len(shape)
    d = _v(dim)
    d = rank - 1 if d is None else int(d)
    return d % rank if -rank <= d < rank else -1


def _prod(shape):
    p = 1
    for s in shape:
        p *= int(_v(s))
    return p


def _cube(shape, d):
    """The hypercube shape of `shape` around dimension d: (before, 2, ..., 2, after)."""
    n = _log2(shape[d])
    return (_prod(shape[:d]),) + (2,) * n + (_prod(shape[d + 1:]),)


def _others(rank, axis):
    """Every axis of a rank-`rank` tile but `axis` (where a size-2 range is expanded)."""
    return tuple(a for a in range(rank) if a != axis)


def _bits_type(dt):
    """The integer type whose xor moves `dt`'s bits (None: `dt` is an integer already)."""
    if dt.is_int() and not dt.is_bool():
        return None
    return {8: int8, 16: int16, 32: int32, 64: int64}[dt.primitive_bitwidth]


def _is_flag(v):
    """A constexpr bool, or Triton's 0 / 1."""
    v = _v(v)
    return isinstance(v, bool) or (isinstance(v, int) and v in (0, 1))


def _moved(shape, d, k):
    """`shape` with dimension d of length k."""
    return tuple(_v(s) for s in shape[:d]) + (k,) + tuple(_v(s) for s in shape[d + 1:])


# ---- hypercube steps ---------------------------------------------------------------------------

@jit
def _partner(y, axis: constexpr):
    """The element each position exchanges with along the size-2 hypercube `axis`."""
    bt: constexpr = _bits_type(y.dtype)
    if bt is None:
        return y ^ xor_sum(y, axis, keep_dims=True)
    iy = y.to(bt, bitcast=True)
    return (iy ^ xor_sum(iy, axis, keep_dims=True)).to(y.dtype, bitcast=True)


@jit
def _upper(rank: constexpr, axis: constexpr):
    """True on the upper half (index bit 1) of hypercube `axis`, broadcastable to the cube."""
    return expand_dims(arange(0, 2), _others(rank, axis)) == 1


@jit
def _exchange(y, axis: constexpr, flip):
    """Compare-exchange along hypercube `axis`: each pair ends ascending (lower half holds the
    smaller), or descending where `flip` is true.  Pairs that compare false (equal, NaN)
    stay."""
    p = _partner(y, axis)
    hi = _upper(len(y.shape), axis)
    take = where(hi != flip, y < p, y > p)
    return where(take, p, y)


@jit
def _merge(y, n: constexpr, stages: constexpr, flip):
    """Bitonic merge of runs of 2**stages along the low index bits (bits stages-1 .. 0)."""
    for i in static_range(stages):
        y = _exchange(y, n - (stages - 1 - i), flip)
    return y


@jit
def _run_order(y, n: constexpr, s: constexpr, descending: constexpr):
    """The order of the runs of 2**s: alternating by index bit s while bits above remain,
    else the requested one."""
    if s < n:
        return _upper(len(y.shape), n - s)
    else:
        return descending


# ---- sort / topk / flip ----------------------------------------------------------------------

@jit
def sort(x, dim: constexpr = None, descending: constexpr = False):
    """`x` sorted along `dim` (None: the last dimension), ascending or, with `descending`,
    descending.  The dimension's length is a power of two (every tile dimension is).  NaNs do
    not compare, so their place is unspecified, as in Triton."""
    d: constexpr = _dim(x.shape, dim)
    static_assert(d >= 0, "sort: dim is out of range for the tile")
    n: constexpr = _log2(x.shape[d])
    if n == 0:
        return x
    is_bool: constexpr = x.dtype == int1
    y = x.to(int8) if is_bool else x
    y = reshape(y, _cube(x.shape, d))
    for s in static_range(1, n + 1):
        y = _merge(y, n, s, _run_order(y, n, s, descending))
    y = reshape(y, x.shape)
    return y.to(int1) if is_bool else y


@jit
def topk(x, k: constexpr, dim: constexpr = None):
    """The `k` largest elements of `x` along `dim` (None: the last dimension), largest first;
    the result has that dimension of length `k` (a power of two, at most its length)."""
    d: constexpr = _dim(x.shape, dim)
    static_assert(d >= 0, "topk: dim is out of range for the tile")
    static_assert(_is_pow2(k), "topk: k must be a power of two")
    static_assert(_v(k) <= _v(x.shape[d]) if d >= 0 else True,
                  "topk: k is larger than the dimension")
    nb: constexpr = _log2(x.shape[d])
    m: constexpr = _log2(k)
    is_bool: constexpr = x.dtype == int1
    y = x.to(int8) if is_bool else x
    y = reshape(y, _cube(x.shape, d))
    for s in static_range(1, m + 1):  # runs of k, alternating (descending if they are all)
        y = _merge(y, nb, s, _run_order(y, nb, s, True))
    for level in static_range(nb - m):  # pair neighbouring runs until one is left
        y = _max_reduce(y, nb - level - m)
        y = _merge(y, nb - level - 1, m, _run_order(y, nb - level - 1, m, True))
    y = reshape(y, _moved(x.shape, d, k))
    return y.to(int1) if is_bool else y


@jit
def bitonic_merge(x, dim: constexpr = None, descending: constexpr = False):
    """One bitonic merge along `dim` (None: the last dimension): each run along it that is
    bitonic (rising then falling, or the reverse) comes out sorted, ascending or, with
    `descending` (a bool, or Triton's 0 / 1), descending; other runs come out permuted by the
    same network (sort's last stage: compare-exchanges at index bits n-1 .. 0).  Triton takes
    the last dimension only; any is taken here."""
    d: constexpr = _dim(x.shape, dim)
    static_assert(d >= 0, "bitonic_merge: dim is out of range for the tile")
    static_assert(_is_flag(descending), "bitonic_merge: descending must be a constexpr bool")
    n: constexpr = _log2(x.shape[d])
    if n == 0:
        return x
    is_bool: constexpr = x.dtype == int1
    y = x.to(int8) if is_bool else x
    y = reshape(y, _cube(x.shape, d))
    y = _merge(y, n, n, _v(descending) == 1)
    y = reshape(y, x.shape)
    return y.to(int1) if is_bool else y


@jit
def flip(x, dim: constexpr = None):
    """`x` reversed along `dim` (None: the last dimension)."""
    d: constexpr = _dim(x.shape, dim)
    static_assert(d >= 0, "flip: dim is out of range for the tile")
    n: constexpr = _log2(x.shape[d])
    if n == 0:
        return x
    is_bool: constexpr = x.dtype == int1
    y = x.to(int8) if is_bool else x
    y = reshape(y, _cube(x.shape, d))
    for a in static_range(1, n + 1):
        y = _partner(y, a)
    y = reshape(y, x.shape)
    return y.to(int1) if is_bool else y


# ---- histogram / gather (frontend/ops_standard.py) -----------------------------------------

@builtin
def histogram(input, num_bins, mask=None):
    """Counts of the values 0 .. num_bins-1 in the 1-D integer tile `input` (int32, shape
    [num_bins], a power of two); values outside are not counted, nor elements where `mask`
    is false."""


@builtin
def gather(src, index, axis):
    """`out[..., i, ...] = src[..., index[..., i, ...], ...]` along `axis`: `index` (integers)
    has `src`'s rank and its shape except along `axis`; the result has `index`'s shape and
    `src`'s dtype.  Indices outside the axis are undefined behaviour, as in Triton."""


# ---- swizzle2d -------------------------------------------------------------------------------

@jit
def swizzle2d(i, j, size_i, size_j, size_g):
    """Renumbers the (i, j) cells of a size_i x size_j grid so that consecutive numbers fill
    groups of `size_g` rows column by column (the last group may be shorter): the grouped
    ordering of tiled matrix multiplications, which keeps neighbouring programs on shared
    rows and columns.  Returns the new (i, j)."""
    linear = i * size_j + j
    group_cells = size_g * size_j
    group = linear // group_cells
    first_row = group * size_g
    rows = minimum(size_i - first_row, size_g)  # the last group may hold fewer rows
    within = linear % group_cells
    return first_row + within % rows, within // rows


# tensor member functions (`x.sort()`, `x.flip(0)`, `x.topk(4)`), as in Triton
MEMBER_FUNCTIONS.update(sort=sort, topk=topk, flip=flip)
