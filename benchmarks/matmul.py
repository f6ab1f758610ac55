"""GEMM: cuBLAS (torch.matmul), Triton and tilework in one run, on one GPU.

Two kernel families, each run by both compilers from the same source (its decorators replaced
by `triton.autotune` over the same configs, and `triton.heuristics`), so the comparison is of
the compilers:

  tutorial  examples/matmul.py's `matmul_kernel` (pointer loads: cp.async on sm_80+), and
            examples/fp8_matmul.py's `fp8_matmul_kernel` for fp8;
  tma-ws    examples/persistent_matmul.py's `matmul_tma_persistent` (Triton's tutorial 09:
            one program per SM over the tiles, host TMA descriptors whose block shapes each
            config's pre_hook sets, the tiles' loop `warp_specialize=WARP_SPECIALIZE`, a
            config's choice: on sm_90a tilework gives it a producer warp group; Triton 3.6
            ignores the hint on Hopper), autotuned over TMA_CONFIGS / TMA_FP8_CONFIGS (tile
            shapes with WARP_SPECIALIZE both ways); fp8 takes B as [N, K] (`b.T`:
            wgmma fp8 needs a K-major B) and has no scale epilogue (the scales are 1).

Every side is checked against torch first (outputs NaN-poisoned); then TFLOP/s
(tilework.testing.do_bench, median, L2 flushed; --rounds rounds, default 3, in which cuBLAS,
Triton and tilework take turns, the median round kept), one row per (family, dtype, shape) with both
ratios (a tma-ws row is followed by the configs both autotuners chose): fp16 and bf16 at
4096^3, 8192^3, 1000^3, M=16 N=K=8192 and M=N=8192 K=512; fp8 e4m3 at 8192^3 (cuBLAS through
torch._scaled_mm; a side without fp8 is skipped). Then the best tilework family per shape
against cuBLAS and the best Triton, with issue 9's targets (>= Triton everywhere; >= 0.95 of
cuBLAS at 4096^3 and 8192^3, >= 0.9 at M=16 and K=512). First, the cold compile time of the
tutorial kernel (one config, nothing cached) and the time of its first autotuned call (configs
compiled and timed), tilework against Triton, each with a fresh cache.

    python benchmarks/matmul.py [--dtypes fp16,bf16,fp8] [--families tutorial,tma-ws]
        [--quick] [--no-compile-times] [--rounds R]

--quick: 4096^3 and 1000^3 only, no fp8, the TMA family over its first four configs.
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

FAMILIES = ("tutorial", "tma-ws")
QUICK_TMA_CONFIGS = 4  # --quick: the TMA family's first configs only (2 tiles, WS both ways)

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


def triton_module(tag: str, quick: bool = False):
    """A module with the tilework kernels' source under Triton's decorators (a fresh
    JITFunction per call: no in-memory cache carried over)."""
    import matmul as mm
    import fp8_matmul as f8
    import persistent_matmul as pm
    n = QUICK_TMA_CONFIGS if quick else None
    src = "\n".join([
        "import triton", "import triton.language as tl",
        "from matmul import ALL_CONFIGS as _MM, PRUNE as _PRUNE, even_k",
        "from fp8_matmul import FP8_CONFIGS as _F8",
        "from persistent_matmul import TMA_CONFIGS as _TMA, TMA_FP8_CONFIGS as _TMA8",
        "def _cfgs(cs):",
        "    return [triton.Config(dict(c.kwargs), num_warps=c.num_warps, "
        "num_stages=c.num_stages, pre_hook=c.pre_hook) for c in cs]",
        "", kernel_source(mm.matmul_kernel.base_fn),
        "matmul_jit = triton.jit(matmul_kernel)",
        "matmul_kernel = triton.autotune(configs=_cfgs(_MM), key=['M', 'N', 'K'], "
        "prune_configs_by=_PRUNE)("
        "triton.heuristics({'EVEN_K': even_k})(matmul_jit))",
        "", kernel_source(f8.fp8_matmul_kernel.base_fn),
        "fp8_jit = triton.jit(fp8_matmul_kernel)",
        "fp8_matmul_kernel = triton.autotune(configs=_cfgs(_F8), key=['M', 'N', 'K'])(fp8_jit)",
        "", kernel_source(pm.matmul_tma_persistent),
        "tma_jit = triton.jit(matmul_tma_persistent)",
        f"tma_kernel = triton.autotune(configs=_cfgs(_TMA[:{n}]), key=['M', 'N', 'K'])(tma_jit)",
        f"tma_fp8_kernel = triton.autotune(configs=_cfgs(_TMA8[:{n}]), key=['M', 'N', 'K'])("
        "tma_jit)",
    ])
    path = os.path.join(WORK, f"triton_gemm_{tag}.py")
    with open(path, "w") as f:
        f.write(src + "\n")
    spec = importlib.util.spec_from_file_location(f"triton_gemm_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tilework_kernels(quick: bool = False):
    """Fresh tilework kernels (new JITFunctions: nothing compiled yet) over the same source:
    the tutorial GEMM (plain and autotuned), the fp8 one, the TMA one (16-bit, fp8)."""
    import tilework
    import matmul as mm
    import fp8_matmul as f8
    import persistent_matmul as pm
    jit_mm = tilework.jit(mm.matmul_kernel.base_fn.fn)
    jit_f8 = tilework.jit(f8.fp8_matmul_kernel.base_fn.fn)
    jit_tma = tilework.jit(pm.matmul_tma_persistent.fn)
    tuned_mm = tilework.autotune(configs=mm.ALL_CONFIGS, key=["M", "N", "K"],
                                 prune_configs_by=mm.PRUNE)(
        tilework.heuristics({"EVEN_K": mm.even_k})(jit_mm))
    tuned_f8 = tilework.autotune(configs=f8.FP8_CONFIGS, key=["M", "N", "K"])(jit_f8)
    n = QUICK_TMA_CONFIGS if quick else None
    tma = tilework.autotune(configs=pm.TMA_CONFIGS[:n], key=["M", "N", "K"])(jit_tma)
    tma8 = tilework.autotune(configs=pm.TMA_FP8_CONFIGS[:n], key=["M", "N", "K"])(jit_tma)
    return jit_mm, tuned_mm, tuned_f8, tma, tma8


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


def tma_args(a, b, c, b_nk, TD):
    """The TMA kernel's arguments (descriptors of class TD, tilework's or Triton's; the
    config's pre_hook sets their blocks)."""
    M, K = a.shape
    N = b.shape[0] if b_nk else b.shape[1]
    descs = [TD.from_tensor(t, [64, 64]) for t in (a, b, c)]
    return (*descs, M, N, K), {"B_NK": b_nk}


def tma_grid(meta):
    tiles = -(-meta["M"] // meta["BM"]) * -(-meta["N"] // meta["BN"])
    return (min(meta["NUM_SMS"], tiles),)


def descriptor_classes(tr_mod):
    from tilework.tools.tensor_descriptor import TensorDescriptor as TW
    TR = None
    if tr_mod is not None:
        from triton.tools.tensor_descriptor import TensorDescriptor as TR
    return TW, TR


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dtypes", default="fp16,bf16,fp8")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--quick", action="store_true",
                    help="4096^3 and 1000^3 only, no fp8, 4 TMA configs")
    ap.add_argument("--no-compile-times", action="store_true")
    ap.add_argument("--rounds", type=int, default=3,
                    help="timing rounds per row, the sides taking turns (median of rounds)")
    args = ap.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    bad = set(families) - set(FAMILIES)
    if bad:
        ap.error(f"unknown families {sorted(bad)}; known: {', '.join(FAMILIES)}")
    import torch
    import tilework
    from tilework.testing import do_bench
    dev = torch.cuda.get_device_name()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    fresh_cache_dirs("init")
    try:
        import triton
        tr_mod = triton_module("main", args.quick)
        tr_version = triton.__version__
    except Exception as e:  # no Triton: its columns are skipped
        print(f"Triton unavailable ({type(e).__name__}: {e}); its columns are skipped")
        tr_mod, tr_version = None, None
    print(f"GPU: {dev} ({sms} SMs); torch {torch.__version__}; tilework {tilework.__version__}; "
          f"triton {tr_version}")

    if not args.no_compile_times:
        tw_jit, tw_mm = tilework_kernels(args.quick)[:2]
        ct = compile_times(tw_jit, tr_mod, torch)
        tw_jit, tw_mm = tilework_kernels(args.quick)[:2]
        tt = tune_times(tw_mm, triton_module("tune", args.quick) if tr_mod else None, torch)
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
    tr_mod = triton_module("perf", args.quick) if tr_mod is not None else None
    _, tw_mm, tw_f8, tw_tma, tw_tma8 = tilework_kernels(args.quick)
    TW, TR = descriptor_classes(tr_mod)
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    shapes = [s for s in SHAPES if not args.quick or s in ((4096,) * 3, (1000,) * 3)]
    results, failures = [], []
    env = Bench(torch, do_bench, failures, sms, {"tilework": TW, "Triton": TR}, args.rounds)
    print(f"\n{'family':8s} {'dtype':5s} {'M':>5s} {'N':>5s} {'K':>5s}  {'cuBLAS':>8s} "
          f"{'Triton':>8s} {'tilework':>8s}  {'tw/cuBLAS':>9s} {'tw/Triton':>9s}   (TFLOP/s)",
          flush=True)
    for dname in args.dtypes.split(","):
        if dname == "fp8":
            continue
        dt = dtypes[dname]
        for M, N, K in shapes:
            a = torch.randn(M, K, device="cuda", dtype=dt)
            b = torch.randn(K, N, device="cuda", dtype=dt)
            ref = torch.matmul(a, b)
            cublas = checked(dname, (M, N, K), "cuBLAS", lambda a=a, b=b: torch.matmul(a, b),
                             None, ref, torch, failures)
            fam = family_rows(
                env, dname, (M, N, K), families, dt, cublas, ref,
                (tw_mm, tr_mod and tr_mod.matmul_kernel, lambda c, a=a, b=b: gemm_args(a, b, c)),
                (tw_tma, tr_mod and tr_mod.tma_kernel,
                 lambda c, TD, a=a, b=b: tma_args(a, b, c, False, TD)))
            results.append((dname, (M, N, K), cublas, fam))
    if "fp8" in args.dtypes.split(",") and not args.quick:
        for M, N, K in FP8_SHAPES:
            if not hasattr(torch, "float8_e4m3fn"):
                print("fp8: torch has no float8_e4m3fn; skipped")
                break
            a8 = (torch.randn(M, K, device="cuda")).to(torch.float8_e4m3fn)
            b8 = (torch.randn(K, N, device="cuda")).to(torch.float8_e4m3fn)
            sa = torch.tensor([1.0], device="cuda")
            sb = torch.tensor([1.0], device="cuda")
            ref = (a8.float() @ b8.float()).to(torch.bfloat16)
            bt = b8.t().contiguous().t()  # cuBLAS wants B column-major: bt.t() is B [N, K]
            cublas = checked("fp8", (M, N, K), "cuBLAS", lambda: torch._scaled_mm(
                a8, bt, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16), None, ref, torch,
                failures, optional=True)
            fam = family_rows(
                env, "fp8", (M, N, K), families, torch.bfloat16, cublas, ref,
                (tw_f8, tr_mod and tr_mod.fp8_matmul_kernel,
                 lambda c, a8=a8, b8=b8, sa=sa, sb=sb: fp8_args(a8, b8, c, sa, sb)),
                (tw_tma8, tr_mod and tr_mod.tma_fp8_kernel,
                 lambda c, TD, a8=a8, bt=bt: tma_args(a8, bt.t(), c, True, TD)))
            results.append(("fp8", (M, N, K), cublas, fam))
    summary(results)
    return 1 if failures else 0


class Bench:
    """What every row needs: torch, do_bench, the failures list, the SM count, the
    descriptor classes by side ({"tilework": ..., "Triton": ... or None}) and the number of
    timing rounds."""

    def __init__(self, torch, do_bench, failures, sms, descriptors, rounds=3):
        self.torch, self.do_bench, self.failures = torch, do_bench, failures
        self.sms, self.descriptors, self.rounds = sms, descriptors, max(1, rounds)


def family_rows(env, dname, shape, families, out_dtype, cublas, ref, tutorial, tma):
    """Checks, times and prints one row per family for a dtype and shape (the fp16/bf16 and
    the fp8 tables alike; `cublas`: torch's call, checked, or None): `tutorial` is
    (tilework's kernel, Triton's, args(c) -> the launch's arguments, made at each launch),
    `tma` (the same, args(c, TD) -> (positional, keywords), made once); every output `c` NaN-poisoned, of `out_dtype`.  {family: {side: TFLOP/s}}."""
    M, N, K = shape
    fam = {}
    for family in families:
        kernels = tutorial if family == "tutorial" else tma
        sides = {}
        for (name, TD), k in zip(env.descriptors.items(), kernels[:2]):
            if TD is None:
                continue
            c = env.torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
            if family == "tutorial":
                sides[name] = (c, lambda k=k, c=c: k[grid](*tutorial[2](c)))
            else:
                pos, kw = tma[2](c, TD)
                sides[name] = (c, lambda k=k, pos=pos, kw=kw:
                               k[tma_grid](*pos, NUM_SMS=env.sms, **kw))
        fam[family] = row(family, dname, shape, cublas, sides, ref, env)
        if family == "tma-ws":
            chosen(*tma[:2])
    return fam


def chosen(tw, tr):
    """The configs the TMA family's autotuners chose for the row just timed."""
    def fmt(k):
        c = getattr(k, "best_config", None)
        if c is None:
            return "-"
        kw = c.kwargs
        return (f"{kw['BM']}x{kw['BN']}x{kw['BK']} w{c.num_warps} s{c.num_stages} "
                f"{'ws' if kw['WARP_SPECIALIZE'] else 'plain'}")
    print(f"{'':8s} chosen: tilework {fmt(tw)}; Triton {fmt(tr)}", flush=True)


def target_of(shape):
    """Issue 9's ratio to cuBLAS for the shape (None: only >= Triton)."""
    M, N, K = shape
    if M == N == K and M in (4096, 8192):
        return 0.95
    if M == 16 or K == 512:
        return 0.9
    return None


def summary(results):
    """The best tilework family per shape, against cuBLAS and the best Triton."""
    print(f"\nbest tilework per shape:\n{'dtype':5s} {'M':>5s} {'N':>5s} {'K':>5s}  "
          f"{'family':8s} {'tilework':>8s} {'tw/cuBLAS':>9s} {'tw/Triton':>9s} {'target':>7s}  "
          f"met")
    for dname, (M, N, K), _, fam in results:
        tw = {f: r["tilework"] for f, r in fam.items() if r.get("tilework")}
        tr = [r["Triton"] for r in fam.values() if r.get("Triton")]
        if not tw:
            print(f"{dname:5s} {M:5d} {N:5d} {K:5d}  (no tilework result)")
            continue
        best = max(tw, key=tw.get)
        v = tw[best]
        cublas = fam[best].get("cuBLAS")  # (timed in the same rounds as that row)
        target = target_of((M, N, K))
        vs_cublas = v / cublas if cublas else None
        vs_triton = v / max(tr) if tr else None
        met = (vs_triton is None or vs_triton >= 1.0) and \
            (target is None or vs_cublas is None or vs_cublas >= target)
        print(f"{dname:5s} {M:5d} {N:5d} {K:5d}  {best:8s} {v:8.1f} "
              f"{_fmt(vs_cublas)} {_fmt(vs_triton)} "
              f"{(f'{target:.2f}' if target else '-'):>7s}  {'yes' if met else 'NO'}")


def _fmt(x):
    return f"{x:9.2f}" if x is not None else f"{'-':>9s}"


def checked(dname, shape, name, fn, out, ref, torch, failures, optional=False):
    """`fn` once its output (`out`, else what it returns) matches `ref`; None (and the failure
    noted, unless `optional`) if it raises or differs."""
    M, N, K = shape
    try:
        r = fn()
        torch.cuda.synchronize()
    except Exception as e:
        print(f"  {dname} {shape} {name}: {type(e).__name__}: {str(e).splitlines()[0]}")
        if not optional:
            failures.append((dname, shape, name))
        return None
    got = r if out is None else out
    tol = 0.02 * (K ** 0.5) if dname != "fp8" else 0.05 * (K ** 0.5)
    err = (got.float() - ref.float()).abs().max().item()
    if not err <= tol:  # (NaN: a tile never written)
        print(f"  {dname} {shape} {name}: MISMATCH against torch (max error {err:.3g})")
        failures.append((dname, shape, name))
        return None
    return fn


def timed(fns, shape, env):
    """TFLOP/s of each checked fn ({name: fn or None}): `env.rounds` rounds in which the sides
    take turns, each a do_bench median; the median of a side's rounds (the card's clocks drift
    over a run: a side timed once, minutes from another, carried the drift into the ratio)."""
    M, N, K = shape
    ms = {name: [] for name, fn in fns.items() if fn is not None}
    for _ in range(env.rounds):
        for name in ms:
            ms[name].append(env.do_bench(fns[name], return_mode="median"))
    out = {name: None for name in fns}
    for name, t in ms.items():
        t = sorted(t)[len(t) // 2]
        out[name] = 2 * M * N * K / (t * 1e-3) / 1e12
    return out


def row(family, dname, shape, cublas, sides, ref, env):
    """Checks and times each side ({name: (output, fn)}) with cuBLAS (`cublas`: its checked
    call or None), prints the row; {name: TFLOP/s}."""
    M, N, K = shape
    fns = {name: checked(dname, shape, f"{family} {name}", fn, out, ref, env.torch,
                         env.failures) for name, (out, fn) in sides.items()}
    tflops = timed({"cuBLAS": cublas, **fns}, shape, env)

    def f(k):
        return f"{tflops[k]:8.1f}" if tflops.get(k) else f"{'-':>8s}"

    def ratio(a, b):
        return _fmt(tflops[a] / tflops[b] if tflops.get(a) and tflops.get(b) else None)
    print(f"{family:8s} {dname:5s} {M:5d} {N:5d} {K:5d}  {f('cuBLAS')} {f('Triton')} "
          f"{f('tilework')}  {ratio('tilework', 'cuBLAS')} {ratio('tilework', 'Triton')}",
          flush=True)
    return tflops


if __name__ == "__main__":
    sys.exit(main())
