"""Host tensor maps of `TensorDescriptor` arguments loaded by TMA (NVIDIA sm_90).

A kernel that copies a host descriptor's blocks with TMA takes, after all its parameters, one
128-byte tensor map per such descriptor (`metadata["tma"]`: the argument's name, the box and
the swizzle its shared buffer needs, from `language.descriptor.tma_plan`).  `tensor_map_params`
is the pure part (the arguments of `cuTensorMapEncodeTiled`, checked against TMA's limits:
no GPU needed, tested compile-only); `encode` calls the driver.  Encoded maps are cached per
(address, shape, strides, plan): a launch with the same tensors reuses them.
"""
from __future__ import annotations

import struct

from ..language.descriptor import TensorDescriptor

# tensor element type name (torch dtype / numpy name) -> CU_TENSOR_MAP_DATA_TYPE_*
_DATA_TYPES = {
    "float16": "FLOAT16", "bfloat16": "BFLOAT16", "float32": "FLOAT32", "float64": "FLOAT64",
    "int32": "INT32", "uint32": "UINT32", "int64": "INT64", "uint64": "UINT64",
    "int16": "UINT16", "uint16": "UINT16", "int8": "UINT8", "uint8": "UINT8",
    "float8_e4m3fn": "UINT8", "float8_e5m2": "UINT8", "float8_e4m3fnuz": "UINT8",
    "float8_e5m2fnuz": "UINT8",
}
_SWIZZLES = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}
MAX_DIM = 1 << 32     # globalDim: at most 2^32 elements
MAX_STRIDE = 1 << 40  # globalStrides: under 2^40 bytes, multiples of 16


def _dtype_name(t) -> str:
    return str(t.dtype).rpartition(".")[2]


def _address(t) -> int:
    if callable(getattr(t, "data_ptr", None)):
        return int(t.data_ptr())
    cai = getattr(t, "__cuda_array_interface__", None) or getattr(t, "__array_interface__")
    return int(cai["data"][0])


def tensor_map_params(desc: TensorDescriptor, plan: dict) -> dict:
    """The `cuTensorMapEncodeTiled` arguments of `desc` under `plan` ({"box", "swizzle"}):
    dimensions innermost first, strides in bytes (of every dimension but the innermost), the
    enum members by name.  Out-of-bounds elements of a box read as zero (`padding="zero"`,
    the only padding TMA loads)."""
    name = _dtype_name(desc.base)
    if name not in _DATA_TYPES:
        raise ValueError(f"TMA cannot copy tensors of {name}")
    item = desc.base.element_size() if callable(getattr(desc.base, "element_size", None)) \
        else desc.base.dtype.itemsize
    rank = len(desc.shape)
    box = list(plan["box"])
    if len(box) != rank:
        raise ValueError(f"tensor map box {box} does not have the descriptor's rank {rank}")
    addr = _address(desc.base)
    if addr % 16:
        raise ValueError("TMA needs a 16-byte aligned base address")
    dims = [int(s) for s in reversed(desc.shape)]
    strides = [int(s) * item for s in reversed(desc.strides[:-1])]
    if any(not 0 < d <= MAX_DIM for d in dims):
        raise ValueError(f"TMA needs every dimension in 1..2^32, got shape {desc.shape}")
    if any(s % 16 or not 0 < s < MAX_STRIDE for s in strides):
        raise ValueError(f"TMA needs strides that are positive multiples of 16 bytes under "
                         f"2^40, got {desc.strides} elements of {item} bytes")
    return {"data_type": _DATA_TYPES[name], "rank": rank, "address": addr,
            "dims": dims, "strides": strides, "box": box[::-1], "element_strides": [1] * rank,
            "interleave": "NONE", "swizzle": _SWIZZLES[int(plan["swizzle"])],
            "l2_promotion": "L2_128B", "oob_fill": "NONE"}


def encode(p: dict) -> bytes:
    """The 128 bytes of the tensor map `p` describes (`tensor_map_params`), by the driver."""
    from cuda.bindings import driver as cu
    err, tmap = cu.cuTensorMapEncodeTiled(
        getattr(cu.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{p['data_type']}"),
        p["rank"], p["address"], p["dims"], p["strides"], p["box"], p["element_strides"],
        getattr(cu.CUtensorMapInterleave, f"CU_TENSOR_MAP_INTERLEAVE_{p['interleave']}"),
        getattr(cu.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{p['swizzle']}"),
        getattr(cu.CUtensorMapL2promotion, f"CU_TENSOR_MAP_L2_PROMOTION_{p['l2_promotion']}"),
        getattr(cu.CUtensorMapFloatOOBfill, f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{p['oob_fill']}"))
    if int(err):
        _, name = cu.cuGetErrorName(err)
        raise ValueError(f"cuTensorMapEncodeTiled failed ({name}) for {p}")
    return struct.pack("<16Q", *[int(x) for x in tmap.opaque])


_CACHE: dict = {}


def tensor_maps(fn, values, plans) -> list:
    """The encoded tensor maps of one launch (one per plan, in order)."""
    out = []
    for plan in plans:
        d = values[fn.arg_names.index(plan["arg"])]
        if type(d) is not TensorDescriptor:
            raise TypeError(f"argument `{plan['arg']}` of {fn.__name__} was compiled as a "
                            f"tensor descriptor, got {type(d).__name__}")
        p = tensor_map_params(d, plan)
        key = (p["data_type"], p["address"], tuple(p["dims"]), tuple(p["strides"]),
               tuple(p["box"]), p["swizzle"])
        m = _CACHE.get(key)
        if m is None:
            if len(_CACHE) > 4096:
                _CACHE.clear()
            m = _CACHE[key] = encode(p)
        out.append(m)
    return out
