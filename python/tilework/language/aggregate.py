"""Aggregates (Triton 3.6's `triton.language.core._aggregate`; also `tilework.aggregate`): a
class whose annotated fields hold tiles, constexprs, tuples or other aggregates, built and
passed around in kernels as one value, with methods.

    @tl.core._aggregate
    class Pair:
        first: tl.tensor
        second: tl.constexpr

        def __init__(self, first, second):   # plain Python, run at compile time
            self.first = first
            self.second = second

        @tilework.jit                         # a @jit method: `pair.scaled(2)`
        def scaled(self, k):
            return self.first * k + self.second

As Triton's: the user's `__init__` must set every field, fields are only the annotated names
and take values of their annotation's class (a `tl.tensor` field also takes a Python number:
the int32/fp32 scalar Triton makes of an assigned constant), and a kernel cannot assign a
field (an aggregate is a value: build a new one).  Members: @jit functions (called with the
instance first; `@staticmethod` ones without), `@constexpr_function`s and plain Python
functions (run at compile time on the values; these may take tiles, as Triton's).  The
compiler inlines the @jit methods as any call and carries an aggregate through `if`/loops as
its fields (frontend/ops_control.py); the interpreter runs them as Python.  Triton's builtin
methods taking `_semantic=` are Triton's internal API: `_semantic` is passed as None."""
from __future__ import annotations

import contextlib
import inspect

from . import core
from .function import ConstexprFunction, JITFunction

_CONVERT: list = []  # the compiler's number -> scalar conversion while it builds an aggregate


def is_aggregate(v) -> bool:
    """Whether `v` is an aggregate instance."""
    return getattr(type(v), "__tilework_aggregate__", False) and not isinstance(v, type)


def is_aggregate_class(v) -> bool:
    return isinstance(v, type) and getattr(v, "__tilework_aggregate__", False)


def fields(v) -> list:
    """The field names of an aggregate (instance or class), in annotation order."""
    return list(v.__tilework_fields__)


def rebuilt(v, values: list):
    """A new instance of `v`'s class with `values` as its fields (no `__init__`)."""
    out = object.__new__(type(v))
    anns = type(v).__tilework_annotations__
    for name, x in zip(fields(v), values):
        if anns.get(name) is core.constexpr and isinstance(x, core.tensor):
            raise TypeError(f"{type(v).__name__}.{name} is a tl.constexpr field: it cannot "
                            f"hold a runtime value (its value differs between the branches "
                            f"of an `if` or the iterations of a loop)")
        object.__setattr__(out, name, x)
    return out


@contextlib.contextmanager
def scalar_conversion(to_tensor):
    """While building aggregates, a Python number given to a `tl.tensor` field becomes
    `to_tensor(number)` (the compiler's scalar of it)."""
    _CONVERT.append(to_tensor)
    try:
        yield
    finally:
        _CONVERT.pop()


def _number(v):
    u = v.value if isinstance(v, core.constexpr) else v
    # (an assigned number is an int/float carrying Triton's scalar dtype: frontend/scalar_fold)
    return u if type(u) in (int, float, bool) or hasattr(u, "scalar_dtype") else None


def _as_field(cls_name, name, ann, value):
    if ann is core.tensor and not isinstance(value, core.tensor) and _number(value) is not None:
        if _CONVERT:
            return _CONVERT[-1](_number(value))
        b = core.active_builder()  # the interpreter's
        if b is not None:
            return b.semantic.to_tensor(b, _number(value))
    if isinstance(ann, type) and not isinstance(value, ann):
        if ann is core.constexpr and not isinstance(value, core.tensor) and \
                not is_aggregate(value):
            return core.constexpr(value)  # (a Python value: the interpreter passes those)
        raise TypeError(f"Expected {ann} for attribute '{name}', got {type(value)}")
    return value


class aggregate_type:
    """An aggregate's `.type` (Triton's `_aggregate_type`): its class and its fields' types;
    equal when both are, `mangle()` as Triton's (`module.Class<field types>`)."""

    def __init__(self, cls, fields):
        self.base_cls, self.fields = cls, list(fields)

    def __eq__(self, other):
        return isinstance(other, aggregate_type) and self.base_cls is other.base_cls and \
            self.fields == other.fields

    def __hash__(self):
        return hash((self.base_cls, tuple(n for n, _ in self.fields)))

    def mangle(self) -> str:
        inner = ", ".join(t.mangle() for _, t in self.fields)
        return f"{self.base_cls.__module__}.{self.base_cls.__qualname__}<{inner}>"

    def __repr__(self):
        return f"aggregate_type({self.base_cls.__name__}, {self.fields!r})"


def _type_of(v):
    t = getattr(v, "type", None)
    return t if t is not None else core.constexpr(v).type


class BoundMember:
    """A member of an aggregate taken from an instance (or from the class: `obj` None), to
    be called: `fn` is a JITFunction, a ConstexprFunction or a Python function."""

    def __init__(self, fn, obj, name):
        self.fn, self.obj, self.name = fn, obj, name
        self.__name__ = name

    def args(self, args) -> list:
        return ([self.obj] if self.obj is not None else []) + list(args)

    def __call__(self, *args, **kwargs):  # (the interpreter, and Python members compiled)
        return self.fn(*self.args(args), **kwargs)

    def __repr__(self):
        return f"<member {self.name} of {self.obj!r}>"


class _Member:
    """The descriptor each member becomes: taken from an instance, bound to it."""

    def __init__(self, fn, static: bool, name: str):
        self.fn, self.static, self.name = fn, static, name

    def __get__(self, obj, cls=None):
        return BoundMember(self.fn, None if self.static else obj, self.name)


def _member(cls, name):
    raw = inspect.getattr_static(cls, name)
    static = isinstance(raw, staticmethod)
    fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    if isinstance(fn, (JITFunction, ConstexprFunction)) or inspect.isfunction(fn):
        return fn, static
    return None, False


def _source(cls) -> str:
    """The text that decides what `cls` compiles to (the kernels' cache key holds it): its
    fields and the source of each member."""
    parts = [repr(list(cls.__dict__.get("__annotations__", {}).items()))]
    for name, raw in sorted(cls.__dict__.items()):
        fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
        src = getattr(fn, "src", None)  # (@jit and constexpr functions keep theirs)
        if src is None and inspect.isfunction(fn):
            try:
                src = inspect.getsource(fn)
            except (OSError, TypeError):
                src = repr(fn.__code__.co_code)
        if src is not None:
            parts.append(f"{name}:{src}")
    return "\n".join(parts)


def aggregate(cls):
    """Makes `cls` an aggregate (Triton's `tl.core._aggregate`)."""
    names = list(cls.__dict__.get("__annotations__", {}))
    anns = dict(cls.__dict__.get("__annotations__", {}))
    init = cls.__dict__.get("__init__")
    init_fn = init.fn if isinstance(init, ConstexprFunction) else init
    takes_semantic = init_fn is not None and "_semantic" in inspect.signature(init_fn).parameters

    def no_init(self, *args, **kwargs):  # (a namespace of members, or Triton 3.6's error)
        if args or kwargs:
            raise TypeError(f"{cls.__name__}() takes no arguments: an aggregate is built by "
                            f"its own __init__ setting its fields ({', '.join(names)})")
    init_fn = init_fn or no_init

    class aggregate_value:
        __tilework_aggregate__ = True
        __triton_aggregate__ = True
        __tilework_fields__ = tuple(names)
        __tilework_annotations__ = anns

        def __new__(this_cls, *args, **kwargs):
            self = object.__new__(this_cls)
            extra = {"_semantic": None} if takes_semantic else {}
            init_fn(self, *args, **extra, **kwargs)
            for name in names:
                if name not in self.__dict__:
                    raise AttributeError(f"constructor for {cls.__name__} did not initialize "
                                         f"attribute '{name}'")
            return self

        def __setattr__(self, name, value):
            if name not in anns:
                raise AttributeError(f"{cls.__name__} has no attribute '{name}'")
            object.__setattr__(self, name, _as_field(cls.__name__, name, anns[name], value))

        @property
        def type(self):
            return aggregate_type(type(self), [(n, _type_of(getattr(self, n))) for n in names])

        def __repr__(self):
            return f"{cls.__name__}(" + ", ".join(f"{n}={getattr(self, n, None)!r}"
                                                  for n in names) + ")"

    for name in dir(cls):
        if name in ("__init__", "__new__", "__setattr__") or \
                (name.startswith("__") and name not in cls.__dict__):
            continue
        fn, static = _member(cls, name)
        if fn is not None:
            setattr(aggregate_value, name, _Member(fn, static, name))
    aggregate_value.__name__ = cls.__name__
    aggregate_value.__qualname__ = cls.__qualname__
    aggregate_value.__module__ = cls.__module__
    aggregate_value.__doc__ = cls.__doc__
    aggregate_value.__tilework_source__ = _source(cls)
    aggregate_value.__tilework_jit_members__ = tuple(
        f for f, _ in (_member(cls, n) for n in dir(cls)) if isinstance(f, JITFunction))
    return aggregate_value


core.install_aggregate(aggregate)  # (Triton's spelling: `tl.core._aggregate`)
