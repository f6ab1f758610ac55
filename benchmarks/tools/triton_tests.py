"""Runs Triton's own language tests against tilework's interpreter, `triton` bound to tilework
(issue 14's conformance measure), and groups the failures by their first error line.

    python benchmarks/tools/triton_tests.py DIR [FILE ...] [--pytest "-k sort"] [--out log]

DIR holds Triton's test files (python/test/unit/language of a Triton checkout: not part of
this repository, nothing of Triton's is copied here).  This script writes no test code: it
loads itself as a pytest plugin that binds `triton`, `triton.language` (and its `core`,
`extra`, `random`, ...) to tilework's modules before the tests import them, sets
TRITON_INTERPRET=1 / TILEWORK_INTERPRET=1, gives the `device` fixture "cpu" (torch CPU tensors
run the interpreter), runs the tests Triton marks `interpreter` (`--all`: every test), and
provides our own versions of the `triton._internal_testing` helpers
the tests import (random inputs per dtype, conversions to and from torch as Triton's: copies
keeping strides), and `triton.compile(triton.compiler.ASTSource(...))` as tilework.compile for
sm_90a (test_compile_errors.py compiles without launching).  Triton's own
conftest.py in DIR, if any, is not used (`--noconftest`).
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shlex
import subprocess
import sys
import types

# ---- the plugin side: loaded by pytest in the child process ---------------------------------

INT = ["int8", "int16", "int32", "int64"]
UINT = ["uint8", "uint16", "uint32", "uint64"]
FLOAT = ["float16", "float32", "float64"]


def _internal_testing():
    """Our own versions of the helpers Triton's tests import from `triton._internal_testing`."""
    import numpy as np
    import torch
    import tilework
    import tilework.language as tl

    m = types.ModuleType("triton._internal_testing")
    m.int_dtypes, m.uint_dtypes, m.float_dtypes = list(INT), list(UINT), list(FLOAT)
    m.integral_dtypes = INT + UINT
    m.float_dtypes_with_bfloat16 = FLOAT + ["bfloat16"]
    m.dtypes = INT + UINT + FLOAT
    m.dtypes_with_bfloat16 = m.dtypes + ["bfloat16"]
    m.torch_float8_dtypes = ["float8_e4m3fn", "float8_e5m2"]
    m.torch_dtypes = ["bool"] + INT + ["uint8"] + FLOAT + ["bfloat16"]
    for name in ("is_cuda", "is_hip", "is_hip_cdna", "is_hip_cdna2", "is_hip_cdna3",
                 "is_hip_cdna4", "is_hip_gfx11", "is_hip_gfx12", "is_xpu", "is_hopper",
                 "is_blackwell", "is_hip_mi200", "is_hip_mi300", "is_hip_mi350", "is_sm12x"):
        setattr(m, name, lambda: False)
    m.is_interpreter = lambda: True
    m.get_arch = lambda: ""
    # Triton's type_canonicalisation_dict: torch's names of the 8-bit floats and bool too
    canonical = {"bool": "int1", "float8_e4m3fn": "float8e4nv", "float8_e5m2": "float8e5",
                 "float8_e4m3fnuz": "float8e4b8", "float8_e5m2fnuz": "float8e5b16"}
    m.str_to_triton_dtype = lambda s: getattr(tl, canonical.get(s, s))
    m.torch_dtype_name = lambda dt: str(dt).split(".")[-1]

    def numpy_random(shape, dtype_str, rs=None, low=None, high=None):
        rs = rs if rs is not None else np.random.RandomState(seed=17)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if dtype_str in INT + UINT:
            info = np.iinfo(getattr(np, dtype_str))
            lo = info.min if low is None else max(low, info.min)
            hi = info.max if high is None else min(high, info.max)
            x = rs.randint(lo, hi, shape, dtype=getattr(np, dtype_str))
            x[x == 0] = 1  # (no zeros: these feed divisions)
            return x
        if dtype_str and "float8" in dtype_str:
            return rs.randint(20, 40, shape, dtype=np.int8)
        if dtype_str in FLOAT:
            return rs.normal(0, 1, shape).astype(dtype_str)
        if dtype_str == "bfloat16":  # (values bfloat16 holds exactly)
            return (rs.normal(0, 1, shape).astype(np.float32).view(np.uint32)
                    & np.uint32(0xffff0000)).view(np.float32)
        if dtype_str in ("bool", "int1", "bool_"):
            return rs.normal(0, 1, shape) > 0.0
        raise ValueError(f"numpy_random: unknown dtype {dtype_str}")

    def to_triton(x, device, dst_type=None):
        # a copy keeping x's strides (torch.tensor, as Triton's helper): the kernel's writes
        # must not reach x, and np.empty_like of a transposed array stays transposed
        t = torch.tensor(x, device=device)
        if dst_type and "float8" in dst_type and hasattr(tilework, "reinterpret"):
            return tilework.reinterpret(t, getattr(tl, dst_type))
        if dst_type in UINT:
            return t.to(getattr(torch, dst_type))
        if dst_type == "bfloat16":
            return t.to(torch.bfloat16)
        return t

    def to_numpy(x):
        base = getattr(x, "base", None)  # a reinterpreted tensor (triton.reinterpret)
        if isinstance(base, torch.Tensor) and not isinstance(x, torch.Tensor):
            x = base
        if x.dtype == torch.bfloat16:
            return x.float().cpu().numpy()
        return x.cpu().numpy()

    m.numpy_random, m.to_triton, m.to_numpy = numpy_random, to_triton, to_numpy
    m.tma_dtypes = sorted(set(m.dtypes_with_bfloat16) - {"int64", "uint64", "float64"})

    def unwrap_tensor(t):
        base = getattr(t, "base", None)
        return base if isinstance(base, torch.Tensor) and not isinstance(t, torch.Tensor) else t

    m.unwrap_tensor = unwrap_tensor
    return m


def _scipy_stats():
    """`scipy.stats.kstest(x, 'uniform', args=(lo, width))`'s statistic, where scipy is
    missing (test_random.py imports it)."""
    import numpy as np
    stats = types.ModuleType("scipy.stats")

    def kstest(x, dist, args=(0, 1)):
        assert dist == "uniform", dist
        u = np.sort((np.asarray(x, np.float64) - args[0]) / args[1])
        n = len(u)
        i = np.arange(1, n + 1)
        d = max(np.max(i / n - u), np.max(u - (i - 1) / n))
        return types.SimpleNamespace(statistic=d)

    stats.kstest = kstest
    scipy = types.ModuleType("scipy")
    scipy.stats = stats
    return {"scipy": scipy, "scipy.stats": stats}


def _ast_source(fn, signature, constexprs=None, attrs=None):
    """Triton's `triton.compiler.ASTSource(fn, signature, constexprs)`, for `_compile`."""
    return types.SimpleNamespace(fn=fn, signature=dict(signature), constexprs=constexprs or {})


def _compile(src, target=None, options=None):
    """Triton's `triton.compile(ASTSource)` without a GPU: tilework.compile for sm_90a, the
    signature's `constexpr` entries dropped (their values are `constexprs`)."""
    import tilework
    sig = {n: t for n, t in src.signature.items() if t != "constexpr"}
    return tilework.compile(src.fn, target="sm_90a", signature=sig,
                            constexprs=dict(src.constexprs), cache=False)


def _install():
    """`triton` and its submodules as tilework's."""
    os.environ["TRITON_INTERPRET"] = "1"
    os.environ["TILEWORK_INTERPRET"] = "1"
    import tilework
    import tilework.language as tl
    from tilework.errors import CompilationError
    from tilework.frontend.semantic import SemanticError

    t = types.ModuleType("triton")
    for name in ("jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2",
                 "JITFunction", "CompilationError", "set_allocator", "language", "reinterpret",
                 "TensorWrapper", "InterpreterError"):
        setattr(t, name, getattr(tilework, name))
    for name in ("reinterpret", "TensorWrapper", "constexpr_function"):  # (where provided)
        if hasattr(tilework, name):
            setattr(t, name, getattr(tilework, name))
    t.__version__ = "3.6.0"
    t.TritonError = (CompilationError, SemanticError)  # what tilework raises for both
    errors = types.ModuleType("triton.compiler.errors")
    errors.CompilationError = CompilationError
    errors.CompileTimeAssertionFailure = tilework.errors.CompileTimeAssertionFailure
    compiler = types.ModuleType("triton.compiler")
    compiler.errors, compiler.CompilationError = errors, CompilationError
    compiler.ASTSource, t.compile = _ast_source, _compile
    runtime = types.ModuleType("triton.runtime")
    rt_errors = types.ModuleType("triton.runtime.errors")
    rt_errors.InterpreterError = tilework.InterpreterError
    runtime.errors = rt_errors
    import tilework.runtime.driver as drv
    runtime.driver = drv.driver if hasattr(drv, "driver") else drv
    t.compiler, t.runtime = compiler, runtime
    testing = types.ModuleType("triton.testing")
    from tilework.runtime.bench import do_bench
    testing.do_bench = do_bench
    t.testing = testing
    tools = types.ModuleType("triton.tools")
    import tilework.tools.tensor_descriptor as td
    tools.tensor_descriptor = td
    t.tools = tools
    mods = {"triton": t, "triton.language": tl, "triton.language.core": tl.core,
            "triton.language.extra": tl.extra, "triton.language.extra.libdevice":
            tl.extra.libdevice, "triton.language.extra.cuda": tl.extra.cuda,
            "triton.language.extra.cuda.libdevice": tl.extra.libdevice,
            "triton.language.math": tl.math, "triton.language.random": tl.random,
            "triton.compiler": compiler, "triton.compiler.errors": errors,
            "triton.runtime": runtime, "triton.runtime.errors": rt_errors,
            "triton.testing": testing, "triton.tools": tools,
            "triton.tools.tensor_descriptor": td,
            "triton._internal_testing": _internal_testing()}
    try:
        import scipy.stats  # noqa: F401
    except ImportError:
        mods.update(_scipy_stats())
    sys.modules.update(mods)


def pytest_configure(config):  # (pytest hook: this module is loaded with `-p`)
    _install()


def _fixtures():
    import pytest

    @pytest.fixture
    def device():
        return "cpu"

    @pytest.fixture
    def with_allocator():
        yield

    return device, with_allocator


if "pytest" in sys.modules and __name__ != "__main__":
    device, with_allocator = _fixtures()


# ---- the driver side ------------------------------------------------------------------------

def group_failures(log: str) -> collections.Counter:
    """Failure causes from pytest's `-rfE` summary lines: the error text, numbers and quoted
    names blurred so that one cause is one group."""
    causes = collections.Counter()
    for line in log.splitlines():
        if not line.startswith(("FAILED ", "ERROR ")):
            continue
        _, _, msg = line.partition(" - ")
        msg = re.sub(r"/\S+:\d+:\d+: ", "", msg)  # (a location: one cause is one group)
        msg = re.sub(r"\d+", "N", msg)[:160] or line.split("::")[-1].split("[")[0]
        causes[msg] += 1
    return causes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--pytest", default="", help="more pytest arguments")
    ap.add_argument("--out", default=None, help="write pytest's output here")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--all", action="store_true", help="also the tests Triton does not mark "
                    "`interpreter` (its interpreter CI runs `-m interpreter` only)")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    files = [os.path.join(args.dir, f) for f in args.files] or [args.dir]
    env = dict(os.environ, COLUMNS="600", PYTHONPATH=os.pathsep.join(
        [here, args.dir, os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "triton_tests",
           "--noconftest", "-rfE", "--tb=no", "-W", "ignore",
           *([] if args.all else ["-m", "interpreter"]), *files, *shlex.split(args.pytest)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=args.dir)
    log = res.stdout + res.stderr
    if args.out:
        with open(args.out, "w") as f:
            f.write(log)
    print("\n".join(log.strip().splitlines()[-1:]))
    for msg, n in group_failures(log).most_common(args.top):
        print(f"{n:6d}  {msg}")


if __name__ == "__main__":
    main()
