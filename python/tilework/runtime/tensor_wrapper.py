"""`reinterpret(tensor, dtype)`: a tensor passed to a kernel with another element type (int8
storage as fp8e4nv, e5m2 or e4b15), as Triton's `triton.reinterpret`.  The wrapper keeps the
tensor's memory, shape and strides; the launch path and the interpreter take it as a pointer
whose element type is the given one (`element_dtype`), specialized like the tensor (16-byte
alignment) with that type in the key.  No torch import: the wrapper only forwards."""
from __future__ import annotations

from ..language import core
from .launch_args import TORCH_DTYPES


class TensorWrapper:
    """A tensor seen with element type `dtype` (a tl dtype, or a torch dtype)."""

    def __init__(self, base, dtype):
        self.dtype = dtype
        self.base = base
        self.data = base.data
        self.device = base.device
        self.shape = base.shape

    def data_ptr(self):
        return self.base.data_ptr()

    def stride(self, *args):
        return self.base.stride(*args)

    def element_size(self):
        return self.base.element_size()

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base})"

    # the tensor methods tests and the autotuner use, kept wrapped
    def cpu(self):
        return TensorWrapper(self.base.cpu(), self.dtype)

    def to(self, device):
        return TensorWrapper(self.base.to(device), self.dtype)

    def clone(self):
        return TensorWrapper(self.base.clone(), self.dtype)

    def copy_(self, other):
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)

    def new_empty(self, sizes):
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)


def reinterpret(tensor, dtype):
    """`tensor` as a kernel argument of element type `dtype`: a `TensorWrapper`; a wrapper
    reinterpreted as its base's own dtype gives the base back."""
    if isinstance(tensor, TensorWrapper):
        if dtype == tensor.base.dtype:
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    if hasattr(tensor, "data_ptr"):
        return TensorWrapper(tensor, dtype)
    raise TypeError(f"Cannot reinterpret a {type(tensor)}.")


def element_dtype(w: TensorWrapper) -> core.dtype | None:
    """The tl dtype a wrapper's elements are read as (its tl dtype, or its torch dtype's); None
    for anything else (a pointer or block type, an unknown torch dtype)."""
    dt = w.dtype
    if isinstance(dt, core.dtype):
        return dt if type(dt) is core.dtype and not dt.is_void() else None
    name = TORCH_DTYPES.get(str(dt)) if type(dt).__module__.startswith("torch") else None
    return core.DTYPES[name] if name else None
