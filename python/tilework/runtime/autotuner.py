"""`@autotune`, `Config` and `@heuristics`, with Triton's surface.

    @tilework.autotune(configs=[tilework.Config({"BLOCK_M": 128}, num_warps=8), ...],
                       key=["M", "N", "K"])
    @tilework.jit
    def matmul(a, b, c, M, N, K, BLOCK_M: tl.constexpr, ...): ...

The first launch with new key values (and argument dtypes) compiles every config first (in
worker processes: `compile_many`), then times each on the real arguments (CUDA events, the
median of `do_bench`), launches the fastest and remembers it: in memory, and with
`cache_results=True` or TILEWORK_CACHE_AUTOTUNING=1 on disk in the cache dir.  A config that
fails to compile or to load or launch (too much shared memory, too many registers) is skipped
with a one-line note.  `reset_to_zero`/`restore_value` name arguments the kernel writes in
place: zeroed before / restored after each timed run.  Interpreted kernels take the first
config unless a `do_bench` is given.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time

from ..compiler.options import cache_dir
from ..errors import CompilationError
from ..language.function import JITFunction, jit
from . import bench, launcher
from .launch_plan import MAX_PLANS, CallShape, dtype_text, make_plan
from .compile_pool import compile_many
from .gpu_errors import CudaError, HipError

# a launch that fails for lack of resources, or a kernel the driver refuses to load
RESOURCE_ERRORS = (CudaError, HipError)


class AutotuneError(RuntimeError):
    pass


class ConfigFailed(Exception):
    """The kernel failed to compile or run for one config (the cause is chained)."""


class KernelInterface:
    """What `kernel[grid](...)` calls on a wrapper: `run(*args, grid=grid, **kwargs)`."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self._launch(grid, args, kwargs)

    def _launch(self, grid, args, kwargs):
        """`self[grid](*args, **kwargs)`, its arguments as they came (no repacking)."""
        return self.run(*args, grid=grid, warmup=False, **kwargs)

    def rewrap_innermost(self, make):
        """Replaces the innermost `@jit` function with `make(its Python function)` (an outer
        `@jit(...)` with options)."""
        if isinstance(self.fn, JITFunction):
            self.fn = make(self.fn.fn)
        else:
            self.fn.rewrap_innermost(make)
        self.base_fn = self.fn if isinstance(self.fn, JITFunction) else self.fn.base_fn
        self._shapes = {}  # (an autotuner's plans name the function they launch)
        return self


def _as_kernel(fn):
    return fn if isinstance(fn, (JITFunction, KernelInterface)) else jit(fn)


class Config:
    """One point of the search: constexpr values (`kwargs`) and launch options."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None,
                 pre_hook=None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict:
        """The constexprs and the launch options that are set, as launch keyword arguments."""
        opts = (("num_warps", self.num_warps), ("num_stages", self.num_stages),
                ("num_ctas", self.num_ctas), ("maxnreg", self.maxnreg))
        return {**self.kwargs, **{k: v for k, v in opts if v is not None}}

    def _ident(self):
        return (tuple(sorted((k, repr(v)) for k, v in self.kwargs.items())), self.num_warps,
                self.num_stages, self.num_ctas, self.maxnreg)

    def __eq__(self, other):
        return isinstance(other, Config) and self._ident() == other._ident()

    def __hash__(self):
        return hash(self._ident())

    def __str__(self):
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}",
                  f"num_stages: {self.num_stages}", f"maxnreg: {self.maxnreg}"]
        return ", ".join(parts)

    __repr__ = __str__


def _is_array(a) -> bool:
    return hasattr(a, "zero_") or hasattr(a, "__array_interface__")


def _zero(a):
    if isinstance(a, tuple):  # a tuple argument: each of its arrays
        for m in a:
            if _is_array(m) or isinstance(m, tuple):
                _zero(m)
    elif hasattr(a, "zero_"):
        a.zero_()
    else:
        a[...] = 0  # numpy, in the interpreter


def _copy(a):
    if isinstance(a, tuple):
        return tuple(_copy(m) if _is_array(m) or isinstance(m, tuple) else m for m in a)
    return a.clone() if hasattr(a, "clone") else a.copy()


def _restore(a, saved):
    if isinstance(a, tuple):
        for m, s in zip(a, saved):
            if _is_array(m) or isinstance(m, tuple):
                _restore(m, s)
    elif hasattr(a, "copy_"):
        a.copy_(saved)
    else:
        a[...] = saved


def _leaves(values):
    """The values, tuple arguments' members in their place."""
    for a in values:
        if isinstance(a, tuple):
            yield from _leaves(a)
        else:
            yield a


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    # a CompilationError starts with the location; its last 'error:' line says what
    line = next((ln for ln in reversed(text) if "error:" in ln), text[0] if text else "")
    kind = getattr(e, "kind", None) or type(e).__name__  # a worker's CompileFailure: its kind
    return f"{kind}: {line.strip()}"


def _time_of(t) -> float:
    return float(t[0] if isinstance(t, (list, tuple)) else t)


class Autotuner(KernelInterface):
    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None,
                 pre_hook=None, post_hook=None, prune_configs_by=None, warmup=None, rep=None,
                 use_cuda_graph=False, do_bench=None, cache_results=False):
        if not configs:
            configs = [Config({})]
        self.fn = fn
        self.base_fn = fn if isinstance(fn, JITFunction) else fn.base_fn
        self.arg_names = list(arg_names)
        self.configs = list(configs)
        self.keys = list(key)
        for name in self.keys + list(reset_to_zero or ()) + list(restore_value or ()):
            if name not in self.arg_names:
                raise ValueError(f"@autotune of {self.base_fn.__name__}: {name!r} is not a "
                                 f"parameter (parameters: {', '.join(self.arg_names)})")
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        self.user_pre_hook = pre_hook
        self.user_post_hook = post_hook
        prune_configs_by = prune_configs_by or {}
        unknown = set(prune_configs_by) - {"perf_model", "top_k", "early_config_prune"}
        if unknown:
            raise ValueError(f"prune_configs_by: unknown entries {', '.join(sorted(unknown))} "
                             f"(known: perf_model, top_k, early_config_prune)")
        self.perf_model = prune_configs_by.get("perf_model")
        self.configs_top_k = prune_configs_by.get("top_k", 1.0)
        self.early_config_prune = prune_configs_by.get("early_config_prune")
        self.user_do_bench = do_bench
        self.warmup_ms = 25 if warmup is None else warmup
        self.rep_ms = 100 if rep is None else rep
        self.use_cuda_graph = use_cuda_graph
        self.cache_results = cache_results or \
            os.environ.get("TILEWORK_CACHE_AUTOTUNING", "0") not in ("", "0")
        self.cache: dict = {}           # tuning key -> Config
        self.configs_timings: dict | None = None
        self.best_config: Config | None = None
        self.bench_time = 0.0
        self.restore_copies: dict = {}
        # call shape (argument types, keyword names) -> CallShape (None: none), whose plans
        # launch a tuned key directly (`launch_plan`)
        self._shapes: dict = {}
        self.__name__ = self.base_fn.__name__
        self.__doc__ = self.base_fn.__doc__

    # ---- hooks -------------------------------------------------------------------------------
    def pre_hook(self, nargs, reset_only=False):
        for name in self.reset_to_zero:
            _zero(nargs[name])
        if reset_only:
            return
        self.restore_copies = {n: _copy(nargs[n]) for n in self.restore_value}
        if self.user_pre_hook is not None:
            self.user_pre_hook(nargs)

    def post_hook(self, nargs, exception=None):
        for name, saved in self.restore_copies.items():
            _restore(nargs[name], saved)
        self.restore_copies = {}
        if self.user_post_hook is not None:
            self.user_post_hook(nargs, exception)

    # ---- the choice --------------------------------------------------------------------------
    def tuning_key(self, nargs: dict) -> tuple:
        """The key values, then the dtype of every argument that has one."""
        key = [nargs[k] for k in self.keys if k in nargs]
        for a in nargs.values():  # (every call: _leaves' generator only for tuples)
            t = type(a)
            if t is int or t is float or t is bool:
                continue
            if t is tuple:
                key += [dtype_text(m.dtype) for m in _leaves(a) if hasattr(m, "dtype")]
            elif hasattr(a, "dtype"):
                key.append(dtype_text(a.dtype))
        return tuple(key)

    def prune_configs(self, kwargs: dict, nargs: dict) -> list:
        configs = self.configs
        if self.early_config_prune is not None:
            configs = self.early_config_prune(configs, nargs, **kwargs)
            if not configs:
                raise AutotuneError(f"@autotune of {self.__name__}: early_config_prune left "
                                    f"no config; it must return at least one")
        if self.perf_model is not None:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(configs) * top_k))
            elif not isinstance(top_k, int):
                raise TypeError("prune_configs_by['top_k'] must be an int or a float <= 1.0, "
                                f"got {top_k!r}")
            if len(configs) > top_k:
                est = {c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in configs}
                configs = sorted(configs, key=lambda c: est[c])[:top_k]
        return list(configs)

    def run(self, *args, grid, warmup=False, **kwargs):
        if not warmup:
            return self._launch(grid, args, kwargs)
        return self._run(args, kwargs, grid, warmup)

    def _launch(self, grid, args, kwargs):
        """A launch: by the plan of its key where one is made and still holds (the cache maps
        its key to its config), else by the full path (`_run`), which then makes one."""
        sk = (*map(type, args), *kwargs, *map(type, kwargs.values()))
        shape = self._shapes.get(sk, False)
        if shape is False:
            if len(self._shapes) >= MAX_PLANS:
                self._shapes.clear()
            shape = self._shapes[sk] = CallShape.of(self.arg_names, self.keys, args, kwargs)
        pk = None
        if shape is not None:
            try:
                pk = shape.key(args, kwargs)
                plan = shape.plans.get(pk)
            except TypeError:  # an unhashable key value: the full path's message
                plan = pk = None
            if plan is False:  # (no plan for this key: the full path)
                return self._run(args, kwargs, grid, False)
            if plan is not None and plan.fn is self.fn:
                config = plan.config
                if plan.tkey is None:
                    ok = len(self.configs) == 1 and self.configs[0] is config
                else:
                    ok = self.cache.get(plan.tkey) is config
                if ok:
                    self.best_config = config
                    return plan.launch(grid, args, kwargs)
        r = self._run(args, kwargs, grid, False)
        if pk is not None:
            if len(shape.plans) >= MAX_PLANS:
                shape.plans.clear()
            shape.plans[pk] = self._plan(args, kwargs) or False
        return r

    def _plan(self, args, kwargs):
        """The plan of this (just launched) call's key: None where the wrapped function is
        not heuristics over @jit, or the config clashes with the call's keyword arguments."""
        fn, chain = self.fn, []
        while type(fn) is Heuristics:
            chain += fn.values.items()
            fn = fn.fn
        if not isinstance(fn, JITFunction):
            return None
        nargs = dict(zip(self.arg_names, args))
        nargs.update(kwargs)
        if len(self.configs) > 1 or self.early_config_prune or self.perf_model:
            tkey = self.tuning_key(nargs)
            config = self.cache.get(tkey)
        else:
            tkey, config = None, self.configs[0]
        if config is None:
            return None
        return make_plan(config, tkey, self.fn, chain, fn, self.arg_names, self.keys, nargs,
                         kwargs)

    def _run(self, args, kwargs, grid, warmup):
        """The full path: the key, tuning it if new, the config's pre_hook, the launch."""
        nargs = dict(zip(self.arg_names, args))
        nargs.update(kwargs)
        cached = True
        if len(self.configs) > 1 or self.early_config_prune or self.perf_model:
            key = self.tuning_key(nargs)
            config = self.cache.get(key)
            if config is None:
                cached = False
                config = self.cache[key] = self._tune(key, args, kwargs, grid, nargs)
        else:
            config = self.configs[0]
        self.best_config = config
        if not kwargs.keys().isdisjoint(config.kwargs):
            self._check_conflicts(kwargs, config)  # (its message)
        if not cached and os.environ.get("TILEWORK_PRINT_AUTOTUNING", "0") not in ("", "0"):
            t = (self.configs_timings or {}).get(config)
            ms = f"; {_time_of(t):.4f} ms" if t is not None else ""
            print(f"tilework autotuning for {self.__name__} finished after "
                  f"{self.bench_time:.2f} s; best config: {config}{ms}", file=sys.stderr)
        ckw = config.all_kwargs()
        if config.pre_hook is not None:
            config.pre_hook({**nargs, **ckw})
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs, **ckw)

    def _check_conflicts(self, kwargs, config):
        clash = sorted(set(kwargs) & set(config.kwargs))
        if clash:
            raise ValueError(f"{self.__name__}: conflicting meta-parameters {', '.join(clash)}: "
                             f"the autotuner sets them; do not pass them at launch")

    def _progress(self, key, text, final=False):
        tty = sys.stderr.isatty()
        line = f"tilework autotune {self.__name__} key={key}: {text}"
        sys.stderr.write(("\r\033[K" + line + ("\n" if final else "")) if tty else line + "\n")
        sys.stderr.flush()

    def _tune(self, key, args, kwargs, grid, nargs) -> Config:
        t0 = time.perf_counter()
        configs = self.prune_configs(kwargs, nargs)
        for c in configs:
            self._check_conflicts(kwargs, c)
        if self.base_fn.interpret and self.user_do_bench is None:
            self.configs_timings = None  # nothing to time on the CPU: the first config
            self.bench_time = time.perf_counter() - t0
            return configs[0]
        disk = self._disk_path(key, configs) if self.cache_results else None
        if disk is not None:
            found = _read_choice(disk, configs)
            if found is not None:
                self.configs_timings = {found: None}
                self.bench_time = time.perf_counter() - t0
                return found
        notes = {}
        if not self.base_fn.interpret:
            self._progress(key, f"compiling {len(configs)} configs")
            notes = self.precompile(configs, args, kwargs, grid)
        timings = {}
        n = len(configs)
        # what skips a config while timing it: compiled, a failed compile (a config precompile
        # could not see) or launch; interpreted, any error the interpreter raises for it
        skip = Exception if self.base_fn.interpret else (CompilationError, *RESOURCE_ERRORS)
        for i, c in enumerate(configs):
            self._progress(key, f"config {i + 1}/{n}", final=i == n - 1)
            if c in notes:
                continue
            try:
                timings[c] = self._bench(c, args, kwargs, grid, nargs, skip)
            except ConfigFailed as e:
                notes[c] = _first_line(e.__cause__)
            except RESOURCE_ERRORS as e:  # also where a launch's error shows up later
                notes[c] = _first_line(e)
        for c, note in notes.items():
            sys.stderr.write(f"tilework autotune {self.__name__}: skipped config {c}: {note}\n")
        if not timings:
            lines = "\n".join(f"  {c}: {notes[c]}" for c in configs)
            raise AutotuneError(f"@autotune of {self.__name__}: every config failed "
                                f"(key={key}):\n{lines}")
        self.configs_timings = timings
        best = min(timings, key=lambda c: _time_of(timings[c]))
        self.bench_time = time.perf_counter() - t0
        # the kernel's real run starts from zeroed outputs, as if never tuned
        self.pre_hook({**nargs, **best.all_kwargs()}, reset_only=True)
        if disk is not None:
            _write_choice(disk, key, best, timings)
        return best

    def _bench(self, config, args, kwargs, grid, nargs, skip=()):
        current = {**kwargs, **config.all_kwargs()}
        full = {**nargs, **config.all_kwargs()}

        def kernel_call():
            if config.pre_hook is not None:
                config.pre_hook(full)
            self.pre_hook(full)
            try:
                self.fn.run(*args, grid=grid, **current)
            except Exception as e:
                self.post_hook(full, exception=e)
                if isinstance(e, skip):  # this config's failure, not the benchmark's
                    raise ConfigFailed() from e
                raise
            self.post_hook(full, exception=None)

        if self.user_do_bench is not None:
            return self.user_do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
        if self.use_cuda_graph:
            return bench.do_bench_cudagraph(kernel_call, rep=self.rep_ms,
                                            quantiles=(0.5, 0.2, 0.8))
        return bench.do_bench(kernel_call, warmup=self.warmup_ms, rep=self.rep_ms,
                              quantiles=(0.5, 0.2, 0.8))

    # ---- compiling ahead of timing ----------------------------------------------------------
    def precompile(self, configs, args, kwargs, grid) -> dict:
        """Compiles and loads every config's variant not yet compiled, concurrently; returns
        {config: note} of those that failed."""
        jobs, where, notes = [], [], {}
        seen = set()
        for c in configs:
            if c.pre_hook is not None:  # it may set what the variant depends on (the
                # descriptors' block shapes of Triton's attention tutorial)
                c.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **c.all_kwargs()})
            resolved = resolve(self.fn, args, {**kwargs, **c.all_kwargs()})
            if resolved is None:
                continue  # a wrapper we cannot see through: compiled on its first timing
            jf, a, kw = resolved
            try:
                values, opts = launcher.bind(jf, a, kw)
                vkey = launcher.variant_key(jf, values, opts)
                if vkey in jf.cache or (id(jf), vkey) in seen:
                    continue
                seen.add((id(jf), vkey))
                jobs.append(launcher.variant_source(jf, values, opts))
            except Exception as e:  # bad options (num_ctas on sm_80, ...): this config only
                notes[c] = _first_line(e)
                continue
            where.append((c, jf, vkey))
        results = compile_many(jobs)
        for (c, jf, vkey), r in zip(where, results):
            if isinstance(r, BaseException):
                notes[c] = _first_line(r)
                continue
            try:
                launcher.install_variant(jf, vkey, r)
            except RESOURCE_ERRORS as e:
                notes[c] = _first_line(e)
        return notes

    def warmup(self, *args, grid=(1,), **kwargs):
        """Compiles every config's variant for these arguments, launching nothing."""
        nargs = dict(zip(self.arg_names, args), **kwargs)
        return self.precompile(self.prune_configs(kwargs, nargs), args, kwargs, grid)

    # ---- the disk cache ----------------------------------------------------------------------
    def _disk_path(self, key, configs) -> str:
        from ..compiler.driver import compiler_hash  # loads MLIR: only when caching on disk
        target = "interpreter" if self.base_fn.interpret else launcher.device_target()
        h = hashlib.sha256("\0".join([compiler_hash(), self.base_fn.cache_key, target,
                                      repr(key), *map(str, configs)]).encode()).hexdigest()
        return os.path.join(cache_dir(), "autotune", h[:2], f"{self.__name__[:100]}-{h}.json")


def _read_choice(path, configs):
    try:
        with open(path) as f:
            best = json.load(f)["best"]
    except (OSError, ValueError, KeyError):
        return None
    return next((c for c in configs if str(c) == best), None)


def _write_choice(path, key, best, timings):
    data = {"key": repr(key), "best": str(best),
            "timings_ms": {str(c): _time_of(t) for c, t in timings.items()}}
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache is not an error


def resolve(fn, args, kwargs):
    """(the innermost @jit function, args, kwargs as it gets them) through heuristics
    wrappers; None through anything else."""
    while not isinstance(fn, JITFunction):
        if not isinstance(fn, Heuristics):
            return None
        kwargs = fn.apply(args, kwargs)
        fn = fn.fn
    return fn, args, kwargs


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=None, rep=None, use_cuda_graph=False,
             do_bench=None, cache_results=False):
    """Decorates a kernel (over or under `@heuristics`, over `@jit`) to pick the fastest of
    `configs` per value of the `key` arguments (and the arguments' dtypes).

    prune_configs_by: {"early_config_prune": f(configs, nargs, **kwargs) -> configs,
    "perf_model": f(**nargs, **kwargs, **config) -> estimated time, "top_k": how many of the
    best estimates to time (an int, or a fraction <= 1.0)}.  reset_to_zero / restore_value:
    argument names zeroed before / restored after each timed run.  pre_hook(nargs) /
    post_hook(nargs, exception) run around each timed run after those.  warmup / rep: the ms
    `do_bench` spends; use_cuda_graph: time with `do_bench_cudagraph`; do_bench: your own
    `f(kernel_call, quantiles) -> ms`.  cache_results (or TILEWORK_CACHE_AUTOTUNING=1): keep
    the choice on disk."""
    def deco(fn):
        fn = _as_kernel(fn)
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value,
                         pre_hook, post_hook, prune_configs_by, warmup, rep, use_cuda_graph,
                         do_bench, cache_results)
    return deco


class Heuristics(KernelInterface):
    """Sets constexprs from the other arguments: `values` maps a name to f(nargs) -> value."""

    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.base_fn = fn if isinstance(fn, JITFunction) else fn.base_fn
        self.arg_names = list(arg_names)
        self.values = dict(values)
        self.__name__ = self.base_fn.__name__
        self.__doc__ = self.base_fn.__doc__

    def apply(self, args, kwargs) -> dict:
        """kwargs with each heuristic's value; each sees the arguments by name and the values
        set before it (one dict per heuristic, as Triton gives)."""
        kwargs = dict(kwargs)
        nargs = dict(zip(self.arg_names, args))
        nargs.update(kwargs)
        last = len(self.values) - 1
        for i, (name, heur) in enumerate(self.values.items()):
            v = kwargs[name] = heur(nargs if i == last else dict(nargs))
            nargs[name] = v
        return kwargs

    def run(self, *args, grid, warmup=False, **kwargs):
        if not warmup:
            return self._launch(grid, args, kwargs)
        return self.fn.run(*args, grid=grid, warmup=warmup, **self.apply(args, kwargs))

    def _launch(self, grid, args, kwargs):
        kwargs = self.apply(args, kwargs)
        fn = self.fn
        if isinstance(fn, JITFunction):
            return fn[grid](*args, **kwargs)
        return fn._launch(grid, args, kwargs)

    def warmup(self, *args, grid=(1,), **kwargs):
        return self.run(*args, grid=grid, warmup=True, **kwargs)


def heuristics(values):
    """Decorates a kernel (over or under `@autotune`, over `@jit`): each entry of `values`,
    name -> f(nargs), sets that constexpr from the launch's arguments (by name) before the
    launch, e.g. `{"EVEN_K": lambda a: a["K"] % a["BLOCK_K"] == 0}`."""
    def deco(fn):
        fn = _as_kernel(fn)
        return Heuristics(fn, fn.arg_names, values)
    return deco
