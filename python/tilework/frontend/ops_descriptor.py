"""Implementations of the tensor-descriptor builtins (`tl.make_tensor_descriptor`,
`load_tensor_descriptor`, `store_tensor_descriptor`, the descriptor atomics) and of a host
`TensorDescriptor` kernel parameter (`descriptor_params`, `descriptor_from_args`).

A descriptor is a frontend object (`language.descriptor.tensor_descriptor`) like a block
pointer.  On NVIDIA sm_90 (with `CompileOptions.tma`), a host descriptor whose block has a TMA
plan (`language.descriptor.tma_plan`: zero padding, boxes of at most 256, rows of 16 bytes or
more) also gets a tensor-map parameter (`tma_param`, after all others) and its loads are
`tile.descriptor_load` ops (copied by TMA); with `CompileOptions.tma_store` its stores are
`tile.descriptor_store` ops too (written to shared memory, copied out by TMA, which clips the
box at the tensor's edges), each holding the block-pointer store it falls back to where the
TMA store would not be exact (the lowering's decision: tile-tma-guard, lowering/tma_guard.py,
which also decides the loads, each holding its block-pointer load); atomics and in-kernel
descriptors keep the block-pointer path.
Otherwise its accesses are block-pointer accesses checked on every dimension: the tile of
pointers `base + sum_d (offsets[d] + arange(B_d)) * strides[d]` under the mask
`0 <= offsets[d] + arange(B_d) < shape[d]`, so they get the vector widths a block pointer
gets (the last stride is the constant 1: contiguous rows), out-of-bounds elements load as the
padding and are not written.  The checks and messages are Triton's.
"""
from __future__ import annotations

import mlir.ir as ir

from ..language import core
from ..language.core import constexpr, tensor
from tilework.dialects import builders as B
from tilework.dialects import tensor_maps as TM

from ..language.descriptor import (MAX_RANK, PADDINGS, tensor_descriptor,
                                   tensor_descriptor_type, tma_plan)
from ..language.memory import block_pointer
from . import semantic as S
from .ops_core import IMPLS, impl
from .ops_memory import block_pointer_tiles, fill_operand, load_block, store_block
from .semantic import SemanticError
from .types import tensor_ir_type, to_ir


def _unwrap(x):
    return x.value if isinstance(x, constexpr) else x


def _list(x, what, fn):
    x = _unwrap(x)
    if isinstance(x, (tuple, list)):
        return [_unwrap(e) for e in x]
    if isinstance(x, tensor) and x.shape:
        raise SemanticError(f"{fn} {what} must be a tuple or list, got a tile of shape "
                            f"{list(x.shape)}")
    return [x]


def _scalar(b, x, dt: core.dtype, what) -> tensor:
    """`x` (a Python int or a runtime integer scalar) as a scalar of `dt`."""
    if isinstance(x, tensor):
        if x.shape:
            raise SemanticError(f"tensor descriptor {what} must be scalars, got a tile of "
                                f"shape {list(x.shape)}")
        if not x.dtype.is_int():
            raise SemanticError(f"tensor descriptor {what} must be integers, got {x.dtype}")
        return S.cast(b, x, dt)
    if isinstance(x, bool) or not isinstance(x, int):
        raise SemanticError(f"tensor descriptor {what} must be integers, got {x!r}")
    if not S.fits(x, dt):
        raise SemanticError(f"tensor descriptor {what}: {x} does not fit in {dt}")
    return b.constant(x, dt)


def _block_shape(block_shape, ndim):
    shape = [_unwrap(s) for s in _list(block_shape, "block_shape", "make_tensor_descriptor")]
    if len(shape) != ndim:
        raise SemanticError(f"Expected block_shape to have {ndim} dimensions but got "
                            f"{len(shape)}")
    for i, d in enumerate(shape):
        if isinstance(d, tensor):
            raise SemanticError(f"Shape element {i} must have type `constexpr[int]`, got a "
                                f"runtime value")
        if not isinstance(d, int) or isinstance(d, bool):
            raise SemanticError(f"Shape element {i} must have type `constexpr[int]`, got "
                                f"`constexpr[{type(d).__name__}]`")
        if d <= 0 or d & (d - 1):
            raise SemanticError(f"Shape element {i} must be a power of 2")
    return shape


def _padding(padding_option, elem: core.dtype) -> str:
    pad = _unwrap(padding_option)
    if isinstance(pad, tensor):
        raise SemanticError("padding_option must be a constexpr string, got a runtime value")
    if pad not in PADDINGS:
        raise SemanticError(f"padding_option must be 'zero' or 'nan'; got {pad!r}")
    if pad == "nan" and not elem.is_floating():
        raise SemanticError("Padding option `nan` is not supported for integer blocks")
    return pad


@impl
def make_tensor_descriptor(b, base, shape, strides, block_shape, padding_option="zero"):
    base = _unwrap(base)
    if not isinstance(base, tensor) or not base.dtype.is_ptr() or base.shape:
        got = (f"a tile of shape {list(base.shape)}" if base.shape else base.dtype) \
            if isinstance(base, tensor) else repr(base)
        raise SemanticError(f"make_tensor_descriptor expects a pointer (not a tile of "
                            f"pointers) as `base`, got {got}")
    shape_ = _list(shape, "shape", "make_tensor_descriptor")
    strides_ = _list(strides, "strides", "make_tensor_descriptor")
    ndim = len(shape_)
    if not 1 <= ndim <= MAX_RANK:
        raise SemanticError(f"Expected 1 <= ndim <= {MAX_RANK} but got {ndim} dimensions")
    if len(strides_) != ndim:
        raise SemanticError(f"Expected {ndim} strides but got {len(strides_)}")
    bshape = _block_shape(block_shape, ndim)
    elem = base.dtype.element_ty
    elem_size = max(1, elem.primitive_bitwidth // 8)
    if bshape[-1] * elem_size < 16:
        raise SemanticError(f"Descriptor block shape must have at least 16 bytes in the last "
                            f"dimension, but got {bshape[-1]} * {elem_size} = "
                            f"{bshape[-1] * elem_size} bytes")
    last = strides_[-1]
    if isinstance(last, tensor) or last != 1:
        got = "a runtime value" if isinstance(last, tensor) else repr(last)
        raise SemanticError(f"Tensor descriptor last dim must be 1 but got {got}")
    for i, s in enumerate(strides_[:-1]):  # TMA's rule; runtime strides are the caller's
        if isinstance(s, int) and not isinstance(s, bool) and (s * elem_size) % 16:
            raise SemanticError(f"Tensor descriptor strides must be 16-byte aligned: stride "
                                f"{i} is {s} elements of {elem_size} bytes")
    pad = _padding(padding_option, elem)
    dims = [_scalar(b, s, core.int32, "shape") for s in shape_]
    strides_t = [_scalar(b, s, core.int64, "strides") for s in strides_]
    tmap = _device_tensormap(b, base, dims, strides_t, bshape, pad)
    return tensor_descriptor((base, dims, strides_t, bshape, pad, tmap, tmap is not None))


# --------------------------------------------------------------------------------------------
# descriptors made in the kernel: tensor maps in global scratch (sm_90a)

MAP_BYTES = TM.MAP_BYTES
SCRATCH_ATTR = TM.SCRATCH_ATTR  # on the scratch argument; on the kernel: bytes/program


def scratch_param(b):
    """(name, dtype) of the global-scratch parameter a kernel gets in this compilation when
    a descriptor it makes may be copied by TMA (NVIDIA sm_90a, `tma`), or None.
    `tensormap.replace` is sm_90a's (PTX 8.3); build_kernel drops it if no map was made."""
    t, opts = getattr(b, "target", None), getattr(b, "options", None)
    if t is None or t.backend != "nvidia" or t.capability != 90 or not t.arch.endswith("a") \
            or (opts is not None and not opts.tma):
        return None
    return ("global_scratch", core.pointer_type(core.int8))


def _device_tensormap(b, base: tensor, dims, strides, bshape, pad):
    """The `tile.make_tensormap` of a descriptor made in the kernel, or None (the
    block-pointer path): where the kernel has global scratch (`scratch_param`) and the block
    has a TMA plan.  What TMA requires of the tensor (a 16-byte aligned base, strides of
    16-byte multiples; Triton asks it of the caller) is the lowering's to prove: tile-tma-guard
    turns the loads of a map it cannot prove so into their block-pointer fallbacks, and the
    map goes."""
    scratch = getattr(b, "global_scratch", None)
    elem = base.dtype.element_ty
    plan = tma_plan(elem.primitive_bitwidth, bshape, pad)
    if scratch is None or plan is None:
        return None
    box, sw = plan
    ty = core.pointer_type(core.int8)
    h = B.build_make_tensormap(b, scratch.handle, base.handle, [d.handle for d in dims],
                               [s.handle for s in strides[:-1]], result_type=to_ir(ty),
                               box=box, swizzle=sw, offset=0, program_bytes=MAP_BYTES)
    return tensor(h, ty)


# --------------------------------------------------------------------------------------------
# accesses

def _desc(x, what) -> tensor_descriptor:
    x = _unwrap(x)
    if not isinstance(x, tensor_descriptor):
        got = x.dtype if isinstance(x, tensor) else (
            "a block pointer" if isinstance(x, block_pointer) else repr(x))
        raise SemanticError(f"{what} expects a tensor descriptor (from "
                            f"tl.make_tensor_descriptor or a TensorDescriptor argument), got "
                            f"{got}")
    return x


def _block(b, desc: tensor_descriptor, offsets, what) -> block_pointer:
    """The block pointer of `desc`'s block at `offsets`."""
    offs = _list(offsets, "offsets", what)
    ndim = len(desc.block_shape)
    if len(offs) != ndim:
        raise SemanticError(f"{what}: expected {ndim} offsets, but got {len(offs)}")
    offs = [_scalar(b, o, core.int32, "offsets") for o in offs]
    shape = [S.cast(b, s, core.int64) for s in desc.shape]
    return block_pointer((desc.base, shape, desc.strides, offs, desc.block_shape,
                          tuple(reversed(range(ndim)))))


def _value(b, desc: tensor_descriptor, value, what) -> tensor:
    v = _unwrap(value)
    if not isinstance(v, tensor) or list(v.shape) != list(desc.block_shape):
        got = f"shape {list(v.shape)}" if isinstance(v, tensor) else repr(v)
        raise SemanticError(f"{what}: the value must be a tile of the block shape "
                            f"{list(desc.block_shape)}, got {got}")
    if v.dtype.is_ptr():
        raise SemanticError(f"{what}: the value cannot be a pointer")
    return S.cast(b, v, desc.dtype)


@impl
def load_tensor_descriptor(b, desc, offsets):
    d = _desc(desc, "load_tensor_descriptor")
    bp = _block(b, d, offsets, "load_tensor_descriptor")
    if d.tma is not None:
        return _tma_load(b, d, bp)
    return load_block(b, bp, None, None, tuple(range(len(d.block_shape))), d.padding, "", "",
                      False)


@impl
def store_tensor_descriptor(b, desc, offsets, value):
    d = _desc(desc, "store_tensor_descriptor")
    bp = _block(b, d, offsets, "store_tensor_descriptor")
    v = _value(b, d, value, "store_tensor_descriptor")
    if d.tma is not None and not d.device and _tma_stores(b):  # (device maps: loads only)
        return _tma_store(b, d, bp, v)
    return store_block(b, bp, v, None, tuple(range(len(d.block_shape))), "", "")


# what Triton's descriptor reductions take (fp16/bf16 min/max: not here, our atomics lack them)
_ATOMIC_TYPES = {
    "add": ("int32", "uint32", "uint64", "fp32", "fp16", "bf16"),
    "min": ("int32", "uint32", "int64", "uint64"),
    "max": ("int32", "uint32", "int64", "uint64"),
    "and": ("int32", "uint32", "int64", "uint64"),
    "or": ("int32", "uint32", "int64", "uint64"),
    "xor": ("int32", "uint32", "int64", "uint64"),
}


def _make_atomic(op):
    def fn(b, desc, offsets, value):
        what = f"descriptor_atomic_{op}"
        d = _desc(desc, what)
        if d.dtype.name not in _ATOMIC_TYPES[op]:
            raise SemanticError(f"{what} does not support {d.dtype}; it takes "
                                f"{', '.join(_ATOMIC_TYPES[op])}")
        bp = _block(b, d, offsets, what)
        v = _value(b, d, value, what)
        ptrs, mask = block_pointer_tiles(b, bp, range(len(d.block_shape)))
        IMPLS[f"atomic_{op}"](b, ptrs, v, mask, "relaxed", "gpu")
        return None
    fn.__name__ = f"descriptor_atomic_{op}"
    return impl(fn)


for _op in _ATOMIC_TYPES:
    _make_atomic(_op)
del _op


# --------------------------------------------------------------------------------------------
# host descriptors as kernel parameters

def descriptor_params(name: str, ty: tensor_descriptor_type) -> list:
    """The kernel parameters (name, dtype) of a `TensorDescriptor` argument `name`: the base
    pointer, the shape (int32 each), the strides but the last (int64 each)."""
    rank = ty.rank
    return ([(name, core.pointer_type(ty.element_ty))]
            + [(f"{name}.shape{d}", core.int32) for d in range(rank)]
            + [(f"{name}.stride{d}", core.int64) for d in range(rank - 1)])


def descriptor_from_args(b, ty: tensor_descriptor_type, args: list,
                         tma: tensor | None = None) -> tensor_descriptor:
    """The in-kernel descriptor of a `TensorDescriptor` parameter from its parameters' values
    (`descriptor_params` order; `tma` its tensor-map parameter, if any); the last stride is
    the constant 1."""
    rank = ty.rank
    base, shape, strides = args[0], args[1:1 + rank], args[1 + rank:]
    strides = list(strides) + [b.constant(1, core.int64)]
    return tensor_descriptor((base, shape, strides, ty.block_shape, ty.padding, tma))


TMA_ATTR = "tile.tma"  # on the tensor-map arguments, and on the kernel: the plans (below)


def uses_tma(b, ty: tensor_descriptor_type):
    """The TMA plan (box, swizzle) of a host descriptor parameter of type `ty` in this
    compilation, or None (another target, `tma=False`, or a block TMA cannot copy)."""
    t, opts = getattr(b, "target", None), getattr(b, "options", None)
    if t is None or t.backend != "nvidia" or not 90 <= t.capability < 100 or \
            (opts is not None and not opts.tma):
        return None
    return tma_plan(ty.element_ty.primitive_bitwidth, ty.block_shape, ty.padding)


def tma_param(b, name: str, ty: tensor_descriptor_type):
    """(parameter name, dtype, plan text) of the tensor-map parameter of the host descriptor
    argument `name`, or None.  The plan text `arg=<name>;box=<b0,b1>;swizzle=<bytes>` is what
    the runtime encodes the tensor map by (`metadata["tma"]`, runtime/tma.py)."""
    plan = uses_tma(b, ty)
    if plan is None:
        return None
    box, sw = plan
    return (f"{name}.tma", core.pointer_type(core.int8),
            f"arg={name};box={','.join(map(str, box))};swizzle={sw}")


def _tma_load(b, d: tensor_descriptor, bp: block_pointer) -> tensor:
    """The TMA load of the block at `bp`'s offsets, holding its fallback: the block-pointer
    load's pointers, mask and zero padding (the ops `load_block` emits).  Whether the copy is
    exact (the inner offset a multiple of 16 bytes) is the lowering's to prove
    (tile-tma-guard)."""
    ptrs, mask = block_pointer_tiles(b, bp, range(len(d.block_shape)))
    other = fill_operand(b, 0, d.dtype, ptrs.shape)
    _, sw = tma_plan(d.dtype.primitive_bitwidth, d.block_shape, d.padding)
    rt = tensor_ir_type(d.dtype, d.block_shape)
    h = B.build_descriptor_load(b, d.tma.handle, [o.handle for o in bp.offsets],
                                ptr=ptrs.handle, mask=mask.handle, other=other.handle,
                                result_type=rt, swizzle=sw)
    return tensor(h, d.dtype, list(d.block_shape))


def _tma_stores(b) -> bool:
    """Whether this compilation stores host descriptors with TMA (`tma_store`; the descriptor's
    own TMA plan, which `d.tma` shows, is asked separately)."""
    opts = getattr(b, "options", None)
    return opts is not None and opts.tma_store is not False


def _tma_store(b, d: tensor_descriptor, bp: block_pointer, v: tensor):
    """The TMA store of `v` at the block pointer `bp`'s offsets, holding its fallback: the
    block-pointer store's pointers and mask (the same ops `store_block` emits) and the row
    length.  Whether the TMA store is exact (coordinates >= 0, rows of 16-byte multiples, the
    inner offset a multiple of 16 bytes) is the lowering's to prove (tile-tma-guard)."""
    ptrs, mask = block_pointer_tiles(b, bp, range(len(d.block_shape)))
    _, sw = tma_plan(d.dtype.primitive_bitwidth, d.block_shape, d.padding)
    B.build_descriptor_store(b, d.tma.handle, v.handle, [o.handle for o in bp.offsets],
                             ptr=ptrs.handle, mask=mask.handle, width=d.shape[-1].handle,
                             swizzle=sw)
    return None


def is_descriptor_type(ty) -> bool:
    return isinstance(ty, tensor_descriptor_type)

