"""Tensor descriptors, as Triton's: the in-kernel `tensor_descriptor` (from
`tl.make_tensor_descriptor` or a host `TensorDescriptor` argument), its builtins, and the host
class `TensorDescriptor` (re-exported by `tilework.tools.tensor_descriptor`, Triton's module
path; it lives here because the runtime, below `tools`, must recognize it).

Implementations are in `tilework.frontend.ops_descriptor`: a descriptor load or store is a
block-pointer access with every dimension bounds-checked, so out-of-bounds elements read as the
padding (zero or NaN) and are not written.
"""
from __future__ import annotations

from . import core
from .core import builtin

__all__ = ["make_tensor_descriptor", "load_tensor_descriptor", "store_tensor_descriptor",
           "tensor_descriptor", "tensor_descriptor_type", "block_type"]

MAX_RANK = 5
PADDINGS = ("zero", "nan")
TMA_MAX_BOX = 256  # a tensor map's box: at most 256 elements along each dimension
TMA_SWIZZLES = (128, 64, 32)


def tma_plan(elem_bits: int, block_shape, padding: str):
    """How a host descriptor's blocks are copied by TMA (`cp.async.bulk.tensor`), or None
    where TMA cannot (the block-pointer path then): `(box, swizzle_bytes)`.  TMA zero-fills
    out-of-bounds elements, so only `padding="zero"`; the box is at most 256 per dimension
    and its inner dimension at least 16 bytes.  A 2-D block of 8/16/32-bit elements whose rows
    have 32 bytes or more lands in the `#tilegpu.nvmma_shared` layout wgmma reads: the widest
    swizzle (128, 64, 32 bytes) the rows allow, the box one swizzle wide (the block is copied
    as several boxes side by side), if it has 8 rows or more (the swizzle's period: ring slots
    then stay in phase); any other block lands row-major, unswizzled, in one box.
    The compiler and the host tensor map (`runtime/tma.py`) both follow this plan (recorded
    in the compiled kernel's `metadata["tma"]`)."""
    shape = [int(d) for d in block_shape]
    if padding != "zero" or not 1 <= len(shape) <= MAX_RANK or elem_bits < 8 or \
            any(d > TMA_MAX_BOX for d in shape) or shape[-1] * elem_bits // 8 < 16:
        return None
    inner = shape[-1] * elem_bits // 8
    if len(shape) == 2 and elem_bits in (8, 16, 32) and inner >= 32 and shape[0] >= 8:
        sw = next(s for s in TMA_SWIZZLES if inner >= s)
        return [shape[0], sw * 8 // elem_bits], sw
    return shape, 0


block_type = core.block_type  # (a descriptor's `block_type` is a tile's type)


class tensor_descriptor_type:
    """The specialization of a host `TensorDescriptor` kernel argument: element type, block
    shape and padding.  The kernel receives the base pointer, the shape (int32 each) and the
    strides but the last (int64 each; the last is 1)."""

    def __init__(self, element_ty: core.dtype, block_shape, padding: str = "zero"):
        self.element_ty = element_ty
        self.block_shape = tuple(block_shape)
        self.padding = padding

    @property
    def rank(self) -> int:
        return len(self.block_shape)

    def is_ptr(self) -> bool:
        return False

    def __eq__(self, other):
        return isinstance(other, tensor_descriptor_type) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __repr__(self):
        pad = "" if self.padding == "zero" else f", {self.padding}"
        return f"tensordesc<{self.element_ty}{list(self.block_shape)}{pad}>"

    __str__ = __repr__


def parse_tensordesc(text: str):
    """(element type name, rank) of a `tensordesc<fp16[64, 32]>` signature entry, or None for
    any other dtype name (the runtime's ABI derives the parameter kinds from it)."""
    if not text.startswith("tensordesc<"):
        return None
    elem, _, rest = text[len("tensordesc<"):].partition("[")
    dims = rest.partition("]")[0]
    return elem, len([d for d in dims.split(",") if d.strip()])


def tensordesc_type_from_str(text: str) -> tensor_descriptor_type:
    """The `tensor_descriptor_type` a signature string names, in Triton's spelling
    `tensordesc<fp16[64, 64]>` (and this class's own, `tensordesc<fp32[8, 16], nan>` for the
    NaN padding).  A ValueError says what is wrong."""
    body = text.strip()
    if not (body.startswith("tensordesc<") and body.endswith(">")):
        raise ValueError(f"{text!r} is not a descriptor type: expected "
                         f"'tensordesc<ELEMENT[D0, D1, ...]>', e.g. 'tensordesc<fp16[64, 64]>'")
    elem, bracket, rest = body[len("tensordesc<"):-1].partition("[")
    dims, closed, tail = rest.partition("]")
    if not bracket or not closed:
        raise ValueError(f"{text!r}: the block shape is missing ('tensordesc<fp16[64, 64]>')")
    try:
        element_ty = core.str_to_ty(elem)
    except ValueError as err:
        raise ValueError(f"{text!r}: {err}") from None
    if element_ty.is_ptr():
        raise ValueError(f"{text!r}: a descriptor's elements are scalars, not {element_ty}")
    try:
        shape = [int(d) for d in dims.split(",")]
    except ValueError:
        raise ValueError(f"{text!r}: the block shape must be integers") from None
    if not 1 <= len(shape) <= MAX_RANK:
        raise ValueError(f"{text!r}: a descriptor has rank 1 to {MAX_RANK}")
    validate_block_shape(shape)
    padding = tail.strip().lstrip(",").strip() or "zero"
    if padding not in PADDINGS:
        raise ValueError(f"{text!r}: unknown padding or layout {padding!r} (the padding is "
                         f"one of {', '.join(PADDINGS)}; shared-memory layouts are Gluon's)")
    return tensor_descriptor_type(element_ty, shape, padding)


def _call(name, *args, **kwargs):
    b = core.active_builder()
    if b is None:
        raise RuntimeError(f"tensor_descriptor.{name} can only be called inside a "
                           f"@tilework.jit kernel")
    return b.impls[name](b, *args, **kwargs)


class tensor_descriptor(tuple):
    """A descriptor of a strided tensor in global memory, read and written in blocks of
    `block_shape` at element offsets.  The tuple (base, shape, strides, block_shape, padding,
    tma, device): `base` a scalar pointer, `shape` int32 scalars, `strides` int64 scalars (the
    last the constant 1), `block_shape` ints, `padding` 'zero' or 'nan', `tma` the kernel
    parameter holding its host tensor map (NVIDIA sm_90 with a TMA plan; loads then copy
    with TMA), or, `device` True, the global address of the map a descriptor made in the
    kernel writes in global scratch (sm_90a), or None.  Being a tuple it flows through
    runtime loops and branches like the tuple of its values."""

    # method -> builtin, resolved by the code generator (compiled) or called below (interpreter)
    __tilework_methods__ = {
        "load": "load_tensor_descriptor", "store": "store_tensor_descriptor",
        "atomic_add": "descriptor_atomic_add", "atomic_min": "descriptor_atomic_min",
        "atomic_max": "descriptor_atomic_max", "atomic_and": "descriptor_atomic_and",
        "atomic_or": "descriptor_atomic_or", "atomic_xor": "descriptor_atomic_xor",
    }

    def __new__(cls, parts):
        base, shape, strides, block_shape, padding, *rest = parts
        tma = rest[0] if rest else None
        device = bool(rest[1]) if len(rest) > 1 else False
        return super().__new__(cls, (base, tuple(shape), tuple(strides), tuple(block_shape),
                                     padding, tma, device))

    base = property(lambda self: self[0])
    shape = property(lambda self: self[1])
    strides = property(lambda self: self[2])
    block_shape = property(lambda self: self[3])
    padding = property(lambda self: self[4])
    tma = property(lambda self: self[5])
    device = property(lambda self: self[6])

    @property
    def dtype(self) -> core.dtype:
        """The element type (as Triton's `desc.dtype`)."""
        return self.base.dtype.element_ty

    @property
    def block_type(self) -> block_type:
        return block_type(self.dtype, self.block_shape)

    def __repr__(self):
        return f"tensor_descriptor<{self.dtype}, block_shape={list(self.block_shape)}>"

    # ---- methods (interpreter; the code generator maps them through __tilework_methods__) --
    def load(self, offsets):
        return _call("load_tensor_descriptor", self, offsets)

    def store(self, offsets, value):
        return _call("store_tensor_descriptor", self, offsets, value)

    def atomic_add(self, offsets, value):
        return _call("descriptor_atomic_add", self, offsets, value)

    def atomic_min(self, offsets, value):
        return _call("descriptor_atomic_min", self, offsets, value)

    def atomic_max(self, offsets, value):
        return _call("descriptor_atomic_max", self, offsets, value)

    def atomic_and(self, offsets, value):
        return _call("descriptor_atomic_and", self, offsets, value)

    def atomic_or(self, offsets, value):
        return _call("descriptor_atomic_or", self, offsets, value)

    def atomic_xor(self, offsets, value):
        return _call("descriptor_atomic_xor", self, offsets, value)


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    """A descriptor of the tensor at `base` (a scalar pointer) with `shape` and `strides` (in
    elements; the last stride must be the constexpr 1), read and written in blocks of
    `block_shape` (constexpr powers of two, at least 16 bytes along the last dimension).
    Out-of-bounds elements load as zero (`padding_option="nan"`: NaN, floats only)."""


@builtin
def load_tensor_descriptor(desc, offsets):
    """The block of `desc` at `offsets` (one int per dimension); `desc.load(offsets)`."""


@builtin
def store_tensor_descriptor(desc, offsets, value):
    """Stores `value` (a tile of `desc.block_shape`) at `offsets`; elements outside the tensor
    are not written.  `desc.store(offsets, value)`."""


def _descriptor_atomic(op):
    def fn(desc, offsets, value):
        pass
    fn.__name__ = f"descriptor_atomic_{op}"
    fn.__doc__ = (f"Atomic {op} of `value` into the block of `desc` at `offsets` (in bounds "
                  f"only); `desc.atomic_{op}(offsets, value)`.")
    return builtin(fn)


for _op in ("add", "min", "max", "and", "or", "xor"):
    globals()[f"descriptor_atomic_{_op}"] = _descriptor_atomic(_op)
    __all__.append(f"descriptor_atomic_{_op}")
del _op


# --------------------------------------------------------------------------------------------
# the host side

def _is_pow2(n) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


def validate_block_shape(block_shape):
    """Triton's checks of a block shape: ints, powers of two, at most 2**20 elements."""
    numel = 1
    for i, d in enumerate(block_shape):
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"Shape element {i} must have type `constexpr[int]`, got "
                            f"`constexpr[{type(d).__name__}]")
        if not _is_pow2(d):
            raise ValueError(f"Shape element {i} must be a power of 2")
        numel *= d
    if numel > 1 << 20:
        raise ValueError(f"numel ({numel}) exceeds triton maximum tensor numel ({1 << 20})")
    return numel


class TensorDescriptor:
    """A host-side descriptor of a GPU (or, for the interpreter, CPU) tensor, passed as a kernel
    argument; in the kernel the parameter is a `tensor_descriptor`.  As Triton's: `base` is a
    tensor (its data pointer 16-byte aligned), `strides` in elements with the last 1 and the
    others multiples of 16 bytes, `block_shape` powers of two, rank 1..5."""

    def __init__(self, base, shape, strides, block_shape, padding: str = "zero"):
        # (code that makes its descriptors per call, as Triton's tutorials do, pays this per
        # launch: a geometry that passed the checks before is taken from `_CHECKED`, which
        # leaves only the base's alignment to check; anything else takes the full checks)
        self.base = base
        self.padding = padding
        key = None
        if type(shape) in _SEQS and type(strides) in _SEQS and type(block_shape) in _SEQS:
            try:
                key = (*shape, _SEP, *strides, _SEP, *block_shape, *map(type, block_shape),
                       padding, base.dtype)
                checked = _CHECKED.get(key)
            except (TypeError, AttributeError):  # (the checks below say what is wrong)
                key = checked = None
            if checked is not None and _data_ptr(base) % 16 == 0:
                self.shape, self.strides, self.block_shape = \
                    [*checked[0]], [*checked[1]], [*checked[2]]
                return
        self._check(base, shape, strides, block_shape, padding)
        if key is not None:
            if len(_CHECKED) >= 4096:
                _CHECKED.clear()
            _CHECKED[key] = (tuple(self.shape), tuple(self.strides), tuple(self.block_shape))

    def _check(self, base, shape, strides, block_shape, padding):
        """Sets the fields from the arguments, checking them all (Triton's messages)."""
        self.shape = list(map(int, shape))
        self.strides = strides = list(map(int, strides))
        self.block_shape = block = list(block_shape)
        rank = len(self.shape)
        assert len(strides) == rank, f"rank mismatch: {self}"
        assert len(block) == rank, f"rank mismatch: {self}"
        assert rank > 0, "rank must not be zero"
        assert rank <= MAX_RANK, "rank cannot be more than 5"
        assert _data_ptr(base) % 16 == 0, "base must be 16-byte aligned"
        numel = 1
        for d in block:
            if type(d) is not int or d <= 0 or d & (d - 1):
                numel = validate_block_shape(block)  # (its messages)
                break
            numel *= d
        if numel > 1 << 20:
            validate_block_shape(block)
        elem_bytes = _itemsize(base)
        for stride in strides[:-1]:
            assert (stride * elem_bytes) % 16 == 0, "strides must be 16-byte aligned"
        assert strides[-1] == 1, "Last dimension must be contiguous"
        assert isinstance(padding, str) and padding in PADDINGS, "Illegal value for padding"
        if padding == "nan":
            assert _is_floating(base), \
                "Padding option `nan` is only supported for floating point tensors"

    @staticmethod
    def from_tensor(tensor, block_shape, padding: str = "zero") -> "TensorDescriptor":
        """The descriptor of all of `tensor` (its shape and strides)."""
        strides = tensor.stride() if callable(getattr(tensor, "stride", None)) else \
            [s // tensor.itemsize for s in tensor.strides]  # numpy: bytes
        return TensorDescriptor(tensor, list(tensor.shape), list(strides), block_shape,
                                padding)

    def __repr__(self):
        return (f"TensorDescriptor(shape={self.shape}, strides={self.strides}, "
                f"block_shape={self.block_shape}, padding={self.padding!r})")


# (shape, strides, block, the block's element types, padding, the base's dtype), flat, of
# every descriptor of lists or tuples that passed the checks -> its fields (shape and strides
# as ints)
_CHECKED: dict = {}
_SEP = object()  # (between the key's parts)
_SEQS = (list, tuple)


def _data_ptr(t) -> int:
    if callable(getattr(t, "data_ptr", None)):
        return t.data_ptr()
    cai = getattr(t, "__cuda_array_interface__", None) or getattr(t, "__array_interface__", None)
    if cai is None:
        raise TypeError(f"TensorDescriptor base must be a tensor, got {type(t).__name__}")
    return cai["data"][0]


def _itemsize(t) -> int:
    dt = t.dtype
    return dt.itemsize


def _is_floating(t) -> bool:
    dt = t.dtype
    fp = getattr(dt, "is_floating_point", None)
    if fp is not None:
        return bool(fp)
    return getattr(dt, "kind", "") == "f"  # numpy
