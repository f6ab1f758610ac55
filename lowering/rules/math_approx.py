"""Target-independent expansions of the math functions into arith/llvm ops on scalars.

Neither target links a math library (no libdevice, no ocml), so functions without a suitable
hardware instruction are computed here: range reduction plus a polynomial, with explicit FMAs
(`llvm.fma`) wherever exactness matters, so that the result does not depend on whether
the backend contracts a multiply and an add.  Every function takes and returns one scalar of
f32 or f64; `lowering/rules/math.py` applies them per element and picks, per target, between
these and hardware instructions.

Coefficients are near-minimax fits (weighted least squares with Lawson iterations in mpmath,
60 digits), rounded to the format; the fit error is noted beside each table.
`test/python/test_math.py` JIT-compiles every expansion for the host CPU with llvmlite and
checks it against mpmath-exact values over sweeps that include the hard cases (arguments near
multiples of pi/2, subnormals, overflow and underflow thresholds, inf, nan, -0).

Bounds checked that way (max ulp against the exact value; measured maxima in parentheses,
f32/f64): exp 1 (0.83/0.83), exp2 1 (0.86/0.86), log 1 (0.90/0.77), log2 1 (0.91/0.71),
sin/cos 2 (1.47/1.33; f64 beyond |x| = 2**27 the Payne-Hanek fraction keeps 64 bits: 2 ulp
plus 2**-62 absolute), erf 2 (1.00/0.92).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import scf

# ---- coefficient tables (lowest degree first) ------------------------------------------------
# e**r on |r| <= ln2/2 (fit error 0.03 ulp f32, 0.02 ulp f64)
EXP32 = (1.0, 1.0, 0.5, 0.1666666567325592, 0.041666220873594284, 0.008333553560078144,
         0.001394855324178934, 0.00019779708236455917)
EXP64 = (1.0, 1.0, 0.5, 0.16666666666666702, 0.04166666666666595, 0.008333333333310058,
         0.001388888888913578, 0.00019841269908203336, 2.4801586925408447e-05,
         2.75572258032388e-06, 2.755756678946938e-07, 2.5114613552636157e-08,
         2.0834060754415928e-09)
# 2**r on |r| <= 1/2 (0.16 ulp)
EXP2_64 = (1.0, 0.6931471805599453, 0.24022650695910072, 0.055504108664821694,
           0.009618129107628312, 0.0013333558146391203, 0.00015403530393655424,
           1.5252733855514147e-05, 1.3215486589698e-06, 1.0178051504998548e-07,
           7.0549749997013725e-09, 4.456629917614897e-10, 2.5625919575723645e-11)
# (log1p(f) - f) / f**2 and (log2(1+f) - f*log2(e)) / f**2 on |f| <= 1/3 (relative 6e-8, 8e-8)
LOG32 = (-0.5, 0.33333268761634827, -0.24999821186065674, 0.20007510483264923,
         -0.166789710521698, 0.14050324261188507, -0.12206298112869263, 0.13779160380363464,
         -0.12796902656555176)
LOG2_32 = (-0.7213475108146667, 0.4808974266052246, -0.36067116260528564, 0.2886473536491394,
           -0.24062669277191162, 0.2027033269405365, -0.17609965801239014, 0.1987912505865097,
           -0.18462029099464417)
# (log((1+s)/(1-s)) - 2s) / s**3 in z = s**2, z <= 0.04 (0.5 ulp: the rounding of 2/3)
LOG64 = (0.6666666666666666, 0.4000000000000801, 0.2857142856724704, 0.22222223052681944,
         0.1818173731733224, 0.15388879119215834, 0.13209502857404787, 0.1361049481981249)
# (sin r - r) / r**3 and (cos r - 1) / r**2 in s = r**2, |r| <= pi/4 + 1e-3
SIN32 = (-0.1666666716337204, 0.008333331905305386, -0.00019840075401589274,
         2.7248652259004302e-06)
COS32 = (-0.5, 0.04166664928197861, -0.0013887573732063174, 2.4461969587719068e-05)
SIN64 = (-0.16666666666666666, 0.008333333333333331, -0.00019841269841264968,
         2.7557319219266098e-06, -2.5052106208003345e-08, 1.6058527866462213e-10,
         -7.586481929045744e-13)
COS64 = (-0.5, 0.04166666666666664, -0.0013888888888880563, 2.480158729353796e-05,
         -2.755731551505568e-07, 2.087587896288609e-09, -1.136755772300497e-11)
# erf(x)/x - 1 in s = x**2, |x| <= 7/8 (0.27 ulp f32, 0.12 ulp f64)
ERF32_SMALL = (0.12837915122509003, -0.3761255741119385, 0.11282532662153244,
               -0.026794252917170525, 0.005036316346377134, -0.0006224745302461088)
ERF64_SMALL = (0.1283791670955126, -0.3761263890318374, 0.11283791670954373,
               -0.026866170644946407, 0.005223977623099268, -0.0008548326848116851,
               0.0001205532465387683, -1.4925389450081898e-05, 1.645664282891375e-06,
               -1.6289585404252206e-07, 1.4124662491039575e-08, -8.670751885993279e-10)
# f32: log(erfc(7/8 + u)), 0 <= u <= 3.125 (0.18 ulp of erf)
ERF32_TAIL = (-1.5328243970870972, -2.4302196502685547, -0.8265407681465149,
              -0.04690416157245636, 0.011357000097632408, -0.0022198203951120377,
              0.0003003689053002745, -2.013304765569046e-05)
# f64: erfc(a + u) * exp((a + u)**2) on [a, b) = [7/8, 3/2), [3/2, 5/2), [5/2, 6) (0.13 ulp)
ERF64_PIECES = ((0.875, 1.5, 2.5), (
    (0.464311583202669, -0.3158338964908397, 0.18795692377293505, -0.10091439211499967,
     0.049828415068677696, -0.022925807818145977, 0.009922743752507552, -0.004069336379382679,
     0.0015896269719949722, -0.000592506163758973, 0.00020846190839355169,
     -6.591824285654855e-05, 1.6361003812462635e-05, -2.275010471014063e-06),
    (0.3215854164543175, -0.16362291773254467, 0.07615103985421472, -0.03293090525958047,
     0.01337734030335076, -0.0051459513090243506, 0.0018860964711437556,
     -0.0006617707378453235, 0.00022285070210845105, -7.172383447736376e-05,
     2.151203580671234e-05, -5.59229057849002e-06, 1.0798412033616478e-06,
     -1.1043695282868376e-07),
    (0.21080636406114342, -0.07434734678973484, 0.024937997083033965, -0.008001569299361515,
     0.0024670358695105224, -0.00073358469607507, 0.0002109940401823114,
     -5.879871985919681e-05, 1.5831472513995445e-05, -4.046116284737357e-06,
     9.328190306186096e-07, -1.7540525474050166e-07, 2.2748293889743644e-08,
     -1.4581779156832141e-09)))

# 2/pi in 64-bit words (bits 1..1280 after the binary point), for Payne-Hanek reduction
TWO_OVER_PI = (
    0xa2f9836e4e441529, 0xfc2757d1f534ddc0, 0xdb6295993c439041, 0xfe5163abdebbc561,
    0xb7246e3a424dd2e0, 0x06492eea09d1921c, 0xfe1deb1cb129a73e, 0xe88235f52ebb4484,
    0xe99c7026b45f7e41, 0x3991d639835339f4, 0x9c845f8bbdf9283b, 0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f, 0x6d367ecf27cb09b7, 0x4f463f669e5fea2d, 0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea, 0x6bfb5fb11f8d5d08)
PIO2_2M64 = 8.515303950216386e-20  # pi/2 * 2**-64

# per format: bits, mantissa bits, bias, (ln2 hi, lo), pi/2 in 3 parts, Cody-Waite limit
_FMT = {
    "f32": dict(bits=32, mant=23, bias=127, ln2=(0.693145751953125, 1.428606765330187e-06),
                pio2=(1.5707963705062866, -4.371138828673793e-08, -1.7151245100058819e-15),
                cw_limit=105615.0, inv_ln2=1.4426950408889634),
    "f64": dict(bits=64, mant=52, bias=1023, ln2=(0.6931471803691238, 1.9082149292705877e-10),
                pio2=(1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33),
                cw_limit=2.0 ** 27, inv_ln2=1.4426950408889634),
}


def call_intrinsic(name: str, operands: list, rtype: ir.Type, fastmath: str | None = None):
    """`llvm.call_intrinsic "<name>"` (overloads resolved from the types).  The typed
    `llvm.intr.*` ops of exp2, fabs, floor, roundeven, sqrt, ... are not used: the
    convert-gpu-to-nvvm/-rocdl passes declare them illegal (to make them library calls)."""
    attrs = {"intrin": ir.StringAttr.get(name),
             "op_bundle_sizes": ir.DenseI32ArrayAttr.get([]),
             "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(operands), 0])}
    if fastmath:
        attrs["fastmathFlags"] = ir.Attribute.parse(f"#llvm.fastmath<{fastmath}>")
    return ir.Operation.create("llvm.call_intrinsic", results=[rtype], operands=operands,
                               attributes=attrs).results[0]


class Emitter:
    """Creates scalar arith/llvm/scf ops of float type `ty` at the current insertion point."""

    def __init__(self, ty: ir.Type):
        self.ty = ty
        self.name = str(ty)
        self.fmt = _FMT[self.name]
        self.ity = ir.IntegerType.get_signless(self.fmt["bits"])
        self.i1 = ir.IntegerType.get_signless(1)
        self.i32 = ir.IntegerType.get_signless(32)
        self.i64 = ir.IntegerType.get_signless(64)
        self.f64 = ir.F64Type.get()

    def op(self, name, operands, rtype, attrs=None):
        return ir.Operation.create(name, results=[rtype], operands=list(operands),
                                   attributes=attrs or {}).results[0]

    # constants
    def c(self, v, ty=None):
        ty = ty or self.ty
        return self.op("arith.constant", [], ty, {"value": ir.FloatAttr.get(ty, float(v))})

    def ci(self, v, ty=None):
        ty = ty or self.ity
        bits = ir.IntegerType(ty).width
        v = int(v) & ((1 << bits) - 1)
        if v >= 1 << (bits - 1):
            v -= 1 << bits
        return self.op("arith.constant", [], ty, {"value": ir.IntegerAttr.get(ty, v)})

    # float arithmetic
    def _f2(self, name, a, b):
        return self.op(name, [a, b], a.type)

    def add(self, a, b):
        return self._f2("arith.addf", a, b)

    def sub(self, a, b):
        return self._f2("arith.subf", a, b)

    def mul(self, a, b):
        return self._f2("arith.mulf", a, b)

    def div(self, a, b):
        return self._f2("arith.divf", a, b)

    def neg(self, a):
        return self.op("arith.negf", [a], a.type)

    def fma(self, a, b, c):
        return self.intr("fma", a, b, c)

    def intr(self, name, *args):
        return call_intrinsic(f"llvm.{name}", list(args), args[0].type)

    def horner(self, x, coeffs):
        """sum coeffs[i] * x**i, by FMAs; coefficients may be values (per-lane tables)."""
        cs = [c if isinstance(c, ir.Value) else self.c(c, x.type) for c in coeffs]
        p = cs[-1]
        for c in reversed(cs[:-1]):
            p = self.fma(p, x, c)
        return p

    def cmp(self, pred, a, b):
        preds = {"oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "one": 6, "ord": 7,
                 "ueq": 8, "ugt": 9, "uge": 10, "ult": 11, "ule": 12, "une": 13, "uno": 14}
        return self.op("arith.cmpf", [a, b], self.i1,
                       {"predicate": ir.IntegerAttr.get(self.i64, preds[pred])})

    def sel(self, c, a, b):
        return self.op("arith.select", [c, a, b], a.type)

    # integers
    def icmp(self, pred, a, b):
        preds = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5, "ult": 6, "ule": 7,
                 "ugt": 8, "uge": 9}
        return self.op("arith.cmpi", [a, b], self.i1,
                       {"predicate": ir.IntegerAttr.get(self.i64, preds[pred])})

    def i(self, name, a, b):
        return self.op(f"arith.{name}", [a, b], a.type)

    def bits(self, x):
        return self.op("arith.bitcast", [x], self.ity)

    def from_bits(self, i):
        return self.op("arith.bitcast", [i], self.ty)

    def cast(self, name, x, ty):
        return self.op(f"arith.{name}", [x], ty)

    def if_(self, cond, then_fn, else_fn, types):
        op = scf.IfOp(cond, list(types), has_else=True)
        with ir.InsertionPoint(op.then_block):
            scf.YieldOp(list(then_fn()))
        with ir.InsertionPoint(op.else_block):
            scf.YieldOp(list(else_fn()))
        return list(op.results)

    # composite helpers
    def pow2i(self, k):
        """2**k for an integer value k in the normal exponent range."""
        f = self.fmt
        return self.from_bits(self.i("shli", self.i("addi", k, self.ci(f["bias"])),
                                     self.ci(f["mant"])))

    def scale(self, p, k):
        """p * 2**k for |k| up to about twice the exponent range (two exact factors, so that
        overflow gives inf and underflow rounds once into the subnormals)."""
        k1 = self.i("shrsi", k, self.ci(1))
        return self.mul(self.mul(p, self.pow2i(k1)), self.pow2i(self.i("subi", k, k1)))

    def isnan(self, x):
        return self.cmp("uno", x, x)


# ---- exp ---------------------------------------------------------------------------------------

def exp(e: Emitter, x):
    """e**x within 1 ulp: x = k ln2 + r (Cody-Waite, |r| <= ln2/2), e**r by a polynomial,
    scaled by 2**k."""
    f = e.fmt
    lo, hi = (-110.0, 89.0) if e.name == "f32" else (-760.0, 710.0)  # past 0 and inf
    xc = e.intr("minnum", e.intr("maxnum", x, e.c(lo)), e.c(hi))  # nan: see below
    k = e.intr("roundeven", e.mul(xc, e.c(f["inv_ln2"])))
    r = e.fma(k, e.c(-f["ln2"][0]), xc)
    r = e.fma(k, e.c(-f["ln2"][1]), r)
    p = e.horner(r, EXP32 if e.name == "f32" else EXP64)
    res = e.scale(p, e.cast("fptosi", k, e.ity))
    return e.sel(e.isnan(x), x, res)


def exp2(e: Emitter, x):
    """2**x within 1 ulp (f64): x = k + r, |r| <= 1/2, 2**r by a polynomial."""
    lo, hi = (-155.0, 130.0) if e.name == "f32" else (-1080.0, 1030.0)
    xc = e.intr("minnum", e.intr("maxnum", x, e.c(lo)), e.c(hi))
    k = e.intr("roundeven", xc)
    r = e.sub(xc, k)
    if e.name == "f32":  # 2**r = e**(r ln2) with r ln2 to ~f32 precision
        p = e.horner(e.mul(r, e.c(0.6931471805599453)), EXP32)
    else:
        p = e.horner(r, EXP2_64)
    res = e.scale(p, e.cast("fptosi", k, e.ity))
    return e.sel(e.isnan(x), x, res)


# ---- log ---------------------------------------------------------------------------------------

def _log_reduce(e: Emitter, x):
    """x = 2**k * m with m in [2/3, 4/3): returns (f = m - 1, k as a float)."""
    f = e.fmt
    tiny = e.cmp("olt", x, e.c(2.0 ** (1 - f["bias"])))  # subnormals: scale up first
    shift = f["mant"] + 1
    xs = e.sel(tiny, e.mul(x, e.c(2.0 ** shift)), x)
    kadj = e.sel(tiny, e.c(-float(shift)), e.c(0.0))
    two_thirds = 0x3F2AAAAB if e.name == "f32" else 0x3FE5555555555555
    t = e.i("subi", e.bits(xs), e.ci(two_thirds))
    ki = e.i("shrsi", t, e.ci(f["mant"]))
    m = e.from_bits(e.i("subi", e.bits(xs), e.i("shli", ki, e.ci(f["mant"]))))
    return e.sub(m, e.c(1.0)), e.add(e.cast("sitofp", ki, e.ty), kadj)


def _log_special(e: Emitter, x, res):
    """log of 0 is -inf, of x < 0 nan, of +inf +inf, of nan nan."""
    ok = e.i("andi", e.cmp("ogt", x, e.c(0.0)), e.cmp("olt", x, e.c(float("inf"))))
    other = e.sel(e.cmp("oeq", x, e.c(0.0)), e.c(float("-inf")),
                  e.sel(e.cmp("olt", x, e.c(0.0)), e.c(float("nan")), e.add(x, x)))
    return e.sel(ok, res, other)


def _log1p_64(e: Emitter, f):
    """(hi, lo) parts of log1p(f) for |f| <= 1/3 as fdlibm: f - hfsq + s (hfsq + R)."""
    s = e.div(f, e.add(e.c(2.0), f))
    z = e.mul(s, s)
    r = e.mul(z, e.horner(z, LOG64))
    hfsq = e.mul(e.mul(e.c(0.5), f), f)
    return hfsq, s, r


def log(e: Emitter, x):
    f, k = _log_reduce(e, x)
    ln2hi, ln2lo = e.fmt["ln2"]
    if e.name == "f32":
        q = e.horner(f, LOG32)
        r = e.fma(q, e.mul(f, f), f)                    # log1p(f)
        r = e.fma(k, e.c(ln2lo), r)
        res = e.fma(k, e.c(ln2hi), r)
    else:
        hfsq, s, rr = _log1p_64(e, f)
        # k ln2hi + (f - (hfsq - (s (hfsq + R) + k ln2lo)))
        t = e.fma(s, e.add(hfsq, rr), e.mul(k, e.c(ln2lo)))
        res = e.fma(k, e.c(ln2hi), e.sub(f, e.sub(hfsq, t)))
    return _log_special(e, x, res)


def log2(e: Emitter, x):
    f, k = _log_reduce(e, x)
    if e.name == "f32":
        chi, clo = 1.4426950216293335, 1.925963033500011e-08   # log2(e) = chi + clo
        hi = e.mul(f, e.c(chi))
        lo = e.add(e.fma(f, e.c(chi), e.neg(hi)), e.mul(f, e.c(clo)))
        lo = e.fma(e.horner(f, LOG2_32), e.mul(f, f), lo)
        w = e.add(k, hi)                                    # k + hi + lo, by Fast2Sum
        res = e.add(w, e.add(e.add(e.sub(k, w), hi), lo))
    else:  # fdlibm's e_log2.c: log1p(f) split so that hi * ivln2hi is exact
        ivhi, ivlo = 1.4426950407214463, 1.6751713164886512e-10
        hfsq, s, rr = _log1p_64(e, f)
        hi = e.sub(f, hfsq)
        hi = e.from_bits(e.i("andi", e.bits(hi), e.ci(-(1 << 32))))
        lo = e.add(e.sub(e.sub(f, hi), hfsq), e.mul(s, e.add(hfsq, rr)))
        vhi = e.mul(hi, e.c(ivhi))
        vlo = e.add(e.mul(e.add(lo, hi), e.c(ivlo)), e.mul(lo, e.c(ivhi)))
        w = e.add(k, vhi)
        vlo = e.add(vlo, e.add(e.sub(k, w), vhi))
        res = e.add(vlo, w)
    return _log_special(e, x, res)


# ---- sin, cos ----------------------------------------------------------------------------------

def _payne_hanek(e: Emitter, ax):
    """(j mod 4 as i32, r) with |ax| * 2/pi = j + r * 2/pi, |r| <= pi/4, for finite ax >= 1,
    by multiplying the integer significand with a 192-bit window of 2/pi (64-bit limbs)."""
    f = e.fmt
    i64 = e.i64
    b = e.bits(ax)
    bexp = e.i("shrui", b, e.ci(f["mant"]))
    m = e.i("ori", e.i("andi", b, e.ci((1 << f["mant"]) - 1)), e.ci(1 << f["mant"]))
    big_e = e.i("subi", bexp, e.ci(f["bias"] + f["mant"]))       # ax = m * 2**E
    if e.name == "f32":
        m, big_e = e.cast("extui", m, i64), e.cast("extsi", big_e, i64)
    em2 = e.i("subi", big_e, e.ci(2, i64))
    idx = e.i("addi", e.i("shrsi", em2, e.ci(6, i64)), e.ci(1, i64))  # window start word + 1
    t = e.i("andi", em2, e.ci(63, i64))                              # left shift, 0..63
    nwords = 3 + (2 if e.name == "f32" else 16)                      # k + 1 in 0..2 / 0..16
    table = (0,) + TWO_OVER_PI

    def word(j):  # table[idx + j], by a select chain (no memory)
        w = e.ci(table[j], i64)
        for n in range(1, nwords - 2):
            w = e.sel(e.icmp("eq", idx, e.ci(n, i64)), e.ci(table[n + j], i64), w)
        return w

    def mul_wide(a, c):
        op = ir.Operation.create("arith.mului_extended", results=[i64, i64], operands=[a, c])
        return op.results[0], op.results[1]

    a_lo, _ = mul_wide(m, word(0))
    b_lo, b_hi = mul_wide(m, word(1))
    c_lo, c_hi = mul_wide(m, word(2))
    l1 = e.i("addi", c_hi, b_lo)
    carry = e.cast("extui", e.icmp("ult", l1, c_hi), i64)
    l2 = e.i("addi", e.i("addi", b_hi, a_lo), carry)
    one, inv = e.ci(1, i64), e.i("subi", e.ci(63, i64), t)

    def shl2(hi, lo):  # (hi:lo << t) high word, for t in 0..63
        return e.i("ori", e.i("shli", hi, t), e.i("shrui", e.i("shrui", lo, one), inv))

    h = shl2(l2, l1)
    mid = shl2(l1, c_lo)
    j = e.i("shrui", h, e.ci(62, i64))
    frac = e.i("ori", e.i("shli", h, e.ci(2, i64)), e.i("shrui", mid, e.ci(62, i64)))
    # a fraction >= 1/2 rounds j up; the signed fraction is then negative, as wanted
    j = e.i("addi", j, e.cast("extui", e.icmp("slt", frac, e.ci(0, i64)), i64))
    r = e.mul(e.cast("sitofp", frac, e.f64), e.c(PIO2_2M64, e.f64))
    if e.name == "f32":
        r = e.cast("truncf", r, e.ty)
    return e.cast("trunci", j, e.i32), r


def _reduce_pio2(e: Emitter, x):
    """(j as i32, r) with x = j pi/2 + r, |r| <= pi/4 (a little more when rounding)."""
    f = e.fmt
    p1, p2, p3 = (e.c(-v) for v in f["pio2"])
    jf = e.intr("roundeven", e.mul(x, e.c(0.6366197723675814)))
    r = e.fma(jf, p3, e.fma(jf, p2, e.fma(jf, p1, x)))  # r1 = x - j p1 is exact
    ax = e.intr("fabs", x)
    big = e.i("andi", e.cmp("oge", ax, e.c(f["cw_limit"])), e.cmp("olt", ax, e.c(float("inf"))))

    def slow():
        j, rr = _payne_hanek(e, ax)
        neg = e.cmp("olt", x, e.c(0.0))
        return [e.sel(neg, e.i("subi", e.ci(0, e.i32), j), j), e.sel(neg, e.neg(rr), rr)]

    def fast():
        # the result is used for |x| < cw_limit only; other jf must not reach fptosi (poison)
        safe = e.sel(e.cmp("olt", ax, e.c(f["cw_limit"])), jf, e.c(0.0))
        return [e.cast("fptosi", safe, e.i32), r]

    return e.if_(big, slow, fast, [e.i32, e.ty])


def sincos(e: Emitter, x, cos: bool):
    j, r = _reduce_pio2(e, x)
    if cos:
        j = e.i("addi", j, e.ci(1, e.i32))
    s = e.mul(r, r)
    sp = e.fma(e.mul(r, s), e.horner(s, SIN32 if e.name == "f32" else SIN64), r)
    cp = e.fma(s, e.horner(s, COS32 if e.name == "f32" else COS64), e.c(1.0))
    odd = e.icmp("ne", e.i("andi", j, e.ci(1, e.i32)), e.ci(0, e.i32))
    neg = e.icmp("ne", e.i("andi", j, e.ci(2, e.i32)), e.ci(0, e.i32))
    res = e.sel(odd, cp, sp)
    res = e.sel(neg, e.neg(res), res)
    if not cos:
        res = e.sel(e.cmp("oeq", x, e.c(0.0)), x, res)  # sin(-0) = -0
    finite = e.cmp("olt", e.intr("fabs", x), e.c(float("inf")))
    return e.sel(finite, res, e.sub(x, x))  # inf, nan -> nan


# ---- erf ---------------------------------------------------------------------------------------

def erf(e: Emitter, x):
    ax = e.intr("fabs", x)
    s = e.mul(x, x)
    small = e.cmp("olt", ax, e.c(0.875))
    if e.name == "f32":
        lo = e.fma(x, e.horner(s, ERF32_SMALL), x)
        u = e.sub(e.intr("minnum", ax, e.c(4.0)), e.c(0.875))
        hi = e.sub(e.c(1.0), exp(e, e.horner(e.intr("maxnum", u, e.c(0.0)), ERF32_TAIL)))
    else:
        lo = e.fma(x, e.horner(s, ERF64_SMALL), x)
        starts, tables = ERF64_PIECES
        t = e.intr("maxnum", e.intr("minnum", ax, e.c(6.0)), e.c(starts[0]))
        in1 = e.cmp("oge", t, e.c(starts[1]))
        in2 = e.cmp("oge", t, e.c(starts[2]))
        a = e.sel(in2, e.c(starts[2]), e.sel(in1, e.c(starts[1]), e.c(starts[0])))
        coeffs = [e.sel(in2, e.c(c2), e.sel(in1, e.c(c1), e.c(c0)))
                  for c0, c1, c2 in zip(*tables)]
        rr = e.horner(e.sub(t, a), coeffs)                 # erfc(t) * exp(t**2)
        tt = e.mul(t, t)
        tt_lo = e.fma(t, t, e.neg(tt))                     # t**2 = tt + tt_lo exactly
        erfc = e.mul(e.mul(exp(e, e.neg(tt)), e.sub(e.c(1.0), tt_lo)), rr)
        hi = e.sub(e.c(1.0), erfc)
    hi = e.intr("copysign", hi, x)
    return e.sel(e.isnan(x), x, e.sel(small, lo, hi))


# ---- fmod ----------------------------------------------------------------------------------------

def fmod(e: Emitter, x, y):
    """C fmod, exact: |x| is reduced by |y| * 2**k, the largest such multiple not above it
    (r - t is exact since t <= r < 2t), until it is below |y| (at most the exponent range
    steps, each halving r at least).  NaN for x infinite, y zero or NaNs; x for y infinite."""
    from mlir.dialects import scf
    ax, ay = e.intr("fabs", x), e.intr("fabs", y)
    inf = e.c(float("inf"))
    bad = e.op("arith.ori", [e.op("arith.ori", [e.isnan(x), e.isnan(y)], e.i1),
                             e.op("arith.ori", [e.cmp("oeq", ax, inf),
                                                e.cmp("oeq", ay, e.c(0.0))], e.i1)], e.i1)
    one = e.c(1.0)
    r0, d = e.sel(bad, e.c(0.0), ax), e.sel(bad, one, ay)  # a loop that ends at once
    fr = ir.Type.parse(f"!llvm.struct<({e.name}, i32)>")

    def exponent(v):
        s = call_intrinsic("llvm.frexp", [v], fr)
        return e.op("llvm.extractvalue", [s], e.i32,
                    {"position": ir.DenseI64ArrayAttr.get([1])})

    loop = scf.WhileOp([e.ty], [r0])
    before = loop.before.blocks.append(e.ty)
    with ir.InsertionPoint(before):
        scf.ConditionOp(e.cmp("oge", before.arguments[0], d), [before.arguments[0]])
    after = loop.after.blocks.append(e.ty)
    with ir.InsertionPoint(after):
        r = after.arguments[0]
        k = e.i("subi", exponent(r), exponent(d))
        t = call_intrinsic("llvm.ldexp", [d, k], e.ty)
        t = e.sel(e.cmp("ogt", t, r), e.mul(t, e.c(0.5)), t)
        scf.YieldOp([e.sub(r, t)])
    res = e.intr("copysign", loop.results[0], x)
    return e.sel(bad, e.c(float("nan")), res)
