"""Semantics shared by every op: type promotion, broadcasting, casts and the arithmetic tables.

This is the one place these rules live (docs/language.md has them as a table):

* Python scalars are *weakly typed*: combined with a tile they take the tile's dtype (an int
  with a float tile becomes that float; a float with an int tile becomes fp32).  Alone, an int
  is int32 (int64 if it does not fit) and a float is fp32.
* Floats win over ints; the wider float wins; fp16 with bf16 gives fp32.
* float8 follows Triton's `computation_type_impl`: one float8 kind with itself stays that kind
  (computed in fp32 and rounded back once), two kinds give fp16, fp16 wins over float8, bf16
  with float8 gives fp32; `/` and `%` with a float8 operand compute in fp32 (at least).
* Two ints: the wider wins; at equal width unsigned wins (C's rules).
* `/` on ints computes in fp32; `//` and `%` on ints truncate toward zero (C semantics).
* Comparisons give int1.  Shapes broadcast as in numpy (missing leading dimensions are added,
  size-1 dimensions grow); a scalar is splat to the tile's shape.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B

from ..language import core
from ..language.core import constexpr, tensor
from ..language.tuples import tuple_operand_message
from .types import tensor_ir_type, to_ir


class SemanticError(Exception):
    """A user error found while building IR; the code generator adds the source location.
    `SemanticError(detail, brief)`: `str()` is `brief` (Triton's exact words, which its tests
    compare with the error's `__cause__`) and the located error says `detail`."""

    def __init__(self, message: str = "", brief: str | None = None):
        super().__init__(message)
        self.detail = message
        self.brief = brief

    def __str__(self):
        return self.brief if self.brief is not None else self.detail


class StaticAssertionError(SemanticError):
    """A failed `tl.static_assert`: compiled, Triton's CompileTimeAssertionFailure."""


def detail(e: Exception) -> str:
    """What a located error says of `e`: a SemanticError's detail, else its text."""
    return getattr(e, "detail", None) or str(e)


# --------------------------------------------------------------------------------------------
# The builder: creates ops at the insertion point with the current source location.

class Builder:
    is_interpreter = False
    options = None  # the CompileOptions of the kernel being built
    inline_jit = None  # set by the code generator: inline_jit(jit_fn, args) -> returned value

    def __init__(self, context: ir.Context):
        self.context = context
        self.loc = ir.Location.unknown(context)

    def ir_type(self, dt: core.dtype) -> ir.Type:
        """The MLIR type of scalar dtype `dt` (what `tl.dtype.to_ir(builder)` returns)."""
        return to_ir(dt)

    def create(self, name, operands, result_types, attributes=None) -> list:
        op = ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                 attributes=attributes or {}, loc=self.loc)
        return list(op.results)

    def create1(self, name, operands, result_type, attributes=None) -> ir.Value:
        return self.create(name, operands, [result_type], attributes)[0]

    def constant(self, value, dt: core.dtype, shape=()) -> tensor:
        ty = tensor_ir_type(dt, shape)
        elem = to_ir(dt)
        if dt.name == "fp8e4b15":  # (stored as i8: the bits of the value)
            t = self.constant(e4b15_bits(value), core.uint8, shape)
            return tensor(t.handle, dt, shape)
        if dt.is_floating():
            attr = ir.FloatAttr.get(elem, float(value))
        else:
            bits = dt.primitive_bitwidth
            v = int(value)
            if dt.is_bool():
                v = 1 if v else 0
            v &= (1 << bits) - 1
            if bits > 1 and v >= 1 << (bits - 1):  # signless attr wants the signed view
                v -= 1 << bits
            if bits == 1 and v:
                v = -1
            attr = ir.IntegerAttr.get(elem, v)
        if shape:
            attr = ir.DenseElementsAttr.get_splat(ty, attr)
        h = self.create1("arith.constant", [], ty, {"value": attr})
        return tensor(h, dt, shape)


# --------------------------------------------------------------------------------------------
# scalars and promotion

def check_fp8(dt: core.dtype, what: str = "arithmetic"):
    """Ops outside `_FP8_OPS` (bitwise ops, `tl.clamp`, `tl.fma`, ...) on two float8 tiles."""
    raise SemanticError(f"{what} on {dt} tiles is not supported: convert them first, e.g. "
                        f"x.to(tl.float32) (arithmetic, comparisons, `tl.where`, "
                        f"`tl.maximum`/`tl.minimum` and reductions of float8 are supported)")


def python_scalar_dtype(v) -> core.dtype:
    if hasattr(v, "scalar_dtype"):  # an assigned number: Triton's scalar (scalar_fold.py)
        return v.scalar_dtype
    if isinstance(v, bool):
        return core.int1
    if isinstance(v, int):
        if -2**31 <= v < 2**31:
            return core.int32
        if -2**63 <= v < 2**63:
            return core.int64
        if 0 <= v < 2**64:
            return core.uint64
        raise SemanticError(f"integer constant {v} does not fit in 64 bits "
                            f"(Nonrepresentable integer {v})")
    if isinstance(v, float):
        return core.float32
    if isinstance(v, tuple) and "arg_name" in getattr(v, "__dict__", {}):
        raise SemanticError(tuple_operand_message(v))  # a tuple argument: named
    raise SemanticError(f"expected a tile or a number, got {type(v).__name__} {v!r}")


def not_a_tile(x) -> str:
    """The one message for a value where a tile or number is needed (compiler and
    interpreter alike)."""
    if isinstance(x, core.dtype):
        return f"expected a tile or a number, got dtype {x}"
    if x is None or isinstance(x, str):
        return f"expected a tile or a number, got {x!r}"
    if isinstance(x, tuple):
        return tuple_operand_message(x)
    return f"expected a tile or a number, got {type(x).__name__}"


def to_tensor(b: Builder, x, hint: core.dtype | None = None) -> tensor:
    """`x` as a tensor; Python numbers become constants, typed after `hint` when given."""
    if isinstance(x, tensor):
        return x
    if isinstance(x, constexpr):
        x = x.value
    if isinstance(x, core.dtype) or x is None or isinstance(x, str):
        raise SemanticError(not_a_tile(x))
    dt = python_scalar_dtype(x)
    if hint is not None and not hint.is_ptr() and not isinstance(x, bool):
        if hint.is_floating():
            dt = hint
        elif hint.is_int() and isinstance(x, int) and fits(x, hint):
            dt = hint
    return b.constant(x, dt)


def fits(v: int, dt: core.dtype) -> bool:
    bits = dt.primitive_bitwidth
    if dt.is_bool():
        return v in (0, 1)
    if dt.is_int_unsigned():
        return 0 <= v < 2**bits
    return -2**(bits - 1) <= v < 2**(bits - 1)


_FLOAT_RANK = {"fp8e4nv": 0, "fp8e5": 0, "fp8e4b15": 0, "fp8e4b8": 0, "fp8e5b16": 0, "fp16": 1, "bf16": 1, "fp32": 2, "fp64": 3}


def integer_promote(a: core.dtype, b: core.dtype) -> core.dtype:
    if a == b:
        return a
    wa, wb = a.primitive_bitwidth, b.primitive_bitwidth
    if a.is_bool():
        return b
    if b.is_bool():
        return a
    if a.is_int_signed() == b.is_int_signed():
        return a if wa >= wb else b
    u, s = (a, b) if a.is_int_unsigned() else (b, a)
    if u.primitive_bitwidth >= s.primitive_bitwidth:
        return u
    return s


def computation_type(a: core.dtype, b: core.dtype, op: str) -> core.dtype:
    if a.is_fp8() or b.is_fp8():
        return _fp8_computation_type(a, b, op)
    if a.is_floating() or b.is_floating():
        if a.is_floating() and b.is_floating():
            if a != b and _FLOAT_RANK[a.name] == _FLOAT_RANK[b.name]:
                return core.float32  # fp16 with bf16
            return a if _FLOAT_RANK[a.name] >= _FLOAT_RANK[b.name] else b
        return a if a.is_floating() else b
    if op == "truediv":
        return core.float32
    return integer_promote(a, b)


# float8 operands (Triton's `computation_type_impl`, python/triton/language/semantic.py, with
# the `/`-and-`%` rule asserted by its test_fp8_div_mod_promotion):
_DIV_OR_MOD = ("truediv", "floordiv", "mod")
# same-kind float8 results of these are computed in fp32 and rounded back once (`binary`)
_FP8_ROUNDED = ("add", "sub", "mul", "maximum", "minimum", "maximum_num", "minimum_num")
# what two float8 tiles may do; anything else (bitwise ops, tl.clamp, tl.fma) is check_fp8's
_FP8_OPS = _FP8_ROUNDED + _DIV_OR_MOD + ("where", "fdiv", "div_rn",
                                         "lt", "le", "gt", "ge", "eq", "ne")


def _fp8_computation_type(a: core.dtype, b: core.dtype, op: str) -> core.dtype:
    """Triton's order: fp64, then fp32, then fp16 (float8 with fp16 is fp16), bf16 with
    anything but bf16 is fp32, one float8 kind with itself stays that kind, two kinds give
    fp16; `/`, `%` (and `//`, floor of `/`) compute anything narrower than fp32 in fp32.
    An integer tile with float8 gives fp32 (Triton raises `unexpected type`)."""
    if a.is_fp8() and b.is_fp8() and op not in _FP8_OPS:
        check_fp8(a, f"`{_SYMBOL.get(op, op)}`")
    other = b if a.is_fp8() else a
    if other.is_fp64():
        ct = core.float64
    elif other.is_fp32() or other.is_bf16():
        ct = core.float32
    elif other.is_fp16():
        ct = core.float16
    elif other.is_fp8():
        ct = a if a == b else core.float16
    else:
        ct = core.float32
    if op in _DIV_OR_MOD and ct.primitive_bitwidth < 32:
        ct = core.float32
    return ct


def weak_pair(b: Builder, x, y):
    """Both operands as tensors, Python scalars typed after the other operand."""
    if isinstance(x, tensor) and not isinstance(y, tensor):
        check_weak_int(y, x.dtype)
        y = weak_scalar(b, y, x.dtype)
    elif isinstance(y, tensor) and not isinstance(x, tensor):
        check_weak_int(x, y.dtype)
        x = weak_scalar(b, x, y.dtype)
    else:
        x, y = to_tensor(b, x), to_tensor(b, y)
    return x, y


def check_weak_int(v, other: core.dtype):
    """Triton's rule for a Python int meeting an integer tile: it takes the tile's type, so
    it must fit there (a negative one cannot meet an unsigned tile)."""
    v = v.value if isinstance(v, constexpr) else v
    if not isinstance(v, int) or isinstance(v, bool) or not other.is_int() or other.is_bool():
        return
    python_scalar_dtype(v)  # more than 64 bits: rejected whatever the tile
    if v < 0 and other.is_int_unsigned():
        raise SemanticError(f"Cannot perform a binary operation between an unsigned tensor "
                            f"({other}) and a negative scalar ({v}). Perform an explicit cast "
                            f"on one of them.")
    if not fits(v, other):
        raise SemanticError(f"Scalar {v} is out of range for type {other}")


def weak_scalar(b, v, other: core.dtype) -> tensor:
    v = v.value if isinstance(v, constexpr) else v
    if other.is_ptr():
        return to_tensor(b, v)
    if isinstance(v, float) and other.is_int():
        return b.constant(v, core.float32)
    return to_tensor(b, v, hint=other)


# --------------------------------------------------------------------------------------------
# shapes

def splat(b: Builder, x: tensor, shape) -> tensor:
    if x.shape == tuple(shape):
        return x
    if x.shape:
        raise SemanticError(f"cannot splat a tile of shape {list(x.shape)}")
    h = B.build_splat(b, x.handle, result_type=tensor_ir_type(x.dtype, shape))
    return tensor(h, x.dtype, shape)


def expand_dims_1(b, x: tensor, axis: int) -> tensor:
    """`x` with a dimension of size 1 inserted at `axis` (a scalar becomes shape [1])."""
    shape = list(x.shape)
    shape.insert(axis, 1)
    if not x.shape:  # a scalar: a splat of shape [1]
        return splat(b, x, (1,))
    h = B.build_expand_dims(b, x.handle, result_type=tensor_ir_type(x.dtype, shape), axis=axis)
    return tensor(h, x.dtype, shape)


def broadcast_to(b: Builder, x: tensor, shape) -> tensor:
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if not x.shape:
        return splat(b, x, shape)
    if len(x.shape) > len(shape):
        raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
    if len(x.shape) < len(shape):  # numpy-style: leading dimensions of size 1
        while len(x.shape) < len(shape):
            x = expand_dims_1(b, x, 0)
        if x.shape == shape:
            return x
    for a, c in zip(x.shape, shape):
        if a != c and a != 1:
            raise SemanticError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
    h = B.build_broadcast(b, x.handle, result_type=tensor_ir_type(x.dtype, shape))
    return tensor(h, x.dtype, shape)


def broadcast_shapes(s1, s2, what="operands"):
    if not s1:
        return tuple(s2)
    if not s2:
        return tuple(s1)
    n = max(len(s1), len(s2))
    p1 = (1,) * (n - len(s1)) + tuple(s1)
    p2 = (1,) * (n - len(s2)) + tuple(s2)
    out = []
    for a, c in zip(p1, p2):
        if a == c or c == 1:
            out.append(a)
        elif a == 1:
            out.append(c)
        else:
            raise SemanticError(f"shape mismatch between {what}: {list(s1)} and {list(s2)}")
    return tuple(out)


def broadcast_pair(b, x: tensor, y: tensor):
    shape = broadcast_shapes(x.shape, y.shape)
    return broadcast_to(b, x, shape), broadcast_to(b, y, shape)


# --------------------------------------------------------------------------------------------
# casts

def e4b15_bits(v: float) -> int:
    """The fp8e4b15 byte of a Python number, as `_to_e4b15` converts it (an fp32 first)."""
    import struct
    v = float(v)
    if v != v:  # (as `_to_e4b15`: an fp32 NaN is positive once a half)
        return 0x7E
    if abs(v) >= 2.0:  # (inf too) saturated
        return 0x7E | (0x80 if v < 0 else 0)
    f = struct.unpack("<f", struct.pack("<f", v))[0]
    h = struct.unpack("<H", struct.pack("<e", f))[0]
    if abs(struct.unpack("<e", struct.pack("<H", h))[0]) > abs(f):
        h -= 1  # fp32 -> fp16 toward zero (sign-magnitude bits: one step down)
    return (((min(h & 0x7FFF, 0x3F00) << 1) + 0x80) >> 8) | (h >> 8) & 0x80


def _from_e4b15(b, x: tensor) -> tensor:
    """fp8e4b15 -> fp16, exactly: the sign to bit 15 and the seven other bits to 13..7 (the
    exponents share the bias 15, subnormals included)."""
    u = cast(b, tensor(x.handle, core.uint8, x.shape), core.uint16)
    bits = binary(b, "or", binary(b, "lshift", binary(b, "and", u, 0x80), 8),
                  binary(b, "lshift", binary(b, "and", u, 0x7F), 7))
    return cast(b, bits, core.float16, bitcast=True)


def _to_e4b15(b, x: tensor) -> tensor:
    """-> fp8e4b15 as Triton 3.6 compiles it (its NVIDIA conversion hook, every arch): fp32
    first to fp16 toward zero (other types to fp32 first; Triton takes only fp16 and fp32);
    the magnitude saturated to 1.75 (inf and NaN too; 1.875 is never made), rounded to 3
    mantissa bits with ties away from zero; the sign kept.  On a half's bits: fp16 and e4b15
    share the exponent bias, so a magnitude below 2 is the byte `(bits << 1) >> 8`."""
    if not x.dtype.is_fp16():
        if not x.dtype.is_fp32():
            x = cast(b, x, core.float32)
        # a NaN comes out of the hardware's f32 -> f16 `cvt` positive (canonical), whatever
        # its sign (measured on an H200): the interpreter's cast keeps it, so say it here
        x = where(b, compare(b, "ne", x, x), float("nan"), x)
        x = _rounded_cast(b, x, core.float16, "rtz", False)
    bits = cast(b, x, core.uint16, bitcast=True)
    mag = binary(b, "minimum", binary(b, "and", bits, 0x7FFF), 0x3F00)  # (halves >= 0 order
    rounded = binary(b, "add", binary(b, "lshift", mag, 1), 0x80)        # as their bits)
    out = binary(b, "or", binary(b, "rshift", rounded, 8),
                 binary(b, "and", binary(b, "rshift", bits, 8), 0x80))
    u8 = cast(b, out, core.uint8)
    return tensor(u8.handle, core.float8e4b15, x.shape)


ROUNDING_MODES = ("rtne", "rtz")  # Triton's fp_downcast_rounding


def cast(b: Builder, x, dst: core.dtype, bitcast: bool = False,
         fp_downcast_rounding: str | None = None) -> tensor:
    x = to_tensor(b, x)
    src = x.dtype
    if isinstance(dst, constexpr):
        dst = dst.value
    if not isinstance(dst, core.dtype):
        raise SemanticError(f"cast target must be a dtype, got {dst!r}")
    if fp_downcast_rounding is not None:
        return _rounded_cast(b, x, dst, fp_downcast_rounding, bitcast)
    if src != dst and "fp8e4b15" in (src.name, dst.name):  # stored as i8; through fp16
        if bitcast:
            if src.primitive_bitwidth != dst.primitive_bitwidth or src.is_ptr() or dst.is_ptr():
                raise SemanticError(f"cannot bitcast {src} to {dst}: sizes differ")
            u8 = tensor(x.handle, core.uint8, x.shape) if src.name == "fp8e4b15" else \
                cast(b, x, core.uint8, bitcast=True)
            return tensor(u8.handle, dst, x.shape) if dst.name == "fp8e4b15" else \
                cast(b, u8, dst, bitcast=True)
        if src.name == "fp8e4b15":
            return cast(b, _from_e4b15(b, x), dst)
        return _to_e4b15(b, x)
    if src != dst and not bitcast and (src.is_fp8() or dst.is_fp8()) and \
            not (src.is_floating() and dst.is_floating()) and not (src.is_ptr() or dst.is_ptr()):
        return cast(b, cast(b, x, core.float32), dst)  # fp8 <-> ints and bools through fp32
    if src == dst:
        return x
    ty = tensor_ir_type(dst, x.shape)
    if bitcast:
        if src.primitive_bitwidth != dst.primitive_bitwidth or src.is_ptr() or dst.is_ptr():
            raise SemanticError(f"cannot bitcast {src} to {dst}: sizes differ")
        return tensor(b.create1("arith.bitcast", [x.handle], ty), dst, x.shape)
    if src.is_ptr() or dst.is_ptr():
        return _pointer_cast(b, x, dst)
    if dst.is_bool():
        zero = broadcast_to(b, to_tensor(b, 0, hint=src), x.shape)
        return compare(b, "ne", x, zero)
    if src.is_floating() and dst.is_floating():
        name = "arith.extf" if src.primitive_bitwidth < dst.primitive_bitwidth else "arith.truncf"
        if src.primitive_bitwidth == dst.primitive_bitwidth:  # fp16 <-> bf16
            mid = cast(b, x, core.float32)
            return cast(b, mid, dst)
    elif src.is_int() and dst.is_int():
        if src.primitive_bitwidth == dst.primitive_bitwidth:
            return tensor(x.handle, dst, x.shape)  # signedness only
        if src.primitive_bitwidth < dst.primitive_bitwidth:
            name = "arith.extsi" if src.is_int_signed() and not src.is_bool() else "arith.extui"
        else:
            name = "arith.trunci"
    elif src.is_int() and dst.is_floating():
        name = "arith.sitofp" if src.is_int_signed() and not src.is_bool() else "arith.uitofp"
    else:
        name = "arith.fptosi" if dst.is_int_signed() else "arith.fptoui"
    return tensor(b.create1(name, [x.handle], ty), dst, x.shape)


def _rounded_cast(b: Builder, x: tensor, dst: core.dtype, mode, bitcast: bool) -> tensor:
    """A float narrowed to `dst` with an explicit rounding mode (Triton's checks and
    messages).  Toward zero: the nearest-even result, one step toward zero where it rounded
    away (|result| > |x|); the steps of a float's bits are its neighbours (sign-magnitude),
    an overflow to inf steps to the largest finite value, and NaN stays NaN."""
    if mode not in ROUNDING_MODES:
        raise SemanticError(f"Invalid rounding mode: {mode}. Supported rounding modes are "
                            f"'rtne' and 'rtz'.")
    src = x.dtype
    if bitcast or not (src.is_floating() and dst.is_floating()
                       and dst.primitive_bitwidth < src.primitive_bitwidth):
        raise SemanticError(f"fp_downcast_rounding should be set only for truncating fp "
                            f"conversions. Source scalar type is {src} and destination type "
                            f"is {dst}")
    y = cast(b, x, dst)
    if mode == "rtne" or dst.is_fp8e4b15():  # (Triton's fp8e4b15 hook takes no mode)
        return y
    back = cast(b, y, src)  # (exact: src is the wider)
    zero = to_tensor(b, 0.0, hint=src)
    away = where(b, compare(b, "ge", x, zero), compare(b, "gt", back, x),
                 compare(b, "lt", back, x))
    bits = core.DTYPES[f"uint{dst.primitive_bitwidth}"]
    step = cast(b, binary(b, "sub", cast(b, y, bits, bitcast=True), to_tensor(b, 1, hint=bits)),
                dst, bitcast=True)
    return where(b, away, step, y)


def _pointer_cast(b: Builder, x: tensor, dst: core.dtype) -> tensor:
    """Casts through the 64-bit address, as Triton's: an integer (an address loaded from
    memory, e.g. grouped GEMM's pointer arrays) to a pointer, a pointer to an integer, or a
    pointer to a pointer of another element type; scalars, or tiles element by element
    (`tl.where` between loaded addresses `.to(tl.pi32_t)`)."""
    src = x.dtype
    if src.is_floating() or dst.is_floating():
        raise SemanticError(f"cannot cast {src} to {dst}")
    if src.is_ptr():
        x = tensor(B.build_ptr_to_int(b, x.handle, result_type=tensor_ir_type(core.int64,
                                                                             x.shape)),
                   core.int64, x.shape)
        if not dst.is_ptr():
            return cast(b, x, dst)
    else:
        x = cast(b, x, core.int64 if _signed(src) and not src.is_bool() else core.uint64)
    h = B.build_int_to_ptr(b, x.handle, result_type=tensor_ir_type(dst, x.shape))
    return tensor(h, dst, x.shape)


# --------------------------------------------------------------------------------------------
# arithmetic: one row per operator -> (signed int op, unsigned int op, float op)

ARITH = {
    "add": ("arith.addi", "arith.addi", "arith.addf"),
    "sub": ("arith.subi", "arith.subi", "arith.subf"),
    "mul": ("arith.muli", "arith.muli", "arith.mulf"),
    "truediv": (None, None, "arith.divf"),
    "floordiv": ("arith.divsi", "arith.divui", None),
    "mod": ("arith.remsi", "arith.remui", "arith.remf"),
    "and": ("arith.andi", "arith.andi", None),
    "or": ("arith.ori", "arith.ori", None),
    "xor": ("arith.xori", "arith.xori", None),
    "lshift": ("arith.shli", "arith.shli", None),
    "rshift": ("arith.shrsi", "arith.shrui", None),
    "maximum": ("arith.maxsi", "arith.maxui", "arith.maximumf"),
    "minimum": ("arith.minsi", "arith.minui", "arith.minimumf"),
    # tl.maximum/minimum without NaN propagation (Triton's default): the non-NaN operand
    "maximum_num": ("arith.maxsi", "arith.maxui", "arith.maxnumf"),
    "minimum_num": ("arith.minsi", "arith.minui", "arith.minnumf"),
}

# comparisons: (signed, unsigned, float) predicates of arith.cmpi / arith.cmpf
COMPARE = {
    "lt": ("slt", "ult", "olt"),
    "le": ("sle", "ule", "ole"),
    "gt": ("sgt", "ugt", "ogt"),
    "ge": ("sge", "uge", "oge"),
    "eq": ("eq", "eq", "oeq"),
    "ne": ("ne", "ne", "une"),
}

_CMPI = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5, "ult": 6, "ule": 7,
         "ugt": 8, "uge": 9}
_CMPF = {"oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "one": 6, "une": 13}

_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
           "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
           "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


_BITWISE = ("and", "or", "xor", "lshift", "rshift")


def _signed(dt: core.dtype) -> bool:
    """Triton's signedness: int1 counts as signed."""
    return dt.is_int_signed() or dt.is_bool()


def _kind_index(dt: core.dtype) -> int:
    if dt.is_floating():
        return 2
    return 1 if (dt.is_int_unsigned() or dt.is_bool()) else 0


_CONTRACTABLE = ("arith.addf", "arith.subf", "arith.mulf")
_CONTRACT = None


def _contract_attr():
    global _CONTRACT
    if _CONTRACT is None:
        _CONTRACT = ir.Attribute.parse("#arith.fastmath<contract>")
    return _CONTRACT


def binary(b: Builder, op: str, x, y) -> tensor:
    if op in _DIV_OR_MOD:
        x, y = _fp8_div_scalar(b, x, y)
    x, y = weak_pair(b, x, y)
    sym = _SYMBOL.get(op, op)
    # pointer arithmetic
    if x.dtype.is_ptr() or y.dtype.is_ptr():
        return _pointer_arith(b, op, x, y)
    try:
        x, y = broadcast_pair(b, x, y)
    except SemanticError as e:
        raise SemanticError(f"{e} in `{sym}`") from None
    check_div_signedness(op, x.dtype, y.dtype)
    ct = computation_type(x.dtype, y.dtype, op)
    if ct.is_fp8():  # one float8 kind: computed in fp32 (exactly, or correctly rounded), then
        r = binary(b, op, cast(b, x, core.float32), cast(b, y, core.float32))
        return cast(b, r, ct)  # rounded once to the float8 type, as `.to()` rounds
    names = ARITH[op]
    name = names[_kind_index(ct)]
    if op == "rshift" and _signed(x.dtype) and not x.dtype.is_bool() and ct.is_int():
        name = "arith.shrsi"  # as Triton: the left operand's signedness picks the shift
    if name is None and op == "floordiv" and ct.is_floating():
        q = binary(b, "truediv", x, y)
        return tensor(b.create1("math.floor", [q.handle], q.handle.type), q.dtype, q.shape)
    if name is None and op in _BITWISE:
        raise SemanticError(bitwise_message(op, x.dtype, y.dtype))
    if name is None:
        raise SemanticError(f"`{sym}` is not defined for {x.dtype} and {y.dtype}")
    x, y = cast(b, x, ct), cast(b, y, ct)
    attrs = None
    if name in _CONTRACTABLE and getattr(b.options, "enable_fp_fusion", False):
        attrs = {"fastmath": _contract_attr()}  # lets LLVM fuse a * b + c into an fma, as Triton does
    h = b.create1(name, [x.handle, y.handle], x.handle.type, attrs)
    return tensor(h, ct, x.shape)


def check_div_signedness(op: str, a: core.dtype, b: core.dtype):
    """`/`, `//`, `%` refuse integers of different signedness (Triton's rule)."""
    if op in _DIV_OR_MOD and a.is_int() and b.is_int() and _signed(a) != _signed(b):
        sym = _SYMBOL.get(op, op)
        raise SemanticError(f"Cannot use `{sym}` with {a} and {b} because they have different "
                            f"signedness; this is unlikely to result in a useful answer. Cast "
                            f"them to the same signedness.")


def bitwise_message(op: str, a: core.dtype, b: core.dtype) -> str:
    sym = _SYMBOL.get(op, op)  # (Triton's wording next to ours)
    return (f"`{sym}` is not defined for {a} and {b} (invalid operands of type {a} and {b}: "
            f"bitwise operators take integers)")


def is_bitwise(op: str) -> bool:
    return op in _BITWISE


def _fp8_div_scalar(b: Builder, x, y):
    """`/`, `%`, `//` of a float8 tile and a Python number: the number becomes an fp32
    constant (Triton makes it in the fp32 computation type; it is not rounded to float8)."""
    if isinstance(x, tensor) == isinstance(y, tensor):
        return x, y
    t, v = (x, y) if isinstance(x, tensor) else (y, x)
    v = v.value if isinstance(v, constexpr) else v
    if not t.dtype.is_fp8() or not isinstance(v, (bool, int, float)):
        return x, y
    c = b.constant(v, core.float32)
    return (x, c) if isinstance(x, tensor) else (c, y)


def compare(b: Builder, op: str, x, y) -> tensor:
    x, y = weak_pair(b, x, y)
    try:
        x, y = broadcast_pair(b, x, y)
    except SemanticError as e:
        raise SemanticError(f"{e} in `{_SYMBOL[op]}`") from None
    if x.dtype.is_ptr() or y.dtype.is_ptr():
        if not (x.dtype.is_ptr() and y.dtype.is_ptr()):
            raise SemanticError(f"cannot compare {x.dtype} with {y.dtype}")
        x = ptr_to_int(b, x)
        y = ptr_to_int(b, y)
        ct = core.uint64
    else:
        ct = computation_type(x.dtype, y.dtype, op)
        if ct.is_fp8():  # compared as fp32 values (exact)
            ct = core.float32
    x, y = cast(b, x, ct), cast(b, y, ct)
    pred = COMPARE[op][_kind_index(ct)]
    rt = tensor_ir_type(core.int1, x.shape)
    i64 = ir.IntegerType.get_signless(64)
    if ct.is_floating():
        h = b.create1("arith.cmpf", [x.handle, y.handle], rt,
                      {"predicate": ir.IntegerAttr.get(i64, _CMPF[pred])})
    else:
        h = b.create1("arith.cmpi", [x.handle, y.handle], rt,
                      {"predicate": ir.IntegerAttr.get(i64, _CMPI[pred])})
    return tensor(h, core.int1, x.shape)


def ptr_to_int(b, x: tensor) -> tensor:
    h = B.build_ptr_to_int(b, x.handle, result_type=tensor_ir_type(core.int64, x.shape))
    return tensor(h, core.int64, x.shape)


def _pointer_arith(b, op, x: tensor, y: tensor) -> tensor:
    if op == "add" and y.dtype.is_ptr() and not x.dtype.is_ptr():
        x, y = y, x
    if not x.dtype.is_ptr() or y.dtype.is_ptr() or op not in ("add", "sub"):
        raise SemanticError(f"`{_SYMBOL.get(op, op)}` is not defined for {x.dtype} and {y.dtype}")
    if not y.dtype.is_int():
        raise SemanticError(f"pointer offsets must be integers, got {y.dtype}")
    if op == "sub":
        y = minus(b, y)
    return addptr(b, x, y)


def addptr(b, ptr: tensor, offset: tensor) -> tensor:
    shape = broadcast_shapes(ptr.shape, offset.shape, "pointer and offset")
    ptr, offset = broadcast_to(b, ptr, shape), broadcast_to(b, offset, shape)
    if offset.dtype.is_bool():
        offset = cast(b, offset, core.int32)
    h = B.build_addptr(b, ptr.handle, offset.handle)
    return tensor(h, ptr.dtype, shape)


def minus(b, x) -> tensor:
    x = to_tensor(b, x)
    if x.dtype.is_ptr():
        raise SemanticError("unary `-` is not defined for pointers")
    if x.dtype.is_fp8():  # the sign bit flipped (no float8 arithmetic reaches LLVM)
        bits = binary(b, "xor", cast(b, x, core.uint8, bitcast=True), 0x80)
        return cast(b, bits, x.dtype, bitcast=True)
    if x.dtype.is_floating():
        return tensor(b.create1("arith.negf", [x.handle], x.handle.type), x.dtype, x.shape)
    return binary(b, "sub", 0, x)


def invert(b, x) -> tensor:
    x = to_tensor(b, x)
    if not x.dtype.is_int():
        raise SemanticError(f"`~` is not defined for {x.dtype}")
    return binary(b, "xor", x, -1 if x.dtype.is_int_signed() else (1 << x.dtype.primitive_bitwidth) - 1)


def logical_not(b, x) -> tensor:
    x = to_tensor(b, x)
    return compare(b, "eq", x, 0)


# `and` / `or` as Triton's code generator takes them, for the compiler and (through the
# interpreter's rewrite of the kernel's source, runtime/interp_rewrite.py) the interpreter: a
# compile-time value short-circuits when it decides the result (`False and ...`, `True or
# ...`) and is dropped otherwise; the tiles and runtime scalars left combine elementwise as
# booleans (x != 0; Triton takes only int1 there).
# Triton 3.6 warns so (at the kernel's line) where an operand is a tile of one or more dims
BOOL_OP_TILE_WARNING = ("Logical operators 'and' and 'or' are deprecated for non-scalar "
                        "tensors; please use '&' or '|' instead")


def bool_op_on_tiles(x, y) -> bool:
    """Whether `x op y` combines a tile with dimensions (Triton's deprecation warning)."""
    return any(isinstance(v, tensor) and v.shape for v in (x, y))


def bool_op_stops(op: str, x) -> bool:
    """Whether `x`, the value so far of an `op` ("and"/"or") chain, is its result."""
    v = x.value if isinstance(x, constexpr) else x
    return not isinstance(v, tensor) and bool(v) == (op == "or")


def bool_op(b, op: str, x, y):
    """`x op y` once `x` does not stop the chain (bool_op_stops)."""
    vx, vy = (v.value if isinstance(v, constexpr) else v for v in (x, y))
    if not isinstance(vx, tensor):
        return y  # (x is neutral)
    if not isinstance(vy, tensor):
        return y if bool_op_stops(op, y) else x
    vx, vy = (v if v.dtype.is_bool() else cast(b, v, core.int1)
              for v in (to_tensor(b, vx), to_tensor(b, vy)))
    return binary(b, op, vx, vy)


def where(b, cond, x, y) -> tensor:
    cond = to_tensor(b, cond)
    if not cond.dtype.is_bool():
        cond = cast(b, cond, core.int1)
    x, y = weak_pair(b, x, y)
    if not (x.dtype.is_ptr() and y.dtype.is_ptr()):
        ct = computation_type(x.dtype, y.dtype, "where")
        x, y = cast(b, x, ct), cast(b, y, ct)
    elif x.dtype != y.dtype:
        raise SemanticError(f"where on pointers of different types {x.dtype} and {y.dtype}")
    shape = broadcast_shapes(broadcast_shapes(cond.shape, x.shape, "where operands"), y.shape,
                             "where operands")
    cond, x, y = (broadcast_to(b, t, shape) for t in (cond, x, y))
    h = b.create1("arith.select", [cond.handle, x.handle, y.handle], x.handle.type)
    return tensor(h, x.dtype, shape)
