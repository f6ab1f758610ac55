"""The kernel parameter ABI: how each runtime argument is passed to a compiled kernel.

The compiler records the kernel's runtime parameters (`metadata["signature"]`: name -> dtype
name, in order); the runtimes derive from it one kind letter per parameter: p(ointer),
i (int32), l (int64), L (uint64), f (float32), b (bool), with its C type (CUDA's parameter
slots) and struct code (HIP's packed argument buffer).  No MLIR, no GPU library.
"""
from __future__ import annotations

import ctypes

from ..language.descriptor import parse_tensordesc

# kind -> (ctypes type, struct format code)
KINDS = {"p": (ctypes.c_void_p, "P"), "i": (ctypes.c_int32, "i"), "l": (ctypes.c_int64, "q"),
         "L": (ctypes.c_uint64, "Q"), "f": (ctypes.c_float, "f"), "b": (ctypes.c_bool, "?")}
_SCALARS = {"int32": "i", "int64": "l", "uint64": "L", "fp32": "f", "int1": "b"}


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
    if metadata.get("global_scratch_size"):
        kinds += "p"  # the global scratch buffer comes last
    return kinds


def ctypes_of(kinds: str) -> list:
    return [KINDS[k][0] for k in kinds]


def struct_format(kinds: str) -> str:
    """The `struct` format of the packed argument buffer (natural alignment)."""
    return "@" + "".join(KINDS[k][1] for k in kinds)
