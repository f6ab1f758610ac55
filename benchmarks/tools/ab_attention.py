"""A/B of a compiler change on benchmarks/attention.py: `python benchmarks/tools/ab_attention.py
--off NAME [attention.py's arguments]` runs the benchmark with one change switched off in this
process (NAME: transposed-hint, loop-converts, zero-acc, exp2-ftz, slot-views, equal-buffers,
proxy-fence, desc-add, cp-async-fence, overlap-late-copies, word-exchange, fp8-packed), or
`--on NAME` with one that is
off by default (invariant-operands, overlap-dots, tma-elect, ring-k-step, swizzled-k-step), for
comparing against a plain run in the same session on the same GPU.  With a change switched,
kernels compile into a fresh cache folder (the disk cache's key hashes the compiler's sources,
not this process's switches).

`--variants "base; off=cp-async-fence on=overlap-dots; ..."` runs one child process per variant
(`;` between variants, each `base` or its switches) and prints their tilework TFLOP/s side by
side; the first variant runs every side asked (`--sides`), the others its tilework sides only
(tilework, tilework-tma, tilework-tma-ws, tilework-ptr), each against variant 0's SDPA and
Triton (triton-tma for the -tma sides).  `overlap-dots`, `tma-elect` and `ring-k-step` set their
CompileOptions' environment variables (in the cache key); the others patch this process."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def switch_off(name):
    if name == "transposed-hint":
        import tilework.lowering.layout_hints as H
        H._transposed_access = lambda *a: None
    elif name == "loop-converts":
        import tilework.backends.common as C
        passes = C.layout_passes
        C.layout_passes = lambda: [p for p in passes() if p != "tilegpu-hoist-loop-converts"]
    elif name == "exp2-ftz":
        import tilework.lowering.rules.math as M
        call = M._call  # (the rules are registered at import: redirect the intrinsic instead)
        M._call = lambda name, *a: call("llvm.exp2" if name == "llvm.nvvm.ex2.approx.ftz.f"
                                        else name, *a)
    elif name == "slot-views":  # one read of a pipelined slot, converted per dot (as before)
        import tilework.lowering.pipeline_views as V
        V.ENABLED = False
    elif name == "equal-buffers":  # q's wgmma buffer written before each key loop again
        import tilework.lowering.dot_wgmma as W
        W.share_equal_buffers = lambda f: None
    elif name == "proxy-fence":  # every wgmma fences before its barrier, as before
        import tilework.lowering.proxy_fences as P
        P.plan = lambda f: None
    elif name == "desc-add":  # each wgmma descriptor from its address, the warp id per lane
        import tilework.lowering.rules.dot_wgmma as W
        import tilework.lowering.to_llvm as L
        W.Operand.k_step = lambda self, k0, align=1: None
        L.LoweringContext.warp_id_uniform = L.LoweringContext.warp_id
    elif name == "overlap-late-copies":  # overlap-dots' V copies right after S's wait
        import tilework.lowering.dot_overlap as O
        O.LATE_COPIES = False
    elif name == "cp-async-fence":  # CompileOptions.wgmma_cp_async_fence off (env: in the key)
        os.environ["TILEWORK_WGMMA_CP_ASYNC_FENCE"] = "0"
    elif name == "word-exchange":  # 8-bit conversions by packed_shuffles (two a word) again
        import tilework.dialects.linear_layout as LL
        LL.plan_word_exchange = lambda m: None
        LL._PLANS.clear()
    elif name == "fp8-packed":  # f32 -> fp8 one cvt (x, x) an element, its fix-ups a byte
        import tilework.lowering.rules.fp8 as F8
        F8._trunc_packed = lambda ctx, vals, dst: [F8._trunc(ctx, v, dst) for v in vals]
    elif name == "zero-acc":
        import tilework.lowering.rules.dot_wgmma as W
        W._is_zero = lambda v: False
    else:
        raise SystemExit(f"unknown change {name!r}")


def switch_on(name):
    """Changes that are off by default."""
    if name == "invariant-operands":  # dK/dV's k and v written to shared memory once
        import tilework.lowering.pipeline_invariant as P
        P.ENABLED = True
    elif name == "swizzled-k-step":  # a ring slot's K steps added across the swizzle's rows
        import tilework.lowering.rules.dot_wgmma as W
        W.RING_K_STEP = True
    elif name == "overlap-dots":  # attention's P @ V wgmma in flight across the back edge
        os.environ["TILEWORK_OVERLAP_DOTS"] = "1"  # (CompileOptions.overlap_dots: in the key)
    elif name == "tma-elect":  # TMA loads' copies by an elect.sync lane of warp 0
        os.environ["TILEWORK_TMA_ELECT"] = "1"  # (CompileOptions.tma_elect: in the key)
    elif name == "ring-k-step":  # CompileOptions.wgmma_ring_k_step (swizzled-k-step's option)
        os.environ["TILEWORK_WGMMA_RING_K_STEP"] = "1"
    else:
        raise SystemExit(f"unknown change {name!r}")


def _row_key(r):
    return (r["mode"], r["N"], r["D"], r["causal"])


def run_variants(spec, args):
    """Each variant of `spec` in a child process; a table of their tilework figures (each
    tilework side asked: tilework, tilework-tma, tilework-tma-ws, tilework-ptr)."""
    variants = [v.strip() for v in spec.split(";") if v.strip()]
    asked = args[args.index("--sides") + 1].split(",") if "--sides" in args else \
        ["sdpa", "triton", "tilework"]
    tw_sides = [x for x in asked if x.startswith("tilework")] or ["tilework"]
    results = []
    for i, v in enumerate(variants):
        switches = []
        for tok in ([] if v == "base" else v.split()):
            flag, _, name = tok.partition("=")
            if flag not in ("on", "off") or not name:
                raise SystemExit(f"bad variant token {tok!r} (want on=NAME or off=NAME)")
            switches += [f"--{flag}", name]
        rest = list(args)
        if i and "--sides" in rest:
            del rest[rest.index("--sides"):rest.index("--sides") + 2]
        if i:
            rest += ["--sides", ",".join(tw_sides)]
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            out = f.name
        env = dict(os.environ)
        if switches:  # (a fresh cache folder: the in-process switches are not in the key)
            env.pop("TILEWORK_CACHE_DIR", None)
        print(f"==== variant {i}: {v}", flush=True)
        subprocess.run([sys.executable, os.path.abspath(__file__)] + switches + rest +
                       ["--json", out], env=env, check=False)
        try:
            with open(out) as f:
                results.append({_row_key(r): r for r in json.load(f)["rows"]})
        except (OSError, ValueError):
            results.append({})
    print("\n# tilework TFLOP/s per variant (x: / SDPA, t: / Triton on the same source, of "
          "variant 0), chosen config")
    for i, v in enumerate(variants):
        print(f"#  v{i}: {v}")
    print(f"{'pass':7} {'N':>6} {'D':>4} {'causal':>6} {'side':>16} {'sdpa':>8} "
          f"{'triton':>8} " + " ".join(f"{'v' + str(i):>34}" for i in range(len(variants))))
    for key in results[0] if results else []:
        base = results[0][key]
        sd = base.get("sdpa", {}).get("tflops")
        for side in tw_sides:
            tr = base.get("triton-tma" if "-tma" in side else "triton", {}).get("tflops")
            cells = []
            for res in results:
                tw = res.get(key, {}).get(side, {})
                if "tflops" in tw:
                    x = f" x{tw['tflops'] / sd:.3f}" if sd else ""
                    t = f" t{tw['tflops'] / tr:.3f}" if tr else ""
                    cells.append(f"{tw['tflops']:6.1f}{x}{t} {tw.get('fwd_config') or '':>10}")
                else:
                    cells.append("-")
            print(f"{key[0]:7} {key[1]:6d} {key[2]:4d} {str(key[3]):>6} {side:>16} "
                  f"{sd or 0:8.1f} {tr or 0:8.1f} " + " ".join(f"{c:>34}" for c in cells),
                  flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--variants" in args:
        i = args.index("--variants")
        spec = args[i + 1]
        del args[i:i + 2]
        run_variants(spec, args)
        sys.exit(0)
    if ("--off" in args or "--on" in args) and "TILEWORK_CACHE_DIR" not in os.environ:
        os.environ["TILEWORK_CACHE_DIR"] = tempfile.mkdtemp(prefix="ab_attention_")
    for flag, switch in (("--off", switch_off), ("--on", switch_on)):
        while flag in args:
            i = args.index(flag)
            switch(args[i + 1])
            del args[i:i + 2]
    # by path, under another name: the benchmark itself imports the example as `attention`
    spec = importlib.util.spec_from_file_location(
        "attention_benchmark", os.path.join(HERE, "..", "attention.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    sys.argv = ["attention.py"] + args
    bench.main()
