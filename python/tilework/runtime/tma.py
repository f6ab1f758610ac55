"""Host tensor maps of `TensorDescriptor` arguments loaded by TMA (NVIDIA sm_90).

A kernel that copies a host descriptor's blocks with TMA takes, after all its parameters, one
128-byte tensor map per such descriptor (`metadata["tma"]`: the argument's name, the box and
the swizzle its shared buffer needs, from `language.descriptor.tma_plan`).  `tensor_map_params`
is the pure part (the arguments of `cuTensorMapEncodeTiled`, checked against TMA's limits:
no GPU needed, tested compile-only); `encode` calls the driver's C function through ctypes.  Encoded maps are cached per
(address, shape, strides, plan): a launch with the same tensors reuses them.

A launch costs a GEMM of 4096^3 its time (the benchmarks time one launch at a time), and an
attention forward at N=1024 made four descriptors a call for a 65-microsecond kernel, so what
launches compute of a descriptor (its key entry and parameters, for the launcher, and its
maps) is memoized per descriptor state (`descriptor_memo`: base type, dtype, address, shape,
strides, block, padding), shared by equal descriptors; `launch_maps` is the variant's
per-launch call (the native launcher's too, which hands it the launch's argument entries: a
descriptor's carries its state's maps, so a launch looks each state up once).
"""
from __future__ import annotations

import ctypes

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


# the driver's enum values (cuda.h: CUtensorMapDataType, ...Swizzle, ...L2promotion, ...)
_ENUMS = {
    "data_type": {"UINT8": 0, "UINT16": 1, "UINT32": 2, "INT32": 3, "UINT64": 4, "INT64": 5,
                  "FLOAT16": 6, "FLOAT32": 7, "FLOAT64": 8, "BFLOAT16": 9},
    "interleave": {"NONE": 0},
    "swizzle": {"NONE": 0, "32B": 1, "64B": 2, "128B": 3},
    "l2_promotion": {"NONE": 0, "L2_64B": 1, "L2_128B": 2, "L2_256B": 3},
    "oob_fill": {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1},
}
_LIB = []


def _encode_fn():
    """libcuda's cuTensorMapEncodeTiled, through ctypes (the C ABI: no binding's types)."""
    if not _LIB:
        lib = ctypes.CDLL("libcuda.so.1")
        fn = lib.cuTensorMapEncodeTiled
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                       ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                       ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                       ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        _LIB.append(fn)
    return _LIB[0]


def encode(p: dict, fn=None) -> bytes:
    """The 128 bytes of the tensor map `p` describes (`tensor_map_params`), by the driver
    (`fn`: cuTensorMapEncodeTiled's C signature; libcuda's by default)."""
    fn = fn or _encode_fn()
    raw = ctypes.create_string_buffer(128 + 64)  # the map must be 64-byte aligned
    at = ctypes.addressof(raw)
    at += -at % 64
    rank = p["rank"]
    arr = lambda t, xs: (t * max(1, len(xs)))(*xs)  # noqa: E731
    rc = fn(at, _ENUMS["data_type"][p["data_type"]], rank, p["address"],
            arr(ctypes.c_uint64, p["dims"]), arr(ctypes.c_uint64, p["strides"]),
            arr(ctypes.c_uint32, p["box"]), arr(ctypes.c_uint32, p["element_strides"]),
            _ENUMS["interleave"][p["interleave"]], _ENUMS["swizzle"][p["swizzle"]],
            _ENUMS["l2_promotion"][p["l2_promotion"]], _ENUMS["oob_fill"][p["oob_fill"]])
    if rc:
        raise ValueError(f"cuTensorMapEncodeTiled failed (CUresult {rc}) for {p}")
    return ctypes.string_at(at, 128)


_CACHE: dict = {}


class DescriptorMemo:
    """What launches computed of a descriptor in one state (`entry`: the launcher's (key
    entry, parameters); `maps`: (box, swizzle) -> encoded map).  Shared by every descriptor
    in that state: code that makes its descriptors anew for each call (Triton's tutorials
    do) finds them computed."""
    __slots__ = ("entry", "maps")

    def __init__(self):
        self.entry = None
        self.maps = {}


_MEMO: dict = {}  # descriptor state -> DescriptorMemo (bounded: cleared when full)


def descriptor_memo(d: TensorDescriptor, ptr: int = None) -> DescriptorMemo:
    """The memo of `d`'s state, its base's address being `ptr` now (None: read here): the
    base's type, dtype and device kind, the address, shape, strides, block and padding (the
    fields are public and may be reassigned or changed in place; the memo holds no
    reference to the base).  Raises what reading the address raises (not a tensor)."""
    base = d.base
    if ptr is None:
        dp = getattr(base, "data_ptr", None)  # (torch: inline; else the array interface)
        ptr = int(dp()) if dp is not None and callable(dp) else _address(base)
    key = (type(base), ptr, base.dtype, getattr(base, "is_cuda", None), tuple(d.shape),
           tuple(d.strides), tuple(d.block_shape), d.padding)
    m = _MEMO.get(key)
    if m is None:
        if len(_MEMO) >= 4096:
            _MEMO.clear()
        m = _MEMO[key] = DescriptorMemo()
    return m


def descriptor_memos() -> dict:
    """The memo dict itself (state key -> DescriptorMemo): the native launcher looks a
    torch-based descriptor's state up there as `descriptor_memo` keys it, and leaves
    creating entries to it."""
    return _MEMO


def address(t) -> int:
    """The data address of a descriptor's base (a torch tensor, or an array interface)."""
    return _address(t)


def _memo_map(maps: dict, d, plan, pk) -> bytes:
    """The encoded map of `d` under `plan` (key `pk`) into its state's `maps` (memoized per
    address, shape, strides and plan across states too)."""
    p = tensor_map_params(d, plan)
    key = (p["data_type"], p["address"], tuple(p["dims"]), tuple(p["strides"]),
           tuple(p["box"]), p["swizzle"])
    b = _CACHE.get(key)
    if b is None:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        b = _CACHE[key] = encode(p)
    maps[pk] = b
    return b


def tensor_map(d, plan) -> bytes:
    """The encoded map of descriptor `d` under `plan` (memoized per descriptor state, and per
    address, shape, strides and plan across states)."""
    if type(d) is not TensorDescriptor:
        raise TypeError(f"got {type(d).__name__}")
    maps = descriptor_memo(d).maps
    pk = (tuple(plan["box"]), plan["swizzle"])
    b = maps.get(pk)
    return b if b is not None else _memo_map(maps, d, plan, pk)


def _position(arg_names, arg: str):
    """(argument index, member indices) of a plan's `arg`: an argument's name, or a tuple
    argument's member parameter (`t.1.0`, tuples.member_param)."""
    head, *members = arg.split(".")
    return arg_names.index(head), [int(i) for i in members]


def _value(values, pos):
    i, members = pos
    v = values[i]
    for j in members:
        v = v[j]
    return v


def tensor_maps(fn, values, plans) -> list:
    """The encoded tensor maps of one launch (one per plan, in order)."""
    out = []
    for plan in plans:
        d = _value(values, _position(fn.arg_names, plan["arg"]))
        if type(d) is not TensorDescriptor:
            raise TypeError(f"argument `{plan['arg']}` of {fn.__name__} was compiled as a "
                            f"tensor descriptor, got {type(d).__name__}")
        out.append(tensor_map(d, plan))
    return out


def launch_maps(plans):
    """`maps(fn, values, entries=None)`: one variant's tensor maps of a launch
    (`tensor_maps`), with the arguments' positions found once per argument list (it holds
    no `fn`: the native handle that keeps it is no garbage-collected object).  `entries`:
    per argument, the parameters the launcher's key entry gave this launch (the native
    launcher passes them): a descriptor's carry its state's `maps` (`maps` attribute), so
    the state is not looked up again."""
    plans = [dict(p) for p in plans]
    pks = [(tuple(p["box"]), p["swizzle"]) for p in plans]
    seen = [None, None]  # (fn.arg_names, the plans' positions in it)

    def maps(fn, values, entries=None):
        if seen[0] is not fn.arg_names:
            seen[1] = [_position(fn.arg_names, p["arg"]) for p in plans]
            seen[0] = fn.arg_names
        out = []
        for pos, plan, pk in zip(seen[1], plans, pks):
            d = _value(values, pos)
            if type(d) is not TensorDescriptor:
                return tensor_maps(fn, values, plans)  # (its message)
            # (a tuple member's: no entry of its own)
            memo_maps = getattr(entries[pos[0]], "maps", None) \
                if entries is not None and not pos[1] else None
            if memo_maps is None:
                out.append(tensor_map(d, plan))
                continue
            b = memo_maps.get(pk)
            out.append(b if b is not None else _memo_map(memo_maps, d, plan, pk))
        return out
    return maps
