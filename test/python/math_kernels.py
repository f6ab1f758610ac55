"""Kernels, inputs, references and ulp bounds shared by test_math.py (compile, interpreter, CPU
runs of the device expansions) and test_math_gpu.py (the same kernels on a GPU)."""
import math
from fractions import Fraction

import numpy as np

import tilework
import tilework.language as tl


@tilework.jit
def unary_kernel(x_ptr, y_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, getattr(tl.math, FN)(x), mask=mask)


@tilework.jit
def unary_2d_kernel(x_ptr, y_ptr, M, N, FN: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, getattr(tl, FN)(x), mask=mask)


@tilework.jit
def binary_kernel(x_ptr, y_ptr, o_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if FN == "fdiv_ieee":
        r = tl.fdiv(x, y, ieee_rounding=True)
    else:
        r = getattr(tl.math, FN)(x, y)
    tl.store(o_ptr + offs, r, mask=mask)


@tilework.jit
def ternary_kernel(x_ptr, y_ptr, z_ptr, o_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    if FN == "clamp_all":
        r = tl.clamp(x, y, z, propagate_nan=tl.PropagateNan.ALL)
    else:
        r = getattr(tl, FN)(x, y, z)
    tl.store(o_ptr + offs, r, mask=mask)


# ---- which dtypes each function takes (as Triton 3.6) ------------------------------------------
TRANSCENDENTAL = ("exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "rsqrt", "erf",
                  "floor", "ceil", "sigmoid")
UNARY_CASES = ([(f, d) for f in TRANSCENDENTAL for d in ("fp32", "fp64")]
               + [("sqrt_rn", "fp32")]
               + [("abs", d) for d in ("fp32", "fp64", "fp16", "bf16", "int8", "int32",
                                       "int64", "uint32")])
BINARY_CASES = ([("fdiv", d) for d in ("fp32", "fp64", "fp16", "bf16")]
                + [("fdiv_ieee", "fp32"), ("div_rn", "fp32")]
                + [("umulhi", d) for d in ("int32", "uint32", "int64", "uint64")]
                + [("cdiv", d) for d in ("int32", "int64")])
TERNARY_CASES = [(f, d) for f in ("fma", "clamp", "clamp_all")
                 for d in ("fp32", "fp64", "fp16", "bf16")]

NP = {"fp32": np.float32, "fp64": np.float64, "fp16": np.float16, "bf16": np.float32,
      "int8": np.int8, "int32": np.int32, "int64": np.int64, "uint32": np.uint32,
      "uint64": np.uint64}


def out_dtype(fn, d):
    """The result dtype: 16-bit floats divide in fp32 (fdiv), bf16 clamps in fp32."""
    if d in ("fp16", "bf16") and fn.startswith("fdiv"):
        return "fp32"
    if d == "bf16" and fn.startswith("clamp"):
        return "fp32"
    return d


# ---- accuracy bounds in ulp (docs/language.md has the same table) ------------------------------
# the interpreter: correctly rounded fp32 (f64 evaluation), numpy/glibc fp64
# sigmoid is Triton's three rounded steps, 1 / (1 + exp(-x)): exp's 0.5 ulp and the add's 0.5 ulp
# are each at most 2^-24 relative, so 1 + e is 2u off and the quotient 2 ulp + its own 0.5 (2.03
# seen at x = -16.65, where 1 + e straddles 2^24 and the result sits at the top of its binade)
INTERP_ULP = {"sigmoid": 2.5, ("rsqrt", "fp64"): 2.0,  # rsqrt fp64: 1 / sqrt, two roundings
              ("erf", "fp64"): 2.0}  # Python's math.erf: about 1.05 ulp
INTERP_ULP_DEFAULT = 1.0


def interp_bound(fn, d):
    if fn in EXACT or fn == "sqrt":
        return 0.5
    return INTERP_ULP.get((fn, d), INTERP_ULP.get(fn, INTERP_ULP_DEFAULT))
# NVIDIA GPUs: the lowering of lowering/rules/math.py (measured on an H200 with 200k inputs)
GPU_ULP = {
    ("exp", "fp32"): None,   # ex2.approx.f32(x log2 e), as Triton: grows with |x| (gpu_bound)
    ("sigmoid", "fp32"): None,
    ("exp2", "fp32"): 2.5, ("sqrt", "fp32"): 2.0, ("rsqrt", "fp32"): 3.0,
    ("rsqrt", "fp64"): 2.0, ("sin", "fp32"): 2.0, ("cos", "fp32"): 2.0,
    ("sin", "fp64"): 2.0, ("cos", "fp64"): 2.0, ("erf", "fp32"): 2.0, ("erf", "fp64"): 2.0,
    ("sigmoid", "fp64"): 3.0,
}
GPU_ULP_DEFAULT = 1.0
EXACT = ("floor", "ceil", "abs", "sqrt_rn", "fdiv", "fdiv_ieee", "div_rn", "fma", "clamp",
         "clamp_all")


def flushed(fn, d, exact):
    """The exact results as the GPU lowering defines them: fp32 exp2 is Triton's
    ex2.approx.ftz.f32, whose subnormal results are 0 (exp keeps the non-ftz form)."""
    if (fn, d) != ("exp2", "fp32"):
        return exact
    return np.where(np.abs(exact) < np.longdouble(2.0) ** -126, np.longdouble(0), exact)


def gpu_bound(fn, d, x, src=None):
    """The per-element ulp bound on a GPU (an array when it depends on x); `src`: the
    operands' dtype where it differs from the result's `d`."""
    if fn == "fdiv" and d != "fp64" and src not in ("fp16", "bf16"):
        # `/` and tl.fdiv of fp32 operands: div.full.f32, as Triton.  The PTX ISA says 2 ulp;
        # an H200 gave 2.01 on about 1 in 10^6 random quotients (as exp2's 2.06 under 2.5)
        return 2.5
    if fn in EXACT or (fn == "sqrt" and d == "fp64"):
        return 0.5
    if (fn, d) in (("exp", "fp32"), ("sigmoid", "fp32")):  # 63.8 ulp at most, measured
        return np.minimum(3.5 + 1.25 * np.abs(x.astype(np.float64)), 67.0)
    return GPU_ULP.get((fn, d), GPU_ULP_DEFAULT)


# ---- inputs -------------------------------------------------------------------------------------

def bf16_round(x):
    """float32 values rounded to bf16 (kept as float32)."""
    b = np.asarray(x, np.float32).view(np.uint32)
    r = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(x), np.float32(np.nan), r.view(np.float32))


def specials(d):
    dt = NP[d]
    if np.dtype(dt).kind != "f":
        info = np.iinfo(dt)
        return np.array([0, 1, info.max, info.min, info.min + 1, info.max - 1], dt)
    fi = np.finfo(dt)
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, fi.max, -fi.max, fi.tiny,
         fi.smallest_subnormal, -fi.smallest_subnormal]
    return np.array(v, dt)


def inputs(fn, d, n, rng):
    """Random inputs over the function's meaningful range (negatives, tiny, large) followed
    by special values."""
    dt = NP[d]
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        if fn == "cdiv":  # no specials: x + div - 1 wraps at the extremes
            return rng.integers(-10 ** 6, 10 ** 6, n).astype(dt)
        else:
            x = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
        return np.concatenate([x.astype(dt), specials(d)])
    f64 = d == "fp64"
    big = 709.0 if f64 else 88.0
    mx = int(np.log10(float(np.finfo(dt).max)))  # 307, 38, 4 (fp16); bf16 as fp32
    q = n // 3 + 1
    if fn == "exp":
        x = [rng.uniform(-big - 20, big + 2, q), rng.uniform(-2, 2, q), rng.standard_normal(q) * 1e-5]
    elif fn == "sigmoid":
        x = [rng.uniform(-big + 9, big, q), rng.uniform(-5, 5, q), rng.standard_normal(q) * 1e-5]
    elif fn == "exp2":
        x = [rng.uniform(-1.5 * big - 30, 1.5 * big, q), rng.uniform(-1, 1, 2 * q)]
    elif fn in ("log", "log2", "sqrt", "sqrt_rn", "rsqrt"):
        x = [10.0 ** rng.uniform(-mx - 8, mx, q), rng.uniform(0.5, 1.5, q),
             1 + rng.standard_normal(q) * 1e-4, -rng.uniform(0, 10, 8)]
    elif fn in ("sin", "cos"):
        x = [rng.uniform(-10, 10, q), rng.uniform(-1e5, 1e5, q),
             rng.choice([-1.0, 1.0], q) * 10.0 ** rng.uniform(-10, mx, q)]
    elif fn == "erf":
        x = [rng.uniform(-7, 7, q), rng.standard_normal(q) * 1e-3, rng.uniform(0.8, 1.0, q)]
    elif fn in ("floor", "ceil"):
        x = [rng.uniform(-1e8, 1e8, q), rng.standard_normal(2 * q) * 10]
    else:
        x = [rng.standard_normal(2 * q) * 4, rng.choice([-1.0, 1.0], q) * 10.0 ** rng.uniform(-mx, mx / 2, q)]
    x = np.concatenate(x)[:n].astype(dt if d != "bf16" else np.float32)
    if d == "bf16":
        x = bf16_round(x)
    return np.concatenate([x, specials(d) if d != "bf16" else bf16_round(specials("fp32"))])


# ---- references ---------------------------------------------------------------------------------

def _mp():
    import mpmath
    mpmath.mp.dps = 40
    return mpmath


def reference(fn, x, *rest):
    """The exact (longdouble, or mpmath for fp64 sin/cos/erf and huge arguments) result."""
    xl = x.astype(np.longdouble)
    f64 = x.dtype == np.float64
    with np.errstate(all="ignore"):
        if fn in ("exp", "exp2", "log", "log2", "sqrt", "sqrt_rn"):
            return getattr(np, fn.replace("_rn", ""))(xl)
        if fn == "rsqrt":
            return 1 / np.sqrt(xl)
        if fn == "sigmoid":
            return 1 / (1 + np.exp(-xl))
        if fn in ("floor", "ceil", "abs"):
            return getattr(np, fn)(xl)
        if fn in ("sin", "cos"):
            out = np.sin(xl) if fn == "sin" else np.cos(xl)
            slow = np.isfinite(x) & ((np.abs(x) > 1e15) | f64)  # longdouble: 64-bit only
            if slow.any():
                mp = _mp()
                f = getattr(mp, fn)
                out[slow] = [np.longdouble(str(f(mp.mpf(float(v))))) for v in x[slow]]
            return out
        if fn == "erf":
            if not f64:
                return np.array([math.erf(float(v)) for v in x], np.longdouble)
            mp = _mp()
            return np.array([np.longdouble(str(mp.erf(mp.mpf(float(v))))) if np.isfinite(v)
                             else np.longdouble(math.erf(float(v))) for v in x])
    raise KeyError(fn)


def exact_fma(x, y, z):
    """x * y + z rounded once to float64 (Fraction arithmetic), as a longdouble array."""
    out = []
    for a, b, c in zip(x.astype(np.float64), y.astype(np.float64), z.astype(np.float64)):
        a, b, c = float(a), float(b), float(c)
        if not all(map(math.isfinite, (a, b, c))):
            out.append(a * b + c)
            continue
        v = Fraction(a) * Fraction(b) + Fraction(c)
        try:
            out.append(float(v) if v != 0 else a * b + c)
        except OverflowError:
            out.append(math.inf if v > 0 else -math.inf)
    return np.array(out, np.float64)


def ulp_error(y, exact, d):
    """|y - exact| in ulps of `d` at the exact value; where the exact value rounds to inf or
    nan, y must equal the rounded value (else inf)."""
    dt = {"fp32": np.float32, "fp64": np.float64, "fp16": np.float16, "bf16": np.float32}[d]
    info = np.finfo(dt)
    nmant = 7 if d == "bf16" else info.nmant
    ex = np.asarray(exact, np.longdouble)
    with np.errstate(all="ignore"):
        rd = ex.astype(dt)
        if d == "bf16":
            rd = bf16_round(rd)
    y = np.asarray(y)
    fin = np.isfinite(rd)
    err = np.zeros(y.shape)
    a = np.abs(ex[fin]).astype(np.float64)
    tiny = float(info.tiny)
    e = np.maximum(np.floor(np.log2(np.maximum(a, tiny))), np.log2(tiny))
    ulp = np.exp2(e - nmant).astype(np.longdouble)
    with np.errstate(all="ignore"):
        err[fin] = (np.abs(y[fin].astype(np.longdouble) - ex[fin]) / ulp).astype(np.float64)
    err[fin & ~np.isfinite(y)] = np.inf
    same = (y == rd) | (np.isnan(y) & np.isnan(rd))
    err[~fin & ~same] = np.inf
    return err
