"""The builtin registry (`IMPLS`, `@impl`), the argument helpers every op family shares, and
the core builtins (program ids, ranges, creation, casts, min/max, static checks, hints).  One
function per builtin, registered under the builtin's name; `ops.py` imports every family, so
`ops.IMPLS` is complete.  Arguments arrive as `tensor`s, `constexpr`s or plain Python values;
semantics come from `semantic`."""
from __future__ import annotations

import mlir.ir as ir

from tilework.dialects import builders as B

from ..language import core
from ..language.core import constexpr, tensor
from ..language.math import PropagateNan
from . import semantic as S
from .semantic import SemanticError, StaticAssertionError
from .types import tensor_ir_type

IMPLS = {}


def impl(fn):
    IMPLS[fn.__name__.rstrip("_")] = fn
    return fn


def const(x, what: str):
    """The Python value of a constexpr argument, or a SemanticError."""
    if isinstance(x, constexpr):
        return x.value
    if isinstance(x, tensor):
        raise SemanticError(f"{what} must be a constexpr, got a runtime value")
    return x


def _shape(shape, what="shape"):
    shape = const(shape, what)
    if isinstance(shape, int):
        shape = (shape,)
    try:
        shape = tuple(int(const(s, what)) for s in shape)
    except TypeError:
        raise SemanticError(f"{what} must be a tuple of constexpr ints, got {shape!r}") from None
    for i, s in enumerate(shape):
        if s <= 0 or s & (s - 1):  # (`str()` of it: Triton's words)
            raise SemanticError(f"{what} {list(shape)}: every dimension must be a power of two",
                                f"Shape element {i} must be a power of 2")
    return shape


def _grid_query(b, what, axis, build):
    axis = const(axis, f"{what} axis")
    if axis not in (0, 1, 2):
        raise SemanticError(f"{what} axis must be 0, 1, or 2 but got {axis}")  # (Triton's)
    return tensor(build(b, axis=axis), core.int32)


@impl
def program_id(b, axis):
    return _grid_query(b, "program_id", axis, B.build_get_program_id)


@impl
def num_programs(b, axis):
    return _grid_query(b, "num_programs", axis, B.build_get_num_programs)


@impl
def arange(b, start, end):
    start = const(start, "arange start")
    end = const(end, "arange end")
    if not isinstance(start, int) or not isinstance(end, int):
        raise SemanticError("arange bounds must be constexpr ints")
    n = end - start
    if n <= 0:
        raise SemanticError(f"arange({start}, {end}) is empty")
    if n & (n - 1):
        raise SemanticError(f"arange({start}, {end}) has length {n}, which is not a power of two",
                            "arange's range must be a power of 2")  # (`str()`: Triton's)
    if n > core.TRITON_MAX_TENSOR_NUMEL:
        raise SemanticError(f"arange({start}, {end}) has {n} elements; a tile holds at most 2**20")
    h = B.build_make_range(b, result_type=tensor_ir_type(core.int32, (n,)), start=start, end=end)
    return tensor(h, core.int32, (n,))


def _dtype(x, tile_type=False):
    """A dtype argument; `tile_type`: a tile's block_type stands for its element type (the
    target of `x.to(y.type)`, as in Triton's `cast`)."""
    x = const(x, "dtype")
    if tile_type and isinstance(x, core.block_type):
        x = x.element_ty
    if isinstance(x, str):
        x = core.str_to_ty(x)
    if not isinstance(x, core.dtype):
        raise SemanticError(f"expected a dtype, got {x!r}")
    if x.is_block():
        raise SemanticError(f"expected an element dtype, got the tile type {x}: use its "
                            f"`.element_ty` (or the tile's `.dtype`)")
    return x


@impl
def full(b, shape, value, dtype):
    shape, dtype = _shape(shape), _dtype(dtype)
    if isinstance(value, tensor):
        return S.splat(b, S.cast(b, value, dtype), shape)
    return b.constant(const(value, "full value"), dtype, shape)


@impl
def zeros(b, shape, dtype):
    return full(b, shape, 0, dtype)


@impl
def zeros_like(b, input):
    x = S.to_tensor(b, input)
    return full(b, x.shape or (1,), 0, x.dtype) if x.shape else S.to_tensor(b, 0, hint=x.dtype)


@impl
def full_like(b, input, value):
    x = S.to_tensor(b, input)
    return full(b, x.shape, value, x.dtype) if x.shape else S.cast(b, S.to_tensor(b, const(
        value, "value"), hint=x.dtype), x.dtype)


def shape_varargs(shape: tuple):
    """A shape given as Triton's `*shape`: one tuple (or int), or the dimensions one by one
    (`x.reshape(4, 16)`)."""
    return shape[0] if len(shape) == 1 else shape


@impl
def broadcast_to(b, input, *shape):
    return S.broadcast_to(b, S.to_tensor(b, input), _shape(shape_varargs(shape)))


@impl
def cast(b, input, dtype, fp_downcast_rounding=None, bitcast=False):
    rounding = const(fp_downcast_rounding, "fp_downcast_rounding")
    return S.cast(b, input, _dtype(dtype, tile_type=True), bool(const(bitcast, "bitcast")),
                  rounding)


@impl
def where(b, condition, x, y):
    return S.where(b, condition, x, y)


def propagate_nan_arg(name, propagate_nan):
    """The `propagate_nan` of tl.maximum/minimum/clamp: NONE (also for None) or ALL."""
    pn = const(propagate_nan, "propagate_nan")
    pn = PropagateNan.NONE if pn is None else pn
    if pn not in (PropagateNan.NONE, PropagateNan.ALL):
        raise SemanticError(f"tl.{name}: propagate_nan must be tl.PropagateNan.NONE or "
                            f"tl.PropagateNan.ALL, got {pn!r}")
    return pn


def _min_max(b, name, x, y, propagate_nan):
    pn = propagate_nan_arg(name, propagate_nan)
    return S.binary(b, name if pn is PropagateNan.ALL else name + "_num", x, y)


@impl
def minimum(b, x, y, propagate_nan=None):
    return _min_max(b, "minimum", x, y, propagate_nan)


@impl
def maximum(b, x, y, propagate_nan=None):
    return _min_max(b, "maximum", x, y, propagate_nan)


def mask_operand(b, mask, shape, what):
    if mask is None or (isinstance(mask, constexpr) and mask.value is None):
        return None
    mask = S.to_tensor(b, mask)
    if not mask.dtype.is_bool():
        mask = S.cast(b, mask, core.int1)
    try:
        return S.broadcast_to(b, mask, shape)
    except SemanticError:
        raise SemanticError(f"{what} mask of shape {list(mask.shape)} does not match pointer "
                            f"shape {list(shape)}") from None


@impl
def static_assert(b, cond, msg=""):
    c = const(cond, "static_assert condition")
    if not c:
        raise StaticAssertionError(f"static_assert failed: {const(msg, 'message')}".rstrip(": "))


@impl
def static_print(b, *values, sep=" ", end="\n", file=None, flush=False):
    print(*[v.value if isinstance(v, constexpr) else v for v in values],
          sep=const(sep, "sep"), end=const(end, "end"), file=const(file, "file"),
          flush=bool(const(flush, "flush")))


def _hint_attr(b, input, values, attr_name):
    x = S.to_tensor(b, input)
    vals = const(values, attr_name)
    vals = [vals] if isinstance(vals, int) else list(vals)
    attr = ir.DenseI32ArrayAttr.get([int(v) for v in vals])
    op = x.handle.owner
    if isinstance(op, ir.Block):
        # a block argument has no op to hold the hint: a loop's carried value (Triton's
        # `tl.multiple_of(a_ptrs, ...)` in a K loop) puts it on the loop, naming the region
        # and argument (axis_info reads it); a kernel's own arguments are refused
        parent = op.owner
        parent = parent.operation if parent is not None else None
        if parent is None or parent.name == "func.func":
            raise SemanticError(f"{attr_name} hints apply to computed values, not to arguments")
        region = next(i for i, r in enumerate(parent.regions) if r.blocks[0] == op)
        n = ir.BlockArgument(x.handle).arg_number
        parent.attributes[f"tile.{attr_name}.region{region}.arg{n}"] = attr
        return x
    op.attributes[f"tile.{attr_name}"] = attr
    return x


@impl
def multiple_of(b, input, values):
    return _hint_attr(b, input, values, "divisibility")


@impl
def max_contiguous(b, input, values):
    return _hint_attr(b, input, values, "contiguity")


@impl
def max_constancy(b, input, values):
    vals = const(values, "max_constancy values")
    n = 1 if isinstance(vals, int) else len(vals)
    if n != max(1, len(S.to_tensor(b, input).shape)):
        raise SemanticError(f"max_constancy of a tile of rank {len(S.to_tensor(b, input).shape)} "
                            f"needs one value per dimension, got {n}")
    return _hint_attr(b, input, values, "constancy")


@impl
def assume(b, cond):
    c = S.to_tensor(b, cond)
    if not c.dtype.is_bool():
        c = S.cast(b, c, core.int1)
    B.build_assume(b, c.handle)
