"""Implementations of `tl.dot` and `tl.softmax`.

`dot` follows Triton 3.6's `tl.dot` (python/triton/language/core.py and semantic.py): the same
argument checks, result dtypes and messages.  It emits one `tile.dot` (a, b, acc), lowered on
the portable path by `lowering/rules/dot.py` (FMAs over shared-memory copies of a and b).
`softmax` is built from `max`, `exp`, `sum` and `fdiv`, as Triton's `standard.softmax`.
"""
from __future__ import annotations

from tilework.dialects import builders as B

from ..language import core
from ..language.core import constexpr, tensor
from . import semantic as S
from .ops_core import IMPLS, const, impl
from .semantic import SemanticError
from .types import tensor_ir_type

# Triton's CUDAOptions.allowed_dot_input_precisions (HIP: "ieee", "bf16x3", "bf16x6" and, on
# CDNA3, "tf32").  The FMA path (lowering/rules/dot.py) rounds fp32 operands to tf32 for "tf32"
# (to nearest, ties away from zero, as cvt.rna.tf32.f32) and computes the others in fp32.
ALLOWED_INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
_DOT_DTYPES = ("int8", "uint8", "fp16", "bf16", "fp32", "fp64")


def _none(x) -> bool:
    return x is None or (isinstance(x, constexpr) and x.value is None)


def _target(b) -> str:
    return getattr(getattr(b, "options", None), "target", None) or ""


def min_dot_size(target: str, lhs: core.dtype, rhs: core.dtype) -> tuple[int, int, int]:
    """(M, N, K) lower bounds of Triton 3.6's backends (`min_dot_size` in
    third_party/{nvidia,amd}/backend/compiler.py).  NVIDIA (and an unknown target, the
    interpreter): K >= 16, K >= 32 for 8-bit inputs, any M and N (small M/N are padded for
    the tensor cores).  AMD CDNA (gfx9*): no bound for fp16 x fp16 and fp32 x fp32, else
    M, N >= 16.  Other AMD chips: 16, 16, 16."""
    if target.startswith("gfx"):
        if target.startswith("gfx9"):
            if lhs == rhs and (lhs.is_fp16() or lhs.is_fp32()):
                return (1, 1, 1)
            return (16, 16, 1)
        return (16, 16, 16)
    if lhs.primitive_bitwidth != rhs.primitive_bitwidth:
        raise SemanticError("lhs and rhs bitwidth must be the same")
    return (1, 1, 32) if lhs.primitive_bitwidth == 8 else (1, 1, 16)


def _input_precision(b, input_precision, allow_tf32) -> str:
    ip, allow = const(input_precision, "input_precision"), const(allow_tf32, "allow_tf32")
    if ip is not None and allow is not None:
        raise SemanticError("Only one of input_precision and allow_tf32 can be specified")
    target = _target(b)
    allowed = ALLOWED_INPUT_PRECISIONS
    if target.startswith("gfx"):  # HIPOptions: tf32 on CDNA3 only
        allowed = ("ieee", "bf16x3", "bf16x6") + (("tf32",) if target.startswith("gfx94") else ())
    if ip is None:
        ip = "tf32" if "tf32" in allowed and (allow or allow is None) else "ieee"
    if not isinstance(ip, str) or ip.lower() not in allowed:
        raise SemanticError(f"input_precision must be one of {allowed}. Got {ip}")
    return ip.lower()


def _shape_str(s) -> str:
    return str(list(s))


@impl
def dot(b, input, other, acc=None, input_precision=None, allow_tf32=None,
        max_num_imprecise_acc=None, out_dtype=core.float32):
    precision = _input_precision(b, input_precision, allow_tf32)
    out_dtype = const(out_dtype, "out_dtype")
    if isinstance(out_dtype, str):
        out_dtype = core.str_to_ty(out_dtype)
    if not isinstance(out_dtype, core.dtype):
        raise SemanticError(f"out_dtype must be a dtype, got {out_dtype!r}")
    imprecise = const(max_num_imprecise_acc, "max_num_imprecise_acc")
    x, y = S.to_tensor(b, input), S.to_tensor(b, other)
    if not x.shape or not y.shape:
        raise SemanticError(f"dot needs two tiles, got shapes {_shape_str(x.shape)} and "
                            f"{_shape_str(y.shape)}")
    if x.dtype.is_fp8e4b15() or y.dtype.is_fp8e4b15():
        # no matrix instruction takes it: both operands as fp16 first, as Triton does (the
        # interpreter would otherwise multiply its bytes)
        x, y = S.cast(b, x, core.float16), S.cast(b, y, core.float16)
    if not (x.dtype.is_fp8() and y.dtype.is_fp8()):
        if x.dtype.name not in _DOT_DTYPES:
            raise SemanticError(f"Unsupported lhs dtype {x.dtype}")
        if y.dtype.name not in _DOT_DTYPES:
            raise SemanticError(f"Unsupported rhs dtype {y.dtype}")
        if x.dtype != y.dtype:
            raise SemanticError(f"Both operands must be same dtype. Got {x.dtype} and {y.dtype}")
    if not (len(x.shape) == len(y.shape) == 2 or len(x.shape) == len(y.shape) == 3):
        raise SemanticError(f"Both inputs must be either 2D or 3D; (lhs: {_shape_str(x.shape)} "
                            f"vs rhs: {_shape_str(y.shape)})")
    if x.shape[-1] != y.shape[-2]:
        raise SemanticError(
            f"First input shape ({_shape_str(x.shape)}) and second input shape "
            f"{_shape_str(y.shape)} are not compatible for matmul (second index of first shape "
            f"({x.shape[-1]}) must be equal to first index of second shape ({y.shape[-2]})")
    if x.shape[:-2] != y.shape[:-2]:
        raise SemanticError(f"dot operands have different batch sizes: {_shape_str(x.shape)} "
                            f"and {_shape_str(y.shape)}")
    m_min, n_min, k_min = min_dot_size(_target(b), x.dtype, y.dtype)
    M, K, N = x.shape[-2], x.shape[-1], y.shape[-1]
    if not (M >= m_min and K >= k_min and N >= n_min):
        raise SemanticError(f"Input shapes should have M >= {m_min}, N >= {n_min} and "
                            f"K >= {k_min}")
    if x.dtype.is_int():
        if x.dtype != core.int8:
            raise SemanticError("only int8 supported!")
        ret = core.int32
    elif out_dtype.is_bf16():
        raise SemanticError("out_dtype=bfloat16 is unsupported. Please use "
                            "out_dtype=float32/float16 and cast with `.to(tl.bfloat16)`")
    elif x.dtype.is_fp32() or x.dtype.is_bf16():
        ret = core.float32
    elif x.dtype.is_fp64():
        ret = core.float64
    else:  # fp16, fp8
        if out_dtype not in (core.float16, core.float32):
            raise SemanticError(f"out_dtype must be float32 or float16 for {x.dtype} inputs, "
                                f"got {out_dtype}")
        ret = out_dtype
    shape = x.shape[:-1] + (N,)
    if _none(acc):
        c = b.constant(0, ret, shape)
    else:
        c = S.to_tensor(b, acc)
        if c.shape != shape or c.dtype != out_dtype:
            raise SemanticError(f"dot accumulator must have shape {_shape_str(shape)} and the "
                                f"dtype out_dtype={out_dtype}, got shape {_shape_str(c.shape)} "
                                f"and {c.dtype}")
        if c.dtype != ret:  # out_dtype=int32 with int8 inputs is the only way here
            raise SemanticError(f"dot of {x.dtype} inputs accumulates in {ret}, not {c.dtype}")
    if imprecise is None:
        imprecise = 0
    elif x.dtype.is_fp8() and y.dtype.is_fp8() and imprecise > K:
        raise SemanticError(f"max_num_imprecise_acc ({imprecise}) must be <= K ({K})")
    if not isinstance(imprecise, int):
        raise SemanticError(f"max_num_imprecise_acc must be a constexpr int, got {imprecise!r}")
    h = B.build_dot(b, x.handle, y.handle, c.handle, result_type=tensor_ir_type(ret, shape),
                    input_precision=precision, max_num_imprecise_acc=int(imprecise))
    return tensor(h, ret, shape)


@impl
def softmax(b, x, dim=None, keep_dims=False, ieee_rounding=False):
    """Triton's `standard.softmax`: `z = x - max(x, dim); num = exp(z);
    fdiv(num, sum(num, dim), ieee_rounding)`, with `dim` 0 when None."""
    x = S.to_tensor(b, x)
    if not x.shape:
        raise SemanticError("softmax needs a tile, got a scalar")
    d = const(dim, "dim")
    d = 0 if d is None else d
    keep = const(keep_dims, "keep_dims")
    # Triton's tl.max computes floats narrower than 32 bits in fp32 (and ints in int32), so
    # x - max(x) is fp32 for fp16/bf16 inputs
    m_in = x
    if x.dtype.primitive_bitwidth < 32 and (x.dtype.is_floating() or x.dtype.is_int()):
        m_in = S.cast(b, x, core.float32 if x.dtype.is_floating() else core.int32)
    m = IMPLS["max"](b, m_in, d, keep_dims=keep)
    z = S.binary(b, "sub", x, m)
    num = IMPLS["exp"](b, z)
    den = IMPLS["sum"](b, num, d, keep_dims=keep)
    return IMPLS["fdiv"](b, num, den, ieee_rounding)
