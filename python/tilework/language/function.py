"""`JITFunction`: a function written in the tile language (`@jit`), with its source,
parameters and constexprs, and the binder of its launch arguments.

The frontend inlines and compiles these, `tl` helpers written in the language itself
(`random`) are these, and the interpreter runs them.  Launching one (`kernel[grid](...)`,
`warmup`) calls the runtime's launcher, which `tilework.runtime.jit` installs here: the
language layer does not import the runtime.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
import textwrap

from . import core

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "target", "debug", "opt_level",
                  "maxnreg", "tma", "tma_store", "tma_store_guard",
                  "launch_cooperative_grid")
# accepted at launch for Triton's sake and dropped: libdevice is written in the language
# (`tl.extra.libdevice`), so there is no bitcode to link
IGNORED_OPTIONS = ("extern_libs",)


def is_constexpr_annotation(ann) -> bool:
    """Whether a parameter annotation marks a `tl.constexpr` (also as a string)."""
    if ann is core.constexpr:
        return True
    if isinstance(ann, str):
        return ann.split(".")[-1] == "constexpr"
    return False


def is_constexpr_global(g: dict, name: str) -> bool:
    """Whether module global `name` is declared `name: tl.constexpr = value` (Triton's
    annotated constexpr global: a kernel may read it, and its value is in the cache key)."""
    return name in g and is_constexpr_annotation(g.get("__annotations__", {}).get(name))


def is_const_annotation(ann) -> bool:
    """Whether a parameter annotation is `tl.const` (a read-only pointer), also as a string."""
    if ann is core.const:
        return True
    return isinstance(ann, str) and ann.split(".")[-1] == "const"


class JITFunction:
    """A kernel (or a function called from kernels) written in the tile language."""

    def __init__(self, fn, interpret: bool | None = None, do_not_specialize=(),
                 launch_metadata=None, debug: bool | None = None, noinline: bool = False):
        self.fn = fn
        # Triton's per-function options: `debug` is this kernel's default for the launch
        # option of that name; `noinline` is accepted and changes nothing (every call is
        # inlined, which gives the values an outlined call would)
        self.debug = debug
        self.noinline = bool(noinline)
        # callable(grid, kernel, args) -> dict (name, flops, bytes): read by the profiler only
        self.launch_metadata = launch_metadata
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.constexprs = [n for n, p in self.signature.parameters.items()
                           if is_constexpr_annotation(p.annotation)]
        self.const_params = [n for n, p in self.signature.parameters.items()
                             if is_const_annotation(p.annotation)]
        self.do_not_specialize = set(do_not_specialize)
        self._is_constexpr = [n in self.constexprs for n in self.arg_names]
        self._key_and_params = None  # generated on the first launch (launcher.py)
        self._native_launch = None   # the native launcher's entry (False: none), likewise
        self._nospec = [n in self.do_not_specialize for n in self.arg_names]
        # read once, at decoration (as Triton does): the launch path reads no environment
        self.interpret = interpret if interpret is not None else \
            os.environ.get("TILEWORK_INTERPRET", "0") not in ("", "0")
        self._no_source = None
        try:
            lines, self.first_line = inspect.getsourcelines(fn)
            self.filename = inspect.getsourcefile(fn) or "<unknown>"
        except (OSError, TypeError) as e:
            # a function built by `exec` has no source: the interpreter runs its code object
            # as Triton's does; compiling it needs the source (`parse` says so)
            if not self.interpret:
                raise TypeError(f"@jit needs the source of {fn.__name__}: {e}") from None
            self._no_source = f"@jit needs the source of {fn.__name__} to compile it: {e}"
            lines, self.first_line = [], fn.__code__.co_firstlineno
            self.filename = fn.__code__.co_filename
        raw = "".join(lines)
        self.src = textwrap.dedent(raw)
        first = raw.splitlines()[0] if raw else ""
        self.col_offset = len(first) - len(first.lstrip())
        # decorators are part of the source; the def line is the first line after them
        self._tree = None
        self.cache: dict = {}        # (target, specialization, options) -> loaded kernel
        self._cache_key = None       # the sources' hash (cache_key adds the globals' values)
        self._deps: list = []
        self._names = None
        self._binder = self._make_binder()

    # ---- source --------------------------------------------------------------------------
    def parse(self) -> ast.Module:
        if self._no_source:
            raise TypeError(self._no_source)
        if self._tree is None:
            tree = ast.parse(self.src)
            fdef = tree.body[0]
            fdef.decorator_list = []
            self._tree = tree
        return self._tree

    @property
    def cache_key(self) -> str:
        """Hash of this function's source, of every @jit function it references, and of the
        values of the globals they read (constexprs, dtypes), as Triton's key: editing
        `SCALE = tl.constexpr(2.0)` compiles anew.  The sources are hashed once; the
        globals' values are read each time (a module may rebind them)."""
        if self._cache_key is None:
            h = hashlib.sha256(self.src.encode())
            seen = {id(self)}
            self._deps = list(self._dependencies(seen))
            for dep in self._deps:
                h.update(dep.src.encode())
            for f in [self] + self._deps:  # constexpr functions' code decides values too
                g = f.fn.__globals__
                for name in f._global_names():
                    if isinstance(g.get(name), ConstexprFunction):
                        h.update(g[name].src.encode())
                    elif getattr(g.get(name), "__tilework_aggregate__", False):
                        h.update(g[name].__tilework_source__.encode())  # (its whole class)
            self._cache_key = h.hexdigest()
        h = hashlib.sha256(self._cache_key.encode())
        for f in [self] + self._deps:
            for name, value in f.global_values():
                h.update(f"{f.__module__}.{f.__name__}:{name}={value!r}\0".encode())
        return h.hexdigest()

    def _global_names(self) -> list:
        if self._names is None:
            self._names = sorted({n.id for n in ast.walk(self.parse())
                                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)})
        return self._names

    def global_values(self):
        """(name, value) of the constexpr and dtype globals this function's source reads
        (`tl.constexpr(v)` values, and globals declared `name: tl.constexpr = v`)."""
        g = self.fn.__globals__
        for name in self._global_names():
            v = g.get(name)
            if isinstance(v, core.constexpr):
                yield name, v.value
            elif isinstance(v, core.dtype) or is_constexpr_global(g, name):
                yield name, v

    def _dependencies(self, seen):
        names = {n.id for n in ast.walk(self.parse()) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(self.parse()) if isinstance(n, ast.Attribute)}
        for name in sorted(names):
            v = self.fn.__globals__.get(name)
            v = v.fn if isinstance(v, extern_names) else v
            # (an aggregate class: its @jit methods)
            for d in getattr(v, "__tilework_jit_members__", None) or [v]:
                if isinstance(d, JITFunction) and id(d) not in seen:
                    seen.add(id(d))
                    yield d
                    yield from d._dependencies(seen)

    def __call__(self, *args, **kwargs):
        b = core.active_builder()
        if b is not None:  # inside an interpreted kernel: Python (the interpreter's version of
            run = getattr(b, "python_of", None)  # it: rewritten, @jit callees replaced)
            return (run(self) if run is not None else self.fn)(*args, **kwargs)
        raise RuntimeError(f"@jit function {self.__name__} is called from kernels or launched "
                           f"with {self.__name__}[grid](...), not called directly")

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__name__})"

    # ---- binding ---------------------------------------------------------------------------
    def _make_binder(self):
        """A generated function binding launch arguments in one Python call (fast, and
        Python's own messages for missing or unexpected arguments).  It returns the kernel's
        arguments and the launch options in `LAUNCH_OPTIONS` order; an option the kernel has
        a parameter of the same name for (e.g. a constexpr `num_stages`) binds as the kernel's
        argument and stays None as an option."""
        params = []
        ns = {}
        for name, p in self.signature.parameters.items():
            if p.kind == p.VAR_KEYWORD:
                raise TypeError(f"JIT functions do not support **kwargs ({self.__name__})")
            if p.kind == p.VAR_POSITIONAL:  # (a function kernels call may take `*args`)
                return functools.partial(_no_varargs_launch, self.__name__)
            if p.default is inspect.Parameter.empty:
                params.append(name)
            else:
                ns[f"_d_{name}"] = p.default
                params.append(f"{name}=_d_{name}")
        own = [o for o in LAUNCH_OPTIONS if o not in self.signature.parameters]
        ignored = [o for o in IGNORED_OPTIONS if o not in self.signature.parameters]
        ns["_o_debug"] = self.debug  # `@jit(debug=...)`: the default of the launch option
        opts = ", ".join(f"{o}=_o_debug" if o == "debug" else f"{o}=None"
                         for o in own + ignored)
        body = ", ".join(self.arg_names)
        outs = ", ".join(o if o in own else "None" for o in LAUNCH_OPTIONS)
        sig = ", ".join(params + (["*", opts] if own or ignored else []))
        src = (f"def {self.__name__}({sig}):\n"
               f"    return ({body}{',' if len(self.arg_names) == 1 else ''}), ({outs},)\n")
        exec(src, ns)
        return ns[self.__name__]

    # ---- launching -------------------------------------------------------------------------
    def __getitem__(self, grid):
        run = _launch
        nat = self._native_launch
        if nat and run is _native_run:  # the runtime's native launcher: `nat[grid]` binds
            return nat[grid]            # and launches in one C call
        return lambda *args, **kwargs: run(self, grid, args, kwargs)

    def run(self, *args, grid, warmup=False, **kwargs):
        """`self[grid](*args, **kwargs)` (or, with warmup=True, `self.warmup(...)`): the call
        the autotuner and heuristics wrappers make, as in Triton."""
        if not warmup:
            nat = self._native_launch
            if nat and _launch is _native_run:  # (as `__getitem__`: bound in C)
                return nat[grid](*args, **kwargs)
        return _launch(self, grid, args, kwargs, launch=not warmup)

    def warmup(self, *args, grid=(1,), **kwargs):
        """Compiles the variant these arguments select, without launching (as Triton's).
        With `target=` ("sm_90a", "gfx942", ...) it compiles ahead of time with no GPU and
        returns the CompiledKernel (`.asm[stage]`, `.metadata`); the arguments may then be
        placeholders: `'*fp32:16'`, `'fp16'`, tl or torch dtypes.  Without, it compiles and
        loads for the current device."""
        return _warmup(self, grid, args, kwargs)


class ConstexprFunction:
    """`@constexpr_function` (Triton 3.6's `triton.constexpr_function`): a Python function a
    kernel calls at compile time on constexpr values; its arguments are unwrapped and its result
    is a compile-time value (interpreted: the plain value).  Its source is in the cache key of
    the kernels that name it."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "constexpr_function")
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        try:
            self.src = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError):
            self.src = repr(fn.__code__.co_code)

    def __call__(self, *args, **kwargs):
        if any(isinstance(v, core.tensor) for v in (*args, *kwargs.values())):
            # (interpreted; the code generator says the same of any Python function)
            raise TypeError(f"unsupported call to `{self.__name__}` with tile arguments: only "
                            f"tl builtins and @jit functions take tiles")
        unwrap = lambda v: v.value if isinstance(v, core.constexpr) else v  # noqa: E731
        # (the code generator makes the result a compile-time value, as any Python call's)
        return self.fn(*map(unwrap, args), **{k: unwrap(v) for k, v in kwargs.items()})

    def __repr__(self):
        return f"constexpr_function({self.fn!r})"


def constexpr_function(fn):
    """Wraps a Python function so kernels call it at compile time on constexpr arguments, with a
    constexpr result (Triton's `triton.constexpr_function`); from host code it is `fn`."""
    return ConstexprFunction(fn)


class extern_names:
    """`fn` (a @jit function or a builtin) as Triton's extern wrappers declare it, with the
    parameters `arg0`, `arg1`, ... (libdevice's): those keywords are the positional arguments
    of the same places; `fn`'s own parameter names still bind.  The code generator and the
    interpreter call `bind` and then `fn` itself."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        params = (fn.signature if isinstance(fn, JITFunction) else inspect.signature(fn)).parameters
        self.arity = sum(p.default is inspect.Parameter.empty and
                         p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                         for p in params.values())

    def bind(self, args, kwargs):
        """(args, kwargs) with the `argK` keywords moved to their places."""
        named = {k: v for k, v in kwargs.items() if k.startswith("arg") and k[3:].isdigit()}
        if not named:
            return list(args), kwargs
        args = list(args)
        places = {}
        for k, v in named.items():
            i = int(k[3:])
            if i >= self.arity:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{k}'")
            if i < len(args):
                raise TypeError(f"{self.__name__}() got multiple values for argument '{k}'")
            places[i] = v
        missing = [f"arg{i}" for i in range(len(args), len(args) + len(places)) if i not in places]
        if missing:
            raise TypeError(f"{self.__name__}() missing required argument '{missing[0]}'")
        args += [places[i] for i in sorted(places)]
        return args, {k: v for k, v in kwargs.items() if k not in named}

    def __call__(self, *args, **kwargs):
        args, kwargs = self.bind(args, kwargs)
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"extern_names({self.fn!r})"


def _no_varargs_launch(name, *args, **kwargs):
    raise TypeError(f"@jit kernel {name} cannot be launched: a kernel cannot take *args "
                    f"(a @jit function that kernels call can)")


def _no_launcher(fn, *args, **kwargs):
    raise RuntimeError(f"cannot launch {fn.__name__}: tilework.runtime is not imported")


_launch = _no_launcher  # run(fn, grid, args, kwargs, launch=True), set by install_launcher
_warmup = _no_launcher  # warmup(fn, grid, args, kwargs), likewise
_native_run = None      # the `run` whose kernels' `_native_launch[grid]` may stand for it


def install_launcher(run, warmup=None, native=False):
    """Sets what `kernel[grid](...)` and `kernel.warmup(...)` call (the runtime does, with
    `launcher.run` and `launcher.warmup`).  `native`: while `run` is installed, a kernel's
    `_native_launch` (set by `run`) is subscripted with the grid instead, and calls `run`
    itself for what it does not handle (another launcher installed, e.g. the profiler's,
    is always called)."""
    global _launch, _warmup, _native_run
    _launch = run
    if native:
        _native_run = run
    if warmup is not None:
        _warmup = warmup


def jit(fn=None, *, interpret: bool | None = None, do_not_specialize=(), launch_metadata=None,
        debug: bool | None = None, noinline: bool | None = None):
    """Decorates a kernel, or a function kernels call.  `interpret=True` (or the environment
    variable TILEWORK_INTERPRET=1) runs it on the CPU with numpy instead of compiling.
    `launch_metadata(grid, kernel, args) -> dict` (as Triton's) names a launch and gives its
    `flops` and `bytes` to the profiler (`tilework.profile()`); it is called only then.
    `debug=True` (Triton's) makes `debug` the kernel's default launch option (device asserts
    checked); a launch's own `debug=` still wins.  `noinline=True` (Triton's) is accepted: the
    function is inlined all the same, which changes no value.
    Applied over `@autotune`/`@heuristics` (which wrap a plain function in `@jit` themselves),
    it re-wraps their innermost function with these options."""
    def deco(f):
        if isinstance(f, JITFunction):
            return f
        rewrap = getattr(f, "rewrap_innermost", None)  # an autotuner or heuristics wrapper
        if rewrap is not None:
            return rewrap(lambda g: JITFunction(g, interpret=interpret,
                                                do_not_specialize=do_not_specialize,
                                                launch_metadata=launch_metadata,
                                                debug=debug, noinline=bool(noinline)))
        return JITFunction(f, interpret=interpret, do_not_specialize=do_not_specialize,
                           launch_metadata=launch_metadata, debug=debug,
                           noinline=bool(noinline))
    return deco(fn) if fn is not None else deco


def installed_launcher():
    """What `kernel[grid](...)` calls now (the profiler wraps it while it records)."""
    return _launch
