"""Ops of issue 3's checklist that no other test file ran against a reference, run in the CPU
interpreter against numpy on random inputs with non-power-of-two sizes (masked tails).
test_surface_ops_gpu.py runs the same cases (`CASES`) compiled, on a GPU; a sample of them
also runs here compiled for sm_80 on the CPU simulator of gpu_sim.py.

The families: creation builtins (arange with a start, full of a constant and of a runtime
scalar, zeros, zeros_like, full_like, tensor .dtype/.shape, pointer .dtype.element_ty);
`.to`/`tl.cast` between every pair of dtypes, through bfloat16, and bitcasts; the integer
operators on every integer type (`//` `%` with C semantics, shifts, bitwise, unary `-` `~`,
comparisons, wrapping); the float operators (`//` floor, `%` fmod, unordered `!=`, `not` of
a runtime scalar); load/store with `other`, cache_modifier, eviction_policy and volatile;
program_id/num_programs on 3-D grids; the hints (multiple_of, max_contiguous, max_constancy,
assume) in a running kernel; the shape builtins permute/view/ravel/broadcast/expand_dims/
broadcast_to/trans(dims)/.T/member reshape and indexing; join/split/interleave/cat on masked
data; max/min with return_indices and keep_dims, argmax/argmin keep_dims, sum over
axis=None; a constexpr `if` pruning a branch that would not type-check, with static_range and
a @jit helper returning a tuple.  Plus tl.static_print (compiling and interpreting) and `not`
of a tile (compiled only: the interpreter cannot give a tile one truth value).

Every output is poisoned first (NaN, or a sentinel), so a lane the kernel fails to write, or
writes outside its mask, shows up."""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pytest

import tilework
import tilework.language as tl

SENTINEL = 0x5A  # poison of integer outputs (as the element type's bit pattern 0x5A5A...)


# ---- helpers shared with test_surface_ops_gpu.py ---------------------------------------------

def cdiv(a, b):
    return (a + b - 1) // b


def poison(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.full(shape, np.nan, dtype)
    if dtype.kind == "b":
        return np.zeros(shape, dtype)  # bool outputs are checked against a written mask
    return np.full(shape, np.frombuffer(bytes([SENTINEL]) * dtype.itemsize, dtype)[0], dtype)


def bf16_round(x):
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return b.view(np.float32)


def assert_bits_equal(out, want, what=""):
    out, want = np.asarray(out), np.asarray(want)
    assert out.dtype == want.dtype and out.shape == want.shape, (out.dtype, want.dtype, what)
    if out.dtype.kind == "f":  # NaN == NaN, -0 != 0: compare the bits
        u = np.dtype(f"u{out.dtype.itemsize}")
        ok = out.view(u) == want.view(u)
    else:
        ok = out == want
    if not ok.all():
        i = np.flatnonzero(~ok.ravel())
        raise AssertionError(f"{what}: {i.size} of {ok.size} differ, first at {i[:5]}: got "
                             f"{out.ravel()[i[:5]]}, want {want.ravel()[i[:5]]}")


@dataclass
class Run:
    """One launch: `grid`, `args` (numpy arrays and Python scalars), `constexprs`, the indices
    of the output arrays in `args`, and `check(outs)` on those outputs (numpy, in order)."""
    grid: tuple
    args: list
    constexprs: dict
    outputs: list
    check: object


@dataclass
class Case:
    kernel: object
    make: object          # make(rng, param) -> Run
    params: list          # what the case is run with (sizes, dtypes, ...)


def rng_for(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def run_interpreted(kernel, run: Run):
    interp = tilework.jit(kernel.fn, interpret=True)
    interp[run.grid](*run.args, **run.constexprs)
    return [run.args[i] for i in run.outputs]


# ---- creation builtins -----------------------------------------------------------------------

@tilework.jit
def k_creation(x_ptr, o_ptr, oi_ptr, n, v, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.static_assert(x.shape[0] == BLOCK and x.dtype == tl.float32)
    f = tl.full([BLOCK], 2.5, tl.float32)
    fv = tl.full((BLOCK,), v, x.dtype)            # a runtime fill value
    zl = tl.zeros_like(x) + tl.zeros(x.shape, x.dtype)
    fl = tl.full_like(x, -1)
    tl.store(o_ptr + offs, x * f + fv + zl + fl, mask=m)
    r = tl.arange(3, 3 + BLOCK)                    # a range not starting at 0
    z = tl.zeros([BLOCK], oi_ptr.dtype.element_ty)
    tl.store(oi_ptr + offs, r + z + offs, mask=m)


def make_creation(rng, n):
    block = 128
    x = (rng.integers(-400, 400, n) / 4).astype(np.float32)  # exact products and sums
    v = float(rng.integers(-50, 50)) / 2
    o, oi = poison(n + 7, np.float32), poison(n + 7, np.int32)

    def check(outs):
        o, oi = outs
        want = ((x * np.float32(2.5) + np.float32(v)) - np.float32(1)).astype(np.float32)
        assert_bits_equal(o[:n], want, "full/zeros/zeros_like/full_like")
        i = np.arange(n)
        assert_bits_equal(oi[:n], (3 + i % block + i).astype(np.int32), "arange(3, ...)")
        assert np.isnan(o[n:]).all() and (oi[n:] == poison(7, np.int32)).all()
    return Run((cdiv(n, block),), [x, o, oi, n, v], {"BLOCK": block}, [1, 2], check)


# ---- .to / tl.cast between every pair of dtypes, and bitcasts ---------------------------------

NP = {"int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
      "uint64": np.uint64, "float16": np.float16, "float32": np.float32, "float64": np.float64}
BITCASTS = [("float32", "int32"), ("int32", "float32"), ("float32", "uint32"),
            ("float16", "int16"), ("uint16", "float16"), ("float64", "int64"),
            ("int64", "float64"), ("uint64", "int64"), ("int8", "uint8"), ("uint8", "int8")]


@tilework.jit
def k_cast(x_ptr, y_ptr, n, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    dst = y_ptr.dtype.element_ty
    if MODE == "to":
        y = x.to(dst)
    elif MODE == "cast":
        y = tl.cast(x, dst)
    elif MODE == "bitcast":
        y = x.to(dst, bitcast=True)
    else:  # "bf16": through bfloat16
        y = x.to(tl.bfloat16).to(dst)
    tl.store(y_ptr + offs, y, mask=m)


def _cast_inputs(rng, src, dst, n):
    s, d = np.dtype(NP[src]), np.dtype(NP[dst])
    if s.kind == "b":
        return rng.integers(0, 2, n).astype(np.bool_)
    if s.kind in "iu":
        info = np.iinfo(s)
        lo, hi = int(info.min), int(info.max)
        if d.kind == "f":  # exactly convertible values, in the float type's range
            lim = 60000 if d.itemsize == 2 else 2**20
            lo, hi = max(lo, -lim), min(hi, lim)
        x = rng.integers(lo, hi, n, dtype=s, endpoint=True)
        x[:3] = [0, 1, hi]
        return x
    x = (rng.standard_normal(n) * 100).astype(s)
    if d.kind in "iu":  # float -> int: in the destination's range (else undefined)
        info = np.iinfo(d)
        lo, hi = max(int(info.min), -1000), min(int(info.max), 1000)
        x = np.clip((rng.random(n) * (hi - lo) + lo).astype(s), lo, hi).astype(s)
    x[:2] = [0.0, -0.0]
    return x


def make_cast(rng, param):
    src, dst, mode = param
    n, block = 100, 64
    if mode == "bitcast":
        s = np.dtype(NP[src])
        if s.kind == "f":  # finite floats
            x = (rng.standard_normal(n) * 8).astype(s)
        else:  # random bits; the exponent's top bit cleared where they become floats
            u = np.dtype(f"u{s.itemsize}")  # (no NaN or inf patterns)
            bits = rng.integers(0, np.iinfo(u).max, n, dtype=u, endpoint=True)
            if np.dtype(NP[dst]).kind == "f":
                bits &= ~u.type(1 << (8 * s.itemsize - 2))
            x = bits.view(s)
        want = x.view(NP[dst])
    elif mode == "bf16":
        x = (rng.standard_normal(n) * 100).astype(np.float32)
        if np.dtype(NP[dst]).kind in "iu":  # bf16 values in the destination's range
            info = np.iinfo(NP[dst])
            x = np.clip(bf16_round(x), max(int(info.min), -1000), min(int(info.max), 1000))
        r = bf16_round(x)
        want = (r != 0) if dst == "int1" else r.astype(NP[dst])
    else:
        x = _cast_inputs(rng, src, dst, n)
        want = (x != 0) if dst == "int1" else x.astype(NP[dst])
    y = poison(n + 5, NP[dst])
    tail = y[n:].copy()

    def check(outs):
        (y,) = outs
        assert_bits_equal(y[:n], want.astype(NP[dst]), f"{src} -> {dst} ({mode})")
        assert_bits_equal(y[n:], tail, "beyond the mask")
    return Run((cdiv(n, block),), [x, y, n], {"BLOCK": block, "MODE": mode}, [1], check)


CAST_PARAMS = ([(s, d, "to") for s in NP for d in NP if s != d]
               + [(s, d, "cast") for s, d in (("int32", "float16"), ("float64", "uint8"),
                                             ("int1", "float32"), ("uint64", "int8"))]
               + [(s, d, "bitcast") for s, d in BITCASTS]
               + [("float32", d, "bf16") for d in ("float32", "float64", "float16", "int32",
                                                   "uint8", "int1")])


# ---- integer operators on every integer type ---------------------------------------------------

INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
N_INT_OUT, N_CMP_OUT = 14, 7


@tilework.jit
def k_int_ops(a_ptr, b_ptr, s_ptr, o_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    s = tl.load(s_ptr + offs, mask=m, other=0)
    tl.store(o_ptr + 0 * n + offs, a // b, mask=m)
    tl.store(o_ptr + 1 * n + offs, a % b, mask=m)
    tl.store(o_ptr + 2 * n + offs, a << s, mask=m)
    tl.store(o_ptr + 3 * n + offs, a >> s, mask=m)
    tl.store(o_ptr + 4 * n + offs, a & b, mask=m)
    tl.store(o_ptr + 5 * n + offs, a | b, mask=m)
    tl.store(o_ptr + 6 * n + offs, a ^ b, mask=m)
    tl.store(o_ptr + 7 * n + offs, -a, mask=m)
    tl.store(o_ptr + 8 * n + offs, ~a, mask=m)
    tl.store(o_ptr + 9 * n + offs, a + b * 3 - 7, mask=m)  # wraps; the ints take a's type
    tl.store(o_ptr + 10 * n + offs, a // 3 + a % 5 - (a >> 1), mask=m)
    tl.store(o_ptr + 11 * n + offs, tl.maximum(a, b), mask=m)
    tl.store(o_ptr + 12 * n + offs, tl.minimum(a, b), mask=m)
    tl.store(o_ptr + 13 * n + offs, tl.where(a < b, a, 0), mask=m)
    tl.store(c_ptr + 0 * n + offs, a < b, mask=m)
    tl.store(c_ptr + 1 * n + offs, a <= b, mask=m)
    tl.store(c_ptr + 2 * n + offs, a > b, mask=m)
    tl.store(c_ptr + 3 * n + offs, a >= b, mask=m)
    tl.store(c_ptr + 4 * n + offs, a == b, mask=m)
    tl.store(c_ptr + 5 * n + offs, a != b, mask=m)
    tl.store(c_ptr + 6 * n + offs, (a < b) == 0, mask=m)  # `not` of a tile: compiled only


def _c_div(a, b):
    """C division (truncating) and remainder of Python ints."""
    q = abs(a) // abs(b)
    q = -q if (a < 0) != (b < 0) else q
    return q, a - q * b


def make_int_ops(rng, param):
    dt, n = param
    d = np.dtype(dt)
    info, bits = np.iinfo(d), 8 * d.itemsize
    block = 128
    a = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
    b = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
    small = rng.integers(-9 if info.min < 0 else 0, 9, n).astype(d)  # small divisors too
    b = np.where(rng.random(n) < 0.5, small, b).astype(d)
    b[b == 0] = 3
    if info.min < 0:  # MIN // -1 and MIN % -1 overflow (undefined)
        b[(a == info.min) & (b == -1)] = 2
    edge = [(info.min, 1), (info.max, -1 if info.min else 1), (7, 2), (-7 if info.min else 9, 2),
            (7, -2 if info.min else 5), (0, 5), (1, 1)]
    for i, (x, y) in enumerate(edge[:n]):
        a[i], b[i] = x, y
    s = rng.integers(0, bits, n).astype(d)  # shift amounts < the bit width
    o, c = poison(N_INT_OUT * n + 3, d), poison(N_CMP_OUT * n + 3, np.bool_)
    mask = (1 << bits) - 1

    def wrap(v):
        v &= mask
        return v - (1 << bits) if info.min < 0 and v >= 1 << (bits - 1) else v

    def check(outs):
        o, c = outs
        A, B, S = ([int(v) for v in t] for t in (a, b, s))
        rows = [[] for _ in range(N_INT_OUT)]
        for x, y, k in zip(A, B, S):
            q, r = _c_div(x, y)
            q3, _ = _c_div(x, 3)
            _, r5 = _c_div(x, 5)
            vals = [q, r, x << k, x >> k, x & y, x | y, x ^ y, -x, ~x, x + wrap(y * 3) - 7,
                    q3 + r5 - (x >> 1), max(x, y), min(x, y), x if x < y else 0]
            for row, v in zip(rows, vals):
                row.append(wrap(v))
        names = ["//", "%", "<<", ">>", "&", "|", "^", "-", "~", "+*-", "// % >> scalars",
                 "maximum", "minimum", "where"]
        for k, (name, row) in enumerate(zip(names, rows)):
            assert_bits_equal(o[k * n:(k + 1) * n], np.array(row, dtype=object).astype(d)
                              if d.kind == "i" else np.array(row, dtype=np.uint64).astype(d),
                              f"{dt} {name}")
        cmps = [a < b, a <= b, a > b, a >= b, a == b, a != b, ~(a < b)]
        for k, want in enumerate(cmps):
            assert_bits_equal(c[k * n:(k + 1) * n], want, f"{dt} comparison {k}")
        assert_bits_equal(o[N_INT_OUT * n:], poison(3, d), "beyond the mask")
        assert not c[N_CMP_OUT * n:].any()
    return Run((cdiv(n, block),), [a, b, s, o, c, n], {"BLOCK": block}, [3, 4], check)


# ---- float operators ----------------------------------------------------------------------------

FLOAT_TYPES = ["float16", "float32", "float64"]
N_FLOAT_OUT, N_FCMP_OUT = 9, 10


@tilework.jit
def k_float_ops(a_ptr, b_ptr, d_ptr, q_ptr, o_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1.0)
    b = tl.load(b_ptr + offs, mask=m, other=1.0)
    d = tl.load(d_ptr + offs, mask=m, other=1.0)  # powers of two: exact quotients
    q = tl.load(q_ptr + offs, mask=m, other=1.0)  # `a` with NaNs, for the comparisons
    tl.store(o_ptr + 0 * n + offs, a + b, mask=m)
    tl.store(o_ptr + 1 * n + offs, a - b, mask=m)
    tl.store(o_ptr + 2 * n + offs, a * b, mask=m)
    tl.store(o_ptr + 3 * n + offs, a / d, mask=m)
    tl.store(o_ptr + 4 * n + offs, a // d, mask=m)
    tl.store(o_ptr + 5 * n + offs, -a, mask=m)
    tl.store(o_ptr + 6 * n + offs, tl.maximum(a, b) + tl.minimum(a, 0.5), mask=m)
    tl.store(o_ptr + 7 * n + offs, tl.where(a > b, a, b * 2), mask=m)
    tl.store(o_ptr + 8 * n + offs, a * 2 + 1, mask=m)
    tl.store(c_ptr + 0 * n + offs, q < b, mask=m)
    tl.store(c_ptr + 1 * n + offs, q <= b, mask=m)
    tl.store(c_ptr + 2 * n + offs, q > b, mask=m)
    tl.store(c_ptr + 3 * n + offs, q >= b, mask=m)
    tl.store(c_ptr + 4 * n + offs, q == b, mask=m)
    tl.store(c_ptr + 5 * n + offs, q != b, mask=m)  # unordered: true for NaN
    tl.store(c_ptr + 6 * n + offs, tl.where(not (n > 100), q < b, q >= b), mask=m)  # scalar not
    tl.store(c_ptr + 7 * n + offs, (q < b) & (q > 0), mask=m)
    tl.store(c_ptr + 8 * n + offs, (q < b) | (q > 0), mask=m)
    tl.store(c_ptr + 9 * n + offs, (q < b) ^ (q > 0), mask=m)


def make_float_ops(rng, param):
    dt, n = param
    d = np.dtype(dt)
    block = 64
    a = (rng.standard_normal(n) * 8).astype(d)
    b = (rng.standard_normal(n) * 8).astype(d)
    eq = rng.random(n) < 0.15  # some ties
    b[eq] = a[eq]
    dv = (2.0 ** rng.integers(-3, 4, n) * rng.choice([-1, 1], n)).astype(d)
    if n >= 4:
        a[:4] = [6.0, -6.0, 0.0, -0.0]
        dv[:4] = [4.0, 4.0, -2.0, 2.0]
    q = a.copy()
    q[rng.random(n) < 0.1] = np.nan
    o, c = poison(N_FLOAT_OUT * n + 3, d), poison(N_FCMP_OUT * n + 3, np.bool_)

    def check(outs):
        o, c = outs
        with np.errstate(all="ignore"):
            want = [a + b, a - b, a * b, a / dv, np.floor(a / dv), -a,
                    np.fmax(a, b) + np.fmin(a, d.type(0.5)), np.where(a > b, a, b * 2),
                    a * 2 + 1]
        names = ["+", "-", "*", "/", "//", "unary -", "maximum/minimum", "where", "a*2+1"]
        for k, (name, w) in enumerate(zip(names, want)):
            if name == "/" and d.itemsize < 8:  # NVIDIA's fp32 `/` is div.full.f32 (as
                # Triton's): within 2 ulp, although exact for these power-of-two divisors
                np.testing.assert_allclose(o[k * n:(k + 1) * n], w.astype(d), atol=0,
                                           rtol=2.5e-7 if d.itemsize == 4 else 1e-3)
                continue
            assert_bits_equal(o[k * n:(k + 1) * n], w.astype(d), f"{dt} {name}")
        cmps = [q < b, q <= b, q > b, q >= b, q == b, q != b, (q < b) if n <= 100 else (q >= b),
                (q < b) & (q > 0), (q < b) | (q > 0), (q < b) ^ (q > 0)]
        for k, want in enumerate(cmps):
            assert_bits_equal(c[k * n:(k + 1) * n], want, f"{dt} comparison/logic {k}")
        assert np.isnan(o[N_FLOAT_OUT * n:]).all() and not c[N_FCMP_OUT * n:].any()
    return Run((cdiv(n, block),), [a, b, dv, q, o, c, n], {"BLOCK": block}, [4, 5], check)


@tilework.jit
def k_float_mod(a_ptr, d_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    tl.store(o_ptr + offs, a % tl.load(d_ptr + offs, mask=m), mask=m)


def make_float_mod(rng, param):
    dt, n = param
    d = np.dtype(dt)
    a = (rng.standard_normal(n) * 20).astype(d)
    dv = (rng.standard_normal(n) * 3).astype(d)
    dv[dv == 0] = 1
    o = poison(n + 3, d)

    def check(outs):
        assert_bits_equal(outs[0][:n], np.fmod(a, dv), f"{dt} % (C fmod: the dividend's sign)")
        assert np.isnan(outs[0][n:]).all()
    return Run((cdiv(n, 64),), [a, dv, o, n], {"BLOCK": 64}, [2], check)


# ---- load / store options -------------------------------------------------------------------

@tilework.jit
def k_load_store_options(x_ptr, y_ptr, z_ptr, n, OTHER: tl.constexpr, LCM: tl.constexpr,
                         SCM: tl.constexpr, EV: tl.constexpr, VOL: tl.constexpr,
                         BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=OTHER, cache_modifier=LCM, eviction_policy=EV,
                volatile=VOL)
    tl.store(y_ptr + offs, x)  # every lane: `other` shows beyond n
    tl.store(z_ptr + offs, x * 3, mask=m, cache_modifier=SCM, eviction_policy=EV)


LOAD_STORE_OPTIONS = [("", "", "", False), (".ca", ".wb", "evict_normal", False),
                      (".cg", ".cg", "evict_first", False), (".cv", ".cs", "evict_last", True),
                      ("", ".wt", "", True)]


def make_load_store_options(rng, param):
    (lcm, scm, ev, vol), n = param
    block = 128
    grid = cdiv(n, block)
    x = (rng.integers(-1000, 1000, n)).astype(np.int32)
    y, z = poison(grid * block, np.int32), poison(grid * block, np.int32)

    def check(outs):
        y, z = outs
        assert_bits_equal(y, np.concatenate([x, np.full(grid * block - n, -5, np.int32)]),
                          "load with other=-5")
        assert_bits_equal(z, np.concatenate([x * 3, poison(grid * block - n, np.int32)]),
                          "masked store")
    return Run((grid,), [x, y, z, n], {"OTHER": -5, "LCM": lcm, "SCM": scm, "EV": ev,
                                       "VOL": vol, "BLOCK": block}, [1, 2], check)


# ---- program_id / num_programs on a 3-D grid ---------------------------------------------------

@tilework.jit
def k_grid(o_ptr):
    p0, p1, p2 = tl.program_id(0), tl.program_id(axis=1), tl.program_id(2)
    n0, n1, n2 = tl.num_programs(0), tl.num_programs(axis=1), tl.num_programs(2)
    lin = p0 + n0 * (p1 + n1 * p2)
    k = tl.arange(0, 4)
    v = tl.where(k == 0, p0, tl.where(k == 1, p1, tl.where(k == 2, p2, n0 * 10000 + n1 * 100 + n2)))
    tl.store(o_ptr + lin * 4 + k, v)


def make_grid(rng, grid):
    g0, g1, g2 = grid
    o = poison(g0 * g1 * g2 * 4, np.int32)

    def check(outs):
        want = np.array([[p0, p1, p2, g0 * 10000 + g1 * 100 + g2]
                         for p2 in range(g2) for p1 in range(g1) for p0 in range(g0)], np.int32)
        assert_bits_equal(outs[0], want.ravel(), f"grid {grid}")
    return Run(tuple(grid), [o], {}, [0], check)


# ---- hints in a running kernel -----------------------------------------------------------------

@tilework.jit
def k_hints(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    rows = tl.max_contiguous(tl.multiple_of(rows, BM), BM)
    cols = tl.max_contiguous(tl.multiple_of(tl.arange(0, BN), BN), BN)
    tl.assume(M > 0)
    tl.assume(cols >= 0)
    row_ok = tl.max_constancy(tl.broadcast_to(rows[:, None] < M, (BM, BN)), (1, BN))
    m = row_ok & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=m, other=-1.0)
    tl.store(y_ptr + offs, x * 2 + 1, mask=m)


def make_hints(rng, param):
    m, n = param
    bm, bn = 16, 64
    x = rng.integers(-100, 100, (m, n)).astype(np.float32)
    y = poison((m, n), np.float32)

    def check(outs):
        assert_bits_equal(outs[0], x * 2 + 1, f"hinted copy {m}x{n}")
    return Run((cdiv(m, bm),), [x, y, m, n], {"BM": bm, "BN": bn}, [1], check)


# ---- shape builtins -------------------------------------------------------------------------

@tilework.jit
def k_shapes(x_ptr, o1, o2, o3, o4, o5, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    m = (r[:, None] < M) & (c[None, :] < N)
    x = tl.load(x_ptr + r[:, None] * N + c[None, :], mask=m, other=0.0)  # [BM, BN]
    full = tl.arange(0, BM * BN)
    tl.store(o1 + full, tl.ravel(tl.trans(x, 1, 0)))                       # x.T, flattened
    p = tl.permute(x.reshape(BM, 2, BN // 2), 2, 0, 1)                      # [BN/2, BM, 2]
    tl.store(o2 + full, tl.view(p, BM * BN))
    a, b = tl.broadcast(tl.sum(x, axis=1)[:, None], tl.sum(x, axis=0)[None, :])
    tl.store(o3 + full, tl.reshape(a - b, (BM * BN,)))
    e = tl.expand_dims(tl.max(x, axis=1), (1, 2))                          # [BM, 1, 1]
    tl.store(o4 + tl.arange(0, BM * 8), tl.ravel(tl.broadcast_to(e, (BM, 2, 4))))
    y = x[:, None, :] + x.T.T[None, :, :].permute(1, 0, 2)                 # [BM, 1, BN] * 2
    tl.store(o5 + full, tl.view(y, (BM * BN,)))


def make_shapes(rng, param):
    m, n, bm, bn = param
    x = rng.integers(-50, 50, (m, n)).astype(np.float32)  # exact sums
    outs = [poison(bm * bn, np.float32) for _ in range(3)] + [poison(bm * 8, np.float32),
                                                              poison(bm * bn, np.float32)]

    def check(res):
        xp = np.zeros((bm, bn), np.float32)
        xp[:m, :n] = x
        want = [xp.T.ravel(), xp.reshape(bm, 2, bn // 2).transpose(2, 0, 1).ravel(),
                (xp.sum(1)[:, None] - xp.sum(0)[None, :]).ravel(),
                np.broadcast_to(xp.max(1)[:, None, None], (bm, 2, 4)).ravel(),
                (2 * xp).ravel()]
        for k, (got, w) in enumerate(zip(res, want)):
            assert_bits_equal(got, w.astype(np.float32), f"shape output {k + 1}")
    return Run((1,), [x] + outs + [m, n], {"BM": bm, "BN": bn}, [1, 2, 3, 4, 5], check)


# ---- join / split / interleave / cat on masked, non-power-of-two data --------------------------

@tilework.jit
def k_join_masked(a_ptr, b_ptr, j_ptr, s_ptr, i_ptr, c_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=0)
    b = tl.load(b_ptr + offs, mask=m, other=0)
    j = tl.join(a, b)                                       # [BLOCK, 2]
    k2 = tl.arange(0, 2)[None, :]
    tl.store(j_ptr + offs[:, None] * 2 + k2, j, mask=(offs[:, None] < n) & (k2 < 2))
    lo, hi = tl.split(tl.join(b, a) * 3)
    tl.store(s_ptr + offs, lo - hi, mask=m)
    io = pid * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(i_ptr + io, tl.interleave(a, b), mask=io < 2 * n)
    k = tl.arange(0, 2 * BLOCK)
    src = pid * BLOCK + k % BLOCK                           # where each element of cat came from
    tl.store(c_ptr + io, tl.cat(a, b, can_reorder=True), mask=src < n)


def make_join_masked(rng, param):
    dt, n = param
    block = 64
    grid = cdiv(n, block)
    a = (rng.integers(-1000, 1000, n)).astype(dt)
    b = (rng.integers(-1000, 1000, n)).astype(dt)
    outs = [poison(2 * n, dt), poison(n, dt), poison(2 * n, dt), poison(2 * grid * block, dt)]

    def check(res):
        j, s, il, ct = res
        assert_bits_equal(j, np.stack([a, b], -1).ravel(), "join")
        assert_bits_equal(s, ((b * 3) - (a * 3)).astype(dt), "split")
        assert_bits_equal(il, np.stack([a, b], -1).ravel(), "interleave")
        want = poison(2 * grid * block, dt)
        for p in range(grid):
            part = slice(p * block, min(n, (p + 1) * block))
            k = part.stop - part.start
            want[2 * p * block:2 * p * block + k] = a[part]
            want[(2 * p + 1) * block:(2 * p + 1) * block + k] = b[part]
        assert_bits_equal(ct, want, "cat (a then b, per program)")
    return Run((grid,), [a, b] + outs + [n], {"BLOCK": block}, [2, 3, 4, 5], check)


# ---- reductions: return_indices, keep_dims, axis=None ----------------------------------------

@tilework.jit
def k_reduce_kw(x_ptr, v_ptr, i_ptr, vk_ptr, ik_ptr, am_ptr, s_ptr, sk_ptr, M, N,
                BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    m = (r[:, None] < M) & (c[None, :] < N)
    offs = r[:, None] * N + c[None, :]
    hi = tl.load(x_ptr + offs, mask=m, other=-float("inf"))
    lo = tl.load(x_ptr + offs, mask=m, other=float("inf"))
    z = tl.load(x_ptr + offs, mask=m, other=0.0)
    v, i = tl.max(hi, axis=1, return_indices=True)                    # [BM]
    tl.store(v_ptr + r, v, mask=r < M)
    tl.store(i_ptr + r, i, mask=r < M)
    vk, ik = tl.min(lo, axis=0, return_indices=True, keep_dims=True)  # [1, BN]
    tl.static_assert(len(vk.shape) == 2 and vk.shape[0] == 1)
    tl.store(vk_ptr + c[None, :], vk, mask=c[None, :] < N)
    tl.store(ik_ptr + c[None, :], ik, mask=c[None, :] < N)
    am = tl.argmax(hi, axis=0, keep_dims=True) + tl.argmin(lo, 0)[None, :] * 1000
    tl.store(am_ptr + c[None, :], am, mask=c[None, :] < N)
    tl.store(s_ptr, tl.sum(z, axis=None))
    sk = tl.sum(z, axis=1, keep_dims=True)                           # [BM, 1]
    tl.store(sk_ptr + r[:, None], sk, mask=r[:, None] < M)


def make_reduce_kw(rng, param):
    m, n, bm, bn = param
    x = rng.permutation(m * n).astype(np.float32).reshape(m, n) - m * n // 2  # no ties
    outs = [poison(m, np.float32), poison(m, np.int32), poison(n, np.float32),
            poison(n, np.int32), poison(n, np.int32), poison(1, np.float32),
            poison(m, np.float32)]

    def check(res):
        v, i, vk, ik, am, s, sk = res
        assert_bits_equal(v, x.max(1), "max(axis=1)")
        assert_bits_equal(i, x.argmax(1).astype(np.int32), "max(return_indices=True)")
        assert_bits_equal(vk, x.min(0), "min(axis=0, keep_dims=True)")
        assert_bits_equal(ik, x.argmin(0).astype(np.int32), "min indices, keep_dims")
        assert_bits_equal(am, (x.argmax(0) + 1000 * x.argmin(0)).astype(np.int32),
                          "argmax keep_dims + argmin")
        assert_bits_equal(s, np.array([x.sum()], np.float32), "sum(axis=None)")
        assert_bits_equal(sk, x.sum(1).astype(np.float32), "sum(axis=1, keep_dims=True)")
    return Run((1,), [x] + outs + [m, n], {"BM": bm, "BN": bn}, list(range(1, 8)), check)


# ---- constexpr `if` prunes the dead branch before type checking; static_range ----------------

@tilework.jit
def _scaled(x, k: tl.constexpr):
    return x * k, k + 1


@tilework.jit
def k_constexpr_branches(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    if x_ptr.dtype.element_ty == tl.float32:
        y = x * 0.5                 # `x & 6` would not type-check here
    elif x_ptr.dtype.element_ty == tl.int32:
        y = x & 6                   # `x * 0.5` would be an fp32 tile here
    else:
        tl.static_assert(False, "never compiled")
    for k in tl.static_range(1, 4):
        y, j = _scaled(y, k)        # y * 1 * 2 * 3
        tl.static_assert(j == k + 1)
    tl.store(y_ptr + offs, y, mask=m)


def make_constexpr_branches(rng, param):
    dt, n = param
    x = (rng.integers(-100, 100, n)).astype(dt)
    y = poison(n + 2, dt)

    def check(res):
        want = (x * np.float32(0.5) * 6).astype(dt) if dt == np.float32 else (x & 6) * 6
        assert_bits_equal(res[0][:n], want.astype(dt), f"constexpr branch for {np.dtype(dt)}")
    return Run((cdiv(n, 64),), [x, y, n], {"BLOCK": 64}, [1], check)


# ---- the table --------------------------------------------------------------------------------

SIZES = [1, 100, 1000]
CASES = {
    "creation": Case(k_creation, make_creation, SIZES),
    "cast": Case(k_cast, make_cast, CAST_PARAMS),
    "int_ops": Case(k_int_ops, make_int_ops, [(d, n) for d in INT_TYPES for n in (77, 300)]),
    "float_ops": Case(k_float_ops, make_float_ops,
                      [(d, n) for d in FLOAT_TYPES for n in (77, 300)]),
    "float_mod": Case(k_float_mod, make_float_mod, [(d, 150) for d in FLOAT_TYPES]),
    "load_store_options": Case(k_load_store_options, make_load_store_options,
                               [(o, n) for o in LOAD_STORE_OPTIONS for n in (1, 300)]),
    "grid": Case(k_grid, make_grid, [(3, 2, 5), (1, 1, 1), (7, 3, 2)]),
    "hints": Case(k_hints, make_hints, [(1, 1), (37, 50), (64, 64), (100, 33)]),
    "shapes": Case(k_shapes, make_shapes, [(5, 7, 8, 8), (16, 16, 16, 16), (3, 30, 4, 32)]),
    "join_masked": Case(k_join_masked, make_join_masked,
                        [(np.float32, 100), (np.int16, 1), (np.int16, 150)]),
    "reduce_kw": Case(k_reduce_kw, make_reduce_kw, [(5, 7, 8, 8), (13, 37, 16, 64),
                                                    (1, 100, 1, 128)]),
    "constexpr_branches": Case(k_constexpr_branches, make_constexpr_branches,
                               [(np.float32, 100), (np.int32, 100), (np.int32, 1)]),
}


def _id(p):
    return "-".join(str(getattr(x, "__name__", x)) for x in (p if isinstance(p, tuple) else (p,)))


PARAMS = [pytest.param(name, p, id=f"{name}-{_id(p)}") for name, case in CASES.items()
          for p in case.params]


@pytest.mark.parametrize("name, param", PARAMS)
def test_interpreted(name, param):
    case = CASES[name]
    run = case.make(rng_for(name, param), param)
    run.check(run_interpreted(case.kernel, run))


# ---- a sample of the cases compiled for sm_80 and run on the CPU simulator of gpu_sim.py ------
# (the compiled code, layouts and all, checked without a GPU; the simulator cannot run inline
# PTX or library calls, e.g. fp16/fp32 division, which skip)

_NP_TO_TL = {np.dtype(k): getattr(tl, v) for k, v in (
    (np.bool_, "int1"), (np.int8, "int8"), (np.int16, "int16"), (np.int32, "int32"),
    (np.int64, "int64"), (np.uint8, "uint8"), (np.uint16, "uint16"), (np.uint32, "uint32"),
    (np.uint64, "uint64"), (np.float16, "float16"), (np.float32, "float32"),
    (np.float64, "float64"))}


def run_simulated(kernel, run: Run, target="sm_80"):
    import gpu_sim
    from tilework.compiler.driver import ASTSource, compile
    names = [p for p in kernel.arg_names if p not in run.constexprs]
    sig = {}
    for name, a in zip(names, run.args):
        if isinstance(a, np.ndarray):
            sig[name] = tl.pointer_type(_NP_TO_TL[a.dtype])
        else:
            sig[name] = tl.float32 if isinstance(a, float) else tl.int32
    ck = compile(ASTSource(kernel, sig, run.constexprs, {}), target, cache=False)
    try:
        gpu_sim.run(ck, run.grid, *run.args)
    except gpu_sim.Unsupported as e:
        pytest.skip(str(e))
    return [run.args[i] for i in run.outputs]


SIMULATED = [
    ("creation", 100), ("cast", ("int32", "float16", "to")), ("cast", ("float32", "uint8", "to")),
    ("cast", ("int64", "int1", "to")), ("cast", ("uint64", "float64", "to")),
    ("cast", ("int1", "int16", "to")), ("cast", ("float32", "int32", "bitcast")),
    ("cast", ("float32", "float16", "bf16")), ("int_ops", ("int8", 77)),
    ("int_ops", ("uint32", 300)), ("int_ops", ("int64", 77)), ("float_ops", ("float64", 77)),
    ("float_mod", ("float32", 150)), ("float_mod", ("float64", 150)),
    ("load_store_options", (LOAD_STORE_OPTIONS[3], 300)), ("grid", (3, 2, 5)),
    ("hints", (37, 50)), ("shapes", (5, 7, 8, 8)), ("join_masked", (np.int16, 150)),
    ("reduce_kw", (13, 37, 16, 64)),
    ("constexpr_branches", (np.int32, 100)),
]


@pytest.mark.parametrize("name, param", [pytest.param(n, p, id=f"{n}-{_id(p)}")
                                         for n, p in SIMULATED])
def test_compiled_simulated(name, param):
    case = CASES[name]
    run = case.make(rng_for(name, param), param)
    run.check(run_simulated(case.kernel, run))


# ---- compile-time printing (no GPU counterpart) -----------------------------------------------

@tilework.jit
def k_static_print(x_ptr, B: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, B))
    tl.static_print("static_print:", B, x.dtype, x.shape)
    tl.store(x_ptr + tl.arange(0, B), x + 1)


def test_static_print_when_compiling(capsys):
    from tilework.compiler.driver import ASTSource, compile
    src = ASTSource(k_static_print, {"x_ptr": tl.pointer_type(tl.float16)}, {"B": 16}, {})
    compile(src, "sm_80", cache=False)
    out = capsys.readouterr().out
    assert "static_print: 16 fp16" in out, out


def test_static_print_when_interpreting(capsys):
    x = np.zeros(16, np.float16)
    run_interpreted(k_static_print, Run((1,), [x], {"B": 16}, [0], None))
    assert "static_print: 16 fp16" in capsys.readouterr().out
    assert (x == 1).all()


# ---- `not` of a tile: elementwise (`== 0`), compiled and interpreted ---------------------------

@tilework.jit
def k_not_tile(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, not (tl.load(x_ptr + offs) > 0))


def test_not_of_a_tile_compiles_and_interprets_elementwise():
    """Compiled code computes the elementwise `not`; the interpreter runs the kernel
    rewritten to the same (runtime/interp_rewrite.py) rather than asking a tile for one
    truth value."""
    from tilework.compiler.driver import ASTSource, compile
    src = ASTSource(k_not_tile, {"x_ptr": tl.pointer_type(tl.int32),
                                 "y_ptr": tl.pointer_type(tl.int1)}, {"BLOCK": 16}, {})
    tile_ir = compile(src, "sm_80", cache=False).asm["tile"]
    assert "arith.cmpi eq" in tile_ir
    x = np.random.default_rng(7).integers(-5, 5, 16).astype(np.int32)
    y = np.zeros(16, np.bool_)
    tilework.jit(k_not_tile.fn, interpret=True)[(1,)](x, y, BLOCK=16)
    np.testing.assert_array_equal(y, ~(x > 0))
