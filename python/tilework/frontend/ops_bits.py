"""Implementations of libdevice's bit and integer intrinsics (`tl.extra.libdevice.popc`, `clz`,
`ffs`, `brev`, `byte_perm`, `sad`, `mul24`; stubs in language/extra/libdevice_bits.py).

Argument dtypes dispatch as Triton's `extern_elementwise` does: the exact tuple of dtypes must
be one of the function's signatures (no promotion), and the result dtype is libdevice's
(`__nv_popcll(i64)` returns int32, `__nv_brevll` int64, ...).  Counting ops are upstream
`math.ctpop`/`ctlz`/`cttz` (LLVM's ctpop/ctlz/cttz on both targets), bit reversal and byte
permutation are `tile.bitreverse`/`tile.byte_perm` (lowering/rules/math.py), `sad` and
`mul24` are arithmetic on the operands (libdevice's own expansion of mul24)."""
from __future__ import annotations

import functools

from tilework.dialects import builders as B

from ..language import core
from ..language.core import tensor
from . import semantic as S
from .ops_core import impl
from .semantic import SemanticError

_COUNT = {("int32",): "int32", ("int64",): "int32"}
SIGNATURES = {
    "popc": _COUNT, "clz": _COUNT, "ffs": _COUNT,
    "brev": {("int32",): "int32", ("int64",): "int64"},
    "byte_perm": {("int32", "int32", "int32"): "int32"},
    "sad": {("int32", "int32", "uint32"): "int32", ("uint32", "uint32", "uint32"): "uint32"},
    "mul24": {("int32", "int32"): "int32", ("uint32", "uint32"): "uint32"},
}


def _dispatch(b, name, *args):
    """The operands broadcast to one shape (dtypes unchanged) and the result dtype."""
    ts = [S.to_tensor(b, a) for a in args]
    key = tuple(t.dtype.name for t in ts)
    table = SIGNATURES[name]
    if key not in table:
        raise SemanticError(f"libdevice.{name}: input arg type does not match. Expect one of "
                            f"{list(table)}, got {key}")
    shape = functools.reduce(lambda a, c: S.broadcast_shapes(a, c, f"{name} operands"),
                             [t.shape for t in ts])
    return [S.broadcast_to(b, t, shape) for t in ts], getattr(core, table[key])


def _same(b, opname, x: tensor) -> tensor:
    return tensor(b.create1(opname, [x.handle], x.handle.type), x.dtype, x.shape)


@impl
def popc(b, x):
    (x,), rdt = _dispatch(b, "popc", x)
    return S.cast(b, _same(b, "math.ctpop", x), rdt)


@impl
def clz(b, x):
    (x,), rdt = _dispatch(b, "clz", x)
    return S.cast(b, _same(b, "math.ctlz", x), rdt)


@impl
def ffs(b, x):
    """1 + the index of the lowest set bit; 0 for 0."""
    (x,), rdt = _dispatch(b, "ffs", x)
    tz = S.cast(b, _same(b, "math.cttz", x), rdt)
    return S.where(b, S.compare(b, "eq", x, 0), 0, S.binary(b, "add", tz, 1))


@impl
def brev(b, x):
    (x,), _ = _dispatch(b, "brev", x)
    return tensor(B.build_bitreverse(b, x.handle), x.dtype, x.shape)


@impl
def byte_perm(b, x, y, s):
    (x, y, s), _ = _dispatch(b, "byte_perm", x, y, s)
    return tensor(B.build_byte_perm(b, x.handle, y.handle, s.handle), x.dtype, x.shape)


@impl
def sad(b, x, y, z):
    """|x - y| + z (32-bit, wrapping), x and y compared with their signedness."""
    (x, y, z), rdt = _dispatch(b, "sad", x, y, z)
    d = S.where(b, S.compare(b, "lt", x, y), S.binary(b, "sub", y, x), S.binary(b, "sub", x, y))
    return S.binary(b, "add", d, S.cast(b, z, rdt, bitcast=True))


@impl
def mul24(b, x, y):
    """The product of the low 24 bits of x and y (sign-extended from bit 23 for int32), low
    32 bits of it: libdevice's own expansion (shift left 8, shift right 8, multiply)."""
    (x, y), rdt = _dispatch(b, "mul24", x, y)

    def low24(v):
        return S.binary(b, "rshift", S.binary(b, "lshift", v, 8), 8)
    return S.binary(b, "mul", low24(x), low24(y))
