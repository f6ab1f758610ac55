"""Runs one fuzz program (fuzz_gen.Gen) in the interpreter and compiled, and compares.

The compiled side: without a GPU, the `llir` stage of an sm_90a compile run on this CPU by
gpu_sim.py (one OS thread per GPU thread; atomics as LLVM atomicrmw); with `gpu=True`, launched
on the device with torch tensors.  Exact outputs must match bit for bit (NaNs equal to NaNs);
inexact ones (fuzz_gen's `exact` flag) within `close`: |a - b| <= TOL ulp (of fp16 when the
program rounds to fp16/bf16 anywhere, else of fp32 if it does, else of the output dtype) of
max(|ref|, 2^-8 * max|ref|) elementwise (an
infinity counts as the dtype's largest value there: an order of rounding may overflow); in a
program with a float sum or cumsum, also within SUM_TOL ulp of max|ref|: a sum added in
another order (the compiled tree, numpy's sequence) differs by ulps of its terms, not of its
result, which may cancel (seeds 501 and 707: 1.8 and 1.5 ulp of max|ref|, 300 of the element).
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # test/python: gpu_sim, simt_emulator

from fuzz_gen import FLOATS, Gen, is_int  # noqa: E402

TOL = 256  # ulp (float32: 3e-5 relative), covering approximate exp2/log2/sin/rsqrt chains
SUM_TOL = 16  # ulp of an output's largest magnitude, for programs that sum floats
TARGET = "sm_90a"


def load_kernel(src: str, path: str):
    with open(path, "w") as f:
        f.write(src)
    name = "fuzz_prog_" + os.path.basename(path).replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.kernel


def make_inputs(g: Gen, rng: np.random.Generator):
    """(args, kwargs constexprs, grid, out dtypes, sizes) of a program."""
    if g.two_d:
        m = int(rng.integers(1, 3 * g.bm + 1))
        n = int(rng.integers(1, 3 * g.bn + 1))
        size, grid, const = m * n, (-(-m // g.bm), -(-n // g.bn)), {"BM": g.bm, "BN": g.bn}
    else:
        m = 0
        n = int(rng.integers(1, 3 * g.block + 1))
        size, grid, const = n, (-(-n // g.block),), {"BLOCK": g.block}

    def arr(dt):
        d = np.dtype(dt)
        if d.kind == "f":
            scale = rng.choice([1.0, 4.0, 100.0])
            a = (rng.standard_normal(size) * scale).astype(d)
            if rng.random() < 0.3:
                a = np.round(a)  # integer-valued floats: ties and exact sums
            return a
        info = np.iinfo(d)
        if rng.random() < 0.5:
            return rng.integers(max(info.min, -100), min(info.max, 100), size, endpoint=True,
                                dtype=d)
        return rng.integers(info.min, info.max, size, endpoint=True, dtype=d)
    x, y = arr(g.dx), arr(g.dy)
    outs = [np.full(size, _sentinel(v.dt), np.dtype(v.dt)) for v in g.outs]
    if g.atomic:
        op, dt, csize = g.atomic
        cnt = rng.integers(-50 if dt != "uint32" else 0, 50, csize).astype(dt)
    else:
        cnt = np.zeros(1, np.int32)
    s0, s1 = int(rng.integers(-4, 5)), int(rng.integers(0, 4))
    return [x, y, *outs, cnt, m, n, s0, s1], const, grid


def _sentinel(dt):
    return np.nan if dt in FLOATS else 77


def signature(g: Gen):
    import tilework.language as tl
    P = tl.pointer_type
    sig = {"x_ptr": P(getattr(tl, g.dx)), "y_ptr": P(getattr(tl, g.dy))}
    for i, v in enumerate(g.outs):
        sig[f"out{i}_ptr"] = P(getattr(tl, v.dt))
    sig["cnt_ptr"] = P(getattr(tl, g.atomic[1]) if g.atomic else tl.int32)
    for s in ("M", "N", "s0", "s1"):
        sig[s] = tl.int32
    return sig


def _sums_floats(g: Gen, src: str) -> bool:
    """Whether the program may add floats in a reduction or scan (an integer one is exact)."""
    return bool(re.search(r"tl\.(sum|cumsum)\(", src)) and (
        _least_precise(g, src) is not None or "float64" in src or "float64" in (g.dx, g.dy))


def _least_precise(g: Gen, src: str):
    """The least precise float type a program computes in (its rounding reaches any inexact
    output, whatever that output's type)."""
    for dt in ("float16", "float32"):
        if dt in src or dt in (g.dx, g.dy):
            return np.dtype(dt)
    return None


def close(a: np.ndarray, ref: np.ndarray, exact: bool, precision=None,
          zero_sign: bool = True, sums: bool = False) -> bool:
    """`precision`: the float type whose epsilon the tolerance uses (default: a's), the
    least precise one the program rounds to (fp16 covers bf16 round trips, of exact values).
    `zero_sign`: whether -0.0 and 0.0 differ (not after tl.maximum/minimum of floats, which
    may return either zero, as in Triton).  `sums`: the program sums floats (tl.sum, tl.cumsum),
    so differences up to SUM_TOL ulp of max|ref| pass too."""
    if a.dtype != ref.dtype:
        return False
    if exact or a.dtype.kind != "f":
        return a.tobytes() == ref.tobytes() or (
            a.dtype.kind == "f" and np.array_equal(a, ref, equal_nan=True) and
            (not zero_sign or np.array_equal(np.signbit(a), np.signbit(ref))))
    big = np.finfo(a.dtype).max  # (rounded differently, a value may overflow on one side)
    a, ref = (np.where(np.isinf(v), np.sign(v) * big, v) for v in (a, ref))
    both_nan = np.isnan(a) & np.isnan(ref)
    fin = np.isfinite(ref)
    scale = np.max(np.abs(ref[fin])) if fin.any() else 0.0
    eps = max(np.finfo(a.dtype).eps, np.finfo(precision).eps if precision else 0.0)
    with np.errstate(all="ignore"):
        lim = TOL * eps * np.maximum(np.abs(ref).astype(np.float64), scale / 256.0)
        diff = np.abs(a.astype(np.float64) - ref.astype(np.float64))
        ok = both_nan | (a == ref) | (diff <= lim)
        if sums:
            ok |= diff <= SUM_TOL * eps * scale
    return bool(ok.all())


def run_compiled_cpu(kernel, g: Gen, args, const, grid):
    import gpu_sim
    from tilework import CompileOptions
    from tilework.compiler.driver import ASTSource, compile
    ck = compile(ASTSource(kernel, signature(g), const, {}), TARGET,
                 CompileOptions(num_warps=g.num_warps), cache=False)
    gpu_sim.run(ck, grid, *args)


def run_compiled_gpu(kernel, g: Gen, args, const, grid):
    import torch
    dev = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in args]
    kernel[grid](*dev, num_warps=g.num_warps, **const)
    torch.cuda.synchronize()
    for a, d in zip(args, dev):
        if isinstance(a, np.ndarray):
            a[...] = d.cpu().numpy()


def check(seed: int, gpu: bool = False, workdir: str = "/tmp") -> tuple[bool, str, Gen]:
    """Runs program `seed`; returns (ok, what went wrong, the generator)."""
    g = Gen(seed, gpu=gpu)
    src = g.program()
    path = os.path.join(workdir, f"fuzz_{seed}.py")
    kernel = load_kernel(src, path)
    rng = np.random.default_rng(seed)
    args, const, grid = make_inputs(g, rng)
    ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        kernel.interpret = True
        kernel[grid](*ref, **const)
    except Exception:
        return False, "interpreter raised:\n" + traceback.format_exc(limit=3), g
    finally:
        kernel.interpret = False
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        (run_compiled_gpu if gpu else run_compiled_cpu)(kernel, g, got, const, grid)
    except Exception:
        return False, "compiled side raised:\n" + traceback.format_exc(limit=3), g
    bad = []
    k = len(g.outs)
    for i, v in enumerate(g.outs):
        zero_sign = "tl.maximum(" not in src and "tl.minimum(" not in src
        if not close(got[2 + i], ref[2 + i], v.exact, _least_precise(g, src), zero_sign,
                     sums=_sums_floats(g, src)):
            d = np.nonzero(~((got[2 + i] == ref[2 + i]) |
                             (np.isnan(got[2 + i]) & np.isnan(ref[2 + i]))
                             if v.dt in FLOATS else got[2 + i] != ref[2 + i]))[0][:5]
            bad.append(f"out{i} ({v.name}, {v.dt}, {'exact' if v.exact else 'tolerance'}) "
                       f"differs at {d.tolist() or '(the sign of a zero)'}: compiled {got[2 + i][d].tolist()} "
                       f"interpreter {ref[2 + i][d].tolist()}")
    if not np.array_equal(got[2 + k], ref[2 + k]):
        bad.append(f"atomic counters differ: compiled {got[2 + k].tolist()} interpreter "
                   f"{ref[2 + k].tolist()}")
    return not bad, "\n".join(bad), g


def fuzz(seed: int, count: int, gpu: bool = False, faildir: str = "fuzz_failures",
         log=print) -> tuple[int, list[int]]:
    """Programs seed..seed+count-1; failing ones written to `faildir`. (tried, failing seeds)"""
    import tempfile
    failing = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in range(seed, seed + count):
            ok, why, g = check(s, gpu, tmp)
            if not ok:
                failing.append(s)
                os.makedirs(faildir, exist_ok=True)
                with open(os.path.join(faildir, f"fuzz_{s}.py"), "w") as f:
                    f.write(g.source() + "\n'''\n" + why + "\n'''\n")
                log(f"seed {s}: MISMATCH\n{why}")
    log(f"programs tried: {count}, mismatches: {len(failing)}"
        + (f" (seeds {failing}; programs in {faildir}/)" if failing else ""))
    return count, failing
