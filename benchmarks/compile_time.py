"""Compile time of the example kernels (the main job's ahead-of-time list), without the disk
cache: the median of several compiles per kernel and target, in one process after a warm-up
(imports and MLIR context set-up excluded).  Needs no GPU (NVIDIA stops at PTX when no ptxas
is found; AMD stops before the code object when no ld.lld is found).

    python benchmarks/compile_time.py [--targets sm_90a,gfx942] [--reps 5]

`--sweep` instead times a vector add and a row sum at BLOCK = 1K, 2K, ..., 128K (`--max`) on
sm_90a with 4 warps, once each, with the seconds spent in each stage (tile is the frontend;
ptx is LLVM's optimizer and NVPTX; cubin is ptxas), the growth per doubling and the ptxas
level (`-O`: 1 where the kernel pins far more data than registers, see
backends/nvidia/ptxas_level.py; `--opt-level 3` forces the old -O3 everywhere):

    python benchmarks/compile_time.py --sweep [--max 131072] [--kernels vadd,rowsum]
        [--opt-level N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import main as M  # noqa: E402  (examples/main.py: the AOT list)
import tilework.language as tl  # noqa: E402
from tilework import CompileOptions  # noqa: E402
from tilework.compiler.driver import ASTSource, compile  # noqa: E402
from tilework import jit as tilework_jit  # noqa: E402


@tilework_jit
def sweep_vadd(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
             mask=m)


@tilework_jit
def sweep_rowsum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


def _timed_stages(backend, times):
    """Wraps the backend's stage functions so each records its seconds in `times`."""
    cls = type(backend)
    orig = cls.stages

    def stages(self, options):
        st = orig(self, options)
        for name, f in list(st.items()):
            def timed(src, md, f=f, name=name):
                t = time.perf_counter()
                try:
                    return f(src, md)
                finally:
                    times[name] = times.get(name, 0.0) + time.perf_counter() - t
            st[name] = timed
        return st
    cls.stages = stages


def sweep(args):
    from tilework.backends import get_backend, parse_target
    times = {}
    _timed_stages(get_backend(parse_target("sm_90a")), times)
    P = tl.pointer_type(tl.float32)
    kernels = {"vadd": (sweep_vadd, {"x_ptr": P, "y_ptr": P, "out_ptr": P, "n": tl.int32}),
               "rowsum": (sweep_rowsum, {"x_ptr": P, "out_ptr": P, "n": tl.int32})}
    stages = ["tile", "tilegpu", "llvm", "llir", "ptx", "cubin"]
    for kname in args.kernels.split(","):
        fn, sig = kernels[kname]
        attrs = {k: {"tile.divisibility": 16} for k in sig}
        print(f"{'kernel':8s} {'BLOCK':>7s} {'total s':>8s} {'x/2':>5s}  " +
              " ".join(f"{s:>7s}" for s in stages) + "  -O")
        prev, block = None, 1024
        compile(ASTSource(fn, sig, {"BLOCK": 1024}, attrs), "sm_90a", cache=False)  # warm-up
        while block <= args.max:
            times.clear()
            t = time.perf_counter()
            ck = compile(ASTSource(fn, sig, {"BLOCK": block}, attrs), "sm_90a",
                         CompileOptions(num_warps=4, opt_level=args.opt_level), cache=False)
            total = time.perf_counter() - t
            times["tile"] = total - sum(times.values())
            growth = f"{total / prev:5.2f}" if prev else "    -"
            print(f"{kname:8s} {block:7d} {total:8.2f} {growth}  " +
                  " ".join(f"{times.get(s, 0.0):7.2f}" for s in stages) +
                  f"  {ck.metadata.get('ptxas_opt_level', '-')}", flush=True)
            prev, block = total, block * 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="sm_90a")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sweep", action="store_true", help="tile sizes 1K..--max instead")
    ap.add_argument("--max", type=int, default=131072)
    ap.add_argument("--kernels", default="vadd,rowsum")
    ap.add_argument("--opt-level", type=int, default=None, help="--sweep: an explicit level")
    args = ap.parse_args()
    if args.sweep:
        return sweep(args)
    import tilework
    print(f"tilework from {os.path.dirname(tilework.__file__)}")
    total = {}
    for mod, name, sig, constexprs in M.AOT:
        fn = getattr(mod, name)
        signature = {k: tl.str_to_ty(v) for k, v in sig.items()}
        attrs = {k: {"tile.divisibility": 16} for k in sig}
        for target in args.targets.split(","):
            times = []
            for _ in range(args.reps + 1):
                t = time.perf_counter()
                try:
                    compile(ASTSource(fn, signature, constexprs, attrs), target,
                            CompileOptions(num_warps=M.WARPS.get(name, 4)), cache=False)
                except RuntimeError:  # no linker for the code object: time what came before
                    pass
                times.append(time.perf_counter() - t)
            ms = statistics.median(times[1:]) * 1e3
            total[target] = total.get(target, 0.0) + ms
            print(f"{name:28s} {target:8s} {ms:8.1f} ms")
    for target, ms in total.items():
        print(f"{'all':28s} {target:8s} {ms:8.1f} ms")


if __name__ == "__main__":
    main()
