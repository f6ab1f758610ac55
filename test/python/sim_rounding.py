"""Directed rounding for the CPU stand-ins: exact references (fractions) of the IEEE roundings
down / up / toward zero, used by the tests (test_libdevice_round.py) and by gpu_sim, where the
NVIDIA one-instruction forms the libdevice functions emit (`add.rm.f32`, `fma.rp.f64`,
`cvt.rz.f32.s64`, ... as inline PTX) become calls of these (`rewrite`, `helpers`)."""
import ctypes
import re
from fractions import Fraction

import numpy as np


# ---- exact references --------------------------------------------------------------------------

def round_frac(v: Fraction, t, mode):
    """The exact value v rounded to dtype t in mode (a nonzero v; zeros are the caller's)."""
    big = Fraction(float(np.finfo(t).max))
    if v > big:
        return t(np.inf) if mode == "ru" else t(big)
    if v < -big:
        return t(-np.inf) if mode == "rd" else t(-big)
    c = t(float(v))
    while Fraction(float(c)) > v:
        c = np.nextafter(c, t(-np.inf))
    while np.isfinite(nxt := np.nextafter(c, t(np.inf))) and Fraction(float(nxt)) <= v:
        c = nxt
    # c = v rounded down
    up = mode == "ru" or (mode == "rz" and v < 0)
    if up and Fraction(float(c)) != v:
        c = np.nextafter(c, t(np.inf))
    return c


def _zero(neg):
    return -0.0 if neg else 0.0


def ref_op(op, mode, args, t):
    """op of float args (numpy scalars of t), rounded in mode."""
    with np.errstate(all="ignore"):
        a = [t(v) for v in args]
        nearest = {"add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1],
                   "mul": lambda: a[0] * a[1], "div": lambda: a[0] / a[1],
                   "rcp": lambda: t(1) / a[0], "sqrt": lambda: np.sqrt(a[0]),
                   "fma": lambda: t(np.float64(a[0]) * a[1] + a[2]) if t == np.float32
                   else a[0] * a[1] + a[2]}[op]()
    if not all(np.isfinite(a)) or not np.isfinite(nearest) and op in ("div", "rcp") and \
            any(v == 0 for v in a[1:] if op == "div") or (op == "rcp" and a[0] == 0):
        return t(nearest)  # inf and NaN operands, x/0: exact in every mode
    if op == "sqrt" and a[0] < 0:
        return t(np.nan)
    f = [Fraction(float(v)) for v in a]
    sb = [bool(np.signbit(v)) for v in a]
    if op in ("add", "sub"):
        y, ys = (f[1], sb[1]) if op == "add" else (-f[1], not sb[1])
        v = f[0] + y
        if v == 0:
            both = f[0] == 0 and y == 0 and sb[0] == ys
            return t(_zero(sb[0] if both else mode == "rd"))
    elif op == "mul":
        v = f[0] * f[1]
        if v == 0:
            return t(_zero(sb[0] != sb[1]))
    elif op in ("div", "rcp"):
        num, den, ns, ds = (f[0], f[1], sb[0], sb[1]) if op == "div" else (1, f[0], False, sb[0])
        v = num / den
        if v == 0:
            return t(_zero(ns != ds))
    elif op == "sqrt":
        if f[0] == 0:
            return a[0]
        v = f[0]
        c = round_frac(Fraction(float(np.sqrt(np.float64(a[0])))), t, "rd")
        # the root rounded down: the largest c with c*c <= v
        c = t(c)
        while Fraction(float(c)) ** 2 > v:
            c = np.nextafter(c, t(-np.inf))
        while np.isfinite(nxt := np.nextafter(c, t(np.inf))) and Fraction(float(nxt)) ** 2 <= v:
            c = nxt
        if mode == "ru" and Fraction(float(c)) ** 2 != v:
            c = np.nextafter(c, t(np.inf))
        return c
    elif op == "fma":
        p = f[0] * f[1]
        v = p + f[2]
        if v == 0:
            ps = sb[0] != sb[1]
            both = p == 0 and f[2] == 0 and ps == sb[2]
            return t(_zero(ps if both else mode == "rd"))
    return round_frac(v, t, mode)


# ---- gpu_sim: the inline PTX of directed rounding as host calls -------------------------------

MODE = {"rm": "rd", "rp": "ru", "rz": "rz"}
ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "rcp": 1, "sqrt": 1}
FLOAT = {"f32": (np.float32, "float", ctypes.c_float), "f64": (np.float64, "double",
                                                               ctypes.c_double)}
INT = {"s32": ("i32", ctypes.c_int32, 0), "u32": ("i32", ctypes.c_int32, 1 << 32),
       "s64": ("i64", ctypes.c_int64, 0), "u64": ("i64", ctypes.c_int64, 1 << 64),
       "f64": ("double", ctypes.c_double, None)}
_ARITH = re.compile(r'call (float|double) asm "(add|sub|mul|div|fma|rcp|sqrt)\.(rm|rp|rz)\.'
                    r'(f32|f64) [^"]*", "[^"]*"\(')
_CVT = re.compile(r'call (float|double) asm "cvt\.(rm|rp|rz)\.(f32|f64)\.(s32|u32|s64|u64|f64) '
                  r'[^"]*", "[^"]*"\(')


def rewrite(text: str) -> str:
    """Each directed-rounding asm call made a call of `sim_rnd_<op>_<mode>_<types>`."""
    decls = {}

    def arith(m):
        name = f"sim_rnd_{m[2]}_{m[3]}_{m[4]}"
        decls[name] = f"declare {m[1]} @{name}({', '.join([m[1]] * ARITY[m[2]])})"
        return f"call {m[1]} @{name}("

    def cvt(m):
        name = f"sim_rnd_cvt_{m[2]}_{m[3]}_{m[4]}"
        decls[name] = f"declare {m[1]} @{name}({INT[m[4]][0]})"
        return f"call {m[1]} @{name}("

    text = _CVT.sub(cvt, _ARITH.sub(arith, text))
    return text + "".join("\n" + d + "\n" for d in decls.values())


def _arith_cb(op, mode, ty):
    t, _, ct = FLOAT[ty]
    return ctypes.CFUNCTYPE(ct, *[ct] * ARITY[op])(
        lambda *a: float(ref_op(op, MODE[mode], [t(v) for v in a], t)))


def _cvt_value(v, mode, t, wrap):
    if wrap is None:  # double -> float
        if not np.isfinite(v) or v == 0:
            return float(np.float32(v))
        return float(round_frac(Fraction(v), t, MODE[mode]))
    if wrap and v < 0:
        v += wrap  # the unsigned value of the register
    return 0.0 if v == 0 else float(round_frac(Fraction(v), t, MODE[mode]))


def _cvt_cb(mode, dst, src):
    t, _, ct = FLOAT[dst]
    _, cs, wrap = INT[src]
    return ctypes.CFUNCTYPE(ct, cs)(lambda v: _cvt_value(v, mode, t, wrap))


def helpers() -> dict:
    """The host functions `rewrite`'s calls name (ctypes callbacks; keep them alive)."""
    out = {}
    for mode in MODE:
        for ty in FLOAT:
            for op in ARITY:
                out[f"sim_rnd_{op}_{mode}_{ty}"] = _arith_cb(op, mode, ty)
        for dst, src in (("f32", "s32"), ("f32", "u32"), ("f32", "s64"), ("f32", "u64"),
                         ("f64", "s64"), ("f64", "u64"), ("f32", "f64")):
            out[f"sim_rnd_cvt_{mode}_{dst}_{src}"] = _cvt_cb(mode, dst, src)
    return out


# ---- the SIMT emulator: fma rounded once --------------------------------------------------------

def fma_exact(x, y, z):
    """x*y + z rounded once to the operands' dtype (fp32 or fp64 arrays), as the hardware's
    fma: fp32 through fp64 with round-to-odd (the fp64 sum made odd where inexact, so its
    rounding to fp32 is the single rounding); fp64 through fractions."""
    if x.dtype == np.float32:
        p = x.astype(np.float64) * y.astype(np.float64)  # exact
        c = z.astype(np.float64)
        with np.errstate(all="ignore"):
            s = p + c
            t = s - p
            e = (p - (s - t)) + (c - t)  # TwoSum: p + c = s + e
        bits = s.view(np.uint64)
        odd = (e != 0) & np.isfinite(s) & ((bits & np.uint64(1)) == 0)
        s = np.where(odd, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
        return s.astype(np.float32)
    out = np.empty(x.shape, np.float64)
    for i, (a, b, c) in enumerate(zip(x.tolist(), y.tolist(), z.tolist())):
        with np.errstate(all="ignore"):
            naive = np.float64(a) * np.float64(b) + np.float64(c)
        if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
            out[i] = naive
            continue
        exact = Fraction(a) * Fraction(b) + Fraction(c)
        big = Fraction(float(np.finfo(np.float64).max))
        if exact == 0:
            out[i] = naive  # an exact zero's sign follows IEEE's sum
        elif abs(exact) > big:
            out[i] = round_frac(exact, np.float64, "ru" if exact > 0 else "rd") \
                if abs(exact) >= big + Fraction(2) ** 970 else np.sign(float(exact)) * big
        else:
            out[i] = float(exact)  # Fraction -> float rounds to nearest, ties to even
    return out
