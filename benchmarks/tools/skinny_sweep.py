"""Skinny GEMM shapes (issue 9): every candidate config of examples/matmul.py's kernel, and of
its split-K kernel, timed on M=16 N=K=8192 and M=N=8192 K=512 (fp16, bf16) for tilework and
for Triton (the same kernel source under triton.jit), against cuBLAS (torch.matmul).  Every
result is checked against torch first.  Times: tilework.testing.do_bench (CUDA events, the
median, L2 flushed before each run, as benchmarks/matmul.py).  A split-K row times what
matmul() does: zero the fp32 sum, the kernel, the cast into c.  Last, the autotuned example
itself (matmul(): its pruned config list, split K where use_split_k says) per shape.

    python benchmarks/tools/skinny_sweep.py [--dtypes fp16,bf16] [--no-triton]
        [--shapes small-m,short-k] [--listed-only] [--no-fence-run]

Prints one table per shape (TFLOP/s; "x cuBLAS" columns; the issue's target is 0.9 of cuBLAS
and at least Triton; the extra candidates in fp16 only); exit status 1 if any result is
wrong.  tilework's variants compile at once in worker processes first.  Then (unless
--no-fence-run) the K=512 fp16 configs of the example's list again, tilework alone, in a
child process with TILEWORK_WGMMA_CP_ASYNC_FENCE=0 (no fence.proxy.async before the
pipelined wgmma: Triton's code; default-off until this run shows it right and faster).
About 2-3 minutes on an H200.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import os
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

import matmul as mm  # noqa: E402

SMALL_M = (16, 8192, 8192)
SHORT_K = (8192, 8192, 512)


def cfg(bm, bn, bk, warps, stages, split=1):
    return (bm, bn, bk, warps, stages, split)


def of(c, split=False):
    k = c.kwargs
    return cfg(k["BLOCK_M"], k["BLOCK_N"], k["BLOCK_K"], c.num_warps, c.num_stages,
               k["SPLIT_K"] if split else 1)


def candidates(shape, listed_only=False):
    """(label, config tuple): the example's configs for the shape's group first (what the
    autotuner times), then other candidates worth knowing about (fp16 only: main())."""
    if shape == SMALL_M:
        listed = [of(c) for c in mm.SMALL_M_CONFIGS] + [of(c, True) for c in mm.SPLITK_CONFIGS
                                                          if c.kwargs["BLOCK_M"] == 16]
        extra = [cfg(64, 64, 32, 4, 4),  # the old list's pick for M=16
                 cfg(16, 32, 128, 4, 6), cfg(16, 64, 128, 4, 6), cfg(16, 128, 128, 4, 4),
                 cfg(16, 64, 64, 4, 8), cfg(16, 32, 256, 4, 4),
                 cfg(16, 128, 128, 4, 4, 2), cfg(16, 128, 128, 4, 4, 4),
                 cfg(16, 64, 256, 4, 3, 2), cfg(16, 64, 128, 4, 4, 8)]
    else:
        listed = [of(c) for c in mm.CONFIGS + mm.SHORT_K_CONFIGS]
        extra = [cfg(128, 128, 64, 8, 4), cfg(128, 128, 128, 8, 3), cfg(128, 128, 64, 4, 3),
                 cfg(64, 256, 64, 4, 4), cfg(128, 256, 128, 8, 2), cfg(256, 128, 64, 8, 4)]
    if listed_only:
        extra = []
    seen, out = set(), []
    for tag, cs in (("listed", listed), ("extra", extra)):
        for c in cs:
            if c not in seen:
                seen.add(c)
                out.append((tag, c))
    return out


def kernel_source(fn) -> str:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    tree.body[0].decorator_list = []
    return ast.unparse(tree)


def triton_kernels():
    """(matmul_kernel, matmul_splitk_kernel) under triton.jit, from the example's source."""
    src = "\n".join(["import triton", "import triton.language as tl", "",
                     kernel_source(mm.matmul_kernel.base_fn.fn), "",
                     kernel_source(mm.matmul_splitk_kernel.base_fn.fn), "",
                     "mm_jit = triton.jit(matmul_kernel)",
                     "sk_jit = triton.jit(matmul_splitk_kernel)"])
    path = os.path.join(tempfile.mkdtemp(prefix="tw-skinny-"), "triton_skinny.py")
    with open(path, "w") as f:
        f.write(src + "\n")
    spec = importlib.util.spec_from_file_location("triton_skinny", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.mm_jit, mod.sk_jit


def runner(torch, kern, a, b, c, c32, config):
    """A no-argument function launching `kern` (tilework's or Triton's JIT function) with
    `config`, as matmul() does (split K: zeroed fp32 sum, cast into c)."""
    bm, bn, bk, warps, stages, split = config
    M, K = a.shape
    N = b.shape[1]
    meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, EVEN_K=K % bk == 0,
                num_warps=warps, num_stages=stages)
    tiles = (M + bm - 1) // bm * ((N + bn - 1) // bn)
    if split == 1:
        def run():
            kern[(tiles,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                           b.stride(1), c.stride(0), c.stride(1), **meta)
        return run

    def run_split():
        c32.zero_()
        kern[(tiles, split)](a, b, c32, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                             b.stride(1), c32.stride(0), c32.stride(1), SPLIT_K=split, **meta)
        c.copy_(c32)
    return run_split


def precompile(tilework, kerns, a, b, c, c32, configs):
    """tilework's variants of `configs`, compiled at once in worker processes (an autotuner's
    warmup over them), so the timing loop finds them loaded; a failure only costs the time."""
    M, K = a.shape
    N = b.shape[1]
    for split in (False, True):
        cs = [x for x in configs if (x[5] > 1) == split]
        if not cs:
            continue
        out = c32 if split else c
        tcs = [tilework.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                    EVEN_K=K % bk == 0, **({"SPLIT_K": sk} if split else {})),
                               num_warps=w, num_stages=st) for bm, bn, bk, w, st, sk in cs]
        try:
            tuner = tilework.autotune(configs=tcs, key=["M", "N", "K"])(kerns[int(split)])
            notes = tuner.warmup(a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                 b.stride(1), out.stride(0), out.stride(1))
            for c_, note in (notes or {}).items():
                print(f"  (precompile of {c_}: {note})")
        except Exception as e:
            print(f"  (precompile: {type(e).__name__}: {str(e).splitlines()[0][:80]}; "
                  f"compiling one by one)")


def check(torch, out, ref, K):
    err = (out.float() - ref).abs().max().item()
    return err <= 0.02 * K ** 0.5, err


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dtypes", default="fp16,bf16")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--shapes", default="small-m,short-k")
    ap.add_argument("--listed-only", action="store_true", help="only the example's configs")
    ap.add_argument("--no-fence-run", action="store_true",
                    help="skip the child run with TILEWORK_WGMMA_CP_ASYNC_FENCE=0")
    args = ap.parse_args(argv)
    shapes = [{"small-m": SMALL_M, "short-k": SHORT_K}[x] for x in args.shapes.split(",")]
    import torch
    import tilework
    from tilework.testing import do_bench
    t_start = time.perf_counter()
    tr, tr_version = None, None
    if not args.no_triton:
        try:
            import triton
            tr = triton_kernels()
            tr_version = triton.__version__
        except Exception as e:
            print(f"Triton unavailable ({type(e).__name__}: {e}); its columns are skipped")
    print(f"GPU: {torch.cuda.get_device_name()} "
          f"({torch.cuda.get_device_properties(0).multi_processor_count} SMs); "
          f"torch {torch.__version__}; tilework {tilework.__version__}; "
          f"triton {tr_version or '-'}; TILEWORK_WGMMA_CP_ASYNC_FENCE="
          f"{os.environ.get('TILEWORK_WGMMA_CP_ASYNC_FENCE', '(unset: 1)')}")
    tw = (mm.matmul_kernel.base_fn, mm.matmul_splitk_kernel.base_fn)
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    bad = 0

    def bench(fn):
        return do_bench(fn, warmup=10, rep=40, return_mode="median")

    for dname in args.dtypes.split(","):
        dt = dtypes[dname]
        for shape in shapes:
            M, N, K = shape
            flop = 2 * M * N * K
            a = torch.randn(M, K, device="cuda", dtype=dt)
            b = torch.randn(K, N, device="cuda", dtype=dt)
            ref = torch.matmul(a.float(), b.float())
            c = torch.empty(M, N, device="cuda", dtype=dt)
            c32 = torch.empty(M, N, device="cuda", dtype=torch.float32)
            cublas = flop / bench(lambda: torch.matmul(a, b)) / 1e9
            print(f"\n{dname} M={M} N={N} K={K}: cuBLAS {cublas:.1f} TFLOP/s "
                  f"(target 0.9x = {0.9 * cublas:.1f})")
            print(f"  {'':6s} {'BMxBNxBK':>12s} {'w':>2s} {'st':>2s} {'splitK':>6s}  "
                  f"{'tilework':>8s} {'x cuBLAS':>8s}  {'Triton':>8s} {'x cuBLAS':>8s}")
            cands = candidates(shape, args.listed_only or dname != "fp16")
            precompile(tilework, tw, a, b, c, c32, [x for _, x in cands])
            for tag, config in cands:
                split = config[5]
                cols = []
                for side in ((tw,) + ((tr,) if tr else ())):
                    kern = side[1] if split > 1 else side[0]
                    c.fill_(float("nan"))
                    try:
                        fn = runner(torch, kern, a, b, c, c32, config)
                        fn()
                        torch.cuda.synchronize()
                    except Exception as e:
                        cols.append(f"{type(e).__name__}: {str(e).splitlines()[0][:40]}")
                        continue
                    ok, err = check(torch, c, ref, K)
                    if not ok:
                        bad += 1
                        cols.append(f"WRONG (max error {err:.3g})")
                        continue
                    t = flop / bench(fn) / 1e9
                    cols.append(f"{t:8.1f} {t / cublas:8.2f}")
                bm, bn, bk, w, st, _ = config
                print(f"  {tag:6s} {f'{bm}x{bn}x{bk}':>12s} {w:2d} {st:2d} {split:6d}  "
                      + "  ".join(cols), flush=True)
            # the example as a user calls it: autotuned over its pruned list
            c.fill_(float("nan"))
            mm.matmul(a, b, c)
            torch.cuda.synchronize()
            ok, err = check(torch, c, ref, K)
            sms = torch.cuda.get_device_properties(0).multi_processor_count
            split = mm.use_split_k(M, N, K, sms)
            kern = mm.matmul_splitk_kernel if split else mm.matmul_kernel
            if not ok:
                bad += 1
                print(f"  matmul(): WRONG (max error {err:.3g})")
            else:
                t = flop / bench(lambda: mm.matmul(a, b, c)) / 1e9
                print(f"  matmul() (autotuned{', split K' if split else ''}): {t:.1f} TFLOP/s "
                      f"= {t / cublas:.2f} x cuBLAS; picked {kern.best_config}")
    print(f"\n{time.perf_counter() - t_start:.0f} s", flush=True)
    if not args.no_fence_run and os.environ.get("TILEWORK_WGMMA_CP_ASYNC_FENCE") != "0":
        print("\n---- TILEWORK_WGMMA_CP_ASYNC_FENCE=0 (child process) ----", flush=True)
        env = dict(os.environ, TILEWORK_WGMMA_CP_ASYNC_FENCE="0")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--shapes", "short-k",
                            "--dtypes", "fp16", "--no-triton", "--listed-only",
                            "--no-fence-run"], env=env)
        bad += r.returncode != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
