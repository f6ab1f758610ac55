"""Tuples (and namedtuples) as kernel arguments, as Triton 3.6 takes them: nested, mixing
pointers, ints, floats, constexprs and None; indexed, unpacked, `len`, iterated with
`tl.static_range`, passed to @jit helpers and returned from them.  Values against numpy in the
interpreter and compiled (sm_90a and gfx942, run by the SIMT emulator, compiled through
`warmup` and through `tilework.compile`'s tuple signature); the specialization (alignment,
ints equal to 1 and divisible by 16, constexpr members baked in) and the keys (the structure
is part of both); autotune; each rejected form with its message (compiler and interpreter)."""
from collections import namedtuple

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework import CompilationError
from tilework.compiler.driver import ASTSource
from tilework.runtime import Config, launcher
from simt_emulator import Emulator

P = tl.pointer_type
Src = namedtuple("Src", ["ptr", "scale"])
rng = np.random.default_rng(614)


@tilework.jit
def _scaled(src, o, mask):
    """Takes a namedtuple, returns a tuple."""
    return tl.load(src.ptr + o, mask=mask, other=0.0) * src.scale, src.scale


@tilework.jit
def _store_all(ptrs, vals, o, mask):
    for i in tl.static_range(len(ptrs)):
        tl.store(ptrs[i] + o, vals[i], mask=mask)


def k_args(src, outs, n, consts, IDX: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = o < n
    x, s = _scaled(src, o, mask)
    k, c3, nothing, (one, m) = consts  # unpacked, nested
    tl.static_assert(nothing is None)
    tl.static_assert(c3 == 3)  # a constexpr member: baked in
    tl.static_assert(len(outs) == 3 and len(consts[3]) == 2)
    _store_all(outs[0:2], (x + k, x * c3), o, mask)
    tl.store(outs[IDX] + o, x * one + m + s * 0.0, mask=mask)  # indexed by a constexpr


def np_args(x, scale, k, m):
    y = (x * np.float32(scale)).astype(np.float32)
    return y + np.float32(k), y * np.float32(3), y + np.float32(m)


def _inputs(n=100):
    x = rng.standard_normal(n).astype(np.float32)
    outs = tuple(np.zeros(n, np.float32) for _ in range(3))
    return x, outs


def test_tuple_arguments_interpreted():
    x, outs = _inputs()
    kern = tilework.jit(k_args, interpret=True)
    kern[(4,)](Src(x, 1.5), outs, 100, (7, tl.constexpr(3), None, (1, 32)), IDX=2, BLOCK=32)
    for got, want in zip(outs, np_args(x, 1.5, 7, 32)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _run_compiled(ck, target, grid, flat):
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], target, ck.metadata["num_warps"])
    emu.run(grid, *flat)


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
def test_tuple_arguments_compiled(target):
    """Through `warmup` (placeholders inside the tuples): the kernel's parameters are the
    runtime members, flattened, each specialized as an argument is."""
    x, outs = _inputs()
    kern = tilework.jit(k_args)
    ck = kern.warmup(Src("*fp32:16", 1.5), ("*fp32:16",) * 3, 100, (7, tl.constexpr(3), None,
                     (1, 32)), IDX=2, BLOCK=32, target=target, num_warps=2)
    assert list(ck.metadata["signature"].items()) == [
        ("src.0", "*fp32"), ("src.1", "fp32"), ("outs.0", "*fp32"), ("outs.1", "*fp32"),
        ("outs.2", "*fp32"), ("n", "int32"), ("consts.0", "int32"), ("consts.3.1", "int32")]
    tile = ck.asm["tile"]
    assert tile.count("tile.divisibility = 16") == 5  # 4 pointers and consts[3][1] == 32
    _run_compiled(ck, target, (4,), [x, 1.5, *outs, 100, 7, 32])
    for got, want in zip(outs, np_args(x, 1.5, 7, 32)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def k_pairs(t, out, N: tl.constexpr):
    """`t[i]` with a static_range index over `len(t)`, members unpacked."""
    o = tl.arange(0, N)
    acc = tl.zeros([N], tl.float32)
    for i in tl.static_range(len(t)):
        p, w = t[i]
        acc += tl.load(p + o) * w + t[i][1]
    tl.store(out + o, acc)


def test_tuple_of_tuples_interpreted_and_compiled():
    a, b = (rng.standard_normal(16).astype(np.float32) for _ in range(2))
    want = a * 2 + b * 0.5 + 2.5
    out = np.zeros(16, np.float32)
    tilework.jit(k_pairs, interpret=True)[(1,)](((a, 2.0), (b, 0.5)), out, N=16)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    ck = tilework.compile(tilework.jit(k_pairs), target="sm_90a",
                          signature="((*fp32:16, fp32), (*fp32:16, fp32)), *fp32:16",
                          constexprs={"N": 16}, num_warps=1)
    assert list(ck.metadata["signature"]) == ["t.0.0", "t.0.1", "t.1.0", "t.1.1", "out"]
    out = np.zeros(16, np.float32)
    _run_compiled(ck, "sm_90a", (1,), [a, 2.0, b, 0.5, out])
    np.testing.assert_allclose(out, want, rtol=1e-6)


def k_shape(X, shape: tl.constexpr, strides, m_n):
    """Triton's test: a torch.Size-like constexpr tuple, a stride tuple whose 1 is a constant,
    a tuple of ints driving a runtime loop."""
    tl.static_assert(strides[1] == 1)
    xs = X + tl.arange(0, shape[0])[:, None] * strides[0] + tl.arange(0, shape[1])[None, :]
    data = tl.load(xs)
    for _ in range(0, m_n[1]):
        data = m_n[0] * data
    tl.store(xs, data)


def test_shape_and_stride_tuples():
    x = rng.integers(-5, 5, (8, 8)).astype(np.int32)
    want = 8 * x
    tilework.jit(k_shape, interpret=True)[(1,)](x, x.shape, (8, 1), (2, 3))
    np.testing.assert_array_equal(x, want)
    ck = tilework.jit(k_shape).warmup("*i32:16", (8, 8), (8, 1), (2, 3), target="gfx942",
                                      num_warps=2)
    assert list(ck.metadata["signature"]) == ["X", "strides.0", "m_n.0", "m_n.1"]
    x = rng.integers(-5, 5, (8, 8)).astype(np.int32)
    want = 8 * x
    _run_compiled(ck, "gfx942", (1,), [x, 8, 2, 3])
    np.testing.assert_array_equal(x, want)


View = namedtuple("View", ["base", "rows", "stride"])
Op = namedtuple("Op", ["fn", "extra"])


@tilework.jit
def _axpb(x, a_ptr, b):
    return x * tl.load(a_ptr) + b


@tilework.jit
def _view(base, rows, stride):
    return View(stride=stride, base=base, rows=rows)  # built in the kernel, by keywords


@tilework.jit
def _rows_mask(v, R: tl.constexpr, C: tl.constexpr):
    return (tl.arange(0, R)[:, None] < v.rows) & (tl.arange(0, C)[None, :] < C)


def k_views(op, src, dst, R: tl.constexpr, C: tl.constexpr):
    """Namedtuple arguments (one holding a @jit function, a constant), namedtuples built in a
    helper and read by field, `*op.extra` spread into a call."""
    s = _view(src.base, src.rows, src.stride)
    d = _view(dst.base, dst.rows, dst.stride)
    r, c = tl.arange(0, R)[:, None], tl.arange(0, C)[None, :]
    x = tl.load(s.base + r * s.stride + c, mask=_rows_mask(s, R, C), other=0.0)
    tl.store(d.base + r * d.stride + c, op.fn(x, *op.extra), mask=_rows_mask(d, R, C))


def np_views(x, a, b, rows):
    return (x[:rows, :16] * a[0] + np.float32(b)).astype(np.float32)


def test_namedtuples_built_in_kernels_and_callable_members():
    x = rng.standard_normal((24, 16)).astype(np.float32)
    a = np.array([1.75], np.float32)
    want = np_views(x, a, 0.25, 10)
    y = np.zeros((10, 16), np.float32)
    tilework.jit(k_views, interpret=True)[(1,)](Op(_axpb, (a, 0.25)), View(x, 24, 16),
                                                View(y, 10, 16), R=32, C=16)
    np.testing.assert_allclose(y, want, rtol=1e-6)
    ck = tilework.jit(k_views).warmup(Op(_axpb, ("*fp32", 0.25)), View("*fp32:16", 24, 16),
                                      View("*fp32:16", 10, 16), R=32, C=16, target="sm_90a",
                                      num_warps=4)
    assert list(ck.metadata["signature"]) == ["op.1.0", "op.1.1", "src.0", "src.1", "src.2",
                                              "dst.0", "dst.1", "dst.2"]  # (op.0: a constant)
    y = np.zeros((10, 16), np.float32)
    _run_compiled(ck, "sm_90a", (1,), [a, 0.25, x, 24, 16, y, 10, 16])
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_a_namedtuple_built_with_bad_arguments():
    @tilework.jit
    def bad(out):
        v = View(out, 1)
        tl.store(v.base, 1.0)
    with pytest.raises(CompilationError, match=r"View\(\): .*missing 1 required positional "
                                               r"argument: 'stride'"):
        bad.warmup("*fp32", target="sm_90a")


# ---- specialization and keys -------------------------------------------------------------------

class FakeDevicePtr:
    def __init__(self, p, typestr="<f4"):
        self.__cuda_array_interface__ = {"data": (p, False), "typestr": typestr, "shape": (1,)}


@tilework.jit
def _spec(t, n):
    pass


def test_members_are_specialized_as_arguments():
    a, b = FakeDevicePtr(0x1000), FakeDevicePtr(0x1004, "<f2")
    sig, constants, attrs = launcher.specialization(
        _spec, ((a, (b, 1, 32, 3), 2.5, None, tl.constexpr(7), True), 5))
    T = tl.tuple_type
    assert sig == {"t": T([P(tl.float32), T([P(tl.float16), tl.constexpr_type(1), tl.int32,
                                              tl.int32]), tl.float32, tl.constexpr_type(None),
                          tl.constexpr_type(7), tl.int1]), "n": tl.int32}
    assert constants == {}
    assert attrs == {"t.0": {"tile.divisibility": 16}, "t.1.2": {"tile.divisibility": 16}}
    key, params = launcher.key_and_params(_spec, ((a, (b, 1, 32, 3), 2.5, None), 5))
    assert params == [0x1000, 0x1004, 32, 3, 2.5, 5]  # the runtime members, flattened
    assert launcher.fast_key_and_params(_spec)(((a, (b, 1, 32, 3), 2.5, None), 5)) == \
        (key, params)
    # the structure is part of the key: another nesting, a namedtuple, a constexpr member
    others = [((a, b, 1, 32, 3, 2.5, None), 5), ((a, (b, 1, 32), 3, 2.5, None), 5),
              (Src(a, 2.5), 5), ((a, 2.5), 5), ((a, tl.constexpr(2.5)), 5),
              ((a, tl.constexpr(1)), 5), ((a, 1), 5), ((a, tl.constexpr(True)), 5)]
    keys = [launcher.key_and_params(_spec, v)[0] for v in others]
    assert len(set(keys + [key])) == len(others) + 1


@tilework.jit(do_not_specialize=("t",))
def _nospec(t):
    pass


def test_do_not_specialize_covers_the_members():
    sig, constants, attrs = launcher.specialization(_nospec, ((1, 32),))
    assert sig == {"t": tl.tuple_type([tl.int32, tl.int32])} and attrs == {}
    assert launcher.key_and_params(_nospec, ((1, 32),))[1] == [1, 32]


def test_cache_keys_tell_constant_members_apart():
    """Constant members by type and value (constexpr 1, '1', 1.0 and True print alike in
    `str`); the driver's key is warm_cache's."""
    from tilework.compiler.driver import compile
    from tilework.compiler.options import CompileOptions
    from tilework.runtime import warm_cache
    fn = tilework.jit(k_pairs)
    hashes = {ASTSource(fn, {"t": tl.tuple_type([tl.constexpr_type(v)]), "out": P(tl.float32)},
                        {"N": 16}, {}).hash() for v in (1, "1", 1.0, True)}
    assert len(hashes) == 4
    sig = {"t": tl.tuple_type([tl.tuple_type([P(tl.float32), tl.float32])] * 2),
           "out": P(tl.float32)}
    attrs = {"t.0.0": {"tile.divisibility": 16}}
    opts = CompileOptions(num_warps=1)
    ck = compile(ASTSource(fn, sig, {"N": 16}, attrs), "sm_90a", opts)
    assert warm_cache.cache_key(fn, sig, {"N": 16}, attrs, opts, "sm_90a") == ck.key


def test_aot_signature_forms():
    """The string form's parenthesized groups, the list and dict forms' tuples with constexpr
    members; a constant member is baked in."""
    fn = tilework.jit(k_args)
    cx = {"IDX": 2, "BLOCK": 32}
    b = tilework.compile(fn, target="sm_90a", signature=[
        Src("*fp32:16", "fp32"), ("*fp32",) * 3, "i32",
        ("i32", tl.constexpr(3), None, (tl.constexpr(1), "i32"))], constexprs=cx)
    c = tilework.compile(fn, target="sm_90a", signature={
        "src": Src("*fp32:16", tl.float32), "outs": ("*fp32",) * 3, "n": "i32",
        "consts": ("i32", tl.constexpr(3), None, (tl.constexpr(1), "i32"))}, constexprs=cx)
    assert list(b.metadata["signature"]) == list(c.metadata["signature"]) == [
        "src.0", "src.1", "outs.0", "outs.1", "outs.2", "n", "consts.0", "consts.3.1"]
    assert b.asm["ptx"] == c.asm["ptx"]
    assert "tile.divisibility = 16" in b.asm["tile"]  # src[0]'s ':16'


def test_cli_signature_groups_and_bundles(tmp_path):
    """`tilework compile --signature` with a parenthesized group; a bundle's C launcher takes
    the flattened members (`t_0`, ...)."""
    from tilework.tools import cli
    src = tmp_path / "pairs.py"
    src.write_text("import tilework\nimport tilework.language as tl\n\n\n@tilework.jit\n"
                   "def pairs(t, out, N: tl.constexpr):\n"
                   "    o = tl.arange(0, N)\n"
                   "    tl.store(out + o, tl.load(t[0] + o) * t[1][0] + t[1][1])\n")
    out = tmp_path / "bundle"
    assert cli.main(["compile", f"{src}:pairs", "--target", "sm_90a", "--signature",
                     "(*fp32:16, (fp32, i32)), *fp32:16", "--constexpr", "N=64", "--emit",
                     "bundle", "-o", str(out)]) == 0
    import json
    (entry,) = json.loads((out / "manifest.json").read_text())["kernels"]
    assert entry["params"] == [["t.0", "p"], ["t.1.0", "f"], ["t.1.1", "i"], ["out", "p"]]
    c = (out / "pairs_sm_90a.h").read_text()
    assert "CUdeviceptr t_0, float t_1_0, int32_t t_1_1, CUdeviceptr out);" in c


# ---- the launch paths ---------------------------------------------------------------------

def test_autotune_with_tuple_arguments_and_config_kwargs():
    """Interpreted: a tuple argument and a config setting a tuple (constexpr and runtime)."""
    calls = []

    def bench(kernel_call, quantiles):
        kernel_call()
        calls.append(1)
        return [float(len(calls))] * 3

    configs = [Config({"BLOCK": 32, "coef": (2.0, 1)}), Config({"BLOCK": 64, "coef": (3.0, 1)})]

    @tilework.autotune(configs=configs, key=["n"], do_bench=bench, reset_to_zero=["outs"])
    @tilework.jit(interpret=True)
    def kern(src, outs, n, coef, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = o < n
        x = tl.load(src[0] + o, mask=m) * coef[0] + coef[1]
        tl.store(outs[0] + o, x, mask=m)
        tl.store(outs[1] + o, x * src[1], mask=m)

    x = rng.standard_normal(100).astype(np.float32)
    outs = (np.full(100, 5.0, np.float32), np.full(100, 5.0, np.float32))
    kern[lambda meta: (tl.cdiv(meta["n"], meta["BLOCK"]),)]((x, 0.5), outs, 100)
    assert kern.best_config == configs[0] and len(calls) == 2
    np.testing.assert_allclose(outs[0], x * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(outs[1], (x * 2 + 1) * 0.5, rtol=1e-6)


def test_autotune_precompiles_tuple_arguments(monkeypatch):
    """Compiled: every config's variant compiled ahead of timing (worker processes)."""
    loaded = []

    def fake_install(jf, vkey, ck):
        loaded.append(ck)
        jf.cache[vkey] = ck
        return ck
    monkeypatch.setattr(launcher, "install_variant", fake_install)
    monkeypatch.setenv("TILEWORK_COMPILE_WORKERS", "process:2")
    times = iter([2.0, 1.0])
    configs = [Config({"SHAPE": (32, 1)}), Config({"SHAPE": (64, 2)}, num_warps=2)]

    @tilework.autotune(configs=configs, key=["n"], do_bench=lambda f, quantiles: next(times))
    @tilework.jit
    def scale(xy, n, SHAPE: tl.constexpr):
        offs = tl.program_id(0) * SHAPE[0] + tl.arange(0, SHAPE[0])
        tl.store(xy[1] + offs, tl.load(xy[0] + offs, mask=offs < n) * SHAPE[1], mask=offs < n)
    x, y = FakeDevicePtr(0x10000), FakeDevicePtr(0x20000)
    k = scale.run((x, y), 1000, grid=(8,), warmup=True, target="sm_80")
    assert scale.best_config == configs[1] and len(loaded) == 2
    assert list(k.metadata["signature"]) == ["xy.0", "xy.1", "n"]


class ArrayOnDevice:
    """A numpy array posing as a GPU tensor (`__cuda_array_interface__` at its own address)."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"data": (a.ctypes.data, False), "typestr": "<f4",
                                         "shape": a.shape}


class EmulatedRuntime:
    """launcher's runtime on the CPU: variants load as compiled kernels and launch on the SIMT
    emulator, pointer parameters mapped back to their arrays."""

    def __init__(self, arrays):
        self.arrays = {a.ctypes.data: a for a in arrays}
        self.launches = []

    def target(self):
        return "sm_90a"

    def load(self, ck):
        return ck

    def launch(self, ck, grid, params):
        self.launches.append(params)
        kinds = [t.startswith("*") for t in ck.metadata["signature"].values()]
        _run_compiled(ck, "sm_90a", grid, [self.arrays[p] if ptr else p
                                           for ptr, p in zip(kinds, params)])


def test_the_launch_path_on_an_emulated_device(monkeypatch):
    """`kernel[grid](...)` with tuple arguments through launcher.run (key, specialization,
    compile, flattened parameters), launched on the emulator; a second launch finds the
    variant, another structure compiles another."""
    x, outs = _inputs()
    rt = EmulatedRuntime([x, *outs])
    monkeypatch.setattr(launcher, "_runtime", rt)
    kern = tilework.jit(k_args)
    kern._native_launch = False  # (the native path hands tuples to launcher.run anyway)
    dev = tuple(ArrayOnDevice(o) for o in outs)
    for _ in range(2):
        for o in outs:
            o[:] = 0
        kern[(4,)](Src(ArrayOnDevice(x), 1.5), dev, 100, (7, tl.constexpr(3), None, (1, 32)),
                   IDX=2, BLOCK=32, num_warps=2)
        for got, want in zip(outs, np_args(x, 1.5, 7, 32)):
            np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(kern.cache) == 1 and rt.launches[0] == rt.launches[1] == [
        x.ctypes.data, 1.5, *(o.ctypes.data for o in outs), 100, 7, 32]
    kern[(4,)](Src(ArrayOnDevice(x), 1.5), dev, 100, (7, tl.constexpr(3), None, (1, 5)),
               IDX=2, BLOCK=32, num_warps=2)
    assert len(kern.cache) == 2  # 5 is not divisible by 16: another variant
    np.testing.assert_allclose(outs[2], np_args(x, 1.5, 7, 5)[2], rtol=1e-6)


def k_copy(t, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(t[1] + o, tl.load(t[0] + o))


def test_a_new_structure_is_a_new_variant():
    """Not an error: a launch with another structure compiles another variant."""
    fn = tilework.jit(k_copy)
    a = fn.warmup(("*fp32:16", "*fp32:16"), N=16, target="sm_90a")
    b = fn.warmup(("*fp32:16", "*fp32:16", 3), N=16, target="sm_90a")
    c = fn.warmup(("*fp16", "*fp16"), N=16, target="sm_90a")
    assert len({a.key, b.key, c.key}) == 3
    assert list(b.metadata["signature"]) == ["t.0", "t.1", "t.2"]


# ---- rejected -------------------------------------------------------------------------------

def k_scalar_use(out, x, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out + o, o + x)


def k_load_use(out, x, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out + o, tl.load(x + o))


TUPLE_USED = (r"expected a tile or a number, got the tuple argument `x` \(of 2; index it: "
              r"`x\[0\]`\)")


@pytest.mark.parametrize("kernel", [k_scalar_use, k_load_use])
def test_a_tuple_used_as_a_scalar_is_named(kernel):
    a = np.zeros(16, np.float32)
    with pytest.raises(CompilationError, match=TUPLE_USED):
        tilework.jit(kernel).warmup("*fp32", (3, 4), N=16, target="sm_90a")
    with pytest.raises(Exception, match=TUPLE_USED):
        tilework.jit(kernel, interpret=True)[(1,)](a, (a, a), N=16)


def test_a_list_is_refused_naming_the_argument():
    a = np.zeros(16, np.float32)
    msg = r"argument `t` of k_copy is a list: a kernel takes tuples, not lists \(pass tuple"
    with pytest.raises(TypeError, match=msg):
        tilework.jit(k_copy).warmup(["*fp32", "*fp32"], N=16, target="sm_90a")
    with pytest.raises(TypeError, match=msg):
        tilework.jit(k_copy, interpret=True)[(1,)]([a, a], N=16)
    with pytest.raises(TypeError, match=msg):
        launcher.key_and_params(tilework.jit(k_copy), ([a, a], 16))
    inner = r"argument `t\[1\]` of k_copy is a list"
    with pytest.raises(TypeError, match=inner):
        tilework.jit(k_copy, interpret=True)[(1,)]((a, [a]), N=16)
    with pytest.raises(TypeError, match=inner):
        launcher.key_and_params(tilework.jit(k_copy), ((FakeDevicePtr(16), [a]), 16))


def test_bad_members_are_refused_naming_them():
    fn = tilework.jit(k_copy)
    with pytest.raises(TypeError, match=r"argument `t\[1\]` of k_copy has unsupported type "
                                        r"str"):
        launcher.key_and_params(fn, ((FakeDevicePtr(16), "x"), 16))
    with pytest.raises(ValueError, match=r"argument `t\[0\]` of k_copy is a host \(numpy\) "
                                         r"array"):
        launcher.key_and_params(fn, ((np.zeros(4, np.float32), FakeDevicePtr(16)), 16))
    with pytest.raises(ValueError, match=r"argument `t\[1\]` of k_copy: integer 18446744073709"
                                         r"551616 does not fit in 64 bits"):
        launcher.key_and_params(fn, ((FakeDevicePtr(16), 2**64), 16))
    with pytest.raises(ValueError, match=r"argument `t\[0\]` of k_copy: unknown type 'fp33'"):
        fn.warmup(("*fp33", "*fp32"), N=16, target="sm_90a")


Descs = namedtuple("Descs", ["src", "dst"])


def k_desc_tuple(descs, extra, BM: tl.constexpr, BN: tl.constexpr):
    """Host TensorDescriptors as members of a namedtuple and of a plain tuple."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    scale, bias = extra
    v = descs.src.load([pm * BM, pn * BN]) * scale
    descs.dst.store([pm * BM, pn * BN], v + bias.load([pn * BN])[None, :])


def _desc_inputs(M=37, N=52):
    a = rng.standard_normal((M, N)).astype(np.float32)
    bias = rng.standard_normal(N).astype(np.float32)
    return a, bias, np.full((M, N), 7.0, np.float32)


def test_descriptor_members_interpreted():
    from tilework.tools.tensor_descriptor import TensorDescriptor as TD
    a, bias, out = _desc_inputs()
    tilework.jit(k_desc_tuple, interpret=True)[(3, 2)](
        Descs(TD.from_tensor(a, [16, 32]), TD.from_tensor(out, [16, 32])),
        (1.5, TD.from_tensor(bias, [32])), BM=16, BN=32)
    np.testing.assert_allclose(out, a * np.float32(1.5) + bias, rtol=1e-6)


def _desc_signature():
    from tilework.language.descriptor import tensor_descriptor_type
    T, T1 = (tensor_descriptor_type(tl.float32, [16, 32]),
             tensor_descriptor_type(tl.float32, [32]))
    return {"descs": tl.tuple_type([T, T], ["src", "dst"]),
            "extra": tl.tuple_type([tl.float32, T1])}


def test_descriptor_members_compiled():
    """sm_80 (no TMA): each member descriptor passes base, shape, strides but the last, as an
    argument does, named by its member; run by the SIMT emulator."""
    from tilework.compiler.driver import compile
    from tilework.compiler.options import CompileOptions
    ck = compile(ASTSource(tilework.jit(k_desc_tuple), _desc_signature(), {"BM": 16, "BN": 32},
                           {}), "sm_80", CompileOptions(num_warps=4), cache=False)
    assert ck.metadata["signature"] == {
        "descs.0": "tensordesc<fp32[16, 32]>", "descs.1": "tensordesc<fp32[16, 32]>",
        "extra.0": "fp32", "extra.1": "tensordesc<fp32[32]>"}
    a, bias, out = _desc_inputs()
    emu = Emulator.from_tilegpu(ck.asm["tilegpu"], "sm_80", 4)
    emu.run((3, 2), a, 37, 52, 52, out, 37, 52, 52, np.float32(1.5), bias, 52)
    np.testing.assert_allclose(out, a * np.float32(1.5) + bias, rtol=1e-6)


def test_descriptor_members_take_tma_maps_on_sm90(monkeypatch):
    """sm_90a: a member descriptor loaded by TMA gets its tensor map, which the runtime finds
    by the member's parameter name (`descs.0`: argument `descs`, member 0)."""
    from tilework.compiler.driver import compile
    from tilework.compiler.options import CompileOptions
    from tilework.runtime import tma
    ck = compile(ASTSource(tilework.jit(k_desc_tuple), _desc_signature(), {"BM": 16, "BN": 32},
                           {}), "sm_90a", CompileOptions(num_warps=4), cache=False)
    plans = ck.metadata["tma"]
    assert [p["arg"] for p in plans] == ["descs.0", "extra.1"]
    assert ck.asm["tilegpu"].count('"tilegpu.tma_load"') == 2
    monkeypatch.setattr(tma, "tensor_map", lambda d, plan: (d, tuple(plan["box"])))
    from tilework.tools.tensor_descriptor import TensorDescriptor as TD
    a, bias, out = _desc_inputs()
    src, dst, b = TD.from_tensor(a, [16, 32]), TD.from_tensor(out, [16, 32]), \
        TD.from_tensor(bias, [32])
    fn = tilework.jit(k_desc_tuple)
    values = (Descs(src, dst), (1.5, b), 16, 32)
    want = [(src, (16, 32)), (b, (32,))]
    assert tma.tensor_maps(fn, values, plans) == want
    assert tma.launch_maps(plans)(fn, values) == want
    with pytest.raises(TypeError, match=r"argument `extra.1` of k_desc_tuple was compiled as a "
                                        r"tensor descriptor, got float"):
        tma.tensor_maps(fn, (Descs(src, dst), (b, 1.5), 16, 32), plans)


class FakeDeviceArray:
    """A device array's interface and dtype (what a TensorDescriptor's base needs)."""

    def __init__(self, p, shape):
        self.dtype, self.shape = np.dtype(np.float32), shape
        self.__cuda_array_interface__ = {"data": (p, False), "typestr": "<f4", "shape": shape}


def test_descriptor_members_are_specialized_as_arguments():
    from tilework.language.descriptor import tensor_descriptor_type
    from tilework.tools.tensor_descriptor import TensorDescriptor as TD
    src = TD(FakeDeviceArray(0x1000, (37, 48)), [37, 48], [48, 1], [16, 32])
    b = TD(FakeDeviceArray(0x2000, (52,)), [52], [1], [32])
    fn = tilework.jit(k_desc_tuple)
    sig, constants, attrs = launcher.specialization(
        fn, (Descs(src, src), (1.5, b), 16, 32))
    T = tensor_descriptor_type(tl.float32, [16, 32])
    assert sig["descs"] == tl.tuple_type([T, T], ["src", "dst"])
    assert sig["extra"] == tl.tuple_type([tl.float32, tensor_descriptor_type(tl.float32, [32])])
    assert attrs["descs.0"] == {"tile.divisibility": 16}
    assert attrs["descs.0.shape1"] == {"tile.divisibility": 16}  # 48
    assert "descs.0.shape0" not in attrs and attrs["descs.0.stride0"] == {"tile.divisibility": 16}
    key, params = launcher.key_and_params(fn, (Descs(src, src), (1.5, b), 16, 32))
    assert params == [0x1000, 37, 48, 48, 0x1000, 37, 48, 48, 1.5, 0x2000, 52]
    key2, _ = launcher.key_and_params(fn, (Descs(src, src), (1.5, TD(
        FakeDeviceArray(0x2000, (52,)), [52], [1], [16])), 16, 32))
    assert key != key2  # the member's block shape is part of the key


@pytest.mark.parametrize("signature, message", [
    ("(*fp32, *fp32", r"signature '\(\*fp32, \*fp32': unbalanced '\('"),
    ("*fp32, *fp32)", r"unbalanced '\)'"),
    ("(*fp32)x", r"'x' after a '\)'"),
    ("a(*fp32, *fp32)", r"'\(' after 'a'"),
    ("(*fp32, *fp33)", r"signature entry for `t\[1\]`: unknown type 'fp33'"),
    ([["*fp32", "*fp32"]], r"signature entry for `t`: expected a type string"),
    ([("*fp32", ["*fp32"])], r"signature entry for `t\[1\]`: a tuple parameter's entry is a "
                             r"tuple, not a list"),
    ([("*fp32", "fp8e5")], r"signature entry for `t\[1\]`: fp8e5 is not a kernel parameter "
                           r"type"),
])
def test_bad_aot_signatures(signature, message):
    with pytest.raises(ValueError, match=message):
        tilework.compile(tilework.jit(k_copy), target="sm_90a", signature=signature,
                         constexprs={"N": 16})
