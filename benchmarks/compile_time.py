"""Compile time of the example kernels (the main job's ahead-of-time list), without the disk
cache: the median of several compiles per kernel and target, in one process after a warm-up
(imports and MLIR context set-up excluded).  Needs no GPU (NVIDIA stops at PTX when no ptxas
is found; AMD stops before the code object when no ld.lld is found).

    python benchmarks/compile_time.py [--targets sm_90a,gfx942] [--reps 5]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="sm_90a")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
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
