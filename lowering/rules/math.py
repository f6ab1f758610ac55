"""Lowering rules of the math family, per target.

Neither target links a device math library, and the upstream conversions would turn `math`
ops into calls of one (`convert-gpu-to-nvvm`: `__nv_expf`, `__nv_floorf`, `__nv_fmaxf`, ...;
`convert-gpu-to-rocdl`: `__ocml_*`), left unresolved.  So every math op is rewritten here,
per element, into LLVM intrinsics the backends select to instructions, or into the
expansions of `math_approx` (range reduction and polynomials in arith):

| op | NVIDIA f32 | AMD f32 | f64 (both) |
| --- | --- | --- | --- |
| exp | ex2.approx.f32(x * log2 e), as Triton | llvm.exp (v_exp_f32, exact split) | expansion |
| exp2 | ex2.approx.ftz.f32, as Triton (subnormal results flush to 0) | llvm.exp2 (v_exp_f32 + scaling) | expansion |
| log, log2 | expansion | llvm.log / llvm.log2 (v_log_f32) | expansion |
| sin, cos, erf | expansion | expansion | expansion |
| sqrt (afn) | sqrt.approx.f32, as Triton | llvm.sqrt afn (v_sqrt_f32) | llvm.sqrt |
| sqrt (no afn) | llvm.sqrt = sqrt.rn.f32 | llvm.sqrt (correctly rounded) | llvm.sqrt |
| rsqrt | rsqrt.approx.f32, as Triton | v_rsq_f32 (subnormals scaled) | 1 / llvm.sqrt |
| divf (`/`, tl.fdiv) | div.full.f32, as Triton (tl.div_rn and fp16/bf16 operands: div.rn) | IEEE fdiv | fdiv |
| remf (float `%`) | exact fmod by binary long division (math_approx.fmod; f16/bf16 through f32, exactly) |
| floor, ceil, absf, absi, fma | llvm.floor, .ceil, .fabs, .abs, .fma (all float types) |
| maxnumf, minnumf (NVIDIA) | llvm.maxnum, llvm.minnum |
| ctpop, ctlz, cttz, tile.bitreverse (i32/i64) | llvm.ctpop, .ctlz, .cttz (zero defined), .bitreverse |
| tile.byte_perm | prmt.b32 (selector & 0x7777) | shifts and masks of the 64-bit (y:x) | |

fp16/bf16 operands of the transcendental ops (which the frontend rejects, as Triton does, but
hand-written IR may have) compute in f32 and round once.  `tile.umulhi` is mul.hi.u32/u64 on
NVIDIA and the high result of `arith.mului_extended` (v_mul_hi_u32) on AMD.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import tile as T

from ..regs import Regs
from ..registry import lower
from . import math_approx as A


def _float_kind(t: ir.Type) -> str:
    return str(t)


def _per_element(fn):
    """A rule applying fn(op, operands) -> value to each element the thread holds."""
    def rule(ctx, op, args):
        regs = next((a for a in args if isinstance(a, Regs)), None)
        if regs is None:
            return [fn(op, list(args))]
        out = [fn(op, [a.values[i] if isinstance(a, Regs) else a for a in args])
               for i in range(len(regs.values))]
        return [regs.like(out)]
    return rule


def _op(name, operands, rtype, attrs=None) -> ir.Value:
    return ir.Operation.create(name, results=[rtype], operands=list(operands),
                               attributes=attrs or {}).results[0]


def _call(intrinsic, xs, fastmath=None) -> ir.Value:
    """`llvm.call_intrinsic` (the typed `llvm.intr.*` ops of exp2, fabs, floor, sqrt, ... are
    illegal after convert-gpu-to-nvvm/-rocdl, which would turn them into library calls)."""
    return A.call_intrinsic(intrinsic, list(xs), xs[0].type, fastmath)


def _intr(name, fastmath=None):
    """The LLVM intrinsic `llvm.<name>` on the operands (any float type)."""
    return lambda op, xs: _call(f"llvm.{name}", xs, fastmath)


def _via_f32(fn):
    """fn(x: f32 or f64) -> value, applied to f16/bf16 through f32 (extend, compute, round)."""
    def wrapped(op, xs):
        t = xs[0].type
        if _float_kind(t) in ("f32", "f64"):
            return fn(op, xs)
        f32 = ir.F32Type.get()
        y = fn(op, [_op("arith.extf", [x], f32) for x in xs])
        return _op("arith.truncf", [y], t)
    return wrapped


def _expand(algo):
    """A `math_approx` expansion (f32 and f64)."""
    return lambda op, xs: algo(A.Emitter(xs[0].type), xs[0])


def _afn(op) -> bool:
    a = op.attributes["fastmath"] if "fastmath" in op.attributes else None
    return a is not None and "afn" in str(a)


# ---- per-op scalar functions (x is f32 or f64) -------------------------------------------------

def _exp_nvidia(op, xs):
    x = xs[0]
    if _float_kind(x.type) == "f64":
        return A.exp(A.Emitter(x.type), x)
    # Triton's lowering: ex2.approx.f32 (non-ftz) of x * log2(e)
    log2e = _op("arith.constant", [], x.type, {"value": ir.FloatAttr.get(x.type, 1.4426950408889634)})
    return _call("llvm.exp2", [_op("arith.mulf", [x, log2e], x.type)])


def _exp2_nvidia(op, xs):
    """Triton's tl.exp2: ex2.approx.ftz.f32.  The non-ftz form (llvm.exp2) is the same MUFU
    plus a range check and two multiplies around it in SASS (attention's forward spent 132 of
    its 279 FMUL there)."""
    x = xs[0]
    if _float_kind(x.type) == "f64":
        return A.exp2(A.Emitter(x.type), x)
    return _call("llvm.nvvm.ex2.approx.ftz.f", [x])


def _f32_intr_else_expand(intr, algo):
    """f32: the LLVM intrinsic (which the backend selects well); f64: the expansion."""
    def fn(op, xs):
        if _float_kind(xs[0].type) == "f32":
            return _call(f"llvm.{intr}", xs)
        return algo(A.Emitter(xs[0].type), xs[0])
    return fn


def _sqrt(op, xs):
    """afn (tl.sqrt) on f32: llvm.sqrt afn, which NVPTX selects as sqrt.approx.f32 (as Triton)
    and AMDGPU as v_sqrt_f32; otherwise the correctly rounded llvm.sqrt."""
    fast = _afn(op) and _float_kind(xs[0].type) == "f32"
    return _intr("sqrt", "afn" if fast else None)(op, xs)


def _rsqrt_f64(x):
    one = _op("arith.constant", [], x.type, {"value": ir.FloatAttr.get(x.type, 1.0)})
    return _op("arith.divf", [one, _call("llvm.sqrt", [x])], x.type)


def _rsqrt_nvidia(op, xs):
    x = xs[0]
    if _float_kind(x.type) == "f64":
        return _rsqrt_f64(x)
    return _call("llvm.nvvm.rsqrt.approx.f", [x])  # Triton's: rsqrt.approx.f32 (subnormals ok)


def _rsqrt_amd(op, xs):
    x = xs[0]
    if _float_kind(x.type) == "f64":
        return _rsqrt_f64(x)
    # v_rsq_f32 flushes subnormal inputs: scale them by 2**24 (the result by 2**12)
    e = A.Emitter(x.type)
    tiny = e.cmp("olt", x, e.c(2.0 ** -126))
    r = _call("llvm.amdgcn.rsq", [e.sel(tiny, e.mul(x, e.c(2.0 ** 24)), x)])
    return e.sel(tiny, e.mul(r, e.c(2.0 ** 12)), r)


def _widened_16bit(v: ir.Value) -> bool:
    """`v` is an `arith.extf` of an fp16/bf16 value (or tile)."""
    if not isinstance(v, ir.OpResult):
        return False
    owner = v.owner.operation
    return owner.name == "arith.extf" and str(
        T.element_type(owner.operands[0].type)) in ("f16", "bf16")


def _divf_nvidia(op, xs):
    """f32 `/` and tl.fdiv: div.full.f32 (about 2 ulp, as Triton; no slow path for IEEE
    rounding); tl.div_rn (marked `tile.rn`) and f64 stay correctly rounded.  So does a
    quotient of two fp16/bf16 values widened to f32 (Triton's `/` of 16-bit floats): there
    div.full.f32 was seen 2.01 ulp off and giving FLT_MAX for quotients that round to inf, and
    the user wrote no f32 operand to ask for its speed."""
    if (_float_kind(xs[0].type) == "f32" and "tile.rn" not in op.attributes
            and not all(_widened_16bit(v) for v in op.operands)):
        return _call("llvm.nvvm.div.full", xs)
    return _op("arith.divf", xs, xs[0].type)


def _absi(op, xs):  # wraps at the minimum, as two's complement
    return _op("llvm.intr.abs", xs, xs[0].type, {"is_int_min_poison": ir.BoolAttr.get(False)})


def _bit_count(name):
    """llvm.ctpop/ctlz/cttz (zero defined: ctlz(0) = cttz(0) = the width)."""
    def fn(op, xs):
        x = xs[0]
        if name == "ctpop":
            return _call("llvm.ctpop", [x])
        no_poison = _op("arith.constant", [], ir.IntegerType.get_signless(1),
                        {"value": ir.IntegerAttr.get(ir.IntegerType.get_signless(1), 0)})
        return A.call_intrinsic(f"llvm.{name}", [x, no_poison], x.type)
    return fn


def _int_const(t, v):
    return _op("arith.constant", [], t, {"value": ir.IntegerAttr.get(t, v)})


def _byte_perm_nvidia(op, xs):
    """prmt.b32 with the selector's nibbles cut to 3 bits (libdevice's __nv_byte_perm: the
    4th bit would ask prmt to replicate a sign)."""
    x, y, s = xs
    sel = _op("arith.andi", [s, _int_const(s.type, 0x7777)], s.type)
    return A.call_intrinsic("llvm.nvvm.prmt", [x, y, sel], x.type)


def _byte_perm_shifts(op, xs):
    """Result byte n = byte ((s >> 4n) & 7) of the 64-bit (y:x), by shifts and masks."""
    x, y, s = xs
    i32, i64 = x.type, ir.IntegerType.get_signless(64)
    wide = _op("arith.ori", [
        _op("arith.shli", [_op("arith.extui", [y], i64), _int_const(i64, 32)], i64),
        _op("arith.extui", [x], i64)], i64)
    r = None
    for n in range(4):
        nib = _op("arith.andi", [_op("arith.shrui", [s, _int_const(i32, 4 * n)], i32),
                                 _int_const(i32, 7)], i32)
        amount = _op("arith.extui", [_op("arith.shli", [nib, _int_const(i32, 3)], i32)], i64)
        byte = _op("arith.andi", [_op("arith.trunci", [
            _op("arith.shrui", [wide, amount], i64)], i32), _int_const(i32, 0xFF)], i32)
        if n:
            byte = _op("arith.shli", [byte, _int_const(i32, 8 * n)], i32)
        r = byte if r is None else _op("arith.ori", [r, byte], i32)
    return r


_SIN = _expand(lambda e, x: A.sincos(e, x, cos=False))
_COS = _expand(lambda e, x: A.sincos(e, x, cos=True))

_COMMON = {
    "math.log": _expand(A.log), "math.log2": _expand(A.log2),
    "math.sin": _SIN, "math.cos": _COS, "math.erf": _expand(A.erf),
    "math.floor": _intr("floor"), "math.ceil": _intr("ceil"), "math.absf": _intr("fabs"),
    "math.fma": _intr("fma"), "math.absi": _absi,
    # float `%` (C fmod; convert-gpu-to-nvvm/-rocdl would call the library's fmodf)
    "arith.remf": lambda op, xs: A.fmod(A.Emitter(xs[0].type), xs[0], xs[1]),
    # libdevice's bit intrinsics (frontend/ops_bits.py)
    "math.ctpop": _bit_count("ctpop"), "math.ctlz": _bit_count("ctlz"),
    "math.cttz": _bit_count("cttz"), "tile.bitreverse": _intr("bitreverse"),
}
_RULES = {
    "nvidia": dict(_COMMON, **{
        "math.exp": _exp_nvidia, "math.exp2": _exp2_nvidia,
        "math.sqrt": _sqrt, "math.rsqrt": _rsqrt_nvidia, "arith.divf": _divf_nvidia,
        # not math ops, but tl.clamp's (and reductions'): convert-gpu-to-nvvm would call
        # libdevice's fmaxf/fminf for them
        "arith.maxnumf": _intr("maxnum"), "arith.minnumf": _intr("minnum"),
        "tile.byte_perm": _byte_perm_nvidia,
    }),
    "amd": dict(_COMMON, **{
        "math.exp": _f32_intr_else_expand("exp", A.exp),
        "math.exp2": _f32_intr_else_expand("exp2", A.exp2),
        "math.log": _f32_intr_else_expand("log", A.log),
        "math.log2": _f32_intr_else_expand("log2", A.log2),
        "math.sqrt": _sqrt, "math.rsqrt": _rsqrt_amd,
        "tile.byte_perm": _byte_perm_shifts,
    }),
}
_EXACT_ANY_TYPE = {"math.floor", "math.ceil", "math.absf", "math.fma", "math.absi",
                   "arith.maxnumf", "arith.minnumf", "math.ctpop", "math.ctlz", "math.cttz",
                   "tile.bitreverse", "tile.byte_perm"}

for _target, _table in _RULES.items():
    for _name, _fn in _table.items():
        lower(_name, target=_target)(
            _per_element(_fn if _name in _EXACT_ANY_TYPE else _via_f32(_fn)))


def _umulhi_nvidia(op, xs):
    """llvm.nvvm.mulhi.ui/ull (mul.hi.u32/u64, as Triton: a widened multiply may lose the
    pattern)."""
    t = xs[0].type
    name = "llvm.nvvm.mulhi.ui" if ir.IntegerType(t).width == 32 else "llvm.nvvm.mulhi.ull"
    return A.call_intrinsic(name, xs, t)


def _umulhi_amd(op, xs):
    """The high result of arith.mului_extended (v_mul_hi_u32)."""
    t = xs[0].type
    return ir.Operation.create("arith.mului_extended", results=[t, t], operands=xs).results[1]


lower("tile.umulhi", target="nvidia")(_per_element(_umulhi_nvidia))
lower("tile.umulhi", target="amd")(_per_element(_umulhi_amd))
