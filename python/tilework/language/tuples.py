"""Triton's frontend classes for tuples and slices: `tl.tuple`, `tl.tuple_type`, `tl.slice`
(and `tl.constexpr_type`, in core).  Tilework's kernels already carry Python tuples (unpacked,
returned from @jit helpers, carried through loops), so `tl.tuple` is a Python tuple with
Triton's extras: a `.type`, named fields (`t.name`) and indexing by `tl.slice`.  Tuples are
not kernel arguments (parameters are flat)."""
import builtins

from .core import constexpr, constexpr_type

__all__ = ["tuple", "tuple_type", "slice", "constexpr_type"]


def _type_of(v):
    if isinstance(v, builtins.tuple):
        return tuple_type([_type_of(e) for e in v], getattr(v, "fields", None))
    if isinstance(v, constexpr):
        return v.type
    t = getattr(v, "type", None)  # a tile: its element dtype (tilework's tensor.type)
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
        return tuple(builtins.tuple(self) + builtins.tuple(other))

    def __radd__(self, other):
        return tuple(builtins.tuple(other) + builtins.tuple(self))

    def __repr__(self):
        return f"tl.tuple({list(self)!r})"
