"""tl builtins of the memory family: atomics and block pointers (stubs documented here;
implementations in tilework.frontend.ops_memory)."""
from .core import builtin

__all__ = ["atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
           "atomic_xchg", "atomic_cas", "make_block_ptr", "advance", "block_pointer"]


# --------------------------------------------------------------------------------------------
# atomics: `sem` is "acq_rel" (default), "acquire", "release" or "relaxed"; `scope` is "gpu"
# (default), "cta" or "sys".  Each returns the values the memory held before the operation
# (masked-off lanes return 0).

@builtin
def atomic_add(pointer, val, mask=None, sem=None, scope=None):
    """Atomically adds `val` at `pointer` (a pointer or a tile of pointers); returns the old
    values.  int32/uint32/int64/uint64, fp16/bf16/fp32/fp64."""


@builtin
def atomic_max(pointer, val, mask=None, sem=None, scope=None):
    """Atomic maximum (signed or unsigned after the pointee; fp32/fp64 as Triton: an integer
    max on the bits for non-negative values, an unsigned min for negative ones)."""


@builtin
def atomic_min(pointer, val, mask=None, sem=None, scope=None):
    """Atomic minimum (see `atomic_max` for floats)."""


@builtin
def atomic_and(pointer, val, mask=None, sem=None, scope=None):
    """Atomic bitwise and (32/64-bit integers)."""


@builtin
def atomic_or(pointer, val, mask=None, sem=None, scope=None):
    """Atomic bitwise or (32/64-bit integers)."""


@builtin
def atomic_xor(pointer, val, mask=None, sem=None, scope=None):
    """Atomic bitwise xor (32/64-bit integers)."""


@builtin
def atomic_xchg(pointer, val, mask=None, sem=None, scope=None):
    """Atomically stores `val`; returns the old values (32/64-bit ints and floats)."""


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Compare-and-swap: where the memory equals `cmp` it becomes `val`; returns the old
    values (16/32/64-bit elements)."""


# --------------------------------------------------------------------------------------------
# block pointers

class block_pointer(tuple):
    """What `tl.make_block_ptr` returns: a frontend-only description of a `block_shape`
    window into a strided tensor.  `tl.load`/`tl.store` turn it into a tile of pointers and a
    boundary mask; `tl.advance` returns a moved copy.

    It is the tuple (base, shape, strides, offsets, block_shape, order): `shape` and
    `strides` int64 scalars, `offsets` int32 scalars (tensors), `block_shape` and `order`
    tuples of ints.  Being a tuple, it flows through runtime loops and branches like any
    tuple of values (its scalars are loop-carried, its ints must stay the same)."""

    def __new__(cls, parts):
        base, shape, strides, offsets, block_shape, order = parts
        return super().__new__(cls, (base, tuple(shape), tuple(strides), tuple(offsets),
                                     tuple(block_shape), tuple(order)))

    base = property(lambda self: self[0])
    shape = property(lambda self: self[1])
    strides = property(lambda self: self[2])
    offsets = property(lambda self: self[3])
    block_shape = property(lambda self: self[4])
    order = property(lambda self: self[5])

    @property
    def element_ty(self):
        return self.base.dtype.element_ty

    @property
    def dtype(self):
        return self.base.dtype

    # `bp.advance(offsets)` as in Triton: the code generator maps it to the builtin, the
    # interpreter calls the method
    __tilework_methods__ = {"advance": "advance"}

    def advance(self, offsets):
        return advance(self, offsets)

    def __repr__(self):
        return (f"block_pointer<{self.element_ty}, block_shape={list(self.block_shape)}, "
                f"order={list(self.order)}>")


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    """A block pointer to the `block_shape` window at `offsets` of the tensor at `base` with
    `shape` and `strides` (in elements).  `order` (a permutation, fastest dimension first)
    is accepted as a layout hint."""


@builtin
def advance(base, offsets):
    """The block pointer `base` moved by `offsets` (one int32 per dimension)."""
