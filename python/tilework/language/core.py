"""The tile language surface: dtypes, `constexpr`, the `tensor` value and builtin stubs.

This module is deliberately thin.  Builtins here only document the API and mark
the function; what a builtin does when a kernel is compiled lives in
`tilework.frontend.ops` (one implementation per builtin, keyed by name) and the
semantics shared by all ops (type promotion, broadcasting) in
`tilework.frontend.semantic`.  Calling a builtin outside a kernel raises.

The CPU interpreter (`tilework.runtime.interpreter`) runs a kernel's Python function
directly.  While it does, an *active builder* is set here; builtins and the `tensor`
operators then call the same `ops`/`semantic` functions as the compiler, with that builder
evaluating each op in numpy.  The builder hands them over (`builder.impls`, the builtin
table `frontend.ops.IMPLS`; `builder.semantic`, the module `frontend.semantic`;
`builder.subscript`), so this layer imports no frontend.  The compiler's code generator never
calls these operators.
"""
from __future__ import annotations

import functools
import inspect
import operator

from .active import active_builder, require_builder, set_active_builder  # noqa: F401
from .dtypes import (  # noqa: F401  (re-exported: tl.float16, tl.constexpr, ...)
    dtype, pointer_type, block_type, const, int1, int8, int16, int32, int64, uint8, uint16,
    uint32, uint64, float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16, float16,
    bfloat16, float32, float64, void, pi32_t, DTYPES, str_to_ty, constexpr, constexpr_type,
)


def _constexpr_op(op, reverse=False):
    # Triton's: Python code run at compile time (constexpr functions, aggregate members)
    # computes on constexprs; a tile operand is the tile's own operator's
    def method(self, other):
        if isinstance(other, tensor):
            return NotImplemented
        o = other.value if isinstance(other, constexpr) else other
        return constexpr(op(o, self.value) if reverse else op(self.value, o))
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "lshift", "rshift"):
    _op = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    setattr(constexpr, f"__{_name}__", _constexpr_op(_op))
    setattr(constexpr, f"__r{_name}__", _constexpr_op(_op, reverse=True))
for _name in ("lt", "le", "gt", "ge"):
    setattr(constexpr, f"__{_name}__", _constexpr_op(getattr(operator, _name)))
constexpr.__neg__ = lambda self: constexpr(-self.value)
constexpr.__ne__ = lambda self, other: not self.__eq__(other)
del _name, _op


_AGGREGATE: list = []  # language/aggregate.py's `aggregate` (it imports this module)


def install_aggregate(fn):
    _AGGREGATE[:] = [fn]


def _aggregate(cls):
    """Triton's `tl.core._aggregate` (tilework.language.aggregate)."""
    return _AGGREGATE[0](cls)


# --------------------------------------------------------------------------------------------
# tensor: a value inside a kernel (a tile, or a scalar when shape == ())

# builtins callable as tile methods, as in Triton (`x.sum(axis=0)`, `x.reshape(...)`)
MEMBER_BUILTINS = frozenset({
    "sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", "cumsum", "cumprod",
    "reshape", "view", "ravel", "trans", "permute", "expand_dims", "broadcast_to", "split",
    "join", "exp", "exp2", "log", "log2", "sqrt", "abs", "sigmoid", "softmax", "cast",
    "logical_and", "logical_or", "associative_scan", "item", "histogram", "gather",
    "store", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or",
    "atomic_xchg", "atomic_xor",  # (on a tile of pointers: `p.store(v)`, `p.atomic_add(v)`)
})
# @jit functions callable as tile methods (`x.sort()`, `x.flip(0)`): language/standard.py
# registers them here (this module cannot import it)
MEMBER_FUNCTIONS: dict = {}


def truth_value_message(shape) -> str:
    """The one message, compiled or interpreted, for a tile where Python wants one truth
    value (`if`, `while`; `and`/`or`/`not` and `x if c else y` take tiles elementwise)."""
    return (f"a tile of shape {list(shape)} has no single truth value (`if`, `while`): reduce "
            f"it (tl.max, tl.sum, ...) or choose elementwise with tl.where")


TRITON_MAX_TENSOR_NUMEL = 1 << 20  # the most elements a tile holds (Triton's limit)


def operator_message(op: str) -> str:
    return f"operator {op} is not supported on tiles"


def unpack_message(t) -> str:
    return (f"cannot unpack a tile of shape {list(t.shape)}: a tile is not a sequence (index "
            f"it with tl.split, or reduce it)")


class shape_tuple(tuple):
    """A tile's shape: a tuple that also equals the list of the same sizes, so that
    `x.shape == [N]` holds as in Triton (whose shapes are lists)."""

    def __eq__(self, other):
        if isinstance(other, list):
            other = tuple(other)
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__


class tensor:
    """A value of a kernel: a tile of `shape` (or a scalar, shape `()`) with element type
    `dtype`.  `handle` is the IR value (compiled mode)."""

    def __init__(self, handle, type: dtype, shape: tuple = ()):
        self.handle = handle
        self.dtype = type  # element dtype (a pointer_type for pointer tiles)
        self.shape = shape_tuple(shape)

    @property
    def type(self) -> dtype:
        """Triton's: a tile's `block_type`; a scalar's dtype."""
        return block_type(self.dtype, self.shape) if self.shape else self.dtype

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def is_block(self) -> bool:
        return len(self.shape) > 0

    def __repr__(self):
        b = active_builder()
        if b is not None:
            return b.format(self)  # the interpreter shows the values
        return f"tensor<{list(self.shape)}, {self.dtype}>"

    # Scalars convert to Python values under the interpreter, so that `if`, `range` and
    # `print` on runtime scalars work there.  Compiled kernels cannot do this.
    def __bool__(self):
        if active_builder() is None:
            raise TypeError("a tile has no Python truth value outside a kernel")
        if self.shape:
            raise TypeError(truth_value_message(self.shape))
        return bool(self.handle)

    def _scalar(self, kind):
        b = active_builder()
        if b is None or self.shape:
            raise TypeError(f"{kind}() of a {'tile' if self.shape else 'runtime scalar'} is "
                            f"only defined for scalars in the interpreter (TILEWORK_INTERPRET=1)")
        return b.python_value(self)  # the builder knows signedness and storage

    def __index__(self):
        if not self.dtype.is_int():
            raise TypeError(f"a {self.dtype} value cannot be used as an index")
        return int(self._scalar("index"))

    def __int__(self):
        return int(self._scalar("int"))

    def __float__(self):
        return float(self._scalar("float"))

    def to(self, dtype, fp_downcast_rounding=None, bitcast=False, **unexpected):
        """`self` converted to `dtype` (see `cast`)."""
        if unexpected:  # (interpreted; the compiler words it so in call_builtin)
            raise TypeError(f"tl.cast: got an unexpected keyword argument "
                            f"'{next(iter(unexpected))}'")
        return _call_builtin("cast", "tensor.to", self, dtype, fp_downcast_rounding, bitcast)


    def __getitem__(self, idx):
        """`x[None, :]`: None adds a size-1 dimension, `:` keeps one."""
        b = _builder("indexing")
        return b.subscript(b, self, idx)

    @property
    def T(self):
        return _call_builtin("trans", "tensor.T", self)

    def __getattr__(self, name):
        # member functions (`x.sum(0)`, `x.reshape(...)`) as in Triton, for the interpreter;
        # compiled kernels resolve them in the code generator
        if name in MEMBER_BUILTINS:
            return lambda *a, **k: _call_builtin(name, f"tensor.{name}", self, *a, **k)
        if name in MEMBER_FUNCTIONS:
            return lambda *a, **k: MEMBER_FUNCTIONS[name](self, *a, **k)
        raise AttributeError(name)

    # == and != fall back to identity outside the interpreter (NotImplemented) rather than
    # raising, so that containers holding tensors (`x in (a, b)`) keep working there.
    def __eq__(self, other):
        b = active_builder()
        return NotImplemented if b is None else b.semantic.compare(b, "eq", self, other)

    def __ne__(self, other):
        b = active_builder()
        return NotImplemented if b is None else b.semantic.compare(b, "ne", self, other)

    __hash__ = object.__hash__

    def __neg__(self):
        b = _builder("unary -")
        return b.semantic.minus(b, self)

    def __invert__(self):
        b = _builder("~")
        return b.semantic.invert(b, self)

    def __pos__(self):
        return self

    # operators the compiler refuses on tiles, refused with its message when interpreted
    def __matmul__(self, other):
        raise TypeError(operator_message("MatMult"))

    __rmatmul__ = __matmul__

    def __pow__(self, other):
        raise TypeError(operator_message("Pow"))

    __rpow__ = __pow__

    def __iter__(self):  # (Python would index it from 0: `a, b = tile`)
        raise TypeError(unpack_message(self))


# --------------------------------------------------------------------------------------------
# the interpreter's active builder and the tensor operators (mirroring codegen.BINOPS/CMPOPS)

_builder = require_builder


def _call_builtin(name: str, what: str, /, *args, **kwargs):
    """Builtin `name` on the active builder (which carries the frontend's implementations)."""
    b = _builder(what)
    return b.impls[name](b, *args, **kwargs)


def _binary_op(op: str, sym: str, fn: str, reverse: bool):
    def method(self, other):
        b = _builder(sym)
        x, y = (other, self) if reverse else (self, other)
        return getattr(b.semantic, fn)(b, op, x, y)
    method.__name__ = f"__{'r' if reverse else ''}{op}__"
    return method


for _op, _sym, _dunder in (("add", "+", "add"), ("sub", "-", "sub"), ("mul", "*", "mul"),
                           ("truediv", "/", "truediv"), ("floordiv", "//", "floordiv"),
                           ("mod", "%", "mod"), ("and", "&", "and"), ("or", "|", "or"),
                           ("xor", "^", "xor"), ("lshift", "<<", "lshift"),
                           ("rshift", ">>", "rshift")):
    setattr(tensor, f"__{_dunder}__", _binary_op(_op, _sym, "binary", False))
    setattr(tensor, f"__r{_dunder}__", _binary_op(_op, _sym, "binary", True))
for _op, _sym in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")):
    setattr(tensor, f"__{_op}__", _binary_op(_op, _sym, "compare", False))
del _op, _sym, _dunder


# --------------------------------------------------------------------------------------------
# builtins

_SIGNATURES: dict = {}  # builtin implementation -> its signature


def builtin(fn):
    """Marks a language function.  The frontend calls `tilework.frontend.ops.<name>` in its
    place; the interpreter calls the same implementation with its builder; called from plain
    Python it raises."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        b = active_builder()
        if b is None:
            raise RuntimeError(f"tl.{name} can only be called inside a @tilework.jit kernel")
        impl = b.impls.get(name)
        if impl is None:
            raise NotImplementedError(f"tl.{name} is not supported yet")
        sig = _SIGNATURES.get(impl)
        if sig is None:
            sig = _SIGNATURES[impl] = inspect.signature(impl)
        try:  # (the interpreter's path; the compiler's call_builtin words it the same)
            sig.bind(b, *args, **kwargs)
        except TypeError as e:
            raise TypeError(f"tl.{name}: {e}") from None
        return impl(b, *args, **kwargs)

    wrapper.__tilework_builtin__ = fn.__name__
    return wrapper


@builtin
def program_id(axis):
    """The index of this program along grid axis `axis` (0, 1 or 2), an int32 scalar."""


@builtin
def num_programs(axis):
    """The number of programs along grid axis `axis`, an int32 scalar."""


@builtin
def arange(start, end):
    """The int32 tile `[start, start + 1, ..., end - 1]`.  `start` and `end` are constexpr and
    `end - start` is a power of two."""


@builtin
def full(shape, value, dtype):
    """A tile of `shape` filled with the scalar `value`, of `dtype`."""


@builtin
def zeros_like(input):
    """Zeros of `input`'s shape and dtype."""


@builtin
def full_like(input, value):
    """`value` in `input`'s shape and dtype."""


@builtin
def zeros(shape, dtype):
    """A tile of `shape` filled with zeros of `dtype`."""


@builtin
def broadcast_to(input, *shape):
    """`input` broadcast to `shape` (size-1 dimensions grow): one tuple or the dimensions one
    by one (`x.broadcast_to(2, 4)`), as Triton."""


@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False):
    """Loads the elements that a tile of pointers (or one pointer, or a block pointer from
    `make_block_ptr`) points to.

    Where `mask` is false nothing is read and the result is `other` (undefined when `other`
    is None).  With a block pointer, `boundary_check` names the dimensions to bound and
    `padding_option` ("zero", "nan") fills what lies outside.  `cache_modifier` and
    `eviction_policy` are validated hints; `volatile` is honoured."""


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    """Stores `value` (broadcast to the pointers' shape) where `mask` is true (or, with a block
    pointer, inside the dimensions named by `boundary_check`)."""


@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    """`input` converted to `dtype` (value conversion, or bit reinterpretation if `bitcast`).
    A float narrowed to a smaller float rounds to nearest even, or toward zero with
    `fp_downcast_rounding="rtz"` (Triton's; any other conversion takes no rounding mode)."""


@builtin
def where(condition, x, y):
    """Elementwise `x` where `condition` else `y`, with broadcasting and type promotion."""


@builtin
def minimum(x, y, propagate_nan=None):
    """Elementwise minimum.  As Triton: with `propagate_nan=tl.PropagateNan.NONE` (the
    default) a NaN operand gives the other operand; with `tl.PropagateNan.ALL`, NaN."""


@builtin
def maximum(x, y, propagate_nan=None):
    """Elementwise maximum; NaN operands as for `minimum`."""


@builtin
def static_assert(cond, msg=""):
    """Fails compilation with `msg` when the constexpr `cond` is false."""


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False):
    """Prints compile-time values (types and constexprs) while compiling, as Python's `print`
    (its `sep`, `end`, `file` and `flush`)."""


@builtin
def multiple_of(input, values):
    """Hints that `input` (its first element per tile) is a multiple of `values`."""


@builtin
def max_contiguous(input, values):
    """Hints that the first `values` elements of `input` are contiguous."""


def cdiv(x, y):
    """Ceiling division, usable on Python ints (host side) and in kernels."""
    x = x.value if isinstance(x, constexpr) else x
    y = y.value if isinstance(y, constexpr) else y
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= `n` (1 for n <= 1), a host-side helper as in Triton."""
    n = n.value if isinstance(n, constexpr) else n
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()
