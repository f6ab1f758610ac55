"""The per-key launch plans of `@autotune` (`runtime/launch_plan.py`) on the CPU, with
interpreted kernels: a tuned key launches its own config's variant whatever came before (key
values, dtypes, constexprs passed at launch), falls back to the full path when the tuning
cache no longer holds its config, runs the config's pre_hook and the heuristics it cannot
decide from the key on every call, and evaluates the others once per key."""
import numpy as np
import pytest

import tilework
import tilework.language as tl
from tilework.runtime import Config
from tilework.runtime.launch_plan import CallShape, determined_by

rng = np.random.default_rng()


class KeyedBench:
    """do_bench whose times depend on the key (`n`) and the config (BLOCK): `times[n][block]`;
    counts the timings."""

    def __init__(self, times):
        self.times, self.runs, self.current = times, 0, None

    def __call__(self, kernel_call, quantiles):
        kernel_call()
        self.runs += 1
        n, block = self.current
        return [self.times[n][block]] * 3


def grid(meta):
    return (tl.cdiv(meta["n"], meta["BLOCK"]),)


def make_kernel(times, heuristics=None, launched=None):
    """y = x * BLOCK + ADD (ADD from a heuristic where given, else a constexpr argument): what
    y holds says which BLOCK and ADD the kernel ran with.  `launched` collects each call's
    BLOCK through the configs' pre_hook (run on every launch)."""
    bench = KeyedBench(times)

    def record(nargs):
        bench.current = (nargs["n"], nargs["BLOCK"])
        if launched is not None:
            launched.append(nargs["BLOCK"])
    configs = [Config({"BLOCK": b}, pre_hook=record) for b in (16, 32, 64)]

    def body(x, y, n, m, BLOCK: tl.constexpr, ADD: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y + offs, tl.load(x + offs, mask=mask) * BLOCK + ADD, mask=mask)
    fn = tilework.jit(interpret=True)(body)
    if heuristics:
        fn = tilework.heuristics(heuristics)(fn)
    return tilework.autotune(configs=configs, key=["n"], do_bench=bench)(fn), bench


TIMES = {64: {16: 1.0, 32: 2.0, 64: 3.0}, 128: {16: 3.0, 32: 2.0, 64: 1.0},
         96: {16: 3.0, 32: 1.0, 64: 2.0}}


def check(y, x, block, add):
    np.testing.assert_allclose(y, x * block + add, rtol=1e-6)


def test_each_key_launches_its_own_config():
    launched = []
    k, bench = make_kernel(TIMES, launched=launched)
    x = {n: rng.standard_normal(n).astype(np.float32) for n in (64, 128, 96)}
    best = {64: 16, 128: 64, 96: 32}
    for n in (64, 128, 64, 96, 128, 96, 64):  # keys alternating, once tuned each
        y = np.zeros_like(x[n])
        launched.clear()
        k[grid](x[n], y, n, 0, ADD=1.0)
        check(y, x[n], best[n], 1.0)
        assert k.best_config.kwargs == {"BLOCK": best[n]} and launched[-1] == best[n]
    assert bench.runs == 9  # three keys, three configs each
    # a new dtype is a new key: tuned, not served the float32 plan
    x64 = x[64].astype(np.float64)
    y = np.zeros_like(x64)
    k[grid](x64, y, 64, 0, ADD=1.0)
    assert bench.runs == 12
    check(y, x64, 16, 1.0)


def test_constexpr_passed_at_launch_follows_each_call():
    k, _ = make_kernel(TIMES)
    x = rng.standard_normal(64).astype(np.float32)
    for add in (1.0, 5.0, 1.0, -2.0):  # ADD is no key: each call's own value
        y = np.zeros_like(x)
        k[grid](x, y, 64, 0, ADD=add)
        check(y, x, 16, add)
    y = np.zeros_like(x)
    k[grid](x, y, n=64, m=0, ADD=3.0)  # keyword arguments: another call shape
    check(y, x, 16, 3.0)


def test_cleared_cache_and_replaced_config_fall_back():
    k, bench = make_kernel(TIMES)
    x = rng.standard_normal(64).astype(np.float32)
    y = np.zeros_like(x)
    k[grid](x, y, 64, 0, ADD=0.0)
    k[grid](x, y, 64, 0, ADD=0.0)
    assert bench.runs == 3
    k.cache.clear()  # tuned again, not served by the plan
    k[grid](x, y, 64, 0, ADD=0.0)
    assert bench.runs == 6
    (key,) = k.cache
    k.cache[key] = k.configs[2]  # the cache's choice is what launches
    y = np.zeros_like(x)
    k[grid](x, y, 64, 0, ADD=0.0)
    check(y, x, 64, 0.0)
    assert bench.runs == 6


def test_heuristics_of_the_key_once_per_key_others_every_call():
    calls = {"key": 0, "other": 0}

    def from_key(a):  # reads the key and the config only
        calls["key"] += 1
        return float(a["n"] // a["BLOCK"])

    def from_m(a):  # reads `m`, which is no key: every call
        calls["other"] += 1
        return a["ADD"] + a["m"]
    k, _ = make_kernel(TIMES, heuristics={"ADD": from_key})
    x = rng.standard_normal(128).astype(np.float32)
    for _ in range(3):
        y = np.zeros_like(x)
        k[grid](x, y, 128, 7)
        check(y, x, 64, 2.0)
    before = calls["key"]
    for _ in range(3):
        k[grid](x, y, 128, 7)
    assert calls["key"] == before  # decided by the plan
    y = np.zeros_like(x[:64])
    k[grid](x[:64], y, 64, 7)  # another key: evaluated anew
    check(y, x[:64], 16, 4.0)
    assert calls["key"] > before

    k2, _ = make_kernel(TIMES, heuristics={"ADD": from_m})
    x = rng.standard_normal(64).astype(np.float32)
    for m in (1, 2, 3, 2):  # same key, `m` changes: each call's value
        y = np.zeros_like(x)
        k2[grid](x, y, 64, m, ADD=10.0)
        check(y, x, 16, 10.0 + m)
    assert calls["other"] >= 4


def test_heuristics_in_order_each_per_call_or_not():
    """Values are set in order, as on the full path: a per-call heuristic after one the key
    decides sees its value, one before it does not."""
    seen = []

    def first(a):  # per call (reads m)
        seen.append("B2" in a)
        return a["m"] * 1.0

    def third(a):  # per call, after B2 (decided by the key and the config)
        return a["P"] + a["B2"]

    @tilework.jit(interpret=True)
    def body(x, y, n, m, BLOCK: tl.constexpr, ADD: tl.constexpr, P: tl.constexpr = 0,
             B2: tl.constexpr = 0):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y + offs, tl.load(x + offs, mask=mask) * BLOCK + ADD, mask=mask)
    bench = KeyedBench(TIMES)

    def record(nargs):
        bench.current = (nargs["n"], nargs["BLOCK"])
    k = tilework.autotune(configs=[Config({"BLOCK": b}, pre_hook=record) for b in (16, 64)],
                          key=["n"], do_bench=bench)(tilework.heuristics(
                              {"P": first, "B2": lambda a: float(a["BLOCK"]), "ADD": third})(body))
    x = rng.standard_normal(64).astype(np.float32)
    for m in (3, 4, 3):
        y = np.zeros_like(x)
        k[grid](x, y, 64, m)
        check(y, x, 16, m + 16.0)
    assert not any(seen)
    (plan,) = [p for sh in k._shapes.values() if sh for p in sh.plans.values()]
    assert [(name, heur is None) for name, heur, _ in plan.steps] == \
        [("P", False), ("B2", True), ("ADD", False)]


def test_heuristic_reading_the_whole_dict_runs_every_call():
    counts = []

    def whole(a):
        counts.append(len(a))
        return float(sorted(a)[0] == "BLOCK")
    k, _ = make_kernel(TIMES, heuristics={"ADD": whole})
    x = rng.standard_normal(64).astype(np.float32)
    y = np.zeros_like(x)
    k[grid](x, y, 64, 0)
    n = len(counts)
    k[grid](x, y, 64, 0)
    k[grid](x, y, 64, 0)
    assert len(counts) == n + 2
    check(y, x, 16, 1.0)


def test_config_pre_hook_every_call_and_replaced():
    launched = []
    k, _ = make_kernel(TIMES, launched=launched)
    x = rng.standard_normal(64).astype(np.float32)
    y = np.zeros_like(x)
    k[grid](x, y, 64, 0, ADD=0.0)
    launched.clear()
    for _ in range(3):
        k[grid](x, y, 64, 0, ADD=0.0)
    assert launched == [16, 16, 16]
    other = []
    k.best_config.pre_hook = lambda nargs: other.append(nargs["n"])  # read on each call
    k[grid](x, y, 64, 0, ADD=0.0)
    assert other == [64] and launched == [16, 16, 16]


def test_conflicting_keyword_raises_every_time():
    k, _ = make_kernel(TIMES)
    x = rng.standard_normal(64).astype(np.float32)
    for _ in range(2):
        with pytest.raises(ValueError, match="conflicting meta-parameters BLOCK"):
            k[grid](x, np.zeros_like(x), 64, 0, BLOCK=16, ADD=0.0)
    for _ in range(2):  # an option the config sets too: Python's message, every time
        with pytest.raises(TypeError, match="multiple values for keyword argument 'num_warps'"):
            k[grid](x, np.zeros_like(x), 64, 0, ADD=0.0, num_warps=8)


def test_rewrapped_function_drops_the_plans():
    k, _ = make_kernel(TIMES)
    x = rng.standard_normal(64).astype(np.float32)
    y = np.zeros_like(x)
    k[grid](x, y, 64, 0, ADD=1.0)
    k[grid](x, y, 64, 0, ADD=1.0)
    assert k._shapes
    tilework.jit(interpret=True)(k)
    assert not k._shapes
    y = np.zeros_like(x)
    k[grid](x, y, 64, 0, ADD=1.0)
    check(y, x, 16, 1.0)


def test_determined_by():
    known = {"n": 128, "BLOCK": 64}
    assert determined_by(lambda a: a["n"] % a["BLOCK"] == 0, known, True)
    assert determined_by(lambda a: a.get("BLOCK", 1) * 2, known, 128)
    assert determined_by(lambda a: "BLOCK" in a, known, True)
    assert not determined_by(lambda a: a["m"], known, 3)  # another argument
    assert not determined_by(lambda a: a.get("m", 0), known, 0)  # (a default is no proof)
    assert not determined_by(lambda a: "m" in a, known, False)
    assert not determined_by(lambda a: len(a), known, 2)  # the dict as a whole
    assert not determined_by(lambda a: dict(a)["n"], known, 128)
    assert not determined_by(lambda a: [k for k in a][0] == "n", known, True)
    assert not determined_by(lambda a: a["n"], known, 128.0)  # another value's type

    def caught(a):  # looks at the whole dict, and hides that it failed
        try:
            return len(a)
        except Exception:
            return 2
    assert not determined_by(caught, known, 2)
    assert not determined_by(lambda a: a["n"] + 1, known, 128)  # another value


def test_call_shape_keys():
    class Arr:
        def __init__(self, dtype):
            self.dtype = dtype
    names = ["x", "t", "n", "f", "BLOCK"]
    sh = CallShape.of(names, ["n"], (Arr(np.dtype("float16")),), {"n": 8, "f": 1.5})
    assert sh.key((Arr(np.dtype("float16")),), {"n": 8, "f": 1.5}) == (8, "float16")
    assert sh.key((Arr(np.dtype("int8")),), {"n": 9, "f": 2.5}) == (9, "int8")
    assert CallShape.of(names, ["n"], ((1, 2),), {}) is None  # a tuple argument
    assert CallShape.of(names, ["n"], (1,), {"x": 2}) is None  # given twice
    assert CallShape.of(names, ["n"], (1,) * 6, {}) is None  # too many


def test_heuristics_over_the_autotuner_every_call():
    """Heuristics outside the autotuner run before it on every call; their values reach the
    tuned key's plan as keyword arguments of that call."""
    k, bench = make_kernel(TIMES)
    h = tilework.heuristics({"ADD": lambda a: float(a["m"] * 2)})(k)
    x = rng.standard_normal(64).astype(np.float32)
    for m in (1, 5, 1, 3):
        y = np.zeros_like(x)
        h[grid](x, y, 64, m)
        check(y, x, 16, 2.0 * m)
    assert bench.runs == 3
