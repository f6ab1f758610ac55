"""float8 conversions: `arith.extf` from and `arith.truncf` to f8E4M3FN / f8E5M2 (OCP) and
f8E4M3FNUZ / f8E5M2FNUZ (AMD gfx942's "fnuz": biases 8 and 16, no inf, 0x80 the one NaN; to f32
by rebiasing the exponent, from f32 as below, a zero result without sign, NaN -> 0x80).

Neither backend has a portable fp8 conversion instruction (and no device library is linked), so
both are expanded here into target-independent integer/float arith on the bit patterns; except
f32 -> e4m3fn / e5m2 on NVIDIA sm_89+, which takes `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` (one
instruction for the expansion's ~18: an fp8 attention converts every probability), plus the
fix-ups that keep its results the expansion's bit for bit (a NaN's sign; e5m2's inf), done on
the packed word: a tile's registers convert four at a time (`_trunc_packed`).  The
one `extf`/`truncf` rule (`rules/elementwise.py`) calls `convert` when either side is fp8.  fp8 values live in registers as
their own MLIR type; memory holds bytes (`memory._mem_type`), and the conversions go through an
`arith.bitcast` to i8.

fp8 -> f32 (exact), through f16 bits:
  e5m2:   f16 bits = b << 8 (same exponent bias and inf/NaN encoding as f16).
  e4m3fn: f16 bits = (b & 0x7f) << 7 | (b & 0x80) << 8, then times 2^8 in f32 (subnormals
          included: f16 subnormals extend exactly); NaN (sign kept) where b & 0x7f == 0x7f.
  Then `arith.extf`/`truncf` to the destination (f16, bf16 and f64 hold every fp8 value).

f32 -> fp8, round to nearest even, finite overflow saturating (as Triton's `cvt.rn.satfinite`
on NVIDIA); inf stays inf in e5m2 (so that MLIR's folding of truncf(extf(x)) into x agrees):
  a = |x| bits; NaN -> 0x7f | sign; normal range: (a - rebias + half - 1 + lsb) >> shift,
  clamped to the largest finite value (inf too); subnormal range: |x| * 2^k + 2^23 in f32 (the
  add rounds to an integer, ties to even) minus 2^23's bits.  f16/bf16 sources extend to f32
  first (exact); f64 sources are rounded to f32 first (a double rounding).
"""
from __future__ import annotations

import mlir.ir as ir

from ..regs import Regs
from ..target import arch_capability
from .math_approx import call_intrinsic


# kind -> (mantissa bits, exponent bias, largest finite magnitude's bits)
F8 = {"f8E4M3FN": (3, 7, 0x7E), "f8E5M2": (2, 15, 0x7B),
      "f8E4M3FNUZ": (3, 8, 0x7F), "f8E5M2FNUZ": (2, 16, 0x7F)}
FNUZ = ("f8E4M3FNUZ", "f8E5M2FNUZ")  # no inf, no negative zero: 0x80 is the one NaN


def is_f8(t: ir.Type) -> bool:
    return str(t) in F8


def _s32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


class _B:
    """Small arith builder on scalars."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.i8 = ir.IntegerType.get_signless(8)
        self.i16 = ir.IntegerType.get_signless(16)
        self.i32 = ctx.i32
        self.f16 = ir.F16Type.get()
        self.f32 = ir.F32Type.get()

    def op(self, name, xs, t, attrs=None):
        return self.ctx.op1(name, xs, t, attrs)

    def c(self, v, t=None):
        t = t or self.i32
        return self.ctx.const(_s32(v) if t == self.i32 else v, t)

    def fc(self, v):
        return self.op("arith.constant", [], self.f32, {"value": ir.FloatAttr.get(self.f32, v)})

    def bin(self, name, x, y):
        return self.op(name, [x, y], x.type)

    def cmp(self, pred: int, x, y):
        return self.op("arith.cmpi", [x, y], self.ctx.i1,
                       {"predicate": ir.IntegerAttr.get(self.ctx.i64, pred)})

    def sel(self, c, x, y):
        return self.op("arith.select", [c, x, y], x.type)


_EQ, _UGT, _ULT = 0, 8, 6


def f8_to_f32(ctx, v: ir.Value) -> ir.Value:
    b = _B(ctx)
    kind = str(v.type)
    byte = b.op("arith.bitcast", [v], b.i8)
    if kind in FNUZ:
        return _fnuz_to_f32(b, byte, kind)
    w = b.op("arith.extui", [byte], b.i16)
    if kind == "f8E5M2":
        h = b.bin("arith.shli", w, b.c(8, b.i16))
        return b.op("arith.extf", [b.op("arith.bitcast", [h], b.f16)], b.f32)
    mag = b.bin("arith.andi", w, b.c(0x7F, b.i16))
    sign = b.bin("arith.andi", w, b.c(0x80, b.i16))
    h = b.bin("arith.ori", b.bin("arith.shli", mag, b.c(7, b.i16)),
              b.bin("arith.shli", sign, b.c(8, b.i16)))
    f = b.op("arith.extf", [b.op("arith.bitcast", [h], b.f16)], b.f32)
    f = b.bin("arith.mulf", f, b.fc(256.0))
    sign32 = b.bin("arith.shli", b.op("arith.extui", [sign], b.i32), b.c(24))
    nan = b.op("arith.bitcast", [b.bin("arith.ori", sign32, b.c(0x7FC00000))], b.f32)
    return b.sel(b.cmp(_EQ, mag, b.c(0x7F, b.i16)), nan, f)


def _fnuz_to_f32(b, byte, kind):
    """fnuz byte -> f32: normal magnitudes rebiased into the f32 exponent, subnormal ones
    (exponent field 0) as mantissa * 2^(1 - bias - man), then the sign; 0x80 is NaN."""
    man, bias, _ = F8[kind]
    w = b.op("arith.extui", [byte], b.i32)
    mag = b.bin("arith.andi", w, b.c(0x7F))
    sign = b.bin("arith.shli", b.bin("arith.andi", w, b.c(0x80)), b.c(24))
    normal = b.bin("arith.addi", b.bin("arith.shli", mag, b.c(23 - man)), b.c((127 - bias) << 23))
    tiny = b.bin("arith.mulf", b.op("arith.uitofp", [mag], b.f32),
                 b.fc(float(2.0 ** (1 - bias - man))))
    bits = b.sel(b.cmp(_ULT, mag, b.c(1 << man)), b.op("arith.bitcast", [tiny], b.i32), normal)
    bits = b.bin("arith.ori", bits, sign)
    bits = b.sel(b.cmp(_EQ, w, b.c(0x80)), b.c(0x7FC00000), bits)
    return b.op("arith.bitcast", [bits], b.f32)


# the f8 kinds NVIDIA converts to from f32 from sm_89 (PTX `cvt...satfinite.<type>x2.f32`)
CVT_X2 = {"f8E4M3FN": "e4m3x2", "f8E5M2": "e5m2x2"}


def cvt_asm(kind: str, n: int) -> str:
    """The inline PTX converting n = 2 or 4 f32 operands ($1.. in byte order) to one packed b16
    or b32 (`cvt...x2` puts its first source in the high byte)."""
    cvt = f"cvt.rn.satfinite.{CVT_X2[kind]}.f32"
    if n == 2:
        return f"{cvt} $0, $2, $1;"
    return (f"{{ .reg .b16 l, h; {cvt} l, $2, $1; {cvt} h, $4, $3; "
            f"mov.b32 $0, {{l, h}}; }}")


def _cvt_packed(ctx, b, xs, kind: str) -> ir.Value:
    """2 or 4 f32 -> their fp8 bytes packed in an i32 (xs[j] in byte j) by cvt x2, with the
    expansion's fix-ups on the packed word.  satfinite saturates |x| > MAX_NORM, inf included,
    to the sign-preserved largest finite value (PTX ISA; test_fp8_gpu.py checks it): the
    expansion's for e4m3fn (0x7e | sign), one below its inf for e5m2 (0x7b: an inf's byte gets
    1 added).  Then every byte is ORed with its input's sign (a NaN is 0x7f from cvt and keeps
    x's sign in the expansion; other results have it already), prmts gathering the signs."""
    n = len(xs)
    out_t = b.i16 if n == 2 else b.i32
    res = ctx.op1("llvm.inline_asm", list(xs), out_t, {
        "asm_string": ir.StringAttr.get(cvt_asm(kind, n)),
        "constraints": ir.StringAttr.get(("=h" if n == 2 else "=r") + ",f" * n),
        "asm_dialect": ir.IntegerAttr.get(ctx.i64, 0)})
    if n == 2:
        res = b.op("arith.extui", [res], b.i32)
    us = [b.op("arith.bitcast", [x], b.i32) for x in xs]
    if kind == "f8E5M2":  # satfinite gives inf e5m2's largest finite value, 0x7b | sign
        for j, u in enumerate(us):
            a = b.bin("arith.andi", u, b.c(0x7FFFFFFF))
            res = b.sel(b.cmp(_EQ, a, b.c(0x7F800000)),
                        b.bin("arith.addi", res, b.c(1 << 8 * j)), res)
    # bytes 3 and 7 (a pair's signs) to bytes k and k + 1; a third prmt joins two pairs' (one
    # OR then: ptxas makes two ORs with masks three lop3s)
    signs = [call_intrinsic("llvm.nvvm.prmt", [us[k], us[k + 1], b.c(0x73 << 4 * k)], b.i32)
             for k in range(0, n, 2)]
    if n == 4:
        signs = [call_intrinsic("llvm.nvvm.prmt", signs + [b.c(0x7610)], b.i32)]
    return b.bin("arith.ori", res, b.bin("arith.andi", signs[0], b.c(0x80808080 >> 8 * (4 - n))))


def _bytes_of(b, res: ir.Value, kind: str, n: int):
    """The fp8 values of a packed word's n low bytes."""
    f8 = ir.Type.parse(kind)
    return [b.op("arith.bitcast", [b.op("arith.trunci", [
        b.bin("arith.shrui", res, b.c(8 * j)) if j else res], b.i8)], f8) for j in range(n)]


def _f32_to_f8_cvt(ctx, b, x: ir.Value, kind: str) -> ir.Value:
    """One f32 by the hardware conversion (`_cvt_packed` of (x, x): its low byte)."""
    return _bytes_of(b, _cvt_packed(ctx, b, [x, x], kind), kind, 1)[0]


def _hw_x2(ctx, kind: str) -> bool:
    return kind in CVT_X2 and ctx.target == "nvidia" and arch_capability(ctx.arch) >= 89


def _f32_to_f8(ctx, x: ir.Value, kind: str) -> ir.Value:
    b = _B(ctx)
    if _hw_x2(ctx, kind):
        return _f32_to_f8_cvt(ctx, b, x, kind)
    man, bias, maxbits = F8[kind]
    shift = 23 - man
    u = b.op("arith.bitcast", [x], b.i32)
    sign = b.bin("arith.shrui", b.bin("arith.andi", u, b.c(0x80000000)), b.c(24))
    a = b.bin("arith.andi", u, b.c(0x7FFFFFFF))
    # normal range: rebias the exponent, round the mantissa to `man` bits (ties to even)
    ar = b.bin("arith.subi", a, b.c((127 - bias) << 23))
    lsb = b.bin("arith.andi", b.bin("arith.shrui", ar, b.c(shift)), b.c(1))
    r = b.bin("arith.addi", ar, b.bin("arith.addi", b.c((1 << (shift - 1)) - 1), lsb))
    r = b.bin("arith.shrui", r, b.c(shift))
    r = b.sel(b.cmp(_UGT, r, b.c(maxbits)), b.c(maxbits), r)  # satfinite (inf too)
    # subnormal range: |x| * 2^(bias - 1 + man) rounded to an integer by adding 2^23
    absx = b.op("arith.bitcast", [a], b.f32)
    t = b.bin("arith.addf", b.bin("arith.mulf", absx, b.fc(float(2 ** (bias - 1 + man)))),
              b.fc(float(2 ** 23)))
    sub = b.bin("arith.subi", b.op("arith.bitcast", [t], b.i32), b.c(0x4B000000))
    res = b.sel(b.cmp(_ULT, a, b.c((128 - bias) << 23)), sub, r)
    if kind == "f8E5M2":  # inf stays inf where the format has one
        res = b.sel(b.cmp(_EQ, a, b.c(0x7F800000)), b.c(0x7C), res)
    if kind in FNUZ:  # no negative zero (0x80 is NaN): a zero result drops the sign
        res = b.bin("arith.ori", res, b.sel(b.cmp(_EQ, res, b.c(0)), b.c(0), sign))
        res = b.sel(b.cmp(_UGT, a, b.c(0x7F800000)), b.c(0x80), res)  # NaN
    else:
        res = b.sel(b.cmp(_UGT, a, b.c(0x7F800000)), b.c(0x7F), res)  # NaN
        res = b.bin("arith.ori", res, sign)
    return b.op("arith.bitcast", [b.op("arith.trunci", [res], b.i8)], ir.Type.parse(kind))


def _ext(ctx, v, dst):
    f = f8_to_f32(ctx, v)
    s = str(dst)
    if s == "f32":
        return f
    if is_f8(dst):
        return _f32_to_f8(ctx, f, s)
    return ctx.op1("arith.extf" if s == "f64" else "arith.truncf", [f], dst)


def _to_f32(ctx, v):
    s = str(v.type)
    if is_f8(v.type):
        return f8_to_f32(ctx, v)
    if s == "f32":
        return v
    return ctx.op1("arith.truncf" if s == "f64" else "arith.extf", [v], ir.F32Type.get())


def _trunc(ctx, v, dst):
    return _f32_to_f8(ctx, _to_f32(ctx, v), str(dst))


def _trunc_packed(ctx, vals, dst):
    """A tile's registers 4i..4i+3 (then pairs) converted into one word by cvt x2s (NVIDIA
    sm_89+), fixed up packed: the word shuffles of an 8-bit conversion (rules/layout.py) pack
    the same registers into the same bytes, and LLVM folds the byte extracts back into it."""
    b = _B(ctx)
    out, i = [], 0
    for n in (4, 2):
        while i + n <= len(vals):
            w = _cvt_packed(ctx, b, [_to_f32(ctx, v) for v in vals[i:i + n]], str(dst))
            out += _bytes_of(b, w, str(dst), n)
            i += n
    if i < len(vals):
        out.append(_trunc(ctx, vals[-1], dst))
    return out


def convert(ctx, op, args):
    """`arith.extf`/`arith.truncf` with an fp8 source or destination, per element."""
    dst = ctx.scalar_type(op.results[0].type)
    fn = _trunc if is_f8(dst) else _ext
    x = args[0]
    if isinstance(x, Regs):
        if fn is _trunc and _hw_x2(ctx, str(dst)) and len(x.values) > 1:
            return [x.like(_trunc_packed(ctx, x.values, dst))]
        return [x.like([fn(ctx, v, dst) for v in x.values])]
    return [fn(ctx, x, dst)]
