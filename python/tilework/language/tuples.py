"""Triton's frontend classes for tuples and slices: `tl.tuple`, `tl.tuple_type`, `tl.slice`
(and `tl.constexpr_type`, in core).  As in Triton, every tuple a kernel builds is a
`tl.tuple`: literals (`(a, b)`, `[a, b]`), tuples returned from @jit helpers, sums and slices
of them (the compiler's `visit_Tuple`; the interpreter's source rewrite).  `tl.tuple` is a
Python tuple (unpacking, `len`, iteration, equality of constants keep working) with Triton's
extras: a `.type`, named fields (`t.name`), indexing by `tl.slice` and `*` by a constexpr.

A tuple (or namedtuple) kernel argument is specialized as a `tuple_type` whose leaves are the
runtime members' dtypes and `constexpr_type`s of the constant ones (constexprs, None, ints
equal to 1, @jit functions, dtypes); its runtime members are the kernel's parameters
`<name>.<i>[.<j>...]`, in order (`runtime_params`), and the kernel sees a `tl.tuple` of them
(`tuple_value`)."""
import builtins

from .core import constexpr, constexpr_type

__all__ = ["tuple", "tuple_type", "slice", "constexpr_type"]


def _type_of(v):
    if isinstance(v, builtins.tuple):
        return tuple_type([_type_of(e) for e in v], getattr(v, "fields", None))
    if isinstance(v, constexpr):
        return v.type
    t = getattr(v, "type", None)  # a tile: its block_type; a runtime scalar: its dtype
    return t if t is not None else constexpr_type(v)


class tuple_type:
    """The type of a `tl.tuple`: its elements' types and (optional) field names."""

    def __init__(self, types, fields=None):
        self.types = list(types)
        self.fields = list(fields) if fields else [""] * len(self.types)
        self.name = "[" + ",".join(f"{k}:{v}" for k, v in zip(self.fields, self.types)) + "]"

    def __str__(self):
        return self.name

    __repr__ = __str__

    def __iter__(self):
        return iter(self.types)

    def __len__(self):
        return len(self.types)

    def __getitem__(self, index):
        return self.types[index.value if isinstance(index, constexpr) else index]

    def __eq__(self, other):
        return (type(self) is type(other) and self.types == other.types
                and self.fields == other.fields)

    def __hash__(self):
        return hash(builtins.tuple(map(str, self.types)))

    def mangle(self) -> str:
        """Triton's mangled name: `T<members' mangled names joined by _>T`."""
        return "T" + "_".join(t.mangle() for t in self.types) + "T"


class slice:
    """`start:stop:step` as a value (Triton's frontend makes one for `t[a:b]` on tuples)."""

    def __init__(self, start, stop, step):
        unwrap = lambda v: v.value if isinstance(v, constexpr) else v  # noqa: E731
        self.start, self.stop, self.step = unwrap(start), unwrap(stop), unwrap(step)

    def __repr__(self):
        return f"tl.slice({self.start}, {self.stop}, {self.step})"


class tuple(builtins.tuple):
    """A tuple of kernel values (tiles, scalars, constexprs, tuples): `tl.tuple([a, b])`.
    Indexed by an int, a constexpr, a Python slice or a `tl.slice` (slices give a
    `tl.tuple`); `+` concatenates; `.type` is its `tuple_type`; fields named by `type`'s
    `fields` read as attributes."""

    def __new__(cls, args=(), type=None):
        self = super().__new__(cls, builtins.tuple(args))
        if type is not None and not isinstance(type, tuple_type):
            type = tuple_type(type)
        self._fields = type.fields if type is not None else None
        return self

    @property
    def values(self):
        return list(self)

    @property
    def fields(self):
        return self._fields

    @property
    def type(self):
        return _type_of(self)

    def __getitem__(self, idx):
        if isinstance(idx, constexpr):
            idx = idx.value
        if isinstance(idx, slice):
            idx = builtins.slice(idx.start, idx.stop, idx.step)
        if isinstance(idx, builtins.slice):
            return tuple(builtins.tuple.__getitem__(self, idx))
        if not isinstance(idx, int):
            raise TypeError(f"tl.tuple indices must be compile-time ints or slices, not "
                            f"{builtins.type(idx).__name__}")
        return builtins.tuple.__getitem__(self, idx)

    def __getattr__(self, name):
        fields = self.__dict__.get("_fields") or []
        if name in fields:
            return builtins.tuple.__getitem__(self, fields.index(name))
        raise AttributeError(f"tl.tuple has no attribute `{name}` (its fields: {fields})")

    def __add__(self, other):
        if not isinstance(other, (builtins.tuple, list)):
            raise TypeError(tuple_operand_message(self))
        return tuple(builtins.tuple(self) + builtins.tuple(other))

    def __radd__(self, other):
        if not isinstance(other, (builtins.tuple, list)):
            raise TypeError(tuple_operand_message(self))
        return tuple(builtins.tuple(other) + builtins.tuple(self))

    def __mul__(self, n):
        n = n.value if isinstance(n, constexpr) else n
        if not isinstance(n, int) or isinstance(n, bool):  # (the compiler's messages)
            raise TypeError(tuple_operand_message(self) if hasattr(n, "dtype") else
                            f"can't multiply sequence by non-int of type "
                            f"'{builtins.type(n).__name__}'")
        return tuple(builtins.tuple(self) * n)

    __rmul__ = __mul__

    def __repr__(self):
        return f"tl.tuple({list(self)!r})"


def tuple_operand_message(t) -> str:
    """The message for a tuple where a tile or a number is needed, naming the kernel argument
    it is (the compiler's and the interpreter's)."""
    name = t.__dict__.get("arg_name") if isinstance(t, tuple) else None
    if name:
        return (f"expected a tile or a number, got the tuple argument `{name}` (of "
                f"{len(t)}; index it: `{name}[0]`)")
    return "expected a tile or a number, got tuple"


# ---- tuples as kernel arguments -------------------------------------------------------------

def is_tuple_spec(t) -> bool:
    """Whether a signature entry is a tuple argument's `tuple_type`."""
    return isinstance(t, tuple_type)


def arg_fields(a):
    """The field names of a tuple argument (a namedtuple's `_fields`, a tl.tuple's), or None."""
    fields = getattr(builtins.type(a), "_fields", None)
    if fields is None and isinstance(a, tuple):
        fields = a.fields
    return list(fields) if fields else None


def member_param(name: str, i: int) -> str:
    """The kernel parameter name of member `i` of the tuple argument (or member) `name`."""
    return f"{name}.{i}"


def member_label(name: str, i: int) -> str:
    """How messages name member `i` of the tuple argument `name` (`t[1][0]`)."""
    return f"{name}[{i}]"


def runtime_params(name: str, t) -> list:
    """[(parameter name, dtype)] of the runtime members of the tuple type `t` of argument
    `name`, flattened depth first (a host tensor descriptor is one entry, as an argument of its
    own: its kernel parameters are `<member>`, `<member>.shape0`, ...)."""
    out = []
    for i, m in enumerate(t.types):
        if isinstance(m, tuple_type):
            out += runtime_params(member_param(name, i), m)
        elif not isinstance(m, constexpr_type):
            out.append((member_param(name, i), m))
    return out


def flat_signature(signature: dict) -> list:
    """[(parameter name, dtype)] of a specialization's runtime parameters, in order, tuple
    arguments flattened: what the compiled kernel takes."""
    out = []
    for name, t in signature.items():
        out += runtime_params(name, t) if isinstance(t, tuple_type) else [(name, t)]
    return out


def tuple_value(name: str, t, member):
    """The kernel's value of tuple argument `name` of type `t`: a `tl.tuple` (fields kept) of
    `member(parameter name, dtype)` for runtime members (a host tensor descriptor's is its
    in-kernel descriptor) and constexprs for constant ones."""
    vals = []
    for i, m in enumerate(t.types):
        if isinstance(m, tuple_type):
            vals.append(tuple_value(member_param(name, i), m, member))
        elif isinstance(m, constexpr_type):
            vals.append(constexpr(m.value))
        else:
            vals.append(member(member_param(name, i), m))
    return argument_tuple(name, vals, t.fields if any(t.fields) else None)


def argument_tuple(name: str, vals, fields=None):
    """The `tl.tuple` a kernel sees for tuple argument `name` (messages name it)."""
    v = named_tuple(vals, fields)
    v.__dict__["arg_name"] = name
    return v


def named_tuple(vals, fields=None):
    """A `tl.tuple` of `vals` whose `fields` (names, or None) read as attributes: what a
    namedtuple argument, or a namedtuple built in a kernel, is there."""
    return tuple(vals, tuple_type([_type_of(x) for x in vals], fields) if fields else None)


def is_namedtuple_class(c) -> bool:
    return isinstance(c, builtins.type) and issubclass(c, builtins.tuple) and \
        hasattr(c, "_fields")


def spec_key(t) -> str:
    """An unambiguous text of a signature entry, for cache keys: a tuple type's constant
    members by type and repr (`str` would print constexpr 1 and '1' alike), @jit functions by
    their sources' hash."""
    if not isinstance(t, tuple_type):
        return str(t)
    parts = []
    for f, m in zip(t.fields, t.types):
        if isinstance(m, constexpr_type):
            v = m.value
            h = getattr(v, "cache_key", None) if callable(v) else None
            m = f"cx:{builtins.type(v).__qualname__}:{v!r}" + (f":{h}" if h else "")
        else:
            m = spec_key(m)
        parts.append(f"{f}={m}")
    return "(" + ",".join(parts) + ")"
