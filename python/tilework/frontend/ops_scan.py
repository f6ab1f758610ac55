"""Implementations of the scan builtins: `associative_scan`, `cumsum`, `cumprod`.

Every scan is one `tile.scan` op naming a private combine function of scalars (emitted by
`combine_function`, shared with `tile.reduce`); `cumsum`/`cumprod` only supply the combine
body.  Scans are inclusive; `reverse` scans from the end (the scan of the tile flipped along
the axis, flipped back, as Triton).  The combine function must be associative, not
necessarily commutative: earlier elements (in scan order) are always its left operand.

Under the interpreter the same combine body runs vectorized over numpy slices: a
Hillis-Steele scan (log2(n) steps of `x[i] = x[i - d] ∘ x[i]`).
"""
from __future__ import annotations

from tilework.dialects import builders as B

from ..language import core
from ..language.core import tensor
from . import semantic as S
from .ops_core import const, impl
from .ops_reduction import as_tile, check_operands, combine_function
from .ops_shape import normalize_axis
from .semantic import SemanticError
from .types import tensor_ir_type


def scan_tiles(b, inputs: list, axis: int, reverse: bool, combine) -> list:
    """Inclusive scan of same-shape `inputs` along `axis` with `combine(lhs, rhs) -> list`
    (lists of scalar tensors, one per input; lhs holds the earlier elements)."""
    check_operands(inputs, "associative_scan")
    shape = inputs[0].shape
    checked = _checked(b, inputs, combine)
    if getattr(b, "is_interpreter", False):
        return _interpret_scan(b, inputs, axis, reverse, checked)
    fn_name = combine_function(b, inputs, checked)
    res = B.build_scan(b, [t.handle for t in inputs],
                       result_types=[tensor_ir_type(t.dtype, shape) for t in inputs],
                       axis=axis, reverse=int(bool(reverse)), combine=fn_name)
    return [tensor(r, t.dtype, shape) for r, t in zip(res, inputs)]


def _checked(b, inputs, combine):
    """`combine` with its results checked (count, scalar-ness, dtype) with scan messages;
    returns lists of tensors of the inputs' dtypes."""
    def run(lhs, rhs):
        outs = combine(lhs, rhs)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        if len(outs) != len(inputs):
            raise SemanticError(f"the combine function of associative_scan returned "
                                f"{len(outs)} value{'s' if len(outs) != 1 else ''} for "
                                f"{len(inputs)} scanned tile{'s' if len(inputs) != 1 else ''}")
        res = []
        for i, (o, t) in enumerate(zip(outs, inputs)):
            if o is None:
                raise SemanticError("the combine function of associative_scan returned None")
            o = S.to_tensor(b, o, hint=t.dtype)
            if o.dtype != t.dtype:
                raise SemanticError(f"the combine function of associative_scan returned "
                                    f"{o.dtype} for a tile of {t.dtype} (value {i})")
            res.append(o)
        return res
    return run


def _interpret_scan(b, inputs, axis, reverse, combine):
    """Hillis-Steele over numpy slices: after the step of distance d, x[i] combines the
    2d elements ending at i (in order); the combine body runs on whole slices."""
    import numpy as np
    vals = [np.asarray(t.handle) for t in inputs]
    if reverse:
        vals = [np.flip(v, axis) for v in vals]
    n = vals[0].shape[axis]
    d = 1
    while d < n:
        lo = [b.wrap(np.take(v, range(0, n - d), axis=axis), t.dtype)
              for v, t in zip(vals, inputs)]
        hi = [b.wrap(np.take(v, range(d, n), axis=axis), t.dtype) for v, t in zip(vals, inputs)]
        outs = combine(lo, hi)
        new = []
        for v, o in zip(vals, outs):
            o = np.asarray(S.broadcast_to(b, o, lo[0].shape).handle)
            new.append(np.concatenate([np.take(v, range(0, d), axis=axis), o], axis=axis))
        vals = new
        d *= 2
    if reverse:
        vals = [np.flip(v, axis) for v in vals]
    return [b.wrap(np.ascontiguousarray(v), t.dtype) for v, t in zip(vals, inputs)]


# ---- the builtins -------------------------------------------------------------------------------

def _scan_axis(axis, rank, what):
    axis = const(axis, f"{what} axis")
    if axis is None:
        raise SemanticError(f"{what} needs an axis (axis=None is not supported for scans)")
    return normalize_axis(axis, rank, f"{what} axis")


def _reverse(reverse, what):
    r = const(reverse, f"{what} reverse")
    if not isinstance(r, (bool, int)):
        raise SemanticError(f"{what} reverse must be a constexpr bool, got {r!r}")
    return bool(r)


@impl
def associative_scan(b, input, axis, combine_fn, reverse=False):
    is_tuple = isinstance(input, (tuple, list))
    inputs = list(input) if is_tuple else [input]
    inputs = [as_tile(b, t, "associative_scan") for t in inputs]
    axis = _scan_axis(axis, len(inputs[0].shape), "associative_scan")
    reverse = _reverse(reverse, "associative_scan")
    if isinstance(combine_fn, core.constexpr):  # passed through a @jit helper's parameter
        combine_fn = combine_fn.value
    inline = getattr(b, "inline_jit", None)

    def combine(lhs, rhs):
        args = lhs + rhs
        if getattr(b, "is_interpreter", False):
            out = combine_fn.fn(*args) if hasattr(combine_fn, "fn") else combine_fn(*args)
        elif inline is not None and hasattr(combine_fn, "fn"):
            out = inline(combine_fn, args)
        else:
            raise SemanticError("associative_scan needs a @jit combine function")
        return list(out) if isinstance(out, (tuple, list)) else [out]
    outs = scan_tiles(b, inputs, axis, reverse, combine)
    return tuple(outs) if is_tuple else outs[0]


def _promote(b, x, dtype, widen_ints: bool):
    """Triton's scan dtypes: an explicit `dtype` casts first; else bfloat16 -> float32 and,
    for sums, integers narrower than 32 bits -> (u)int32 (booleans count as unsigned)."""
    dtype = const(dtype, "dtype")
    if dtype is not None:
        if isinstance(dtype, str):
            dtype = core.str_to_ty(dtype)
        if not isinstance(dtype, core.dtype):
            raise SemanticError(f"dtype must be a tl dtype, got {dtype!r}")
    elif x.dtype.is_bf16():
        dtype = core.float32
    elif widen_ints and x.dtype.is_int() and x.dtype.primitive_bitwidth < 32:
        dtype = core.int32 if x.dtype.is_int_signed() and not x.dtype.is_bool() else core.uint32
    return S.cast(b, x, dtype) if dtype is not None and dtype != x.dtype else x


@impl
def cumsum(b, input, axis=0, reverse=False, dtype=None):
    x = as_tile(b, input, "cumsum")
    a = _scan_axis(axis, len(x.shape), "cumsum")
    x = _promote(b, x, dtype, widen_ints=True)
    return scan_tiles(b, [x], a, _reverse(reverse, "cumsum"),
                      lambda l, r: [S.binary(b, "add", l[0], r[0])])[0]


@impl
def cumprod(b, input, axis=0, reverse=False, dtype=None):
    x = as_tile(b, input, "cumprod")
    a = _scan_axis(axis, len(x.shape), "cumprod")
    x = _promote(b, x, dtype, widen_ints=False)
    if x.dtype.is_bool():  # a product of booleans is their `and` (i1 `mul` is not promoted)
        return scan_tiles(b, [x], a, _reverse(reverse, "cumprod"),
                          lambda l, r: [S.binary(b, "and", l[0], r[0])])[0]
    return scan_tiles(b, [x], a, _reverse(reverse, "cumprod"),
                      lambda l, r: [S.binary(b, "mul", l[0], r[0])])[0]
