"""The autotuner's logic on the CPU: interpreted kernels timed by a fake `do_bench` (the time of
each config is ours), and the precompile path (configs compiled in worker processes for sm_90a,
loading faked).  Pruning, the key cache, the disk cache, failing configs, reset_to_zero and
restore_value, hooks, heuristics in either order, and every message."""
import re

import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.runtime import Autotuner, AutotuneError, Config, launcher
from tilework.runtime.bench import summarize
from tilework.runtime.compile_pool import choose_mode, compile_many
from tilework.runtime.cuda import CudaError

rng = np.random.default_rng()
C4 = [Config({"BLOCK": b}, num_warps=w) for b, w in ((16, 1), (32, 2), (64, 4), (128, 4))]


class FakeBench:
    """do_bench(kernel_call, quantiles): runs the call `runs` times and returns the time we
    give the config (by BLOCK), recording the order."""

    def __init__(self, times, runs=1, fail=()):
        self.times, self.runs, self.fail, self.calls = times, runs, fail, []

    def __call__(self, kernel_call, quantiles):
        for _ in range(self.runs):
            kernel_call()
        block = self.current
        self.calls.append(block)
        if block in self.fail:
            raise CudaError("launching k failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
        return [self.times[block], self.times[block] * 0.9, self.times[block] * 1.1]


def make_add(bench, configs=C4, **kw):
    """out[i] += x[i] (in place: what reset_to_zero/restore_value protect); the bench learns the
    running config through a pre_hook."""
    def remember(nargs):
        bench.current = nargs["BLOCK"]
        if kw.get("user_pre"):
            kw["user_pre"](nargs)
    opts = {k: v for k, v in kw.items() if k != "user_pre"}

    @tilework.autotune(configs=configs, key=["n"], do_bench=bench, pre_hook=remember, **opts)
    @tilework.jit(interpret=True)
    def add_inplace(x, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(out + offs, mask=m) + tl.load(x + offs, mask=m), mask=m)
    return add_inplace


def grid(meta):
    return (tl.cdiv(meta["n"], meta["BLOCK"]),)


def test_config_surface():
    c = Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=4, maxnreg=128)
    assert c.all_kwargs() == {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4,
                              "num_ctas": 1, "maxnreg": 128}
    assert str(c) == ("BLOCK_M: 128, BLOCK_N: 64, num_warps: 8, num_ctas: 1, num_stages: 4, "
                      "maxnreg: 128")
    assert c == Config({"BLOCK_N": 64, "BLOCK_M": 128}, num_warps=8, num_stages=4, maxnreg=128)
    assert c != Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, num_stages=4)
    assert len({c, Config(dict(c.kwargs), num_warps=8, num_stages=4, maxnreg=128)}) == 1
    assert "maxnreg" not in Config({}).all_kwargs()
    assert tilework.runtime.Autotuner is Autotuner and tilework.Config is Config


def test_picks_fastest_and_caches_per_key_and_dtype(capsys):
    bench = FakeBench({16: 3.0, 32: 1.0, 64: 2.0, 128: 4.0})
    k = make_add(bench)
    x = rng.standard_normal(300).astype(np.float32)
    out = np.zeros_like(x)
    k[grid](x, out, 300)
    assert k.best_config.kwargs == {"BLOCK": 32}
    assert bench.calls == [16, 32, 64, 128]
    np.testing.assert_allclose(out, x * 5, rtol=1e-6)  # 4 timed runs and the real one
    err = capsys.readouterr().err
    for i in range(1, 5):
        assert f"tilework autotune add_inplace key=(300, 'float32', 'float32'): config {i}/4" \
            in err
    k[grid](x, out, 300)  # same key: no tuning
    assert len(bench.calls) == 4
    k[grid](x[:200], out[:200], 200)  # new key value
    assert len(bench.calls) == 8
    k[grid](x.astype(np.float64), out.astype(np.float64), 300)  # new dtypes
    assert len(bench.calls) == 12
    assert set(k.cache) == {(300, "float32", "float32"), (200, "float32", "float32"),
                            (300, "float64", "float64")}
    assert k.configs_timings[Config({"BLOCK": 32}, num_warps=2)][0] == 1.0


def test_reset_to_zero_and_restore_value():
    x = rng.standard_normal(100).astype(np.float32)
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0}, runs=3)
    k = make_add(bench, reset_to_zero=["out"])
    out = np.full_like(x, 7.0)
    k[grid](x, out, 100)
    np.testing.assert_array_equal(out, x)  # zeroed before each timed run and before the real one
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0}, runs=3)
    k = make_add(bench, restore_value=["out"])
    out = np.full_like(x, 7.0)
    k[grid](x, out, 100)
    np.testing.assert_array_equal(out, x + 7.0)  # restored after each timed run
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0}, runs=3)
    k = make_add(bench)
    out = np.full_like(x, 7.0)
    k[grid](x, out, 100)
    # unprotected: 4 configs x 3 timed runs, and the real one
    np.testing.assert_allclose(out, x * 13 + 7.0, rtol=1e-5, atol=1e-5)


def test_hooks_see_arguments_and_exceptions():
    seen = []
    x = rng.standard_normal(64).astype(np.float32)
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0})
    k = make_add(bench, user_pre=lambda a: seen.append(("pre", a["n"], a["BLOCK"])),
                 post_hook=lambda a, exception: seen.append(("post", a["BLOCK"], exception)))
    k[grid](x, np.zeros_like(x), 64)
    assert seen[:2] == [("pre", 64, 16), ("post", 16, None)]
    assert len(seen) == 8


def test_prune_configs_by():
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0})
    k = make_add(bench, prune_configs_by={
        "early_config_prune": lambda cfgs, nargs, **kw: [c for c in cfgs
                                                         if c.kwargs["BLOCK"] >= 32]})
    x = rng.standard_normal(64).astype(np.float32)
    k[grid](x, np.zeros_like(x), 64)
    assert bench.calls == [32, 64, 128] and k.best_config.kwargs == {"BLOCK": 32}
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0})
    model = []
    k = make_add(bench, prune_configs_by={
        "perf_model": lambda **kw: model.append(kw["n"]) or -kw["BLOCK"], "top_k": 2})
    k[grid](x, np.zeros_like(x), 64)
    assert bench.calls == [128, 64] and model == [64] * 4  # the model's two best, timed
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0})
    k = make_add(bench, prune_configs_by={"perf_model": lambda **kw: kw["BLOCK"],
                                          "top_k": 0.5})
    k[grid](x, np.zeros_like(x), 64)
    assert bench.calls == [16, 32]
    k = make_add(bench, prune_configs_by={"early_config_prune": lambda c, n, **kw: []})
    with pytest.raises(AutotuneError, match="early_config_prune left no config; it must "
                                            "return at least one"):
        k[grid](x, np.zeros_like(x), 64)
    k = make_add(bench, prune_configs_by={"perf_model": lambda **kw: 0, "top_k": "2"})
    with pytest.raises(TypeError, match=r"prune_configs_by\['top_k'\] must be an int or a "
                                        r"float <= 1.0, got '2'"):
        k[grid](x, np.zeros_like(x), 64)
    with pytest.raises(ValueError, match="prune_configs_by: unknown entries topk"):
        make_add(bench, prune_configs_by={"topk": 2})


def test_failing_configs_are_skipped_with_a_note(capsys):
    x = rng.standard_normal(64).astype(np.float32)
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0}, fail=(16,))
    k = make_add(bench)
    k[grid](x, np.zeros_like(x), 64)
    assert k.best_config.kwargs == {"BLOCK": 32}
    err = capsys.readouterr().err
    assert ("tilework autotune add_inplace: skipped config BLOCK: 16, num_warps: 1, "
            "num_ctas: 1, num_stages: 3, maxnreg: None: CudaError: launching k failed: "
            "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") in err
    # a config the interpreter cannot run (a block that is not a power of two) is skipped too
    bench = FakeBench({3: 0.5, 16: 1.0})
    k = make_add(bench, configs=[Config({"BLOCK": 3}), Config({"BLOCK": 16})])
    out = np.zeros_like(x)
    k[grid](x, out, 64)
    assert k.best_config.kwargs == {"BLOCK": 16}
    np.testing.assert_array_equal(out, x + x)  # timed once, then the real run
    assert "skipped config BLOCK: 3, num_warps: 4" in capsys.readouterr().err
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0}, fail=(16, 32, 64, 128))
    k = make_add(bench)
    with pytest.raises(AutotuneError) as e:
        k[grid](x, np.zeros_like(x), 64)
    msg = str(e.value)
    assert msg.startswith("@autotune of add_inplace: every config failed (key=(64, 'float32', "
                          "'float32')):\n  BLOCK: 16, num_warps: 1")
    assert msg.count("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") == 4


def test_disk_cache(monkeypatch, tmp_path):
    x = rng.standard_normal(64).astype(np.float32)
    bench = FakeBench({16: 2.0, 32: 2.0, 64: 1.0, 128: 4.0})
    k = make_add(bench, cache_results=True)
    k[grid](x, np.zeros_like(x), 64)
    files = list((tmp_path / "cache" / "autotune").rglob("add_inplace-*.json"))
    assert len(files) == 1 and '"best": "BLOCK: 64' in files[0].read_text()

    def no_bench(kernel_call, quantiles):
        raise AssertionError("timed although the choice is on disk")
    k2 = make_add(no_bench, cache_results=True)
    out = np.zeros_like(x)
    k2[grid](x, out, 64)
    assert k2.best_config.kwargs == {"BLOCK": 64}
    np.testing.assert_array_equal(out, x)
    k3 = make_add(no_bench, configs=C4[:3], cache_results=True)  # other configs: another entry
    with pytest.raises(AssertionError, match="timed although"):
        k3[grid](x, np.zeros_like(x), 64)
    monkeypatch.setenv("TILEWORK_CACHE_AUTOTUNING", "1")  # the environment switch
    k4 = make_add(no_bench)
    k4[grid](x, np.zeros_like(x), 64)
    assert k4.best_config.kwargs == {"BLOCK": 64}
    monkeypatch.delenv("TILEWORK_CACHE_AUTOTUNING")
    k5 = make_add(no_bench)  # not cached on disk: timed
    with pytest.raises(AssertionError, match="timed although"):
        k5[grid](x, np.zeros_like(x), 64)


def test_print_autotuning(monkeypatch, capsys):
    monkeypatch.setenv("TILEWORK_PRINT_AUTOTUNING", "1")
    x = rng.standard_normal(64).astype(np.float32)
    k = make_add(FakeBench({16: 2.0, 32: 0.25, 64: 1.0, 128: 4.0}))
    k[grid](x, np.zeros_like(x), 64)
    err = capsys.readouterr().err
    assert "tilework autotuning for add_inplace finished after" in err
    assert ("best config: BLOCK: 32, num_warps: 2, num_ctas: 1, num_stages: 3, maxnreg: None; "
            "0.2500 ms") in err
    k[grid](x, np.zeros_like(x), 64)
    assert "finished after" not in capsys.readouterr().err  # cached: printed once


def test_interpreter_without_do_bench_takes_the_first_config(capsys):
    @tilework.autotune(configs=C4[1:], key=["n"])
    @tilework.jit(interpret=True)
    def copy(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)
    x = rng.standard_normal(100).astype(np.float32)
    y = np.zeros_like(x)
    copy[grid](x, y, 100)
    np.testing.assert_array_equal(y, x)
    assert copy.best_config == C4[1]
    assert capsys.readouterr().err == ""


def _heur_kernel(order):
    configs = [Config({"BLOCK": 16}), Config({"BLOCK": 64})]
    bench = FakeBench({16: 2.0, 64: 1.0})
    seen = []

    def pre(nargs):
        bench.current = nargs["BLOCK"]

    def even(nargs):
        seen.append(nargs.get("BLOCK"))
        return nargs["n"] % nargs["BLOCK"] == 0 if "BLOCK" in nargs else False

    def body(x, y, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        if EVEN:
            tl.store(y + offs, tl.load(x + offs) + 1.0)
        else:
            tl.store(y + offs, tl.load(x + offs, mask=offs < n) + 2.0, mask=offs < n)
    tune = tilework.autotune(configs=configs, key=["n"], do_bench=bench, pre_hook=pre)
    heur = tilework.heuristics({"EVEN": even})
    jit = tilework.jit(interpret=True)
    k = tune(heur(jit(body))) if order == "autotune_over" else heur(tune(jit(body)))
    return k, seen


@pytest.mark.parametrize("order", ["autotune_over", "heuristics_over"])
def test_heuristics_in_either_order(order):
    k, seen = _heur_kernel(order)
    x = rng.standard_normal(128).astype(np.float32)
    y = np.zeros_like(x)
    k[grid](x, y, 128)
    if order == "autotune_over":  # the heuristic sees each config's values
        assert seen[:2] == [16, 64] and seen[-1] == 64
        np.testing.assert_array_equal(y, x + 1.0)  # 128 % 64 == 0: EVEN
    else:  # computed once, before the autotuner: no BLOCK yet
        assert seen == [None]
        np.testing.assert_array_equal(y, x + 2.0)
    assert k.arg_names == ["x", "y", "n", "BLOCK", "EVEN"]


@tilework.jit(interpret=True)
def _four_args(x, n, A: tl.constexpr, B: tl.constexpr):
    pass


def test_heuristics_each_get_their_own_arguments():
    """Each heuristic sees the arguments and the values set before it, in a dict of its own
    (what one heuristic writes there reaches neither the next nor the launch)."""
    seen = []

    def first(a):
        seen.append(dict(a))
        a["n"] = -1
        return a["n"] + 100

    def second(a):
        seen.append(dict(a))
        return a["A"] * 2
    h = tilework.heuristics({"A": first, "B": second})(_four_args)
    assert h.apply((5, 3), {"k": 1}) == {"k": 1, "A": 99, "B": 198}
    assert seen == [{"x": 5, "n": 3, "k": 1}, {"x": 5, "n": 3, "k": 1, "A": 99}]


def test_tuning_key_holds_every_dtype():
    """The key values, then each argument's dtype text (tuple members' too; scalars have
    none; the texts are remembered per dtype object, an unhashable one too)."""
    class Arr:
        def __init__(self, dtype):
            self.dtype = dtype

    class Unhashable:
        __hash__ = None

        def __str__(self):
            return "odd"
    t = object.__new__(Autotuner)  # (only its key list)
    t.keys = ["n"]
    nargs = {"a": Arr(np.dtype("float16")), "t": (Arr(np.dtype("int8")), 3), "n": 7,
             "f": 1.5, "u": Arr(Unhashable())}
    for _ in range(2):  # (the second from the texts remembered)
        assert t.tuning_key(nargs) == (7, "float16", "int8", "odd")


def test_jit_over_autotune_rewraps_the_function():
    x = rng.standard_normal(50).astype(np.float32)

    @tilework.jit(interpret=True)
    @tilework.autotune(configs=C4[:2], key=["n"])
    def copy(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)
    assert isinstance(copy, Autotuner) and copy.base_fn.interpret
    y = np.zeros_like(x)
    copy[grid](x, y, 50)
    np.testing.assert_array_equal(y, x)


def test_messages_for_bad_use():
    with pytest.raises(ValueError, match=r"@autotune of k: 'm' is not a parameter "
                                         r"\(parameters: x, n, BLOCK\)"):
        @tilework.autotune(configs=C4, key=["m"])
        @tilework.jit
        def k(x, n, BLOCK: tl.constexpr):
            pass
    k = make_add(FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0}))
    x = np.zeros(16, np.float32)
    with pytest.raises(ValueError, match="add_inplace: conflicting meta-parameters BLOCK: the "
                                         "autotuner sets them; do not pass them at launch"):
        k[grid](x, x.copy(), 16, BLOCK=16)


def test_summarize_like_triton():
    t = [4.0, 1.0, 3.0, 2.0]
    assert summarize(t, return_mode="mean") == 2.5
    assert summarize(t, return_mode="median") == 2.5
    assert summarize(t, return_mode="min") == 1.0 and summarize(t, return_mode="max") == 4.0
    assert summarize(t, return_mode="all") == t
    assert summarize(t, quantiles=[0.5]) == 2.5
    assert summarize(t, quantiles=[0.0, 0.5, 1.0]) == [1.0, 2.5, 4.0]
    assert summarize([1.0, 2.0], quantiles=[0.25]) == 1.25
    with pytest.raises(ValueError, match="return_mode must be one of min, max, mean, median, "
                                         "all, got 'avg'"):
        summarize(t, return_mode="avg")
    with pytest.raises(ValueError, match=r"quantiles must lie in \[0, 1\], got 2"):
        summarize(t, quantiles=[2])


# ---- the compiled path on the CPU: precompiled for sm_90a, loading faked ---------------------
class FakeDevicePtr:
    def __init__(self, typestr):
        self.__cuda_array_interface__ = {"data": (0x10000, False), "typestr": typestr,
                                         "shape": (1,)}


def test_precompile_compiles_configs_and_skips_failures(monkeypatch, capsys):
    loaded = []

    def fake_install(jf, vkey, ck):
        loaded.append(ck)
        jf.cache[vkey] = ck
        return ck
    monkeypatch.setattr(launcher, "install_variant", fake_install)
    monkeypatch.setenv("TILEWORK_COMPILE_WORKERS", "process:2")
    times = iter([2.0, 1.0])  # the two configs that compile, in order

    def bench(kernel_call, quantiles):  # no GPU: nothing launched
        return next(times)
    configs = [Config({"BLOCK": 32}), Config({"BLOCK": 3}), Config({"BLOCK": 64}, num_warps=2),
               Config({"BLOCK": 64}, num_ctas=2)]

    @tilework.autotune(configs=configs, key=["n"], do_bench=bench)
    @tilework.jit
    def scale(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n) * 2.0, mask=offs < n)
    x, y = FakeDevicePtr("<f4"), FakeDevicePtr("<f4")
    k = scale.run(x, y, 1000, grid=(8,), warmup=True, target="sm_80")
    assert scale.best_config == configs[2]
    assert k.metadata["num_warps"] == 2 and "ld.global" in k.asm["ptx"]
    assert len(loaded) == 2  # BLOCK=3 does not compile, num_ctas=2 is refused for sm_80
    err = capsys.readouterr().err
    assert "tilework autotune scale key=(1000,): compiling 4 configs" in err
    assert ("skipped config BLOCK: 3, num_warps: 4, num_ctas: 1, num_stages: 3, maxnreg: None: "
            "CompilationError: ") in err
    assert re.search(r"test_autotune.py:\d+:\d+: error: arange\(0, 3\) has length 3, which is "
                     r"not a power of two", err)
    assert ("skipped config BLOCK: 64, num_warps: 4, num_ctas: 2, num_stages: 3, maxnreg: None: "
            "ValueError: num_ctas=2 needs thread block clusters (NVIDIA sm_90 or newer); "
            "target sm_80 has none: use num_ctas=1") in err


class FakeDeviceTensor(FakeDevicePtr):
    """A device tensor a TensorDescriptor can describe (its dtype, aligned data)."""
    def __init__(self, dtype):
        super().__init__(np.dtype(dtype).str)
        self.dtype = np.dtype(dtype)


def test_precompile_runs_each_configs_pre_hook(monkeypatch, capsys):
    """A config's pre_hook may set what its variant depends on (Triton's attention tutorial
    sets the descriptors' block shapes per config): precompile runs it before specializing
    each config, so every config compiles with its own blocks."""
    from tilework.tools.tensor_descriptor import TensorDescriptor
    loaded = []

    def fake_install(jf, vkey, ck):
        loaded.append(ck)
        jf.cache[vkey] = ck
        return ck
    monkeypatch.setattr(launcher, "install_variant", fake_install)
    monkeypatch.setenv("TILEWORK_COMPILE_WORKERS", "serial")

    def blocks(nargs):
        nargs["x_desc"].block_shape = [nargs["BLOCK"]]
    configs = [Config({"BLOCK": b}, pre_hook=blocks) for b in (32, 64)]
    times = iter([2.0, 1.0])

    @tilework.autotune(configs=configs, key=["n"], do_bench=lambda call, quantiles: next(times))
    @tilework.jit
    def twice(x_desc, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, x_desc.load([tl.program_id(0) * BLOCK]) * 2.0, mask=offs < n)
    x = TensorDescriptor(FakeDeviceTensor("float32"), [1000], [1], [8])
    twice.run(x, FakeDevicePtr("<f4"), 1000, grid=(8,), warmup=True, target="sm_80")
    assert "skipped" not in capsys.readouterr().err
    assert len(loaded) == 2
    assert sorted(ck.metadata["signature"]["x_desc"] for ck in loaded) == \
        ["tensordesc<fp32[32]>", "tensordesc<fp32[64]>"]


def test_compile_modes_agree(monkeypatch):
    """Worker processes, threads and one at a time give the same PTX (and failures)."""
    from tilework.compiler.driver import ASTSource
    from tilework.compiler.options import CompileOptions
    from vector_add import add_kernel
    p = tl.pointer_type(tl.float16)
    sig = {"x_ptr": p, "y_ptr": p, "out_ptr": p, "n_elements": tl.int32}
    jobs = [(ASTSource(add_kernel, sig, {"BLOCK_SIZE": b}, {}), "sm_90a",
             CompileOptions(num_warps=w)) for b, w in ((256, 2), (512, 4), (100, 4))]
    out = {m: compile_many(jobs, mode=m) for m in ("serial", "thread", "process")}
    for m, res in out.items():
        assert [type(r).__name__ for r in res][:2] == ["CompiledKernel"] * 2, m
        assert "not a power of two" in str(res[2]), m
        assert [r.asm["ptx"] for r in res[:2]] == [r.asm["ptx"] for r in out["serial"][:2]]


def test_choose_mode(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    monkeypatch.delenv("TILEWORK_COMPILE_WORKERS", raising=False)
    assert choose_mode(6) == ("process", 6)
    assert choose_mode(40) == ("process", 16)
    assert choose_mode(1)[0] == "serial"
    monkeypatch.setenv("TILEWORK_COMPILE_WORKERS", "thread:3")
    assert choose_mode(6) == ("thread", 3)
    monkeypatch.setenv("TILEWORK_COMPILE_WORKERS", "serial")
    assert choose_mode(6)[0] == "serial"
    monkeypatch.setenv("TILEWORK_COMPILE_WORKERS", "fork")
    with pytest.raises(ValueError, match="TILEWORK_COMPILE_WORKERS must be process, thread or "
                                         "serial \\(optionally ':N'\\), got 'fork'"):
        choose_mode(6)
