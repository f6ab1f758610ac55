"""Implementations of the memory builtins (registered in ops.IMPLS by name): loads and stores,
atomics and block pointers.

Atomics emit `tile.atomic_rmw` (one `kind` per operation) and `tile.atomic_cas`.  Types follow
Triton: no 8/16-bit integers, fp16/bf16 only for add, float max/min on fp32/fp64 only, done
as Triton does them: an integer max (min) on the bits where the value is non-negative and an
unsigned min (max) on the bits where it is negative (IEEE floats of one sign order like their
bit patterns), the two results merged with `where`.

Block pointers are frontend objects (`language.memory.block_pointer`): `load`/`store` through
one become a tile of pointers `base + sum_d (offsets[d] + arange(B_d)) * strides[d]` (int64,
built from broadcast aranges) and, for the dimensions in `boundary_check`, the mask
`0 <= offsets[d] + arange(B_d) < shape[d]`; `padding_option` gives the `other` value.
"""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B

from ..language import core
from ..language.core import constexpr, tensor
from ..language.memory import block_pointer
from . import semantic as S
from .ops_core import IMPLS, const, mask_operand, impl
from .semantic import SemanticError
from .types import tensor_ir_type

SEMS = ("acq_rel", "acquire", "release", "relaxed")
SCOPES = ("gpu", "cta", "sys")


def _unwrap(x):
    return x.value if isinstance(x, constexpr) else x


def _choice(x, what, allowed):
    v = _unwrap(x)
    if isinstance(v, tensor):
        raise SemanticError(f"{what} must be a constexpr string, got a runtime value")
    if v is None or v == "":
        return allowed[0]
    if v not in allowed:
        raise SemanticError(f"{what} must be one of {', '.join(repr(a) for a in allowed)}; "
                            f"got {v!r}")
    return v


# --------------------------------------------------------------------------------------------
# atomics

def _atomic_pointer(b, pointer, what) -> tensor:
    p = _unwrap(pointer)
    if isinstance(p, block_pointer):
        raise SemanticError(f"{what} does not take block pointers; use a tile of pointers")
    ptr = S.to_tensor(b, p)
    if not ptr.dtype.is_ptr():
        raise SemanticError(f"{what} expects a pointer or a tile of pointers, got {ptr.dtype}")
    if ptr.dtype.is_const():
        raise SemanticError(f"{what} writes memory: it cannot take a constant pointer")
    return ptr


def _atomic_value(b, x, ptr: tensor, what, name="value") -> tensor:
    elem = ptr.dtype.element_ty
    x = _unwrap(x)
    v = x if isinstance(x, tensor) else S.weak_scalar(b, x, elem)
    if v.dtype.is_ptr():
        raise SemanticError(f"{what}: the {name} cannot be a pointer")
    if len(v.shape) > len(ptr.shape) or (v.shape and S.broadcast_shapes(
            v.shape, ptr.shape, f"{what} {name} and pointer") != ptr.shape):
        raise SemanticError(f"{what} {name} of shape {list(v.shape)} does not match pointer "
                            f"shape {list(ptr.shape)}")
    return S.broadcast_to(b, S.cast(b, v, elem), ptr.shape)


def _rmw(b, kind, ptr: tensor, val: tensor, mask, sem, scope) -> tensor:
    h = B.build_atomic_rmw(b, ptr.handle, val.handle, mask.handle if mask is not None else None,
                           result_type=tensor_ir_type(val.dtype, ptr.shape), kind=kind, sem=sem,
                           scope=scope)
    return tensor(h, val.dtype, ptr.shape)


def _and(b, m, c):
    return c if m is None else S.binary(b, "and", m, c)


def _atomic(b, op, pointer, val, mask, sem, scope):
    what = f"atomic_{op}"
    sem = _choice(sem, f"{what} sem", SEMS)
    scope = _choice(scope, f"{what} scope", SCOPES)
    ptr = _atomic_pointer(b, pointer, what)
    elem = ptr.dtype.element_ty
    if elem.is_fp16() or elem.is_bf16():
        if op != "add":
            raise SemanticError(f"{what} does not support {elem} (only atomic_add does)")
    elif elem.primitive_bitwidth < 32:
        raise SemanticError(f"{what} does not support {elem}: atomics take 32- or 64-bit "
                            f"elements (and fp16/bf16 for atomic_add)")
    if elem.is_floating() and op in ("and", "or", "xor"):
        raise SemanticError(f"{what} does not support {elem}: bitwise atomics take integers")
    val = _atomic_value(b, val, ptr, what)
    m = mask_operand(b, mask, ptr.shape, what)
    if op == "add":
        return _rmw(b, "fadd" if elem.is_floating() else "add", ptr, val, m, sem, scope)
    if op in ("and", "or", "xor", "xchg"):
        return _rmw(b, op, ptr, val, m, sem, scope)
    # max / min
    if elem.is_int():
        kind = op if elem.is_int_signed() else "u" + op
        return _rmw(b, kind, ptr, val, m, sem, scope)
    bits = elem.primitive_bitwidth
    sint = core.int32 if bits == 32 else core.int64
    uint = core.uint32 if bits == 32 else core.uint64
    ival = S.cast(b, val, sint, bitcast=True)
    uval = S.cast(b, val, uint, bitcast=True)
    neg = S.compare(b, "ne", S.binary(b, "rshift", uval, bits - 1), 0)  # the sign bit
    pos = S.logical_not(b, neg)
    other = "umin" if op == "max" else "umax"
    pos_old = _rmw(b, op, ptr, ival, _and(b, m, pos), sem, scope)
    neg_old = _rmw(b, other, ptr, uval, _and(b, m, neg), sem, scope)
    old = S.where(b, pos, pos_old, neg_old)
    return S.cast(b, old, elem, bitcast=True)


def _make_atomic(op):
    def fn(b, pointer, val, mask=None, sem=None, scope=None):
        return _atomic(b, op, pointer, val, mask, sem, scope)
    fn.__name__ = f"atomic_{op}"
    return impl(fn)


for _op in ("add", "max", "min", "and", "or", "xor", "xchg"):
    _make_atomic(_op)
del _op


@impl
def atomic_cas(b, pointer, cmp, val, sem=None, scope=None):
    sem = _choice(sem, "atomic_cas sem", SEMS)
    scope = _choice(scope, "atomic_cas scope", SCOPES)
    ptr = _atomic_pointer(b, pointer, "atomic_cas")
    elem = ptr.dtype.element_ty
    if elem.primitive_bitwidth not in (16, 32, 64):
        raise SemanticError(f"atomic_cas does not support {elem}: it takes 16-, 32- or 64-bit "
                            f"elements")
    c = _atomic_value(b, cmp, ptr, "atomic_cas", "cmp")
    v = _atomic_value(b, val, ptr, "atomic_cas", "value")
    h = B.build_atomic_cas(b, ptr.handle, c.handle, v.handle,
                           result_type=tensor_ir_type(elem, ptr.shape), sem=sem, scope=scope)
    return tensor(h, elem, ptr.shape)


@impl
def to_tensor(b, x):
    """(tl.to_tensor, used by language.random) Python numbers as typed scalars."""
    return S.to_tensor(b, _unwrap(x))


# --------------------------------------------------------------------------------------------
# block pointers

def _list(x, what):
    x = _unwrap(x)
    if isinstance(x, (tuple, list)):
        return [_unwrap(e) for e in x]
    if x is None:
        raise SemanticError(f"make_block_ptr {what} is missing")
    return [x]


def _scalar_int(b, x, dt: core.dtype, what) -> tensor:
    """`x` (a Python int or a runtime integer scalar) as a scalar of `dt`."""
    x = _unwrap(x)
    if isinstance(x, tensor):
        if x.shape:
            raise SemanticError(f"block pointer {what} must be scalars, got a tile of shape "
                                f"{list(x.shape)}")
        if not x.dtype.is_int():
            raise SemanticError(f"block pointer {what} must be integers, got {x.dtype}")
        if dt == core.int32 and x.dtype.primitive_bitwidth > 32:
            raise SemanticError(f"block pointer {what} are 32-bit; got {x.dtype} (add a "
                                f"`.to(tl.int32)`)")
        return S.cast(b, x, dt)
    if isinstance(x, bool) or not isinstance(x, int):
        raise SemanticError(f"block pointer {what} must be integers, got {x!r}")
    bits = dt.primitive_bitwidth
    if not -2**(bits - 1) <= x < 2**(bits - 1):
        raise SemanticError(f"block pointer {what}: {x} does not fit in {dt}")
    return b.constant(x, dt)


@impl
def make_block_ptr(b, base, shape, strides, offsets, block_shape, order):
    base = _unwrap(base)
    if isinstance(base, block_pointer) or not isinstance(base, tensor) or \
            not base.dtype.is_ptr() or base.shape:
        what = base.dtype if isinstance(base, tensor) and not base.shape else (
            f"a tile of shape {list(base.shape)}" if isinstance(base, tensor) else repr(base))
        raise SemanticError(f"make_block_ptr expects a pointer (not a tile of pointers) as "
                            f"`base`, got {what}")
    bshape = [const(s, "block_shape") for s in _list(block_shape, "block_shape")]
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in bshape):
        raise SemanticError(f"make_block_ptr block_shape must be constexpr ints, got {bshape}")
    for s in bshape:
        if s <= 0 or s & (s - 1):
            raise SemanticError(f"make_block_ptr block_shape {bshape}: every dimension must be "
                                f"a power of two")
    order_ = [const(o, "order") for o in _list(order, "order")]
    if sorted(order_) != list(range(len(order_))):
        raise SemanticError(f"make_block_ptr order {order_} is not a permutation of "
                            f"0..{len(order_) - 1}")
    shape_, strides_, offsets_ = (_list(x, n) for x, n in ((shape, "shape"), (strides, "strides"),
                                                            (offsets, "offsets")))
    lens = [len(shape_), len(strides_), len(offsets_), len(bshape), len(order_)]
    if len(set(lens)) != 1:
        raise SemanticError(f"make_block_ptr shape, strides, offsets, block_shape and order "
                            f"must have the same length, got {', '.join(map(str, lens))}")
    return block_pointer((base,
                          [_scalar_int(b, s, core.int64, "shapes") for s in shape_],
                          [_scalar_int(b, s, core.int64, "strides") for s in strides_],
                          [_scalar_int(b, o, core.int32, "offsets") for o in offsets_],
                          bshape, order_))


def _block_arg(x, what) -> block_pointer:
    x = _unwrap(x)
    if not isinstance(x, block_pointer):
        got = x.dtype if isinstance(x, tensor) else repr(x)
        raise SemanticError(f"{what} expects a block pointer (from tl.make_block_ptr), got {got}")
    return x


@impl
def advance(b, base, offsets):
    bp = _block_arg(base, "advance")
    deltas = _list(offsets, "offsets")
    if len(deltas) != len(bp.block_shape):
        raise SemanticError(f"advance of a rank-{len(bp.block_shape)} block pointer needs "
                            f"{len(bp.block_shape)} offsets, got {len(deltas)}")
    new = []
    for o, d in zip(bp.offsets, deltas):
        if not isinstance(d, tensor) and d == 0:
            new.append(o)
            continue
        new.append(S.binary(b, "add", o, _scalar_int(b, d, core.int32, "offsets")))
    return block_pointer((bp.base, bp.shape, bp.strides, new, bp.block_shape, bp.order))


def is_block_pointer(x) -> bool:
    return isinstance(_unwrap(x), block_pointer)


def _boundary_check(bc, rank) -> list:
    bc = _unwrap(bc)
    if bc is None:
        return []
    dims = [_unwrap(d) for d in bc] if isinstance(bc, (tuple, list)) else [bc]
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < rank:
            raise SemanticError(f"boundary_check dimension {d!r} is out of range for a block "
                                f"of rank {rank}")
    if len(set(dims)) != len(dims):
        raise SemanticError(f"boundary_check {dims} names a dimension twice")
    return sorted(dims)


def check_plain_pointer(what, boundary_check=(), padding_option=""):
    """`tl.load`/`tl.store` on a tile of pointers: block-pointer arguments are errors."""
    bc, pad = _unwrap(boundary_check), _unwrap(padding_option)
    if bc or (isinstance(bc, int) and not isinstance(bc, bool)) or pad:
        name = "boundary_check" if bc or isinstance(bc, int) else "padding_option"
        raise SemanticError(f"{what}: `{name}` applies only to block pointers (from "
                            f"tl.make_block_ptr); for a tile of pointers use `mask` and "
                            f"`other`")


def block_pointer_tiles(b, bp: block_pointer, dims):
    """(tile of pointers, mask or None) of block pointer `bp`, checking `dims` (tensor
    descriptors share it)."""
    rank = len(bp.block_shape)
    offset = mask = None
    for d, n in enumerate(bp.block_shape):
        idx = S.binary(b, "add", bp.offsets[d], IMPLS["arange"](b, 0, n))
        if rank > 1:
            idx = IMPLS["expand_dims"](b, idx, tuple(a for a in range(rank) if a != d))
        term = S.binary(b, "mul", S.cast(b, idx, core.int64), bp.strides[d])
        offset = term if offset is None else S.binary(b, "add", offset, term)
        if d in dims:
            ok = S.binary(b, "and", S.compare(b, "ge", idx, 0),
                          S.compare(b, "lt", S.cast(b, idx, core.int64), bp.shape[d]))
            mask = ok if mask is None else S.binary(b, "and", mask, ok)
    shape = tuple(bp.block_shape)
    ptrs = S.broadcast_to(b, S.binary(b, "add", bp.base, offset), shape)
    if mask is not None:
        mask = S.broadcast_to(b, mask, shape)
    return ptrs, mask


def _no_mask(x) -> bool:
    return x is None or (isinstance(x, constexpr) and x.value is None)


def load_block(b, pointer, mask, other, boundary_check, padding_option, cache_modifier,
               eviction_policy, volatile):
    bp = _block_arg(pointer, "load")
    if not _no_mask(mask) or not _no_mask(other):
        raise SemanticError("load: `mask` and `other` cannot be given with a block pointer; "
                            "use `boundary_check` and `padding_option`")
    pad = _unwrap(padding_option)
    if pad not in ("", None, "zero", "nan"):
        raise SemanticError(f"padding_option must be '', 'zero' or 'nan'; got {pad!r}")
    if pad == "nan" and not bp.element_ty.is_floating():
        raise SemanticError(f"padding_option 'nan' is not supported for integer block "
                            f"pointers ({bp.element_ty})")
    ptrs, m = block_pointer_tiles(b, bp, _boundary_check(boundary_check, len(bp.block_shape)))
    fill = None
    if m is not None and pad:
        fill = 0 if pad == "zero" else float("nan")
    return load(b, ptrs, m, fill, cache_modifier=cache_modifier,
                eviction_policy=eviction_policy, volatile=volatile)


def store_block(b, pointer, value, mask, boundary_check, cache_modifier, eviction_policy):
    bp = _block_arg(pointer, "store")
    if not _no_mask(mask):
        raise SemanticError("store: `mask` cannot be given with a block pointer; use "
                            "`boundary_check`")
    ptrs, m = block_pointer_tiles(b, bp, _boundary_check(boundary_check, len(bp.block_shape)))
    return store(b, ptrs, value, m, cache_modifier=cache_modifier,
                 eviction_policy=eviction_policy)


# ---- loads and stores (of a tile of pointers, or through a block pointer) --------------------

_CACHE = ("", ".ca", ".cg", ".cs", ".cv", ".wb", ".wt")
_EVICT = ("", "evict_first", "evict_last", "evict_normal")


def _hints(cache_modifier, eviction_policy):
    cm = const(cache_modifier, "cache_modifier")
    ev = const(eviction_policy, "eviction_policy")
    if cm not in _CACHE:
        raise SemanticError(f"cache_modifier must be one of {list(_CACHE)}, got {cm!r}")
    if ev not in _EVICT:
        raise SemanticError(f"eviction_policy must be one of {list(_EVICT)}, got {ev!r}")
    attrs = {}
    if cm:
        attrs["cache"] = ir.StringAttr.get(cm)
    if ev:
        attrs["evict"] = ir.StringAttr.get(ev)
    return attrs


def fill_operand(b, other, elem, shape) -> tensor:
    """A masked load's `other` as a tile of `elem` of `shape` (tensor descriptors' TMA loads
    build their fallback's with it)."""
    return S.broadcast_to(b, S.cast(b, S.weak_scalar(b, other, elem)
                                    if not isinstance(other, tensor) else other, elem), shape)


@impl
def load(b, pointer, mask=None, other=None, boundary_check=(), padding_option="",
         cache_modifier="", eviction_policy="", volatile=False):
    if is_block_pointer(pointer):  # (argument order as Triton's)
        return load_block(b, pointer, mask, other, boundary_check, padding_option,
                          cache_modifier, eviction_policy, volatile)
    check_plain_pointer("load", boundary_check, padding_option)
    ptr = S.to_tensor(b, pointer)
    if not ptr.dtype.is_ptr():
        raise SemanticError(f"load expects a pointer or a tile of pointers, got {ptr.dtype}")
    elem = ptr.dtype.element_ty
    m = mask_operand(b, mask, ptr.shape, "load")
    o = None
    if other is not None and not (isinstance(other, constexpr) and other.value is None):
        if m is None:
            raise SemanticError("load: `other` is given without a mask")
        o = fill_operand(b, other, elem, ptr.shape)
    attrs = _hints(cache_modifier, eviction_policy)
    if const(volatile, "volatile"):
        attrs["volatile"] = ir.UnitAttr.get()
    h = B.build_load(b, ptr.handle, m.handle if m is not None else None,
                     o.handle if o is not None else None,
                     result_type=tensor_ir_type(elem, ptr.shape), attributes=attrs)
    return tensor(h, elem, ptr.shape)


@impl
def store(b, pointer, value, mask=None, boundary_check=(), cache_modifier="",
          eviction_policy=""):
    if is_block_pointer(pointer):
        return store_block(b, pointer, value, mask, boundary_check, cache_modifier,
                           eviction_policy)
    check_plain_pointer("store", boundary_check)
    ptr = S.to_tensor(b, pointer)
    if not ptr.dtype.is_ptr():
        raise SemanticError(f"store expects a pointer or a tile of pointers, got {ptr.dtype}")
    if ptr.dtype.is_const():  # (Triton's wording)
        raise SemanticError("Cannot store to a constant pointer")
    elem = ptr.dtype.element_ty
    val = value if isinstance(value, tensor) else S.weak_scalar(b, value, elem)
    if val.dtype.is_ptr() and not elem.is_int():  # (an int: the addresses, as Triton's cast)
        raise SemanticError(f"storing pointers takes integer memory (their addresses), got "
                            f"pointers to {elem}")
    if len(val.shape) > len(ptr.shape) or (val.shape and S.broadcast_shapes(
            val.shape, ptr.shape, "store value and pointer") != ptr.shape):
        raise SemanticError(f"store value of shape {list(val.shape)} does not match pointer "
                            f"shape {list(ptr.shape)}")
    val = S.broadcast_to(b, S.cast(b, val, elem), ptr.shape)
    m = mask_operand(b, mask, ptr.shape, "store")
    attrs = _hints(cache_modifier, eviction_policy)
    B.build_store(b, ptr.handle, val.handle, m.handle if m is not None else None, attributes=attrs)
    return None
