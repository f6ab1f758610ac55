"""The kernel parameter ABI: how each runtime argument is passed to a compiled kernel.

The compiler records the kernel's runtime parameters (`metadata["signature"]`: name -> dtype
name, in order); the runtimes derive from it one kind letter per parameter, with its C type
(CUDA's parameter slots) and struct code (HIP's packed argument buffer).  Every scalar type
Triton accepts has one: a parameter is passed at its own width, as LLVM lowers the kernel's
`i8`/`i16`/`half`/`bfloat`/`double` argument (`.param .u8`, `.b8 [2]`, `.f64`, ...).  fp16 and
bf16 values go as their 16 bits (`encode_values`).  No MLIR, no GPU library.
"""
from __future__ import annotations

import ctypes
import math
import struct

from ..language.descriptor import parse_tensordesc

# kind -> (ctypes type, struct format code)
KINDS = {"p": (ctypes.c_void_p, "P"), "i": (ctypes.c_int32, "i"), "l": (ctypes.c_int64, "q"),
         "L": (ctypes.c_uint64, "Q"), "f": (ctypes.c_float, "f"), "b": (ctypes.c_bool, "?"),
         "c": (ctypes.c_int8, "b"), "s": (ctypes.c_int16, "h"), "C": (ctypes.c_uint8, "B"),
         "S": (ctypes.c_uint16, "H"), "I": (ctypes.c_uint32, "I"), "d": (ctypes.c_double, "d"),
         "h": (ctypes.c_uint16, "H"), "B": (ctypes.c_uint16, "H")}  # fp16, bf16: the bits


class TensorMapSlot(ctypes.Structure):
    """A 128-byte tensor map parameter (kind "T"; the driver copies the bytes, so the host
    slot needs no 64-byte alignment); `value` takes the encoded bytes (runtime/tma.py)."""
    _fields_ = [("bytes", ctypes.c_ubyte * 128)]

    @property
    def value(self):
        return bytes(self.bytes)

    @value.setter
    def value(self, b):
        ctypes.memmove(self.bytes, bytes(b), 128)


KINDS["T"] = (TensorMapSlot, "128s")
_SCALARS = {"int32": "i", "int64": "l", "uint64": "L", "fp32": "f", "int1": "b", "int8": "c",
            "int16": "s", "uint8": "C", "uint16": "S", "uint32": "I", "fp64": "d", "fp16": "h",
            "bf16": "B"}
_INT_BITS = {"c": (8, True), "s": (16, True), "i": (32, True), "l": (64, True),
             "C": (8, False), "S": (16, False), "I": (32, False), "L": (64, False)}


def param_kind(dtype: str) -> str:
    """The kind of a runtime parameter of dtype name `dtype` (`*fp32`, `int32`, ...); a host
    tensor descriptor (`tensordesc<fp16[64, 64]>`) is several: its base pointer, its shape
    (int32 each) and its strides but the last (int64 each)."""
    dtype = str(dtype)
    if dtype.startswith("*"):
        return "p"
    desc = parse_tensordesc(dtype)
    if desc is not None:
        rank = desc[1]
        return "p" + "i" * rank + "l" * (rank - 1)
    kind = _SCALARS.get(dtype)
    if kind is None:
        raise ValueError(f"no kernel parameter ABI for dtype {dtype!r}: expected a pointer or "
                         f"one of {', '.join(_SCALARS)}")
    return kind


def param_kinds(metadata: dict) -> str:
    """The kinds of a compiled kernel's parameters, in order ('' for a kernel compiled from a
    stage's text, which records no signature)."""
    kinds = "".join(param_kind(t) for t in metadata.get("signature", {}).values())
    kinds += "T" * len(metadata.get("tma", ()))  # TMA tensor maps follow the signature's
    if metadata.get("global_scratch_size"):
        kinds += "p"  # the global scratch buffer comes last
    return kinds


def ctypes_of(kinds: str) -> list:
    return [KINDS[k][0] for k in kinds]


def struct_format(kinds: str) -> str:
    """The `struct` format of the packed argument buffer (natural alignment)."""
    return "@" + "".join(KINDS[k][1] for k in kinds)


def kernarg_size(kinds: str) -> int:
    """The bytes of HIP's packed argument buffer: the natural-alignment packing rounded up to
    a multiple of 4, as LLVM's AMDGPU ABI sizes the kernarg segment (the hsaco note's
    `.kernarg_segment_size`; the kernel may load the tail with one dword)."""
    return -(-struct.calcsize(struct_format(kinds)) // 4) * 4


def kernarg_buffer(kinds: str, values) -> bytes:
    """HIP's argument buffer of these parameter values (fp16/bf16 as their bits), zero-padded
    to `kernarg_size`."""
    data = struct.pack(struct_format(kinds), *encode_values(kinds, values))
    return data.ljust(kernarg_size(kinds), b"\0")


def fp16_bits(x: float) -> int:
    """IEEE half bits of `x`, rounded to nearest even (out of range: infinity)."""
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0xFC00 if x < 0 else 0x7C00


def bf16_bits(x: float) -> int:
    """bfloat16 bits of `x` (through fp32, rounded to nearest even; NaN stays NaN)."""
    if math.isnan(x):
        return 0x7FC0
    try:
        bits = struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        return 0xFF80 if x < 0 else 0x7F80
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _wrap(bits: int, signed: bool):
    def enc(v):
        v = int(v) & ((1 << bits) - 1)  # two's complement at the parameter's width
        return v - (1 << bits) if signed and v >> (bits - 1) else v
    return enc


_ENCODERS = {"h": lambda v: fp16_bits(float(v)), "B": lambda v: bf16_bits(float(v)),
             "f": float, "d": float, "b": bool, "p": lambda v: v, "T": bytes}
_ENCODERS.update({k: _wrap(b, s) for k, (b, s) in _INT_BITS.items()})


def needs_encoding(kinds: str) -> bool:
    """Whether the values of these kinds are not stored as given (fp16/bf16 go as bits)."""
    return "h" in kinds or "B" in kinds


def encode_values(kinds: str, values) -> list:
    """The values as the parameter slots hold them: fp16/bf16 as their bits, integers wrapped
    to their width, floats as floats."""
    return [_ENCODERS[k](v) for k, v in zip(kinds, values)]
