"""Aggregates (Triton 3.6's `tl.core._aggregate`, exercised by Triton's test_frontend.py):
classes of annotated fields (tiles, constexprs, tuples, other aggregates) built in kernels,
with @jit, constexpr-function, Python and static members, `__getitem__` and operators, passed
to and returned from @jit functions and carried through `if`, `for` and `while`; and
`*args` of @jit functions.  Values against numpy interpreted and compiled (sm_90a and gfx942 by
the SIMT emulator); each rejected form with its message."""
import importlib.util

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.compiler.driver import ASTSource, compile

from test_conform_language import P, TARGETS, run  # noqa: E402  (one program, both ways)


@tl.core._aggregate
class Pair:
    first: tl.tensor
    second: tl.tensor

    def __init__(self, first, second):
        self.first = first
        self.second = second

    @tilework.jit
    def get_first(self):
        return self.first

    def get_second(self, _semantic=None):  # a Python member (Triton's `_semantic` is None)
        return self.second

    @tilework.jit
    def unpack(self):
        return self.get_first(), self.get_second()

    def __getitem__(self, ind, _semantic=None):
        return self.first if ind == 0 else self.second

    @tilework.jit
    def __add__(self, other):
        return Pair(self.first + other.first, self.second + other.second)


@tl.core._aggregate
class Acc:
    total: tl.tensor
    scale: tl.constexpr

    def __init__(self, total, scale):
        self.total = total
        self.scale = tl.constexpr(scale)

    @tilework.jit
    def add(self, v):
        return Acc(self.total + v * self.scale, self.scale)

    @staticmethod
    @tilework.jit
    def zeros(N: tl.constexpr, scale: tl.constexpr):
        return Acc(tl.zeros((N,), tl.float32), scale)

    @tilework.constexpr_function
    def doubled_scale(self):
        return self.scale * 2


@tl.core._aggregate
class State:
    pair: Pair         # an aggregate field
    offsets: tl.tuple  # a tuple of tiles and constexprs
    count: tl.tensor

    def __init__(self, pair, offsets, count):
        self.pair = pair
        self.offsets = offsets
        self.count = count

    @tilework.jit
    def step(self):
        return State(self.pair + self.pair, (self.offsets[0] + self.offsets[1], self.offsets[1]),
                     self.count + 1)


@tilework.jit
def weighted(p):
    return p.first * 10 + p[1]


def k_aggregates(x, out, n, N: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    s = 3  # (a Python number for a tile field: the scalar Triton makes of it)
    p = Pair(v, s)
    a, b = p.unpack()
    q = p + Pair(v, v)
    acc = Acc.zeros(N, 2)
    for i in range(n):  # carried through a loop: its fields
        acc = acc.add(v)
    if n > 2:  # and an `if`
        acc = acc.add(q.first)
    tl.static_assert(acc.doubled_scale() == 4)
    tl.store(out + r, weighted(p) + a + b + q[0] + acc.total)


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_aggregate_values(where):
    x = np.random.default_rng(1).standard_normal(8).astype(np.float32)
    out = np.zeros(8, np.float32)
    run(k_aggregates, where, {"x": P(tl.float32), "out": P(tl.float32), "n": tl.int32},
        {"N": 8}, x, out, 3)
    ref = (x * 10 + 3) + x + 3 + 2 * x + (3 * 2 * x + 2 * 2 * x)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def k_nested(x, out, n, N: tl.constexpr):
    r = tl.arange(0, N)
    v = tl.load(x + r)
    st = State(Pair(v, v * 2), (r, 1), 0)
    for i in range(n):  # a nested aggregate and a tuple field carried by a loop
        st = st.step()
    tl.device_assert(st.count == n)
    tl.store(out + r, st.pair.first + st.pair.second + st.offsets[0].to(tl.float32))


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_nested_aggregates_and_tuple_fields(where):
    x = np.random.default_rng(2).standard_normal(16).astype(np.float32)
    out = np.zeros(16, np.float32)
    run(k_nested, where, {"x": P(tl.float32), "out": P(tl.float32), "n": tl.int32},
        {"N": 16}, x, out, 3)
    np.testing.assert_allclose(out, 8 * x + 16 * x + np.arange(16) + 3, rtol=1e-5)


@tl.core._aggregate
class Boxed:
    value: tl.tensor

    @tilework.constexpr_function
    def __init__(self, value):  # (Triton's Float2Tensor's form)
        self.value = value


@tilework.jit
def consume(*dims):  # `*args` in a @jit function kernels call
    return dims[0] * dims[1] + len(dims)


@tl.core._aggregate
class Helpers:  # no fields: a namespace of @jit functions (Triton's FunctionParent)
    @tilework.jit
    def twice(v):
        return v * 2


def k_varargs_and_box(out, N: tl.constexpr):
    dims: tl.constexpr = (3, 4)
    box = Boxed(tl.arange(0, N))
    tl.store(out + tl.arange(0, N), box.value + consume(*dims) +
             consume(Helpers.twice(box.value), 1, 5))


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_varargs_and_constexpr_function_init(where):
    out = np.zeros(8, np.int32)
    run(k_varargs_and_box, where, {"out": P(tl.int32)}, {"N": 8}, out)
    r = np.arange(8)
    np.testing.assert_array_equal(out, r + 14 + (r * 2 + 3))


def test_aggregates_on_the_host():
    assert Pair.__name__ == "Pair" and Pair.__triton_aggregate__
    assert Pair.__tilework_fields__ == ("first", "second")
    with pytest.raises(TypeError, match="Expected <class 'tilework.language.core.tensor'> for "
                                        "attribute 'total', got <class 'int'>"):
        Acc(1, 2)  # (a number for a tile field: made a scalar only in kernels)

    @tl.core._aggregate
    class Half:
        x: tl.constexpr
        y: tl.constexpr

        def __init__(self, x):
            self.x = x

    with pytest.raises(AttributeError, match="constructor for Half did not initialize "
                                             "attribute 'y'"):
        Half(1)

    @tl.core._aggregate
    class C:
        x: tl.constexpr

        def __init__(self, x):
            self.x = x
            self.z = 1

    with pytest.raises(AttributeError, match="C has no attribute 'z'"):
        C(1)
    @tl.core._aggregate
    class NoInit:
        x: tl.constexpr

    with pytest.raises(TypeError, match=r"NoInit\(\) takes no arguments: an aggregate is built "
                                        r"by its own __init__ setting its fields \(x\)"):
        NoInit(1)
    with pytest.raises(AttributeError, match="constructor for NoInit did not initialize "
                                             "attribute 'x'"):
        NoInit()


def k_assign_field(x, N: tl.constexpr):
    p = Pair(tl.arange(0, N), 1)
    p.second = 42  # ERR


def k_augassign_field(x, N: tl.constexpr):
    p = Pair(tl.arange(0, N), 1)
    p.second += 42  # ERR


def k_wrong_field(x, N: tl.constexpr):
    p = Pair(tl.float32, tl.arange(0, N))  # ERR  (a dtype for a tile field)


def k_not_subscriptable(x, N: tl.constexpr):
    a = Acc(tl.arange(0, N), 2)
    b = a[0]  # ERR


def k_merge_constexpr_fields(x, n, N: tl.constexpr):
    a = Acc(tl.zeros((N,), tl.float32), 2)
    if n > 0:
        a = Acc(tl.zeros((N,), tl.float32), 3)
    tl.store(x + tl.arange(0, N), a.total)  # ERR


@pytest.mark.parametrize("kernel, message, both", [
    (k_assign_field, "Attribute assignment is not supported (as in Triton): an aggregate is a "
                     "value; build a new one", True),
    (k_augassign_field, "Attribute assignment is not supported (as in Triton)", True),
    (k_wrong_field, "Expected <class 'tilework.language.core.tensor'> "
                    "for attribute 'first', got <class 'tilework.language.core.dtype'>", True),
    (k_not_subscriptable, "Acc is not subscriptable", False),
    (k_merge_constexpr_fields, "Acc.scale is a tl.constexpr field: it cannot hold a runtime "
                               "value (its value differs between the branches of an `if`", False),
])
def test_aggregate_rejections(kernel, message, both):
    sig = {"x": P(tl.float32)} | ({"n": tl.int32} if "n" in kernel.__code__.co_varnames else {})
    with pytest.raises(tilework.CompilationError) as ei:
        compile(ASTSource(tilework.jit(kernel), sig, {"N": 8}, {}), "sm_90a", cache=False)
    assert message in ei.value.message
    if both:  # the interpreter refuses it too (`a[0]` of an aggregate without __getitem__:
        with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)")):
            args = [np.zeros(8, np.float32)] + ([1] if "n" in sig else [])
            tilework.jit(kernel, interpret=True)[(1,)](*args, N=8)


def test_kernel_with_varargs_is_refused_at_launch():
    @tilework.jit
    def k(*xs):
        pass

    with pytest.raises(TypeError, match=r"cannot be launched: a kernel cannot take \*args"):
        tilework.jit(k.fn, interpret=True)[(1,)](1, 2)
    with pytest.raises(TypeError, match=r"JIT functions do not support \*\*kwargs"):
        @tilework.jit
        def kw(**kwargs):
            pass


def test_aggregate_source_is_in_the_key(tmp_path):
    src = ("import tilework\nimport tilework.language as tl\n\n"
           "@tl.core._aggregate\nclass A:\n    v: tl.tensor\n\n"
           "    def __init__(self, v):\n        self.v = v\n\n"
           "    @tilework.jit\n    def f(self):\n        return self.v * 2\n\n"
           "@tilework.jit\ndef k(out, N: tl.constexpr):\n"
           "    tl.store(out + tl.arange(0, N), A(tl.arange(0, N)).f())\n")
    keys = []
    for i, body in enumerate((src, src.replace("self.v * 2", "self.v * 3"),
                              src.replace("self.v = v", "self.v = v + 1"))):
        f = tmp_path / f"aggmod{i}.py"
        f.write_text(body)
        spec = importlib.util.spec_from_file_location(f"aggmod{i}", f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        keys.append(mod.k.cache_key)
    assert len(set(keys)) == 3


def k_type(out, N: tl.constexpr):
    a = Acc(tl.zeros((N,), tl.float32), 2)
    b = Acc(tl.full((N,), 1.0, tl.float32), 2)
    tl.static_assert(a.type == b.type)  # the class and the fields' types
    tl.static_assert(a.type != Acc(tl.zeros((N,), tl.float32), 3).type)  # (a constexpr field)
    tl.static_assert(a.type.mangle() ==  # (Triton 3.6: a constexpr_type mangles so)
                     "test_conform_aggregates.Acc<fp32S8S, constexpr_type[2]>")
    tl.store(out + tl.arange(0, N), a.total + b.total)


@pytest.mark.parametrize("where", ["interpreter", "sm_90a"])
def test_aggregate_type_is_tritons(where):
    out = np.zeros(8, np.float32)
    run(k_type, where, {"out": P(tl.float32)}, {"N": 8}, out)
    np.testing.assert_array_equal(out, np.ones(8, np.float32))


@tl.core._aggregate
class Looping:
    v: tl.tensor

    def __init__(self, v):
        self.v = v

    @tilework.jit
    def first_positive(self, n):
        for i in range(n):
            break  # ERR


def k_member_break(x, N: tl.constexpr):
    Looping(tl.arange(0, N)).first_positive(3)


def test_member_source_is_checked_as_the_compilers():
    # (a @jit member is checked on its source when the interpreter first runs it, as one
    # called by name)
    with pytest.raises(tilework.CompilationError, match="`break` is not supported"):
        compile(ASTSource(tilework.jit(k_member_break), {"x": P(tl.float32)}, {"N": 8}, {}),
                "sm_90a", cache=False)
    with pytest.raises(Exception, match="`break` is not supported") as ei:
        tilework.jit(k_member_break, interpret=True)[(1,)](np.zeros(8, np.float32), N=8)
    assert f":{line_of_break()}:" in str(ei.value)


def line_of_break():
    import inspect
    lines, start = inspect.getsourcelines(Looping.first_positive.fn.fn)
    return start + next(i for i, t in enumerate(lines) if "# ERR" in t)


@tl.core._aggregate
class Squared:  # (Triton's AggregateWithConstexprFunction)
    val: tl.constexpr
    val_squared: tl.constexpr

    def __init__(self, val):
        self.val = tl.constexpr(val)
        self.val_squared = tl.constexpr(self.square_val())  # a member, from __init__

    @tilework.constexpr_function
    def square_val(self):
        return self.val * self.val


@tl.core._aggregate
class Shifted:  # a @jit `__getitem__` (Triton's TypeWithJitGetItem)
    value: tl.tensor

    def __init__(self, value):
        self.value = value

    @tilework.jit
    def __getitem__(self, ind):
        return self.value + ind


@tl.core._aggregate
class Wrapped:  # a tuple field built by a static @jit member (Triton's AggregateWithTuple)
    a: tl.tuple

    def __init__(self, a):
        self.a = a

    @staticmethod
    @tilework.jit
    def create(a):
        return Wrapped((a, ))


def k_test_frontend_forms(out, N: tl.constexpr):
    agg = Squared(4)
    tl.static_assert(agg.val == 4 and agg.val_squared == 16 and agg.square_val() == 16)
    v = Shifted(tl.arange(0, N))
    t = Wrapped.create(tl.arange(0, N))
    tl.store(out + tl.arange(0, N), v[3] + t.a[0] + agg.val_squared)


@pytest.mark.parametrize("where", ["interpreter"] + TARGETS)
def test_test_frontend_aggregate_forms(where):
    out = np.zeros(8, np.int32)
    run(k_test_frontend_forms, where, {"out": P(tl.int32)}, {"N": 8}, out)
    np.testing.assert_array_equal(out, 2 * np.arange(8) + 19)
