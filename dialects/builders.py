"""Typed builders, one per declared op, generated from `opdefs`:

    build_load(builder, ptr, mask=None, other=None, *, result_type, attributes=None) -> ir.Value
    build_store(builder, ptr, value, mask=None, *, attributes=None) -> None
    build_reduce(builder, src, *, result_types, axis, combine, attributes=None) -> list

They fill in `operandSegmentSizes`/`resultSegmentSizes` and convert plain Python attribute
values by the declared kind (int -> i32 IntegerAttr, str -> StringAttr, list -> dense i32
array, symbol name -> FlatSymbolRefAttr).  `builder` is the frontend's Builder (so the interpreter
evaluates the op), or None to create at the current insertion point (passes).  See
`opdefs.base.builder_source`."""
from __future__ import annotations

from .opdefs import all_ops
from .opdefs.base import make_builder

__all__ = []
for _d in all_ops():
    _fn = make_builder(_d)
    if _fn.__name__ in globals():
        raise ValueError(f"two ops would have the builder {_fn.__name__}")
    globals()[_fn.__name__] = _fn
    __all__.append(_fn.__name__)
del _d, _fn
