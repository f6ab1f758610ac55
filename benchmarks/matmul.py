"""GEMM: cuBLAS (torch.matmul), Triton and tilework in one run, on one GPU.

Triton runs the same kernel source as tilework (examples/matmul.py's `matmul_kernel`, its
decorators replaced by `triton.autotune` over the same configs and `triton.heuristics`), so the
comparison is of the compilers.  Every side is checked against torch first; then TFLOP/s
(tilework.testing.do_bench, median, L2 flushed) and the ratios per shape: fp16 and bf16 at
4096^3, 8192^3, 1000^3, M=16 N=K=8192 and M=N=8192 K=512; fp8 e4m3 at 8192^3 (cuBLAS through
torch._scaled_mm; a side without fp8 is skipped).  Then the cold compile time of the GEMM
kernel (one config, nothing cached) and the time of the first autotuned call (6 configs
compiled and timed), tilework against Triton, each with a fresh cache dir.

    python benchmarks/matmul.py [--dtypes fp16,bf16,fp8] [--quick]
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import os
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (1000, 1000, 1000), (16, 8192, 8192),
          (8192, 8192, 512)]
FP8_SHAPES = [(8192, 8192, 8192)]
WORK = tempfile.mkdtemp(prefix="tw-matmul-bench-")


def fresh_cache_dirs(tag):
    """New, empty cache dirs for both compilers (read at each compile)."""
    tw = os.path.join(WORK, f"tilework-{tag}")
    tr = os.path.join(WORK, f"triton-{tag}")
    os.environ["TILEWORK_CACHE_DIR"] = tw
    os.environ["TRITON_CACHE_DIR"] = tr
    try:
        from triton import knobs
        knobs.cache.dir = tr
    except Exception:
        pass


def kernel_source(jit_fn) -> str:
    """The kernel's `def` without its decorators."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(jit_fn.fn)))
    tree.body[0].decorator_list = []
    return ast.unparse(tree)


def triton_module(tag: str):
    """A module with the tilework kernels' source under Triton's decorators (a fresh
    JITFunction per call: no in-memory cache carried over)."""
    import matmul as mm
    import fp8_matmul as f8
    src = "\n".join([
        "import triton", "import triton.language as tl",
        "from matmul import ALL_CONFIGS as _MM, PRUNE as _PRUNE, even_k",
        "from fp8_matmul import FP8_CONFIGS as _F8",
        "def _cfgs(cs):",
        "    return [triton.Config(dict(c.kwargs), num_warps=c.num_warps, "
        "num_stages=c.num_stages) for c in cs]",
        "", kernel_source(mm.matmul_kernel.base_fn),
        "matmul_jit = triton.jit(matmul_kernel)",
        "matmul_kernel = triton.autotune(configs=_cfgs(_MM), key=['M', 'N', 'K'], "
        "prune_configs_by=_PRUNE)("
        "triton.heuristics({'EVEN_K': even_k})(matmul_jit))",
        "", kernel_source(f8.fp8_matmul_kernel.base_fn),
        "fp8_jit = triton.jit(fp8_matmul_kernel)",
        "fp8_matmul_kernel = triton.autotune(configs=_cfgs(_F8), key=['M', 'N', 'K'])(fp8_jit)",
    ])
    path = os.path.join(WORK, f"triton_gemm_{tag}.py")
    with open(path, "w") as f:
        f.write(src + "\n")
    spec = importlib.util.spec_from_file_location(f"triton_gemm_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tilework_kernels():
    """Fresh tilework kernels (new JITFunctions: nothing compiled yet) over the same source."""
    import tilework
    import matmul as mm
    import fp8_matmul as f8
    jit_mm = tilework.jit(mm.matmul_kernel.base_fn.fn)
    jit_f8 = tilework.jit(f8.fp8_matmul_kernel.base_fn.fn)
    tuned_mm = tilework.autotune(configs=mm.ALL_CONFIGS, key=["M", "N", "K"],
                                 prune_configs_by=mm.PRUNE)(
        tilework.heuristics({"EVEN_K": mm.even_k})(jit_mm))
    tuned_f8 = tilework.autotune(configs=f8.FP8_CONFIGS, key=["M", "N", "K"])(jit_f8)
    return jit_mm, tuned_mm, tuned_f8


def grid(meta):
    return ((meta["M"] + meta["BLOCK_M"] - 1) // meta["BLOCK_M"]
            * ((meta["N"] + meta["BLOCK_N"] - 1) // meta["BLOCK_N"]),)


def gemm_args(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    return (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1))


def fp8_args(a8, b8, c, sa, sb):
    import torch
    M, K = a8.shape
    N = b8.shape[1]
    return (a8.view(torch.uint8), b8.view(torch.uint8), c, sa, sb, M, N, K, a8.stride(0),
            a8.stride(1), b8.stride(0), b8.stride(1), c.stride(0), c.stride(1))


def compile_times(tw_jit, tr_mod, torch):
    """Seconds to the end of the first launch of one config (128x128x64, 8 warps, 3 stages),
    nothing cached: the cold compile (and load) of the GEMM kernel."""
    fresh_cache_dirs("cold")
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    meta = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, EVEN_K=True, num_warps=8,
                num_stages=3)
    out = {}
    for name, k in (("tilework", tw_jit), ("triton", getattr(tr_mod, "matmul_jit", None))):
        if k is None:
            continue
        torch.cuda.synchronize()
        t = time.perf_counter()
        k[grid({"M": 1024, "N": 1024, **meta})](*gemm_args(a, b, c), **meta)
        torch.cuda.synchronize()
        out[name] = time.perf_counter() - t
    return out


def tune_times(tw_tuned, tr_mod, torch):
    """Seconds of the first autotuned call at 4096^3 fp16 (6 configs compiled and timed)."""
    fresh_cache_dirs("tune")
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    out = {}
    for name, k in (("tilework", tw_tuned), ("triton", getattr(tr_mod, "matmul_kernel", None))):
        if k is None:
            continue
        torch.cuda.synchronize()
        t = time.perf_counter()
        k[grid](*gemm_args(a, b, c))
        torch.cuda.synchronize()
        out[name] = (time.perf_counter() - t, str(k.best_config))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dtypes", default="fp16,bf16,fp8")
    ap.add_argument("--quick", action="store_true", help="only 4096^3 and 1000^3")
    args = ap.parse_args(argv)
    import torch
    import tilework
    from tilework.testing import do_bench
    dev = torch.cuda.get_device_name()
    fresh_cache_dirs("init")
    try:
        import triton
        tr_mod = triton_module("main")
        tr_version = triton.__version__
    except Exception as e:  # no Triton: its columns are skipped
        print(f"Triton unavailable ({type(e).__name__}: {e}); its columns are skipped")
        tr_mod, tr_version = None, None
    print(f"GPU: {dev}; torch {torch.__version__}; tilework {tilework.__version__}; "
          f"triton {tr_version}")

    tw_jit, tw_mm, tw_f8 = tilework_kernels()
    ct = compile_times(tw_jit, tr_mod, torch)
    tw_jit, tw_mm, tw_f8 = tilework_kernels()
    tr_mod = triton_module("tune") if tr_mod is not None else None
    tt = tune_times(tw_mm, tr_mod, torch)
    print("\ncold compile of the GEMM kernel (128x128x64, 8 warps, 3 stages; first launch, "
          "nothing cached):")
    for k, v in ct.items():
        print(f"  {k:9s} {v:7.2f} s")
    if "triton" in ct:
        print(f"  tilework / triton: {ct['tilework'] / ct['triton']:.2f}x")
    print("autotuning 6 configs (first call at 4096^3 fp16: compile + time every config):")
    for k, (v, cfg) in tt.items():
        print(f"  {k:9s} {v:7.2f} s  best: {cfg}")
    if "triton" in tt:
        print(f"  tilework / triton: {tt['tilework'][0] / tt['triton'][0]:.2f}x")

    fresh_cache_dirs("perf")
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    shapes = [s for s in SHAPES if not args.quick or s in ((4096,) * 3, (1000,) * 3)]
    rows = []
    print(f"\n{'dtype':5s} {'M':>5s} {'N':>5s} {'K':>5s}  {'cuBLAS':>8s} {'Triton':>8s} "
          f"{'tilework':>8s}  {'tw/cuBLAS':>9s} {'tw/Triton':>9s}   (TFLOP/s)")
    for dname in args.dtypes.split(","):
        if dname == "fp8":
            continue
        dt = dtypes[dname]
        for M, N, K in shapes:
            a = torch.randn(M, K, device="cuda", dtype=dt)
            b = torch.randn(K, N, device="cuda", dtype=dt)
            ref = torch.matmul(a, b)
            sides = {"cuBLAS": lambda: torch.matmul(a, b)}
            c_tw = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
            sides["tilework"] = lambda: tw_mm[grid](*gemm_args(a, b, c_tw))
            c_tr = None
            if tr_mod is not None:
                c_tr = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
                sides["Triton"] = lambda: tr_mod.matmul_kernel[grid](*gemm_args(a, b, c_tr))
            rows.append(measure(dname, (M, N, K), sides, ref,
                                {"tilework": c_tw, "Triton": c_tr},
                                do_bench, torch))
    if "fp8" in args.dtypes.split(","):
        for M, N, K in FP8_SHAPES if not args.quick else []:
            if not hasattr(torch, "float8_e4m3fn"):
                print("fp8: torch has no float8_e4m3fn; skipped")
                break
            a8 = (torch.randn(M, K, device="cuda")).to(torch.float8_e4m3fn)
            b8 = (torch.randn(K, N, device="cuda")).to(torch.float8_e4m3fn)
            sa = torch.tensor([1.0], device="cuda")
            sb = torch.tensor([1.0], device="cuda")
            ref = (a8.float() @ b8.float()).to(torch.bfloat16)
            sides = {}
            bt = b8.t().contiguous().t()  # cuBLAS wants B column-major

            def cublas():
                return torch._scaled_mm(a8, bt, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
            try:
                cublas()
                sides["cuBLAS"] = cublas
            except Exception as e:
                print(f"fp8 cuBLAS (torch._scaled_mm) unavailable: {type(e).__name__}; skipped")
            c_tw = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            sides["tilework"] = lambda: tw_f8[grid](*fp8_args(a8, b8, c_tw, sa, sb))
            c_tr = None
            if tr_mod is not None:
                c_tr = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                sides["Triton"] = lambda: tr_mod.fp8_matmul_kernel[grid](
                    *fp8_args(a8, b8, c_tr, sa, sb))
            rows.append(measure("fp8", (M, N, K), sides, ref, {"tilework": c_tw, "Triton": c_tr},
                                do_bench, torch))
    bad = [r for r in rows if r]
    return 1 if bad else 0


def measure(dname, shape, sides, ref, outs, do_bench, torch):
    """Checks every side against torch, then prints one row; returns the failures."""
    M, N, K = shape
    failures = []
    tflops = {}
    for name, fn in sides.items():
        try:
            r = fn()
            torch.cuda.synchronize()
        except Exception as e:
            print(f"  {dname} {shape} {name}: {type(e).__name__}: {str(e).splitlines()[0]}")
            failures.append(name)
            continue
        out = r if name == "cuBLAS" else outs[name]
        tol = 0.02 * (K ** 0.5) if dname != "fp8" else 0.05 * (K ** 0.5)
        err = (out.float() - ref.float()).abs().max().item()
        if not err <= tol:
            print(f"  {dname} {shape} {name}: MISMATCH against torch (max error {err:.3g})")
            failures.append(name)
            continue
        ms = do_bench(fn, return_mode="median")
        tflops[name] = 2 * M * N * K / (ms * 1e-3) / 1e12

    def f(k):
        return f"{tflops[k]:8.1f}" if k in tflops else f"{'-':>8s}"

    def ratio(a, b):
        return f"{tflops[a] / tflops[b]:9.2f}" if a in tflops and b in tflops else f"{'-':>9s}"
    print(f"{dname:5s} {M:5d} {N:5d} {K:5d}  {f('cuBLAS')} {f('Triton')} {f('tilework')}  "
          f"{ratio('tilework', 'cuBLAS')} {ratio('tilework', 'Triton')}", flush=True)
    return failures


if __name__ == "__main__":
    sys.exit(main())
