"""The main job: every example kernel compiled ahead of time for NVIDIA (sm_90a) and AMD
(gfx942) with every stage's IR dumped, then run and checked: on the GPU when there is one,
else in the CPU interpreter.

    python examples/main.py [-o out]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tilework.language as tl  # noqa: E402
from tilework.compiler.driver import ASTSource, compile, dump_kernel  # noqa: E402
from tilework.runtime.device import gpu_available  # noqa: E402

import vector_add  # noqa: E402

TARGETS = ("sm_90a", "gfx942")

# (module, kernel, signature, constexprs): what the main job compiles ahead of time
AOT = [
    (vector_add, "add_kernel",
     {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32"},
     {"BLOCK_SIZE": 1024}),
]


def compile_all(out_dir):
    rows = []
    for mod, name, sig, constexprs in AOT:
        fn = getattr(mod, name)
        signature = {k: tl.str_to_ty(v) for k, v in sig.items()}
        attrs = {k: {"tile.divisibility": 16} for k in sig}
        for target in TARGETS:
            t = time.perf_counter()
            ck = compile(ASTSource(fn, signature, constexprs, attrs), target, cache=False)
            dt = time.perf_counter() - t
            paths = dump_kernel(ck, os.path.join(out_dir, target))
            rows.append((f"{name} -> {target}", f"{len(paths)} stages in {dt * 1e3:.0f} ms: "
                                                 f"{', '.join(ck.asm)}"))
    return rows


def run_gpu():
    import torch
    rows = []
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        n = 98_432 + 7
        x, y = torch.randn(n, device="cuda", dtype=dt), torch.randn(n, device="cuda", dtype=dt)
        out = torch.full_like(x, float("nan"))
        vector_add.add_kernel[((n + 1023) // 1024,)](x, y, out, n, BLOCK_SIZE=1024)
        torch.cuda.synchronize()
        ok = torch.equal(out, x + y)
        rows.append((f"vector add {dt} n={n} on {torch.cuda.get_device_name()}",
                     "ok" if ok else "MISMATCH"))
    return rows


def run_interpreter():
    rows = []
    fn = vector_add.add_kernel
    fn.interpret = True
    rng = np.random.default_rng()
    for dt in (np.float32, np.float16):
        n = 9_843 + 7
        x, y = rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)
        out = np.full(n, np.nan, dtype=dt)
        fn[((n + 1023) // 1024,)](x, y, out, n, BLOCK_SIZE=1024)
        ok = np.array_equal(out, x + y)
        rows.append((f"vector add {np.dtype(dt).name} n={n} in the interpreter",
                     "ok" if ok else "MISMATCH"))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--out", default="out/ir", help="where the IR of every stage goes")
    args = ap.parse_args(argv)
    rows = compile_all(args.out)
    rows += run_gpu() if gpu_available() else run_interpreter()
    print(f"IR of every stage: {os.path.abspath(args.out)}/<target>/<kernel>.<stage>")
    width = max(len(r[0]) for r in rows)
    for k, v in rows:
        print(f"{k:{width}s}  {v}")
    return 1 if any(v == "MISMATCH" for _, v in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
