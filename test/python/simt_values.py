"""Values of the SIMT emulator (simt_emulator.py): numpy dtypes of MLIR types, bit widths and
integer reinterpretation, shared by the emulator and its op-family mixins."""
from __future__ import annotations

import numpy as np

import mlir.ir as ir

INT_TYPES = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
UINT_TYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
FLOAT_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
BF16 = np.dtype([("bf16", np.uint16)])  # bfloat16 values kept as their bits


class EmulationError(Exception):
    pass


def np_type(t: ir.Type):
    """(numpy dtype, vector length or 0) of an MLIR type."""
    s = str(t)
    if s.startswith("!llvm.struct<("):  # homogeneous structs (wgmma accumulators)
        elems = {e.strip() for e in s[len("!llvm.struct<("):-2].split(",")}
        if len(elems) != 1:
            raise EmulationError(f"type {s} is not emulated")
        return np_type(ir.Type.parse(elems.pop()))[0], s.count(",") + 1
    if s.startswith("vector<"):
        n, e = s[len("vector<"):-1].split("x", 1)
        return np_type(ir.Type.parse(e))[0], int(n)
    if s in FLOAT_TYPES:
        return FLOAT_TYPES[s], 0
    if s == "bf16":
        return BF16, 0
    if s.startswith("f8"):  # float8 has no LLVM type: its bytes, moved, never computed on here
        return np.uint8, 0
    if s == "index" or s.startswith("!llvm.ptr"):
        return np.int64, 0
    if s.startswith("i"):
        return INT_TYPES[int(s[1:])], 0
    raise EmulationError(f"type {s} is not emulated")


def bit_width(dt) -> int:
    return 1 if dt == np.bool_ else np.dtype(dt).itemsize * 8


def as_unsigned(a):
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    if a.dtype.kind == "u":
        return a
    return a.view(UINT_TYPES[a.dtype.itemsize * 8])


def wrap_to(a, dt):
    """Reinterpret or wrap the integers of `a` to `dt` (two's complement)."""
    if dt == np.bool_:
        return (a & 1).astype(np.bool_) if a.dtype != np.bool_ else a
    return a.astype(dt)


# f8 kind of PTX's cvt -> (mantissa bits, exponent bias, largest finite magnitude's bits)
F8_CVT = {"e4m3": (3, 7, 0x7E), "e5m2": (2, 15, 0x7B)}


def f32_to_f8_satfinite(x, kind: str):
    """PTX `cvt.rn.satfinite.<kind>x2.f32` of each f32 in x: round to nearest even, finite
    overflow and inf to the largest finite magnitude, NaN to 0x7f; -> uint8 bits."""
    man, bias, maxbits = F8_CVT[kind]
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.int64)
    sign = (u >> 24) & 0x80
    a = u & 0x7FFFFFFF
    shift = 23 - man
    ar = a - ((127 - bias) << 23)
    r = (ar + (1 << (shift - 1)) - 1 + ((ar >> shift) & 1)) >> shift
    r = np.minimum(r, maxbits)
    t = (np.abs(np.asarray(x, np.float32)) * np.float32(2.0 ** (bias - 1 + man))
         + np.float32(2.0 ** 23)).astype(np.float32)
    sub = t.view(np.uint32).astype(np.int64) - 0x4B000000
    res = np.where(a < ((128 - bias) << 23), sub, r) | sign
    return np.where(a > 0x7F800000, 0x7F, res).astype(np.uint8)
