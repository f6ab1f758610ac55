"""The tile language's types: `dtype` (and its pointer and block forms, the named dtypes,
`str_to_ty`), `const`, `constexpr` and `constexpr_type`.  `core.py` adds constexpr's operators
(they defer to a tile operand's) and re-exports every name here."""
from __future__ import annotations

import enum
import functools

from .active import require_builder


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
        b = builder if builder is not None else require_builder("dtype.to_ir")
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


# their public home is `tilework.language.core` (as Triton's `triton.language.core`): messages
# that print a class, and pickles, name it there
for _cls in (dtype, pointer_type, block_type, const, constexpr, constexpr_type):
    _cls.__module__ = "tilework.language.core"
del _cls
