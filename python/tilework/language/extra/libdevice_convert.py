"""libdevice's `rint`, its conversions with a rounding mode in the name, written on `.to()` (which
truncates float -> int and rounds to nearest int -> float and fp64 -> fp32) and `floor`/`ceil`/
`rint`: `float2int_rd(x)` is `floor(x).to(int32)`.  For values in the result's range (outside
it, or NaN, as `.to()`: libdevice saturates).  The int -> float ones with a directed rounding
(`int2float_rd`, ...) are in libdevice_round.py.  Also the bit reinterpretations
`float_as_uint`, `uint_as_float`, `double2hiint`, `double2loint`, `hiloint2double`; the
round-to-nearest arithmetic (`add_rn`, ...: the operators, which round so; no contraction
into fma happens in tilework's code) and int32 `mulhi`, `hadd`, `rhadd`."""
from ..core import float32, float64, int32, int64, uint32, uint64, where
from ..function import jit
from ..math import ceil, div_rn, floor, fma

@jit
def rint(x):
    """Nearest integer, halves to even (C's rint in the default rounding mode)."""
    f = floor(x)
    d = x - f
    half = f * 0.5
    odd = floor(half) != half
    return where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)

__all__ = [
    "rint", "add_rn", "sub_rn", "mul_rn", "fma_rn", "rcp_rn", "mulhi", "hadd", "rhadd",
    "float2int_rd",
    "float2int_ru",
    "float2int_rn",
    "float2int_rz",
    "float2uint_rd",
    "float2uint_ru",
    "float2uint_rn",
    "float2uint_rz",
    "float2ll_rd",
    "float2ll_ru",
    "float2ll_rn",
    "float2ll_rz",
    "float2ull_rd",
    "float2ull_ru",
    "float2ull_rn",
    "float2ull_rz",
    "double2int_rd",
    "double2int_ru",
    "double2int_rn",
    "double2int_rz",
    "double2uint_rd",
    "double2uint_ru",
    "double2uint_rn",
    "double2uint_rz",
    "double2ll_rd",
    "double2ll_ru",
    "double2ll_rn",
    "double2ll_rz",
    "double2ull_rd",
    "double2ull_ru",
    "double2ull_rn",
    "double2ull_rz",
    "int2float_rn",
    "int2double_rn",
    "uint2float_rn",
    "uint2double_rn",
    "ll2float_rn",
    "ll2double_rn",
    "ull2float_rn",
    "ull2double_rn",
    "double2float_rn",
    "float_as_uint",
    "uint_as_float",
    "double2hiint",
    "double2loint",
    "hiloint2double",
]


@jit
def float2int_rd(x):
    return floor(x).to(int32)


@jit
def float2int_ru(x):
    return ceil(x).to(int32)


@jit
def float2int_rn(x):
    return rint(x).to(int32)


@jit
def float2int_rz(x):
    return x.to(int32)


@jit
def float2uint_rd(x):
    return floor(x).to(uint32)


@jit
def float2uint_ru(x):
    return ceil(x).to(uint32)


@jit
def float2uint_rn(x):
    return rint(x).to(uint32)


@jit
def float2uint_rz(x):
    return x.to(uint32)


@jit
def float2ll_rd(x):
    return floor(x).to(int64)


@jit
def float2ll_ru(x):
    return ceil(x).to(int64)


@jit
def float2ll_rn(x):
    return rint(x).to(int64)


@jit
def float2ll_rz(x):
    return x.to(int64)


@jit
def float2ull_rd(x):
    return floor(x).to(uint64)


@jit
def float2ull_ru(x):
    return ceil(x).to(uint64)


@jit
def float2ull_rn(x):
    return rint(x).to(uint64)


@jit
def float2ull_rz(x):
    return x.to(uint64)


@jit
def double2int_rd(x):
    return floor(x).to(int32)


@jit
def double2int_ru(x):
    return ceil(x).to(int32)


@jit
def double2int_rn(x):
    return rint(x).to(int32)


@jit
def double2int_rz(x):
    return x.to(int32)


@jit
def double2uint_rd(x):
    return floor(x).to(uint32)


@jit
def double2uint_ru(x):
    return ceil(x).to(uint32)


@jit
def double2uint_rn(x):
    return rint(x).to(uint32)


@jit
def double2uint_rz(x):
    return x.to(uint32)


@jit
def double2ll_rd(x):
    return floor(x).to(int64)


@jit
def double2ll_ru(x):
    return ceil(x).to(int64)


@jit
def double2ll_rn(x):
    return rint(x).to(int64)


@jit
def double2ll_rz(x):
    return x.to(int64)


@jit
def double2ull_rd(x):
    return floor(x).to(uint64)


@jit
def double2ull_ru(x):
    return ceil(x).to(uint64)


@jit
def double2ull_rn(x):
    return rint(x).to(uint64)


@jit
def double2ull_rz(x):
    return x.to(uint64)


@jit
def int2float_rn(x):
    return x.to(float32)


@jit
def int2double_rn(x):
    return x.to(float64)


@jit
def uint2float_rn(x):
    return x.to(float32)


@jit
def uint2double_rn(x):
    return x.to(float64)


@jit
def ll2float_rn(x):
    return x.to(float32)


@jit
def ll2double_rn(x):
    return x.to(float64)


@jit
def ull2float_rn(x):
    return x.to(float32)


@jit
def ull2double_rn(x):
    return x.to(float64)


@jit
def double2float_rn(x):
    return x.to(float32)


@jit
def float_as_uint(x):
    return x.to(uint32, bitcast=True)


@jit
def uint_as_float(x):
    return x.to(float32, bitcast=True)


@jit
def double2hiint(x):
    return (x.to(int64, bitcast=True) >> 32).to(int32)


@jit
def double2loint(x):
    return x.to(int64, bitcast=True).to(int32)


@jit
def hiloint2double(hi, lo):
    bits = (hi.to(int64) << 32) | lo.to(uint32, bitcast=True).to(int64)
    return bits.to(float64, bitcast=True)


@jit
def add_rn(x, y):
    return x + y


@jit
def sub_rn(x, y):
    return x - y


@jit
def mul_rn(x, y):
    return x * y


@jit
def fma_rn(x, y, z):
    return fma(x, y, z)


@jit
def rcp_rn(x):
    return div_rn(1.0, x)


@jit
def mulhi(x, y):
    """The high 32 bits of the 64-bit product of two int32."""
    return ((x.to(int64) * y.to(int64)) >> 32).to(int32)


@jit
def hadd(x, y):
    """(x + y) >> 1 without overflow (int32)."""
    return (x & y) + ((x ^ y) >> 1)


@jit
def rhadd(x, y):
    """(x + y + 1) >> 1 without overflow (int32)."""
    return (x | y) - ((x ^ y) >> 1)
