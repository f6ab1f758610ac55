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

import enum
import functools
import inspect
import operator
import threading


# --------------------------------------------------------------------------------------------
# dtypes

class dtype:
    """A scalar element type.  Names follow triton.language (`fp32`, `int32`, `uint8`, ...)."""

    SINT = ("int1", "int8", "int16", "int32", "int64")
    UINT = ("uint8", "uint16", "uint32", "uint64")
    # fp8e4b15: Triton's e4m3 with exponent bias 15 (no inf or NaN; largest 1.875), stored
    # as i8; arithmetic converts it (frontend/semantic.py: `cast`).  fp8e4b8 and fp8e5b16: the
    # "fnuz" e4m3/e5m2 of AMD's gfx942 matrix cores (biases 8 and 16, no inf, no negative
    # zero: 0x80 is the one NaN)
    FLOAT = ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "fp16", "bf16", "fp32",
             "fp64")

    # Triton's lists of names (there int1 counts as unsigned; tilework's is_int_signed keeps
    # it signed, as its -1 for true)
    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32",
                "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]

    class SIGNEDNESS(enum.Enum):
        SIGNED = 0
        UNSIGNED = 1

    class KIND(enum.Enum):  # ordered as the promotion: bool < integer < float
        BOOLEAN = 0
        INTEGRAL = 1
        FLOATING = 2

    def __init__(self, name: str):
        if name not in self.SINT + self.UINT + self.FLOAT + ("void",):
            raise ValueError(f"unknown dtype {name!r}")
        self.name = name

    # kinds
    def is_floating(self) -> bool:
        return self.name in self.FLOAT

    def is_int(self) -> bool:
        return self.name in self.SINT + self.UINT

    def is_int_signed(self) -> bool:
        return self.name in self.SINT

    def is_int_unsigned(self) -> bool:
        return self.name in self.UINT

    def is_bool(self) -> bool:
        return self.name == "int1"

    def is_int1(self) -> bool:
        return self.name == "int1"

    def kind(self) -> "dtype.KIND":
        return dtype.KIND.BOOLEAN if self.is_bool() else \
            dtype.KIND.INTEGRAL if self.is_int() else dtype.KIND.FLOATING

    @staticmethod
    def is_dtype(type_str) -> bool:
        """Whether `type_str` names a scalar dtype (`"fp32"`, `"int1"`, ...)."""
        return type_str in (dtype.SINT_TYPES + dtype.UINT_TYPES + dtype.FP_TYPES +
                            dtype.OTHER_TYPES)

    def with_element_ty(self, element_ty: "dtype") -> "dtype":
        """The type with `element_ty` for elements: a scalar type is just that."""
        return element_ty

    def is_ptr(self) -> bool:
        return False

    def is_fp8(self) -> bool:
        return self.name.startswith("fp8")

    def is_fp16(self) -> bool:
        return self.name == "fp16"

    def is_bf16(self) -> bool:
        return self.name == "bf16"

    def is_fp32(self) -> bool:
        return self.name == "fp32"

    def is_fp64(self) -> bool:
        return self.name == "fp64"

    @property
    def primitive_bitwidth(self) -> int:
        if self.name == "int1":
            return 1
        if self.name.startswith("fp8"):
            return 8
        if self.name == "bf16":
            return 16
        return int("".join(c for c in self.name if c.isdigit()))

    @property
    def itemsize(self) -> int:
        """Bytes per element in memory (int1 is stored as a byte)."""
        return max(1, self.primitive_bitwidth // 8)

    # Triton's other dtype queries
    _MANTISSA = {"fp8e4nv": 3, "fp8e5": 2, "fp8e4b15": 3, "fp8e4b8": 3, "fp8e5b16": 2,
                 "fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52}
    _BIAS = {"fp8e4nv": 7, "fp8e5": 15, "fp8e4b15": 15, "fp8e4b8": 8, "fp8e5b16": 16,
             "fp16": 15, "bf16": 127, "fp32": 127, "fp64": 1023}

    @property
    def fp_mantissa_width(self) -> int:
        """The explicit mantissa bits of a floating-point dtype (fp32: 23)."""
        if self.name not in self._MANTISSA:
            raise TypeError(f"fp_mantissa_width is defined for floating-point dtypes, not "
                            f"{self.name}")
        return self._MANTISSA[self.name]

    @property
    def exponent_bias(self) -> int:
        """The exponent bias of a floating-point dtype (fp32: 127)."""
        if self.name not in self._BIAS:
            raise TypeError(f"exponent_bias is defined for floating-point dtypes, not "
                            f"{self.name}")
        return self._BIAS[self.name]

    @property
    def int_bitwidth(self) -> int:
        if not self.is_int():
            raise TypeError(f"int_bitwidth is defined for integer dtypes, not {self.name}")
        return self.primitive_bitwidth

    def get_int_max_value(self) -> int:
        bits = self.int_bitwidth
        return (1 << bits) - 1 if self.is_int_unsigned() or bits == 1 else (1 << bits - 1) - 1

    def get_int_min_value(self) -> int:
        bits = self.int_bitwidth
        return 0 if self.is_int_unsigned() or bits == 1 else -(1 << bits - 1)

    def is_standard_floating(self) -> bool:
        return self.name in ("fp16", "bf16", "fp32", "fp64")

    def is_fp8e4nv(self) -> bool:
        return self.name == "fp8e4nv"

    def is_fp8e5(self) -> bool:
        return self.name == "fp8e5"

    def is_fp8e4b15(self) -> bool:
        return self.name == "fp8e4b15"

    def is_fp8e4b8(self) -> bool:
        return self.name == "fp8e4b8"

    def is_fp8e5b16(self) -> bool:
        return self.name == "fp8e5b16"

    def is_void(self) -> bool:
        return self.name == "void"

    def is_block(self) -> bool:
        return False

    def is_const(self) -> bool:
        return False

    @property
    def scalar(self) -> "dtype":
        return self

    def to_ir(self, builder=None):
        """The MLIR type of this dtype, from `builder` (or the active one): the frontend's."""
        b = builder if builder is not None else _builder("dtype.to_ir")
        return b.ir_type(self)

    def codegen_name(self) -> str:
        """Triton's name in generated code: `fp32` -> `float32`, `bf16` -> `bfloat16`."""
        if self.name.startswith("fp"):
            return "float" + self.name[2:]
        if self.name.startswith("bf"):
            return "bfloat" + self.name[2:]
        return self.name

    @property
    def cache_key_part(self) -> str:
        """The dtype's part of a cache key (Triton's: its name)."""
        return self.name

    def mangle(self) -> str:
        """Triton's mangled name (of @jit helpers' specializations): `i32`, `u8`, `fp16`;
        int1 is `u1` (unsigned there); void has none (RuntimeError, as Triton's)."""
        if self.is_int():
            return ("u" if self.name in self.UINT_TYPES else "i") + str(self.int_bitwidth)
        if self.is_floating():
            return self.name
        raise RuntimeError("Not implemented")

    def __eq__(self, other):
        other = other.value if isinstance(other, constexpr) else other  # (Triton's, unwrapped)
        return isinstance(other, dtype) and not other.is_ptr() and self.name == other.name

    def __hash__(self):
        return hash(("dtype", self.name))

    def __str__(self):
        return self.name

    def __repr__(self):  # Triton's: evaluable where `triton` names this package
        return f"triton.language.{self.codegen_name()}"


for _n in dtype.SINT[1:] + dtype.UINT:  # is_int8() ... is_uint64(), as Triton
    setattr(dtype, f"is_{_n}", (lambda n: lambda self: self.name == n)(_n))
del _n


class pointer_type(dtype):
    """A pointer to elements of `element_ty` in global memory; `const=True` (or a parameter
    annotated `tl.const`) makes it read-only: loads are fine, stores and atomics through it
    are compile errors."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = bool(const)
        self.name = f"*{element_ty.name}"

    def is_ptr(self) -> bool:
        return True

    def is_const(self) -> bool:
        return self.const

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    def is_int_signed(self) -> bool:
        return False

    def is_int_unsigned(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False

    @property
    def primitive_bitwidth(self) -> int:
        return 64

    def __eq__(self, other):
        other = other.value if isinstance(other, constexpr) else other
        return isinstance(other, pointer_type) and self.element_ty == other.element_ty and \
            self.const == other.const

    def __hash__(self):
        return hash(("ptr", self.element_ty.name, self.const))

    def codegen_name(self) -> str:
        """Triton's name of the pointer type: `pointer<fp32>`, `const_pointer<int8>`."""
        return f"{'const_' if self.const else ''}pointer<{self.element_ty.name}>"

    @property
    def cache_key_part(self) -> str:
        return self.codegen_name()

    def mangle(self) -> str:
        return f"P{self.element_ty.mangle()}"

    def __repr__(self):
        return f"*const {self.element_ty.name}" if self.const else self.name

    __str__ = __repr__


class block_type(dtype):
    """The type of a tile (`x.type` where `x.shape` is not empty), as Triton's: its element
    type (`element_ty`, `scalar`) and `shape`.  A scalar's type is its dtype."""

    def __init__(self, element_ty: dtype, shape):
        self.element_ty = element_ty
        self.shape = tuple(int(getattr(s, "value", s)) for s in shape)
        if not self.shape:
            raise TypeError("0d block_type is forbidden")
        self.numel = functools.reduce(lambda a, b: a * b, self.shape, 1)
        self.name = f"<{self.shape}, {element_ty}>"

    def is_block(self) -> bool:
        return True

    def is_ptr(self) -> bool:  # a tile of pointers is a block, not a pointer type
        return False

    def get_block_shapes(self) -> tuple:
        return self.shape

    def with_element_ty(self, element_ty: dtype) -> "block_type":
        return block_type(element_ty, self.shape)

    @property
    def scalar(self) -> dtype:
        return self.element_ty

    @property
    def primitive_bitwidth(self) -> int:
        return self.element_ty.primitive_bitwidth

    @property
    def nbytes(self) -> int:
        return self.numel * (self.element_ty.primitive_bitwidth // 8)

    def to_ir(self, builder=None):
        raise TypeError(f"{self} is a tile's type; its element type is `.element_ty`")

    def mangle(self) -> str:
        return f"{self.element_ty.mangle()}S{'_'.join(map(str, self.shape))}S"

    def __eq__(self, other):
        other = other.value if isinstance(other, constexpr) else other
        return isinstance(other, block_type) and (self.element_ty, self.shape) == \
            (other.element_ty, other.shape)

    def __hash__(self):
        return hash(("block", self.element_ty, self.shape))

    def __repr__(self):
        return self.name

    __str__ = __repr__


class const:
    """A parameter annotation (`in_ptr: tl.const`) marking a pointer argument read-only, as in
    Triton: the kernel sees `pointer_type(elem, const=True)`."""


int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float8e4nv = dtype("fp8e4nv")
float8e5 = dtype("fp8e5")
float8e4b15 = dtype("fp8e4b15")
float8e4b8 = dtype("fp8e4b8")
float8e5b16 = dtype("fp8e5b16")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")
void = dtype("void")
pi32_t = pointer_type(int32)

DTYPES = {d.name: d for d in (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                               float8e4nv, float8e5, float8e4b15, float8e4b8, float8e5b16, float16,
                               bfloat16, float32, float64)}


def str_to_ty(name: str) -> dtype:
    """`'fp32'` -> float32, `'*fp16'` -> pointer_type(float16); the signature syntax of
    `tilework compile --signature` and of specialization keys."""
    name = name.strip()
    if name.startswith("*"):
        return pointer_type(str_to_ty(name[1:]))
    aliases = {"i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
               "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
               "f16": "fp16", "f32": "fp32", "f64": "fp64", "b16": "bf16", "bool": "int1",
               "float16": "fp16", "float32": "fp32", "float64": "fp64", "bfloat16": "bf16"}
    name = aliases.get(name, name)
    if name not in DTYPES:
        raise ValueError(f"unknown type {name!r} (expected e.g. *fp32, i32, fp16)")
    return DTYPES[name]


# --------------------------------------------------------------------------------------------
# constexpr

class constexpr:
    """A compile-time constant.  As a parameter annotation (`BLOCK: tl.constexpr`) it makes the
    argument part of the specialization; inside a kernel it wraps Python values."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __index__(self):
        return int(self.value)

    def __bool__(self):
        return bool(self.value)

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, constexpr) else other)

    def __hash__(self):
        return hash(self.value)

    @property
    def type(self):
        return constexpr_type(self.value)


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


class constexpr_type:
    """The type of a constexpr (`c.type`, an element of a `tl.tuple_type`), as in Triton: two
    are equal when their values are."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __eq__(self, other):
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"constexpr_type[{self.value}]"

    def mangle(self) -> str:
        return repr(self)


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

_state = threading.local()


def active_builder():
    """The builder of the interpreter running a kernel on this thread, or None."""
    return getattr(_state, "builder", None)


def set_active_builder(builder):
    """Sets the active builder (None: none); returns the previous one.  Interpreter only."""
    prev = active_builder()
    _state.builder = builder
    return prev


def _builder(what: str):
    b = active_builder()
    if b is None:
        raise TypeError(f"`{what}` on a tile is only evaluated by the interpreter "
                        f"(TILEWORK_INTERPRET=1); inside a compiled kernel the compiler "
                        f"handles it, and outside a kernel there are no tiles")
    return b


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
