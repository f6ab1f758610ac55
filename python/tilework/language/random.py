"""Counter-based random numbers: Philox-4x32 (and 4x64) with 10 rounds by default, as
`triton.language.random`.  For the same seed and offsets these functions produce the same
streams as Triton's (same key schedule, round constants, counter layout and conversions to
floats); they are ordinary tile-language `@jit` functions, inlined into the kernel that calls
them (and plain Python under the interpreter).

* `randint4x(seed, offset)`: the four 32-bit words of Philox(counter = (offset, 0, 0, 0),
  key = (low 32 bits of seed, high 32 bits of seed)), as uint32 tiles of `offset`'s shape.
  A 64-bit offset fills the counter's first two words (low, high), as in Triton 3.6;
  `philox` on 64-bit counters is Philox-4x64 (key = (seed, 0)).
* `randint` is the first word; `rand`/`rand4x` map words to [0, 1) with
  `uint_to_uniform_float`; `randn`/`randn4x` apply Box-Muller to pairs of those.

`umulhi` here is computed through a 64-bit product (32-bit words) or 32-bit limbs (64-bit
words), so these functions need nothing beyond integer arithmetic, casts and `where` (and
`log`, `sqrt`, `sin`, `cos` for the normal ones).
"""
from .control import static_range
from .core import builtin, constexpr, int32, int64, maximum, static_assert, uint32, uint64, where
from .function import jit
from .math import cos, log, sin, sqrt

__all__ = ["N_ROUNDS_DEFAULT", "philox", "philox_impl", "randint", "randint4x",
           "uint_to_uniform_float", "rand", "rand4x", "randn", "randn4x",
           "pair_uniform_to_normal", "to_tensor"]

N_ROUNDS_DEFAULT = 10

# Philox-4x32 and 4x64 constants: Weyl-sequence key increments (golden ratio, sqrt(3) - 1)
# and the round multipliers of Salmon et al., "Parallel random numbers: as easy as 1, 2, 3".
_KEY_INC_32 = (0x9E3779B9, 0xBB67AE85)
_MUL_32 = (0xD2511F53, 0xCD9E8D57)
_KEY_INC_64 = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)
_MUL_64 = (0xD2E7470EE14C6C93, 0xCA5A826395121157)
_LO32 = 0xFFFFFFFF


@builtin
def to_tensor(x):
    """`x` as a tensor: Python numbers become scalars typed as in kernels (int32, int64 or
    uint64 by value; fp32)."""


@jit
def _mulhi32(k, x):
    """High 32 bits of the 64-bit product of the uint32 `x` and the constant `k`."""
    return ((x.to(uint64) * k) >> 32).to(uint32)


@jit
def _mulhi64(k, x):
    """High 64 bits of the 128-bit product of the uint64 `x` and the constant `k`, from
    32-bit limbs (schoolbook multiplication with the carries of the middle column)."""
    k_lo = k & _LO32
    k_hi = k >> 32
    x_lo = x & _LO32
    x_hi = x >> 32
    ll = x_lo * k_lo
    hl = x_hi * k_lo
    lh = x_lo * k_hi
    hh = x_hi * k_hi
    middle = (ll >> 32) + (hl & _LO32) + (lh & _LO32)
    return hh + (hl >> 32) + (lh >> 32) + (middle >> 32)


@jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """`n_rounds` Philox rounds on the counter (c0, c1, c2, c3) with the key (k0, k1), all
    uint32 (Philox-4x32) or all uint64 (Philox-4x64)."""
    if c0.dtype == uint32:
        inc0, inc1 = _KEY_INC_32
        m0, m1 = _MUL_32
    else:
        static_assert(c0.dtype == uint64, "philox_impl takes uint32 or uint64 counters")
        inc0, inc1 = _KEY_INC_64
        m0, m1 = _MUL_64
    for _ in static_range(n_rounds):  # unrolled
        # each round: two multiplications; their high halves mix with the other words and
        # the key, their low halves become the new odd words
        if c0.dtype == uint32:
            h0 = _mulhi32(m0, c0)
            h2 = _mulhi32(m1, c2)
        else:
            h0 = _mulhi64(m0, c0)
            h2 = _mulhi64(m1, c2)
        l0 = c0 * m0
        l2 = c2 * m1
        c0, c1, c2, c3 = h2 ^ c1 ^ k0, l2, h0 ^ c3 ^ k1, l0
        k0 = k0 + inc0
        k1 = k1 + inc1
    return c0, c1, c2, c3


@jit
def philox(seed, c0, c1, c2, c3, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Philox of the counter (c0, c1, c2, c3) keyed by `seed` (a 64-bit value: its low and
    high 32-bit halves for 32-bit counters; the whole seed and 0 for 64-bit counters)."""
    seed = to_tensor(seed)
    static_assert(seed.dtype.is_int(), "the seed of tl.random is an integer (as Triton's)")
    seed = seed.to(uint64)
    c0 = to_tensor(c0)
    c1 = to_tensor(c1)
    c2 = to_tensor(c2)
    c3 = to_tensor(c3)
    if c0.dtype.primitive_bitwidth == 32:
        word = uint32
        k0 = (seed & _LO32).to(uint32)
        k1 = (seed >> 32).to(uint32)
    else:
        static_assert(c0.dtype.primitive_bitwidth == 64,
                         "philox takes 32- or 64-bit integer counters")
        word = uint64
        k0 = seed
        k1 = seed * 0
    c0 = c0.to(word, bitcast=True)
    c1 = c1.to(word, bitcast=True)
    c2 = c2.to(word, bitcast=True)
    c3 = c3.to(word, bitcast=True)
    return philox_impl(c0, c1, c2, c3, k0, k1, n_rounds)


@jit
def randint4x(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four tiles of random uint32 for `seed` (a scalar) and the tile of counters `offset`:
    the fastest way to get random bits.  A 64-bit offset is split into the two low counter
    words (low 32 bits, high 32 bits), still Philox-4x32, as Triton 3.6 does: int32 and
    int64 offsets below 2**32 give the same stream (`philox` itself runs Philox-4x64 on
    64-bit counters)."""
    offset = to_tensor(offset)
    if offset.dtype.primitive_bitwidth > 32:
        wide = offset.to(uint64, bitcast=True)
        lo = (wide & _LO32).to(uint32)
        zero = lo * 0
        return philox(seed, lo, (wide >> 32).to(uint32), zero, zero, n_rounds)
    zero = offset * 0
    return philox(seed, offset, zero, zero, zero, n_rounds)


@jit
def randint(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """One tile of random uint32 for `seed` and `offset` (the first word of `randint4x`)."""
    a, _, _, _ = randint4x(seed, offset, n_rounds)
    return a


@jit
def uint_to_uniform_float(x):
    """Random 32-bit (64-bit) integers to fp32 uniform in [0, 1): the bits as a signed
    integer, negatives folded onto non-negatives (-x - 1), times the largest scale that keeps
    the result below 1."""
    if x.dtype == uint32 or x.dtype == int32:
        x = x.to(int32, bitcast=True)
        scale = 4.6566127342e-10
    else:
        static_assert(x.dtype == uint64 or x.dtype == int64,
                         "uint_to_uniform_float takes 32- or 64-bit integers")
        x = x.to(int64, bitcast=True)
        scale = 1.0842020432385337e-19
    x = where(x < 0, -x - 1, x)
    return x * scale


@jit
def rand(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A tile of fp32 uniform in [0, 1) for `seed` and `offset`."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@jit
def rand4x(seed, offsets, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four tiles of fp32 uniform in [0, 1) (one per word of `randint4x`)."""
    a, b, c, d = randint4x(seed, offsets, n_rounds)
    return (uint_to_uniform_float(a), uint_to_uniform_float(b), uint_to_uniform_float(c),
            uint_to_uniform_float(d))


@jit
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two independent N(0, 1) tiles from two uniform ones (u1 clamped to 1e-7
    so that log(u1) is finite)."""
    u1 = maximum(1.0e-7, u1)
    theta = 6.283185307179586 * u2
    radius = sqrt(-2.0 * log(u1))
    return radius * cos(theta), radius * sin(theta)


@jit
def randn(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A tile of fp32 N(0, 1) for `seed` and `offset` (Box-Muller on the first two words)."""
    a, b, _, _ = randint4x(seed, offset, n_rounds)
    n, _ = pair_uniform_to_normal(uint_to_uniform_float(a), uint_to_uniform_float(b))
    return n


@jit
def randn4x(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four tiles of fp32 N(0, 1) (Box-Muller on words 1-2 and 3-4)."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4
