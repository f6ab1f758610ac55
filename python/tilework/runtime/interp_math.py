"""Interpreter rows of the math family: numpy evaluations of its ops, added to
interpreter._OPS (one row per op name).

Each op returns its own dtype and rounds once, as the GPU does: the function is evaluated in
float64 and rounded to the dtype, i.e. the interpreter gives the correctly rounded fp32 result
(to within the float64 error) that the GPU approximates within the bounds documented per
target (docs/language.md).  fp16/bf16 operands (possible in hand-written IR; the frontend
rejects them for transcendental functions, as Triton does) round once too, as the GPU's
compute-in-fp32-and-round.  fp64 uses numpy's float64 functions (glibc quality, within 1
ulp).  `math.fma` rounds once, exactly.  (`arith.maxnumf`/`minnumf`, used by `tl.clamp`, are rows of the shape
family.)
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

_UNSIGNED = {np.dtype(np.int32): np.uint32, np.dtype(np.int64): np.uint64,
             np.dtype(np.uint32): np.uint32, np.dtype(np.uint64): np.uint64}


def _unary(f):
    """f on float64 values, rounded once to the dtype: fp32 (and the fp16/bf16 that the GPU
    computes in fp32) gets the correctly rounded result the GPU approximates, on every host
    (numpy's own float32 kernels differ between CPUs)."""
    def row(b, ops, rt, at):
        x = np.asarray(ops[0])
        return f(x.astype(np.float64)).astype(x.dtype)
    return row


def _rsqrt(x):
    return 1 / np.sqrt(x)


_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf(x):
    return _ERF(x).astype(np.float64)


def _round_to_odd(s, err):
    """`s` (float64, rounded to nearest) moved to the neighbour with an odd last bit when the
    exact value was s + err with err != 0: rounding that to any format of at most 51 bits
    of precision then rounds the exact value correctly (round-to-odd)."""
    bits = s.view(np.uint64)
    inexact = (err != 0) & np.isfinite(s) & ((bits & np.uint64(1)) == 0)
    toward = np.where(err > 0, np.inf, -np.inf)
    return np.where(inexact, np.nextafter(s, toward), s)


def _odd32(r, diff):
    """float32 `r` (rounded to nearest from r + diff) moved to its odd neighbour if inexact."""
    bits = r.view(np.uint32)
    inexact = (diff != 0) & np.isfinite(r) & ((bits & np.uint32(1)) == 0)
    toward = np.where(diff > 0, np.float32(np.inf), np.float32(-np.inf))
    return np.where(inexact, np.nextafter(r, toward), r).astype(np.float32)


def _fma64_exact(x, y, z):
    out = np.empty(np.shape(x), np.float64)
    for i, (a, c, d) in enumerate(zip(np.ravel(x), np.ravel(y), np.ravel(z))):
        a, c, d = float(a), float(c), float(d)
        naive = a * c + d
        if not (math.isfinite(a) and math.isfinite(c) and math.isfinite(d)):
            out.flat[i] = naive
            continue
        exact = Fraction(a) * Fraction(c) + Fraction(d)
        try:
            r = float(exact)
            if r == 0 and exact == 0:
                r = naive  # the sign of an exact zero follows IEEE (a*c + d in RN)
        except OverflowError:
            r = math.inf if exact > 0 else -math.inf
        out.flat[i] = r
    return out


def _fma(b, ops, rt, at):
    """x * y + z rounded once to the result dtype."""
    x, y, z = (np.asarray(o) for o in ops)
    if rt.np == np.float64:
        return _fma64_exact(x, y, z)
    x, y, z = (o.astype(np.float64) for o in (x, y, z))
    with np.errstate(all="ignore"):
        p = x * y                    # exact: at most 2 x 24 significant bits
        s = p + z
        bb = s - p                   # TwoSum: s + err == p + z exactly
        err = (p - (s - bb)) + (z - bb)
        err = np.where(np.isfinite(s), err, 0.0)
    s = _round_to_odd(s, err)
    if rt.bf16:  # the builder rounds float32 to bf16: keep the float32 rounded to odd too
        r = s.astype(np.float32)
        diff = s - r.astype(np.float64)
        return _odd32(r, diff)
    return s.astype(rt.np)


def _umulhi(b, ops, rt, at):
    x, y = np.asarray(ops[0]), np.asarray(ops[1])
    ut = _UNSIGNED[x.dtype]
    a, c = x.view(ut).astype(np.uint64), y.view(ut).astype(np.uint64)
    if ut == np.uint32:
        return ((a * c) >> np.uint64(32)).astype(np.uint32).view(x.dtype)
    m32, s32 = np.uint64(0xFFFFFFFF), np.uint64(32)
    al, ah, cl, ch = a & m32, a >> s32, c & m32, c >> s32
    t = al * cl
    m1 = ah * cl + (t >> s32)
    m2 = al * ch + (m1 & m32)
    return (ah * ch + (m1 >> s32) + (m2 >> s32)).view(x.dtype)


def _bit_rows(x):
    """`x`'s unsigned view and its width."""
    x = np.asarray(x)
    return x.view(_UNSIGNED[x.dtype]), x.dtype.itemsize * 8


def _ctpop(b, ops, rt, at):
    u, _ = _bit_rows(ops[0])
    return np.bitwise_count(u).astype(rt.np)


def _ctlz(b, ops, rt, at):
    u, w = _bit_rows(ops[0])
    out = np.full(u.shape, w, np.int64)  # ctlz(0) = the width
    for k in range(w):  # the highest set bit, from the bottom up
        out = np.where((u >> u.dtype.type(k)) & u.dtype.type(1) != 0, w - 1 - k, out)
    return out.astype(rt.np)


def _cttz(b, ops, rt, at):
    u, w = _bit_rows(ops[0])
    out = np.full(u.shape, w, np.int64)
    for k in reversed(range(w)):  # the lowest set bit, from the top down
        out = np.where((u >> u.dtype.type(k)) & u.dtype.type(1) != 0, k, out)
    return out.astype(rt.np)


def _bitreverse(b, ops, rt, at):
    u, w = _bit_rows(ops[0])
    one = u.dtype.type(1)
    out = np.zeros_like(u)
    for k in range(w):
        out |= ((u >> u.dtype.type(k)) & one) << u.dtype.type(w - 1 - k)
    return out.view(np.asarray(ops[0]).dtype)


def _byte_perm(b, ops, rt, at):
    x, y, s = (np.asarray(o).view(np.uint32).astype(np.uint64) for o in ops)
    wide = (y << np.uint64(32)) | x
    out = np.zeros(np.broadcast(x, y, s).shape, np.uint64)
    for n in range(4):
        sel = (s >> np.uint64(4 * n)) & np.uint64(7)
        out |= ((wide >> (sel * np.uint64(8))) & np.uint64(0xFF)) << np.uint64(8 * n)
    return out.astype(np.uint32).view(np.asarray(ops[0]).dtype)


def _inline_asm(b, ops, rt, at):
    raise NotImplementedError(
        "tl.inline_asm_elementwise (tile.inline_asm) cannot run in the interpreter: its "
        "assembly is GPU code (compile the kernel for a GPU target instead)")


ROWS = {
    "math.exp": _unary(np.exp),
    "math.exp2": _unary(np.exp2),
    "math.log": _unary(np.log),
    "math.log2": _unary(np.log2),
    "math.sin": _unary(np.sin),
    "math.cos": _unary(np.cos),
    "math.sqrt": _unary(np.sqrt),       # with or without afn: the correctly rounded root
    "math.rsqrt": _unary(_rsqrt),
    "math.erf": _unary(_erf),
    "math.floor": lambda b, ops, rt, at: np.floor(np.asarray(ops[0])),
    "math.ceil": lambda b, ops, rt, at: np.ceil(np.asarray(ops[0])),
    "math.absf": lambda b, ops, rt, at: np.abs(np.asarray(ops[0])),
    "math.absi": lambda b, ops, rt, at: np.abs(np.asarray(ops[0])),  # wraps at the minimum
    "math.fma": _fma,
    "tile.umulhi": _umulhi,
    "math.ctpop": _ctpop, "math.ctlz": _ctlz, "math.cttz": _cttz,
    "tile.bitreverse": _bitreverse, "tile.byte_perm": _byte_perm,
    "tile.inline_asm": _inline_asm,
}
