"""`tl.dot_scaled`: the microscaled (MX) matrix product of Triton, written in the language.

Each operand is upcast to bf16 with its scales applied, then multiplied by `tl.dot` (so it
takes the tensor-core path where `dot` does).  The upcast is exact: an e2m1, e4m3, e5m2 or
bf16 value times a power of two is a bf16 value (bf16 has fp32's exponent range; results
outside it overflow or flush as fp32 would).  fp16 operands are upcast to fp32 instead.

Formats (`lhs_format`, `rhs_format`): "e2m1" (two 4-bit values per uint8, packed along K,
the first in the low nibble), "e4m3", "e5m2" (fp8 tiles or their uint8 bits), "bf16", "fp16".
Scales: uint8 e8m0 (2**(s - 127)), one per 32 consecutive K elements, `lhs_scale` [M, K // 32]
and `rhs_scale` [N, K // 32], or None (no scaling).  Only `lhs_k_pack=True` /
`rhs_k_pack=True` (Triton's default) is supported.
"""
from .core import bfloat16, broadcast_to, constexpr, float8e4nv, float8e5, float32, static_assert
from .core import uint8, uint32, where
from .dot import dot
from .function import jit
from .shape import join, permute, reshape

__all__ = ["dot_scaled"]

SCALE_GROUP = 32  # K elements per e8m0 scale
FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")


@jit
def _e2m1_values(v):
    """fp32 values of the 4-bit e2m1 codes in the low bits of the uint8 tile `v`: sign bit 3,
    exponent bits 1-2 (bias 1), mantissa bit 0; in halves, (2 + m) << (e - 1) or m."""
    e = (v >> 1) & 3
    m = v & 1
    halves = where(e == 0, m, (m + 2) << (where(e == 0, 1, e) - 1))
    mag = halves.to(float32) * 0.5
    return where((v & 8) != 0, -mag, mag)


@jit
def _upcast(x, FORMAT: constexpr, K_LAST: constexpr):
    """The operand's values as fp32 (e2m1 unpacked to twice the packed size along K)."""
    static_assert(FORMAT in FORMATS, "dot_scaled formats are e2m1, e4m3, e5m2, bf16 and fp16")
    if FORMAT == "e2m1":
        static_assert(x.dtype == uint8, "an e2m1 operand holds two values per uint8")
        pair = join(_e2m1_values(x & 15), _e2m1_values(x >> 4))  # [.., .., 2]
        if K_LAST:  # [M, K/2] -> [M, K]
            return reshape(pair, (x.shape[0], x.shape[1] * 2))
        # [K/2, N] -> [K/2, 2, N] -> [K, N]
        return reshape(permute(pair, (0, 2, 1)), (x.shape[0] * 2, x.shape[1]))
    if FORMAT == "e4m3":
        if x.dtype == uint8:
            x = x.to(float8e4nv, bitcast=True)
        return x.to(float32)
    if FORMAT == "e5m2":
        if x.dtype == uint8:
            x = x.to(float8e5, bitcast=True)
        return x.to(float32)
    return x.to(float32)


@jit
def _scales(s, K: constexpr):
    """The e8m0 scales [R, K / 32] as fp32 factors [R, K] (2**(s - 127): the bits s << 23)."""
    f = (s.to(uint32) << 23).to(float32, bitcast=True)
    R: constexpr = s.shape[0]
    G: constexpr = s.shape[1]
    static_assert(G * SCALE_GROUP == K, "dot_scaled scales: one per 32 elements of K")
    return reshape(broadcast_to(reshape(f, (R, G, 1)), (R, G, SCALE_GROUP)), (R, K))


@jit
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None,
               fast_math=False, lhs_k_pack=True, rhs_k_pack=True, out_dtype=float32):
    """`(lhs * 2**(lhs_scale - 127)) @ (rhs * 2**(rhs_scale - 127))` (+ `acc`) of an [M, K]
    and a [K, N] operand in the microscaling formats (see the module docstring); fp32 result
    (`out_dtype`)."""
    static_assert(lhs_k_pack and rhs_k_pack, "dot_scaled supports K-packed operands only")
    a = _upcast(lhs, lhs_format, True)
    b = _upcast(rhs, rhs_format, False)
    if lhs_scale is not None:
        a = a * _scales(lhs_scale, a.shape[1])
    if rhs_scale is not None:
        b = b * permute(_scales(rhs_scale, b.shape[0]), (1, 0))
    if lhs_format == "fp16" or rhs_format == "fp16":
        return dot(a, b, acc, input_precision="ieee", out_dtype=out_dtype)
    return dot(a.to(bfloat16), b.to(bfloat16), acc, out_dtype=out_dtype)
